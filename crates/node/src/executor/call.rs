//! `eth_call` and `eth_createAccessList` on top of a block's state, plus the environment and
//! deadline they share with `eth_estimateGas`.
//!
//! Call semantics follow reth: no base-fee check, no nonce check, EIP-3607 off, the EIP-7825
//! per-transaction gas cap lifted, the balance check off only when the request names no gas
//! price, gas defaulting to `min(block gas limit, gas_cap)` (further limited by what the sender
//! can pay when a price is given), `from` defaulting to the zero address.
//!
//! revm has no wall-clock limit, so [`Deadline`] is an inspector that reads the clock every
//! [`EVM_DEADLINE_CHECK_STEPS`] interpreter steps; once past the deadline it halts every frame
//! at its next step and the run reports [`ExecError::Timeout`].

use std::time::Instant;

use alloy_consensus::Header;
use alloy_eips::eip2930::AccessList;
use alloy_evm::{
    call::caller_gas_allowance,
    overrides::{apply_block_overrides, apply_state_overrides},
    rpc::TryIntoTxEnv,
    EthEvmFactory, Evm, EvmEnv, EvmFactory,
};
use alloy_primitives::{Bytes, Log};
use alloy_rpc_types_eth::{state::StateOverride, BlockOverrides, TransactionRequest};
use revm::{
    context::TxEnv,
    context_interface::result::{ExecutionResult, HaltReason},
    database::State,
    interpreter::{InstructionResult, Interpreter},
    Inspector,
};
use revm_inspectors::access_list::AccessListInspector;

use super::{
    db::StateDb,
    error::{halt_message, ExecError},
};
use crate::{
    chainspec::ChainSpec,
    constants::{ACCESS_LIST_MAX_ROUNDS, EVM_CALL_TIMEOUT, EVM_DEADLINE_CHECK_STEPS},
    state::StateReader,
};

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

/// Inspector that halts execution once a wall-clock deadline has passed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    at: Instant,
    steps: u64,
    pub(crate) expired: bool,
}

impl Deadline {
    pub(crate) fn after_timeout() -> Self {
        Self {
            at: Instant::now() + EVM_CALL_TIMEOUT,
            steps: 0,
            expired: false,
        }
    }
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
}

/// A call ready to run: state (with overrides), environment and transaction.
pub(crate) struct Prepared<'a> {
    pub(crate) db: State<StateDb<'a>>,
    pub(crate) env: EvmEnv,
    pub(crate) tx: TxEnv,
}

impl std::fmt::Debug for Prepared<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("tx", &self.tx)
            .finish_non_exhaustive()
    }
}

/// Builds the call environment on top of `header`'s state.
pub(crate) fn prepare<'a>(
    spec: &ChainSpec,
    state: &'a dyn StateReader,
    header: &Header,
    request: &TransactionRequest,
    overrides: Option<&StateOverride>,
    block_overrides: Option<&BlockOverrides>,
    gas_cap: u64,
) -> Result<Prepared<'a>, ExecError> {
    let mut db = State::builder().with_database(StateDb::new(state)).build();
    let mut env = super::block::evm_env(spec, header);
    if let Some(block_overrides) = block_overrides {
        apply_block_overrides(block_overrides.clone(), &mut db, &mut env.block_env);
    }
    if let Some(overrides) = overrides {
        apply_state_overrides(overrides.clone(), &mut db).map_err(|e| match e {
            alloy_evm::overrides::StateOverrideError::Database(db) => ExecError::from(db),
            other => ExecError::Other(other.to_string()),
        })?;
    }
    let cfg = &mut env.cfg_env;
    cfg.disable_base_fee = true;
    cfg.disable_nonce_check = true;
    cfg.disable_eip3607 = true;
    cfg.disable_block_gas_limit = true;
    cfg.tx_gas_limit_cap = Some(u64::MAX);
    let price_given = request.gas_price.is_some() || request.max_fee_per_gas.is_some();
    cfg.disable_balance_check = !price_given;

    let mut tx: TxEnv = request
        .clone()
        .try_into_tx_env(&env)
        .map_err(|e| ExecError::InvalidTx(e.to_string()))?;
    tx.gas_limit = match request.gas {
        Some(gas) => gas.min(gas_cap),
        None => {
            let mut gas = env.block_env.gas_limit.min(gas_cap);
            if tx.gas_price > 0 {
                let allowance = caller_gas_allowance(&mut db, &tx).map_err(|e| match e {
                    alloy_evm::call::CallError::Database(db) => ExecError::from(db),
                    alloy_evm::call::CallError::InsufficientFunds(_) => {
                        ExecError::InvalidTx("insufficient funds for transfer".into())
                    }
                })?;
                gas = gas.min(allowance);
            }
            gas
        }
    };
    Ok(Prepared { db, env, tx })
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
    let mut evm = EthEvmFactory::default().create_evm_with_inspector(db, env.clone(), inspector);
    let result = evm.transact(tx)?;
    Ok(result.result)
}

