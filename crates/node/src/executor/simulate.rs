//! `eth_simulateV1` (execution-apis): a sequence of blocks of unsigned calls on top of a stored
//! block, each block with optional block and state overrides, executed by the same block
//! executor as real blocks (system calls included) and returned as full blocks with per-call
//! results.
//!
//! Follows geth: block numbers and timestamps must increase (gaps are filled with empty blocks,
//! 12 s apart), at most [`MAX_SIMULATE_BLOCKS`] past the base block; without `validation` the
//! base fee defaults to 0, nonces are not checked and fees default to 0; a call without `gas`
//! gets what is left of the block's gas; a call that cannot be included (nonce, funds, fee,
//! block gas) fails the whole request with its code, while a revert or an exceptional halt is
//! that call's result. Each block's state root is computed over the stored trie of the base
//! block with the blocks' changes kept in memory ([`OverlayTrie`]). With `traceTransfers`,
//! every transfer of ether appears among the call's logs as an ERC-20 `Transfer` from
//! [`TRANSFER_LOG_ADDRESS`], in execution order. (revm-inspectors' `TransferInspector` writes
//! such logs into the journal, so they would enter the receipts and the receipts root; geth keeps
//! them out of the block, and so does [`TransferLogs`] here.) The whole request runs under one
//! EVM deadline, as geth's.

use std::borrow::Cow;

use alloy_consensus::{
    constants::{EMPTY_OMMER_ROOT_HASH, EMPTY_ROOT_HASH},
    proofs::{calculate_receipt_root, ordered_trie_root_with_encoder},
    transaction::Recovered,
    BlockBody, BlockHeader, Header, ReceiptEnvelope, SignableTransaction, TxEnvelope,
    TypedTransaction,
};
use alloy_eips::Encodable2718;
use alloy_evm::{
    block::{BlockExecutionError, BlockExecutor, BlockValidationError},
    eth::{receipt_builder::AlloyReceiptBuilder, EthBlockExecutionCtx, EthBlockExecutor},
    overrides::{apply_block_overrides, apply_state_overrides},
    EthEvmFactory, Evm, EvmFactory,
};
use alloy_hardforks::EthereumHardforks;
use alloy_primitives::{b256, Address, Bytes, Log, LogData, Signature, B256, U256};
use alloy_rpc_types_eth::{
    simulate::{SimBlock, SimCallResult, SimulateError, SimulatePayload, MAX_SIMULATE_BLOCKS},
    BlockOverrides,
};
use l2node_api::error as code;
use revm::{
    context::ContextTr,
    context_interface::result::{ExecutionResult, InvalidTransaction},
    database::{states::bundle_state::BundleRetention, Database},
    interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome},
    Inspector,
};

use super::{
    block::{block_err, bundle_to_changes, evm_env, logs_bloom, new_state, ExecutorSpec},
    call::Deadline,
    error::{halt_message, invalid_tx_message, ExecError},
};
use crate::chainspec::ChainSpec;
use l2node_storage::{StateReader, StoredBlock};
use l2node_trie::{OverlayTrie, TrieStore};

/// Seconds between two simulated blocks whose time is not given (geth's).
const TIMESTAMP_INCREMENT: u64 = 12;

/// The address the `traceTransfers` logs come from (execution-apis).
pub const TRANSFER_LOG_ADDRESS: Address =
    alloy_primitives::address!("0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE");

/// `keccak256("Transfer(address,address,uint256)")`.
const TRANSFER_TOPIC: B256 =
    b256!("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");

