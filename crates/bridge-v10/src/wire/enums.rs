//! The 1.0 enums on the wire: `Role` and `TaskState` (wire diff §3.2).
//!
//! `ProtoJSON` writes an enum as its value name and reads either the name or the number. Both
//! tables are a `match` each way, proved in both directions by the tests below.
//!
//! # Why an unknown name is an error, not `UNSPECIFIED`
//!
//! A 1.0 peer parsing with `ignore_unknown_fields` (the Python SDK does) maps an unknown enum
//! string to 0, so a 0.3-shaped `"role": "user"` silently becomes `ROLE_UNSPECIFIED`. The bridge
//! sits exactly where such a value would come from a confused client or agent, so it refuses it
//! and names the field instead of forwarding a message whose sender nobody knows.
//!
//! # Why `TASK_STATE_CANCELLED` is accepted
//!
//! The 0.3 proto spelled the state with a double L (`TASK_STATE_CANCELLED`, 0.3 REST and gRPC);
//! 1.0 renamed it `TASK_STATE_CANCELED` with the same number. A producer still using the old
//! spelling means the same state, so the decoder reads it and the encoder writes the 1.0 name.

use std::fmt;

use bridge_ir::{Role, TaskState};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The 1.0 name and number of a role.
pub(crate) const fn role_name(role: Role) -> &'static str {
    match role {
        Role::Unspecified => "ROLE_UNSPECIFIED",
        Role::User => "ROLE_USER",
        Role::Agent => "ROLE_AGENT",
    }
}

/// The role a 1.0 name names.
pub(crate) fn role_from_name(name: &str) -> Option<Role> {
    match name {
        "ROLE_UNSPECIFIED" => Some(Role::Unspecified),
        "ROLE_USER" => Some(Role::User),
        "ROLE_AGENT" => Some(Role::Agent),
        _ => None,
    }
}

/// The role a 1.0 enum number names.
pub(crate) const fn role_from_number(number: i64) -> Option<Role> {
    match number {
        0 => Some(Role::Unspecified),
        1 => Some(Role::User),
        2 => Some(Role::Agent),
        _ => None,
    }
}

/// The 1.0 name of a task state.
pub(crate) const fn state_name(state: TaskState) -> &'static str {
    match state {
        TaskState::Unspecified => "TASK_STATE_UNSPECIFIED",
        TaskState::Submitted => "TASK_STATE_SUBMITTED",
        TaskState::Working => "TASK_STATE_WORKING",
        TaskState::Completed => "TASK_STATE_COMPLETED",
        TaskState::Failed => "TASK_STATE_FAILED",
        TaskState::Canceled => "TASK_STATE_CANCELED",
        TaskState::InputRequired => "TASK_STATE_INPUT_REQUIRED",
        TaskState::Rejected => "TASK_STATE_REJECTED",
        TaskState::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
    }
}

/// The task state a 1.0 name names (also the 0.3-proto `TASK_STATE_CANCELLED`).
pub(crate) fn state_from_name(name: &str) -> Option<TaskState> {
    match name {
        "TASK_STATE_UNSPECIFIED" => Some(TaskState::Unspecified),
        "TASK_STATE_SUBMITTED" => Some(TaskState::Submitted),
        "TASK_STATE_WORKING" => Some(TaskState::Working),
        "TASK_STATE_COMPLETED" => Some(TaskState::Completed),
        "TASK_STATE_FAILED" => Some(TaskState::Failed),
        "TASK_STATE_CANCELED" | "TASK_STATE_CANCELLED" => Some(TaskState::Canceled),
        "TASK_STATE_INPUT_REQUIRED" => Some(TaskState::InputRequired),
        "TASK_STATE_REJECTED" => Some(TaskState::Rejected),
        "TASK_STATE_AUTH_REQUIRED" => Some(TaskState::AuthRequired),
        _ => None,
    }
}

/// The task state a 1.0 enum number names.
pub(crate) const fn state_from_number(number: i64) -> Option<TaskState> {
    match number {
        0 => Some(TaskState::Unspecified),
        1 => Some(TaskState::Submitted),
        2 => Some(TaskState::Working),
        3 => Some(TaskState::Completed),
        4 => Some(TaskState::Failed),
        5 => Some(TaskState::Canceled),
        6 => Some(TaskState::InputRequired),
        7 => Some(TaskState::Rejected),
        8 => Some(TaskState::AuthRequired),
        _ => None,
    }
}

/// A role as the 1.0 wire carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WireRole(pub(crate) Role);

/// A task state as the 1.0 wire carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WireState(pub(crate) TaskState);

impl Serialize for WireRole {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(role_name(self.0))
    }
}

impl Serialize for WireState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(state_name(self.0))
    }
}

/// Reads an enum given by name or number, with `what` naming it in errors.
struct EnumVisitor<T> {
    what: &'static str,
    expected: &'static str,
    from_name: fn(&str) -> Option<T>,
    from_number: fn(i64) -> Option<T>,
}

