//! eth_getProof over the stored state trie, at the head or any earlier block (trie history).

use alloy_primitives::{Address, B256, U256};
use alloy_rpc_types_eth::{EIP1186AccountProofResponse, EIP1186StorageProof};
use alloy_serde::JsonStorageKey;
use redb::ReadableDatabase;

use super::{Storage, StorageError, META, TRIE_HISTORY_FROM};
use crate::tables::{TRIE_HISTORY, TRIE_NODES};
use l2node_trie as trie;

impl Storage {
    /// The first block whose state trie (and so proofs) this database can read: 0, unless it
    /// was created by an l2node that kept no trie history.
    pub fn first_proof_block(&self) -> Result<u64, StorageError> {
        let tx = self.db.begin_read()?;
        let meta = tx.open_table(META)?;
        let first = meta.get(TRIE_HISTORY_FROM)?.map_or(0, |v| v.value());
        Ok(first)
    }

    /// Runs `f` on the state trie of block `block` (read through the trie history, so any
    /// block the node holds), or answers `Err(first)` when `block` predates `first`, the first
    /// block this database can read the trie of (the head's is always readable).
    pub fn with_trie_at<R>(
        &self,
        block: u64,
        f: impl FnOnce(&dyn trie::TrieStore) -> R,
    ) -> Result<Result<R, u64>, StorageError> {
        let tx = self.db.begin_read()?;
        let meta = tx.open_table(META)?;
        let first = meta.get(TRIE_HISTORY_FROM)?.map_or(0, |v| v.value());
        let head = meta.get("head")?.map_or(0, |v| v.value());
        if block < first && block < head {
            return Ok(Err(first));
        }
        let nodes = tx.open_table(TRIE_NODES)?;
        let history = tx.open_table(TRIE_HISTORY)?;
        Ok(Ok(f(&trie::TrieAt::new(&nodes, &history, block))))
    }

    /// EIP-1186 proof of `address` and `slots` against the state root of block `block`, or
    /// `Err(first)` as [`Storage::with_trie_at`] says.
    pub fn proof(
        &self,
        address: Address,
        slots: &[B256],
        block: u64,
    ) -> Result<Result<EIP1186AccountProofResponse, u64>, StorageError> {
        let p = match self.with_trie_at(block, |trie| trie::account_proof(trie, address, slots))? {
            Ok(p) => p?,
            Err(first) => return Ok(Err(first)),
        };
        let (balance, nonce, code_hash) = match &p.account {
            Some(a) => (a.balance, a.nonce, a.code_hash),
            None => (U256::ZERO, 0, revm::primitives::KECCAK_EMPTY),
        };
        Ok(Ok(EIP1186AccountProofResponse {
            address,
            balance,
            code_hash,
            nonce,
            storage_hash: p.storage_root,
            account_proof: p.account_proof,
            storage_proof: p
                .storage_proofs
                .into_iter()
                .map(|s| EIP1186StorageProof {
                    key: JsonStorageKey::Hash(s.slot),
                    value: s.value,
                    proof: s.proof,
                })
                .collect(),
        }))
    }
}
