use std::path::{Path, PathBuf};
use std::sync::Arc;

use a2a_bridge::cli::{Cli, Source};
use a2a_bridge::config::{Config, ConfigError};
use a2a_bridge::metrics::Metrics;
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
    assert_eq!(resolved.routes.len(), 1, "{:?}", resolved.routes);
    let route = &resolved.routes[0];
    assert_eq!(
        (route.name.as_str(), route.prefix.as_str()),
        ("default", "/")
    );
    assert_eq!(route.settings.public_url, "http://127.0.0.1:8080");
    assert!(resolved.demo.enabled);
    assert_eq!(resolved.demo.listen.to_string(), "127.0.0.1:9999");
    assert_eq!(route.settings.upstream.url, "http://127.0.0.1:9999");
    assert_eq!(route.settings.upstream.revision, None);
    assert_eq!(resolved.server.max_body, 4 * 1024 * 1024);
    assert_eq!(
        route.settings.timeouts.stream_idle,
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
    assert_eq!(
        resolved.routes[0].settings.public_url,
        "http://127.0.0.1:8081"
    );
    assert_eq!(
        resolved.routes[0].settings.upstream.url,
        "http://127.0.0.1:9998"
    );
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
    assert_eq!(
        resolved.routes[0].settings.public_url,
        "https://bridge.example"
    );
    assert_eq!(
        resolved.routes[0].settings.upstream.url,
        "http://127.0.0.1:9999"
    );
}

#[test]
fn a_reload_keeps_the_client_its_grpc_channels_and_the_card_cache_when_the_upstream_is_unchanged() {
    let metrics = Arc::new(Metrics::new());
    let first = Config::load(&shipped()).unwrap().resolve("a").unwrap();
    let built = Wiring::build(first.clone(), None, &metrics).unwrap();
    assert_eq!(built.fresh, ["default"]);
    let wiring = built.wiring;
    let before = &wiring.routes["default"];

    let mut limits_only = first.clone();
    limits_only.routes[0].settings.limits.upstream_body = 1;
    let next = Wiring::build(limits_only, Some(&wiring), &metrics).unwrap();
    assert!(next.fresh.is_empty());
    let after = &next.wiring.routes["default"];
    assert!(Arc::ptr_eq(&after.upstream, &before.upstream));
    assert!(after.grpc_channels.same(&before.grpc_channels));
    assert!(Arc::ptr_eq(&after.cards, &before.cards));
    assert!(Arc::ptr_eq(&after.streams, &before.streams));

    let mut other_agent = first;
    other_agent.routes[0].settings.upstream.url = "http://127.0.0.1:9".to_owned();
    other_agent.routes[0].client.connect_timeout = std::time::Duration::from_secs(1);
    let next = Wiring::build(other_agent, Some(&wiring), &metrics).unwrap();
    assert_eq!(next.fresh, ["default"]);
    let after = &next.wiring.routes["default"];
    assert!(!Arc::ptr_eq(&after.upstream, &before.upstream));
    assert!(!after.grpc_channels.same(&before.grpc_channels));
    assert!(!Arc::ptr_eq(&after.cards, &before.cards));
    assert!(Arc::ptr_eq(&after.streams, &before.streams));
}

#[test]
fn the_shipped_file_states_every_default_but_the_demo() {
    let mut shipped = Config::load(&shipped()).unwrap();
    shipped.upstream.url = None;
    shipped.demo = Config::default().demo;
    assert_eq!(shipped, Config::default());
}

fn resolve(text: &str) -> Result<a2a_bridge::config::Resolved, ConfigError> {
    Config::parse(Path::new("g.toml"), text)?.resolve("g.toml")
}

