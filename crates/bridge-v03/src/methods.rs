//! The 0.3 method table (wire diff §2.1): the one place a 0.3 JSON-RPC method name is written.
//!
//! # Why a `match` both ways
//!
//! The vocabulary is fixed and small. A `match` on string literals compiles to a length switch
//! and a few comparisons, allocates nothing and needs no build step, and a `match` on the IR
//! enum makes the compiler check that every operation was considered. The tests prove the two
//! directions agree and that every IR operation either has a name or is listed as absent.
//!
//! # Why `ListTasks` has no name
//!
//! 0.3 JSON-RPC has no task listing (the 0.3 spec lists it for gRPC and REST only, and no 0.3
//! proto RPC existed). One pre-standard Go server shipped a `tasks/list` with snake-case params;
//! that is not this revision, so the codec does not name it.

use bridge_ir::Method;

/// The 0.3 wire name of `method`, or `None` when 0.3 has no such method.
#[must_use]
pub(crate) const fn name(method: Method) -> Option<&'static str> {
    Some(match method {
        Method::SendMessage => "message/send",
        Method::SendStreamingMessage => "message/stream",
        Method::GetTask => "tasks/get",
        Method::CancelTask => "tasks/cancel",
        Method::SubscribeToTask => "tasks/resubscribe",
        Method::CreatePushConfig => "tasks/pushNotificationConfig/set",
        Method::GetPushConfig => "tasks/pushNotificationConfig/get",
        Method::ListPushConfigs => "tasks/pushNotificationConfig/list",
        Method::DeletePushConfig => "tasks/pushNotificationConfig/delete",
        Method::GetExtendedCard => "agent/getAuthenticatedExtendedCard",
        Method::ListTasks => return None,
    })
}

/// The method a 0.3 wire name names (case-sensitive, no normalisation).
#[must_use]
pub(crate) fn from_name(name: &str) -> Option<Method> {
    Some(match name {
        "message/send" => Method::SendMessage,
        "message/stream" => Method::SendStreamingMessage,
        "tasks/get" => Method::GetTask,
        "tasks/cancel" => Method::CancelTask,
        "tasks/resubscribe" => Method::SubscribeToTask,
        "tasks/pushNotificationConfig/set" => Method::CreatePushConfig,
        "tasks/pushNotificationConfig/get" => Method::GetPushConfig,
        "tasks/pushNotificationConfig/list" => Method::ListPushConfigs,
        "tasks/pushNotificationConfig/delete" => Method::DeletePushConfig,
        "agent/getAuthenticatedExtendedCard" => Method::GetExtendedCard,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use bridge_ir::Method;

    use super::{from_name, name};

    /// Every 0.3 method, as its wire name.
    const EVERY_METHOD: &[(&str, Method)] = &[
        ("message/send", Method::SendMessage),
        ("message/stream", Method::SendStreamingMessage),
        ("tasks/get", Method::GetTask),
        ("tasks/cancel", Method::CancelTask),
        ("tasks/resubscribe", Method::SubscribeToTask),
        ("tasks/pushNotificationConfig/set", Method::CreatePushConfig),
        ("tasks/pushNotificationConfig/get", Method::GetPushConfig),
        ("tasks/pushNotificationConfig/list", Method::ListPushConfigs),
        (
            "tasks/pushNotificationConfig/delete",
            Method::DeletePushConfig,
        ),
        (
            "agent/getAuthenticatedExtendedCard",
            Method::GetExtendedCard,
        ),
    ];

    /// Operations 0.3 does not have.
    const ABSENT: &[Method] = &[Method::ListTasks];

    #[test]
    fn every_name_finds_its_variant_and_the_variant_gives_the_name_back() {
        for (wire, method) in EVERY_METHOD {
            assert_eq!(from_name(wire), Some(*method), "{wire}");
            assert_eq!(name(*method), Some(*wire), "{method:?}");
        }
    }

    #[test]
    fn every_operation_has_a_name_or_is_listed_as_absent() {
        for method in Method::ALL {
            let listed = EVERY_METHOD.iter().any(|(_, m)| *m == method);
            let absent = ABSENT.contains(&method);
            assert!(
                listed != absent,
                "{method:?} must be exactly one of named or absent"
            );
            assert_eq!(name(method).is_some(), listed, "{method:?}");
        }
    }

    #[test]
    fn names_are_not_normalised_and_1_0_names_are_not_0_3_methods() {
        for near in [
            "Message/send",
            "message/send ",
            "message/Send",
            "SendMessage",
            "GetTask",
            "tasks/list",
            "",
        ] {
            assert_eq!(from_name(near), None, "{near:?}");
        }
    }
}
