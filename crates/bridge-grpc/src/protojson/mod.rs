//! `ProtoJSON` to and from the protobuf wire form, driven by tables read once from the
//! descriptors.
//!
//! The same mapping as `prost_reflect`'s serde support with the options the gRPC adapters use
//! (field JSON names out, JSON or proto names in, unknown JSON fields ignored, enum names out,
//! 64-bit integers as strings, fields at their default left out), without building a
//! `DynamicMessage`: each message's fields, kinds and names sit in plain vectors, so a call reads
//! no descriptor (no shared reference counts between threads) and allocates only the JSON it
//! returns and the bytes it writes. The well-known types the A2A services use (`Timestamp`,
//! `Struct`, `Value`, `ListValue`, `Empty`, the wrappers) have their JSON forms; a service that
//! reaches `Any`, `Duration` or `FieldMask` is refused when its tables are built.

use std::borrow::Cow;
use std::collections::HashMap;

use base64::Engine as _;
use prost::encoding::{decode_varint, encode_varint};
use prost_reflect::{DescriptorPool, MessageDescriptor};
use serde_json::{Map, Number, Value};

mod encode;
#[cfg(test)]
mod tests;

/// How deep messages may nest (as prost's own decoder limits it).
const DEPTH_LIMIT: usize = 100;

/// The refusal of a well-known type without a JSON form here (never met: [`Tables::message`]
/// refuses the messages that reach one).
const UNSUPPORTED: &str = "google.protobuf.Any, Duration and FieldMask have no JSON form here";

/// A message of the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageId(usize);

/// Every message and enum of a descriptor pool, as the transcoder reads them.
#[derive(Debug)]
pub struct Tables {
    messages: Vec<Message>,
    enums: Vec<Enum>,
    by_name: HashMap<String, usize>,
}

#[derive(Debug)]
struct Message {
    name: String,
    special: Option<Special>,
    /// Sorted by number.
    fields: Vec<Field>,
    /// JSON and proto names to the index in `fields`.
    names: HashMap<String, usize>,
}

#[derive(Debug)]
struct Field {
    number: u32,
    json_name: String,
    kind: Kind,
    shape: Shape,
    /// Written even at its default (proto3 `optional`, oneof members, messages).
    presence: bool,
    oneof: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Single,
    Repeated { packed: bool },
    Map { key: Kind, value: Kind },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Double,
    Float,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Bool,
    String,
    Bytes,
    Enum(usize),
    Message(usize),
}

/// A well-known type with a JSON form of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    Timestamp,
    Struct,
    Value,
    ListValue,
    Empty,
    /// `google.protobuf.Int32Value` and the other wrappers: the JSON of field 1.
    Wrapper(Kind),
    /// `Any`, `Duration`, `FieldMask`: not carried.
    Unsupported,
}

#[derive(Debug)]
struct Enum {
    null_value: bool,
    names: HashMap<String, i32>,
    values: HashMap<i32, String>,
}

const WIRE_VARINT: u8 = 0;
const WIRE_FIXED64: u8 = 1;
const WIRE_LEN: u8 = 2;
const WIRE_START_GROUP: u8 = 3;
const WIRE_END_GROUP: u8 = 4;
const WIRE_FIXED32: u8 = 5;

impl Tables {
    /// The tables of every message and enum of `pool`.
    #[must_use]
    pub fn new(pool: &DescriptorPool) -> Self {
        let by_name: HashMap<String, usize> = pool
            .all_messages()
            .enumerate()
            .map(|(i, m)| (m.full_name().to_owned(), i))
            .collect();
        let enum_index: HashMap<String, usize> = pool
            .all_enums()
            .enumerate()
            .map(|(i, e)| (e.full_name().to_owned(), i))
            .collect();
        let kind_of = |kind: prost_reflect::Kind| kind_in(&kind, &by_name, &enum_index);
        let messages = pool
            .all_messages()
            .map(|message| {
                let mut fields: Vec<Field> = message
                    .fields()
                    .map(|field| field_of(&message, &field, &kind_of))
                    .collect();
                fields.sort_by_key(|f| f.number);
                let mut names = HashMap::new();
                for field in message.fields() {
                    if let Some(index) = fields.iter().position(|f| f.number == field.number()) {
                        names.insert(field.name().to_owned(), index);
                        names.insert(field.json_name().to_owned(), index);
                    }
                }
                Message {
                    name: message.full_name().to_owned(),
                    special: special_of(&message, &fields),
                    fields,
                    names,
                }
            })
            .collect();
        let enums = pool
            .all_enums()
            .map(|e| Enum {
                null_value: e.full_name() == "google.protobuf.NullValue",
                names: e
                    .values()
                    .map(|v| (v.name().to_owned(), v.number()))
                    .collect(),
                // The first name of a number (an alias after it is never written).
                values: e
                    .values()
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .map(|v| (v.number(), v.name().to_owned()))
                    .collect(),
            })
            .collect();
        Self {
            messages,
            enums,
            by_name,
        }
    }

