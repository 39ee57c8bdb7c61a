//! Members of one group on a real etcd (started here on loopback; the tests say so and pass
//! without checking anything when no `etcd` binary is installed: `apt-get install
//! etcd-server`, which `.ci/run` does).
//!
//! The nodes are chains without peers: what the tests look at is the group's part (who may
//! seal, the fenced log, the catch-up of a new leader), not gossip.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use alloy_primitives::B256;
use l2node_group::test_utils::{free_port, start_etcd, EtcdServer};
use l2node_group::{GroupConfig, Member};
use l2node_node::chain::{open_chain, Chain, ChainError};
use l2node_node::group::{GroupControl, GroupRole, SequencerGroup};
use l2node_node::{dev, executor, test_utils};

fn chain(dir: &tempfile::TempDir) -> Arc<Chain> {
    open_chain(dir.path(), Arc::new(test_utils::dev_spec())).unwrap()
}

fn member(etcd: &EtcdServer, name: &str, chain: Arc<Chain>) -> Arc<Member> {
    Member::new(
        GroupConfig {
            endpoints: vec![etcd.url.clone()],
            name: name.into(),
            // Long enough that an etcd request (a third of it) survives a slow fsync while
            // the whole suite shares two cores; each failover below waits this long.
            lease: Duration::from_secs(3),
        },
        chain,
    )
    .unwrap()
}

/// Seals an empty block on `chain`'s head through `group`'s log, as the miner does (on a
/// blocking thread: the append waits for etcd).
async fn seal(chain: &Arc<Chain>, group: &Arc<Member>) -> Result<B256, ChainError> {
    let (chain, group) = (chain.clone(), group.clone());
    tokio::task::spawn_blocking(move || {
        let head = chain.head();
        let state = chain.storage().state_at(None).unwrap();
        let attrs = executor::BuildAttributes {
            timestamp: head.header.timestamp + 1,
            gas_limit: head.header.gas_limit,
            ..Default::default()
        };
        let built = executor::build_block(
            &chain.spec(),
            &state,
            &head.header,
            attrs,
            std::iter::empty(),
        )
        .unwrap();
        drop(state);
        let group: &dyn SequencerGroup = &*group;
        chain.commit_built_to(built, [0u8; 32], &dev::dev_sequencer(), Some(group))
    })
    .await
    .unwrap()
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_member_seals_the_log_is_fenced_and_a_new_leader_continues_it() {
    let Some(etcd) = start_etcd() else { return };
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (chain_a, chain_b) = (chain(&dir_a), chain(&dir_b));
    let a = member(&etcd, "a", chain_a.clone());
    let b = member(&etcd, "b", chain_b.clone());

    let run_a = tokio::spawn(a.clone().run());
    wait_until("a leads", || a.status().role == GroupRole::Leader).await;
    let run_b = tokio::spawn(b.clone().run());
    wait_until("b sees a lead", || {
        b.status().leader.is_some_and(|l| l.name == "a")
    })
    .await;
    assert_eq!(b.status().role, GroupRole::Standby);
    assert!(b.may_seal().unwrap_err().contains("a leads"));

    // The leader seals; the standby cannot, even past the miner's check.
    let first = seal(&chain_a, &a).await.unwrap();
    seal(&chain_a, &a).await.unwrap();
    let refused = seal(&chain_b, &b).await.unwrap_err();
    assert!(
        matches!(refused, ChainError::NotInGroupLog { number: 1, .. }),
        "{refused}"
    );
    assert_eq!(chain_b.head().header.number, 0, "nothing stored");

    // The leader freezes (stops renewing its lease, as under SIGSTOP): b takes over once the
    // lease runs out and first imports the log's blocks past its head.
    run_a.abort();
    wait_until("b leads", || b.status().role == GroupRole::Leader).await;
    assert_eq!(chain_b.head().header.number, 2);
    assert_eq!(chain_b.storage().block_number(&first).unwrap(), Some(1));
    assert_eq!(chain_b.head().hash, chain_a.head().hash);

    // The frozen leader wakes up: whatever it seals now is refused by the log (the term
    // changed), it learns it lost the leadership, and stores nothing.
    let stale = seal(&chain_a, &a).await.unwrap_err();
    assert!(
        matches!(stale, ChainError::NotInGroupLog { number: 3, .. }),
        "{stale}"
    );
    assert_eq!(chain_a.head().header.number, 2);
    assert_ne!(a.status().role, GroupRole::Leader);
    let third = seal(&chain_b, &b).await.unwrap();
    assert_eq!(chain_b.head().hash, third);

    // A leader that hands over stays out of the next election; the other member continues.
    let run_a = tokio::spawn(a.clone().run());
    b.transfer_leadership().unwrap();
    wait_until("a leads again", || a.status().role == GroupRole::Leader).await;
    assert_eq!(
        chain_a.head().hash,
        third,
        "a imported b's block from the log"
    );
    assert!(b.transfer_leadership().is_err(), "b no longer leads");

    // Paused, a leader gives the leadership up and does not campaign.
    a.pause();
    assert!(a.may_seal().is_err());
    wait_until("b leads again", || b.status().role == GroupRole::Leader).await;
    assert_eq!(a.status().role, GroupRole::Paused);
    a.resume();

    // Leaving ends the lease at once.
    run_b.abort();
    b.leave().await;
    wait_until("a leads after b left", || {
        a.status().role == GroupRole::Leader
    })
    .await;
    run_a.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_engine_seals_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let chain = chain(&dir);
    let port = free_port();
    let lonely = Member::new(
        GroupConfig {
            endpoints: vec![format!("http://127.0.0.1:{port}")],
            name: "lonely".into(),
            // Long enough that an etcd request (a third of it) survives a slow fsync while
            // the whole suite shares two cores; each failover below waits this long.
            lease: Duration::from_secs(3),
        },
        chain.clone(),
    )
    .unwrap();
    let run = tokio::spawn(lonely.clone().run());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(lonely.status().role, GroupRole::Standby);
    assert!(lonely.may_seal().is_err());
    let refused = seal(&chain, &lonely).await.unwrap_err();
    assert!(refused.to_string().contains("no longer leads"), "{refused}");
    run.abort();
}
