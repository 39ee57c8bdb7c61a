//! The network as separate processes: a sequencer and two followers agree block by block; a
//! follower killed with SIGKILL resumes; a follower started late catches up from genesis;
//! `l2node devnet` comes up with both port pairs and `l2node health` passes against it.

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use alloy_primitives::{Address, B256, U256};
use jsonrpsee::{core::client::ClientT, http_client::HttpClient, rpc_params};
use l2node_node::dev::dev_accounts;
use l2node_node::test_utils;

use crate::common::{self, client, Node};

async fn head(url: &str) -> u64 {
    let n: U256 = client(url)
        .request("eth_blockNumber", rpc_params![])
        .await
        .unwrap();
    n.to()
}

/// Sends `n` transfers of dev account `from` (nonces from `nonce`) to `url`, one block each.
async fn transfers(url: &str, from: usize, nonce: u64, n: u64) {
    let c = client(url);
    let key = &dev_accounts()[from];
    let mut last = B256::ZERO;
    for i in 0..n {
        let tx = alloy_consensus::TxEip1559 {
            chain_id: l2node_node::constants::DEV_CHAIN_ID,
            nonce: nonce + i,
            gas_limit: 21_000,
            max_fee_per_gas: 1_000_000_000,
            to: alloy_primitives::TxKind::Call(Address::repeat_byte(0x42)),
            value: U256::from(1),
            ..Default::default()
        };
        let raw = alloy_eips::eip2718::Encodable2718::encoded_2718(&test_utils::sign(key, tx));
        last = c
            .request(
                "eth_sendRawTransaction",
                rpc_params![alloy_primitives::Bytes::from(raw)],
            )
            .await
            .unwrap();
        // One transaction per block: wait for each.
        wait_receipt(&c, last).await;
    }
    let _ = last;
}

async fn wait_receipt(c: &HttpClient, hash: B256) {
    let start = Instant::now();
    while start.elapsed() < common::START_DEADLINE {
        let r: serde_json::Value = c
            .request("eth_getTransactionReceipt", rpc_params![hash])
            .await
            .unwrap();
        if !r.is_null() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no receipt for {hash}");
}

/// Waits until every node in `urls` reports `target`.
async fn wait_head(urls: &[&str], target: u64) {
    let start = Instant::now();
    loop {
        let mut all = true;
        for u in urls {
            all &= head(u).await == target;
        }
        if all {
            return;
        }
        assert!(
            start.elapsed() < common::START_DEADLINE,
            "nodes did not reach block {target}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every block hash and state root of `b` equals `a`'s, up to `a`'s head.
async fn assert_same_blocks(a: &str, b: &str) {
    let (ca, cb) = (client(a), client(b));
    let n = head(a).await;
    assert_eq!(n, head(b).await);
    for i in 0..=n {
        let tag = format!("{i:#x}");
        let x: serde_json::Value = ca
            .request("eth_getBlockByNumber", rpc_params![&tag, false])
            .await
            .unwrap();
        let y: serde_json::Value = cb
            .request("eth_getBlockByNumber", rpc_params![&tag, false])
            .await
            .unwrap();
        assert_eq!(x["hash"], y["hash"], "block {i}");
        assert_eq!(x["stateRoot"], y["stateRoot"], "state root of block {i}");
    }
}

fn follower(dir: &std::path::Path, seq: &Node) -> Node {
    common::start_with(
        dir,
        &["--follower", "--bootnodes", seq.p2p.as_deref().unwrap()],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sequencer_and_two_followers_agree_and_followers_resume() {
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let seq = common::start(dirs[0].path());
    let f1 = follower(dirs[1].path(), &seq);
    transfers(&seq.url, 0, 0, 5).await;
    wait_head(&[&seq.url, &f1.url], 5).await;

    // SIGKILL between blocks, more blocks meanwhile, then a restart on the same storage.
    let mut f1 = f1;
    f1.child.kill().unwrap();
    f1.child.wait().unwrap();
    transfers(&seq.url, 0, 5, 5).await;
    let f1 = follower(dirs[1].path(), &seq);
    // A follower started late syncs everything from genesis.
    let f2 = follower(dirs[2].path(), &seq);
    wait_head(&[&seq.url, &f1.url, &f2.url], 10).await;
    // A transaction sent to a follower is sealed by the sequencer and reaches the other one.
    transfers(&f2.url, 1, 0, 2).await;
    wait_head(&[&seq.url, &f1.url, &f2.url], 12).await;
    assert_same_blocks(&seq.url, &f1.url).await;
    assert_same_blocks(&seq.url, &f2.url).await;
}

fn health(urls: &[&str], reference: Option<&str>) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_l2node"));
    cmd.args(["health", "--rpc", &urls.join(",")]);
    if let Some(r) = reference {
        cmd.args(["--reference", r]);
    }
    let out = cmd.stderr(Stdio::inherit()).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devnet_serves_both_port_pairs_and_is_healthy() {
    let dir = tempfile::tempdir().unwrap();
    let devnet = common::devnet(dir.path(), &[]).await;
    let [seq, fol] = &devnet.http;
    transfers(seq, 0, 0, 1).await;
    wait_head(&[seq, fol], 1).await;
    let (code, out) = health(&[seq, fol], Some(seq));
    assert_eq!(code, 0, "{out}");
    // Without --reference the follower is checked against the node that seals: its sequencer.
    let (code, out) = health(&[fol, seq], None);
    assert_eq!(code, 0, "{out}");
    let rows: Vec<&str> = out.lines().collect();
    let row = |url: &str| {
        *rows
            .iter()
            .find(|l| l.starts_with(&format!("{url} ")))
            .unwrap()
    };
    assert!(row(fol).contains(&format!(" at {seq}")), "{out}");
    assert!(row(seq).contains("(the sequencer)"), "{out}");
    // The WebSocket ports answer too.
    for ws in &devnet.ws {
        let addr = ws.strip_prefix("ws://").unwrap();
        std::net::TcpStream::connect(addr).expect("WebSocket port open");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_fails_health_without_its_sequencer_and_recovers() {
    let (sdir, fdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // On ports the system chose; it comes back on the same ones.
    let seq = common::start(sdir.path());
    let http_port = seq.url.rsplit(':').next().unwrap().to_string();
    let p2p_port = seq
        .p2p
        .as_deref()
        .unwrap()
        .split('/')
        .nth(4)
        .unwrap()
        .to_string();
    let seq_args = ["--p2p-port", &p2p_port, "--rpc-http-port", &http_port];
    let fol = follower(fdir.path(), &seq);
    transfers(&seq.url, 0, 0, 1).await;
    wait_head(&[&seq.url, &fol.url], 1).await;
    wait_healthy(&fol.url, &seq.url, 0).await;

    let seq_url = seq.url.clone();
    drop(seq);
    let started = Instant::now();
    let (code, out) = health(&[&fol.url], Some(&seq_url));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("reference unreachable"), "{out}");
    // Refused at once, not after the check's 10 s timeout.
    assert!(started.elapsed() < Duration::from_secs(9));

    // Back on the same address: the follower finds it again.
    let seq = common::start_with(sdir.path(), &seq_args);
    wait_healthy(&fol.url, &seq.url, 0).await;
}

async fn wait_healthy(url: &str, reference: &str, want: i32) {
    let start = Instant::now();
    loop {
        let (code, out) = health(&[url], Some(reference));
        if code == want {
            return;
        }
        assert!(
            start.elapsed() < common::START_DEADLINE,
            "health of {url} stayed {code}: {out}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
