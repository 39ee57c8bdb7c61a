//! Block execution (import) and block building (sequencer).

use std::{borrow::Cow, collections::HashSet};

use alloy_consensus::{
    constants::{EMPTY_OMMER_ROOT_HASH, EMPTY_ROOT_HASH},
    proofs::{calculate_receipt_root, ordered_trie_root_with_encoder},
    Block, BlockHeader, Eip658Value, Header, ReceiptEnvelope, Transaction, TxEnvelope,
};
use alloy_eips::{eip7685::Requests, Encodable2718};
use alloy_evm::{
    block::{BlockExecutionError, BlockExecutor, BlockValidationError},
    eth::{
        receipt_builder::AlloyReceiptBuilder, spec::EthExecutorSpec, EthBlockExecutionCtx,
        EthBlockExecutor,
    },
    EthEvmFactory, Evm, EvmEnv, EvmFactory,
};
use alloy_hardforks::{EthereumHardfork, EthereumHardforks, ForkCondition};
use alloy_primitives::{Address, Bloom, Bytes, B256, U256};
use revm::{
    context_interface::result::InvalidTransaction,
    database::{states::bundle_state::BundleRetention, BundleState, State},
    primitives::KECCAK_EMPTY,
};

use super::{
    db::StateDb,
    error::{invalid_tx_message, ExecError},
};
use crate::chainspec::ChainSpec;
use crate::constants::{BLOCK_SIZE_HEADROOM, MAX_RLP_BLOCK_SIZE};
use l2node_storage::StateReader;
use l2node_trie::state::{AccountChange, AccountState, StateChanges};

/// Result of executing one block.
#[derive(Debug, Clone)]
pub struct BlockOutput {
    /// One receipt per transaction, typed (EIP-2718) like the transactions.
    pub receipts: Vec<ReceiptEnvelope>,
    /// Gas used by the whole block (the header's `gas_used`).
    pub gas_used: u64,
    /// Gas used by each transaction, in block order.
    pub tx_gas_used: Vec<u64>,
    /// Blob gas used by the block (0 before Cancun).
    pub blob_gas_used: u64,
    /// EIP-7685 requests (empty before Prague).
    pub requests: Requests,
    /// State changes, sorted by address.
    pub changes: StateChanges,
}

impl BlockOutput {
    /// Root of the receipts trie (the header's `receipts_root`).
    pub fn receipts_root(&self) -> B256 {
        calculate_receipt_root(&self.receipts)
    }

    /// Union of the receipts' blooms (the header's `logs_bloom`).
    pub fn logs_bloom(&self) -> Bloom {
        logs_bloom(&self.receipts)
    }
}

pub(super) fn logs_bloom(receipts: &[ReceiptEnvelope]) -> Bloom {
    receipts
        .iter()
        .fold(Bloom::ZERO, |bloom, r| bloom | *r.logs_bloom())
}

/// Gas of the cheapest transaction (a plain transfer): a block with less left is full.
pub(super) const MIN_TX_GAS: u64 = 21_000;

/// Inputs of a new block that do not come from the parent.
#[derive(Debug, Clone, Default)]
pub struct BuildAttributes {
    /// Block timestamp (seconds).
    pub timestamp: u64,
    /// Fee recipient (the header's `miner`/`coinbase`).
    pub beneficiary: Address,
    /// Extra data (for Clique: vanity + room for the seal, filled by the sealer).
    pub extra_data: Bytes,
    /// Block gas limit.
    pub gas_limit: u64,
    /// `mixHash` / PREVRANDAO after the merge (zero when the chain has no randomness source).
    pub prev_randao: B256,
    /// Difficulty before the merge (Clique: 2 in turn, 1 out of turn); ignored after Paris.
    pub difficulty: U256,
    /// From Cancun, the parent beacon block root (EIP-4788; zero on this network, which has no
    /// beacon chain, unless a test payload names one).
    pub parent_beacon_block_root: B256,
}

