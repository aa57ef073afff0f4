//! Reading and writing JSON without serde, for the codecs' direct paths: the shapes nearly every
//! exchange carries (messages, tasks, the send request, status and artifact events), decoded
//! into the IR and encoded from it by hand.
//!
//! # Why the hot shapes skip serde
//!
//! A serde-derived decoder goes through a generic visitor per struct and per field, each with
//! the parser's string and number code inlined into it; for a 150-byte request that code is
//! larger than the instruction cache, and the translation spends its time fetching it
//! (docs/benchmarks.md, "where the time goes"). [`Reader`] and the writing functions here are a
//! handful of small non-generic functions that every direct decoder and encoder calls; an
//! object's members are matched to its fields by [`read_members!`](crate::read_members), which
//! expands to the loop a reader would write by hand.
//!
//! # Why a direct path may decline, and the serde path stays the authority
//!
//! A direct decoder handles the ordinary document only: known member names, no duplicates,
//! strings, integers and booleans where the wire type has them. Anything else — an unknown or
//! repeated member, an alias, a `null`, an escape it cannot take, a shape the revision forbids —
//! makes it answer `None`, and the codec decodes the same bytes with its serde wire types,
//! whose answer (the value, or the error the caller sees) is the one given. A direct encoder
//! likewise declines anything that would be reported as a loss. So a direct path changes the
//! speed, never the answer: each codec's tests hold its direct paths to the serde path's
//! value, bytes and losses on every golden fixture and on generated documents.

use std::borrow::Cow;

use serde::Serialize;

use crate::scan::{Scanner, string_run};

/// How deep a direct decoder lets a document nest before it leaves the document to the serde
/// path (whose own limits then apply): below every limit that path has.
pub const MAX_DEPTH: usize = 96;

