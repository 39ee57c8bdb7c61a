//! eth_getProof at earlier blocks: every answer verifies against that block's state root.

use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use alloy_trie::{proof::verify_proof, Nibbles, TrieAccount};
use jsonrpsee::rpc_params;
use l2node_node::constants::DEV_KARMA_ADDRESS;
use l2node_rpc::Namespace;
use serde_json::Value;

use crate::common::{account, transfer, TestNode};

/// Checks the account proof (and each storage proof) of `proof` against `state_root`, and
/// returns the proved balance.
fn verified(proof: &Value, state_root: B256) -> U256 {
    let address: Address = serde_json::from_value(proof["address"].clone()).unwrap();
    let nodes: Vec<Bytes> = serde_json::from_value(proof["accountProof"].clone()).unwrap();
    let balance: U256 = serde_json::from_value(proof["balance"].clone()).unwrap();
    let nonce: U256 = serde_json::from_value(proof["nonce"].clone()).unwrap();
    let code_hash: B256 = serde_json::from_value(proof["codeHash"].clone()).unwrap();
    let storage_root: B256 = serde_json::from_value(proof["storageHash"].clone()).unwrap();
    let leaf = TrieAccount {
        nonce: nonce.to(),
        balance,
        storage_root,
        code_hash,
    };
    let exists = leaf != TrieAccount::default();
    verify_proof(
        state_root,
        Nibbles::unpack(keccak256(address)),
        exists.then(|| alloy_rlp::encode(leaf)),
        &nodes,
    )
    .unwrap_or_else(|e| panic!("account proof of {address}: {e}"));
    for slot in proof["storageProof"].as_array().unwrap() {
        let key: B256 = serde_json::from_value(slot["key"].clone()).unwrap();
        let value: U256 = serde_json::from_value(slot["value"].clone()).unwrap();
        let nodes: Vec<Bytes> = serde_json::from_value(slot["proof"].clone()).unwrap();
        verify_proof(
            storage_root,
            Nibbles::unpack(keccak256(key)),
            (!value.is_zero()).then(|| alloy_rlp::encode(value)),
            &nodes,
        )
        .unwrap_or_else(|e| panic!("storage proof of {address} slot {key}: {e}"));
    }
    balance
}

#[tokio::test]
async fn proofs_at_earlier_blocks_verify_against_their_state_roots() {
    let node = TestNode::start().await;
    let sender = account(0);
    let recipient = Address::repeat_byte(0x77);
    let mut blocks = Vec::new();
    for nonce in 0..3 {
        let raw = transfer(&sender, nonce, recipient, 1_000);
        let hash: B256 = node
            .request("eth_sendRawTransaction", rpc_params![raw])
            .await;
        let receipt = node.wait_receipt(hash).await;
        blocks.push(receipt["blockNumber"].as_str().unwrap().to_string());
    }
    let before: u64 = u64::from_str_radix(blocks[0].trim_start_matches("0x"), 16).unwrap() - 1;
    let mut tags = vec![format!("{before:#x}")];
    tags.extend(blocks);
    let slots = [B256::ZERO, B256::with_last_byte(1), B256::with_last_byte(2)];
    let mut previous = None;
    for (i, tag) in tags.iter().enumerate() {
        let header: Value = node
            .request("eth_getBlockByNumber", rpc_params![tag, false])
            .await;
        let root: B256 = serde_json::from_value(header["stateRoot"].clone()).unwrap();
        let proof: Value = node
            .request("eth_getProof", rpc_params![recipient, slots, tag])
            .await;
        assert_eq!(
            verified(&proof, root),
            U256::from(1_000 * i as u64),
            "at {tag}"
        );
        let proof: Value = node
            .request("eth_getProof", rpc_params![sender.address(), slots, tag])
            .await;
        let balance = verified(&proof, root);
        assert_eq!(proof["nonce"], format!("{i:#x}"), "at {tag}");
        if let Some(previous) = previous {
            assert!(balance < previous, "the sender pays at {tag}");
        }
        previous = Some(balance);
        // A contract with storage (the Karma token) proves its slots at every block too.
        let proof: Value = node
            .request("eth_getProof", rpc_params![DEV_KARMA_ADDRESS, slots, tag])
            .await;
        verified(&proof, root);
    }
    node.stop().await;
}

