//! The classes of A2A operations policies name: what a call does, whatever its revision and
//! binding.

use bridge_ir::Method;

/// A class of operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodClass {
    /// `SendMessage` and `CancelTask`: calls that make the agent act.
    Send,
    /// `SendStreamingMessage` and `SubscribeToTask`: calls that hold a stream open.
    Stream,
    /// `GetTask` and `ListTasks`.
    Read,
    /// The four push-config operations.
    PushConfig,
    /// `GetExtendedAgentCard`.
    Card,
}

impl MethodClass {
    /// Every class, for tables and tests.
    pub const ALL: [Self; 5] = [
        Self::Send,
        Self::Stream,
        Self::Read,
        Self::PushConfig,
        Self::Card,
    ];

    /// The class of `method`.
    #[must_use]
    pub const fn of(method: Method) -> Self {
        match method {
            Method::SendMessage | Method::CancelTask => Self::Send,
            Method::SendStreamingMessage | Method::SubscribeToTask => Self::Stream,
            Method::GetTask | Method::ListTasks => Self::Read,
            Method::CreatePushConfig
            | Method::GetPushConfig
            | Method::ListPushConfigs
            | Method::DeletePushConfig => Self::PushConfig,
            Method::GetExtendedCard => Self::Card,
        }
    }

    /// The name configurations and metrics use.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Send => "send",
            Self::Stream => "stream",
            Self::Read => "read",
            Self::PushConfig => "push_config",
            Self::Card => "card",
        }
    }

    /// The class a name means.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_has_a_class_and_every_class_a_method_and_a_name_read_back() {
        for class in MethodClass::ALL {
            assert!(
                Method::ALL.iter().any(|m| MethodClass::of(*m) == class),
                "{class:?} has no method"
            );
            assert_eq!(MethodClass::from_name(class.as_str()), Some(class));
        }
        assert_eq!(MethodClass::from_name("sends"), None);
        assert_eq!(MethodClass::of(Method::CancelTask), MethodClass::Send);
        assert_eq!(
            MethodClass::of(Method::SubscribeToTask),
            MethodClass::Stream
        );
    }
}
