//! The Karma contracts' behaviour, through a real node: the predeployed state, the soulbound
//! token's roles and slashing, the tier table's lookups and validation, and a tier update
//! taking effect from the next epoch.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use alloy_primitives::{Address, Bytes, TxKind, U256};
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::{SolCall, SolEvent};
use jsonrpsee::{core::client::ClientT, rpc_params};
use l2node_node::{
    chainspec::ChainSpec,
    dev,
    karma::{
        config::{default_tier_table, ONE_KARMA},
        contracts::{IKarma, IKarmaTiers},
    },
};

use crate::common::{account, dev_config, signed_tx, TestNode};

fn karma() -> Address {
    dev::dev_karma_config().karma_contract
}

fn tiers() -> Address {
    dev::dev_karma_config().tiers_contract
}

async fn call<C: SolCall>(node: &TestNode, to: Address, call: C) -> Result<C::Return, String> {
    let out: Result<Bytes, _> = node
        .http
        .request(
            "eth_call",
            rpc_params![serde_json::json!({"to": to, "data": Bytes::from(call.abi_encode())})],
        )
        .await;
    let out = out.map_err(|e| e.to_string())?;
    Ok(C::abi_decode_returns(&out).unwrap())
}

/// Sends `call` from `key` (premium, so it never depends on the sender's quota) and returns
/// the receipt.
async fn send<C: SolCall>(
    node: &TestNode,
    key: &PrivateKeySigner,
    to: Address,
    call: C,
) -> serde_json::Value {
    let nonce: U256 = node
        .request(
            "eth_getTransactionCount",
            rpc_params![key.address(), "pending"],
        )
        .await;
    let tx = alloy_consensus::TxEip1559 {
        chain_id: l2node_node::constants::DEV_CHAIN_ID,
        nonce: nonce.to(),
        gas_limit: 1_000_000,
        max_fee_per_gas: 20_000_000_000,
        max_priority_fee_per_gas: 20_000_000_000,
        to: TxKind::Call(to),
        value: U256::ZERO,
        input: call.abi_encode().into(),
        access_list: Default::default(),
    };
    let raw: Bytes =
        alloy_eips::eip2718::Encodable2718::encoded_2718(&l2node_node::test_utils::sign(key, tx))
            .into();
    let hash: alloy_primitives::B256 = node
        .request("eth_sendRawTransaction", rpc_params![raw])
        .await;
    node.wait_receipt(hash).await
}

fn karma_of(i: usize) -> U256 {
    U256::from(dev::DEV_ACCOUNT_KARMA[i]) * ONE_KARMA
}

