//! The one table that maps node errors to JSON-RPC error objects.

use alloy_primitives::Bytes;
use jsonrpsee::types::ErrorObjectOwned;
use l2node_api::error as code;

use crate::{chain::ChainError, executor::ExecError, pool::PoolError, storage::StorageError};

/// Errors of the RPC layer: everything a method can fail with.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// A parameter is malformed or out of range; the message names it.
    #[error("{0}")]
    InvalidParams(String),
    /// A limit was hit; the message names it and how to stay under it.
    #[error("{0}")]
    LimitExceeded(String),
    /// The requested block is not held.
    #[error("header not found")]
    HeaderNotFound,
    /// A filter id is unknown or expired.
    #[error("filter not found")]
    FilterNotFound,
    /// Execution failed.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The pool rejected a transaction.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// Storage failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The chain failed.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// A background task died.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<RpcError> for ErrorObjectOwned {
    fn from(e: RpcError) -> Self {
        let msg = e.to_string();
        match e {
            RpcError::InvalidParams(_) => {
                ErrorObjectOwned::owned(code::INVALID_PARAMS, msg, None::<()>)
            }
            RpcError::LimitExceeded(_) => {
                ErrorObjectOwned::owned(code::LIMIT_EXCEEDED, msg, None::<()>)
            }
            RpcError::HeaderNotFound | RpcError::FilterNotFound | RpcError::Pool(_) => {
                ErrorObjectOwned::owned(code::SERVER_ERROR, msg, None::<()>)
            }
            RpcError::Exec(ExecError::Revert { output }) => revert(output),
            RpcError::Exec(ExecError::Storage(_))
            | RpcError::Storage(_)
            | RpcError::Chain(_)
            | RpcError::Internal(_) => {
                tracing::warn!(target: "l2node::rpc", error = %msg, "internal error");
                ErrorObjectOwned::owned(code::INTERNAL_ERROR, msg, None::<()>)
            }
            RpcError::Exec(_) => ErrorObjectOwned::owned(code::SERVER_ERROR, msg, None::<()>),
        }
    }
}

/// geth's revert error: code 3, "execution reverted: <reason>", data = the revert bytes.
fn revert(output: Bytes) -> ErrorObjectOwned {
    let msg = match alloy_sol_types::decode_revert_reason(&output) {
        Some(reason) if !reason.is_empty() => format!("execution reverted: {reason}"),
        _ => "execution reverted".to_string(),
    };
    ErrorObjectOwned::owned(code::EXECUTION_REVERTED, msg, Some(output))
}

/// Result alias of method bodies.
pub type RpcResult<T> = Result<T, RpcError>;
