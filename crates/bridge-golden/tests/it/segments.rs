//! Task, config and tenant ids toward an HTTP+JSON agent: every id-bearing path of both
//! revisions carries each id as exactly one segment, whatever bytes it holds. `.` and `..` are
//! written `%2E` and `%2E%2E`, so a server or proxy that removes dot segments (RFC 3986
//! §6.2.2.3) behind the bridge never turns a call into a request for another resource.
#![expect(
    clippy::panic,
    reason = "a failed case names its revision, id and path as it fails"
)]

use bridge_app::codec::RestCodec;
use bridge_ir::{Method, Revision};

/// Ids that are, or hold, what a path gives meaning to.
const HOSTILE: [&str; 10] = [
    ".",
    "..",
    "...",
    "a/b",
    "../x",
    "t:cancel",
    "%2E%2E",
    "t 1?x=y#z",
    "t\u{e9}",
    "t\r\nX-Injected: 1",
];

/// Every operation whose path carries an id, in each revision: the HTTP method, the template
/// (`{id}` the task, `{config}` the push config) and the body its decode needs.
fn rows(revision: Revision) -> Vec<(Method, &'static str, &'static str, &'static str)> {
    match revision {
        Revision::V0_3 => vec![
            (Method::GetTask, "GET", "/v1/tasks/{id}", ""),
            (Method::CancelTask, "POST", "/v1/tasks/{id}:cancel", ""),
            (
                Method::SubscribeToTask,
                "GET",
                "/v1/tasks/{id}:subscribe",
                "",
            ),
            (
                Method::CreatePushConfig,
                "POST",
                "/v1/tasks/{id}/pushNotificationConfigs",
                r#"{"pushNotificationConfig":{"url":"http://hook.test/x"}}"#,
            ),
            (
                Method::ListPushConfigs,
                "GET",
                "/v1/tasks/{id}/pushNotificationConfigs",
                "",
            ),
            (
                Method::GetPushConfig,
                "GET",
                "/v1/tasks/{id}/pushNotificationConfigs/{config}",
                "",
            ),
            (
                Method::DeletePushConfig,
                "DELETE",
                "/v1/tasks/{id}/pushNotificationConfigs/{config}",
                "",
            ),
        ],
        Revision::V1_0 => vec![
            (Method::GetTask, "GET", "/tasks/{id}", ""),
            (Method::CancelTask, "POST", "/tasks/{id}:cancel", ""),
            (Method::SubscribeToTask, "POST", "/tasks/{id}:subscribe", ""),
            (
                Method::CreatePushConfig,
                "POST",
                "/tasks/{id}/pushNotificationConfigs",
                r#"{"url":"http://hook.test/x"}"#,
            ),
            (
                Method::ListPushConfigs,
                "GET",
                "/tasks/{id}/pushNotificationConfigs",
                "",
            ),
            (
                Method::GetPushConfig,
                "GET",
                "/tasks/{id}/pushNotificationConfigs/{config}",
                "",
            ),
            (
                Method::DeletePushConfig,
                "DELETE",
                "/tasks/{id}/pushNotificationConfigs/{config}",
                "",
            ),
        ],
    }
}

fn rest(revision: Revision) -> &'static dyn RestCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03Rest,
        Revision::V1_0 => &bridge_v10::V10Rest,
    }
}

/// `path` has no empty, `.` or `..` segment (the leading `/` aside).
fn segments_are_plain(path: &str) -> bool {
    path.split('/')
        .skip(1)
        .all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

/// A caller's id, percent-encoded into the path the caller sends.
fn encoded(id: &str) -> String {
    bridge_wire::rest::path_segment(id)
}

#[test]
fn every_id_bearing_path_of_both_revisions_carries_each_id_as_exactly_one_segment() {
    for from in Revision::ALL {
        for to in Revision::ALL {
            for (method, verb, template, body) in rows(from) {
                for id in HOSTILE {
                    let inbound = template
                        .replace("{id}", &encoded(id))
                        .replace("{config}", &encoded(id));
                    let verb = http::Method::from_bytes(verb.as_bytes()).unwrap();
                    let route = rest(from).route(&verb, &inbound).unwrap_or_else(|miss| {
                        panic!("{from} {verb} {inbound}: {miss:?}");
                    });
                    assert_eq!(route.method, method, "{from} {inbound}");
                    let call = rest(from)
                        .decode_request(&route, None, body.as_bytes())
                        .unwrap_or_else(|e| panic!("{from} {inbound}: {e}"));
                    let outbound = rest(to)
                        .encode_request(call.clone())
                        .unwrap_or_else(|e| panic!("{from} -> {to} {inbound}: {e}"));
                    assert!(
                        segments_are_plain(&outbound.path),
                        "{from} -> {to}: id {id:?} written as {}",
                        outbound.path
                    );
                    // The agent reads back exactly the ids the caller named.
                    let back = rest(to)
                        .route(&outbound.method, &outbound.path)
                        .unwrap_or_else(|miss| panic!("{to} {}: {miss:?}", outbound.path));
                    assert_eq!(back.method, method, "{to} {}", outbound.path);
                    let read = rest(to)
                        .decode_request(&back, outbound.query.as_deref(), &outbound.body.value)
                        .unwrap_or_else(|e| panic!("{to} {}: {e}", outbound.path));
                    assert_eq!(read, call, "{from} -> {to}: {}", outbound.path);
                }
            }
        }
    }
}

#[test]
fn dot_segments_are_written_with_their_dots_encoded() {
    for (id, written) in [(".", "%2E"), ("..", "%2E%2E")] {
        for revision in Revision::ALL {
            let prefix = if revision == Revision::V0_3 {
                "/v1"
            } else {
                ""
            };
            let route = rest(revision)
                .route(&http::Method::GET, &format!("{prefix}/tasks/{written}"))
                .unwrap();
            let call = rest(revision).decode_request(&route, None, b"").unwrap();
            let bridge_ir::Call::GetTask(params) = &call else {
                panic!("{call:?}")
            };
            assert_eq!(params.id, id);
            let request = rest(revision).encode_request(call).unwrap();
            assert_eq!(request.path, format!("{prefix}/tasks/{written}"));
        }
    }
    // A 1.0 tenant is a segment too.
    let route = bridge_v10::V10Rest
        .route(&http::Method::GET, "/%2E%2E/tasks/t-1")
        .unwrap();
    let call = bridge_v10::V10Rest
        .decode_request(&route, None, b"")
        .unwrap();
    let request = bridge_v10::V10Rest.encode_request(call).unwrap();
    assert_eq!(request.path, "/%2E%2E/tasks/t-1");
}

#[test]
fn the_table_above_names_every_operation_whose_path_carries_an_id() {
    for revision in Revision::ALL {
        let named: Vec<Method> = rows(revision).iter().map(|row| row.0).collect();
        for method in Method::ALL {
            let carries_id = !matches!(
                method,
                Method::SendMessage
                    | Method::SendStreamingMessage
                    | Method::ListTasks
                    | Method::GetExtendedCard
            );
            assert_eq!(named.contains(&method), carries_id, "{revision} {method:?}");
        }
    }
}
