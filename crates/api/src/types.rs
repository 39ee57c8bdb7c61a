//! Result types of l2node-specific methods (the standard ones come from alloy-rpc-types-eth).

use alloy_primitives::U64;
use serde::{Deserialize, Serialize, Serializer};
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

/// `txpool_content`: sender (EIP-55 checksummed, as geth's `Address.Hex()`) -> nonce (decimal
/// string, as geth) -> transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TxpoolContent {
    /// Executable transactions.
    pub pending: BTreeMap<String, BTreeMap<String, RpcTransaction>>,
    /// Future transactions.
    pub queued: BTreeMap<String, BTreeMap<String, RpcTransaction>>,
}

/// A transaction as geth answers it: like [`Transaction`], but a transaction that is not in a
/// block yet carries `"blockTimestamp": null` (alloy leaves the key out).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct RpcTransaction(pub Transaction);

impl Serialize for RpcTransaction {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.block_timestamp.is_some() {
            return self.0.serialize(s);
        }
        let mut v = serde_json::to_value(&self.0).map_err(serde::ser::Error::custom)?;
        if let Some(m) = v.as_object_mut() {
            m.insert("blockTimestamp".into(), serde_json::Value::Null);
        }
        v.serialize(s)
    }
}

/// eth_getBlockByNumber's answer: a block, or geth's `pending` block, whose `hash`, `nonce` and
/// `miner` are null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BlockOrPending {
    /// A sealed block.
    Block(Box<Block>),
    /// The pending block with geth's null fields.
    Pending(serde_json::Value),
}
