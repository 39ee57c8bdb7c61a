//! The next block's context: computed once from the head by [`Chain::next_block`] and shared by
//! the miner (the attributes of the block it builds), the pool (the rules a transaction must
//! pass to fit that block) and the `pending` block of the RPC.

use std::sync::{
    atomic::{AtomicI64, Ordering},
    Arc,
};

use parking_lot::Mutex;

use crate::constants::MAX_DEV_TIMESTAMP;

use alloy_primitives::Address;

use alloy_consensus::BlockHeader as _;
use alloy_hardforks::EthereumHardforks as _;

use super::{Chain, Head};
use crate::executor::BuildAttributes;

/// What the block after the current head will be built with.
#[derive(Debug, Clone)]
pub struct NextBlock {
    /// The head it builds on.
    pub parent: Arc<Head>,
    /// Its number.
    pub number: u64,
    /// Its timestamp: now, but always after the parent.
    pub timestamp: u64,
    /// Its base fee (the chain's base-fee rule applied to the parent).
    pub base_fee: u64,
    /// Its gas limit: the parent's (the sequencer keeps the limit of genesis), doubled in
    /// London's activation block so that the gas target stays the old limit (EIP-1559).
    pub gas_limit: u64,
    /// This network's chain id (EIP-155).
    pub chain_id: u64,
    /// Shanghai active: EIP-3860 initcode metering and size limit.
    pub shanghai: bool,
    /// Prague active: EIP-7702 transactions and the EIP-7623 calldata floor.
    pub prague: bool,
    /// Osaka active: EIP-7825's per-transaction gas cap, EIP-7594 blob sidecars.
    pub osaka: bool,
    /// From Cancun, the blob parameters in force and the block's blob base fee.
    pub blobs: Option<(alloy_eips::eip7840::BlobParams, u128)>,
}

impl NextBlock {
    /// The executor's inputs for building this block (the seal is added at commit).
    pub fn attributes(&self) -> BuildAttributes {
        BuildAttributes {
            timestamp: self.timestamp,
            beneficiary: Address::ZERO,
            extra_data: Default::default(),
            gas_limit: self.gas_limit,
            ..Default::default()
        }
    }
}

/// The sequencer's clock: the wall clock, moved forward by the dev methods
/// `evm_increaseTime` and `evm_setNextBlockTimestamp` (as anvil's). Only block timestamps read
/// it, so followers need nothing of it: they take the timestamps from the blocks.
#[derive(Debug, Default)]
pub struct Clock {
    /// Seconds added to the wall clock.
    offset: AtomicI64,
    /// The exact timestamp of the next block, once.
    next_exact: Mutex<Option<u64>>,
}

impl Clock {
    fn wall() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs() as i64
    }

    /// Now, in seconds, as the next block would be stamped (before the parent rule).
    pub fn now(&self) -> u64 {
        if let Some(exact) = *self.next_exact.lock() {
            return exact;
        }
        (Self::wall() + self.offset.load(Ordering::Relaxed)).max(0) as u64
    }

    /// Moves the clock `seconds` forward (`evm_increaseTime`); returns the total offset, or
    /// `None` (and leaves the clock) when that would take it past [`MAX_DEV_TIMESTAMP`].
    pub fn increase(&self, seconds: u64) -> Option<i64> {
        let later = self.now().checked_add(seconds)?;
        if later > MAX_DEV_TIMESTAMP {
            return None;
        }
        let seconds = seconds as i64; // below MAX_DEV_TIMESTAMP, so it fits
        Some(self.offset.fetch_add(seconds, Ordering::Relaxed) + seconds)
    }

    /// Stamps the next block `timestamp` (`evm_setNextBlockTimestamp`); later blocks continue
    /// from it.
    pub fn set_next(&self, timestamp: u64) {
        *self.next_exact.lock() = Some(timestamp);
    }

    /// A block stamped `timestamp` was sealed: the exact timestamp it used is used up, and the
    /// clock continues from it (anvil's rule). One set while the block was being built (another
    /// value) waits for the next block.
    pub fn sealed(&self, timestamp: u64) {
        let mut next = self.next_exact.lock();
        if *next == Some(timestamp) {
            *next = None;
            self.offset
                .store(timestamp as i64 - Self::wall(), Ordering::Relaxed);
        }
    }
}

impl Chain {
    /// The context of the block after the current head, timestamped by [`Chain::clock`].
    pub fn next_block(&self) -> NextBlock {
        self.next_block_at(self.clock().now())
    }

    /// The context of the block after the current head at time `now` (seconds; raised to one
    /// second after the parent when the clock is behind).
    pub fn next_block_at(&self, now: u64) -> NextBlock {
        let parent = self.head();
        let spec = self.spec();
        // Saturating: a parent dated at the last representable second must not make its
        // child's timestamp wrap around to 1970.
        let timestamp = now.max(parent.header.timestamp.saturating_add(1));
        NextBlock {
            number: parent.header.number + 1,
            timestamp,
            base_fee: spec.next_base_fee(&parent.header),
            gas_limit: super::validate::parent_gas_limit(&spec, &parent.header),
            chain_id: spec.chain_id,
            shanghai: spec.is_shanghai_active_at(timestamp),
            prague: spec.is_prague_active_at(timestamp),
            osaka: spec.is_osaka_active_at_timestamp(timestamp),
            blobs: spec.blob_params_at(timestamp).and_then(|params| {
                let fee = parent.header.maybe_next_block_blob_fee(Some(params))?;
                Some((params, fee))
            }),
            parent,
        }
    }
}
