//! Peers over libp2p: TCP with Noise and Yamux, identify, ping, gossipsub for new blocks and
//! transactions, and the block-sync request-response protocol (`crate::sync`).
//!
//! The sequencer publishes each block it seals; a follower validates a gossiped block by
//! importing it through [`Chain::import`] (seal, parent, every root) before gossipsub relays
//! it, and asks peers for block ranges while it is behind. Transactions sent to a follower are
//! validated by its own pool (signature, nonce, balance, Karma against its own ledger) and
//! published, so they reach the sequencer. A peer that sends an invalid block is disconnected
//! and banned for [`P2P_BAN_DURATION`](crate::constants::P2P_BAN_DURATION). Everything that
//! blocks (imports, storage reads, pool validation) runs off the swarm task; its results come
//! back as [`Done`](importer::Done) messages.
//!
//! Here: the configuration, the handle and the start ([`spawn`]). The node key is in `key`;
//! the protocols and the swarm in `behaviour`; the swarm loop in `service`; what it knows of
//! its peers and decides from it, apart from the swarm, in `peers`; the blocking work in
//! `importer`; what the rest of the node reads in `status`.

mod behaviour;
mod importer;
mod key;
mod peers;
mod service;
mod snap;
pub mod status;
#[cfg(test)]
mod tests;

use std::{
    net::IpAddr,
    path::PathBuf,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use alloy_primitives::Bytes;
use futures::StreamExt;
use libp2p::{multiaddr::Protocol, swarm::SwarmEvent};
use tokio::sync::mpsc;

pub use key::load_or_create_key;
pub use libp2p::Multiaddr;
pub use snap::SnapshotJoin;
pub use status::{NetStatus, PeerInfo, SyncProgress};

use crate::chain::Chain;
use crate::p2p::{peers::Peers, service::Service};
use crate::pool::Pool;

/// How the peer-to-peer layer runs.
#[derive(Debug, Clone)]
pub struct P2pConfig {
    /// Listen address (`--p2p-host`).
    pub host: IpAddr,
    /// Listen port (`--p2p-port`; 0 picks a free one).
    pub port: u16,
    /// Peers to dial at start and again whenever they are disconnected (`--bootnodes`).
    pub bootnodes: Vec<Multiaddr>,
    /// Most connected peers (`--max-peers`).
    pub max_peers: u32,
    /// The node key file; created on first start.
    pub key_path: PathBuf,
    /// What this node publishes.
    pub role: P2pRole,
    /// Join from a state snapshot of the peers (`--syncmode snap`) when the database holds
    /// the genesis block only, instead of executing every block since genesis.
    pub snap_sync: bool,
}

/// What a node publishes to its peers.
#[derive(Debug, Clone)]
pub enum P2pRole {
    /// The blocks it seals, and its refusals of transactions.
    Sequencer,
    /// The transactions its pool takes (they reach the sequencer).
    Follower,
    /// A sequencer group's member: the transactions its pool takes, always (so every member
    /// holds what any member acknowledged), and while the flag is set (it leads) the blocks
    /// it seals and its refusals.
    Member(Arc<AtomicBool>),
}

impl P2pRole {
    /// Whether this node publishes blocks and refusals now.
    pub(crate) fn seals(&self) -> bool {
        match self {
            Self::Sequencer => true,
            Self::Follower => false,
            Self::Member(active) => active.load(Ordering::SeqCst),
        }
    }

    /// Whether this node publishes the transactions its pool takes.
    pub(crate) fn gossips_transactions(&self) -> bool {
        !matches!(self, Self::Sequencer)
    }
}

/// Errors starting the peer-to-peer layer.
#[derive(Debug, thiserror::Error)]
pub enum P2pError {
    /// The node key file could not be read or written.
    #[error("cannot use the node key {path}: {source}")]
    KeyIo {
        /// The key file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The node key file holds something else.
    #[error(
        "the node key {path} is not a libp2p key ({reason}); move it away to create a new one"
    )]
    KeyFormat {
        /// The key file.
        path: PathBuf,
        /// Why it does not decode.
        reason: String,
    },
    /// The listener could not bind.
    #[error(
        "cannot listen for peers on {addr}: {reason}; choose another --p2p-port or --p2p-host"
    )]
    Listen {
        /// The address.
        addr: Multiaddr,
        /// Why.
        reason: String,
    },
    /// The transport or a protocol could not be set up.
    #[error("cannot start the peer-to-peer layer: {0}")]
    Setup(String),
}

/// The running peer-to-peer service.
#[derive(Debug)]
pub struct P2pHandle {
    status: Arc<NetStatus>,
    commands: mpsc::UnboundedSender<Command>,
    local: Multiaddr,
    task: tokio::task::JoinHandle<()>,
    importer: Option<std::thread::JoinHandle<()>>,
    snap_join: Option<tokio::task::JoinHandle<()>>,
}

/// What the handle asks of the swarm task.
enum Command {
    PublishBlock(Bytes),
    /// A sync request on behalf of another task; the answer (`None`: it failed) goes back.
    Request {
        peer: libp2p::PeerId,
        request: crate::sync::SyncRequest,
        reply: tokio::sync::oneshot::Sender<Option<crate::sync::SyncResponse>>,
    },
}

impl P2pHandle {
    /// Shared status (peers, listening, sync).
    pub fn status(&self) -> &Arc<NetStatus> {
        &self.status
    }

    /// The address other nodes can use as a bootnode: the listen address with `/p2p/<id>`.
    pub fn local_addr(&self) -> &Multiaddr {
        &self.local
    }

