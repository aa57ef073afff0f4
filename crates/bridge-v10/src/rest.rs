//! The A2A 1.0 HTTP+JSON (REST) binding, inbound: the path table, requests read from the path,
//! the query string and the body, and answers with the HTTP status each error takes
//! (A2A 1.0 §11; a2a-sdk 1.3.0 `rest_routes`, `utils/errors.py`).
//!
//! # Why requests go through the JSON-RPC params
//!
//! A 1.0 REST body is the `ProtoJSON` of the operation's request message with the path fields
//! taken out (§11.3), and a GET's parameters are the same fields in the query string with their
//! JSON names. Putting the path and query fields back into one JSON object gives exactly the
//! `params` of the JSON-RPC binding, so both bindings are read by one decoder and refuse the same
//! documents with the same messages. Answers are the same documents too: a REST result is the
//! JSON-RPC `result`, a stream event's data the bare `StreamResponse`.
//!
//! # Errors
//!
//! An error is a `google.rpc.Status` in the body, `{"error": {code, status, message, details}}`,
//! where `code` is the HTTP status, `status` the gRPC status name and `details` the same
//! `ErrorInfo` the JSON-RPC `data` carries ([`STATUSES`]).

use bridge_app::codec::{
    DecodeError, EncodeError, JsonRpcCodec as _, RestCodec, RestError, RestRequest, RestRoute,
    RouteMiss,
};
use bridge_ir::{Call, ErrorCode, Method, Reply, Revision, RpcError, StreamEvent, Translated};
use bridge_wire::rest::{path_params, path_segment, percent_decode, percent_encode, proto_name};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::V10JsonRpc;
use crate::path::Losses;
use crate::wire::error::ErrorOut;

/// The 1.0 HTTP+JSON codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct V10Rest;

/// One row of the path table: the operation, the HTTP methods it takes, and its path below the
/// interface URL (and below `/{tenant}`), `{id}` and `{config}` standing for path parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestPath {
    /// The operation.
    pub method: Method,
    /// The HTTP methods, the first the one a client sends.
    pub verbs: &'static [&'static str],
    /// The path template.
    pub template: &'static str,
}

/// Every operation's path. `SubscribeToTask` takes GET (the proto's binding) and POST (the
/// specification's text); a2a-sdk 1.3.0 serves both.
pub const PATHS: [RestPath; 11] = [
    RestPath {
        method: Method::SendMessage,
        verbs: &["POST"],
        template: "/message:send",
    },
    RestPath {
        method: Method::SendStreamingMessage,
        verbs: &["POST"],
        template: "/message:stream",
    },
    RestPath {
        method: Method::GetTask,
        verbs: &["GET"],
        template: "/tasks/{id}",
    },
    RestPath {
        method: Method::ListTasks,
        verbs: &["GET"],
        template: "/tasks",
    },
    RestPath {
        method: Method::CancelTask,
        verbs: &["POST"],
        template: "/tasks/{id}:cancel",
    },
    RestPath {
        method: Method::SubscribeToTask,
        verbs: &["GET", "POST"],
        template: "/tasks/{id}:subscribe",
    },
    RestPath {
        method: Method::CreatePushConfig,
        verbs: &["POST"],
        template: "/tasks/{id}/pushNotificationConfigs",
    },
    RestPath {
        method: Method::ListPushConfigs,
        verbs: &["GET"],
        template: "/tasks/{id}/pushNotificationConfigs",
    },
    RestPath {
        method: Method::GetPushConfig,
        verbs: &["GET"],
        template: "/tasks/{id}/pushNotificationConfigs/{config}",
    },
    RestPath {
        method: Method::DeletePushConfig,
        verbs: &["DELETE"],
        template: "/tasks/{id}/pushNotificationConfigs/{config}",
    },
    RestPath {
        method: Method::GetExtendedCard,
        verbs: &["GET"],
        template: "/extendedAgentCard",
    },
];

/// The row of `method`.
#[must_use]
pub fn path_of(method: Method) -> Option<&'static RestPath> {
    PATHS.iter().find(|row| row.method == method)
}