    /// The message `descriptor` names.
    ///
    /// # Errors
    ///
    /// When the tables lack it, or it reaches a well-known type the transcoder does not carry.
    pub fn message(&self, descriptor: &MessageDescriptor) -> Result<MessageId, String> {
        let index = *self
            .by_name
            .get(descriptor.full_name())
            .ok_or_else(|| format!("the descriptors lack {}", descriptor.full_name()))?;
        let mut seen = vec![false; self.messages.len()];
        self.check(index, &mut seen)?;
        Ok(MessageId(index))
    }

    fn check(&self, index: usize, seen: &mut [bool]) -> Result<(), String> {
        if std::mem::replace(&mut seen[index], true) {
            return Ok(());
        }
        let message = &self.messages[index];
        if message.special == Some(Special::Unsupported) {
            return Err(format!(
                "{} has no JSON form the gRPC adapters carry",
                message.name
            ));
        }
        for field in &message.fields {
            let value = match field.shape {
                Shape::Map { value, .. } => Some(value),
                _ => None,
            };
            for kind in std::iter::once(field.kind).chain(value) {
                if let Kind::Message(inner) = kind {
                    self.check(inner, seen)?;
                }
            }
        }
        Ok(())
    }

    /// The full name of `message`.
    #[must_use]
    pub fn name(&self, message: MessageId) -> &str {
        &self.messages[message.0].name
    }

    /// The encoded `message` as its `ProtoJSON` value.
    ///
    /// # Errors
    ///
    /// What keeps the bytes from being such a message.
    pub fn to_json(&self, message: MessageId, bytes: &[u8]) -> Result<Value, String> {
        self.decode_message(message.0, bytes, 0)
    }

