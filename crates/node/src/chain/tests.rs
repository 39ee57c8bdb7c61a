//! Chain tests: blocks the sequencer builds import into a fresh chain; a block with one bad header
//! field (re-sealed, so only the header rules can catch it) is refused and leaves nothing; the
//! genesis stored with the chain is compared on reopen.

use std::sync::Arc;

use alloy_consensus::{transaction::Recovered, Block, Header, TxEnvelope, TxLegacy};
use alloy_primitives::{TxKind, B256, U256};
use alloy_signer_local::PrivateKeySigner;

use super::*;
use crate::dev::{dev_accounts, dev_genesis, dev_sequencer};
use crate::test_utils::{self, key, sign, BOB};
use l2node_storage::Storage;

fn open(dir: &std::path::Path, spec: &ChainSpec) -> Result<Chain, ChainError> {
    let storage = Storage::open(&dir.join("chain.redb")).unwrap();
    Chain::open(storage, Arc::new(spec.clone()))
}

fn dev() -> ChainSpec {
    ChainSpec::from_genesis(dev_genesis(0)).unwrap()
}

/// A transfer of `value` wei to [`BOB`] by `from`, paying 20 gwei (premium on the dev chain).
fn transfer(
    spec: &ChainSpec,
    from: &PrivateKeySigner,
    nonce: u64,
    value: u64,
) -> Recovered<TxEnvelope> {
    legacy_transfer(spec, from, nonce, value, 20_000_000_000)
}

/// A legacy transfer to [`BOB`]: valid in every fork, before London too.
fn legacy_transfer(
    spec: &ChainSpec,
    from: &PrivateKeySigner,
    nonce: u64,
    value: u64,
    gas_price: u128,
) -> Recovered<TxEnvelope> {
    sign(
        from,
        TxLegacy {
            chain_id: Some(spec.chain_id),
            nonce,
            gas_limit: 21_000,
            gas_price,
            to: TxKind::Call(BOB),
            value: U256::from(value),
            ..Default::default()
        },
    )
}

/// Builds and commits the next block the way the miner does (`next_block`, `build_block`,
/// `commit_built`), one second after the head.
fn mine(chain: &Chain, txs: Vec<Recovered<TxEnvelope>>) -> StoredBlock {
    let next = chain.next_block_at(chain.head().header.timestamp + 1);
    let state = chain.storage().state_at(None).unwrap();
    let built = executor::build_block(
        &chain.spec(),
        &state,
        &next.parent.header,
        next.attributes(),
        txs.into_iter(),
    )
    .unwrap();
    drop(state);
    assert!(built.invalid.is_empty(), "{:?}", built.invalid);
    chain
        .commit_built(built, [0u8; clique::VANITY_LEN], &dev_sequencer())
        .unwrap();
    chain
        .storage()
        .block(chain.head().header.number)
        .unwrap()
        .unwrap()
}

fn as_block(stored: StoredBlock) -> Block<TxEnvelope> {
    stored.into_block()
}

/// Mines `count` blocks (two transfers each) on a chain of `spec` and imports them into a second
/// fresh chain, which ends with the same head.
fn mine_and_import(spec: &ChainSpec, count: u64, sender: &PrivateKeySigner) -> Vec<Header> {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let miner = open(a.path(), spec).unwrap();
    let follower = open(b.path(), spec).unwrap();
    let mut headers = Vec::new();
    for n in 0..count {
        let txs = vec![
            transfer(spec, sender, 2 * n, 1),
            transfer(spec, sender, 2 * n + 1, 2),
        ];
        let block = mine(&miner, txs);
        headers.push(block.header.clone());
        let hash = follower
            .import(as_block(block))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(hash, miner.head().hash);
    }
    assert_eq!(follower.head().hash, miner.head().hash);
    headers
}

#[test]
fn blocks_built_on_the_dev_chain_import_into_a_fresh_chain() {
    let spec = dev();
    let headers = mine_and_import(&spec, 4, &dev_accounts()[0]);
    let last = headers.last().unwrap();
    assert_eq!(last.base_fee_per_gas, Some(0));
    assert!(last.requests_hash.is_some() && last.excess_blob_gas.is_some());
}