impl<T> Visitor<'_> for EnumVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a 1.0 {} name ({}) or number", self.what, self.expected)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.from_name)(v).ok_or_else(|| {
            E::custom(format!(
                "{v:?} is not a 1.0 {} (expected {})",
                self.what, self.expected
            ))
        })
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        (self.from_number)(v)
            .ok_or_else(|| E::custom(format!("{v} is not a 1.0 {} number", self.what)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        i64::try_from(v)
            .ok()
            .and_then(self.from_number)
            .ok_or_else(|| E::custom(format!("{v} is not a 1.0 {} number", self.what)))
    }
}

impl<'de> Deserialize<'de> for WireRole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(EnumVisitor {
                what: "role",
                expected: "ROLE_USER, ROLE_AGENT or ROLE_UNSPECIFIED",
                from_name: role_from_name,
                from_number: role_from_number,
            })
            .map(Self)
    }
}

impl<'de> Deserialize<'de> for WireState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(EnumVisitor {
                what: "task state",
                expected: "a TASK_STATE_* name",
                from_name: state_from_name,
                from_number: state_from_number,
            })
            .map(Self)
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests assert on fallible calls")]

    use bridge_ir::{Role, TaskState};

    use super::{
        WireRole, WireState, role_from_name, role_from_number, role_name, state_from_name,
        state_from_number, state_name,
    };

    /// Every role with its 1.0 name and number (`lf.a2a.v1.Role`).
    const ROLES: &[(&str, i64, Role)] = &[
        ("ROLE_UNSPECIFIED", 0, Role::Unspecified),
        ("ROLE_USER", 1, Role::User),
        ("ROLE_AGENT", 2, Role::Agent),
    ];

    /// Every task state with its 1.0 name and number (`lf.a2a.v1.TaskState`).
    const STATES: &[(&str, i64, TaskState)] = &[
        ("TASK_STATE_UNSPECIFIED", 0, TaskState::Unspecified),
        ("TASK_STATE_SUBMITTED", 1, TaskState::Submitted),
        ("TASK_STATE_WORKING", 2, TaskState::Working),
        ("TASK_STATE_COMPLETED", 3, TaskState::Completed),
        ("TASK_STATE_FAILED", 4, TaskState::Failed),
        ("TASK_STATE_CANCELED", 5, TaskState::Canceled),
        ("TASK_STATE_INPUT_REQUIRED", 6, TaskState::InputRequired),
        ("TASK_STATE_REJECTED", 7, TaskState::Rejected),
        ("TASK_STATE_AUTH_REQUIRED", 8, TaskState::AuthRequired),
    ];

    #[test]
    fn every_role_name_and_number_finds_its_variant_and_back() {
        for &(name, number, role) in ROLES {
            assert_eq!(role_from_name(name), Some(role));
            assert_eq!(role_from_number(number), Some(role));
            assert_eq!(role_name(role), name);
        }
        for role in Role::ALL {
            assert!(ROLES.iter().any(|&(_, _, r)| r == role), "{role:?}");
        }
    }

    #[test]
    fn every_state_name_and_number_finds_its_variant_and_back() {
        for &(name, number, state) in STATES {
            assert_eq!(state_from_name(name), Some(state));
            assert_eq!(state_from_number(number), Some(state));
            assert_eq!(state_name(state), name);
        }
        for state in TaskState::ALL {
            assert!(STATES.iter().any(|&(_, _, s)| s == state), "{state:?}");
        }
    }

    #[test]
    fn the_0_3_proto_spelling_of_canceled_decodes_and_encodes_as_the_1_0_spelling() {
        let state: WireState = serde_json::from_str("\"TASK_STATE_CANCELLED\"").unwrap();
        assert_eq!(state.0, TaskState::Canceled);
        assert_eq!(
            serde_json::to_string(&state).unwrap(),
            "\"TASK_STATE_CANCELED\""
        );
    }

    #[test]
    fn enums_decode_from_numbers_as_protojson_allows() {
        let role: WireRole = serde_json::from_str("2").unwrap();
        assert_eq!(role.0, Role::Agent);
        let state: WireState = serde_json::from_str("6").unwrap();
        assert_eq!(state.0, TaskState::InputRequired);
        assert!(serde_json::from_str::<WireState>("9").is_err());
        assert!(serde_json::from_str::<WireRole>("-1").is_err());
    }

    #[test]
    fn a_0_3_lower_case_enum_is_refused_naming_the_value() {
        let error = serde_json::from_str::<WireRole>("\"user\"").unwrap_err();
        assert!(
            error.to_string().contains("\"user\" is not a 1.0 role"),
            "{error}"
        );
        let error = serde_json::from_str::<WireState>("\"completed\"").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("\"completed\" is not a 1.0 task state"),
            "{error}"
        );
    }
}
