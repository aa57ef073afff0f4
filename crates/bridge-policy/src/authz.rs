//! Method-aware authorization: a table of rules over the call as the bridge understands it
//! ([`AuthzLayer`]).
//!
//! Each [`Rule`] allows or denies the calls it matches; the first rule that matches a call
//! decides, and a call no rule matches gets the table's default. A rule matches when every
//! condition it states holds (an empty condition holds for every call):
//!
//! - `methods`: the operation, by its stable label (`send_message`, `get_task`, …, whatever
//!   the revision and binding called it) or its class (`send`, `stream`, `read`, `push_config`,
//!   `card`);
//! - `tenants`: the A2A tenant the call names;
//! - `identities`: the name a verified token gives the caller (`CoreCall::identity`);
//! - `claims`: claims of that token, each equal to the value given (or, for a list claim,
//!   holding it); a caller without a verified token matches no `identities` and no `claims`;
//! - `bindings` and `revisions`: the caller's binding and revision;
//! - `agent_revisions`: the revision of the route's agent, from its card.
//!
//! A denied call is refused with `InvalidRequest` naming the rule, under 403 where the binding
//! has statuses (HTTP+JSON; gRPC `PERMISSION_DENIED`); a JSON-RPC caller gets the error with
//! HTTP 200 and its id. The table is checked when the configuration is read, so a bad rule
//! keeps the old configuration, as every reload does.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use bridge_app::service::InboundResponse;
use bridge_app::{CoreCall, CoreService, Observer};
use bridge_ir::{Binding, ErrorCode, Method, Revision, RpcError};
use futures_util::future::BoxFuture;
use http::StatusCode;
use tower::{Service, ServiceExt as _};

use crate::MethodClass;

/// What a rule does with the calls it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Let the call through.
    Allow,
    /// Refuse it.
    Deny,
}

impl Effect {
    /// What a name means: `allow`, `deny`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "allow" => Some(Self::Allow),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// An operation a rule names: one method, or a class of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodMatch {
    /// One operation.
    Method(Method),
    /// A class of operations.
    Class(MethodClass),
}

impl MethodMatch {
    /// What a name means: a method's label, or a class's name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Method::ALL
            .into_iter()
            .find(|m| m.label() == name)
            .map(Self::Method)
            .or_else(|| MethodClass::from_name(name).map(Self::Class))
    }

    fn matches(self, method: Method) -> bool {
        match self {
            Self::Method(named) => named == method,
            Self::Class(class) => MethodClass::of(method) == class,
        }
    }
}

/// One rule of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Its position in the configuration, for refusals and logs.
    pub name: String,
    /// What it does.
    pub effect: Effect,
    /// The operations it covers.
    pub methods: Vec<MethodMatch>,
    /// The tenants it covers.
    pub tenants: Vec<String>,
    /// The verified identities it covers.
    pub identities: Vec<String>,
    /// The claims a verified token must carry.
    pub claims: Vec<(String, String)>,
    /// The callers' bindings it covers.
    pub bindings: Vec<Binding>,
    /// The callers' revisions it covers.
    pub revisions: Vec<Revision>,
    /// The agents' revisions it covers.
    pub agent_revisions: Vec<Revision>,
}

impl Rule {
    fn matches(&self, call: &CoreCall) -> bool {
        let method = call.method();
        let identity = call.identity();
        (self.methods.is_empty() || self.methods.iter().any(|m| m.matches(method)))
            && (self.tenants.is_empty()
                || call
                    .tenant()
                    .is_some_and(|t| self.tenants.iter().any(|named| named == t)))
            && (self.identities.is_empty()
                || identity.is_some_and(|i| self.identities.contains(&i.name)))
            && self.claims.iter().all(|(claim, wanted)| {
                identity.is_some_and(|i| match i.claims.get(claim) {
                    Some(serde_json::Value::String(value)) => value == wanted,
                    Some(serde_json::Value::Array(values)) => {
                        values.iter().any(|v| v.as_str() == Some(wanted.as_str()))
                    }
                    // A number or a boolean, compared as its JSON text (`true`, `3`).
                    Some(other) => serde_json::to_string(other).is_ok_and(|text| text == *wanted),
                    None => false,
                })
            })
            && (self.bindings.is_empty() || self.bindings.contains(&call.binding()))
            && (self.revisions.is_empty() || self.revisions.contains(&call.revision()))
            && (self.agent_revisions.is_empty()
                || call
                    .agent_revision()
                    .is_some_and(|r| self.agent_revisions.contains(&r)))
    }
}