/// How each A2A error is sent over HTTP+JSON: the HTTP status and the `google.rpc.Status` name,
/// as a2a-sdk 1.3.0 sends them (`A2A_ERROR_MAPPING`). A code A2A does not name is a 500.
pub const STATUSES: [(ErrorCode, u16, &str); 15] = [
    (ErrorCode::ParseError, 400, "INVALID_ARGUMENT"),
    (ErrorCode::InvalidRequest, 400, "INVALID_ARGUMENT"),
    (ErrorCode::MethodNotFound, 404, "NOT_FOUND"),
    (ErrorCode::InvalidParams, 400, "INVALID_ARGUMENT"),
    (ErrorCode::InternalError, 500, "INTERNAL"),
    (ErrorCode::TaskNotFound, 404, "NOT_FOUND"),
    (ErrorCode::TaskNotCancelable, 400, "FAILED_PRECONDITION"),
    (
        ErrorCode::PushNotificationNotSupported,
        400,
        "FAILED_PRECONDITION",
    ),
    (ErrorCode::UnsupportedOperation, 400, "FAILED_PRECONDITION"),
    (ErrorCode::ContentTypeNotSupported, 400, "INVALID_ARGUMENT"),
    (ErrorCode::InvalidAgentResponse, 500, "INTERNAL"),
    (
        ErrorCode::ExtendedAgentCardNotConfigured,
        400,
        "FAILED_PRECONDITION",
    ),
    (
        ErrorCode::ExtensionSupportRequired,
        400,
        "FAILED_PRECONDITION",
    ),
    (ErrorCode::VersionNotSupported, 400, "FAILED_PRECONDITION"),
    // A2A 1.1 (not released; dev-1.1): a concurrency conflict, `ABORTED`'s 409.
    (ErrorCode::TaskGenerationMismatch, 409, "ABORTED"),
];

/// The HTTP status and status name of `code`.
#[must_use]
pub fn status_of(code: ErrorCode) -> (u16, &'static str) {
    STATUSES
        .iter()
        .find(|(named, _, _)| *named == code)
        .map_or((500, "INTERNAL"), |&(_, status, name)| (status, name))
}

/// The `google.rpc.Code` name of an answer the HTTP layer gives `status` (its HTTP mapping),
/// for the statuses that layer decides; `None` leaves the error code's own.
fn code_name_of_http(status: u16) -> Option<&'static str> {
    Some(match status {
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => return None,
    })
}

/// The error code an HTTP+JSON error names: its `ErrorInfo` reason when it has one, else the
/// one code its HTTP status stands for alone (404 for an unknown task), else `InternalError`.
#[must_use]
pub fn code_of(status: u16, reason: Option<&str>) -> ErrorCode {
    if let Some(code) = reason.and_then(ErrorCode::from_reason) {
        return code;
    }
    match status {
        404 => ErrorCode::TaskNotFound,
        400 => ErrorCode::InvalidParams,
        // A2A 1.0.0's table, before 1.0.1 moved these to 400 and 500.
        409 => ErrorCode::TaskNotCancelable,
        415 => ErrorCode::ContentTypeNotSupported,
        501 => ErrorCode::UnsupportedOperation,
        502 => ErrorCode::InvalidAgentResponse,
        _ => ErrorCode::InternalError,
    }
}

/// Finds the row `path` names, without and then with a leading `/{tenant}`.
fn find(method: &http::Method, path: &str) -> Result<RestRoute, RouteMiss> {
    let mut allowed: Option<String> = None;
    let tenant_split = path
        .strip_prefix('/')
        .and_then(|p| p.find('/').map(|at| (&p[..at], &p[at..])));
    let candidates = [(None, path)]
        .into_iter()
        .chain(tenant_split.map(|(tenant, rest)| (Some(tenant), rest)));
    for (tenant, below) in candidates {
        for row in &PATHS {
            let Some((id, config)) = path_params(row.template, below) else {
                continue;
            };
            if !row.verbs.iter().any(|verb| *verb == method.as_str()) {
                allowed = Some(allow_of(row.template));
                continue;
            }
            return Ok(RestRoute {
                method: row.method,
                task_id: id.map(str::to_owned),
                config_id: config.map(str::to_owned),
                tenant: tenant.map(str::to_owned),
            });
        }
        if allowed.is_some() {
            break;
        }
    }
    Err(
        allowed.map_or(RouteMiss::NotFound, |allow| RouteMiss::MethodNotAllowed {
            allow,
        }),
    )
}

