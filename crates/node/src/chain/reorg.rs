//! Competing blocks and reorganisations, as geth handles side chains: import keeps a block that
//! does not extend the head when its parent is known (after the checks that need no state:
//! seal, header rules against its parent, transactions root), and when the chain ending in
//! such blocks becomes heavier than the head's, the node takes its own blocks back to the fork
//! point (state, receipts, indexes and Karma ledger, `Storage::unwind_head`) and imports the
//! competing ones, which are executed only then.
//!
//! Weight is geth's total difficulty, with a block of difficulty zero (proof of stake) counting
//! one: between two proof-of-stake chains the longer wins; a tie keeps the head. The blocks
//! taken back are announced ([`Reorg`]) before the new chain's, so subscribers see their logs
//! removed first, and the pool takes back their transactions that the new chain lacks.

use std::{collections::HashMap, sync::Arc};

use alloy_consensus::{proofs, Block, ReceiptEnvelope, TxEnvelope};
use alloy_primitives::{Address, B256, U256};

use super::{check, clique, recover_senders, validate, Chain, ChainError, Head, Prepared};
use crate::constants::{MAX_REORG_DEPTH, MAX_SIDE_BLOCKS};
use crate::executor;
use l2node_storage::StoredBlock;

/// Competing blocks by hash.
#[derive(Debug, Default)]
pub(super) struct SideBlocks {
    blocks: HashMap<B256, Arc<Block<TxEnvelope>>>,
}

impl SideBlocks {
    fn insert(&mut self, hash: B256, block: Arc<Block<TxEnvelope>>) {
        if self.blocks.len() >= MAX_SIDE_BLOCKS {
            // The lowest block is the least likely to matter.
            if let Some(lowest) = self
                .blocks
                .iter()
                .min_by_key(|(_, b)| b.header.number)
                .map(|(h, _)| *h)
            {
                self.blocks.remove(&lowest);
            }
        }
        self.blocks.insert(hash, block);
    }
}

/// What import did with a block that does not extend the head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Competing {
    /// Kept as a competing block: its chain is not heavier than the head's.
    Kept,
    /// Its chain was heavier: the node switched to it; the new head's number.
    Reorganised(u64),
}

/// Blocks a reorganisation took back, oldest first, with their receipts.
#[derive(Debug)]
pub struct Reorg {
    /// The blocks removed from the chain and their receipts.
    pub removed: Vec<(StoredBlock, Vec<ReceiptEnvelope>)>,
}

/// A block's weight in the heavier-chain rule: its difficulty, one for proof of stake. On a
/// Clique chain at most 2 (in turn), the most a valid seal carries, so no signer can claim more.
fn weight(difficulty: U256, clique: bool) -> U256 {
    let w = difficulty.max(U256::from(1));
    if clique {
        w.min(U256::from(2))
    } else {
        w
    }
}

impl Chain {
    /// Blocks taken back by reorganisations, announced before the new chain's blocks.
    pub fn subscribe_reorgs(&self) -> tokio::sync::broadcast::Receiver<Arc<Reorg>> {
        self.reorgs.subscribe()
    }

