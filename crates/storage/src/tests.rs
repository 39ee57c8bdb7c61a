//! Storage tests: atomic commits, archive reads through history, the log index.

use alloy_consensus::{BlockBody, Header, Receipt, ReceiptEnvelope, ReceiptWithBloom};
use alloy_primitives::{Address, Log, LogData, B256, U256};
use revm::bytecode::Bytecode;

use super::*;
use crate::StateReader;
use l2node_trie::state::{AccountChange, AccountState};

fn account(address: Address, nonce: u64, storage: Vec<(U256, U256)>) -> AccountChange {
    AccountChange {
        address,
        before: None,
        info: Some(AccountState {
            nonce,
            balance: U256::from(nonce * 10),
            code_hash: revm::primitives::KECCAK_EMPTY,
        }),
        new_code: None,
        storage_before: Vec::new(),
        storage_wiped: false,
        storage,
    }
}

fn commit(
    s: &Storage,
    number: u64,
    changes: &[AccountChange],
    receipts: Vec<ReceiptEnvelope>,
) -> B256 {
    s.commit_block(number, changes, |root| {
        Ok::<_, StorageError>(block(number, root, receipts))
    })
    .unwrap()
    .1
}

/// An empty block `number` with state root `root`.
fn block(number: u64, state_root: B256, receipts: Vec<ReceiptEnvelope>) -> BlockToStore {
    BlockToStore {
        header: Header {
            number,
            state_root,
            ..Default::default()
        },
        body: BlockBody::default(),
        senders: vec![],
        receipts,
        karma: Default::default(),
    }
}

/// A (legacy, unsigned) transaction of its own for block `number`.
fn tx_of(number: u64) -> alloy_consensus::TxEnvelope {
    use alloy_consensus::SignableTransaction;
    let tx = alloy_consensus::TxLegacy {
        nonce: number,
        ..Default::default()
    };
    tx.into_signed(alloy_primitives::Signature::test_signature())
        .into()
}

fn hash_of(number: u64) -> B256 {
    *tx_of(number).tx_hash()
}

/// Block `number` holding [`tx_of`]`(number)`.
fn with_tx(number: u64, state_root: B256) -> BlockToStore {
    let mut b = block(number, state_root, vec![]);
    b.body.transactions = vec![tx_of(number)];
    b
}

fn receipt_with_log(address: Address, topic: B256) -> ReceiptEnvelope {
    let log = Log {
        address,
        data: LogData::new_unchecked(vec![topic], Default::default()),
    };
    let r = Receipt {
        status: true.into(),
        cumulative_gas_used: 1,
        logs: vec![log],
    };
    ReceiptEnvelope::Eip1559(ReceiptWithBloom::from(r))
}

fn open() -> (tempfile::TempDir, Storage) {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(&dir.path().join("db")).unwrap();
    (dir, s)
}

#[test]
fn old_blocks_read_their_own_state() {
    let (_dir, s) = open();
    let a = Address::repeat_byte(1);
    let slot = U256::from(7);
    commit(
        &s,
        0,
        &[account(a, 1, vec![(slot, U256::from(100))])],
        vec![],
    );
    commit(
        &s,
        1,
        &[account(a, 2, vec![(slot, U256::from(200))])],
        vec![],
    );
    commit(&s, 2, &[account(a, 3, vec![(slot, U256::ZERO)])], vec![]);
    for (block, nonce, value) in [(0, 1, 100), (1, 2, 200), (2, 3, 0)] {
        let st = s.state_at(Some(block)).unwrap();
        assert_eq!(
            st.account(a).unwrap().unwrap().nonce,
            nonce,
            "block {block}"
        );
        assert_eq!(
            st.storage(a, slot).unwrap(),
            U256::from(value),
            "block {block}"
        );
    }
    assert_eq!(
        s.state_at(None).unwrap().account(a).unwrap().unwrap().nonce,
        3
    );
}

