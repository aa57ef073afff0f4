//! A revision's gRPC codec (its protobuf <-> IR mapping) on arbitrary bytes: as the request and
//! the response message of every method, as a stream message, and as a status's details.
//! Checked: nothing panics; whatever decodes is written back as a message that decodes, and
//! writing that again gives the same bytes (the mapping settles after one round).

use bridge_app::codec::{GrpcCodec, GrpcStatus};
use bridge_ir::{Method, Revision};

fn codec(revision: Revision) -> &'static dyn GrpcCodec {
    match revision {
        Revision::V1_0 => &bridge_v10::V10Grpc,
        Revision::V0_3 => &bridge_v03::V03Grpc,
    }
}

pub fn decode_everything(revision: Revision, data: &[u8]) {
    let codec = codec(revision);
    for method in Method::ALL {
        if codec.rpc_of(method).is_none() {
            continue;
        }
        if let Ok(call) = codec.decode_request(method, data) {
            let once = codec.encode_request(call).value;
            let again = codec
                .decode_request(method, &once)
                .expect("a written request reads back");
            assert_eq!(codec.encode_request(again).value, once, "{method:?}");
        }
        if let Ok(reply) = codec.decode_response(method, data)
            && let Ok(once) = codec.encode_response(method, reply)
        {
            let again = codec
                .decode_response(method, &once.value)
                .expect("a written response reads back");
            let twice = codec
                .encode_response(method, again)
                .expect("a response read back writes again");
            assert_eq!(twice.value, once.value, "{method:?}");
        }
    }
    if let Ok(event) = codec.decode_event(data) {
        let once = codec.encode_event(event).value;
        let again = codec.decode_event(&once).expect("a written event reads back");
        assert_eq!(codec.encode_event(again).value, once);
    }
    for code in [0, 2, 5, 13] {
        let _ = codec.decode_error(&GrpcStatus {
            code,
            message: String::from_utf8_lossy(data).into_owned(),
            details: Some(data.to_vec()),
        });
    }
}
