//! The network: followers sync and follow a sequencer over libp2p, transactions sent to a
//! follower reach the sequencer, invalid blocks are refused and their sender dropped.

use std::{path::Path, time::Duration};

use alloy_consensus::{Block, TxEnvelope};
use alloy_primitives::{Bytes, B256, U256};
use alloy_rlp::{Decodable, Encodable};
use alloy_signer_local::PrivateKeySigner;
use jsonrpsee::{
    core::client::{ClientT, SubscriptionClientT},
    rpc_params,
    ws_client::WsClientBuilder,
};
use l2node_launch::NodeConfig;
use l2node_node::chain::clique;
use l2node_node::dev;
use l2node_node::p2p::{Multiaddr, P2pConfig, P2pRole};

use crate::common::{account, dev_config, transfer, TestNode};

fn p2p_config(dir: &Path, port: u16, bootnodes: Vec<Multiaddr>, sequencer: bool) -> P2pConfig {
    P2pConfig {
        host: "127.0.0.1".parse().unwrap(),
        port,
        bootnodes,
        max_peers: 25,
        key_path: l2node_launch::p2p_key_path(dir),
        role: if sequencer {
            P2pRole::Sequencer
        } else {
            P2pRole::Follower
        },
        snap_sync: false,
    }
}

/// A port for a sequencer that restarts on the same address (its followers name it first).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A dev sequencer (mining on each transaction) with peer-to-peer on `port`.
async fn sequencer_in(dir: tempfile::TempDir, port: u16) -> TestNode {
    let mut cfg = dev_config(dir.path(), Duration::ZERO);
    cfg.p2p = Some(p2p_config(dir.path(), port, vec![], true));
    TestNode::start_in(dir, cfg).await
}

fn follower_config(dir: &Path, bootnodes: Vec<Multiaddr>) -> NodeConfig {
    let mut cfg = dev_config(dir, Duration::ZERO);
    cfg.signer = None;
    cfg.karma.slasher = None;
    cfg.p2p = Some(p2p_config(dir, 0, bootnodes, false));
    cfg
}

async fn follower(boot: &TestNode) -> TestNode {
    let dir = tempfile::tempdir().unwrap();
    let cfg = follower_config(dir.path(), vec![addr(boot)]);
    TestNode::start_in(dir, cfg).await
}

fn addr(node: &TestNode) -> Multiaddr {
    node.handle
        .as_ref()
        .unwrap()
        .p2p
        .as_ref()
        .unwrap()
        .local_addr()
        .clone()
}

fn chain(node: &TestNode) -> &l2node_node::chain::Chain {
    &node.handle.as_ref().unwrap().chain
}

/// Sends `n` transfers from dev account `from` starting at `nonce` and waits for the last one.
async fn mine(node: &TestNode, from: usize, nonce: u64, n: u64) {
    let key = account(from);
    let mut last = B256::ZERO;
    for i in 0..n {
        last = node
            .request(
                "eth_sendRawTransaction",
                rpc_params![transfer(
                    &key,
                    nonce + i,
                    dev::dev_accounts()[9].address(),
                    1
                )],
            )
            .await;
    }
    node.wait_receipt(last).await;
}

async fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    crate::common::eventually(what, || std::future::ready(ok().then_some(()))).await
}

