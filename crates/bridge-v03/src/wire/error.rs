//! 0.3 JSON-RPC errors (wire diff §5).
//!
//! A 0.3 error is the plain JSON-RPC `{"code","message","data"?}`, `data` free-form. The IR's
//! `data` is exactly that value; its `details` (the 1.0 `Any` objects beyond the `ErrorInfo`)
//! have no 0.3 home and are dropped with an `ErrorDetailDropped` loss.
//!
//! # Why -32008 and -32009 become -32603
//!
//! `ExtensionSupportRequiredError` and `VersionNotSupportedError` do not exist in 0.3, so a 0.3
//! client could only treat them as unknown server errors. The 1.0 Python SDK's 0.3 adapter
//! rewrites every code 0.3 does not define to -32603 Internal error and keeps the message and
//! `data` as they were; the bridge does exactly the same (so its output matches what that SDK
//! sends a 0.3 client) and reports `ErrorCodeRemapped`. Codes outside the A2A and JSON-RPC tables
//! (`ErrorCode::Other`) are application codes JSON-RPC allows, and pass unchanged.

use bridge_ir::{ErrorCode, LossKind, RpcError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::path::{Losses, Path};

/// A 0.3 `JSONRPCError`.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct WireError {
    code: i64,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

impl WireError {
    /// Moves the error into the IR.
    pub(crate) fn into_ir(self) -> RpcError {
        RpcError {
            code: ErrorCode::from_code(self.code),
            message: self.message,
            data: self.data,
            details: Vec::new(),
        }
    }

    /// Moves an IR error into its 0.3 form.
    pub(crate) fn from_ir(error: RpcError, losses: &mut Losses) -> Self {
        let at = Path::Root("error");
        let (code, message) = if error.code.exists_in_0_3() {
            (error.code.code(), error.message)
        } else {
            losses.push(LossKind::ErrorCodeRemapped, &at.field("code"));
            (ErrorCode::InternalError.code(), error.message)
        };
        if !error.details.is_empty() {
            losses.push(LossKind::ErrorDetailDropped, &at.field("details"));
        }
        Self {
            code,
            message,
            data: error.data,
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use bridge_ir::{ErrorCode, LossKind, RpcError};
    use serde_json::json;

    use super::WireError;
    use crate::path::Losses;

    fn encode(error: RpcError) -> (serde_json::Value, Vec<(LossKind, String)>) {
        let mut losses = Losses::default();
        let wire = WireError::from_ir(error, &mut losses);
        let losses = losses
            .into_vec()
            .into_iter()
            .map(|l| (l.kind, l.at))
            .collect();
        (serde_json::to_value(wire).unwrap(), losses)
    }

    #[test]
    fn every_code_0_3_defines_passes_unchanged_with_its_data() {
        for code in ErrorCode::NAMED.into_iter().filter(|c| c.exists_in_0_3()) {
            let mut error = RpcError::new(code, "m");
            error.data = Some(json!({"x":[1]}));
            let (wire, losses) = encode(error.clone());
            assert_eq!(
                wire,
                json!({"code": code.code(), "message": "m", "data": {"x":[1]}})
            );
            assert!(losses.is_empty());
            let back: WireError = serde_json::from_value(wire).unwrap();
            assert_eq!(back.into_ir(), error);
        }
    }

    #[test]
    fn the_1_0_only_codes_become_internal_error_with_message_and_data_kept() {
        let (wire, losses) = encode(RpcError::new(ErrorCode::VersionNotSupported, "want 1.0"));
        assert_eq!(wire, json!({"code": -32603, "message": "want 1.0"}));
        assert_eq!(
            losses,
            [(LossKind::ErrorCodeRemapped, "error.code".to_owned())]
        );
        let mut extension = RpcError::new(ErrorCode::ExtensionSupportRequired, "ext");
        extension.data = Some(json!({"extension": "urn:x"}));
        let (wire, _) = encode(extension);
        assert_eq!(
            wire,
            json!({"code": -32603, "message": "ext", "data": {"extension": "urn:x"}})
        );
    }

    #[test]
    fn details_are_dropped_with_a_loss() {
        let mut error = RpcError::new(ErrorCode::InvalidParams, "bad");
        error
            .details
            .push(json!({"@type":"type.googleapis.com/google.rpc.BadRequest"}));
        let (wire, losses) = encode(error);
        assert_eq!(wire, json!({"code": -32602, "message": "bad"}));
        assert_eq!(
            losses,
            [(LossKind::ErrorDetailDropped, "error.details".to_owned())]
        );
    }

    #[test]
    fn an_unknown_code_is_kept() {
        let (wire, losses) = encode(RpcError::new(ErrorCode::Other(-31000), "app"));
        assert_eq!(wire["code"], -31000);
        assert!(losses.is_empty());
    }
}