    /// The `ProtoJSON` value `json` as the encoded `message`.
    ///
    /// # Errors
    ///
    /// What keeps the JSON from being such a message.
    pub fn from_json(&self, message: MessageId, json: &Value) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(64);
        self.write_message(message.0, json, &mut out)
            .map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// The `ProtoJSON` text `json` as the encoded `message`, written as it is read.
    ///
    /// # Errors
    ///
    /// What keeps the JSON from being such a message.
    pub fn from_json_text(&self, message: MessageId, json: &[u8]) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(json.len());
        let mut reader = serde_json::Deserializer::from_slice(json);
        self.write_message(message.0, &mut reader, &mut out)
            .and_then(|()| reader.end())
            .map_err(|e| e.to_string())?;
        Ok(out)
    }

    // ---- protobuf -> JSON ------------------------------------------------------------------

    fn decode_message(&self, index: usize, bytes: &[u8], depth: usize) -> Result<Value, String> {
        if depth > DEPTH_LIMIT {
            return Err("messages nest too deeply".to_owned());
        }
        let message = &self.messages[index];
        if let Some(special) = message.special {
            return self.decode_special(special, bytes, depth);
        }
        let mut slots: Vec<Slot<'_>> = Vec::new();
        slots.resize_with(message.fields.len(), || Slot::Empty);
        let mut reader = Reader { bytes };
        while let Some((number, wire)) = reader.tag()? {
            let Ok(at) = message.fields.binary_search_by_key(&number, |f| f.number) else {
                reader.skip(number, wire)?;
                continue;
            };
            let field = &message.fields[at];
            if let Some(oneof) = field.oneof {
                // Setting a member of a oneof clears the others (a message cleared so must
                // still have been a message).
                for (other, slot) in message.fields.iter().zip(slots.iter_mut()) {
                    if other.oneof == Some(oneof) && other.number != number {
                        if let (Slot::Parts(parts), Kind::Message(inner)) = (&*slot, other.kind) {
                            self.decode_message(inner, &parts.concat(), depth + 1)?;
                        }
                        *slot = Slot::Empty;
                    }
                }
            }
            match field.shape {
                Shape::Single => match field.kind {
                    Kind::Message(_) => {
                        let payload = reader.expect_len(wire)?;
                        match &mut slots[at] {
                            Slot::Parts(parts) => parts.push(payload),
                            slot => *slot = Slot::Parts(vec![payload]),
                        }
                    }
                    kind => {
                        let value = Self::scalar(kind, wire, &mut reader)?;
                        slots[at] = Slot::One(value);
                    }
                },
                Shape::Repeated { .. } => {
                    if !matches!(slots[at], Slot::List(_)) {
                        slots[at] = Slot::List(Vec::new());
                    }
                    if let Slot::List(items) = &mut slots[at] {
                        self.list_item(field.kind, wire, &mut reader, items, depth)?;
                    }
                }
                Shape::Map { key, value } => {
                    let entry = reader.expect_len(wire)?;
                    let (k, v) = self.map_entry(key, value, entry, depth)?;
                    if !matches!(slots[at], Slot::Map(_)) {
                        slots[at] = Slot::Map(Map::new());
                    }
                    if let Slot::Map(map) = &mut slots[at] {
                        map.insert(k, v);
                    }
                }
            }
        }
        let mut out = Map::new();
        for (field, slot) in message.fields.iter().zip(slots) {
            let value = match slot {
                Slot::Empty => continue,
                Slot::One(value) => {
                    if !field.presence && Self::is_default(&value) {
                        continue;
                    }
                    self.scalar_json(field.kind, value)
                }
                Slot::Parts(parts) => {
                    let Kind::Message(inner) = field.kind else {
                        continue;
                    };
                    if parts.len() == 1 {
                        self.decode_message(inner, parts[0], depth + 1)?
                    } else {
                        // A message field written more than once is the merge of its parts,
                        // which is their concatenation.
                        self.decode_message(inner, &parts.concat(), depth + 1)?
                    }
                }
                Slot::List(items) => {
                    if items.is_empty() {
                        continue;
                    }
                    Value::Array(items)
                }
                Slot::Map(map) => {
                    if map.is_empty() {
                        continue;
                    }
                    Value::Object(map)
                }
            };
            out.insert(field.json_name.clone(), value);
        }
        Ok(Value::Object(out))
    }

    fn list_item(
        &self,
        kind: Kind,
        wire: u8,
        reader: &mut Reader<'_>,
        items: &mut Vec<Value>,
        depth: usize,
    ) -> Result<(), String> {
        match kind {
            Kind::Message(inner) => {
                let payload = reader.expect_len(wire)?;
                items.push(self.decode_message(inner, payload, depth + 1)?);
            }
            Kind::String | Kind::Bytes => {
                let value = Self::scalar(kind, wire, reader)?;
                items.push(self.scalar_json(kind, value));
            }
            _ if wire == WIRE_LEN => {
                // Packed: the values one after the other.
                let mut packed = Reader {
                    bytes: reader.len_delimited()?,
                };
                while !packed.bytes.is_empty() {
                    let value = Self::scalar(kind, scalar_wire(kind), &mut packed)?;
                    items.push(self.scalar_json(kind, value));
                }
            }
            _ => {
                let value = Self::scalar(kind, wire, reader)?;
                items.push(self.scalar_json(kind, value));
            }
        }
        Ok(())
    }

    fn map_entry(
        &self,
        key: Kind,
        value: Kind,
        entry: &[u8],
        depth: usize,
    ) -> Result<(String, Value), String> {
        let mut reader = Reader { bytes: entry };
        let mut k = None;
        let mut parts: Vec<&[u8]> = Vec::new();
        let mut v = None;
        while let Some((number, wire)) = reader.tag()? {
            match number {
                1 => k = Some(Self::scalar(key, wire, &mut reader)?),
                2 => match value {
                    Kind::Message(_) => parts.push(reader.expect_len(wire)?),
                    kind => v = Some(Self::scalar(kind, wire, &mut reader)?),
                },
                _ => reader.skip(number, wire)?,
            }
        }
        let key_text = match k.map_or_else(|| default_scalar(key), Ok)? {
            Scalar::Str(s) => s.to_owned(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::I64(n) => n.to_string(),
            Scalar::U64(n) => n.to_string(),
            other => return Err(format!("a map key cannot be {other:?}")),
        };
        let value = match value {
            Kind::Message(inner) => self.decode_message(inner, &parts.concat(), depth + 1)?,
            kind => self.scalar_json(kind, v.map_or_else(|| default_scalar(kind), Ok)?),
        };
        Ok((key_text, value))
    }

    fn scalar<'b>(kind: Kind, wire: u8, reader: &mut Reader<'b>) -> Result<Scalar<'b>, String> {
        let expected = scalar_wire(kind);
        if wire != expected {
            return Err(format!("invalid wire type {wire} for a {kind:?} field"));
        }
        Ok(match kind {
            Kind::Double => Scalar::F64(f64::from_bits(reader.fixed64()?)),
            Kind::Float => Scalar::F64(f64::from(f32::from_bits(reader.fixed32()?))),
            Kind::Int32 | Kind::Enum(_) => Scalar::I64(i64::from(truncate_i32(reader.varint()?))),
            Kind::Int64 => Scalar::I64(reinterpret_i64(reader.varint()?)),
            Kind::Uint32 => Scalar::U64(u64::from(truncate_u32(reader.varint()?))),
            Kind::Uint64 => Scalar::U64(reader.varint()?),
            Kind::Sint32 => {
                let raw = truncate_u32(reader.varint()?);
                Scalar::I64(i64::from(unzigzag32(raw)))
            }
            Kind::Sint64 => Scalar::I64(unzigzag64(reader.varint()?)),
            Kind::Fixed32 => Scalar::U64(u64::from(reader.fixed32()?)),
            Kind::Fixed64 => Scalar::U64(reader.fixed64()?),
            Kind::Sfixed32 => Scalar::I64(i64::from(i32::from_le_bytes(
                reader.fixed32()?.to_le_bytes(),
            ))),
            Kind::Sfixed64 => Scalar::I64(i64::from_le_bytes(reader.fixed64()?.to_le_bytes())),
            Kind::Bool => Scalar::Bool(reader.varint()? != 0),
            Kind::String => {
                let bytes = reader.len_delimited()?;
                Scalar::Str(
                    std::str::from_utf8(bytes)
                        .map_err(|_| "a string field is not valid UTF-8".to_owned())?,
                )
            }
            Kind::Bytes => Scalar::Bytes(reader.len_delimited()?),
            Kind::Message(_) => return Err("a message is no scalar".to_owned()),
        })
    }

    fn is_default(value: &Scalar<'_>) -> bool {
        match value {
            Scalar::F64(v) => v.to_bits() == 0,
            Scalar::I64(v) => *v == 0,
            Scalar::U64(v) => *v == 0,
            Scalar::Bool(v) => !v,
            Scalar::Str(v) => v.is_empty(),
            Scalar::Bytes(v) => v.is_empty(),
        }
    }

    fn scalar_json(&self, kind: Kind, value: Scalar<'_>) -> Value {
        match (kind, value) {
            (Kind::Enum(e), Scalar::I64(n)) => {
                let table = &self.enums[e];
                if table.null_value {
                    Value::Null
                } else {
                    let n = i32::try_from(n).unwrap_or_default();
                    table
                        .values
                        .get(&n)
                        .map_or_else(|| Value::from(n), |name| Value::String(name.clone()))
                }
            }
            (Kind::Int64 | Kind::Sint64 | Kind::Sfixed64, Scalar::I64(n)) => {
                Value::String(n.to_string())
            }
            (Kind::Uint64 | Kind::Fixed64, Scalar::U64(n)) => Value::String(n.to_string()),
            (_, Scalar::I64(n)) => Value::from(n),
            (_, Scalar::U64(n)) => Value::from(n),
            (_, Scalar::F64(v)) => float_json(v),
            (_, Scalar::Bool(b)) => Value::Bool(b),
            (_, Scalar::Str(s)) => Value::String(s.to_owned()),
            (_, Scalar::Bytes(b)) => {
                Value::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
        }
    }

    fn decode_special(
        &self,
        special: Special,
        bytes: &[u8],
        depth: usize,
    ) -> Result<Value, String> {
        if depth > DEPTH_LIMIT {
            return Err("messages nest too deeply".to_owned());
        }
        let mut reader = Reader { bytes };
        match special {
            Special::Timestamp => {
                let (mut seconds, mut nanos) = (0_i64, 0_i32);
                while let Some((number, wire)) = reader.tag()? {
                    match (number, wire) {
                        (1, WIRE_VARINT) => seconds = reinterpret_i64(reader.varint()?),
                        (2, WIRE_VARINT) => nanos = truncate_i32(reader.varint()?),
                        (1 | 2, _) => return Err(wrong_wire(wire)),
                        _ => reader.skip(number, wire)?,
                    }
                }
                let timestamp = prost_types::Timestamp { seconds, nanos };
                check_timestamp(&timestamp)?;
                Ok(Value::String(timestamp.to_string()))
            }
            Special::Struct => {
                let mut out = Map::new();
                while let Some((number, wire)) = reader.tag()? {
                    match (number, wire) {
                        (1, WIRE_LEN) => {
                            let (key, value) = self.struct_entry(reader.len_delimited()?, depth)?;
                            out.insert(key, value);
                        }
                        (1, _) => return Err(wrong_wire(wire)),
                        _ => reader.skip(number, wire)?,
                    }
                }
                Ok(Value::Object(out))
            }
            Special::Value => self.decode_value(&mut reader, depth),
            Special::ListValue => {
                let mut items = Vec::new();
                while let Some((number, wire)) = reader.tag()? {
                    match (number, wire) {
                        (1, WIRE_LEN) => {
                            let payload = reader.len_delimited()?;
                            items.push(self.decode_special(Special::Value, payload, depth + 1)?);
                        }
                        (1, _) => return Err(wrong_wire(wire)),
                        _ => reader.skip(number, wire)?,
                    }
                }
                Ok(Value::Array(items))
            }
            Special::Empty => {
                while let Some((number, wire)) = reader.tag()? {
                    reader.skip(number, wire)?;
                }
                Ok(Value::Object(Map::new()))
            }
            Special::Wrapper(kind) => {
                let mut value = None;
                while let Some((number, wire)) = reader.tag()? {
                    if number == 1 {
                        value = Some(Self::scalar(kind, wire, &mut reader)?);
                    } else {
                        reader.skip(number, wire)?;
                    }
                }
                Ok(self.scalar_json(kind, value.map_or_else(|| default_scalar(kind), Ok)?))
            }
            Special::Unsupported => Err(UNSUPPORTED.to_owned()),
        }
    }

    /// A `google.protobuf.Value`: its kind is a oneof, and the member written last holds; a
    /// number that is not finite has no JSON.
    fn decode_value(&self, reader: &mut Reader<'_>, depth: usize) -> Result<Value, String> {
        let mut out = Value::Null;
        // A Value's kind is a oneof: the last member written holds.
        let mut parts: Option<(u32, Vec<&[u8]>)> = None;
        let mut finite = true;
        while let Some((number, wire)) = reader.tag()? {
            match (number, wire) {
                (1, WIRE_VARINT) => {
                    reader.varint()?;
                    out = Value::Null;
                    finite = true;
                    self.discard(parts.take(), depth)?;
                }
                (2, WIRE_FIXED64) => {
                    let v = f64::from_bits(reader.fixed64()?);
                    out = float_json(v);
                    finite = v.is_finite();
                    self.discard(parts.take(), depth)?;
                }
                (3, WIRE_LEN) => {
                    let s = std::str::from_utf8(reader.len_delimited()?)
                        .map_err(|_| "a string field is not valid UTF-8".to_owned())?;
                    out = Value::String(s.to_owned());
                    finite = true;
                    self.discard(parts.take(), depth)?;
                }
                (4, WIRE_VARINT) => {
                    out = Value::Bool(reader.varint()? != 0);
                    finite = true;
                    self.discard(parts.take(), depth)?;
                }
                (5 | 6, WIRE_LEN) => {
                    let payload = reader.len_delimited()?;
                    finite = true;
                    match &mut parts {
                        Some((n, list)) if *n == number => list.push(payload),
                        _ => {
                            let replaced = parts.replace((number, vec![payload]));
                            self.discard(replaced, depth)?;
                        }
                    }
                }
                (1..=6, _) => return Err(wrong_wire(wire)),
                _ => reader.skip(number, wire)?,
            }
        }
        if let Some((number, list)) = parts {
            let joined = list.concat();
            let special = if number == 5 {
                Special::Struct
            } else {
                Special::ListValue
            };
            out = self.decode_special(special, &joined, depth + 1)?;
        }
        if !finite {
            return Err("a google.protobuf.Value number is not finite".to_owned());
        }
        Ok(out)
    }

    /// Checks the struct or list a later member of a `Value`'s oneof replaces.
    fn discard(&self, parts: Option<(u32, Vec<&[u8]>)>, depth: usize) -> Result<(), String> {
        if let Some((number, list)) = parts {
            let special = if number == 5 {
                Special::Struct
            } else {
                Special::ListValue
            };
            self.decode_special(special, &list.concat(), depth + 1)?;
        }
        Ok(())
    }

    fn struct_entry(&self, entry: &[u8], depth: usize) -> Result<(String, Value), String> {
        let mut reader = Reader { bytes: entry };
        let mut key = String::new();
        let mut parts: Vec<&[u8]> = Vec::new();
        while let Some((number, wire)) = reader.tag()? {
            match (number, wire) {
                (1, WIRE_LEN) => {
                    key.clear();
                    key.push_str(
                        std::str::from_utf8(reader.len_delimited()?)
                            .map_err(|_| "a string field is not valid UTF-8".to_owned())?,
                    );
                }
                (2, WIRE_LEN) => parts.push(reader.len_delimited()?),
                (1 | 2, _) => return Err(wrong_wire(wire)),
                _ => reader.skip(number, wire)?,
            }
        }
        let value = self.decode_special(Special::Value, &parts.concat(), depth + 1)?;
        Ok((key, value))
    }
}

