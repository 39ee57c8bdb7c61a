//! The swarm loop: one task that owns the `Swarm` and reacts to its events, to the importer's
//! results, to the blocks this node seals and the transactions its pool takes, and to a
//! periodic tick. What to do about a peer is decided in `peers`; here it is carried out.

use std::{
    collections::{HashMap, HashSet},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Instant,
};

use alloy_consensus::Block;
use alloy_primitives::Bytes;
use alloy_rlp::Encodable;
use futures::StreamExt;
use libp2p::{
    gossipsub, identify,
    multiaddr::Protocol,
    request_response::{self, OutboundRequestId},
    swarm::SwarmEvent,
    PeerId, Swarm,
};
use tokio::sync::{broadcast::error::RecvError, mpsc, oneshot};

use crate::chain::Chain;
use crate::constants::P2P_REDIAL_INTERVAL;
use crate::exclusions::SignedExclusion;
use crate::p2p::{
    behaviour::{Behaviour, BehaviourEvent},
    importer::{self, Done, ImportJob},
    peers::Peers,
    Command, NetStatus,
};
use crate::pool::Pool;
use crate::sync::{self, snap::SnapServer, SyncRequest, SyncResponse};

/// The swarm task's state.
pub(super) struct Service {
    /// The swarm, listening and subscribed to both topics.
    pub(super) swarm: Swarm<Behaviour>,
    /// Our chain.
    pub(super) chain: Arc<Chain>,
    /// Our pool.
    pub(super) pool: Arc<Pool>,
    /// Where the peers and the sync progress are shown.
    pub(super) status: Arc<NetStatus>,
    /// What this node publishes.
    pub(super) role: super::P2pRole,
    /// The topic blocks are gossiped on.
    pub(super) blocks_topic: gossipsub::IdentTopic,
    /// The topic transactions are gossiped on.
    pub(super) txs_topic: gossipsub::IdentTopic,
    /// The topic of refused transactions' records, so the follower a user sent a transaction
    /// to can say why the sequencer refused it.
    pub(super) exclusions_topic: gossipsub::IdentTopic,
    /// This node's refusals to announce, signed (`None` without exclusion records).
    pub(super) announced: Option<tokio::sync::broadcast::Receiver<SignedExclusion>>,
    /// The blocks this node seals.
    pub(super) new_blocks: tokio::sync::broadcast::Receiver<Arc<crate::chain::NewBlock>>,
    /// The transactions the pool takes.
    pub(super) pool_events: tokio::sync::broadcast::Receiver<alloy_primitives::B256>,
    /// What we know of our peers.
    pub(super) peers: Peers<OutboundRequestId>,
    /// Jobs for the importer thread.
    pub(super) import_tx: std::sync::mpsc::Sender<ImportJob>,
    /// Where the blocking work sends its results.
    pub(super) done_tx: mpsc::UnboundedSender<Done>,
    /// Peers whose pool this node asked for, and peers it sent its pool to, on their current
    /// connection: once each, so a peer cannot make either side do it again and again.
    pub(super) pools_asked: HashSet<PeerId>,
    pub(super) pools_sent: HashSet<PeerId>,
    /// Requests sent for another task (the snapshot join), and where their answers go.
    pub(super) requests: HashMap<OutboundRequestId, oneshot::Sender<Option<SyncResponse>>>,
    /// The snapshot this node serves.
    pub(super) snap_server: Arc<SnapServer>,
    /// Set while this node joins from a snapshot: no block is imported meanwhile.
    pub(super) snapping: Arc<AtomicBool>,
}

