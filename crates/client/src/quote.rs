//! Fee quotes: what `l2_estimateGas` answered, the transaction fields it gives, and the sender's
//! Karma state that explains them.

use std::time::SystemTime;

use l2node_api::types::{FeeState as WireFeeState, KarmaStatus, L2GasEstimate};

use crate::ClientError;

/// Why a sender pays premium fees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PremiumReason {
    /// The free quota of this window is used up.
    QuotaExceeded,
    /// The sender was slashed under the RLN spam policy.
    RlnViolation,
    /// An operator deny-listed the sender.
    Operator,
    /// The sender holds no Karma, so it has no free quota.
    NoKarma,
    /// Free transactions are off for now (the operator's kill switch), or this transaction
    /// needs more quota than is left.
    GaslessUnavailable,
}

/// The sender's fee state when the quote was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeeState {
    /// Zero fees: the transaction uses free quota.
    Gasless,
    /// Fees above normal apply; they never block the transaction.
    Premium {
        /// Why.
        reason: PremiumReason,
        /// When the quota window refreshes (Unix seconds).
        window_resets_at: u64,
    },
    /// A chain without Karma: ordinary fees.
    Standard,
}

/// A fee quote for one transaction, valid only for the attempt it was taken for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeeQuote {
    /// Gas limit (what eth_estimateGas gives).
    pub gas_limit: u64,
    /// The next block's base fee.
    pub base_fee_per_gas: u128,
    /// Tip per gas: 0 when gasless.
    pub priority_fee_per_gas: u128,
    /// `2 x base_fee_per_gas + priority_fee_per_gas`.
    pub max_fee_per_gas: u128,
    /// The sender's state.
    pub state: FeeState,
    /// When the quote was taken.
    pub taken_at: SystemTime,
}

impl FeeQuote {
    /// A quote from the node's answers (`status` is `None` on a chain without Karma).
    pub fn new(
        estimate: &L2GasEstimate,
        status: Option<&KarmaStatus>,
        taken_at: SystemTime,
    ) -> Result<Self, ClientError> {
        let base = u128::try_from(estimate.base_fee_per_gas).map_err(|_| {
            ClientError::Decode(format!(
                "baseFeePerGas {} exceeds 128 bits",
                estimate.base_fee_per_gas
            ))
        })?;
        let priority = u128::try_from(estimate.priority_fee_per_gas).map_err(|_| {
            ClientError::Decode(format!(
                "priorityFeePerGas {} exceeds 128 bits",
                estimate.priority_fee_per_gas
            ))
        })?;
        Ok(Self {
            gas_limit: estimate.gas_limit.to(),
            base_fee_per_gas: base,
            priority_fee_per_gas: priority,
            max_fee_per_gas: max_fee(base, priority)?,
            state: state_of(priority, status),
            taken_at,
        })
    }

    /// The fee the sender pays at most, in wei: `gas_limit x max_fee_per_gas`.
    pub fn max_cost(&self) -> alloy_primitives::U256 {
        alloy_primitives::U256::from(self.gas_limit)
            * alloy_primitives::U256::from(self.max_fee_per_gas)
    }

    /// Whether the transaction is free.
    pub fn is_gasless(&self) -> bool {
        self.state == FeeState::Gasless
    }
}

/// `maxFeePerGas = 2 x base + priority`, refusing an overflow instead of wrapping.
pub(crate) fn max_fee(base: u128, priority: u128) -> Result<u128, ClientError> {
    base.checked_mul(2)
        .and_then(|b| b.checked_add(priority))
        .ok_or(ClientError::FeeOverflow { base, priority })
}