/// The `Allow` header of a template: every verb of every row with that template.
fn allow_of(template: &str) -> String {
    PATHS
        .iter()
        .filter(|row| row.template == template)
        .flat_map(|row| row.verbs.iter().copied())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The query parameters each operation reads, and how each is typed in its JSON form.
fn query_fields(method: Method) -> &'static [(&'static str, Kind)] {
    match method {
        Method::GetTask => &[("historyLength", Kind::Integer)],
        Method::ListTasks => &[
            ("contextId", Kind::Text),
            ("status", Kind::Text),
            ("pageSize", Kind::Integer),
            ("pageToken", Kind::Text),
            ("historyLength", Kind::Integer),
            ("statusTimestampAfter", Kind::Text),
            ("includeArtifacts", Kind::Boolean),
        ],
        Method::ListPushConfigs => &[("pageSize", Kind::Integer), ("pageToken", Kind::Text)],
        _ => &[],
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Integer,
    Boolean,
}

/// The query string's parameters as JSON members of `into`.
fn read_query(
    method: Method,
    query: &str,
    into: &mut Map<String, Value>,
) -> Result<(), DecodeError> {
    let fields = query_fields(method);
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if name.eq_ignore_ascii_case("a2a-version") {
            continue;
        }
        // A parameter is named by its JSON name or its proto name (`pageSize`, `page_size`).
        let Some((field, kind)) = fields
            .iter()
            .find(|(field, _)| *field == name || proto_name(field) == name)
        else {
            return Err(DecodeError::new(format!(
                "query parameter `{name}` is not one {} takes{}",
                method.label(),
                if fields.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (it takes {})",
                        fields
                            .iter()
                            .map(|(f, _)| *f)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            )));
        };
        let json = match kind {
            Kind::Text => Value::String(value.into_owned()),
            Kind::Integer => value.parse::<i64>().map(Value::from).map_err(|_| {
                DecodeError::new(format!(
                    "query parameter `{field}`: {value:?} is not an integer"
                ))
            })?,
            Kind::Boolean => match value.as_ref() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                other => {
                    return Err(DecodeError::new(format!(
                        "query parameter `{field}`: {other:?} is not true or false"
                    )));
                }
            },
        };
        if into.insert((*field).to_owned(), json).is_some() {
            return Err(DecodeError::new(format!(
                "query parameter `{field}` is given twice"
            )));
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct StatusOut {
    error: StatusBody,
}

#[derive(Serialize)]
struct StatusBody {
    code: u16,
    status: &'static str,
    message: String,
    details: Value,
}

impl RestCodec for V10Rest {
    fn revision(&self) -> Revision {
        Revision::V1_0
    }

    fn route(&self, method: &http::Method, path: &str) -> Result<RestRoute, RouteMiss> {
        find(method, path)
    }

    fn decode_request(
        &self,
        route: &RestRoute,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<Call, DecodeError> {
        let method = route.method;
        // A send's body is the JSON-RPC params as they are (`SendMessageRequest`): without a
        // tenant in the path or a query to merge, the JSON-RPC decoder reads it in one pass.
        // Anything it refuses goes the long way, whose error names what is wrong in HTTP+JSON
        // terms.
        if matches!(method, Method::SendMessage | Method::SendStreamingMessage)
            && route.tenant.is_none()
            && query.is_none()
            && body.trim_ascii_start().first() == Some(&b'{')
            && let Ok(call) = V10JsonRpc.decode_params(method, Some(body))
        {
            return Ok(call);
        }
        let mut params = match method {
            Method::GetTask
            | Method::ListTasks
            | Method::ListPushConfigs
            | Method::GetPushConfig
            | Method::DeletePushConfig
            | Method::GetExtendedCard => {
                if !body.trim_ascii().is_empty() {
                    return Err(DecodeError::new(format!(
                        "{} takes no body; its parameters go in the path and the query string",
                        method.label()
                    )));
                }
                Map::new()
            }
            _ => bridge_wire::rest::body_object(body).map_err(DecodeError::new)?,
        };
        if let Some(query) = query {
            read_query(method, query, &mut params)?;
        }
        let mut set = |name: &str, value: &Option<String>| -> Result<(), DecodeError> {
            let Some(value) = value else { return Ok(()) };
            let value = Value::String(percent_decode(value));
            // The body may name the member by its proto name (`task_id`), as `ProtoJSON`
            // allows: one member either way.
            if name == "taskId"
                && let Some(given) = params.remove("task_id")
            {
                params.entry(name).or_insert(given);
            }
            match params.get(name) {
                Some(given) if *given != value => Err(DecodeError::new(format!(
                    "`{name}` in the body ({given}) differs from the path ({value})"
                ))),
                _ => {
                    params.insert(name.to_owned(), value);
                    Ok(())
                }
            }
        };
        match method {
            Method::GetTask | Method::CancelTask | Method::SubscribeToTask => {
                set("id", &route.task_id)?;
            }
            Method::CreatePushConfig | Method::ListPushConfigs => set("taskId", &route.task_id)?,
            Method::GetPushConfig | Method::DeletePushConfig => {
                set("taskId", &route.task_id)?;
                set("id", &route.config_id)?;
            }
            _ => {}
        }
        set("tenant", &route.tenant)?;
        let bytes = serde_json::to_vec(&params).map_err(DecodeError::from)?;
        V10JsonRpc.decode_params(method, Some(&bytes))
    }

    fn encode_result(
        &self,
        method: Method,
        reply: Reply,
    ) -> Result<Translated<Vec<u8>>, EncodeError> {
        // A delete answers `google.protobuf.Empty`, `{}` (a2a-sdk 1.3.0), where the JSON-RPC
        // result is `null`.
        if method == Method::DeletePushConfig {
            return Ok(Translated {
                value: b"{}".to_vec(),
                losses: Vec::new(),
            });
        }
        V10JsonRpc.encode_result(method, reply)
    }

    fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>> {
        V10JsonRpc.encode_event(event)
    }

    fn encode_request(&self, call: Call) -> Result<RestRequest, EncodeError> {
        encode_call(call)
    }

    fn decode_result(&self, method: Method, body: &[u8]) -> Result<Reply, DecodeError> {
        // A delete answers `{}` (a2a-sdk 1.3.0) or nothing; the JSON-RPC result is `null`.
        if method == Method::DeletePushConfig && matches!(body.trim_ascii(), b"" | b"{}" | b"null")
        {
            return V10JsonRpc.decode_result(method, b"null");
        }
        V10JsonRpc.decode_result(method, body)
    }

    fn decode_event(&self, data: &[u8]) -> Result<StreamEvent, DecodeError> {
        V10JsonRpc.decode_event(data)
    }

    fn decode_error(&self, status: u16, body: &[u8]) -> Result<RpcError, DecodeError> {
        read_status(status, body)
    }

    fn encode_error(&self, error: RpcError, status: Option<u16>) -> RestError {
        let (by_code, name) = status_of(error.code);
        // A status the HTTP layer decided (a 401, a 429) names its own `google.rpc.Code`.
        let name = status.and_then(code_name_of_http).unwrap_or(name);
        let status = status.unwrap_or(by_code);
        let mut losses = Losses::default();
        let wire = serde_json::to_value(ErrorOut::from_ir(error, &mut losses)).unwrap_or_default();
        let message = wire["message"].as_str().unwrap_or_default().to_owned();
        let body = StatusOut {
            error: StatusBody {
                code: status,
                status: name,
                message,
                details: wire
                    .get("data")
                    .cloned()
                    .unwrap_or(Value::Array(Vec::new())),
            },
        };
        RestError {
            status,
            body: losses.translated(serde_json::to_vec(&body).unwrap_or_default()),
        }
    }
}

/// The path fields of `method`: the path parameter each fills (`{id}` or `{config}`) and the
/// params member it comes from.
fn path_fields(method: Method) -> &'static [(&'static str, &'static str)] {
    match method {
        Method::GetTask | Method::CancelTask | Method::SubscribeToTask => &[("{id}", "id")],
        Method::CreatePushConfig | Method::ListPushConfigs => &[("{id}", "taskId")],
        Method::GetPushConfig | Method::DeletePushConfig => {
            &[("{id}", "taskId"), ("{config}", "id")]
        }
        _ => &[],
    }
}

/// Writes a JSON value as a query value: strings as they are, numbers and booleans as text.
fn query_value(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn encode_call(call: Call) -> Result<RestRequest, EncodeError> {
    let method = call.method();
    let row = path_of(method).ok_or(EncodeError::MethodUnsupported {
        revision: Revision::V1_0,
        method,
    })?;
    let encoded = V10JsonRpc.encode_params(call)?;
    let mut params = match serde_json::from_slice::<Value>(&encoded.value) {
        Ok(Value::Object(object)) => object,
        _ => Map::new(),
    };
    let mut path = row.template.to_owned();
    for (placeholder, field) in path_fields(method) {
        let value = match params.get(*field) {
            Some(Value::String(text)) => text.clone(),
            _ => String::new(),
        };
        // A body carries the whole request message, path fields included, as a2a-sdk
        // 1.3.0's client writes it (a create's `taskId`, a cancel's `id`); a GET or DELETE
        // query leaves them out.
        if !matches!(method, Method::CreatePushConfig | Method::CancelTask) {
            params.remove(*field);
        }
        path = path.replace(placeholder, &path_segment(&value));
    }
    if let Some(Value::String(tenant)) = params.get("tenant") {
        path = format!("/{}{path}", path_segment(tenant));
    }
    // A subscription is a POST without a body, as a2a-sdk 1.3.0's client sends it.
    let verb = match method {
        Method::SubscribeToTask => "POST",
        _ => row.verbs.first().copied().unwrap_or("POST"),
    };
    let query_only = verb == "GET" || verb == "DELETE";
    if query_only || method == Method::SubscribeToTask {
        params.remove("tenant");
    }
    let (query, body) = if method == Method::SubscribeToTask && params.is_empty() {
        (None, Vec::new())
    } else if query_only {
        let query: Vec<String> = params
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(name, value)| {
                format!(
                    "{}={}",
                    percent_encode(name),
                    percent_encode(&query_value(value))
                )
            })
            .collect();
        ((!query.is_empty()).then(|| query.join("&")), Vec::new())
    } else {
        (None, serde_json::to_vec(&params).unwrap_or_default())
    };
    Ok(RestRequest {
        method: http::Method::from_bytes(verb.as_bytes()).unwrap_or(http::Method::POST),
        path,
        query,
        body: Translated {
            value: body,
            losses: encoded.losses,
        },
    })
}

/// Reads a `google.rpc.Status` error body into the JSON-RPC error the 1.0 codec reads.
fn read_status(status: u16, body: &[u8]) -> Result<RpcError, DecodeError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| DecodeError::new(format!("an HTTP {status} error body is not JSON: {e}")))?;
    let Some(error) = value.get("error").and_then(Value::as_object) else {
        return read_problem(status, &value);
    };
    let details = error
        .get("details")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    let reason = details.as_array().and_then(|entries| {
        entries.iter().find_map(|entry| {
            (entry.get("@type").and_then(Value::as_str)
                == Some(crate::wire::error::ERROR_INFO_TYPE))
            .then(|| entry.get("reason").and_then(Value::as_str))
            .flatten()
        })
    });
    let status = error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .unwrap_or(status);
    let code = code_of(status, reason);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let rpc = serde_json::json!({"code": code.code(), "message": message, "data": details});
    let bytes = serde_json::to_vec(&rpc).map_err(DecodeError::from)?;
    V10JsonRpc.decode_error(&bytes)
}