/// Why a simulation was refused as a whole; the code is execution-apis' for the case.
#[derive(Debug, thiserror::Error)]
pub enum SimulateFailure {
    /// A block or call the rules refuse (nonce, funds, fee, gas, block order, limits).
    #[error("{message}")]
    Refused {
        /// execution-apis' code for the case (`-380xx`).
        code: i32,
        /// geth's wording.
        message: String,
    },
    /// Execution itself failed (storage, a system call, the deadline).
    #[error(transparent)]
    Exec(#[from] ExecError),
}

impl SimulateFailure {
    fn refused(code: i32, message: impl Into<String>) -> Self {
        Self::Refused {
            code,
            message: message.into(),
        }
    }
}

/// One simulated block: the block as it would be stored, and one result per call.
#[derive(Debug, Clone)]
pub struct SimulatedBlock {
    /// Header (with its hash), the calls as transactions (unsigned: a zero signature), and
    /// each call's sender.
    pub block: StoredBlock,
    /// The result of each call, in order.
    pub calls: Vec<SimCallResult>,
}

/// Runs `payload` on top of `base` (whose state `state` and trie `base_trie` are).
pub fn simulate(
    spec: &ChainSpec,
    state: &dyn StateReader,
    base_trie: &dyn TrieStore,
    base: &Header,
    payload: SimulatePayload,
    gas_cap: u64,
) -> Result<Vec<SimulatedBlock>, SimulateFailure> {
    let blocks = sanitize_chain(base, payload.block_state_calls)?;
    let mut opts = Options {
        validation: payload.validation,
        trace_transfers: payload.trace_transfers,
        // geth: one gas pool of the RPC gas cap for every call of every block (0: no cap).
        gas_pool: if gas_cap == 0 { u64::MAX } else { gas_cap },
    };
    // One deadline for the whole request, as geth's RPC EVM timeout.
    let mut deadline = Deadline::after_timeout();
    let mut db = new_state(state);
    let mut trie = OverlayTrie::new(base_trie);
    let mut parent = base.clone();
    let mut parent_hash = base.hash_slow();
    let mut out = Vec::with_capacity(blocks.len());
    for (number, timestamp, block) in blocks {
        let header = block_header(
            spec,
            &parent,
            parent_hash,
            number,
            timestamp,
            block.block_overrides.as_ref(),
            payload.validation,
        );
        let simulated = simulate_block(
            spec,
            &mut db,
            &mut trie,
            header,
            block,
            &mut opts,
            &mut deadline,
        )?;
        parent_hash = simulated.block.hash;
        parent = simulated.block.header.clone();
        db.block_hashes.insert(parent.number, parent_hash);
        out.push(simulated);
    }
    Ok(out)
}

/// Block numbers and times in order, gaps filled with empty blocks (geth's `sanitizeChain`).
fn sanitize_chain(
    base: &Header,
    blocks: Vec<SimBlock>,
) -> Result<Vec<(u64, u64, SimBlock)>, SimulateFailure> {
    if blocks.is_empty() {
        // geth's answer to a simulation of nothing.
        return Err(SimulateFailure::refused(
            code::INVALID_PARAMS,
            "empty input",
        ));
    }
    let (mut prev_number, mut prev_time) = (base.number, base.timestamp);
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        let overrides = block.block_overrides.as_ref();
        let number = match overrides.and_then(|o| o.number) {
            Some(n) => u64::try_from(n).map_err(|_| {
                SimulateFailure::refused(code::SIM_BLOCK_NUMBER_INVALID, "block number overflows")
            })?,
            None => prev_number.saturating_add(1),
        };
        if number <= prev_number {
            return Err(SimulateFailure::refused(
                code::SIM_BLOCK_NUMBER_INVALID,
                format!("block numbers must be in order: {number} <= {prev_number}"),
            ));
        }
        if number - base.number > MAX_SIMULATE_BLOCKS {
            return Err(SimulateFailure::refused(
                code::SIM_CLIENT_LIMIT,
                "too many blocks",
            ));
        }
        for gap in prev_number + 1..number {
            prev_time += TIMESTAMP_INCREMENT;
            let filler = BlockOverrides {
                number: Some(U256::from(gap)),
                time: Some(prev_time),
                ..Default::default()
            };
            out.push((
                gap,
                prev_time,
                SimBlock::default().with_block_overrides(filler),
            ));
        }
        let time = match overrides.and_then(|o| o.time) {
            Some(t) if t <= prev_time => {
                return Err(SimulateFailure::refused(
                    code::SIM_BLOCK_TIMESTAMP_INVALID,
                    format!("block timestamps must be in order: {t} <= {prev_time}"),
                ))
            }
            Some(t) => t,
            None => prev_time + TIMESTAMP_INCREMENT,
        };
        (prev_number, prev_time) = (number, time);
        out.push((number, time, block));
    }
    Ok(out)
}

