//! Why a transaction never landed, as Linea's transaction-exclusion API answers it: the node
//! records each transaction it refuses (stage `RPC`: sent to its JSON-RPC; `P2P`: received from
//! a peer; `SEQUENCER`: dropped while building a block) with the reason, and the sequencer's
//! `P2P` and `SEQUENCER` records are gossiped, so the follower a user sent the transaction to
//! can answer too. Records are buffered in memory and written to storage in batches every
//! [`TX_EXCLUSION_FLUSH`](crate::constants::TX_EXCLUSION_FLUSH) (not on the request path), and
//! kept [`TX_EXCLUSION_RETENTION_SECS`] and at most [`TX_EXCLUSION_MAX_RECORDS`].

use alloy_consensus::{transaction::SignerRecoverable, Transaction as _, TxEnvelope};
use alloy_eips::eip2718::Decodable2718;
use std::collections::VecDeque;

use alloy_primitives::{Address, B256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use parking_lot::Mutex;
use tokio::sync::broadcast;

use crate::constants::{
    TX_EXCLUSION_BUFFER, TX_EXCLUSION_MAX_RECORDS, TX_EXCLUSION_RETENTION_SECS,
};
use l2node_storage::{Storage, StorageError};

/// Where a transaction was refused (Linea's `txRejectionStage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stage {
    /// Refused by a node's JSON-RPC (`eth_sendRawTransaction`).
    #[serde(rename = "RPC")]
    Rpc,
    /// Dropped by the sequencer while building a block.
    #[serde(rename = "SEQUENCER")]
    Sequencer,
    /// Refused by a node that received it from a peer (a follower forwarded it).
    #[serde(rename = "P2P")]
    P2p,
}

/// One transaction that never landed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exclusion {
    /// The transaction.
    pub tx_hash: B256,
    /// Its sender.
    pub from: Address,
    /// Its nonce.
    pub nonce: u64,
    /// Where it was refused.
    pub stage: Stage,
    /// Why, in the words of the refusal the sender got (or would have got).
    pub reason: String,
    /// The head when it was refused, or the block being built (`SEQUENCER`).
    pub block_number: u64,
    /// When (Unix seconds).
    pub timestamp: u64,
}

impl Exclusion {
    /// The record of raw EIP-2718 bytes refused at `stage` for `reason`; `None` when the bytes
    /// are not a signed transaction (there is no hash or sender to record).
    pub fn of_raw(raw: &[u8], stage: Stage, reason: String, block_number: u64) -> Option<Self> {
        let tx = TxEnvelope::decode_2718_exact(raw).ok()?;
        let from = tx.recover_signer().ok()?;
        Some(Self {
            tx_hash: *tx.tx_hash(),
            from,
            nonce: tx.nonce(),
            stage,
            reason,
            block_number,
            timestamp: unix_now(),
        })
    }
}

/// Unix seconds now (what a record's `timestamp` says).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A record as the sequencer gossips it: signed with its sealing key, so a follower takes only
/// what a signer of the chain said.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SignedExclusion {
    /// The record.
    pub exclusion: Exclusion,
    /// The sealing key's signature over keccak256 of the record's JSON.
    pub signature: alloy_primitives::Signature,
}

impl SignedExclusion {
    fn digest(exclusion: &Exclusion) -> B256 {
        alloy_primitives::keccak256(serde_json::to_vec(exclusion).expect("an exclusion serializes"))
    }

    /// `exclusion` signed by `key`.
    pub fn sign(exclusion: Exclusion, key: &PrivateKeySigner) -> Self {
        let signature = key
            .sign_hash_sync(&Self::digest(&exclusion))
            .expect("a local key signs");
        Self {
            exclusion,
            signature,
        }
    }

    /// Who signed it, if the signature is valid.
    pub fn signer(&self) -> Option<Address> {
        self.signature
            .recover_address_from_prehash(&Self::digest(&self.exclusion))
            .ok()
    }
}

/// The exclusion records of a node.
#[derive(Debug)]
pub struct Exclusions {
    storage: Storage,
    /// Records not written yet (newest last), read before storage; a record leaves only once
    /// it is written.
    buffer: Mutex<VecDeque<Exclusion>>,
    /// The records peers should learn (this node's `P2P` and `SEQUENCER` refusals), signed by
    /// the sealing key; none without one.
    announced: broadcast::Sender<SignedExclusion>,
    signer: Option<PrivateKeySigner>,
}

