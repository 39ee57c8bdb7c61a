//! JSON-RPC options (`--rpc-*`, `--host-allowlist`): the servers' transports and limits
//! ([`RpcServerConfig`]) and the methods' limits ([`RpcConfig`]). Every field of both is reachable
//! here but `RpcServerConfig::probes` (wired by the node) and `RpcConfig::coinbase` (the
//! signer's address).

use std::{
    num::{NonZeroU64, NonZeroUsize},
    time::Duration,
};

use clap::ArgAction;
use l2node_node::constants as c;
use l2node_node::fees::Sampling;
use l2node_rpc::{Namespace, RpcConfig, RpcServerConfig};

use super::{namespace_parser, secs, socket};

/// A whole number of seconds as a [`Duration`].
fn duration(s: NonZeroU64) -> Duration {
    Duration::from_secs(s.get())
}

option_group! {
    /// JSON-RPC over HTTP and WebSocket.
    #[command(next_help_heading = "JSON-RPC")]
    pub(crate) struct RpcArgs {
        /// Serve JSON-RPC over HTTP.
        #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
              default_value_t = true, value_name = "BOOL")]
        pub rpc_http_enabled: bool,
        /// HTTP listen host.
        #[arg(long, value_name = "HOST", default_value_t = c::DEFAULT_RPC_HTTP_ADDR.ip().to_string())]
        pub rpc_http_host: String,
        /// HTTP listen port (0 = any free port; devnet: the sequencer's, see --sequencer-ports).
        #[arg(long, value_name = "PORT", default_value_t = c::DEFAULT_RPC_HTTP_PORT)]
        pub rpc_http_port: u16,
        /// Serve JSON-RPC over WebSocket (subscriptions).
        #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
              default_value_t = true, value_name = "BOOL")]
        pub rpc_ws_enabled: bool,
        /// WebSocket listen host.
        #[arg(long, value_name = "HOST", default_value_t = c::DEFAULT_RPC_WS_ADDR.ip().to_string())]
        pub rpc_ws_host: String,
        /// WebSocket listen port (0 = any free port; devnet: the sequencer's, see
        /// --sequencer-ports).
        #[arg(long, value_name = "PORT", default_value_t = c::DEFAULT_RPC_WS_PORT)]
        pub rpc_ws_port: u16,
        /// Host names accepted in the Host header, comma-separated; "*" accepts any.
        #[arg(long, value_name = "HOST", value_delimiter = ',',
              default_values_t = c::DEFAULT_RPC_HOST_ALLOWLIST.iter().map(|s| s.to_string()))]
        pub host_allowlist: Vec<String>,
        /// Origins allowed for browser requests (CORS), comma-separated; "*" allows all.
        #[arg(long, value_name = "ORIGIN", value_delimiter = ',',
              default_values_t = c::DEFAULT_RPC_CORS_ORIGINS.iter().map(|s| s.to_string()))]
        pub rpc_http_cors_origins: Vec<String>,
        /// Namespaces served over HTTP, comma-separated, case-insensitive. ADMIN and L2ADMIN are
        /// refused on a non-loopback host (see --rpc-l2admin-allow-remote).
        #[arg(long, value_name = "API", value_delimiter = ',', ignore_case = true,
              value_parser = namespace_parser(), default_values_t = Namespace::defaults())]
        pub rpc_http_api: Vec<Namespace>,
        /// Namespaces served over WebSocket, comma-separated, case-insensitive.
        #[arg(long, value_name = "API", value_delimiter = ',', ignore_case = true,
              value_parser = namespace_parser(), default_values_t = Namespace::defaults())]
        pub rpc_ws_api: Vec<Namespace>,
        /// Browser origins allowed to open a WebSocket, comma-separated ([scheme://]host[:port];
        /// a part left out matches any); clients without an Origin header are always allowed;
        /// "*" allows all.
        #[arg(long, value_name = "ORIGIN", value_delimiter = ',',
              default_values_t = c::DEFAULT_RPC_WS_ORIGINS.iter().map(|s| s.to_string()))]
        pub rpc_ws_origins: Vec<String>,
        /// Allow ADMIN and L2ADMIN on a non-loopback listen address (refused at start
        /// otherwise). Only for a private network or behind an authenticating proxy.
        #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
              default_value_t = false, value_name = "BOOL")]
        pub rpc_l2admin_allow_remote: bool,
        /// Most requests in one batch (HTTP and WS). 1, 0 and negative values mean unlimited.
        #[arg(long, value_name = "N", allow_hyphen_values = true,
              default_value_t = c::DEFAULT_RPC_MAX_BATCH_SIZE)]
        pub rpc_http_max_batch_size: i64,
        /// Largest request body in bytes (larger: HTTP 413).
        #[arg(long, value_name = "BYTES", default_value_t = c::DEFAULT_RPC_MAX_REQUEST_BODY)]
        pub rpc_http_max_request_content_length: u32,
        /// Largest response in bytes (larger: error -32005).
        #[arg(long, value_name = "BYTES", default_value_t = c::DEFAULT_RPC_MAX_RESPONSE_BODY)]
        pub rpc_max_response_size: u32,
        /// Most simultaneous TCP connections per server (HTTP and WS each); more get HTTP 503.
        #[arg(long, value_name = "N", default_value_t = c::DEFAULT_RPC_MAX_CONNECTIONS)]
        pub rpc_max_connections: u32,
        /// Seconds a client may take to send a request's headers (on a new connection: its
        /// first request); then the connection is closed.
        #[arg(long, value_name = "SECS", default_value_t = secs(c::RPC_HEADER_READ_TIMEOUT))]
        pub rpc_header_read_timeout: NonZeroU64,
        /// Seconds an HTTP keep-alive connection may stay idle between requests.
        #[arg(long, value_name = "SECS", default_value_t = secs(c::RPC_HTTP_IDLE_TIMEOUT))]
        pub rpc_http_idle_timeout: NonZeroU64,
        /// Seconds reading one request body may take; then HTTP 408 and the connection closes.
        #[arg(long, value_name = "SECS", default_value_t = secs(c::RPC_BODY_READ_TIMEOUT))]
        pub rpc_body_read_timeout: NonZeroU64,
        /// Seconds between the WebSocket server's pings to each connection.
        #[arg(long, value_name = "SECS", default_value_t = secs(c::RPC_WS_PING_INTERVAL))]
        pub rpc_ws_ping_interval: NonZeroU64,
        /// Seconds after which a WebSocket that sent nothing, not even a pong, is closed.
        #[arg(long, value_name = "SECS", default_value_t = secs(c::RPC_WS_INACTIVITY_LIMIT))]
        pub rpc_ws_inactivity_timeout: NonZeroU64,
        /// Most subscriptions per WebSocket connection.
        #[arg(long, value_name = "N",
              default_value_t = c::DEFAULT_RPC_MAX_SUBSCRIPTIONS_PER_CONNECTION)]
        pub rpc_ws_max_subscriptions: u32,
        /// Largest WebSocket message in bytes.
        #[arg(long, value_name = "BYTES", default_value_t = c::DEFAULT_RPC_WS_MAX_MESSAGE)]
        pub rpc_ws_max_frame_size: u32,
        /// Gas cap of eth_call and eth_estimateGas.
        #[arg(long, value_name = "GAS", default_value_t = c::DEFAULT_RPC_GAS_CAP)]
        pub rpc_gas_cap: u64,
        /// Most eth_call and eth_estimateGas answers kept for the head block: the same request
        /// at the same head is answered without running it again (0 keeps none). A call at
        /// `latest` counts twice (also kept under its params as sent). Kept answers are dropped
        /// at each new block, and hold at most 8 MiB.
        #[arg(long, value_name = "N", default_value_t = c::DEFAULT_RPC_CALL_CACHE_SIZE)]
        pub rpc_call_cache_size: usize,
        /// Blocks before the head whose state trie can be read: eth_getProof, eth_simulateV1 and
        /// testing_buildBlockV1 on them. Older blocks answer an error naming this flag. The node
        /// keeps what each block of the window changed (bytes per block, not per block of
        /// history); a request at block head - k sets back what the k later blocks changed, so a
        /// wider window costs more per request.
        #[arg(long, value_name = "BLOCKS", default_value_t = l2node_storage::DEFAULT_PROOF_WINDOW)]
        pub rpc_eth_proof_window: u64,
        /// Concurrent EVM jobs of eth_call, eth_estimateGas and other light requests [default: 4
        /// per CPU core].
        #[arg(long, value_name = "N")]
        pub rpc_evm_concurrency: Option<NonZeroUsize>,
        /// Threads for heavy requests (traces, eth_simulateV1, wide eth_getLogs, large
        /// eth_getProof, ots_ searches), run at a lower OS priority so they cannot starve light
        /// ones [default: CPU cores - 1, at least 1].
        #[arg(long, value_name = "N")]
        pub rpc_heavy_concurrency: Option<NonZeroUsize>,
        /// Largest eth_getLogs block range (0 = unlimited).
        #[arg(long, value_name = "BLOCKS", default_value_t = c::MAX_LOGS_RANGE)]
        pub rpc_max_logs_range: u64,
        /// Most logs in one eth_getLogs answer (0 = unlimited).
        #[arg(long, value_name = "N", default_value_t = c::MAX_LOGS_PER_RESPONSE)]
        pub rpc_max_logs_per_response: usize,
        /// Seconds after which a filter nobody polls is removed.
        #[arg(long, value_name = "SECS",
              default_value_t = NonZeroU64::new(c::FILTER_TIMEOUT_SECS).expect("non-zero"))]
        pub rpc_filter_timeout: NonZeroU64,
        /// Most polling filters installed at once (all clients together).
        #[arg(long, value_name = "N", default_value_t = c::MAX_FILTERS)]
        pub rpc_max_filters: usize,
        /// Let eth_gasPrice, eth_maxPriorityFeePerGas and eth_feeHistory sample premium-path
        /// transactions too (geth's plain behaviour). By default a Karma chain leaves them out,
        /// so a wallet's default fees keep a Karma holder gasless after blocks of premium
        /// transactions.
        #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
              default_value_t = false, value_name = "BOOL")]
        pub fee_suggestions_include_premium: bool,
    }
}

