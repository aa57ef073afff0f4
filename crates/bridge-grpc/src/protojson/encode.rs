//! JSON to protobuf: serde seeds that write each message while its JSON is read, from text or
//! from a `serde_json::Value` alike, with no value built in between. A length-delimited message
//! is written after one reserved byte of length, and moved up when its length needs more.

use std::borrow::Cow;
use std::fmt;

use prost::encoding::encode_varint;
use serde::de::{
    DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};

use super::{
    DEPTH_LIMIT, Field, Kind, Message, Owned, Shape, Special, Tables, UNSUPPORTED, WIRE_LEN,
    bytes_of, check_timestamp, integral, map_key, strict_rfc3339, write_tag,
};

impl Tables {
    /// Writes the JSON `deserializer` reads as the message `index` (its fields, no length).
    pub(super) fn write_message<'de, D: Deserializer<'de>>(
        &self,
        index: usize,
        deserializer: D,
        out: &mut Vec<u8>,
    ) -> Result<(), D::Error> {
        MessageSeed {
            tables: self,
            index,
            out,
            depth: 0,
        }
        .deserialize(deserializer)
    }
}

/// `body` written as the length-delimited field `number` of `out`.
fn prefixed<E>(
    out: &mut Vec<u8>,
    number: u32,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    write_tag(out, number, WIRE_LEN);
    let at = out.len();
    out.push(0);
    body(out)?;
    let len = out.len() - at - 1;
    if let Ok(short) = u8::try_from(len)
        && short < 0x80
    {
        out[at] = short;
    } else {
        let mut prefix = Vec::with_capacity(10);
        encode_varint(len as u64, &mut prefix);
        out.splice(at..=at, prefix);
    }
    Ok(())
}

fn too_deep<E: serde::de::Error>(depth: usize) -> Result<(), E> {
    if depth > DEPTH_LIMIT {
        Err(E::custom("messages nest too deeply"))
    } else {
        Ok(())
    }
}

/// A message's fields (or a well-known type's JSON form).
struct MessageSeed<'t, 'o> {
    tables: &'t Tables,
    index: usize,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for MessageSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        too_deep(self.depth)?;
        let message = &self.tables.messages[self.index];
        let Some(special) = message.special else {
            return deserializer.deserialize_map(FieldsVisitor {
                tables: self.tables,
                message,
                out: self.out,
                depth: self.depth,
            });
        };
        let (tables, out, depth) = (self.tables, self.out, self.depth);
        match special {
            Special::Timestamp => deserializer.deserialize_str(TimestampVisitor { out }),
            Special::Struct => deserializer.deserialize_map(StructVisitor { tables, out, depth }),
            Special::Value => deserializer.deserialize_any(ValueVisitor { tables, out, depth }),
            Special::ListValue => {
                deserializer.deserialize_seq(ListValueVisitor { tables, out, depth })
            }
            Special::Empty => deserializer.deserialize_map(EmptyVisitor),
            Special::Wrapper(kind) => {
                if let Some(scalar) = (ScalarSeed { tables, kind }).deserialize(deserializer)? {
                    scalar.write(out, 1);
                }
                Ok(())
            }
            Special::Unsupported => Err(D::Error::custom(UNSUPPORTED)),
        }
    }
}

/// A length-delimited message field `number`.
struct NestedSeed<'t, 'o> {
    tables: &'t Tables,
    index: usize,
    number: u32,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for NestedSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let (tables, index, depth) = (self.tables, self.index, self.depth + 1);
        prefixed(self.out, self.number, |out| {
            MessageSeed {
                tables,
                index,
                out,
                depth,
            }
            .deserialize(deserializer)
        })
    }
}

