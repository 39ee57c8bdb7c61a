//! Tests of the swarm loop's decisions ([`Peers`]) without a swarm or a socket: gossiped
//! blocks move peer heads or ban their sender, bans end, range requests follow the best peer
//! and are asked again after a short answer or a failure, peers of another chain are dropped,
//! and connections keep the shown peers and the bootnodes in step.

use std::{sync::Arc, time::Instant};

use alloy_primitives::B256;
use libp2p::{
    core::{transport::PortUse, ConnectedPoint, Endpoint},
    gossipsub::MessageAcceptance,
    multiaddr::Protocol,
    Multiaddr, PeerId,
};

use crate::chain::ChainError;
use crate::constants::{P2P_BAN_DURATION, SYNC_DISTANCE, SYNC_MAX_BLOCKS_PER_RESPONSE};
use crate::p2p::{
    peers::{Peers, RangeRequest},
    NetStatus, SyncProgress,
};
use crate::sync::{ImportRefusal, Imported, PeerStatus};

const LISTEN: &str = "/ip4/127.0.0.1/tcp/30303";

fn setup(bootnodes: Vec<Multiaddr>) -> (Arc<NetStatus>, Peers<u32>) {
    let status = Arc::new(NetStatus::default());
    status.add_listen_addr(LISTEN.into());
    (status.clone(), Peers::new(status, bootnodes))
}

fn addr(s: &str) -> Multiaddr {
    s.parse().unwrap()
}

fn dialed(address: Multiaddr) -> ConnectedPoint {
    ConnectedPoint::Dialer {
        address,
        role_override: Endpoint::Dialer,
        port_use: PortUse::Reuse,
    }
}

fn accepted(remote: Multiaddr) -> ConnectedPoint {
    ConnectedPoint::Listener {
        local_addr: addr(LISTEN),
        send_back_addr: remote,
    }
}

/// A peer that dialled us, with its first connection up.
fn connect(peers: &mut Peers<u32>) -> PeerId {
    let peer = PeerId::random();
    assert!(peers.connected(peer, &accepted(addr("/ip4/10.0.0.9/tcp/4000")), true));
    peer
}

fn shown_head(status: &NetStatus, peer: &PeerId) -> Option<u64> {
    let id = peer.to_string();
    status.peers().into_iter().find(|p| p.id == id)?.head
}

fn invalid_block() -> ImportRefusal {
    ImportRefusal::Invalid(ChainError::InvalidSignature {
        number: 7,
        index: 0,
    })
}

/// A refusal that is our own fault, not the sender's.
fn local_failure() -> ImportRefusal {
    ImportRefusal::Local(ChainError::Mismatch {
        number: 7,
        field: "state root",
        expected: "a".into(),
        computed: "b".into(),
    })
}

fn status_of(head: u64, genesis: B256) -> PeerStatus {
    PeerStatus {
        genesis,
        head,
        head_hash: B256::ZERO,
    }
}

#[test]
fn gossiped_block_moves_the_senders_head_and_only_a_new_one_is_relayed() {
    let (status, mut peers) = setup(vec![]);
    let peer = connect(&mut peers);
    let now = Instant::now();

    let v = peers.gossip_imported(peer, Ok(Imported::New(5)), now);
    assert!(matches!(v.acceptance, MessageAcceptance::Accept) && !v.ban);
    assert_eq!(shown_head(&status, &peer), Some(5));

    let v = peers.gossip_imported(peer, Ok(Imported::Known(3)), now);
    assert!(matches!(v.acceptance, MessageAcceptance::Ignore) && !v.ban);
    assert_eq!(
        shown_head(&status, &peer),
        Some(5),
        "a head never goes down"
    );
}

#[test]
fn gossiped_block_past_our_head_shows_a_gap_but_a_stale_one_does_not() {
    let (status, mut peers) = setup(vec![]);
    let peer = connect(&mut peers);
    let now = Instant::now();

    let gap = ImportRefusal::NotNext { number: 9, head: 5 };
    let v = peers.gossip_imported(peer, Err(gap), now);
    assert!(matches!(v.acceptance, MessageAcceptance::Ignore) && !v.ban);
    assert_eq!(shown_head(&status, &peer), Some(9));

    let other = connect(&mut peers);
    let stale = ImportRefusal::NotNext { number: 3, head: 5 };
    let v = peers.gossip_imported(other, Err(stale), now);
    assert!(matches!(v.acceptance, MessageAcceptance::Ignore) && !v.ban);
    assert_eq!(shown_head(&status, &other), None);
}

