//! What the network layer tells the rest of the node: peers, listening, sync progress. The RPC
//! layer (`net_*`, `eth_syncing`, `admin_*`), the probes and the metrics read it; only the
//! peer-to-peer service writes it. A node without peer-to-peer keeps the default status: no
//! peers, not listening, never syncing.

use std::{
    collections::BTreeMap,
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
};

use parking_lot::RwLock;
use tokio::sync::watch;

/// A connected peer, as `admin_peers` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    /// libp2p peer id (base58).
    pub id: String,
    /// The peer's address of this connection (a multiaddr).
    pub remote_addr: String,
    /// Our address of this connection.
    pub local_addr: String,
    /// Whether the peer dialled us.
    pub inbound: bool,
    /// Whether it is one of our `--bootnodes`.
    pub bootnode: bool,
    /// The peer's agent version from identify (`l2node/0.1.0`), once known.
    pub agent: Option<String>,
    /// The protocols the peer announced in identify.
    pub protocols: Vec<String>,
    /// The peer's head number, from its status or its latest gossiped block.
    pub head: Option<u64>,
}

/// A sync in progress: `eth_syncing`'s `startingBlock` and `highestBlock` (the current block is
/// the chain head).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncProgress {
    /// Our head when this sync started.
    pub starting: u64,
    /// The best head a peer has announced.
    pub highest: u64,
}

/// Shared network state.
#[derive(Debug)]
pub struct NetStatus {
    listening: AtomicBool,
    local_id: RwLock<Option<String>>,
    listen_addrs: RwLock<Vec<String>>,
    peers: RwLock<BTreeMap<String, PeerInfo>>,
    best_peer_head: AtomicU64,
    sync: watch::Sender<Option<SyncProgress>>,
    snapshot_join: RwLock<Option<super::snap::SnapshotJoin>>,
}

impl Default for NetStatus {
    fn default() -> Self {
        Self {
            listening: AtomicBool::new(false),
            local_id: RwLock::new(None),
            listen_addrs: RwLock::new(Vec::new()),
            peers: RwLock::new(BTreeMap::new()),
            best_peer_head: AtomicU64::new(0),
            sync: watch::channel(None).0,
            snapshot_join: RwLock::new(None),
        }
    }
}

impl NetStatus {
    /// `net_listening`: a listener is bound.
    pub fn is_listening(&self) -> bool {
        self.listening.load(Ordering::Relaxed)
    }

    /// `net_peerCount`.
    pub fn peer_count(&self) -> usize {
        self.peers.read().len()
    }

    /// Connected peers, ordered by id.
    pub fn peers(&self) -> Vec<PeerInfo> {
        self.peers.read().values().cloned().collect()
    }

    /// This node's peer id, once the service runs.
    pub fn local_id(&self) -> Option<String> {
        self.local_id.read().clone()
    }

    /// The addresses the listener is bound to.
    pub fn listen_addrs(&self) -> Vec<String> {
        self.listen_addrs.read().clone()
    }

    /// The best head any connected peer has announced (0 before any did).
    pub fn best_peer_head(&self) -> u64 {
        self.best_peer_head.load(Ordering::Relaxed)
    }

    /// How many blocks `head` is behind the best peer.
    pub fn blocks_behind(&self, head: u64) -> u64 {
        self.best_peer_head().saturating_sub(head)
    }

    /// The sync in progress, if any.
    pub fn sync(&self) -> Option<SyncProgress> {
        *self.sync.borrow()
    }

    /// Changes of the sync state (the `syncing` subscription).
    pub fn watch_sync(&self) -> watch::Receiver<Option<SyncProgress>> {
        self.sync.subscribe()
    }

    pub(crate) fn set_local(&self, id: String) {
        *self.local_id.write() = Some(id);
    }

    pub(crate) fn add_listen_addr(&self, addr: String) {
        self.listen_addrs.write().push(addr);
        self.listening.store(true, Ordering::Relaxed);
    }

    pub(crate) fn remove_listen_addr(&self, addr: &str) {
        let mut addrs = self.listen_addrs.write();
        addrs.retain(|a| a != addr);
        self.listening.store(!addrs.is_empty(), Ordering::Relaxed);
    }

    pub(crate) fn update_peer(&self, id: &str, f: impl FnOnce(&mut PeerInfo)) {
        if let Some(p) = self.peers.write().get_mut(id) {
            f(p);
        }
        self.refresh_best();
    }

    pub(crate) fn add_peer(&self, peer: PeerInfo) {
        self.peers.write().insert(peer.id.clone(), peer);
        self.refresh_best();
    }

    pub(crate) fn remove_peer(&self, id: &str) {
        self.peers.write().remove(id);
        self.refresh_best();
    }

    fn refresh_best(&self) {
        let best = self
            .peers
            .read()
            .values()
            .filter_map(|p| p.head)
            .max()
            .unwrap_or(0);
        self.best_peer_head.store(best, Ordering::Relaxed);
    }

    /// How this node joined from a state snapshot, once it has (`--syncmode snap`).
    pub fn snapshot_join(&self) -> Option<super::snap::SnapshotJoin> {
        *self.snapshot_join.read()
    }

    pub(crate) fn set_snapshot_join(&self, join: super::snap::SnapshotJoin) {
        *self.snapshot_join.write() = Some(join);
    }

    pub(crate) fn set_sync(&self, progress: Option<SyncProgress>) {
        self.sync.send_if_modified(|s| {
            let changed = *s != progress;
            *s = progress;
            changed
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(id: &str, head: Option<u64>) -> PeerInfo {
        PeerInfo {
            id: id.into(),
            remote_addr: String::new(),
            local_addr: String::new(),
            inbound: false,
            bootnode: false,
            agent: None,
            protocols: vec![],
            head,
        }
    }

    #[test]
    fn best_head_follows_connected_peers() {
        let s = NetStatus::default();
        assert_eq!(s.blocks_behind(5), 0);
        s.add_peer(peer("a", Some(10)));
        s.add_peer(peer("b", None));
        assert_eq!((s.peer_count(), s.best_peer_head()), (2, 10));
        s.update_peer("b", |p| p.head = Some(12));
        assert_eq!(s.blocks_behind(5), 7);
        s.remove_peer("b");
        assert_eq!(s.best_peer_head(), 10);
        s.remove_peer("a");
        assert_eq!((s.peer_count(), s.blocks_behind(5)), (0, 0));
    }

    #[test]
    fn sync_changes_are_announced_once() {
        let s = NetStatus::default();
        let mut rx = s.watch_sync();
        let p = SyncProgress {
            starting: 1,
            highest: 9,
        };
        s.set_sync(Some(p));
        assert!(rx.has_changed().unwrap());
        rx.mark_unchanged();
        s.set_sync(Some(p));
        assert!(!rx.has_changed().unwrap());
        s.set_sync(None);
        assert_eq!(*rx.borrow_and_update(), None);
    }

    #[test]
    fn listening_tracks_listen_addresses() {
        let s = NetStatus::default();
        assert!(!s.is_listening());
        s.add_listen_addr("/ip4/127.0.0.1/tcp/1".into());
        assert!(s.is_listening());
        s.remove_listen_addr("/ip4/127.0.0.1/tcp/1");
        assert!(!s.is_listening());
    }
}
