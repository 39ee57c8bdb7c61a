//! Behaviour tests of the pool through its public API.

use std::sync::Arc;

use alloy_consensus::{
    transaction::Recovered, SignableTransaction, TxEip4844, TxEip7702, TxEnvelope,
};
use alloy_eips::eip4844::builder::{SidecarBuilder, SimpleCoder};
use alloy_eips::eip7594::BlobTransactionSidecarVariant;
use alloy_eips::eip7702::Authorization;
use alloy_primitives::{Address, Bytes, TxKind, U256};
use alloy_signer::SignerSync;

use super::{test_utils::*, Pool, PoolConfig, PoolError};
use crate::constants::POOL_ACCOUNT_QUEUE;

fn pool() -> Pool {
    Pool::new(PoolConfig::default()).unwrap()
}

fn nonces(txs: &[Arc<super::PooledTx>]) -> Vec<(Address, u64)> {
    txs.iter().map(|t| (t.sender(), t.nonce())).collect()
}

#[test]
fn accepted_transaction_is_pending_and_retrievable() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    let tx = transfer(&a, 0, 10 * GWEI, GWEI);
    let hash = p.add_raw(&encode(&tx), &state, &ctx()).unwrap();
    assert_eq!(hash, *tx.inner().tx_hash());
    assert_eq!(p.status(), (1, 0));
    let got = p.get(&hash).unwrap();
    assert_eq!(got.raw, encode(&tx));
    assert_eq!(got.sender(), a.address());
    assert_eq!(p.pending_nonce(a.address()), Some(1));
    assert_eq!(p.pending_nonce(signer(2).address()), None);
}

#[test]
fn same_transaction_twice_is_already_known() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    let raw = encode(&transfer(&a, 0, 10 * GWEI, GWEI));
    p.add_raw(&raw, &state, &ctx()).unwrap();
    let err = p.add_raw(&raw, &state, &ctx()).unwrap_err();
    assert_eq!(err.to_string(), "already known");
}

#[test]
fn nonce_too_low_is_rejected_with_geth_message() {
    let a = signer(1);
    let mut state = MemState::default();
    state.set(a.address(), 5, U256::from(10u128.pow(20)));
    let err = pool()
        .add(transfer(&a, 3, 10 * GWEI, GWEI), &state, &ctx())
        .unwrap_err();
    assert_eq!(err.to_string(), "nonce too low: next nonce 5, tx nonce 3");
}

#[test]
fn insufficient_funds_is_rejected_with_geth_message() {
    let a = signer(1);
    let mut state = MemState::default();
    state.set(a.address(), 0, U256::from(1000));
    let err = pool()
        .add(transfer(&a, 0, 10, 1), &state, &ctx())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "insufficient funds for gas * price + value: address {} have 1000 want 210000",
            a.address()
        )
    );
}

#[test]
fn fee_checks_use_geth_messages() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    let err = p.add(transfer(&a, 0, 6, 1), &state, &ctx()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "max fee per gas less than block base fee: address {}, maxFeePerGas: 6, baseFee: 7",
            a.address()
        )
    );
    let err = p.add(transfer(&a, 0, 10, 11), &state, &ctx()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "max priority fee per gas higher than max fee per gas"
    );
}

#[test]
fn gas_limit_checks_use_geth_messages() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    let err = p
        .add(eip1559(&a, 0, 20_999, 10, 1, Bytes::new()), &state, &ctx())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "intrinsic gas too low: gas 20999, minimum needed 21000"
    );
    let err = p
        .add(
            eip1559(&a, 0, 30_000_001, 10, 1, Bytes::new()),
            &state,
            &ctx(),
        )
        .unwrap_err();
    assert_eq!(err.to_string(), "exceeds block gas limit");
    // 100 non-zero bytes: intrinsic 22600, EIP-7623 floor 25000.
    let data = Bytes::from(vec![1u8; 100]);
    let err = p
        .add(eip1559(&a, 0, 24_000, 10, 1, data.clone()), &state, &ctx())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "insufficient gas for floor data gas cost: gas 24000, minimum needed 25000"
    );
    let pre_prague = crate::chain::NextBlock {
        prague: false,
        osaka: false,
        blobs: None,
        ..ctx()
    };
    p.add(eip1559(&a, 0, 24_000, 10, 1, data), &state, &pre_prague)
        .unwrap();
}

#[test]
fn create_with_too_little_gas_needs_53000() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let mut t = eip1559_tx(0, 21_000, 10, 1, Bytes::new());
    t.to = TxKind::Create;
    let err = pool().add(sign(&a, t), &state, &ctx()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "intrinsic gas too low: gas 21000, minimum needed 53000"
    );
}

#[test]
fn wrong_chain_id_is_rejected() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let mut t = eip1559_tx(0, 21_000, 10, 1, Bytes::new());
    t.chain_id = 5;
    let err = pool().add(sign(&a, t), &state, &ctx()).unwrap_err();
    assert!(
        err.to_string().contains("invalid chain id for signer"),
        "{err}"
    );
    let err = pool()
        .add(sign(&a, legacy_tx(0, 10, Some(5))), &state, &ctx())
        .unwrap_err();
    assert!(matches!(
        err,
        PoolError::InvalidChainId {
            have: 5,
            want: CHAIN_ID
        }
    ));
}

