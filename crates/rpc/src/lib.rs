//! The JSON-RPC layer: transports and limits (`server`, `middleware`) and thin method handlers
//! (`eth`, `pubsub`, `misc`) over the node services, with one error table (`error`).

mod accept;
mod call_cache;
mod conductor;
mod convert;
mod dashboard;
mod debug;
mod dev;
mod dispatch;
pub mod error;
mod eth;
mod filters;
mod heavy;
pub mod http_layer;
mod l2;
pub mod middleware;
mod misc;
mod otterscan;
mod params;
mod pubsub;
mod quick;
pub mod server;
mod ws;

use std::sync::Arc;

use jsonrpsee::RpcModule;
use l2node_api::{
    AdminApiServer, ConductorApiServer, DebugApiServer, DevApiServer, EthApiServer,
    EthPubSubApiServer, L2AdminApiServer, L2ApiServer, NetApiServer, OtsApiServer, RpcApiServer,
    TestingApiServer, TraceApiServer, TxpoolApiServer, Web3ApiServer,
};

use l2node_node::chain::Chain;
use l2node_node::constants;
use l2node_node::p2p::NetStatus;
use l2node_node::pool::Pool;

pub use eth::EthRpc;
pub use server::{start_rpc_servers, RpcServerConfig, RpcServerError, RpcServerHandle};

/// Method-level limits.
#[derive(Debug, Clone)]
pub struct RpcConfig {
    /// Gas cap of eth_call / eth_estimateGas.
    pub gas_cap: u64,
    /// Most eth_call and eth_estimateGas answers kept for the head (`--rpc-call-cache-size`;
    /// 0 keeps none).
    pub call_cache_size: usize,
    /// Blocks before the head whose state trie can be read: eth_getProof, eth_simulateV1 and
    /// testing_buildBlockV1 on them (`--rpc-eth-proof-window`; the node keeps their change sets).
    pub eth_proof_window: u64,
    /// Concurrent EVM jobs.
    pub evm_concurrency: usize,
    /// Threads for heavy work (tracing, simulations, wide log searches, large proofs).
    pub heavy_concurrency: usize,
    /// Largest eth_getLogs range (0 = unlimited).
    pub max_logs_range: u64,
    /// Most logs per eth_getLogs answer (0 = unlimited).
    pub max_logs_per_response: usize,
    /// Idle filters expire after this many seconds.
    pub filter_timeout_secs: u64,
    /// Most polling filters installed at once.
    pub max_filters: usize,
    /// The sequencer's sealing address (`eth_coinbase`); `None` on a node that does not seal.
    pub coinbase: Option<alloy_primitives::Address>,
    /// What the fee suggestions sample (`--fee-suggestions-include-premium`).
    pub fee_sampling: l2node_node::fees::Sampling,
    /// Keys unlocked for eth_sendTransaction and the signing methods: the dev accounts with
    /// `--dev`, none otherwise.
    pub unlocked: Vec<alloy_signer_local::PrivateKeySigner>,
    /// The running miner, for `evm_mine`; `None` on a node that does not seal.
    pub miner: Option<l2node_node::miner::MineTrigger>,
    /// The sequencer group this node is a member of, for `conductor_`.
    pub group: Option<Arc<dyn l2node_node::group::GroupControl>>,
}

impl Default for RpcConfig {
    fn default() -> Self {
        Self {
            gas_cap: constants::DEFAULT_RPC_GAS_CAP,
            call_cache_size: constants::DEFAULT_RPC_CALL_CACHE_SIZE,
            eth_proof_window: l2node_storage::DEFAULT_PROOF_WINDOW,
            evm_concurrency: constants::rpc_evm_concurrency(),
            heavy_concurrency: constants::rpc_heavy_concurrency(),
            max_logs_range: constants::MAX_LOGS_RANGE,
            max_logs_per_response: constants::MAX_LOGS_PER_RESPONSE,
            filter_timeout_secs: constants::FILTER_TIMEOUT_SECS,
            max_filters: constants::MAX_FILTERS,
            coinbase: None,
            fee_sampling: Default::default(),
            unlocked: Vec::new(),
            miner: None,
            group: None,
        }
    }
}

/// A JSON-RPC namespace: `--rpc-http-api` / `--rpc-ws-api` choose which each transport serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Namespace {
    /// `eth_` (with `eth_subscribe` on WebSocket).
    Eth,
    /// `net_`.
    Net,
    /// `web3_`.
    Web3,
    /// `txpool_`: the pool's contents, for operators (off by default, like Besu's TXPOOL).
    Txpool,
    /// `l2_` (and `linea_estimateGas`): Karma-aware fees.
    L2,
    /// `debug_`: raw encodings of blocks, headers, receipts and transactions (off by default,
    /// like geth's and Besu's DEBUG).
    Debug,
    /// `trace_`: Parity-style traces (off by default, like Besu's TRACE).
    Trace,
    /// `ots_`: Otterscan's API (off by default, like Erigon's OTS).
    Ots,
    /// `admin_`: peers and this node's network identity, for operators (off by default, like
    /// geth's and Besu's ADMIN).
    Admin,
    /// `l2admin_`: the Karma operator controls (off by default; see the README before
    /// exposing it).
    L2admin,
    /// `evm_mine`, `evm_increaseTime`, `evm_setNextBlockTimestamp`: anvil's block controls
    /// (on by default only with `--dev`).
    Dev,
    /// `testing_buildBlockV1` (execution-apis): builds a block without storing it, for test
    /// harnesses (off by default).
    Testing,
    /// `conductor_`: a sequencer group member's controls (off by default; loopback only, like
    /// ADMIN).
    Conductor,
}

