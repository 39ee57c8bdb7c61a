//! Execution errors, worded like geth so the RPC layer can pass them through.

use std::time::Duration;

use alloy_primitives::Bytes;
use revm::context_interface::result::{
    EVMError, HaltReason, InvalidHeader, InvalidTransaction, OutOfGasError,
};
use revm::database_interface::bal::EvmDatabaseError;

use super::db::DbError;
use l2node_storage::StorageError;

/// Why an execution failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The call ended with REVERT; `output` is the revert data.
    #[error("execution reverted{}", revert_suffix(output))]
    Revert {
        /// Raw revert data (ABI-encoded `Error(string)`, a custom error, or empty).
        output: Bytes,
    },
    /// The EVM halted exceptionally (geth wording, e.g. "out of gas", "invalid opcode").
    #[error("{0}")]
    Halt(String),
    /// The transaction is invalid in this state (geth wording, e.g. "nonce too low",
    /// "insufficient funds for gas * price + value").
    #[error("{0}")]
    InvalidTx(String),
    /// Even the gas cap was not enough for the call (eth_estimateGas).
    #[error("gas required exceeds allowance ({0})")]
    GasCapExceeded(u64),
    /// The call ran longer than its deadline.
    #[error("execution aborted (timeout = {0:?})")]
    Timeout(Duration),
    /// A call under the inline budget needs more (see `Budget::Inline`): the caller runs it
    /// again on a blocking thread. Never an answer.
    #[error("execution moved to a blocking thread")]
    OverBudget,
    /// Reading the state failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A state override is malformed (e.g. both `state` and `stateDiff` for one account).
    #[error("invalid state override: {0}")]
    StateOverride(#[source] alloy_evm::overrides::StateOverrideError<EvmDatabaseError<DbError>>),
    /// The block environment lacks a field its fork needs.
    #[error("invalid block environment: {0}")]
    Header(#[from] InvalidHeader),
    /// A block does not come with one recovered sender per transaction.
    #[error("{senders} senders for {transactions} transactions")]
    SendersMismatch {
        /// Senders given.
        senders: usize,
        /// Transactions in the block.
        transactions: usize,
    },
    /// eth_createAccessList found a different list on every round.
    #[error("access list did not converge")]
    AccessListDiverges,
    /// The block executor failed outside any one transaction (system calls, requests).
    #[error(transparent)]
    Block(#[from] alloy_evm::block::BlockExecutionError),
    /// The EVM failed for a reason of its own (not the state, the transaction or the header).
    #[error("EVM failure: {0}")]
    Evm(String),
    /// A tracer could not be set up or finish (an unknown tracer, a bad tracer config).
    #[error("{0}")]
    Tracer(String),
}

fn decode_reason(output: &[u8]) -> Option<String> {
    let reason = alloy_sol_types::decode_revert_reason(output)?;
    let reason = reason
        .strip_prefix("revert: ")
        .map(str::to_owned)
        .unwrap_or(reason);
    (!reason.is_empty()).then_some(reason)
}

fn revert_suffix(output: &Bytes) -> String {
    decode_reason(output)
        .map(|r| format!(": {r}"))
        .unwrap_or_default()
}

impl From<DbError> for ExecError {
    fn from(err: DbError) -> Self {
        Self::Storage(err.0)
    }
}

impl From<EvmDatabaseError<DbError>> for ExecError {
    fn from(err: EvmDatabaseError<DbError>) -> Self {
        match err {
            EvmDatabaseError::Database(db) => Self::Storage(db.0),
            EvmDatabaseError::Bal(bal) => Self::Evm(bal.to_string()),
        }
    }
}

/// The error of an EVM over revm's `State` on a [`StateDb`](super::StateDb).
pub(crate) type EvmErr = EVMError<EvmDatabaseError<DbError>>;

impl From<EvmErr> for ExecError {
    fn from(err: EvmErr) -> Self {
        match err {
            EVMError::Transaction(tx) => Self::InvalidTx(invalid_tx_message(&tx)),
            EVMError::Header(header) => Self::Header(header),
            EVMError::Database(db) => db.into(),
            EVMError::Custom(msg) => Self::Evm(msg),
            EVMError::CustomAny(any) => Self::Evm(any.to_string()),
        }
    }
}

/// geth's wording for an invalid transaction (core/error.go).
pub(crate) fn invalid_tx_message(err: &InvalidTransaction) -> String {
    use InvalidTransaction as E;
    match err {
        E::NonceTooLow { tx, state } => format!("nonce too low: next nonce {state}, tx nonce {tx}"),
        E::NonceTooHigh { tx, state } => {
            format!("nonce too high: next nonce {state}, tx nonce {tx}")
        }
        E::NonceOverflowInTransaction => "nonce has max value".into(),
        E::LackOfFundForMaxFee { fee, balance } => {
            format!("insufficient funds for gas * price + value: have {balance} want {fee}")
        }
        E::OverflowPaymentInTransaction => "insufficient funds for gas * price + value".into(),
        E::GasPriceLessThanBasefee => "max fee per gas less than block base fee".into(),
        E::PriorityFeeGreaterThanMaxFee => {
            "max priority fee per gas higher than max fee per gas".into()
        }
        E::CallerGasLimitMoreThanBlock => "exceeds block gas limit".into(),
        E::CallGasCostMoreThanGasLimit {
            initial_gas,
            gas_limit,
        } => {
            format!("intrinsic gas too low: have {gas_limit}, want {initial_gas}")
        }
        E::GasFloorMoreThanGasLimit {
            gas_floor,
            gas_limit,
        } => {
            format!("insufficient gas for floor data gas cost: have {gas_limit}, want {gas_floor}")
        }
        E::TxGasLimitGreaterThanCap { gas_limit, cap } => {
            format!("transaction gas limit too high (cap: {cap}, tx: {gas_limit})")
        }
        E::RejectCallerWithCode => "sender not an eoa".into(),
        E::CreateInitCodeSizeLimit => "max initcode size exceeded".into(),
        E::InvalidChainId | E::MissingChainId => "invalid chain id for signer".into(),
        E::BlobGasPriceGreaterThanMax { .. } => {
            "max fee per blob gas less than block blob gas fee".into()
        }
        E::EmptyBlobs => "blob transaction missing blob hashes".into(),
        E::BlobCreateTransaction => "blob transaction of type create".into(),
        E::TooManyBlobs { max, have } => {
            format!("blob transaction has too many blobs: max {max}, have {have}")
        }
        E::EmptyAuthorizationList => "EIP-7702 transaction with empty auth list".into(),
        E::Eip2930NotSupported
        | E::Eip1559NotSupported
        | E::Eip4844NotSupported
        | E::Eip7702NotSupported => "transaction type not supported".into(),
        other => other.to_string(),
    }
}

/// geth's wording for an exceptional halt (core/vm/errors.go).
pub(crate) fn halt_message(reason: &HaltReason) -> String {
    use HaltReason as H;
    match reason {
        H::OutOfGas(OutOfGasError::InvalidOperand) => "invalid operand".into(),
        H::OutOfGas(_) => "out of gas".into(),
        H::OpcodeNotFound | H::InvalidFEOpcode | H::NotActivated => "invalid opcode".into(),
        H::InvalidJump => "invalid jump destination".into(),
        H::StackUnderflow => "stack underflow".into(),
        H::StackOverflow => "stack limit reached 1024 (1023)".into(),
        H::OutOfOffset => "return data out of bounds".into(),
        H::CreateCollision => "contract address collision".into(),
        H::PrecompileError => "precompile error".into(),
        H::PrecompileErrorWithContext(msg) => msg.clone(),
        H::NonceOverflow => "nonce uint64 overflow".into(),
        H::CreateContractSizeLimit => "max code size exceeded".into(),
        H::CreateContractStartingWithEF => "invalid code: must not begin with 0xef".into(),
        H::CreateInitCodeSizeLimit => "max initcode size exceeded".into(),
        H::OverflowPayment => "gas uint64 overflow".into(),
        H::StateChangeDuringStaticCall | H::CallNotAllowedInsideStatic => "write protection".into(),
        H::OutOfFunds => "insufficient balance for transfer".into(),
        H::CallTooDeep => "max call depth exceeded".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_sol_types::{Revert, SolError};

    #[test]
    fn revert_message_includes_decoded_reason() {
        let output = Bytes::from(Revert::from("not owner").abi_encode());
        let err = ExecError::Revert { output };
        assert_eq!(err.to_string(), "execution reverted: not owner");
        assert_eq!(
            ExecError::Revert {
                output: Bytes::new()
            }
            .to_string(),
            "execution reverted"
        );
    }

    #[test]
    fn invalid_tx_uses_geth_wording() {
        let msg = invalid_tx_message(&InvalidTransaction::LackOfFundForMaxFee {
            fee: Box::new(alloy_primitives::U256::from(10)),
            balance: Box::new(alloy_primitives::U256::from(1)),
        });
        assert!(msg.starts_with("insufficient funds for gas * price + value"));
        let msg = invalid_tx_message(&InvalidTransaction::NonceTooLow { tx: 0, state: 1 });
        assert!(msg.starts_with("nonce too low"));
    }
}
