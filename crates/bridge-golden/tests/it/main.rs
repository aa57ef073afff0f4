//! The golden check: every case of `tests/fixtures/manifest.json` through the real codecs.
//!
//! For each case and each revision it has a document in, the document is decoded and
//! re-encoded by that revision's codec and must come back unchanged and lossless. For each
//! direction the manifest lists, the source document is decoded by the source codec and encoded
//! by the target codec; the reported losses must be the manifest's, and where the direction is
//! listed as exact the output must equal the target revision's document. Every encoder output is
//! written to `target/sdk-check/<revision>/<method>/` for `scripts/sdk_check.py`, which hands it
//! to the SDK of that revision.

#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

mod architecture;
mod generation;
mod grpc;
mod properties;
mod rest;
mod segments;

use std::collections::BTreeSet;

use bridge_app::codec::JsonRpcCodec;
use bridge_golden::{
    Case, Failure, canonical, diff, direction, load_json, load_manifest, revision, sdk_check_dir,
    translate, write_sdk_check,
};
use bridge_ir::Revision;
use serde_json::Value;

fn codec(revision: Revision) -> &'static dyn JsonRpcCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03JsonRpc,
        Revision::V1_0 => &bridge_v10::V10JsonRpc,
    }
}

/// What one run found.
#[derive(Default)]
struct Report {
    checks: usize,
    failures: Vec<String>,
}

impl Report {
    fn fail(&mut self, case: &Case, what: &str, detail: impl std::fmt::Display) {
        self.failures.push(format!("{case} [{what}]: {detail}"));
    }
}

/// Runs one manifest case: same-revision round trips, then every listed direction.
fn check(case: &Case, report: &mut Report) {
    let ignore_defaults = case.ignores_proto3_defaults();
    let documents: Vec<(Revision, Value)> = case
        .revisions
        .iter()
        .map(|r| {
            let rev = revision(r).unwrap();
            (rev, load_json(&case.path(rev)).unwrap())
        })
        .collect();
    let document = |rev: Revision| documents.iter().find(|(r, _)| *r == rev).map(|(_, d)| d);

    for (rev, recorded) in &documents {
        report.checks += 1;
        let what = format!("{rev}->{rev}");
        match translate(case, codec(*rev), codec(*rev), recorded) {
            Ok(output) => {
                write_sdk_check(
                    *rev,
                    &case.method,
                    &format!("{}.roundtrip", case.case),
                    &output.document,
                )
                .unwrap();
                if case.checks_roundtrip(*rev)
                    && canonical(&output.document, ignore_defaults)
                        != canonical(recorded, ignore_defaults)
                {
                    report.fail(
                        case,
                        &what,
                        format!("output differs:\n{}", diff(recorded, &output.document)),
                    );
                }
                if !output.losses.is_empty() {
                    report.fail(
                        case,
                        &what,
                        format!("a same-revision hop reported losses {:?}", output.losses),
                    );
                }
            }
            Err(failure) => report.fail(case, &what, failure),
        }
    }

    for (dir, expected_losses) in &case.losses {
        report.checks += 1;
        let (from, to) = direction(dir).unwrap();
        let source = document(from).unwrap();
        let expected: BTreeSet<&str> = expected_losses.iter().map(String::as_str).collect();
        let (actual, output) = match translate(case, codec(from), codec(to), source) {
            Ok(output) => (output.loss_set(), Some(output)),
            Err(Failure::MethodUnsupported) => (BTreeSet::from(["method_unsupported"]), None),
            Err(failure) => {
                report.fail(case, dir, failure);
                continue;
            }
        };
        if actual != expected {
            report.fail(
                case,
                dir,
                format!("losses {actual:?}, manifest says {expected:?}"),
            );
        }
        let Some(output) = output else { continue };
        write_sdk_check(to, &case.method, &case.case, &output.document).unwrap();
        if case.exact.contains(dir) {
            let target = document(to).unwrap();
            if canonical(&output.document, ignore_defaults) != canonical(target, ignore_defaults) {
                report.fail(
                    case,
                    dir,
                    format!(
                        "output differs from the {to} fixture:\n{}",
                        diff(target, &output.document)
                    ),
                );
            }
        }
    }
}

#[test]
fn every_golden_case_translates_as_the_manifest_says() {
    let manifest = load_manifest().unwrap();
    // The JSON-RPC outputs only: `rest/` belongs to the REST check, which runs alongside.
    for rev in Revision::ALL {
        let out = sdk_check_dir().join(rev.as_str());
        if out.exists() {
            std::fs::remove_dir_all(&out).unwrap();
        }
    }
    let mut report = Report::default();
    for case in &manifest.cases {
        check(case, &mut report);
    }
    eprintln!(
        "golden: {} cases, {} checks, {} failures",
        manifest.cases.len(),
        report.checks,
        report.failures.len()
    );
    assert!(
        report.failures.is_empty(),
        "{} golden failures:\n\n{}",
        report.failures.len(),
        report.failures.join("\n\n")
    );
}
