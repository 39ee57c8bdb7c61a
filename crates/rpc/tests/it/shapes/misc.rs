//! web3_, net_, the chain-level eth_ methods, fees and txpool_.

use alloy_primitives::{keccak256, Address, TxKind, U256};
use serde_json::json;

use super::{expect_error, expect_result, q, rpc, Fixture};
use crate::common::{account, signed_tx};

#[tokio::test]
async fn shapes_web3_net_and_chain() {
    let f = Fixture::new().await;
    let n = &f.node;
    let version = expect_result(n, "web3_clientVersion", json!([]), json!("<string>")).await;
    assert!(
        version.as_str().unwrap().starts_with("l2node/v"),
        "{version}"
    );
    // web3_sha3("hello world")
    expect_result(
        n,
        "web3_sha3",
        json!(["0x68656c6c6f20776f726c64"]),
        json!("0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad"),
    )
    .await;
    expect_result(n, "web3_sha3", json!(["0x"]), json!(keccak256([]))).await;
    // net_version is the chain id as a decimal string.
    expect_result(
        n,
        "net_version",
        json!([]),
        json!(l2node_node::constants::DEV_CHAIN_ID.to_string()),
    )
    .await;
    // The test node runs without peer-to-peer: not listening, as Besu answers with
    // --p2p-enabled=false (tests/it/p2p.rs checks `true` on a node with peers).
    expect_result(n, "net_listening", json!([]), json!(false)).await;
    expect_result(n, "net_peerCount", json!([]), json!("0x0")).await;
    expect_result(
        n,
        "eth_chainId",
        json!([]),
        json!(q(l2node_node::constants::DEV_CHAIN_ID)),
    )
    .await;
    expect_result(n, "eth_syncing", json!([]), json!(false)).await;
    expect_result(
        n,
        "eth_blockNumber",
        json!([]),
        json!(q(f.revert_deploy.block_number)),
    )
    .await;
    expect_result(n, "eth_accounts", json!([]), json!([])).await;
}

#[tokio::test]
async fn shapes_invalid_params_name_the_parameter() {
    let f = Fixture::new().await;
    let v = rpc(f.addr(), "eth_getBalance", json!(["0x1234", "latest"])).await;
    let e = &v["error"];
    assert_eq!(e["code"], -32602, "{v}");
    let msg = e["message"].as_str().unwrap().to_string() + &e["data"].to_string();
    assert!(
        msg.contains("address") || msg.contains("argument 0") || msg.contains("param"),
        "{v}"
    );
    let v = rpc(f.addr(), "eth_getBlockByNumber", json!(["0x1"])).await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
}

#[tokio::test]
async fn shapes_fees() {
    let f = Fixture::new().await;
    let n = &f.node;
    // Zero-base-fee dev chain, every tip so far 0 (the legacy tx pays 1 gwei over a 0 base fee).
    expect_result(n, "eth_gasPrice", json!([]), json!("<quantity>")).await;
    expect_result(
        n,
        "eth_maxPriorityFeePerGas",
        json!([]),
        json!("<quantity>"),
    )
    .await;
    let head = f.revert_deploy.block_number;
    expect_result(
        n,
        "eth_feeHistory",
        json!(["0x2", "latest", [25.0, 75.0]]),
        json!({
            "oldestBlock": q(head - 1),
            "baseFeePerGas": ["0x0", "0x0", "0x0"],
            "gasUsedRatio": ["<number>", "<number>"],
            "baseFeePerBlobGas": ["<quantity>", "<quantity>", "<quantity>"],
            "blobGasUsedRatio": ["<number>", "<number>"],
            // The legacy transaction of block head-1 tips its whole 1 gwei gas price.
            "reward": [["0x3b9aca00", "0x3b9aca00"], ["0x0", "0x0"]],
        }),
    )
    .await;
    // Without percentiles geth leaves `reward` out.
    expect_result(
        n,
        "eth_feeHistory",
        json!([q(3), q(head), []]),
        json!({
            "oldestBlock": q(head - 2),
            "baseFeePerGas": ["0x0", "0x0", "0x0", "0x0"],
            "gasUsedRatio": ["<number>", "<number>", "<number>"],
            "baseFeePerBlobGas": ["<quantity>", "<quantity>", "<quantity>", "<quantity>"],
            "blobGasUsedRatio": ["<number>", "<number>", "<number>"],
        }),
    )
    .await;
    expect_result(
        n,
        "eth_feeHistory",
        json!(["0x1", "latest"]),
        json!({
            "oldestBlock": q(head),
            "baseFeePerGas": ["0x0", "0x0"],
            "gasUsedRatio": ["<number>"],
            "baseFeePerBlobGas": ["<quantity>", "<quantity>"],
            "blobGasUsedRatio": ["<number>"],
        }),
    )
    .await;
    // `pending`: the block the sequencer would build next is the newest one.
    expect_result(
        n,
        "eth_feeHistory",
        json!(["0x2", "pending", [50.0]]),
        json!({
            "oldestBlock": q(head),
            "baseFeePerGas": ["0x0", "0x0", "0x0"],
            "gasUsedRatio": ["<number>", "<number>"],
            "baseFeePerBlobGas": ["<quantity>", "<quantity>", "<quantity>"],
            "blobGasUsedRatio": ["<number>", "<number>"],
            "reward": [["0x0"], ["0x0"]],
        }),
    )
    .await;
    expect_error(
        n,
        "eth_feeHistory",
        json!(["0x1", "latest", [75.0, 25.0]]),
        json!({ "code": -32602, "message": "<string>" }),
    )
    .await;
}

#[tokio::test]
async fn shapes_txpool() {
    let f = Fixture::new().await;
    let n = &f.node;
    expect_result(
        n,
        "txpool_status",
        json!([]),
        json!({ "pending": "0x0", "queued": "0x0" }),
    )
    .await;
    expect_result(
        n,
        "txpool_content",
        json!([]),
        json!({ "pending": {}, "queued": {} }),
    )
    .await;
    // A nonce gap keeps the transaction queued.
    let key = account(3);
    let to = Address::repeat_byte(0x77);
    let raw = signed_tx(
        &key,
        5,
        TxKind::Call(to),
        U256::from(9),
        Default::default(),
        21_000,
    );
    let hash = keccak256(&raw);
    expect_result(n, "eth_sendRawTransaction", json!([raw]), json!(hash)).await;
    expect_result(
        n,
        "txpool_status",
        json!([]),
        json!({ "pending": "0x0", "queued": "0x1" }),
    )
    .await;
    let pending_tx = super::txs::pending_1559(hash, key.address(), to, 5, 9);
    // geth keys senders by their EIP-55 address and nonces by decimal strings.
    expect_result(
        n,
        "txpool_content",
        json!([]),
        json!({ "pending": {}, "queued": { key.address().to_checksum(None): { "5": pending_tx.clone() } } }),
    )
    .await;
    expect_result(n, "eth_getTransactionByHash", json!([hash]), pending_tx).await;
    // `pending` nonce counts pool transactions that are executable, not the queued one.
    expect_result(
        n,
        "eth_getTransactionCount",
        json!([key.address(), "pending"]),
        json!("0x0"),
    )
    .await;
}