/// A block assembled by [`build_block`]; `header.state_root` is left zero for the caller.
#[derive(Debug, Clone)]
pub struct BuiltBlock {
    /// The header with every field but `state_root` (and the Clique seal in `extra_data`).
    pub header: Header,
    /// The included transactions, in order.
    pub transactions: Vec<alloy_consensus::transaction::Recovered<TxEnvelope>>,
    /// Their receipts.
    pub receipts: Vec<ReceiptEnvelope>,
    /// Gas used by each included transaction.
    pub tx_gas_used: Vec<u64>,
    /// State changes of the block, sorted by address.
    pub changes: StateChanges,
    /// Candidates rejected as invalid (hash, geth-style reason); they should leave the pool.
    pub invalid: Vec<(B256, String)>,
    /// The EIP-7685 requests the block produced (from Prague).
    pub requests: Requests,
}

impl BuiltBlock {
    /// The block without senders (for storage and gossip).
    pub fn to_block(&self) -> Block<TxEnvelope> {
        Block {
            header: self.header.clone(),
            body: alloy_consensus::BlockBody {
                transactions: self
                    .transactions
                    .iter()
                    .map(|tx| tx.inner().clone())
                    .collect(),
                ommers: Vec::new(),
                withdrawals: self.header.withdrawals_root.map(|_| Default::default()),
            },
        }
    }
}

pub(super) type Db<'a> = State<StateDb<'a>>;

/// The chain spec as alloy-evm's block executor sees it.
///
/// alloy-evm pays ethash block and ommer rewards to every block before Paris. A Clique chain
/// never merges and pays no rewards (geth, Besu), so for Clique chains Paris is reported
/// active from genesis here. Only the executor's post-block rewards read Paris: the EVM spec
/// and block environment still come from the real [`ChainSpec`].
#[derive(Debug, Clone, Copy)]
pub(super) struct ExecutorSpec<'a>(pub(super) &'a ChainSpec);

impl EthereumHardforks for ExecutorSpec<'_> {
    fn ethereum_fork_activation(&self, fork: EthereumHardfork) -> ForkCondition {
        if fork == EthereumHardfork::Paris && self.0.clique.is_some() {
            return ForkCondition::Block(0);
        }
        self.0.ethereum_fork_activation(fork)
    }
}

impl EthExecutorSpec for ExecutorSpec<'_> {
    fn deposit_contract_address(&self) -> Option<Address> {
        self.0.deposit_contract_address()
    }
}

pub(super) fn new_state(reader: &dyn StateReader) -> Db<'_> {
    State::builder()
        .with_database(StateDb::new(reader))
        .with_bundle_update()
        .build()
}

/// The EVM environment of the block `header`.
///
/// PREVRANDAO is always set (to `mix_hash`): a Clique chain that schedules Shanghai or later
/// by timestamp without a merge (Besu allows it) would otherwise fail revm's post-merge check.
/// Before the merge DIFFICULTY still reads `difficulty`, so this changes nothing there.
pub(crate) fn evm_env(spec: &ChainSpec, header: &Header) -> EvmEnv {
    let blob_params = spec.blob_params_at(header.timestamp);
    let mut env = EvmEnv::for_eth_block(header, spec, spec.chain_id, blob_params);
    env.block_env.prevrandao.get_or_insert(header.mix_hash);
    env
}

/// The state root after some of a block's transactions, given the block's changes so far
/// (the caller owns the trie).
pub type IntermediateRoot<'c> = &'c mut dyn FnMut(&StateChanges) -> Result<B256, ExecError>;

