//! Karma end to end on a real node with short epochs: gasless quota, premium estimates and
//! refusals, bonus after premium, epoch rollover, slashing, restarts, and the ledger rebuilt
//! from the blocks.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use alloy_consensus::TxEip1559;
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, TxKind, U256};
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::SolCall;
use jsonrpsee::{core::client::ClientT, rpc_params};
use l2node_launch::NodeConfig;
use l2node_node::chain::open_chain;
use l2node_node::chainspec::ChainSpec;
use l2node_node::constants::DEV_CHAIN_ID;
use l2node_node::dev;
use l2node_node::fees::Sampling;
use l2node_node::karma::{contracts::IKarma, KarmaConfig};
use l2node_node::test_utils;

use crate::common::{account, dev_config, plain_dev_spec, TestNode};

const GWEI: u128 = 1_000_000_000;
/// Dev account 8 holds exactly 1 KARMA: the entry tier, 2 free transactions per epoch.
const ENTRY: usize = 8;
/// Dev account 9 holds no Karma.
const NONE: usize = 9;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A dev chain whose epochs last `epoch` seconds from now on.
fn karma_config(dir: &std::path::Path, epoch: u64) -> NodeConfig {
    let mut karma: KarmaConfig = dev::dev_karma_config();
    karma.epoch_length = epoch;
    karma.epoch_origin = now();
    let mut cfg = dev_config(dir, Duration::ZERO);
    cfg.spec = std::sync::Arc::new(
        ChainSpec::from_genesis(dev::dev_genesis_with_karma(0, karma)).unwrap(),
    );
    cfg
}

async fn start(epoch: u64) -> TestNode {
    let dir = tempfile::tempdir().unwrap();
    let cfg = karma_config(dir.path(), epoch);
    TestNode::start_in(dir, cfg).await
}

fn tx(key: &PrivateKeySigner, nonce: u64, tip: u128, to: Address, input: Bytes, gas: u64) -> Bytes {
    let tx = TxEip1559 {
        chain_id: DEV_CHAIN_ID,
        nonce,
        gas_limit: gas,
        max_fee_per_gas: tip,
        max_priority_fee_per_gas: tip,
        to: TxKind::Call(to),
        value: U256::ZERO,
        input,
        access_list: Default::default(),
    };
    test_utils::sign(key, tx).encoded_2718().into()
}

async fn estimate(node: &TestNode, from: Address) -> serde_json::Value {
    node.request(
        "l2_estimateGas",
        rpc_params![
            serde_json::json!({"from": from, "to": Address::repeat_byte(0x11), "value": "0x1"})
        ],
    )
    .await
}

async fn status(node: &TestNode, who: Address) -> serde_json::Value {
    node.request("l2_getKarmaStatus", rpc_params![who]).await
}

fn priority(e: &serde_json::Value) -> u128 {
    u128::from_str_radix(
        e["priorityFeePerGas"]
            .as_str()
            .unwrap()
            .trim_start_matches("0x"),
        16,
    )
    .unwrap()
}

async fn send(node: &TestNode, raw: Bytes) -> Result<serde_json::Value, String> {
    node.http
        .request::<serde_json::Value, _>("eth_sendRawTransaction", rpc_params![raw])
        .await
        .map_err(|e| e.to_string())
}

async fn send_mined(node: &TestNode, raw: Bytes) {
    let hash = send(node, raw).await.unwrap();
    let receipt = node
        .wait_receipt(hash.as_str().unwrap().parse().unwrap())
        .await;
    assert_eq!(receipt["status"], "0x1", "{receipt}");
}

