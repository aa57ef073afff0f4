use std::path::{Path, PathBuf};
use std::sync::Arc;

use a2a_bridge::cli::{Cli, Source};
use a2a_bridge::config::{Config, ConfigError};
use a2a_bridge::runtime::Wiring;
use clap::Parser as _;

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bridge.toml")
}

/// A file in the temp directory, unique to this test, holding `text`.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("a2a-bridge-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_shipped_bridge_toml_parses_and_fronts_the_demo_agent() {
    let config = Config::load(&shipped()).unwrap();
    let resolved = config.resolve("bridge.toml").unwrap();
    assert_eq!(resolved.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(resolved.settings.public_url, "http://127.0.0.1:8080");
    assert!(resolved.demo.enabled);
    assert_eq!(resolved.demo.listen.to_string(), "127.0.0.1:9999");
    assert_eq!(resolved.settings.upstream.url, "http://127.0.0.1:9999");
    assert_eq!(resolved.settings.upstream.revision, None);
    assert_eq!(resolved.server.max_body, 4 * 1024 * 1024);
    assert_eq!(
        resolved.settings.timeouts.stream_idle,
        a2a_bridge::config::TimeoutsSection::default().stream_idle
    );
}

#[test]
fn a_misspelt_key_is_reported_with_its_file_and_line() {
    let path = temp_file(
        "misspelt.toml",
        "listen = \"127.0.0.1:8080\"\n\n[server]\nkeepalive_intervall = \"5s\"\n",
    );
    let error = Config::load(&path).unwrap_err();
    let ConfigError::Parse { line, message, .. } = &error else {
        panic!("expected a parse error, got {error:?}");
    };
    assert_eq!(*line, 4);
    assert!(message.contains("unknown field"), "{message}");
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!("{}:4:", path.display())),
        "{shown}"
    );
}

#[test]
fn a_bad_revision_is_reported_at_its_line() {
    let path = temp_file(
        "revision.toml",
        "[upstream]\nurl = \"http://a\"\nrevision = \"2.0\"\n",
    );
    let ConfigError::Parse { line, .. } = Config::load(&path).unwrap_err() else {
        panic!("expected a parse error");
    };
    assert_eq!(line, 3);
}

#[test]
fn the_sidecar_form_needs_no_file() {
    let cli = Cli::try_parse_from([
        "a2a-bridge",
        "--listen",
        "127.0.0.1:8081",
        "--upstream",
        "http://127.0.0.1:9998",
    ])
    .unwrap();
    assert_eq!(cli.source(), Source::CommandLine);
    let resolved = a2a_bridge::app::load(&cli).unwrap();
    assert_eq!(resolved.listen.to_string(), "127.0.0.1:8081");
    assert_eq!(resolved.settings.public_url, "http://127.0.0.1:8081");
    assert_eq!(resolved.settings.upstream.url, "http://127.0.0.1:9998");
    assert!(!resolved.demo.enabled);
}

#[test]
fn no_arguments_read_bridge_toml_in_the_working_directory() {
    let cli = Cli::try_parse_from(["a2a-bridge"]).unwrap();
    assert_eq!(cli.source(), Source::File(PathBuf::from("bridge.toml")));
}

#[test]
fn flags_override_the_file() {
    let cli = Cli::try_parse_from([
        "a2a-bridge",
        "--config",
        shipped().to_str().unwrap(),
        "--public-url",
        "https://bridge.example",
    ])
    .unwrap();
    let resolved = a2a_bridge::app::load(&cli).unwrap();
    assert_eq!(resolved.settings.public_url, "https://bridge.example");
    assert_eq!(resolved.settings.upstream.url, "http://127.0.0.1:9999");
}

#[test]
fn a_reload_keeps_the_client_and_card_cache_when_the_upstream_is_unchanged() {
    let first = Config::load(&shipped()).unwrap().resolve("a").unwrap();
    let (wiring, _, fresh) = Wiring::build(first.clone(), None).unwrap();
    assert!(fresh);

    let mut limits_only = first.clone();
    limits_only.settings.limits.upstream_body = 1;
    let (next, _, fresh) = Wiring::build(limits_only, Some(&wiring)).unwrap();
    assert!(!fresh);
    assert!(Arc::ptr_eq(&next.upstream, &wiring.upstream));
    assert!(Arc::ptr_eq(&next.cards, &wiring.cards));

    let mut other_agent = first;
    other_agent.settings.upstream.url = "http://127.0.0.1:9".to_owned();
    other_agent.client.connect_timeout = std::time::Duration::from_secs(1);
    let (next, _, fresh) = Wiring::build(other_agent, Some(&wiring)).unwrap();
    assert!(fresh);
    assert!(!Arc::ptr_eq(&next.upstream, &wiring.upstream));
    assert!(!Arc::ptr_eq(&next.cards, &wiring.cards));
}

#[test]
fn the_shipped_file_states_every_default_but_the_demo() {
    let mut shipped = Config::load(&shipped()).unwrap();
    shipped.upstream.url = None;
    shipped.demo = Config::default().demo;
    assert_eq!(shipped, Config::default());
}
