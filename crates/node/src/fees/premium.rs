//! The premium fee of `l2_estimateGas` (the formula: `fees::pricing`): the standard fee of the
//! transaction's compressed size at the head's published pricing inputs, and never below the
//! premium threshold.

use alloy_primitives::Address;
use alloy_rpc_types_eth::TransactionRequest;

use super::pricing::{self, PricingInputs};
use crate::karma::KarmaConfig;

/// What the premium priority fee is computed from.
#[derive(Debug, Clone, Copy)]
pub struct PremiumQuote<'a> {
    /// The chain's Karma section (threshold, margin, fallback pricing inputs).
    pub karma: &'a KarmaConfig,
    /// The head block's extraData: its vanity carries the sequencer's pricing inputs.
    pub head_extra_data: &'a [u8],
    /// EIP-155 chain id.
    pub chain_id: u64,
}

impl PremiumQuote<'_> {
    /// The pricing inputs in force: the head's, or the configured ones before the first
    /// priced block.
    pub fn inputs(&self) -> PricingInputs {
        PricingInputs::from_extra_data(self.head_extra_data)
            .unwrap_or_else(|| PricingInputs::from_params(&self.karma.fees))
    }

    /// Priority fee per gas of the call `req` from `from` with `nonce` and `gas_limit`:
    /// `max(standard fee, premium threshold)`.
    pub fn priority_fee(
        &self,
        req: &TransactionRequest,
        from: Address,
        nonce: u64,
        gas_limit: u64,
    ) -> u128 {
        let rlp = pricing::unsigned_tx_rlp(req, self.chain_id, nonce, gas_limit);
        let size = pricing::compressed_size(from, &rlp);
        let standard = pricing::standard_fee(
            &self.inputs(),
            size,
            gas_limit,
            self.karma.fees.margin_percent,
        );
        let threshold = u128::try_from(self.karma.premium_threshold).unwrap_or(u128::MAX);
        pricing::premium_priority_fee(standard, threshold)
    }
}