#[test]
fn the_store_is_in_process_unless_a_redis_url_is_given_and_a_ca_file_needs_tls() {
    let resolved = resolve("[upstream]\nurl = \"http://a\"\n").unwrap();
    assert_eq!(resolved.store.url, None);
    let resolved = resolve(
        "[upstream]\nurl = \"http://a\"\n[store]\nurl = \"redis://r:6379/2\"\ntasks_per_scope = 5\nttl = \"1h\"\n",
    )
    .unwrap();
    assert_eq!(resolved.store.url.as_deref(), Some("redis://r:6379/2"));
    assert_eq!(resolved.store.tasks_per_scope, 5);
    assert_eq!(resolved.store.ttl, std::time::Duration::from_hours(1));
    let resolved = resolve(
        "[upstream]\nurl = \"http://a\"\n[store]\nurl = \"rediss://r\"\nca_file = \"ca.pem\"\n",
    )
    .unwrap();
    assert_eq!(resolved.store.url.as_deref(), Some("rediss://r"));
    assert_eq!(resolved.store.ca_file.as_deref(), Some(Path::new("ca.pem")));
    let error =
        resolve("[upstream]\nurl = \"http://a\"\n[store]\nurl = \"memcached://r\"\n").unwrap_err();
    assert!(error.to_string().contains("rediss:// for TLS"), "{error}");
    let error = resolve(
        "[upstream]\nurl = \"http://a\"\n[store]\nurl = \"redis://r\"\nca_file = \"ca.pem\"\n",
    )
    .unwrap_err();
    assert!(error.to_string().contains("store.ca_file"), "{error}");

    let cli = Cli::try_parse_from([
        "a2a-bridge",
        "--upstream",
        "http://a",
        "--store",
        "redis://r/",
    ])
    .unwrap();
    let mut config = Config::default();
    cli.apply(&mut config);
    assert_eq!(config.store.url.as_deref(), Some("redis://r/"));
}

#[test]
fn push_allows_only_listed_networks_and_the_command_line_adds_to_them() {
    let resolved = resolve("[upstream]\nurl = \"http://a\"\n").unwrap();
    assert!(resolved.push.allow_networks.is_empty());
    assert_eq!(resolved.push.attempts, 5);
    let resolved = resolve(
        "[upstream]\nurl = \"http://a\"\n[push]\nallow_networks = [\"10.0.0.0/8\", \"::1\"]\nattempts = 2\nbackoff = \"100ms\"\nqueue = 7\ntimeout = \"3s\"\n",
    )
    .unwrap();
    let networks: Vec<String> = resolved
        .push
        .allow_networks
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(networks, ["10.0.0.0/8", "::1/128"]);
    assert_eq!(resolved.push.attempts, 2);
    assert_eq!(resolved.push.backoff, std::time::Duration::from_millis(100));
    assert_eq!(resolved.push.queue, 7);
    assert_eq!(resolved.push.timeout, std::time::Duration::from_secs(3));
    let error = Config::parse(
        Path::new("g.toml"),
        "[upstream]\nurl = \"http://a\"\n[push]\nallow_networks = [\"not-a-net\"]\n",
    )
    .unwrap_err();
    assert!(error.to_string().contains("is no network"), "{error}");

    let cli = Cli::try_parse_from([
        "a2a-bridge",
        "--upstream",
        "http://a",
        "--push-allow-network",
        "127.0.0.0/8",
        "--push-allow-network",
        "fd00::/8",
    ])
    .unwrap();
    let mut config = Config::default();
    config
        .push
        .allow_networks
        .push("10.0.0.0/8".parse().unwrap());
    cli.apply(&mut config);
    let networks: Vec<String> = config
        .push
        .allow_networks
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(networks, ["10.0.0.0/8", "127.0.0.0/8", "fd00::/8"]);
    assert!(Cli::try_parse_from(["a2a-bridge", "--push-allow-network", "nope"]).is_err());
}

#[test]
fn a_route_inherits_the_top_level_values_and_overrides_its_own() {
    let resolved = resolve(
        "public_url = \"https://gw.example/\"\n\
         [validation]\nstreaming = false\n[limits]\nstreams = 7\n\
         [[routes]]\nprefix = \"/w/\"\n[routes.upstream]\nurl = \"http://w\"\nrevision = \"1.0\"\n\
         [routes.validation]\ninput_modes = false\n[routes.limits]\nupstream_body = \"1KiB\"\n\
         [routes.headers]\nx-tenant = \"acme\"\n",
    )
    .unwrap();
    assert_eq!(
        resolved.routes.len(),
        1,
        "no default route without [upstream]"
    );
    let route = &resolved.routes[0];
    assert_eq!((route.name.as_str(), route.prefix.as_str()), ("/w", "/w"));
    assert_eq!(route.settings.public_url, "https://gw.example/w");
    assert_eq!(
        route.settings.upstream.revision,
        Some(bridge_ir::Revision::V1_0)
    );
    assert!(!route.settings.validation.input_modes);
    assert!(!route.settings.validation.streaming);
    assert_eq!(route.settings.limits.upstream_body, 1024);
    assert_eq!(route.settings.limits.streams, 7);
    assert_eq!(route.headers["x-tenant"], "acme");
}

