//! Chain behaviour through the real RPC: mining, receipts, restart.

use alloy_primitives::{Address, B256, U256};
use jsonrpsee::rpc_params;

use crate::common::{account, transfer, TestNode};

#[tokio::test]
async fn transfer_is_mined_with_a_receipt() {
    let node = TestNode::start().await;
    let to = Address::repeat_byte(0x42);
    let hash: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(0), 0, to, 1234)],
        )
        .await;
    let receipt = node.wait_receipt(hash).await;
    assert_eq!(receipt["status"], "0x1");
    assert_eq!(receipt["gasUsed"], "0x5208");
    let balance: U256 = node
        .request("eth_getBalance", rpc_params![to, "latest"])
        .await;
    assert_eq!(balance, U256::from(1234));
    let old: U256 = node.request("eth_getBalance", rpc_params![to, "0x0"]).await;
    assert_eq!(old, U256::ZERO, "state at genesis is still served");
    node.stop().await;
}

#[tokio::test]
async fn chain_resumes_after_restart() {
    let node = TestNode::start().await;
    let to = Address::repeat_byte(0x43);
    let mut last = B256::ZERO;
    for nonce in 0..5 {
        last = node
            .request(
                "eth_sendRawTransaction",
                rpc_params![transfer(&account(1), nonce, to, 1)],
            )
            .await;
    }
    node.wait_receipt(last).await;
    let head = node.block_number().await;
    let block: serde_json::Value = node
        .request("eth_getBlockByNumber", rpc_params!["latest", false])
        .await;
    let dir = node.stop().await;

    let cfg = crate::common::dev_config(dir.path(), std::time::Duration::ZERO);
    let node = TestNode::start_in(dir, cfg).await;
    assert_eq!(node.block_number().await, head);
    let again: serde_json::Value = node
        .request("eth_getBlockByNumber", rpc_params!["latest", false])
        .await;
    assert_eq!(block["hash"], again["hash"]);
    let balance: U256 = node
        .request("eth_getBalance", rpc_params![to, "latest"])
        .await;
    assert_eq!(balance, U256::from(5));
    node.stop().await;
}