#[test]
fn bad_gossiped_block_bans_its_sender_until_the_ban_is_over() {
    let (_, mut peers) = setup(vec![]);
    let peer = connect(&mut peers);
    let now = Instant::now();

    let v = peers.gossip_imported(peer, Err(invalid_block()), now);
    assert!(matches!(v.acceptance, MessageAcceptance::Reject) && v.ban);
    assert!(peers.is_empty(), "a banned peer is no sync source");
    let bad_rlp = ImportRefusal::Decode(alloy_rlp::Error::InputTooShort);
    let other = connect(&mut peers);
    assert!(peers.gossip_imported(other, Err(bad_rlp), now).ban);

    let early = now + P2P_BAN_DURATION - std::time::Duration::from_millis(1);
    assert!(peers.tick(early, |_| true).unblock.is_empty());
    let mut over = peers.tick(now + P2P_BAN_DURATION, |_| true).unblock;
    over.sort();
    let mut both = vec![peer, other];
    both.sort();
    assert_eq!(over, both);
    assert!(peers
        .tick(now + 2 * P2P_BAN_DURATION, |_| true)
        .unblock
        .is_empty());
}

#[test]
fn our_own_failure_is_no_ban() {
    let (status, mut peers) = setup(vec![]);
    let peer = connect(&mut peers);
    let now = Instant::now();
    let v = peers.gossip_imported(peer, Err(local_failure()), now);
    assert!(matches!(v.acceptance, MessageAcceptance::Ignore) && !v.ban);
    assert!(!peers.range_imported(peer, Some(&local_failure()), 0, now));
    assert!(!peers.is_empty());
    assert_eq!(shown_head(&status, &peer), None);
}

#[test]
fn a_peer_that_sends_no_block_of_its_claimed_range_is_no_longer_the_best() {
    let (status, mut peers) = setup(vec![]);
    let (honest, liar) = (connect(&mut peers), connect(&mut peers));
    let genesis = B256::repeat_byte(1);
    assert!(peers.peer_status(honest, &status_of(100, genesis), genesis));
    // A gossiped block far ahead that nobody could check yet (its parent is unknown).
    let claim = ImportRefusal::NotNext {
        number: 1_000_000,
        head: 0,
    };
    peers.gossip_imported(liar, Err(claim), Instant::now());
    let asked = peers.plan_ranges(0, false);
    assert_eq!(asked.len(), 1);
    assert_eq!((asked[0].peer, asked[0].from), (liar, 1));
    peers.range_sent(7, asked[0]);

    assert_eq!(peers.range_received(&7, 0), Some(liar));
    assert_eq!(
        shown_head(&status, &liar),
        Some(0),
        "it has no block after 0"
    );
    assert!(!peers.range_imported(liar, None, 0, Instant::now()));
    let asked = peers.plan_ranges(0, false);
    assert_eq!(asked.len(), 1);
    assert_eq!((asked[0].peer, asked[0].from), (honest, 1));
    assert_eq!(status.sync().map(|s| s.highest), Some(100));
}

#[test]
fn far_behind_asks_the_best_peer_for_one_range_at_a_time() {
    let (status, mut peers) = setup(vec![]);
    let (slow, best) = (connect(&mut peers), connect(&mut peers));
    let genesis = B256::repeat_byte(1);
    assert!(peers.peer_status(slow, &status_of(5, genesis), genesis));
    assert!(peers.peer_status(best, &status_of(1000, genesis), genesis));

    let count = SYNC_MAX_BLOCKS_PER_RESPONSE.min(1000);
    let first = RangeRequest {
        peer: best,
        from: 1,
        count,
    };
    assert_eq!(peers.plan_ranges(0, false), vec![first]);
    assert_eq!(
        status.sync(),
        Some(SyncProgress {
            starting: 0,
            highest: 1000
        })
    );
    peers.range_sent(1, first);
    assert!(
        peers.plan_ranges(0, true).is_empty(),
        "one request in flight"
    );

    assert_eq!(peers.range_received(&2, count), None, "not ours");
    assert_eq!(peers.range_received(&1, count), Some(best));
    assert_eq!(peers.range_received(&1, count), None, "answered once");
    let next = peers.plan_ranges(0, false);
    assert_eq!(next.len(), 1);
    assert_eq!((next[0].peer, next[0].from), (best, 1 + count));

    assert!(!peers.range_imported(best, None, count, Instant::now()));
    assert!(
        peers.plan_ranges(count, false).is_empty(),
        "the next is in flight"
    );
    assert_eq!(
        status.sync(),
        Some(SyncProgress {
            starting: 0,
            highest: 1000
        }),
        "a sync keeps its start"
    );
}

#[test]
fn close_behind_asks_only_on_a_tick_and_caught_up_ends_the_sync() {
    let (status, mut peers) = setup(vec![]);
    assert!(peers.plan_ranges(10, true).is_empty(), "no peer");
    let peer = connect(&mut peers);
    peers.set_head(peer, 10 + SYNC_DISTANCE);

    assert!(peers.plan_ranges(10, false).is_empty());
    assert_eq!(status.sync(), None, "a block or so behind is no sync");
    let asked = peers.plan_ranges(10, true);
    assert_eq!(
        asked,
        vec![RangeRequest {
            peer,
            from: 11,
            count: SYNC_DISTANCE
        }]
    );

    status.set_sync(Some(SyncProgress {
        starting: 1,
        highest: 11,
    }));
    assert!(peers.plan_ranges(10 + SYNC_DISTANCE, true).is_empty());
    assert_eq!(status.sync(), None);
}

