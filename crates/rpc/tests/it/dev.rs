//! A dev node as anvil and geth --dev users drive it (unlocked dev accounts, the DEV
//! namespace), the methods of the current execution-apis specification, and Osaka's call gas.

use alloy_consensus::{transaction::SignerRecoverable, TxEnvelope};
use alloy_eips::eip2718::Decodable2718;
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_signer::Signature;
use jsonrpsee::{core::client::ClientT, rpc_params};
use serde_json::{json, Value};

use crate::common::{account, signed_tx, transfer, TestNode};

/// A dev node with its dev accounts unlocked, as `l2node run --dev` starts it.
async fn dev_node() -> TestNode {
    TestNode::start_with(|cfg| cfg.rpc.unlocked = l2node_node::dev::dev_accounts()).await
}

/// eth_sendTransaction of 5 wei from the unlocked account `from`, the rest filled by the node:
/// its hash and receipt.
async fn send_unlocked(node: &TestNode, from: Address) -> (B256, Value) {
    let hash: B256 = node
        .request(
            "eth_sendTransaction",
            rpc_params![json!({"from": from, "to": Address::repeat_byte(7), "value": "0x5"})],
        )
        .await;
    (hash, node.wait_receipt(hash).await)
}

/// The JSON-RPC error of a call that must fail: (code, message).
async fn error_of(node: &TestNode, method: &str, params: Value) -> (i32, String) {
    let params: Vec<Value> = serde_json::from_value(params).unwrap();
    let mut array = jsonrpsee::core::params::ArrayParams::new();
    for p in params {
        array.insert(p).unwrap();
    }
    match node.http.request::<Value, _>(method, array).await {
        Ok(v) => panic!("{method} answered {v}"),
        Err(jsonrpsee::core::client::Error::Call(e)) => (e.code(), e.message().to_owned()),
        Err(e) => panic!("{method}: {e}"),
    }
}

#[tokio::test]
async fn unlocked_dev_accounts_send_and_sign_with_karma_aware_fees() {
    let node = dev_node().await;
    let from = account(0).address();
    let accounts: Vec<Address> = node.request("eth_accounts", rpc_params![]).await;
    assert_eq!(accounts.len(), 10);
    assert_eq!(accounts[0], from);

    // No gas, fees or nonce: the node fills them, and a Karma holder with quota sends free.
    let (_, receipt) = send_unlocked(&node, from).await;
    assert_eq!(receipt["status"], "0x1");
    assert_eq!(receipt["effectiveGasPrice"], "0x0");

    // eth_signTransaction: the EIP-2718 encoding, signed by `from`, with the next nonce.
    let raw: Bytes = node
        .request(
            "eth_signTransaction",
            rpc_params![json!({"from": from, "to": Address::repeat_byte(7)})],
        )
        .await;
    let tx = TxEnvelope::decode_2718(&mut raw.as_ref()).unwrap();
    assert_eq!(tx.recover_signer().unwrap(), from);
    assert_eq!(alloy_consensus::Transaction::nonce(&tx), 1);

    // eth_fillTransaction: unsigned, geth's {raw, tx}.
    let filled: Value = node
        .request(
            "eth_fillTransaction",
            rpc_params![json!({"from": from, "to": Address::repeat_byte(7)})],
        )
        .await;
    assert_eq!(filled["tx"]["nonce"], "0x1");
    assert_eq!(filled["tx"]["gas"], "0x5208");
    assert_eq!(filled["tx"]["r"], "0x0");

    // eth_sign: EIP-191, recoverable to the account.
    let sig: Bytes = node
        .request("eth_sign", rpc_params![from, "0xdeadbeef"])
        .await;
    let sig = Signature::try_from(sig.as_ref()).unwrap();
    let signer = sig
        .recover_address_from_msg([0xde, 0xad, 0xbe, 0xef])
        .unwrap();
    assert_eq!(signer, from);

    // An account the node does not hold.
    let stranger = Address::repeat_byte(0x99);
    let (code, message) = error_of(
        &node,
        "eth_sendTransaction",
        json!([{"from": stranger, "to": stranger}]),
    )
    .await;
    assert_eq!(code, -32000);
    assert!(message.starts_with("unknown account"), "{message}");
    assert!(message.contains("eth_accounts"), "{message}");

    // No account at all: the missing field, not the zero address.
    let (code, message) = error_of(&node, "eth_sendTransaction", json!([{"to": stranger}])).await;
    assert_eq!(code, -32602);
    assert!(message.starts_with("from is required"), "{message}");
}

