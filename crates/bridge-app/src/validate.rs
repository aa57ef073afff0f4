//! Checks a call against the upstream's agent card before it is forwarded.
//!
//! An agent that declares what it accepts should not have to see what it does not: the bridge
//! answers those calls itself, in the caller's revision, with the error that revision defines.
//! Each check can be switched off ([`Validation`]) for an agent whose card under-declares.
//!
//! # Media types (A2A 1.0 §3.1.1, ACTS CORE-SEND-004)
//!
//! The rules refuse only what the card plainly excludes:
//! - only a part with an explicit media type is checked (a text part without one is not assumed
//!   to be `text/plain`);
//! - the accepted set is `defaultInputModes` together with every skill's `inputModes`, as a
//!   message does not name the skill it is for;
//! - nothing is enforced when the card declares no modes at all;
//! - media types compare case-insensitively on their essence, parameters ignored, and a declared
//!   `*/*` or `type/*` is a wildcard.
//!
//! # Capabilities
//!
//! A capability the card does not declare `true` is one the agent does not have: streaming
//! calls are refused with `UnsupportedOperation`, push-config calls (and a send that carries a
//! push config) with `PushNotificationNotSupported`. The extended card, when not declared, is
//! refused with the error each revision defines: 1.0 `UnsupportedOperation` (§3.3.4), 0.3
//! `AuthenticatedExtendedCardNotConfigured`.

use bridge_ir::{AgentCard, Call, ErrorCode, Message, Revision, RpcError};

use crate::settings::Validation;

/// The media types a card accepts, or `None` when nothing is to be enforced.
#[must_use]
pub fn accepted_input_modes(card: &AgentCard) -> Option<Vec<String>> {
    let mut modes: Vec<String> = card
        .default_input_modes
        .iter()
        .chain(
            card.skills
                .iter()
                .flat_map(|s| s.input_modes.iter().flatten()),
        )
        .map(|m| essence(m))
        .filter(|m| !m.is_empty())
        .collect();
    modes.sort();
    modes.dedup();
    (!modes.is_empty()).then_some(modes)
}

/// A media type's essence: lower-cased, parameters and whitespace removed.
fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Whether a declared mode (possibly a wildcard) admits `actual`, both reduced to essence.
fn admits(declared: &str, actual: &str) -> bool {
    if declared == "*/*" || declared == actual {
        return true;
    }
    declared
        .strip_suffix("/*")
        .is_some_and(|ty| actual.split('/').next() == Some(ty))
}

