//! Wiring: `spawn(NodeConfig)` opens storage, the chain and the pool, starts the miner (with a
//! key) and the RPC servers, and returns a handle.

use std::{path::PathBuf, sync::Arc, time::Duration};

use alloy_signer_local::PrivateKeySigner;

pub use l2node_group::GroupConfig;
use l2node_group::{GroupError, Member};
use l2node_node::chain::{open_chain_with_cache, Chain, ChainError};
use l2node_node::chainspec::ChainSpec;
use l2node_node::constants::{
    KARMA_KILL_SWITCH_POLL, METRICS_REFRESH, NODE_STOP_JOBS_TIMEOUT, TX_EXCLUSION_FLUSH,
};
use l2node_node::exclusions::Exclusions;
use l2node_node::fees::pricing::PricingInputs;
use l2node_node::group::GroupControl as _;
use l2node_node::karma::Karma;
use l2node_node::metrics::{self, MetricsConfig, MetricsError};
use l2node_node::miner::{self, MinerConfig};
use l2node_node::p2p::{self, NetStatus, P2pConfig, P2pError, P2pHandle, P2pRole};
use l2node_node::pool::{Pool, PoolConfig, PoolError};
use l2node_rpc::{
    self,
    http_layer::{ProbeSource, ProbeStatus},
    RpcConfig, RpcServerConfig, RpcServerError, RpcServerHandle,
};
use l2node_storage::StorageError;

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
    /// Karma operation (used on a chain with a `karma` section).
    pub karma: KarmaNodeConfig,
    /// Prometheus metrics (`--metrics-enabled`); `None` records nothing.
    pub metrics: Option<MetricsConfig>,
    /// Peers (`--p2p-enabled`); `None` runs alone: no peers, never syncing.
    pub p2p: Option<P2pConfig>,
    /// Database page cache in bytes (`--db-cache-size`).
    pub db_cache_bytes: usize,
    /// Blocks of state history kept (`--history-window`); `None`: all (archive).
    pub history_window: Option<u64>,
    /// The sequencer group this node is a member of (`--sequencer-group`; needs a sealing key).
    pub group: Option<GroupConfig>,
}

impl NodeConfig {
    /// A dev sequencer: the dev chain (`block_time` as its Clique period) sealed with the dev key,
    /// stored in `data_dir`, answering every namespace over HTTP and WebSocket on ephemeral
    /// loopback ports. What tests and benches start; fields are public to change the rest.
    pub fn dev(data_dir: &std::path::Path, block_time: Duration) -> Self {
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let genesis = l2node_node::dev::dev_genesis(block_time.as_secs());
        Self {
            data_dir: data_dir.to_path_buf(),
            spec: Arc::new(ChainSpec::from_genesis(genesis).expect("the dev genesis is valid")),
            signer: Some(l2node_node::dev::dev_sequencer()),
            block_time,
            create_empty_blocks: false,
            rpc_server: RpcServerConfig {
                http_addr: any,
                ws_addr: any,
                http_apis: l2node_rpc::Namespace::ALL.to_vec(),
                ws_apis: l2node_rpc::Namespace::ALL.to_vec(),
                ..Default::default()
            },
            rpc: RpcConfig::default(),
            pool: PoolConfig::default(),
            karma: KarmaNodeConfig::default(),
            metrics: None,
            p2p: None,
            db_cache_bytes: l2node_storage::DEFAULT_DB_CACHE_BYTES,
            history_window: None,
            group: None,
        }
    }
}

