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

#[test]
fn validate_config_exits_0_for_a_good_file_and_2_with_the_line_for_a_bad_one() {
    let good = temp_file(
        "validate-good.toml",
        "[upstream]\nurl = \"http://a\"\n[[routes]]\nprefix = \"/b\"\n[routes.upstream]\nurl = \"http://b\"\n",
    );
    let output = binary().arg("validate-config").arg(&good).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let summary = String::from_utf8(output.stdout).unwrap();
    assert!(
        summary.contains("default (/)") && summary.contains("/b (/b)"),
        "{summary}"
    );

    let bad = temp_file(
        "validate-bad.toml",
        "[upstream]\nurl = \"http://a\"\nrevison = \"auto\"\n",
    );
    let output = binary().arg("validate-config").arg(&bad).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(
        error.starts_with(&format!("{}:3:1:", bad.display())),
        "{error}"
    );
}

/// Polls `path` until its answer contains `wanted`, for at most 15 s.
fn wait_for(port: u16, path: &str, wanted: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let answer = http_get(port, path);
        if answer.contains(wanted) {
            return answer;
        }
        assert!(
            Instant::now() < deadline,
            "{path} never showed {wanted:?}:\n{answer}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read as _, Write as _};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    );
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[test]
fn a_changed_file_is_reloaded_without_a_signal() {
    let (bridge, demo, admin) = (free_port(), free_port(), free_port());
    let base = format!(
        "listen = \"127.0.0.1:{bridge}\"\nadmin = \"127.0.0.1:{admin}\"\n\
         [upstream]\nurl = \"http://127.0.0.1:{demo}\"\n\
         [server]\nshutdown_grace = \"1s\"\n[demo]\nenabled = true\nlisten = \"127.0.0.1:{demo}\"\n"
    );
    let path = temp_file("watched.toml", &base);
    let child = Child(
        binary()
            .arg("--config")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(admin, "/readyz", "200 OK");
    // Before the reload no route serves `/second`: the default route at `/` answers 404 for
    // a card path below a prefix it does not have.
    let card = http_get(bridge, "/second/.well-known/agent-card.json");
    assert!(card.starts_with("HTTP/1.1 404 "), "{card}");

    std::fs::write(
        &path,
        format!("{base}[[routes]]\nname = \"second\"\nprefix = \"/second\"\n[routes.upstream]\nurl = \"http://127.0.0.1:{demo}\"\n"),
    )
    .unwrap();
    wait_for(
        admin,
        "/metrics",
        "a2a_bridge_config_reloads_total{result=\"ok\"} 1",
    );
    wait_for(
        bridge,
        "/second/.well-known/agent-card.json",
        &format!("http://127.0.0.1:{bridge}/second"),
    );
    drop(child);
}

/// A child process killed when the test ends, even by a failed assertion.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Each edit is followed by SIGHUP; the file watcher may notice the edit first, and either
/// path must keep a broken file out and take a good one in.
#[test]
fn a_reload_of_a_broken_file_keeps_the_running_configuration_and_names_the_line() {
    let (bridge, demo, admin) = (free_port(), free_port(), free_port());
    let base = format!(
        "listen = \"127.0.0.1:{bridge}\"\nadmin = \"127.0.0.1:{admin}\"\n\
         [upstream]\nurl = \"http://127.0.0.1:{demo}\"\n\
         [server]\nshutdown_grace = \"1s\"\n[demo]\nenabled = true\nlisten = \"127.0.0.1:{demo}\"\n"
    );
    let path = temp_file("sighup.toml", &base);
    let log = temp_file("sighup.log", "");
    let child = Child(
        binary()
            .arg("--config")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_for(admin, "/readyz", "200 OK");
    let hup = || {
        let status = Command::new("kill")
            .args(["-HUP", &child.0.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    };

    std::fs::write(&path, format!("{base}[validation]\nstreaming = \"yes\"\n")).unwrap();
    hup();
    wait_for(
        admin,
        "/metrics",
        "a2a_bridge_config_reloads_total{result=\"error\"}",
    );
    let card = http_get(bridge, "/.well-known/agent-card.json");
    assert!(
        card.contains("200 OK") && card.contains("demo agent"),
        "{card}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    let logged = loop {
        let logged = std::fs::read_to_string(&log).unwrap();
        if logged.contains("reload failed") || Instant::now() > deadline {
            break logged;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // `streaming = "yes"` is line 11 of the file written above.
    assert!(
        logged.contains("sighup.toml:11:"),
        "the error names the file and line:\n{logged}"
    );

    std::fs::write(
        &path,
        format!("{base}[[routes]]\nname = \"second\"\nprefix = \"/second\"\n[routes.upstream]\nurl = \"http://127.0.0.1:{demo}\"\n"),
    )
    .unwrap();
    hup();
    wait_for(
        bridge,
        "/second/.well-known/agent-card.json",
        &format!("http://127.0.0.1:{bridge}/second"),
    );
    drop(child);
}