/// The state a quote stands for: the fee decides gasless; the Karma status explains a premium.
fn state_of(priority: u128, status: Option<&KarmaStatus>) -> FeeState {
    let Some(s) = status else {
        return FeeState::Standard;
    };
    if priority == 0 && s.fee_state == WireFeeState::Gasless {
        return FeeState::Gasless;
    }
    let reason = match s.deny_reason.as_deref() {
        Some("rlnViolation") => PremiumReason::RlnViolation,
        Some("operator") => PremiumReason::Operator,
        Some(_) => PremiumReason::QuotaExceeded,
        None if s.quota.is_zero() => PremiumReason::NoKarma,
        None if s.remaining.is_zero() => PremiumReason::QuotaExceeded,
        None => PremiumReason::GaslessUnavailable,
    };
    let window_resets_at = s
        .denied_until
        .filter(|_| s.denied)
        .unwrap_or(s.epoch_ends_at)
        .to();
    FeeState::Premium {
        reason,
        window_resets_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{U256, U64};
    use l2node_api::types::KarmaTierInfo;

    fn estimate(base: u128, priority: u128) -> L2GasEstimate {
        L2GasEstimate {
            gas_limit: U64::from(21_000),
            base_fee_per_gas: U256::from(base),
            priority_fee_per_gas: U256::from(priority),
        }
    }

    fn status(quota: u64, used: u64, deny: Option<&str>, gasless: bool) -> KarmaStatus {
        KarmaStatus {
            karma: U256::ZERO,
            tier: KarmaTierInfo {
                id: U64::ZERO,
                name: "entry".into(),
                tx_per_epoch: U64::from(quota),
            },
            quota: U64::from(quota),
            bonus: U64::ZERO,
            used: U64::from(used),
            remaining: U64::from(quota.saturating_sub(used)),
            epoch: U64::from(1),
            epoch_ends_at: U64::from(172_800),
            denied: deny.is_some(),
            deny_reason: deny.map(str::to_owned),
            denied_until: deny.map(|_| U64::from(172_800)),
            fee_state: if gasless {
                WireFeeState::Gasless
            } else {
                WireFeeState::Premium
            },
        }
    }

    #[test]
    fn gasless_quote_has_zero_fees() {
        let q = FeeQuote::new(
            &estimate(0, 0),
            Some(&status(2, 0, None, true)),
            SystemTime::now(),
        )
        .unwrap();
        assert_eq!((q.max_fee_per_gas, q.state), (0, FeeState::Gasless));
        assert!(q.is_gasless());
    }

    #[test]
    fn premium_reason_for_each_state() {
        let gwei12 = 12_000_000_000;
        for (st, reason) in [
            (
                status(2, 2, Some("quotaExceeded"), false),
                PremiumReason::QuotaExceeded,
            ),
            (
                status(2, 0, Some("rlnViolation"), false),
                PremiumReason::RlnViolation,
            ),
            (
                status(2, 0, Some("operator"), false),
                PremiumReason::Operator,
            ),
            (status(0, 0, None, false), PremiumReason::NoKarma),
            (status(2, 2, None, false), PremiumReason::QuotaExceeded),
            (status(2, 0, None, false), PremiumReason::GaslessUnavailable),
        ] {
            let q = FeeQuote::new(&estimate(7, gwei12), Some(&st), SystemTime::now()).unwrap();
            assert_eq!(
                q.state,
                FeeState::Premium {
                    reason,
                    window_resets_at: 172_800
                },
                "{st:?}"
            );
            assert_eq!(q.max_fee_per_gas, 14 + gwei12);
        }
    }

    #[test]
    fn chain_without_karma_is_standard() {
        let q = FeeQuote::new(&estimate(1, 2), None, SystemTime::now()).unwrap();
        assert_eq!((q.state, q.max_fee_per_gas), (FeeState::Standard, 4));
    }

    #[test]
    fn max_fee_arithmetic_is_checked() {
        assert_eq!(max_fee(5, 3).unwrap(), 13);
        assert_eq!(max_fee(u128::MAX / 2, 1).unwrap(), u128::MAX);
        assert!(matches!(
            max_fee(u128::MAX / 2 + 1, 0),
            Err(ClientError::FeeOverflow { .. })
        ));
        assert!(matches!(
            max_fee(u128::MAX / 2, 2),
            Err(ClientError::FeeOverflow { .. })
        ));
        let huge = L2GasEstimate {
            gas_limit: U64::from(1),
            base_fee_per_gas: U256::MAX,
            priority_fee_per_gas: U256::ZERO,
        };
        assert!(matches!(
            FeeQuote::new(&huge, None, SystemTime::now()),
            Err(ClientError::Decode(_))
        ));
    }
}