/// Blocks of many accounts write their plain state while the root is computed
/// (`OVERLAP_MIN_ACCOUNTS`): the same roots and the same state as one after the other, with
/// accounts destroyed, storage wiped and code deployed among them.
#[test]
fn large_blocks_write_their_state_beside_their_root() {
    use l2node_trie::{apply_changes, state_root, MemoryTrieStore};
    let (_dir, s) = open();
    let mut memory = MemoryTrieStore::new();
    let address = |i: u64| Address::left_padding_from(&i.to_be_bytes());
    let (slot, other_slot) = (U256::from(3), U256::from(5));
    let code = Bytecode::new_raw(vec![0x60, 0x00, 0x00].into());
    for number in 0..3u64 {
        // Half of each block's accounts are new, half were changed by the block before.
        let mut changes: Vec<AccountChange> = (number * 50..number * 50 + 100)
            .map(|i| account(address(i), number + 1, vec![(slot, U256::from(i + number))]))
            .collect();
        if number == 2 {
            // Account 0 (block 0) goes; account 70 (blocks 0 and 1) has its storage wiped and
            // one new slot; account 500 is a new contract.
            changes.push(AccountChange {
                info: None,
                ..account(address(0), 0, vec![])
            });
            let mut wiped = account(address(70), 9, vec![(other_slot, U256::from(1))]);
            wiped.storage_wiped = true;
            changes.push(wiped);
            let mut deployed = account(address(500), 1, vec![]);
            deployed.info.as_mut().unwrap().code_hash = code.hash_slow();
            deployed.new_code = Some(code.clone());
            changes.push(deployed);
        }
        assert!(changes.len() >= crate::write::OVERLAP_MIN_ACCOUNTS);
        apply_changes(&mut memory, &changes).unwrap();
        commit(&s, number, &changes, vec![]);
        let header = s.header(number).unwrap().unwrap();
        assert_eq!(
            header.state_root,
            state_root(&memory).unwrap(),
            "block {number}"
        );
    }
    // Account 60 was written by blocks 0 (nonce 1) and 1 (nonce 2).
    for (block, nonce, value) in [(0, 1, 60), (1, 2, 61), (2, 2, 61)] {
        let st = s.state_at(Some(block)).unwrap();
        assert_eq!(
            st.account(address(60)).unwrap().unwrap().nonce,
            nonce,
            "block {block}"
        );
        assert_eq!(
            st.storage(address(60), slot).unwrap(),
            U256::from(value),
            "block {block}"
        );
    }
    let (before, after) = (s.state_at(Some(1)).unwrap(), s.state_at(Some(2)).unwrap());
    assert!(s
        .state_at(Some(0))
        .unwrap()
        .account(address(120))
        .unwrap()
        .is_none());
    assert!(before.account(address(0)).unwrap().is_some());
    assert!(after.account(address(0)).unwrap().is_none());
    assert_eq!(before.storage(address(70), slot).unwrap(), U256::from(71));
    assert_eq!(after.storage(address(70), slot).unwrap(), U256::ZERO);
    assert_eq!(
        after.storage(address(70), other_slot).unwrap(),
        U256::from(1)
    );
    assert_eq!(
        after
            .code_by_hash(code.hash_slow())
            .unwrap()
            .original_bytes(),
        code.original_bytes()
    );
}

#[test]
fn destroyed_account_and_wiped_storage_are_gone_now_but_not_before() {
    let (_dir, s) = open();
    let a = Address::repeat_byte(2);
    commit(
        &s,
        0,
        &[account(
            a,
            1,
            vec![
                (U256::from(1), U256::from(5)),
                (U256::from(2), U256::from(6)),
            ],
        )],
        vec![],
    );
    commit(
        &s,
        1,
        &[AccountChange {
            address: a,
            before: None,
            info: None,
            new_code: None,
            storage_before: Vec::new(),
            storage_wiped: true,
            storage: vec![],
        }],
        vec![],
    );
    let now = s.state_at(None).unwrap();
    assert!(now.account(a).unwrap().is_none());
    assert_eq!(now.storage(a, U256::from(1)).unwrap(), U256::ZERO);
    let then = s.state_at(Some(0)).unwrap();
    assert_eq!(then.account(a).unwrap().unwrap().nonce, 1);
    assert_eq!(then.storage(a, U256::from(2)).unwrap(), U256::from(6));
}

/// An account's creation writes no history entry: its record says which block wrote it. Reads
/// before the creation, the blocks where it changed (with its creations among them) and the
/// unwind of a creation all come out as if the entry were there.
#[test]
fn a_created_account_is_absent_before_its_block_without_a_history_entry() {
    let (_dir, s) = open();
    let a = Address::repeat_byte(3);
    let other = Address::repeat_byte(4);
    let destroyed = AccountChange {
        address: a,
        before: None,
        info: None,
        new_code: None,
        storage_before: Vec::new(),
        storage_wiped: true,
        storage: vec![],
    };
    let blocks: [Vec<AccountChange>; 7] = [
        vec![account(other, 1, vec![])],
        vec![account(a, 1, vec![])],
        vec![account(other, 2, vec![])],
        vec![account(a, 2, vec![])],
        vec![destroyed],
        vec![account(other, 3, vec![])],
        vec![account(a, 7, vec![])],
    ];
    let mut roots = Vec::new();
    for (n, changes) in blocks.iter().enumerate() {
        let n = n as u64;
        let sealed = s.commit_block(n, changes, |root| {
            Ok::<_, StorageError>(block(n, root, vec![]))
        });
        roots.push(sealed.unwrap().0.header.state_root);
    }
    let nonces = |s: &Storage| {
        (0..=6)
            .map(|n| {
                let state = s.state_at(Some(n)).unwrap();
                state.account(a).unwrap().map(|a| a.nonce)
            })
            .collect::<Vec<_>>()
    };
    let expected = [None, Some(1), Some(1), Some(2), None, None, Some(7)];
    assert_eq!(nonces(&s), expected);
    let entries = {
        use redb::ReadableDatabase;
        let tx = s.db.begin_read().unwrap();
        let table = tx.open_table(ACCOUNT_HISTORY).unwrap();
        let from = codec::with_block(a.as_slice(), 0);
        let to = codec::with_block(a.as_slice(), u64::MAX);
        table
            .range(from.as_slice()..=to.as_slice())
            .unwrap()
            .map(|e| codec::block_suffix(e.unwrap().0.value()))
            .collect::<Vec<_>>()
    };
    assert_eq!(entries, [3, 4], "the changes of an existing account only");

    let activity = |from, to, newest_first, limit| {
        s.address_activity(a, from, to, newest_first, limit)
            .unwrap()
    };
    assert_eq!(activity(0, 6, false, 10), [1, 3, 4, 6]);
    assert_eq!(activity(0, 6, true, 10), [6, 4, 3, 1]);
    assert_eq!(activity(0, 6, false, 2), [1, 3]);
    assert_eq!(activity(0, 6, true, 2), [6, 4]);
    assert_eq!(activity(0, 2, false, 10), [1]);
    assert_eq!(activity(2, 5, true, 10), [4, 3]);
    assert_eq!(activity(5, u64::MAX, false, 10), [6]);

    // Unwinding the recreation, the destruction and the update: each restores the record the
    // block replaced, so the reads of every block left stay the same.
    for n in [6u64, 5, 4, 3] {
        let changes = &blocks[n as usize];
        s.unwind_head(n, changes, &Default::default(), roots[n as usize - 1])
            .unwrap();
        let left = nonces(&s);
        assert_eq!(
            left[..n as usize],
            expected[..n as usize],
            "after unwinding {n}"
        );
    }
    assert_eq!(
        s.state_at(None).unwrap().account(a).unwrap().unwrap().nonce,
        1
    );
    assert_eq!(activity(0, u64::MAX, false, 10), [1]);
    // And the creation itself.
    s.unwind_head(2, &blocks[2], &Default::default(), roots[1])
        .unwrap();
    s.unwind_head(1, &blocks[1], &Default::default(), roots[0])
        .unwrap();
    assert!(s.state_at(None).unwrap().account(a).unwrap().is_none());
    assert_eq!(activity(0, u64::MAX, false, 10), Vec::<u64>::new());
}