#[test]
fn legacy_without_chain_id_is_accepted() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    let tx = sign(&a, legacy_tx(0, 10, None));
    p.add_raw(&encode(&tx), &state, &ctx()).unwrap();
    p.add_raw(
        &encode(&sign(&a, legacy_tx(1, 10, Some(CHAIN_ID)))),
        &state,
        &ctx(),
    )
    .unwrap();
    assert_eq!(p.status(), (2, 0));
}

/// A blob transaction from `a` carrying `sidecar` (network form), for an Osaka block.
fn blob_tx(
    a: &alloy_signer_local::PrivateKeySigner,
    sidecar: BlobTransactionSidecarVariant,
    hashes: Vec<alloy_primitives::B256>,
    max_fee_per_blob_gas: u128,
) -> Recovered<TxEnvelope> {
    let tx = TxEip4844 {
        chain_id: CHAIN_ID,
        nonce: 0,
        gas_limit: 21_000,
        max_fee_per_gas: 10,
        max_priority_fee_per_gas: 1,
        to: Address::repeat_byte(1),
        value: U256::ZERO,
        access_list: Default::default(),
        blob_versioned_hashes: hashes,
        max_fee_per_blob_gas,
        input: Bytes::new(),
    };
    sign(a, tx.with_sidecar(sidecar))
}

/// The context of an Osaka block whose blob base fee is 1 wei.
fn osaka_ctx() -> crate::chain::NextBlock {
    let mut c = ctx();
    c.osaka = true;
    c.blobs = Some((alloy_eips::eip7840::BlobParams::osaka(), 1));
    c
}

#[test]
fn blob_transactions_with_valid_cell_proofs_are_pooled_without_their_blobs() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let sidecar = SidecarBuilder::<SimpleCoder>::from_slice(b"blob data")
        .build_7594()
        .unwrap();
    let hashes: Vec<_> = sidecar.versioned_hashes().collect();
    let tx = blob_tx(
        &a,
        BlobTransactionSidecarVariant::Eip7594(sidecar),
        hashes,
        1,
    );
    let raw = encode(&tx);
    assert!(
        raw.len() > 128 * 1024,
        "a blob is 128 KiB: past the plain limit"
    );
    let p = pool();
    let hash = p.add_raw(&raw, &state, &osaka_ctx()).unwrap();
    let pooled = p.get(&hash).unwrap();
    // Blocks get the transaction alone (same hash); gossip and the journal keep the blobs.
    assert_eq!(*pooled.tx.tx_hash(), hash);
    assert!(pooled
        .tx
        .inner()
        .as_eip4844()
        .unwrap()
        .tx()
        .as_with_sidecar()
        .is_none());
    assert_eq!(pooled.raw, raw);
}

#[test]
fn blob_transactions_are_checked_as_geths_blob_pool_does() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let add = |tx, ctx: &crate::chain::NextBlock| {
        pool()
            .add_raw(&encode(&tx), &state, ctx)
            .unwrap_err()
            .to_string()
    };
    let cells = SidecarBuilder::<SimpleCoder>::from_slice(b"blob data")
        .build_7594()
        .unwrap();
    let hashes: Vec<_> = cells.versioned_hashes().collect();
    // Proofs that do not match the versioned hashes.
    let wrong = vec![alloy_primitives::B256::repeat_byte(1)];
    let err = add(
        blob_tx(
            &a,
            BlobTransactionSidecarVariant::Eip7594(cells.clone()),
            wrong,
            1,
        ),
        &osaka_ctx(),
    );
    assert!(err.starts_with("invalid blob sidecar"), "{err}");
    // A blob fee cap below the block's blob base fee.
    let mut dear = osaka_ctx();
    dear.blobs = Some((alloy_eips::eip7840::BlobParams::osaka(), 5));
    let err = add(
        blob_tx(
            &a,
            BlobTransactionSidecarVariant::Eip7594(cells.clone()),
            hashes.clone(),
            1,
        ),
        &dear,
    );
    assert!(
        err.starts_with("max fee per blob gas less than block blob gas fee"),
        "{err}"
    );
    // EIP-4844 proofs after Osaka.
    let legacy = SidecarBuilder::<SimpleCoder>::from_slice(b"blob data")
        .build_4844()
        .unwrap();
    let err = add(
        blob_tx(
            &a,
            BlobTransactionSidecarVariant::Eip4844(legacy),
            hashes.clone(),
            1,
        ),
        &osaka_ctx(),
    );
    assert!(err.contains("EIP-7594 cell proofs"), "{err}");
    // Without its blobs, and before Cancun.
    let bare = TxEip4844 {
        chain_id: CHAIN_ID,
        max_fee_per_gas: 10,
        gas_limit: 21_000,
        blob_versioned_hashes: hashes.clone(),
        max_fee_per_blob_gas: 1,
        ..Default::default()
    };
    let err = add(sign(&a, bare), &osaka_ctx());
    assert!(
        err.starts_with("missing sidecar in blob transaction"),
        "{err}"
    );
    let err = add(
        blob_tx(&a, BlobTransactionSidecarVariant::Eip7594(cells), hashes, 1),
        &ctx(),
    );
    assert_eq!(err, "transaction type not supported");
}