/// Every block hash and state root of `a` and `b` are equal, and so are the heads.
fn assert_same_chain(a: &TestNode, b: &TestNode) {
    let (a, b) = (chain(a), chain(b));
    assert_eq!(a.head().hash, b.head().hash);
    for n in 0..=a.head().header.number {
        let (x, y) = (
            a.storage().header(n).unwrap().unwrap(),
            b.storage().header(n).unwrap().unwrap(),
        );
        assert_eq!(x.hash_slow(), y.hash_slow(), "block {n}");
        assert_eq!(x.state_root, y.state_root, "state root {n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followers_sync_then_follow_gossip_and_forward_transactions() {
    let seq = sequencer_in(tempfile::tempdir().unwrap(), 0).await;
    mine(&seq, 0, 0, 5).await;
    // Started after 5 blocks: it syncs them by range, then follows gossip.
    let f1 = follower(&seq).await;
    let f2 = follower(&seq).await;
    let head = seq.block_number().await;
    wait_for("followers to sync", || {
        chain(&f1).head().header.number == head && chain(&f2).head().header.number == head
    })
    .await;
    mine(&seq, 1, 0, 3).await;
    let head = seq.block_number().await;
    wait_for("gossip", || {
        chain(&f1).head().header.number == head && chain(&f2).head().header.number == head
    })
    .await;

    // A transaction sent to a follower: validated there, gossiped, sealed by the sequencer,
    // and its receipt served by the follower.
    let hash: B256 = f1
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(2), 0, account(9).address(), 7)],
        )
        .await;
    let receipt = f1.wait_receipt(hash).await;
    assert_eq!(receipt["status"], "0x1");
    let head = seq.block_number().await;
    wait_for("the follower's transaction on every node", || {
        chain(&f2).head().header.number == head
    })
    .await;
    // An invalid transaction gets the same answer on a follower as on the sequencer.
    let err = f1
        .http
        .request::<B256, _>(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(2), 0, account(9).address(), 7)],
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("nonce too low"), "{err}");

    assert_same_chain(&seq, &f1);
    assert_same_chain(&seq, &f2);
    let peers: U256 = seq.request("net_peerCount", rpc_params![]).await;
    assert_eq!(peers, U256::from(2));
    let peers: U256 = f1.request("net_peerCount", rpc_params![]).await;
    assert_eq!(peers, U256::from(1));
    let listening: bool = f1.request("net_listening", rpc_params![]).await;
    assert!(listening);
    let syncing: serde_json::Value = f1.request("eth_syncing", rpc_params![]).await;
    assert_eq!(syncing, false);
    let admin: Vec<serde_json::Value> = f1.request("admin_peers", rpc_params![]).await;
    assert_eq!(admin.len(), 1);
    assert_eq!(admin[0]["network"]["static"], true);
    assert!(admin[0]["enode"].as_str().unwrap().contains("/p2p/12D3"));
    let info: serde_json::Value = seq.request("admin_nodeInfo", rpc_params![]).await;
    assert_eq!(info["enode"], addr(&seq).to_string());
    assert_eq!(info["protocols"]["l2node"]["headNumber"], head);

    // A follower stopped mid-chain resumes from its own storage after a restart.
    let stopped_at = chain(&f2).head().header.number;
    let dir = f2.stop().await;
    mine(&seq, 3, 0, 4).await;
    let cfg = follower_config(dir.path(), vec![addr(&seq)]);
    let f2 = TestNode::start_in(dir, cfg).await;
    // It opens at the head it stored (it may already have synced on by now).
    assert!(chain(&f2).head().header.number >= stopped_at);
    let head = seq.block_number().await;
    wait_for("the restarted follower", || {
        chain(&f2).head().header.number == head
    })
    .await;
    assert_same_chain(&seq, &f2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_progress_is_reported_and_a_returning_sequencer_is_found_again() {
    // Reserve a port for the sequencer so the follower can name it before it runs.
    let port = free_port();
    let seq = sequencer_in(tempfile::tempdir().unwrap(), port).await;
    mine(&seq, 0, 0, 40).await;
    // The miner may seal two of the 40 transactions in one block.
    let mined = seq.block_number().await;
    let seq_addr = addr(&seq);
    let dir = seq.stop().await;

    let fdir = tempfile::tempdir().unwrap();
    let cfg = follower_config(fdir.path(), vec![seq_addr]);
    let f = TestNode::start_in(fdir, cfg).await;
    let ws = WsClientBuilder::default()
        .build(format!("ws://{}", f.ws_addr))
        .await
        .unwrap();
    let mut sub = ws
        .subscribe::<serde_json::Value, _>(
            "eth_subscribe",
            rpc_params!["syncing"],
            "eth_unsubscribe",
        )
        .await
        .unwrap();
    let peers: U256 = f.request("net_peerCount", rpc_params![]).await;
    assert_eq!(peers, U256::ZERO);
    // A transaction sent while the follower has no peer waits in its pool.
    let waiting: B256 = f
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(5), 0, account(9).address(), 3)],
        )
        .await;

    // The sequencer comes back on the same address: the follower redials it and syncs.
    let seq = sequencer_in(dir, port).await;
    let started = tokio::time::timeout(crate::common::WAIT_DEADLINE, sub.next())
        .await
        .expect("a syncing notification")
        .unwrap()
        .unwrap();
    assert_eq!(started["syncing"], true, "{started}");
    assert_eq!(started["status"]["startingBlock"], "0x0");
    let highest = started["status"]["highestBlock"].as_str().unwrap();
    assert!(
        u64::from_str_radix(&highest[2..], 16).unwrap() >= mined,
        "{started}"
    );
    let done = tokio::time::timeout(crate::common::WAIT_DEADLINE, sub.next())
        .await
        .expect("the end of the sync")
        .unwrap()
        .unwrap();
    assert_eq!(done, false);
    assert!(chain(&f).head().header.number >= mined);
    // Once the sequencer is back, the waiting transaction reaches it and is sealed.
    let receipt = f.wait_receipt(waiting).await;
    assert_eq!(receipt["status"], "0x1");
    assert_same_chain(&seq, &f);
}