/// The header of a simulated block before execution (geth's `makeHeaders` and the
/// parent-dependent fields of `processBlock`).
fn block_header(
    spec: &ChainSpec,
    parent: &Header,
    parent_hash: B256,
    number: u64,
    timestamp: u64,
    overrides: Option<&BlockOverrides>,
    validation: bool,
) -> Header {
    let o = overrides.cloned().unwrap_or_default();
    let cancun = spec.is_cancun_active_at_timestamp(timestamp);
    let base_fee = spec.is_london_active_at_block(number).then(|| {
        match o.base_fee {
            Some(fee) => fee.saturating_to(),
            // Without validation the base fee is 0 unless given, so that calls at gas price 0
            // run (geth).
            None if validation => spec.next_base_fee(parent),
            None => 0,
        }
    });
    let excess_blob_gas = cancun.then(|| {
        if spec.is_cancun_active_at_timestamp(parent.timestamp) {
            parent
                .maybe_next_block_excess_blob_gas(spec.blob_params_at(timestamp))
                .unwrap_or(0)
        } else {
            0
        }
    });
    Header {
        parent_hash,
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: o.coinbase.unwrap_or(parent.beneficiary),
        transactions_root: EMPTY_ROOT_HASH,
        receipts_root: EMPTY_ROOT_HASH,
        difficulty: o.difficulty.unwrap_or(parent.difficulty),
        number,
        gas_limit: o.gas_limit.unwrap_or(parent.gas_limit),
        timestamp,
        mix_hash: o.random.unwrap_or_default(),
        base_fee_per_gas: base_fee,
        withdrawals_root: spec
            .is_shanghai_active_at_timestamp(timestamp)
            .then_some(EMPTY_ROOT_HASH),
        blob_gas_used: cancun.then_some(0),
        excess_blob_gas,
        parent_beacon_block_root: cancun.then(|| o.beacon_root.unwrap_or_default()),
        ..Default::default()
    }
}

/// The request-wide switches of a simulation.
#[derive(Clone, Copy)]
struct Options {
    validation: bool,
    trace_transfers: bool,
    /// What the calls still run may use in all (the RPC gas cap less what the calls before
    /// used): a call without gas gets the rest of its block within it.
    gas_pool: u64,
}

