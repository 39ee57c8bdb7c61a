//! The state changes of a block: what the executor returns, storage writes and the trie folds
//! into the state root. Plain data with no dependency on any other module.

use alloy_primitives::{Address, B256, U256};
use revm::bytecode::Bytecode;

/// The new value of one account after a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountChange {
    /// The account's address.
    pub address: Address,
    /// New nonce, balance and code hash, or `None` when the account no longer exists.
    pub info: Option<AccountState>,
    /// The account before the block, when the caller knows it (`None`: unknown, or it did not
    /// exist). Only a hint: the trie recognises the account's leaf by it instead of reading it.
    pub before: Option<AccountState>,
    /// Code deployed in this block (the bytes behind `info.code_hash`), if new.
    pub new_code: Option<Bytecode>,
    /// `true` when all previous storage is gone (self-destruct or re-creation) before `storage`
    /// is applied.
    pub storage_wiped: bool,
    /// Changed slots and their new values (zero = deleted).
    pub storage: Vec<(U256, U256)>,
    /// The changed slots' values before the block, sorted by slot, when the caller knows them
    /// (empty: unknown). Only a hint, as `before` is: the trie recognises a slot's leaf by it
    /// instead of reading it.
    pub storage_before: Vec<(U256, U256)>,
}

impl AccountChange {
    /// The change that deletes `address` (with its storage).
    pub fn deletion(address: Address) -> Self {
        Self {
            address,
            info: None,
            before: None,
            new_code: None,
            storage_wiped: false,
            storage: vec![],
            storage_before: vec![],
        }
    }
}

/// The consensus fields of an account (the storage root is derived by the trie).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccountState {
    /// Transaction count / contract creation count.
    pub nonce: u64,
    /// Balance in wei.
    pub balance: U256,
    /// keccak256 of the code (`KECCAK_EMPTY` for none).
    pub code_hash: B256,
}

/// All account changes of one block, one entry per touched address, sorted by address.
pub type StateChanges = Vec<AccountChange>;

/// One Karma tier: senders whose Karma balance lies in `min_karma..=max_karma` (wei of KARMA,
/// 18 decimals) get `tx_per_epoch` quota units of gasless transactions per epoch. The same
/// struct as `KarmaTiers.Tier` on chain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KarmaTier {
    /// Lowest balance of the tier (inclusive).
    pub min_karma: U256,
    /// Highest balance of the tier (inclusive).
    pub max_karma: U256,
    /// Display name, 1..=32 bytes.
    pub name: String,
    /// Quota units per epoch.
    pub tx_per_epoch: u32,
}

/// Why a sender is on the deny list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DenyReason {
    /// The sender used its whole gasless quota for the epoch.
    QuotaExceeded,
    /// The sender was slashed for sending two different gasless signals in one slot.
    RlnViolation,
    /// An operator put the sender there (`l2admin_addToDenyList`).
    Operator,
}

/// A deny-list entry: denied while the current epoch is at most `until_epoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DenyEntry {
    /// Why.
    pub reason: DenyReason,
    /// Last epoch of the denial (inclusive).
    pub until_epoch: u64,
}

/// Gasless quota units a sender used in one epoch, and the bonus units premium transactions
/// bought back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KarmaUsage {
    /// Units used.
    pub used: u64,
    /// Extra units on top of the tier's quota.
    pub bonus: u64,
}

/// What one block changed in the Karma ledger; committed with the block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KarmaDelta {
    /// New usage per (sender, epoch).
    pub usage: Vec<(Address, u64, KarmaUsage)>,
    /// New deny-list state per sender (`None` = cleared).
    pub deny: Vec<(Address, Option<DenyEntry>)>,
    /// Tiers in force from this block on, with the epoch they start.
    pub tiers: Option<(u64, Vec<KarmaTier>)>,
}

impl KarmaDelta {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.usage.is_empty() && self.deny.is_empty() && self.tiers.is_none()
    }
}
