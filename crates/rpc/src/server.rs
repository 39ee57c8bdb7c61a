//! The JSON-RPC transports: one `RpcModule` served over HTTP on one port and WebSocket on another.
//!
//! Both serve jsonrpsee's `RpcModule`, its methods called directly by `dispatch` (one parse per
//! message, the JSON-RPC id and batch rules) behind `middleware`'s `WireRules`: over HTTP from
//! `http_layer` (hyper), over WebSocket from `ws` (tokio-tungstenite for the frames). Both match
//! geth and the JSON-RPC 2.0 spec on the wire. `accept` runs each server's accept loop: the
//! connection cap counts TCP connections, and idle or slow clients are timed out; WebSockets are
//! pinged (`ws`) and closed when they stop answering.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use jsonrpsee::core::server::ConnectionId;
use jsonrpsee::server::{stop_channel, IdProvider, ServerHandle, StopHandle};
use jsonrpsee::types::SubscriptionId;
use jsonrpsee::{Methods, RpcModule};
use tokio::net::TcpListener;
use tower::Layer;

use super::accept::{self, ConnectionLimits};
use super::dispatch::ModuleService;
use super::middleware::{Transport, WireRulesLayer};
use super::ws::{WsServer, WsSettings};
use super::{
    http_layer::{Backend, HttpWire, ProbeSource},
    Module, Namespace,
};
use l2node_node::constants::{
    DEFAULT_RPC_CORS_ORIGINS, DEFAULT_RPC_HOST_ALLOWLIST, DEFAULT_RPC_HTTP_ADDR,
    DEFAULT_RPC_MAX_BATCH_SIZE, DEFAULT_RPC_MAX_CONNECTIONS, DEFAULT_RPC_MAX_REQUEST_BODY,
    DEFAULT_RPC_MAX_RESPONSE_BODY, DEFAULT_RPC_MAX_SUBSCRIPTIONS_PER_CONNECTION,
    DEFAULT_RPC_WS_ADDR, DEFAULT_RPC_WS_MAX_MESSAGE, DEFAULT_RPC_WS_ORIGINS, RPC_BODY_READ_TIMEOUT,
    RPC_HEADER_READ_TIMEOUT, RPC_HTTP_IDLE_TIMEOUT, RPC_WS_INACTIVITY_LIMIT, RPC_WS_PING_INTERVAL,
};

/// The WebSocket server's name in logs and errors.
const WS: &str = "WebSocket";

/// Runtime configuration of the HTTP and WebSocket JSON-RPC servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcServerConfig {
    /// Serve JSON-RPC over HTTP POST.
    pub http_enabled: bool,
    /// HTTP listen address; port 0 picks a free port (see [`RpcServerHandle::http_addr`]).
    pub http_addr: SocketAddr,
    /// Serve JSON-RPC over WebSocket (the only transport with subscriptions).
    pub ws_enabled: bool,
    /// WebSocket listen address; port 0 picks a free port.
    pub ws_addr: SocketAddr,
    /// Most requests in one batch, HTTP and WS; 1, 0 and negative values mean unlimited.
    pub max_batch_size: i64,
    /// Largest HTTP request body in bytes; larger bodies get HTTP 413.
    pub max_request_body: u32,
    /// Largest response in bytes; larger responses become a `-32005` error.
    pub max_response_body: u32,
    /// Most open TCP connections, per server; more are answered HTTP 503 and closed.
    pub max_connections: u32,
    /// Longest a client may take to send a request's headers (and, on a new connection, its
    /// first request); then the connection is closed.
    pub header_read_timeout: Duration,
    /// Longest an HTTP keep-alive connection may stay idle between requests.
    pub http_idle_timeout: Duration,
    /// Longest reading an HTTP request body may take; then HTTP 408 and the connection closes.
    pub body_read_timeout: Duration,
    /// How often the WebSocket server pings each connection.
    pub ws_ping_interval: Duration,
    /// A WebSocket that sends nothing (not even a pong) for this long is closed.
    pub ws_inactivity_limit: Duration,
    /// Most live subscriptions per WebSocket connection.
    pub max_subscriptions_per_connection: u32,
    /// Largest WebSocket message in bytes.
    pub ws_max_message: u32,
    /// Host names accepted in the `Host` header (port ignored, case-insensitive); `"*"` = any.
    pub host_allowlist: Vec<String>,
    /// Origins allowed for browser (CORS) requests; empty = none, `"*"` = all.
    pub cors_origins: Vec<String>,
    /// Namespaces served over HTTP.
    pub http_apis: Vec<Namespace>,
    /// Namespaces served over WebSocket.
    pub ws_apis: Vec<Namespace>,
    /// Browser origins allowed to open a WebSocket (`[scheme://]host[:port]`; a part left out
    /// matches any); requests without `Origin` are always allowed; `"*"` = all.
    pub ws_origins: Vec<String>,
    /// Where `GET /readiness` reads peers and sync lag (`None`: 0 peers, not behind).
    pub probes: Option<ProbeSource>,
    /// Serve `l2admin` on a server bound to a non-loopback address
    /// (`--rpc-l2admin-allow-remote`); without it such a configuration is refused at start.
    pub l2admin_allow_remote: bool,
}