#[tokio::test]
async fn a_pruned_node_answers_within_its_window_and_names_it_beyond() {
    use jsonrpsee::core::client::ClientT;
    let window = l2node_storage::MIN_HISTORY_WINDOW;
    let node = TestNode::start_with(|cfg| {
        cfg.history_window = Some(window);
        cfg.rpc_server.http_apis = vec![Namespace::Eth, Namespace::Ots];
    })
    .await;
    let sender = account(0);
    let recipient = Address::repeat_byte(0x78);
    let mut nonce = 0;
    let mut last = B256::ZERO;
    while node.block_number().await < window + 12 {
        let raw = transfer(&sender, nonce, recipient, 1);
        last = node
            .request("eth_sendRawTransaction", rpc_params![raw])
            .await;
        node.wait_receipt(last).await;
        nonce += 1;
    }
    let head = node.block_number().await;
    let oldest = head - window;
    // Within the window: the state and a proof of that block.
    let tag = format!("{oldest:#x}");
    let header: Value = node
        .request("eth_getBlockByNumber", rpc_params![&tag, false])
        .await;
    let root: B256 = serde_json::from_value(header["stateRoot"].clone()).unwrap();
    let proof: Value = node
        .request(
            "eth_getProof",
            rpc_params![recipient, Vec::<B256>::new(), &tag],
        )
        .await;
    let balance: U256 = node
        .request("eth_getBalance", rpc_params![recipient, &tag])
        .await;
    assert_eq!(verified(&proof, root), balance);
    // Beyond it: -32000 naming the window and the flag; blocks themselves are all kept.
    let before = format!("{:#x}", oldest - 1);
    for (method, params) in [
        ("eth_getBalance", rpc_params![recipient, &before]),
        (
            "eth_call",
            rpc_params![serde_json::json!({"to": recipient}), &before],
        ),
        (
            "eth_getProof",
            rpc_params![recipient, Vec::<B256>::new(), &before],
        ),
    ] {
        let err = node
            .http
            .request::<Value, _>(method, params)
            .await
            .unwrap_err();
        let jsonrpsee::core::client::Error::Call(err) = err else {
            panic!("{method}: {err}")
        };
        assert_eq!(err.code(), -32000, "{method}");
        assert!(
            err.message().contains("--history-window"),
            "{method}: {}",
            err.message()
        );
        assert!(
            err.message().contains(&oldest.to_string()),
            "{method}: {}",
            err.message()
        );
    }
    // Otterscan's searches over the state history: within the window they answer, and a
    // transaction sent before it is the pruned error, not a failure to read block 0.
    let mut oldest_tx = Value::Null;
    for n in oldest + 1..=head {
        let block: Value = node
            .request("eth_getBlockByNumber", rpc_params![format!("{n:#x}"), true])
            .await;
        if let Some(tx) = block["transactions"].as_array().and_then(|t| t.first()) {
            oldest_tx = tx.clone();
            break;
        }
    }
    for (nonce, hash) in [
        (oldest_tx["nonce"].clone(), oldest_tx["hash"].clone()),
        (
            format!("{:#x}", nonce - 1).into(),
            serde_json::to_value(last).unwrap(),
        ),
    ] {
        let found: Value = node
            .request(
                "ots_getTransactionBySenderAndNonce",
                rpc_params![sender.address(), &nonce],
            )
            .await;
        assert_eq!(found, hash, "nonce {nonce}");
    }
    let err = node
        .http
        .request::<Value, _>(
            "ots_getTransactionBySenderAndNonce",
            rpc_params![sender.address(), "0x0"],
        )
        .await
        .unwrap_err();
    let jsonrpsee::core::client::Error::Call(err) = err else {
        panic!("ots_getTransactionBySenderAndNonce: {err}")
    };
    assert_eq!(err.code(), -32000);
    assert!(
        err.message().contains("--history-window"),
        "{}",
        err.message()
    );
    let block: Value = node
        .request("eth_getBlockByNumber", rpc_params!["0x1", false])
        .await;
    assert_eq!(block["number"], "0x1");
    let caps: Value = node.request("eth_capabilities", rpc_params![]).await;
    assert_eq!(caps["state"]["oldestBlock"], tag);
    assert_eq!(caps["stateproofs"]["oldestBlock"], tag);
    assert_eq!(caps["blocks"]["oldestBlock"], "0x0");
    node.stop().await;
}

/// `--rpc-eth-proof-window`: blocks within it are proved against their own state roots (the
/// current trie with the later blocks' changes set back); before it, eth_getProof answers
/// -32000 naming the flag, while the archive state still answers eth_getBalance there.
#[tokio::test]
async fn proofs_are_served_within_the_proof_window_and_refused_before_it() {
    use jsonrpsee::core::client::ClientT;
    let window = 3;
    let node = TestNode::start_with(|cfg| cfg.rpc.eth_proof_window = window).await;
    let sender = account(0);
    let recipient = Address::repeat_byte(0x79);
    for nonce in 0..6 {
        let raw = transfer(&sender, nonce, recipient, 1 + nonce);
        let hash: B256 = node
            .request("eth_sendRawTransaction", rpc_params![raw])
            .await;
        node.wait_receipt(hash).await;
    }
    let head = node.block_number().await;
    let first = head - window;
    for n in first..=head {
        let tag = format!("{n:#x}");
        let header: Value = node
            .request("eth_getBlockByNumber", rpc_params![&tag, false])
            .await;
        let root: B256 = serde_json::from_value(header["stateRoot"].clone()).unwrap();
        for who in [recipient, sender.address()] {
            let proof: Value = node
                .request("eth_getProof", rpc_params![who, Vec::<B256>::new(), &tag])
                .await;
            let balance: U256 = node.request("eth_getBalance", rpc_params![who, &tag]).await;
            assert_eq!(verified(&proof, root), balance, "{who} at block {n}");
        }
    }
    let before = format!("{:#x}", first - 1);
    let err = node
        .http
        .request::<Value, _>(
            "eth_getProof",
            rpc_params![recipient, Vec::<B256>::new(), &before],
        )
        .await
        .unwrap_err();
    let jsonrpsee::core::client::Error::Call(err) = err else {
        panic!("{err}")
    };
    assert_eq!(err.code(), -32000);
    assert!(
        err.message().contains("--rpc-eth-proof-window"),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains(&first.to_string()),
        "{}",
        err.message()
    );
    // The state itself is archived.
    let _: U256 = node
        .request("eth_getBalance", rpc_params![recipient, &before])
        .await;
    let caps: Value = node.request("eth_capabilities", rpc_params![]).await;
    assert_eq!(caps["stateproofs"]["oldestBlock"], format!("{first:#x}"));
    assert_eq!(caps["state"]["oldestBlock"], "0x0");
    node.stop().await;
}
