//! Peers over libp2p: TCP with Noise and Yamux, identify, ping, gossipsub for new blocks and
//! transactions, and the block-sync request-response protocol (`crate::sync`).
//!
//! The sequencer publishes each block it seals; a follower validates a gossiped block by
//! importing it through [`Chain::import`] (seal, parent, every root) before gossipsub relays
//! it, and asks peers for block ranges while it is behind. Transactions sent to a follower are
//! validated by its own pool (signature, nonce, balance, Karma against its own ledger) and
//! published, so they reach the sequencer. A peer that sends an invalid block is disconnected
//! and banned for [`P2P_BAN_DURATION`]. Everything that blocks (imports, storage reads, pool
//! validation) runs off the swarm task; its results come back as [`Done`] messages.

pub mod status;

use std::{
    collections::HashMap,
    net::IpAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use alloy_consensus::Block;
use alloy_primitives::{keccak256, Bytes};
use alloy_rlp::Encodable;
use futures::StreamExt;
use libp2p::{
    allow_block_list, connection_limits, gossipsub, identify, identity,
    multiaddr::Protocol,
    noise, ping,
    request_response::{self, cbor, OutboundRequestId, ProtocolSupport, ResponseChannel},
    swarm::{NetworkBehaviour, SwarmEvent},
    tcp, yamux, PeerId, StreamProtocol, Swarm,
};
use tokio::sync::{broadcast::error::RecvError, mpsc};

pub use libp2p::Multiaddr;
pub use status::{NetStatus, PeerInfo, SyncProgress};

use crate::{
    chain::Chain,
    constants::{
        GOSSIP_MAX_MESSAGE_BYTES, P2P_BAN_DURATION, P2P_REDIAL_INTERVAL, SYNC_DISTANCE,
        SYNC_REQUEST_TIMEOUT,
    },
    pool::Pool,
    sync::{self, ImportRefusal, Imported, RangePlanner, SyncRequest, SyncResponse},
};

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
    /// Publish the blocks this node seals (a sequencer); a follower publishes the
    /// transactions its pool accepts instead.
    pub sequencer: bool,
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
}

enum Command {
    PublishBlock(Bytes),
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
        self.task.abort();
    }
}

#[derive(NetworkBehaviour)]
struct Behaviour {
    blocked: allow_block_list::Behaviour<allow_block_list::BlockedPeers>,
    limits: connection_limits::Behaviour,
    identify: identify::Behaviour,
    ping: ping::Behaviour,
    gossipsub: gossipsub::Behaviour,
    sync: cbor::Behaviour<SyncRequest, SyncResponse>,
}

