//! The recorded golden fixtures (`tests/fixtures/<method>/<case>.0.3.json`), run through the
//! 0.3 codec alone: every 0.3 document the manifest marks as round-tripping in 0.3 must decode,
//! and re-encode to the same document (key order ignored) without a loss.
//!
//! The cross-revision half of the fixtures (0.3 → 1.0 and back) needs the 1.0 codec too and is
//! run by the workspace's golden suite, not here: this crate never names the other revision.

use std::path::{Path, PathBuf};

use bridge_app::codec::JsonRpcCodec;
use bridge_ir::Method;
use bridge_v03::V03JsonRpc;
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn method_of_dir(dir: &str) -> Option<Method> {
    Method::ALL.into_iter().find(|m| m.label() == dir)
}

/// Decodes and re-encodes the revision-specific fragment of one fixture document.
fn round_trip(
    kind: &str,
    dir: &str,
    document: &Value,
) -> Result<(Value, Vec<bridge_ir::Loss>), String> {
    let codec = V03JsonRpc;
    let bytes = |v: &Value| serde_json::to_vec(v).map_err(|e| e.to_string());
    let (encoded, losses, expected) = match kind {
        "request" => {
            let name = document["method"].as_str().ok_or("no method")?;
            let method = codec
                .method_from_name(name)
                .ok_or_else(|| format!("unknown {name}"))?;
            let params = document.get("params").map(bytes).transpose()?;
            let call = codec
                .decode_params(method, params.as_deref())
                .map_err(|e| e.message)?;
            let out = codec.encode_params(call).map_err(|e| e.to_string())?;
            // An empty fragment means "no params", as for the extended card.
            let expected = document.get("params").cloned().unwrap_or(Value::Null);
            let value = if out.value.is_empty() {
                b"null".to_vec()
            } else {
                out.value
            };
            (value, out.losses, expected)
        }
        "response" | "event" => {
            let method = method_of_dir(dir).ok_or_else(|| format!("no method for {dir}"))?;
            let result = bytes(&document["result"])?;
            let out = if kind == "event" {
                let event = codec.decode_event(&result).map_err(|e| e.message)?;
                codec.encode_event(event)
            } else {
                let reply = codec
                    .decode_result(method, &result)
                    .map_err(|e| e.message)?;
                codec
                    .encode_result(method, reply)
                    .map_err(|e| e.to_string())?
            };
            (out.value, out.losses, document["result"].clone())
        }
        "error" => {
            let error = codec
                .decode_error(&bytes(&document["error"])?)
                .map_err(|e| e.message)?;
            let out = codec.encode_error(error);
            (out.value, out.losses, document["error"].clone())
        }
        "card" => {
            let card = codec
                .decode_card(&bytes(document)?)
                .map_err(|e| e.message)?;
            let out = codec.encode_card(card).map_err(|e| e.to_string())?;
            (out.value, out.losses, document.clone())
        }
        other => return Err(format!("unknown fixture kind {other}")),
    };
    let encoded: Value = serde_json::from_slice(&encoded).map_err(|e| e.to_string())?;
    if encoded != expected {
        return Err(format!(
            "re-encoded differently:\n{encoded:#}\nexpected\n{expected:#}"
        ));
    }
    Ok((encoded, losses))
}

#[test]
fn every_0_3_fixture_that_round_trips_in_0_3_re_encodes_unchanged_and_without_loss() -> TestResult {
    let root = fixtures();
    let manifest_path = root.join("manifest.json");
    if !manifest_path.exists() {
        // The fixtures are recorded by scripts/record_fixtures.sh; a checkout without them has
        // nothing to check here.
        return Ok(());
    }
    let manifest: Value = serde_json::from_slice(&std::fs::read(manifest_path)?)?;
    let cases = manifest["cases"]
        .as_array()
        .ok_or("manifest has no cases")?;
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases {
        let in_0_3 = case["roundtrip"]
            .as_array()
            .is_some_and(|r| r.iter().any(|v| v == "0.3"));
        let (Some(dir), Some(name), Some(kind)) = (
            case["method"].as_str(),
            case["case"].as_str(),
            case["kind"].as_str(),
        ) else {
            return Err(format!("malformed case {case}").into());
        };
        let file = root.join(dir).join(format!("{name}.0.3.json"));
        if !in_0_3 || !file.exists() {
            continue;
        }
        let document: Value = serde_json::from_slice(&std::fs::read(&file)?)?;
        checked += 1;
        match round_trip(kind, dir, &document) {
            Ok((_, losses)) if losses.is_empty() => {}
            Ok((_, losses)) => failures.push(format!("{dir}/{name}: losses {losses:?}")),
            Err(error) => failures.push(format!("{dir}/{name}: {error}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 0, "the manifest lists 0.3 round trips");
    Ok(())
}
