//! `eth_call` and `eth_createAccessList` on top of a block's state, plus the environment and
//! deadline they share with `eth_estimateGas`.
//!
//! Call semantics follow geth and reth: no base-fee check, no nonce check, EIP-3607 off, the
//! EIP-7825 per-transaction gas cap not enforced (an explicit gas runs as given), the balance
//! check off only when the request names no gas price, gas defaulting to `gas_cap` (geth's
//! `RPCGasCap`), under EIP-7825's cap from Osaka and limited by what the sender can pay when a
//! price is given, `from` defaulting to the zero address.
//!
//! revm has no wall-clock limit, so [`Deadline`] is an inspector that reads the clock every
//! [`EVM_DEADLINE_CHECK_STEPS`] interpreter steps; once past the deadline it halts every frame
//! at its next step and the run reports [`ExecError::Timeout`].
//!
//! A call can also run under [`Budget::Inline`], on the async worker that received the request:
//! most calls take microseconds, and handing them to a blocking thread and back costs more
//! than running them. The inline budget is [`EVM_INLINE_BUDGET`] of wall-clock time and no
//! costly precompile (see [`is_costly_precompile`]); past it the run stops with
//! [`ExecError::OverBudget`] and the caller runs the request again, from the start, under
//! [`Budget::Full`] on a blocking thread.

use std::time::Instant;

use alloy_consensus::Header;
use alloy_eips::eip2930::AccessList;
use alloy_evm::{
    call::caller_gas_allowance,
    eth::EthEvm,
    overrides::{apply_block_overrides, apply_state_overrides},
    precompiles::PrecompilesMap,
    rpc::TryIntoTxEnv,
    Evm, EvmEnv,
};
use alloy_hardforks::EthereumHardforks as _;
use alloy_primitives::{Address, Bytes, Log};
use alloy_rpc_types_eth::{state::StateOverride, BlockOverrides, TransactionRequest};
use revm::{
    context::{Context, TxEnv},
    context_interface::local::FrameStack,
    context_interface::result::{ExecutionResult, HaltReason},
    database::State,
    handler::instructions::EthInstructions,
    interpreter::{CallInputs, CallOutcome, InstructionResult, Interpreter},
    precompile::{PrecompileSpecId, Precompiles},
    primitives::eip7825::TX_GAS_LIMIT_CAP,
    Inspector, MainContext,
};
use revm_inspectors::access_list::AccessListInspector;

use super::{
    db::StateDb,
    error::{halt_message, ExecError},
};
use crate::chainspec::ChainSpec;
use crate::constants::{
    ACCESS_LIST_MAX_ROUNDS, EVM_CALL_TIMEOUT, EVM_DEADLINE_CHECK_STEPS, EVM_INLINE_BUDGET,
};
use l2node_storage::StateReader;

/// Result of [`call`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutput {
    /// Return data, or the revert data when `reverted`.
    pub output: Bytes,
    /// Gas used (after refunds).
    pub gas_used: u64,
    /// `true` when the call ended with REVERT.
    pub reverted: bool,
    /// Logs emitted (empty when reverted).
    pub logs: Vec<Log>,
}

/// Where a call runs: the chain rules and the state after one block.
#[derive(Clone, Copy)]
pub struct CallEnv<'a> {
    /// The chain's rules (forks, chain id).
    pub spec: &'a ChainSpec,
    /// The state after `header`.
    pub state: &'a dyn StateReader,
    /// The block the call runs on top of (its number, time and gas limit are the call's).
    pub header: &'a Header,
    /// How long the call may run.
    pub budget: Budget,
}

impl<'a> CallEnv<'a> {
    /// Calls on `state`, the state after `header`, under `spec`'s rules, with the full budget.
    pub fn new(spec: &'a ChainSpec, state: &'a dyn StateReader, header: &'a Header) -> Self {
        Self {
            spec,
            state,
            header,
            budget: Budget::Full,
        }
    }

    /// The same call under the inline budget.
    pub fn inline(self) -> Self {
        Self {
            budget: Budget::Inline,
            ..self
        }
    }
}

/// How long a call may run, by where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// On a blocking thread: up to [`EVM_CALL_TIMEOUT`], then [`ExecError::Timeout`].
    Full,
    /// On an async worker: up to [`EVM_INLINE_BUDGET`] and no costly precompile, then
    /// [`ExecError::OverBudget`] (run it again under [`Budget::Full`]).
    Inline,
}