/// How this node operates the Karma policy.
#[derive(Debug, Clone, Default)]
pub struct KarmaNodeConfig {
    /// While this file exists, every gasless path is off (`--gasless-kill-switch-file`).
    pub kill_switch_file: Option<PathBuf>,
    /// A key with the `Karma` slasher role: a sequencer holding it refuses a second gasless
    /// transaction in one slot and submits `Karma.slash(sender)` (`--karma-slasher-key`).
    pub slasher: Option<PrivateKeySigner>,
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
    /// The metrics exporter failed to start.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// The sequencer group could not be joined.
    #[error(transparent)]
    Group(#[from] GroupError),
    /// A group member without a sealing key.
    #[error("--sequencer-group makes this node a sequencer that seals while it leads: give it the group's sealing key (--signer-key, or --dev on the dev chain), the same on every member")]
    GroupWithoutKey,
    /// The peer-to-peer layer failed to start.
    #[error(transparent)]
    P2p(#[from] P2pError),
    /// The data directory holds a snapshot that was being written, and this start would not
    /// finish it.
    #[error("the data directory holds the state snapshot of block {0} that was being written when the node stopped, and its state is incomplete: start this node again as a follower with --syncmode snap to finish it, or delete the data directory")]
    SnapshotPending(u64),
}

/// A running node.
pub struct NodeHandle {
    /// The chain service.
    pub chain: Arc<Chain>,
    /// The transaction pool.
    pub pool: Arc<Pool>,
    /// The RPC servers (bound addresses inside).
    pub rpc: RpcServerHandle,
    /// The peer-to-peer layer's status (the disabled status without peer-to-peer).
    pub net: Arc<NetStatus>,
    /// The peer-to-peer service, when enabled.
    pub p2p: Option<P2pHandle>,
    miner: Option<tokio::task::JoinHandle<()>>,
    /// Background tasks (kill-switch poll, slasher), stopped with the node.
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// The sequencer group membership, left when the node stops.
    group: Option<Arc<Member>>,
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
        for t in &self.tasks {
            t.abort();
        }
        self.rpc.stop();
    }
}

impl NodeHandle {
    /// Stops mining, peers and the servers and waits for them, and for the blocking jobs they
    /// started (a block being built, a request being answered) to let go of the chain, so the
    /// data directory can be opened again once this returns. Committed blocks are already
    /// durable.
    pub async fn stop(mut self) {
        if let Some(m) = self.miner.take() {
            m.abort();
            let _ = m.await;
        }
        for t in std::mem::take(&mut self.tasks) {
            t.abort();
            let _ = t.await;
        }
        if let Some(g) = self.group.take() {
            // Another member can lead at once instead of after the lease.
            g.leave().await;
        }

        if let Some(p) = self.p2p.take() {
            p.stop().await;
        }
        self.rpc.stop();
        self.rpc.clone().stopped().await;
        // What the last second refused is written too.
        if let Some(ex) = self.pool.exclusions().cloned() {
            if let Ok(Err(e)) = tokio::task::spawn_blocking(move || ex.flush()).await {
                tracing::warn!(target: "l2node::pool", error = %e, "cannot store the records of refused transactions");
            }
        }
        // Aborting a task does not stop a blocking job it started; those end on their own.
        let deadline = std::time::Instant::now() + NODE_STOP_JOBS_TIMEOUT;
        while Arc::strong_count(&self.chain) > 1 || Arc::strong_count(&self.pool) > 1 {
            if std::time::Instant::now() > deadline {
                // The trie nodes kept in memory stay there: the next start rebuilds them.
                tracing::warn!(target: "l2node::node", "stopped with blocking jobs still running");
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // The trie nodes of the last blocks, kept in memory: the next start need not rebuild them.
        let chain = self.chain.clone();
        match tokio::task::spawn_blocking(move || chain.storage().flush_trie()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(target: "l2node::storage", error = %e, "cannot write the last blocks' trie nodes; the next start rebuilds them");
            }
            Err(e) => {
                tracing::warn!(target: "l2node::storage", error = %e, "writing the last blocks' trie nodes failed; the next start rebuilds them");
            }
        }
    }
}

/// Writes the records of refused transactions every [`TX_EXCLUSION_FLUSH`], off the runtime.
async fn flush_exclusions(exclusions: Arc<Exclusions>) {
    let mut tick = tokio::time::interval(TX_EXCLUSION_FLUSH);
    loop {
        tick.tick().await;
        let ex = exclusions.clone();
        if let Ok(Err(e)) = tokio::task::spawn_blocking(move || ex.flush()).await {
            tracing::warn!(target: "l2node::pool", error = %e, "cannot store the records of refused transactions");
        }
    }
}

/// On a node that does not seal (a follower), keeps the pool in step with the blocks it
/// imports: mined transactions leave, newly invalid ones are dropped, and the transactions of
/// blocks a reorganisation took back return unless the new chain holds them (geth's pool
/// reset).
async fn follow_pool(chain: Arc<Chain>, pool: Arc<Pool>) {
    use tokio::sync::broadcast::error::RecvError;
    let mut blocks = chain.subscribe();
    let mut reorgs = chain.subscribe_reorgs();
    loop {
        let returned = tokio::select! {
            reorg = reorgs.recv() => match reorg {
                Ok(r) => Some(r),
                Err(RecvError::Lagged(_)) => None,
                Err(RecvError::Closed) => return,
            },
            block = blocks.recv() => match block {
                Ok(_) | Err(RecvError::Lagged(_)) => None,
                Err(RecvError::Closed) => return,
            },
        };
        // Blocks that arrived meanwhile are covered by one pass.
        while blocks.try_recv().is_ok() {}
        if returned.is_none() && pool.status() == (0, 0) {
            continue;
        }
        let (chain, pool) = (chain.clone(), pool.clone());
        let done = tokio::task::spawn_blocking(move || {
            let state = chain.storage().state_at(None)?;
            let next = chain.next_block();
            for (block, _) in returned.iter().flat_map(|r| r.removed.iter()) {
                for (tx, sender) in block.body.transactions.iter().zip(&block.senders) {
                    // On the new chain (or unreadable): not returned.
                    if !matches!(chain.storage().tx_location(tx.tx_hash()), Ok(None)) {
                        continue;
                    }
                    let tx =
                        alloy_consensus::transaction::Recovered::new_unchecked(tx.clone(), *sender);
                    // Invalid on the new chain (a nonce it used): dropped, as geth does.
                    let _ = pool.add(tx, &state, &next);
                }
            }
            pool.on_new_block(&state, &next);
            Ok::<_, StorageError>(())
        })
        .await;
        if let Ok(Err(e)) = done {
            tracing::warn!(target: "l2node::pool", error = %e, "cannot update the pool after a block");
        }
    }
}

/// The file of the peer-to-peer node key inside a data directory.
pub fn p2p_key_path(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("p2p.key")
}

/// The tasks a starting node has spawned, stopped if it fails to start before they are handed
/// to its [`NodeHandle`] (an RPC port in use must not leave a miner sealing blocks).
#[derive(Default)]
struct Spawned {
    tasks: Vec<tokio::task::JoinHandle<()>>,
    miner: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Spawned {
    fn drop(&mut self) {
        for t in self.tasks.iter().chain(&self.miner) {
            t.abort();
        }
    }
}

/// Starts a node.
pub async fn spawn(cfg: NodeConfig) -> Result<NodeHandle, NodeError> {
    let data_dir = cfg.data_dir.clone();
    let (spec, cache, window) = (cfg.spec.clone(), cfg.db_cache_bytes, cfg.history_window);
    let proof_window = cfg.rpc.eth_proof_window;
    let chain = tokio::task::spawn_blocking(move || {
        open_chain_with_cache(&data_dir, spec, cache, window, proof_window)
    })
    .await
    .expect("open task")?;
    if let Some(number) = chain.storage().snapshot_pending()? {
        let finishes = cfg.p2p.as_ref().is_some_and(|p| {
            p.snap_sync && matches!(p.role, P2pRole::Follower) && cfg.group.is_none()
        });
        if !finishes {
            return Err(NodeError::SnapshotPending(number));
        }
    }
    let mut pool_cfg = cfg.pool.clone();
    pool_cfg
        .journal_path
        .get_or_insert_with(|| cfg.data_dir.join("pool.journal"));
    let mut exclusions = Exclusions::new(chain.storage().clone());
    if let Some(key) = &cfg.signer {
        exclusions = exclusions.with_signer(key.clone());
    }
    let exclusions = Arc::new(exclusions);
    let mut pool = Pool::new(pool_cfg)?.with_exclusions(exclusions.clone());
    let mut spawned = Spawned::default();
    spawned
        .tasks
        .push(tokio::spawn(flush_exclusions(exclusions)));
    if let Some(ledger) = chain.ledger() {
        let karma = Arc::new(Karma::new(
            ledger.clone(),
            chain.storage().clone(),
            cfg.karma.kill_switch_file.clone(),
        )?);
        if cfg.karma.kill_switch_file.is_some() {
            let k = karma.clone();
            spawned.tasks.push(tokio::spawn(async move {
                let mut tick = tokio::time::interval(KARMA_KILL_SWITCH_POLL);
                loop {
                    tick.tick().await;
                    k.poll_kill_switch();
                }
            }));
        }
        pool = pool.with_karma(karma);
    }
    let mut slash_reports = None;
    if let (Some(_), Some(_), Some(_)) = (chain.ledger(), &cfg.signer, &cfg.karma.slasher) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        pool = pool.with_double_signal_reports(tx);
        slash_reports = Some(rx);
    }
    let pool = Arc::new(pool);
    if let (Some(rx), Some(key)) = (slash_reports, cfg.karma.slasher.clone()) {
        tracing::info!(target: "l2node::karma", slasher = %key.address(), "slashing double signals");
        spawned.tasks.push(tokio::spawn(miner::run_slasher(
            chain.clone(),
            pool.clone(),
            key,
            rx,
        )));
    }
    {
        let state = chain.storage().state_at(None)?;
        let n = pool.load_journal(&state, &chain.next_block())?;
        if n > 0 {
            tracing::info!(target: "l2node::pool", restored = n, "restored pooled transactions");
        }
    }
    let head = chain.head();
    tracing::info!(target: "l2node::node", chain_id = chain.spec().chain_id, head = head.header.number, hash = %head.hash, "chain opened");

