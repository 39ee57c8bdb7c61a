//! The Karma contracts' behaviour, through a real node: the predeployed state, the soulbound
//! token's roles and slashing, the tier table's lookups and validation, and a tier update
//! taking effect from the next epoch.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use alloy_primitives::{Address, Bytes, TxKind, U256};
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::{SolCall, SolError, SolEvent, SolInterface};
use jsonrpsee::{core::client::ClientT, rpc_params};
use l2node_node::chainspec::ChainSpec;
use l2node_node::dev;
use l2node_node::karma::{
    config::{check_tiers, default_tier_table, ONE_KARMA},
    contracts::{read_balance, read_tiers, IKarma, IKarmaTiers, KarmaTiers},
};
use l2node_trie::state::KarmaTier;

use crate::common::{account, dev_config, signed_tx, TestNode};

fn karma() -> Address {
    dev::dev_karma_config().karma_contract
}

fn tiers() -> Address {
    dev::dev_karma_config().tiers_contract
}

/// `call` on `to` through `eth_call` (from `from`, or the zero address): the decoded return,
/// or the revert data of a reverted call.
async fn call_from<C: SolCall>(
    node: &TestNode,
    from: Option<Address>,
    to: Address,
    call: C,
) -> Result<C::Return, Bytes> {
    let mut req = serde_json::json!({"to": to, "data": Bytes::from(call.abi_encode())});
    if let Some(from) = from {
        req["from"] = serde_json::json!(from);
    }
    let out: Result<Bytes, _> = node.http.request("eth_call", rpc_params![req]).await;
    match out {
        Ok(out) => Ok(C::abi_decode_returns(&out).unwrap()),
        Err(jsonrpsee::core::client::Error::Call(e)) => {
            assert_eq!(e.code(), 3, "a revert: {e:?}");
            Err(serde_json::from_str(e.data().expect("revert data").get()).unwrap())
        }
        Err(e) => panic!("eth_call: {e}"),
    }
}

async fn call<C: SolCall>(node: &TestNode, to: Address, call: C) -> Result<C::Return, Bytes> {
    call_from(node, None, to, call).await
}