impl std::fmt::Debug for CallEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallEnv")
            .field("block", &self.header.number)
            .finish_non_exhaustive()
    }
}

/// What eth_call, eth_estimateGas and eth_createAccessList run.
#[derive(Debug, Clone, Default)]
pub struct CallRequest {
    /// The transaction to simulate.
    pub tx: TransactionRequest,
    /// Account overrides applied before the call.
    pub state_overrides: Option<StateOverride>,
    /// Block-environment overrides applied before the call.
    pub block_overrides: Option<Box<BlockOverrides>>,
    /// Most gas the call may use (`--rpc-gas-cap`; 0 = unlimited).
    pub gas_cap: u64,
}

impl CallRequest {
    /// A request for `tx` with no overrides.
    pub fn new(tx: TransactionRequest, gas_cap: u64) -> Self {
        Self {
            tx,
            gas_cap,
            ..Default::default()
        }
    }

    /// The gas cap as a bound: 0 means unlimited.
    pub(crate) fn cap(&self) -> u64 {
        if self.gas_cap == 0 {
            u64::MAX
        } else {
            self.gas_cap
        }
    }
}

/// Inspector that halts execution once a wall-clock deadline has passed (and, under
/// [`Budget::Inline`], at the first costly precompile).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    at: Instant,
    budget: Budget,
    steps: u64,
    pub(crate) expired: bool,
}

impl Deadline {
    /// The full deadline, [`EVM_CALL_TIMEOUT`] from now.
    pub(crate) fn after_timeout() -> Self {
        Self::new(Budget::Full)
    }

    /// The deadline of `at`'s budget, from now.
    pub(crate) fn of(at: &CallEnv<'_>) -> Self {
        Self::new(at.budget)
    }

    fn new(budget: Budget) -> Self {
        let limit = match budget {
            Budget::Full => EVM_CALL_TIMEOUT,
            Budget::Inline => EVM_INLINE_BUDGET,
        };
        Self {
            at: Instant::now() + limit,
            budget,
            steps: 0,
            expired: false,
        }
    }

    /// The error of an expired deadline.
    pub(crate) fn check(&self) -> Result<(), ExecError> {
        match (self.expired, self.budget) {
            (false, _) => Ok(()),
            (true, Budget::Full) => Err(ExecError::Timeout(EVM_CALL_TIMEOUT)),
            (true, Budget::Inline) => Err(ExecError::OverBudget),
        }
    }
}

/// Precompiles whose cost an inline run cannot bound by time: everything from modexp (0x05) up
/// to P256VERIFY (0x100) and beyond in the precompile range. One call to them is one
/// interpreter step that may take up to seconds (a pairing check or BLAKE2 rounds paid with
/// millions of gas). ecrecover, SHA-256, RIPEMD-160 and identity stay inline: their time is
/// bounded by the memory the call can pay for.
pub(crate) fn is_costly_precompile(address: &Address) -> bool {
    let bytes = address.as_slice();
    bytes[..18].iter().all(|b| *b == 0)
        && (0x05..0x200).contains(&u16::from_be_bytes([bytes[18], bytes[19]]))
}

impl<CTX> Inspector<CTX> for Deadline {
    fn step(&mut self, interp: &mut Interpreter, _context: &mut CTX) {
        self.steps += 1;
        if !self.expired && self.steps.is_multiple_of(EVM_DEADLINE_CHECK_STEPS) {
            self.expired = Instant::now() >= self.at;
        }
        if self.expired {
            interp.halt(InstructionResult::OutOfGas);
        }
    }

    fn call(&mut self, _context: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        if self.budget == Budget::Inline && is_costly_precompile(&inputs.bytecode_address) {
            self.expired = true;
        }
        self.expired.then(|| {
            CallOutcome::new_oog(
                inputs.gas_limit,
                inputs.return_memory_offset.clone(),
                inputs.reservoir,
            )
        })
    }
}

/// A call ready to run: state (with overrides), environment and transaction.
pub(crate) struct Prepared<'a> {
    pub(crate) db: State<StateDb<'a>>,
    pub(crate) env: EvmEnv,
    pub(crate) tx: TxEnv,
    /// What the sender's balance pays for at the request's price.
    pub(crate) allowance: Allowance,
}

/// Gas the sender can pay for at the request's price after the value, computed once by
/// [`prepare`] for both the call's default gas and the estimate's upper bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Allowance {
    /// Gas price zero: no limit from the balance.
    Unlimited,
    /// This much gas.
    Gas(u64),
    /// The value alone exceeds the balance.
    ValueExceedsBalance,
}