struct FieldsVisitor<'t, 'o> {
    tables: &'t Tables,
    message: &'t Message,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> Visitor<'de> for FieldsVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a map for {}", self.message.name)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let message = self.message;
        // The oneofs a field was written for (a message with more than 64 has the rest
        // unchecked).
        let mut oneofs = 0_u64;
        while let Some(at) = map.next_key_seed(KeySeed { message })? {
            let Some(at) = at else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let field = &message.fields[at];
            let written = self.out.len();
            map.next_value_seed(FieldSeed {
                tables: self.tables,
                field,
                out: &mut *self.out,
                depth: self.depth,
            })?;
            if let Some(oneof) = field.oneof
                && self.out.len() > written
                && oneof < 64
            {
                let bit = 1_u64 << oneof;
                if oneofs & bit != 0 {
                    return Err(A::Error::custom(format!(
                        "multiple fields provided for a oneof of {}",
                        message.name
                    )));
                }
                oneofs |= bit;
            }
        }
        Ok(())
    }
}

/// A field's JSON or proto name, as the index of the field (`None`: not a field).
struct KeySeed<'t> {
    message: &'t Message,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a field name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self.message.names.get(name).copied())
    }
}

/// One field's value: `null` leaves it out (but for a `Value` or a `NullValue`).
struct FieldSeed<'t, 'o> {
    tables: &'t Tables,
    field: &'t Field,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for FieldSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a value of {}", self.field.json_name)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        if self.field.shape != Shape::Single {
            return Ok(());
        }
        match self.field.kind {
            Kind::Message(m) if self.tables.messages[m].special == Some(Special::Value) => {
                prefixed(self.out, self.field.number, |out| {
                    Owned::Varint(0).write(out, 1);
                    Ok(())
                })
            }
            Kind::Enum(e) if self.tables.enums[e].null_value && self.field.presence => {
                Owned::Varint(0).write(self.out, self.field.number);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let Self {
            tables,
            field,
            out,
            depth,
        } = self;
        match field.shape {
            Shape::Single => match field.kind {
                Kind::Message(index) => NestedSeed {
                    tables,
                    index,
                    number: field.number,
                    out,
                    depth,
                }
                .deserialize(deserializer),
                kind => {
                    if let Some(scalar) = (ScalarSeed { tables, kind }).deserialize(deserializer)?
                        && (field.presence || !scalar.is_default())
                    {
                        scalar.write(out, field.number);
                    }
                    Ok(())
                }
            },
            Shape::Repeated { packed } => deserializer.deserialize_seq(ListVisitor {
                tables,
                field,
                packed,
                out,
                depth,
            }),
            Shape::Map { key, value } => deserializer.deserialize_map(MapVisitor {
                tables,
                field,
                key,
                value,
                out,
                depth,
            }),
        }
    }
}

struct ListVisitor<'t, 'o> {
    tables: &'t Tables,
    field: &'t Field,
    packed: bool,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> Visitor<'de> for ListVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list for {}", self.field.json_name)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (tables, field) = (self.tables, self.field);
        if let Kind::Message(index) = field.kind {
            while seq
                .next_element_seed(NestedSeed {
                    tables,
                    index,
                    number: field.number,
                    out: &mut *self.out,
                    depth: self.depth,
                })?
                .is_some()
            {}
            return Ok(());
        }
        let kind = field.kind;
        let mut scalars = Vec::new();
        while let Some(scalar) = seq.next_element_seed(ScalarSeed { tables, kind })? {
            // An enum name the revision does not know is left out of the list.
            scalars.extend(scalar);
        }
        if self.packed && !scalars.is_empty() {
            prefixed(self.out, field.number, |out| {
                for scalar in &scalars {
                    scalar.write_bare(out);
                }
                Ok::<(), A::Error>(())
            })?;
        } else {
            for scalar in &scalars {
                scalar.write(self.out, field.number);
            }
        }
        Ok(())
    }
}