/// What a message field holds while its message is read.
enum Slot<'b> {
    Empty,
    One(Scalar<'b>),
    Parts(Vec<&'b [u8]>),
    List(Vec<Value>),
    Map(Map<String, Value>),
}

/// A scalar read from the wire, borrowing its bytes.
#[derive(Debug)]
enum Scalar<'b> {
    F64(f64),
    I64(i64),
    U64(u64),
    Bool(bool),
    Str(&'b str),
    Bytes(&'b [u8]),
}

/// A scalar to write.
#[derive(Debug)]
enum Owned<'a> {
    Varint(u64),
    Zig32(i32),
    Zig64(i64),
    Fixed32(u32),
    Fixed64(u64),
    F32(f32),
    F64(f64),
    Bytes(Cow<'a, [u8]>),
}

impl Owned<'_> {
    fn is_default(&self) -> bool {
        match self {
            Self::Varint(v) | Self::Fixed64(v) => *v == 0,
            Self::Zig32(v) => *v == 0,
            Self::Zig64(v) => *v == 0,
            Self::Fixed32(v) => *v == 0,
            Self::F32(v) => v.to_bits() == 0,
            Self::F64(v) => v.to_bits() == 0,
            Self::Bytes(v) => v.is_empty(),
        }
    }

    fn wire(&self) -> u8 {
        match self {
            Self::Varint(_) | Self::Zig32(_) | Self::Zig64(_) => WIRE_VARINT,
            Self::Fixed32(_) | Self::F32(_) => WIRE_FIXED32,
            Self::Fixed64(_) | Self::F64(_) => WIRE_FIXED64,
            Self::Bytes(_) => WIRE_LEN,
        }
    }

    fn write(&self, out: &mut Vec<u8>, number: u32) {
        write_tag(out, number, self.wire());
        self.write_bare(out);
    }

    fn write_bare(&self, out: &mut Vec<u8>) {
        match self {
            Self::Varint(v) => encode_varint(*v, out),
            Self::Zig32(v) => encode_varint(u64::from(zigzag32(*v)), out),
            Self::Zig64(v) => encode_varint(zigzag64(*v), out),
            Self::Fixed32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Self::Fixed64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Self::F32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Self::F64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Self::Bytes(v) => {
                write_len(out, v.len());
                out.extend_from_slice(v);
            }
        }
    }
}

/// A reader of the protobuf wire form.
struct Reader<'b> {
    bytes: &'b [u8],
}

