//! `l2node db stats` on a real node's database: refused while the node runs, then bytes per
//! table and per transaction once it has stopped.

use std::process::Command;

use jsonrpsee::core::client::ClientT;
use jsonrpsee::rpc_params;
use serde_json::Value;

use crate::common::{client, start};

fn db_stats(dir: &std::path::Path, json: bool) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_l2node"));
    cmd.args(["db", "stats", "--data-path"]).arg(dir);
    if json {
        cmd.arg("--json");
    }
    cmd.output().expect("run l2node db stats")
}

#[tokio::test(flavor = "multi_thread")]
async fn db_stats_counts_bytes_per_transaction_of_a_stopped_node() {
    let dir = tempfile::tempdir().unwrap();
    let node = start(dir.path());
    let rpc = client(&node.url);
    let tx = serde_json::json!({
        "from": "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        "to": "0x0000000000000000000000000000000000000001",
        "value": "0x1",
    });
    let hash: String = rpc
        .request("eth_sendTransaction", rpc_params![tx])
        .await
        .unwrap();
    let started = std::time::Instant::now();
    loop {
        let receipt: Option<Value> = rpc
            .request("eth_getTransactionReceipt", rpc_params![&hash])
            .await
            .unwrap();
        if receipt.is_some() {
            break;
        }
        assert!(
            started.elapsed() < crate::common::START_DEADLINE,
            "{hash} not mined"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let running = db_stats(dir.path(), false);
    assert!(!running.status.success());
    let err = String::from_utf8_lossy(&running.stderr);
    assert!(
        err.contains("open in a running node: stop the node first"),
        "{err}"
    );

    drop(node);
    let out = db_stats(dir.path(), true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["transactions"], 1);
    assert_eq!(stats["blocks"], 2, "genesis and the block of the transfer");
    let receipts = stats["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == "receipts")
        .unwrap();
    assert_eq!(receipts["entries"], 2);
    assert!(stats["bytesPerTransaction"].as_f64().unwrap() > 0.0);

    let text = db_stats(dir.path(), false);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("2 blocks, 1 transactions"), "{text}");
    assert!(text.contains("change sets"), "{text}");

    let missing = db_stats(&dir.path().join("nothing"), false);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("no database at") && err.contains("--data-path"),
        "{err}"
    );
}
