//! `eth_estimateGas`, geth's algorithm (eth/gasestimator).
//!
//! 1. `hi` = the request's gas (if >= 21000) or the block gas limit, lowered to what the sender
//!    can pay when a gas price is given, then to `gas_cap`.
//! 2. Run once at `hi`: a revert or halt there is the answer (a halt for lack of gas becomes
//!    "gas required exceeds allowance (hi)").
//! 3. A plain transfer to an account without code returns the gas it used (21000 plus any
//!    access-list cost).
//! 4. `lo` = used gas - 1; try the optimistic `(used + refund + 2300) * 64 / 63` first, then
//!    binary-search (first probes capped at `2 * lo`) until `(hi - lo) / hi` is below
//!    [`ESTIMATE_GAS_ERROR_RATIO`].

use alloy_evm::{eth::EthEvm, precompiles::PrecompilesMap, Evm};
use alloy_primitives::TxKind;
use revm::{
    context::TxEnv,
    context_interface::result::{ExecutionResult, HaltReason, OutOfGasError},
    database::State,
    Database,
};

use super::{
    call::{call_evm, osaka_tx_cap, prepare, CallEnv, CallRequest, Deadline},
    db::StateDb,
    error::{halt_message, ExecError},
};
use crate::constants::ESTIMATE_GAS_ERROR_RATIO;

/// Gas of a plain value transfer.
const TX_GAS: u64 = 21_000;
/// Gas stipend given to a call that transfers value (EIP-150).
const CALL_STIPEND: u64 = 2_300;

