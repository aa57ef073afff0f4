//! The built binary, run as a process.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::config::temp_file;

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_a2a-bridge"))
}

/// A loopback port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn help_lists_the_flags() {
    let output = binary().arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for flag in [
        "--config",
        "--listen",
        "--upstream",
        "--public-url",
        "--log-format",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}

#[test]
fn a_bad_file_stops_the_start_with_its_line() {
    let path = temp_file("bad-start.toml", "[upstream]\nurl = 5\n");
    let output = binary().arg("--config").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let log = String::from_utf8(output.stderr).unwrap();
    assert!(log.contains(&format!("{}:2:", path.display())), "{log}");
}

#[test]
fn the_bridge_starts_with_its_demo_agent_and_stops_on_sigterm() {
    let (bridge, demo) = (free_port(), free_port());
    let path = temp_file(
        "start.toml",
        &format!(
            "listen = \"127.0.0.1:{bridge}\"\n[upstream]\nurl = \"http://127.0.0.1:{demo}\"\n\
             [server]\nshutdown_grace = \"1s\"\n[demo]\nenabled = true\nlisten = \"127.0.0.1:{demo}\"\n"
        ),
    );
    let mut child = binary()
        .arg("--config")
        .arg(&path)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", bridge)).is_err() {
        assert!(Instant::now() < deadline, "the bridge never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(std::net::TcpStream::connect(("127.0.0.1", demo)).is_ok());

    let killed = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the bridge ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
}