/// Loads the node key from `path`, creating it on first start (so the peer id survives
/// restarts and can be written into other nodes' `--bootnodes`).
pub fn load_or_create_key(path: &Path) -> Result<identity::Keypair, P2pError> {
    let io = |source| P2pError::KeyIo {
        path: path.to_owned(),
        source,
    };
    match std::fs::read(path) {
        Ok(bytes) => {
            identity::Keypair::from_protobuf_encoding(&bytes).map_err(|e| P2pError::KeyFormat {
                path: path.to_owned(),
                reason: e.to_string(),
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = identity::Keypair::generate_ed25519();
            let bytes = key
                .to_protobuf_encoding()
                .map_err(|e| P2pError::Setup(e.to_string()))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io)?;
            }
            let tmp = path.with_extension("tmp");
            write_private(&tmp, &bytes).map_err(io)?;
            std::fs::rename(&tmp, path).map_err(io)?;
            Ok(key)
        }
        Err(e) => Err(io(e)),
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

fn behaviour(key: &identity::Keypair, max_peers: u32) -> Result<Behaviour, P2pError> {
    let gossip_cfg = gossipsub::ConfigBuilder::default()
        .max_transmit_size(GOSSIP_MAX_MESSAGE_BYTES)
        .validation_mode(gossipsub::ValidationMode::Strict)
        // A message is relayed only after we validated it (imported the block, pooled the
        // transaction).
        .validate_messages()
        // The same bytes are the same message, whoever publishes them.
        .message_id_fn(|m| gossipsub::MessageId::from(&keccak256(&m.data)[..20]))
        .build()
        .map_err(|e| P2pError::Setup(e.to_string()))?;
    let gossipsub = gossipsub::Behaviour::new(
        gossipsub::MessageAuthenticity::Signed(key.clone()),
        gossip_cfg,
    )
    .map_err(|e| P2pError::Setup(e.to_string()))?;
    Ok(Behaviour {
        blocked: Default::default(),
        limits: connection_limits::Behaviour::new(
            connection_limits::ConnectionLimits::default()
                .with_max_established(Some(max_peers))
                .with_max_established_per_peer(Some(2)),
        ),
        identify: identify::Behaviour::new(
            identify::Config::new("/l2node/1.0.0".into(), key.public())
                .with_agent_version(format!("l2node/{}", env!("CARGO_PKG_VERSION"))),
        ),
        ping: ping::Behaviour::new(ping::Config::new()),
        gossipsub,
        sync: cbor::Behaviour::new(
            [(StreamProtocol::new(sync::PROTOCOL), ProtocolSupport::Full)],
            request_response::Config::default().with_request_timeout(SYNC_REQUEST_TIMEOUT),
        ),
    })
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
    let behaviour = behaviour(&key, cfg.max_peers)?;
    let mut swarm = libp2p::SwarmBuilder::with_existing_identity(key)
        .with_tokio()
        .with_tcp(
            tcp::Config::default().nodelay(true),
            noise::Config::new,
            yamux::Config::default,
        )
        .map_err(|e| P2pError::Setup(e.to_string()))?
        .with_behaviour(|_| behaviour)
        .map_err(|e| P2pError::Setup(e.to_string()))?
        // Connections stay up between blocks (gossip keeps no stream open while idle).
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(3600)))
        .build();

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

    let genesis = chain.genesis_hash();
    let topic = |kind: &str| {
        gossipsub::IdentTopic::new(format!(
            "/l2node/{}/{}/{kind}/1",
            chain.spec().chain_id,
            &genesis.to_string()[2..10]
        ))
    };
    let (blocks_topic, txs_topic) = (topic("blocks"), topic("txs"));
    for t in [&blocks_topic, &txs_topic] {
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
    let (import_tx, import_rx) = std::sync::mpsc::channel();
    let importer = {
        let (chain, done) = (chain.clone(), done_tx.clone());
        std::thread::Builder::new()
            .name("l2node-import".into())
            .spawn(move || run_importer(&chain, import_rx, done))
            .map_err(|e| P2pError::Setup(e.to_string()))?
    };
    let service = Service {
        new_blocks: chain.subscribe(),
        pool_events: pool.subscribe(),
        swarm,
        chain,
        pool,
        status: status.clone(),
        cfg,
        blocks_topic,
        txs_topic,
        heads: HashMap::new(),
        planner: RangePlanner::default(),
        ranges: HashMap::new(),
        import_tx,
        done_tx,
        banned: Vec::new(),
        bootnode_peers: HashMap::new(),
    };
    let task = tokio::spawn(service.run(command_rx, done_rx));
    Ok(P2pHandle {
        status,
        commands,
        local,
        task,
        importer: Some(importer),
    })
}

/// Work for the importer thread; blocks are imported one at a time, in arrival order.
enum ImportJob {
    Range {
        peer: PeerId,
        blocks: Vec<Bytes>,
    },
    Gossip {
        peer: PeerId,
        id: gossipsub::MessageId,
        raw: Bytes,
    },
}

/// Results of work done off the swarm task.
enum Done {
    Range {
        peer: PeerId,
        refusal: Option<ImportRefusal>,
    },
    Gossip {
        peer: PeerId,
        id: gossipsub::MessageId,
        result: Result<Imported, ImportRefusal>,
    },
    Tx {
        peer: PeerId,
        id: gossipsub::MessageId,
        accepted: bool,
    },
    Served {
        channel: ResponseChannel<SyncResponse>,
        response: SyncResponse,
    },
}

fn run_importer(
    chain: &Arc<Chain>,
    jobs: std::sync::mpsc::Receiver<ImportJob>,
    done: mpsc::UnboundedSender<Done>,
) {
    while let Ok(job) = jobs.recv() {
        let result = match job {
            ImportJob::Range { peer, blocks } => Done::Range {
                peer,
                refusal: sync::import_range(chain, &blocks).err(),
            },
            ImportJob::Gossip { peer, id, raw } => Done::Gossip {
                peer,
                id,
                result: sync::import_raw(chain, &raw),
            },
        };
        if done.send(result).is_err() {
            return;
        }
    }
}

struct Service {
    swarm: Swarm<Behaviour>,
    chain: Arc<Chain>,
    pool: Arc<Pool>,
    status: Arc<NetStatus>,
    cfg: P2pConfig,
    blocks_topic: gossipsub::IdentTopic,
    txs_topic: gossipsub::IdentTopic,
    new_blocks: tokio::sync::broadcast::Receiver<Arc<crate::chain::NewBlock>>,
    pool_events: tokio::sync::broadcast::Receiver<alloy_primitives::B256>,
    /// Each connected peer's head, from its status and its gossip.
    heads: HashMap<PeerId, u64>,
    planner: RangePlanner,
    /// Range requests in flight: `(peer, from, count)`.
    ranges: HashMap<OutboundRequestId, (PeerId, u64, u64)>,
    import_tx: std::sync::mpsc::Sender<ImportJob>,
    done_tx: mpsc::UnboundedSender<Done>,
    /// Banned peers and when their ban ends.
    banned: Vec<(Instant, PeerId)>,
    /// The peer id behind each bootnode address, once connected.
    bootnode_peers: HashMap<Multiaddr, PeerId>,
}

impl Service {
    async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command>,
        mut done: mpsc::UnboundedReceiver<Done>,
    ) {
        let mut tick = tokio::time::interval(P2P_REDIAL_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let mut force_sync = false;
            tokio::select! {
                ev = self.swarm.select_next_some() => self.on_swarm_event(ev),
                Some(d) = done.recv() => self.on_done(d),
                b = self.new_blocks.recv(), if self.cfg.sequencer => match b {
                    Ok(b) => {
                        let block = Block { header: b.block.header.clone(), body: b.block.body.clone() };
                        let mut raw = Vec::with_capacity(block.length());
                        block.encode(&mut raw);
                        self.publish_block(raw.into());
                    }
                    Err(RecvError::Lagged(n)) => {
                        tracing::warn!(target: "l2node::p2p", missed = n, "block announcements fell behind; followers will sync the gap");
                    }
                    Err(RecvError::Closed) => return,
                },
                h = self.pool_events.recv(), if !self.cfg.sequencer => match h {
                    Ok(hash) => self.publish_tx(hash),
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                },
                Some(cmd) = commands.recv() => match cmd {
                    Command::PublishBlock(raw) => self.publish_block(raw),
                },
                _ = tick.tick() => {
                    self.on_tick();
                    force_sync = true;
                }
            }
            self.drive_sync(force_sync);
        }
    }

    fn publish_block(&mut self, raw: Bytes) {
        let topic = self.blocks_topic.clone();
        self.publish(topic, raw);
    }

    fn publish_tx(&mut self, hash: alloy_primitives::B256) {
        if self.heads.is_empty() {
            return;
        }
        if let Some(tx) = self.pool.get(&hash) {
            let topic = self.txs_topic.clone();
            self.publish(topic, tx.raw.clone());
        }
    }

    fn publish(&mut self, topic: gossipsub::IdentTopic, data: Bytes) {
        match self.swarm.behaviour_mut().gossipsub.publish(topic, data) {
            Ok(_) | Err(gossipsub::PublishError::Duplicate) => {}
            Err(gossipsub::PublishError::NoPeersSubscribedToTopic) => {
                tracing::debug!(target: "l2node::p2p", "no peer to publish to");
            }
            Err(e) => tracing::warn!(target: "l2node::p2p", error = %e, "publish failed"),
        }
    }

    fn on_tick(&mut self) {
        let now = Instant::now();
        let blocked = &mut self.swarm.behaviour_mut().blocked;
        self.banned.retain(|(until, peer)| {
            let keep = *until > now;
            if !keep {
                blocked.unblock_peer(*peer);
            }
            keep
        });
        for addr in &self.cfg.bootnodes {
            let connected = self
                .bootnode_peers
                .get(addr)
                .is_some_and(|p| self.swarm.is_connected(p));
            if !connected {
                let _ = self.swarm.dial(addr.clone());
            }
        }
        let peers: Vec<PeerId> = self.heads.keys().copied().collect();
        for peer in peers {
            self.request_status(peer);
        }
    }

    fn request_status(&mut self, peer: PeerId) {
        self.swarm
            .behaviour_mut()
            .sync
            .send_request(&peer, SyncRequest::Status);
    }

    fn set_head(&mut self, peer: PeerId, head: u64) {
        let h = self.heads.entry(peer).or_default();
        *h = (*h).max(head);
        let head = *h;
        self.status
            .update_peer(&peer.to_string(), |p| p.head = Some(head));
    }

    fn ban(&mut self, peer: PeerId, why: &dyn std::fmt::Display) {
        tracing::warn!(target: "l2node::p2p", %peer, reason = %why, ban = ?P2P_BAN_DURATION, "dropping peer that sent an invalid block");
        self.swarm.behaviour_mut().blocked.block_peer(peer);
        self.banned.push((Instant::now() + P2P_BAN_DURATION, peer));
        self.heads.remove(&peer);
    }

    /// Asks for the next ranges while a peer is ahead: always when more than
    /// [`SYNC_DISTANCE`] blocks behind, and on each tick when behind at all (a lost gossip
    /// message must not leave the follower one block behind for good).
    fn drive_sync(&mut self, force: bool) {
        let head = self.chain.head().header.number;
        let Some((&peer, &best)) = self.heads.iter().max_by_key(|(_, h)| **h) else {
            self.status.set_sync(None);
            return;
        };
        if best > head + SYNC_DISTANCE {
            let starting = self.status.sync().map_or(head, |s| s.starting);
            self.status.set_sync(Some(SyncProgress {
                starting,
                highest: best,
            }));
        } else if best <= head {
            self.status.set_sync(None);
        }
        if best <= head + SYNC_DISTANCE && !force {
            return;
        }
        while let Some((from, count)) = self.planner.next(head, best) {
            let id = self
                .swarm
                .behaviour_mut()
                .sync
                .send_request(&peer, SyncRequest::Blocks { from, count });
            self.ranges.insert(id, (peer, from, count));
        }
    }

    fn on_done(&mut self, done: Done) {
        match done {
            Done::Range { peer, refusal } => {
                let head = self.chain.head().header.number;
                match &refusal {
                    Some(e) if e.is_peer_fault() => self.ban(peer, e),
                    Some(e) => {
                        tracing::debug!(target: "l2node::p2p", %peer, error = %e, "range not imported")
                    }
                    None => {}
                }
                self.planner.imported(head, refusal.is_some());
            }
            Done::Gossip { peer, id, result } => {
                use gossipsub::MessageAcceptance::{Accept, Ignore, Reject};
                let acceptance = match result {
                    Ok(Imported::New(n)) => {
                        self.set_head(peer, n);
                        Accept
                    }
                    Ok(Imported::Known(n)) => {
                        self.set_head(peer, n);
                        Ignore
                    }
                    Err(ImportRefusal::NotNext { number, head }) => {
                        if number > head {
                            // A gap: the peer is ahead of us; range sync fills it.
                            self.set_head(peer, number);
                        }
                        Ignore
                    }
                    Err(e) if e.is_peer_fault() => {
                        self.ban(peer, &e);
                        Reject
                    }
                    Err(e) => {
                        tracing::warn!(target: "l2node::p2p", error = %e, "gossiped block not imported");
                        Ignore
                    }
                };
                self.swarm
                    .behaviour_mut()
                    .gossipsub
                    .report_message_validation_result(&id, &peer, acceptance);
            }
            Done::Tx { peer, id, accepted } => {
                let acceptance = if accepted {
                    gossipsub::MessageAcceptance::Accept
                } else {
                    gossipsub::MessageAcceptance::Ignore
                };
                self.swarm
                    .behaviour_mut()
                    .gossipsub
                    .report_message_validation_result(&id, &peer, acceptance);
            }
            Done::Served { channel, response } => {
                let _ = self
                    .swarm
                    .behaviour_mut()
                    .sync
                    .send_response(channel, response);
            }
        }
    }

    fn on_swarm_event(&mut self, ev: SwarmEvent<BehaviourEvent>) {
        match ev {
            SwarmEvent::NewListenAddr { address, .. } => {
                let id = *self.swarm.local_peer_id();
                self.status
                    .add_listen_addr(address.with(Protocol::P2p(id)).to_string());
            }
            SwarmEvent::ExpiredListenAddr { address, .. } => {
                let id = *self.swarm.local_peer_id();
                self.status
                    .remove_listen_addr(&address.with(Protocol::P2p(id)).to_string());
            }
            SwarmEvent::ConnectionEstablished {
                peer_id,
                endpoint,
                num_established,
                ..
            } => {
                let remote = endpoint.get_remote_address().clone();
                let bootnode = endpoint
                    .is_dialer()
                    .then(|| {
                        self.cfg.bootnodes.iter().find(|b| {
                            **b == remote || b.iter().any(|p| p == Protocol::P2p(peer_id))
                        })
                    })
                    .flatten()
                    .cloned();
                let is_bootnode = bootnode.is_some();
                if let Some(b) = bootnode {
                    self.bootnode_peers.insert(b, peer_id);
                }
                if num_established.get() == 1 {
                    tracing::info!(target: "l2node::p2p", peer = %peer_id, addr = %remote, "peer connected");
                    let local = match &endpoint {
                        libp2p::core::ConnectedPoint::Listener { local_addr, .. } => {
                            local_addr.to_string()
                        }
                        libp2p::core::ConnectedPoint::Dialer { .. } => self
                            .status
                            .listen_addrs()
                            .first()
                            .cloned()
                            .unwrap_or_default(),
                    };
                    self.status.add_peer(PeerInfo {
                        id: peer_id.to_string(),
                        remote_addr: remote.to_string(),
                        local_addr: local,
                        inbound: !endpoint.is_dialer(),
                        bootnode: is_bootnode,
                        agent: None,
                        protocols: vec![],
                        head: None,
                    });
                    self.heads.entry(peer_id).or_default();
                    self.request_status(peer_id);
                }
            }
            SwarmEvent::ConnectionClosed {
                peer_id,
                num_established: 0,
                cause,
                ..
            } => {
                tracing::info!(target: "l2node::p2p", peer = %peer_id, cause = ?cause.map(|c| c.to_string()), "peer disconnected");
                self.status.remove_peer(&peer_id.to_string());
                self.heads.remove(&peer_id);
            }
            SwarmEvent::OutgoingConnectionError { peer_id, error, .. } => {
                tracing::debug!(target: "l2node::p2p", peer = ?peer_id, error = %error, "dial failed");
            }
            SwarmEvent::Behaviour(BehaviourEvent::Identify(identify::Event::Received {
                peer_id,
                info,
                ..
            })) => {
                self.status.update_peer(&peer_id.to_string(), |p| {
                    p.agent = Some(info.agent_version);
                    p.protocols = info.protocols.iter().map(|p| p.to_string()).collect();
                });
            }
            SwarmEvent::Behaviour(BehaviourEvent::Gossipsub(gossipsub::Event::Message {
                propagation_source,
                message_id,
                message,
            })) => self.on_gossip(propagation_source, message_id, message),
            SwarmEvent::Behaviour(BehaviourEvent::Gossipsub(gossipsub::Event::Subscribed {
                topic,
                ..
            })) if !self.cfg.sequencer && topic == self.txs_topic.hash() => {
                // A peer (a sequencer back after a restart) can take transactions again: pass
                // on what waited here meanwhile.
                let pending: Vec<Bytes> = self
                    .pool
                    .content()
                    .pending
                    .into_values()
                    .flat_map(|txs| txs.into_values().map(|t| t.raw.clone()))
                    .collect();
                for raw in pending {
                    self.publish(self.txs_topic.clone(), raw);
                }
            }
            SwarmEvent::Behaviour(BehaviourEvent::Sync(ev)) => self.on_sync_event(ev),
            _ => {}
        }
    }

    fn on_gossip(&mut self, peer: PeerId, id: gossipsub::MessageId, message: gossipsub::Message) {
        let raw = Bytes::from(message.data);
        if message.topic == self.blocks_topic.hash() {
            if self
                .import_tx
                .send(ImportJob::Gossip { peer, id, raw })
                .is_err()
            {
                tracing::error!(target: "l2node::p2p", "the importer stopped");
            }
        } else if message.topic == self.txs_topic.hash() {
            let (chain, pool, done) = (self.chain.clone(), self.pool.clone(), self.done_tx.clone());
            tokio::task::spawn_blocking(move || {
                let accepted = chain
                    .storage()
                    .state_at(None)
                    .map_err(|e| e.to_string())
                    .and_then(|state| {
                        pool.add_raw(&raw, &state, &chain.next_block())
                            .map_err(|e| e.to_string())
                    });
                if let Err(e) = &accepted {
                    tracing::debug!(target: "l2node::p2p", %peer, error = %e, "gossiped transaction not pooled");
                }
                let _ = done.send(Done::Tx {
                    peer,
                    id,
                    accepted: accepted.is_ok(),
                });
            });
        }
    }

    fn on_sync_event(&mut self, ev: request_response::Event<SyncRequest, SyncResponse>) {
        use request_response::{Event, Message};
        match ev {
            Event::Message {
                peer,
                message:
                    Message::Request {
                        request, channel, ..
                    },
                ..
            } => match request {
                SyncRequest::Status => {
                    let status = sync::local_status(&self.chain);
                    let _ = self
                        .swarm
                        .behaviour_mut()
                        .sync
                        .send_response(channel, SyncResponse::Status(status));
                }
                SyncRequest::Blocks { from, count } => {
                    let (chain, done) = (self.chain.clone(), self.done_tx.clone());
                    tokio::task::spawn_blocking(move || {
                        let blocks = sync::serve_blocks(&chain, from, count).unwrap_or_else(|e| {
                            tracing::warn!(target: "l2node::p2p", %peer, error = %e, "cannot serve blocks");
                            Vec::new()
                        });
                        let _ = done.send(Done::Served {
                            channel,
                            response: SyncResponse::Blocks(blocks),
                        });
                    });
                }
            },
            Event::Message {
                peer,
                message:
                    Message::Response {
                        request_id,
                        response,
                    },
                ..
            } => match response {
                SyncResponse::Status(s) => {
                    if s.genesis != self.chain.genesis_hash() {
                        tracing::warn!(target: "l2node::p2p", %peer, genesis = %s.genesis, "peer is on another chain; disconnecting");
                        let _ = self.swarm.disconnect_peer_id(peer);
                        return;
                    }
                    self.set_head(peer, s.head);
                }
                SyncResponse::Blocks(blocks) => {
                    let Some((peer, from, asked)) = self.ranges.remove(&request_id) else {
                        return;
                    };
                    self.planner.received(from, asked, blocks.len() as u64);
                    if self
                        .import_tx
                        .send(ImportJob::Range { peer, blocks })
                        .is_err()
                    {
                        tracing::error!(target: "l2node::p2p", "the importer stopped");
                    }
                }
            },
            Event::OutboundFailure {
                peer,
                request_id,
                error,
                ..
            } if self.ranges.remove(&request_id).is_some() => {
                tracing::debug!(target: "l2node::p2p", %peer, %error, "range request failed");
                self.planner.failed(self.chain.head().header.number);
            }
            _ => {}
        }
    }
}
