//! eth_subscribe over WebSocket against a real mining node.

use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use jsonrpsee::rpc_params;
use serde_json::{json, Value};

use crate::common::{account, signed_tx, transfer, TestNode};
use crate::wire::raw::Ws;

/// Init code of a contract whose runtime emits LOG1(topic 0x11..11) twice per call.
fn logging_contract() -> Bytes {
    // runtime: PUSH32 topic, PUSH1 0, PUSH1 0, LOG1, (again), STOP
    let mut runtime = vec![0x7f];
    runtime.extend([0x11; 32]);
    runtime.extend([0x60, 0x00, 0x60, 0x00, 0xa1]);
    runtime.push(0x7f);
    runtime.extend([0x11; 32]);
    runtime.extend([0x60, 0x00, 0x60, 0x00, 0xa1, 0x00]);
    let len = runtime.len() as u8;
    // init: CODECOPY runtime to memory and RETURN it.
    let mut init = vec![
        0x60, len, 0x60, 0x0c, 0x60, 0x00, 0x39, 0x60, len, 0x60, 0x00, 0xf3,
    ];
    init.extend(runtime);
    init.into()
}

async fn subscribe(ws: &mut Ws, id: u64, params: Value) -> String {
    ws.send(&json!({"jsonrpc":"2.0","id":id,"method":"eth_subscribe","params":params}).to_string())
        .await;
    let reply = ws.recv().await;
    let sub = reply["result"]
        .as_str()
        .unwrap_or_else(|| panic!("subscribe failed: {reply}"))
        .to_string();
    assert!(sub.starts_with("0x"), "hex subscription id: {sub}");
    sub
}

#[tokio::test]
async fn new_heads_and_logs_arrive_in_order_and_unsubscribe_answers() {
    let node = TestNode::start().await;
    let mut ws = Ws::connect(node.ws_addr).await;
    let heads = subscribe(&mut ws, 1, json!(["newHeads"])).await;

    let deploy: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![signed_tx(
                &account(5),
                0,
                TxKind::Create,
                U256::ZERO,
                logging_contract(),
                200_000
            )],
        )
        .await;
    let receipt = node.wait_receipt(deploy).await;
    let contract: Address = receipt["contractAddress"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    let note = ws.recv().await;
    assert_eq!(note["method"], "eth_subscription");
    assert_eq!(note["params"]["subscription"], heads.as_str());
    let header = &note["params"]["result"];
    assert_eq!(header["number"], receipt["blockNumber"]);
    assert_eq!(header["hash"], receipt["blockHash"]);
    for key in [
        "parentHash",
        "stateRoot",
        "receiptsRoot",
        "logsBloom",
        "gasLimit",
        "timestamp",
        "baseFeePerGas",
    ] {
        assert!(
            header.get(key).is_some(),
            "newHeads header has {key}: {header}"
        );
    }

    let logs = subscribe(&mut ws, 2, json!(["logs", {"address": contract}])).await;
    let call: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![signed_tx(
                &account(5),
                1,
                TxKind::Call(contract),
                U256::ZERO,
                Bytes::new(),
                100_000
            )],
        )
        .await;
    node.wait_receipt(call).await;
    let mut log_indexes = Vec::new();
    while log_indexes.len() < 2 {
        let note = ws.recv().await;
        if note["params"]["subscription"] == logs.as_str() {
            let log = &note["params"]["result"];
            assert_eq!(log["transactionHash"], json!(call));
            assert_eq!(
                log["address"].as_str().unwrap().to_lowercase(),
                format!("{contract:#x}")
            );
            log_indexes.push(log["logIndex"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(
        log_indexes,
        vec!["0x0", "0x1"],
        "one notification per log, in order"
    );

    ws.send(
        &json!({"jsonrpc":"2.0","id":3,"method":"eth_unsubscribe","params":[heads]}).to_string(),
    )
    .await;
    loop {
        let reply = ws.recv().await;
        if reply["id"] == 3 {
            assert_eq!(reply["result"], true);
            break;
        }
    }
    ws.send(&json!({"jsonrpc":"2.0","id":4,"method":"eth_unsubscribe","params":["0x00000000000000000000000000000001"]}).to_string()).await;
    loop {
        let reply = ws.recv().await;
        if reply["id"] == 4 {
            assert_eq!(reply["result"], false);
            break;
        }
    }
    node.stop().await;
}

#[tokio::test]
async fn pending_transactions_are_announced_by_hash() {
    let node = TestNode::start_with(|c| c.block_time = std::time::Duration::from_secs(3600)).await;
    let mut ws = Ws::connect(node.ws_addr).await;
    let sub = subscribe(&mut ws, 1, json!(["newPendingTransactions"])).await;
    let hash: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(6), 0, Address::repeat_byte(1), 1)],
        )
        .await;
    let note = ws.recv().await;
    assert_eq!(note["params"]["subscription"], sub.as_str());
    assert_eq!(note["params"]["result"], json!(hash));
    node.stop().await;
}