#[test]
fn blocks_built_with_an_eip1559_base_fee_import_into_a_fresh_chain() {
    // Post-merge Cancun, EIP-1559 base fee, no Clique section (so no seal is checked).
    let spec = test_utils::dev_spec();
    let headers = mine_and_import(&spec, 4, &key(0));
    let fees: Vec<_> = headers
        .iter()
        .map(|h| h.base_fee_per_gas.unwrap())
        .collect();
    assert!(fees.windows(2).all(|w| w[1] < w[0]), "{fees:?}");
}

#[test]
fn blocks_built_across_fork_transitions_import_into_a_fresh_chain() {
    // London at block 2 (the gas limit doubles), Shanghai, Cancun, Prague and Osaka by time at
    // blocks 3, 4, 5 and 6, no merge: each header field appears in its fork's first block.
    let mut genesis = dev_genesis(0);
    genesis.config.clique = None;
    genesis.config.extra_fields.remove("zeroBaseFee");
    genesis.config.london_block = Some(2);
    genesis.config.merge_netsplit_block = None;
    genesis.config.terminal_total_difficulty = None;
    genesis.config.terminal_total_difficulty_passed = false;
    genesis.config.shanghai_time = Some(3);
    genesis.config.cancun_time = Some(4);
    genesis.config.prague_time = Some(5);
    genesis.config.osaka_time = Some(6);
    let spec = ChainSpec::from_genesis(genesis).unwrap();
    let headers = mine_and_import(&spec, 6, &dev_accounts()[0]);
    let gas_limits: Vec<_> = headers.iter().map(|h| h.gas_limit).collect();
    let genesis_limit = spec.genesis_header(B256::ZERO).gas_limit;
    assert_eq!(gas_limits[0], genesis_limit);
    assert_eq!(gas_limits[1], 2 * genesis_limit);
    assert_eq!(headers[0].base_fee_per_gas, None);
    assert_eq!(headers[1].base_fee_per_gas, Some(1_000_000_000));
    assert!(headers[1].withdrawals_root.is_none() && headers[2].withdrawals_root.is_some());
    assert!(headers[2].excess_blob_gas.is_none() && headers[3].excess_blob_gas == Some(0));
    assert!(headers[3].requests_hash.is_none() && headers[4].requests_hash.is_some());
}

/// Osaka's rules inside blocks the sequencer builds and a fresh chain imports: the creation
/// runs CLZ (EIP-7939, an invalid opcode before Osaka) and calls modexp with a 1025-byte base,
/// which EIP-7823 refuses; both results are stored, and the follower computes the same root.
#[test]
fn osaka_rules_run_in_built_blocks_that_import() {
    let init = alloy_primitives::hex!(
        // sstore(0, clz(1))
        "6001" "1e" "6000" "55"
        // modexp header: base length 1025, exponent and modulus length 1
        "610401" "6000" "52" "6001" "6020" "52" "6001" "6040" "52"
        // sstore(1, staticcall(gas, 0x05, 0, 1123, 0, 0))
        "6000" "6000" "610463" "6000" "6005" "5a" "fa" "6001" "55"
        "00"
    );
    let slots = deploy_and_import(&init, 2);
    assert_eq!(slots, [U256::from(255), U256::ZERO]);
}

/// Deploys `init` from dev account 0 in a block the sequencer builds, imports the block into a
/// fresh chain (same root) and returns the contract's first `slots` slots there.
fn deploy_and_import(init: &[u8], slots: u64) -> Vec<U256> {
    use l2node_storage::StateReader;
    let spec = dev();
    let sender = &dev_accounts()[0];
    let create = sign(
        sender,
        TxLegacy {
            chain_id: Some(spec.chain_id),
            nonce: 0,
            gas_limit: 1_000_000,
            gas_price: 0,
            to: TxKind::Create,
            input: init.to_vec().into(),
            ..Default::default()
        },
    );
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let miner = open(a.path(), &spec).unwrap();
    let block = mine(&miner, vec![create]);
    let follower = open(b.path(), &spec).unwrap();
    assert_eq!(follower.import(as_block(block)).unwrap(), miner.head().hash);
    let contract = sender.address().create(0);
    let state = follower.storage().state_at(None).unwrap();
    (0..slots)
        .map(|n| state.storage(contract, U256::from(n)).unwrap())
        .collect()
}