impl Allowance {
    /// The limit as a gas bound, or geth's error when the value alone is unaffordable.
    pub(crate) fn bound(self) -> Result<u64, ExecError> {
        match self {
            Self::Unlimited => Ok(u64::MAX),
            Self::Gas(gas) => Ok(gas),
            Self::ValueExceedsBalance => Err(ExecError::InvalidTx(
                "insufficient funds for transfer".into(),
            )),
        }
    }
}

impl std::fmt::Debug for Prepared<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("tx", &self.tx)
            .finish_non_exhaustive()
    }
}

/// Builds the call environment on top of `at.header`'s state.
pub(crate) fn prepare<'a>(at: CallEnv<'a>, req: &CallRequest) -> Result<Prepared<'a>, ExecError> {
    let mut db = State::builder()
        .with_database(StateDb::new(at.state))
        .build();
    let mut env = super::block::evm_env(at.spec, at.header);
    if let Some(block_overrides) = &req.block_overrides {
        apply_block_overrides((**block_overrides).clone(), &mut db, &mut env.block_env);
    }
    if let Some(overrides) = &req.state_overrides {
        apply_state_overrides(overrides.clone(), &mut db).map_err(|e| match e {
            alloy_evm::overrides::StateOverrideError::Database(db) => ExecError::from(db),
            other => ExecError::StateOverride(other),
        })?;
    }
    let cfg = &mut env.cfg_env;
    cfg.disable_base_fee = true;
    cfg.disable_nonce_check = true;
    cfg.disable_eip3607 = true;
    cfg.disable_block_gas_limit = true;
    cfg.tx_gas_limit_cap = Some(u64::MAX);
    let request = &req.tx;
    let price_given = request.gas_price.is_some() || request.max_fee_per_gas.is_some();
    cfg.disable_balance_check = !price_given;

    let mut tx: TxEnv = request
        .clone()
        .try_into_tx_env(&env)
        .map_err(|e| ExecError::InvalidTx(e.to_string()))?;
    let allowance = if tx.gas_price == 0 {
        Allowance::Unlimited
    } else {
        match caller_gas_allowance(&mut db, &tx) {
            Ok(gas) => Allowance::Gas(gas),
            Err(alloy_evm::call::CallError::InsufficientFunds(_)) => Allowance::ValueExceedsBalance,
            Err(alloy_evm::call::CallError::Database(db)) => return Err(db.into()),
        }
    };
    tx.gas_limit = match request.gas {
        // An explicit limit runs as given: the EVM's balance check words any shortfall.
        Some(gas) => gas.min(req.cap()),
        None => req
            .cap()
            .min(osaka_tx_cap(at.spec, &env))
            .min(allowance.bound()?),
    };
    Ok(Prepared {
        db,
        env,
        tx,
        allowance,
    })
}

/// The most gas a call without `gas` may have from the protocol: EIP-7825's per-transaction
/// cap once Osaka is active at the (overridden) block, none before. A call given more still
/// runs (geth skips the transaction checks for calls), but a default stays under the cap, so
/// what a call measures is what a transaction could do.
pub(crate) fn osaka_tx_cap(spec: &ChainSpec, env: &EvmEnv) -> u64 {
    if spec.is_osaka_active_at_timestamp(env.block_env.timestamp.saturating_to()) {
        TX_GAS_LIMIT_CAP
    } else {
        u64::MAX
    }
}

/// An EVM for the calls of one request, whose frames are made as the call goes deeper.
///
/// revm makes 8 frames up front (each with its 32 KiB stack and 4 KiB of memory), sized for
/// a block's transactions; most calls use one, so building the rest made about 260 KiB of
/// allocations per eth_call (measured with `cargo bench -p l2node-rpc --bench allocs`).
pub(crate) fn call_evm<DB, I>(db: DB, env: EvmEnv, inspector: I) -> EthEvm<DB, I, PrecompilesMap>
where
    DB: alloy_evm::Database,
    I: Inspector<alloy_evm::eth::EthEvmContext<DB>>,
{
    // As alloy-evm's `EthEvmBuilder::build` with an inspector, but with an empty frame stack.
    let spec = env.cfg_env.spec;
    let precompiles =
        PrecompilesMap::from_static(Precompiles::new(PrecompileSpecId::from_spec_id(spec)));
    let inner = revm::context::Evm {
        ctx: Context::mainnet()
            .with_block(env.block_env)
            .with_cfg(env.cfg_env)
            .with_db(db),
        inspector,
        instruction: EthInstructions::new_mainnet_with_spec(spec),
        precompiles,
        frame_stack: FrameStack::new(),
    };
    EthEvm::new(inner, true)
}