#[tokio::test]
async fn a_node_without_dev_accounts_holds_no_keys() {
    let node = TestNode::start().await;
    let accounts: Vec<Address> = node.request("eth_accounts", rpc_params![]).await;
    assert!(accounts.is_empty());
    let (code, message) = error_of(&node, "eth_sign", json!([account(0).address(), "0x01"])).await;
    assert_eq!(code, -32000);
    assert!(message.contains("eth_sendRawTransaction"), "{message}");
}

/// The head's eth_getBlockByNumber JSON is made once per head and flag: every answer for it is
/// the block eth_getBlockByHash gives, and a new head is served at once.
#[tokio::test]
async fn the_latest_block_is_the_head_block_after_every_new_head() {
    let node = dev_node().await;
    let from = account(0).address();
    let mut previous = Value::Null;
    for _ in 0..3 {
        let (hash, receipt) = send_unlocked(&node, from).await;
        let number = receipt["blockNumber"].clone();
        assert_eq!(format!("{:#x}", node.block_number().await), number);
        for full in [false, true] {
            let latest: Value = node
                .request("eth_getBlockByNumber", rpc_params!["latest", full])
                .await;
            assert_eq!(latest["number"], number);
            let mined = &latest["transactions"][0];
            assert_eq!(if full { &mined["hash"] } else { mined }, &json!(hash));
            let again: Value = node
                .request("eth_getBlockByNumber", rpc_params!["latest", full])
                .await;
            let by_hash: Value = node
                .request(
                    "eth_getBlockByHash",
                    rpc_params![latest["hash"].clone(), full],
                )
                .await;
            let by_number: Value = node
                .request("eth_getBlockByNumber", rpc_params![number.clone(), full])
                .await;
            assert_eq!(latest, again);
            assert_eq!(latest, by_hash);
            assert_eq!(latest, by_number);
            if !full {
                assert_ne!(latest, previous);
                previous = latest;
            }
        }
    }
}