    /// Imports a block that does not extend the head: kept when its parent is known, and the
    /// node switches to its chain when that chain is heavier (see the module docs).
    pub fn import_competing(&self, block: Block<TxEnvelope>) -> Result<Competing, ChainError> {
        let _guard = self.write.lock();
        let number = block.header.number;
        let hash = block.header.hash_slow();
        let parent =
            self.known_header(&block.header.parent_hash)?
                .ok_or(ChainError::UnknownParent {
                    number,
                    parent: block.header.parent_hash,
                })?;
        check(number, "number", number, parent.number + 1)?;
        let spec = self.spec();
        if spec.clique.is_some() {
            let signer = clique::signer(&block.header)?;
            if !self.signers.contains(&signer) {
                return Err(clique::SealError::Unauthorized { number, signer }.into());
            }
        }
        let stateless = validate::before_execution(&spec, &parent, &block).and_then(|()| {
            check(
                number,
                "transactions root",
                block.header.transactions_root,
                proofs::calculate_transaction_root(&block.body.transactions),
            )
        });
        if let Err(e) = stateless {
            self.record_bad_block(alloy_rlp::encode(&block).into());
            return Err(e);
        }
        if spec.awaits_merge().is_some() {
            // Unwinding across the merge by total difficulty would need the spec and the total
            // difficulty taken back too: such chains (imported proof-of-work history) do not
            // reorganise.
            return Ok(Competing::Kept);
        }
        self.side.lock().insert(hash, Arc::new(block));

        // The competing chain back to the first block on ours (the fork point).
        let mut branch = Vec::new();
        let mut cursor = hash;
        let fork = loop {
            if let Some(n) = self.storage.block_number(&cursor)? {
                break n;
            }
            let Some(b) = self.side.lock().blocks.get(&cursor).cloned() else {
                // A gap (an evicted ancestor): nothing to decide yet.
                return Ok(Competing::Kept);
            };
            cursor = b.header.parent_hash;
            branch.push(b);
        };
        branch.reverse();
        let head = self.head();
        if head.header.number - fork > MAX_REORG_DEPTH {
            tracing::warn!(target: "l2node::chain", fork, head = head.header.number, "a competing chain forks deeper than the reorganisation limit: kept, never followed");
            return Ok(Competing::Kept);
        }
        let clique = spec.clique.is_some();
        let ours = (fork + 1..=head.header.number).try_fold(U256::ZERO, |acc, n| {
            let h = self.storage.header(n)?.ok_or_else(|| missing(n))?;
            Ok::<_, ChainError>(acc.saturating_add(weight(h.difficulty, clique)))
        })?;
        let theirs = branch.iter().fold(U256::ZERO, |acc, b| {
            acc.saturating_add(weight(b.header.difficulty, clique))
        });
        if theirs <= ours {
            return Ok(Competing::Kept);
        }
        self.reorganise(fork, branch)
    }

    /// A header by hash: on the chain or among the competing blocks.
    fn known_header(&self, hash: &B256) -> Result<Option<alloy_consensus::Header>, ChainError> {
        if let Some(n) = self.storage.block_number(hash)? {
            return Ok(self.storage.header(n)?);
        }
        Ok(self.side.lock().blocks.get(hash).map(|b| b.header.clone()))
    }

    /// Takes the chain back to `fork` and imports `branch` (which starts at `fork + 1`); if a
    /// block of it is invalid, or taking our blocks back fails halfway, the old blocks come back
    /// and the error is returned.
    fn reorganise(
        &self,
        fork: u64,
        branch: Vec<Arc<Block<TxEnvelope>>>,
    ) -> Result<Competing, ChainError> {
        let head = self.head().header.number;
        tracing::info!(target: "l2node::chain", fork, old_head = head, new_head = fork + branch.len() as u64, "reorganising to a heavier chain");
        // Each block taken back is executed again on its parent's state: check first that the
        // fork's state is held (a pruned node's window, a snapshot a node joined from), rather
        // than stop halfway with the chain shortened.
        self.storage.state_at(Some(fork))?;
        let mut removed = Vec::with_capacity((head - fork) as usize);
        for n in (fork + 1..=head).rev() {
            match self.unwind_locked(n) {
                Ok(block) => removed.push(block),
                Err(e) => {
                    // A failure halfway (storage, or executing a block again): the blocks
                    // taken back so far are announced as such and come back, so that the chain
                    // ends at the head it had rather than shortened.
                    let e = ChainError::Unwind {
                        number: n,
                        cause: Box::new(e),
                    };
                    let old = self.announce_taken_back(removed);
                    self.import_again(old, &e);
                    return Err(e);
                }
            }
        }
        let old = self.announce_taken_back(removed);
        for (i, block) in branch.iter().enumerate() {
            let hash = block.header.hash_slow();
            if let Err(e) = self.import_locked((**block).clone(), Prepared::default(), true) {
                if e.is_local() {
                    tracing::error!(target: "l2node::chain", error = %e, "cannot import the heavier chain here: back to ours");
                } else {
                    tracing::warn!(target: "l2node::chain", error = %e, "the heavier chain holds an invalid block: back to ours");
                    self.side.lock().blocks.remove(&hash);
                    self.record_bad_block(alloy_rlp::encode(&**block).into());
                }
                // The competing blocks already imported go (announced like any taken back),
                // and ours come back through the ordinary path. Should taking one of them back
                // fail, the chain stays on a valid part of the competing chain, and the block's
                // error is the one returned.
                let mut undone = Vec::with_capacity(i);
                for n in (fork + 1..=fork + i as u64).rev() {
                    match self.unwind_locked(n) {
                        Ok(block) => undone.push(block),
                        Err(undo) => {
                            tracing::error!(target: "l2node::chain", error = %undo, cause = %e, number = n, "cannot take back a block of the heavier chain: the chain stays on its valid part");
                            self.announce_taken_back(undone);
                            return Err(e);
                        }
                    }
                }
                self.announce_taken_back(undone);
                self.import_again(old, &e);
                return Err(e);
            }
        }
        let mut side = self.side.lock();
        for block in &branch {
            side.blocks.remove(&block.header.hash_slow());
        }
        // Our old blocks are the competing ones now.
        for (b, _) in old {
            let hash = b.header.hash_slow();
            side.insert(hash, Arc::new(b));
        }
        Ok(Competing::Reorganised(self.head().header.number))
    }

