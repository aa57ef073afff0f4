//! gRPC messages to and from the HTTP+JSON form of the same call, driven by the descriptors.
//!
//! Each A2A method's `google.api.http` rule says how its request message travels over
//! HTTP+JSON: the verb, a path template whose variables are request fields, and which fields
//! are the body (the rest go in the query). A gRPC request is decoded with the method's input
//! descriptor, written as `ProtoJSON`, and laid out by that rule; an HTTP+JSON answer is read
//! back with the output descriptor into the response message. Nothing here is specific to a
//! revision but the descriptors and the error form ([`ErrorForm`]) the binary hands in.

use bridge_ir::{ErrorCode, Revision};
use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DynamicMessage, ExtensionDescriptor, MessageDescriptor, MethodDescriptor,
    ServiceDescriptor, Value,
};

use crate::protojson::{MessageId, Tables};

/// How one revision writes A2A errors as gRPC statuses (its codec crate's `grpc` tables).
#[derive(Debug, Clone, Copy)]
pub struct ErrorForm {
    /// The status code of an error.
    pub status_of: fn(ErrorCode) -> i32,
    /// The status message of an error with this message.
    pub message_of: fn(ErrorCode, &str) -> String,
    /// The `ErrorInfo` domain, when the revision carries a `google.rpc.Status` with an
    /// `ErrorInfo` in `grpc-status-details-bin` (1.0); `None` when it carries no details (0.3).
    pub details_domain: Option<&'static str>,
}

/// One HTTP rule of a method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The HTTP method.
    pub verb: http::Method,
    /// The path template (`/tasks/{id=*}:cancel`).
    pub template: String,
    /// `*` (every field not in the path), a field name, or empty (the query holds the rest).
    pub body: String,
}

/// A call in its HTTP+JSON form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestCall {
    /// The HTTP method.
    pub verb: http::Method,
    /// The path (below the interface URL).
    pub path: String,
    /// The query, if any.
    pub query: Option<String>,
    /// The JSON body (empty without one).
    pub body: Vec<u8>,
}

/// A rule of a method with the JSON names of its path variables (`None`: the request message
/// has no such field, so the rule never fits).
#[derive(Debug, Clone)]
struct Filled {
    rule: usize,
    names: Vec<Option<String>>,
}

/// One revision's service.
#[derive(Debug, Clone)]
pub struct Service {
    /// The revision it speaks.
    pub revision: Revision,
    /// How its errors are written.
    pub errors: ErrorForm,
    descriptor: ServiceDescriptor,
    /// Each method's HTTP rules, by method index, read once from the descriptors.
    rules: std::sync::Arc<Vec<Vec<Rule>>>,
    /// Each method's rules in the order a call tries them, by method index.
    fill_order: std::sync::Arc<Vec<Vec<Filled>>>,
    /// Each method's request and response message in `tables`, by method index.
    messages: std::sync::Arc<Vec<(MessageId, MessageId)>>,
    tables: std::sync::Arc<Tables>,
    status: MessageDescriptor,
    error_info: MessageDescriptor,
    any: MessageDescriptor,
}

