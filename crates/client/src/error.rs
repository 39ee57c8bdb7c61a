//! Client errors, split the way alloy splits them: the node answered with an error, the
//! transport failed, an answer did not decode, or a call timed out.

/// Why a client call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The node answered with a JSON-RPC error.
    #[error("the node answered error {code}: {message}")]
    Rpc {
        /// JSON-RPC error code (-32000 for a refused transaction, 3 for a revert, ...).
        code: i32,
        /// The node's message (for a Karma refusal, what to do).
        message: String,
        /// The error's `data`, raw JSON (revert data for code 3).
        data: Option<String>,
    },
    /// The connection failed or closed.
    #[error("transport error: {0}")]
    Transport(String),
    /// An answer did not decode into the expected type.
    #[error("cannot decode the node's answer: {0}")]
    Decode(String),
    /// The node did not answer in time.
    #[error("the request timed out")]
    Timeout,
    /// `2 x baseFeePerGas + priorityFeePerGas` does not fit in 128 bits: the node's quote is
    /// unusable.
    #[error("maxFeePerGas overflows: 2 x baseFeePerGas {base} + priorityFeePerGas {priority}")]
    FeeOverflow {
        /// The quoted base fee.
        base: u128,
        /// The quoted priority fee.
        priority: u128,
    },
    /// The transaction could not be signed.
    #[error("cannot sign the transaction: {0}")]
    Signing(String),
    /// Every attempt of a send failed; the last error is inside.
    #[error("sending failed after {attempts} attempts: {last}")]
    Exhausted {
        /// Attempts made.
        attempts: usize,
        /// The last error.
        last: Box<ClientError>,
    },
}

impl ClientError {
    /// Whether a send that failed this way should be retried with a fresh estimate: the node
    /// refused the transaction for a reason a new estimate and nonce can fix (nonce taken,
    /// underpriced, the free quota ran out meanwhile).
    pub fn is_retryable_send_error(&self) -> bool {
        match self {
            ClientError::Rpc {
                code: -32000,
                message,
                ..
            } => {
                let m = message.to_ascii_lowercase();
                [
                    "nonce too low",
                    "underpriced",
                    "free transaction",
                    "no free transactions",
                    "switched off",
                ]
                .iter()
                .any(|s| m.contains(s))
            }
            ClientError::Transport(_) | ClientError::Timeout => true,
            _ => false,
        }
    }

    /// The node refused the transaction because it already holds that very transaction
    /// (geth's "already known"): it was sent before.
    pub fn is_already_known(&self) -> bool {
        matches!(self, ClientError::Rpc { code: -32000, message, .. }
            if message.to_ascii_lowercase().contains("already known"))
    }
}

impl From<jsonrpsee::core::client::Error> for ClientError {
    fn from(e: jsonrpsee::core::client::Error) -> Self {
        use jsonrpsee::core::client::Error;
        match e {
            Error::Call(obj) => ClientError::Rpc {
                code: obj.code(),
                message: obj.message().to_owned(),
                data: obj.data().map(|d| d.get().to_owned()),
            },
            Error::ParseError(e) => ClientError::Decode(e.to_string()),
            Error::RequestTimeout => ClientError::Timeout,
            other => ClientError::Transport(other.to_string()),
        }
    }
}