impl<'b> Reader<'b> {
    fn tag(&mut self) -> Result<Option<(u32, u8)>, String> {
        if self.bytes.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let wire = u8::try_from(key & 7).unwrap_or(u8::MAX);
        let number = u32::try_from(key >> 3).map_err(|_| format!("invalid key value: {key}"))?;
        if number == 0 || number > 0x1fff_ffff {
            return Err(format!("invalid field number: {number}"));
        }
        Ok(Some((number, wire)))
    }

    fn varint(&mut self) -> Result<u64, String> {
        decode_varint(&mut self.bytes).map_err(|e| e.to_string())
    }

    fn fixed32(&mut self) -> Result<u32, String> {
        let (head, rest) = self
            .bytes
            .split_first_chunk::<4>()
            .ok_or_else(|| "buffer underflow".to_owned())?;
        self.bytes = rest;
        Ok(u32::from_le_bytes(*head))
    }

    fn fixed64(&mut self) -> Result<u64, String> {
        let (head, rest) = self
            .bytes
            .split_first_chunk::<8>()
            .ok_or_else(|| "buffer underflow".to_owned())?;
        self.bytes = rest;
        Ok(u64::from_le_bytes(*head))
    }

    fn len_delimited(&mut self) -> Result<&'b [u8], String> {
        let len = usize::try_from(self.varint()?).map_err(|_| "buffer underflow".to_owned())?;
        if len > self.bytes.len() {
            return Err("buffer underflow".to_owned());
        }
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(head)
    }

    fn expect_len(&mut self, wire: u8) -> Result<&'b [u8], String> {
        if wire != WIRE_LEN {
            return Err(format!("invalid wire type {wire} for a message field"));
        }
        self.len_delimited()
    }

    /// Passes over a field the message does not declare.
    fn skip(&mut self, number: u32, wire: u8) -> Result<(), String> {
        match wire {
            WIRE_VARINT => {
                self.varint()?;
            }
            WIRE_FIXED64 => {
                self.fixed64()?;
            }
            WIRE_LEN => {
                self.len_delimited()?;
            }
            WIRE_FIXED32 => {
                self.fixed32()?;
            }
            WIRE_START_GROUP => {
                let mut depth = 1_usize;
                while depth > 0 {
                    let (inner, inner_wire) = self
                        .tag()?
                        .ok_or_else(|| "a group does not end".to_owned())?;
                    match inner_wire {
                        WIRE_START_GROUP => depth += 1,
                        WIRE_END_GROUP => {
                            depth -= 1;
                            if depth == 0 && inner != number {
                                return Err("unexpected end group tag".to_owned());
                            }
                        }
                        other => self.skip(inner, other)?,
                    }
                    if depth > DEPTH_LIMIT {
                        return Err("groups nest too deeply".to_owned());
                    }
                }
            }
            other => return Err(format!("invalid wire type value: {other}")),
        }
        Ok(())
    }
}