/// Asserts that `data` is the revert data of custom error `E`.
fn assert_error<E: SolError + PartialEq + std::fmt::Debug>(data: &Bytes, expected: E) {
    assert_eq!(
        E::abi_decode(data).unwrap_or_else(|e| panic!("{data} is not {}: {e}", E::SIGNATURE)),
        expected
    );
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

/// The node's state after its latest block.
fn head_state(node: &TestNode) -> l2node_storage::StateAt {
    let chain = node.handle.as_ref().unwrap().chain.clone();
    chain.storage().state_at(None).unwrap()
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
    let seq = dev::dev_sequencer();
    assert_eq!(
        call(&node, k, IKarma::ownerCall {}).await.unwrap(),
        seq.address()
    );

    // Soulbound: no transfer, approval or allowance.
    let (a0, a1) = (account(0).address(), account(1).address());
    let err = call_from(
        &node,
        Some(a0),
        k,
        IKarma::transferCall {
            _0: a1,
            _1: U256::from(1),
        },
    )
    .await
    .unwrap_err();
    assert_error(&err, IKarma::KarmaIsSoulbound {});
    let err = call_from(
        &node,
        Some(a1),
        k,
        IKarma::transferFromCall {
            _0: a0,
            _1: a1,
            _2: U256::from(1),
        },
    )
    .await
    .unwrap_err();
    assert_error(&err, IKarma::KarmaIsSoulbound {});
    assert_eq!(
        call(&node, k, IKarma::allowanceCall { _0: a0, _1: a1 })
            .await
            .unwrap(),
        U256::ZERO
    );
    let r = send(
        &node,
        &account(0),
        k,
        IKarma::approveCall {
            _0: a1,
            _1: U256::from(1),
        },
    )
    .await;
    assert_eq!(r["status"], "0x0");

    // Roles: only the owner names operators and slashers (the dev sequencer is the dev chain's
    // owner, operator and slasher).
    let err = call_from(
        &node,
        Some(a0),
        k,
        IKarma::setOperatorCall {
            account: a0,
            enabled: true,
        },
    )
    .await
    .unwrap_err();
    assert_error(&err, IKarma::NotOwner {});
    let err = call_from(
        &node,
        Some(a0),
        k,
        IKarma::setSlasherCall {
            account: a0,
            enabled: true,
        },
    )
    .await
    .unwrap_err();
    assert_error(&err, IKarma::NotOwner {});
    assert!(!call(&node, k, IKarma::isOperatorCall(a1)).await.unwrap());
    let r = send(
        &node,
        &seq,
        k,
        IKarma::setOperatorCall {
            account: a1,
            enabled: true,
        },
    )
    .await;
    assert_eq!(r["status"], "0x1");
    assert!(call(&node, k, IKarma::isOperatorCall(a1)).await.unwrap());
    assert!(call(&node, k, IKarma::isSlasherCall(seq.address()))
        .await
        .unwrap());
    assert!(!call(&node, k, IKarma::isSlasherCall(a1)).await.unwrap());

    // Only an operator mints.
    let who = account(9).address();
    let err = call_from(
        &node,
        Some(a0),
        k,
        IKarma::mintCall {
            to: who,
            amount: ONE_KARMA,
        },
    )
    .await
    .unwrap_err();
    assert_error(&err, IKarma::NotOperator {});
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
    let r = send(&node, &account(1), k, IKarma::mintCall { to: who, amount }).await;
    assert_eq!(r["status"], "0x1", "the new operator mints");
    let log = &r["logs"][0];
    assert_eq!(
        log["topics"],
        serde_json::json!([
            IKarma::Transfer::SIGNATURE_HASH,
            Address::ZERO.into_word(),
            who.into_word()
        ])
    );
    assert_eq!(
        call(&node, k, IKarma::balanceOfCall { account: who })
            .await
            .unwrap(),
        amount
    );
    assert_eq!(
        call(&node, k, IKarma::totalSupplyCall {}).await.unwrap(),
        supply + amount
    );
    // The node's storage reader sees what the contract wrote.
    assert_eq!(read_balance(&head_state(&node), k, who).unwrap(), amount);

    // Slash: half of 3 KARMA is 1.5; of 1.5 KARMA half is below 1, so 1 KARMA; then all of 0.5.
    let err = call_from(&node, Some(a0), k, IKarma::slashCall { account: who })
        .await
        .unwrap_err();
    assert_error(&err, IKarma::NotSlasher {});
    let r = send(&node, &account(0), k, IKarma::slashCall { account: who }).await;
    assert_eq!(r["status"], "0x0", "a non-slasher cannot slash");
    let half = ONE_KARMA / U256::from(2);
    let mut left_supply = supply + amount;
    for (burnt, left) in [
        (ONE_KARMA + half, ONE_KARMA + half),
        (ONE_KARMA, half),
        (half, U256::ZERO),
    ] {
        let r = send(&node, &seq, k, IKarma::slashCall { account: who }).await;
        assert_eq!(r["status"], "0x1");
        let logs = r["logs"].as_array().unwrap();
        let slashed = logs
            .iter()
            .find(|l| l["topics"][0] == serde_json::json!(IKarma::AccountSlashed::SIGNATURE_HASH))
            .expect("AccountSlashed emitted");
        assert_eq!(slashed["topics"][1], serde_json::json!(who.into_word()));
        let word = serde_json::json!(Bytes::from(burnt.to_be_bytes::<32>().to_vec()));
        assert_eq!(slashed["data"], word);
        let burn = logs
            .iter()
            .find(|l| l["topics"][0] == serde_json::json!(IKarma::Transfer::SIGNATURE_HASH))
            .expect("Transfer emitted");
        assert_eq!(
            (&burn["topics"][1], &burn["topics"][2], &burn["data"]),
            (
                &serde_json::json!(who.into_word()),
                &serde_json::json!(Address::ZERO.into_word()),
                &word
            )
        );
        assert_eq!(
            call(&node, k, IKarma::balanceOfCall { account: who })
                .await
                .unwrap(),
            left
        );
        left_supply -= burnt;
        assert_eq!(
            call(&node, k, IKarma::totalSupplyCall {}).await.unwrap(),
            left_supply
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
    for (i, tier) in table.iter().enumerate() {
        let got = call(&node, t, IKarmaTiers::getTierByIdCall { id: i as u8 })
            .await
            .unwrap();
        assert_eq!(
            (got.name, got.txPerEpoch, got.minKarma, got.maxKarma),
            (
                tier.name.clone(),
                tier.tx_per_epoch,
                tier.min_karma,
                tier.max_karma
            ),
            "tier {i}"
        );
    }
    for id in [table.len() as u8, 200, 255] {
        let err = call(&node, t, IKarmaTiers::getTierByIdCall { id })
            .await
            .unwrap_err();
        assert_error(&err, IKarmaTiers::TierNotFound { id });
    }
    let one = U256::from(1);
    for (balance, id) in [
        (U256::ZERO, 0),
        (ONE_KARMA - one, 0),
        (ONE_KARMA, 1),
        (ONE_KARMA + one, 2),
        (U256::from(50) * ONE_KARMA - one, 2),
        (U256::from(50) * ONE_KARMA, 3),
        (U256::from(10_000_000) * ONE_KARMA - one, 9),
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

    // updateTiers: owner only, and each rule of the table, with its custom error.
    let owner = dev::dev_sequencer();
    assert_eq!(
        call(&node, t, IKarmaTiers::ownerCall {}).await.unwrap(),
        owner.address()
    );
    let tier = |min: u64, max: U256, name: &str| KarmaTiers::Tier {
        minKarma: U256::from(min),
        maxKarma: max,
        name: name.into(),
        txPerEpoch: 1,
    };
    use IKarmaTiers::IKarmaTiersErrors as E;
    let n = U256::from;
    let bad: Vec<(&str, Vec<KarmaTiers::Tier>, E)> = vec![
        ("empty", vec![], E::EmptyTiers(IKarmaTiers::EmptyTiers {})),
        (
            "first not at 0",
            vec![tier(1, U256::MAX, "a")],
            E::FirstTierMustStartAtZero(IKarmaTiers::FirstTierMustStartAtZero { minKarma: n(1) }),
        ),
        (
            "gap",
            vec![tier(0, n(9), "a"), tier(11, U256::MAX, "b")],
            E::NonContiguousTiers(IKarmaTiers::NonContiguousTiers {
                index: n(1),
                expectedMin: n(10),
                minKarma: n(11),
            }),
        ),
        (
            "overlap",
            vec![tier(0, n(9), "a"), tier(9, U256::MAX, "b")],
            E::NonContiguousTiers(IKarmaTiers::NonContiguousTiers {
                index: n(1),
                expectedMin: n(10),
                minKarma: n(9),
            }),
        ),
        (
            "after the maximum",
            vec![tier(0, U256::MAX, "a"), tier(0, U256::MAX, "b")],
            E::NonContiguousTiers(IKarmaTiers::NonContiguousTiers {
                index: n(1),
                expectedMin: U256::MAX,
                minKarma: n(0),
            }),
        ),
        (
            "max below min",
            vec![tier(0, n(9), "a"), tier(10, n(5), "b")],
            E::InvalidTierRange(IKarmaTiers::InvalidTierRange {
                index: n(1),
                minKarma: n(10),
                maxKarma: n(5),
            }),
        ),
        (
            "empty name",
            vec![tier(0, U256::MAX, "")],
            E::InvalidTierName(IKarmaTiers::InvalidTierName {
                index: n(0),
                length: n(0),
            }),
        ),
        (
            "long name",
            vec![tier(0, n(9), "a"), tier(10, U256::MAX, &"x".repeat(33))],
            E::InvalidTierName(IKarmaTiers::InvalidTierName {
                index: n(1),
                length: n(33),
            }),
        ),
        (
            "too many",
            (0..256u64)
                .map(|i| tier(i, if i == 255 { U256::MAX } else { n(i) }, "t"))
                .collect(),
            E::TooManyTiers(IKarmaTiers::TooManyTiers { count: n(256) }),
        ),
    ];
    for (what, list, expected) in bad {
        // The same rules as a genesis `karma.tiers` section.
        let as_config: Vec<KarmaTier> = list.iter().map(karma_tier).collect();
        if what != "too many" {
            assert!(check_tiers(&as_config).is_err(), "{what}: check_tiers");
        }
        let err = call_from(
            &node,
            Some(owner.address()),
            t,
            IKarmaTiers::updateTiersCall {
                tiers: list.clone(),
            },
        )
        .await
        .unwrap_err();
        assert_eq!(E::abi_decode(&err).unwrap(), expected, "{what}");
        if what != "too many" {
            let r = send(
                &node,
                &owner,
                t,
                IKarmaTiers::updateTiersCall { tiers: list },
            )
            .await;
            assert_eq!(r["status"], "0x0", "{what} must revert");
        }
    }
    // A short name, exactly 1 KARMA, and a 32-byte name (Solidity's long string encoding).
    let good = vec![
        KarmaTiers::Tier {
            minKarma: U256::ZERO,
            maxKarma: ONE_KARMA - one,
            name: "low".into(),
            txPerEpoch: 0,
        },
        KarmaTiers::Tier {
            minKarma: ONE_KARMA,
            maxKarma: ONE_KARMA,
            name: "one".into(),
            txPerEpoch: 3,
        },
        KarmaTiers::Tier {
            minKarma: ONE_KARMA + one,
            maxKarma: U256::MAX,
            name: "y".repeat(32),
            txPerEpoch: u32::MAX,
        },
    ];
    let as_config: Vec<KarmaTier> = good.iter().map(karma_tier).collect();
    check_tiers(&as_config).unwrap();
    let err = call_from(
        &node,
        Some(account(0).address()),
        t,
        IKarmaTiers::updateTiersCall {
            tiers: good.clone(),
        },
    )
    .await
    .unwrap_err();
    assert_error(&err, IKarmaTiers::NotOwner {});
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
        r["logs"][0]["topics"],
        serde_json::json!([IKarmaTiers::TiersUpdated::SIGNATURE_HASH])
    );
    assert_eq!(
        read_tiers(&head_state(&node), t).unwrap(),
        as_config,
        "the node reads the table the contract wrote"
    );
    assert_eq!(
        call(&node, t, IKarmaTiers::getTierCountCall {})
            .await
            .unwrap(),
        3
    );
    for (balance, id) in [
        (ONE_KARMA - one, 0),
        (ONE_KARMA, 1),
        (ONE_KARMA + one, 2),
        (U256::MAX, 2),
    ] {
        let got = call(
            &node,
            t,
            IKarmaTiers::getTierIdByKarmaBalanceCall { balance },
        )
        .await
        .unwrap();
        assert_eq!(got, id, "balance {balance} after the update");
    }
}

fn karma_tier(t: &KarmaTiers::Tier) -> KarmaTier {
    KarmaTier {
        min_karma: t.minKarma,
        max_karma: t.maxKarma,
        name: t.name.clone(),
        tx_per_epoch: t.txPerEpoch,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tier_update_applies_from_the_next_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let mut karma = dev::dev_karma_config();
    karma.epoch_length = 15;
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
    let everyone = vec![KarmaTiers::Tier {
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