/// A transaction gossiped among the followers while the sequencer was down is not published
/// again (gossip sends a message once): the returning sequencer asks its peers for their pools
/// and seals it, so no acknowledged transaction waits forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_returning_sequencer_takes_what_was_gossiped_while_it_was_away() {
    let port = free_port();
    let seq = sequencer_in(tempfile::tempdir().unwrap(), port).await;
    let f1 = follower(&seq).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = follower_config(dir.path(), vec![addr(&seq), addr(&f1)]);
    let f2 = TestNode::start_in(dir, cfg).await;
    mine(&seq, 0, 0, 1).await;
    wait_for("both followers at block 1", || {
        chain(&f1).head().header.number == 1 && chain(&f2).head().header.number == 1
    })
    .await;
    let seq_dir = seq.stop().await;
    // Sent to f1 while the sequencer is away: f1 gossips it to f2, so both have published it.
    let hash: B256 = f1
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(5), 0, account(9).address(), 3)],
        )
        .await;
    let handle = f2.handle.as_ref().unwrap();
    wait_for("the transaction in f2's pool", || {
        handle.pool.get(&hash).is_some()
    })
    .await;
    let seq = sequencer_in(seq_dir, port).await;
    // The followers redial it within P2P_REDIAL_INTERVAL (2 s).
    wait_for("the transaction sealed by the returning sequencer", || {
        seq.handle.as_ref().unwrap().chain.head().header.number >= 2
    })
    .await;
    let receipt = f1.wait_receipt(hash).await;
    assert_eq!(receipt["status"], "0x1");
    wait_for("f2 at the sequencer's head", || {
        chain(&f2).head().hash == chain(&seq).head().hash
    })
    .await;
    assert_same_chain(&seq, &f2);
}

