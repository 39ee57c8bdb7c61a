//! Work a client can ask for is bounded: proof keys, installed filters, and a log filter with a
//! long backlog pages instead of failing forever.

use alloy_primitives::{TxKind, B256, U256};
use jsonrpsee::{core::client::ClientT, rpc_params};
use serde_json::{json, Value};

use crate::common::{account, signed_tx, TestNode};
use crate::shapes::{send, store_init, DEPLOY_GAS};

/// The JSON-RPC error code of a failed call.
async fn error_code(
    node: &TestNode,
    method: &str,
    params: jsonrpsee::core::params::ArrayParams,
) -> i32 {
    match node.http.request::<Value, _>(method, params).await {
        Err(jsonrpsee::core::ClientError::Call(e)) => e.code(),
        other => panic!("{method}: expected an error, got {other:?}"),
    }
}

#[tokio::test]
async fn get_proof_caps_the_number_of_keys() {
    let node = TestNode::start().await;
    let keys = vec![B256::ZERO; 1025];
    let code = error_code(
        &node,
        "eth_getProof",
        rpc_params![account(0).address(), keys, "latest"],
    )
    .await;
    assert_eq!(code, -32005);
    let ok: Value = node
        .request(
            "eth_getProof",
            rpc_params![account(0).address(), vec![B256::ZERO; 4], "latest"],
        )
        .await;
    assert_eq!(ok["storageProof"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn installed_filters_are_capped_and_uninstalling_frees_room() {
    let node = TestNode::start_with(|c| c.rpc.max_filters = 3).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let id: String = node.request("eth_newBlockFilter", rpc_params![]).await;
        ids.push(id);
    }
    assert_eq!(
        error_code(&node, "eth_newBlockFilter", rpc_params![]).await,
        -32005
    );
    let removed: bool = node
        .request("eth_uninstallFilter", rpc_params![&ids[0]])
        .await;
    assert!(removed);
    let _: String = node
        .request("eth_newPendingTransactionFilter", rpc_params![])
        .await;
}

#[tokio::test]
async fn log_filter_with_more_than_the_cap_pages_through_its_backlog() {
    let node = TestNode::start_with(|c| c.rpc.max_logs_per_response = 2).await;
    let id: String = node
        .request(
            "eth_newFilter",
            rpc_params![json!({ "fromBlock": "latest" })],
        )
        .await;
    // Five deployments in five blocks, one log each.
    for nonce in 0..5 {
        let tx = signed_tx(
            &account(0),
            nonce,
            TxKind::Create,
            U256::ZERO,
            store_init().into(),
            DEPLOY_GAS,
        );
        send(&node, tx).await;
    }
    let mut pages = Vec::new();
    loop {
        let logs: Vec<Value> = node.request("eth_getFilterChanges", rpc_params![&id]).await;
        if logs.is_empty() {
            break;
        }
        assert!(logs.len() <= 2, "{logs:?}");
        pages.push(logs);
    }
    let blocks: Vec<_> = pages
        .iter()
        .flatten()
        .map(|l| l["blockNumber"].clone())
        .collect();
    assert_eq!(blocks.len(), 5, "{pages:?}");
    let mut sorted = blocks.clone();
    sorted.dedup();
    assert_eq!(sorted, blocks, "each log once, oldest first");
}