#[tokio::test]
async fn evm_mine_and_the_clock_stamp_blocks_and_cheats_are_refused() {
    let node = dev_node().await;
    let head: Value = node
        .request("eth_getBlockByNumber", rpc_params!["latest", false])
        .await;
    let head_time = u64::from_str_radix(
        head["timestamp"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap();
    // An empty block on request (the node mines only on transactions otherwise).
    let answer: String = node.request("evm_mine", rpc_params![]).await;
    assert_eq!(answer, "0x0");
    assert_eq!(node.block_number().await, 1);

    let at = head_time.max(now()) + 10_000;
    let _: Value = node
        .request("evm_setNextBlockTimestamp", rpc_params![at])
        .await;
    let _: String = node
        .request("evm_mine", rpc_params![json!({"blocks": 2})])
        .await;
    assert_eq!(node.block_number().await, 3);
    let stamped: Value = node
        .request("eth_getBlockByNumber", rpc_params!["0x2", false])
        .await;
    assert_eq!(stamped["timestamp"], format!("{at:#x}"));
    // The clock continues from there.
    let next: Value = node
        .request("eth_getBlockByNumber", rpc_params!["0x3", false])
        .await;
    let t3 = u64::from_str_radix(
        next["timestamp"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap();
    assert!(t3 > at && t3 < at + 60, "{t3} after {at}");

    let offset: i64 = node.request("evm_increaseTime", rpc_params!["0xe10"]).await;
    assert!(offset >= 3600, "{offset}");

    let (code, message) = error_of(&node, "evm_setNextBlockTimestamp", json!([at])).await;
    assert_eq!(code, -32602);
    assert!(message.contains("lower than or equal to previous block's timestamp"));

    let (code, message) = error_of(
        &node,
        "anvil_setBalance",
        json!([account(1).address(), "0x1"]),
    )
    .await;
    assert_eq!(code, -32601);
    assert!(message.contains("outside a block"), "{message}");
    let (_, message) = error_of(&node, "anvil_mine", json!([])).await;
    assert!(message.contains("use evm_mine"), "{message}");
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Code that returns the gas left at its first instruction (GAS, MSTORE, RETURN 32 bytes).
const GAS_LEFT: &str = "0x5a60005260206000f3";

#[tokio::test]
async fn osaka_calls_without_gas_get_what_geth_gives() {
    let node = TestNode::start().await;
    let target = Address::repeat_byte(0x55);
    let overrides = json!({ target.to_string(): { "code": GAS_LEFT } });
    let cap = 16_777_216u64;
    let left = |out: &str| U256::from_str_radix(out.trim_start_matches("0x"), 16).unwrap();

    let out: String = node
        .request(
            "eth_call",
            rpc_params![json!({"to": target}), "latest", overrides.clone()],
        )
        .await;
    assert!(left(&out) < U256::from(cap), "{out}");
    // An explicit gas above the cap runs as given (geth skips the check for calls).
    let out: String = node
        .request(
            "eth_call",
            rpc_params![
                json!({"to": target, "gas": "0x1c9c380"}),
                "latest",
                overrides.clone()
            ],
        )
        .await;
    assert!(left(&out) > U256::from(cap), "{out}");

    // eth_simulateV1 without gas: runs with the rest of the block within the RPC gas cap, as
    // geth (execution-apis' Osaka cases record 50M): simulated calls skip the transaction
    // checks, EIP-7825's cap among them.
    let sim: Value = node
        .request(
            "eth_simulateV1",
            rpc_params![
                json!({"blockStateCalls": [{"stateOverrides": overrides, "calls": [{"to": target}]}]}),
                "latest"
            ],
        )
        .await;
    let call = &sim[0]["calls"][0];
    assert_eq!(call["status"], "0x1", "{call}");
    let gas_left = left(call["returnData"].as_str().unwrap());
    assert!(gas_left > U256::from(cap), "{call}");
    assert!(gas_left < U256::from(30_000_000u64), "{call}");

    // The pool refuses a transaction over the cap with geth's words.
    let raw = signed_tx(
        &account(0),
        0,
        alloy_primitives::TxKind::Call(target),
        U256::ZERO,
        Bytes::new(),
        cap + 1,
    );
    let (code, message) = error_of(&node, "eth_sendRawTransaction", json!([raw])).await;
    assert_eq!(code, -32000);
    assert_eq!(
        message,
        format!(
            "transaction gas limit too high (cap: {cap}, tx: {})",
            cap + 1
        )
    );
}

#[tokio::test]
async fn execution_apis_methods_answer_as_the_specification() {
    let node = TestNode::start().await;
    let me = account(0);
    let hash: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&me, 0, Address::repeat_byte(1), 1)],
        )
        .await;
    node.wait_receipt(hash).await;

    // eth_getStorageValues: short slot forms, lowercase addresses, capped.
    let karma = l2node_node::constants::DEV_KARMA_ADDRESS;
    let values: Value = node
        .request(
            "eth_getStorageValues",
            rpc_params![
                json!({ karma.to_string(): ["0x0", "0x1"], me.address().to_string(): ["0x0"] })
            ],
        )
        .await;
    assert_eq!(values[format!("{karma:#x}")].as_array().unwrap().len(), 2);
    assert_eq!(
        values[format!("{:#x}", me.address())][0],
        format!("{:#x}", B256::ZERO)
    );
    let slots: Vec<String> = (0..1025).map(|i| format!("{i:#x}")).collect();
    let (code, message) = error_of(
        &node,
        "eth_getStorageValues",
        json!([{ karma.to_string(): slots }]),
    )
    .await;
    assert_eq!(code, -32602);
    assert!(
        message.starts_with("too many slots (max 1024)"),
        "{message}"
    );
    let (code, _) = error_of(&node, "eth_getStorageValues", json!([{}])).await;
    assert_eq!(code, -32602);

    let base_fee: String = node.request("eth_baseFee", rpc_params![]).await;
    assert_eq!(base_fee, "0x0");
    let caps: Value = node.request("eth_capabilities", rpc_params![]).await;
    assert_eq!(caps["head"]["number"], "0x1");
    for kind in ["state", "tx", "logs", "receipts", "blocks", "stateproofs"] {
        assert_eq!(
            caps[kind],
            json!({"disabled": false, "oldestBlock": "0x0"}),
            "{kind}"
        );
    }

    // eth_getProof: the block defaults to latest; a short key is echoed as a quantity.
    let proof: Value = node
        .request("eth_getProof", rpc_params![karma, ["0x1"]])
        .await;
    assert_eq!(proof["storageProof"][0]["key"], "0x1");

    // eth_getLogs past the head: geth's refusal.
    let (code, message) = error_of(
        &node,
        "eth_getLogs",
        json!([{"fromBlock": "0x0", "toBlock": "0x10"}]),
    )
    .await;
    assert_eq!(
        (code, message.as_str()),
        (-32602, "block range extends beyond current head block")
    );

    // An unknown transaction: null.
    let raw: Value = node
        .request("debug_getRawTransaction", rpc_params![B256::repeat_byte(9)])
        .await;
    assert!(raw.is_null());

    // A queued transaction (nonce gap): txpool_contentFrom and txpool_inspect show it, and
    // eth_sendRawTransactionSync times out on it with code 4 and the hash.
    let gap = transfer(&me, 5, Address::repeat_byte(2), 3);
    let (code, message, data) = match node
        .http
        .request::<Value, _>("eth_sendRawTransactionSync", rpc_params![gap, 200])
        .await
    {
        Err(jsonrpsee::core::client::Error::Call(e)) => (
            e.code(),
            e.message().to_owned(),
            e.data().map(|d| d.get().to_owned()),
        ),
        other => panic!("{other:?}"),
    };
    assert_eq!(code, 4);
    assert!(message.contains("wasn't processed in 0.2s"), "{message}");
    let content: Value = node
        .request("txpool_contentFrom", rpc_params![me.address()])
        .await;
    let queued = &content["queued"]["5"];
    assert_eq!(
        data,
        Some(format!("\"{}\"", queued["hash"].as_str().unwrap()))
    );
    assert_eq!(content["pending"], json!({}));
    let inspect: Value = node.request("txpool_inspect", rpc_params![]).await;
    assert_eq!(
        inspect["queued"][me.address().to_checksum(None)]["5"],
        format!(
            "{}: 3 wei + 21000 gas \u{d7} 1000000000 wei",
            Address::repeat_byte(2).to_checksum(None)
        )
    );

    // eth_sendRawTransactionSync: the receipt of a transaction that is mined.
    let receipt: Value = node
        .request(
            "eth_sendRawTransactionSync",
            rpc_params![transfer(&me, 1, Address::repeat_byte(1), 1)],
        )
        .await;
    assert_eq!(receipt["status"], "0x1");
}

#[tokio::test]
async fn refused_blocks_are_kept_for_debug_get_bad_blocks() {
    let node = TestNode::start().await;
    let receipt: Value = node
        .request(
            "eth_sendRawTransactionSync",
            rpc_params![transfer(&account(0), 0, Address::repeat_byte(1), 1)],
        )
        .await;
    assert_eq!(receipt["blockNumber"], "0x1");
    let raw: Bytes = node.request("debug_getRawBlock", rpc_params!["0x1"]).await;
    // Block 1 again, as block 2 of the chain: the wrong parent and number.
    let mut block: alloy_consensus::Block<TxEnvelope> =
        alloy_rlp::Decodable::decode(&mut raw.as_ref()).unwrap();
    let chain = node.handle.as_ref().unwrap().chain.clone();
    block.header.parent_hash = chain.head().hash;
    block.header.number = 2;
    let bad = alloy_rlp::encode(&block);
    assert!(l2node_node::sync::import_raw(&chain, &bad).is_err());
    let bad_blocks: Value = node.request("debug_getBadBlocks", rpc_params![]).await;
    assert_eq!(bad_blocks.as_array().unwrap().len(), 1);
    assert_eq!(
        bad_blocks[0]["hash"],
        format!("{:#x}", block.header.hash_slow())
    );
    assert_eq!(bad_blocks[0]["block"]["number"], "0x2");
    assert_eq!(
        bad_blocks[0]["rlp"],
        format!("0x{}", alloy_primitives::hex::encode(&bad))
    );
}

#[tokio::test]
async fn testing_build_block_builds_without_moving_the_head() {
    let node = TestNode::start().await;
    let receipt: Value = node
        .request(
            "eth_sendRawTransactionSync",
            rpc_params![transfer(&account(0), 0, Address::repeat_byte(1), 1)],
        )
        .await;
    let head: Value = node
        .request("eth_getBlockByNumber", rpc_params!["latest", false])
        .await;
    assert_eq!(head["hash"], receipt["blockHash"]);
    let attributes = json!({
        "timestamp": "0xffffffff",
        "prevRandao": B256::repeat_byte(3),
        "suggestedFeeRecipient": Address::repeat_byte(4),
        "withdrawals": [],
        "parentBeaconBlockRoot": B256::ZERO,
    });
    let tx = transfer(&account(1), 0, Address::repeat_byte(2), 5);
    let built: Value = node
        .request(
            "testing_buildBlockV1",
            rpc_params![
                head["hash"].clone(),
                attributes.clone(),
                [tx.clone()],
                "0x1234"
            ],
        )
        .await;
    let payload = &built["executionPayload"];
    assert_eq!(payload["parentHash"], head["hash"]);
    assert_eq!(payload["blockNumber"], "0x2");
    assert_eq!(payload["extraData"], "0x1234");
    assert_eq!(
        payload["feeRecipient"],
        format!("{:#x}", Address::repeat_byte(4))
    );
    assert_eq!(payload["transactions"], json!([tx]));
    assert_eq!(payload["gasUsed"], "0x5208");
    assert_ne!(payload["stateRoot"], head["stateRoot"]);
    assert_eq!(built["blobsBundle"]["blobs"], json!([]));
    assert_eq!(built["shouldOverrideBuilder"], false);
    // Nothing stored: the head and the sender's nonce are as before.
    assert_eq!(node.block_number().await, 1);
    let nonce: String = node
        .request(
            "eth_getTransactionCount",
            rpc_params![account(1).address(), "latest"],
        )
        .await;
    assert_eq!(nonce, "0x0");
    // An empty list builds an empty block; a transaction that cannot go in is refused.
    let empty: Value = node
        .request(
            "testing_buildBlockV1",
            rpc_params![
                head["hash"].clone(),
                attributes.clone(),
                json!([]),
                Value::Null
            ],
        )
        .await;
    assert_eq!(empty["executionPayload"]["transactions"], json!([]));
    let gap = transfer(&account(1), 9, Address::repeat_byte(2), 5);
    let (code, message) = error_of(
        &node,
        "testing_buildBlockV1",
        json!([head["hash"], attributes, [gap], null]),
    )
    .await;
    assert_eq!(code, -32000);
    assert!(message.contains("nonce too high"), "{message}");
}

#[tokio::test]
async fn a_blob_transaction_with_cell_proofs_is_mined_and_imports() {
    use alloy_consensus::{SignableTransaction, TxEip4844};
    use alloy_eips::eip2718::Encodable2718;
    use alloy_eips::eip4844::builder::{SidecarBuilder, SimpleCoder};
    use alloy_eips::eip7594::BlobTransactionSidecarVariant;
    use alloy_signer::SignerSync;

    let node = TestNode::start().await;
    let key = account(2);
    let sidecar = SidecarBuilder::<SimpleCoder>::from_slice(b"a blob on an Osaka chain")
        .build_7594()
        .unwrap();
    let hashes: Vec<B256> = sidecar.versioned_hashes().collect();
    let tx = TxEip4844 {
        chain_id: l2node_node::constants::DEV_CHAIN_ID,
        nonce: 0,
        gas_limit: 21_000,
        max_fee_per_gas: 1_000_000_000,
        max_priority_fee_per_gas: 0,
        to: Address::repeat_byte(9),
        blob_versioned_hashes: hashes,
        max_fee_per_blob_gas: 1_000_000_000,
        ..Default::default()
    }
    .with_sidecar(BlobTransactionSidecarVariant::Eip7594(sidecar));
    let signature = key.sign_hash_sync(&tx.signature_hash()).unwrap();
    let raw: Bytes = TxEnvelope::from(tx.into_signed(signature))
        .encoded_2718()
        .into();
    let receipt: Value = node
        .request("eth_sendRawTransactionSync", rpc_params![raw])
        .await;
    assert_eq!(receipt["status"], "0x1");
    assert_eq!(receipt["blobGasUsed"], "0x20000");
    let block: Value = node
        .request(
            "eth_getBlockByNumber",
            rpc_params![receipt["blockNumber"].clone(), false],
        )
        .await;
    assert_eq!(block["blobGasUsed"], "0x20000");
    // The block as stored and served (without the blobs) imports into a fresh chain.
    let raw_block: Bytes = node
        .request(
            "debug_getRawBlock",
            rpc_params![receipt["blockNumber"].clone()],
        )
        .await;
    let dir = tempfile::tempdir().unwrap();
    let spec = node.handle.as_ref().unwrap().chain.spec();
    let fresh = l2node_node::chain::open_chain(dir.path(), spec).unwrap();
    assert!(matches!(
        l2node_node::sync::import_raw(&fresh, &raw_block).unwrap(),
        l2node_node::sync::Imported::New(1)
    ));
}

/// EIP-712's own example (the `Mail` message), whose signing hash the EIP gives.
const EIP712_MAIL: &str = r#"{
  "types": {
    "EIP712Domain": [
      {"name": "name", "type": "string"}, {"name": "version", "type": "string"},
      {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}
    ],
    "Person": [{"name": "name", "type": "string"}, {"name": "wallet", "type": "address"}],
    "Mail": [
      {"name": "from", "type": "Person"}, {"name": "to", "type": "Person"},
      {"name": "contents", "type": "string"}
    ]
  },
  "primaryType": "Mail",
  "domain": {
    "name": "Ether Mail", "version": "1", "chainId": 1,
    "verifyingContract": "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"
  },
  "message": {
    "from": {"name": "Cow", "wallet": "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},
    "to": {"name": "Bob", "wallet": "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},
    "contents": "Hello, Bob!"
  }
}"#;

#[tokio::test]
async fn sign_typed_data_v4_signs_the_eip712_hash() {
    let node = dev_node().await;
    let from = account(0).address();
    let hash: B256 = "0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2"
        .parse()
        .unwrap();
    // As an object (cast) and as its JSON text (ethers, viem): the same signature.
    let as_object: Value = serde_json::from_str(EIP712_MAIL).unwrap();
    let sig: Bytes = node
        .request("eth_signTypedData_v4", rpc_params![from, as_object])
        .await;
    let again: Bytes = node
        .request("eth_signTypedData_v4", rpc_params![from, EIP712_MAIL])
        .await;
    assert_eq!(sig, again);
    let sig = Signature::try_from(sig.as_ref()).unwrap();
    assert_eq!(sig.recover_address_from_prehash(&hash).unwrap(), from);

    let (code, message) =
        error_of(&node, "eth_signTypedData_v4", json!([from, {"types": {}}])).await;
    assert_eq!(code, -32602);
    assert!(message.contains("typedData"), "{message}");
}

/// eth_call and eth_estimateGas answers kept for the head (`--rpc-call-cache-size`) are never
/// given at another block: the same request after a new head, or at an older block, runs there.
/// The client sends the same params each time, so the `latest` calls go through the answers
/// kept under the params as sent, across the new heads.
#[tokio::test]
async fn a_call_asked_again_follows_the_head() {
    let node = dev_node().await;
    let from = account(0).address();
    let to = Address::repeat_byte(7);
    // Init code returning BALANCE(to): PUSH20 to, BALANCE, MSTORE at 0, RETURN 32 bytes.
    let code = format!(
        "0x73{}3160005260206000f3",
        alloy_primitives::hex::encode(to)
    );
    let balance = |block: Value| {
        let code = code.clone();
        let node = &node;
        async move {
            let out: Bytes = node
                .request("eth_call", rpc_params![json!({"data": code}), block])
                .await;
            U256::from_be_slice(&out)
        }
    };
    // `to` pays 3 wei (a price given, so its balance is checked): refused while it holds
    // nothing, 21,000 gas once it does.
    let estimate = json!({"from": to, "to": from, "value": "0x3", "gasPrice": "0x0"});

    assert_eq!(balance(json!("latest")).await, U256::ZERO);
    assert_eq!(balance(json!("latest")).await, U256::ZERO);
    let (code_, message) = error_of(&node, "eth_estimateGas", json!([estimate])).await;
    assert_eq!(code_, -32000, "{message}");
    let (_, first) = send_unlocked(&node, from).await;
    assert_eq!(balance(json!("latest")).await, U256::from(5));
    assert_eq!(balance(json!("latest")).await, U256::from(5));
    let gas: U256 = node
        .request("eth_estimateGas", rpc_params![estimate.clone()])
        .await;
    assert_eq!(gas, U256::from(21_000));
    send_unlocked(&node, from).await;
    assert_eq!(balance(json!("latest")).await, U256::from(10));
    assert_eq!(balance(first["blockNumber"].clone()).await, U256::from(5));
    assert_eq!(balance(json!("0x0")).await, U256::ZERO);
    assert_eq!(balance(json!("latest")).await, U256::from(10));
}

/// The answer to a JSON-RPC message POSTed as is to the node's HTTP port, as sent.
async fn post_raw(node: &TestNode, body: &str) -> String {
    let headers = [("Content-Type", "application/json")];
    let reply = crate::wire::raw::raw_http(node.http_addr, "POST", &headers, body.as_bytes()).await;
    String::from_utf8(reply.body).unwrap()
}

/// The answer to a JSON-RPC message POSTed as is to the node's HTTP port.
async fn post_json(node: &TestNode, body: &str) -> Value {
    serde_json::from_str(&post_raw(node, body).await).unwrap()
}

/// The light reads the dispatcher answers itself (eth_getBalance and eth_getTransactionCount
/// with their params in a common shape) read byte for byte as the methods' own answers, alone
/// and in a batch beside other calls, errors and a notification. The methods' own answers are
/// asked for with the address spelled with an escape (`\u0030x...`), which jsonrpsee reads as the
/// same address and the dispatcher leaves to it.
#[tokio::test(flavor = "multi_thread")]
async fn a_quick_read_reads_as_the_methods_answer() {
    let node = dev_node().await;
    let from = account(0).address();
    send_unlocked(&node, from).await;
    let head = format!("{:#x}", node.block_number().await);
    let escaped = |a: &str| format!("\\u0030{}", &a[1..]);
    let mut calls = Vec::new();
    for address in [from.to_string(), Address::repeat_byte(7).to_string()] {
        for block in [
            None,
            Some("latest"),
            Some("pending"),
            Some("0x0"),
            Some(head.as_str()),
        ] {
            for method in ["eth_getBalance", "eth_getTransactionCount"] {
                let params = |a: &str| match block {
                    None => format!(r#"["{a}"]"#),
                    Some(b) => format!(r#"["{a}","{b}"]"#),
                };
                calls.push((method, params(&address), params(&escaped(&address))));
            }
        }
    }
    let message = |id: &str, method: &str, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
    };
    for (method, quick, slow) in &calls {
        for id in ["1", r#""a""#, r#""\u0041""#, "null"] {
            let ours = post_raw(&node, &message(id, method, quick)).await;
            let theirs = post_raw(&node, &message(id, method, slow)).await;
            assert_eq!(ours, theirs, "{method} {quick}");
            assert!(ours.contains(r#""result":"0x"#), "{ours}");
        }
    }
    // A batch: the quick reads beside a call of another method, a call of an unknown block, a
    // bad entry and a notification.
    let batch = |params: &dyn Fn(usize) -> String| {
        let mut entries: Vec<String> = (0..calls.len())
            .map(|i| message(&i.to_string(), calls[i].0, &params(i)))
            .collect();
        entries.push(message("100", "eth_chainId", "[]"));
        entries.push(message(
            "101",
            "eth_getBalance",
            &format!(r#"["{from}","0xffff"]"#),
        ));
        entries.push(r#"{"id":102}"#.to_owned());
        entries.push(r#"{"jsonrpc":"2.0","method":"eth_blockNumber"}"#.to_owned());
        format!("[{}]", entries.join(","))
    };
    let ours = post_raw(&node, &batch(&|i| calls[i].1.clone())).await;
    let theirs = post_raw(&node, &batch(&|i| calls[i].2.clone())).await;
    assert_eq!(ours, theirs);
    // The same over WebSocket.
    let mut ws = crate::wire::raw::Ws::connect(node.ws_addr).await;
    ws.send(&batch(&|i| calls[i].1.clone())).await;
    assert_eq!(
        ws.recv().await,
        serde_json::from_str::<Value>(&ours).unwrap()
    );
    let answers: Vec<Value> = serde_json::from_str(&ours).unwrap();
    assert_eq!(answers.len(), calls.len() + 3);
    assert_eq!(answers[calls.len() + 1]["error"]["code"], -32000, "{ours}");
    assert_eq!(answers[calls.len() + 2]["error"]["code"], -32600, "{ours}");

    // The reads without params, against what the node says elsewhere.
    let number = post_raw(&node, &message("7", "eth_blockNumber", "[]")).await;
    assert_eq!(
        number,
        format!(r#"{{"jsonrpc":"2.0","id":7,"result":"{head}"}}"#)
    );
    let chain: Value = node.request("net_version", rpc_params![]).await;
    let chain_id = post_raw(
        &node,
        r#"{"jsonrpc":"2.0","id":"c","method":"eth_chainId"}"#,
    )
    .await;
    let want: u64 = chain.as_str().unwrap().parse().unwrap();
    assert_eq!(
        chain_id,
        format!(r#"{{"jsonrpc":"2.0","id":"c","result":"{want:#x}"}}"#)
    );
}

/// The same eth_call or eth_estimateGas sent again at one head (answered from the answers kept
/// under its params as sent) reads as the first answer, with the new request's id: a return,
/// a revert with its data and an estimate, over HTTP and WebSocket; and as the same call named
/// by the head's number (kept under its parsed form only).
#[tokio::test(flavor = "multi_thread")]
async fn a_call_sent_again_reads_as_the_first_answer() {
    use crate::wire::raw::Ws;
    let node = dev_node().await;
    let from = account(0).address();
    // Init code returning 32 bytes of 0x2a, and the same reverting with them.
    let (ret, rev) = ("0x602a60005260206000f3", "0x602a60005260206000fd");
    let calls = [
        ("eth_call", json!([{"data": ret}, "latest"])),
        ("eth_call", json!([{"data": rev}])),
        (
            "eth_estimateGas",
            json!([{"from": from, "to": from, "value": "0x1"}]),
        ),
    ];
    let head: Value = node.request("eth_blockNumber", rpc_params![]).await;
    let mut ws = Ws::connect(node.ws_addr).await;
    for (method, params) in calls {
        let mut answers = Vec::new();
        for id in [json!(1), json!("again"), json!(3)] {
            let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            let mut answer = post_json(&node, &body.to_string()).await;
            assert_eq!(answer["id"], id, "{answer}");
            answer["id"] = Value::Null;
            answers.push(answer);
            ws.send(&body.to_string()).await;
            let mut answer = ws.recv().await;
            assert_eq!(answer["id"], id, "{answer}");
            answer["id"] = Value::Null;
            answers.push(answer);
        }
        let mut by_number = params.clone();
        by_number.as_array_mut().unwrap().truncate(1);
        by_number.as_array_mut().unwrap().push(head.clone());
        let body = json!({"jsonrpc": "2.0", "id": null, "method": method, "params": by_number});
        answers.push(post_json(&node, &body.to_string()).await);
        assert!(
            answers.windows(2).all(|w| w[0] == w[1]),
            "{method}: {answers:?}"
        );
        let first = &answers[0];
        match method {
            "eth_estimateGas" => assert_eq!(first["result"], "0x5208", "{first}"),
            _ if params[0]["data"] == ret => {
                assert_eq!(first["result"], format!("0x{}", "00".repeat(31) + "2a"))
            }
            _ => {
                assert_eq!(first["error"]["code"], 3, "{first}");
                assert_eq!(
                    first["error"]["data"],
                    format!("0x{}", "00".repeat(31) + "2a")
                );
            }
        }
    }
}

/// A quick read whose answer is over `--rpc-max-response-size` (here for its long id) gets the
/// limit's error, as the method's own answer would, alone; in a batch, the batch does.
#[tokio::test(flavor = "multi_thread")]
async fn a_quick_read_over_the_response_limit_gets_the_limits_error() {
    let node = TestNode::start_with(|c| c.rpc_server.max_response_body = 200).await;
    let id = "i".repeat(200);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "eth_getBalance",
        "params": [Address::ZERO, "latest"]})
    .to_string();
    let answer = post_json(&node, &body).await;
    assert_eq!(answer["error"]["code"], -32005, "{answer}");
    assert_eq!(answer["id"], id.as_str(), "{answer}");
    let answer = post_json(&node, &format!("[{body}]")).await;
    assert_eq!(answer["error"]["code"], -32005, "{answer}");
    let short = body.replace(&id, "1");
    let answer = post_json(&node, &short).await;
    assert_eq!(answer["result"], "0x0", "{answer}");
}

/// An answer kept under its params as sent by one server is not given by a server that does
/// not serve the method: with ETH on WebSocket only, the HTTP port still refuses eth_call, and
/// the reads the dispatcher answers itself.
#[tokio::test(flavor = "multi_thread")]
async fn a_kept_call_is_answered_only_where_its_namespace_is_served() {
    use crate::wire::raw::Ws;
    let node = TestNode::start_with(|c| {
        c.rpc_server.http_apis = vec![l2node_rpc::Namespace::Net];
    })
    .await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "eth_call",
        "params": [{"data": "0x602a60005260206000f3"}, "latest"]})
    .to_string();
    let mut ws = Ws::connect(node.ws_addr).await;
    for _ in 0..2 {
        ws.send(&body).await;
        let answer = ws.recv().await;
        assert!(answer["result"].is_string(), "{answer}");
    }
    // Nor the reads the dispatcher answers itself.
    let balance = json!({"jsonrpc": "2.0", "id": 2, "method": "eth_getBalance",
        "params": [Address::ZERO, "latest"]})
    .to_string();
    let number = r#"{"jsonrpc":"2.0","id":3,"method":"eth_blockNumber"}"#;
    for body in [
        body.clone(),
        balance.clone(),
        number.to_owned(),
        format!("[{balance}]"),
    ] {
        let answer = post_json(&node, &body).await;
        let answer = answer.get(0).unwrap_or(&answer);
        assert!(answer["result"].is_null(), "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("--rpc-http-api"), "{answer}");
    }
}