#[tokio::test(flavor = "multi_thread")]
async fn entry_tier_gets_two_free_then_premium_then_bonus_then_a_fresh_epoch() {
    let node = start(20).await;
    let key = account(ENTRY);
    let me = key.address();
    let to = Address::repeat_byte(0x11);

    let e = estimate(&node, me).await;
    assert_eq!(
        (e["gasLimit"].as_str(), priority(&e)),
        (Some("0x5208"), 0),
        "{e}"
    );
    assert_eq!(e["baseFeePerGas"], "0x0");
    let linea: serde_json::Value = node
        .request(
            "linea_estimateGas",
            rpc_params![serde_json::json!({"from": me, "to": to, "value": "0x1"})],
        )
        .await;
    assert_eq!(linea, e);
    let s = status(&node, me).await;
    assert_eq!(
        (
            s["tier"]["name"].as_str(),
            s["quota"].as_str(),
            s["feeState"].as_str()
        ),
        (Some("entry"), Some("0x2"), Some("gasless")),
        "{s}"
    );

    for nonce in 0..2 {
        send_mined(&node, tx(&key, nonce, 0, to, Bytes::new(), 21_000)).await;
    }
    let e = estimate(&node, me).await;
    assert!(priority(&e) >= 12 * GWEI, "{e}");
    let s = status(&node, me).await;
    assert_eq!(
        (
            s["denied"].as_bool(),
            s["denyReason"].as_str(),
            s["used"].as_str()
        ),
        (Some(true), Some("quotaExceeded"), Some("0x2")),
        "{s}"
    );
    let refused = send(&node, tx(&key, 2, 0, to, Bytes::new(), 21_000))
        .await
        .unwrap_err();
    assert!(
        refused.contains("-32000") || refused.contains("Free transaction limit reached"),
        "{refused}"
    );
    assert!(
        refused.contains("Free transaction limit reached")
            && refused.contains("resets at")
            && refused.contains("12 gwei"),
        "{refused}"
    );

    // Premium: in, clears the denial and buys one tier of bonus quota.
    send_mined(&node, tx(&key, 2, priority(&e), to, Bytes::new(), 21_000)).await;
    let s = status(&node, me).await;
    assert_eq!(
        (
            s["denied"].as_bool(),
            s["quota"].as_str(),
            s["bonus"].as_str(),
            s["remaining"].as_str()
        ),
        (Some(false), Some("0x4"), Some("0x2"), Some("0x2")),
        "{s}"
    );
    assert_eq!(priority(&estimate(&node, me).await), 0);
    send_mined(&node, tx(&key, 3, 0, to, Bytes::new(), 21_000)).await;

    // The next epoch: the own quota again, no bonus.
    let ends: u64 = u64::from_str_radix(
        s["epochEndsAt"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap();
    while now() < ends {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let s = status(&node, me).await;
    assert_eq!(
        (
            s["used"].as_str(),
            s["quota"].as_str(),
            s["bonus"].as_str(),
            s["feeState"].as_str()
        ),
        (Some("0x0"), Some("0x2"), Some("0x0"), Some("gasless")),
        "{s}"
    );
    send_mined(&node, tx(&key, 4, 0, to, Bytes::new(), 21_000)).await;
    assert_eq!(status(&node, me).await["used"], "0x1");
}

#[tokio::test(flavor = "multi_thread")]
async fn sender_without_karma_is_premium_and_refused_for_free() {
    let node = start(3_600).await;
    let key = account(NONE);
    let e = estimate(&node, key.address()).await;
    assert!(priority(&e) >= 12 * GWEI, "{e}");
    let err = send(&node, tx(&key, 0, 0, Address::ZERO, Bytes::new(), 21_000))
        .await
        .unwrap_err();
    assert!(
        err.contains("holds no Karma") && err.contains("Earn Karma"),
        "{err}"
    );
    send_mined(
        &node,
        tx(&key, 0, priority(&e), Address::ZERO, Bytes::new(), 21_000),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn estimate_requires_from() {
    let node = start(3_600).await;
    let err = node
        .http
        .request::<serde_json::Value, _>(
            "l2_estimateGas",
            rpc_params![serde_json::json!({"to": Address::ZERO})],
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("InvalidParams") && err.contains("from is required"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn slashed_sender_is_premium_until_the_epoch_ends() {
    let node = start(3_600).await;
    let victim = account(7).address();
    let slasher = dev::dev_sequencer();
    let input = Bytes::from(IKarma::slashCall { account: victim }.abi_encode());
    let karma = dev::dev_karma_config().karma_contract;
    send_mined(&node, tx(&slasher, 0, 12 * GWEI, karma, input, 200_000)).await;
    let s = status(&node, victim).await;
    assert_eq!(
        (
            s["denied"].as_bool(),
            s["denyReason"].as_str(),
            s["feeState"].as_str()
        ),
        (Some(true), Some("rlnViolation"), Some("premium")),
        "{s}"
    );
    assert_eq!(s["deniedUntil"], s["epochEndsAt"]);
    let err = send(
        &node,
        tx(&account(7), 0, 0, Address::ZERO, Bytes::new(), 21_000),
    )
    .await
    .unwrap_err();
    assert!(err.contains("slashed"), "{err}");
    // Premium still gets through, and the denial stays.
    send_mined(
        &node,
        tx(
            &account(7),
            0,
            12 * GWEI,
            Address::ZERO,
            Bytes::new(),
            21_000,
        ),
    )
    .await;
    assert_eq!(status(&node, victim).await["denyReason"], "rlnViolation");
}

#[tokio::test(flavor = "multi_thread")]
async fn second_free_signal_in_one_slot_is_refused_and_slashed() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = karma_config(dir.path(), 3_600);
    // Blocks only when asked: both transactions meet in the pool.
    cfg.block_time = Duration::from_secs(3_600);
    cfg.karma.slasher = Some(dev::dev_sequencer());
    let node = TestNode::start_in(dir, cfg).await;
    let key = account(6);
    send(&node, tx(&key, 0, 0, Address::ZERO, Bytes::new(), 21_000))
        .await
        .unwrap();
    let err = send(
        &node,
        tx(&key, 0, 0, Address::repeat_byte(1), Bytes::new(), 21_000),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("same slot") && err.contains("slashing"),
        "{err}"
    );
    // The sequencer's slash is pooled.
    let slasher = dev::dev_sequencer().address();
    for _ in 0..100 {
        let content: serde_json::Value = node.request("txpool_content", rpc_params![]).await;
        if content["pending"].as_object().is_some_and(|p| {
            p.keys()
                .any(|k| k.eq_ignore_ascii_case(&slasher.to_string()))
        }) {
            // A premium replacement is an ordinary replacement.
            send(
                &node,
                tx(
                    &key,
                    0,
                    12 * GWEI,
                    Address::repeat_byte(1),
                    Bytes::new(),
                    21_000,
                ),
            )
            .await
            .unwrap();
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no Karma.slash from the sequencer in the pool");
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_switch_turns_gasless_off_and_premium_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let switch = dir.path().join("kill");
    let mut cfg = karma_config(dir.path(), 3_600);
    cfg.karma.kill_switch_file = Some(switch.clone());
    let node = TestNode::start_in(dir, cfg).await;
    let key = account(0);
    assert_eq!(priority(&estimate(&node, key.address()).await), 0);
    std::fs::write(&switch, b"").unwrap();
    // The file is polled: wait until the node quotes premium.
    let e = until_priority(&node, key.address(), |p| p > 0).await;
    assert!(priority(&e) >= 12 * GWEI, "{e}");
    let err = send(&node, tx(&key, 0, 0, Address::ZERO, Bytes::new(), 21_000))
        .await
        .unwrap_err();
    assert!(err.contains("switched off"), "{err}");
    send_mined(
        &node,
        tx(&key, 0, priority(&e), Address::ZERO, Bytes::new(), 21_000),
    )
    .await;
    std::fs::remove_file(&switch).unwrap();
    until_priority(&node, key.address(), |p| p == 0).await;
    send_mined(&node, tx(&key, 1, 0, Address::ZERO, Bytes::new(), 21_000)).await;
}

/// Polls `l2_estimateGas` for `from` until its priority fee satisfies `ok`; returns that quote.
async fn until_priority(
    node: &TestNode,
    from: Address,
    ok: impl Fn(u128) -> bool,
) -> serde_json::Value {
    let ok = &ok;
    crate::common::eventually("the kill switch file to be picked up", || async move {
        let e = estimate(node, from).await;
        ok(priority(&e)).then_some(e)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn restart_keeps_counters_and_a_rebuilt_ledger_matches() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = karma_config(dir.path(), 3_600);
    let spec = cfg.spec.clone();
    let node = TestNode::start_in(dir, cfg.clone()).await;
    let (entry, newbie) = (account(ENTRY), account(7));
    for nonce in 0..2 {
        send_mined(
            &node,
            tx(&entry, nonce, 0, Address::ZERO, Bytes::new(), 21_000),
        )
        .await;
    }
    send_mined(
        &node,
        tx(&newbie, 0, 0, Address::ZERO, Bytes::new(), 250_000),
    )
    .await;
    let before = (
        status(&node, entry.address()).await,
        status(&node, newbie.address()).await,
    );
    assert_eq!(
        before.1["used"], "0x1",
        "a 250,000-gas limit reserves 2 units; the 21,000 gas used is charged: 1"
    );
    let dir = node.stop().await;
    let node = TestNode::start_in(dir, cfg).await;
    let after = (
        status(&node, entry.address()).await,
        status(&node, newbie.address()).await,
    );
    assert_eq!(before, after);

    // Import the same blocks into a fresh database: the same ledger.
    let chain = node.handle.as_ref().unwrap().chain.clone();
    let head = chain.head().header.number;
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh = open_chain(fresh_dir.path(), spec).unwrap();
    for n in 1..=head {
        let b = chain.storage().block(n).unwrap().unwrap();
        fresh
            .import(alloy_consensus::Block {
                header: b.header,
                body: b.body,
            })
            .unwrap();
    }
    let stored = chain
        .storage()
        .ledger_at(Some(head))
        .unwrap()
        .dump()
        .unwrap();
    let rebuilt = fresh.storage().ledger_at(None).unwrap().dump().unwrap();
    assert!(stored.len() >= 3, "{stored:?}");
    assert_eq!(stored, rebuilt);
}

#[tokio::test(flavor = "multi_thread")]
async fn chain_without_karma_answers_the_standard_fee() {
    let node = TestNode::start_with(|cfg| cfg.spec = plain_dev_spec()).await;
    let e = estimate(&node, account(NONE).address()).await;
    let tip: U256 = node
        .request("eth_maxPriorityFeePerGas", rpc_params![])
        .await;
    assert_eq!(U256::from(priority(&e)), tip, "{e}");
    assert_eq!(e["gasLimit"], "0x5208");
    // No gasless rule: a price-0 transfer from a sender without Karma is an ordinary one.
    send_mined(
        &node,
        tx(&account(NONE), 0, 0, Address::ZERO, Bytes::new(), 21_000),
    )
    .await;
    let err = node
        .http
        .request::<serde_json::Value, _>("l2_getKarmaStatus", rpc_params![Address::ZERO])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no Karma policy"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn free_flood_counts_pending_against_the_quota() {
    // Blocks only when asked: everything stays pending.
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = karma_config(dir.path(), 3_600);
    cfg.block_time = Duration::from_secs(3_600);
    let node = TestNode::start_in(dir, cfg).await;
    // Newbie: 6 units. Executable free transactions count before they are mined; the ones
    // behind the refused nonce 6 are queued and each alone does not fit either.
    let key = account(7);
    let mut accepted = 0;
    for nonce in 0..20 {
        if send(
            &node,
            tx(&key, nonce, 0, Address::ZERO, Bytes::new(), 21_000),
        )
        .await
        .is_ok()
        {
            accepted += 1;
        }
    }
    assert_eq!(accepted, 6);
    // A resubmitted transaction counts once: the same bytes are "already known".
    let again = send(&node, tx(&key, 0, 0, Address::ZERO, Bytes::new(), 21_000))
        .await
        .unwrap_err();
    assert!(again.contains("already known"), "{again}");
    assert_eq!(status(&node, key.address()).await["remaining"], "0x0");
    // A key without Karma gets no free transaction in at all, queued or not.
    let spammer = PrivateKeySigner::from_bytes(&alloy_primitives::B256::repeat_byte(0x5a)).unwrap();
    for nonce in 1..20 {
        let err = send(
            &node,
            tx(&spammer, nonce, 0, Address::ZERO, Bytes::new(), 21_000),
        )
        .await
        .unwrap_err();
        assert!(err.contains("no Karma"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn estimate_of_a_reverting_call_answers_code_3_with_data() {
    let node = start(3_600).await;
    let karma = dev::dev_karma_config().karma_contract;
    // Karma is soulbound: transfer reverts with KarmaIsSoulbound().
    let data = Bytes::from(
        l2node_node::karma::contracts::IKarma::transferCall {
            _0: Address::ZERO,
            _1: U256::from(1),
        }
        .abi_encode(),
    );
    for method in ["l2_estimateGas", "eth_estimateGas"] {
        let err = node
            .http
            .request::<serde_json::Value, _>(
                method,
                rpc_params![
                    serde_json::json!({"from": account(0).address(), "to": karma, "data": data})
                ],
            )
            .await
            .unwrap_err();
        let jsonrpsee::core::client::Error::Call(e) = err else {
            panic!("{method}: {err}")
        };
        assert_eq!(e.code(), 3, "{method}: {e:?}");
        let selector = alloy_primitives::keccak256("KarmaIsSoulbound()");
        assert!(
            e.data()
                .unwrap()
                .get()
                .contains(&alloy_primitives::hex::encode(&selector[..4])),
            "{method}: {e:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn operator_deny_list_and_kill_switch_over_l2admin() {
    let node = start(3_600).await;
    let key = account(0);
    let me = key.address();
    // Asked before and after each change at the same head: the statuses a head keeps must not
    // hide the operator's deny list, which changes between blocks.
    assert_eq!(status(&node, me).await["feeState"], "gasless");
    assert_eq!(priority(&estimate(&node, me).await), 0);
    let added: bool = node.request("l2admin_addToDenyList", rpc_params![me]).await;
    assert!(added);
    let s = status(&node, me).await;
    assert_eq!(
        (s["denyReason"].as_str(), s["feeState"].as_str()),
        (Some("operator"), Some("premium")),
        "{s}"
    );
    assert!(priority(&estimate(&node, me).await) >= 12 * GWEI);
    let err = send(&node, tx(&key, 0, 0, Address::ZERO, Bytes::new(), 21_000))
        .await
        .unwrap_err();
    assert!(err.contains("operator's deny list"), "{err}");
    let removed: bool = node
        .request("l2admin_removeFromDenyList", rpc_params![me])
        .await;
    assert!(removed);
    assert_eq!(status(&node, me).await["feeState"], "gasless");
    assert_eq!(priority(&estimate(&node, me).await), 0);
    send_mined(&node, tx(&key, 0, 0, Address::ZERO, Bytes::new(), 21_000)).await;

    let gasless: bool = node
        .request("l2admin_setKillSwitch", rpc_params![true])
        .await;
    assert!(!gasless);
    assert_eq!(status(&node, me).await["feeState"], "premium");
    let gasless: bool = node
        .request("l2admin_setKillSwitch", rpc_params![false])
        .await;
    assert!(gasless);
    assert_eq!(status(&node, me).await["feeState"], "gasless");
}

#[tokio::test(flavor = "multi_thread")]
async fn l2admin_is_off_by_default_and_refused_on_a_public_address() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = karma_config(dir.path(), 3_600);
    cfg.rpc_server.http_apis = l2node_rpc::Namespace::defaults();
    let node = TestNode::start_in(dir, cfg).await;
    let err = node
        .http
        .request::<bool, _>("l2admin_setKillSwitch", rpc_params![true])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("L2ADMIN") || err.contains("not found"),
        "{err}"
    );
    let _: serde_json::Value = node
        .request("l2_getKarmaStatus", rpc_params![Address::ZERO])
        .await;

    let dir = tempfile::tempdir().unwrap();
    let mut cfg = karma_config(dir.path(), 3_600);
    cfg.rpc_server.http_addr = "0.0.0.0:0".parse().unwrap();
    let err = l2node_launch::spawn(cfg).await.unwrap_err().to_string();
    assert!(err.contains("L2ADMIN") && err.contains("loopback"), "{err}");
}

/// After blocks of premium transactions, the fee suggestions still sample only what gasless
/// transactions paid (so a wallet's defaults stay gasless); `Sampling::All` samples everything.
#[tokio::test(flavor = "multi_thread")]
async fn fee_suggestions_leave_premium_tips_out_unless_told() {
    for sampling in [Sampling::GaslessOnly, Sampling::All] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = karma_config(dir.path(), 86_400);
        cfg.rpc.fee_sampling = sampling;
        let node = TestNode::start_in(dir, cfg).await;
        let (payer, holder) = (account(NONE), account(0));
        let to = Address::repeat_byte(0x22);
        // One gasless transaction with a 1 gwei tip, then three blocks of 20 gwei premium tips.
        send_mined(&node, tx(&holder, 0, GWEI, to, Bytes::new(), 21_000)).await;
        for nonce in 0..3 {
            send_mined(
                &node,
                tx(&payer, nonce, 20 * GWEI, to, Bytes::new(), 21_000),
            )
            .await;
        }
        let tip: U256 = node
            .request::<serde_json::Value>("eth_maxPriorityFeePerGas", rpc_params![])
            .await
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let history = node
            .request::<serde_json::Value>(
                "eth_feeHistory",
                rpc_params!["0x4", "latest", [10.0, 50.0]],
            )
            .await;
        let rewards: Vec<u128> = history["reward"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                u128::from_str_radix(r[1].as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
            })
            .collect();
        match sampling {
            Sampling::GaslessOnly => {
                assert_eq!(tip, U256::from(GWEI), "{history}");
                assert_eq!(rewards, [GWEI, 0, 0, 0], "{history}");
            }
            Sampling::All => {
                assert_eq!(tip, U256::from(20 * GWEI), "{history}");
                assert_eq!(
                    rewards,
                    [GWEI, 20 * GWEI, 20 * GWEI, 20 * GWEI],
                    "{history}"
                );
            }
        }
        node.stop().await;
    }
}

/// A wallet's padded gas limit reserves units at admission, but the ledger charges the gas the
/// transaction used: a 250,000-gas transfer from the entry tier (2 units) costs 1 unit, and the
/// second free transfer still gets in.
#[tokio::test(flavor = "multi_thread")]
async fn padded_gas_limit_is_charged_by_gas_used() {
    let node = start(86_400).await;
    let key = account(ENTRY);
    let me = key.address();
    let to = Address::repeat_byte(0x33);
    send_mined(&node, tx(&key, 0, 0, to, Bytes::new(), 250_000)).await;
    let s = status(&node, me).await;
    assert_eq!(
        (
            s["used"].as_str(),
            s["remaining"].as_str(),
            s["denied"].as_bool()
        ),
        (Some("0x1"), Some("0x1"), Some(false)),
        "{s}"
    );
    send_mined(&node, tx(&key, 1, 0, to, Bytes::new(), 21_000)).await;
    let s = status(&node, me).await;
    assert_eq!(
        (s["used"].as_str(), s["denyReason"].as_str()),
        (Some("0x2"), Some("quotaExceeded")),
        "{s}"
    );
    node.stop().await;
}

/// Nonces 1 and 2 arriving before 0 are queued and hold no quota, so nonce 0 is admitted; the
/// three are mined gasless (the block gate keeps each block within the quota, and the ledger
/// charges the gas used).
#[tokio::test(flavor = "multi_thread")]
async fn out_of_order_nonces_are_all_mined_gasless() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = karma_config(dir.path(), 86_400);
    cfg.block_time = Duration::from_millis(300);
    let node = TestNode::start_in(dir, cfg).await;
    // Newbie: 6 units a day; a 300,000-gas limit reserves 3 units.
    let key = account(7);
    let to = Address::repeat_byte(0x44);
    let raw = |nonce| tx(&key, nonce, 0, to, Bytes::new(), 300_000);
    let mut hashes = Vec::new();
    for nonce in [1, 2, 0] {
        let hash = send(&node, raw(nonce))
            .await
            .unwrap_or_else(|e| panic!("nonce {nonce} refused: {e}"));
        hashes.push(hash.as_str().unwrap().parse().unwrap());
    }
    for hash in hashes {
        let receipt = node.wait_receipt(hash).await;
        assert_eq!(receipt["status"], "0x1", "{receipt}");
        assert_eq!(receipt["effectiveGasPrice"], "0x0", "{receipt}");
    }
    let s = status(&node, key.address()).await;
    assert_eq!(s["used"].as_str(), Some("0x3"), "{s}");
    node.stop().await;
}