impl Service {
    /// Runs until the task is aborted or what it publishes stops coming (the sealed blocks on a
    /// sequencer, the pooled transactions on a follower).
    pub(super) async fn run(
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
                b = self.new_blocks.recv(), if !matches!(self.role, super::P2pRole::Follower) => match b {
                    // A standby member drops what it imports: the leader announced it.
                    Ok(_) if !self.role.seals() => {}
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
                h = self.pool_events.recv(), if self.role.gossips_transactions() => match h {
                    Ok(hash) => self.publish_tx(hash),
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                },
                // Only the sequencer's refusals decide what is mined: a follower's stay local.
                e = next_announced(&mut self.announced), if !matches!(self.role, super::P2pRole::Follower) => match e {
                    Ok(_) if !self.role.seals() => {}
                    Ok(e) => {
                        let data = serde_json::to_vec(&e).expect("an exclusion serializes");
                        self.publish(self.exclusions_topic.clone(), data.into());
                    }
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => self.announced = None,
                },
                Some(cmd) = commands.recv() => match cmd {
                    Command::PublishBlock(raw) => self.publish_block(raw),
                    Command::Request { peer, request, reply } => {
                        let id = self.swarm.behaviour_mut().sync.send_request(&peer, request);
                        self.requests.insert(id, reply);
                    }
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
        if self.peers.is_empty() {
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
        self.snap_server.expire();
        let swarm = &self.swarm;
        let work = self.peers.tick(Instant::now(), |p| swarm.is_connected(p));
        for peer in work.unblock {
            self.swarm.behaviour_mut().blocked.unblock_peer(peer);
        }
        for addr in work.redial {
            let _ = self.swarm.dial(addr);
        }
        for peer in work.status_of {
            self.request_status(peer);
        }
    }

    fn request_status(&mut self, peer: PeerId) {
        self.swarm
            .behaviour_mut()
            .sync
            .send_request(&peer, SyncRequest::Status);
    }

    /// Blocks `peer` in the swarm, once `peers` has banned it.
    fn block(&mut self, peer: PeerId) {
        self.swarm.behaviour_mut().blocked.block_peer(peer);
    }

    fn drive_sync(&mut self, force: bool) {
        if self.snapping.load(Ordering::SeqCst) {
            return;
        }
        let head = self.chain.head().header.number;
        for range in self.peers.plan_ranges(head, force) {
            let id = self.swarm.behaviour_mut().sync.send_request(
                &range.peer,
                SyncRequest::Blocks {
                    from: range.from,
                    count: range.count,
                },
            );
            self.peers.range_sent(id, range);
        }
    }

    fn on_done(&mut self, done: Done) {
        match done {
            Done::Range { peer, refusal } => {
                let head = self.chain.head().header.number;
                if self
                    .peers
                    .range_imported(peer, refusal.as_ref(), head, Instant::now())
                {
                    self.block(peer);
                }
            }
            Done::Gossip { peer, id, result } => {
                let verdict = self.peers.gossip_imported(peer, result, Instant::now());
                if verdict.ban {
                    self.block(peer);
                }
                self.swarm
                    .behaviour_mut()
                    .gossipsub
                    .report_message_validation_result(&id, &peer, verdict.acceptance);
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
            } if self
                .peers
                .connected(peer_id, &endpoint, num_established.get() == 1) =>
            {
                self.request_status(peer_id);
            }
            SwarmEvent::ConnectionClosed {
                peer_id,
                num_established: 0,
                cause,
                ..
            } => {
                tracing::info!(target: "l2node::p2p", peer = %peer_id, cause = ?cause.map(|c| c.to_string()), "peer disconnected");
                self.peers.disconnected(&peer_id);
                self.pools_asked.remove(&peer_id);
                self.pools_sent.remove(&peer_id);
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
                peer_id,
                topic,
            })) if topic == self.txs_topic.hash() && self.pools_asked.insert(peer_id) => {
                // A peer that joins the transaction topic may hold transactions published while
                // this node was away, which gossip will not send again: ask for its pool, once
                // per connection. (It asks for this node's pool likewise.)
                self.swarm
                    .behaviour_mut()
                    .sync
                    .send_request(&peer_id, SyncRequest::PooledTransactions);
            }
            SwarmEvent::Behaviour(BehaviourEvent::Sync(ev)) => self.on_sync_event(ev),
            _ => {}
        }
    }

    fn on_gossip(&mut self, peer: PeerId, id: gossipsub::MessageId, message: gossipsub::Message) {
        let raw = Bytes::from(message.data);
        if message.topic == self.blocks_topic.hash() {
            if self.snapping.load(Ordering::SeqCst) {
                // Joining from a snapshot: blocks are taken once its state is in.
                self.swarm
                    .behaviour_mut()
                    .gossipsub
                    .report_message_validation_result(
                        &id,
                        &peer,
                        gossipsub::MessageAcceptance::Ignore,
                    );
            } else if self
                .import_tx
                .send(ImportJob::Gossip { peer, id, raw })
                .is_err()
            {
                tracing::error!(target: "l2node::p2p", "the importer stopped");
            }
        } else if message.topic == self.exclusions_topic.hash() {
            // A sequencer's refusal, kept so this node can answer for transactions sent to it:
            // taken only when a signer of the chain (its sealing key) signed it.
            let signed = serde_json::from_slice::<SignedExclusion>(&raw)
                .ok()
                .filter(|e| {
                    e.signer()
                        .is_some_and(|a| self.chain.signers().contains(&a))
                });
            let acceptance = match (signed, self.pool.exclusions()) {
                (Some(e), Some(exclusions)) => {
                    // The sequencer will not mine it: this pool lets it go too, so the record
                    // is the answer here (a pooled transaction has no exclusion). Off this
                    // task: a removal may rewrite the pool's journal and wait for the disk.
                    let (pool, exclusions) = (self.pool.clone(), exclusions.clone());
                    tokio::task::spawn_blocking(move || {
                        pool.remove(&[e.exclusion.tx_hash]);
                        exclusions.record(e.exclusion, false);
                    });
                    gossipsub::MessageAcceptance::Accept
                }
                (Some(_), None) => gossipsub::MessageAcceptance::Accept,
                (None, _) => gossipsub::MessageAcceptance::Reject,
            };
            self.swarm
                .behaviour_mut()
                .gossipsub
                .report_message_validation_result(&id, &peer, acceptance);
        } else if message.topic == self.txs_topic.hash() {
            importer::validate_tx(
                self.chain.clone(),
                self.pool.clone(),
                self.done_tx.clone(),
                peer,
                id,
                raw,
            );
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
                SyncRequest::PooledTransactions => importer::serve_pool(
                    self.pool.clone(),
                    self.done_tx.clone(),
                    // Once per connection; asked again, it answers nothing.
                    self.pools_sent.insert(peer),
                    channel,
                ),
                SyncRequest::Blocks { from, count } => importer::serve_blocks(
                    self.chain.clone(),
                    self.done_tx.clone(),
                    peer,
                    from,
                    count,
                    channel,
                ),
                SyncRequest::Headers { from, count } => {
                    let chain = self.chain.clone();
                    importer::serve(self.done_tx.clone(), channel, move || {
                        SyncResponse::Headers(
                            sync::serve_headers(&chain, from, count).unwrap_or_else(|e| {
                                tracing::warn!(target: "l2node::p2p", %peer, error = %e, "cannot serve headers");
                                Vec::new()
                            }),
                        )
                    })
                }
                SyncRequest::SnapshotManifest => {
                    let (chain, server) = (self.chain.clone(), self.snap_server.clone());
                    importer::serve(self.done_tx.clone(), channel, move || {
                        SyncResponse::SnapshotManifest(server.manifest(&chain))
                    })
                }
                SyncRequest::SnapshotChunk { number, path, from } => {
                    let server = self.snap_server.clone();
                    importer::serve(self.done_tx.clone(), channel, move || {
                        SyncResponse::SnapshotChunk(server.chunk(number, &path, from))
                    })
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
                response if self.requests.contains_key(&request_id) => {
                    let reply = self.requests.remove(&request_id).expect("checked");
                    let _ = reply.send(Some(response));
                }
                SyncResponse::SnapshotManifest(_)
                | SyncResponse::SnapshotChunk(_)
                | SyncResponse::Headers(_) => {}
                SyncResponse::Status(s) => {
                    if !self.peers.peer_status(peer, &s, self.chain.genesis_hash()) {
                        let _ = self.swarm.disconnect_peer_id(peer);
                    }
                }
                SyncResponse::PooledTransactions(txs) => {
                    importer::pool_txs(self.chain.clone(), self.pool.clone(), peer, txs)
                }
                SyncResponse::Blocks(blocks) => {
                    let Some(peer) = self.peers.range_received(&request_id, blocks.len() as u64)
                    else {
                        return;
                    };
                    let blocks = crate::sync::PreparedRange::start(blocks);
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
            } => {
                if let Some(reply) = self.requests.remove(&request_id) {
                    let _ = reply.send(None);
                    return;
                }
                let head = self.chain.head().header.number;
                if self.peers.range_failed(&request_id, head) {
                    tracing::debug!(target: "l2node::p2p", %peer, %error, "range request failed");
                }
            }
            _ => {}
        }
    }
}

/// The next announced refusal, or never without a receiver.
async fn next_announced(
    rx: &mut Option<tokio::sync::broadcast::Receiver<SignedExclusion>>,
) -> Result<SignedExclusion, RecvError> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}