fn set_code_tx(a: &alloy_signer_local::PrivateKeySigner, auths: usize) -> TxEip7702 {
    let auth = Authorization {
        chain_id: U256::from(CHAIN_ID),
        address: Address::repeat_byte(7),
        nonce: 1,
    };
    let sig = a.sign_hash_sync(&auth.signature_hash()).unwrap();
    TxEip7702 {
        chain_id: CHAIN_ID,
        nonce: 0,
        gas_limit: 100_000,
        max_fee_per_gas: 10,
        max_priority_fee_per_gas: 1,
        to: Address::repeat_byte(1),
        value: U256::ZERO,
        access_list: Default::default(),
        authorization_list: vec![auth.into_signed(sig); auths],
        input: Bytes::new(),
    }
}

#[test]
fn set_code_transactions_need_prague_and_authorizations() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    let tx = sign(&a, set_code_tx(&a, 1));
    let pre_prague = crate::chain::NextBlock {
        prague: false,
        osaka: false,
        blobs: None,
        ..ctx()
    };
    let err = p.add(tx.clone(), &state, &pre_prague).unwrap_err();
    assert_eq!(err.to_string(), "transaction type not supported");
    let err = p
        .add(sign(&a, set_code_tx(&a, 0)), &state, &ctx())
        .unwrap_err();
    assert_eq!(err.to_string(), "EIP-7702 transaction with empty auth list");
    p.add_raw(&encode(&tx), &state, &ctx()).unwrap();
}

#[test]
fn set_code_intrinsic_gas_counts_authorizations() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let mut t = set_code_tx(&a, 2);
    t.gas_limit = 70_999;
    let err = pool().add(sign(&a, t), &state, &ctx()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "intrinsic gas too low: gas 70999, minimum needed 71000"
    );
}

#[test]
fn oversized_transactions_are_rejected() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = Pool::new(PoolConfig {
        max_tx_size: 200,
        ..Default::default()
    })
    .unwrap();
    let tx = eip1559(&a, 0, 1_000_000, 10, 1, Bytes::from(vec![1u8; 300]));
    let err = p.add_raw(&encode(&tx), &state, &ctx()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("oversized data: transaction size "),
        "{err}"
    );
}

#[test]
fn garbage_is_a_decode_error() {
    let state = MemState::default();
    let err = pool().add_raw(&[0x02, 0xc0], &state, &ctx()).unwrap_err();
    assert!(matches!(err, PoolError::Decode(_)), "{err}");
}

#[test]
fn invalid_signature_is_invalid_sender() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let t = eip1559_tx(0, 21_000, 10, 1, Bytes::new());
    // r = 0 is never a valid signature.
    let sig = alloy_primitives::Signature::new(U256::ZERO, U256::from(1), false);
    let raw =
        alloy_eips::eip2718::Encodable2718::encoded_2718(&TxEnvelope::from(t.into_signed(sig)));
    let err = pool().add_raw(&raw, &state, &ctx()).unwrap_err();
    assert_eq!(err.to_string(), "invalid sender");
}

#[test]
fn future_nonce_queues_until_gap_closes() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    let mut events = p.subscribe();
    let t2 = transfer(&a, 2, 10, 1);
    let t1 = transfer(&a, 1, 10, 1);
    p.add(t2.clone(), &state, &ctx()).unwrap();
    p.add(t1.clone(), &state, &ctx()).unwrap();
    assert_eq!(p.status(), (0, 2));
    assert_eq!(p.pending_nonce(a.address()), None);
    assert!(p.best(BASE_FEE).is_empty());
    assert!(events.try_recv().is_err());
    let t0 = transfer(&a, 0, 10, 1);
    p.add(t0.clone(), &state, &ctx()).unwrap();
    assert_eq!(p.status(), (3, 0));
    assert_eq!(p.pending_nonce(a.address()), Some(3));
    let got: Vec<_> = std::iter::from_fn(|| events.try_recv().ok()).collect();
    assert_eq!(
        got,
        vec![
            *t0.inner().tx_hash(),
            *t1.inner().tx_hash(),
            *t2.inner().tx_hash()
        ]
    );
    let content = p.content();
    assert_eq!(content.pending[&a.address()].len(), 3);
    assert!(content.queued.is_empty());
}

#[test]
fn queued_is_promoted_when_block_closes_gap() {
    let a = signer(1);
    let mut state = MemState::funded(&[&a]);
    let p = pool();
    p.add(transfer(&a, 1, 10, 1), &state, &ctx()).unwrap();
    assert_eq!(p.status(), (0, 1));
    // Nonce 0 was included through another node: the account nonce moves to 1.
    state.set(a.address(), 1, U256::from(10u128.pow(21)));
    let mut events = p.subscribe();
    p.on_new_block(&state, &ctx());
    assert_eq!(p.status(), (1, 0));
    assert!(events.try_recv().is_ok());
}