/// Executes `block` on top of `state` (the parent's state) and returns receipts and changes.
///
/// `senders[i]` is the recovered signer of transaction `i`. Roots are not checked here: the
/// caller compares [`BlockOutput::receipts_root`], `logs_bloom`, `gas_used` and the state root
/// with the header. Before Byzantium a receipt carries the state root after its transaction
/// instead of a status (EIP-658 came with Byzantium): `intermediate_root` computes it, and
/// without it such receipts keep a status (and their root will not match the header's).
pub fn execute_block(
    spec: &ChainSpec,
    state: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    mut intermediate_root: Option<IntermediateRoot<'_>>,
) -> Result<BlockOutput, ExecError> {
    let txs = &block.body.transactions;
    if senders.len() != txs.len() {
        return Err(ExecError::SendersMismatch {
            senders: senders.len(),
            transactions: txs.len(),
        });
    }
    let header = &block.header;
    let evm = EthEvmFactory::default().create_evm(new_state(state), evm_env(spec, header));
    let mut executor = EthBlockExecutor::new(
        evm,
        execution_ctx(block),
        ExecutorSpec(spec),
        AlloyReceiptBuilder::default(),
    );
    executor.apply_pre_execution_changes().map_err(block_err)?;
    if spec.is_byzantium_active_at_block(header.number) {
        intermediate_root = None;
    }
    let mut tx_gas_used = Vec::with_capacity(txs.len());
    let mut roots = Vec::new();
    for (tx, sender) in txs.iter().zip(senders) {
        let recovered = alloy_consensus::transaction::Recovered::new_unchecked(tx, *sender);
        let gas = executor.execute_transaction(recovered).map_err(block_err)?;
        tx_gas_used.push(gas.tx_gas_used());
        if let Some(root_of) = intermediate_root.as_mut() {
            let db = executor.evm_mut().db_mut();
            db.merge_transitions(BundleRetention::PlainState);
            roots.push(root_of(&bundle_to_changes(db.bundle_state.clone()))?);
        }
    }
    let (evm, mut result) = executor.finish().map_err(block_err)?;
    for (receipt, root) in result.receipts.iter_mut().zip(roots) {
        if let ReceiptEnvelope::Legacy(r) = receipt {
            r.receipt.status = Eip658Value::PostState(root);
        }
    }
    let changes = take_changes(evm.into_db());
    Ok(BlockOutput {
        receipts: result.receipts,
        gas_used: result.gas_used,
        tx_gas_used,
        blob_gas_used: result.blob_gas_used,
        requests: result.requests,
        changes,
    })
}

/// The block-level context the executor needs (system calls, withdrawals).
pub(super) fn execution_ctx(block: &Block<TxEnvelope>) -> EthBlockExecutionCtx<'_> {
    let header = &block.header;
    EthBlockExecutionCtx {
        parent_hash: header.parent_hash,
        parent_beacon_block_root: header.parent_beacon_block_root,
        ommers: &block.body.ommers,
        withdrawals: block
            .body
            .withdrawals
            .as_ref()
            .map(|w| Cow::Borrowed(&w.0[..])),
        extra_data: header.extra_data.clone(),
        tx_count_hint: Some(block.body.transactions.len()),
        slot_number: header.slot_number,
    }
}

