//! `a2a-bridge translate` over the golden fixtures: for every case the manifest marks exact in
//! a direction, translating the source document produces the target document (canonically
//! equal) and reports the manifest's losses; and the command itself reads stdin, writes stdout
//! and lists losses on stderr.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::process::{Command, Stdio};

use a2a_bridge::translate::{TranslateError, translate};
use bridge_golden::{Kind, canonical, direction, load_json, load_manifest};
use bridge_ir::Revision;

#[test]
fn translate_reproduces_every_exact_golden_fixture() {
    let manifest = load_manifest().unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in &manifest.cases {
        for exact in &case.exact {
            let (from, to) = direction(exact).unwrap();
            let source = std::fs::read(case.path(from)).unwrap();
            let expected = load_json(&case.path(to)).unwrap();
            // Requests, errors and cards say what they are; a result needs its method.
            let method =
                matches!(case.kind, Kind::Response | Kind::Event).then_some(case.method.as_str());
            match translate(&source, to, method) {
                Ok(out) => {
                    let ignore = case.ignores_proto3_defaults();
                    if out.from != from {
                        failures.push(format!("{case} {exact}: read as {}", out.from));
                    } else if canonical(&out.document, ignore) != canonical(&expected, ignore) {
                        failures.push(format!(
                            "{case} {exact}: got {}\nwant {}",
                            out.document, expected
                        ));
                    }
                    let losses: BTreeSet<&str> =
                        out.losses.iter().map(|l| l.kind.label()).collect();
                    let want: BTreeSet<&str> = case
                        .losses
                        .get(exact)
                        .map(|l| l.iter().map(String::as_str).collect())
                        .unwrap_or_default();
                    if losses != want {
                        failures.push(format!(
                            "{case} {exact}: losses {losses:?}, manifest {want:?}"
                        ));
                    }
                }
                Err(error) => failures.push(format!("{case} {exact}: {error}")),
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} exact directions");
    assert!(
        failures.is_empty(),
        "{} of {checked} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_result_without_its_method_asks_for_one() {
    let task = br#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}}"#;
    let error = translate(task, Revision::V1_0, None).unwrap_err();
    assert!(
        matches!(
            error,
            TranslateError::NeedsMethod {
                revision: Revision::V0_3,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("--method"), "{error}");
    let got = translate(task, Revision::V1_0, Some("tasks/get")).unwrap();
    assert_eq!(
        got.document["result"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
}

#[test]
fn a_status_update_needs_no_method_and_gets_its_final_flag_in_0_3() {
    let event = br#"{"jsonrpc":"2.0","id":"s","result":{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}}"#;
    let got = translate(event, Revision::V0_3, None).unwrap();
    assert_eq!(got.from, Revision::V1_0);
    assert_eq!(got.document["result"]["kind"], "status-update");
    assert_eq!(got.document["result"]["final"], true);
}

fn run(args: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-bridge"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn the_command_writes_the_other_revision_and_lists_losses_on_stderr() {
    let request =
        br#"{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t-1","tenant":"acme"}}"#;
    let (code, stdout, stderr) = run(&["translate", "--to", "0.3"], request);
    assert_eq!(code, Some(0), "{stderr}");
    let out: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["method"], "tasks/get");
    assert_eq!(out["id"], 7);
    assert!(stderr.lines().any(|l| l.starts_with("loss: ")), "{stderr}");

    let (code, _, stderr) = run(
        &["translate", "--to", "1.0"],
        br#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}}"#,
    );
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--method"), "{stderr}");
}

#[test]
fn the_command_translates_a_card_and_drops_its_signatures() {
    let card =
        std::fs::read(bridge_golden::fixtures_dir().join("agent_card/signed.1.0.json")).unwrap();
    let (code, stdout, stderr) = run(&["translate", "--to", "0.3"], &card);
    assert_eq!(code, Some(0), "{stderr}");
    let out: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(out.get("signatures").is_none(), "{out}");
    assert!(out["protocolVersion"].is_string(), "{out}");
    assert!(stderr.contains("signature_dropped"), "{stderr}");
}