fn simulate_block(
    spec: &ChainSpec,
    db: &mut super::block::Db<'_>,
    trie: &mut OverlayTrie<'_>,
    mut header: Header,
    block: SimBlock,
    opts: &mut Options,
    deadline: &mut Deadline,
) -> Result<SimulatedBlock, SimulateFailure> {
    let (validation, trace_transfers) = (opts.validation, opts.trace_transfers);
    let mut env = evm_env(spec, &header);
    if let Some(overrides) = &block.block_overrides {
        // Only what the header does not carry: BLOCKHASH and blob base fee overrides.
        let extra = BlockOverrides {
            block_hash: overrides.block_hash.clone(),
            blob_base_fee: overrides.blob_base_fee,
            ..Default::default()
        };
        apply_block_overrides(extra, db, &mut env.block_env);
    }
    // `movePrecompileToAddress`: the precompile at an overridden address moves for this block
    // (geth), leaving the address free for overridden code.
    let moves: Vec<(Address, Address)> = block
        .state_overrides
        .iter()
        .flatten()
        .filter_map(|(address, o)| o.move_precompile_to.map(|to| (*address, to)))
        .collect();
    if let Some(overrides) = block.state_overrides {
        apply_state_overrides(overrides, db).map_err(|e| match e {
            alloy_evm::overrides::StateOverrideError::Database(db) => ExecError::from(db),
            other => ExecError::StateOverride(other),
        })?;
    }
    let cfg = &mut env.cfg_env;
    // geth runs simulated calls with the transaction checks skipped, EIP-7825's cap among them
    // (execution-apis' Osaka cases default a call's gas to the 50M RPC gas cap).
    cfg.tx_gas_limit_cap = Some(u64::MAX);
    cfg.disable_eip3607 = true;
    cfg.disable_nonce_check = !validation;
    cfg.disable_base_fee = !validation;

    let mut transfers = TransferLogs::new(trace_transfers);
    let evm = EthEvmFactory::default().create_evm_with_inspector(
        &mut *db,
        env,
        (&mut transfers, &mut *deadline),
    );
    let shanghai = header.withdrawals_root.is_some();
    let ctx = EthBlockExecutionCtx {
        parent_hash: header.parent_hash,
        parent_beacon_block_root: header.parent_beacon_block_root,
        ommers: &[],
        withdrawals: shanghai.then(|| Cow::Owned(Vec::new())),
        extra_data: Bytes::new(),
        tx_count_hint: Some(block.calls.len()),
        slot_number: None,
    };
    let mut executor =
        EthBlockExecutor::new(evm, ctx, ExecutorSpec(spec), AlloyReceiptBuilder::default());
    let precompiles = executor.evm_mut().precompiles_mut();
    // geth's override errors are -32000; a move onto itself is still checked.
    if let Some((from, _)) = moves
        .iter()
        .find(|(from, _)| precompiles.get(from).is_none())
    {
        return Err(SimulateFailure::refused(
            code::SERVER_ERROR,
            format!(
                "account {from} is not a precompile: movePrecompileToAddress moves a precompile \
                 (0x01..0x11, 0x100 from Osaka) to another address"
            ),
        ));
    }
    precompiles
        .move_precompiles(moves)
        .map_err(|e| SimulateFailure::refused(code::SERVER_ERROR, e.to_string()))?;
    executor.apply_pre_execution_changes().map_err(block_err)?;

    let mut transactions = Vec::with_capacity(block.calls.len());
    let mut senders = Vec::with_capacity(block.calls.len());
    let mut calls = Vec::with_capacity(block.calls.len());
    let mut gas_used = 0u64;
    for mut request in block.calls {
        let from = request.from.unwrap_or_default();
        if request.nonce.is_none() {
            let account = executor
                .evm_mut()
                .db_mut()
                .basic(from)
                .map_err(|e| ExecError::Evm(e.to_string()))?;
            request.nonce = Some(account.map_or(0, |a| a.nonce));
        }
        let left = header.gas_limit.saturating_sub(gas_used);
        // geth: a call without gas gets what is left of the block; the block must hold the
        // call's gas; then the gas is lowered to what is left of the request's gas pool.
        let gas = request.gas.unwrap_or(left);
        if gas > left {
            return Err(SimulateFailure::refused(
                code::SIM_BLOCK_GAS_LIMIT,
                format!("block gas limit reached: remaining: {left}, required: {gas}"),
            ));
        }
        let gas = gas.min(opts.gas_pool);
        request.gas = Some(gas);
        request.chain_id = Some(spec.chain_id);
        if request.gas_price.is_none() {
            request.max_fee_per_gas.get_or_insert(0);
            request.max_priority_fee_per_gas.get_or_insert(0);
        }
        if request.blob_versioned_hashes.is_some() {
            // geth: a blob call without a blob fee pays none.
            request.max_fee_per_blob_gas.get_or_insert(0);
        }
        request.from = Some(from);
        let tx = unsigned_envelope(request)?;
        executor.evm_mut().inspector_mut().0.start_transaction();
        let mut result = None;
        let executed = executor
            .execute_transaction_with_result_closure(Recovered::new_unchecked(&tx, from), |r| {
                result = Some(r.result.result.clone())
            });
        match executed {
            Ok(gas) => {
                gas_used += gas.tx_gas_used();
                opts.gas_pool = opts.gas_pool.saturating_sub(gas.tx_gas_used());
            }
            Err(BlockExecutionError::Validation(BlockValidationError::InvalidTx {
                error, ..
            })) => {
                return Err(match error.as_invalid_tx_err() {
                    Some(invalid) => SimulateFailure::refused(
                        invalid_tx_code(invalid),
                        invalid_tx_message(invalid),
                    ),
                    None => SimulateFailure::refused(code::INVALID_PARAMS, error.to_string()),
                })
            }
            Err(other) => return Err(block_err(other).into()),
        }
        let (transfers, deadline) = executor.evm_mut().inspector_mut();
        deadline.check()?;
        let result = result.expect("an executed transaction reports its result");
        let logs = if trace_transfers {
            transfers.take_logs()
        } else {
            result.logs().to_vec()
        };
        calls.push(call_result(result, logs));
        transactions.push(tx);
        senders.push(from);
    }
    let (evm, result) = executor.finish().map_err(block_err)?;
    drop(evm);

    db.merge_transitions(BundleRetention::PlainState);
    let changes = bundle_to_changes(db.take_bundle());
    header.state_root =
        l2node_trie::apply_changes(trie, &changes).map_err(|e| ExecError::Evm(e.to_string()))?;
    header.gas_used = result.gas_used;
    header.receipts_root = calculate_receipt_root(&result.receipts);
    header.logs_bloom = logs_bloom(&result.receipts);
    header.transactions_root =
        ordered_trie_root_with_encoder(&transactions, |tx, buf| tx.encode_2718(buf));
    if header.excess_blob_gas.is_some() {
        header.blob_gas_used = Some(result.blob_gas_used);
    }
    if spec.is_prague_active_at_timestamp(header.timestamp) {
        header.requests_hash = Some(result.requests.requests_hash());
    }
    let hash = header.hash_slow();
    locate_logs(&mut calls, &result.receipts, &header, hash, &transactions);
    Ok(SimulatedBlock {
        block: StoredBlock {
            header,
            hash,
            body: BlockBody {
                transactions,
                ommers: Vec::new(),
                withdrawals: shanghai.then(Default::default),
            },
            senders,
        },
        calls,
    })
}

