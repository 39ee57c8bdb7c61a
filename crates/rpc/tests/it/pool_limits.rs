//! The pool cannot be jammed by free spam (issue "The pool can be jammed for good"): per-sender
//! and global limits, the cumulative cost of a sender, eviction by sender share at price 0, the
//! size check before decoding, and a journal that does not bring junk back.

use alloy_consensus::TxEip1559;
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use alloy_signer_local::PrivateKeySigner;
use jsonrpsee::{
    core::{client::ClientT, params::BatchRequestBuilder, ClientError},
    rpc_params,
};
use serde_json::Value;

use crate::common::{account, dev_config, signed_tx, transfer, TestNode};

/// A transfer paying nothing (the dev chain's base fee is 0).
fn free_transfer(key: &PrivateKeySigner, nonce: u64) -> Bytes {
    let tx = TxEip1559 {
        chain_id: l2node_node::constants::DEV_CHAIN_ID,
        nonce,
        gas_limit: 21_000,
        max_fee_per_gas: 0,
        max_priority_fee_per_gas: 0,
        to: TxKind::Call(Address::repeat_byte(0x77)),
        value: U256::ZERO,
        input: Bytes::new(),
        access_list: Default::default(),
    };
    l2node_node::test_utils::sign(key, tx).encoded_2718().into()
}

/// `(pending, queued)` from `txpool_status`.
async fn status(node: &TestNode) -> (u64, u64) {
    let s: Value = node.request("txpool_status", rpc_params![]).await;
    let n = |v: &Value| u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16);
    (n(&s["pending"]).unwrap(), n(&s["queued"]).unwrap())
}

/// The error message of a call that must fail.
async fn send_err(node: &TestNode, raw: Bytes) -> String {
    match node
        .http
        .request::<B256, _>("eth_sendRawTransaction", rpc_params![raw])
        .await
    {
        Err(ClientError::Call(e)) => e.message().to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn free_flood_behind_a_nonce_gap_is_bounded_and_not_restored() {
    // On a chain without Karma: the pool's own bounds (with Karma, a sender without it gets no
    // free transaction in at all; see `karma::free_flood_without_karma_gets_nothing_in`).
    let node = TestNode::start_with(|c| c.spec = crate::common::plain_dev_spec()).await;
    // A fresh key without balance; nonce 0 is never sent, so nothing can ever execute.
    let spammer = PrivateKeySigner::from_bytes(&B256::repeat_byte(0x5a)).unwrap();
    let mut accepted = 0;
    for chunk in (1..=5000u64).collect::<Vec<_>>().chunks(1000) {
        let mut batch = BatchRequestBuilder::new();
        for n in chunk {
            batch
                .insert(
                    "eth_sendRawTransaction",
                    rpc_params![free_transfer(&spammer, *n)],
                )
                .unwrap();
        }
        let res = node.http.batch_request::<B256>(batch).await.unwrap();
        accepted += res.num_successful_calls();
    }
    let limit = l2node_node::constants::POOL_ACCOUNT_QUEUE as u64;
    assert_eq!(accepted as u64, limit);
    assert_eq!(status(&node).await, (0, limit));

    // The pool still serves everybody else.
    let hash: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(0), 0, Address::repeat_byte(0x42), 1)],
        )
        .await;
    assert_eq!(node.wait_receipt(hash).await["status"], "0x1");

    // After a restart the junk is not back.
    let dir = node.stop().await;
    let mut cfg = dev_config(dir.path(), std::time::Duration::ZERO);
    cfg.spec = crate::common::plain_dev_spec();
    let node = TestNode::start_in(dir, cfg).await;
    assert_eq!(status(&node).await, (0, 0));
    node.stop().await;
}

#[tokio::test]
async fn transactions_beyond_the_senders_balance_together_are_refused() {
    // No miner: the first transaction stays in the pool while the second arrives.
    let node = TestNode::start_with(|c| c.signer = None).await;
    let key = account(3);
    let eth = U256::from(10u64).pow(U256::from(18));
    // Dev accounts hold 10,000 ether: each transfer alone is affordable, both are not.
    let big = |nonce| {
        signed_tx(
            &key,
            nonce,
            TxKind::Call(Address::repeat_byte(0x42)),
            U256::from(6_000) * eth,
            Bytes::new(),
            21_000,
        )
    };
    let _: B256 = node
        .request("eth_sendRawTransaction", rpc_params![big(0)])
        .await;
    let err = send_err(&node, big(1)).await;
    assert!(
        err.starts_with("insufficient funds for gas * price + value: balance "),
        "{err}"
    );
    assert!(err.contains("overshot"), "{err}");
    // Queued behind a gap counts too.
    let err = send_err(&node, big(5)).await;
    assert!(err.contains("overshot"), "{err}");
    assert_eq!(status(&node).await, (1, 0));
    node.stop().await;
}

#[tokio::test]
async fn full_pool_of_free_transactions_still_admits_another_sender() {
    let node = TestNode::start_with(|c| {
        c.signer = None;
        c.pool.max_txs = 32;
    })
    .await;
    let whale = account(1);
    let mut batch = BatchRequestBuilder::new();
    for n in 0..32 {
        batch
            .insert(
                "eth_sendRawTransaction",
                rpc_params![free_transfer(&whale, n)],
            )
            .unwrap();
    }
    let res = node.http.batch_request::<B256>(batch).await.unwrap();
    assert_eq!(res.num_successful_calls(), 32);
    assert_eq!(status(&node).await, (32, 0));
    // Nobody can outbid a price of 0: the room comes from the sender above its share.
    let _: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![free_transfer(&account(2), 0)],
        )
        .await;
    assert_eq!(status(&node).await, (32, 0));
    let content: Value = node.request("txpool_content", rpc_params![]).await;
    let pending = content["pending"].as_object().unwrap();
    assert_eq!(pending.len(), 2, "{content}");
    // The whale cannot take the room back.
    assert_eq!(
        send_err(&node, free_transfer(&whale, 31)).await,
        "txpool is full"
    );
    node.stop().await;
}

#[tokio::test]
async fn oversized_garbage_is_refused_before_decoding() {
    let node = TestNode::start().await;
    let mut junk = vec![0xab; 200 * 1024];
    junk[0] = 0xf9;
    let err = send_err(&node, junk.into()).await;
    assert!(
        err.starts_with("oversized data: transaction size 204800"),
        "{err}"
    );
    assert!(!err.contains("rlp"), "{err}");
    node.stop().await;
}