/// The table: rules in order, and what a call none matches gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// The rules, the first match deciding.
    pub rules: Vec<Rule>,
    /// What a call no rule matches gets.
    pub default: Effect,
}

impl Rules {
    /// What the table decides for `call`, and the rule that decided (`None`: the default).
    #[must_use]
    pub fn decide(&self, call: &CoreCall) -> (Effect, Option<&Rule>) {
        self.rules
            .iter()
            .find(|rule| rule.matches(call))
            .map_or((self.default, None), |rule| (rule.effect, Some(rule)))
    }
}

/// The layer enforcing a [`Rules`] table.
#[derive(Debug, Clone)]
pub struct AuthzLayer {
    rules: Arc<Rules>,
    observer: Arc<dyn Observer>,
}

impl AuthzLayer {
    /// The layer, reporting refusals to `observer`.
    #[must_use]
    pub fn new(rules: Rules, observer: Arc<dyn Observer>) -> Self {
        Self {
            rules: Arc::new(rules),
            observer,
        }
    }
}

impl tower::Layer<CoreService> for AuthzLayer {
    type Service = Authorized;

    fn layer(&self, inner: CoreService) -> Authorized {
        Authorized {
            inner,
            layer: self.clone(),
        }
    }
}

/// [`AuthzLayer`] over the rest of the seam.
#[derive(Clone)]
pub struct Authorized {
    inner: CoreService,
    layer: AuthzLayer,
}

impl std::fmt::Debug for Authorized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorized")
            .field("rules", &self.layer.rules)
            .finish_non_exhaustive()
    }
}

impl Service<CoreCall> for Authorized {
    type Response = InboundResponse;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<InboundResponse, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: CoreCall) -> Self::Future {
        let (effect, rule) = self.layer.rules.decide(&call);
        if effect == Effect::Deny {
            let class = MethodClass::of(call.method());
            self.layer.observer.policy(class.as_str(), "denied");
            let why = rule.map_or_else(
                || "no rule allows it".to_owned(),
                |rule| format!("{} denies it", rule.name),
            );
            let error = RpcError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "forbidden: {} is not allowed here ({why})",
                    call.method().label()
                ),
            );
            let refusal = call.refuse(error, Some(StatusCode::FORBIDDEN));
            return Box::pin(async move { Ok(refusal) });
        }
        let inner = self.inner.clone();
        Box::pin(async move {
            match inner.oneshot(call).await {
                Ok(response) => Ok(response),
                Err(never) => match never {},
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_label_and_class_name_reads_back() {
        for method in Method::ALL {
            assert_eq!(
                MethodMatch::from_name(method.label()),
                Some(MethodMatch::Method(method))
            );
        }
        for class in MethodClass::ALL {
            assert_eq!(
                MethodMatch::from_name(class.as_str()),
                Some(MethodMatch::Class(class))
            );
        }
        assert_eq!(MethodMatch::from_name("SendMessage"), None);
        assert_eq!(Effect::from_name("allow"), Some(Effect::Allow));
        assert_eq!(Effect::from_name("deny"), Some(Effect::Deny));
        assert_eq!(Effect::from_name("maybe"), None);
    }

    #[test]
    fn a_class_covers_its_methods_only() {
        let push = MethodMatch::Class(MethodClass::PushConfig);
        assert!(push.matches(Method::DeletePushConfig));
        assert!(!push.matches(Method::GetTask));
        assert!(MethodMatch::Method(Method::GetTask).matches(Method::GetTask));
        assert!(!MethodMatch::Method(Method::GetTask).matches(Method::ListTasks));
    }
}