#[test]
fn routes_that_collide_or_lack_a_slash_are_refused() {
    let two = "[[routes]]\nprefix = \"/a\"\n[routes.upstream]\nurl = \"http://a\"\n\
               [[routes]]\nname = \"b\"\nprefix = \"/a/\"\n[routes.upstream]\nurl = \"http://b\"\n";
    let error = resolve(two).unwrap_err().to_string();
    assert!(
        error.contains("routes[1]") && error.contains("\"/a\""),
        "{error}"
    );
    let error = resolve("[[routes]]\nprefix = \"a\"\n[routes.upstream]\nurl = \"http://a\"\n")
        .unwrap_err()
        .to_string();
    assert!(error.contains("must start with `/`"), "{error}");
    let error = resolve("[[routes]]\nprefix = \"/a\"\n[routes.upstream]\n")
        .unwrap_err()
        .to_string();
    assert!(error.contains("upstream.url"), "{error}");
}

#[test]
fn auth_reads_credentials_from_the_file_and_the_environment() {
    let text = |variable: &str| {
        format!(
            "[upstream]\nurl = \"http://a\"\n[auth]\nbearer_tokens = [\"t1\"]\n\
             bearer_tokens_env = \"{variable}\"\napi_key_header = \"x-key\"\n"
        )
    };
    let unset = format!("A2A_BRIDGE_UNSET_{}", std::process::id());
    let error = resolve(&text(&unset)).unwrap_err().to_string();
    assert!(error.contains(&unset), "{error}");
    // Cargo sets CARGO_PKG_NAME for the tests it runs.
    let resolved = resolve(&text("CARGO_PKG_NAME")).unwrap();
    let auth = resolved.routes[0].settings.auth.clone().unwrap();
    assert_eq!(auth.bearer_tokens, ["t1", "a2a-bridge"]);
    assert_eq!(auth.api_key_header.as_str(), "x-key");
}

#[test]
fn the_card_view_is_read_from_the_file_and_the_flag_overrides_it() {
    use bridge_app::settings::CardView;
    let resolved = resolve("[upstream]\nurl = \"http://a\"\n[card]\nview = \"1.0\"\n").unwrap();
    assert_eq!(resolved.routes[0].settings.card_view, CardView::V1_0);
    let resolved = resolve("[upstream]\nurl = \"http://a\"\n").unwrap();
    assert_eq!(resolved.routes[0].settings.card_view, CardView::Dual);
    let error = resolve("[upstream]\nurl = \"http://a\"\n[card]\nview = \"2.0\"\n").unwrap_err();
    let ConfigError::Parse { line, message, .. } = &error else {
        panic!("expected a parse error, got {error:?}");
    };
    assert_eq!(*line, 4);
    assert!(message.contains("unknown card view \"2.0\""), "{message}");
    for (flag, view) in [
        ("dual", CardView::Dual),
        ("1.0", CardView::V1_0),
        ("0.3", CardView::V0_3),
    ] {
        let cli = Cli::try_parse_from([
            "a2a-bridge",
            "--upstream",
            "http://127.0.0.1:9998",
            "--card-view",
            flag,
        ])
        .unwrap();
        let resolved = a2a_bridge::app::load(&cli).unwrap();
        assert_eq!(resolved.routes[0].settings.card_view, view, "{flag}");
    }
    assert!(Cli::try_parse_from(["a2a-bridge", "--card-view", "2.0"]).is_err());
}

#[test]
fn the_task_poll_interval_is_read_per_route() {
    let resolved = resolve(
        "[upstream]\nurl = \"http://a\"\ntask_poll_interval = \"2s\"\n\
         [[routes]]\nprefix = \"/b\"\n[routes.upstream]\nurl = \"http://b\"\n",
    )
    .unwrap();
    let interval = |name: &str| {
        resolved
            .routes
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.settings.upstream.task_poll_interval)
    };
    assert_eq!(interval("default"), Some(std::time::Duration::from_secs(2)));
    assert_eq!(
        interval("/b"),
        Some(
            bridge_app::Settings::new("", "")
                .upstream
                .task_poll_interval
        )
    );
}