#[test]
fn new_block_drops_included_and_unaffordable() {
    let (a, b) = (signer(1), signer(2));
    let mut state = MemState::funded(&[&a, &b]);
    let p = pool();
    let a0 = p.add(transfer(&a, 0, 10, 1), &state, &ctx()).unwrap();
    let a1 = p.add(transfer(&a, 1, 10, 1), &state, &ctx()).unwrap();
    p.add(transfer(&b, 0, 10, 1), &state, &ctx()).unwrap();
    p.add(transfer(&b, 1, 10, 1), &state, &ctx()).unwrap();
    state.set(a.address(), 1, U256::from(10u128.pow(21)));
    // b can afford neither any more.
    state.set(b.address(), 0, U256::from(1));
    p.on_new_block(&state, &ctx());
    assert!(p.get(&a0).is_none());
    assert!(p.get(&a1).is_some());
    assert_eq!(p.status(), (1, 0));
    assert_eq!(
        p.content().pending.keys().copied().collect::<Vec<_>>(),
        vec![a.address()]
    );
}

#[test]
fn removing_a_pending_tx_demotes_later_nonces() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    p.add(transfer(&a, 0, 10, 1), &state, &ctx()).unwrap();
    let h1 = p.add(transfer(&a, 1, 10, 1), &state, &ctx()).unwrap();
    p.add(transfer(&a, 2, 10, 1), &state, &ctx()).unwrap();
    p.remove(&[h1]);
    assert_eq!(p.status(), (1, 1));
    assert_eq!(p.pending_nonce(a.address()), Some(1));
    assert_eq!(nonces(&p.best(BASE_FEE)), vec![(a.address(), 0)]);
}

#[test]
fn replacement_needs_ten_percent_bump() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    let old = p.add(transfer(&a, 0, 100, 10), &state, &ctx()).unwrap();
    for (fee, tip) in [(109, 11), (110, 10), (200, 10), (100, 100)] {
        let err = p
            .add(transfer(&a, 0, fee, tip), &state, &ctx())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "replacement transaction underpriced",
            "{fee}/{tip}"
        );
    }
    let new = p.add(transfer(&a, 0, 110, 11), &state, &ctx()).unwrap();
    assert!(p.get(&old).is_none());
    assert!(p.get(&new).is_some());
    assert_eq!(p.status(), (1, 0));
}

#[test]
fn best_orders_by_tip_then_nonce() {
    let (a, b, c) = (signer(1), signer(2), signer(3));
    let state = MemState::funded(&[&a, &b, &c]);
    let p = pool();
    // a: tips 5 then 50; b: tip 20, 1; c: max fee 8 at base fee 7 -> effective tip 1.
    p.add(transfer(&a, 0, 100, 5), &state, &ctx()).unwrap();
    p.add(transfer(&a, 1, 100, 50), &state, &ctx()).unwrap();
    p.add(transfer(&b, 0, 100, 20), &state, &ctx()).unwrap();
    p.add(transfer(&b, 1, 100, 1), &state, &ctx()).unwrap();
    p.add(transfer(&c, 0, 8, 8), &state, &ctx()).unwrap();
    let order = nonces(&p.best(BASE_FEE));
    assert_eq!(
        order,
        vec![
            (b.address(), 0),
            (a.address(), 0),
            (a.address(), 1),
            (b.address(), 1),
            (c.address(), 0),
        ]
    );
    // At a base fee of 9, c's tx cannot pay and is skipped.
    assert!(!nonces(&p.best(9)).contains(&(c.address(), 0)));
}

#[test]
fn best_stops_a_sender_at_a_tx_below_base_fee() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    p.add(transfer(&a, 0, 100, 1), &state, &ctx()).unwrap();
    p.add(transfer(&a, 1, 8, 1), &state, &ctx()).unwrap();
    p.add(transfer(&a, 2, 100, 1), &state, &ctx()).unwrap();
    assert_eq!(nonces(&p.best(50)), vec![(a.address(), 0)]);
}

#[test]
fn cheapest_is_evicted_when_full() {
    let (a, b, c, d) = (signer(1), signer(2), signer(3), signer(4));
    let state = MemState::funded(&[&a, &b, &c, &d]);
    let p = Pool::new(PoolConfig {
        max_txs: 2,
        ..Default::default()
    })
    .unwrap();
    let cheap = p.add(transfer(&a, 0, 100, 2), &state, &ctx()).unwrap();
    let mid = p.add(transfer(&b, 0, 100, 5), &state, &ctx()).unwrap();
    let err = p.add(transfer(&c, 0, 100, 2), &state, &ctx()).unwrap_err();
    assert_eq!(err.to_string(), "txpool is full");
    let rich = p.add(transfer(&d, 0, 100, 9), &state, &ctx()).unwrap();
    assert!(p.get(&cheap).is_none());
    assert!(p.get(&mid).is_some() && p.get(&rich).is_some());
    assert_eq!(p.status(), (2, 0));
}