/// A database from before creations went without a history entry: an empty entry at the
/// creation and records that do not say which block wrote them.
#[test]
fn creations_written_with_an_empty_history_entry_still_read() {
    let (dir, s) = open();
    let a = Address::repeat_byte(5);
    commit(
        &s,
        0,
        &[account(Address::repeat_byte(6), 1, vec![])],
        vec![],
    );
    commit(&s, 1, &[account(a, 1, vec![])], vec![]);
    commit(
        &s,
        2,
        &[account(Address::repeat_byte(6), 2, vec![])],
        vec![],
    );
    {
        let tx = s.db.begin_write().unwrap();
        let state = AccountState {
            nonce: 1,
            balance: U256::from(10),
            code_hash: revm::primitives::KECCAK_EMPTY,
        };
        tx.open_table(ACCOUNTS)
            .unwrap()
            .insert(&a.0 .0, codec::encode_account(&state, None).as_slice())
            .unwrap();
        tx.open_table(ACCOUNT_HISTORY)
            .unwrap()
            .insert(codec::with_block(a.as_slice(), 1).as_slice(), [].as_slice())
            .unwrap();
        tx.commit().unwrap();
    }
    drop(s);
    let s = Storage::open(&dir.path().join("db")).unwrap();
    let nonce = |n| {
        let state = s.state_at(Some(n)).unwrap();
        state.account(a).unwrap().map(|a| a.nonce)
    };
    assert_eq!([nonce(0), nonce(1), nonce(2)], [None, Some(1), Some(1)]);
    assert_eq!(s.address_activity(a, 0, 2, false, 10).unwrap(), [1]);
}

#[test]
fn failed_seal_writes_nothing() {
    let (_dir, s) = open();
    commit(&s, 0, &[], vec![]);
    let a = Address::repeat_byte(3);
    let err = s.commit_block(1, &[account(a, 1, vec![])], |_| {
        Err::<BlockToStore, _>(StorageError::Trie(l2node_trie::TrieError::Corrupt(
            "root mismatch".into(),
        )))
    });
    assert!(err.is_err());
    assert_eq!(s.head_number().unwrap(), Some(0));
    assert!(s.state_at(None).unwrap().account(a).unwrap().is_none());
}

#[test]
fn blocks_must_extend_the_head() {
    let (_dir, s) = open();
    commit(&s, 0, &[], vec![]);
    let err = s
        .commit_block(5, &[], |_| Ok::<_, StorageError>(unreachable_block()))
        .unwrap_err();
    assert!(matches!(
        err,
        StorageError::NotNext {
            number: 5,
            expected: 1
        }
    ));
}

fn unreachable_block() -> BlockToStore {
    unreachable!("seal is not called for a block that does not extend the head")
}

#[test]
fn code_and_hash_index_are_written_with_the_block() {
    let (_dir, s) = open();
    let code = Bytecode::new_raw(vec![0x60, 0x00, 0x00].into());
    let a = Address::repeat_byte(4);
    let mut change = account(a, 1, vec![]);
    change.info.as_mut().unwrap().code_hash = code.hash_slow();
    change.new_code = Some(code.clone());
    let hash = commit(&s, 0, &[change], vec![]);
    assert_eq!(s.block_number(&hash).unwrap(), Some(0));
    let st = s.state_at(None).unwrap();
    assert_eq!(
        st.code_by_hash(code.hash_slow()).unwrap().original_bytes(),
        code.original_bytes()
    );
    assert_eq!(st.block_hash(0).unwrap(), hash);
}