#[test]
fn the_upstream_binding_is_read_from_the_file_and_the_flag_overrides_it() {
    use bridge_ir::Binding;
    let resolved = resolve("[upstream]\nurl = \"http://a\"\nbinding = \"rest\"\n").unwrap();
    assert_eq!(
        resolved.routes[0].settings.upstream.binding,
        Some(Binding::HttpJson)
    );
    let resolved = resolve("[upstream]\nurl = \"http://a\"\n").unwrap();
    assert_eq!(resolved.routes[0].settings.upstream.binding, None);
    assert!(resolve("[upstream]\nurl = \"http://a\"\nbinding = \"soap\"\n").is_err());
    for (flag, binding) in [
        ("auto", None),
        ("jsonrpc", Some(Binding::JsonRpc)),
        ("rest", Some(Binding::HttpJson)),
    ] {
        let cli = Cli::try_parse_from([
            "a2a-bridge",
            "--upstream",
            "http://127.0.0.1:9998",
            "--upstream-binding",
            flag,
        ])
        .unwrap();
        let resolved = a2a_bridge::app::load(&cli).unwrap();
        assert_eq!(
            resolved.routes[0].settings.upstream.binding, binding,
            "{flag}"
        );
    }
}

#[test]
fn the_served_bindings_are_read_per_route_and_an_empty_list_is_refused() {
    use bridge_ir::Binding;
    let resolved = resolve(
        "[upstream]\nurl = \"http://a\"\n[serve]\nbindings = [\"jsonrpc\"]\n\
         [[routes]]\nprefix = \"/b\"\n[routes.upstream]\nurl = \"http://b\"\n\
         [routes.serve]\nbindings = [\"rest\"]\n",
    )
    .unwrap();
    let bindings = |name: &str| {
        resolved
            .routes
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.settings.bindings.clone())
    };
    assert_eq!(bindings("default"), Some(vec![Binding::JsonRpc]));
    assert_eq!(bindings("/b"), Some(vec![Binding::HttpJson]));
    let defaults = resolve("[upstream]\nurl = \"http://a\"\n").unwrap();
    assert_eq!(
        defaults.routes[0].settings.bindings,
        [Binding::JsonRpc, Binding::HttpJson]
    );
    for bad in ["[]", "[\"soap\"]"] {
        let text = format!("[upstream]\nurl = \"http://a\"\n[serve]\nbindings = {bad}\n");
        assert!(resolve(&text).is_err(), "{bad}");
    }
}