    let group = match &cfg.group {
        Some(_) if cfg.signer.is_none() => return Err(NodeError::GroupWithoutKey),
        Some(g) => {
            let member = Member::new(g.clone(), chain.clone())?;
            tracing::info!(target: "l2node::group", name = %g.name, endpoints = %g.endpoints.join(","), lease = ?g.lease, "sequencer group member: standby until it leads");
            spawned.tasks.push(tokio::spawn(member.clone().run()));
            Some(member)
        }
        None => None,
    };
    let mut mine_trigger = None;
    spawned.miner = cfg.signer.clone().map(|key| {
        tracing::info!(target: "l2node::miner", signer = %key.address(), block_time = ?cfg.block_time, "sequencer mode");
        let (trigger, requests) = miner::MineTrigger::new();
        mine_trigger = Some(trigger);
        tokio::spawn(miner::run(
            chain.clone(),
            pool.clone(),
            MinerConfig {
                block_time: cfg.block_time,
                create_empty_blocks: cfg.create_empty_blocks,
                key,
                vanity: chain.spec().karma.as_ref().map_or([0u8; 32], |k| {
                    PricingInputs::from_params(&k.fees).to_vanity()
                }),
                group: group
                    .clone()
                    .map(|m| m as Arc<dyn l2node_node::group::SequencerGroup>),
            },
            requests,
        ))
    });
    // A standby member follows the leader's blocks like a follower.
    if spawned.miner.is_none() || group.is_some() {
        spawned
            .tasks
            .push(tokio::spawn(follow_pool(chain.clone(), pool.clone())));
    }
    let p2p = match cfg.p2p.clone() {
        Some(mut p) => {
            if let Some(m) = &group {
                p.role = P2pRole::Member(m.active_flag());
            }
            Some(p2p::spawn(p, chain.clone(), pool.clone()).await?)
        }
        None => None,
    };
    let net = p2p
        .as_ref()
        .map_or_else(|| Arc::new(NetStatus::default()), |p| p.status().clone());
    if let Some(m) = cfg.metrics {
        metrics::install(m)?;
        tracing::info!(target: "l2node::node", "Prometheus metrics on http://{}/metrics", m.addr);
        let (chain, pool, net) = (chain.clone(), pool.clone(), net.clone());
        spawned.tasks.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(METRICS_REFRESH);
            loop {
                tick.tick().await;
                let head = chain.head();
                let (pending, queued) = pool.status();
                metrics::gauges(metrics::Gauges {
                    head_number: head.header.number,
                    head_timestamp: head.header.timestamp,
                    pending,
                    queued,
                    peers: net.peer_count(),
                    sync_lag: net.blocks_behind(head.header.number),
                });
            }
        }));
    }
    let mut rpc_cfg = cfg.rpc.clone();
    rpc_cfg.coinbase = cfg.signer.as_ref().map(|k| k.address());
    rpc_cfg.miner = mine_trigger;
    rpc_cfg.group = group
        .clone()
        .map(|m| m as Arc<dyn l2node_node::group::GroupControl>);
    let module = l2node_rpc::build_module(chain.clone(), pool.clone(), net.clone(), rpc_cfg);
    let mut server_cfg = cfg.rpc_server.clone();
    {
        let (chain, net, group) = (chain.clone(), net.clone(), group.clone());
        server_cfg.probes.get_or_insert_with(|| {
            ProbeSource(Arc::new(move || ProbeStatus {
                peers: net.peer_count() as u64,
                blocks_behind: net.blocks_behind(chain.head().header.number),
                sequencer: group.as_ref().map(|m| m.status().role.as_str()),
            }))
        });
    }
    let rpc = l2node_rpc::start_rpc_servers(module, &server_cfg).await?;
    Ok(NodeHandle {
        chain,
        pool,
        rpc,
        net,
        p2p,
        miner: spawned.miner.take(),
        tasks: std::mem::take(&mut spawned.tasks),
        group,
    })
}
