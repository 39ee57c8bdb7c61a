//! Prometheus metrics (`--metrics-enabled`, Besu's port 9545): the names, and the one place
//! that records them. Recording through the `metrics` facade costs nothing until an exporter is
//! installed ([`install`]); the node's wiring then also refreshes the gauges every second.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::{net::SocketAddr, time::Duration};

use ::metrics::{Counter, Histogram};

/// Head block number.
pub const HEAD_NUMBER: &str = "l2node_head_number";
/// Seconds since the head block's timestamp.
pub const HEAD_AGE: &str = "l2node_head_age_seconds";
/// Connected peers.
pub const PEERS: &str = "l2node_peers";
/// Blocks behind the highest block peers announced.
pub const SYNC_LAG: &str = "l2node_sync_lag_blocks";
/// Pool transactions, label `state` = `pending` | `queued`.
pub const POOL_TXS: &str = "l2node_pool_transactions";
/// JSON-RPC calls, label `method` (unknown names count as `other`).
pub const RPC_REQUESTS: &str = "l2node_rpc_requests_total";
/// JSON-RPC call latency, label `method`.
pub const RPC_LATENCY: &str = "l2node_rpc_request_duration_seconds";
/// Blocks sealed by this sequencer.
pub const BLOCKS_SEALED: &str = "l2node_blocks_sealed_total";
/// Time to build, seal and commit a block.
pub const BLOCK_SEAL_TIME: &str = "l2node_block_seal_duration_seconds";
/// Blocks imported (from a file or peers).
pub const BLOCKS_IMPORTED: &str = "l2node_blocks_imported_total";
/// Time to verify, execute and commit an imported block.
pub const BLOCK_IMPORT_TIME: &str = "l2node_block_import_duration_seconds";
/// Karma admissions, label `outcome` = `gasless` | `premium` | `refused`.
pub const KARMA_ADMISSIONS: &str = "l2node_karma_admissions_total";

/// Latency buckets (seconds) of the histograms: 100 µs to 10 s.
const BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// Where the metrics are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsConfig {
    /// The scrape endpoint's address (`--metrics-host`, `--metrics-port`).
    pub addr: SocketAddr,
}

/// The exporter could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot serve metrics on {addr}: {reason} (pick another --metrics-port, or one process per node)")]
pub struct MetricsError {
    /// The configured address.
    pub addr: SocketAddr,
    /// What failed.
    pub reason: String,
}

/// Installs the Prometheus exporter, serving `GET /metrics` (any path) on `cfg.addr`. One per
/// process: the `metrics` recorder is global.
pub fn install(cfg: MetricsConfig) -> Result<(), MetricsError> {
    let err = |e: &dyn std::fmt::Display| MetricsError {
        addr: cfg.addr,
        reason: e.to_string(),
    };
    // Bind first, for a clear error when the port is taken (the exporter binds in the
    // background and only logs).
    std::net::TcpListener::bind(cfg.addr).map_err(|e| err(&e))?;
    metrics_exporter_prometheus::PrometheusBuilder::new()
        .with_http_listener(cfg.addr)
        .set_buckets(BUCKETS)
        .map_err(|e| err(&e))?
        .install()
        .map_err(|e| err(&e))?;
    RPC_HANDLES.get_or_init(|| RpcHandles {
        by_method: l2node_api::methods()
            .map(|m| (m.name, OnceLock::new()))
            .collect(),
        other: OnceLock::new(),
    });
    Ok(())
}

/// The JSON-RPC calls' counter and histogram per method name, made once [`install`] ran: a call
/// then costs one map lookup instead of building both metric keys and looking them up in the
/// registry (2% of the node's CPU on eth_blockNumber). Each method's pair is registered on its
/// first call, so `/metrics` lists only the methods that were called.
struct RpcHandles {
    by_method: HashMap<&'static str, OnceLock<(Counter, Histogram)>>,
    other: OnceLock<(Counter, Histogram)>,
}

static RPC_HANDLES: OnceLock<RpcHandles> = OnceLock::new();

fn rpc_handles(method: &'static str) -> (Counter, Histogram) {
    (
        ::metrics::counter!(RPC_REQUESTS, "method" => method),
        ::metrics::histogram!(RPC_LATENCY, "method" => method),
    )
}

/// Whether the JSON-RPC calls are recorded, that is whether [`install`] ran: callers skip
/// timing a call otherwise.
pub fn recording_rpc_calls() -> bool {
    RPC_HANDLES.get().is_some()
}

/// One JSON-RPC call of `method` that took `elapsed` (unknown names count as `other`).
pub fn rpc_call(method: &str, elapsed: Duration) {
    let Some(handles) = RPC_HANDLES.get() else {
        return;
    };
    let (counter, histogram) = match handles.by_method.get_key_value(method) {
        Some((name, slot)) => slot.get_or_init(|| rpc_handles(name)),
        None => handles.other.get_or_init(|| rpc_handles("other")),
    };
    counter.increment(1);
    histogram.record(elapsed.as_secs_f64());
}

/// A block sealed in `elapsed`.
pub fn block_sealed(elapsed: Duration) {
    ::metrics::counter!(BLOCKS_SEALED).increment(1);
    ::metrics::histogram!(BLOCK_SEAL_TIME).record(elapsed.as_secs_f64());
}

/// A block imported in `elapsed`.
pub fn block_imported(elapsed: Duration) {
    ::metrics::counter!(BLOCKS_IMPORTED).increment(1);
    ::metrics::histogram!(BLOCK_IMPORT_TIME).record(elapsed.as_secs_f64());
}

/// A Karma admission decision: `gasless`, `premium` or `refused`.
pub fn karma_admission(outcome: &'static str) {
    ::metrics::counter!(KARMA_ADMISSIONS, "outcome" => outcome).increment(1);
}

/// The values of the gauges.
#[derive(Debug, Clone, Copy)]
pub struct Gauges {
    /// Head number.
    pub head_number: u64,
    /// Head timestamp (seconds).
    pub head_timestamp: u64,
    /// Pending pool transactions.
    pub pending: usize,
    /// Queued pool transactions.
    pub queued: usize,
    /// Connected peers.
    pub peers: usize,
    /// Blocks behind the best peer.
    pub sync_lag: u64,
}

/// The gauges, refreshed by the node every second.
pub fn gauges(g: Gauges) {
    let Gauges {
        head_number,
        head_timestamp,
        pending,
        queued,
        peers,
        sync_lag,
    } = g;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    ::metrics::gauge!(HEAD_NUMBER).set(head_number as f64);
    ::metrics::gauge!(HEAD_AGE).set(now.saturating_sub(head_timestamp) as f64);
    ::metrics::gauge!(POOL_TXS, "state" => "pending").set(pending as f64);
    ::metrics::gauge!(POOL_TXS, "state" => "queued").set(queued as f64);
    ::metrics::gauge!(PEERS).set(peers as f64);
    ::metrics::gauge!(SYNC_LAG).set(sync_lag as f64);
}