/// The call as a transaction with a zero signature (what geth returns for simulated calls).
fn unsigned_envelope(
    mut request: alloy_rpc_types_eth::TransactionRequest,
) -> Result<TxEnvelope, SimulateFailure> {
    // No `to`: a creation (alloy's builder wants it said).
    request.to.get_or_insert(alloy_primitives::TxKind::Create);
    let signature = Signature::new(U256::ZERO, U256::ZERO, false);
    let refused = |why: &str| {
        SimulateFailure::refused(
            code::INVALID_PARAMS,
            format!("a call cannot be made into a transaction ({why}): check its fee, blob and authorization fields"),
        )
    };
    if request.preferred_type() == alloy_consensus::TxType::Eip4844 && request.sidecar.is_none() {
        // A blob call names its blobs' versioned hashes only (alloy's builder wants a sidecar).
        let tx = request
            .build_4844_without_sidecar()
            .map_err(|e| refused(&e.to_string()))?;
        return Ok(tx.into_signed(signature).into());
    }
    let typed: TypedTransaction = request
        .build_typed_tx()
        .map_err(|_| refused("a field its type needs is missing"))?;
    Ok(match typed {
        TypedTransaction::Legacy(tx) => tx.into_signed(signature).into(),
        TypedTransaction::Eip2930(tx) => tx.into_signed(signature).into(),
        TypedTransaction::Eip1559(tx) => tx.into_signed(signature).into(),
        TypedTransaction::Eip4844(tx) => tx.into_signed(signature).into(),
        TypedTransaction::Eip7702(tx) => tx.into_signed(signature).into(),
    })
}

