//! eth_simulateV1 against a real node: a simulated block replaying a mined one reproduces its
//! state and receipts roots; chained blocks, overrides, transfer logs and the refusals.

use alloy_primitives::{Address, B256, U256};
use jsonrpsee::{core::client::ClientT, rpc_params};
use serde_json::{json, Value};

use crate::common::{account, transfer, TestNode};

async fn simulate(node: &TestNode, payload: Value, block: &str) -> Result<Value, String> {
    node.http
        .request::<Value, _>("eth_simulateV1", rpc_params![payload, block])
        .await
        .map_err(|e| e.to_string())
}

/// Replaying block n's transfers on top of block n-1 (same time, same fee recipient) gives
/// block n's state root and receipts root: the simulated block runs the real executor, system
/// calls included, and its root comes from the stored trie plus its own changes.
#[tokio::test]
async fn replaying_a_mined_block_gives_its_state_and_receipts_roots() {
    let node = TestNode::start().await;
    let sender = account(0);
    let to = Address::repeat_byte(0x42);
    let hash: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&sender, 0, to, 7)],
        )
        .await;
    let receipt = node.wait_receipt(hash).await;
    let number = receipt["blockNumber"].as_str().unwrap().to_string();
    let mined: Value = node
        .request("eth_getBlockByNumber", rpc_params![&number, true])
        .await;
    let tx = &mined["transactions"][0];
    let n = u64::from_str_radix(number.trim_start_matches("0x"), 16).unwrap();
    let payload = json!({
        "blockStateCalls": [{
            "blockOverrides": {
                "time": mined["timestamp"],
                "feeRecipient": mined["miner"],
                "gasLimit": mined["gasLimit"],
                "baseFeePerGas": mined["baseFeePerGas"],
            },
            "calls": [{
                "from": tx["from"], "to": tx["to"], "value": tx["value"], "nonce": tx["nonce"],
                "gas": tx["gas"], "maxFeePerGas": tx["maxFeePerGas"],
                "maxPriorityFeePerGas": tx["maxPriorityFeePerGas"],
            }],
        }],
        "validation": true,
    });
    let blocks = simulate(&node, payload, &format!("{:#x}", n - 1))
        .await
        .unwrap();
    let block = &blocks[0];
    assert_eq!(block["number"], mined["number"]);
    assert_eq!(block["parentHash"], mined["parentHash"]);
    assert_eq!(block["stateRoot"], mined["stateRoot"], "{block}");
    assert_eq!(block["receiptsRoot"], mined["receiptsRoot"]);
    assert_eq!(block["gasUsed"], mined["gasUsed"]);
    assert_eq!(block["calls"][0]["status"], "0x1");
    assert_eq!(block["calls"][0]["gasUsed"], "0x5208");
    node.stop().await;
}