impl Namespace {
    /// Every namespace the node has.
    pub const ALL: [Namespace; 13] = [
        Self::Eth,
        Self::Net,
        Self::Web3,
        Self::Txpool,
        Self::L2,
        Self::L2admin,
        Self::Admin,
        Self::Debug,
        Self::Trace,
        Self::Ots,
        Self::Dev,
        Self::Testing,
        Self::Conductor,
    ];

    /// The method-name prefix (`eth` for `eth_call`).
    pub fn prefix(self) -> &'static str {
        match self {
            Self::Eth => "eth",
            Self::Net => "net",
            Self::Web3 => "web3",
            Self::Txpool => "txpool",
            Self::L2 => "l2",
            Self::L2admin => "l2admin",
            Self::Admin => "admin",
            Self::Debug => "debug",
            Self::Trace => "trace",
            Self::Ots => "ots",
            Self::Dev => "dev",
            Self::Testing => "testing",
            Self::Conductor => "conductor",
        }
    }

    /// The namespace of a method name.
    pub fn of(method: &str) -> Option<Self> {
        let prefix = method.split('_').next()?;
        match prefix {
            "linea" => return Some(Self::L2),
            "evm" => return Some(Self::Dev),
            _ => {}
        }
        Self::ALL.into_iter().find(|n| n.prefix() == prefix)
    }

    /// The defaults of [`constants::DEFAULT_RPC_APIS`].
    pub fn defaults() -> Vec<Self> {
        constants::DEFAULT_RPC_APIS
            .iter()
            .map(|n| n.parse().expect("valid default"))
            .collect()
    }
}

impl std::str::FromStr for Namespace {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|n| n.prefix().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                let all: Vec<String> = Self::ALL.iter().map(Self::to_string).collect();
                format!(
                    "unknown API namespace \"{s}\": use a comma-separated list of {}",
                    all.join(", ")
                )
            })
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.prefix().to_ascii_uppercase())
    }
}

/// What the servers serve: the methods, and what the dispatcher answers before jsonrpsee's
/// method machinery (`dispatch::Shortcuts`: repeated eth_call and eth_estimateGas from the
/// answers kept at the head, and the light reads of `quick`).
pub struct Module {
    methods: RpcModule<()>,
    shortcuts: Option<Arc<dispatch::Shortcuts>>,
}

/// Methods alone (every call through jsonrpsee's method machinery).
impl From<RpcModule<()>> for Module {
    fn from(methods: RpcModule<()>) -> Self {
        Self {
            methods,
            shortcuts: None,
        }
    }
}

/// Every namespace merged into one module; each server serves the namespaces enabled for it.
pub fn build_module(
    chain: Arc<Chain>,
    pool: Arc<Pool>,
    net: Arc<NetStatus>,
    cfg: RpcConfig,
) -> Module {
    let mut module = RpcModule::new(());
    let cfg_miner = cfg.miner.clone();
    let group = cfg.group.clone();
    let eth = EthRpc::new(chain.clone(), pool.clone(), cfg).with_net(net.clone());
    let shortcuts = Some(Arc::new(dispatch::Shortcuts {
        kept_calls: eth.kept_calls(),
        quick: quick::Quick::new(eth.clone()),
    }));
    module
        .merge(DebugApiServer::into_rpc(eth.clone()))
        .expect("unique names");
    module
        .merge(TraceApiServer::into_rpc(eth.clone()))
        .expect("unique names");
    module
        .merge(OtsApiServer::into_rpc(eth.clone()))
        .expect("unique names");
    module
        .merge(RpcApiServer::into_rpc(debug::RpcModules(
            Namespace::ALL.to_vec(),
        )))
        .expect("unique names");
    module
        .merge(L2ApiServer::into_rpc(eth.clone()))
        .expect("unique names");
    module
        .merge(TestingApiServer::into_rpc(eth.clone()))
        .expect("unique names");
    module
        .merge(EthApiServer::into_rpc(eth))
        .expect("unique names");
    module
        .merge(
            l2::L2AdminRpc {
                karma: pool.karma().cloned(),
            }
            .into_rpc(),
        )
        .expect("unique names");
    module
        .merge(pubsub::PubSubRpc::new(chain.clone(), pool.clone(), net.clone()).into_rpc())
        .expect("unique names");
    let net = misc::NetRpc {
        chain: chain.clone(),
        net,
    };
    module
        .merge(AdminApiServer::into_rpc(net.clone()))
        .expect("unique names");
    module
        .merge(NetApiServer::into_rpc(net.clone()))
        .expect("unique names");
    module
        .merge(Web3ApiServer::into_rpc(net))
        .expect("unique names");
    module
        .merge(
            dev::DevRpc {
                chain: chain.clone(),
                miner: cfg_miner,
            }
            .into_rpc(),
        )
        .expect("unique names");
    module
        .merge(misc::TxpoolRpc { pool }.into_rpc())
        .expect("unique names");
    module
        .merge(conductor::ConductorRpc { group }.into_rpc())
        .expect("unique names");
    Module {
        methods: module,
        shortcuts,
    }
}