    /// Publishes an RLP-encoded block on the blocks topic, as the sequencer does with each
    /// block it seals (tests use it to send a block that breaks a rule).
    pub fn publish_block(&self, raw: Bytes) {
        let _ = self.commands.send(Command::PublishBlock(raw));
    }

    /// Stops the service and waits until the listener is closed and nothing of it holds the
    /// chain any more (so the data directory can be opened again).
    pub async fn stop(mut self) {
        if let Some(join) = self.snap_join.take() {
            join.abort();
            let _ = join.await;
        }
        self.task.abort();
        let _ = (&mut self.task).await;
        // The importer ends once the service (its job sender) is gone.
        if let Some(t) = self.importer.take() {
            let _ = tokio::task::spawn_blocking(move || t.join()).await;
        }
    }
}

impl Drop for P2pHandle {
    fn drop(&mut self) {
        if let Some(join) = &self.snap_join {
            join.abort();
        }
        self.task.abort();
    }
}

/// Starts the peer-to-peer service: binds the listener (returning once it is bound), dials the
/// bootnodes, and runs until the handle is dropped.
pub async fn spawn(
    cfg: P2pConfig,
    chain: Arc<Chain>,
    pool: Arc<Pool>,
) -> Result<P2pHandle, P2pError> {
    let key_path = cfg.key_path.clone();
    let key = tokio::task::spawn_blocking(move || load_or_create_key(&key_path))
        .await
        .map_err(|e| P2pError::Setup(e.to_string()))??;
    let local_id = key.public().to_peer_id();
    let mut swarm = behaviour::build_swarm(key, cfg.max_peers)?;

    let listen = Multiaddr::from(cfg.host).with(Protocol::Tcp(cfg.port));
    swarm
        .listen_on(listen.clone())
        .map_err(|e| P2pError::Listen {
            addr: listen.clone(),
            reason: e.to_string(),
        })?;
    let status = Arc::new(NetStatus::default());
    status.set_local(local_id.to_string());
    // Wait for the bound address (the port, when 0 was asked for).
    let bound = loop {
        match tokio::time::timeout(Duration::from_secs(10), swarm.select_next_some()).await {
            Ok(SwarmEvent::NewListenAddr { address, .. }) => break address,
            Ok(SwarmEvent::ListenerError { error, .. })
            | Ok(SwarmEvent::ListenerClosed {
                reason: Err(error), ..
            }) => {
                return Err(P2pError::Listen {
                    addr: listen,
                    reason: error.to_string(),
                })
            }
            Ok(_) => {}
            Err(_) => {
                return Err(P2pError::Listen {
                    addr: listen,
                    reason: "no listen address after 10 s".into(),
                })
            }
        }
    };
    let local = bound.clone().with(Protocol::P2p(local_id));
    status.add_listen_addr(local.to_string());
    tracing::info!(target: "l2node::p2p", peer_id = %local_id, addr = %local, "listening for peers");

    let (blocks_topic, txs_topic, exclusions_topic) = behaviour::topics(&chain);
    for t in [&blocks_topic, &txs_topic, &exclusions_topic] {
        swarm
            .behaviour_mut()
            .gossipsub
            .subscribe(t)
            .map_err(|e| P2pError::Setup(e.to_string()))?;
    }
    for b in &cfg.bootnodes {
        if let Err(e) = swarm.dial(b.clone()) {
            tracing::warn!(target: "l2node::p2p", bootnode = %b, error = %e, "cannot dial bootnode");
        }
    }

    let (commands, command_rx) = mpsc::unbounded_channel();
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let (import_tx, importer) =
        importer::spawn_importer(chain.clone(), pool.clone(), done_tx.clone())
            .map_err(|e| P2pError::Setup(e.to_string()))?;
    let snap_server = Arc::new(crate::sync::snap::SnapServer::default());
    let can_join = cfg.snap_sync
        && {
            let chain = chain.clone();
            let can = tokio::task::spawn_blocking(move || chain.can_join_from_snapshot())
                .await
                .map_err(|e| P2pError::Setup(e.to_string()))?
                .map_err(|e| P2pError::Setup(e.to_string()))?;
            let follower = matches!(cfg.role, P2pRole::Follower);
            if !follower || !can {
                let why = if !follower {
                    "a node that seals blocks executes them"
                } else {
                    "the database holds blocks after genesis (it syncs on from its head), or the chain is not a Clique chain (a snapshot's block is checked by its seal)"
                };
                tracing::info!(target: "l2node::p2p", reason = why, "--syncmode snap: not joining from a snapshot");
            }
            follower && can
        };
    let snapping = Arc::new(AtomicBool::new(can_join));
    let bootnodes = cfg.bootnodes.len();
    let service = Service {
        new_blocks: chain.subscribe(),
        pool_events: pool.subscribe(),
        announced: pool.exclusions().map(|e| e.announced()),
        swarm,
        chain: chain.clone(),
        pool,
        status: status.clone(),
        role: cfg.role,
        blocks_topic,
        txs_topic,
        exclusions_topic,
        peers: Peers::new(status.clone(), cfg.bootnodes),
        import_tx,
        done_tx,
        pools_asked: Default::default(),
        pools_sent: Default::default(),
        requests: Default::default(),
        snap_server,
        snapping: snapping.clone(),
    };
    let snap_join = can_join.then(|| {
        tokio::spawn(snap::join(
            snap::Requests(commands.clone()),
            chain.clone(),
            status.clone(),
            snapping,
            bootnodes,
        ))
    });
    let task = tokio::spawn(service.run(command_rx, done_rx));
    Ok(P2pHandle {
        status,
        commands,
        local,
        task,
        importer: Some(importer),
        snap_join,
    })
}
