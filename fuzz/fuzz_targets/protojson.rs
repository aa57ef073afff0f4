//! The protobuf <-> `ProtoJSON` transcoder (`bridge_grpc::protojson::Tables`) of both
//! revisions' gRPC services, in both directions, on arbitrary input.
//!
//! The input is read as every message of both descriptor sets that the tables carry, once as
//! the protobuf wire form (`to_json`) and once as `ProtoJSON` text (`from_json_text`).
//!
//! Checked: nothing panics or overflows the stack; protobuf that reads as JSON reads as
//! `prost_reflect` reads it (the mapping the tables are proved against), and that JSON written
//! back (as a value with `from_json`, and as text with `from_json_text`, the same bytes both
//! ways) reads as the same JSON; JSON text that is written as protobuf reads back as JSON that
//! writes the same protobuf again (the first translation reaches a fixed point), and when
//! `prost_reflect` takes the same JSON it writes a message that reads as the same JSON.
#![no_main]

use std::sync::LazyLock;

use bridge_grpc::protojson::{MessageId, Tables};
use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, SerializeOptions,
};
use serde_json::Value;

struct Revision {
    tables: Tables,
    messages: Vec<(MessageId, MessageDescriptor)>,
}

static REVISIONS: LazyLock<Vec<Revision>> = LazyLock::new(|| {
    [bridge_v03::grpc::DESCRIPTORS, bridge_v10::grpc::DESCRIPTORS]
        .into_iter()
        .map(|descriptors| {
            let pool = DescriptorPool::decode(descriptors).expect("the descriptors decode");
            let tables = Tables::new(&pool);
            // Every message the tables carry (those reaching `Any`, `Duration` or `FieldMask`
            // are refused when looked up), map entries included: they are messages too.
            let messages = pool
                .all_messages()
                .filter_map(|m| tables.message(&m).ok().map(|id| (id, m)))
                .collect::<Vec<_>>();
            assert!(!messages.is_empty(), "the tables carry no message");
            Revision { tables, messages }
        })
        .collect()
});

/// The JSON `prost_reflect` writes of `message`.
fn oracle_json(message: &DynamicMessage) -> Result<Value, String> {
    message
        .serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new())
        .map_err(|e| e.to_string())
}

fn from_protobuf(tables: &Tables, id: MessageId, desc: &MessageDescriptor, data: &[u8]) {
    let Ok(json) = tables.to_json(id, data) else {
        return;
    };
    let name = tables.name(id);
    let oracle = DynamicMessage::decode(desc.clone(), data)
        .map_err(|e| e.to_string())
        .and_then(|m| oracle_json(&m));
    assert_eq!(
        Ok(&json),
        oracle.as_ref(),
        "{name}: read otherwise than prost_reflect reads it"
    );
    let bytes = tables
        .from_json(id, &json)
        .unwrap_or_else(|e| panic!("{name}: the JSON read does not write ({e}): {json}"));
    let text = serde_json::to_vec(&json).expect("a value writes");
    assert_eq!(
        tables.from_json_text(id, &text).as_ref(),
        Ok(&bytes),
        "{name}: the JSON as text writes otherwise than as a value: {json}"
    );
    assert_eq!(
        tables.to_json(id, &bytes).as_ref(),
        Ok(&json),
        "{name}: the protobuf written reads otherwise"
    );
}

fn from_json(tables: &Tables, id: MessageId, desc: &MessageDescriptor, data: &[u8]) {
    let Ok(bytes) = tables.from_json_text(id, data) else {
        return;
    };
    let name = tables.name(id);
    let json = tables
        .to_json(id, &bytes)
        .unwrap_or_else(|e| panic!("{name}: the protobuf written does not read ({e})"));
    let again = tables
        .from_json(id, &json)
        .unwrap_or_else(|e| panic!("{name}: the JSON read back does not write ({e}): {json}"));
    assert_eq!(
        tables.to_json(id, &again).as_ref(),
        Ok(&json),
        "{name}: the JSON read back writes otherwise"
    );
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(message) = DynamicMessage::deserialize_with_options(
        desc.clone(),
        value,
        &DeserializeOptions::new().deny_unknown_fields(false),
    ) {
        // `prost_reflect` keeps the last of duplicate keys, where the text reader writes each
        // as it comes; compare what each reads when the value alone decides.
        if let Ok(from_value) = tables.from_json(
            id,
            &serde_json::from_slice::<Value>(data).expect("parsed once"),
        ) {
            let ours = tables.to_json(id, &from_value);
            let theirs = oracle_json(&message);
            assert_eq!(
                ours.as_ref(),
                theirs.as_ref(),
                "{name}: the JSON writes otherwise than prost_reflect writes it"
            );
        }
        let _ = message.encode_to_vec();
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    for revision in REVISIONS.iter() {
        for (id, desc) in &revision.messages {
            from_protobuf(&revision.tables, *id, desc, data);
            from_json(&revision.tables, *id, desc, data);
        }
    }
});
