//! State reads (every block-id form), eth_call with overrides, reverts, eth_estimateGas,
//! eth_createAccessList and eth_getProof.

use alloy_primitives::{hex, keccak256, Address, B256, U256};
use serde_json::json;

use super::{
    a, expect_error, expect_result, q, revert_data, Fixture, LEGACY_VALUE, STORED, STORE_RUNTIME,
};
use crate::common::account;

fn word(n: u64) -> String {
    format!("0x{n:064x}")
}

#[tokio::test]
async fn shapes_state_reads() {
    let f = Fixture::new().await;
    let n = &f.node;
    let a0 = account(0).address();
    let a2 = account(2).address();
    let initial = U256::from(l2node_node::constants::DEV_ACCOUNT_BALANCE_ETH)
        * U256::from(10u64).pow(U256::from(18));
    let after = format!("{:#x}", initial + U256::from(LEGACY_VALUE));
    let before = format!("{initial:#x}");
    let l = f.legacy;
    expect_result(n, "eth_getBalance", json!([a2, "latest"]), json!(after)).await;
    expect_result(n, "eth_getBalance", json!([a2]), json!(after)).await;
    expect_result(n, "eth_getBalance", json!([a2, "earliest"]), json!(before)).await;
    expect_result(
        n,
        "eth_getBalance",
        json!([a2, q(l.block_number - 1)]),
        json!(before),
    )
    .await;
    expect_result(
        n,
        "eth_getBalance",
        json!([a2, { "blockNumber": q(l.block_number) }]),
        json!(after),
    )
    .await;
    expect_result(
        n,
        "eth_getBalance",
        json!([a2, { "blockHash": l.block_hash, "requireCanonical": true }]),
        json!(after),
    )
    .await;
    expect_result(
        n,
        "eth_getBalance",
        json!([a2, { "blockHash": l.block_hash }]),
        json!(after),
    )
    .await;
    expect_result(
        n,
        "eth_getBalance",
        json!([Address::repeat_byte(0x99), "latest"]),
        json!("0x0"),
    )
    .await;
    // geth: a future block is "header not found", an unknown hash "header for hash not found".
    let not_found = json!({ "code": -32000, "message": "header not found" });
    expect_error(n, "eth_getBalance", json!([a2, "0x999"]), not_found.clone()).await;
    expect_error(
        n,
        "eth_getTransactionCount",
        json!([a2, "0x999"]),
        not_found.clone(),
    )
    .await;
    expect_error(n, "eth_getCode", json!([a2, "0x999"]), not_found.clone()).await;
    expect_error(
        n,
        "eth_getStorageAt",
        json!([a2, "0x0", "0x999"]),
        not_found.clone(),
    )
    .await;
    expect_error(
        n,
        "eth_call",
        json!([{ "to": f.store }, "0x999"]),
        not_found,
    )
    .await;
    expect_error(
        n,
        "eth_getBalance",
        json!([a2, { "blockHash": B256::repeat_byte(9) }]),
        json!({ "code": -32000, "message": "header for hash not found" }),
    )
    .await;

    expect_result(
        n,
        "eth_getTransactionCount",
        json!([a0, "latest"]),
        json!("0x2"),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionCount",
        json!([a0, "pending"]),
        json!("0x2"),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionCount",
        json!([a0, q(f.deploy.block_number)]),
        json!("0x1"),
    )
    .await;
    expect_result(
        n,
        "eth_getTransactionCount",
        json!([a0, "earliest"]),
        json!("0x0"),
    )
    .await;

    expect_result(
        n,
        "eth_getCode",
        json!([f.store, "latest"]),
        json!(format!("0x{STORE_RUNTIME}")),
    )
    .await;
    expect_result(n, "eth_getCode", json!([f.store, "earliest"]), json!("0x")).await;
    expect_result(n, "eth_getCode", json!([a2, "latest"]), json!("0x")).await;

    expect_result(
        n,
        "eth_getStorageAt",
        json!([f.store, "0x0", "latest"]),
        json!(word(STORED)),
    )
    .await;
    expect_result(
        n,
        "eth_getStorageAt",
        json!([f.store, B256::ZERO, "latest"]),
        json!(word(STORED)),
    )
    .await;
    expect_result(
        n,
        "eth_getStorageAt",
        json!([f.store, "0x1", "latest"]),
        json!(word(0)),
    )
    .await;
    expect_result(
        n,
        "eth_getStorageAt",
        json!([f.store, "0x0", "earliest"]),
        json!(word(0)),
    )
    .await;
    // geth refuses a key longer than 32 bytes (leading zeros or not) instead of truncating it.
    expect_error(
        n,
        "eth_getStorageAt",
        json!([f.store, format!("0x00{}", "11".repeat(32)), "latest"]),
        json!({ "code": -32602, "message": "<any>" }),
    )
    .await;
}