impl Service {
    /// The service `name` of the encoded `FileDescriptorSet` `descriptors`.
    ///
    /// # Errors
    ///
    /// When the descriptors do not decode or lack the service or the messages used here.
    pub fn new(
        revision: Revision,
        name: &str,
        descriptors: &[u8],
        errors: ErrorForm,
    ) -> Result<Self, String> {
        let pool = DescriptorPool::decode(descriptors).map_err(|e| e.to_string())?;
        let message = |name: &str| {
            pool.get_message_by_name(name)
                .ok_or_else(|| format!("the descriptors lack {name}"))
        };
        let descriptor = pool
            .get_service_by_name(name)
            .ok_or_else(|| format!("the descriptors lack the service {name}"))?;
        let http = pool
            .get_extension_by_name("google.api.http")
            .ok_or_else(|| "the descriptors lack google.api.http".to_owned())?;
        let rules: Vec<Vec<Rule>> = descriptor.methods().map(|m| rules_of(&m, &http)).collect();
        // The rules whose path variables a message fills best come first: a tenant-prefixed
        // binding is taken only when the message names a tenant.
        let fill_order = descriptor
            .methods()
            .zip(&rules)
            .map(|(method, rules)| {
                let input = method.input();
                let mut order: Vec<Filled> = rules
                    .iter()
                    .enumerate()
                    .map(|(rule, r)| Filled {
                        rule,
                        names: variables(&r.template)
                            .iter()
                            .map(|(field, _)| json_name(&input, field))
                            .collect(),
                    })
                    .collect();
                order.sort_by_key(|filled| std::cmp::Reverse(filled.names.len()));
                order
            })
            .collect();
        let tables = Tables::new(&pool);
        let messages = descriptor
            .methods()
            .map(|m| Ok((tables.message(&m.input())?, tables.message(&m.output())?)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Self {
            revision,
            errors,
            descriptor,
            rules: std::sync::Arc::new(rules),
            fill_order: std::sync::Arc::new(fill_order),
            messages: std::sync::Arc::new(messages),
            tables: std::sync::Arc::new(tables),
            status: message("google.rpc.Status")?,
            error_info: message("google.rpc.ErrorInfo")?,
            any: message("google.protobuf.Any")?,
        })
    }

    /// The service's full name (`lf.a2a.v1.A2AService`).
    #[must_use]
    pub fn name(&self) -> &str {
        self.descriptor.full_name()
    }

    /// The method named `name`.
    #[must_use]
    pub fn method(&self, name: &str) -> Option<MethodDescriptor> {
        self.descriptor.methods().find(|m| m.name() == name)
    }

    /// Every method.
    pub fn methods(&self) -> impl Iterator<Item = MethodDescriptor> + '_ {
        self.descriptor.methods()
    }

    /// The HTTP rules of `method`: its own, then its additional bindings.
    #[must_use]
    pub fn rules(&self, method: &MethodDescriptor) -> &[Rule] {
        self.rules.get(method.index()).map_or(&[], Vec::as_slice)
    }

    /// The request and response messages of `method` in the transcoder's tables.
    fn messages_of(&self, method: &MethodDescriptor) -> Result<(MessageId, MessageId), String> {
        self.messages
            .get(method.index())
            .copied()
            .ok_or_else(|| format!("{} is no method of {}", method.name(), self.name()))
    }

    /// A gRPC request message of `method` in its HTTP+JSON form.
    ///
    /// # Errors
    ///
    /// What is wrong with the message (it does not decode, a path field is missing).
    pub fn to_rest(&self, method: &MethodDescriptor, message: &[u8]) -> Result<RestCall, String> {
        let input = method.input();
        let (request, _) = self.messages_of(method)?;
        let json = self
            .tables
            .to_json(request, message)
            .map_err(|e| format!("the {} message does not decode: {e}", input.full_name()))?;
        let serde_json::Value::Object(mut fields) = json else {
            return Err(format!(
                "the {} message is not an object",
                input.full_name()
            ));
        };
        // The rule whose path variables the message fills best.
        let rules = self.rules(method);
        let rule = self
            .fill_order
            .get(method.index())
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .find(|filled| {
                filled.names.iter().all(|name| {
                    name.as_ref()
                        .and_then(|name| fields.get(name))
                        .and_then(serde_json::Value::as_str)
                        .is_some_and(|v| !v.is_empty())
                })
            })
            .and_then(|filled| rules.get(filled.rule))
            .ok_or_else(|| {
                format!(
                    "the {} message lacks the fields its HTTP path needs",
                    input.full_name()
                )
            })?;
        let mut path = String::new();
        let mut rest = rule.template.as_str();
        while let Some(open) = rest.find('{') {
            path.push_str(&rest[..open]);
            let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
            let variable = &rest[open + 1..close];
            let (field, pattern) = variable.split_once('=').unwrap_or((variable, "*"));
            let name = json_name(&input, field).unwrap_or_else(|| field.to_owned());
            let value = fields
                .remove(&name)
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let value = completed(pattern, value);
            // A resource name of another shape (`tasks/a/b` where `tasks/*` is bound) names
            // no resource of this method: it is refused here, never laid out as another path.
            // A single-segment variable takes any value, its slashes encoded.
            let multi_segment = pattern.contains('/');
            if multi_segment && !pattern_matches(pattern, &value) {
                return Err(format!(
                    "{}.{field} {value:?} is not a resource name of the form {pattern:?}",
                    input.full_name(),
                ));
            }
            path.push_str(&encode_path(&value, multi_segment));
            rest = rest.get(close + 1..).unwrap_or_default();
        }
        path.push_str(rest);
        let (query, body) = if rule.body.is_empty() {
            (query_of(&fields), Vec::new())
        } else {
            (
                None,
                serde_json::to_vec(&serde_json::Value::Object(fields)).unwrap_or_default(),
            )
        };
        Ok(RestCall {
            verb: rule.verb.clone(),
            path,
            query,
            body,
        })
    }