#[test]
fn log_index_finds_only_blocks_with_matching_address_and_topic() {
    let (_dir, s) = open();
    let (a, b) = (Address::repeat_byte(0xa), Address::repeat_byte(0xb));
    let (t1, t2) = (B256::repeat_byte(1), B256::repeat_byte(2));
    commit(&s, 0, &[], vec![]);
    commit(&s, 1, &[], vec![receipt_with_log(a, t1)]);
    commit(&s, 2, &[], vec![receipt_with_log(b, t1)]);
    commit(&s, 3, &[], vec![receipt_with_log(a, t2)]);
    let q = |addresses: Vec<Address>, t0: Vec<B256>| LogQuery {
        from: 0,
        to: 3,
        addresses,
        topics: [t0, vec![], vec![], vec![]],
    };
    assert_eq!(
        s.log_candidate_blocks(&q(vec![a], vec![])).unwrap(),
        vec![1, 3]
    );
    assert_eq!(
        s.log_candidate_blocks(&q(vec![a], vec![t1])).unwrap(),
        vec![1]
    );
    assert_eq!(
        s.log_candidate_blocks(&q(vec![], vec![t1])).unwrap(),
        vec![1, 2]
    );
    assert_eq!(
        s.log_candidate_blocks(&q(vec![], vec![])).unwrap(),
        vec![0, 1, 2, 3]
    );
    let narrow = LogQuery {
        from: 2,
        to: 3,
        ..q(vec![a], vec![])
    };
    assert_eq!(s.log_candidate_blocks(&narrow).unwrap(), vec![3]);
}

#[test]
fn reopened_database_resumes_at_the_committed_head() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let hash = {
        let s = Storage::open(&path).unwrap();
        commit(&s, 0, &[], vec![]);
        commit(
            &s,
            1,
            &[account(Address::repeat_byte(9), 1, vec![])],
            vec![],
        )
    };
    let s = Storage::open(&path).unwrap();
    assert_eq!(s.head_number().unwrap(), Some(1));
    assert_eq!(s.block(1).unwrap().unwrap().hash, hash);
}

#[test]
fn a_pruned_node_reads_within_its_window_refuses_beyond_and_stops_growing() {
    let (_dir, s) = open();
    let s = s.with_history_window(Some(1));
    let window = s.history_window().unwrap();
    assert_eq!(window, MIN_HISTORY_WINDOW, "raised to the minimum");
    let a = Address::repeat_byte(1);
    let slot = U256::from(7);
    let history_len = |s: &Storage| {
        use redb::{ReadableDatabase, ReadableTableMetadata};
        let tx = s.db.begin_read().unwrap();
        [
            tx.open_table(ACCOUNT_HISTORY).unwrap().len().unwrap(),
            tx.open_table(STORAGE_HISTORY).unwrap().len().unwrap(),
            tx.open_table(crate::tables::CHANGE_SETS)
                .unwrap()
                .len()
                .unwrap(),
        ]
    };
    let blocks = 4 * window;
    let fresh = |n: u64| Address::from_word(alloy_primitives::keccak256(n.to_be_bytes()));
    let mut lens = Vec::new();
    for n in 0..=blocks {
        // Every block changes the account and a slot (history grows each block) and creates
        // an account.
        commit(
            &s,
            n,
            &[
                account(a, n + 1, vec![(slot, U256::from(n + 1))]),
                account(fresh(n), 1, vec![]),
            ],
            vec![],
        );
        lens.push(history_len(&s));
    }
    let oldest = blocks - window;
    assert_eq!(s.first_state_block().unwrap(), oldest);
    assert_eq!(s.first_proof_block().unwrap(), oldest);
    // Within the window: each block's own state, from history.
    for n in [oldest, oldest + 1, blocks - 1, blocks] {
        let state = s.state_at(Some(n)).unwrap();
        assert_eq!(
            state.account_state(a).unwrap().unwrap().nonce,
            n + 1,
            "block {n}"
        );
        assert_eq!(
            state.storage(a, slot).unwrap(),
            U256::from(n + 1),
            "block {n}"
        );
        assert!(s.proof(a, &[], n).unwrap().is_ok(), "proof at {n}");
        // Each block's new account, absent the block before (no history entry says so).
        if n > oldest {
            let before = s.state_at(Some(n - 1)).unwrap();
            assert_eq!(before.account_state(fresh(n)).unwrap(), None, "block {n}");
            assert!(
                state.account_state(fresh(n)).unwrap().is_some(),
                "block {n}"
            );
        }
    }
    // Beyond it: the named error, and no proof.
    let err = s.state_at(Some(oldest - 1)).unwrap_err();
    assert!(
        matches!(err, StorageError::Pruned { block, oldest: o, window: w } if block == oldest - 1 && o == oldest && w == window),
        "{err}"
    );
    assert!(err.to_string().contains("--history-window"), "{err}");
    assert_eq!(s.proof(a, &[], oldest - 1).unwrap().unwrap_err(), oldest);
    // Flat: the history tables hold about the window's entries, not the chain's (an archive
    // would hold twice as many at block 4w as at 2w).
    let at = |i: u64| lens[i as usize];
    for t in 0..3 {
        assert!(
            at(blocks)[t] * 4 <= at(2 * window)[t] * 5,
            "table {t}: {} entries at block {blocks}, {} at {}",
            at(blocks)[t],
            at(2 * window)[t],
            2 * window
        );
    }
}