/// The kind of a field, its message or enum named by index in the tables.
fn kind_in(
    kind: &prost_reflect::Kind,
    messages: &HashMap<String, usize>,
    enums: &HashMap<String, usize>,
) -> Kind {
    use prost_reflect::Kind as K;
    match kind {
        K::Double => Kind::Double,
        K::Float => Kind::Float,
        K::Int32 => Kind::Int32,
        K::Int64 => Kind::Int64,
        K::Uint32 => Kind::Uint32,
        K::Uint64 => Kind::Uint64,
        K::Sint32 => Kind::Sint32,
        K::Sint64 => Kind::Sint64,
        K::Fixed32 => Kind::Fixed32,
        K::Fixed64 => Kind::Fixed64,
        K::Sfixed32 => Kind::Sfixed32,
        K::Sfixed64 => Kind::Sfixed64,
        K::Bool => Kind::Bool,
        K::String => Kind::String,
        K::Bytes => Kind::Bytes,
        K::Enum(e) => Kind::Enum(enums.get(e.full_name()).copied().unwrap_or(0)),
        K::Message(m) => Kind::Message(messages.get(m.full_name()).copied().unwrap_or(0)),
    }
}

fn field_of(
    message: &MessageDescriptor,
    field: &prost_reflect::FieldDescriptor,
    kind_of: &impl Fn(prost_reflect::Kind) -> Kind,
) -> Field {
    let shape = if field.is_map() {
        match field.kind() {
            prost_reflect::Kind::Message(entry) => Shape::Map {
                key: kind_of(entry.map_entry_key_field().kind()),
                value: kind_of(entry.map_entry_value_field().kind()),
            },
            _ => Shape::Single,
        }
    } else if field.is_list() {
        Shape::Repeated {
            packed: field.is_packed(),
        }
    } else {
        Shape::Single
    };
    Field {
        number: field.number(),
        json_name: field.json_name().to_owned(),
        kind: kind_of(field.kind()),
        shape,
        presence: field.supports_presence(),
        oneof: field.containing_oneof().and_then(|o| {
            message
                .oneofs()
                .position(|m| m.full_name() == o.full_name())
        }),
    }
}

