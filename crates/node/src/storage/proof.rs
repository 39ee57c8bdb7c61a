//! eth_getProof over the stored state trie (head state only: the trie is kept for the head).

use alloy_primitives::{Address, B256, U256};
use alloy_rpc_types_eth::{EIP1186AccountProofResponse, EIP1186StorageProof};
use alloy_serde::JsonStorageKey;
use redb::{ReadOnlyTable, ReadableDatabase};

use super::{Storage, StorageError};
use crate::trie::{self, TrieStore};

/// The trie table of a read transaction; writes are refused.
struct ReadOnlyTrie(ReadOnlyTable<&'static [u8], &'static [u8]>);

impl TrieStore for ReadOnlyTrie {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.0.get(key)?.map(|v| v.value().to_vec()))
    }

    fn put(&mut self, _: &[u8], _: &[u8]) -> Result<(), StorageError> {
        Err(StorageError::Database("trie snapshot is read-only".into()))
    }

    fn delete(&mut self, _: &[u8]) -> Result<(), StorageError> {
        Err(StorageError::Database("trie snapshot is read-only".into()))
    }

    fn delete_prefix(&mut self, _: &[u8]) -> Result<(), StorageError> {
        Err(StorageError::Database("trie snapshot is read-only".into()))
    }
}

impl Storage {
    /// EIP-1186 proof of `address` and `slots` against the head state root.
    pub fn proof(
        &self,
        address: Address,
        slots: &[B256],
    ) -> Result<EIP1186AccountProofResponse, StorageError> {
        let tx = self.db.begin_read()?;
        let store = ReadOnlyTrie(tx.open_table(trie::TRIE_NODES)?);
        let p = trie::account_proof(&store, address, slots)?;
        let (balance, nonce, code_hash) = match &p.account {
            Some(a) => (a.balance, a.nonce, a.code_hash),
            None => (U256::ZERO, 0, revm::primitives::KECCAK_EMPTY),
        };
        Ok(EIP1186AccountProofResponse {
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
        })
    }
}