    /// The gRPC call an HTTP+JSON request stands for: the method whose HTTP rule matches the
    /// verb and path, and its request message built from the path variables, the query and the
    /// body. `None` when no rule of this service matches.
    ///
    /// # Errors
    ///
    /// When a rule matches but the fields do not make its request message.
    #[must_use]
    pub fn from_rest(
        &self,
        verb: &http::Method,
        path: &str,
        query: Option<&str>,
        body: &[u8],
    ) -> Option<Result<(MethodDescriptor, Vec<u8>), String>> {
        // Of the rules whose path matches, one of the same verb first (a2a-sdk 1.3.0 subscribes
        // with POST where the rule says GET), then the most specific (the longest template:
        // `/tasks/{id}:cancel` before `/tasks/{id}`).
        let (method, rule, captured) = self
            .methods()
            .flat_map(|method| {
                self.rules(&method)
                    .iter()
                    .filter_map(|rule| {
                        matched(&rule.template, path)
                            .map(|captured| (method.clone(), rule, captured))
                    })
                    .collect::<Vec<_>>()
            })
            .max_by_key(|(_, rule, _)| (rule.verb == *verb, rule.template.len()))?;
        Some(
            self.request_of(&method, rule, captured, query, body)
                .map(|m| (method, m)),
        )
    }

    fn request_of(
        &self,
        method: &MethodDescriptor,
        rule: &Rule,
        captured: Vec<(String, String)>,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<Vec<u8>, String> {
        let input = method.input();
        let mut fields = if rule.body.is_empty() || body.iter().all(u8::is_ascii_whitespace) {
            serde_json::Map::new()
        } else {
            match serde_json::from_slice::<serde_json::Value>(body) {
                Ok(serde_json::Value::Object(fields)) if rule.body == "*" => fields,
                Ok(value) => {
                    let name = json_name(&input, &rule.body).unwrap_or_else(|| rule.body.clone());
                    // A body of the whole request (as a2a-sdk 0.3.26 writes one) is taken as is.
                    match value {
                        serde_json::Value::Object(whole) if whole.contains_key(&name) => whole,
                        other => std::iter::once((name, other)).collect(),
                    }
                }
                Err(e) => return Err(format!("the body is not JSON: {e}")),
            }
        };
        for (field, value) in captured {
            let name = json_name(&input, &field).unwrap_or(field);
            fields.insert(name, serde_json::Value::String(value));
        }
        for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            let field = input
                .fields()
                .find(|f| f.json_name() == name || f.name() == name);
            let Some(field) = field else {
                continue;
            };
            let value = typed(&field, &value);
            let key = field.json_name().to_owned();
            if field.is_list() {
                if let Some(serde_json::Value::Array(items)) = fields.get_mut(&key) {
                    items.push(value);
                } else {
                    fields.insert(key, serde_json::Value::Array(vec![value]));
                }
            } else {
                fields.insert(key, value);
            }
        }
        let (request, _) = self.messages_of(method)?;
        self.tables
            .from_json(request, &serde_json::Value::Object(fields))
            .map_err(|e| format!("the fields make no {}: {e}", input.full_name()))
    }

    /// A gRPC response message of `method` in its `ProtoJSON` form.
    ///
    /// # Errors
    ///
    /// When the bytes are no such message.
    pub fn response_json(
        &self,
        method: &MethodDescriptor,
        message: &[u8],
    ) -> Result<Vec<u8>, String> {
        let (_, response) = self.messages_of(method)?;
        let json = self.tables.to_json(response, message).map_err(|e| {
            format!(
                "the {} message does not decode: {e}",
                self.tables.name(response)
            )
        })?;
        serde_json::to_vec(&json).map_err(|e| e.to_string())
    }

