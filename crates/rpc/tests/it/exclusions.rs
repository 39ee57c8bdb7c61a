//! `l2_getTransactionExclusionStatus`: why a transaction never landed, recorded where it was
//! refused (the JSON-RPC, block building; the peer-to-peer case is in `p2p.rs`) and kept across
//! a restart.

use std::time::Duration;

use alloy_primitives::{keccak256, B256};
use jsonrpsee::{core::client::ClientT, rpc_params};

use crate::common::{account, dev_config, eventually, transfer, TestNode};

async fn exclusion(node: &TestNode, hash: B256) -> serde_json::Value {
    node.request("l2_getTransactionExclusionStatus", rpc_params![hash])
        .await
}

/// Polls until the node has a record of `hash`.
pub(crate) async fn wait_exclusion(node: &TestNode, hash: B256) -> serde_json::Value {
    eventually(&format!("an exclusion record of {hash}"), || async move {
        let e = exclusion(node, hash).await;
        (!e.is_null()).then_some(e)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refusal_at_the_rpc_is_recorded_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dev_config(dir.path(), Duration::ZERO);
    let node = TestNode::start_in(dir, cfg.clone()).await;
    // Dev account 9 holds no Karma: a free transfer is refused.
    let raw = transfer(&account(9), 0, account(1).address(), 1);
    let hash = keccak256(&raw);
    let refused = node
        .http
        .request::<B256, _>("eth_sendRawTransaction", rpc_params![raw])
        .await
        .unwrap_err()
        .to_string();
    let e = exclusion(&node, hash).await;
    assert_eq!(e["txRejectionStage"], "RPC", "{e}");
    assert_eq!(e["nonce"], "0x0", "{e}");
    assert_eq!(
        e["from"],
        account(9).address().to_string().to_lowercase(),
        "{e}"
    );
    let reason = e["reasonMessage"].as_str().unwrap();
    assert!(
        reason.starts_with("This sender holds no Karma") && refused.contains("holds no Karma"),
        "{reason} / {refused}"
    );
    assert!(e["timestamp"].as_str().unwrap().ends_with('Z'), "{e}");
    // Unknown and accepted transactions have no record.
    assert!(exclusion(&node, B256::repeat_byte(1)).await.is_null());
    let ok: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(0), 0, account(1).address(), 1)],
        )
        .await;
    node.wait_receipt(ok).await;
    assert!(exclusion(&node, ok).await.is_null());
    // Written to storage by the next flush: still there after a restart.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let dir = node.stop().await;
    let node = TestNode::start_in(dir, cfg).await;
    assert_eq!(exclusion(&node, hash).await, e);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transaction_dropped_while_building_a_block_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    // No block until evm_mine asks for one.
    let cfg = dev_config(dir.path(), Duration::from_secs(3_600));
    let node = TestNode::start_in(dir, cfg).await;
    // Admitted as a free transaction, then the operator turns free transactions off before the
    // next block: block building drops it and records why.
    let raw = transfer(&account(0), 0, account(1).address(), 1);
    let hash: B256 = node
        .request("eth_sendRawTransaction", rpc_params![raw])
        .await;
    let gasless: bool = node
        .request("l2admin_setKillSwitch", rpc_params![true])
        .await;
    assert!(!gasless);
    let _: String = node.request("evm_mine", rpc_params![]).await;
    let e = wait_exclusion(&node, hash).await;
    assert_eq!(e["txRejectionStage"], "SEQUENCER", "{e}");
    assert!(
        e["reasonMessage"]
            .as_str()
            .unwrap()
            .contains("switched off"),
        "{e}"
    );
    let pending: serde_json::Value = node
        .request("eth_getTransactionByHash", rpc_params![hash])
        .await;
    assert!(pending.is_null(), "still pooled: {pending}");
}
