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

mod rest {
    use a2a_bridge::translate::{Options, TranslateError, translate_with};
    use bridge_ir::{Binding, Revision};
    use serde_json::{Value, json};

    fn options(binding: Binding, to_binding: Binding) -> Options {
        Options {
            binding,
            to_binding,
            ..Options::default()
        }
    }

    fn run(input: &Value, to: Revision, options: &Options) -> Result<Value, TranslateError> {
        translate_with(input.to_string().as_bytes(), to, options).map(|t| t.document)
    }

    #[test]
    fn a_0_3_rest_request_becomes_the_1_0_rest_request_and_the_0_3_json_rpc_one() {
        let send = json!({"method": "POST", "path": "/v1/message:send", "query": null, "body": {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": "hi"}]},
            "configuration": {"blocking": true}
        }});
        let out = translate_with(
            send.to_string().as_bytes(),
            Revision::V1_0,
            &options(Binding::HttpJson, Binding::HttpJson),
        )
        .unwrap();
        assert_eq!(out.from, Revision::V0_3, "the /v1 path says 0.3");
        assert_eq!(out.document["method"], "POST");
        assert_eq!(out.document["path"], "/message:send");
        assert_eq!(out.document["body"]["message"]["parts"][0]["text"], "hi");
        assert!(
            out.document["body"]["configuration"]
                .get("returnImmediately")
                .is_none()
        );

        let rpc = run(
            &send,
            Revision::V0_3,
            &options(Binding::HttpJson, Binding::JsonRpc),
        )
        .unwrap();
        assert_eq!(rpc["method"], "message/send");
        assert_eq!(rpc["params"]["message"]["kind"], "message");
        assert_eq!(rpc["params"]["message"]["parts"][0]["kind"], "text");
        assert_eq!(rpc["params"]["message"]["role"], "user");
    }

    #[test]
    fn a_json_rpc_request_becomes_the_rest_path_query_and_body() {
        let get = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
                         "params": {"id": "t 1", "historyLength": 2}});
        let out = run(
            &get,
            Revision::V1_0,
            &options(Binding::JsonRpc, Binding::HttpJson),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"method": "GET", "path": "/tasks/t%201", "query": "historyLength=2", "body": null})
        );
        let back = run(
            &out,
            Revision::V0_3,
            &options(Binding::HttpJson, Binding::JsonRpc),
        )
        .unwrap();
        assert_eq!(back["method"], "tasks/get");
        assert_eq!(back["params"], json!({"id": "t 1", "historyLength": 2}));
    }

    #[test]
    fn answers_errors_and_events_need_their_revision_when_the_body_does_not_say() {
        let task = json!({"status": 200, "body": {"id": "t", "contextId": "c",
                          "status": {"state": "TASK_STATE_CANCELLED"}}});
        let mut from_0_3 = options(Binding::HttpJson, Binding::HttpJson);
        from_0_3.from = Some(Revision::V0_3);
        // A result does not say which call it answers.
        assert!(matches!(
            run(&task, Revision::V1_0, &from_0_3),
            Err(TranslateError::NeedsMethod { .. })
        ));
        from_0_3.method = Some("GetTask".to_owned());
        let out = run(&task, Revision::V1_0, &from_0_3).unwrap();
        assert_eq!(out["status"], 200);
        assert_eq!(out["body"]["status"]["state"], "TASK_STATE_CANCELED");

        // A 0.3 REST error carries no code: its status says it.
        let error = json!({"status": 409, "body": {"message": "Task cannot be canceled"}});
        let out = run(&error, Revision::V1_0, &from_0_3).unwrap();
        assert_eq!(out["status"], 400, "{out}");
        assert_eq!(
            out["body"]["error"]["details"][0]["reason"],
            "TASK_NOT_CANCELABLE"
        );
        let mut to_rpc = from_0_3.clone();
        to_rpc.to_binding = Binding::JsonRpc;
        let out = run(&error, Revision::V1_0, &to_rpc).unwrap();
        assert_eq!(out["error"]["code"], -32002, "{out}");

        let event = json!({"data": {"statusUpdate": {"taskId": "t", "contextId": "c",
                           "status": {"state": "TASK_STATE_WORKING"}}}});
        let out = run(&event, Revision::V0_3, &to_rpc).unwrap();
        assert_eq!(out["result"]["kind"], "status-update", "{out}");
        assert_eq!(out["result"]["final"], false, "{out}");
    }

    #[test]
    fn a_path_no_revision_serves_is_refused_naming_it() {
        let bad = json!({"method": "PUT", "path": "/message:send", "query": null, "body": {}});
        let error = run(
            &bad,
            Revision::V0_3,
            &options(Binding::HttpJson, Binding::JsonRpc),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the document is not an A2A HTTP+JSON exchange: PUT /message:send is no A2A HTTP+JSON operation"
        );
    }
}
