//! Result types of l2node-specific methods (the standard ones come from alloy-rpc-types-eth).

use alloy_primitives::{Address, U64};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use alloy_rpc_types_eth::{
    state::StateOverride, AccessListResult, Block, BlockId, BlockNumberOrTag, BlockOverrides,
    EIP1186AccountProofResponse, FeeHistory, Filter, FilterChanges, Index, Log, SyncStatus,
    Transaction, TransactionReceipt, TransactionRequest,
};

/// `txpool_status`: counts of executable and future transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TxpoolStatus {
    /// Transactions ready for the next block.
    pub pending: U64,
    /// Transactions waiting for a nonce gap to close.
    pub queued: U64,
}

/// `txpool_content`: sender -> nonce (decimal string, as geth) -> transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TxpoolContent {
    /// Executable transactions.
    pub pending: BTreeMap<Address, BTreeMap<String, Transaction>>,
    /// Future transactions.
    pub queued: BTreeMap<Address, BTreeMap<String, Transaction>>,
}