#[tokio::test]
async fn shapes_call_and_overrides() {
    let f = Fixture::new().await;
    let n = &f.node;
    let a0 = account(0).address();
    expect_result(
        n,
        "eth_call",
        json!([{ "to": f.store }, "latest"]),
        json!(word(STORED)),
    )
    .await;
    expect_result(
        n,
        "eth_call",
        json!([{ "from": a0, "to": f.store, "data": "0x" }]),
        json!(word(STORED)),
    )
    .await;
    expect_result(
        n,
        "eth_call",
        json!([{ "to": f.store, "input": "0x" }, { "blockHash": f.revert_deploy.block_hash }]),
        json!(word(STORED)),
    )
    .await;
    // State override: a storage diff.
    expect_result(
        n,
        "eth_call",
        json!([{ "to": f.store }, "latest", { a(f.store): { "stateDiff": { word(0): word(7) } } }]),
        json!(word(7)),
    )
    .await;
    // State + block override: code returning NUMBER, run at an overridden block number.
    let probe = Address::repeat_byte(0x55);
    expect_result(
        n,
        "eth_call",
        json!([{ "to": probe }, "latest", { a(probe): { "code": "0x4360005260206000f3" } }, { "number": "0x1234" }]),
        json!(word(0x1234)),
    )
    .await;
    // An EOA call returns empty data.
    expect_result(
        n,
        "eth_call",
        json!([{ "from": a0, "to": account(5).address(), "value": "0x1" }]),
        json!("0x"),
    )
    .await;
}

#[tokio::test]
async fn shapes_reverts() {
    let f = Fixture::new().await;
    let n = &f.node;
    let reverted = json!({
        "code": 3,
        "message": "execution reverted: nope",
        "data": format!("0x{}", hex::encode(revert_data())),
    });
    expect_error(
        n,
        "eth_call",
        json!([{ "to": f.reverter }, "latest"]),
        reverted.clone(),
    )
    .await;
    expect_error(
        n,
        "eth_estimateGas",
        json!([{ "from": account(0).address(), "to": f.reverter }]),
        reverted,
    )
    .await;
    // geth: a REVERT without data is a plain -32000 "execution reverted" without data.
    let bare = Address::repeat_byte(0x56);
    expect_error(
        n,
        "eth_call",
        json!([{ "to": bare }, "latest", { a(bare): { "code": "0x60006000fd" } }]),
        json!({ "code": -32000, "message": "execution reverted" }),
    )
    .await;
}

#[tokio::test]
async fn shapes_estimate_gas_and_access_list() {
    let f = Fixture::new().await;
    let n = &f.node;
    let a0 = account(0).address();
    let to = account(5).address();
    expect_result(
        n,
        "eth_estimateGas",
        json!([{ "from": a0, "to": to, "value": "0x1" }]),
        json!("0x5208"),
    )
    .await;
    expect_result(
        n,
        "eth_estimateGas",
        json!([{ "from": a0, "to": to }, "latest"]),
        json!("0x5208"),
    )
    .await;
    expect_result(
        n,
        "eth_estimateGas",
        json!([{ "from": a0, "to": f.store }]),
        json!("<quantity>"),
    )
    .await;

    expect_result(
        n,
        "eth_createAccessList",
        json!([{ "from": a0, "to": to, "value": "0x1" }, "latest"]),
        json!({ "accessList": [], "gasUsed": "0x5208" }),
    )
    .await;
    // geth's tracer lists the slots the call reads, also of the recipient.
    expect_result(
        n,
        "eth_createAccessList",
        json!([{ "from": a0, "to": f.store }, "latest"]),
        json!({ "accessList": [{ "address": a(f.store), "storageKeys": [B256::ZERO] }], "gasUsed": "<quantity>" }),
    )
    .await;
    // geth: a reverting call still answers, with the revert in `error`.
    expect_result(
        n,
        "eth_createAccessList",
        json!([{ "from": a0, "to": f.reverter }]),
        json!({ "accessList": [], "gasUsed": "<quantity>", "error": "execution reverted" }),
    )
    .await;
}

#[tokio::test]
async fn shapes_get_proof() {
    let f = Fixture::new().await;
    let n = &f.node;
    let got = expect_result(
        n,
        "eth_getProof",
        json!([f.store, [B256::ZERO], "latest"]),
        json!({
            "address": a(f.store), "accountProof": "<any>", "balance": "0x0",
            "codeHash": keccak256(hex::decode(STORE_RUNTIME).unwrap()), "nonce": "0x1",
            "storageHash": "<hash>",
            "storageProof": [{ "key": B256::ZERO, "value": q(STORED), "proof": "<any>" }],
        }),
    )
    .await;
    for p in got["accountProof"]
        .as_array()
        .unwrap()
        .iter()
        .chain(got["storageProof"][0]["proof"].as_array().unwrap())
    {
        super::assert_shape("proof node", p, &json!("<data>"));
    }
    assert!(!got["accountProof"].as_array().unwrap().is_empty());
}
