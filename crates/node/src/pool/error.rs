//! Pool errors. The display strings of the admission errors are geth's: they reach users
//! verbatim as JSON-RPC `-32000` messages, and tools match on them.

use alloy_primitives::{Address, U256};

use l2node_storage::StorageError;

/// Why a transaction was not accepted, or why a pool operation failed.
///
/// Every variant except [`PoolError::Journal`] and [`PoolError::State`] is the sender's fault and
/// maps to JSON-RPC error `-32000` with the display string as message.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The Karma policy refuses the gasless path (the message says what to do).
    #[error(transparent)]
    Karma(#[from] crate::karma::KarmaError),
    /// The bytes are not a valid EIP-2718 transaction (message as geth: `rlp: ...`).
    #[error("{0}")]
    Decode(String),
    /// A blob transaction sent without its blobs (the network form carries them: geth's
    /// wording).
    #[error("missing sidecar in blob transaction: send it in its network form, with the blobs, commitments and proofs")]
    BlobSidecarMissing,
    /// A blob transaction whose blobs do not fit the rules: none, too many, the sidecar format
    /// of another fork, or proofs that do not verify against the versioned hashes.
    #[error("{0}")]
    BlobInvalid(String),
    /// The max fee per blob gas is below the next block's blob base fee (geth's wording).
    #[error("max fee per blob gas less than block blob gas fee: address {address}, blobGasFeeCap: {cap}, blobBaseFee: {fee}")]
    BlobFeeCapTooLow {
        /// The sender.
        address: alloy_primitives::Address,
        /// The transaction's max fee per blob gas.
        cap: u128,
        /// The next block's blob base fee.
        fee: u128,
    },
    /// Unknown transaction type, or a type not active yet (EIP-7702 before Prague).
    #[error("transaction type not supported")]
    TxTypeNotSupported,
    /// An EIP-7702 transaction without authorizations.
    #[error("EIP-7702 transaction with empty auth list")]
    EmptyAuthList,
    /// The transaction is signed for another chain.
    #[error("invalid sender: invalid chain id for signer: have {have} want {want}")]
    InvalidChainId {
        /// Chain id in the transaction.
        have: u64,
        /// This network's chain id.
        want: u64,
    },
    /// The signature does not recover to a sender.
    #[error("invalid sender")]
    InvalidSender,
    /// The encoding is larger than the pool accepts.
    #[error("oversized data: transaction size {size}, limit {limit}")]
    OversizedData {
        /// Encoded size in bytes.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// EIP-3860: contract creation with initcode above 49152 bytes.
    #[error("max initcode size exceeded: code size {size}, limit {limit}")]
    MaxInitCodeSizeExceeded {
        /// Initcode length.
        size: usize,
        /// The protocol limit.
        limit: usize,
    },
    /// Gas limit above the block gas limit: it could never be included.
    #[error("exceeds block gas limit")]
    GasLimit,
    /// Osaka (EIP-7825): gas limit above the per-transaction cap (geth's wording).
    #[error("transaction gas limit too high (cap: {cap}, tx: {gas})")]
    GasLimitTooHigh {
        /// The protocol cap, 2^24.
        cap: u64,
        /// The transaction's gas limit.
        gas: u64,
    },
    /// Gas limit below the intrinsic gas.
    #[error("intrinsic gas too low: gas {gas}, minimum needed {needed}")]
    IntrinsicGas {
        /// The transaction's gas limit.
        gas: u64,
        /// The intrinsic gas.
        needed: u64,
    },
    /// Prague (EIP-7623): gas limit below the calldata floor cost.
    #[error("insufficient gas for floor data gas cost: gas {gas}, minimum needed {needed}")]
    FloorDataGas {
        /// The transaction's gas limit.
        gas: u64,
        /// The floor cost.
        needed: u64,
    },
    /// Max fee per gas below the current base fee.
    #[error(
        "max fee per gas less than block base fee: address {address}, maxFeePerGas: {max_fee}, baseFee: {base_fee}"
    )]
    FeeCapTooLow {
        /// The sender.
        address: Address,
        /// The transaction's max fee per gas.
        max_fee: u128,
        /// The current base fee.
        base_fee: u64,
    },
    /// Max priority fee above max fee.
    #[error("max priority fee per gas higher than max fee per gas")]
    TipAboveFeeCap,
    /// Nonce at `u64::MAX`: the account could never send another transaction.
    #[error("nonce has max value: address {address}, nonce: {nonce}")]
    NonceMax {
        /// The sender.
        address: Address,
        /// The nonce.
        nonce: u64,
    },
    /// Nonce below the account's nonce: already used.
    #[error("nonce too low: next nonce {next}, tx nonce {nonce}")]
    NonceTooLow {
        /// The account's next nonce.
        next: u64,
        /// The transaction's nonce.
        nonce: u64,
    },
    /// Balance below `gas * maxFee + value`.
    #[error(
        "insufficient funds for gas * price + value: address {address} have {have} want {want}"
    )]
    InsufficientFunds {
        /// The sender.
        address: Address,
        /// The sender's balance.
        have: U256,
        /// The transaction's maximum cost.
        want: U256,
    },
    /// The sender's pooled transactions and this one together cost more than its balance
    /// (geth's overdraft message).
    #[error(
        "insufficient funds for gas * price + value: balance {balance}, queued cost {queued_cost}, tx cost {tx_cost}, overshot {overshot}",
        overshot = overshot(.balance, .queued_cost, .tx_cost)
    )]
    Overdraft {
        /// The sender's balance.
        balance: U256,
        /// Maximum cost of the sender's other pooled transactions.
        queued_cost: U256,
        /// This transaction's maximum cost.
        tx_cost: U256,
    },
    /// The sender already has as many queued (non-executable) transactions as allowed, all at
    /// lower nonces (geth's `ErrAccountLimitExceeded`).
    #[error("account limit exceeded: pooled {queued} queued txs, limit {limit}")]
    AccountLimitExceeded {
        /// The sender's queued transactions.
        queued: usize,
        /// The per-account queued limit.
        limit: usize,
    },
    /// The same transaction is already in the pool.
    #[error("already known")]
    AlreadyKnown,
    /// Same sender and nonce as a pooled transaction without the required fee bump.
    #[error("replacement transaction underpriced")]
    ReplaceUnderpriced,
    /// The pool is full and nothing may be evicted for the transaction: no queued transaction, no
    /// sender above its share, nothing cheaper.
    #[error("txpool is full")]
    PoolFull,
    /// The journal file could not be opened, read or written.
    #[error("transaction journal: {0}")]
    Journal(#[from] std::io::Error),
    /// The state could not be read.
    #[error("state: {0}")]
    State(#[from] StorageError),
}

/// By how much `queued_cost + tx_cost` exceeds `balance` (computed for the message rather than
/// stored, to keep the error small).
fn overshot(balance: &U256, queued_cost: &U256, tx_cost: &U256) -> U256 {
    queued_cost
        .saturating_add(*tx_cost)
        .saturating_sub(*balance)
}

impl PoolError {
    /// `true` when the error is about the transaction (JSON-RPC `-32000`), `false` for an
    /// internal failure of the node (journal or state I/O).
    pub fn is_invalid_transaction(&self) -> bool {
        !matches!(self, Self::Journal(_) | Self::State(_))
    }
}