    /// The `ErrorInfo` reason of an encoded `google.rpc.Status`, when it has one.
    #[must_use]
    pub fn reason_of(&self, details: &[u8]) -> Option<String> {
        let status = DynamicMessage::decode(self.status.clone(), details).ok()?;
        let list = status.get_field_by_name("details")?;
        let Value::List(items) = list.as_ref() else {
            return None;
        };
        items.iter().find_map(|item| {
            let Value::Message(any) = item else {
                return None;
            };
            let value = any.get_field_by_name("value")?;
            let Value::Bytes(bytes) = value.as_ref() else {
                return None;
            };
            let info = DynamicMessage::decode(self.error_info.clone(), bytes.as_ref()).ok()?;
            info.get_field_by_name("reason")
                .and_then(|r| r.as_str().map(str::to_owned))
        })
    }

    /// An HTTP+JSON answer body of `method` as its gRPC response message.
    ///
    /// # Errors
    ///
    /// When the JSON is no such message.
    pub fn response(&self, method: &MethodDescriptor, json: &[u8]) -> Result<Vec<u8>, String> {
        let (_, response) = self.messages_of(method)?;
        let name = self.tables.name(response);
        let json = if json.iter().all(u8::is_ascii_whitespace) {
            b"{}".as_slice()
        } else {
            json
        };
        self.tables
            .from_json_text(response, json)
            .map_err(|e| format!("the answer is no {name}: {e}"))
    }

    /// The encoded `google.rpc.Status` of an error, with an `ErrorInfo` of `domain` naming it.
    #[must_use]
    pub fn status_details(
        &self,
        code: i32,
        message: &str,
        error: ErrorCode,
        domain: &str,
    ) -> Vec<u8> {
        let mut info = DynamicMessage::new(self.error_info.clone());
        info.set_field_by_name(
            "reason",
            Value::String(error.reason().unwrap_or("INTERNAL_ERROR").to_owned()),
        );
        info.set_field_by_name("domain", Value::String(domain.to_owned()));
        let mut any = DynamicMessage::new(self.any.clone());
        any.set_field_by_name(
            "type_url",
            Value::String("type.googleapis.com/google.rpc.ErrorInfo".to_owned()),
        );
        any.set_field_by_name("value", Value::Bytes(info.encode_to_vec().into()));
        let mut status = DynamicMessage::new(self.status.clone());
        status.set_field_by_name("code", Value::I32(code));
        status.set_field_by_name("message", Value::String(message.to_owned()));
        status.set_field_by_name("details", Value::List(vec![Value::Message(any)]));
        status.encode_to_vec()
    }
}

/// The HTTP rules of `method` in its options: its own, then its additional bindings.
fn rules_of(method: &MethodDescriptor, http: &ExtensionDescriptor) -> Vec<Rule> {
    let options = method.options();
    let value = options.get_extension(http);
    let mut rules = Vec::new();
    if let Value::Message(rule) = value.as_ref() {
        rules.extend(rule_of(rule));
        if let Some(extra) = rule.get_field_by_name("additional_bindings")
            && let Value::List(extra) = extra.as_ref()
        {
            rules.extend(extra.iter().filter_map(|v| match v {
                Value::Message(m) => rule_of(m),
                _ => None,
            }));
        }
    }
    rules
}

fn rule_of(rule: &DynamicMessage) -> Option<Rule> {
    let text = |name: &str| {
        rule.get_field_by_name(name).and_then(|v| match v.as_ref() {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            _ => None,
        })
    };
    let (verb, template) = [
        (http::Method::GET, "get"),
        (http::Method::POST, "post"),
        (http::Method::DELETE, "delete"),
        (http::Method::PUT, "put"),
        (http::Method::PATCH, "patch"),
    ]
    .into_iter()
    .find_map(|(verb, name)| text(name).map(|t| (verb, t)))?;
    Some(Rule {
        verb,
        template,
        body: text("body").unwrap_or_default(),
    })
}