/// execution-apis' code for a call that cannot be included.
fn invalid_tx_code(err: &InvalidTransaction) -> i32 {
    use InvalidTransaction as E;
    match err {
        E::NonceTooLow { .. } => code::SIM_NONCE_TOO_LOW,
        E::NonceTooHigh { .. } | E::NonceOverflowInTransaction => code::SIM_NONCE_TOO_HIGH,
        E::GasPriceLessThanBasefee => code::SIM_BASE_FEE_TOO_LOW,
        E::CallGasCostMoreThanGasLimit { .. } | E::GasFloorMoreThanGasLimit { .. } => {
            code::SIM_INTRINSIC_GAS
        }
        E::LackOfFundForMaxFee { .. } | E::OverflowPaymentInTransaction => {
            code::SIM_INSUFFICIENT_FUNDS
        }
        E::CallerGasLimitMoreThanBlock | E::TxGasLimitGreaterThanCap { .. } => {
            code::SIM_BLOCK_GAS_LIMIT
        }
        E::RejectCallerWithCode => code::SIM_SENDER_NOT_EOA,
        E::CreateInitCodeSizeLimit => code::SIM_MAX_INIT_CODE_SIZE,
        _ => code::INVALID_PARAMS,
    }
}

/// A call's result: success, revert (code 3 with the revert data, as current geth) or an
/// exceptional halt (-32015).
fn call_result(result: ExecutionResult, logs: Vec<Log>) -> SimCallResult {
    let gas_used = result.tx_gas_used();
    // geth's `maxUsedGas`: the most the call consumed, before refunds.
    let gas = result.gas();
    let max_used_gas = gas.total_gas_spent().max(gas.floor_gas());
    let (status, return_data, error) = match result {
        ExecutionResult::Success { output, .. } => (true, output.into_data(), None),
        ExecutionResult::Revert { output, .. } => {
            // Current geth: code 3 with the revert data, and no return data.
            let message = ExecError::Revert {
                output: output.clone(),
            }
            .to_string();
            let error = SimulateError {
                code: code::EXECUTION_REVERTED,
                message,
                data: Some(output),
            };
            (false, Bytes::new(), Some(error))
        }
        ExecutionResult::Halt { reason, .. } => {
            let error = SimulateError {
                code: code::SIM_VM_ERROR,
                message: halt_message(&reason),
                data: None,
            };
            (false, Bytes::new(), Some(error))
        }
    };
    SimCallResult {
        return_data,
        logs: logs
            .into_iter()
            .map(|inner| alloy_rpc_types_eth::Log {
                inner,
                ..Default::default()
            })
            .collect(),
        gas_used,
        max_used_gas: Some(max_used_gas),
        status,
        error,
    }
}

/// Fills in where each log is: block, transaction and position in the block.
fn locate_logs(
    calls: &mut [SimCallResult],
    _receipts: &[ReceiptEnvelope],
    header: &Header,
    hash: B256,
    transactions: &[TxEnvelope],
) {
    let mut index = 0u64;
    for (i, (call, tx)) in calls.iter_mut().zip(transactions).enumerate() {
        for log in &mut call.logs {
            log.block_hash = Some(hash);
            log.block_number = Some(header.number);
            log.block_timestamp = Some(header.timestamp);
            log.transaction_hash = Some(*tx.tx_hash());
            log.transaction_index = Some(i as u64);
            log.log_index = Some(index);
            index += 1;
        }
    }
}

/// `traceTransfers`: collects a call's logs in execution order with a `Transfer` log from
/// [`TRANSFER_LOG_ADDRESS`] for every ether transfer, dropping the logs of reverted frames.
#[derive(Debug)]
struct TransferLogs {
    enabled: bool,
    logs: Vec<Log>,
    /// `logs.len()` when each open frame began.
    frames: Vec<usize>,
}

impl TransferLogs {
    fn new(enabled: bool) -> Self {
        Self {
            enabled,
            logs: Vec::new(),
            frames: Vec::new(),
        }
    }

    fn start_transaction(&mut self) {
        self.logs.clear();
        self.frames.clear();
    }

    fn take_logs(&mut self) -> Vec<Log> {
        std::mem::take(&mut self.logs)
    }

    fn enter(&mut self, from: Address, to: Address, value: U256) {
        self.frames.push(self.logs.len());
        if !value.is_zero() {
            self.logs.push(Log {
                address: TRANSFER_LOG_ADDRESS,
                data: LogData::new_unchecked(
                    vec![TRANSFER_TOPIC, from.into_word(), to.into_word()],
                    value.to_be_bytes_vec().into(),
                ),
            });
        }
    }

