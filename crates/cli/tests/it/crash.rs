//! `kill -9` in the middle of a transaction flood loses nothing the node acknowledged.

use std::time::{Duration, Instant};

use alloy_consensus::TxEip1559;
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use alloy_signer_local::PrivateKeySigner;
use jsonrpsee::{
    core::client::ClientT,
    http_client::{HttpClient, HttpClientBuilder},
    rpc_params,
};
use l2node_node::constants::DEV_CHAIN_ID;
use l2node_node::dev::dev_accounts;

use crate::common;

/// Senders used in parallel (dev accounts 0..SENDERS).
const SENDERS: usize = 4;
/// Transfers per sender; the node is killed after about half of them.
const PER_SENDER: u64 = 250;

struct Node {
    node: common::Node,
    http: HttpClient,
}

fn start(dir: &std::path::Path) -> Node {
    let node = common::start(dir);
    let http = HttpClientBuilder::default()
        .request_timeout(Duration::from_secs(30))
        .build(&node.url)
        .unwrap();
    Node { node, http }
}

fn transfer(key: &PrivateKeySigner, nonce: u64) -> Bytes {
    let tx = TxEip1559 {
        chain_id: DEV_CHAIN_ID,
        nonce,
        gas_limit: 21_000,
        max_fee_per_gas: 1_000_000_000,
        max_priority_fee_per_gas: 0,
        to: TxKind::Call(Address::repeat_byte(0x77)),
        value: U256::from(1),
        input: Bytes::new(),
        access_list: Default::default(),
    };
    l2node_node::test_utils::sign(key, tx).encoded_2718().into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_flood_loses_no_acknowledged_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = start(dir.path());
    let keys: Vec<_> = dev_accounts().into_iter().take(SENDERS).collect();
    let raw: Vec<Vec<Bytes>> = keys
        .iter()
        .map(|k| (0..PER_SENDER).map(|n| transfer(k, n)).collect())
        .collect();

    let epoch_of = |s: &serde_json::Value| s["epoch"].as_str().unwrap().to_owned();
    let start_status: serde_json::Value = node
        .http
        .request("l2_getKarmaStatus", rpc_params![keys[0].address()])
        .await
        .unwrap();
    let mut acknowledged: Vec<B256> = Vec::new();
    let mut per_sender = [0u64; SENDERS];
    let kill_after = SENDERS as u64 * PER_SENDER / 2;
    'flood: for n in 0..PER_SENDER as usize {
        for (i, txs) in raw.iter().enumerate() {
            per_sender[i] += 1;
            match node
                .http
                .request::<B256, _>("eth_sendRawTransaction", rpc_params![txs[n].clone()])
                .await
            {
                Ok(hash) => acknowledged.push(hash),
                Err(e) => panic!("transaction rejected before the crash: {e}"),
            }
            if acknowledged.len() as u64 == kill_after {
                break 'flood;
            }
        }
    }
    node.node.child.kill().unwrap(); // SIGKILL
    node.node.child.wait().unwrap();

    let node = start(dir.path());
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut missing = acknowledged.clone();
    while !missing.is_empty() && Instant::now() < deadline {
        let mut still = Vec::new();
        for h in missing {
            let r: serde_json::Value = node
                .http
                .request("eth_getTransactionReceipt", rpc_params![h])
                .await
                .unwrap();
            if r.is_null() {
                still.push(h);
            } else {
                assert_eq!(r["status"], "0x1", "{h} failed");
            }
        }
        missing = still;
        if !missing.is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // The Karma ledger was committed with each block: every mined free transaction is
    // counted once, across the crash (unless the UTC day, the epoch, ended meanwhile).
    let mut ledger = Vec::new();
    for key in &keys {
        let s: serde_json::Value = node
            .http
            .request("l2_getKarmaStatus", rpc_params![key.address()])
            .await
            .unwrap();
        ledger.push(s);
    }
    drop(node);
    assert!(
        missing.is_empty(),
        "{} acknowledged transactions were lost, e.g. {}",
        missing.len(),
        missing[0]
    );
    if ledger
        .iter()
        .all(|s| epoch_of(s) == epoch_of(&start_status))
    {
        for (i, s) in ledger.iter().enumerate() {
            assert_eq!(
                s["used"],
                format!("{:#x}", per_sender[i]),
                "sender {i}: {s}"
            );
        }
    }
}