impl RpcArgs {
    /// The servers' configuration; a dev node (`dev`) adds DEV to the default namespaces.
    /// Every field is named, so a new limit in [`RpcServerConfig`] does not compile until it
    /// has a flag (or a reason not to).
    pub(crate) fn server_config_for(&self, dev: bool) -> anyhow::Result<RpcServerConfig> {
        Ok(RpcServerConfig {
            http_enabled: self.rpc_http_enabled,
            http_addr: socket(&self.rpc_http_host, self.rpc_http_port)?,
            ws_enabled: self.rpc_ws_enabled,
            ws_addr: socket(&self.rpc_ws_host, self.rpc_ws_port)?,
            max_batch_size: self.rpc_http_max_batch_size,
            max_request_body: self.rpc_http_max_request_content_length,
            max_response_body: self.rpc_max_response_size,
            max_connections: self.rpc_max_connections,
            header_read_timeout: duration(self.rpc_header_read_timeout),
            http_idle_timeout: duration(self.rpc_http_idle_timeout),
            body_read_timeout: duration(self.rpc_body_read_timeout),
            ws_ping_interval: duration(self.rpc_ws_ping_interval),
            ws_inactivity_limit: duration(self.rpc_ws_inactivity_timeout),
            max_subscriptions_per_connection: self.rpc_ws_max_subscriptions,
            ws_max_message: self.rpc_ws_max_frame_size,
            host_allowlist: self.host_allowlist.clone(),
            cors_origins: self.rpc_http_cors_origins.clone(),
            http_apis: with_dev(&self.rpc_http_api, dev),
            ws_apis: with_dev(&self.rpc_ws_api, dev),
            ws_origins: self.rpc_ws_origins.clone(),
            // Wired by `l2node_launch::spawn` (peers and sync lag for GET /readiness).
            probes: None,
            l2admin_allow_remote: self.rpc_l2admin_allow_remote,
        })
    }

