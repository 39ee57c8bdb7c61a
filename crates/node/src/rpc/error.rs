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
    /// An EIP-1898 block hash is not held (geth's wording for state reads).
    #[error("header for hash not found")]
    HeaderForHashNotFound,
    /// An eth_getLogs `blockHash` is not held (geth's wording).
    #[error("unknown block")]
    UnknownBlock,
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
            RpcError::Pool(ref p) if !p.is_invalid_transaction() => {
                tracing::warn!(target: "l2node::rpc", error = %msg, "pool failure");
                ErrorObjectOwned::owned(code::INTERNAL_ERROR, msg, None::<()>)
            }
            RpcError::HeaderNotFound
            | RpcError::HeaderForHashNotFound
            | RpcError::UnknownBlock
            | RpcError::FilterNotFound
            | RpcError::Pool(_) => ErrorObjectOwned::owned(code::SERVER_ERROR, msg, None::<()>),
            RpcError::Exec(ExecError::Revert { output }) => revert(msg, output),
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

/// geth's revert error: code 3, "execution reverted: <reason>", data = the revert bytes; a
/// REVERT without data is geth's plain -32000 "execution reverted" without data.
fn revert(msg: String, output: Bytes) -> ErrorObjectOwned {
    if output.is_empty() {
        return ErrorObjectOwned::owned(code::SERVER_ERROR, msg, None::<()>);
    }
    // `msg` is ExecError's geth wording: "execution reverted" plus ": <reason>" when it decodes.
    ErrorObjectOwned::owned(code::EXECUTION_REVERTED, msg, Some(output))
}

/// Result alias of method bodies.
pub type RpcResult<T> = Result<T, RpcError>;
