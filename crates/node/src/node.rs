//! Wiring: `spawn(NodeConfig)` opens storage, the chain and the pool, starts the miner (with a
//! key) and the RPC servers, and returns a handle.

use std::{path::PathBuf, sync::Arc, time::Duration};

use alloy_signer_local::PrivateKeySigner;

use crate::{
    chain::{Chain, ChainError},
    chainspec::ChainSpec,
    miner::{self, MinerConfig},
    pool::{Pool, PoolConfig, PoolError},
    rpc::{self, RpcConfig, RpcServerConfig, RpcServerError, RpcServerHandle},
    storage::{Storage, StorageError},
};

/// Everything a node needs to start.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// Directory of the database and the pool journal.
    pub data_dir: PathBuf,
    /// The chain.
    pub spec: Arc<ChainSpec>,
    /// Sealing key: a node with one is a sequencer, without one it never mines.
    pub signer: Option<PrivateKeySigner>,
    /// Block period; zero mines on each transaction.
    pub block_time: Duration,
    /// Seal blocks without transactions.
    pub create_empty_blocks: bool,
    /// Transports and their limits.
    pub rpc_server: RpcServerConfig,
    /// Method-level limits.
    pub rpc: RpcConfig,
    /// Pool sizing.
    pub pool: PoolConfig,
}

/// Errors while starting a node.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Storage failed to open.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The chain failed to open.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// The pool failed to open.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// A server failed to bind.
    #[error("cannot start the RPC servers: {0}")]
    Rpc(#[from] RpcServerError),
}

/// A running node.
pub struct NodeHandle {
    /// The chain service.
    pub chain: Arc<Chain>,
    /// The transaction pool.
    pub pool: Arc<Pool>,
    /// The RPC servers (bound addresses inside).
    pub rpc: RpcServerHandle,
    miner: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for NodeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeHandle")
            .field("chain", &self.chain)
            .finish_non_exhaustive()
    }
}

/// Dropping the handle stops the miner and the servers (without waiting, unlike [`NodeHandle::stop`]).
impl Drop for NodeHandle {
    fn drop(&mut self) {
        if let Some(m) = self.miner.take() {
            m.abort();
        }
        self.rpc.stop();
    }
}

impl NodeHandle {
    /// Stops mining and the servers and waits for them. Committed blocks are already durable.
    pub async fn stop(mut self) {
        if let Some(m) = self.miner.take() {
            m.abort();
            let _ = m.await;
        }
        self.rpc.stop();
        self.rpc.clone().stopped().await;
    }
}

/// The database file inside a data directory.
pub fn db_path(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("chain.redb")
}

/// Opens storage and the chain without serving (used by `import`).
pub fn open_chain(
    data_dir: &std::path::Path,
    spec: Arc<ChainSpec>,
) -> Result<Arc<Chain>, NodeError> {
    let storage = Storage::open(&db_path(data_dir))?;
    Ok(Arc::new(Chain::open(storage, spec)?))
}

/// Starts a node.
pub async fn spawn(cfg: NodeConfig) -> Result<NodeHandle, NodeError> {
    let data_dir = cfg.data_dir.clone();
    let spec = cfg.spec.clone();
    let chain = tokio::task::spawn_blocking(move || open_chain(&data_dir, spec))
        .await
        .expect("open task")?;
    let mut pool_cfg = cfg.pool.clone();
    pool_cfg
        .journal_path
        .get_or_insert_with(|| cfg.data_dir.join("pool.journal"));
    let pool = Arc::new(Pool::new(pool_cfg)?);
    {
        let state = chain.storage().state_at(None)?;
        let n = pool.load_journal(&state, &chain.next_block())?;
        if n > 0 {
            tracing::info!(target: "l2node::pool", restored = n, "restored pooled transactions");
        }
    }
    let head = chain.head();
    tracing::info!(target: "l2node::node", chain_id = chain.spec().chain_id, head = head.header.number, hash = %head.hash, "chain opened");

    let miner = cfg.signer.clone().map(|key| {
        tracing::info!(target: "l2node::miner", signer = %key.address(), block_time = ?cfg.block_time, "sequencer mode");
        tokio::spawn(miner::run(
            chain.clone(),
            pool.clone(),
            MinerConfig { block_time: cfg.block_time, create_empty_blocks: cfg.create_empty_blocks, key },
        ))
    });
    let module = rpc::build_module(chain.clone(), pool.clone(), cfg.rpc.clone());
    let rpc = rpc::start_rpc_servers(module, &cfg.rpc_server).await?;
    Ok(NodeHandle {
        chain,
        pool,
        rpc,
        miner,
    })
}