impl Default for RpcServerConfig {
    fn default() -> Self {
        Self {
            http_enabled: true,
            http_addr: DEFAULT_RPC_HTTP_ADDR,
            ws_enabled: true,
            ws_addr: DEFAULT_RPC_WS_ADDR,
            max_batch_size: DEFAULT_RPC_MAX_BATCH_SIZE,
            max_request_body: DEFAULT_RPC_MAX_REQUEST_BODY,
            max_response_body: DEFAULT_RPC_MAX_RESPONSE_BODY,
            max_connections: DEFAULT_RPC_MAX_CONNECTIONS,
            header_read_timeout: RPC_HEADER_READ_TIMEOUT,
            http_idle_timeout: RPC_HTTP_IDLE_TIMEOUT,
            body_read_timeout: RPC_BODY_READ_TIMEOUT,
            ws_ping_interval: RPC_WS_PING_INTERVAL,
            ws_inactivity_limit: RPC_WS_INACTIVITY_LIMIT,
            max_subscriptions_per_connection: DEFAULT_RPC_MAX_SUBSCRIPTIONS_PER_CONNECTION,
            ws_max_message: DEFAULT_RPC_WS_MAX_MESSAGE,
            host_allowlist: DEFAULT_RPC_HOST_ALLOWLIST
                .iter()
                .map(|h| h.to_string())
                .collect(),
            cors_origins: DEFAULT_RPC_CORS_ORIGINS
                .iter()
                .map(|o| o.to_string())
                .collect(),
            http_apis: Namespace::defaults(),
            ws_apis: Namespace::defaults(),
            ws_origins: DEFAULT_RPC_WS_ORIGINS
                .iter()
                .map(|o| o.to_string())
                .collect(),
            l2admin_allow_remote: false,
            probes: None,
        }
    }
}

/// Failure to start the RPC servers.
#[derive(Debug, thiserror::Error)]
pub enum RpcServerError {
    /// The listen address could not be bound (in use, no permission, ...).
    #[error("cannot listen for JSON-RPC over {transport} on {addr}: {source}")]
    Bind {
        /// `"HTTP"` or `"WebSocket"`.
        transport: &'static str,
        /// The address from the configuration.
        addr: SocketAddr,
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
    /// The operator namespace would be reachable from other machines.
    #[error("the {namespace} namespace is enabled on {transport} bound to {addr}, which is not a loopback address: anyone who can reach it could use its operator methods (switch gasless off, deny-list senders, list peers). Bind that transport to 127.0.0.1 (and reach it through an SSH tunnel or an authenticating proxy), or pass --rpc-l2admin-allow-remote (it covers ADMIN, L2ADMIN and CONDUCTOR) if the network is private")]
    RemoteAdmin {
        /// `L2ADMIN` or `ADMIN`.
        namespace: Namespace,
        /// `"HTTP"` or `"WebSocket"`.
        transport: &'static str,
        /// The address from the configuration.
        addr: SocketAddr,
    },
}

/// Running RPC servers: their bound addresses and a way to stop them.
#[derive(Debug, Clone)]
pub struct RpcServerHandle {
    /// Bound HTTP address, `None` when HTTP is disabled.
    pub http_addr: Option<SocketAddr>,
    /// Bound WebSocket address, `None` when WebSocket is disabled.
    pub ws_addr: Option<SocketAddr>,
    http: Option<ServerHandle>,
    ws: Option<ServerHandle>,
}

impl RpcServerHandle {
    /// Asks both servers to stop; in-flight requests finish. Stopping twice is harmless.
    pub fn stop(&self) {
        for handle in [&self.http, &self.ws].into_iter().flatten() {
            let _ = handle.stop();
        }
    }