struct MapVisitor<'t, 'o> {
    tables: &'t Tables,
    field: &'t Field,
    key: Kind,
    value: Kind,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> Visitor<'de> for MapVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a map for {}", self.field.json_name)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (tables, key_kind, value_kind, depth) = (self.tables, self.key, self.value, self.depth);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let start = self.out.len();
            let mut known = true;
            prefixed(self.out, self.field.number, |entry| {
                map_key(key_kind, &key)
                    .map_err(A::Error::custom)?
                    .write(entry, 1);
                if let Kind::Message(index) = value_kind {
                    return map.next_value_seed(NestedSeed {
                        tables,
                        index,
                        number: 2,
                        out: entry,
                        depth,
                    });
                }
                match map.next_value_seed(ScalarSeed {
                    tables,
                    kind: value_kind,
                })? {
                    Some(scalar) => scalar.write(entry, 2),
                    None => known = false,
                }
                Ok(())
            })?;
            if !known {
                // An enum name the revision does not know drops the entry.
                self.out.truncate(start);
            }
        }
        Ok(())
    }
}

/// A JSON scalar as the reader met it.
enum Prim<'a> {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(Cow<'a, str>),
}

impl Prim<'_> {
    fn name(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool(_) => "boolean",
            Self::I64(_) | Self::U64(_) | Self::F64(_) => "number",
            Self::Str(_) => "string",
        }
    }

    #[expect(
        clippy::cast_precision_loss,
        reason = "a JSON integer read as a double is the nearest double, as ProtoJSON reads it"
    )]
    fn number(&self) -> Option<f64> {
        match self {
            Self::I64(v) => Some(*v as f64),
            Self::U64(v) => Some(*v as f64),
            Self::F64(v) => Some(*v),
            _ => None,
        }
    }
}

/// A scalar field's value (`None`: an enum name the revision does not know).
struct ScalarSeed<'t> {
    tables: &'t Tables,
    kind: Kind,
}

impl<'de> DeserializeSeed<'de> for ScalarSeed<'_> {
    type Value = Option<Owned<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed<'_> {
    type Value = Option<Owned<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {:?} value", self.kind)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        self.tables
            .scalar_of(self.kind, Prim::Null)
            .map_err(E::custom)
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.tables
            .scalar_of(self.kind, Prim::Bool(v))
            .map_err(E::custom)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.tables
            .scalar_of(self.kind, Prim::I64(v))
            .map_err(E::custom)
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.tables
            .scalar_of(self.kind, Prim::U64(v))
            .map_err(E::custom)
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.tables
            .scalar_of(self.kind, Prim::F64(v))
            .map_err(E::custom)
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        self.tables
            .scalar_of(self.kind, Prim::Str(Cow::Borrowed(v)))
            .map_err(E::custom)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.tables
            .scalar_of(self.kind, Prim::Str(Cow::Owned(v.to_owned())))
            .map_err(E::custom)
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
        self.tables
            .scalar_of(self.kind, Prim::Str(Cow::Owned(v)))
            .map_err(E::custom)
    }
}