/// Runs `tx` on `db` under `inspector`, without committing.
pub(crate) fn run_tx<'d, 'a: 'd, I>(
    db: &'d mut State<StateDb<'a>>,
    env: &EvmEnv,
    tx: TxEnv,
    inspector: I,
) -> Result<ExecutionResult<HaltReason>, ExecError>
where
    I: Inspector<alloy_evm::eth::EthEvmContext<&'d mut State<StateDb<'a>>>>,
{
    let result = call_evm(db, env.clone(), inspector).transact(tx)?;
    Ok(result.result)
}

/// Executes `request` like `eth_call` on the state after `header`.
///
/// A REVERT is a normal outcome (`reverted: true` with the revert data); an exceptional halt
/// is [`ExecError::Halt`], an invalid request [`ExecError::InvalidTx`].
pub fn call(at: CallEnv<'_>, req: &CallRequest) -> Result<CallOutput, ExecError> {
    let mut prepared = prepare(at, req)?;
    let mut deadline = Deadline::of(&at);
    let result = run_tx(&mut prepared.db, &prepared.env, prepared.tx, &mut deadline)?;
    deadline.check()?;
    match result {
        ExecutionResult::Success {
            gas, logs, output, ..
        } => Ok(CallOutput {
            output: output.into_data(),
            gas_used: gas.tx_gas_used(),
            reverted: false,
            logs,
        }),
        ExecutionResult::Revert { gas, output, .. } => Ok(CallOutput {
            output,
            gas_used: gas.tx_gas_used(),
            reverted: true,
            logs: Vec::new(),
        }),
        ExecutionResult::Halt { reason, .. } => Err(ExecError::Halt(halt_message(&reason))),
    }
}

/// What `eth_createAccessList` found: the list, the gas used with it applied, and the VM error
/// of that run (`execution reverted`, a halt), which geth reports beside the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessListOutcome {
    /// Addresses and slots touched (without the sender, the recipient and precompiles).
    pub access_list: AccessList,
    /// Gas used with the list applied.
    pub gas_used: u64,
    /// The VM error of the final run, if it failed.
    pub error: Option<String>,
}