    /// Announces the blocks taken back (given from the head down), if any, and returns them
    /// from the oldest on with their senders, to import again.
    fn announce_taken_back(
        &self,
        mut removed: Vec<(StoredBlock, Vec<ReceiptEnvelope>)>,
    ) -> Vec<(Block<TxEnvelope>, Vec<Address>)> {
        removed.reverse();
        let blocks = blocks_of(&removed);
        if !removed.is_empty() {
            let _ = self.reorgs.send(Arc::new(Reorg { removed }));
        }
        blocks
    }

    /// Imports again, in order, blocks a reorganisation took back before it failed with
    /// `cause`, with their stored senders; a block that cannot be is logged, and sync brings it
    /// and the ones after it again.
    fn import_again(&self, blocks: Vec<(Block<TxEnvelope>, Vec<Address>)>, cause: &ChainError) {
        for (block, senders) in blocks {
            let number = block.header.number;
            if let Err(e) = self.import_locked(block, Prepared::with_senders(Some(senders)), true) {
                tracing::error!(target: "l2node::chain", error = %e, cause = %cause, number, "cannot import again a block taken back by a failed reorganisation: the head stays lower");
                return;
            }
        }
    }

    /// Takes back the head block `number`: executes it again on its parent's state to know
    /// what it changed, then unwinds storage and moves the head to the parent.
    fn unwind_locked(
        &self,
        number: u64,
    ) -> Result<(StoredBlock, Vec<ReceiptEnvelope>), ChainError> {
        #[cfg(test)]
        if self.fail_unwind_at.lock().is_some_and(|n| n == number) {
            return Err(l2node_storage::StorageError::Io(std::io::Error::other(
                "injected unwind failure",
            ))
            .into());
        }
        let spec = self.spec();
        // One read, checked: the Karma delta below needs every receipt (a slash is a log).
        let (stored, receipts) = self
            .storage
            .block_with_receipts(number)?
            .ok_or_else(|| missing(number))?;
        let parent = self
            .storage
            .header(number - 1)?
            .ok_or_else(|| missing(number - 1))?;
        let block = stored.to_block();
        let senders = recover_senders(number, &block.body.transactions)?;
        let state = self.storage.state_at(Some(number - 1))?;
        let out = executor::execute_block(&spec, &state, &block, &senders, None)
            .map_err(|source| ChainError::Exec { number, source })?;
        let karma = match &self.ledger {
            Some(ledger) => ledger.block_delta(
                &self.storage.ledger_at(Some(number - 1))?,
                &state,
                &block.header,
                &block.body.transactions,
                &senders,
                &receipts,
            )?,
            None => Default::default(),
        };
        drop(state);
        self.storage
            .unwind_head(number, &out.changes, &karma, parent.state_root)?;
        if let Some(td) = self.total_difficulty.lock().as_mut() {
            *td -= stored.header.difficulty;
        }
        *self.head.write() = Arc::new(Head {
            hash: parent.hash_slow(),
            header: parent,
        });
        Ok((stored, receipts))
    }
}

/// The blocks and senders of blocks taken back, to import them again.
fn blocks_of(
    removed: &[(StoredBlock, Vec<ReceiptEnvelope>)],
) -> Vec<(Block<TxEnvelope>, Vec<Address>)> {
    removed
        .iter()
        .map(|(b, _)| (b.to_block(), b.senders.clone()))
        .collect()
}

fn missing(number: u64) -> ChainError {
    ChainError::Storage(l2node_storage::StorageError::Corrupt {
        table: "headers",
        reason: format!("block {number} is missing"),
    })
}
