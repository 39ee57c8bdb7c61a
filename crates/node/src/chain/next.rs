//! The next block's context: computed once from the head by [`Chain::next_block`] and shared by
//! the miner (the attributes of the block it builds), the pool (the rules a transaction must
//! pass to fit that block) and the `pending` block of the RPC.

use std::sync::Arc;

use alloy_primitives::Address;

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

impl Chain {
    /// The context of the block after the current head, timestamped now.
    pub fn next_block(&self) -> NextBlock {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        self.next_block_at(now)
    }

    /// The context of the block after the current head at time `now` (seconds; raised to one
    /// second after the parent when the clock is behind).
    pub fn next_block_at(&self, now: u64) -> NextBlock {
        let parent = self.head();
        let spec = self.spec();
        let timestamp = now.max(parent.header.timestamp + 1);
        NextBlock {
            number: parent.header.number + 1,
            timestamp,
            base_fee: spec.next_base_fee(&parent.header),
            gas_limit: super::validate::parent_gas_limit(&spec, &parent.header),
            chain_id: spec.chain_id,
            shanghai: spec.is_shanghai_active_at(timestamp),
            prague: spec.is_prague_active_at(timestamp),
            parent,
        }
    }
}
