//! The `ots_` namespace against a real node: a transfer, a deployment and a reverting call.

use alloy_primitives::{hex, Address, Bytes, TxKind, B256, U256};
use jsonrpsee::{core::client::ClientT, rpc_params};
use l2node_rpc::Namespace;
use serde_json::Value;

use crate::common::{account, signed_tx, transfer, TestNode};

/// Runtime `PUSH1 0xaa PUSH1 0 MSTORE PUSH1 1 PUSH1 31 REVERT`: reverts with the byte 0xaa.
/// Init code: stores those 10 bytes and returns them.
const INIT: &str = "6960aa6000526001601ffd600052600a6016f3";

fn number(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

#[tokio::test]
async fn otterscan_methods_over_a_transfer_a_deployment_and_a_revert() {
    let node =
        TestNode::start_with(|c| c.rpc_server.http_apis = vec![Namespace::Eth, Namespace::Ots])
            .await;
    let key = account(0);
    let me = key.address();
    let payee = Address::repeat_byte(0x5e);
    let mut hashes = Vec::new();
    let raws = [
        transfer(&key, 0, payee, 5),
        signed_tx(
            &key,
            1,
            TxKind::Create,
            U256::ZERO,
            Bytes::from(hex::decode(INIT).unwrap()),
            200_000,
        ),
    ];
    for raw in raws {
        let hash: B256 = node
            .request("eth_sendRawTransaction", rpc_params![raw])
            .await;
        node.wait_receipt(hash).await;
        hashes.push(hash);
    }
    let deploy = node.wait_receipt(hashes[1]).await;
    let contract: Address = serde_json::from_value(deploy["contractAddress"].clone()).unwrap();
    let raw = signed_tx(
        &key,
        2,
        TxKind::Call(contract),
        U256::ZERO,
        Bytes::new(),
        100_000,
    );
    let hash: B256 = node
        .request("eth_sendRawTransaction", rpc_params![raw])
        .await;
    let call = node.wait_receipt(hash).await;
    assert_eq!(call["status"], "0x0");
    hashes.push(hash);

    let level: u64 = node.request("ots_getApiLevel", rpc_params![]).await;
    assert_eq!(level, 8);
    let deployed_at = number(&deploy["blockNumber"]);
    let has: bool = node
        .request("ots_hasCode", rpc_params![contract, "latest"])
        .await;
    let had: bool = node
        .request(
            "ots_hasCode",
            rpc_params![contract, format!("{:#x}", deployed_at - 1)],
        )
        .await;
    assert!(has && !had);

    let error: Bytes = node
        .request("ots_getTransactionError", rpc_params![hashes[2]])
        .await;
    assert_eq!(error, Bytes::from(vec![0xaa]));
    let none: Bytes = node
        .request("ots_getTransactionError", rpc_params![hashes[0]])
        .await;
    assert!(none.is_empty());

    let trace: Value = node
        .request("ots_traceTransaction", rpc_params![hashes[2]])
        .await;
    assert_eq!(trace.as_array().unwrap().len(), 1, "{trace}");
    assert_eq!(trace[0]["type"], "CALL");
    assert_eq!(trace[0]["depth"], 0);
    assert_eq!(trace[0]["to"], format!("{contract:#x}"));
    assert_eq!(trace[0]["output"], "0xaa");
    let ops: Value = node
        .request("ots_getInternalOperations", rpc_params![hashes[1]])
        .await;
    assert_eq!(ops, serde_json::json!([]));

    let creator: Value = node
        .request("ots_getContractCreator", rpc_params![contract])
        .await;
    assert_eq!(creator["hash"], format!("{:#x}", hashes[1]));
    assert_eq!(creator["creator"], format!("{me:#x}"));
    let nobody: Value = node
        .request("ots_getContractCreator", rpc_params![payee])
        .await;
    assert!(nobody.is_null());

    let by_nonce: Option<B256> = node
        .request("ots_getTransactionBySenderAndNonce", rpc_params![me, "0x1"])
        .await;
    assert_eq!(by_nonce, Some(hashes[1]));
    let unknown: Option<B256> = node
        .request("ots_getTransactionBySenderAndNonce", rpc_params![me, "0x9"])
        .await;
    assert_eq!(unknown, None);

    let before: Value = node
        .request("ots_searchTransactionsBefore", rpc_params![me, 0, 10])
        .await;
    let found: Vec<&Value> = before["txs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["hash"])
        .collect();
    let newest_first: Vec<String> = hashes.iter().rev().map(|h| format!("{h:#x}")).collect();
    assert_eq!(found, newest_first.iter().collect::<Vec<_>>());
    assert_eq!(
        (before["firstPage"].as_bool(), before["lastPage"].as_bool()),
        (Some(true), Some(true))
    );
    assert!(before["receipts"][0]["logs"].is_null());
    let after: Value = node
        .request("ots_searchTransactionsAfter", rpc_params![payee, 0, 10])
        .await;
    assert_eq!(after["txs"].as_array().unwrap().len(), 1);
    assert_eq!(after["txs"][0]["hash"], format!("{:#x}", hashes[0]));
    // Paging: one transaction per page, newest first, then the next page before its block.
    let page: Value = node
        .request("ots_searchTransactionsBefore", rpc_params![me, 0, 1])
        .await;
    assert_eq!(page["txs"][0]["hash"], format!("{:#x}", hashes[2]));
    assert_eq!(page["lastPage"], false);

    let first = node.wait_receipt(hashes[0]).await;
    let details: Value = node
        .request("ots_getBlockDetails", rpc_params![&first["blockNumber"]])
        .await;
    assert_eq!(details["block"]["transactionCount"], 1);
    assert_eq!(details["block"]["hash"], first["blockHash"]);
    let fees =
        U256::from(number(&first["gasUsed"])) * U256::from(number(&first["effectiveGasPrice"]));
    assert_eq!(details["totalFees"], format!("{fees:#x}"));
    let by_hash: Value = node
        .request(
            "ots_getBlockDetailsByHash",
            rpc_params![&first["blockHash"]],
        )
        .await;
    assert_eq!(by_hash, details);
    let txs: Value = node
        .request(
            "ots_getBlockTransactions",
            rpc_params![&first["blockNumber"], 0, 25],
        )
        .await;
    assert_eq!(txs["fullblock"]["transactionCount"], 1);
    assert_eq!(
        txs["fullblock"]["transactions"][0]["hash"],
        format!("{:#x}", hashes[0])
    );
    assert!(txs["receipts"][0]["logs"].is_null());
    assert_eq!(txs["receipts"][0]["status"], "0x1");

    // Not served unless OTS is in the API list.
    let plain = TestNode::start_with(|c| c.rpc_server.http_apis = Namespace::defaults()).await;
    let err = plain
        .http
        .request::<u64, _>("ots_getApiLevel", rpc_params![])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("OTS"), "{err}");
    plain.stop().await;
    node.stop().await;
}
