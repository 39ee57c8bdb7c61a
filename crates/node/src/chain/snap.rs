//! Joining the chain from a state snapshot (`--syncmode snap`): the chain's side of it. The
//! network side (which peers, which chunks) is `p2p::snap`; the checks of each chunk against
//! the state root are the storage's and the trie's (`l2node_trie::snap`).

use std::sync::Arc;

use alloy_consensus::Header;

use super::{clique, Chain, ChainError, Head};
use l2node_trie::snap::{ChunkPlan, TopNode};

impl Chain {
    /// Whether this node can join from a snapshot: it holds the genesis block only (or a
    /// snapshot was being written when it stopped), on a Clique chain (whose headers carry the
    /// seal a snapshot's block is checked with) that does not await the merge.
    pub fn can_join_from_snapshot(&self) -> Result<bool, ChainError> {
        Ok(self.spec().clique.is_some()
            && self.spec().awaits_merge().is_none()
            && self.storage.can_take_snapshot()?)
    }

    /// Checks the header of a snapshot's block: sealed by one of the chain's signers.
    pub fn check_snapshot_header(&self, header: &Header) -> Result<(), ChainError> {
        let signer = clique::signer(header)?;
        if !self.signers.contains(&signer) {
            return Err(clique::SealError::Unauthorized {
                number: header.number,
                signer,
            }
            .into());
        }
        Ok(())
    }

    /// Clears the state to write a snapshot of block `number` (see
    /// [`Chain::can_join_from_snapshot`], checked again here).
    pub fn snapshot_begin(&self, number: u64) -> Result<(), ChainError> {
        let _guard = self.write.lock();
        if !self.storage.can_take_snapshot()? {
            return Err(ChainError::Snapshot(
                "this database already holds blocks after genesis".into(),
            ));
        }
        self.storage.snap_begin(number)?;
        Ok(())
    }

    /// Stores one chunk of the snapshot of block `number` (its pages in order) if its accounts
    /// rebuild the subtrie `plan` names; `Ok(Err(why))` otherwise. Returns the chunk's
    /// accounts.
    pub fn snapshot_write_chunk(
        &self,
        number: u64,
        plan: &ChunkPlan,
        pages: &[alloy_primitives::Bytes],
    ) -> Result<Result<usize, String>, ChainError> {
        Ok(self.storage.snap_write_chunk(number, plan, pages)?)
    }

    /// Completes the snapshot once every chunk is in: the top of the trie is written and the
    /// last of `headers` (the snapshot's block, checked with [`Chain::check_snapshot_header`])
    /// becomes the head; imports continue from it.
    pub fn snapshot_finish(
        &self,
        headers: &[Header],
        top: &[TopNode],
        tiers: Option<(u64, Vec<u8>)>,
    ) -> Result<(), ChainError> {
        let _guard = self.write.lock();
        let last = headers
            .last()
            .ok_or_else(|| ChainError::Snapshot("no header".into()))?;
        self.storage
            .snap_finish(headers, top, tiers)?
            .map_err(ChainError::Snapshot)?;
        *self.head.write() = Arc::new(Head {
            header: last.clone(),
            hash: last.hash_slow(),
        });
        Ok(())
    }
}
