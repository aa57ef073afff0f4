//! The shipped `bridge.toml` and every TOML example (a fenced block marked `toml`) in
//! `docs/configuration.md` parse.

use std::path::{Path, PathBuf};

use a2a_bridge::config::Config;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fenced `toml` blocks of a Markdown text, with the line each starts on.
fn toml_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (number, line) in markdown.lines().enumerate() {
        match &mut current {
            None if line.trim_start().starts_with("```toml") => {
                current = Some((number + 2, String::new()));
            }
            Some(_) if line.trim_start().starts_with("```") => blocks.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn every_toml_example_in_the_configuration_guide_parses() {
    let path = root().join("docs/configuration.md");
    let markdown = std::fs::read_to_string(&path).unwrap();
    let blocks = toml_blocks(&markdown);
    assert!(blocks.len() >= 5, "only {} ```toml blocks", blocks.len());
    for (line, text) in blocks {
        let config = Config::parse(&path, &text)
            .unwrap_or_else(|e| panic!("the example at line {line} does not parse: {e}\n{text}"));
        // An example that names an agent is a whole configuration: it must resolve too.
        if config.upstream.url.is_some() || !config.routes.is_empty() {
            config.resolve("example").unwrap_or_else(|e| {
                panic!("the example at line {line} does not resolve: {e}\n{text}")
            });
        }
    }
}

#[test]
fn the_shipped_bridge_toml_resolves() {
    let path = root().join("bridge.toml");
    Config::load(&path).unwrap().resolve("bridge.toml").unwrap();
}