/// The path variables `path` gives `template`, when it matches: each field and its value
/// (percent-decoded). A variable's pattern is `*` (one segment) or literal segments with `*`.
fn matched(template: &str, path: &str) -> Option<Vec<(String, String)>> {
    let mut captured = Vec::new();
    let mut rest_template = template;
    let mut rest_path = path;
    while let Some(open) = rest_template.find('{') {
        let literal = &rest_template[..open];
        rest_path = rest_path.strip_prefix(literal)?;
        let close = open + rest_template[open..].find('}')?;
        let variable = &rest_template[open + 1..close];
        let (field, pattern) = variable.split_once('=').unwrap_or((variable, "*"));
        rest_template = &rest_template[close + 1..];
        // The variable runs to the next literal of the template (or the end).
        let next = rest_template.split('{').next().unwrap_or_default();
        let segments = pattern.split('/').count();
        let (value, after) = take_segments(rest_path, segments, next)?;
        if value.is_empty() || !pattern_matches(pattern, value) {
            return None;
        }
        let decoded = form_urlencoded::parse(format!("v={value}").as_bytes())
            .next()
            .map_or_else(|| value.to_owned(), |(_, v)| v.into_owned());
        captured.push((field.to_owned(), trimmed(pattern, &decoded)));
        rest_path = after;
    }
    (rest_path == rest_template).then_some(captured)
}

/// The first `segments` path segments of `path`, ending before the literal `next` starts.
fn take_segments<'p>(path: &'p str, segments: usize, next: &str) -> Option<(&'p str, &'p str)> {
    let mut end = 0;
    for index in 0..segments {
        let rest = &path[end..];
        let stop = rest.find('/').unwrap_or(rest.len());
        let segment = &rest[..stop];
        // The last segment stops where the next literal (`:cancel`) begins.
        let cut = if index + 1 == segments && !next.is_empty() && !next.starts_with('/') {
            segment
                .find(next.split('/').next().unwrap_or(next))
                .unwrap_or(segment.len())
        } else {
            segment.len()
        };
        end += cut;
        if index + 1 < segments {
            if !path[end..].starts_with('/') {
                return None;
            }
            end += 1;
        }
    }
    Some((&path[..end], &path[end..]))
}

/// The literal segments a pattern ends with, after its last `*`
/// (`tasks/*/pushNotificationConfigs` ends with `pushNotificationConfigs`).
fn trailing_literal(pattern: &str) -> Option<&str> {
    let (_, tail) = pattern.rsplit_once("*/")?;
    (!tail.is_empty() && !tail.contains('*')).then_some(tail)
}

/// A resource name completed to its pattern: A2A 0.3 names a push config's parent `tasks/{id}`
/// (a2a-sdk), while the HTTP rule binds `tasks/*/pushNotificationConfigs`.
fn completed(pattern: &str, value: String) -> String {
    match trailing_literal(pattern) {
        Some(tail) if !pattern_matches(pattern, &value) => format!("{value}/{tail}"),
        _ => value,
    }
}

/// A captured resource name in the form the messages carry (the inverse of [`completed`]).
fn trimmed(pattern: &str, value: &str) -> String {
    trailing_literal(pattern)
        .and_then(|tail| value.strip_suffix(tail))
        .and_then(|v| v.strip_suffix('/'))
        .unwrap_or(value)
        .to_owned()
}

/// Whether a captured value fits a pattern such as `tasks/*/pushNotificationConfigs`.
fn pattern_matches(pattern: &str, value: &str) -> bool {
    let parts: Vec<&str> = value.split('/').collect();
    let expected: Vec<&str> = pattern.split('/').collect();
    parts.len() == expected.len()
        && parts
            .iter()
            .zip(&expected)
            .all(|(part, want)| !part.is_empty() && (*want == "*" || part == want))
}

/// A query value as the JSON its field takes.
fn typed(field: &prost_reflect::FieldDescriptor, value: &str) -> serde_json::Value {
    use prost_reflect::Kind;
    match field.kind() {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Uint32 | Kind::Fixed32 => {
            value.parse::<i64>().map_or_else(
                |_| serde_json::Value::String(value.to_owned()),
                serde_json::Value::from,
            )
        }
        Kind::Bool => match value {
            "true" => serde_json::Value::Bool(true),
            "false" => serde_json::Value::Bool(false),
            other => serde_json::Value::String(other.to_owned()),
        },
        _ => serde_json::Value::String(value.to_owned()),
    }
}

