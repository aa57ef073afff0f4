//! A JSON text scanner for the plain case: it validates as it goes, skips strings with
//! `memchr` and a word-at-a-time search for the bytes that need a look (quote, backslash,
//! control bytes), and never recurses. The envelope reader (`crate::jsonrpc`) and the direct
//! readers (`crate::direct`) are built on it; each answers `None` for what it does not read
//! exactly as `serde_json` would, and leaves that document to `serde_json`.

/// Nesting past this many levels is left to `serde_json`, which skips it without recursing as
/// well; the limit only bounds the stack of open containers kept here.
pub const MAX_DEPTH: usize = 1024;

#[derive(Debug)]
pub(crate) struct Scanner<'a> {
    pub(crate) body: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Scanner<'a> {
    pub(crate) fn peek(&self) -> Option<u8> {
        self.body.get(self.at).copied()
    }

    pub(crate) fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    pub(crate) fn eat(&mut self, expected: u8) -> Option<()> {
        (self.next()? == expected).then_some(())
    }

    /// Skips JSON whitespace (RFC 8259 §2: space, tab, line feed, carriage return).
    pub(crate) fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// A top-level key without escapes, as its raw bytes.
    pub(crate) fn plain_key(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.at;
        let body = self.body;
        let rest = body.get(start..)?;
        let length = string_run(rest)?;
        if rest.get(length) != Some(&b'"') {
            return None;
        }
        let key = rest.get(..length)?;
        self.at = start + length + 1;
        Some(key)
    }

    /// Skips the rest of a string whose opening quote was just read.
    pub(crate) fn string(&mut self) -> Option<()> {
        loop {
            let rest = self.body.get(self.at..)?;
            let length = string_run(rest)?;
            self.at += length + 1;
            if rest.get(length) == Some(&b'"') {
                return Some(());
            }
            match self.next()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => {
                    let hex = self.body.get(self.at..self.at + 4)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.at += 4;
                }
                _ => return None,
            }
        }
    }

    /// Skips digits, and answers whether there was at least one.
    fn digits(&mut self) -> bool {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        self.at > start
    }

    /// Skips a number (RFC 8259 §6).
    pub(crate) fn number(&mut self) -> Option<()> {
        if self.peek()? == b'-' {
            self.at += 1;
        }
        match self.next()? {
            b'0' => {
                if let Some(b'0'..=b'9') = self.peek() {
                    return None;
                }
            }
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !self.digits() {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if !self.digits() {
                return None;
            }
        }
        Some(())
    }

    pub(crate) fn literal(&mut self, text: &[u8]) -> Option<()> {
        let end = self.at + text.len();
        (self.body.get(self.at..end)? == text).then(|| self.at = end)
    }

    /// Skips one value, keeping the open containers on a stack instead of recursing.
    /// Answers how deeply the value nests containers (0 for a scalar).
    pub(crate) fn value(&mut self) -> Option<usize> {
        // `true` for an object, `false` for an array.
        let mut open: Vec<bool> = Vec::new();
        let mut deepest = 0;
        loop {
            self.whitespace();
            match self.peek()? {
                b'{' => {
                    self.at += 1;
                    self.whitespace();
                    if self.peek()? == b'}' {
                        self.at += 1;
                        deepest = deepest.max(open.len() + 1);
                    } else {
                        open.push(true);
                        deepest = deepest.max(open.len());
                        if open.len() > MAX_DEPTH {
                            return None;
                        }
                        self.member_key()?;
                        continue;
                    }
                }
                b'[' => {
                    self.at += 1;
                    self.whitespace();
                    if self.peek()? == b']' {
                        self.at += 1;
                        deepest = deepest.max(open.len() + 1);
                    } else {
                        open.push(false);
                        deepest = deepest.max(open.len());
                        if open.len() > MAX_DEPTH {
                            return None;
                        }
                        continue;
                    }
                }
                b'"' => {
                    self.at += 1;
                    self.string()?;
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // A value is complete: close what it completes, or go on to the next one.
            loop {
                let Some(&object) = open.last() else {
                    return Some(deepest);
                };
                self.whitespace();
                match (self.next()?, object) {
                    (b',', true) => {
                        self.whitespace();
                        self.member_key()?;
                        break;
                    }
                    (b',', false) => break,
                    (b'}', true) | (b']', false) => {
                        open.pop();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Skips `"key" :` inside an object.
    fn member_key(&mut self) -> Option<()> {
        self.eat(b'"')?;
        self.string()?;
        self.whitespace();
        self.eat(b':')
    }
}

/// The first this-many bytes of a string (keys, ids, enum names: most strings of a document
/// end within them) are searched eight at a time in a machine word; `memchr` takes over for
/// the rest of a longer string.
const SHORT: usize = 64;

/// Bytes of a word with the high bit set where the byte is `"`, `\\` or below 0x20. Bits
/// above the lowest match may be set spuriously (a borrow carries into the next byte), so
/// only the lowest set bit is meaningful.
pub(crate) const fn specials(word: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const fn zero_bytes(x: u64) -> u64 {
        x.wrapping_sub(ONES) & !x & HIGH
    }
    let quote = zero_bytes(word ^ u64::from_ne_bytes([b'"'; 8]));
    let backslash = zero_bytes(word ^ u64::from_ne_bytes([b'\\'; 8]));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control
}

/// The length of the run of string content at the start of `rest`, up to the first `"` or
/// `\\`; `None` when there is none or the run holds a control byte.
#[inline]
pub(crate) fn string_run(rest: &[u8]) -> Option<usize> {
    // Most member names and enum values end within the first word; that test is inlined
    // into the callers, the rest of the search is not.
    if let Some(chunk) = rest.get(..8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let found = specials(u64::from_le_bytes(word));
        if found != 0 {
            let at = (found.trailing_zeros() / 8) as usize;
            return (*rest.get(at)? >= 0x20).then_some(at);
        }
    }
    longer_string_run(rest)
}

/// [`string_run`] past its first word.
#[inline(never)]
fn longer_string_run(rest: &[u8]) -> Option<usize> {
    let head = rest.get(..rest.len().min(SHORT))?;
    let mut words = head.chunks_exact(8);
    let mut offset = 0;
    for chunk in words.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let found = specials(u64::from_le_bytes(word));
        if found != 0 {
            // Little-endian: the lowest set bit is the first special byte.
            let at = offset + (found.trailing_zeros() / 8) as usize;
            return (*rest.get(at)? >= 0x20).then_some(at);
        }
        offset += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        match b {
            b'"' | b'\\' => return Some(offset + i),
            0..0x20 => return None,
            _ => {}
        }
    }
    let length = head.len() + memchr::memchr2(b'"', b'\\', rest.get(head.len()..)?)?;
    if has_control_byte(rest.get(head.len()..length)?) {
        return None;
    }
    Some(length)
}

/// Whether `bytes` holds a byte below 0x20, which JSON forbids unescaped in a string.
/// Whole 64-byte blocks are tested without an early exit so the compiler vectorises it.
fn has_control_byte(bytes: &[u8]) -> bool {
    let mut blocks = bytes.chunks_exact(64);
    let found = blocks.by_ref().fold(0u8, |found, block| {
        found | block.iter().fold(0u8, |f, &b| f | u8::from(b < 0x20))
    });
    found != 0 || blocks.remainder().iter().any(|&b| b < 0x20)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// `string_run` one byte at a time, as the JSON grammar reads it.
    fn reference(rest: &[u8]) -> Option<usize> {
        for (i, &b) in rest.iter().enumerate() {
            match b {
                b'"' | b'\\' => return Some(i),
                0..0x20 => return None,
                _ => {}
            }
        }
        None
    }

    proptest! {
        #[test]
        fn the_word_at_a_time_search_finds_what_a_byte_at_a_time_search_finds(
            bytes in prop::collection::vec(
                prop_oneof![4 => 0x20u8..0x7f, 1 => any::<u8>(), 1 => Just(b'"'), 1 => Just(b'\\')],
                0..160,
            )
        ) {
            prop_assert_eq!(super::string_run(&bytes), reference(&bytes));
        }
    }

    #[test]
    fn a_special_byte_is_found_at_every_position_of_a_word() {
        for special in [b'"', b'\\', 0x00, 0x1f] {
            for at in 0..100 {
                let mut bytes = vec![b'a'; 100];
                bytes[at] = special;
                // Bytes just above a special one, where a borrow could show a false match.
                if at + 1 < bytes.len() {
                    bytes[at + 1] = 0x21;
                }
                assert_eq!(
                    super::string_run(&bytes),
                    reference(&bytes),
                    "{special:#x} at {at}"
                );
            }
        }
    }
}