    /// Resolves once both servers have stopped.
    pub async fn stopped(self) {
        if let Some(h) = self.http {
            h.stopped().await;
        }
        if let Some(h) = self.ws {
            h.stopped().await;
        }
    }
}

/// Subscription ids as geth and reth write them: `"0x"` + 32 random hex digits.
#[derive(Debug, Clone, Copy, Default)]
pub struct HexSubscriptionIdProvider;

impl IdProvider for HexSubscriptionIdProvider {
    fn next_id(&self) -> SubscriptionId<'static> {
        SubscriptionId::Str(format!("0x{:032x}", random_u128()).into())
    }
}

/// 128 unpredictable bits without a `rand` dependency: SipHash under the process's random keys
/// (std's `RandomState`) of a counter is a keyed PRF, so ids do not repeat and cannot be guessed.
fn random_u128() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let half = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_u64(salt);
        h.finish()
    };
    (u128::from(half(0)) << 64) | u128::from(half(1))
}

/// The methods of `module` but those of a [`Namespace`] not in `apis`.
fn serving(module: &RpcModule<()>, apis: &[Namespace]) -> Methods {
    let mut served = module.clone();
    for name in module.method_names() {
        if Namespace::of(name).is_some_and(|n| !apis.contains(&n)) {
            served.remove_method(name);
        }
    }
    // `rpc_modules` names what this transport serves.
    served.remove_method("rpc_modules");
    served
        .merge(l2node_api::RpcApiServer::into_rpc(
            super::debug::RpcModules(apis.to_vec()),
        ))
        .expect("rpc_modules removed above");
    served.into()
}

