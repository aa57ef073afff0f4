#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "tests unwrap what they just built and fail loudly"
)]

use std::collections::HashMap;

use proptest::prelude::*;
use prost::Message as _;
use prost_reflect::{
    DeserializeOptions, DynamicMessage, FieldDescriptor, Kind as K, MapKey, SerializeOptions,
    Value as V,
};

use super::*;

/// A small deterministic generator, seeded by proptest.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

fn pools() -> Vec<DescriptorPool> {
    [bridge_v03::grpc::DESCRIPTORS, bridge_v10::grpc::DESCRIPTORS]
        .into_iter()
        .map(|d| DescriptorPool::decode(d).unwrap())
        .collect()
}

/// Every A2A message of both revisions (not the Google ones, not map entries).
fn a2a_messages() -> Vec<(std::sync::Arc<Tables>, MessageDescriptor)> {
    pools()
        .into_iter()
        .flat_map(|pool| {
            let tables = std::sync::Arc::new(Tables::new(&pool));
            pool.all_messages()
                .filter(|m| !m.full_name().starts_with("google.") && !m.is_map_entry())
                .map(|m| (std::sync::Arc::clone(&tables), m))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn text(rng: &mut Rng) -> String {
    let pieces = [
        "a", "Zq", "é", "😀", "\"", "\\", "\n", "\u{7f}", " ", "0", "tasks/1",
    ];
    (0..rng.below(4)).map(|_| rng.pick(&pieces)).collect()
}

fn json(rng: &mut Rng, depth: usize) -> serde_json::Value {
    let choice = if depth > 2 {
        rng.below(4)
    } else {
        rng.below(6)
    };
    match choice {
        0 => serde_json::Value::Null,
        1 => serde_json::Value::Bool(rng.below(2) == 0),
        2 => serde_json::json!(rng.pick(&[0.0, 1.0, -2.5, 1e21, 42.0, 0.1])),
        3 => serde_json::Value::String(text(rng)),
        4 => (0..rng.below(3)).map(|_| json(rng, depth + 1)).collect(),
        _ => serde_json::Value::Object(
            (0..rng.below(3))
                .map(|_| (text(rng), json(rng, depth + 1)))
                .collect(),
        ),
    }
}

fn scalar(rng: &mut Rng, kind: &K, depth: usize) -> V {
    match kind {
        K::Double => V::F64(rng.pick(&[0.0, 1.5, -2.25, 1e300, 3.0])),
        K::Float => V::F32(rng.pick(&[0.0, 1.5, -2.25, 3.0e30])),
        K::Int32 | K::Sint32 | K::Sfixed32 => {
            V::I32(rng.pick(&[0, 1, -1, i32::MAX, i32::MIN, 300]))
        }
        K::Int64 | K::Sint64 | K::Sfixed64 => {
            V::I64(rng.pick(&[0, 1, -1, i64::MAX, i64::MIN, 1 << 40]))
        }
        K::Uint32 | K::Fixed32 => V::U32(rng.pick(&[0, 1, u32::MAX, 70_000])),
        K::Uint64 | K::Fixed64 => V::U64(rng.pick(&[0, 1, u64::MAX, 1 << 50])),
        K::Bool => V::Bool(rng.below(2) == 0),
        K::String => V::String(text(rng)),
        K::Bytes => V::Bytes(
            (0..rng.below(6))
                .map(|_| u8::try_from(rng.below(256)).unwrap())
                .collect::<Vec<u8>>()
                .into(),
        ),
        K::Enum(e) => {
            let numbers: Vec<i32> = e.values().map(|v| v.number()).collect();
            if rng.below(8) == 0 {
                V::EnumNumber(77)
            } else {
                V::EnumNumber(rng.pick(&numbers))
            }
        }
        K::Message(m) => V::Message(message(rng, m, depth + 1)),
    }
}

fn map_key(rng: &mut Rng, kind: &K) -> MapKey {
    match kind {
        K::Bool => MapKey::Bool(rng.below(2) == 0),
        K::Int32 | K::Sint32 | K::Sfixed32 => MapKey::I32(rng.pick(&[0, -3, 9])),
        K::Int64 | K::Sint64 | K::Sfixed64 => MapKey::I64(rng.pick(&[0, -3, 9])),
        K::Uint32 | K::Fixed32 => MapKey::U32(rng.pick(&[0, 3, 9])),
        K::Uint64 | K::Fixed64 => MapKey::U64(rng.pick(&[0, 3, 9])),
        _ => MapKey::String(text(rng)),
    }
}

fn field_value(rng: &mut Rng, field: &FieldDescriptor, depth: usize) -> V {
    if field.is_map() {
        let K::Message(entry) = field.kind() else {
            panic!("a map field's kind is its entry")
        };
        let key = entry.map_entry_key_field().kind();
        let value = entry.map_entry_value_field().kind();
        V::Map(
            (0..rng.below(3))
                .map(|_| (map_key(rng, &key), scalar(rng, &value, depth)))
                .collect::<HashMap<_, _>>(),
        )
    } else if field.is_list() {
        V::List(
            (0..rng.below(3))
                .map(|_| scalar(rng, &field.kind(), depth))
                .collect(),
        )
    } else {
        scalar(rng, &field.kind(), depth)
    }
}

fn message(rng: &mut Rng, desc: &MessageDescriptor, depth: usize) -> DynamicMessage {
    let mut message = DynamicMessage::new(desc.clone());
    match desc.full_name() {
        "google.protobuf.Timestamp" => {
            message.set_field_by_name(
                "seconds",
                V::I64(rng.pick(&[0, 1_700_000_000, -62_135_596_800, 253_402_300_799])),
            );
            message.set_field_by_name(
                "nanos",
                V::I32(rng.pick(&[0, 5_000_000, 123_000, 7, 999_999_999])),
            );
        }
        "google.protobuf.Struct" | "google.protobuf.Value" | "google.protobuf.ListValue" => {
            let value = match desc.full_name() {
                "google.protobuf.Struct" => serde_json::Value::Object(
                    (0..rng.below(3))
                        .map(|_| (text(rng), json(rng, depth)))
                        .collect(),
                ),
                "google.protobuf.ListValue" => {
                    (0..rng.below(3)).map(|_| json(rng, depth)).collect()
                }
                _ => json(rng, depth),
            };
            message = DynamicMessage::deserialize(desc.clone(), value).unwrap();
        }
        _ => {
            for oneof in desc.oneofs() {
                let members: Vec<_> = oneof.fields().collect();
                if rng.below(3) > 0 && depth < 4 {
                    let field = &members[rng.below(members.len())];
                    message.set_field(field, field_value(rng, field, depth));
                }
            }
            for field in desc.fields() {
                let nested = matches!(field.kind(), K::Message(_));
                if field.containing_oneof().is_some() || rng.below(2) == 0 || (nested && depth >= 4)
                {
                    continue;
                }
                message.set_field(&field, field_value(rng, &field, depth));
            }
        }
    }
    message
}

fn oracle_json(message: &DynamicMessage) -> Result<serde_json::Value, String> {
    message
        .serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new())
        .map_err(|e| e.to_string())
}

fn oracle_read(desc: &MessageDescriptor, json: &serde_json::Value) -> Result<Vec<u8>, String> {
    DynamicMessage::deserialize_with_options(
        desc.clone(),
        json.clone(),
        &DeserializeOptions::new().deny_unknown_fields(false),
    )
    .map(|m| m.encode_to_vec())
    .map_err(|e| e.to_string())
}

/// The JSON `prost_reflect` writes of the encoded `desc`.
fn oracle_of_bytes(desc: &MessageDescriptor, bytes: &[u8]) -> Result<serde_json::Value, String> {
    oracle_json(&DynamicMessage::decode(desc.clone(), bytes).map_err(|e| e.to_string())?)
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A respelling of canonical JSON that `ProtoJSON` readers also take (or refuse alike):
/// proto field names, numbers as strings, nulls, unknown names and enum names, extra keys.
fn respelled(rng: &mut Rng, json: &serde_json::Value) -> serde_json::Value {
    match json {
        serde_json::Value::Object(fields) => {
            let mut out: serde_json::Map<String, serde_json::Value> = fields
                .iter()
                .map(|(k, v)| {
                    let key = if rng.below(3) == 0 {
                        snake(k)
                    } else {
                        k.clone()
                    };
                    let value = match rng.below(10) {
                        0 => serde_json::Value::Null,
                        _ => respelled(rng, v),
                    };
                    (key, value)
                })
                .collect();
            if rng.below(4) == 0 {
                out.insert("notAField".to_owned(), serde_json::json!({"x": [1]}));
            }
            serde_json::Value::Object(out)
        }
        serde_json::Value::Array(items) => items.iter().map(|v| respelled(rng, v)).collect(),
        serde_json::Value::Number(n) if rng.below(3) == 0 => {
            serde_json::Value::String(n.to_string())
        }
        serde_json::Value::String(s) if rng.below(6) == 0 => {
            let _ = s;
            serde_json::Value::String("NOT_A_NAME".to_owned())
        }
        serde_json::Value::String(s) if rng.below(6) == 0 => serde_json::json!(s.len()),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Protobuf to JSON: what `prost_reflect` writes, for every A2A message of both revisions.
    #[test]
    fn messages_read_as_prost_reflect_writes_them(seed in 1_u64..) {
        let mut rng = Rng(seed);
        for (tables, desc) in a2a_messages() {
            let message = message(&mut rng, &desc, 0);
            let bytes = message.encode_to_vec();
            let id = tables.message(&desc).unwrap();
            prop_assert_eq!(tables.to_json(id, &bytes), oracle_json(&message), "{}", desc.full_name());
        }
    }

    /// JSON to protobuf, canonical JSON: the message it came from.
    #[test]
    fn canonical_json_writes_the_message_it_came_from(seed in 1_u64..) {
        let mut rng = Rng(seed);
        for (tables, desc) in a2a_messages() {
            let json = oracle_json(&message(&mut rng, &desc, 0)).unwrap();
            let id = tables.message(&desc).unwrap();
            let bytes = tables.from_json(id, &json).unwrap();
            let text = serde_json::to_vec(&json).unwrap();
            prop_assert_eq!(&tables.from_json_text(id, &text).unwrap(), &bytes);
            prop_assert_eq!(oracle_of_bytes(&desc, &bytes), Ok(json), "{}", desc.full_name());
        }
    }

    /// JSON to protobuf, respelled JSON: taken or refused as `prost_reflect` takes or
    /// refuses it, and when taken, the same message.
    #[test]
    fn respelled_json_is_read_as_prost_reflect_reads_it(seed in 1_u64..) {
        let mut rng = Rng(seed);
        for (tables, desc) in a2a_messages() {
            let json = oracle_json(&message(&mut rng, &desc, 0)).unwrap();
            let json = respelled(&mut rng, &json);
            let id = tables.message(&desc).unwrap();
            let ours = tables.from_json(id, &json);
            let text = serde_json::to_vec(&json).unwrap();
            prop_assert_eq!(tables.from_json_text(id, &text).ok(), ours.clone().ok());
            let oracle = oracle_read(&desc, &json);
            prop_assert_eq!(ours.is_ok(), oracle.is_ok(), "{} {} {:?} {:?}", desc.full_name(), json, ours, oracle);
            if let (Ok(ours), Ok(oracle)) = (ours, oracle) {
                prop_assert_eq!(oracle_of_bytes(&desc, &ours), oracle_of_bytes(&desc, &oracle), "{}", json);
            }
        }
    }

    /// Damaged protobuf: never a panic; what `prost_reflect` refuses is refused, and what is
    /// taken reads as `prost_reflect` reads it. (The converse does not hold: `prost_reflect`
    /// reads a map entry under any wire type, where this refuses all but length-delimited.)
    #[test]
    fn damaged_messages_are_refused_as_prost_reflect_refuses_them(seed in 1_u64..) {
        let mut rng = Rng(seed);
        for (tables, desc) in a2a_messages() {
            let mut bytes = message(&mut rng, &desc, 0).encode_to_vec();
            if bytes.is_empty() {
                continue;
            }
            match rng.below(3) {
                0 => bytes.truncate(rng.below(bytes.len())),
                1 => {
                    let at = rng.below(bytes.len());
                    bytes[at] ^= u8::try_from(1 + rng.below(255)).unwrap();
                }
                _ => bytes.insert(rng.below(bytes.len()), u8::try_from(rng.below(256)).unwrap()),
            }
            let id = tables.message(&desc).unwrap();
            let ours = tables.to_json(id, &bytes);
            let oracle = oracle_of_bytes(&desc, &bytes);
            if let Ok(ours) = ours {
                prop_assert_eq!(Ok(ours), oracle, "{} {:?}", desc.full_name(), bytes);
            }
        }
    }
}

/// A field at its default written on the wire anyway (other encoders do) reads as absent
/// where it has no presence and as present where it has, as `prost_reflect` reads it.
#[test]
fn defaults_on_the_wire_read_as_prost_reflect_reads_them() {
    let mut checked = 0;
    for (tables, desc) in a2a_messages() {
        let id = tables.message(&desc).unwrap();
        for field in desc.fields() {
            if field.is_list() || field.is_map() || matches!(field.kind(), K::Message(_)) {
                continue;
            }
            let mut bytes = Vec::new();
            let wire = match field.kind() {
                K::String | K::Bytes => WIRE_LEN,
                K::Double | K::Fixed64 | K::Sfixed64 => WIRE_FIXED64,
                K::Float | K::Fixed32 | K::Sfixed32 => WIRE_FIXED32,
                _ => WIRE_VARINT,
            };
            write_tag(&mut bytes, field.number(), wire);
            bytes.extend_from_slice(match wire {
                WIRE_FIXED64 => &[0; 8],
                WIRE_FIXED32 => &[0; 4],
                _ => &[0],
            });
            let ours = tables.to_json(id, &bytes);
            assert_eq!(
                ours,
                oracle_of_bytes(&desc, &bytes),
                "{}",
                field.full_name()
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} fields");
}

/// Of a oneof written twice, the member written last holds.
#[test]
fn the_last_member_of_a_oneof_holds() {
    for (tables, desc) in a2a_messages() {
        let id = tables.message(&desc).unwrap();
        for oneof in desc.oneofs() {
            let members: Vec<_> = oneof.fields().collect();
            let mut rng = Rng(7);
            let mut bytes = Vec::new();
            for field in members.iter().chain(members.iter().rev()) {
                let mut one = DynamicMessage::new(desc.clone());
                one.set_field(field, field_value(&mut rng, field, 3));
                bytes.extend(one.encode_to_vec());
            }
            assert_eq!(
                tables.to_json(id, &bytes),
                oracle_of_bytes(&desc, &bytes),
                "{}",
                oneof.full_name()
            );
        }
    }
}

#[test]
fn every_message_of_both_services_has_tables() {
    let mut checked = 0;
    for (tables, desc) in a2a_messages() {
        tables.message(&desc).unwrap();
        checked += 1;
    }
    assert!(checked > 40, "{checked} messages");
}

#[test]
fn a_message_that_reaches_any_is_refused() {
    let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS).unwrap();
    let tables = Tables::new(&pool);
    let status = pool.get_message_by_name("google.rpc.Status").unwrap();
    let refused = tables.message(&status).unwrap_err();
    assert!(refused.contains("google.protobuf.Any"), "{refused}");
}

#[test]
fn nesting_deeper_than_the_limit_is_refused_not_a_stack_overflow() {
    let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS).unwrap();
    let tables = Tables::new(&pool);
    let value = pool.get_message_by_name("google.protobuf.Value").unwrap();
    let id = tables.message(&value).unwrap();
    // A list value nested 10,000 times: field 6 (list_value) of field 1 (values) ...
    let mut bytes = Vec::new();
    for _ in 0..10_000 {
        let mut outer = Vec::new();
        let mut list = Vec::new();
        write_tag(&mut list, 1, WIRE_LEN);
        write_len(&mut list, bytes.len());
        list.extend_from_slice(&bytes);
        write_tag(&mut outer, 6, WIRE_LEN);
        write_len(&mut outer, list.len());
        outer.extend_from_slice(&list);
        bytes = outer;
    }
    let refused = tables.to_json(id, &bytes).unwrap_err();
    assert!(refused.contains("nest too deeply"), "{refused}");
    let mut json = serde_json::Value::Null;
    for _ in 0..120 {
        json = serde_json::Value::Array(vec![json]);
    }
    let refused = tables.from_json(id, &json).unwrap_err();
    assert!(refused.contains("nest too deeply"), "{refused}");
}

#[test]
fn a_double_reads_the_same_from_text_as_from_a_value() {
    // Regression (fuzz target protojson): a `google.protobuf.Value` holding
    // 8.085548742923315e241 wrote another double from its JSON text than from its JSON value:
    // the text reader took the next double down.
    let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS).unwrap();
    let tables = Tables::new(&pool);
    let desc = pool.get_message_by_name("google.protobuf.Value").unwrap();
    let id = tables.message(&desc).unwrap();
    for text in [
        "8.085548742923315e241",
        "0.1",
        "2.2250738585072014e-308",
        "1e308",
    ] {
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(value.as_f64(), text.parse::<f64>().ok(), "{text}");
        assert_eq!(
            tables.from_json_text(id, text.as_bytes()),
            tables.from_json(id, &value),
            "{text}"
        );
    }
}
