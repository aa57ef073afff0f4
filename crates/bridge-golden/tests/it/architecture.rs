//! The dependency rules of ARCHITECTURE.md, read from `cargo metadata` so they cannot drift.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

/// Each workspace crate's normal (non-dev, non-build) dependencies.
fn dependencies() -> BTreeMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|package| {
            let names = package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect();
            (package["name"].as_str().unwrap().to_owned(), names)
        })
        .collect()
}

fn assert_none(deps: &BTreeMap<String, Vec<String>>, krate: &str, forbidden: &[&str]) {
    let actual = deps.get(krate);
    assert!(actual.is_some(), "{krate} is not in the workspace");
    let actual = actual.unwrap();
    for name in forbidden {
        assert!(
            !actual.iter().any(|d| d == name),
            "{krate} must not depend on {name}; it depends on {actual:?}"
        );
    }
}

const IO: &[&str] = &["tokio", "hyper", "hyper-util", "reqwest", "tokio-rustls"];

#[test]
fn the_ir_does_no_io_and_names_no_other_bridge_crate() {
    let deps = dependencies();
    let ir = &deps["bridge-ir"];
    assert!(ir.iter().all(|d| !d.starts_with("bridge-")), "{ir:?}");
    assert_none(&deps, "bridge-ir", IO);
}

#[test]
fn the_application_names_no_codec_and_no_io_crate() {
    let deps = dependencies();
    assert_none(
        &deps,
        "bridge-app",
        &[
            "bridge-v03",
            "bridge-v10",
            "bridge-server",
            "bridge-upstream",
        ],
    );
    assert_none(&deps, "bridge-app", IO);
}

#[test]
fn the_codecs_never_name_each_other_and_do_no_io() {
    let deps = dependencies();
    assert_none(
        &deps,
        "bridge-v03",
        &["bridge-v10", "bridge-server", "bridge-upstream"],
    );
    assert_none(
        &deps,
        "bridge-v10",
        &["bridge-v03", "bridge-server", "bridge-upstream"],
    );
    assert_none(&deps, "bridge-v03", IO);
    assert_none(&deps, "bridge-v10", IO);
}

#[test]
fn the_adapters_know_the_application_but_not_the_codecs_or_each_other() {
    let deps = dependencies();
    assert_none(
        &deps,
        "bridge-server",
        &["bridge-v03", "bridge-v10", "bridge-upstream", "reqwest"],
    );
    // The client adapter uses hyper-util's client pool, never the inbound server crate.
    assert_none(
        &deps,
        "bridge-upstream",
        &["bridge-v03", "bridge-v10", "bridge-server"],
    );
    // The gRPC adapters take each revision's descriptors and error tables from the binary.
    assert_none(
        &deps,
        "bridge-grpc",
        &[
            "bridge-v03",
            "bridge-v10",
            "bridge-server",
            "bridge-upstream",
        ],
    );
    assert_none(
        &deps,
        "bridge-store-redis",
        &[
            "bridge-v03",
            "bridge-v10",
            "bridge-server",
            "bridge-upstream",
        ],
    );
}
