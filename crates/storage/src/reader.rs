//! Point-in-time state reads: the [`StateReader`] interface the executor and the pool read
//! through, and [`StateAt`], storage's implementation (current tables for the head, history
//! tables for older blocks).

use std::sync::Arc;

use alloy_primitives::{Address, B256, U256};
use revm::{bytecode::Bytecode, primitives::KECCAK_EMPTY, state::AccountInfo};

use super::{
    codec::{self, decode_account},
    snapshot::{Snapshot, Snapshots},
    StorageError,
};
use l2node_trie::state::AccountState;

/// Read access to the world state as of one block.
pub trait StateReader: Send + Sync {
    /// Account basics (balance, nonce, code hash; `code` left `None`), or `None` if absent.
    fn account(&self, address: Address) -> Result<Option<AccountInfo>, StorageError>;
    /// Value of a storage slot (zero when unset).
    fn storage(&self, address: Address, slot: U256) -> Result<U256, StorageError>;
    /// Contract code by its keccak hash (empty bytecode when unknown).
    fn code_by_hash(&self, code_hash: B256) -> Result<Bytecode, StorageError>;
    /// Hash of a canonical block by number (for the BLOCKHASH opcode), zero when unknown.
    fn block_hash(&self, number: u64) -> Result<B256, StorageError>;
    /// The number of the stored block whose state this is, for readers of stored state
    /// (`None` for any other, whose reads callers must not keep as a stored block's).
    fn stored_block(&self) -> Option<u64> {
        None
    }
}

/// A consistent snapshot of the state as of one block. Cheap to create: it shares the read
/// snapshot of the latest commit and opens tables only when a read needs them.
pub struct StateAt {
    /// `None` reads the current tables; `Some(n)` reads history for block `n`.
    at: Option<u64>,
    snap: Arc<Snapshot>,
    shared: Arc<Snapshots>,
}

impl std::fmt::Debug for StateAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateAt")
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

impl StateAt {
    pub(super) fn new(snap: Arc<Snapshot>, shared: Arc<Snapshots>, number: Option<u64>) -> Self {
        // Reading "as of the head" is the same as reading the current tables.
        let at = match (number, snap.head) {
            (Some(n), Some(h)) if n < h => Some(n),
            _ => None,
        };
        Self { at, snap, shared }
    }

    /// The account's consensus fields, or `None` if it does not exist at this block.
    pub fn account_state(&self, address: Address) -> Result<Option<AccountState>, StorageError> {
        let snap = &self.snap;
        if let Some(n) = self.at {
            // The first change after block n holds the value the account had at n (empty:
            // absent, in databases from before creations went without an entry).
            let from = codec::with_block(address.as_slice(), n + 1);
            let to = codec::with_block(address.as_slice(), u64::MAX);
            let history = snap.table(&snap.account_history)?;
            if let Some(entry) = history.range(from.as_slice()..=to.as_slice())?.next() {
                let (_, v) = entry?;
                let bytes = v.value();
                return if bytes.is_empty() {
                    Ok(None)
                } else {
                    Ok(decode_account(bytes)?.at(n))
                };
            }
        }
        let Some(record) = snap.with_account(&address, |r| r.map(decode_account).transpose())?
        else {
            return Ok(None);
        };
        Ok(match self.at {
            Some(n) => record.at(n),
            None => Some(record.state),
        })
    }
}

impl StateReader for StateAt {
    fn account(&self, address: Address) -> Result<Option<AccountInfo>, StorageError> {
        Ok(self.account_state(address)?.map(|a| AccountInfo {
            balance: a.balance,
            nonce: a.nonce,
            code_hash: a.code_hash,
            ..Default::default()
        }))
    }

    fn storage(&self, address: Address, slot: U256) -> Result<U256, StorageError> {
        let snap = &self.snap;
        let key = codec::slot_key(&address, &slot);
        if let Some(n) = self.at {
            let from = codec::with_block(&key, n + 1);
            let to = codec::with_block(&key, u64::MAX);
            let history = snap.table(&snap.storage_history)?;
            if let Some(entry) = history.range(from.as_slice()..=to.as_slice())?.next() {
                let (_, v) = entry?;
                return Ok(U256::from_be_bytes(*v.value()));
            }
        }
        Ok(snap
            .table(&snap.storage)?
            .get(key.as_slice())?
            .map(|v| U256::from_be_bytes(*v.value()))
            .unwrap_or_default())
    }

    fn code_by_hash(&self, code_hash: B256) -> Result<Bytecode, StorageError> {
        if code_hash == KECCAK_EMPTY || code_hash.is_zero() {
            return Ok(Bytecode::default());
        }
        let snap = &self.snap;
        let code = self.shared.code(code_hash, || {
            snap.table(&snap.code)?
                .get(&code_hash.0)?
                .map(|v| {
                    Bytecode::new_raw_checked(v.value().to_vec().into())
                        .map_err(|e| codec::corrupt("code", format!("{e:?}")))
                })
                .transpose()
        })?;
        Ok(code.unwrap_or_default())
    }

    fn block_hash(&self, number: u64) -> Result<B256, StorageError> {
        self.snap.block_hash(number)
    }

    fn stored_block(&self) -> Option<u64> {
        self.at.or(self.snap.head)
    }
}
