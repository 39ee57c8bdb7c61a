//! Blocks by hash and number (every tag), transaction and uncle counts.

use alloy_primitives::B256;
use serde_json::{json, Value};

use super::{block_template, expect_result, q, with, Fixture, Mined};

fn block_of(m: &Mined, transactions: Value) -> Value {
    with(
        block_template(),
        json!({ "number": q(m.block_number), "hash": m.block_hash, "transactions": transactions }),
    )
}

#[tokio::test]
async fn shapes_blocks_by_number_and_hash() {
    let f = Fixture::new().await;
    let n = &f.node;
    let (d, l, r) = (f.deploy, f.legacy, f.revert_deploy);
    let hashes = block_of(&d, json!([d.hash]));
    expect_result(
        n,
        "eth_getBlockByNumber",
        json!([q(d.block_number), false]),
        hashes.clone(),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockByHash",
        json!([d.block_hash, false]),
        hashes,
    )
    .await;
    let full = expect_result(
        n,
        "eth_getBlockByNumber",
        json!([q(l.block_number), true]),
        block_of(&l, json!(["<any>"])),
    )
    .await;
    let tx = expect_result(
        n,
        "eth_getTransactionByHash",
        json!([l.hash]),
        json!("<any>"),
    )
    .await;
    assert_eq!(
        full["transactions"][0], tx,
        "a full block holds the same transaction objects"
    );
    let by_hash = expect_result(
        n,
        "eth_getBlockByHash",
        json!([l.block_hash, true]),
        block_of(&l, json!(["<any>"])),
    )
    .await;
    assert_eq!(by_hash, full);

    let genesis = expect_result(
        n,
        "eth_getBlockByNumber",
        json!(["earliest", false]),
        with(
            block_template(),
            json!({ "number": "0x0", "parentHash": B256::ZERO, "gasUsed": "0x0" }),
        ),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockByNumber",
        json!(["0x0", false]),
        genesis.clone(),
    )
    .await;
    for tag in ["latest", "safe", "finalized"] {
        expect_result(
            n,
            "eth_getBlockByNumber",
            json!([tag, false]),
            block_of(&r, json!([r.hash])),
        )
        .await;
    }
    // geth: the pending block has no hash, nonce or miner yet.
    expect_result(
        n,
        "eth_getBlockByNumber",
        json!(["pending", false]),
        with(
            block_template(),
            json!({
                "number": q(r.block_number + 1), "parentHash": r.block_hash,
                "hash": null, "nonce": null, "miner": null, "gasUsed": "0x0",
            }),
        ),
    )
    .await;
    // Unknown blocks are null, not errors.
    expect_result(
        n,
        "eth_getBlockByNumber",
        json!(["0x999", false]),
        json!(null),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockByHash",
        json!([B256::repeat_byte(9), false]),
        json!(null),
    )
    .await;
}

#[tokio::test]
async fn shapes_block_counts() {
    let f = Fixture::new().await;
    let n = &f.node;
    let d = f.deploy;
    expect_result(
        n,
        "eth_getBlockTransactionCountByHash",
        json!([d.block_hash]),
        json!("0x1"),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockTransactionCountByHash",
        json!([B256::repeat_byte(9)]),
        json!(null),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockTransactionCountByNumber",
        json!([q(d.block_number)]),
        json!("0x1"),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockTransactionCountByNumber",
        json!(["latest"]),
        json!("0x1"),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockTransactionCountByNumber",
        json!(["earliest"]),
        json!("0x0"),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockTransactionCountByNumber",
        json!(["pending"]),
        json!("0x0"),
    )
    .await;
    expect_result(
        n,
        "eth_getBlockTransactionCountByNumber",
        json!(["0x999"]),
        json!(null),
    )
    .await;
    expect_result(
        n,
        "eth_getUncleCountByBlockHash",
        json!([d.block_hash]),
        json!("0x0"),
    )
    .await;
    expect_result(
        n,
        "eth_getUncleCountByBlockHash",
        json!([B256::repeat_byte(9)]),
        json!(null),
    )
    .await;
    expect_result(
        n,
        "eth_getUncleCountByBlockNumber",
        json!([q(d.block_number)]),
        json!("0x0"),
    )
    .await;
    expect_result(
        n,
        "eth_getUncleCountByBlockNumber",
        json!(["latest"]),
        json!("0x0"),
    )
    .await;
    expect_result(
        n,
        "eth_getUncleCountByBlockNumber",
        json!(["0x999"]),
        json!(null),
    )
    .await;
}