/// EIP-7951 and EIP-7883 in a built block that imports: a contract's constructor verifies a
/// secp256r1 signature at 0x100 (a valid vector of RIP-7212's, appended to the code) and calls
/// modexp with 499 gas (refused: EIP-7883's minimum is 500, EIP-2565's was 200) and with 500.
#[test]
fn osaka_precompiles_run_in_built_blocks_that_import() {
    let code = alloy_primitives::hex!(
        // codecopy(0, 115, 160): the vector after the code
        "60a0" "610073" "6000" "39"
        // sstore(1, staticcall(gas, 0x100, 0, 160, 0xa0, 32)); sstore(0, mload(0xa0))
        "6020" "60a0" "60a0" "6000" "610100" "5a" "fa" "6001" "55" "60a0" "51" "6000" "55"
        // modexp input at 0x200: lengths 1, 1, 1; base 2, exponent 3, modulus 5
        "6001" "610200" "52" "6001" "610220" "52" "6001" "610240" "52"
        "6002" "610260" "53" "6003" "610261" "53" "6005" "610262" "53"
        // sstore(2, staticcall(499, 5, 0x200, 99, 0x300, 1))
        "6001" "610300" "6063" "610200" "6005" "6101f3" "fa" "6002" "55"
        // sstore(3, staticcall(500, 5, 0x200, 99, 0x300, 1)); sstore(4, 2^3 mod 5)
        "6001" "610300" "6063" "610200" "6005" "6101f4" "fa" "6003" "55"
        "610300" "51" "60f8" "1c" "6004" "55" "00"
    );
    assert_eq!(code.len(), 115);
    let vector = alloy_primitives::hex!(
        "4cee90eb86eaa050036147a12d49004b6b9c72bd725d39d4785011fe190f0b4d"
        "a73bd4903f0ce3b639bbbf6e8e80d16931ff4bcf5993d58468e8fb19086e8cac"
        "36dbcd03009df8c59286b162af3bd7fcc0450c9aa81be5d10d312af6c66b1d60"
        "4aebd3099c618202fcfe16ae7770b0c49ab5eadf74b754204a3bb6060e44eff3"
        "7618b065f9832de4ca6ca971a7a1adc826d0f7c00181a5fb2ddf79ae00b4e10e"
    );
    let slots = deploy_and_import(&[code.as_slice(), vector.as_slice()].concat(), 5);
    let slot = |n: usize| slots[n];
    assert_eq!(
        slot(0),
        U256::from(1),
        "P256VERIFY answers 1 for a valid signature"
    );
    assert_eq!(slot(1), U256::from(1), "the call to 0x100 succeeds");
    assert_eq!(
        slot(2),
        U256::ZERO,
        "modexp with 499 gas runs out (EIP-7883)"
    );
    assert_eq!(slot(3), U256::from(1), "modexp with 500 gas runs");
    assert_eq!(slot(4), U256::from(3), "2^3 mod 5");
}