/// Estimates the gas `request` needs on the state after `header`; see the module docs.
pub fn estimate_gas(at: CallEnv<'_>, req: &CallRequest) -> Result<u64, ExecError> {
    let mut prepared = prepare(at, req)?;
    let mut hi = match req.tx.gas {
        Some(gas) if gas >= TX_GAS => gas,
        _ => prepared.env.block_env.gas_limit,
    };
    // Limited by EIP-7825 from Osaka (geth's estimator), by what the sender can pay
    // (computed by `prepare`) and by the cap.
    hi = hi
        .min(osaka_tx_cap(at.spec, &prepared.env))
        .min(prepared.allowance.bound()?)
        .min(req.cap());

    // One EVM for every run of the search: its frames, stacks and memory are made once.
    let mut search = Search {
        evm: call_evm(&mut prepared.db, prepared.env.clone(), Deadline::of(&at)),
        tx: &prepared.tx,
    };
    // Run at the cap: if that fails, nothing below succeeds.
    let first = match search.run(hi)? {
        Outcome::Ok(result) => result,
        Outcome::Failed(ExecutionResult::Revert { output, .. }) => {
            return Err(ExecError::Revert { output })
        }
        Outcome::Failed(ExecutionResult::Halt { reason, .. }) => {
            return Err(match reason {
                HaltReason::OutOfGas(OutOfGasError::InvalidOperand) => {
                    ExecError::Halt(halt_message(&reason))
                }
                HaltReason::OutOfGas(_) => ExecError::GasCapExceeded(hi),
                other => ExecError::Halt(halt_message(&other)),
            })
        }
        Outcome::Failed(_) | Outcome::Intrinsic => return Err(ExecError::GasCapExceeded(hi)),
    };
    let used = first.gas().tx_gas_used();

    // A plain transfer to an account without code needs exactly the intrinsic gas.
    if let TxKind::Call(to) = search.tx.kind {
        let no_code = match search.evm.db_mut().basic(to)? {
            Some(info) => info.is_empty_code_hash(),
            None => true,
        };
        if no_code && search.tx.data.is_empty() && search.tx.authorization_list.is_empty() {
            return Ok(used);
        }
    }

    let mut lo = used.saturating_sub(1);
    let refund = first.gas().final_refunded();
    let optimistic = (used + refund + CALL_STIPEND) * 64 / 63;
    if optimistic < hi {
        if search.run(optimistic)?.succeeded() {
            hi = optimistic;
        } else {
            lo = optimistic;
        }
    }
    while lo + 1 < hi {
        if ((hi - lo) as f64 / hi as f64) < ESTIMATE_GAS_ERROR_RATIO {
            break;
        }
        let mut mid = lo + (hi - lo) / 2;
        if mid > lo.saturating_mul(2) {
            // Most transactions need little more than they use: probe low first.
            mid = lo * 2;
        }
        if search.run(mid)?.succeeded() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

enum Outcome {
    Ok(ExecutionResult<HaltReason>),
    Failed(ExecutionResult<HaltReason>),
    /// The gas limit is below the intrinsic (or floor) gas.
    Intrinsic,
}

impl Outcome {
    const fn succeeded(&self) -> bool {
        matches!(self, Self::Ok(_))
    }
}

struct Search<'d, 'a> {
    evm: EthEvm<&'d mut State<StateDb<'a>>, Deadline, PrecompilesMap>,
    tx: &'d TxEnv,
}

impl Search<'_, '_> {
    fn run(&mut self, gas_limit: u64) -> Result<Outcome, ExecError> {
        let mut tx = self.tx.clone();
        tx.gas_limit = gas_limit;
        let result = self
            .evm
            .transact(tx)
            .map(|r| r.result)
            .map_err(ExecError::from);
        self.evm.inspector().check()?;
        match result {
            Ok(result) if result.is_success() => Ok(Outcome::Ok(result)),
            Ok(result) => Ok(Outcome::Failed(result)),
            Err(ExecError::InvalidTx(msg))
                if msg.starts_with("intrinsic gas too low")
                    || msg.starts_with("insufficient gas for floor") =>
            {
                Ok(Outcome::Intrinsic)
            }
            Err(err) => Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constants::DEFAULT_RPC_GAS_CAP;
    use crate::executor::call::tests::{contract_state, CONTRACT};
    use crate::test_utils::{dev_spec, key, MemState, BOB};
    use alloy_primitives::{Bytes, U256};
    use alloy_rpc_types_eth::TransactionRequest;

    #[test]
    fn estimate_gas_for_transfer_is_21000() {
        let spec = dev_spec();
        let state = MemState::from_genesis(&spec.genesis);
        let header = spec.genesis_header(state.state_root());
        let req = TransactionRequest::default()
            .from(key(0).address())
            .to(BOB)
            .value(U256::from(1));
        let gas = estimate_gas(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(req.clone(), DEFAULT_RPC_GAS_CAP),
        );
        assert_eq!(gas.unwrap(), 21_000);
    }

    #[test]
    fn estimate_gas_for_contract_call_is_enough_and_tight() {
        let (spec, state, header) = contract_state();
        let req = TransactionRequest::default()
            .from(key(0).address())
            .to(CONTRACT)
            .input(Bytes::from(vec![0u8; 32]).into());
        let gas = estimate_gas(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(req.clone(), DEFAULT_RPC_GAS_CAP),
        )
        .unwrap();
        // SSTORE 0 -> 1 needs 22100 + 2300 stipend check; the call must succeed at `gas`.
        let at = |g: u64| {
            super::super::call(
                CallEnv::new(&spec, &state, &header),
                &CallRequest::new(req.clone().gas_limit(g), g),
            )
        };
        assert!(!at(gas).unwrap().reverted);
        assert!(
            at(gas * 985 / 1000 - 1).is_err(),
            "estimate {gas} is within 1.5%"
        );
        assert!(gas > 21_000 + 22_100);
    }

    #[test]
    fn estimate_gas_reports_revert_reason() {
        let (spec, state, header) = contract_state();
        let req = TransactionRequest::default()
            .from(key(0).address())
            .to(CONTRACT)
            .input(Bytes::from(vec![1u8; 32]).into());
        let err = estimate_gas(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(req.clone(), DEFAULT_RPC_GAS_CAP),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "execution reverted: nope");
    }

    #[test]
    fn estimate_gas_limited_by_funds_when_price_given() {
        let spec = dev_spec();
        let state = MemState::from_genesis(&spec.genesis);
        let header = spec.genesis_header(state.state_root());
        let poor = key(9).address();
        let req = TransactionRequest::default()
            .from(poor)
            .to(BOB)
            .value(U256::from(1))
            .gas_price(1_000_000_000);
        let err = estimate_gas(
            CallEnv::new(&spec, &state, &header),
            &CallRequest::new(req.clone(), DEFAULT_RPC_GAS_CAP),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "insufficient funds for transfer");
    }
}
