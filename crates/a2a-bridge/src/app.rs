//! Start-up, signals, reload and shutdown.
//!
//! # Lifecycle
//!
//! 1. The configuration is read (file or command line) and resolved; an error here ends the
//!    process with status 2 before anything listens.
//! 2. The demo agent starts, when enabled, so the bridge's first card fetch finds it.
//! 3. The first [`Bridge`](bridge_app::Bridge) is built, the card refresh task starts, and the
//!    server runs.
//! 4. SIGHUP re-reads the file and swaps in a new generation; a file that does not parse or
//!    resolve keeps the running one, and says why in the log. The listen address, the server's
//!    limits and the demo agent are bound at start: a reload that changes them logs that a
//!    restart is needed and applies the rest.
//! 5. SIGTERM or SIGINT starts a graceful shutdown (see `bridge_server::run`).

use std::process::ExitCode;
use std::sync::Arc;

use tokio::sync::{Mutex, Notify};

use crate::cli::{Cli, LogFormat, Source};
use crate::config::{Config, ConfigError, Resolved};
use crate::runtime::{Reloadable, Wiring, refresh_cards};

/// Runs the bridge described by `cli` until a termination signal; returns the exit status.
#[must_use]
pub fn main(cli: Cli) -> ExitCode {
    init_tracing(cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(%error, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::from(2)
        }
    }
}

fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    // A second initialisation (tests calling in twice) is refused by tracing and harmless.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Why the bridge could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The upstream client could not be built.
    #[error(transparent)]
    Upstream(#[from] bridge_upstream::BuildError),
    /// A listener could not be bound, or a signal handler installed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

/// Reads the configuration `cli` points at, with its flags applied.
///
/// # Errors
///
/// [`ConfigError`] when the file cannot be read, parsed or resolved.
pub fn load(cli: &Cli) -> Result<Resolved, ConfigError> {
    let source = cli.source();
    let mut config = match &source {
        Source::File(path) => Config::load(path)?,
        Source::CommandLine => Config::default(),
    };
    cli.apply(&mut config);
    config.resolve(&source.origin())
}

async fn serve(cli: Cli) -> Result<(), StartError> {
    let resolved = load(&cli)?;

    let (demo_stop, demo_stopped) = tokio::sync::oneshot::channel::<()>();
    let demo = if resolved.demo.enabled {
        let (addr, task) = crate::demo::spawn(resolved.demo.listen, async move {
            let _ = demo_stopped.await;
        })
        .await
        .map_err(|source| StartError::Io {
            what: format!(
                "cannot listen on {} for the demo agent",
                resolved.demo.listen
            ),
            source,
        })?;
        tracing::info!(%addr, "demo agent (A2A 0.3) listening");
        Some(task)
    } else {
        None
    };

    let (wiring, bridge, _) = Wiring::build(resolved.clone(), None)?;
    let bridges = Arc::new(Reloadable::new(bridge));
    let wake = Arc::new(Notify::new());
    let refresher = tokio::spawn(refresh_cards(Arc::clone(&bridges), Arc::clone(&wake)));

    let listener = tokio::net::TcpListener::bind(resolved.listen)
        .await
        .map_err(|source| StartError::Io {
            what: format!("cannot listen on {}", resolved.listen),
            source,
        })?;
    tracing::info!(
        listen = %resolved.listen,
        upstream = %resolved.settings.upstream.url,
        public_url = %resolved.settings.public_url,
        "a2a-bridge listening"
    );

    let reloader = reload_on_hangup(cli, Arc::clone(&bridges), wiring, wake)?;
    let shutdown = termination()?;
    bridge_server::run(
        listener,
        Arc::clone(&bridges) as Arc<dyn bridge_app::service::Handler>,
        resolved.server.clone(),
        shutdown,
    )
    .await;

    reloader.abort();
    refresher.abort();
    let _ = demo_stop.send(());
    if let Some(demo) = demo {
        let _ = demo.await;
    }
    tracing::info!("a2a-bridge stopped");
    Ok(())
}

/// Resolves on the first SIGTERM or SIGINT.
fn termination() -> Result<impl std::future::Future<Output = ()>, StartError> {
    use tokio::signal::unix::{SignalKind, signal};
    let install = |kind: SignalKind, name: &str| {
        signal(kind).map_err(|source| StartError::Io {
            what: format!("cannot install the {name} handler"),
            source,
        })
    };
    let mut terminate = install(SignalKind::terminate(), "SIGTERM")?;
    let mut interrupt = install(SignalKind::interrupt(), "SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => tracing::info!("SIGTERM: shutting down"),
            _ = interrupt.recv() => tracing::info!("SIGINT: shutting down"),
        }
    })
}

/// Spawns the task that reloads the configuration on every SIGHUP.
fn reload_on_hangup(
    cli: Cli,
    bridges: Arc<Reloadable>,
    wiring: Wiring,
    wake: Arc<Notify>,
) -> Result<tokio::task::JoinHandle<()>, StartError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangup = signal(SignalKind::hangup()).map_err(|source| StartError::Io {
        what: "cannot install the SIGHUP handler".to_owned(),
        source,
    })?;
    let wiring = Mutex::new(wiring);
    Ok(tokio::spawn(async move {
        while hangup.recv().await.is_some() {
            let mut current = wiring.lock().await;
            match reload(&cli, &current) {
                Ok((next, bridge, fresh_cards)) => {
                    bridges.replace(bridge);
                    *current = next;
                    if fresh_cards {
                        wake.notify_one();
                    }
                    tracing::info!("configuration reloaded");
                }
                Err(error) => {
                    tracing::error!(%error, "reload failed, the running configuration stays");
                }
            }
        }
    }))
}

/// Builds the next generation from the file, reusing what `current` allows.
///
/// # Errors
///
/// The reason the file cannot be used; the caller keeps `current`.
pub fn reload(
    cli: &Cli,
    current: &Wiring,
) -> Result<(Wiring, bridge_app::Bridge, bool), StartError> {
    if cli.source() == Source::CommandLine {
        tracing::info!("no configuration file to reload");
    }
    let resolved = load(cli)?;
    let before = &current.resolved;
    if resolved.listen != before.listen
        || resolved.server != before.server
        || resolved.demo != before.demo
    {
        tracing::warn!(
            "listen, [server], [demo] and the inbound limits apply at start only; restart to change them"
        );
    }
    Ok(Wiring::build(resolved, Some(current))?)
}