/// The members of an RFC 9457 problem that say what it is; the others are the error's data.
const PROBLEM_MEMBERS: [&str; 5] = ["type", "title", "status", "detail", "instance"];

/// An RFC 9457 problem (`application/problem+json`), A2A 1.0.0's HTTP+JSON error form and the
/// Go and Java SDKs': the error from its `type` URI (`https://a2a-protocol.org/errors/<name>`),
/// else from its status; the message its `detail`, else its `title`; its other members (such
/// as `supportedVersions`) the error's data.
fn read_problem(status: u16, value: &Value) -> Result<RpcError, DecodeError> {
    let problem = value
        .as_object()
        .filter(|o| o.contains_key("type") || o.contains_key("title"));
    let Some(problem) = problem else {
        return Err(DecodeError::new(format!(
            "an HTTP {status} answer has no `error` object and is no problem document"
        )));
    };
    let text = |name: &str| problem.get(name).and_then(Value::as_str);
    let status = problem
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .unwrap_or(status);
    let code = text("type")
        .and_then(ErrorCode::from_problem_type)
        .unwrap_or_else(|| code_of(status, None));
    let message = text("detail").or_else(|| text("title")).unwrap_or_default();
    let mut error = RpcError::new(code, message);
    let data: serde_json::Map<String, Value> = problem
        .iter()
        .filter(|(name, _)| !PROBLEM_MEMBERS.contains(&name.as_str()))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    if !data.is_empty() {
        error.data = Some(Value::Object(data));
    }
    Ok(error)
}