fn check_message(message: &Message, accepted: &[String]) -> Result<(), RpcError> {
    for (i, part) in message.parts.iter().enumerate() {
        let Some(media_type) = part.media_type.as_deref() else {
            continue;
        };
        let actual = essence(media_type);
        if !accepted.iter().any(|declared| admits(declared, &actual)) {
            return Err(RpcError::new(
                ErrorCode::ContentTypeNotSupported,
                format!(
                    "message part {i} has media type {media_type:?}, which the agent card does \
                     not declare (defaultInputModes or a skill's inputModes)"
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses `call` when the card says the agent cannot take it.
///
/// # Errors
///
/// The error the caller's revision defines for what was refused, naming it.
pub fn check_call(
    call: &Call,
    card: &AgentCard,
    checks: Validation,
    caller: Revision,
) -> Result<(), RpcError> {
    let capabilities = &card.capabilities;
    let push_declared = capabilities.push_notifications == Some(true);
    match call {
        Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
            if checks.streaming
                && matches!(call, Call::SendStreamingMessage(_))
                && capabilities.streaming != Some(true)
            {
                return Err(not_streaming());
            }
            if checks.push_notifications
                && !push_declared
                && params
                    .configuration
                    .as_ref()
                    .is_some_and(|c| c.push_config.is_some())
            {
                return Err(no_push());
            }
            if checks.input_modes
                && let Some(accepted) = accepted_input_modes(card)
            {
                check_message(&params.message, &accepted)?;
            }
        }
        Call::SubscribeToTask(_) => {
            if checks.streaming && capabilities.streaming != Some(true) {
                return Err(not_streaming());
            }
        }
        Call::CreatePushConfig(_)
        | Call::GetPushConfig(_)
        | Call::ListPushConfigs(_)
        | Call::DeletePushConfig(_) => {
            if checks.push_notifications && !push_declared {
                return Err(no_push());
            }
        }
        Call::GetExtendedCard(_) => {
            if checks.extended_card && capabilities.extended_agent_card != Some(true) {
                return Err(match caller {
                    Revision::V1_0 => RpcError::new(
                        ErrorCode::UnsupportedOperation,
                        "the agent card does not declare an extended agent card",
                    ),
                    Revision::V0_3 => RpcError::new(
                        ErrorCode::ExtendedAgentCardNotConfigured,
                        "the agent card does not declare an authenticated extended card",
                    ),
                });
            }
        }
        Call::GetTask(_) | Call::ListTasks(_) | Call::CancelTask(_) => {}
    }
    Ok(())
}

fn not_streaming() -> RpcError {
    RpcError::new(
        ErrorCode::UnsupportedOperation,
        "the agent card does not declare streaming (capabilities.streaming)",
    )
}

fn no_push() -> RpcError {
    RpcError::new(
        ErrorCode::PushNotificationNotSupported,
        "the agent card does not declare push notifications (capabilities.pushNotifications)",
    )
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]
    use super::*;
    use bridge_ir::{
        AgentCapabilities, AgentSkill, GetExtendedCardParams, Part, Role, SendMessageParams,
        TaskIdParams,
    };

    fn card(default: &[&str], skill: Option<&[&str]>) -> AgentCard {
        AgentCard {
            name: "a".into(),
            description: "d".into(),
            version: "1".into(),
            interfaces: Vec::new(),
            protocol_version: None,
            provider: None,
            icon_url: None,
            documentation_url: None,
            capabilities: AgentCapabilities::default(),
            security_schemes: None,
            security_requirements: None,
            default_input_modes: default.iter().map(|m| (*m).to_owned()).collect(),
            default_output_modes: vec!["text/plain".into()],
            skills: vec![AgentSkill {
                id: "s".into(),
                name: "S".into(),
                description: "s".into(),
                tags: Vec::new(),
                examples: None,
                input_modes: skill.map(|m| m.iter().map(|x| (*x).to_owned()).collect()),
                output_modes: None,
                security_requirements: None,
            }],
            signatures: None,
        }
    }

    fn send(media_type: Option<&str>) -> Call {
        let mut part = Part::text("hi");
        part.media_type = media_type.map(str::to_owned);
        Call::SendMessage(SendMessageParams {
            message: Message::new("m", Role::User, vec![part]),
            configuration: None,
            metadata: None,
            tenant: None,
        })
    }

    fn code(call: &Call, card: &AgentCard, caller: Revision) -> Option<ErrorCode> {
        check_call(call, card, Validation::default(), caller)
            .err()
            .map(|e| e.code)
    }

    #[test]
    fn media_types_follow_the_card_declaration_rules() {
        let v = Revision::V1_0;
        assert_eq!(
            code(
                &send(Some("application/json")),
                &card(&["application/json"], None),
                v
            ),
            None
        );
        let refused = check_call(
            &send(Some("application/x-undeclared")),
            &card(&["text/plain"], None),
            Validation::default(),
            v,
        )
        .unwrap_err();
        assert_eq!(refused.code, ErrorCode::ContentTypeNotSupported);
        assert!(refused.message.contains("application/x-undeclared"));
        assert_eq!(
            code(
                &send(Some("image/png")),
                &card(&["text/plain"], Some(&["image/png"])),
                v
            ),
            None
        );
        assert_eq!(
            code(
                &send(Some("text/plain; charset=utf-8")),
                &card(&["Text/Plain"], None),
                v
            ),
            None
        );
        assert_eq!(
            code(&send(Some("image/png")), &card(&["image/*"], None), v),
            None
        );
        assert!(code(&send(Some("imagex/png")), &card(&["image/*"], None), v).is_some());
        assert_eq!(code(&send(Some("a/b")), &card(&["*/*"], None), v), None);
        assert_eq!(
            code(&send(None), &card(&["application/json"], None), v),
            None
        );
        assert_eq!(code(&send(Some("a/b")), &card(&[], None), v), None);
    }

    #[test]
    fn a_switched_off_check_lets_the_call_through() {
        let checks = Validation {
            input_modes: false,
            ..Validation::default()
        };
        assert!(
            check_call(
                &send(Some("a/b")),
                &card(&["text/plain"], None),
                checks,
                Revision::V0_3
            )
            .is_ok()
        );
    }

    #[test]
    fn streaming_and_extended_card_follow_the_capabilities() {
        let mut c = card(&[], None);
        let subscribe = Call::SubscribeToTask(TaskIdParams {
            id: "t".into(),
            metadata: None,
            tenant: None,
        });
        assert_eq!(
            code(&subscribe, &c, Revision::V1_0),
            Some(ErrorCode::UnsupportedOperation)
        );
        c.capabilities.streaming = Some(true);
        assert_eq!(code(&subscribe, &c, Revision::V1_0), None);
        let extended = Call::GetExtendedCard(GetExtendedCardParams::default());
        assert_eq!(
            code(&extended, &c, Revision::V1_0),
            Some(ErrorCode::UnsupportedOperation)
        );
        assert_eq!(
            code(&extended, &c, Revision::V0_3),
            Some(ErrorCode::ExtendedAgentCardNotConfigured)
        );
        c.capabilities.extended_agent_card = Some(true);
        assert_eq!(code(&extended, &c, Revision::V0_3), None);
    }
}