fn special_of(message: &MessageDescriptor, fields: &[Field]) -> Option<Special> {
    Some(match message.full_name() {
        "google.protobuf.Timestamp" => Special::Timestamp,
        "google.protobuf.Struct" => Special::Struct,
        "google.protobuf.Value" => Special::Value,
        "google.protobuf.ListValue" => Special::ListValue,
        "google.protobuf.Empty" => Special::Empty,
        "google.protobuf.Any" | "google.protobuf.Duration" | "google.protobuf.FieldMask" => {
            Special::Unsupported
        }
        "google.protobuf.DoubleValue"
        | "google.protobuf.FloatValue"
        | "google.protobuf.Int64Value"
        | "google.protobuf.UInt64Value"
        | "google.protobuf.Int32Value"
        | "google.protobuf.UInt32Value"
        | "google.protobuf.BoolValue"
        | "google.protobuf.StringValue"
        | "google.protobuf.BytesValue" => Special::Wrapper(fields.first()?.kind),
        _ => return None,
    })
}

fn wrong_wire(wire: u8) -> String {
    format!("invalid wire type {wire} for a field of a well-known type")
}

const fn scalar_wire(kind: Kind) -> u8 {
    match kind {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => WIRE_FIXED64,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => WIRE_FIXED32,
        Kind::String | Kind::Bytes | Kind::Message(_) => WIRE_LEN,
        _ => WIRE_VARINT,
    }
}

fn default_scalar(kind: Kind) -> Result<Scalar<'static>, String> {
    Ok(match kind {
        Kind::Double | Kind::Float => Scalar::F64(0.0),
        Kind::Uint32 | Kind::Uint64 | Kind::Fixed32 | Kind::Fixed64 => Scalar::U64(0),
        Kind::Bool => Scalar::Bool(false),
        Kind::String => Scalar::Str(""),
        Kind::Bytes => Scalar::Bytes(&[]),
        Kind::Message(_) => return Err("a message is no scalar".to_owned()),
        _ => Scalar::I64(0),
    })
}

fn write_tag(out: &mut Vec<u8>, number: u32, wire: u8) {
    encode_varint((u64::from(number) << 3) | u64::from(wire), out);
}

fn write_len(out: &mut Vec<u8>, len: usize) {
    encode_varint(len as u64, out);
}

/// The low 32 bits of a varint, as protobuf reads an `int32` (and an enum).
fn truncate_i32(raw: u64) -> i32 {
    let [a, b, c, d, ..] = raw.to_le_bytes();
    i32::from_le_bytes([a, b, c, d])
}

fn truncate_u32(raw: u64) -> u32 {
    let [a, b, c, d, ..] = raw.to_le_bytes();
    u32::from_le_bytes([a, b, c, d])
}

fn reinterpret_i64(raw: u64) -> i64 {
    i64::from_le_bytes(raw.to_le_bytes())
}

fn zigzag32(v: i32) -> u32 {
    u32::from_le_bytes(((v << 1) ^ (v >> 31)).to_le_bytes())
}

fn zigzag64(v: i64) -> u64 {
    u64::from_le_bytes(((v << 1) ^ (v >> 63)).to_le_bytes())
}

fn unzigzag32(raw: u32) -> i32 {
    i32::from_le_bytes((raw >> 1).to_le_bytes()) ^ -i32::from_le_bytes((raw & 1).to_le_bytes())
}