    /// The methods' limits (the unlocked keys are the role's, set by the caller).
    pub(crate) fn rpc_config(&self) -> RpcConfig {
        RpcConfig {
            gas_cap: self.rpc_gas_cap,
            call_cache_size: self.rpc_call_cache_size,
            eth_proof_window: self.rpc_eth_proof_window,
            evm_concurrency: self
                .rpc_evm_concurrency
                .map_or_else(c::rpc_evm_concurrency, NonZeroUsize::get),
            heavy_concurrency: self
                .rpc_heavy_concurrency
                .map_or_else(c::rpc_heavy_concurrency, NonZeroUsize::get),
            max_logs_range: self.rpc_max_logs_range,
            max_logs_per_response: self.rpc_max_logs_per_response,
            filter_timeout_secs: self.rpc_filter_timeout.get(),
            max_filters: self.rpc_max_filters,
            fee_sampling: if self.fee_suggestions_include_premium {
                Sampling::All
            } else {
                Sampling::GaslessOnly
            },
            // Set by `l2node_launch::spawn` from the signer.
            coinbase: None,
            miner: None,
            group: None,
            unlocked: Vec::new(),
        }
    }
}

/// The namespaces of a server: on a dev node the default list gains DEV (anvil's block
/// controls); a list the operator gave is taken as given.
fn with_dev(apis: &[Namespace], dev: bool) -> Vec<Namespace> {
    let mut apis = apis.to_vec();
    if dev && apis == Namespace::defaults() {
        apis.push(Namespace::Dev);
    }
    apis
}