#[test]
fn failed_or_short_range_is_asked_for_again() {
    let (_, mut peers) = setup(vec![]);
    let peer = connect(&mut peers);
    peers.set_head(peer, 100);
    let ranges = peers.plan_ranges(0, false);
    let [first] = ranges[..] else {
        panic!("one range");
    };
    assert_eq!((first.from, first.count), (1, 100));
    peers.range_sent(7, first);
    assert!(!peers.range_failed(&8, 0), "a status request failed");
    assert!(peers.plan_ranges(0, false).is_empty());
    assert!(peers.range_failed(&7, 0));
    assert_eq!(peers.plan_ranges(0, false), vec![first]);

    peers.range_sent(9, first);
    assert_eq!(peers.range_received(&9, 40), Some(peer));
    let rest = peers.plan_ranges(0, false);
    assert_eq!(
        rest.iter().map(|r| (r.from, r.count)).collect::<Vec<_>>(),
        vec![(41, 60)]
    );
}

#[test]
fn bad_range_bans_its_sender_and_is_asked_again() {
    let (_, mut peers) = setup(vec![]);
    let (bad, good) = (connect(&mut peers), connect(&mut peers));
    peers.set_head(bad, 50);
    peers.set_head(good, 40);
    let ranges = peers.plan_ranges(0, false);
    let [range] = ranges[..] else {
        panic!("one range");
    };
    assert_eq!(range.peer, bad);
    peers.range_sent(1, range);
    assert_eq!(peers.range_received(&1, 50), Some(bad));
    assert!(peers.range_imported(bad, Some(&invalid_block()), 0, Instant::now()));

    let again = peers.plan_ranges(0, false);
    assert_eq!(
        again,
        vec![RangeRequest {
            peer: good,
            from: 1,
            count: 40
        }]
    );
}

#[test]
fn peer_of_another_chain_is_dropped() {
    let (status, mut peers) = setup(vec![]);
    let peer = connect(&mut peers);
    let ours = B256::repeat_byte(1);
    assert!(!peers.peer_status(peer, &status_of(50, B256::repeat_byte(2)), ours));
    assert_eq!(shown_head(&status, &peer), None);
    assert!(peers.peer_status(peer, &status_of(50, ours), ours));
    assert_eq!(shown_head(&status, &peer), Some(50));
}

#[test]
fn connections_show_peers_once_and_mark_bootnodes() {
    let boot_addr = addr("/ip4/10.0.0.1/tcp/30303");
    let boot_id = PeerId::random();
    let by_id = addr("/ip4/10.0.0.2/tcp/30303").with(Protocol::P2p(boot_id));
    let (status, mut peers) = setup(vec![boot_addr.clone(), by_id.clone()]);

    let boot = PeerId::random();
    assert!(peers.connected(boot, &dialed(boot_addr.clone()), true));
    assert!(!peers.connected(boot, &dialed(boot_addr.clone()), false));
    // A bootnode named by its peer id is recognised at another address.
    assert!(peers.connected(boot_id, &dialed(addr("/ip4/10.0.0.3/tcp/1")), true));
    // Only a connection we dialled makes a peer a bootnode.
    let inbound = PeerId::random();
    assert!(peers.connected(inbound, &accepted(boot_addr.clone()), true));

    let shown = status.peers();
    assert_eq!(shown.len(), 3);
    let info = |p: &PeerId| {
        let id = p.to_string();
        shown.iter().find(|i| i.id == id).unwrap().clone()
    };
    let b = info(&boot);
    assert!(b.bootnode && !b.inbound);
    assert_eq!(
        (b.remote_addr.as_str(), b.local_addr.as_str()),
        ("/ip4/10.0.0.1/tcp/30303", LISTEN)
    );
    assert!(info(&boot_id).bootnode);
    let i = info(&inbound);
    assert!(!i.bootnode && i.inbound);
    assert_eq!(i.local_addr, LISTEN);

    let work = peers.tick(Instant::now(), |p| *p == boot);
    assert_eq!(work.redial, vec![by_id], "the other bootnode is down");
    assert_eq!(
        work.status_of.len(),
        3,
        "every peer is asked for its status"
    );

    peers.disconnected(&boot);
    peers.disconnected(&boot_id);
    peers.disconnected(&inbound);
    assert_eq!(status.peer_count(), 0);
    assert!(peers.is_empty());
    assert_eq!(peers.tick(Instant::now(), |_| false).redial.len(), 2);
}