fn unzigzag64(raw: u64) -> i64 {
    i64::from_le_bytes((raw >> 1).to_le_bytes()) ^ -i64::from_le_bytes((raw & 1).to_le_bytes())
}

/// A double's JSON: a number when finite, else `NaN`, `Infinity` or `-Infinity` as strings.
fn float_json(v: f64) -> Value {
    Number::from_f64(v).map_or_else(
        || {
            Value::String(
                if v.is_nan() {
                    "NaN"
                } else if v > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                }
                .to_owned(),
            )
        },
        Value::Number,
    )
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "a whole double within the i128 range converts exactly"
)]
fn integral(v: f64) -> Option<i128> {
    (v.fract() == 0.0 && v.is_finite() && v.abs() < 1.7e38).then_some(v as i128)
}

fn bytes_of(text: &str) -> Result<Vec<u8>, String> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const CONFIG: GeneralPurposeConfig = GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent);
    const STANDARD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, CONFIG);
    const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, CONFIG);
    match STANDARD.decode(text) {
        Ok(bytes) => Ok(bytes),
        Err(base64::DecodeError::InvalidByte(_, b'-' | b'_')) => URL_SAFE
            .decode(text)
            .map_err(|e| format!("invalid base64: {e}")),
        Err(e) => Err(format!("invalid base64: {e}")),
    }
}

fn map_key(kind: Kind, key: &str) -> Result<Owned<'_>, String> {
    let bad = |e: &dyn std::fmt::Display| format!("invalid map key {key:?}: {e}");
    Ok(match kind {
        Kind::String => Owned::Bytes(Cow::Borrowed(key.as_bytes())),
        Kind::Bool => Owned::Varint(u64::from(key.parse::<bool>().map_err(|e| bad(&e))?)),
        Kind::Int32 | Kind::Int64 => {
            let v = if kind == Kind::Int32 {
                i64::from(key.parse::<i32>().map_err(|e| bad(&e))?)
            } else {
                key.parse::<i64>().map_err(|e| bad(&e))?
            };
            Owned::Varint(u64::from_le_bytes(v.to_le_bytes()))
        }
        Kind::Uint32 => Owned::Varint(u64::from(key.parse::<u32>().map_err(|e| bad(&e))?)),
        Kind::Uint64 => Owned::Varint(key.parse::<u64>().map_err(|e| bad(&e))?),
        Kind::Sint32 => Owned::Zig32(key.parse::<i32>().map_err(|e| bad(&e))?),
        Kind::Sint64 => Owned::Zig64(key.parse::<i64>().map_err(|e| bad(&e))?),
        Kind::Fixed32 => Owned::Fixed32(key.parse::<u32>().map_err(|e| bad(&e))?),
        Kind::Fixed64 => Owned::Fixed64(key.parse::<u64>().map_err(|e| bad(&e))?),
        Kind::Sfixed32 => Owned::Fixed32(u32::from_le_bytes(
            key.parse::<i32>().map_err(|e| bad(&e))?.to_le_bytes(),
        )),
        Kind::Sfixed64 => Owned::Fixed64(u64::from_le_bytes(
            key.parse::<i64>().map_err(|e| bad(&e))?.to_le_bytes(),
        )),
        _ => return Err(format!("invalid map key type for {key:?}")),
    })
}

/// The range `google.protobuf.Timestamp` allows (0001-01-01 to 9999-12-31).
fn check_timestamp(timestamp: &prost_types::Timestamp) -> Result<(), String> {
    const MIN: i64 = -62_135_596_800;
    const MAX: i64 = 253_402_300_799;
    if (MIN..=MAX).contains(&timestamp.seconds) {
        Ok(())
    } else {
        Err("timestamp out of range".to_owned())
    }
}

/// An RFC 3339 timestamp in the strict form `ProtoJSON` reads: `YYYY-MM-DDTHH:MM:SS`, an
/// optional fraction, then `Z` or an offset `+HH:MM`.
fn strict_rfc3339(text: &str) -> Result<(), String> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    let at = |i: usize, c: u8| bytes.get(i) == Some(&c);
    let shape = digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && at(10, b'T')
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19);
    if !shape {
        return Err(format!("invalid rfc3339 timestamp: {text:?}"));
    }
    let mut i = 19;
    if at(i, b'.') {
        i += 1;
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return Err("invalid rfc3339 timestamp: empty fractional seconds".to_owned());
        }
    }
    let end_ok = if at(i, b'Z') {
        i + 1 == bytes.len()
    } else if at(i, b'+') || at(i, b'-') {
        digits(i + 1..i + 3) && at(i + 3, b':') && digits(i + 4..i + 6) && i + 6 == bytes.len()
    } else {
        false
    };
    if end_ok {
        Ok(())
    } else {
        Err(format!("invalid rfc3339 timestamp: {text:?}"))
    }
}