#[tokio::test]
async fn unknown_subscription_kind_is_invalid_params() {
    let node = TestNode::start().await;
    let mut ws = Ws::connect(node.ws_addr).await;
    ws.send(r#"{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["syncing2"]}"#)
        .await;
    let reply = ws.recv().await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(reply["error"]["message"]
        .as_str()
        .unwrap()
        .contains("newHeads"));
    node.stop().await;
}

/// A follower that switches to a heavier competing chain: its `logs` subscribers get the logs
/// of the blocks taken back with `removed: true` (oldest first, as geth) before the new
/// chain's, and the transactions only the old chain held return to its pool.
#[tokio::test]
async fn a_reorganisation_removes_logs_and_returns_transactions_to_the_pool() {
    // Two sequencers on the same genesis make competing chains.
    let (a, b) = (TestNode::start().await, TestNode::start().await);
    let (a_blocks, a_txs) = emitting_blocks(&a, 0, 2).await;
    let (b_blocks, _) = emitting_blocks(&b, 1, 3).await;

    let follower = TestNode::start_with(|c| c.signer = None).await;
    let chain = follower.handle.as_ref().unwrap().chain.clone();
    let mut ws = Ws::connect(follower.ws_addr).await;
    subscribe(&mut ws, 1, json!(["logs", {}])).await;
    // A polling filter too (geth's filters report removed logs the same way).
    let filter: String = follower
        .request("eth_newFilter", rpc_params![json!({})])
        .await;
    for raw in &a_blocks {
        l2node_node::sync::import_raw(&chain, raw).unwrap();
    }
    let mut a_logs = Vec::new();
    for _ in 0..2 {
        let log = ws.recv().await["params"]["result"].clone();
        assert_eq!(log["removed"], false);
        a_logs.push(log);
    }
    let polled: Vec<Value> = follower
        .request("eth_getFilterChanges", rpc_params![&filter])
        .await;
    assert_eq!(polled.len(), 2);
    for raw in &b_blocks {
        l2node_node::sync::import_raw(&chain, raw).unwrap();
    }
    let polled: Vec<Value> = follower
        .request("eth_getFilterChanges", rpc_params![&filter])
        .await;
    let removed: Vec<bool> = polled.iter().map(|l| l["removed"] == true).collect();
    assert_eq!(removed, [true, true, false, false, false], "{polled:?}");
    // A's logs again, removed, oldest first; then B's three.
    for expected in &a_logs {
        let log = ws.recv().await["params"]["result"].clone();
        assert_eq!(log["removed"], true, "{log}");
        assert_eq!(log["blockHash"], expected["blockHash"]);
        assert_eq!(log["transactionHash"], expected["transactionHash"]);
    }
    for n in 1..=3 {
        let log = ws.recv().await["params"]["result"].clone();
        assert_eq!(log["removed"], false, "{log}");
        assert_eq!(log["blockNumber"], format!("{n:#x}"));
    }
    assert_eq!(follower.block_number().await, 3);
    // A's transactions are pending again on the follower.
    for hash in a_txs {
        let follower = &follower;
        let tx = crate::common::eventually(&format!("{hash} back in the pool"), || async move {
            let tx: Value = follower
                .request("eth_getTransactionByHash", rpc_params![hash])
                .await;
            (!tx.is_null()).then_some(tx)
        })
        .await;
        assert_eq!(tx["blockHash"], Value::Null, "{hash} is pending: {tx}");
    }
}

/// `count` blocks on `node`, each one creation by dev account `who` whose constructor emits
/// LOG0: their encodings and transaction hashes.
async fn emitting_blocks(node: &TestNode, who: usize, count: u64) -> (Vec<Bytes>, Vec<B256>) {
    let emits = Bytes::from_static(&[0x60, 0x00, 0x60, 0x00, 0xa0, 0x00]);
    let mut blocks = Vec::new();
    let mut hashes = Vec::new();
    for nonce in 0..count {
        let raw = signed_tx(
            &account(who),
            nonce,
            TxKind::Create,
            U256::ZERO,
            emits.clone(),
            100_000,
        );
        let hash: B256 = node
            .request("eth_sendRawTransaction", rpc_params![raw])
            .await;
        let receipt = node.wait_receipt(hash).await;
        let block: Bytes = node
            .request(
                "debug_getRawBlock",
                rpc_params![receipt["blockNumber"].clone()],
            )
            .await;
        blocks.push(block);
        hashes.push(hash);
    }
    (blocks, hashes)
}