/// `eth_createAccessList`: the storage slots and addresses `request` touches (excluding the
/// sender, the recipient and precompiles) and the gas used with that list applied.
///
/// Like geth it re-runs with the list found until the list stops changing (at most
/// [`ACCESS_LIST_MAX_ROUNDS`]), whether the call succeeds or fails; a failing final run gives
/// its VM error beside the list.
pub fn create_access_list(
    at: CallEnv<'_>,
    req: &CallRequest,
) -> Result<AccessListOutcome, ExecError> {
    let mut prepared = prepare(at, req)?;
    let mut deadline = Deadline::of(&at);
    let mut list = prepared.tx.access_list.clone();
    for _ in 0..ACCESS_LIST_MAX_ROUNDS {
        let mut tx = prepared.tx.clone();
        tx.access_list = list.clone();
        if tx.tx_type == 0 && !list.is_empty() {
            // A legacy transaction carries no access list: price it as EIP-2930, like geth.
            tx.tx_type = 1;
        }
        let mut inspector = AccessListInspector::new(list.clone());
        let result = run_tx(
            &mut prepared.db,
            &prepared.env,
            tx,
            (&mut inspector, &mut deadline),
        )?;
        deadline.check()?;
        let found = inspector.into_access_list();
        let (gas_used, error) = match result {
            ExecutionResult::Success { gas, .. } => (gas.tx_gas_used(), None),
            ExecutionResult::Revert { gas, .. } => {
                (gas.tx_gas_used(), Some("execution reverted".to_owned()))
            }
            ExecutionResult::Halt { reason, gas, .. } => {
                (gas.tx_gas_used(), Some(halt_message(&reason)))
            }
        };
        if found == list {
            return Ok(AccessListOutcome {
                access_list: found,
                gas_used,
                error,
            });
        }
        list = found;
    }
    Err(ExecError::AccessListDiverges)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::constants::DEFAULT_RPC_GAS_CAP;
    use crate::test_utils::{dev_spec, key, MemState};
    use alloy_primitives::{address, hex, Address, B256, U256};
    use alloy_sol_types::{Revert, SolError};

    /// Runtime code: `require(calldata[0:32] == 0, "nope")`; on success stores 1 in slot 0 and
    /// returns the word 0x2a.
    /// ```text
    /// PUSH0 CALLDATALOAD ISZERO PUSH1 ok JUMPI
    /// <revert with Error("nope")>
    /// ok: JUMPDEST PUSH1 1 PUSH0 SSTORE PUSH1 0x2a PUSH0 MSTORE PUSH1 32 PUSH0 RETURN
    /// ```
    pub(crate) fn guarded_store_code() -> Bytes {
        let revert = Revert::from("nope").abi_encode();
        let len = revert.len() as u8;
        let mut code = vec![
            0x5f, 0x35, 0x15, 0x60, 16, 0x57, // if calldata[0] == 0 goto 16
            0x60, len, 0x60, 29, 0x5f, 0x39, // CODECOPY(0, 29, len)
            0x60, len, 0x5f, 0xfd, // REVERT(0, len)
            0x5b, 0x60, 0x01, 0x5f, 0x55, // 16: SSTORE(0, 1)
            0x60, 0x2a, 0x5f, 0x52, 0x60, 0x20, 0x5f, 0xf3, // RETURN 32 bytes of 0x2a
        ];
        assert_eq!(code.len(), 29);
        code.extend(revert);
        code.into()
    }

    pub(crate) const CONTRACT: Address = address!("0x00000000000000000000000000000000c0de0001");

    pub(crate) fn contract_state() -> (ChainSpec, MemState, Header) {
        let spec = dev_spec();
        let mut state = MemState::from_genesis(&spec.genesis);
        state.set_code(CONTRACT, guarded_store_code());
        let header = spec.genesis_header(state.state_root());
        (spec, state, header)
    }

    fn request(data: &[u8]) -> TransactionRequest {
        TransactionRequest::default()
            .from(key(0).address())
            .to(CONTRACT)
            .input(Bytes::copy_from_slice(data).into())
    }

    #[test]
    fn call_returns_output_and_logs_gas() {
        let (spec, state, header) = contract_state();
        let out = call(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(request(&[0; 32]), DEFAULT_RPC_GAS_CAP),
        )
        .unwrap();
        assert!(!out.reverted);
        assert_eq!(
            out.output,
            Bytes::from(U256::from(0x2a).to_be_bytes::<32>().to_vec())
        );
        assert!(out.gas_used > 21_000 + 20_000);
    }

    #[test]
    fn call_with_revert_data_reports_reverted() {
        let (spec, state, header) = contract_state();
        let out = call(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(request(&[1; 32]), DEFAULT_RPC_GAS_CAP),
        )
        .unwrap();
        assert!(out.reverted);
        let err = ExecError::Revert { output: out.output };
        assert_eq!(err.to_string(), "execution reverted: nope");
    }

    #[test]
    fn call_without_code_at_zero_gas_price_needs_no_funds() {
        let (spec, state, header) = contract_state();
        let req = TransactionRequest::default()
            .from(address!("0x00000000000000000000000000000000deadbeef"))
            .to(CONTRACT)
            .input(Bytes::from(vec![0u8; 32]).into());
        let out = call(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(req.clone(), DEFAULT_RPC_GAS_CAP),
        )
        .unwrap();
        assert!(!out.reverted);
    }

    #[test]
    fn gas_cap_zero_means_unlimited_for_calls_too() {
        let (spec, state, header) = contract_state();
        let out = call(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(request(&[0; 32]), 0),
        )
        .unwrap();
        assert!(!out.reverted);
        assert!(out.gas_used > 21_000);
    }

    #[test]
    fn call_halts_with_out_of_gas() {
        let (spec, state, header) = contract_state();
        let req = request(&[0; 32]).gas_limit(22_000);
        let err = call(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(req.clone(), DEFAULT_RPC_GAS_CAP),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "out of gas");
    }

    #[test]
    fn call_sees_state_overrides() {
        let (spec, state, header) = contract_state();
        let target = address!("0x00000000000000000000000000000000c0de0002");
        let mut overrides = StateOverride::default();
        overrides.insert(
            target,
            alloy_rpc_types_eth::state::AccountOverride {
                code: Some(hex!("602a5f5260205ff3").into()),
                ..Default::default()
            },
        );
        let req = TransactionRequest::default().to(target);
        let out = call(
            CallEnv::new(&spec, &state, &header),
            &CallRequest {
                tx: req.clone(),
                state_overrides: Some(overrides),
                gas_cap: DEFAULT_RPC_GAS_CAP,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(out.output[31], 0x2a);
    }

    #[test]
    fn create_access_list_lists_touched_slot() {
        let (spec, state, header) = contract_state();
        let AccessListOutcome {
            access_list: list,
            gas_used: gas,
            error,
        } = create_access_list(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(request(&[0; 32]), DEFAULT_RPC_GAS_CAP),
        )
        .unwrap();
        assert_eq!(error, None);
        // Like geth: the recipient is not listed for itself, but its touched slots are.
        assert_eq!(list.0.len(), 1, "{list:?}");
        assert_eq!(list.0[0].address, CONTRACT);
        assert_eq!(list.0[0].storage_keys, vec![B256::ZERO]);
        // 21000 + calldata + access list (2400 + 1900) + warm SSTORE 0 -> 1 (20000) + ...
        assert!(gas > 21_000 + 4_300 + 20_000, "{gas}");
    }

    #[test]
    fn create_access_list_of_a_reverting_call_keeps_what_it_touched() {
        let (spec, mut state, _) = contract_state();
        let reverter = address!("0x00000000000000000000000000000000c0de0004");
        // PUSH1 0 SLOAD PUSH0 PUSH0 REVERT: reads slot 0, then reverts.
        state.set_code(reverter, hex!("6000545f5ffd").into());
        let header = spec.genesis_header(state.state_root());
        let out = create_access_list(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(
                TransactionRequest::default().to(reverter),
                DEFAULT_RPC_GAS_CAP,
            ),
        )
        .unwrap();
        assert_eq!(out.error.as_deref(), Some("execution reverted"));
        assert_eq!(out.access_list.0.len(), 1, "{:?}", out.access_list);
        assert_eq!(out.access_list.0[0].storage_keys, vec![B256::ZERO]);
        assert!(out.gas_used > 21_000);
    }

    #[test]
    fn deadline_halts_an_endless_loop() {
        let (spec, mut state, _) = contract_state();
        let looper = address!("0x00000000000000000000000000000000c0de0003");
        state.set_code(looper, hex!("5b5f56").into()); // JUMPDEST PUSH0 JUMP
        let header = spec.genesis_header(state.state_root());
        let mut prepared = prepare(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(TransactionRequest::default().to(looper), u64::MAX / 2),
        )
        .unwrap();
        let mut deadline = Deadline {
            at: Instant::now(),
            budget: Budget::Full,
            steps: 0,
            expired: false,
        };
        let tx = prepared.tx.clone();
        let result = run_tx(&mut prepared.db, &prepared.env, tx, &mut deadline).unwrap();
        assert!(deadline.expired);
        assert!(result.is_halt());
    }

    #[test]
    fn an_endless_loop_inline_moves_to_the_full_budget() {
        let (spec, mut state, _) = contract_state();
        let looper = address!("0x00000000000000000000000000000000c0de0003");
        state.set_code(looper, hex!("5b5f56").into()); // JUMPDEST PUSH0 JUMP
        let header = spec.genesis_header(state.state_root());
        let req = CallRequest::new(TransactionRequest::default().to(looper), 0);
        let err = call(CallEnv::new(&spec, &state, &header).inline(), &req).unwrap_err();
        assert!(matches!(err, ExecError::OverBudget), "{err:?}");
    }

    #[test]
    fn costly_precompiles_leave_the_inline_budget_cheap_ones_stay() {
        let (spec, state, header) = contract_state();
        let at = CallEnv::new(&spec, &state, &header);
        let to = |n: u8| {
            let mut a = [0u8; 20];
            a[19] = n;
            CallRequest::new(TransactionRequest::default().to(Address::from(a)), 0)
        };
        // The pairing check of no pairs: cheap here, but what it may cost is not bounded.
        let err = call(at.inline(), &to(0x08)).unwrap_err();
        assert!(matches!(err, ExecError::OverBudget), "{err:?}");
        assert_eq!(call(at, &to(0x08)).unwrap().output[31], 1);
        // Identity runs inline and answers what the full budget answers.
        assert_eq!(
            call(at.inline(), &to(0x04)).unwrap(),
            call(at, &to(0x04)).unwrap()
        );
        assert!(is_costly_precompile(&Address::with_last_byte(0x05)));
        assert!(!is_costly_precompile(&Address::with_last_byte(0x01)));
        let mut p256 = [0u8; 20];
        p256[18] = 0x01;
        assert!(is_costly_precompile(&Address::from(p256)));
    }
}