/// `raw` with its state root replaced and sealed again by `key`.
fn tampered(raw: &[u8], key: &PrivateKeySigner, state_root: Option<B256>) -> Bytes {
    let mut block = Block::<TxEnvelope>::decode(&mut &raw[..]).unwrap();
    if let Some(root) = state_root {
        block.header.state_root = root;
    }
    let mut vanity = [0u8; clique::VANITY_LEN];
    vanity.copy_from_slice(&block.header.extra_data[..clique::VANITY_LEN]);
    clique::seal(&mut block.header, vanity, key);
    let mut out = Vec::new();
    block.encode(&mut out);
    out.into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_blocks_are_refused_and_their_sender_dropped() {
    let seq = sequencer_in(tempfile::tempdir().unwrap(), 0).await;
    mine(&seq, 0, 0, 1).await;
    let block1 = l2node_node::sync::serve_blocks(chain(&seq), 1, 1).unwrap()[0].clone();
    let bad_root = tampered(&block1, &dev::dev_sequencer(), Some(B256::repeat_byte(7)));
    let bad_seal = tampered(&block1, &PrivateKeySigner::random(), None);

    // A follower that knows no sequencer, and a rogue peer of it for each bad block.
    let fdir = tempfile::tempdir().unwrap();
    let cfg = follower_config(fdir.path(), vec![]);
    let f = TestNode::start_in(fdir, cfg).await;
    for (bad, reason) in [(bad_root, "state root"), (bad_seal, "seal")] {
        let rdir = tempfile::tempdir().unwrap();
        let cfg = follower_config(rdir.path(), vec![addr(&f)]);
        let rogue = TestNode::start_in(rdir, cfg).await;
        let rogue_p2p = rogue.handle.as_ref().unwrap().p2p.as_ref().unwrap();
        let rogue_id = rogue_p2p.status().local_id().unwrap();
        let f_net = f.handle.as_ref().unwrap().net.clone();
        wait_for("the rogue to connect", || f_net.peer_count() == 1).await;
        // Gossip needs the follower's topic subscription first: publish until dropped.
        let mut dropped = false;
        for _ in 0..300 {
            rogue_p2p.publish_block(bad.clone());
            tokio::time::sleep(Duration::from_millis(100)).await;
            if !f_net.peers().iter().any(|p| p.id == rogue_id) {
                dropped = true;
                break;
            }
        }
        assert!(
            dropped,
            "the follower kept the peer that sent a bad {reason}"
        );
        assert_eq!(
            chain(&f).head().header.number,
            0,
            "nothing of the bad block is stored"
        );
        let hash = Block::<TxEnvelope>::decode(&mut &bad[..])
            .unwrap()
            .header
            .hash_slow();
        assert_eq!(chain(&f).storage().block_number(&hash).unwrap(), None);
        // Banned: it cannot come back for a while.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert_eq!(f_net.peer_count(), 0, "a banned peer reconnected");
        drop(rogue);
    }
    // The genuine block still imports.
    assert_eq!(
        l2node_node::sync::import_raw(chain(&f), &block1).unwrap(),
        l2node_node::sync::Imported::New(1)
    );
}

/// A transaction a follower accepted and the sequencer refused (here: the sequencer's operator
/// turned free transactions off): the follower the user talked to answers why, stage `P2P`.
#[tokio::test(flavor = "multi_thread")]
async fn a_follower_answers_why_the_sequencer_refused_its_transaction() {
    let seq = sequencer_in(tempfile::tempdir().unwrap(), 0).await;
    let f = follower(&seq).await;
    let f_net = f.handle.as_ref().unwrap().net.clone();
    wait_for("the follower to peer", || f_net.peer_count() == 1).await;
    // Gossipsub needs the mesh first: a block from the sequencer shows the follower is in it.
    mine(&seq, 0, 0, 1).await;
    let head = seq.block_number().await;
    wait_for("the block on the follower", || {
        chain(&f).head().header.number == head
    })
    .await;
    let gasless: bool = seq
        .request("l2admin_setKillSwitch", rpc_params![true])
        .await;
    assert!(!gasless);
    let raw = transfer(&account(2), 0, account(9).address(), 7);
    let hash: B256 = f.request("eth_sendRawTransaction", rpc_params![raw]).await;
    let answer = crate::exclusions::wait_exclusion(&f, hash).await;
    assert_eq!(answer["txRejectionStage"], "P2P", "{answer}");
    assert_eq!(answer["txHash"], hash.to_string(), "{answer}");
    assert_eq!(
        answer["from"],
        account(2).address().to_string().to_lowercase(),
        "{answer}"
    );
    assert!(
        answer["reasonMessage"]
            .as_str()
            .unwrap()
            .contains("switched off"),
        "{answer}"
    );
    let linea: serde_json::Value = f
        .request("linea_getTransactionExclusionStatusV1", rpc_params![hash])
        .await;
    assert_eq!(linea, answer);
}

/// Mines one transfer per block from dev account `from` (nonces from `nonce`), each to a new
/// address, until the head is `until`; returns the next nonce.
async fn mine_to_new_accounts(node: &TestNode, from: usize, mut nonce: u64, until: u64) -> u64 {
    let key = account(from);
    while chain(node).head().header.number < until {
        let to =
            alloy_primitives::Address::from_word(alloy_primitives::keccak256(nonce.to_be_bytes()));
        let hash: B256 = node
            .request(
                "eth_sendRawTransaction",
                rpc_params![transfer(&key, nonce, to, 1 + nonce)],
            )
            .await;
        node.wait_receipt(hash).await;
        nonce += 1;
    }
    nonce
}

/// Changes the balance of every account without code in a stopped node's database (not its
/// trie): what a damaged or dishonest peer would serve.
fn damage_balances(dir: &Path) {
    use redb::ReadableTable;
    let db = redb::Database::open(dir.join("chain.redb")).unwrap();
    let tx = db.begin_write().unwrap();
    {
        let mut accounts = tx.open_table(l2node_storage::tables::ACCOUNTS).unwrap();
        let entries: Vec<([u8; 20], Vec<u8>)> = accounts
            .iter()
            .unwrap()
            .map(|e| {
                let (k, v) = e.unwrap();
                (*k.value(), v.value().to_vec())
            })
            .collect();
        // The compact layout: flags (1: code hash at the end; 2: written block after the nonce),
        // nonce length, nonce, [block length, block], balance (see the storage codec).
        for (address, mut value) in entries {
            let mut balance_at = 2 + value[1] as usize;
            if value[0] & 2 != 0 {
                balance_at += 1 + value[balance_at] as usize;
            }
            if value[0] & 1 == 0 && value.len() > balance_at {
                *value.last_mut().unwrap() ^= 1;
                accounts.insert(&address, value.as_slice()).unwrap();
            }
        }
    }
    tx.commit().unwrap();
}

/// `--syncmode snap`: a new follower takes the state of block 128 from its two peers instead
/// of executing 128 blocks. One peer's database is damaged (balances changed, not its trie):
/// every chunk it sends is refused and fetched from the other. The follower's head is block
/// 128 with the sequencer's state root, it follows the next blocks with the same roots, and
/// blocks and state before 128 answer the snapshot's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_joins_from_a_snapshot_and_refuses_a_damaged_peers_chunks() {
    let seq = sequencer_in(tempfile::tempdir().unwrap(), 0).await;
    let nonce = mine_to_new_accounts(&seq, 0, 0, 128).await;
    // A follower that syncs block by block, then is damaged and comes back on its address.
    let bad_port = free_port();
    let bad_dir = tempfile::tempdir().unwrap();
    let bad_config = |dir: &Path| {
        let mut cfg = follower_config(dir, vec![addr(&seq)]);
        cfg.p2p.as_mut().unwrap().port = bad_port;
        cfg
    };
    let cfg = bad_config(bad_dir.path());
    let bad = TestNode::start_in(bad_dir, cfg).await;
    wait_for("the follower to sync", || {
        chain(&bad).head().header.number == 128
    })
    .await;
    let bad_dir = bad.stop().await;
    damage_balances(bad_dir.path());
    let cfg = bad_config(bad_dir.path());
    let bad = TestNode::start_in(bad_dir, cfg).await;

    let dir = tempfile::tempdir().unwrap();
    let mut cfg = follower_config(dir.path(), vec![addr(&seq), addr(&bad)]);
    cfg.p2p.as_mut().unwrap().snap_sync = true;
    let joined = TestNode::start_in(dir, cfg).await;
    let status = joined
        .handle
        .as_ref()
        .unwrap()
        .p2p
        .as_ref()
        .unwrap()
        .status()
        .clone();
    wait_for("the snapshot join", || status.snapshot_join().is_some()).await;
    let join = status.snapshot_join().unwrap();
    assert_eq!(join.number, 128);
    assert!(join.chunks > 16, "{join:?}");
    assert!(join.refused >= 1, "the damaged peer's chunks: {join:?}");
    assert_eq!(
        chain(&joined).head().hash,
        chain(&seq)
            .storage()
            .header(128)
            .unwrap()
            .unwrap()
            .hash_slow()
    );

    // The blocks after the snapshot: executed on the snapshot's state, same roots.
    mine_to_new_accounts(&seq, 0, nonce, 133).await;
    wait_for("the joined follower to follow", || {
        chain(&joined).head().header.number == 133
    })
    .await;
    for n in 128..=133 {
        let (a, b) = (
            chain(&seq).storage().header(n).unwrap().unwrap(),
            chain(&joined).storage().header(n).unwrap().unwrap(),
        );
        assert_eq!(a.hash_slow(), b.hash_slow(), "block {n}");
    }
    let rich = account(0).address();
    let balance: U256 = joined
        .request("eth_getBalance", rpc_params![rich, "latest"])
        .await;
    let expected: U256 = seq
        .request("eth_getBalance", rpc_params![rich, "latest"])
        .await;
    assert_eq!(balance, expected);
    let at_snapshot: U256 = joined
        .request("eth_getBalance", rpc_params![rich, "0x80"])
        .await;
    let expected: U256 = seq
        .request("eth_getBalance", rpc_params![rich, "0x80"])
        .await;
    assert_eq!(at_snapshot, expected);
    let caps: serde_json::Value = joined.request("eth_capabilities", rpc_params![]).await;
    assert_eq!(caps["state"]["oldestBlock"], "0x80", "{caps}");
    assert_eq!(caps["blocks"]["oldestBlock"], "0x81", "{caps}");
    for (method, params) in [
        ("eth_getBlockByNumber", serde_json::json!(["0x64", false])),
        ("eth_getBlockByNumber", serde_json::json!(["0x80", false])),
        ("eth_getBalance", serde_json::json!([rich, "0x7f"])),
    ] {
        let e = crate::shapes::error(&joined, method, params).await;
        assert_eq!(e["code"], -32000, "{method}: {e}");
        let message = e["message"].as_str().unwrap();
        assert!(
            message.contains("snapshot") && message.contains("128"),
            "{method}: {message}"
        );
    }
}

/// A node stopped while a snapshot's state was being written (the state is incomplete) starts
/// again only to finish it: as a follower with `--syncmode snap`, else it refuses, naming both
/// ways out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_stopped_while_writing_a_snapshot_starts_only_to_finish_it() {
    let dir = tempfile::tempdir().unwrap();
    l2node_storage::Storage::open(&dir.path().join("chain.redb"))
        .unwrap()
        .snap_begin(128)
        .unwrap();
    let Err(e) = l2node_launch::spawn(follower_config(dir.path(), vec![])).await else {
        panic!("a node with an incomplete state started");
    };
    let message = e.to_string();
    assert!(
        message.contains("block 128") && message.contains("--syncmode snap"),
        "{message}"
    );
    let mut cfg = follower_config(dir.path(), vec![]);
    cfg.p2p.as_mut().unwrap().snap_sync = true;
    let node = TestNode::start_in(dir, cfg).await;
    let syncing: serde_json::Value = node.request("eth_syncing", rpc_params![]).await;
    assert_eq!(syncing, false, "no peer yet: nothing to sync from");
}