/// A pull reader over one JSON document. Every method answers `None` when the next token is not
/// what was asked for; the reader is then of no further use.
#[derive(Debug)]
pub struct Reader<'a> {
    scan: Scanner<'a>,
    text: &'a str,
    depth: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`, or `None` when they are not UTF-8.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        let text = simdutf8::basic::from_utf8(bytes).ok()?;
        Some(Self {
            scan: Scanner { body: bytes, at: 0 },
            text,
            depth: 0,
        })
    }

    /// Reads one whole document with `read`: `None` when the bytes are not UTF-8, when `read`
    /// declines, or when anything but whitespace follows the value.
    pub fn document<T>(bytes: &'a [u8], read: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let mut reader = Self::new(bytes)?;
        let value = read(&mut reader)?;
        reader.end()?;
        Some(value)
    }

    /// Opens an object: `{`.
    pub fn object(&mut self) -> Option<()> {
        self.open(b'{')
    }

    /// Opens an array: `[`.
    pub fn array(&mut self) -> Option<()> {
        self.open(b'[')
    }

    fn open(&mut self, bracket: u8) -> Option<()> {
        self.scan.whitespace();
        self.scan.eat(bracket)?;
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// The next member name of the open object, with its `:` read; `Some(None)` when the object
    /// closes. `first` is `true` before the first member and is cleared here. Names with
    /// escapes are declined.
    pub fn key(&mut self, first: &mut bool) -> Option<Option<&'a str>> {
        self.scan.whitespace();
        if *first {
            *first = false;
            if self.scan.peek()? == b'}' {
                self.scan.at += 1;
                self.depth -= 1;
                return Some(None);
            }
        } else {
            match self.scan.next()? {
                b',' => self.scan.whitespace(),
                b'}' => {
                    self.depth -= 1;
                    return Some(None);
                }
                _ => return None,
            }
        }
        self.scan.eat(b'"')?;
        let start = self.scan.at;
        let length = string_run(self.scan.body.get(start..)?)?;
        if self.scan.body.get(start + length) != Some(&b'"') {
            return None;
        }
        self.scan.at = start + length + 1;
        let name = self.text.get(start..start + length)?;
        self.scan.whitespace();
        self.scan.eat(b':')?;
        Some(Some(name))
    }

    /// Whether the open array has another element (the reader is then at it); `false` when the
    /// array closes. `first` is `true` before the first element and is cleared here.
    pub fn element(&mut self, first: &mut bool) -> Option<bool> {
        self.scan.whitespace();
        if *first {
            *first = false;
            if self.scan.peek()? == b']' {
                self.scan.at += 1;
                self.depth -= 1;
                return Some(false);
            }
            return Some(true);
        }
        match self.scan.next()? {
            b',' => Some(true),
            b']' => {
                self.depth -= 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// An array, each element read with `item` (a generic, so each element reader is called
    /// directly).
    pub fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.array()?;
        let mut first = true;
        if !self.element(&mut first)? {
            return Some(Vec::new());
        }
        // Allocated once up front rather than grown from nothing at the first push.
        let mut list = Vec::with_capacity(4);
        loop {
            list.push(item(self)?);
            if !self.element(&mut first)? {
                return Some(list);
            }
        }
    }

    /// An array of strings.
    pub fn strings(&mut self) -> Option<Vec<String>> {
        self.list(Self::string)
    }

    /// Reads `null` if it is next, and answers whether it was.
    pub fn null(&mut self) -> bool {
        self.scan.whitespace();
        if self.scan.peek() == Some(b'n') {
            return self.scan.literal(b"null").is_some();
        }
        false
    }

    /// A string, borrowed from the document unless it has escapes.
    pub fn str(&mut self) -> Option<Cow<'a, str>> {
        self.scan.whitespace();
        self.scan.eat(b'"')?;
        let start = self.scan.at;
        let length = string_run(self.scan.body.get(start..)?)?;
        if self.scan.body.get(start + length) == Some(&b'"') {
            self.scan.at = start + length + 1;
            return self.text.get(start..start + length).map(Cow::Borrowed);
        }
        self.scan.string()?;
        let quoted = self.text.get(start - 1..self.scan.at)?;
        serde_json::from_str::<String>(quoted).ok().map(Cow::Owned)
    }

    /// A string, owned.
    pub fn string(&mut self) -> Option<String> {
        self.str().map(Cow::into_owned)
    }

    /// `true` or `false`.
    pub fn bool(&mut self) -> Option<bool> {
        self.scan.whitespace();
        match self.scan.peek()? {
            b't' => self.scan.literal(b"true").map(|()| true),
            b'f' => self.scan.literal(b"false").map(|()| false),
            _ => None,
        }
    }

    /// An integer written without fraction or exponent, within `i64`.
    pub fn integer(&mut self) -> Option<i64> {
        self.scan.whitespace();
        let start = self.scan.at;
        self.scan.number()?;
        let text = self.text.get(start..self.scan.at)?;
        if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
            return None;
        }
        text.parse().ok()
    }

    /// The text of the next value, whatever it is, for a serde decoder of that one member.
    pub fn raw(&mut self) -> Option<&'a str> {
        self.scan.whitespace();
        let start = self.scan.at;
        let deepest = self.scan.value()?;
        if self.depth + deepest > MAX_DEPTH {
            return None;
        }
        self.text.get(start..self.scan.at)
    }

    /// The next value decoded as `T` (with the fast serde reader, `serde_json` deciding when it
    /// declines); `None` when it is not a `T`.
    pub fn value<T: serde::de::DeserializeOwned>(&mut self) -> Option<T> {
        let raw = self.raw()?;
        crate::support::decode(raw.as_bytes()).or_else(|| serde_json::from_str(raw).ok())
    }

    /// The next value as a JSON object. Read directly when it holds only what the direct reader
    /// takes (member names without escapes, each once; strings, integers within `i64`,
    /// booleans, `null`, arrays and objects); anything else is decoded by [`Reader::value`].
    pub fn json_object(&mut self) -> Option<serde_json::Map<String, serde_json::Value>> {
        let (at, depth) = (self.scan.at, self.depth);
        if let Some(serde_json::Value::Object(map)) = self.plain() {
            return Some(map);
        }
        self.scan.at = at;
        self.depth = depth;
        self.value()
    }

    /// The next value as JSON, read as [`Reader::json_object`] reads.
    pub fn json(&mut self) -> Option<serde_json::Value> {
        let (at, depth) = (self.scan.at, self.depth);
        if let Some(value) = self.plain() {
            return Some(value);
        }
        self.scan.at = at;
        self.depth = depth;
        self.value()
    }

    /// A value of the plain kinds [`Reader::json_object`] names; `None` at anything else.
    fn plain(&mut self) -> Option<serde_json::Value> {
        use serde_json::Value;
        self.scan.whitespace();
        match self.scan.peek()? {
            b'"' => self.str().map(|text| Value::String(text.into_owned())),
            b'{' => {
                self.object()?;
                let mut map = serde_json::Map::new();
                let mut first = true;
                while let Some(name) = self.key(&mut first)? {
                    let value = self.plain()?;
                    if map.insert(name.to_owned(), value).is_some() {
                        return None;
                    }
                }
                Some(Value::Object(map))
            }
            b'[' => {
                self.array()?;
                let mut items = Vec::new();
                let mut first = true;
                while self.element(&mut first)? {
                    items.push(self.plain()?);
                }
                Some(Value::Array(items))
            }
            b't' | b'f' => self.bool().map(Value::Bool),
            b'n' => self.null().then_some(Value::Null),
            // `serde_json` reads `-0` as a float.
            b'-' => self.integer().filter(|&n| n != 0).map(Value::from),
            _ => self.integer().map(Value::from),
        }
    }

    /// Ends the document: nothing but whitespace may follow.
    #[must_use]
    pub fn end(mut self) -> Option<()> {
        self.scan.whitespace();
        (self.scan.at == self.scan.body.len() && self.depth == 0).then_some(())
    }
}

/// Marks member `bit` of an object as read; `None` when it already was (a repeated member,
/// which the serde path refuses).
pub fn once(seen: &mut u64, bit: u32) -> Option<()> {
    let mask = 1u64 << bit;
    if *seen & mask != 0 {
        return None;
    }
    *seen |= mask;
    Some(())
}

/// Reads the object the reader `$r` is at, member by member: each member named in the list is
/// read by its expression, and the object's reader answers `None` (from the function the macro
/// stands in) at a member not in the list, a member given twice, or anything the reader
/// declines. The macro's value is the mask of the members read, a member's bit being its place
/// in the list (the first is bit 0).
///
/// ```
/// use bridge_wire::direct::Reader;
/// use bridge_wire::read_members;
///
/// fn point(bytes: &[u8]) -> Option<(i64, i64)> {
///     let mut r = Reader::new(bytes)?;
///     let (mut x, mut y) = (None, None);
///     read_members!(r, {
///         "x" => x = Some(r.integer()?),
///         "y" => y = Some(r.integer()?),
///     });
///     r.end()?;
///     Some((x?, y?))
/// }
///
/// assert_eq!(point(br#"{"y":2,"x":1}"#), Some((1, 2)));
/// assert_eq!(point(br#"{"x":1,"x":1}"#), None);
/// assert_eq!(point(br#"{"x":1,"z":3}"#), None);
/// ```
///
/// # Why a macro
///
/// Each reader states its members once, and the expansion is the loop a reader would write by
/// hand: a `match` on the name over string literals, [`once`] with a constant bit, the member's
/// expression inline; no table, no closure, no allocation. At most 64 members, checked when it
/// compiles.
#[macro_export]
macro_rules! read_members {
    ($r:ident, { $($name:literal => $read:expr),+ $(,)? }) => {{
        $r.object()?;
        let (mut seen, mut first) = (0u64, true);
        while let Some(key) = $r.key(&mut first)? {
            $crate::read_members!(@arms key, seen, (0u32), [] $($name => $read,)+);
        }
        seen
    }};
    (@arms $key:ident, $seen:ident, ($bit:expr), [$($arms:tt)*]
        $name:literal => $read:expr, $($rest:tt)*) => {
        $crate::read_members!(@arms $key, $seen, ($bit + 1), [$($arms)* $name => {
            const { assert!($bit < 64, "an object reader takes at most 64 members") };
            $crate::direct::once(&mut $seen, $bit)?;
            $read;
        }] $($rest)*)
    };
    (@arms $key:ident, $seen:ident, ($bit:expr), [$($arms:tt)*]) => {
        match $key {
            $($arms)*
            _ => return None,
        }
    };
}

/// Writes `text` as a JSON string, escaped as `serde_json` escapes it.
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    if needs_escape(bytes) {
        write_escaped(out, text);
    } else {
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
    }
}

#[cold]
#[inline(never)]
fn write_escaped(out: &mut Vec<u8>, text: &str) {
    // Writing a `str` into a `Vec` cannot fail.
    let _ = serde_json::to_writer(out, text);
}

/// Writes a member name and its `:`, after a `,` unless `first`. `name` is a literal of the
/// calling encoder and never needs escapes.
pub fn write_key(out: &mut Vec<u8>, first: &mut bool, name: &str) {
    out.reserve(name.len() + 4);
    if *first {
        *first = false;
    } else {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// Writes `value` with serde (the bytes `serde_json` would write): for members the direct
/// encoders do not take apart, such as metadata.
pub fn write_value<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.extend_from_slice(b"null");
    }
}

/// Whether `bytes` holds a `"`, a `\` or a byte below 0x20: what a JSON string must escape.
#[must_use]
pub fn needs_escape(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n >= 64 {
        return long_needs_escape(bytes);
    }
    if n >= 8 {
        // Whole words, then the last eight bytes again: a read never leaves the slice.
        let mut found = 0;
        let mut at = 0;
        while let Some(word) = bytes.get(at..at + 8) {
            found |= specials(word);
            at += 8;
        }
        if let Some(last) = bytes.get(n - 8..) {
            found |= specials(last);
        }
        return found != 0;
    }
    bytes.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20)
}

