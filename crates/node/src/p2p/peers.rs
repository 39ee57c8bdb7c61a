//! What the swarm loop knows about its peers and decides from it: each peer's head, bans,
//! which bootnode is which peer, the range requests in flight, and the verdicts on gossiped
//! blocks, imported ranges and peers' status. It holds no `Swarm`, so the decisions are tested
//! without sockets (`p2p/tests.rs`); the swarm loop (`service`) carries them out.

use std::{collections::HashMap, hash::Hash, sync::Arc, time::Instant};

use alloy_primitives::B256;
use libp2p::{
    core::ConnectedPoint, gossipsub::MessageAcceptance, multiaddr::Protocol, Multiaddr, PeerId,
};

use crate::constants::{P2P_BAN_DURATION, SYNC_DISTANCE};
use crate::p2p::{NetStatus, PeerInfo, SyncProgress};
use crate::sync::{ImportRefusal, Imported, PeerStatus, RangePlanner};

/// A range request to send: blocks `from..from + count`, asked of `peer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RangeRequest {
    /// The peer with the best head.
    pub(super) peer: PeerId,
    /// First block number.
    pub(super) from: u64,
    /// How many.
    pub(super) count: u64,
}

/// What a tick asks of the swarm, in this order.
#[derive(Debug, Default)]
pub(super) struct TickWork {
    /// Peers whose ban is over: unblock them.
    pub(super) unblock: Vec<PeerId>,
    /// Bootnodes that are not connected: dial them.
    pub(super) redial: Vec<Multiaddr>,
    /// Every peer: ask for its status again.
    pub(super) status_of: Vec<PeerId>,
}

/// What to tell gossipsub about a gossiped block.
#[derive(Debug)]
pub(super) struct GossipVerdict {
    /// Relay it (`Accept`), drop it (`Ignore`), or drop it and count it against the sender
    /// (`Reject`).
    pub(super) acceptance: MessageAcceptance,
    /// The sender is now banned: block it in the swarm.
    pub(super) ban: bool,
}

/// The swarm loop's state about its peers. `R` is the swarm's request id (`OutboundRequestId`,
/// which only the swarm can make; tests use numbers).
pub(super) struct Peers<R> {
    status: Arc<NetStatus>,
    bootnodes: Vec<Multiaddr>,
    /// Each connected peer's head, from its status and its gossip.
    heads: HashMap<PeerId, u64>,
    planner: RangePlanner,
    /// Range requests in flight.
    ranges: HashMap<R, RangeRequest>,
    /// Banned peers and when their ban ends.
    banned: Vec<(Instant, PeerId)>,
    /// The peer id behind each bootnode address, once connected.
    bootnode_peers: HashMap<Multiaddr, PeerId>,
}

impl<R: Eq + Hash> Peers<R> {
    /// No peer yet; `status` is where the peers and the sync progress are shown, `bootnodes`
    /// are dialled again whenever they are not connected.
    pub(super) fn new(status: Arc<NetStatus>, bootnodes: Vec<Multiaddr>) -> Self {
        Self {
            status,
            bootnodes,
            heads: HashMap::new(),
            planner: RangePlanner::default(),
            ranges: HashMap::new(),
            banned: Vec::new(),
            bootnode_peers: HashMap::new(),
        }
    }

    /// Whether no peer is connected (a banned peer no longer counts).
    pub(super) fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// A connection to `peer` is up at `endpoint`; `first` when no other connection to it is.
    /// Returns whether to ask the peer for its status (on its first connection).
    pub(super) fn connected(
        &mut self,
        peer: PeerId,
        endpoint: &ConnectedPoint,
        first: bool,
    ) -> bool {
        let remote = endpoint.get_remote_address();
        let bootnode = endpoint
            .is_dialer()
            .then(|| {
                self.bootnodes
                    .iter()
                    .find(|b| *b == remote || b.iter().any(|p| p == Protocol::P2p(peer)))
            })
            .flatten()
            .cloned();
        let is_bootnode = bootnode.is_some();
        if let Some(b) = bootnode {
            self.bootnode_peers.insert(b, peer);
        }
        if !first {
            return false;
        }
        tracing::info!(target: "l2node::p2p", %peer, addr = %remote, "peer connected");
        let local = match endpoint {
            ConnectedPoint::Listener { local_addr, .. } => local_addr.to_string(),
            // A dialled connection does not tell its local address; the listen address is
            // the one the peer can reach us at.
            ConnectedPoint::Dialer { .. } => self
                .status
                .listen_addrs()
                .first()
                .cloned()
                .unwrap_or_default(),
        };
        self.status.add_peer(PeerInfo {
            id: peer.to_string(),
            remote_addr: remote.to_string(),
            local_addr: local,
            inbound: !endpoint.is_dialer(),
            bootnode: is_bootnode,
            agent: None,
            protocols: vec![],
            head: None,
        });
        self.heads.entry(peer).or_default();
        true
    }

    /// The last connection to `peer` closed.
    pub(super) fn disconnected(&mut self, peer: &PeerId) {
        self.status.remove_peer(&peer.to_string());
        self.heads.remove(peer);
    }

    /// `peer` has block `head`; a peer's head never goes down, since gossip and status
    /// answers can arrive out of order.
    pub(super) fn set_head(&mut self, peer: PeerId, head: u64) {
        let h = self.heads.entry(peer).or_default();
        *h = (*h).max(head);
        let head = *h;
        self.status
            .update_peer(&peer.to_string(), |p| p.head = Some(head));
    }

