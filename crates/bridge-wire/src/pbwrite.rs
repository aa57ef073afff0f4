//! Protobuf messages written straight from the IR, field by field, as `prost` would encode the
//! generated structs built from it, without building them: no owned copy of each string, no
//! `Struct` map of each metadata object, and no length pass. A nested message is written in
//! place behind a one-byte length, which is widened (its content moved) only when the message
//! turns out to be 128 bytes or longer.
//!
//! The rules are proto3's, as `prost` applies them: a scalar field with implicit presence is
//! left out when it holds its default (empty text, 0, `false`); a field of a `oneof`, a message
//! field that is set and every element of a repeated field are written whatever they hold.
//! The codecs' tests decode what is written with the generated types and compare it with what
//! `prost` makes of the same IR.

use bridge_ir::JsonObject;

/// Protobuf's wire types.
#[derive(Debug, Clone, Copy)]
enum Wire {
    Varint = 0,
    SixtyFourBit = 1,
    LengthDelimited = 2,
}

/// 2⁵³: past it, not every integer is a double.
const EXACT: u64 = 1 << 53;

/// A message being written.
#[derive(Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty message, `capacity` bytes reserved.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            buf: Vec::with_capacity(capacity),
        }
    }

    /// The bytes written.
    #[must_use]
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    fn varint(&mut self, value: u64) {
        let mut value = value;
        while value >= 0x80 {
            self.buf.push(low_seven(value) | 0x80);
            value >>= 7;
        }
        self.buf.push(low_seven(value));
    }

    fn key(&mut self, tag: u32, wire: Wire) {
        self.varint(u64::from(tag << 3 | wire as u32));
    }

    /// A string field with implicit presence: left out when empty.
    pub fn string(&mut self, tag: u32, text: &str) {
        if !text.is_empty() {
            self.bytes_always(tag, text.as_bytes());
        }
    }

    /// A `bytes` or `string` field written even when empty (a `oneof` member, an element of a
    /// repeated field).
    pub fn bytes_always(&mut self, tag: u32, bytes: &[u8]) {
        self.key(tag, Wire::LengthDelimited);
        self.varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    /// A repeated string field.
    pub fn strings(&mut self, tag: u32, texts: &[String]) {
        for text in texts {
            self.bytes_always(tag, text.as_bytes());
        }
    }

    /// An `int32`, `int64` or enum field with implicit presence: left out when 0; a negative
    /// number is its 64-bit two's complement, ten bytes, as protobuf writes it.
    pub fn int(&mut self, tag: u32, value: i64) {
        if value != 0 {
            self.int_always(tag, value);
        }
    }

    /// An `int32`, `int64` or enum field written even when 0 (a `oneof` member).
    pub fn int_always(&mut self, tag: u32, value: i64) {
        self.key(tag, Wire::Varint);
        self.varint(u64::from_ne_bytes(value.to_ne_bytes()));
    }

    /// A `bool` field with implicit presence: left out when false.
    pub fn bool(&mut self, tag: u32, value: bool) {
        if value {
            self.bool_always(tag, true);
        }
    }

    fn bool_always(&mut self, tag: u32, value: bool) {
        self.key(tag, Wire::Varint);
        self.buf.push(u8::from(value));
    }

    fn double_always(&mut self, tag: u32, value: f64) {
        self.key(tag, Wire::SixtyFourBit);
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    /// A message field (set, so written even when empty) whose fields `write` writes.
    pub fn message<R>(&mut self, tag: u32, write: impl FnOnce(&mut Self) -> R) -> R {
        self.key(tag, Wire::LengthDelimited);
        let at = self.buf.len();
        self.buf.push(0);
        let out = write(self);
        let len = self.buf.len() - at - 1;
        if len < 0x80 {
            self.buf[at] = low_seven(len as u64);
        } else {
            let mut prefix = [0_u8; 10];
            let mut used = 0;
            let mut value = len as u64;
            while value >= 0x80 {
                prefix[used] = low_seven(value) | 0x80;
                used += 1;
                value >>= 7;
            }
            prefix[used] = low_seven(value);
            self.buf.splice(at..=at, prefix[..=used].iter().copied());
        }
        out
    }

    /// A `google.protobuf.Struct` field holding `object`; whether a number had to change (an
    /// integer beyond ±2⁵³ becomes the nearest double).
    pub fn json_struct(&mut self, tag: u32, object: &JsonObject) -> bool {
        self.message(tag, |w| w.struct_fields(object))
    }

    /// A `google.protobuf.Value` field holding `value` (a `oneof` member, so written always);
    /// whether a number had to change.
    pub fn json_value(&mut self, tag: u32, value: &serde_json::Value) -> bool {
        self.message(tag, |w| w.value_fields(value))
    }

    /// `Struct.fields`: one map entry (`key = 1`, `value = 2`) per member.
    fn struct_fields(&mut self, object: &JsonObject) -> bool {
        let mut changed = false;
        for (key, value) in object {
            changed |= self.message(1, |w| {
                w.string(1, key);
                w.json_value(2, value)
            });
        }
        changed
    }

    /// `Value.kind`: `null_value = 1`, `number_value = 2`, `string_value = 3`,
    /// `bool_value = 4`, `struct_value = 5`, `list_value = 6` (`ListValue.values = 1`).
    fn value_fields(&mut self, value: &serde_json::Value) -> bool {
        match value {
            serde_json::Value::Null => {
                self.int_always(1, 0);
                false
            }
            serde_json::Value::Number(number) => {
                self.double_always(2, number.as_f64().unwrap_or_default());
                number.as_u64().is_some_and(|n| n > EXACT)
                    || number.as_i64().is_some_and(|n| n.unsigned_abs() > EXACT)
            }
            serde_json::Value::String(text) => {
                self.bytes_always(3, text.as_bytes());
                false
            }
            serde_json::Value::Bool(flag) => {
                self.bool_always(4, *flag);
                false
            }
            serde_json::Value::Object(object) => self.json_struct(5, object),
            serde_json::Value::Array(items) => self.message(6, |w| {
                let mut changed = false;
                for item in items {
                    changed |= w.json_value(1, item);
                }
                changed
            }),
        }
    }
}

/// The low seven bits of `value`.
fn low_seven(value: u64) -> u8 {
    u8::try_from(value & 0x7f).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just wrote")]

    use super::*;
    use proptest::prelude::*;
    use prost::Message as _;

    /// A message of every kind of field `Writer` writes, as prost-build would generate it.
    #[derive(Clone, PartialEq, prost::Message)]
    struct Every {
        #[prost(string, tag = "1")]
        text: String,
        #[prost(int64, tag = "2")]
        number: i64,
        #[prost(bool, tag = "3")]
        flag: bool,
        #[prost(string, repeated, tag = "4")]
        texts: Vec<String>,
        #[prost(message, optional, boxed, tag = "5")]
        inner: Option<Box<Every>>,
        #[prost(message, optional, tag = "6")]
        metadata: Option<prost_types::Struct>,
        #[prost(int32, tag = "7")]
        small: i32,
    }

    fn write(w: &mut Writer, every: &Every, metadata: Option<&JsonObject>) {
        w.string(1, &every.text);
        w.int(2, every.number);
        w.bool(3, every.flag);
        w.strings(4, &every.texts);
        if let Some(inner) = &every.inner {
            w.message(5, |w| write(w, inner, None));
        }
        if let Some(metadata) = metadata {
            w.json_struct(6, metadata);
        }
        w.int(7, i64::from(every.small));
    }

    fn json_values() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(|n| serde_json::json!(n)),
            any::<u64>().prop_map(|n| serde_json::json!(n)),
            (-1e9_f64..1e9).prop_map(|f| serde_json::json!(f)),
            ".{0,40}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(3, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::btree_map(".{0,8}", inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// The same bytes as prost's encoding of the same message, every length class
        /// included (a nested message up to 2¹⁴ bytes and more is widened in place).
        #[test]
        fn writes_what_prost_writes(
            text in ".{0,300}",
            number in any::<i64>(),
            flag in any::<bool>(),
            texts in prop::collection::vec(".{0,20}", 0..4),
            inner_text in prop_oneof![Just(String::new()), ".{0,200}", "x{16380,16400}"],
            small in any::<i32>(),
            members in prop::collection::btree_map(".{0,8}", json_values(), 0..5),
        ) {
            let metadata: JsonObject = members.into_iter().collect();
            let inner = Every { text: inner_text, small, ..Every::default() };
            let every = Every {
                text, number, flag, texts, small,
                inner: Some(Box::new(inner)),
                metadata: Some(crate::protobuf::struct_of_object(metadata.clone()).0),
            };
            let mut w = Writer::default();
            write(&mut w, &every, Some(&metadata));
            let written = w.into_vec();
            // Map entries may come in another order than prost's (sorted) one: compare the
            // decoded messages, and the bytes wherever no map is involved.
            prop_assert_eq!(Every::decode(written.as_slice()).unwrap(), every.clone());
            let plain = Every { metadata: None, ..every };
            let mut w = Writer::default();
            write(&mut w, &plain, None);
            prop_assert_eq!(w.into_vec(), plain.encode_to_vec());
        }

        /// A number is reported changed exactly when `value_of_json` reports it.
        #[test]
        fn numbers_change_as_value_of_json_says(value in json_values()) {
            let mut w = Writer::default();
            let changed = w.json_value(1, &value);
            prop_assert_eq!(changed, crate::protobuf::value_of_json(value).1);
        }
    }
}
