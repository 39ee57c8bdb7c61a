//! The one table that maps node errors to JSON-RPC error objects.

use alloy_primitives::Bytes;
use jsonrpsee::types::ErrorObjectOwned;
use l2node_api::error as code;

use l2node_node::chain::ChainError;
use l2node_node::executor::ExecError;
use l2node_node::fees::FeeError;
use l2node_node::logs::LogsError;
use l2node_node::pool::PoolError;
use l2node_storage::StorageError;

/// Errors of the RPC layer: everything a method can fail with.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// The body is not JSON.
    #[error("Parse error")]
    Parse,
    /// The JSON is not a valid request (or not allowed where it is, e.g. a subscribe in a batch).
    #[error("{0}")]
    InvalidRequest(String),
    /// The method does not exist here (e.g. a subscription over HTTP); the message says where.
    #[error("{0}")]
    MethodNotFound(String),
    /// A batch holds more requests than allowed.
    #[error("Number of requests exceeds max batch size")]
    BatchTooLarge {
        /// The limit (`--rpc-http-max-batch-size`).
        limit: usize,
    },
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
    /// A block, header or other object asked for by id is not held (geth's "header #N not
    /// found" of the debug methods).
    #[error("{0}")]
    NotFound(String),
    /// `eth_coinbase` on a node that does not seal (geth's wording).
    #[error("etherbase must be explicitly specified")]
    NoEtherbase,
    /// `eth_config` on a chain whose head is before Cancun (EIP-7910 describes Cancun and later).
    #[error("eth_config describes Cancun and later forks; this chain's head is before Cancun")]
    ConfigBeforeCancun,
    /// A request this node will not carry out as asked (an account it does not hold unlocked,
    /// a dev control on a node that does not seal); the message says why and what to do.
    #[error("{0}")]
    Refused(String),
    /// EIP-7966: `eth_sendRawTransactionSync` waited `timeout` and the transaction is not mined
    /// yet (geth's wording).
    #[error("The transaction was added to the transaction pool but wasn't processed in {}s; ask eth_getTransactionReceipt for it later", .timeout.as_secs_f64())]
    TxSyncTimeout {
        /// The transaction, in the error's data.
        hash: alloy_primitives::B256,
        /// How long the node waited.
        timeout: std::time::Duration,
    },
    /// A filter id is unknown or expired.
    #[error("filter not found")]
    FilterNotFound,
    /// Execution failed.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// eth_simulateV1 refused a block or call; the code is execution-apis' for the case.
    #[error("{message}")]
    SimulateRefused {
        /// The `-380xx` code.
        code: i32,
        /// geth's wording.
        message: String,
    },
    /// The pool rejected a transaction.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// Storage failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The chain failed.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// A log query was refused or failed.
    #[error(transparent)]
    Logs(#[from] LogsError),
    /// A fee query was refused or failed.
    #[error(transparent)]
    Fee(#[from] FeeError),
    /// A Karma method on a chain without Karma.
    #[error("this chain has no Karma policy (its genesis has no config.karma section), so there is no gasless path and no Karma state")]
    NoKarma,
    /// The EVM job pool is shut down (the node is stopping).
    #[error("the node is shutting down; retry against a running node")]
    Closed(#[from] tokio::sync::AcquireError),
    /// A blocking job panicked or was cancelled (the cause goes to the node's log, not to the
    /// caller).
    #[error("internal error: the request's job failed; the node's log has the cause")]
    Join(#[from] tokio::task::JoinError),
    /// A heavy request's job panicked (the cause goes to the node's log).
    #[error("internal error: the request's job failed; the node's log has the cause")]
    JobFailed,
    /// An answer did not serialize.
    #[error("internal error: {0}")]
    Encode(#[from] serde_json::Error),
}

impl From<l2node_node::executor::SimulateFailure> for RpcError {
    fn from(err: l2node_node::executor::SimulateFailure) -> Self {
        match err {
            l2node_node::executor::SimulateFailure::Refused { code, message } => {
                Self::SimulateRefused { code, message }
            }
            l2node_node::executor::SimulateFailure::Exec(e) => Self::Exec(e),
        }
    }
}

impl From<RpcError> for ErrorObjectOwned {
    fn from(e: RpcError) -> Self {
        let mut msg = e.to_string();
        // The node's own failures name no database, journal or serde internals to the caller:
        // the detail goes to the log (`internal`).
        let shutting_down = matches!(e, RpcError::Closed(_));
        let code = match e {
            RpcError::Parse => code::PARSE_ERROR,
            RpcError::InvalidRequest(_) => code::INVALID_REQUEST,
            RpcError::MethodNotFound(_) => code::METHOD_NOT_FOUND,
            RpcError::SimulateRefused { code, .. } => code,
            RpcError::BatchTooLarge { limit } => {
                let data = format!("the limit is {limit} requests (--rpc-http-max-batch-size)");
                return ErrorObjectOwned::owned(code::LIMIT_EXCEEDED, msg, Some(data));
            }
            RpcError::InvalidParams(_)
            | RpcError::Fee(
                FeeError::TooManyPercentiles(_)
                | FeeError::BadPercentiles
                | FeeError::BeyondHead { .. },
            )
            | RpcError::Logs(LogsError::InvalidRange | LogsError::BeyondHead) => {
                code::INVALID_PARAMS
            }
            RpcError::LimitExceeded(_)
            | RpcError::Logs(
                LogsError::RangeTooLarge { .. }
                | LogsError::TooManyLogs { .. }
                | LogsError::Timeout { .. },
            ) => code::LIMIT_EXCEEDED,
            RpcError::Exec(ExecError::Revert { output }) => return revert(msg, output),
            RpcError::TxSyncTimeout { hash, .. } => {
                return ErrorObjectOwned::owned(code::TX_SYNC_TIMEOUT, msg, Some(hash))
            }
            RpcError::HeaderNotFound
            | RpcError::HeaderForHashNotFound
            | RpcError::FilterNotFound
            | RpcError::NotFound(_)
            | RpcError::NoEtherbase
            | RpcError::Refused(_)
            | RpcError::ConfigBeforeCancun
            | RpcError::NoKarma
            | RpcError::Logs(LogsError::UnknownBlock)
            | RpcError::Fee(FeeError::HeaderNotFound) => code::SERVER_ERROR,
            RpcError::Pool(ref p) if p.is_invalid_transaction() => code::SERVER_ERROR,
            // A pruned node's window or a snapshot-joined node's first block: the caller's to
            // change (ask an archive node).
            RpcError::Storage(
                StorageError::Pruned { .. } | StorageError::BeforeSnapshot { .. },
            )
            | RpcError::Exec(ExecError::Storage(
                StorageError::Pruned { .. } | StorageError::BeforeSnapshot { .. },
            )) => code::SERVER_ERROR,
            RpcError::Exec(
                ExecError::Storage(_)
                | ExecError::Block(_)
                | ExecError::SendersMismatch { .. }
                | ExecError::OverBudget,
            ) => internal(&msg),
            RpcError::Exec(_) => code::SERVER_ERROR,
            RpcError::Pool(_)
            | RpcError::Storage(_)
            | RpcError::Chain(_)
            | RpcError::Logs(LogsError::Storage(_))
            | RpcError::Fee(FeeError::Storage(_) | FeeError::Chain(_))
            | RpcError::Closed(_)
            | RpcError::Join(_)
            | RpcError::JobFailed
            | RpcError::Encode(_) => internal(&msg),
        };
        if code == code::INTERNAL_ERROR && !shutting_down {
            msg = INTERNAL_MESSAGE.to_owned();
        }
        ErrorObjectOwned::owned(code, msg, None::<()>)
    }
}

/// What the caller of a request the node failed reads (the cause is in the node's log).
const INTERNAL_MESSAGE: &str =
    "internal error: the node could not answer this request; its log has the cause, retry later";

/// `-32603`, logged: an internal error is the node's fault, not the caller's.
fn internal(msg: &str) -> i32 {
    tracing::warn!(target: "l2node::rpc", error = %msg, "internal error");
    code::INTERNAL_ERROR
}

/// A whole JSON-RPC response carrying `err` with id null, for answers given before any request
/// could be read (parse errors, oversized bodies).
pub fn response_body(err: RpcError) -> String {
    let err = ErrorObjectOwned::from(err);
    serde_json::json!({ "jsonrpc": "2.0", "error": err, "id": null }).to_string()
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