#[test]
fn each_grpc_listener_serves_one_route_and_its_cards_name_it() {
    let text = "grpc_listen = \"127.0.0.1:50051\"\n[upstream]\nurl = \"http://a\"\n\
                [[routes]]\nname = \"weather\"\nprefix = \"/weather/\"\nhost = \"Agents.Example\"\n\
                grpc_listen = \"127.0.0.1:50052\"\ngrpc_public_url = \"grpc.example:443\"\n\
                [routes.upstream]\nurl = \"http://b\"\n\
                [[routes]]\nprefix = \"/plain\"\n[routes.upstream]\nurl = \"http://c\"\n";
    let resolved = resolve(text).unwrap();
    let listeners: Vec<_> = resolved
        .grpc
        .iter()
        .map(|l| {
            (
                l.listen.to_string(),
                l.route.as_str(),
                l.prefix.as_str(),
                l.host.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        listeners,
        [
            ("127.0.0.1:50051".to_owned(), "default", "/", None),
            (
                "127.0.0.1:50052".to_owned(),
                "weather",
                "/weather",
                Some("agents.example")
            ),
        ]
    );
    let by_name = |name: &str| resolved.routes.iter().find(|r| r.name == name).unwrap();
    assert_eq!(
        by_name("default").settings.grpc_url.as_deref(),
        Some("127.0.0.1:50051")
    );
    assert_eq!(
        by_name("weather").settings.grpc_url.as_deref(),
        Some("grpc.example:443")
    );
    assert!(
        by_name("weather")
            .settings
            .bindings
            .contains(&bridge_ir::Binding::Grpc)
    );
    assert_eq!(by_name("/plain").settings.grpc_url, None);
    assert!(
        !by_name("/plain")
            .settings
            .bindings
            .contains(&bridge_ir::Binding::Grpc)
    );

    let twice = "grpc_listen = \"127.0.0.1:50051\"\n[upstream]\nurl = \"http://a\"\n\
                 [[routes]]\nprefix = \"/b\"\ngrpc_listen = \"127.0.0.1:50051\"\n[routes.upstream]\nurl = \"http://b\"\n";
    let error = resolve(twice).unwrap_err().to_string();
    assert!(
        error.contains("127.0.0.1:50051") && error.contains("\"/b\""),
        "{error}"
    );
    let scheme = "[[routes]]\nprefix = \"/b\"\ngrpc_listen = \"127.0.0.1:50053\"\n\
                  grpc_public_url = \"https://grpc.example\"\n[routes.upstream]\nurl = \"http://b\"\n";
    let error = resolve(scheme).unwrap_err().to_string();
    assert!(error.contains("host:port"), "{error}");
    let http = "listen = \"127.0.0.1:50054\"\n[[routes]]\nprefix = \"/b\"\ngrpc_listen = \"127.0.0.1:50054\"\n[routes.upstream]\nurl = \"http://b\"\n";
    let error = resolve(http).unwrap_err().to_string();
    assert!(error.contains("HTTP or admin listener"), "{error}");
}

#[test]
fn a_tenant_route_is_the_route_below_its_door_and_a_tenant_is_one_plain_segment() {
    let resolved = resolve(
        "public_url = \"https://gw.example\"\n\
         [[routes]]\nprefix = \"/agents/\"\ntenant = \"acme\"\n[routes.upstream]\nurl = \"http://a\"\n\
         [[routes]]\nprefix = \"/\"\ntenant = \"globex\"\n[routes.upstream]\nurl = \"http://b\"\n",
    )
    .unwrap();
    let acme = &resolved.routes[0];
    assert_eq!(
        (
            acme.prefix.as_str(),
            acme.door.as_deref(),
            acme.tenant.as_deref()
        ),
        ("/agents/acme", Some("/agents"), Some("acme"))
    );
    assert_eq!(acme.settings.prefix, "/agents/acme");
    assert_eq!(acme.settings.tenant.as_deref(), Some("acme"));
    assert_eq!(acme.settings.public_url, "https://gw.example/agents/acme");
    let globex = &resolved.routes[1];
    assert_eq!(
        (globex.prefix.as_str(), globex.door.as_deref()),
        ("/globex", Some("/"))
    );
    for (tenant, why) in [
        ("", "one path segment"),
        ("a/b", "one path segment"),
        ("a b", "one path segment"),
        ("..", "one path segment"),
        ("tasks", "an A2A path segment"),
        ("v1", "an A2A path segment"),
    ] {
        let error = resolve(&format!(
            "[[routes]]\nprefix = \"/agents\"\ntenant = \"{tenant}\"\n[routes.upstream]\nurl = \"http://a\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(error.contains(why), "{tenant:?}: {error}");
    }
    let twice = resolve(
        "[[routes]]\nname = \"a\"\nprefix = \"/agents\"\ntenant = \"acme\"\n[routes.upstream]\nurl = \"http://a\"\n\
         [[routes]]\nname = \"b\"\nprefix = \"/agents\"\ntenant = \"acme\"\n[routes.upstream]\nurl = \"http://b\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        twice.contains("already serves prefix \"/agents/acme\""),
        "{twice}"
    );
}

#[test]
fn a_doors_grpc_listener_is_named_on_the_cards_of_every_tenant_of_the_door() {
    let resolved = resolve(
        "[[routes]]\nprefix = \"/agents\"\ntenant = \"acme\"\ngrpc_listen = \"127.0.0.1:50551\"\n\
         [routes.upstream]\nurl = \"http://a\"\n\
         [[routes]]\nprefix = \"/agents\"\ntenant = \"globex\"\n[routes.upstream]\nurl = \"http://b\"\n\
         [[routes]]\nprefix = \"/other\"\ntenant = \"initech\"\n[routes.upstream]\nurl = \"http://c\"\n",
    )
    .unwrap();
    let grpc = |name: &str| {
        let route = resolved.routes.iter().find(|r| r.name == name).unwrap();
        (
            route.settings.grpc_url.clone(),
            route.settings.bindings.contains(&bridge_ir::Binding::Grpc),
        )
    };
    assert_eq!(
        grpc("/agents/acme"),
        (Some("127.0.0.1:50551".to_owned()), true)
    );
    assert_eq!(
        grpc("/agents/globex"),
        (Some("127.0.0.1:50551".to_owned()), true)
    );
    assert_eq!(grpc("/other/initech"), (None, false));
    assert_eq!(resolved.grpc.len(), 1);
}