impl Tables {
    /// A scalar of `kind` from a JSON scalar, as `ProtoJSON` reads it: integers from numbers
    /// (a double only when whole) or decimal strings, doubles from numbers or strings (`NaN`,
    /// `Infinity`), booleans and strings only from their own JSON, bytes from standard or
    /// URL-safe base64, enums from names or numbers.
    fn scalar_of<'a>(&self, kind: Kind, prim: Prim<'a>) -> Result<Option<Owned<'a>>, String> {
        let mismatch = |what: &str| format!("invalid type: {}, expected {what}", prim.name());
        Ok(Some(match kind {
            Kind::Double => Owned::F64(match &prim {
                Prim::Str(s) => float_text::<f64>(s)?,
                other => other.number().ok_or_else(|| mismatch("a double"))?,
            }),
            Kind::Float => Owned::F32(match &prim {
                Prim::Str(s) => float_text::<f32>(s)?,
                other => narrowed(other.number().ok_or_else(|| mismatch("a float"))?)?,
            }),
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                let v: i32 = integer(&prim).ok_or_else(|| mismatch("a 32-bit integer"))??;
                match kind {
                    Kind::Sint32 => Owned::Zig32(v),
                    Kind::Sfixed32 => Owned::Fixed32(u32::from_le_bytes(v.to_le_bytes())),
                    _ => Owned::Varint(u64::from_le_bytes(i64::from(v).to_le_bytes())),
                }
            }
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                let v: i64 = integer(&prim).ok_or_else(|| mismatch("a 64-bit integer"))??;
                match kind {
                    Kind::Sint64 => Owned::Zig64(v),
                    Kind::Sfixed64 => Owned::Fixed64(u64::from_le_bytes(v.to_le_bytes())),
                    _ => Owned::Varint(u64::from_le_bytes(v.to_le_bytes())),
                }
            }
            Kind::Uint32 | Kind::Fixed32 => {
                let v: u32 =
                    integer(&prim).ok_or_else(|| mismatch("a 32-bit unsigned integer"))??;
                if kind == Kind::Fixed32 {
                    Owned::Fixed32(v)
                } else {
                    Owned::Varint(u64::from(v))
                }
            }
            Kind::Uint64 | Kind::Fixed64 => {
                let v: u64 =
                    integer(&prim).ok_or_else(|| mismatch("a 64-bit unsigned integer"))??;
                if kind == Kind::Fixed64 {
                    Owned::Fixed64(v)
                } else {
                    Owned::Varint(v)
                }
            }
            Kind::Bool => match prim {
                Prim::Bool(b) => Owned::Varint(u64::from(b)),
                _ => return Err(mismatch("a boolean")),
            },
            Kind::String => match prim {
                Prim::Str(Cow::Borrowed(s)) => Owned::Bytes(Cow::Borrowed(s.as_bytes())),
                Prim::Str(Cow::Owned(s)) => Owned::Bytes(Cow::Owned(s.into_bytes())),
                _ => return Err(mismatch("a string")),
            },
            Kind::Bytes => match &prim {
                Prim::Str(s) => Owned::Bytes(Cow::Owned(bytes_of(s)?)),
                _ => return Err(mismatch("a base64 string")),
            },
            Kind::Enum(e) => {
                let table = &self.enums[e];
                let number = match &prim {
                    Prim::Null if table.null_value => 0,
                    Prim::Str(name) => match table.names.get(name.as_ref()) {
                        Some(n) => *n,
                        None => return Ok(None),
                    },
                    Prim::I64(n) => i32::try_from(*n).map_err(|e| e.to_string())?,
                    Prim::U64(n) => i32::try_from(*n).map_err(|e| e.to_string())?,
                    _ => return Err(mismatch("a string or integer")),
                };
                Owned::Varint(u64::from_le_bytes(i64::from(number).to_le_bytes()))
            }
            Kind::Message(_) => return Err("a message is no scalar".to_owned()),
        }))
    }
}

/// A float or double from its text: a number, `NaN`, `Infinity` or `-Infinity`.
fn float_text<T: std::str::FromStr + From<f32>>(text: &str) -> Result<T, String>
where
    T::Err: fmt::Display,
{
    match text.parse::<T>() {
        Ok(v) => Ok(v),
        Err(_) if text == "Infinity" => Ok(T::from(f32::INFINITY)),
        Err(_) if text == "-Infinity" => Ok(T::from(f32::NEG_INFINITY)),
        Err(_) if text == "NaN" => Ok(T::from(f32::NAN)),
        Err(e) => Err(e.to_string()),
    }
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "a double within the float range, narrowed as ProtoJSON narrows it"
)]
fn narrowed(v: f64) -> Result<f32, String> {
    if v < f64::from(f32::MIN) || v > f64::from(f32::MAX) {
        Err("float value out of range".to_owned())
    } else {
        Ok(v as f32)
    }
}

