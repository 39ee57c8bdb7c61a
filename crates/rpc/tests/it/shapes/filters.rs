//! eth_getLogs and the polling filters.

use alloy_primitives::TxKind;
use alloy_primitives::{B256, U256};
use serde_json::json;

use super::{
    a, expect_error, expect_result, q, send, store_init, txs::store_log, Fixture, DEPLOY_GAS, TOPIC,
};
use crate::common::{account, signed_tx, transfer};

#[tokio::test]
async fn shapes_get_logs() {
    let f = Fixture::new().await;
    let n = &f.node;
    let log = json!([store_log(&f, 0)]);
    let d = f.deploy;
    expect_result(
        n,
        "eth_getLogs",
        json!([{ "fromBlock": "0x0", "toBlock": "latest", "address": f.store }]),
        log.clone(),
    )
    .await;
    expect_result(
        n,
        "eth_getLogs",
        json!([{ "fromBlock": "earliest", "address": [f.store], "topics": [TOPIC] }]),
        log.clone(),
    )
    .await;
    expect_result(n, "eth_getLogs", json!([{ "fromBlock": q(d.block_number), "toBlock": q(d.block_number), "topics": [[TOPIC, B256::repeat_byte(3)]] }]), log.clone()).await;
    expect_result(
        n,
        "eth_getLogs",
        json!([{ "fromBlock": "0x0", "topics": [B256::repeat_byte(3)] }]),
        json!([]),
    )
    .await;
    expect_result(
        n,
        "eth_getLogs",
        json!([{ "fromBlock": "0x0", "address": f.reverter }]),
        json!([]),
    )
    .await;
    expect_result(
        n,
        "eth_getLogs",
        json!([{ "blockHash": d.block_hash }]),
        log.clone(),
    )
    .await;
    expect_result(
        n,
        "eth_getLogs",
        json!([{ "blockHash": f.legacy.block_hash }]),
        json!([]),
    )
    .await;
    // geth: an unknown blockHash is -32000 "unknown block".
    expect_error(
        n,
        "eth_getLogs",
        json!([{ "blockHash": B256::repeat_byte(9) }]),
        json!({ "code": -32000, "message": "unknown block" }),
    )
    .await;
}

#[tokio::test]
async fn shapes_filters() {
    let f = Fixture::new().await;
    let n = &f.node;
    let id_of = |v: &serde_json::Value| v.clone();
    // Filter ids are hex quantities.
    let logs_id = id_of(
        &expect_result(
            n,
            "eth_newFilter",
            json!([{ "fromBlock": "0x0", "topics": [TOPIC] }]),
            json!("<quantity>"),
        )
        .await,
    );
    let blocks_id =
        id_of(&expect_result(n, "eth_newBlockFilter", json!([]), json!("<quantity>")).await);
    let pending_id = id_of(
        &expect_result(
            n,
            "eth_newPendingTransactionFilter",
            json!([]),
            json!("<quantity>"),
        )
        .await,
    );
    assert!(logs_id != blocks_id && blocks_id != pending_id);

    // getFilterLogs: every matching log of the range; getFilterChanges: only what is new since
    // the filter was installed (geth's filters are subscriptions).
    expect_result(
        n,
        "eth_getFilterLogs",
        json!([logs_id]),
        json!([store_log(&f, 0)]),
    )
    .await;
    expect_result(n, "eth_getFilterChanges", json!([logs_id]), json!([])).await;
    expect_result(n, "eth_getFilterChanges", json!([blocks_id]), json!([])).await;

    let key = account(4);
    let m = send(
        n,
        signed_tx(
            &key,
            0,
            TxKind::Create,
            U256::ZERO,
            store_init().into(),
            DEPLOY_GAS,
        ),
    )
    .await;
    let t = send(n, transfer(&key, 1, account(6).address(), 1)).await;
    let new_store = key.address().create(0);
    expect_result(
        n,
        "eth_getFilterChanges",
        json!([logs_id]),
        json!([{
            "address": a(new_store), "topics": [TOPIC], "data": format!("0x{:064x}", super::STORED),
            "blockNumber": q(m.block_number), "blockHash": m.block_hash, "blockTimestamp": "<quantity>",
            "transactionHash": m.hash, "transactionIndex": "0x0", "logIndex": "0x0", "removed": false,
        }]),
    )
    .await;
    expect_result(n, "eth_getFilterChanges", json!([logs_id]), json!([])).await;
    expect_result(
        n,
        "eth_getFilterChanges",
        json!([blocks_id]),
        json!([m.block_hash, t.block_hash]),
    )
    .await;
    expect_result(n, "eth_getFilterChanges", json!([blocks_id]), json!([])).await;
    expect_result(
        n,
        "eth_getFilterChanges",
        json!([pending_id]),
        json!([m.hash, t.hash]),
    )
    .await;

    for id in [&logs_id, &blocks_id, &pending_id] {
        expect_result(n, "eth_uninstallFilter", json!([id]), json!(true)).await;
        expect_result(n, "eth_uninstallFilter", json!([id]), json!(false)).await;
    }
    let gone = json!({ "code": -32000, "message": "filter not found" });
    expect_error(n, "eth_getFilterChanges", json!([logs_id]), gone.clone()).await;
    expect_error(n, "eth_getFilterLogs", json!([logs_id]), gone.clone()).await;
    expect_error(n, "eth_getFilterChanges", json!(["0x1234"]), gone).await;
    expect_result(n, "eth_uninstallFilter", json!(["0x1234"]), json!(false)).await;
}