#[test]
fn replacement_in_a_full_pool_needs_no_eviction() {
    let (a, b) = (signer(1), signer(2));
    let state = MemState::funded(&[&a, &b]);
    let p = Pool::new(PoolConfig {
        max_txs: 2,
        ..Default::default()
    })
    .unwrap();
    p.add(transfer(&a, 0, 100, 2), &state, &ctx()).unwrap();
    let b0 = p.add(transfer(&b, 0, 100, 5), &state, &ctx()).unwrap();
    p.add(transfer(&a, 0, 200, 20), &state, &ctx()).unwrap();
    assert!(p.get(&b0).is_some());
    assert_eq!(p.status(), (2, 0));
}

#[test]
fn journal_restores_pending_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = PoolConfig {
        journal_path: Some(dir.path().join("txs.rlp")),
        ..Default::default()
    };
    let (a, b) = (signer(1), signer(2));
    let mut state = MemState::funded(&[&a, &b]);
    // (b's transactions used to be queued at nonce 5 and were restored as queued: the journal
    // now keeps executable transactions only, see `journal_does_not_restore_queued_junk`.)
    let (a0, a1, b0);
    {
        let p = Pool::new(cfg.clone()).unwrap();
        a0 = p.add(transfer(&a, 0, 100, 1), &state, &ctx()).unwrap();
        a1 = p.add(transfer(&a, 1, 100, 1), &state, &ctx()).unwrap();
        b0 = p.add(transfer(&b, 0, 100, 1), &state, &ctx()).unwrap();
        // Replaced: its journal record is dead.
        p.add(transfer(&b, 0, 200, 2), &state, &ctx()).unwrap();
    }
    // a0 got included meanwhile.
    state.set(a.address(), 1, U256::from(10u128.pow(21)));
    let p = Pool::new(cfg.clone()).unwrap();
    assert_eq!(p.load_journal(&state, &ctx()).unwrap(), 2);
    assert!(p.get(&a0).is_none());
    assert!(p.get(&a1).is_some());
    assert!(p.get(&b0).is_none());
    assert_eq!(p.status(), (2, 0));
    // The journal was compacted to the two survivors.
    let mut j = super::journal::Journal::open(cfg.journal_path.as_deref().unwrap()).unwrap();
    assert_eq!(j.read_all().unwrap().len(), 2);
    // And a third start restores the same.
    let p = Pool::new(cfg).unwrap();
    assert_eq!(p.load_journal(&state, &ctx()).unwrap(), 2);
}