/// An integer field's value from a JSON integer, a whole double or a decimal string (`None`:
/// not a number or a string).
fn integer<T>(prim: &Prim<'_>) -> Option<Result<T, String>>
where
    T: std::str::FromStr + TryFrom<i128>,
{
    let wide = match prim {
        Prim::Str(s) => {
            return Some(
                s.parse::<T>()
                    .map_err(|_| format!("invalid integer: {s:?}")),
            );
        }
        Prim::I64(v) => Some(i128::from(*v)),
        Prim::U64(v) => Some(i128::from(*v)),
        Prim::F64(v) => integral(*v),
        Prim::Null | Prim::Bool(_) => return None,
    };
    Some(
        wide.and_then(|w| T::try_from(w).ok())
            .ok_or_else(|| "integer out of range or not whole".to_owned()),
    )
}

struct TimestampVisitor<'o> {
    out: &'o mut Vec<u8>,
}

impl Visitor<'_> for TimestampVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a rfc3339 timestamp string")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<(), E> {
        strict_rfc3339(text).map_err(E::custom)?;
        let timestamp: prost_types::Timestamp = text.parse().map_err(E::custom)?;
        check_timestamp(&timestamp).map_err(E::custom)?;
        if timestamp.seconds != 0 {
            Owned::Varint(u64::from_le_bytes(timestamp.seconds.to_le_bytes())).write(self.out, 1);
        }
        if timestamp.nanos != 0 {
            Owned::Varint(u64::from_le_bytes(i64::from(timestamp.nanos).to_le_bytes()))
                .write(self.out, 2);
        }
        Ok(())
    }
}

/// A `google.protobuf.Value` field `number`.
struct ValueSeed<'t, 'o> {
    tables: &'t Tables,
    number: u32,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let (tables, depth) = (self.tables, self.depth + 1);
        too_deep(depth)?;
        prefixed(self.out, self.number, |out| {
            deserializer.deserialize_any(ValueVisitor { tables, out, depth })
        })
    }
}

/// The fields of a `google.protobuf.Value`: its kind is the JSON's.
struct ValueVisitor<'t, 'o> {
    tables: &'t Tables,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> Visitor<'de> for ValueVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a value")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Owned::Varint(0).write(self.out, 1);
        Ok(())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        Owned::Varint(u64::from(v)).write(self.out, 4);
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.visit_f64(Prim::I64(v).number().unwrap_or_default())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.visit_f64(Prim::U64(v).number().unwrap_or_default())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        Owned::F64(v).write(self.out, 2);
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        Owned::Bytes(Cow::Borrowed(v.as_bytes())).write(self.out, 3);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let (tables, depth) = (self.tables, self.depth);
        prefixed(self.out, 6, |out| list_values(tables, seq, out, depth))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let (tables, depth) = (self.tables, self.depth);
        prefixed(self.out, 5, |out| struct_fields(tables, map, out, depth))
    }
}

/// The fields of a `google.protobuf.ListValue`.
fn list_values<'de, A: SeqAccess<'de>>(
    tables: &Tables,
    mut seq: A,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), A::Error> {
    while seq
        .next_element_seed(ValueSeed {
            tables,
            number: 1,
            out: &mut *out,
            depth,
        })?
        .is_some()
    {}
    Ok(())
}

/// The fields of a `google.protobuf.Struct`.
fn struct_fields<'de, A: MapAccess<'de>>(
    tables: &Tables,
    mut map: A,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<Cow<'de, str>>()? {
        prefixed(out, 1, |entry| {
            Owned::Bytes(Cow::Borrowed(key.as_bytes())).write(entry, 1);
            map.next_value_seed(ValueSeed {
                tables,
                number: 2,
                out: entry,
                depth,
            })
        })?;
    }
    Ok(())
}

struct StructVisitor<'t, 'o> {
    tables: &'t Tables,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> Visitor<'de> for StructVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a map for google.protobuf.Struct")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        struct_fields(self.tables, map, self.out, self.depth)
    }
}

struct ListValueVisitor<'t, 'o> {
    tables: &'t Tables,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> Visitor<'de> for ListValueVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list for google.protobuf.ListValue")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        list_values(self.tables, seq, self.out, self.depth)
    }
}

struct EmptyVisitor;

impl<'de> Visitor<'de> for EmptyVisitor {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an empty map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(A::Error::custom("unexpected value in map"));
        }
        Ok(())
    }
}