    fn exit(&mut self, reverted: bool) {
        if let Some(start) = self.frames.pop() {
            if reverted {
                self.logs.truncate(start);
            }
        }
    }
}

impl<CTX: ContextTr> Inspector<CTX> for TransferLogs {
    fn log(&mut self, _context: &mut CTX, log: Log) {
        if self.enabled {
            self.logs.push(log);
        }
    }

    fn call(&mut self, _context: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        if self.enabled {
            let value = inputs.transfer_value().unwrap_or_default();
            self.enter(inputs.transfer_from(), inputs.transfer_to(), value);
        }
        None
    }

    fn call_end(&mut self, _context: &mut CTX, _inputs: &CallInputs, outcome: &mut CallOutcome) {
        if self.enabled {
            self.exit(!outcome.result.is_ok());
        }
    }

    fn create(&mut self, _context: &mut CTX, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        if self.enabled {
            // The new address is not known yet: the log is completed at `create_end`.
            self.enter(inputs.caller(), Address::ZERO, inputs.value());
        }
        None
    }

    fn create_end(
        &mut self,
        _context: &mut CTX,
        _inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        if !self.enabled {
            return;
        }
        let start = self.frames.last().copied();
        if let (Some(start), Some(address)) = (start, outcome.address) {
            if let Some(log) = self.logs.get_mut(start) {
                if log.address == TRANSFER_LOG_ADDRESS && log.topics()[2] == B256::ZERO {
                    let mut topics = log.topics().to_vec();
                    topics[2] = address.into_word();
                    log.data = LogData::new_unchecked(topics, log.data.data.clone());
                }
            }
        }
        self.exit(!outcome.result.is_ok());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Header {
        Header {
            number: 10,
            timestamp: 1_000,
            ..Default::default()
        }
    }

    fn block(number: Option<u64>, time: Option<u64>) -> SimBlock {
        SimBlock::default().with_block_overrides(BlockOverrides {
            number: number.map(U256::from),
            time,
            ..Default::default()
        })
    }

    fn refused_code(r: Result<Vec<(u64, u64, SimBlock)>, SimulateFailure>) -> i32 {
        match r {
            Err(SimulateFailure::Refused { code, .. }) => code,
            other => panic!("expected a refusal, got {:?}", other.map(|v| v.len())),
        }
    }

    #[test]
    fn numbers_and_times_default_to_the_next_and_gaps_are_filled() {
        let chain =
            sanitize_chain(&base(), vec![block(None, None), block(Some(14), None)]).unwrap();
        let got: Vec<(u64, u64)> = chain.iter().map(|(n, t, _)| (*n, *t)).collect();
        assert_eq!(got, [(11, 1_012), (12, 1_024), (13, 1_036), (14, 1_048)]);
    }

    #[test]
    fn out_of_order_blocks_and_too_many_are_refused() {
        let out_of_order =
            sanitize_chain(&base(), vec![block(Some(12), None), block(Some(12), None)]);
        assert_eq!(refused_code(out_of_order), code::SIM_BLOCK_NUMBER_INVALID);
        assert_eq!(
            refused_code(sanitize_chain(&base(), vec![])),
            code::INVALID_PARAMS
        );
        let at_base = sanitize_chain(&base(), vec![block(Some(10), None)]);
        assert_eq!(refused_code(at_base), code::SIM_BLOCK_NUMBER_INVALID);
        let old_time = sanitize_chain(&base(), vec![block(None, Some(1_000))]);
        assert_eq!(refused_code(old_time), code::SIM_BLOCK_TIMESTAMP_INVALID);
        let far = sanitize_chain(
            &base(),
            vec![block(Some(10 + MAX_SIMULATE_BLOCKS + 1), None)],
        );
        assert_eq!(refused_code(far), code::SIM_CLIENT_LIMIT);
        assert!(sanitize_chain(&base(), vec![block(Some(10 + MAX_SIMULATE_BLOCKS), None)]).is_ok());
    }
}