/// Whole 64-byte blocks without an early exit, so the compiler vectorises the test.
#[inline(never)]
fn long_needs_escape(bytes: &[u8]) -> bool {
    let special = |b: u8| u8::from(b == b'"' || b == b'\\' || b < 0x20);
    let mut blocks = bytes.chunks_exact(64);
    let found = blocks.by_ref().fold(0u8, |found, block| {
        found | block.iter().fold(0u8, |f, &b| f | special(b))
    });
    found != 0 || blocks.remainder().iter().any(|&b| special(b) != 0)
}

/// Non-zero when one of the first eight bytes of `bytes` is `"`, `\` or below 0x20.
fn specials(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    if let Some(head) = bytes.get(..8) {
        word.copy_from_slice(head);
    }
    crate::scan::specials(u64::from_le_bytes(word))
}

/// Implements the application's `JsonRpcCodec` port for a revision's codec `$codec` as its
/// direct paths where they answer, and that revision's serde codec for everything else.
///
/// `$direct` names the codec crate's module of direct decoders and encoders (`decode_params`,
/// `encode_params`, `decode_result`, `encode_result`, `encode_result_into`, `decode_event`,
/// `encode_event`, each answering `None` where the serde path must judge); `$serde` is the unit
/// value of the revision's codec on its serde wire types, which answers the method names, the
/// errors and the card, and every fragment a direct path declines. A direct encoder writes
/// only what loses nothing, so its bytes go out without losses; an `encode_result_into` that
/// declines part-way has what it wrote cut off before the serde codec writes.
///
/// # Why a macro and not a generic codec type
///
/// The port and its errors are the application's, and this crate sits below the application:
/// it can hold no type implementing the port. The expansion names `bridge_app` and `bridge_ir`
/// by absolute path and takes effect in a codec crate, which depends on both. It is the code
/// each codec would write by hand: static calls to its direct functions, no allocation, no
/// dynamic dispatch beyond the port's own.
#[macro_export]
macro_rules! direct_or_serde {
    ($codec:ty, direct: $direct:ident, serde: $serde:ident $(,)?) => {
        const _: () = {
            use ::bridge_app::codec::{DecodeError, EncodeError, JsonRpcCodec};
            use ::bridge_ir::{
                AgentCard, Call, Loss, Method, Reply, Revision, RpcError, StreamEvent, Translated,
            };

            impl JsonRpcCodec for $codec {
                fn revision(&self) -> Revision {
                    $serde.revision()
                }

                fn method_name(&self, method: Method) -> Option<&'static str> {
                    $serde.method_name(method)
                }

                fn method_from_name(&self, name: &str) -> Option<Method> {
                    $serde.method_from_name(name)
                }

                fn decode_params(
                    &self,
                    method: Method,
                    params: Option<&[u8]>,
                ) -> Result<Call, DecodeError> {
                    match $direct::decode_params(method, params) {
                        Some(call) => Ok(call),
                        None => $serde.decode_params(method, params),
                    }
                }

                fn encode_params(&self, call: Call) -> Result<Translated<Vec<u8>>, EncodeError> {
                    match $direct::encode_params(&call) {
                        Some(bytes) => Ok(Translated::lossless(bytes)),
                        None => $serde.encode_params(call),
                    }
                }

                fn decode_result(
                    &self,
                    method: Method,
                    result: &[u8],
                ) -> Result<Reply, DecodeError> {
                    match $direct::decode_result(method, result) {
                        Some(reply) => Ok(reply),
                        None => $serde.decode_result(method, result),
                    }
                }

                fn encode_result(
                    &self,
                    method: Method,
                    reply: Reply,
                ) -> Result<Translated<Vec<u8>>, EncodeError> {
                    match $direct::encode_result(method, &reply) {
                        Some(bytes) => Ok(Translated::lossless(bytes)),
                        None => $serde.encode_result(method, reply),
                    }
                }

                fn encode_result_after(
                    &self,
                    out: &mut Vec<u8>,
                    method: Method,
                    reply: Reply,
                ) -> Result<Vec<Loss>, EncodeError> {
                    let start = out.len();
                    if $direct::encode_result_into(out, method, &reply).is_some() {
                        return Ok(Vec::new());
                    }
                    out.truncate(start);
                    $serde.encode_result_after(out, method, reply)
                }

                fn decode_event(&self, result: &[u8]) -> Result<StreamEvent, DecodeError> {
                    match $direct::decode_event(result) {
                        Some(event) => Ok(event),
                        None => $serde.decode_event(result),
                    }
                }

                fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>> {
                    match $direct::encode_event(&event) {
                        Some(bytes) => Translated::lossless(bytes),
                        None => $serde.encode_event(event),
                    }
                }

                fn decode_error(&self, error: &[u8]) -> Result<RpcError, DecodeError> {
                    $serde.decode_error(error)
                }

                fn encode_error(&self, error: RpcError) -> Translated<Vec<u8>> {
                    $serde.encode_error(error)
                }

                fn decode_card(&self, card: &[u8]) -> Result<AgentCard, DecodeError> {
                    $serde.decode_card(card)
                }

                fn encode_card(&self, card: AgentCard) -> Result<Translated<Vec<u8>>, EncodeError> {
                    $serde.encode_card(card)
                }
            }
        };
    };
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::{MAX_DEPTH, Reader, needs_escape, once, write_key, write_str, write_value};

    /// Reads any document into a `Value` with the reader alone (numbers through `raw`).
    fn read(reader: &mut Reader<'_>) -> Option<Value> {
        if reader.null() {
            return Some(Value::Null);
        }
        let mut probe = Reader {
            scan: super::Scanner {
                body: reader.scan.body,
                at: reader.scan.at,
            },
            text: reader.text,
            depth: reader.depth,
        };
        probe.scan.whitespace();
        match probe.scan.peek()? {
            b'{' => {
                reader.object()?;
                let mut map = serde_json::Map::new();
                let mut first = true;
                while let Some(key) = reader.key(&mut first)? {
                    let value = read(reader)?;
                    map.insert(key.to_owned(), value);
                }
                Some(Value::Object(map))
            }
            b'[' => {
                reader.array()?;
                let mut items = Vec::new();
                let mut first = true;
                while reader.element(&mut first)? {
                    items.push(read(reader)?);
                }
                Some(Value::Array(items))
            }
            b'"' => reader.string().map(Value::String),
            b't' | b'f' => reader.bool().map(Value::Bool),
            _ => reader.value::<Value>(),
        }
    }

    fn read_all(bytes: &[u8]) -> Option<Value> {
        let mut reader = Reader::new(bytes)?;
        let value = read(&mut reader)?;
        reader.end()?;
        Some(value)
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "(?s).{0,40}".prop_map(Value::String),
            "[a-z\"\\\\\n]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[a-zA-Z_]{0,8}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_reader_reads_what_serde_json_wrote_in_any_layout(value in any_value(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
            prop_assert_eq!(read_all(text.as_bytes()), Some(value));
        }

        #[test]
        fn the_reader_accepts_nothing_serde_json_refuses(bytes in prop::collection::vec(any::<u8>(), 0..48)) {
            if read_all(&bytes).is_some() {
                prop_assert!(serde_json::from_slice::<Value>(&bytes).is_ok(), "{:?}", String::from_utf8_lossy(&bytes));
            }
        }

        #[test]
        fn a_string_needs_an_escape_exactly_when_it_holds_a_quote_backslash_or_control(
            text in "(?s).{0,200}",
            at in 0usize..200,
            special in prop::sample::select(vec!['"', '\\', '\u{0}', '\u{1f}', '\n']),
        ) {
            let plain: String = text.chars().filter(|&c| c != '"' && c != '\\' && c >= ' ').collect();
            prop_assert!(!needs_escape(plain.as_bytes()));
            let mut out = Vec::new();
            write_str(&mut out, &plain);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&plain).unwrap());
            let mut chars: Vec<char> = plain.chars().collect();
            chars.insert(at.min(chars.len()), special);
            let special_text: String = chars.into_iter().collect();
            prop_assert!(needs_escape(special_text.as_bytes()));
            let mut out = Vec::new();
            write_str(&mut out, &special_text);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&special_text).unwrap());
        }
    }

    #[test]
    fn malformed_or_surprising_documents_are_declined() {
        for bad in [
            &b"{"[..],
            b"{\"a\":1,}",
            b"[1,]",
            b"{\"a\" 1}",
            b"{\"a\":1}}",
            b"\"\\ud800\"",
            b"\"\xff\"",
            b"{\"a\\u0062\":1}",
            b"01",
            b"1 2",
            b"\"a\x01\"",
            b"nul",
        ] {
            assert_eq!(read_all(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn nesting_past_the_limit_is_declined_in_containers_and_in_raw_values() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(read_all(deep(MAX_DEPTH).as_bytes()).is_some());
        assert_eq!(read_all(deep(MAX_DEPTH + 1).as_bytes()), None);
        let text = format!("{{\"a\":{}}}", deep(MAX_DEPTH));
        let mut reader = Reader::new(text.as_bytes()).unwrap();
        reader.object().unwrap();
        let mut first = true;
        assert_eq!(reader.key(&mut first), Some(Some("a")));
        assert_eq!(reader.raw(), None);
    }

    #[test]
    fn strings_with_escapes_are_unescaped_and_plain_ones_borrowed() {
        let mut reader = Reader::new(br#"["a\n\u00e9", "plain"]"#).unwrap();
        reader.array().unwrap();
        let mut first = true;
        assert_eq!(reader.element(&mut first), Some(true));
        assert_eq!(reader.str().unwrap(), "a\n\u{e9}");
        assert_eq!(reader.element(&mut first), Some(true));
        assert!(matches!(
            reader.str(),
            Some(std::borrow::Cow::Borrowed("plain"))
        ));
        assert_eq!(reader.element(&mut first), Some(false));
        reader.end().unwrap();
    }

    #[test]
    fn json_values_read_directly_are_those_serde_json_reads() {
        for text in [
            r#"{"a":"x","b":[1,-2,true,false,null,{"c":{}}],"d":[]}"#,
            r#"{"benchTs":"1796165265947783375"}"#,
            r#"{ "a" : 1.5 , "b" : 1e3 }"#,
            r#"{"n":-0,"m":18446744073709551615,"o":-9223372036854775808}"#,
            r#"{"e\u0041":"\n\u00e9"}"#,
            r#"{"a":1,"a":2}"#,
            "{}",
        ] {
            let expected: serde_json::Value = serde_json::from_str(text).unwrap();
            let mut reader = Reader::new(text.as_bytes()).unwrap();
            assert_eq!(reader.json(), Some(expected.clone()), "{text}");
            reader.end().unwrap();
            let mut reader = Reader::new(text.as_bytes()).unwrap();
            assert_eq!(
                reader.json_object().map(serde_json::Value::Object),
                Some(expected),
                "{text}"
            );
        }
        for text in ["[1]", "\"s\"", "2"] {
            let mut reader = Reader::new(text.as_bytes()).unwrap();
            assert_eq!(reader.json_object(), None, "{text}");
        }
    }

    #[test]
    fn integers_only_without_fraction_or_exponent() {
        for (text, expected) in [
            ("12", Some(12)),
            ("-3", Some(-3)),
            ("1.0", None),
            ("1e2", None),
            ("99999999999999999999", None),
        ] {
            let mut reader = Reader::new(text.as_bytes()).unwrap();
            assert_eq!(reader.integer(), expected, "{text}");
        }
    }

    #[test]
    fn read_members_answers_the_members_read_each_at_its_place_in_the_list() {
        fn seen(text: &str) -> Option<u64> {
            let mut r = Reader::new(text.as_bytes())?;
            let seen = crate::read_members!(r, {
                "a" => r.bool()?,
                "b" => r.bool()?,
                "c" => r.bool()?,
            });
            r.end()?;
            Some(seen)
        }
        assert_eq!(seen("{}"), Some(0));
        assert_eq!(seen(r#"{"c":true,"a":false}"#), Some(0b101));
        assert_eq!(seen(r#"{"b":true}"#), Some(0b010));
        assert_eq!(seen(r#"{"b":true,"b":true}"#), None);
        assert_eq!(seen(r#"{"d":true}"#), None);
        assert_eq!(seen(r#"{"a":1}"#), None);
    }

    #[test]
    fn a_document_is_one_value_and_a_list_reads_each_element_with_its_reader() {
        let strings = |text: &str| Reader::document(text.as_bytes(), Reader::strings);
        assert_eq!(
            strings(r#" ["a", "b"] "#),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(strings("[]"), Some(Vec::new()));
        assert_eq!(strings(r#"["a"] ["b"]"#), None);
        assert_eq!(strings(r#"["a", 1]"#), None);
        let integers = Reader::document(b"[1,[2]]", |r| r.list(|r| r.list(Reader::integer)));
        assert_eq!(integers, None);
        let integers = Reader::document(b"[[1],[2,3]]", |r| r.list(|r| r.list(Reader::integer)));
        assert_eq!(integers, Some(vec![vec![1], vec![2, 3]]));
    }

    #[test]
    fn a_repeated_member_is_refused_once_seen() {
        let mut seen = 0;
        assert_eq!(once(&mut seen, 3), Some(()));
        assert_eq!(once(&mut seen, 4), Some(()));
        assert_eq!(once(&mut seen, 3), None);
    }

    #[test]
    fn keys_and_values_are_written_as_serde_json_writes_them() {
        let mut out = Vec::new();
        out.push(b'{');
        let mut first = true;
        write_key(&mut out, &mut first, "a");
        write_str(&mut out, "x\"y");
        write_key(&mut out, &mut first, "b");
        write_value(&mut out, &json!({"k": [1, 2.5, null]}));
        out.push(b'}');
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(&json!({"a": "x\"y", "b": {"k": [1, 2.5, null]}})).unwrap()
        );
    }
}