/// EIP-7934: from Osaka a block whose RLP is over 8 MiB is refused before it is executed, with
/// the rule named; nothing is stored.
#[test]
fn osaka_refuses_a_block_over_the_size_limit() {
    let spec = dev();
    let sender = &dev_accounts()[0];
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let miner = open(a.path(), &spec).unwrap();
    let mut block = as_block(mine(&miner, vec![free_transfer(&spec, sender, 0)]));
    let padding = sign(
        sender,
        TxLegacy {
            chain_id: Some(spec.chain_id),
            nonce: 1,
            gas_limit: 30_000_000,
            to: TxKind::Call(BOB),
            input: vec![0u8; crate::constants::MAX_RLP_BLOCK_SIZE].into(),
            ..Default::default()
        },
    );
    block.body.transactions.push(padding.into_inner());
    let follower = open(b.path(), &spec).unwrap();
    let err = follower.import(block).unwrap_err();
    assert!(
        matches!(&err, ChainError::InvalidHeader { field: "size", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("EIP-7934"), "{err}");
    assert_eq!(follower.head().header.number, 0);
}

/// EIP-7918: from Osaka, while blobs cost less than `BLOB_BASE_COST` execution gas, the excess
/// blob gas grows by the blobs used scaled by (max - target) / max instead of falling by the
/// target; before Osaka (Prague rules) it falls as EIP-4844 says. Header validation expects it.
#[test]
fn osaka_blob_base_fee_has_the_execution_gas_floor() {
    let osaka = dev();
    let parent = Header {
        timestamp: 1,
        base_fee_per_gas: Some(1_000_000_000),
        excess_blob_gas: Some(0),
        blob_gas_used: Some(6 * alloy_eips::eip4844::DATA_GAS_PER_BLOB),
        ..Default::default()
    };
    let params = osaka.blob_params_at(2).unwrap();
    let (max, target) = (params.max_blob_count, params.target_blob_count);
    let scaled = 6 * alloy_eips::eip4844::DATA_GAS_PER_BLOB * (max - target) / max;
    assert_eq!(validate::next_excess_blob_gas(&osaka, &parent, 2), scaled);
    let mut genesis = dev_genesis(0);
    genesis.config.osaka_time = None;
    let prague = ChainSpec::from_genesis(genesis).unwrap();
    assert_eq!(
        validate::next_excess_blob_gas(&prague, &parent, 2),
        (6 * alloy_eips::eip4844::DATA_GAS_PER_BLOB).saturating_sub(
            prague
                .blob_params_at(2)
                .unwrap()
                .target_blob_gas_per_block()
        )
    );
}

/// A free (gasless) transfer: it uses the sender's Karma quota, so the ledger changes.
fn free_transfer(spec: &ChainSpec, from: &PrivateKeySigner, nonce: u64) -> Recovered<TxEnvelope> {
    legacy_transfer(spec, from, nonce, 1, 0)
}

/// Three chains of the dev spec: A with `a_len` blocks (one free transfer of alice's each), B
/// with four (carol's), and a follower that has seen neither yet.
struct CompetingChains {
    spec: ChainSpec,
    _dirs: Vec<tempfile::TempDir>,
    a: Chain,
    b: Chain,
    follower: Chain,
    a_blocks: Vec<StoredBlock>,
    b_blocks: Vec<StoredBlock>,
}

fn competing_chains(a_len: u64) -> CompetingChains {
    let spec = dev();
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let a = open(dirs[0].path(), &spec).unwrap();
    let b = open(dirs[1].path(), &spec).unwrap();
    let follower = open(dirs[2].path(), &spec).unwrap();
    let (alice, carol) = (&dev_accounts()[0], &dev_accounts()[1]);
    let a_blocks = (0..a_len)
        .map(|n| mine(&a, vec![free_transfer(&spec, alice, n)]))
        .collect();
    let b_blocks = (0..4)
        .map(|n| mine(&b, vec![free_transfer(&spec, carol, n)]))
        .collect();
    CompetingChains {
        spec,
        _dirs: dirs,
        a,
        b,
        follower,
        a_blocks,
        b_blocks,
    }
}

/// A follower on chain A (two blocks) sees a competing chain B from genesis: B's first two
/// blocks are kept aside (a tie keeps the head), its third makes it heavier and the follower
/// switches: A's blocks are taken back (state, transactions, Karma ledger) and announced, B's
/// are executed, and the follower then goes on with B as if it had never seen A.
#[test]
fn a_heavier_competing_chain_replaces_the_head() {
    let CompetingChains {
        spec,
        _dirs,
        a,
        b,
        follower,
        a_blocks,
        b_blocks,
    } = competing_chains(2);
    let (alice, carol) = (&dev_accounts()[0], &dev_accounts()[1]);
    let epoch = follower
        .ledger()
        .unwrap()
        .epochs()
        .of(a_blocks[0].header.timestamp);
    for block in &a_blocks {
        follower.import(as_block(block.clone())).unwrap();
    }
    let used = |c: &Chain, who: &PrivateKeySigner| {
        c.storage()
            .ledger_at(None)
            .unwrap()
            .usage(&who.address(), epoch)
            .unwrap()
            .used
    };
    assert!(used(&follower, alice) > 0);
    let mut reorgs = follower.subscribe_reorgs();
    let compete = |block: &StoredBlock| follower.import_competing(as_block(block.clone())).unwrap();
    assert_eq!(compete(&b_blocks[0]), Competing::Kept);
    assert_eq!(compete(&b_blocks[1]), Competing::Kept);
    assert_eq!(follower.head().hash, a.head().hash, "a tie keeps the head");
    assert_eq!(compete(&b_blocks[2]), Competing::Reorganised(3));

    let reorg = reorgs.try_recv().unwrap();
    let removed: Vec<u64> = reorg.removed.iter().map(|(b, _)| b.header.number).collect();
    assert_eq!(removed, [1, 2]);
    assert_eq!(follower.head().header, b_blocks[2].header);
    for block in &a_blocks {
        let tx = block.body.transactions[0].tx_hash();
        assert_eq!(follower.storage().tx_location(tx).unwrap(), None);
        assert_eq!(follower.storage().block_number(&block.hash).unwrap(), None);
    }
    assert_eq!(used(&follower, alice), 0, "A's quota use is taken back");
    assert_tries(&follower, &[alice, carol]);
    assert_eq!(
        used(&follower, carol),
        used(&b, carol) - used_by(&b_blocks[3], &b, carol, epoch)
    );
    // The follower goes on with B.
    follower.import(as_block(b_blocks[3].clone())).unwrap();
    assert_eq!(follower.head().hash, b.head().hash);
    assert_eq!(used(&follower, carol), used(&b, carol));
    // A's chain is the competing one now: growing it past B switches back.
    let a3 = mine(&a, vec![free_transfer(&spec, alice, 2)]);
    let a4 = mine(&a, vec![free_transfer(&spec, alice, 3)]);
    let a5 = mine(&a, vec![free_transfer(&spec, alice, 4)]);
    assert_eq!(compete(&a3), Competing::Kept);
    assert_eq!(compete(&a4), Competing::Kept);
    assert_eq!(compete(&a5), Competing::Reorganised(5));
    assert_eq!(follower.head().hash, a.head().hash);
    assert_eq!(used(&follower, carol), 0);
    assert_eq!(used(&follower, alice), used(&a, alice));
    assert_tries(&follower, &[alice, carol]);
}

/// A reorganisation whose unwind fails halfway (a storage failure) puts back the blocks it had
/// taken back: the head, state and tries are where they were, the blocks are announced as taken
/// back and imported again, and the chain goes on.
#[test]
fn a_reorganisation_that_fails_halfway_puts_the_head_back() {
    let CompetingChains {
        spec,
        _dirs,
        a,
        b: _,
        follower,
        a_blocks,
        b_blocks,
    } = competing_chains(3);
    let (alice, carol) = (&dev_accounts()[0], &dev_accounts()[1]);
    for block in &a_blocks {
        follower.import(as_block(block.clone())).unwrap();
    }
    let mut reorgs = follower.subscribe_reorgs();
    let mut blocks = follower.subscribe();
    // Taking back block 3 works, block 2 fails.
    *follower.fail_unwind_at.lock() = Some(2);
    for block in &b_blocks[..3] {
        assert_eq!(
            follower.import_competing(as_block(block.clone())).unwrap(),
            Competing::Kept
        );
    }
    let err = follower
        .import_competing(as_block(b_blocks[3].clone()))
        .unwrap_err();
    assert!(err.to_string().contains("injected unwind failure"), "{err}");
    assert!(
        matches!(err, ChainError::Unwind { number: 2, .. }) && err.is_local(),
        "our own block failed, not the peer's: {err:?}"
    );
    assert_eq!(follower.head().hash, a.head().hash);
    let removed: Vec<u64> = reorgs
        .try_recv()
        .unwrap()
        .removed
        .iter()
        .map(|(b, _)| b.header.number)
        .collect();
    assert_eq!(removed, [3]);
    assert_eq!(blocks.try_recv().unwrap().block.hash, a_blocks[2].hash);
    assert!(reorgs.try_recv().is_err() && blocks.try_recv().is_err());
    let tx = a_blocks[2].body.transactions[0].tx_hash();
    assert_eq!(
        follower.storage().tx_location(tx).unwrap().map(|l| l.0),
        Some(3)
    );
    assert_tries(&follower, &[alice, carol]);
    // The chain goes on.
    *follower.fail_unwind_at.lock() = None;
    let a4 = mine(&a, vec![free_transfer(&spec, alice, 3)]);
    follower.import(as_block(a4)).unwrap();
    assert_eq!(follower.head().hash, a.head().hash);
}

/// The stored trie at every block of `c` agrees with that block: its root node hashes to the
/// header's state root, and the accounts of `who` read through it (a proof) are the ones the
/// state history gives (so nothing of a block taken back is read at an earlier block).
fn assert_tries(c: &Chain, who: &[&PrivateKeySigner]) {
    use l2node_storage::StateReader;
    for n in 0..=c.head().header.number {
        let header = c.storage().header(n).unwrap().unwrap();
        let state = c.storage().state_at(Some(n)).unwrap();
        for key in who {
            let address = key.address();
            let proof = c.storage().proof(address, &[], n).unwrap().unwrap();
            let root = alloy_primitives::keccak256(&proof.account_proof[0]);
            assert_eq!(root, header.state_root, "trie root at block {n}");
            let nonce = state.account(address).unwrap().map_or(0, |a| a.nonce);
            assert_eq!(proof.nonce, nonce, "{address} at block {n}");
        }
    }
}

/// What `block` (one free transfer) adds to `who`'s quota use.
fn used_by(block: &StoredBlock, chain: &Chain, who: &PrivateKeySigner, epoch: u64) -> u64 {
    let at = |n| {
        chain
            .storage()
            .ledger_at(Some(n))
            .unwrap()
            .usage(&who.address(), epoch)
            .unwrap()
            .used
    };
    at(block.header.number) - at(block.header.number - 1)
}

/// Block 1 of a dev chain with `tamper` applied to its header and re-sealed by the dev sequencer,
/// imported into a fresh chain: the error, which must name `field`; nothing of it is stored.
fn import_tampered(tamper: impl FnOnce(&mut Header), field: &str) -> String {
    let spec = dev();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let miner = open(a.path(), &spec).unwrap();
    let mut block = as_block(mine(
        &miner,
        vec![transfer(&spec, &dev_accounts()[0], 0, 1)],
    ));
    tamper(&mut block.header);
    clique::seal(
        &mut block.header,
        [0u8; clique::VANITY_LEN],
        &dev_sequencer(),
    );
    let follower = open(b.path(), &spec).unwrap();
    let genesis = follower.head();
    let err = follower.import(block).unwrap_err().to_string();
    assert!(
        err.contains("block 1") && err.contains(field),
        "error does not name block 1 and {field}: {err}"
    );
    assert_eq!(follower.head().hash, genesis.hash, "the head moved");
    assert!(
        follower.storage().block(1).unwrap().is_none(),
        "the refused block is readable"
    );
    err
}

#[test]
fn block_with_the_parents_timestamp_is_refused() {
    let err = import_tampered(|h| h.timestamp = 0, "invalid timestamp");
    assert!(err.contains("header has 0"), "{err}");
}

#[test]
fn block_with_a_doubled_gas_limit_is_refused() {
    let err = import_tampered(|h| h.gas_limit *= 2, "invalid gas limit");
    assert!(err.contains("the parent's"), "{err}");
}

#[test]
fn block_with_a_wrong_base_fee_is_refused() {
    let err = import_tampered(|h| h.base_fee_per_gas = Some(7), "invalid base fee");
    assert!(err.contains("header has 7, expected 0"), "{err}");
}

#[test]
fn block_with_a_wrong_withdrawals_root_is_refused() {
    import_tampered(
        |h| h.withdrawals_root = Some(B256::repeat_byte(9)),
        "invalid withdrawals root",
    );
}

#[test]
fn block_with_a_wrong_excess_blob_gas_is_refused() {
    let err = import_tampered(
        |h| h.excess_blob_gas = Some(131_072),
        "invalid excess blob gas",
    );
    assert!(err.contains("header has 131072, expected 0"), "{err}");
}

#[test]
fn block_with_a_wrong_blob_gas_used_is_refused() {
    import_tampered(|h| h.blob_gas_used = Some(131_072), "invalid blob gas used");
}

#[test]
fn block_with_a_wrong_ommers_hash_is_refused() {
    import_tampered(|h| h.ommers_hash = B256::ZERO, "invalid ommers hash");
}

#[test]
fn block_without_a_parent_beacon_block_root_is_refused() {
    import_tampered(
        |h| h.parent_beacon_block_root = None,
        "invalid parent beacon block root",
    );
}

#[test]
fn block_with_a_wrong_requests_hash_is_refused_after_execution() {
    import_tampered(
        |h| h.requests_hash = Some(B256::repeat_byte(3)),
        "invalid requests hash",
    );
}

#[test]
fn block_using_more_gas_than_its_limit_is_refused() {
    import_tampered(|h| h.gas_used = h.gas_limit + 1, "invalid gas used");
}

#[test]
fn clique_chain_whose_genesis_names_no_signer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = open(dir.path(), &test_utils::clique_spec())
        .unwrap_err()
        .to_string();
    assert!(err.contains("names no signer"), "{err}");
}

#[test]
fn reopening_with_the_same_genesis_works() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dev();
    let chain = open(dir.path(), &spec).unwrap();
    mine(&chain, vec![]);
    drop(chain);
    let chain = open(dir.path(), &spec).unwrap();
    assert_eq!(chain.head().header.number, 1);
    drop(chain);
    // The Clique period only paces the sequencer (`--dev --block-time`): it may change.
    open(
        dir.path(),
        &ChainSpec::from_genesis(dev_genesis(5)).unwrap(),
    )
    .unwrap();
}