#[cfg(test)]
mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::panic,
        reason = "tests unwrap what they just built and fail naming what they got"
    )]

    #[test]
    fn a_status_the_http_layer_decides_names_its_own_code_in_the_body() {
        let codec = V10Rest;
        for (status, name) in [
            (401, "UNAUTHENTICATED"),
            (403, "PERMISSION_DENIED"),
            (429, "RESOURCE_EXHAUSTED"),
            (503, "UNAVAILABLE"),
        ] {
            let error = RpcError::new(ErrorCode::InternalError, "refused");
            let written = codec.encode_error(error, Some(status));
            assert_eq!(written.status, status);
            let body: Value = serde_json::from_slice(&written.body.value).unwrap();
            assert_eq!(body["error"]["status"], name, "{body}");
            assert_eq!(body["error"]["code"], status, "{body}");
        }
        // Any other status keeps the error code's name.
        let written = codec.encode_error(RpcError::new(ErrorCode::TaskNotFound, "gone"), Some(404));
        let body: Value = serde_json::from_slice(&written.body.value).unwrap();
        assert_eq!(body["error"]["status"], "NOT_FOUND", "{body}");
    }

    use super::*;

    fn route(verb: &str, path: &str) -> Result<RestRoute, RouteMiss> {
        V10Rest.route(&http::Method::from_bytes(verb.as_bytes()).unwrap(), path)
    }

    #[test]
    fn every_operation_has_one_path_and_every_path_names_its_operation_both_ways() {
        for method in Method::ALL {
            let row = path_of(method).unwrap_or_else(|| panic!("{method:?} has no path"));
            let concrete = row
                .template
                .replace("{id}", "t-1")
                .replace("{config}", "c-1");
            for verb in row.verbs {
                let found = route(verb, &concrete).unwrap();
                assert_eq!(found.method, method, "{verb} {concrete}");
                let tenanted = route(verb, &format!("/acme{concrete}")).unwrap();
                assert_eq!(
                    (tenanted.method, tenanted.tenant.as_deref()),
                    (method, Some("acme"))
                );
                if row.template.contains("{id}") {
                    assert_eq!(found.task_id.as_deref(), Some("t-1"));
                }
                if row.template.contains("{config}") {
                    assert_eq!(found.config_id.as_deref(), Some("c-1"));
                }
            }
        }
        assert_eq!(PATHS.len(), Method::ALL.len(), "one row per operation");
    }

    #[test]
    fn a_path_with_other_verbs_is_method_not_allowed_and_an_unknown_one_not_found() {
        assert_eq!(
            route("GET", "/message:send"),
            Err(RouteMiss::MethodNotAllowed {
                allow: "POST".to_owned()
            })
        );
        assert_eq!(
            route("PUT", "/tasks/t-1/pushNotificationConfigs/c-1"),
            Err(RouteMiss::MethodNotAllowed {
                allow: "GET, DELETE".to_owned()
            })
        );
        assert_eq!(route("GET", "/"), Err(RouteMiss::NotFound));
        assert_eq!(route("POST", "/nowhere"), Err(RouteMiss::NotFound));
        assert_eq!(route("GET", "/tasks/:cancel"), Err(RouteMiss::NotFound));
        assert_eq!(route("POST", "/a/b/message:send"), Err(RouteMiss::NotFound));
    }

    #[test]
    fn every_error_code_has_a_status_and_reads_back_as_itself() {
        for code in ErrorCode::NAMED {
            let (status, name) = status_of(code);
            assert!(
                STATUSES.iter().any(|(c, _, _)| *c == code),
                "{code:?} has no row"
            );
            assert!((400..600).contains(&status) && !name.is_empty());
            assert_eq!(code_of(status, code.reason()), code, "{code:?}");
        }
        assert_eq!(STATUSES.len(), ErrorCode::NAMED.len());
        assert_eq!(status_of(ErrorCode::Other(-1)), (500, "INTERNAL"));
        assert_eq!(code_of(404, None), ErrorCode::TaskNotFound);
    }

    #[test]
    fn path_query_and_body_make_the_json_rpc_params() {
        let get = route("GET", "/tasks/t%2F1").unwrap();
        let call = V10Rest
            .decode_request(&get, Some("historyLength=2"), b"")
            .unwrap();
        let Call::GetTask(params) = call else {
            panic!("{call:?}")
        };
        assert_eq!(
            (params.id.as_str(), params.history_length),
            ("t/1", Some(2))
        );

        let list = route("GET", "/acme/tasks").unwrap();
        let call = V10Rest
            .decode_request(
                &list,
                Some("contextId=c-1&status=TASK_STATE_WORKING&pageSize=5&includeArtifacts=true"),
                b"",
            )
            .unwrap();
        let Call::ListTasks(params) = call else {
            panic!("{call:?}")
        };
        assert_eq!(params.context_id.as_deref(), Some("c-1"));
        assert_eq!(params.page_size, Some(5));
        assert_eq!(params.include_artifacts, Some(true));
        assert_eq!(params.tenant.as_deref(), Some("acme"));

        let create = route("POST", "/tasks/t-1/pushNotificationConfigs").unwrap();
        let call = V10Rest
            .decode_request(&create, None, br#"{"id":"c-1","url":"http://hook"}"#)
            .unwrap();
        let Call::CreatePushConfig(config) = call else {
            panic!("{call:?}")
        };
        assert_eq!(config.task_id, "t-1");
    }

    #[test]
    fn every_query_parameter_is_read_under_its_proto_name_too() {
        for method in [Method::GetTask, Method::ListTasks, Method::ListPushConfigs] {
            for (field, kind) in query_fields(method) {
                let value = match kind {
                    Kind::Text => "x",
                    Kind::Integer => "2",
                    Kind::Boolean => "true",
                };
                let mut by_json = Map::new();
                read_query(method, &format!("{field}={value}"), &mut by_json).unwrap();
                let mut by_proto = Map::new();
                let proto = proto_name(field);
                read_query(method, &format!("{proto}={value}"), &mut by_proto).unwrap();
                assert_eq!(by_json, by_proto, "{field} / {proto}");
                assert_eq!(by_json.len(), 1, "{field}");
            }
        }
        let list = route("GET", "/tasks").unwrap();
        let call = V10Rest
            .decode_request(&list, Some("context_id=c-1&page_size=5"), b"")
            .unwrap();
        let Call::ListTasks(params) = call else {
            panic!("{call:?}")
        };
        assert_eq!(params.context_id.as_deref(), Some("c-1"));
        assert_eq!(params.page_size, Some(5));
    }

    #[test]
    fn bad_query_values_and_bodies_are_refused_naming_what_is_wrong() {
        let get = route("GET", "/tasks/t-1").unwrap();
        let error = V10Rest
            .decode_request(&get, Some("historyLength=lots"), b"")
            .unwrap_err();
        assert!(error.message.contains("`historyLength`"), "{error}");
        let error = V10Rest
            .decode_request(&get, Some("colour=blue"), b"")
            .unwrap_err();
        assert!(error.message.contains("`colour`"), "{error}");
        let error = V10Rest.decode_request(&get, None, b"{}").unwrap_err();
        assert!(error.message.contains("takes no body"), "{error}");
        let send = route("POST", "/message:send").unwrap();
        let error = V10Rest.decode_request(&send, None, b"[1]").unwrap_err();
        assert!(error.message.contains("JSON object"), "{error}");
        let cancel = route("POST", "/tasks/t-1:cancel").unwrap();
        let error = V10Rest
            .decode_request(&cancel, None, br#"{"id":"t-2"}"#)
            .unwrap_err();
        assert!(error.message.contains("differs from the path"), "{error}");
    }

    #[test]
    fn an_error_is_a_google_rpc_status_with_the_error_info_of_the_json_rpc_data() {
        let encoded =
            V10Rest.encode_error(RpcError::new(ErrorCode::TaskNotFound, "no task t-1"), None);
        assert_eq!(encoded.status, 404);
        let body: Value = serde_json::from_slice(&encoded.body.value).unwrap();
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert_eq!(body["error"]["message"], "no task t-1");
        assert_eq!(body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(
            body["error"]["details"][0]["@type"],
            "type.googleapis.com/google.rpc.ErrorInfo"
        );
        let refused =
            V10Rest.encode_error(RpcError::new(ErrorCode::MethodNotFound, "no"), Some(405));
        let body: Value = serde_json::from_slice(&refused.body.value).unwrap();
        assert_eq!(
            (refused.status, body["error"]["code"].as_u64()),
            (405, Some(405))
        );
    }

    #[test]
    fn the_1_0_0_forms_of_an_agents_error_read_as_their_error() {
        // RFC 9457 problems, by their type URI whatever the status, else by the status.
        for code in ErrorCode::NAMED {
            let kebab = code
                .reason()
                .unwrap_or_default()
                .to_ascii_lowercase()
                .replace('_', "-");
            let body = serde_json::json!({
                "type": format!("https://a2a-protocol.org/errors/{kebab}"),
                "title": "t", "status": 418, "detail": "why it broke",
            });
            let error = V10Rest
                .decode_error(418, body.to_string().as_bytes())
                .unwrap();
            assert_eq!((error.code, error.message.as_str()), (code, "why it broke"));
        }
        let body = br#"{"type":"about:blank","title":"Conflict","status":409,"supportedVersions":["1.0"]}"#;
        let error = V10Rest.decode_error(409, body).unwrap();
        assert_eq!(
            (error.code, error.message.as_str()),
            (ErrorCode::TaskNotCancelable, "Conflict")
        );
        assert_eq!(
            error.data,
            Some(serde_json::json!({"supportedVersions": ["1.0"]}))
        );
        // 1.0.0's statuses of a google.rpc.Status without a reason.
        for (status, code) in [
            (409, ErrorCode::TaskNotCancelable),
            (415, ErrorCode::ContentTypeNotSupported),
            (501, ErrorCode::UnsupportedOperation),
            (502, ErrorCode::InvalidAgentResponse),
        ] {
            let body = format!(r#"{{"error":{{"code":{status},"message":"m"}}}}"#);
            assert_eq!(
                V10Rest.decode_error(status, body.as_bytes()).unwrap().code,
                code
            );
        }
        // Neither form: a decode error naming what is missing.
        let error = V10Rest.decode_error(500, br#"{"oops":1}"#).unwrap_err();
        assert!(error.message.contains("no `error` object"), "{error}");
    }
}
