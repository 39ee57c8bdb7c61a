//! debug_getRaw*, rpc_modules, eth_coinbase, eth_blobBaseFee, eth_config and the blob fields of
//! eth_feeHistory, against a real node.

use alloy_consensus::{Block, Header, ReceiptEnvelope, TxEnvelope};
use alloy_eips::eip2718::Decodable2718;
use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use alloy_rlp::Decodable;
use jsonrpsee::{core::client::ClientT, rpc_params};
use l2node_node::constants::DEV_CHAIN_ID;
use l2node_node::dev;
use l2node_rpc::Namespace;

use crate::common::{account, transfer, TestNode};

#[tokio::test]
async fn raw_encodings_decode_to_the_served_objects() {
    let node = TestNode::start().await;
    let raw_tx = transfer(&account(0), 0, Address::repeat_byte(9), 5);
    let hash: B256 = node
        .request("eth_sendRawTransaction", rpc_params![&raw_tx])
        .await;
    let receipt = node.wait_receipt(hash).await;
    let block: serde_json::Value = node
        .request("eth_getBlockByNumber", rpc_params!["0x1", false])
        .await;

    let header: Bytes = node.request("debug_getRawHeader", rpc_params!["0x1"]).await;
    assert_eq!(
        format!("{:?}", keccak256(&header)),
        block["hash"].as_str().unwrap()
    );
    Header::decode(&mut &header[..]).unwrap();
    let raw_block: Bytes = node
        .request("debug_getRawBlock", rpc_params![block["hash"].clone()])
        .await;
    let decoded = Block::<TxEnvelope>::decode(&mut &raw_block[..]).unwrap();
    assert_eq!(decoded.body.transactions.len(), 1);
    assert_eq!(*decoded.body.transactions[0].tx_hash(), hash);
    let receipts: Vec<Bytes> = node
        .request("debug_getRawReceipts", rpc_params!["latest"])
        .await;
    assert_eq!(receipts.len(), 1);
    let r = ReceiptEnvelope::decode_2718(&mut &receipts[0][..]).unwrap();
    assert_eq!(
        format!("{:#x}", r.cumulative_gas_used()),
        receipt["cumulativeGasUsed"].as_str().unwrap()
    );
    let tx: Bytes = node
        .request("debug_getRawTransaction", rpc_params![hash])
        .await;
    assert_eq!(tx, raw_tx);
    let unknown: Option<Bytes> = node
        .request("debug_getRawTransaction", rpc_params![B256::repeat_byte(1)])
        .await;
    assert_eq!(
        unknown, None,
        "geth answers null for an unknown transaction"
    );

    let err = node
        .http
        .request::<Bytes, _>("debug_getRawBlock", rpc_params!["0x99"])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("block #153 not found"), "{err}");
}

#[tokio::test]
async fn modules_coinbase_and_blob_fees() {
    let node = TestNode::start_with(|c| {
        c.rpc_server.http_apis = vec![Namespace::Eth, Namespace::Net];
    })
    .await;
    let modules: serde_json::Value = node.request("rpc_modules", rpc_params![]).await;
    assert_eq!(
        modules,
        serde_json::json!({"eth": "1.0", "net": "1.0", "rpc": "1.0"})
    );
    let coinbase: Address = node.request("eth_coinbase", rpc_params![]).await;
    assert_eq!(coinbase, dev::dev_sequencer().address());
    // The dev chain runs Cancun and later from genesis: the minimum blob base fee.
    let fee: U256 = node.request("eth_blobBaseFee", rpc_params![]).await;
    assert_eq!(fee, U256::from(1));
    let history: serde_json::Value = node
        .request(
            "eth_feeHistory",
            rpc_params!["0x1", "latest", Vec::<f64>::new()],
        )
        .await;
    assert_eq!(
        history["baseFeePerBlobGas"],
        serde_json::json!(["0x1", "0x1"])
    );
    assert_eq!(history["blobGasUsedRatio"], serde_json::json!([0.0]));

    let follower = TestNode::start_with(|c| {
        c.signer = None;
        c.karma.slasher = None;
    })
    .await;
    let err = follower
        .http
        .request::<Address, _>("eth_coinbase", rpc_params![])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("etherbase must be explicitly specified"),
        "{err}"
    );
}