#[tokio::test]
async fn chained_blocks_with_overrides_and_transfer_logs() {
    let node = TestNode::start().await;
    let (rich, middle, last) = (
        Address::repeat_byte(0xa1),
        Address::repeat_byte(0xa2),
        Address::repeat_byte(0xa3),
    );
    let head: Value = node
        .request("eth_getBlockByNumber", rpc_params!["latest", false])
        .await;
    let payload = json!({
        "blockStateCalls": [
            {
                "stateOverrides": { format!("{rich:#x}"): { "balance": "0xde0b6b3a7640000" } },
                "calls": [{ "from": rich, "to": middle, "value": "0x1000" }],
            },
            {
                "blockOverrides": { "number": format!("{:#x}", u64::from_str_radix(head["number"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap() + 3) },
                "calls": [
                    { "from": middle, "to": last, "value": "0x400" },
                    // REVERT from the identity-less empty code: a call to a contract that reverts.
                    { "from": middle, "to": "0x00000000000000000000000000000000000000ff", "input": "0x" },
                ],
                "stateOverrides": { "0x00000000000000000000000000000000000000ff": { "code": "0x60006000fd" } },
            },
        ],
        "traceTransfers": true,
        "returnFullTransactions": true,
    });
    let blocks = simulate(&node, payload, "latest").await.unwrap();
    let blocks = blocks.as_array().unwrap();
    // The second block asked for head+3: head+2 is filled in, empty.
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[1]["transactions"].as_array().unwrap().len(), 0);
    for pair in blocks.windows(2) {
        assert_eq!(pair[1]["parentHash"], pair[0]["hash"]);
        let t = |b: &Value| {
            u64::from_str_radix(
                b["timestamp"].as_str().unwrap().trim_start_matches("0x"),
                16,
            )
            .unwrap()
        };
        assert_eq!(t(&pair[1]), t(&pair[0]) + 12);
    }
    let first = &blocks[0]["calls"][0];
    assert_eq!(first["status"], "0x1");
    let log = &first["logs"][0];
    assert_eq!(log["address"], "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
    assert_eq!(log["topics"][1], format!("{:#x}", rich.into_word()));
    assert_eq!(log["topics"][2], format!("{:#x}", middle.into_word()));
    assert_eq!(log["blockHash"], blocks[0]["hash"]);
    let tx = &blocks[0]["transactions"][0];
    assert_eq!(tx["from"], format!("{rich:#x}"));
    assert_eq!(log["transactionHash"], tx["hash"]);
    // Block 3: the middle account spends what block 1 gave it; then a revert.
    let calls = &blocks[2]["calls"];
    assert_eq!(calls[0]["status"], "0x1", "{calls}");
    assert_eq!(calls[1]["status"], "0x0");
    assert_eq!(calls[1]["error"]["code"], 3);
    assert_eq!(calls[1]["error"]["message"], "execution reverted");
    assert_eq!(calls[1]["returnData"], "0x");
    assert_eq!(calls[0]["maxUsedGas"], calls[0]["gasUsed"]);
    assert!(calls[1]["logs"].as_array().unwrap().is_empty());
    // Nothing was written: the chain still has the head it had.
    let after: Value = node
        .request("eth_getBlockByNumber", rpc_params!["latest", false])
        .await;
    assert_eq!(after["hash"], head["hash"]);
    let balance: U256 = node
        .request("eth_getBalance", rpc_params![middle, "latest"])
        .await;
    assert_eq!(balance, U256::ZERO);
    node.stop().await;
}

#[tokio::test]
async fn refusals_carry_the_execution_apis_codes() {
    // No RPC gas cap, so that a call may run into the EVM deadline.
    let node = TestNode::start_with(|cfg| cfg.rpc.gas_cap = 0).await;
    let sender = account(0).address();
    let code_of = |r: Result<Value, String>| r.unwrap_err();
    // Nonce too low under validation.
    let err = code_of(
        simulate(
            &node,
            json!({ "blockStateCalls": [{ "calls": [{ "from": sender, "to": sender, "nonce": "0x0" }, { "from": sender, "to": sender, "nonce": "0x0" }] }], "validation": true }),
            "latest",
        )
        .await,
    );
    assert!(
        err.contains("-38010") && err.contains("nonce too low"),
        "{err}"
    );
    // Block numbers out of order.
    let err = code_of(
        simulate(
            &node,
            json!({ "blockStateCalls": [{ "blockOverrides": { "number": "0x0" } }] }),
            "latest",
        )
        .await,
    );
    assert!(err.contains("-38020"), "{err}");
    // Not enough gas left in the block.
    let err = code_of(
        simulate(
            &node,
            json!({ "blockStateCalls": [{ "blockOverrides": { "gasLimit": "0x7530" }, "calls": [{ "from": sender, "to": sender, "gas": "0x5208" }, { "from": sender, "to": sender, "gas": "0x5208" }] }] }),
            "latest",
        )
        .await,
    );
    assert!(err.contains("-38015"), "{err}");
    // Insufficient funds for the value.
    let err = code_of(
        simulate(
            &node,
            json!({ "blockStateCalls": [{ "calls": [{ "from": Address::repeat_byte(0x99), "to": sender, "value": "0x1" }] }] }),
            "latest",
        )
        .await,
    );
    assert!(err.contains("-38014"), "{err}");
    // An endless loop stops at the EVM deadline for the whole request.
    let looping = "0x00000000000000000000000000000000000000ee";
    let err = code_of(
        simulate(
            &node,
            json!({ "blockStateCalls": [{
                "blockOverrides": { "gasLimit": "0xe8d4a51000" },
                "stateOverrides": { looping: { "code": "0x5b600056" } },
                "calls": [{ "from": sender, "to": looping, "gas": "0xe8d4a51000" }]
            }] }),
            "latest",
        )
        .await,
    );
    assert!(err.contains("timeout"), "{err}");
    node.stop().await;
}

/// `movePrecompileToAddress` moves a precompile for the block: SHA-256 answers at its new
/// address and no longer at 0x02; moving an address that holds no precompile is refused.
#[tokio::test]
async fn a_precompile_moves_for_the_block() {
    let node = TestNode::start().await;
    let sha256 = "0x0000000000000000000000000000000000000002";
    let moved = "0x0000000000000000000000000000000000000200";
    let payload = json!({ "blockStateCalls": [{
        "stateOverrides": { sha256: { "movePrecompileToAddress": moved } },
        "calls": [{ "to": moved, "input": "0x" }, { "to": sha256, "input": "0x" }],
    }] });
    let blocks = simulate(&node, payload, "latest").await.unwrap();
    let calls = &blocks[0]["calls"];
    assert_eq!(
        calls[0]["returnData"],
        "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(calls[1]["returnData"], "0x");
    let not_precompile = json!({ "blockStateCalls": [{
        "stateOverrides": { "0x00000000000000000000000000000000000000aa": { "movePrecompileToAddress": moved } },
    }] });
    let err = simulate(&node, not_precompile, "latest").await.unwrap_err();
    assert!(
        err.contains("-32000") && err.contains("is not a precompile"),
        "{err}"
    );
    node.stop().await;
}