impl Exclusions {
    /// The records kept in `storage`.
    pub fn new(storage: Storage) -> Self {
        Self {
            storage,
            buffer: Mutex::new(VecDeque::new()),
            announced: broadcast::channel(crate::constants::SUBSCRIPTION_BUFFER).0,
            signer: None,
        }
    }

    /// Signs the records it announces with the sealing key `key` (a sequencer).
    pub fn with_signer(mut self, key: PrivateKeySigner) -> Self {
        self.signer = Some(key);
        self
    }

    /// Records `exclusion`; `announce` also hands it, signed, to the peers (see
    /// [`Self::announced`]) on a node with a sealing key. A flood of refusals keeps the newest
    /// [`TX_EXCLUSION_BUFFER`] until the next flush.
    pub fn record(&self, exclusion: Exclusion, announce: bool) {
        if let (true, Some(key)) = (announce, &self.signer) {
            let _ = self
                .announced
                .send(SignedExclusion::sign(exclusion.clone(), key));
        }
        let mut buffer = self.buffer.lock();
        if buffer.len() >= TX_EXCLUSION_BUFFER {
            buffer.pop_front();
        }
        buffer.push_back(exclusion);
    }

    /// The record of `hash`, if the node has one.
    pub fn get(&self, hash: &B256) -> Result<Option<Exclusion>, StorageError> {
        if let Some(e) = self.buffer.lock().iter().rev().find(|e| e.tx_hash == *hash) {
            return Ok(Some(e.clone()));
        }
        Ok(self
            .storage
            .exclusion(hash)?
            .and_then(|bytes| serde_json::from_slice(&bytes).ok()))
    }

    /// Writes the buffered records and drops the expired ones (blocking: storage I/O).
    pub fn flush(&self) -> Result<(), StorageError> {
        // Copied, not taken: a record stays readable from the buffer until it is in storage.
        let records: Vec<_> = self
            .buffer
            .lock()
            .iter()
            .map(|e| {
                let bytes = serde_json::to_vec(e).expect("an exclusion serializes");
                (e.tx_hash, e.timestamp, bytes)
            })
            .collect();
        let keep_from = unix_now().saturating_sub(TX_EXCLUSION_RETENTION_SECS);
        self.storage
            .put_exclusions(&records, keep_from, TX_EXCLUSION_MAX_RECORDS)?;
        // The ones written are the oldest (a full buffer only drops from the front meanwhile).
        let mut buffer = self.buffer.lock();
        let written = records.len().min(buffer.len());
        buffer.drain(..written);
        Ok(())
    }

    /// The records to gossip: this node's `P2P` and `SEQUENCER` refusals as they happen, signed.
    pub fn announced(&self) -> broadcast::Receiver<SignedExclusion> {
        self.announced.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_read_back_before_and_after_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let key = PrivateKeySigner::random();
        let ex = Exclusions::new(Storage::open(&dir.path().join("db")).unwrap())
            .with_signer(key.clone());
        let mut announced = ex.announced();
        let e = Exclusion {
            tx_hash: B256::repeat_byte(7),
            from: Address::repeat_byte(1),
            nonce: 3,
            stage: Stage::Sequencer,
            reason: "quota used up".into(),
            block_number: 9,
            timestamp: unix_now(),
        };
        ex.record(e.clone(), true);
        let signed = announced.try_recv().unwrap();
        assert_eq!(
            (signed.exclusion.clone(), signed.signer()),
            (e.clone(), Some(key.address()))
        );
        let mut forged = signed.clone();
        forged.exclusion.reason = "something else".into();
        assert_ne!(forged.signer(), Some(key.address()));
        assert_eq!(ex.get(&e.tx_hash).unwrap(), Some(e.clone()));
        ex.flush().unwrap();
        assert!(ex.buffer.lock().is_empty());
        assert_eq!(ex.get(&e.tx_hash).unwrap(), Some(e.clone()));
        assert_eq!(ex.get(&B256::ZERO).unwrap(), None);
        assert_eq!(
            serde_json::to_value(e.stage).unwrap(),
            serde_json::json!("SEQUENCER")
        );
    }

    #[test]
    fn of_raw_needs_a_signed_transaction() {
        assert!(Exclusion::of_raw(&[0x02, 0xc0], Stage::Rpc, String::new(), 0).is_none());
    }
}
