//! Start-up, signals, reload and shutdown; and the subcommands.
//!
//! # Lifecycle
//!
//! 1. The configuration is read (file or command line) and resolved; an error here ends the
//!    process with status 2 before anything listens.
//! 2. The demo agent starts, when enabled, so the bridge's first card fetch finds it.
//! 3. The first route table is built, one card refresh task per route starts, every listener
//!    is bound, and only then the admin listener (when configured) starts: `/readyz` never says
//!    ready while a listener a caller may reach is not yet bound.
//! 4. SIGHUP, or a change of the file's modification time or size (checked every 2 s), re-reads
//!    the file and swaps in a new generation; a file that does not parse or resolve keeps the
//!    running one, and says why in the log. The listen address, TLS, the admin listener, the
//!    server's limits and the demo agent are bound at start: a reload that changes them logs
//!    that a restart is needed and applies the rest.
//! 5. SIGTERM or SIGINT starts a graceful shutdown (see `bridge_server::run`).

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::admin::Admin;
use crate::cli::{Cli, Command, LogFormat, Source};
use crate::config::{Config, ConfigError, Resolved};
use crate::metrics::Metrics;
use crate::runtime::{Gateway, Refreshers, Wiring};

/// Runs what `cli` asks for: a subcommand, or the bridge until a termination signal. Returns
/// the exit status.
#[must_use]
pub fn main(cli: Cli) -> ExitCode {
    match cli.command.clone() {
        Some(Command::Translate {
            to,
            method,
            from,
            binding,
            to_binding,
        }) => {
            let options = crate::translate::Options {
                from: from.map(Into::into),
                method,
                binding: binding.into(),
                to_binding: to_binding.unwrap_or(binding).into(),
            };
            return translate(to.into(), &options);
        }
        Some(Command::ValidateConfig { file }) => return validate_config(&file),
        Some(Command::Report {
            dir,
            fail_on,
            format,
            html,
        }) => return report(&dir, &fail_on, format, html.as_deref()),
        Some(Command::Replay { dir, to, headers }) => return replay(&dir, &to, &headers),
        Some(Command::CheckCard { .. }) | None => {}
    }
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
    if let Some(Command::CheckCard {
        url,
        public_url,
        grpc_url,
    }) = &cli.command
    {
        let mut out = std::io::stdout().lock();
        let checked = crate::check_card::check_card(url, public_url, grpc_url.as_deref(), &mut out);
        return match runtime.block_on(checked) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                let _ = writeln!(std::io::stderr(), "a2a-bridge check-card: {error}");
                ExitCode::from(2)
            }
        };
    }
    match runtime.block_on(serve(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::from(2)
        }
    }
}