#[tokio::test(flavor = "multi_thread")]
async fn karma_token_is_soulbound_with_operator_mint_and_slashing() {
    let node = TestNode::start().await;
    let k = karma();
    assert_eq!(call(&node, k, IKarma::nameCall {}).await.unwrap(), "Karma");
    assert_eq!(
        call(&node, k, IKarma::symbolCall {}).await.unwrap(),
        "KARMA"
    );
    assert_eq!(call(&node, k, IKarma::decimalsCall {}).await.unwrap(), 18);
    for i in 0..10 {
        let b = call(
            &node,
            k,
            IKarma::balanceOfCall {
                account: account(i).address(),
            },
        )
        .await
        .unwrap();
        assert_eq!(b, karma_of(i), "account {i}");
    }
    let supply: U256 = (0..10).map(karma_of).fold(U256::ZERO, |a, b| a + b);
    assert_eq!(
        call(&node, k, IKarma::totalSupplyCall {}).await.unwrap(),
        supply
    );

    // Soulbound.
    let err = call(
        &node,
        k,
        IKarma::transferCall {
            to: Address::ZERO,
            amount: U256::from(1),
        },
    )
    .await
    .unwrap_err();
    assert!(err.contains("revert"), "{err}");
    let r = send(
        &node,
        &account(0),
        k,
        IKarma::approveCall {
            spender: Address::ZERO,
            amount: U256::from(1),
        },
    )
    .await;
    assert_eq!(r["status"], "0x0");

    // Only an operator mints (the dev sequencer is the dev chain's operator and slasher).
    let seq = dev::dev_sequencer();
    let who = account(9).address();
    let r = send(
        &node,
        &account(0),
        k,
        IKarma::mintCall {
            to: who,
            amount: ONE_KARMA,
        },
    )
    .await;
    assert_eq!(r["status"], "0x0", "a non-operator cannot mint");
    let amount = ONE_KARMA * U256::from(3);
    let r = send(&node, &seq, k, IKarma::mintCall { to: who, amount }).await;
    assert_eq!(r["status"], "0x1");
    assert_eq!(
        call(&node, k, IKarma::balanceOfCall { account: who })
            .await
            .unwrap(),
        amount
    );

    // Slash: half of 3 KARMA is 1.5; of 1.5 KARMA half is below 1, so 1 KARMA; then all of 0.5.
    let r = send(&node, &account(0), k, IKarma::slashCall { account: who }).await;
    assert_eq!(r["status"], "0x0", "a non-slasher cannot slash");
    let half = ONE_KARMA / U256::from(2);
    for (burnt, left) in [
        (ONE_KARMA + half, ONE_KARMA + half),
        (ONE_KARMA, half),
        (half, U256::ZERO),
    ] {
        let r = send(&node, &seq, k, IKarma::slashCall { account: who }).await;
        assert_eq!(r["status"], "0x1");
        let log = r["logs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["topics"][0] == serde_json::json!(IKarma::AccountSlashed::SIGNATURE_HASH))
            .expect("AccountSlashed emitted");
        assert_eq!(
            log["data"],
            serde_json::json!(Bytes::from(burnt.to_be_bytes::<32>().to_vec()))
        );
        assert_eq!(
            call(&node, k, IKarma::balanceOfCall { account: who })
                .await
                .unwrap(),
            left
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tier_table_lookups_and_validation() {
    let node = TestNode::start().await;
    let t = tiers();
    let table = default_tier_table();
    assert_eq!(
        call(&node, t, IKarmaTiers::getTierCountCall {})
            .await
            .unwrap() as usize,
        table.len()
    );
    let second = call(&node, t, IKarmaTiers::getTierByIdCall { id: 1 })
        .await
        .unwrap();
    assert_eq!(
        (
            second.name.as_str(),
            second.txPerEpoch,
            second.minKarma,
            second.maxKarma
        ),
        ("entry", 2, ONE_KARMA, ONE_KARMA)
    );
    assert!(call(&node, t, IKarmaTiers::getTierByIdCall { id: 200 })
        .await
        .is_err());
    let one = U256::from(1);
    for (balance, id) in [
        (U256::ZERO, 0),
        (ONE_KARMA - one, 0),
        (ONE_KARMA, 1),
        (ONE_KARMA + one, 2),
        (U256::from(50) * ONE_KARMA - one, 2),
        (U256::from(50) * ONE_KARMA, 3),
        (U256::from(10_000_000) * ONE_KARMA, 10),
        (U256::MAX, 10),
    ] {
        let got = call(
            &node,
            t,
            IKarmaTiers::getTierIdByKarmaBalanceCall { balance },
        )
        .await
        .unwrap();
        assert_eq!(got, id, "balance {balance}");
    }

    // updateTiers: owner only, and each rule of the table.
    let owner = dev::dev_sequencer();
    let tier = |min: u64, max: U256, name: &str| IKarmaTiers::Tier {
        minKarma: U256::from(min),
        maxKarma: max,
        name: name.into(),
        txPerEpoch: 1,
    };
    let bad: Vec<(&str, Vec<IKarmaTiers::Tier>)> = vec![
        ("empty", vec![]),
        ("first not at 0", vec![tier(1, U256::MAX, "a")]),
        (
            "gap",
            vec![tier(0, U256::from(9), "a"), tier(11, U256::MAX, "b")],
        ),
        (
            "max below min",
            vec![tier(0, U256::from(9), "a"), tier(10, U256::from(5), "b")],
        ),
        ("empty name", vec![tier(0, U256::MAX, "")]),
        ("long name", vec![tier(0, U256::MAX, &"x".repeat(33))]),
    ];
    for (what, list) in bad {
        let r = send(
            &node,
            &owner,
            t,
            IKarmaTiers::updateTiersCall { tiers: list },
        )
        .await;
        assert_eq!(r["status"], "0x0", "{what} must revert");
    }
    let good = vec![
        tier(0, U256::from(9), "low"),
        tier(10, U256::MAX, &"y".repeat(32)),
    ];
    let r = send(
        &node,
        &account(0),
        t,
        IKarmaTiers::updateTiersCall {
            tiers: good.clone(),
        },
    )
    .await;
    assert_eq!(r["status"], "0x0", "only the owner updates");
    let r = send(
        &node,
        &owner,
        t,
        IKarmaTiers::updateTiersCall { tiers: good },
    )
    .await;
    assert_eq!(r["status"], "0x1");
    assert_eq!(
        r["logs"][0]["topics"][0],
        serde_json::json!(IKarmaTiers::TiersUpdated::SIGNATURE_HASH)
    );
    let chain = node.handle.as_ref().unwrap().chain.clone();
    let state = chain.storage().state_at(None).unwrap();
    let read = l2node_node::karma::contracts::read_tiers(&state, t).unwrap();
    assert_eq!(
        read.iter().map(|t| t.name.len()).collect::<Vec<_>>(),
        vec![3, 32]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tier_update_applies_from_the_next_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let mut karma = dev::dev_karma_config();
    karma.epoch_length = 4;
    karma.epoch_origin = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut cfg = dev_config(dir.path(), Duration::ZERO);
    cfg.spec = std::sync::Arc::new(
        ChainSpec::from_genesis(dev::dev_genesis_with_karma(0, karma)).unwrap(),
    );
    let node = TestNode::start_in(dir, cfg).await;
    let who = account(9).address();
    let status = |n: &TestNode| {
        let n = n.http.clone();
        async move {
            let s: serde_json::Value = n
                .request("l2_getKarmaStatus", rpc_params![who])
                .await
                .unwrap();
            s
        }
    };
    assert_eq!(status(&node).await["tier"]["name"], "none");
    // One tier for everybody, 5 free transactions an epoch.
    let everyone = vec![IKarmaTiers::Tier {
        minKarma: U256::ZERO,
        maxKarma: U256::MAX,
        name: "all".into(),
        txPerEpoch: 5,
    }];
    let r = send(
        &node,
        &dev::dev_sequencer(),
        tiers(),
        IKarmaTiers::updateTiersCall { tiers: everyone },
    )
    .await;
    assert_eq!(r["status"], "0x1");
    let s = status(&node).await;
    assert_eq!(s["tier"]["name"], "none", "not before the epoch ends: {s}");
    let ends = u64::from_str_radix(
        s["epochEndsAt"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap();
    while SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        < ends
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let s = status(&node).await;
    assert_eq!(
        (
            s["tier"]["name"].as_str(),
            s["quota"].as_str(),
            s["feeState"].as_str()
        ),
        (Some("all"), Some("0x5"), Some("gasless")),
        "{s}"
    );
    // And a block of the new epoch records them: a free transaction is admitted and counted.
    let raw = signed_tx(
        &account(9),
        0,
        TxKind::Call(Address::ZERO),
        U256::ZERO,
        Bytes::new(),
        21_000,
    );
    let hash: alloy_primitives::B256 = node
        .request("eth_sendRawTransaction", rpc_params![raw])
        .await;
    node.wait_receipt(hash).await;
    assert_eq!(status(&node).await["used"], "0x1");
}