/// Executes `request` like `eth_call` on the state after `header`.
///
/// A REVERT is a normal outcome (`reverted: true` with the revert data); an exceptional halt
/// is [`ExecError::Halt`], an invalid request [`ExecError::InvalidTx`].
pub fn call(
    spec: &ChainSpec,
    state: &dyn StateReader,
    header: &Header,
    request: &TransactionRequest,
    overrides: Option<&StateOverride>,
    block_overrides: Option<&BlockOverrides>,
    gas_cap: u64,
) -> Result<CallOutput, ExecError> {
    let mut prepared = prepare(
        spec,
        state,
        header,
        request,
        overrides,
        block_overrides,
        gas_cap,
    )?;
    let mut deadline = Deadline::after_timeout();
    let result = run_tx(&mut prepared.db, &prepared.env, prepared.tx, &mut deadline)?;
    if deadline.expired {
        return Err(ExecError::Timeout(EVM_CALL_TIMEOUT));
    }
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

/// `eth_createAccessList`: the storage slots and addresses `request` touches (excluding the
/// sender, the recipient and precompiles) and the gas used with that list applied.
///
/// Like geth it re-runs with the list found until the list stops changing (at most
/// [`ACCESS_LIST_MAX_ROUNDS`]). A revert or halt of the final run is returned as the error.
pub fn create_access_list(
    spec: &ChainSpec,
    state: &dyn StateReader,
    header: &Header,
    request: &TransactionRequest,
    overrides: Option<&StateOverride>,
    block_overrides: Option<&BlockOverrides>,
    gas_cap: u64,
) -> Result<(AccessList, u64), ExecError> {
    let mut prepared = prepare(
        spec,
        state,
        header,
        request,
        overrides,
        block_overrides,
        gas_cap,
    )?;
    let mut deadline = Deadline::after_timeout();
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
        if deadline.expired {
            return Err(ExecError::Timeout(EVM_CALL_TIMEOUT));
        }
        let found = inspector.into_access_list();
        let gas_used = match result {
            ExecutionResult::Success { gas, .. } => gas.tx_gas_used(),
            ExecutionResult::Revert { output, .. } => return Err(ExecError::Revert { output }),
            ExecutionResult::Halt { reason, .. } => {
                return Err(ExecError::Halt(halt_message(&reason)))
            }
        };
        if found == list {
            return Ok((found, gas_used));
        }
        list = found;
    }
    Err(ExecError::Other("access list did not converge".into()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{
        constants::DEFAULT_RPC_GAS_CAP,
        executor::test_utils::{dev_spec, key, MemState},
    };
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
            &spec,
            &state,
            &header,
            &request(&[0; 32]),
            None,
            None,
            DEFAULT_RPC_GAS_CAP,
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
            &spec,
            &state,
            &header,
            &request(&[1; 32]),
            None,
            None,
            DEFAULT_RPC_GAS_CAP,
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
            &spec,
            &state,
            &header,
            &req,
            None,
            None,
            DEFAULT_RPC_GAS_CAP,
        )
        .unwrap();
        assert!(!out.reverted);
    }

    #[test]
    fn call_halts_with_out_of_gas() {
        let (spec, state, header) = contract_state();
        let req = request(&[0; 32]).gas_limit(22_000);
        let err = call(
            &spec,
            &state,
            &header,
            &req,
            None,
            None,
            DEFAULT_RPC_GAS_CAP,
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
            &spec,
            &state,
            &header,
            &req,
            Some(&overrides),
            None,
            DEFAULT_RPC_GAS_CAP,
        )
        .unwrap();
        assert_eq!(out.output[31], 0x2a);
    }

    #[test]
    fn create_access_list_lists_touched_slot() {
        let (spec, state, header) = contract_state();
        let (list, gas) = create_access_list(
            &spec,
            &state,
            &header,
            &request(&[0; 32]),
            None,
            None,
            DEFAULT_RPC_GAS_CAP,
        )
        .unwrap();
        // Like geth: the recipient is not listed for itself, but its touched slots are.
        assert_eq!(list.0.len(), 1, "{list:?}");
        assert_eq!(list.0[0].address, CONTRACT);
        assert_eq!(list.0[0].storage_keys, vec![B256::ZERO]);
        // 21000 + calldata + access list (2400 + 1900) + warm SSTORE 0 -> 1 (20000) + ...
        assert!(gas > 21_000 + 4_300 + 20_000, "{gas}");
    }

    #[test]
    fn deadline_halts_an_endless_loop() {
        let (spec, mut state, _) = contract_state();
        let looper = address!("0x00000000000000000000000000000000c0de0003");
        state.set_code(looper, hex!("5b5f56").into()); // JUMPDEST PUSH0 JUMP
        let header = spec.genesis_header(state.state_root());
        let mut prepared = prepare(
            &spec,
            &state,
            &header,
            &TransactionRequest::default().to(looper),
            None,
            None,
            u64::MAX / 2,
        )
        .unwrap();
        let mut deadline = Deadline {
            at: Instant::now(),
            steps: 0,
            expired: false,
        };
        let tx = prepared.tx.clone();
        let result = run_tx(&mut prepared.db, &prepared.env, tx, &mut deadline).unwrap();
        assert!(deadline.expired);
        assert!(result.is_halt());
    }
}