#[test]
fn concurrent_adds_from_threads_are_all_accepted() {
    let signers: Vec<_> = (1..=4).map(signer).collect();
    let state = Arc::new(MemState::funded(&signers.iter().collect::<Vec<_>>()));
    let p = Arc::new(pool());
    let handles: Vec<_> = signers
        .into_iter()
        .map(|s| {
            let (p, state) = (p.clone(), state.clone());
            std::thread::spawn(move || {
                for n in (0..10).rev() {
                    p.add(transfer(&s, n, 100, 1), &*state, &ctx()).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(p.status(), (40, 0));
    assert_eq!(p.best(BASE_FEE).len(), 40);
}

#[test]
fn validation_against_state_from_before_the_last_block_does_not_queue_behind_a_gap() {
    // A sender's only pooled tx (nonce 0) is mined; the pool hears of the block. A validation
    // that had read the state just before that block (nonce 0) must not rebuild the sender at
    // nonce 0: its nonce-1 transaction is executable now and must be pending.
    let a = signer(1);
    let before = MemState::funded(&[&a]);
    let mut after = MemState::default();
    after.set(a.address(), 1, U256::from(10u128.pow(21)));
    let p = pool();
    p.add(transfer(&a, 0, 10 * GWEI, GWEI), &before, &ctx())
        .unwrap();
    p.on_new_block(&after, &ctx());
    assert_eq!(p.status(), (0, 0));
    p.add(transfer(&a, 1, 10 * GWEI, GWEI), &before, &ctx())
        .unwrap();
    assert_eq!(p.status(), (1, 0));
    assert_eq!(nonces(&p.best(0)), vec![(a.address(), 1)]);
    // And a stale validation cannot let an already-mined nonce back in.
    let err = p
        .add(transfer(&a, 0, 20 * GWEI, 2 * GWEI), &before, &ctx())
        .unwrap_err();
    assert_eq!(err.to_string(), "nonce too low: next nonce 1, tx nonce 0");
}

// ---- limits against free spam (gas price 0 everywhere) ----------------------------------------

/// The next block at base fee 0: transactions paying nothing are valid.
fn free_ctx() -> crate::chain::NextBlock {
    crate::chain::NextBlock {
        base_fee: 0,
        ..ctx()
    }
}

/// A transfer paying nothing at all.
fn free(signer: &alloy_signer_local::PrivateKeySigner, nonce: u64) -> Recovered<TxEnvelope> {
    transfer(signer, nonce, 0, 0)
}

#[test]
fn zero_balance_key_cannot_flood_the_queue() {
    // A fresh key without balance, nonce 0 missing: everything it sends is queued for ever.
    let spammer = signer(9);
    let user = signer(1);
    let state = MemState::funded(&[&user]);
    let p = pool();
    let accepted = (1..=500)
        .filter(|n| {
            p.add_raw(&encode(&free(&spammer, *n)), &state, &free_ctx())
                .is_ok()
        })
        .count();
    assert_eq!(accepted, POOL_ACCOUNT_QUEUE);
    assert_eq!(p.status(), (0, POOL_ACCOUNT_QUEUE));
    // The lowest nonces are the ones kept.
    let queued = &p.content().queued[&spammer.address()];
    assert_eq!(
        queued.keys().copied().collect::<Vec<_>>(),
        (1..=POOL_ACCOUNT_QUEUE as u64).collect::<Vec<_>>()
    );
    let err = p.add(free(&spammer, 501), &state, &free_ctx()).unwrap_err();
    assert!(
        err.to_string().starts_with("account limit exceeded"),
        "{err}"
    );
    // Everybody else is unaffected.
    p.add(free(&user, 0), &state, &free_ctx()).unwrap();
    assert_eq!(p.status(), (1, POOL_ACCOUNT_QUEUE));
}

#[test]
fn a_lower_nonce_displaces_the_highest_queued_when_the_account_queue_is_full() {
    let spammer = signer(9);
    let state = MemState::default();
    let p = pool();
    let top = POOL_ACCOUNT_QUEUE as u64 + 1;
    for n in 2..=top {
        p.add(free(&spammer, n), &state, &free_ctx()).unwrap();
    }
    let highest = *free(&spammer, top).inner().tx_hash();
    assert!(p.get(&highest).is_some());
    p.add(free(&spammer, 1), &state, &free_ctx()).unwrap();
    assert!(p.get(&highest).is_none());
    assert_eq!(p.status(), (0, POOL_ACCOUNT_QUEUE));
}

#[test]
fn cumulative_cost_of_a_sender_is_checked_against_its_balance() {
    let a = signer(1);
    let mut state = MemState::default();
    // Each transfer costs 21000 * 10 = 210000 at most; the balance covers two.
    state.set(a.address(), 0, U256::from(500_000));
    let p = pool();
    p.add(transfer(&a, 0, 10, 1), &state, &ctx()).unwrap();
    let a1 = p.add(transfer(&a, 1, 10, 1), &state, &ctx()).unwrap();
    let err = p.add(transfer(&a, 2, 10, 1), &state, &ctx()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "insufficient funds for gas * price + value: balance 500000, queued cost 420000, \
         tx cost 210000, overshot 130000"
    );
    // Queued transactions count too.
    let err = p.add(transfer(&a, 7, 10, 1), &state, &ctx()).unwrap_err();
    assert!(err.to_string().contains("overshot 130000"), "{err}");
    // A replacement counts instead of the transaction it replaces, not on top of it.
    let new = p.add(transfer(&a, 1, 11, 2), &state, &ctx()).unwrap();
    assert!(p.get(&a1).is_none() && p.get(&new).is_some());
    assert_eq!(p.status(), (2, 0));
}

#[test]
fn full_pool_of_free_transactions_from_one_sender_admits_another_sender() {
    let (whale, b) = (signer(1), signer(2));
    let state = MemState::funded(&[&whale, &b]);
    let p = Pool::new(PoolConfig {
        max_txs: 20,
        ..Default::default()
    })
    .unwrap();
    for n in 0..20 {
        p.add(free(&whale, n), &state, &free_ctx()).unwrap();
    }
    assert_eq!(p.status(), (20, 0));
    // Price 0 can never outbid price 0: the room comes from the sender holding the most slots
    // above its guarantee, from its highest nonce down (no gap).
    let b0 = p.add(free(&b, 0), &state, &free_ctx()).unwrap();
    assert!(p.get(&b0).is_some());
    assert_eq!(p.status(), (20, 0));
    assert_eq!(p.pending_nonce(whale.address()), Some(19));
    assert!(p.get(free(&whale, 19).inner().tx_hash()).is_none());
    // The whale adding more to its own over-share run is refused, not admitted by evicting b.
    let err = p.add(free(&whale, 19), &state, &free_ctx()).unwrap_err();
    assert_eq!(err.to_string(), "txpool is full");
    assert!(p.get(&b0).is_some());
}

#[test]
fn oversized_garbage_is_refused_before_decoding() {
    let state = MemState::default();
    let mut junk = vec![0xab; 200 * 1024];
    junk[0] = 0xf9;
    let err = pool().add_raw(&junk, &state, &ctx()).unwrap_err();
    assert!(matches!(err, PoolError::OversizedData { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "oversized data: transaction size {}, limit {}",
            200 * 1024,
            crate::constants::POOL_MAX_TX_SIZE
        )
    );
}

#[test]
fn journal_does_not_restore_queued_junk() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = PoolConfig {
        journal_path: Some(dir.path().join("txs.rlp")),
        ..Default::default()
    };
    let (spammer, a) = (signer(9), signer(1));
    let state = MemState::funded(&[&a]);
    let a0;
    {
        let p = Pool::new(cfg.clone()).unwrap();
        for n in 1..=100 {
            let _ = p.add(free(&spammer, n), &state, &free_ctx());
        }
        a0 = p.add(free(&a, 0), &state, &free_ctx()).unwrap();
    }
    let p = Pool::new(cfg.clone()).unwrap();
    assert_eq!(p.load_journal(&state, &free_ctx()).unwrap(), 1);
    assert!(p.get(&a0).is_some());
    assert_eq!(p.status(), (1, 0));
    let mut j = super::journal::Journal::open(cfg.journal_path.as_deref().unwrap()).unwrap();
    assert_eq!(j.read_all().unwrap().len(), 1);
}

/// A small pool for the limit tests.
fn small_pool(tweak: impl FnOnce(&mut PoolConfig)) -> Pool {
    let mut cfg = PoolConfig::default();
    tweak(&mut cfg);
    Pool::new(cfg).unwrap()
}

#[test]
fn queued_transactions_are_evicted_before_pending_ones() {
    let (spammer, a, b) = (signer(9), signer(1), signer(2));
    let state = MemState::funded(&[&a, &b]);
    let p = small_pool(|c| c.max_txs = 10);
    for n in 1..=5 {
        p.add(free(&spammer, n), &state, &free_ctx()).unwrap();
    }
    for n in 0..5 {
        p.add(free(&a, n), &state, &free_ctx()).unwrap();
    }
    assert_eq!(p.status(), (5, 5));
    // An executable newcomer takes the highest queued nonce, not a pending transaction.
    p.add(free(&b, 0), &state, &free_ctx()).unwrap();
    assert_eq!(p.status(), (6, 4));
    assert!(p.get(free(&spammer, 5).inner().tx_hash()).is_none());
    // A queued newcomer takes from a sender with more queued than it will have.
    p.add(free(&b, 2), &state, &free_ctx()).unwrap();
    assert_eq!(p.status(), (6, 4));
    assert!(p.get(free(&spammer, 4).inner().tx_hash()).is_none());
    // But never a pending one: with only pending left to evict, it is refused.
    let p = small_pool(|c| c.max_txs = 2);
    p.add(free(&a, 0), &state, &free_ctx()).unwrap();
    p.add(free(&a, 1), &state, &free_ctx()).unwrap();
    let err = p.add(free(&b, 3), &state, &free_ctx()).unwrap_err();
    assert_eq!(err.to_string(), "txpool is full");
}

#[test]
fn global_queued_limit_is_shared_by_senders() {
    let (s1, s2, s3) = (signer(7), signer(8), signer(9));
    let state = MemState::default();
    let p = small_pool(|c| c.max_queued = 6);
    for n in 1..=4 {
        p.add(free(&s1, n), &state, &free_ctx()).unwrap();
    }
    for n in 1..=2 {
        p.add(free(&s2, n), &state, &free_ctx()).unwrap();
    }
    assert_eq!(p.status(), (0, 6));
    // s3 takes s1's highest queued: s1 keeps more than s3 will hold.
    p.add(free(&s3, 1), &state, &free_ctx()).unwrap();
    assert_eq!(p.status(), (0, 6));
    assert!(p.get(free(&s1, 4).inner().tx_hash()).is_none());
    p.add(free(&s3, 2), &state, &free_ctx()).unwrap();
    // Now everybody holds 2 queued: nobody gives room to a third of s3's.
    let err = p.add(free(&s3, 3), &state, &free_ctx()).unwrap_err();
    assert_eq!(err.to_string(), "txpool is full");
    assert_eq!(p.status(), (0, 6));
}

#[test]
fn pool_bytes_are_capped() {
    let (a, b) = (signer(1), signer(2));
    let state = MemState::funded(&[&a, &b]);
    let big = |s, n| eip1559(s, n, 1_000_000, 0, 0, Bytes::from(vec![1u8; 10_000]));
    let size = encode(&big(&a, 0)).len();
    let p = small_pool(|c| {
        c.max_bytes = 3 * size + size / 2;
        c.account_slots = 1;
    });
    for n in 0..3 {
        p.add(big(&a, n), &state, &free_ctx()).unwrap();
    }
    // The count is far from its cap but the bytes are not: b's transaction evicts a's last.
    p.add(big(&b, 0), &state, &free_ctx()).unwrap();
    assert_eq!(p.status(), (3, 0));
    assert!(p.get(big(&a, 2).inner().tx_hash()).is_none());
    let err = p.add(big(&a, 2), &state, &free_ctx()).unwrap_err();
    assert_eq!(err.to_string(), "txpool is full");
}

#[test]
fn queued_transactions_expire_after_their_lifetime_without_activity() {
    let (spammer, a) = (signer(9), signer(1));
    let state = MemState::funded(&[&a]);
    let dir = tempfile::tempdir().unwrap();
    let storage = l2node_storage::Storage::open(&dir.path().join("db")).unwrap();
    let exclusions = Arc::new(crate::exclusions::Exclusions::new(storage));
    let p = pool().with_exclusions(exclusions.clone());
    for n in 1..=3 {
        p.add(free(&spammer, n), &state, &free_ctx()).unwrap();
    }
    p.add(free(&a, 0), &state, &free_ctx()).unwrap();
    p.add(free(&a, 2), &state, &free_ctx()).unwrap();
    assert_eq!(p.status(), (1, 4));
    let now = std::time::Instant::now();
    let lifetime = crate::constants::POOL_QUEUE_LIFETIME;
    let mut inner = p.inner.lock();
    assert_eq!(p.expire_queued(&mut inner, now, 0), 0);
    assert_eq!(p.expire_queued(&mut inner, now + lifetime, 0), 4);
    drop(inner);
    // Each dropped transaction has a record saying why.
    let dropped = exclusions
        .get(free(&spammer, 2).inner().tx_hash())
        .unwrap()
        .expect("recorded");
    assert_eq!(dropped.stage, crate::exclusions::Stage::Sequencer);
    assert!(dropped.reason.contains("nonce gap"), "{}", dropped.reason);
    // Pending transactions have no lifetime.
    assert_eq!(p.status(), (1, 0));

    // Through the block path, with a zero lifetime.
    let p = small_pool(|c| c.queue_lifetime = std::time::Duration::ZERO);
    p.add(free(&a, 0), &state, &free_ctx()).unwrap();
    p.add(free(&spammer, 1), &state, &free_ctx()).unwrap();
    assert_eq!(p.status(), (1, 1));
    p.on_new_block_touched(&state, &free_ctx(), &[]);
    assert_eq!(p.status(), (1, 0));
    // And on admission, when no block comes.
    p.add(free(&spammer, 1), &state, &free_ctx()).unwrap();
    p.add(free(&a, 1), &state, &free_ctx()).unwrap();
    assert_eq!(p.status(), (2, 0));
}

#[test]
fn demoted_transactions_respect_the_queued_limits() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = small_pool(|c| c.account_queue = 2);
    let hashes: Vec<_> = (0..6)
        .map(|n| p.add(free(&a, n), &state, &free_ctx()).unwrap())
        .collect();
    // Block building dropped nonce 1: 2..5 are behind a gap now, only two may stay queued.
    p.remove(&[hashes[1]]);
    assert_eq!(p.status(), (1, 2));
    assert!(p.get(&hashes[3]).is_some() && p.get(&hashes[4]).is_none());
}

#[test]
fn new_block_drops_what_the_balance_no_longer_covers_from_the_highest_nonce() {
    let a = signer(1);
    let mut state = MemState::default();
    state.set(a.address(), 0, U256::from(1_000_000));
    let p = pool();
    let hashes: Vec<_> = (0..4)
        .map(|n| p.add(transfer(&a, n, 10, 1), &state, &ctx()).unwrap())
        .collect();
    // 210000 each: the new balance covers two.
    state.set(a.address(), 0, U256::from(500_000));
    p.on_new_block(&state, &ctx());
    assert_eq!(p.status(), (2, 0));
    assert!(p.get(&hashes[1]).is_some() && p.get(&hashes[2]).is_none());
}

#[test]
fn journal_keeps_transactions_promoted_from_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = PoolConfig {
        journal_path: Some(dir.path().join("txs.rlp")),
        ..Default::default()
    };
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    {
        let p = Pool::new(cfg.clone()).unwrap();
        p.add(transfer(&a, 2, 100, 1), &state, &ctx()).unwrap();
        p.add(transfer(&a, 1, 100, 1), &state, &ctx()).unwrap();
        p.add(transfer(&a, 0, 100, 1), &state, &ctx()).unwrap();
    }
    let p = Pool::new(cfg).unwrap();
    assert_eq!(p.load_journal(&state, &ctx()).unwrap(), 3);
    assert_eq!(p.status(), (3, 0));
}

#[test]
fn out_of_order_batches_resent_are_accepted_or_already_known() {
    let a = signer(1);
    let state = MemState::funded(&[&a]);
    let p = pool();
    let txs: Vec<_> = (0..200).map(|n| transfer(&a, n, 10, 1)).collect();
    let mut refused = Vec::new();
    // Batches overtake each other: 100..200, then 0..100.
    for n in (100..200).chain(0..100) {
        if let Err(e) = p.add(txs[n as usize].clone(), &state, &ctx()) {
            refused.push((n, e.to_string()));
        }
    }
    for round in 0..5 {
        let again = std::mem::take(&mut refused);
        for (n, _) in again {
            match p.add(txs[n as usize].clone(), &state, &ctx()) {
                Ok(_) => {}
                Err(e) if e.to_string() == "already known" => {}
                Err(e) if e.to_string().starts_with("account limit exceeded") => {
                    refused.push((n, e.to_string()))
                }
                Err(e) => panic!("round {round}: nonce {n}: {e}"),
            }
        }
    }
    assert!(refused.is_empty(), "{refused:?}");
}