/// Init code of a contract whose runtime stores its first calldata word in slot 0.
const STORE_WORD: &str = "6007600c60003960076000f3600035600055 00";

#[tokio::test]
async fn geth_tracers_on_transactions_calls_and_blocks() {
    use alloy_primitives::TxKind;

    use crate::common::signed_tx;

    let node = TestNode::start().await;
    let init: Bytes = STORE_WORD.replace(' ', "").parse().unwrap();
    let deploy = signed_tx(&account(0), 0, TxKind::Create, U256::ZERO, init, 100_000);
    let hash: B256 = node
        .request("eth_sendRawTransaction", rpc_params![deploy])
        .await;
    let receipt = node.wait_receipt(hash).await;
    let contract: Address = serde_json::from_value(receipt["contractAddress"].clone()).unwrap();
    let word = B256::with_last_byte(42);
    let call = signed_tx(
        &account(0),
        1,
        TxKind::Call(contract),
        U256::ZERO,
        word.into(),
        60_000,
    );
    let hash: B256 = node
        .request("eth_sendRawTransaction", rpc_params![call])
        .await;
    let receipt = node.wait_receipt(hash).await;

    let logs: serde_json::Value = node
        .request("debug_traceTransaction", rpc_params![hash])
        .await;
    assert_eq!(logs["failed"], false);
    assert_eq!(
        logs["gas"],
        receipt["gasUsed"]
            .as_str()
            .map(|g| u64::from_str_radix(&g[2..], 16).unwrap())
            .unwrap()
    );
    let ops: Vec<&str> = logs["structLogs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["op"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["PUSH1", "CALLDATALOAD", "PUSH1", "SSTORE", "STOP"]);

    let calls: serde_json::Value = node
        .request(
            "debug_traceTransaction",
            rpc_params![hash, serde_json::json!({"tracer": "callTracer"})],
        )
        .await;
    assert_eq!(calls["type"], "CALL");
    assert_eq!(calls["to"], serde_json::json!(contract));
    assert_eq!(calls["input"], serde_json::json!(word));

    let pre: serde_json::Value = node
        .request(
            "debug_traceTransaction",
            rpc_params![
                hash,
                serde_json::json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}})
            ],
        )
        .await;
    let key = format!("{contract:#x}");
    assert_eq!(
        pre["post"][&key]["storage"][format!("{:#x}", B256::ZERO)],
        serde_json::json!(word)
    );

    // The same call, not mined: a call tracer on eth_call's terms.
    let traced: serde_json::Value = node
        .request(
            "debug_traceCall",
            rpc_params![
                serde_json::json!({"from": account(1).address(), "to": contract, "input": B256::with_last_byte(7)}),
                "latest",
                serde_json::json!({"tracer": "callTracer"})
            ],
        )
        .await;
    assert_eq!(traced["type"], "CALL");
    assert_eq!(traced["from"], serde_json::json!(account(1).address()));

    let block: Vec<serde_json::Value> = node
        .request(
            "debug_traceBlockByNumber",
            rpc_params![
                receipt["blockNumber"].clone(),
                serde_json::json!({"tracer": "4byteTracer"})
            ],
        )
        .await;
    assert_eq!(block.len(), 1);
    assert_eq!(block[0]["txHash"], serde_json::json!(hash));
    let by_hash: Vec<serde_json::Value> = node
        .request(
            "debug_traceBlockByHash",
            rpc_params![
                receipt["blockHash"].clone(),
                serde_json::json!({"tracer": "noopTracer"})
            ],
        )
        .await;
    assert_eq!(by_hash[0]["result"], serde_json::json!({}));

    // Parity style, as reth and anvil answer.
    let frames: Vec<serde_json::Value> = node.request("trace_transaction", rpc_params![hash]).await;
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0]["type"], "call");
    assert_eq!(frames[0]["action"]["to"], serde_json::json!(contract));
    assert_eq!(frames[0]["transactionHash"], serde_json::json!(hash));
    assert_eq!(frames[0]["blockHash"], receipt["blockHash"]);
    let in_block: Vec<serde_json::Value> = node
        .request("trace_block", rpc_params![receipt["blockNumber"].clone()])
        .await;
    assert_eq!(in_block, frames);
    let unknown: Option<Vec<serde_json::Value>> = node
        .request("trace_transaction", rpc_params![B256::repeat_byte(3)])
        .await;
    assert_eq!(unknown, None);
    let call: serde_json::Value = node
        .request(
            "trace_call",
            rpc_params![
                serde_json::json!({"from": account(1).address(), "to": contract, "input": B256::with_last_byte(7)}),
                ["trace", "stateDiff"],
                "latest"
            ],
        )
        .await;
    assert_eq!(call["trace"][0]["action"]["callType"], "call");
    let slot =
        &call["stateDiff"][format!("{contract:#x}")]["storage"][format!("{:#x}", B256::ZERO)];
    assert_eq!(
        slot["*"]["to"],
        serde_json::json!(B256::with_last_byte(7)),
        "{call}"
    );
    let replayed: Vec<serde_json::Value> = node
        .request(
            "trace_replayBlockTransactions",
            rpc_params![receipt["blockNumber"].clone(), ["trace"]],
        )
        .await;
    assert_eq!(replayed.len(), 1);
    assert_eq!(replayed[0]["transactionHash"], serde_json::json!(hash));
    assert_eq!(
        replayed[0]["trace"][0]["action"]["to"],
        serde_json::json!(contract)
    );

    for (params, want) in [(rpc_params![B256::repeat_byte(3)], "transaction not found")] {
        let err = node
            .http
            .request::<serde_json::Value, _>("debug_traceTransaction", params)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err}");
    }
    let err = node
        .http
        .request::<serde_json::Value, _>("debug_traceBlockByNumber", rpc_params!["0x0"])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("genesis is not traceable"), "{err}");
    let err = node
        .http
        .request::<serde_json::Value, _>(
            "debug_traceTransaction",
            rpc_params![hash, serde_json::json!({"tracer": "noSuchTracer"})],
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("-32000") || err.to_lowercase().contains("tracer"),
        "{err}"
    );
}