    /// `peer` answered our status request. Returns false when it is on another chain than
    /// ours (`genesis`): disconnect it.
    pub(super) fn peer_status(&mut self, peer: PeerId, status: &PeerStatus, genesis: B256) -> bool {
        if status.genesis != genesis {
            tracing::warn!(target: "l2node::p2p", %peer, genesis = %status.genesis, "peer is on another chain; disconnecting");
            return false;
        }
        self.set_head(peer, status.head);
        true
    }

    /// Bans `peer` for [`P2P_BAN_DURATION`] from `now`; the caller blocks it in the swarm.
    fn ban(&mut self, peer: PeerId, why: &dyn std::fmt::Display, now: Instant) {
        tracing::warn!(target: "l2node::p2p", %peer, reason = %why, ban = ?P2P_BAN_DURATION, "dropping peer that sent an invalid block");
        self.banned.push((now + P2P_BAN_DURATION, peer));
        self.heads.remove(&peer);
    }

    /// The importer is done with a block `peer` gossiped, at `now`.
    pub(super) fn gossip_imported(
        &mut self,
        peer: PeerId,
        result: Result<Imported, ImportRefusal>,
        now: Instant,
    ) -> GossipVerdict {
        use MessageAcceptance::{Accept, Ignore, Reject};
        let (acceptance, ban) = match result {
            Ok(Imported::New(n)) => {
                self.set_head(peer, n);
                (Accept, false)
            }
            Ok(Imported::Known(n) | Imported::Competing(n)) => {
                self.set_head(peer, n);
                (Ignore, false)
            }
            Err(ImportRefusal::NotNext { number, head }) => {
                if number > head {
                    // A gap: the peer is ahead of us; range sync fills it.
                    self.set_head(peer, number);
                }
                (Ignore, false)
            }
            Err(e) if e.is_peer_fault() => {
                self.ban(peer, &e, now);
                (Reject, true)
            }
            Err(e) => {
                tracing::warn!(target: "l2node::p2p", error = %e, "gossiped block not imported");
                (Ignore, false)
            }
        };
        GossipVerdict { acceptance, ban }
    }

    /// The importer is done with a range `peer` sent, at `now`; `head` is our head after it.
    /// Returns whether `peer` is now banned (the caller blocks it in the swarm).
    pub(super) fn range_imported(
        &mut self,
        peer: PeerId,
        refusal: Option<&ImportRefusal>,
        head: u64,
        now: Instant,
    ) -> bool {
        let ban = match refusal {
            Some(e) if e.is_peer_fault() => {
                self.ban(peer, e, now);
                true
            }
            Some(e) => {
                tracing::debug!(target: "l2node::p2p", %peer, error = %e, "range not imported");
                false
            }
            None => false,
        };
        self.planner.imported(head, refusal.is_some());
        ban
    }

    /// The range requests to send now, to the peer with the best head, while it is ahead of
    /// our `head`: always when more than [`SYNC_DISTANCE`] blocks behind, and with `force`
    /// (each tick) when behind at all (a lost gossip message must not leave the follower one
    /// block behind for good). Updates the sync progress in the status.
    pub(super) fn plan_ranges(&mut self, head: u64, force: bool) -> Vec<RangeRequest> {
        let Some((&peer, &best)) = self.heads.iter().max_by_key(|(_, h)| **h) else {
            self.status.set_sync(None);
            return Vec::new();
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
            return Vec::new();
        }
        let mut requests = Vec::new();
        while let Some((from, count)) = self.planner.next(head, best) {
            requests.push(RangeRequest { peer, from, count });
        }
        requests
    }

    /// `range` was sent as request `id`.
    pub(super) fn range_sent(&mut self, id: R, range: RangeRequest) {
        self.ranges.insert(id, range);
    }

    /// The answer to request `id` holds `received` blocks. Returns the peer the range was
    /// asked of (whose blocks they are), or `None` when `id` is no range request in flight.
    pub(super) fn range_received(&mut self, id: &R, received: u64) -> Option<PeerId> {
        let range = self.ranges.remove(id)?;
        self.planner.received(range.from, range.count, received);
        if received == 0 {
            // A peer that has a block sends at least that one: this peer has nothing from
            // `from` on, whatever head it claimed (in a gossiped block nobody could check, or
            // a status answer). The next range goes to a peer that has it.
            if let Some(h) = self.heads.get_mut(&range.peer) {
                *h = range.from - 1;
                let head = *h;
                self.status
                    .update_peer(&range.peer.to_string(), |p| p.head = Some(head));
            }
        }
        Some(range.peer)
    }

    /// Request `id` failed; `head` is our head. Returns whether it was a range request in
    /// flight (which is then asked for again).
    pub(super) fn range_failed(&mut self, id: &R, head: u64) -> bool {
        if self.ranges.remove(id).is_none() {
            return false;
        }
        self.planner.failed(head);
        true
    }

    /// The periodic upkeep at `now`: ends the bans that are over, redials the bootnodes
    /// `is_connected` says are down, and asks every peer for its status again (a head learned
    /// only from gossip misses the blocks whose gossip was lost).
    pub(super) fn tick(
        &mut self,
        now: Instant,
        is_connected: impl Fn(&PeerId) -> bool,
    ) -> TickWork {
        let mut unblock = Vec::new();
        self.banned.retain(|(until, peer)| {
            let keep = *until > now;
            if !keep {
                unblock.push(*peer);
            }
            keep
        });
        let mut redial = Vec::new();
        for addr in &self.bootnodes {
            let connected = self.bootnode_peers.get(addr).is_some_and(&is_connected);
            if !connected {
                redial.push(addr.clone());
            }
        }
        TickWork {
            unblock,
            redial,
            status_of: self.heads.keys().copied().collect(),
        }
    }
}
