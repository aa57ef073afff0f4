//! The 1.0 JSON-RPC method table: the one place a 1.0 method name is written down.
//!
//! 1.0 names its JSON-RPC methods after the gRPC service methods, in `PascalCase` (A2A 1.0
//! §5.3, §9.4; wire diff §2.1). Every IR operation has a 1.0 name; `ListTasks` is the one that
//! 0.3 lacks.
//!
//! # Why a `match` each way
//!
//! A `match` on string literals compiles to a length switch and a few comparisons, with no
//! allocation and no table to build. Two `match`es can disagree, so the tests below prove each
//! direction against one list and that list against [`Method::ALL`].

use bridge_ir::Method;

/// The 1.0 wire name of `method`.
pub(crate) const fn name(method: Method) -> &'static str {
    match method {
        Method::SendMessage => "SendMessage",
        Method::SendStreamingMessage => "SendStreamingMessage",
        Method::GetTask => "GetTask",
        Method::ListTasks => "ListTasks",
        Method::CancelTask => "CancelTask",
        Method::SubscribeToTask => "SubscribeToTask",
        Method::CreatePushConfig => "CreateTaskPushNotificationConfig",
        Method::GetPushConfig => "GetTaskPushNotificationConfig",
        Method::ListPushConfigs => "ListTaskPushNotificationConfigs",
        Method::DeletePushConfig => "DeleteTaskPushNotificationConfig",
        Method::GetExtendedCard => "GetExtendedAgentCard",
    }
}

/// The method a 1.0 wire name names (case-sensitive, as the spec requires).
pub(crate) fn from_name(name: &str) -> Option<Method> {
    match name {
        "SendMessage" => Some(Method::SendMessage),
        "SendStreamingMessage" => Some(Method::SendStreamingMessage),
        "GetTask" => Some(Method::GetTask),
        "ListTasks" => Some(Method::ListTasks),
        "CancelTask" => Some(Method::CancelTask),
        "SubscribeToTask" => Some(Method::SubscribeToTask),
        "CreateTaskPushNotificationConfig" => Some(Method::CreatePushConfig),
        "GetTaskPushNotificationConfig" => Some(Method::GetPushConfig),
        "ListTaskPushNotificationConfigs" => Some(Method::ListPushConfigs),
        "DeleteTaskPushNotificationConfig" => Some(Method::DeletePushConfig),
        "GetExtendedAgentCard" => Some(Method::GetExtendedCard),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use bridge_ir::Method;

    use super::{from_name, name};

    /// Every 1.0 method with its wire name (A2A 1.0 §5.3). No IR operation is absent in 1.0.
    const EVERY_METHOD: &[(&str, Method)] = &[
        ("SendMessage", Method::SendMessage),
        ("SendStreamingMessage", Method::SendStreamingMessage),
        ("GetTask", Method::GetTask),
        ("ListTasks", Method::ListTasks),
        ("CancelTask", Method::CancelTask),
        ("SubscribeToTask", Method::SubscribeToTask),
        ("CreateTaskPushNotificationConfig", Method::CreatePushConfig),
        ("GetTaskPushNotificationConfig", Method::GetPushConfig),
        ("ListTaskPushNotificationConfigs", Method::ListPushConfigs),
        ("DeleteTaskPushNotificationConfig", Method::DeletePushConfig),
        ("GetExtendedAgentCard", Method::GetExtendedCard),
    ];

    #[test]
    fn every_name_finds_its_method_and_the_method_gives_the_name_back() {
        for &(wire, method) in EVERY_METHOD {
            assert_eq!(from_name(wire), Some(method), "{wire}");
            assert_eq!(name(method), wire);
        }
    }

    #[test]
    fn every_method_is_in_the_list() {
        for method in Method::ALL {
            assert!(
                EVERY_METHOD.iter().any(|&(_, listed)| listed == method),
                "{method:?} has no 1.0 name in the list"
            );
        }
    }

    #[test]
    fn names_are_case_sensitive_and_0_3_names_are_not_1_0_methods() {
        for near in [
            "sendMessage",
            "sendmessage",
            " SendMessage",
            "message/send",
            "tasks/get",
            "ListTaskPushNotificationConfig",
            "GetAgentCard",
        ] {
            assert_eq!(from_name(near), None, "{near}");
        }
    }
}