/// EIP-7910 on the dev chain: every fork through Osaka at genesis, nothing scheduled.
#[tokio::test]
async fn eth_config_reports_osaka_from_genesis_and_nothing_scheduled() {
    let node = TestNode::start().await;
    let config: serde_json::Value = node.request("eth_config", rpc_params![]).await;
    assert_eq!(config["next"], serde_json::Value::Null);
    assert_eq!(config["last"], serde_json::Value::Null);
    let current = &config["current"];
    assert_eq!(current["activationTime"], 0);
    assert_eq!(current["chainId"], format!("{:#x}", DEV_CHAIN_ID));
    // All forks at genesis: the fork hash is the CRC32 of the genesis hash alone.
    let genesis: serde_json::Value = node
        .request("eth_getBlockByNumber", rpc_params!["0x0", false])
        .await;
    let genesis_hash: B256 = serde_json::from_value(genesis["hash"].clone()).unwrap();
    let fork_hash = alloy_hardforks::ForkHash::from(genesis_hash);
    assert_eq!(
        current["forkId"],
        format!("0x{}", alloy_primitives::hex::encode(fork_hash.0))
    );
    assert_eq!(
        current["blobSchedule"],
        serde_json::json!({"baseFeeUpdateFraction": 5007716, "max": 9, "target": 6})
    );
    // Prague's 17 and Osaka's secp256r1 verifier (EIP-7951).
    assert_eq!(current["precompiles"].as_object().unwrap().len(), 18);
    assert_eq!(
        current["precompiles"]["P256VERIFY"],
        "0x0000000000000000000000000000000000000100"
    );
    assert_eq!(
        current["precompiles"]["BLS12_PAIRING_CHECK"],
        "0x000000000000000000000000000000000000000f"
    );
    let system: Vec<&String> = current["systemContracts"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        system,
        [
            "BEACON_ROOTS_ADDRESS",
            "CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS",
            "DEPOSIT_CONTRACT_ADDRESS",
            "HISTORY_STORAGE_ADDRESS",
            "WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS"
        ]
    );
}