/// The variables of a path template: field name and pattern.
fn variables(template: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let variable = &rest[open + 1..open + close];
        let (field, pattern) = variable.split_once('=').unwrap_or((variable, "*"));
        out.push((field.to_owned(), pattern.to_owned()));
        rest = &rest[open + close + 1..];
    }
    out
}

/// The JSON name of the field `field` (its proto name) of `message`.
fn json_name(message: &MessageDescriptor, field: &str) -> Option<String> {
    message
        .get_field_by_name(field)
        .map(|f| f.json_name().to_owned())
}

/// A path value percent-encoded: `/` kept when the pattern spans segments.
fn encode_path(value: &str, multi_segment: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~')
            || (multi_segment && byte == b'/');
        if keep {
            out.push(char::from(byte));
        } else {
            use std::fmt::Write as _;
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// The remaining fields as a query: scalars and lists of scalars, by JSON name.
fn query_of(fields: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    let mut query = form_urlencoded::Serializer::new(String::new());
    let mut any = false;
    for (name, value) in fields {
        let values: Vec<&serde_json::Value> = match value {
            serde_json::Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        for value in values {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Bool(b) => b.to_string(),
                _ => continue,
            };
            query.append_pair(name, &text);
            any = true;
        }
    }
    any.then(|| query.finish())
}

#[cfg(test)]
pub(crate) mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::panic,
        reason = "tests unwrap what they just built and fail loudly"
    )]

    use super::*;

    /// The 1.0 service with the error form the binary gives it; the crate's other tests use it.
    pub(crate) fn v10() -> Service {
        Service::new(
            Revision::V1_0,
            bridge_v10::grpc::SERVICE,
            bridge_v10::grpc::DESCRIPTORS,
            ErrorForm {
                status_of: bridge_v10::grpc::status_of,
                message_of: |_, m| m.to_owned(),
                details_domain: Some(bridge_v10::grpc::ERROR_DOMAIN),
            },
        )
        .unwrap()
    }

    /// The 0.3 service with the error form the binary gives it.
    pub(crate) fn v03() -> Service {
        Service::new(
            Revision::V0_3,
            bridge_v03::grpc::SERVICE,
            bridge_v03::grpc::DESCRIPTORS,
            ErrorForm {
                status_of: bridge_v03::grpc::status_of,
                message_of: bridge_v03::grpc::message_of,
                details_domain: None,
            },
        )
        .unwrap()
    }

    /// A request message of `method`, from its JSON form.
    fn message(service: &Service, method: &str, json: &str) -> Vec<u8> {
        let input = service.method(method).unwrap().input();
        let mut reader = serde_json::Deserializer::from_str(json);
        DynamicMessage::deserialize(input, &mut reader)
            .unwrap()
            .encode_to_vec()
    }

    fn rest(service: &Service, method: &str, json: &str) -> RestCall {
        let m = service.method(method).unwrap();
        service
            .to_rest(&m, &message(service, method, json))
            .unwrap()
    }

    #[test]
    fn every_method_of_both_services_has_an_http_rule() {
        for service in [v10(), v03()] {
            let names: Vec<_> = service.methods().map(|m| m.name().to_owned()).collect();
            assert!(names.len() >= 10, "{names:?}");
            for method in service.methods() {
                assert!(!service.rules(&method).is_empty(), "{}", method.name());
            }
        }
    }

    #[test]
    fn a_1_0_request_is_laid_out_by_its_rule_with_the_tenant_binding_only_when_named() {
        let s = v10();
        let got = rest(&s, "GetTask", r#"{"id": "t/1", "historyLength": 2}"#);
        assert_eq!(got.verb, http::Method::GET);
        assert_eq!(got.path, "/tasks/t%2F1");
        assert_eq!(got.query.as_deref(), Some("historyLength=2"));
        let got = rest(&s, "GetTask", r#"{"tenant": "acme", "id": "t-1"}"#);
        assert_eq!(got.path, "/acme/tasks/t-1");
        let got = rest(
            &s,
            "SendMessage",
            r#"{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}"#,
        );
        assert_eq!(
            (got.verb, got.path.as_str()),
            (http::Method::POST, "/message:send")
        );
        let body: serde_json::Value = serde_json::from_slice(&got.body).unwrap();
        assert_eq!(body["message"]["parts"][0]["text"], "hi");
        let got = rest(
            &s,
            "CreateTaskPushNotificationConfig",
            r#"{"taskId": "t-1", "url": "https://h/x"}"#,
        );
        assert_eq!(got.path, "/tasks/t-1/pushNotificationConfigs");
        let body: serde_json::Value = serde_json::from_slice(&got.body).unwrap();
        assert_eq!(body, serde_json::json!({"url": "https://h/x"}));
        let got = rest(
            &s,
            "ListTasks",
            r#"{"contextId": "c", "status": "TASK_STATE_WORKING", "pageSize": 5}"#,
        );
        assert_eq!(got.path, "/tasks");
        let query = got.query.unwrap();
        assert!(
            query.contains("contextId=c")
                && query.contains("status=TASK_STATE_WORKING")
                && query.contains("pageSize=5"),
            "{query}"
        );
        // A path field left out is the caller's error.
        let m = s.method("GetTask").unwrap();
        assert!(s.to_rest(&m, &message(&s, "GetTask", "{}")).is_err());
        assert!(s.to_rest(&m, b"\xff\xff").is_err());
    }

    #[test]
    fn a_0_3_request_keeps_its_resource_names_in_the_path() {
        let s = v03();
        let got = rest(
            &s,
            "GetTask",
            r#"{"name": "tasks/t-1", "historyLength": 3}"#,
        );
        assert_eq!(got.path, "/v1/tasks/t-1");
        assert_eq!(got.query.as_deref(), Some("historyLength=3"));
        let got = rest(&s, "CancelTask", r#"{"name": "tasks/t-1"}"#);
        assert_eq!(
            (got.verb, got.path.as_str()),
            (http::Method::POST, "/v1/tasks/t-1:cancel")
        );
        let got = rest(
            &s,
            "GetTaskPushNotificationConfig",
            r#"{"name": "tasks/t-1/pushNotificationConfigs/c-1"}"#,
        );
        assert_eq!(got.path, "/v1/tasks/t-1/pushNotificationConfigs/c-1");
        // A name of another shape names no resource of the method: refused, naming the form,
        // never laid out as a longer or shorter path.
        for (method, name) in [
            ("GetTask", "tasks/a/b"),
            ("GetTask", "tasks/"),
            ("GetTask", "agents/t-1"),
            ("CancelTask", "tasks/a/b"),
            ("TaskSubscription", "tasks/a/b"),
            ("GetTaskPushNotificationConfig", "tasks/a/b/c"),
            (
                "GetTaskPushNotificationConfig",
                "tasks/t-1/pushNotificationConfigs/c/d",
            ),
        ] {
            let m = s.method(method).unwrap();
            let why = s
                .to_rest(
                    &m,
                    &message(&s, method, &format!(r#"{{"name": "{name}"}}"#)),
                )
                .unwrap_err();
            assert!(
                why.contains("not a resource name of the form"),
                "{method} {name}: {why}"
            );
        }
        let got = rest(&s, "TaskSubscription", r#"{"name": "tasks/t-1"}"#);
        assert_eq!(
            (got.verb, got.path.as_str()),
            (http::Method::GET, "/v1/tasks/t-1:subscribe")
        );
    }

    #[test]
    fn an_http_json_request_finds_its_method_and_makes_its_message_back() {
        for (service, method, json) in [
            (v10(), "GetTask", r#"{"id": "t/1", "historyLength": 2}"#),
            (v10(), "GetTask", r#"{"tenant": "acme", "id": "t-1"}"#),
            (v10(), "CancelTask", r#"{"id": "t-1"}"#),
            (v10(), "SubscribeToTask", r#"{"id": "t-1"}"#),
            (
                v10(),
                "GetTaskPushNotificationConfig",
                r#"{"taskId": "t-1", "id": "c-1"}"#,
            ),
            (
                v10(),
                "ListTasks",
                r#"{"contextId": "c", "pageSize": 5, "includeArtifacts": true}"#,
            ),
            (
                v10(),
                "SendMessage",
                r#"{"message": {"messageId": "m", "parts": [{"text": "hi"}]}}"#,
            ),
            (
                v03(),
                "GetTask",
                r#"{"name": "tasks/t-1", "historyLength": 3}"#,
            ),
            (v03(), "CancelTask", r#"{"name": "tasks/t-1"}"#),
            (v03(), "TaskSubscription", r#"{"name": "tasks/t-1"}"#),
            (
                v03(),
                "GetTaskPushNotificationConfig",
                r#"{"name": "tasks/t-1/pushNotificationConfigs/c-1"}"#,
            ),
            (
                v03(),
                "CreateTaskPushNotificationConfig",
                r#"{"parent": "tasks/t-1", "config": {"pushNotificationConfig": {"url": "https://h"}}}"#,
            ),
        ] {
            let original = message(&service, method, json);
            let call = service
                .to_rest(&service.method(method).unwrap(), &original)
                .unwrap();
            let (found, back) = service
                .from_rest(&call.verb, &call.path, call.query.as_deref(), &call.body)
                .unwrap_or_else(|| panic!("{method}: no rule matches {call:?}"))
                .unwrap();
            assert_eq!(found.name(), method, "{json}");
            let input = found.input();
            assert_eq!(
                DynamicMessage::decode(input.clone(), back.as_slice()).unwrap(),
                DynamicMessage::decode(input, original.as_slice()).unwrap(),
                "{method}: {call:?}"
            );
        }
        assert!(
            v10()
                .from_rest(&http::Method::GET, "/nowhere", None, b"")
                .is_none()
        );
        assert!(
            v03()
                .from_rest(&http::Method::GET, "/tasks/t-1", None, b"")
                .is_none()
        );
    }

    #[test]
    fn an_answer_becomes_the_response_message_and_errors_carry_their_details() {
        let s = v10();
        let m = s.method("GetTask").unwrap();
        let bytes = s
            .response(
                &m,
                br#"{"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}, "extra": 1}"#,
            )
            .unwrap();
        let task = DynamicMessage::decode(m.output(), bytes.as_slice()).unwrap();
        assert_eq!(task.get_field_by_name("id").unwrap().as_str(), Some("t-1"));
        assert!(s.response(&m, br#"{"id": 5}"#).is_err());
        let empty = s.method("DeleteTaskPushNotificationConfig").unwrap();
        assert!(s.response(&empty, b"").unwrap().is_empty());

        let details = s.status_details(5, "gone", ErrorCode::TaskNotFound, "a2a-protocol.org");
        let status = DynamicMessage::decode(s.status.clone(), details.as_slice()).unwrap();
        assert_eq!(status.get_field_by_name("code").unwrap().as_i32(), Some(5));
        let text = String::from_utf8_lossy(&details);
        assert!(
            text.contains("TASK_NOT_FOUND") && text.contains("a2a-protocol.org"),
            "{text}"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Arbitrary bytes as every method's request and response message, and as an HTTP+JSON
        /// request: nothing panics, and a response message that decodes reads back from its JSON
        /// as the same message.
        #[test]
        fn no_input_makes_the_transcoder_panic(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256)) {
            for service in [v10(), v03()] {
                for method in service.methods() {
                    let _ = service.to_rest(&method, &data);
                    let _ = service.response(&method, &data);
                    if let Ok(json) = service.response_json(&method, &data) {
                        let again = service.response(&method, &json).unwrap();
                        proptest::prop_assert_eq!(service.response_json(&method, &again).unwrap(), json);
                    }
                }
                let text = String::from_utf8_lossy(&data);
                for verb in [http::Method::GET, http::Method::POST, http::Method::DELETE] {
                    let _ = service.from_rest(&verb, &text, Some(&text), &data);
                    let _ = service.from_rest(&verb, &format!("/tasks/{text}"), None, &data);
                    let _ = service.from_rest(&verb, &format!("/v1/tasks/{text}:cancel"), None, &data);
                }
            }
        }
    }
}