/// Starts the enabled servers for `module` (each with the namespaces enabled for it): jsonrpsee's
/// `http_only()` server on `http_addr`, `ws` on `ws_addr`. Port 0 is allowed; the handle reports
/// the bound addresses.
pub async fn start_rpc_servers(
    module: impl Into<Module>,
    cfg: &RpcServerConfig,
) -> Result<RpcServerHandle, RpcServerError> {
    let Module {
        methods: module,
        shortcuts,
    } = module.into();
    for (transport, enabled, addr, apis) in [
        ("HTTP", cfg.http_enabled, cfg.http_addr, &cfg.http_apis),
        (WS, cfg.ws_enabled, cfg.ws_addr, &cfg.ws_apis),
    ] {
        let admin = [Namespace::L2admin, Namespace::Admin, Namespace::Conductor]
            .into_iter()
            .find(|n| apis.contains(n));
        if let Some(namespace) =
            admin.filter(|_| enabled && !addr.ip().is_loopback() && !cfg.l2admin_allow_remote)
        {
            return Err(RpcServerError::RemoteAdmin {
                namespace,
                transport,
                addr,
            });
        }
    }
    let http_methods = serving(&module, &cfg.http_apis);
    let methods = serving(&module, &cfg.ws_apis);

    // Bind WS first so the HTTP subscription error can name the real WebSocket address.
    let ws = if cfg.ws_enabled {
        let (listener, addr) = bind(WS, cfg.ws_addr).await?;
        let rules = WireRulesLayer::new(
            Transport::Ws,
            &methods,
            cfg.max_batch_size,
            cfg.max_response_body,
            None,
        )
        .with_disabled(&module, &methods, "--rpc-ws-api");
        let wire = HttpWire::new(
            Transport::Ws,
            cfg.ws_max_message,
            cfg.body_read_timeout,
            &cfg.host_allowlist,
            &cfg.ws_origins,
        );
        let server = WsServer::new(
            methods,
            shortcuts.clone(),
            rules,
            WsSettings {
                max_message: cfg.ws_max_message,
                max_response_body: cfg.max_response_body,
                max_subscriptions: cfg.max_subscriptions_per_connection,
                ping_interval: cfg.ws_ping_interval,
                inactivity_limit: cfg.ws_inactivity_limit,
            },
            HexSubscriptionIdProvider,
        );
        Some((
            addr,
            spawn_server(listener, cfg, wire, WS, |stop| {
                Backend::Upgrade(server.upgrader(stop))
            }),
        ))
    } else {
        None
    };

    let http = if cfg.http_enabled {
        let (listener, addr) = match bind("HTTP", cfg.http_addr).await {
            Ok(bound) => bound,
            Err(err) => {
                if let Some((_, handle)) = &ws {
                    let _ = handle.stop();
                }
                return Err(err);
            }
        };
        let ws_url = ws.as_ref().map(|(addr, _)| format!("ws://{addr}"));
        let rules = WireRulesLayer::new(
            Transport::Http,
            &http_methods,
            cfg.max_batch_size,
            cfg.max_response_body,
            ws_url,
        )
        .with_disabled(&module, &http_methods, "--rpc-http-api");
        let calls = rules.layer(ModuleService {
            methods: http_methods,
            conn_id: ConnectionId(0),
            max_response_body: cfg.max_response_body as usize,
            subscriptions: None,
            shortcuts,
        });
        let wire = HttpWire::new(
            Transport::Http,
            cfg.max_request_body,
            cfg.body_read_timeout,
            &cfg.host_allowlist,
            &cfg.cors_origins,
        )
        .with_dashboard(ws.as_ref().map(|(addr, _)| addr.port()))
        .with_probes(cfg.probes.clone());
        Some((
            addr,
            spawn_server(listener, cfg, wire, "HTTP", |_| {
                Backend::Calls(Arc::new(calls))
            }),
        ))
    } else {
        None
    };

    tracing::info!(
        http = ?http.as_ref().map(|(a, _)| a),
        ws = ?ws.as_ref().map(|(a, _)| a),
        max_connections = cfg.max_connections,
        "JSON-RPC servers started"
    );
    let (http_addr, http) = http.unzip();
    let (ws_addr, ws) = ws.unzip();
    Ok(RpcServerHandle {
        http_addr,
        ws_addr,
        http,
        ws,
    })
}

async fn bind(
    transport: &'static str,
    addr: SocketAddr,
) -> Result<(TcpListener, SocketAddr), RpcServerError> {
    let bind_err = |source| RpcServerError::Bind {
        transport,
        addr,
        source,
    };
    let listener = TcpListener::bind(addr).await.map_err(bind_err)?;
    let bound = listener.local_addr().map_err(bind_err)?;
    Ok((listener, bound))
}

/// Runs one server on `listener` with our accept loop (see `accept`): `wire` in front of the
/// backend that `backend` makes with the server's stop handle.
fn spawn_server(
    listener: TcpListener,
    cfg: &RpcServerConfig,
    wire: HttpWire,
    transport: &'static str,
    backend: impl FnOnce(StopHandle) -> Backend,
) -> ServerHandle {
    let (stop, handle) = stop_channel();
    let limits = ConnectionLimits {
        max_connections: cfg.max_connections,
        header_timeout: cfg.header_read_timeout,
        idle_timeout: cfg.http_idle_timeout,
    };
    let backend = backend(stop.clone());
    tokio::spawn(accept::serve(
        listener, limits, wire, backend, stop, transport,
    ));
    handle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscription_ids_are_0x_and_32_hex_digits() {
        let SubscriptionId::Str(id) = HexSubscriptionIdProvider.next_id() else {
            panic!("expected a string id")
        };
        assert_eq!(id.len(), 34);
        assert!(id.starts_with("0x"));
        assert!(id[2..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    }
}
