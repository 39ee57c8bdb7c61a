//! Transactions and receipts: by hash, by block and index, block receipts.

use alloy_primitives::{hex, Address, B256};
use serde_json::{json, Value};

use super::{
    a, expect_result, legacy_template, q, store_init, tx1559_template, Fixture, Mined, DEPLOY_GAS,
    LEGACY_VALUE, STORED, TOPIC,
};
use crate::common::account;

/// geth's RPCTransaction of a pooled EIP-1559 transfer (gas 21000, max fee 1 gwei, tip 0):
/// null block fields, `gasPrice` = the fee cap.
pub(super) fn pending_1559(
    hash: B256,
    from: Address,
    to: Address,
    nonce: u64,
    value: u64,
) -> Value {
    json!({
        "blockHash": null, "blockNumber": null, "blockTimestamp": null, "transactionIndex": null,
        "from": a(from), "gas": "0x5208", "gasPrice": "0x3b9aca00", "maxFeePerGas": "0x3b9aca00",
        "maxPriorityFeePerGas": "0x0", "hash": hash, "input": "0x", "nonce": q(nonce), "to": a(to),
        "value": q(value), "type": "0x2", "accessList": [],
        "chainId": q(l2node_node::constants::DEV_CHAIN_ID),
        "v": "<quantity>", "r": "<quantity>", "s": "<quantity>", "yParity": "<quantity>",
    })
}

fn deploy_tx(f: &Fixture) -> Value {
    let init = format!("0x{}", hex::encode(store_init()));
    tx1559_template(
        &f.deploy,
        account(0).address(),
        None,
        0,
        DEPLOY_GAS,
        0,
        &init,
    )
}

fn legacy_tx(f: &Fixture) -> Value {
    legacy_template(
        &f.legacy,
        account(1).address(),
        account(2).address(),
        0,
        LEGACY_VALUE,
    )
}

/// The log of the storage contract's constructor.
pub(super) fn store_log(f: &Fixture, log_index: u64) -> Value {
    json!({
        "address": a(f.store), "topics": [TOPIC], "data": format!("0x{:064x}", STORED),
        "blockNumber": q(f.deploy.block_number), "blockHash": f.deploy.block_hash,
        "blockTimestamp": "<quantity>", "transactionHash": f.deploy.hash,
        "transactionIndex": q(f.deploy.index), "logIndex": q(log_index), "removed": false,
    })
}

/// `(type, effectiveGasPrice, gasUsed)` of a receipt.
type Fees<'a> = (&'a str, &'a str, &'a str);

fn receipt(
    m: &Mined,
    from: Address,
    to: Option<Address>,
    contract: Option<Address>,
    (ty, price, gas): Fees<'_>,
    logs: Value,
) -> Value {
    json!({
        "blockHash": m.block_hash, "blockNumber": q(m.block_number), "contractAddress": contract.map(a),
        "cumulativeGasUsed": gas, "effectiveGasPrice": price, "from": a(from), "gasUsed": gas,
        "logs": logs, "logsBloom": "<bloom>", "status": "0x1", "to": to.map(a),
        "transactionHash": m.hash, "transactionIndex": q(m.index), "type": ty,
    })
}

fn deploy_receipt(f: &Fixture) -> Value {
    receipt(
        &f.deploy,
        account(0).address(),
        None,
        Some(f.store),
        ("0x2", "0x0", "<quantity>"),
        json!([store_log(f, 0)]),
    )
}

fn legacy_receipt(f: &Fixture) -> Value {
    receipt(
        &f.legacy,
        account(1).address(),
        Some(account(2).address()),
        None,
        ("0x0", "0x3b9aca00", "0x5208"),
        json!([]),
    )
}

#[tokio::test]
async fn shapes_transaction_lookups() {
    let f = Fixture::new().await;
    let n = &f.node;
    expect_result(
        n,
        "eth_getTransactionByHash",
        json!([f.deploy.hash]),
        deploy_tx(&f),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionByHash",
        json!([f.legacy.hash]),
        legacy_tx(&f),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionByHash",
        json!([B256::repeat_byte(9)]),
        json!(null),
    )
    .await;

    let (d, l) = (f.deploy, f.legacy);
    expect_result(
        n,
        "eth_getTransactionByBlockHashAndIndex",
        json!([d.block_hash, q(d.index)]),
        deploy_tx(&f),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionByBlockHashAndIndex",
        json!([l.block_hash, q(l.index)]),
        legacy_tx(&f),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionByBlockHashAndIndex",
        json!([l.block_hash, "0x5"]),
        json!(null),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionByBlockHashAndIndex",
        json!([B256::repeat_byte(9), "0x0"]),
        json!(null),
    )
    .await;

    expect_result(
        n,
        "eth_getTransactionByBlockNumberAndIndex",
        json!([q(d.block_number), q(d.index)]),
        deploy_tx(&f),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionByBlockNumberAndIndex",
        json!([q(l.block_number), "0x0"]),
        legacy_tx(&f),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionByBlockNumberAndIndex",
        json!([q(l.block_number), "0x1"]),
        json!(null),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionByBlockNumberAndIndex",
        json!(["0x999", "0x0"]),
        json!(null),
    )
    .await;
    let r = f.revert_deploy;
    let latest = expect_result(
        n,
        "eth_getTransactionByBlockNumberAndIndex",
        json!(["latest", "0x0"]),
        json!("<any>"),
    )
    .await;
    assert_eq!(latest["hash"], json!(r.hash));
}

#[tokio::test]
async fn shapes_receipts() {
    let f = Fixture::new().await;
    let n = &f.node;
    let got = expect_result(
        n,
        "eth_getTransactionReceipt",
        json!([f.deploy.hash]),
        deploy_receipt(&f),
    )
    .await;
    assert_eq!(got["gasUsed"], got["cumulativeGasUsed"], "one tx per block");
    expect_result(
        n,
        "eth_getTransactionReceipt",
        json!([f.legacy.hash]),
        legacy_receipt(&f),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionReceipt",
        json!([B256::repeat_byte(9)]),
        json!(null),
    )
    .await;

    let d = f.deploy;
    expect_result(
        n,
        "eth_getBlockReceipts",
        json!([q(d.block_number)]),
        json!([deploy_receipt(&f)]),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockReceipts",
        json!([d.block_hash]),
        json!([deploy_receipt(&f)]),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockReceipts",
        json!([{ "blockHash": f.legacy.block_hash, "requireCanonical": true }]),
        json!([legacy_receipt(&f)]),
    )
    .await;
    expect_result(n, "eth_getBlockReceipts", json!(["earliest"]), json!([])).await;
    let latest = expect_result(
        n,
        "eth_getBlockReceipts",
        json!(["latest"]),
        json!(["<any>"]),
    )
    .await;
    assert!(
        latest[0]["contractAddress"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case(&a(f.reverter)),
        "{latest}"
    );
    expect_result(n, "eth_getBlockReceipts", json!(["0x999"]), json!(null)).await;
    expect_result(
        n,
        "eth_getBlockReceipts",
        json!([B256::repeat_byte(9)]),
        json!(null),
    )
    .await;
}