/// Opens a chain of the test dev spec, then reopens it with `change` applied to the genesis: the
/// error, which must name `field`.
fn reopen_changed(change: impl FnOnce(&mut alloy_genesis::Genesis), field: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let spec = test_utils::dev_spec();
    drop(open(dir.path(), &spec).unwrap());
    let mut genesis = spec.genesis.clone();
    change(&mut genesis);
    let err = open(dir.path(), &ChainSpec::from_genesis(genesis).unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains(field), "error does not name {field}: {err}");
    assert!(err.contains("another --data-path"), "{err}");
    err
}

#[test]
fn reopening_with_a_later_cancun_time_is_refused() {
    let err = reopen_changed(
        |g| g.config.cancun_time = Some(100),
        "config.cancunTime: stored 0, configured 100",
    );
    assert!(!err.contains("alloc"), "{err}");
}

#[test]
fn reopening_with_a_changed_balance_is_refused() {
    let address = key(0).address();
    let err = reopen_changed(
        |g| g.alloc.get_mut(&address).unwrap().balance = U256::from(1),
        "balance",
    );
    assert!(
        err.contains(&format!(
            "alloc.{}.balance",
            address.to_string().to_lowercase()
        )),
        "{err}"
    );
    assert!(err.contains("configured 0x1"), "{err}");
}