/// The trie of every block of the proof window, read by setting back what the later blocks
/// changed (deleted accounts, wiped and re-written storage among them), is the trie that block
/// left: same root, same proofs. A block before the window is refused with the first readable,
/// and the change sets of older blocks are gone.
#[test]
fn the_tries_of_recent_blocks_are_the_ones_they_left() {
    use l2node_trie::{account_proof, apply_changes, state_root, MemoryTrieStore};
    let dir = tempfile::tempdir().unwrap();
    let window = 20;
    // Written out after blocks 15 and 31: the window reads written and buffered blocks.
    let s = Storage::open(&dir.path().join("chain.redb"))
        .unwrap()
        .with_proof_window(window)
        .with_trie_buffer(16, usize::MAX);
    let pool: Vec<Address> = (1..=30u8).map(Address::repeat_byte).collect();
    let mut seed = 7u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut memory = MemoryTrieStore::new();
    let mut tries = Vec::new();
    let blocks = 40u64;
    for number in 0..blocks {
        let mut changes: std::collections::BTreeMap<Address, AccountChange> = Default::default();
        for _ in 0..6 {
            let address = pool[next(pool.len() as u64) as usize];
            let change = match next(10) {
                0 => AccountChange {
                    address,
                    before: None,
                    info: None,
                    new_code: None,
                    storage_before: Vec::new(),
                    storage_wiped: false,
                    storage: vec![],
                },
                kind => {
                    let slots: std::collections::BTreeMap<U256, U256> = (0..next(4))
                        .map(|_| (U256::from(next(5)), U256::from(next(3))))
                        .collect();
                    let mut c = account(address, next(1000) + 1, slots.into_iter().collect());
                    c.storage_wiped = kind == 1;
                    c
                }
            };
            changes.insert(address, change);
        }
        let changes: Vec<AccountChange> = changes.into_values().collect();
        apply_changes(&mut memory, &changes).unwrap();
        commit(&s, number, &changes, vec![]);
        tries.push(memory.clone());
    }
    let head = blocks - 1;
    let first = head - window;
    assert_eq!(s.first_proof_block().unwrap(), first);
    let slots: Vec<B256> = (0..5u64).map(|i| B256::from(U256::from(i))).collect();
    for (number, expected) in tries.iter().enumerate() {
        let number = number as u64;
        let read = s
            .with_trie_at(number, |trie| {
                let proofs: Vec<_> = pool
                    .iter()
                    .step_by(3)
                    .map(|a| account_proof(trie, *a, &slots).unwrap())
                    .collect();
                (state_root(trie).unwrap(), proofs)
            })
            .unwrap();
        if number < first {
            assert_eq!(read.unwrap_err(), first, "block {number}");
            continue;
        }
        let (root, proofs) = read.unwrap();
        assert_eq!(root, state_root(expected).unwrap(), "block {number}");
        for (proof, a) in proofs.iter().zip(pool.iter().step_by(3)) {
            assert_eq!(
                proof,
                &account_proof(expected, *a, &slots).unwrap(),
                "block {number}"
            );
        }
    }
    use redb::{ReadableDatabase, ReadableTableMetadata};
    let tx = s.db.begin_read().unwrap();
    let sets = tx.open_table(crate::tables::CHANGE_SETS).unwrap();
    assert_eq!(
        sets.len().unwrap(),
        window,
        "the change sets of the window only"
    );
}

