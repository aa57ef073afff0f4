//! The gRPC transcoder (`bridge_grpc::Service`) on arbitrary bytes: as the request and the
//! response message of every method, and as the path and body of an HTTP+JSON request. Checked:
//! nothing panics; a request message that decodes is laid out as an HTTP+JSON request the
//! revision's REST codec routes to the same method, and a response message that decodes is
//! written as JSON that reads back into the same message.

use bridge_app::codec::RestCodec;
use bridge_grpc::{ErrorForm, Service};
use bridge_ir::Revision;

fn service(revision: Revision) -> Option<(Service, &'static dyn RestCodec)> {
    match revision {
        Revision::V1_0 => Service::new(
            revision,
            bridge_v10::grpc::SERVICE,
            bridge_v10::grpc::DESCRIPTORS,
            ErrorForm {
                status_of: bridge_v10::grpc::status_of,
                message_of: |_, m| m.to_owned(),
                details_domain: Some(bridge_v10::grpc::ERROR_DOMAIN),
            },
        )
        .ok()
        .map(|s| (s, &bridge_v10::V10Rest as &dyn RestCodec)),
        Revision::V0_3 => Service::new(
            revision,
            bridge_v03::grpc::SERVICE,
            bridge_v03::grpc::DESCRIPTORS,
            ErrorForm {
                status_of: bridge_v03::grpc::status_of,
                message_of: bridge_v03::grpc::message_of,
                details_domain: None,
            },
        )
        .ok()
        .map(|s| (s, &bridge_v03::V03Rest as &dyn RestCodec)),
    }
}

pub fn decode_everything(revision: Revision, data: &[u8]) {
    let Some((service, codec)) = service(revision) else {
        panic!("the descriptors do not hold the service");
    };
    for method in service.methods() {
        if let Ok(call) = service.to_rest(&method, data) {
            if let Ok(route) = codec.route(&call.verb, &call.path) {
                let _ = codec.decode_request(&route, call.query.as_deref(), &call.body);
            }
        }
        if let Ok(json) = service.response_json(&method, data) {
            let again = service.response(&method, &json).expect("written JSON reads back");
            assert_eq!(
                service.response_json(&method, &again).expect("the message decodes"),
                json,
                "{}",
                method.name()
            );
        }
        let _ = service.response(&method, data);
    }
    if let Ok(path) = std::str::from_utf8(data) {
        for verb in [http::Method::GET, http::Method::POST, http::Method::DELETE] {
            let _ = service.from_rest(&verb, path, Some(path), data);
        }
    }
}
