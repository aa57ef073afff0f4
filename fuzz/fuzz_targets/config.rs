//! The configuration reader of the binary (`a2a_bridge::config`) on arbitrary `bridge.toml`
//! text: `Config::parse`, then `Config::resolve` of what parses.
//!
//! Checked: nothing panics or overflows the stack; a parse error points at a line and column
//! inside the text; a file that parses parses to the same configuration with a line end added
//! (a TOML document is the same document followed by a newline); resolving is a function of the
//! configuration (the same `Resolved`, or the same error, twice).
#![no_main]

use std::path::Path;

use a2a_bridge::config::{Config, ConfigError};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("bridge.toml");
    let config = match Config::parse(path, text) {
        Ok(config) => config,
        Err(ConfigError::Parse { line, column, .. }) => {
            let lines = text.split('\n').count();
            assert!(
                (1..=lines).contains(&line) && column >= 1,
                "a parse error at {line}:{column} in a text of {lines} lines"
            );
            return;
        }
        Err(other) => panic!("parsing failed without a position: {other}"),
    };
    let with_newline = format!("{text}\n");
    match Config::parse(path, &with_newline) {
        Ok(again) => assert_eq!(again, config, "a line end changed the configuration"),
        Err(error) => panic!("a line end made the file fail: {error}"),
    }
    let resolved = config.resolve("bridge.toml");
    let again = config.resolve("bridge.toml");
    match (resolved, again) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "resolving twice differs"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "resolving twice differs"),
        (a, b) => panic!("resolving twice differs: {a:?} / {b:?}"),
    }
});