/// `a2a-bridge report`: the summary of a recorded run on stdout.
fn report(
    dir: &Path,
    fail_on: &[String],
    format: crate::cli::ReportFormat,
    html: Option<&Path>,
) -> ExitCode {
    let mut stderr = std::io::stderr();
    let forbidden = match crate::report::Forbidden::parse(fail_on) {
        Ok(forbidden) => forbidden,
        Err(error) => {
            let _ = writeln!(stderr, "a2a-bridge report: {error}");
            return ExitCode::from(2);
        }
    };
    let summary = match crate::report::summarize(dir) {
        Ok(summary) => summary,
        Err(error) => {
            let _ = writeln!(
                stderr,
                "a2a-bridge report: cannot read {}: {error}",
                dir.display()
            );
            return ExitCode::from(2);
        }
    };
    let violations = summary.violations(&forbidden);
    if let Some(page) = html
        && let Err(error) = std::fs::write(page, summary.to_html(&violations))
    {
        let _ = writeln!(
            stderr,
            "a2a-bridge report: cannot write {}: {error}",
            page.display()
        );
        return ExitCode::from(2);
    }
    let printed = match format {
        crate::cli::ReportFormat::Text => summary.to_text(&violations),
        crate::cli::ReportFormat::Json => format!("{}\n", summary.to_json(&violations)),
    };
    let _ = std::io::stdout().lock().write_all(printed.as_bytes());
    if violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `a2a-bridge replay`: the differences on stdout.
fn replay(dir: &Path, to: &str, headers: &[String]) -> ExitCode {
    let mut stderr = std::io::stderr();
    let mut added = Vec::new();
    for header in headers {
        let Some((name, value)) = header.split_once(':') else {
            let _ = writeln!(
                stderr,
                "a2a-bridge replay: --header {header:?} is not `Name: value`"
            );
            return ExitCode::from(2);
        };
        added.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(stderr, "a2a-bridge replay: {error}");
            return ExitCode::from(2);
        }
    };
    let outcome = match runtime.block_on(crate::replay::replay(dir, to, &added)) {
        Ok(outcome) => outcome,
        Err(error) => {
            let _ = writeln!(stderr, "a2a-bridge replay: {error}");
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "replayed {}: {} the same, {} different; {} not replayed (gRPC, or cut when recorded)",
        outcome.replayed,
        outcome.same,
        outcome.differences.len(),
        outcome.skipped
    );
    for difference in &outcome.differences {
        let _ = writeln!(
            out,
            "  call {} ({}): {}",
            difference.call, difference.method, difference.at
        );
    }
    if outcome.differences.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `a2a-bridge translate`: stdin to stdout, losses on stderr.
fn translate(to: bridge_ir::Revision, options: &crate::translate::Options) -> ExitCode {
    let mut input = Vec::new();
    let mut stderr = std::io::stderr();
    if let Err(error) = std::io::stdin().read_to_end(&mut input) {
        let _ = writeln!(stderr, "a2a-bridge translate: cannot read stdin: {error}");
        return ExitCode::from(2);
    }
    match crate::translate::translate_with(&input, to, options) {
        Ok(translation) => {
            let text = serde_json::to_string_pretty(&translation.document).unwrap_or_default();
            let mut stdout = std::io::stdout().lock();
            if writeln!(stdout, "{text}").is_err() {
                return ExitCode::FAILURE;
            }
            for loss in &translation.losses {
                let _ = writeln!(stderr, "loss: {loss}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            let _ = writeln!(stderr, "a2a-bridge translate: {error}");
            ExitCode::from(2)
        }
    }
}

/// `a2a-bridge validate-config FILE`.
fn validate_config(file: &Path) -> ExitCode {
    let result = Config::load(file).and_then(|c| c.resolve(&file.display().to_string()));
    match result {
        Ok(resolved) => {
            let routes: Vec<String> = resolved
                .routes
                .iter()
                .map(|r| format!("{} ({})", r.name, r.prefix))
                .collect();
            let _ = writeln!(
                std::io::stdout(),
                "{}: ok; routes: {}",
                file.display(),
                routes.join(", ")
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "{error}");
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
    /// An upstream client or the store could not be built.
    #[error(transparent)]
    Build(#[from] crate::runtime::BuildError),
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
    let metrics = Arc::new(Metrics::new());
    if let Some(settings) = &resolved.telemetry {
        crate::telemetry::install(Some(settings), metrics.spans_dropped()).map_err(|why| {
            StartError::Io {
                what: format!("cannot start exporting traces: {why}"),
                source: std::io::Error::other(why.clone()),
            }
        })?;
        tracing::info!(endpoint = ?settings.endpoint, protocol = ?settings.protocol, "traces exported over OTLP");
    }
    if let Some(settings) = &resolved.record {
        crate::record::install(Some(settings), &metrics.records());
        tracing::info!(dir = %settings.dir.display(), "exchanges recorded");
    }

    let (demo_stop, demo) = start_demo(&resolved).await?;

    let built = Wiring::build(resolved.clone(), None, &metrics)?;
    let gateway = Arc::new(Gateway::new(built.table, Arc::clone(&metrics)));
    let mut refreshers = Refreshers::default();
    refreshers.sync(&gateway, &built.fresh);
    let refreshers = Arc::new(tokio::sync::Mutex::new(refreshers));

    let listener_tls =
        ListenerTls::start(resolved.tls.as_ref()).map_err(|error| StartError::Io {
            what: "cannot set up TLS".to_owned(),
            source: std::io::Error::other(error.to_string()),
        })?;
    let tls = listener_tls.http.clone();
    let listeners =
        crate::workers::listeners(resolved.listen, resolved.workers).map_err(|source| {
            StartError::Io {
                what: format!("cannot listen on {}", resolved.listen),
                source,
            }
        })?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let stopped = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stop| *stop).await;
    };

    log_routes(&resolved);
    tracing::info!(
        listen = %resolved.listen,
        workers = resolved.workers,
        tls = tls.is_some(),
        routes = resolved.routes.len(),
        "a2a-bridge listening"
    );

    let mut grpc = Vec::with_capacity(resolved.grpc.len());
    for listener in &resolved.grpc {
        grpc.push(grpc_serve(listener, &gateway, &resolved, &listener_tls)?);
    }
    let reloader = spawn_reloader(
        cli,
        Arc::clone(&gateway),
        built.wiring,
        Arc::clone(&refreshers),
        listener_tls,
    )?;
    // `/readyz` answers only once every listener is bound: a caller told "ready" is never refused.
    let admin = match resolved.admin {
        Some(addr) => Some(spawn_admin(addr, &gateway, &resolved, stopped(stop_rx.clone())).await?),
        None => None,
    };
    let shutdown = termination()?;
    let signal = tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let serve = crate::workers::Serve {
        handler: Arc::clone(&gateway) as Arc<dyn bridge_app::service::Handler>,
        config: resolved.server.clone(),
        tls,
        stop: stop_rx,
    };
    let mut workers =
        crate::workers::spawn(listeners, &serve, grpc).map_err(|source| StartError::Io {
            what: "cannot start the data-path workers".to_owned(),
            source,
        })?;
    drop(serve);
    // Each worker drains its connections after the stop signal, then ends.
    while workers.recv().await.is_some() {}

    signal.abort();
    reloader.abort();
    refreshers.lock().await.stop();
    // The spans still queued go out before the process ends.
    let _ = tokio::task::spawn_blocking(crate::telemetry::shutdown).await;
    // So do the exchanges still queued.
    let _ = tokio::task::spawn_blocking(crate::record::shutdown).await;
    if let Some(admin) = admin {
        let _ = admin.await;
    }
    let _ = demo_stop.send(());
    if let Some(demo) = demo {
        let _ = demo.await;
    }
    tracing::info!("a2a-bridge stopped");
    Ok(())
}

/// Starts the built-in demo agent when `[demo]` enables it; it stops when the sender is used
/// or dropped.
async fn start_demo(
    resolved: &Resolved,
) -> Result<
    (
        tokio::sync::oneshot::Sender<()>,
        Option<tokio::task::JoinHandle<()>>,
    ),
    StartError,
> {
    let (demo_stop, demo_stopped) = tokio::sync::oneshot::channel::<()>();
    if !resolved.demo.enabled {
        return Ok((demo_stop, None));
    }
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
    Ok((demo_stop, Some(task)))
}

/// The gRPC listener of one route (TLS as the HTTP listener has it), bound once per worker.
fn grpc_serve(
    grpc: &crate::config::GrpcListener,
    gateway: &Arc<Gateway>,
    resolved: &Resolved,
    listener_tls: &ListenerTls,
) -> Result<crate::workers::GrpcServe, StartError> {
    let tls = listener_tls.grpc.clone().map(|tls| bridge_grpc::ServerTls {
        current: Arc::new(move || tls.current()),
        handshake_timeout: resolved.server.header_read_timeout,
    });
    let addr = grpc.listen;
    let sockets =
        crate::workers::listeners(addr, resolved.workers).map_err(|source| StartError::Io {
            what: format!("cannot listen on {addr} for the gRPC listener"),
            source,
        })?;
    tracing::info!(grpc = %addr, route = %grpc.route, tls = tls.is_some(), "gRPC listener (lf.a2a.v1.A2AService, a2a.v1.A2AService)");
    let service = bridge_grpc::GrpcService::new(
        crate::runtime::codecs().grpc,
        Arc::new(crate::runtime::GrpcRoute {
            gateway: Arc::clone(gateway),
            route: grpc.route.clone(),
        }),
        resolved.server.max_body,
    )
    .with_limits(resolved.grpc_limits);
    // The certificate names the caller as the setup current now says (a reload may change it).
    let service = match listener_tls.grpc.clone() {
        Some(tls) => service.with_client_identity(Arc::new(move |der: &[u8]| {
            tls.identity().and_then(|kind| kind.of(der))
        })),
        None => service,
    };
    Ok(crate::workers::GrpcServe {
        service,
        tls,
        sockets,
    })
}

/// Starts the operations listener on `addr`, until `shutdown`.
async fn spawn_admin(
    addr: std::net::SocketAddr,
    gateway: &Arc<Gateway>,
    resolved: &Resolved,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<tokio::task::JoinHandle<()>, StartError> {
    let listener = bind(addr, " for the admin listener").await?;
    tracing::info!(admin = %addr, "admin listener (/metrics, /healthz, /readyz)");
    let handler = Arc::new(Admin::new(
        Arc::clone(gateway),
        Arc::clone(&resolved.server.stats),
    ));
    Ok(tokio::spawn(bridge_server::run(
        listener,
        handler,
        bridge_server::ServerConfig {
            shutdown_grace: Duration::from_secs(1),
            ..bridge_server::ServerConfig::default()
        },
        shutdown,
    )))
}

fn log_routes(resolved: &Resolved) {
    for route in &resolved.routes {
        tracing::info!(
            route = %route.name,
            prefix = %route.prefix,
            host = route.host.as_deref().unwrap_or("*"),
            upstream = %route.settings.upstream.url,
            public_url = %route.settings.public_url,
            "route"
        );
    }
}

async fn bind(
    addr: std::net::SocketAddr,
    purpose: &str,
) -> Result<tokio::net::TcpListener, StartError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| StartError::Io {
            what: format!("cannot listen on {addr}{purpose}"),
            source,
        })
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

/// How often the configuration file is checked for a change.
pub const FILE_POLL: Duration = Duration::from_secs(2);

/// What identifies a version of the file: its modification time and size.
fn file_stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

/// Spawns the task that reloads the configuration on every SIGHUP and whenever the file's
/// modification time or size changes.
fn spawn_reloader(
    cli: Cli,
    gateway: Arc<Gateway>,
    mut wiring: Wiring,
    refreshers: Arc<tokio::sync::Mutex<Refreshers>>,
    tls: ListenerTls,
) -> Result<tokio::task::JoinHandle<()>, StartError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangup = signal(SignalKind::hangup()).map_err(|source| StartError::Io {
        what: "cannot install the SIGHUP handler".to_owned(),
        source,
    })?;
    let watched: Option<PathBuf> = match cli.source() {
        Source::File(path) => Some(path),
        Source::CommandLine => None,
    };
    let mut stamp = watched.as_deref().and_then(file_stamp);
    Ok(tokio::spawn(async move {
        let mut poll = tokio::time::interval(FILE_POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                received = hangup.recv() => {
                    if received.is_none() {
                        return;
                    }
                    tracing::info!("SIGHUP: reloading the configuration");
                }
                _ = poll.tick() => {
                    let Some(path) = watched.as_deref() else { continue };
                    let now = file_stamp(path);
                    if now == stamp {
                        continue;
                    }
                    stamp = now;
                    tracing::info!(file = %path.display(), "the configuration file changed: reloading");
                }
            }
            match reload(&cli, &wiring, gateway.metrics(), &tls) {
                Ok(built) => {
                    gateway.replace(built.table);
                    wiring = built.wiring;
                    refreshers.lock().await.sync(&gateway, &built.fresh);
                    gateway.metrics().reload(true);
                    tracing::info!("configuration reloaded");
                }
                Err(error) => {
                    gateway.metrics().reload(false);
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
    metrics: &Arc<Metrics>,
    tls: &ListenerTls,
) -> Result<crate::runtime::Built, StartError> {
    if cli.source() == Source::CommandLine {
        tracing::info!("no configuration file to reload");
    }
    let resolved = load(cli)?;
    let before = &current.resolved;
    if resolved.listen != before.listen
        || resolved.server != before.server
        || resolved.demo != before.demo
        || resolved.admin != before.admin
        || resolved.grpc != before.grpc
        || resolved.tls.is_some() != before.tls.is_some()
    {
        tracing::warn!(
            "listen, admin, grpc_listen (top-level and per route), turning [tls] on or off, [server], [demo] and the inbound limits apply at start only; restart to change them"
        );
    }
    // Read (and checked) before anything of the reload applies; put in place after the rest is
    // built, so a reload that fails leaves the listeners as they were.
    let next_tls = match &resolved.tls {
        Some(files) if tls.http.is_some() || tls.grpc.is_some() => Some(
            ListenerTls::start(Some(files)).map_err(|error| StartError::Io {
                what: "cannot read the [tls] files again".to_owned(),
                source: std::io::Error::other(error.to_string()),
            })?,
        ),
        _ => None,
    };
    if resolved.record != before.record {
        crate::record::install(resolved.record.as_ref(), &metrics.records());
        tracing::info!(
            on = resolved.record.is_some(),
            "exchange recording reconfigured"
        );
    }
    if resolved.telemetry != before.telemetry {
        crate::telemetry::install(resolved.telemetry.as_ref(), metrics.spans_dropped()).map_err(
            |why| StartError::Io {
                what: format!("cannot export traces as the file says: {why}"),
                source: std::io::Error::other(why.clone()),
            },
        )?;
        tracing::info!(
            on = resolved.telemetry.is_some(),
            "trace export reconfigured"
        );
    }
    let built = Wiring::build(resolved, Some(current), metrics)?;
    if let Some(next) = next_tls {
        tls.replace(&next);
        tracing::info!("the [tls] certificate, key and client authorities re-read");
    }
    Ok(built)
}

/// The TLS setups the listeners accept connections with: HTTP/1.1 on the HTTP listener, `h2`
/// on the gRPC ones. A reload reads `[tls]`'s files again and puts the new setups in place for
/// every connection from then on (a rotated certificate, new client authorities).
#[derive(Debug, Clone, Default)]
pub struct ListenerTls {
    http: Option<bridge_server::Tls>,
    grpc: Option<bridge_server::Tls>,
}

impl ListenerTls {
    /// The setups of `files` (none without TLS).
    ///
    /// # Errors
    ///
    /// A file that cannot be read or a certificate and key rustls refuses.
    pub fn start(files: Option<&bridge_server::TlsFiles>) -> Result<Self, bridge_server::TlsError> {
        let Some(files) = files else {
            return Ok(Self::default());
        };
        Ok(Self {
            http: Some(bridge_server::Tls::of(files, &[b"http/1.1"])?),
            grpc: Some(bridge_server::Tls::of(files, &[b"h2"])?),
        })
    }

    /// Accepts from now on as `next` does, where this listener speaks TLS.
    fn replace(&self, next: &Self) {
        for (running, next) in [(&self.http, &next.http), (&self.grpc, &next.grpc)] {
            if let (Some(running), Some(next)) = (running, next) {
                running.replace(next);
            }
        }
    }
}

/// Reads the configuration named by `path` (for tests and tools).
///
/// # Errors
///
/// [`ConfigError`] when the file cannot be read, parsed or resolved.
pub fn load_file(path: &Path) -> Result<Resolved, ConfigError> {
    Config::load(path)?.resolve(&path.display().to_string())
}