/// Builds the child of `parent` from `candidates` (in order).
///
/// A candidate that fails validation (nonce, funds, fee below the base fee, ...) is skipped and
/// reported in [`BuiltBlock::invalid`]; one whose gas limit exceeds the gas left (or whose blobs
/// exceed the blob gas left) is skipped silently, as it may fit the next block. Either way the
/// sender's later candidates are skipped too, and building goes on with other senders (as geth's
/// miner does) until less than [`MIN_TX_GAS`] is left. The state root is left to the caller.
pub fn build_block(
    spec: &ChainSpec,
    state: &dyn StateReader,
    parent: &Header,
    attrs: BuildAttributes,
    candidates: impl Iterator<Item = alloy_consensus::transaction::Recovered<TxEnvelope>>,
) -> Result<BuiltBlock, ExecError> {
    let number = parent.number + 1;
    let ts = attrs.timestamp;
    let paris = spec.is_paris_active_at_block(number);
    let cancun = spec.is_cancun_active_at_timestamp(ts);
    let blob_params = spec.blob_params_at(ts);
    let mut header = Header {
        parent_hash: parent.hash_slow(),
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: attrs.beneficiary,
        state_root: B256::ZERO,
        transactions_root: EMPTY_ROOT_HASH,
        receipts_root: EMPTY_ROOT_HASH,
        difficulty: if paris { U256::ZERO } else { attrs.difficulty },
        number,
        gas_limit: attrs.gas_limit,
        timestamp: ts,
        extra_data: attrs.extra_data,
        mix_hash: if paris { attrs.prev_randao } else { B256::ZERO },
        base_fee_per_gas: spec
            .is_london_active_at_block(number)
            .then(|| spec.next_base_fee(parent)),
        withdrawals_root: spec
            .is_shanghai_active_at_timestamp(ts)
            .then_some(EMPTY_ROOT_HASH),
        blob_gas_used: cancun.then_some(0),
        excess_blob_gas: cancun.then(|| {
            parent
                .maybe_next_block_excess_blob_gas(blob_params)
                .unwrap_or(0)
        }),
        parent_beacon_block_root: cancun.then_some(attrs.parent_beacon_block_root),
        ..Default::default()
    };
    let evm = EthEvmFactory::default().create_evm(new_state(state), evm_env(spec, &header));
    let withdrawals = header.withdrawals_root.map(|_| Cow::Owned(Vec::new()));
    let ctx = EthBlockExecutionCtx {
        parent_hash: header.parent_hash,
        parent_beacon_block_root: header.parent_beacon_block_root,
        ommers: &[],
        withdrawals,
        extra_data: header.extra_data.clone(),
        tx_count_hint: None,
        slot_number: None,
    };
    let mut executor =
        EthBlockExecutor::new(evm, ctx, ExecutorSpec(spec), AlloyReceiptBuilder::default());
    executor.apply_pre_execution_changes().map_err(block_err)?;

    let max_blob_gas = blob_params
        .map(|p| p.max_blob_gas_per_block())
        .unwrap_or_default();
    let osaka = spec.is_osaka_active_at_timestamp(ts);
    let mut body_size = 0usize;
    let mut gas_used = 0u64;
    let mut blob_gas_used = 0u64;
    let mut transactions = Vec::new();
    let mut tx_gas_used = Vec::new();
    let mut invalid = Vec::new();
    // A sender whose transaction is left out has its later nonces left out too: they could
    // not execute before it.
    let mut skipped: HashSet<Address> = HashSet::new();
    for tx in candidates {
        if header.gas_limit - gas_used < MIN_TX_GAS {
            break;
        }
        let sender = tx.signer();
        if skipped.contains(&sender) {
            continue;
        }
        let hash = *tx.tx_hash();
        if tx.gas_limit() > header.gas_limit {
            invalid.push((hash, "exceeds block gas limit".to_string()));
            skipped.insert(sender);
            continue;
        }
        // EIP-7934: from Osaka the block's RLP stays under the cap; the header and the list
        // overheads fit in the headroom.
        let tx_size = tx.inner().eip2718_encoded_length();
        if osaka && body_size + tx_size > MAX_RLP_BLOCK_SIZE - BLOCK_SIZE_HEADROOM {
            skipped.insert(sender);
            continue;
        }
        let tx_blob_gas = tx.blob_gas_used().unwrap_or_default();
        // (Before Cancun a blob transaction goes on to execution and is rejected as invalid.)
        let blobs_full = cancun && tx_blob_gas > 0 && blob_gas_used + tx_blob_gas > max_blob_gas;
        if tx.gas_limit() > header.gas_limit - gas_used || blobs_full {
            // It may fit the next block; others behind it may fit this one.
            skipped.insert(sender);
            continue;
        }
        match executor.execute_transaction(tx.as_recovered_ref()) {
            Ok(gas) => {
                gas_used += gas.tx_gas_used();
                body_size += tx_size;
                blob_gas_used += tx_blob_gas;
                tx_gas_used.push(gas.tx_gas_used());
                transactions.push(tx);
            }
            Err(BlockExecutionError::Validation(BlockValidationError::InvalidTx {
                hash,
                error,
            })) => {
                let reason = error
                    .as_invalid_tx_err()
                    .map(invalid_tx_message)
                    .unwrap_or(error.to_string());
                // geth's miner: a nonce too low only drops this transaction; anything else
                // leaves the sender's later nonces unable to run.
                if !matches!(
                    error.as_invalid_tx_err(),
                    Some(InvalidTransaction::NonceTooLow { .. })
                ) {
                    skipped.insert(sender);
                }
                invalid.push((hash, reason));
            }
            Err(err) => return Err(block_err(err)),
        }
    }
    let (evm, result) = executor.finish().map_err(block_err)?;
    let changes = take_changes(evm.into_db());

    header.gas_used = result.gas_used;
    header.receipts_root = calculate_receipt_root(&result.receipts);
    header.logs_bloom = logs_bloom(&result.receipts);
    header.transactions_root =
        ordered_trie_root_with_encoder(&transactions, |tx, buf| tx.inner().encode_2718(buf));
    if cancun {
        header.blob_gas_used = Some(result.blob_gas_used);
    }
    if spec.is_prague_active_at_timestamp(ts) {
        header.requests_hash = Some(result.requests.requests_hash());
    }
    Ok(BuiltBlock {
        header,
        transactions,
        receipts: result.receipts,
        tx_gas_used,
        changes,
        invalid,
        requests: result.requests,
    })
}