/// A database of an earlier l2node (trie history, no change sets): opening it drops the trie
/// history and reads tries from its head on; blocks after the upgrade are readable again.
#[test]
fn an_earlier_database_drops_its_trie_history_and_proves_from_its_head() {
    use redb::ReadableDatabase;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.redb");
    let a = Address::repeat_byte(1);
    {
        // Earlier versions wrote each block's trie with the block.
        let s = Storage::open(&path)
            .unwrap()
            .with_trie_buffer(1, usize::MAX);
        for n in 0..3 {
            commit(&s, n, &[account(a, n + 1, vec![])], vec![]);
        }
        // As an earlier version left it.
        let tx = s.db.begin_write().unwrap();
        {
            let mut meta = tx.open_table(META).unwrap();
            meta.remove(crate::tables::PROOFS_FROM).unwrap();
            meta.insert(crate::tables::LEGACY_TRIE_HISTORY_FROM, 0)
                .unwrap();
            let mut legacy = tx.open_table(crate::tables::LEGACY_TRIE_HISTORY).unwrap();
            legacy.insert(&[1u8, 2][..], &[1u8][..]).unwrap();
            tx.open_table(crate::tables::CHANGE_SETS)
                .unwrap()
                .retain(|_, _| false)
                .unwrap();
        }
        tx.commit().unwrap();
    }
    let s = Storage::open(&path).unwrap();
    assert_eq!(s.first_proof_block().unwrap(), 2);
    assert_eq!(s.with_trie_at(1, |_| ()).unwrap(), Err(2));
    assert!(s.with_trie_at(2, |_| ()).unwrap().is_ok());
    let tx = s.db.begin_read().unwrap();
    assert!(tx.open_table(crate::tables::LEGACY_TRIE_HISTORY).is_err());
    drop(tx);
    commit(&s, 3, &[account(a, 4, vec![])], vec![]);
    let root = s
        .with_trie_at(2, |t| l2node_trie::state_root(t).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(root, s.header(2).unwrap().unwrap().state_root);
}

/// A database that joins from a snapshot of block H holds the state of H exactly (every chunk
/// checked against H's root, codes included), and the blocks after H give the roots they gave
/// the source. A chunk with one altered balance, or of another subtrie, is refused and leaves
/// nothing behind; blocks and state before H answer `BeforeSnapshot`.
#[test]
fn a_snapshot_of_a_recent_block_rebuilds_its_state_and_the_chain_goes_on_from_it() {
    use l2node_trie::snap::plan_chunks;
    let (_dir, source) = open();
    let pool: Vec<Address> = (0..600u64)
        .map(|i| Address::from_word(alloy_primitives::keccak256(i.to_be_bytes())))
        .collect();
    let code = Bytecode::new_raw(alloy_primitives::Bytes::from_static(&[0x60, 0x01, 0x00]));
    let mut seed = 11u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut blocks = Vec::new();
    for number in 0..30u64 {
        let mut changes: std::collections::BTreeMap<Address, AccountChange> = Default::default();
        for _ in 0..if number == 0 { 600 } else { 40 } {
            let address = pool[next(pool.len() as u64) as usize];
            let change = if next(12) == 0 && number > 0 {
                AccountChange::deletion(address)
            } else {
                let slots = (0..next(3))
                    .map(|_| (U256::from(next(6)), U256::from(next(4))))
                    .collect();
                let mut c = account(address, next(1000) + 1, slots);
                if next(5) == 0 {
                    c.info.as_mut().unwrap().code_hash = code.hash_slow();
                    c.new_code = Some(code.clone());
                }
                c
            };
            changes.insert(address, change);
        }
        let changes: Vec<AccountChange> = changes.into_values().collect();
        commit(&source, number, &changes, vec![]);
        blocks.push(changes);
    }
    let at = 22u64;
    let index = source.snapshot_index(at).unwrap().unwrap();
    assert_eq!(index.number, at);
    let header = |n| source.header(n).unwrap().unwrap();
    let plan = plan_chunks(header(at).state_root, &index.top).unwrap();
    assert!(plan.len() > 16, "{} chunks", plan.len());

    let (_dir2, copy) = open();
    assert!(copy.can_take_snapshot().unwrap());
    copy.snap_begin(at).unwrap();
    // A chunk with one account's balance changed, and a chunk for another subtrie: refused.
    let page = |path: &[u8]| index.chunk(path, None, 1 << 20).unwrap().unwrap();
    let raw = page(&plan[0].path);
    let mut altered = raw.to_vec();
    let last = altered.len() - 1;
    altered[last / 2] ^= 1;
    assert!(copy
        .snap_write_chunk(at, &plan[0], &[altered.into()])
        .unwrap()
        .is_err());
    assert!(copy
        .snap_write_chunk(at, &plan[0], &[page(&plan[1].path)])
        .unwrap()
        .is_err());
    assert!(
        index.chunk(&[], None, 1 << 20).unwrap().is_none(),
        "not a chunk"
    );
    let mut paged = 0;
    for (i, chunk) in plan.iter().enumerate() {
        // Every third chunk in pages of one slot or account (an account's slots over several).
        let max = if i % 3 == 0 { 1 } else { 1 << 20 };
        let mut pages = vec![index.chunk(&chunk.path, None, max).unwrap().unwrap()];
        while let Some(next) = next_page(pages.last().unwrap()) {
            pages.push(index.chunk(&chunk.path, Some(next), max).unwrap().unwrap());
        }
        paged += pages.len() - 1;
        copy.snap_write_chunk(at, chunk, &pages).unwrap().unwrap();
    }
    assert!(paged > 0, "some chunks came in several pages");
    let headers: Vec<Header> = (at - 5..=at).map(header).collect();
    copy.snap_finish(&headers, &index.top, None)
        .unwrap()
        .unwrap();
    drop(index);

    let (state, original) = (
        copy.state_at(None).unwrap(),
        source.state_at(Some(at)).unwrap(),
    );
    for address in &pool {
        assert_eq!(
            state.account_state(*address).unwrap(),
            original.account_state(*address).unwrap()
        );
        for slot in 0..6u64 {
            let slot = U256::from(slot);
            assert_eq!(
                state.storage(*address, slot).unwrap(),
                original.storage(*address, slot).unwrap()
            );
        }
    }
    assert_eq!(state.code_by_hash(code.hash_slow()).unwrap(), code);
    for (number, changes) in blocks.iter().enumerate().skip(at as usize + 1) {
        let number = number as u64;
        commit(&copy, number, changes, vec![]);
        assert_eq!(
            copy.header(number).unwrap().unwrap().state_root,
            header(number).state_root
        );
    }
    assert!(matches!(
        copy.block(at),
        Err(StorageError::BeforeSnapshot { block, base }) if block == at && base == at
    ));
    assert!(matches!(
        copy.state_at(Some(at - 1)),
        Err(StorageError::BeforeSnapshot { .. })
    ));
    assert!(copy.block(at + 1).unwrap().is_some());
    // The snapshot's block reads as on the source, accounts created after it absent.
    let (state, original) = (
        copy.state_at(Some(at)).unwrap(),
        source.state_at(Some(at)).unwrap(),
    );
    let head = copy.state_at(None).unwrap();
    let mut created_later = 0;
    for address in &pool {
        let then = state.account_state(*address).unwrap();
        assert_eq!(then, original.account_state(*address).unwrap());
        created_later +=
            usize::from(then.is_none() && head.account_state(*address).unwrap().is_some());
    }
    assert!(
        created_later > 0,
        "the chain creates accounts after the snapshot"
    );
    assert!(!copy.can_take_snapshot().unwrap());
}

/// Trie writes buffered in memory when the node stops are rebuilt from the change sets on open:
/// the head's trie, an earlier block's and the roots of the blocks after the restart are those
/// of a database that writes every block's trie with the block, and the stored trie is left
/// alone between flushes.
#[test]
fn buffered_trie_writes_are_rebuilt_after_a_restart() {
    use l2node_trie::state_root;
    use redb::{ReadableDatabase, ReadableTableMetadata};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("buffered.redb");
    let direct = Storage::open(&dir.path().join("direct.redb"))
        .unwrap()
        .with_trie_buffer(1, usize::MAX);
    // Five distinct accounts a block out of 23, some deleted (their storage tries wiped).
    let changes_of = |number: u64| -> Vec<AccountChange> {
        (0..5u64)
            .map(|i| {
                let address = Address::with_last_byte(((number * 7 + i * 3) % 23) as u8 + 1);
                if (number + i).is_multiple_of(11) {
                    AccountChange::deletion(address)
                } else {
                    let slot = (U256::from(i), U256::from(number % 3));
                    account(address, number + 1, vec![slot])
                }
            })
            .collect()
    };
    let stored_nodes = |s: &Storage| {
        let tx = s.db.begin_read().unwrap();
        tx.open_table(TRIE_NODES).unwrap().len().unwrap()
    };
    let root_at = |s: &Storage, number: u64| {
        s.with_trie_at(number, |trie| state_root(trie).unwrap())
            .unwrap()
            .unwrap()
    };
    let both = |s: &Storage, number: u64| {
        let changes = changes_of(number);
        commit(s, number, &changes, vec![]);
        commit(&direct, number, &changes, vec![]);
        let expected = direct.header(number).unwrap().unwrap().state_root;
        assert_eq!(s.header(number).unwrap().unwrap().state_root, expected);
        assert_eq!(root_at(s, number), expected, "block {number}");
    };
    {
        let s = Storage::open(&path)
            .unwrap()
            .with_trie_buffer(8, usize::MAX);
        let mut flushed = 0;
        for number in 0..12 {
            both(&s, number);
            if number == 7 {
                flushed = stored_nodes(&s);
            }
        }
        assert_eq!(
            stored_nodes(&s),
            flushed,
            "blocks 8 to 11 are in memory only"
        );
    }
    let s = Storage::open(&path).unwrap();
    assert_eq!(s.snapshot().unwrap().trie_next, None, "rebuilt and written");
    for number in [11, 9, 8] {
        let expected = direct.header(number).unwrap().unwrap().state_root;
        assert_eq!(
            root_at(&s, number),
            expected,
            "block {number} after the restart"
        );
    }
    for number in 12..50 {
        both(&s, number);
    }
    // A clean stop writes the buffer out: nothing is left to replay.
    s.flush_trie().unwrap();
    assert_eq!(s.snapshot().unwrap().trie_next, None);
    drop(s);
    let s = Storage::open(&path).unwrap();
    let expected = direct.header(49).unwrap().unwrap().state_root;
    assert_eq!(root_at(&s, 49), expected);
    // Opened with the default cache, which has room beyond the four levels below the root, the
    // node cache is read from the stored trie (a trie of 23 accounts: every node of it, none
    // deeper than the four levels it keeps whole) and the blocks after go on from it.
    let account_nodes = {
        let tx = s.db.begin_read().unwrap();
        let nodes = tx.open_table(TRIE_NODES).unwrap();
        nodes
            .range(l2node_trie::account_trie_keys())
            .unwrap()
            .count()
    };
    assert!(account_nodes > 1);
    assert_eq!(s.snapshots.trie().cached().1, account_nodes);
    for number in 50..60 {
        both(&s, number);
    }
}

/// The block that fills the trie buffer commits without writing it (`commit_block_with`, as the
/// chain commits); the write-out is a transaction of its own afterwards, and empties the buffer.
#[test]
fn the_block_that_fills_the_trie_buffer_commits_without_writing_it() {
    use l2node_trie::state_root;
    use redb::{ReadableDatabase, ReadableTableMetadata};
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(&dir.path().join("chain.redb"))
        .unwrap()
        .with_trie_buffer(2, usize::MAX);
    let stored = |s: &Storage| {
        let tx = s.db.begin_read().unwrap();
        tx.open_table(TRIE_NODES).unwrap().len().unwrap()
    };
    let change = |n: u8| [account(Address::with_last_byte(n), 1, vec![])];
    let before = stored(&s);
    s.commit_block_with(0, &change(1), true, |root| {
        Ok::<_, StorageError>(block(0, root, vec![]))
    })
    .unwrap();
    assert!(!s.flush_trie_if_full(), "one block of two");
    s.commit_block_with(1, &change(2), true, |root| {
        Ok::<_, StorageError>(block(1, root, vec![]))
    })
    .unwrap();
    assert_eq!(stored(&s), before, "committed without the trie's nodes");
    assert_eq!(s.snapshot().unwrap().trie_next, Some(0));
    let root_at = |s: &Storage, n: u64| s.with_trie_at(n, |t| state_root(t).unwrap()).unwrap();
    let expected = s.header(1).unwrap().unwrap().state_root;
    assert_eq!(root_at(&s, 1), Ok(expected));
    assert!(s.flush_trie_if_full());
    assert!(stored(&s) > before);
    assert_eq!(s.snapshot().unwrap().trie_next, None);
    assert!(!s.flush_trie_if_full(), "nothing left");
    assert_eq!(root_at(&s, 1), Ok(expected));
    drop(s);
    let s = Storage::open(&dir.path().join("chain.redb"))
        .unwrap()
        .with_trie_buffer(2, usize::MAX);
    assert_eq!(s.snapshot().unwrap().trie_next, None);
    assert_eq!(root_at(&s, 1), Ok(expected));
    // Write-outs that never come (as if each failed): the block after twice the limit writes
    // the buffer with itself.
    let before = stored(&s);
    for number in 2..=5 {
        s.commit_block_with(number, &change(number as u8 + 1), true, |root| {
            Ok::<_, StorageError>(with_tx(number, root))
        })
        .unwrap();
        assert_eq!(s.snapshot().unwrap().trie_next, Some(2), "block {number}");
    }
    assert_eq!(stored(&s), before);
    s.commit_block_with(6, &change(7), true, |root| {
        Ok::<_, StorageError>(with_tx(6, root))
    })
    .unwrap();
    assert_eq!(s.snapshot().unwrap().trie_next, None);
    assert!(stored(&s) > before);
    // The buffered blocks' transaction index entries went with their nodes, and the block's.
    let indexed = s.db.begin_read().unwrap().open_table(TX_INDEX).unwrap();
    for number in 2..=6 {
        let entry = indexed.get(&hash_of(number).0).unwrap().map(|v| v.value());
        assert_eq!(entry, Some((number, 0)), "block {number}");
    }
    let expected = s.header(6).unwrap().unwrap().state_root;
    assert_eq!(root_at(&s, 6), Ok(expected));
}

/// The transaction index entries stay in memory across the trie's write-outs until they fill
/// [`crate::tx_buffer::TX_BUFFER_BLOCKS`] blocks, are found there meanwhile, go to the table with
/// the write-out that fills them, and are rebuilt from the blocks' bodies after a crash, whether
/// or not the trie's nodes were written out since.
#[test]
fn buffered_transaction_index_entries_are_found_and_rebuilt_after_a_restart() {
    use crate::tx_buffer::TX_BUFFER_BLOCKS;
    use redb::{ReadableDatabase, ReadableTableMetadata};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.redb");
    let open = || {
        Storage::open_with_cache(&path, 16 << 20)
            .unwrap()
            .with_trie_buffer(4, usize::MAX)
    };
    let indexed = |s: &Storage| {
        let tx = s.db.begin_read().unwrap();
        tx.open_table(TX_INDEX).unwrap().len().unwrap()
    };
    let commit = |s: &Storage, blocks: std::ops::Range<u64>| {
        for number in blocks {
            let change = [account(Address::with_last_byte(1), number + 1, vec![])];
            s.commit_block(number, &change, |root| {
                Ok::<_, StorageError>(with_tx(number, root))
            })
            .unwrap();
        }
    };
    let all_found = |s: &Storage, to: u64| {
        for number in 0..to {
            assert_eq!(s.tx_location(&hash_of(number)).unwrap(), Some((number, 0)));
        }
        assert_eq!(s.tx_location(&hash_of(to)).unwrap(), None);
    };
    {
        let s = open();
        commit(&s, 0..10);
        assert_eq!(s.snapshot().unwrap().trie_next, Some(8));
        assert_eq!(
            indexed(&s),
            0,
            "two write-outs of the trie, none of the entries"
        );
        all_found(&s, 10);
    }
    let s = open();
    assert_eq!(indexed(&s), 10, "rebuilt from the bodies and written");
    all_found(&s, 10);
    // A clean stop right after a write-out of the trie still writes the entries.
    commit(&s, 10..14);
    assert_eq!(s.snapshot().unwrap().trie_next, None);
    assert_eq!(indexed(&s), 10);
    s.flush_trie().unwrap();
    assert_eq!(indexed(&s), 14);
    // 128 blocks from block 14 fill the buffer at a write-out of the trie (every 4 blocks).
    let filled = 14 + TX_BUFFER_BLOCKS as u64;
    commit(&s, 14..filled + 2);
    assert_eq!(
        indexed(&s),
        filled,
        "the last two blocks' entries are buffered"
    );
    all_found(&s, filled + 2);
    drop(s);
    let s = open();
    assert_eq!(indexed(&s), filled + 2);
    all_found(&s, filled + 2);
    // A clean stop writes them all.
    commit(&s, filled + 2..filled + 5);
    s.flush_trie().unwrap();
    assert_eq!(indexed(&s), filled + 5);
}
