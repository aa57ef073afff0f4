//! The data path's workers: one single-threaded tokio runtime per core, each on a thread of its
//! own, each accepting on its own socket of the listen address (`SO_REUSEPORT`: the kernel
//! spreads new connections over the sockets) and calling agents over its own connection pools
//! (`bridge_upstream::worker`). A request is read, translated, sent to the agent and answered
//! by one thread, with no hand-off between threads; the workers share the gateway (routes,
//! cards, metrics, the store port), the connection limit and the shutdown signal.
//!
//! The gRPC listeners are served the same way: each worker accepts on its own socket of every
//! gRPC listen address, and serves those calls on its thread, over its own pools.
//!
//! Everything else (the operations listener, reloads, card refreshes, push delivery) runs on
//! the main runtime.

use std::net::SocketAddr;
use std::sync::Arc;

use bridge_app::service::Handler;
use bridge_server::ServerConfig;
use socket2::{Domain, Protocol, Socket, Type};
use tokio::sync::watch;

/// The listen backlog of each worker's socket.
const BACKLOG: i32 = 1024;

/// `count` listening sockets on `addr`, one per worker. With more than one, each has
/// `SO_REUSEPORT`; the address is first bound once without it, so that an address another
/// process holds is refused as in use (rather than shared with it), and a port of 0 is chosen
/// once for all of them.
///
/// # Errors
///
/// The socket error, for instance when the address is in use.
pub fn listeners(addr: SocketAddr, count: usize) -> std::io::Result<Vec<std::net::TcpListener>> {
    let probe = socket(addr, false)?;
    if count <= 1 {
        return Ok(vec![probe.into()]);
    }
    let mut chosen = addr;
    chosen.set_port(
        probe
            .local_addr()?
            .as_socket()
            .map_or(addr.port(), |a| a.port()),
    );
    drop(probe);
    (0..count)
        .map(|_| socket(chosen, true).map(Into::into))
        .collect()
}

fn socket(addr: SocketAddr, reuse_port: bool) -> std::io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket)
}

/// What every worker serves.
pub struct Serve {
    /// The gateway.
    pub handler: Arc<dyn Handler>,
    /// The server's limits and timers (its stats, and so its connection limit, are shared).
    pub config: ServerConfig,
    /// TLS, when the listener has it (replaced by a reload).
    pub tls: Option<bridge_server::Tls>,
    /// Turns `true` when the bridge stops.
    pub stop: watch::Receiver<bool>,
}

impl std::fmt::Debug for Serve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serve")
            .field("config", &self.config)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

/// One gRPC listener, served by every worker on a socket of its own.
pub struct GrpcServe {
    /// The services and where their calls go.
    pub service: bridge_grpc::GrpcService,
    /// TLS, when the listener has it (replaced by a reload).
    pub tls: Option<bridge_grpc::ServerTls>,
    /// One socket per worker ([`listeners`]).
    pub sockets: Vec<std::net::TcpListener>,
}

impl std::fmt::Debug for GrpcServe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcServe")
            .field("service", &self.service)
            .field("tls", &self.tls.is_some())
            .field("sockets", &self.sockets.len())
            .finish()
    }
}

/// Starts one worker per listener, each also serving its socket of every gRPC listener in
/// `grpc`; the returned receiver resolves once every worker has drained and ended.
///
/// # Errors
///
/// When a thread or its runtime cannot be started.
pub fn spawn(
    listeners: Vec<std::net::TcpListener>,
    serve: &Serve,
    grpc: Vec<GrpcServe>,
) -> std::io::Result<tokio::sync::mpsc::Receiver<()>> {
    let (done_tx, done_rx) = tokio::sync::mpsc::channel(listeners.len().max(1));
    let mut grpc_sockets: Vec<_> = grpc
        .into_iter()
        .map(|listener| {
            let GrpcServe {
                service,
                tls,
                sockets,
            } = listener;
            (service, tls, sockets.into_iter())
        })
        .collect();
    for (index, listener) in listeners.into_iter().enumerate() {
        let grpc: Vec<_> = grpc_sockets
            .iter_mut()
            .filter_map(|(service, tls, sockets)| {
                Some((service.clone(), tls.clone(), sockets.next()?))
            })
            .collect();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handler = Arc::clone(&serve.handler);
        let config = serve.config.clone();
        let tls = serve.tls.clone();
        let mut stop = serve.stop.clone();
        let done = done_tx.clone();
        std::thread::Builder::new()
            .name(format!("a2a-bridge-worker-{index}"))
            .spawn(move || {
                bridge_upstream::worker::enter(index);
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => listener,
                        Err(error) => {
                            tracing::error!(%error, worker = index, "the worker cannot take its socket");
                            return;
                        }
                    };
                    let grpc: Vec<_> = grpc
                        .into_iter()
                        .filter_map(|(service, tls, socket)| {
                            let listener = match tokio::net::TcpListener::from_std(socket) {
                                Ok(listener) => listener,
                                Err(error) => {
                                    tracing::error!(%error, worker = index, "the worker cannot take its gRPC socket");
                                    return None;
                                }
                            };
                            let mut stop = stop.clone();
                            let stopped = async move {
                                let _ = stop.wait_for(|stop| *stop).await;
                            };
                            Some(tokio::spawn(async move {
                                if let Err(error) = service.serve(listener, tls, stopped).await {
                                    tracing::error!(%error, worker = index, "the gRPC listener failed");
                                }
                            }))
                        })
                        .collect();
                    let stopped = async move {
                        let _ = stop.wait_for(|stop| *stop).await;
                    };
                    match tls {
                        Some(tls) => {
                            bridge_server::run_tls(listener, tls, handler, config, stopped).await;
                        }
                        None => bridge_server::run(listener, handler, config, stopped).await,
                    }
                    for served in grpc {
                        let _ = served.await;
                    }
                });
                let _ = done.try_send(());
            })?;
    }
    Ok(done_rx)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    #[test]
    fn the_workers_sockets_share_one_chosen_port_and_a_held_address_is_refused() {
        let sockets = listeners("127.0.0.1:0".parse().unwrap(), 3).unwrap();
        let ports: Vec<u16> = sockets
            .iter()
            .map(|s| s.local_addr().unwrap().port())
            .collect();
        assert_eq!(ports.len(), 3);
        assert!(
            ports[0] != 0 && ports.iter().all(|&p| p == ports[0]),
            "{ports:?}"
        );
        // Another bridge started on the same address is told the address is in use.
        let taken = sockets[0].local_addr().unwrap();
        let error = listeners(taken, 2).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::AddrInUse, "{error}");
        let error = listeners(taken, 1).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::AddrInUse, "{error}");
    }
}