/// Maps an alloy-evm block error, keeping storage failures typed.
pub(super) fn block_err(err: BlockExecutionError) -> ExecError {
    let boxed = match err {
        BlockExecutionError::Validation(BlockValidationError::InvalidTx { hash, error }) => {
            let reason = error
                .as_invalid_tx_err()
                .map(invalid_tx_message)
                .unwrap_or(error.to_string());
            return ExecError::InvalidTx(format!("invalid transaction {hash}: {reason}"));
        }
        BlockExecutionError::Internal(alloy_evm::block::InternalBlockExecutionError::EVM {
            error,
            ..
        }) => error,
        other => return ExecError::Block(other),
    };
    match boxed.downcast::<super::error::EvmErr>() {
        Ok(evm_err) => ExecError::from(*evm_err),
        Err(other) => ExecError::Block(BlockExecutionError::Internal(
            alloy_evm::block::InternalBlockExecutionError::Other(other),
        )),
    }
}

/// Drains the executed state's bundle into [`StateChanges`].
fn take_changes(mut db: Db<'_>) -> StateChanges {
    db.merge_transitions(BundleRetention::PlainState);
    bundle_to_changes(db.take_bundle())
}

/// Converts a revm bundle to [`StateChanges`]: only accounts that really changed, sorted by
/// address; `storage_wiped` for destroyed (or destroyed and re-created) accounts, whose
/// surviving slots are then all listed; `new_code` whenever the code hash changed.
pub(crate) fn bundle_to_changes(bundle: BundleState) -> StateChanges {
    let to_state = |info: &revm::state::AccountInfo| AccountState {
        nonce: info.nonce,
        balance: info.balance,
        code_hash: info.code_hash,
    };
    let mut changes = Vec::with_capacity(bundle.state.len());
    for (address, account) in &bundle.state {
        let wiped = account.status.was_destroyed();
        let info = account.info.as_ref().map(to_state);
        let original = account.original_info.as_ref().map(to_state);
        // The changed slots, and what the nonzero ones held before the block, for the trie to
        // recognise their leaves by (a destroyed account's storage trie is wiped: nothing to
        // recognise).
        let mut storage = Vec::new();
        let mut storage_before = Vec::new();
        for (key, slot) in &account.storage {
            if wiped {
                if !slot.present_value.is_zero() {
                    storage.push((*key, slot.present_value));
                }
            } else if slot.is_changed() {
                storage.push((*key, slot.present_value));
                if !slot.previous_or_original_value.is_zero() {
                    storage_before.push((*key, slot.previous_or_original_value));
                }
            }
        }
        storage.sort_unstable();
        storage_before.sort_unstable();
        let nothing_before_or_after = info.is_none() && original.is_none();
        if (!wiped && info == original && storage.is_empty()) || nothing_before_or_after {
            continue;
        }
        let new_code = match (&account.info, &original) {
            (Some(now), before)
                if now.code_hash != KECCAK_EMPTY
                    && (wiped || before.map(|b| b.code_hash) != Some(now.code_hash)) =>
            {
                bundle
                    .contracts
                    .get(&now.code_hash)
                    .cloned()
                    .or_else(|| now.code.clone())
            }
            _ => None,
        };
        changes.push(AccountChange {
            address: *address,
            before: original,
            info,
            new_code,
            storage_wiped: wiped,
            storage,
            storage_before,
        });
    }
    changes.sort_unstable_by_key(|c| c.address);
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_utils::{
        clique_spec, dev_spec, fixture_chain, key, signed_transfer, signed_transfer_with_gas,
        MemState, ALICE, BOB,
    };
    use alloy_consensus::transaction::SignerRecoverable;

    #[test]
    fn imports_cancun_fixture_blocks_with_matching_receipts_roots() {
        let (spec, blocks) = fixture_chain("cancun-20-blocks");
        let mut state = MemState::from_genesis(&spec.genesis);
        let genesis = spec.genesis_header(state.state_root());
        assert_eq!(blocks.len(), 20);
        assert_eq!(
            blocks[0].header.parent_hash,
            genesis.hash_slow(),
            "genesis hash"
        );
        let mut txs_seen = 0;
        let mut withdrawals = 0;
        let mut tx_types = std::collections::BTreeMap::new();
        for block in &blocks {
            let senders: Vec<Address> = block
                .body
                .transactions
                .iter()
                .map(|tx| tx.recover_signer().expect("valid signature"))
                .collect();
            txs_seen += senders.len();
            for tx in &block.body.transactions {
                *tx_types.entry(tx.tx_type() as u8).or_insert(0usize) += 1;
            }
            withdrawals += block.body.withdrawals.as_ref().map_or(0, |w| w.len());
            let out = execute_block(&spec, &state, block, &senders, None)
                .unwrap_or_else(|e| panic!("block {}: {e}", block.header.number));
            let n = block.header.number;
            assert_eq!(out.gas_used, block.header.gas_used, "gas_used of block {n}");
            assert_eq!(
                out.receipts_root(),
                block.header.receipts_root,
                "receipts of block {n}"
            );
            assert_eq!(
                out.logs_bloom(),
                block.header.logs_bloom,
                "bloom of block {n}"
            );
            assert_eq!(out.tx_gas_used.iter().sum::<u64>(), out.gas_used);
            assert!(out.changes.windows(2).all(|w| w[0].address < w[1].address));
            state.apply(&out.changes);
            state.insert_block_hash(n, block.header.hash_slow());
            assert_eq!(
                state.state_root(),
                block.header.state_root,
                "state root of block {n}"
            );
        }
        assert!(txs_seen > 0, "fixture has transactions");
        // The fixture exercises legacy, EIP-2930, EIP-1559 and EIP-4844 txs and withdrawals.
        assert_eq!(tx_types.keys().copied().collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert!(withdrawals > 0);
    }

    #[test]
    fn build_block_skips_invalid_tx_and_reexecutes_identically() {
        let spec = dev_spec();
        let state = MemState::from_genesis(&spec.genesis);
        let parent = spec.genesis_header(state.state_root());
        let good0 = signed_transfer(&spec, 0, 0, BOB, 1_000);
        let stale = signed_transfer(&spec, 0, 7, BOB, 1); // nonce 7: too high
        let good1 = signed_transfer(&spec, 0, 1, BOB, 2_000);
        let broke = signed_transfer(&spec, 5, 0, ALICE, 1); // unfunded key
        let bad_hashes = [*stale.tx_hash(), *broke.tx_hash()];
        let attrs = BuildAttributes {
            timestamp: parent.timestamp + 1,
            gas_limit: parent.gas_limit,
            ..Default::default()
        };
        let built = build_block(
            &spec,
            &state,
            &parent,
            attrs,
            vec![good0, good1, stale, broke].into_iter(),
        )
        .unwrap();
        assert_eq!(built.transactions.len(), 2);
        assert_eq!(built.invalid.len(), 2);
        assert_eq!(
            built.invalid.iter().map(|(h, _)| *h).collect::<Vec<_>>(),
            bad_hashes
        );
        assert!(
            built.invalid[0].1.starts_with("nonce too high"),
            "{}",
            built.invalid[0].1
        );
        assert!(
            built.invalid[1]
                .1
                .starts_with("insufficient funds for gas * price + value"),
            "{}",
            built.invalid[1].1
        );
        assert_eq!(built.header.gas_used, 42_000);
        assert_eq!(built.header.number, 1);

        // Importing the built block reproduces receipts and changes.
        let block = built.to_block();
        let senders: Vec<Address> = built.transactions.iter().map(|t| t.signer()).collect();
        let out = execute_block(&spec, &state, &block, &senders, None).unwrap();
        assert_eq!(out.receipts_root(), built.header.receipts_root);
        assert_eq!(out.logs_bloom(), built.header.logs_bloom);
        assert_eq!(out.changes, built.changes);
        let bob = out.changes.iter().find(|c| c.address == BOB).unwrap();
        assert_eq!(bob.info.unwrap().balance, U256::from(3_000));
        // Every change says what its account held before the block (the trie recognises the
        // account's leaf by it): the state's account, none for an account the block created.
        for change in &out.changes {
            let before = state
                .account(change.address)
                .unwrap()
                .map(|a| AccountState {
                    nonce: a.nonce,
                    balance: a.balance,
                    code_hash: a.code_hash,
                });
            assert_eq!(change.before, before, "{}", change.address);
        }
        assert!(out.changes.iter().any(|c| c.before.is_some()));
    }

    #[test]
    fn builds_and_imports_on_clique_chain_with_cancun_and_zero_base_fee() {
        let spec = clique_spec();
        assert!(spec.clique.is_some() && spec.zero_base_fee);
        let state = MemState::from_genesis(&spec.genesis);
        let parent = spec.genesis_header(state.state_root());
        let attrs = BuildAttributes {
            timestamp: 2,
            beneficiary: ALICE,
            gas_limit: parent.gas_limit,
            difficulty: U256::from(2),
            ..Default::default()
        };
        let txs = vec![signed_transfer(&spec, 0, 0, BOB, 5)];
        let built = build_block(&spec, &state, &parent, attrs, txs.into_iter()).unwrap();
        assert_eq!(built.transactions.len(), 1, "{:?}", built.invalid);
        assert_eq!(built.header.base_fee_per_gas, Some(0));
        assert_eq!(built.header.difficulty, U256::from(2));
        let senders: Vec<Address> = built.transactions.iter().map(|t| t.signer()).collect();
        let out = execute_block(&spec, &state, &built.to_block(), &senders, None).unwrap();
        assert_eq!(out.receipts_root(), built.header.receipts_root);
        assert_eq!(out.changes, built.changes);
        // Clique pays no block reward: the signer gets only the 1 wei/gas tip.
        let miner = out.changes.iter().find(|c| c.address == ALICE).unwrap();
        assert_eq!(miner.info.unwrap().balance, U256::from(21_000));
    }

    #[test]
    fn deployment_reports_new_code_and_storage() {
        let spec = dev_spec();
        let state = MemState::from_genesis(&spec.genesis);
        let parent = spec.genesis_header(state.state_root());
        // init code: SSTORE(0, 7); MSTORE(0, 0x345f5500); RETURN(28, 4) -> runtime code
        // 0x345f5500: SSTORE(0, CALLVALUE).
        let init = alloy_primitives::hex!("60075f5563345f55005f526004601cf3");
        let signer = key(0);
        let tx_to = |nonce, to, value: u64, input: &[u8]| {
            let tx = alloy_consensus::TxEip1559 {
                chain_id: spec.chain_id,
                nonce,
                gas_limit: 100_000,
                max_fee_per_gas: 2_000_000_000,
                to,
                value: U256::from(value),
                input: input.to_vec().into(),
                ..Default::default()
            };
            crate::test_utils::sign(&signer, tx)
        };
        let tx = tx_to(0, alloy_primitives::TxKind::Create, 0, &init);
        let attrs = BuildAttributes {
            timestamp: 1,
            gas_limit: parent.gas_limit,
            ..Default::default()
        };
        let built = build_block(&spec, &state, &parent, attrs, std::iter::once(tx)).unwrap();
        assert!(built.invalid.is_empty(), "{:?}", built.invalid);
        assert!(alloy_consensus::TxReceipt::status(&built.receipts[0]));
        let created = signer.address().create(0);
        let change = built
            .changes
            .iter()
            .find(|c| c.address == created)
            .expect("contract");
        let info = change.info.unwrap();
        let code = change.new_code.as_ref().expect("new code");
        let runtime = [0x34, 0x5f, 0x55, 0x00];
        assert_eq!(code.original_bytes().as_ref(), &runtime);
        assert_eq!(info.code_hash, alloy_primitives::keccak256(runtime));
        assert_eq!(info.nonce, 1);
        assert_eq!(change.storage, vec![(U256::ZERO, U256::from(7))]);
        assert!(change.storage_before.is_empty(), "the slot held nothing");
        assert!(!change.storage_wiped);

        // A call that stores its value: the slot's value before the block comes with it.
        let mut state = state;
        state.apply(&built.changes);
        let call = tx_to(1, alloy_primitives::TxKind::Call(created), 9, &[]);
        let attrs = BuildAttributes {
            timestamp: 2,
            gas_limit: built.header.gas_limit,
            ..Default::default()
        };
        let next = build_block(&spec, &state, &built.header, attrs, std::iter::once(call)).unwrap();
        assert!(alloy_consensus::TxReceipt::status(&next.receipts[0]));
        let change = next.changes.iter().find(|c| c.address == created).unwrap();
        assert_eq!(change.storage, vec![(U256::ZERO, U256::from(9))]);
        assert_eq!(change.storage_before, vec![(U256::ZERO, U256::from(7))]);
    }

    #[test]
    fn build_block_skips_a_sender_whose_transaction_does_not_fit_and_goes_on() {
        let spec = dev_spec();
        let state = MemState::from_genesis(&spec.genesis);
        let parent = spec.genesis_header(state.state_root());
        let attrs = BuildAttributes {
            timestamp: parent.timestamp + 1,
            gas_limit: 70_000,
            ..Default::default()
        };
        let with_gas = |from, nonce, gas| signed_transfer_with_gas(&spec, from, nonce, BOB, 1, gas);
        // Key 0: a transfer, then one asking for more gas than is left, then one that would fit
        // but cannot run before it. Key 1: a transfer behind all of them.
        let txs = vec![
            with_gas(0, 0, 21_000),
            with_gas(0, 1, 60_000),
            with_gas(0, 2, 21_000),
            with_gas(1, 0, 21_000),
        ];
        let hashes: Vec<_> = txs.iter().map(|t| *t.tx_hash()).collect();
        let built = build_block(&spec, &state, &parent, attrs, txs.into_iter()).unwrap();
        let included: Vec<_> = built.transactions.iter().map(|t| *t.tx_hash()).collect();
        assert_eq!(included, vec![hashes[0], hashes[3]]);
        assert!(built.invalid.is_empty(), "{:?}", built.invalid);
    }

    #[test]
    fn build_block_stops_when_less_than_a_transfer_is_left() {
        let spec = dev_spec();
        let state = MemState::from_genesis(&spec.genesis);
        let parent = spec.genesis_header(state.state_root());
        let attrs = BuildAttributes {
            timestamp: parent.timestamp + 1,
            gas_limit: 50_000,
            ..Default::default()
        };
        let txs = (0..3).map(|n| signed_transfer(&spec, 0, n, BOB, 1));
        let built = build_block(&spec, &state, &parent, attrs, txs).unwrap();
        assert_eq!(built.transactions.len(), 2);
        assert!(built.invalid.is_empty());
    }
}