#[test]
fn reopening_with_another_chain_id_is_refused() {
    reopen_changed(
        |g| g.config.chain_id = 1,
        "config.chainId: stored 1337, configured 1",
    );
}

#[test]
fn a_database_without_a_stored_genesis_gets_it_on_first_open() {
    let dir = tempfile::tempdir().unwrap();
    let spec = test_utils::dev_spec();
    drop(open(dir.path(), &spec).unwrap());
    // What a database written before the genesis was stored looks like.
    {
        let db = redb::Database::create(dir.path().join("chain.redb")).unwrap();
        let tx = db.begin_write().unwrap();
        tx.open_table(l2node_storage::tables::CONFIG)
            .unwrap()
            .remove("genesis")
            .unwrap();
        tx.commit().unwrap();
    }
    let mut changed = spec.genesis.clone();
    changed.config.cancun_time = Some(100);
    let changed = ChainSpec::from_genesis(changed).unwrap();
    // The old check (the genesis header hash) does not see the fork schedule...
    drop(open(dir.path(), &spec).unwrap());
    // ...but the genesis stored on that first open does.
    let err = open(dir.path(), &changed).unwrap_err().to_string();
    assert!(err.contains("config.cancunTime"), "{err}");
}

#[test]
fn stored_genesis_round_trips_for_the_dev_and_fixture_chains() {
    let (fixture, _) = test_utils::fixture_chain("cancun-20-blocks");
    for spec in [dev(), fixture] {
        let json = genesis::canonical_json(&spec.genesis);
        genesis::compare(&json, &spec.genesis).unwrap();
    }
}
