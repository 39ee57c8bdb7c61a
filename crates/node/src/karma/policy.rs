//! The Karma rules as pure functions (README, "Karma"): epochs, tiers, quota units, the
//! gasless/premium split, and what a transaction does to its sender's ledger entry. The ledger
//! (chain data) and admission (pool, block building, estimates) both go through [`admit`] and
//! [`record`], so what is admitted is exactly what the ledger will count.

use alloy_primitives::U256;

use l2node_trie::state::{DenyEntry, DenyReason, KarmaTier, KarmaUsage};

/// Epoch arithmetic: epoch `e` covers block timestamps `origin + e*length ..
/// origin + (e+1)*length` (a timestamp equal to the end belongs to the next epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Epochs {
    /// Epoch length, seconds (> 0).
    pub length: u64,
    /// Start of epoch 0 (earlier timestamps count as epoch 0).
    pub origin: u64,
}

impl Epochs {
    /// The epoch of a block timestamp.
    pub fn of(&self, timestamp: u64) -> u64 {
        timestamp.saturating_sub(self.origin) / self.length
    }

    /// The first timestamp after `epoch`: when its quotas refresh.
    pub fn ends_at(&self, epoch: u64) -> u64 {
        self.origin
            .saturating_add(epoch.saturating_add(1).saturating_mul(self.length))
    }
}

/// The tier of a balance: the one with `min_karma <= balance <= max_karma` (tiers are contiguous
/// from 0, so a balance above the last maximum keeps the last tier).
pub fn tier_of(balance: U256, tiers: &[KarmaTier]) -> Option<(usize, &KarmaTier)> {
    let i = tiers
        .partition_point(|t| t.min_karma <= balance)
        .checked_sub(1)?;
    Some((i, &tiers[i]))
}

/// Quota units of a gasless transaction with gas limit `gas`: 1 up to `unit` gas, else
/// `floor(gas / unit)`.
pub fn quota_units(gas: u64, unit: u64) -> u64 {
    if gas <= unit {
        1
    } else {
        gas / unit
    }
}

/// Whether a transaction paying `effective_gas_price` is on the premium path.
pub fn is_premium(effective_gas_price: u128, threshold: U256) -> bool {
    U256::from(effective_gas_price) >= threshold
}

/// One sender's Karma state for one block: the tier its balance buys, the epoch's usage and an
/// active deny entry (expired ones are already dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderState {
    /// The epoch of the block.
    pub epoch: u64,
    /// Quota units the tier gives per epoch (0 without Karma).
    pub tier_quota: u64,
    /// Units used and bonus in this epoch.
    pub usage: KarmaUsage,
    /// The active deny entry, if any.
    pub deny: Option<DenyEntry>,
}

impl SenderState {
    /// Tier quota plus bonus.
    pub fn quota(&self) -> u64 {
        self.tier_quota.saturating_add(self.usage.bonus)
    }

    /// Units left on the gasless path.
    pub fn remaining(&self) -> u64 {
        self.quota().saturating_sub(self.usage.used)
    }
}

/// Why a gasless transaction is refused; each says what the sender can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The kill switch turned every gasless path off.
    GaslessDisabled,
    /// The sender's tier gives no quota.
    NoKarma,
    /// The sender is on the deny list.
    Denied(DenyEntry),
    /// The transaction needs more units than are left.
    OverQuota {
        /// Units it needs.
        needed: u64,
        /// Units left.
        remaining: u64,
    },
}

impl Refusal {
    /// The deny reason a premium quote explains itself with.
    pub fn reason(&self) -> DenyReason {
        match self {
            Refusal::Denied(d) => d.reason,
            Refusal::GaslessDisabled => DenyReason::Operator,
            Refusal::NoKarma | Refusal::OverQuota { .. } => DenyReason::QuotaExceeded,
        }
    }
}

/// What a transaction does to its sender's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effect {
    /// The new usage.
    pub usage: KarmaUsage,
    /// The deny entry after it: `Some(new)` when it changed.
    pub deny: Option<Option<DenyEntry>>,
}

/// Admission: may a transaction on the given path enter? Premium always may; gasless needs the
/// switch on, no active denial and `units` left. On success, the effect of including it.
pub fn admit(
    state: &SenderState,
    premium: bool,
    units: u64,
    gasless_enabled: bool,
) -> Result<Effect, Refusal> {
    if !premium {
        if !gasless_enabled {
            return Err(Refusal::GaslessDisabled);
        }
        if let Some(d) = state.deny {
            return Err(Refusal::Denied(d));
        }
        if state.quota() == 0 {
            return Err(Refusal::NoKarma);
        }
        if units > state.remaining() {
            return Err(Refusal::OverQuota {
                needed: units,
                remaining: state.remaining(),
            });
        }
    }
    Ok(record(state, premium, units))
}

/// The ledger's view of an included transaction (never refuses: a block is a fact). Gasless
/// uses `units`, and the one that reaches the quota deny-lists the sender until the epoch ends;
/// premium clears a `quotaExceeded` entry and adds one tier's quota as bonus.
pub fn record(state: &SenderState, premium: bool, units: u64) -> Effect {
    let mut usage = state.usage;
    let mut deny = None;
    if premium {
        if state
            .deny
            .is_some_and(|d| d.reason == DenyReason::QuotaExceeded)
        {
            usage.bonus = usage.bonus.saturating_add(state.tier_quota);
            deny = Some(None);
        }
    } else {
        usage.used = usage.used.saturating_add(units);
        if state.deny.is_none() && usage.used >= state.tier_quota.saturating_add(usage.bonus) {
            deny = Some(Some(DenyEntry {
                reason: DenyReason::QuotaExceeded,
                until_epoch: state.epoch,
            }));
        }
    }
    Effect { usage, deny }
}

impl SenderState {
    /// The state after `effect`.
    pub fn apply(&mut self, effect: &Effect) {
        self.usage = effect.usage;
        if let Some(d) = effect.deny {
            self.deny = d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karma::config::{default_tier_table, ONE_KARMA};

    const UNIT: u64 = 100_000;

    fn state(tier_quota: u64, used: u64, bonus: u64, deny: Option<DenyReason>) -> SenderState {
        SenderState {
            epoch: 7,
            tier_quota,
            usage: KarmaUsage { used, bonus },
            deny: deny.map(|reason| DenyEntry {
                reason,
                until_epoch: 7,
            }),
        }
    }

    #[test]
    fn tier_boundaries_are_inclusive_and_contiguous() {
        let tiers = default_tier_table();
        let one = U256::from(1);
        let name = |b: U256| tier_of(b, &tiers).unwrap().1.name.clone();
        let cases: [(U256, &str); 12] = [
            (U256::ZERO, "none"),
            (ONE_KARMA - one, "none"),
            (ONE_KARMA, "entry"),
            (ONE_KARMA + one, "newbie"),
            (U256::from(50) * ONE_KARMA - one, "newbie"),
            (U256::from(50) * ONE_KARMA, "basic"),
            (U256::from(500) * ONE_KARMA - one, "basic"),
            (U256::from(500) * ONE_KARMA, "active"),
            (U256::from(5_000_000) * ONE_KARMA, "s-tier"),
            (U256::from(10_000_000) * ONE_KARMA - one, "s-tier"),
            (U256::from(10_000_000) * ONE_KARMA, "legendary"),
            (U256::MAX, "legendary"),
        ];
        for (balance, expected) in cases {
            assert_eq!(name(balance), expected, "balance {balance}");
        }
        // Every bound of the table: 1 wei below is the previous tier, the bound itself is this one.
        for pair in tiers.windows(2) {
            assert_eq!(name(pair[1].min_karma), pair[1].name);
            assert_eq!(name(pair[1].min_karma - one), pair[0].name);
            assert_eq!(name(pair[0].max_karma), pair[0].name);
            assert_eq!(name(pair[0].max_karma + one), pair[1].name);
        }
    }

    #[test]
    fn quota_units_per_gas() {
        for (gas, units) in [
            (21_000, 1),
            (99_999, 1),
            (100_000, 1),
            (100_001, 1),
            (199_999, 1),
            (200_000, 2),
            (250_000, 2),
            (30_000_000, 300),
        ] {
            assert_eq!(quota_units(gas, UNIT), units, "gas {gas}");
        }
    }

    #[test]
    fn epoch_rolls_over_exactly_at_its_end() {
        let e = Epochs {
            length: 86_400,
            origin: 0,
        };
        assert_eq!(e.of(0), 0);
        assert_eq!(e.of(86_399), 0);
        assert_eq!(e.ends_at(0), 86_400);
        assert_eq!(e.of(e.ends_at(0)), 1);
        let shifted = Epochs {
            length: 10,
            origin: 1_000,
        };
        assert_eq!(shifted.of(999), 0);
        assert_eq!(shifted.of(1_019), 1);
        assert_eq!(shifted.of(shifted.ends_at(1)), 2);
    }

    #[test]
    fn premium_from_the_threshold_on() {
        let threshold = U256::from(12_000_000_000u64);
        assert!(!is_premium(0, threshold));
        assert!(!is_premium(11_999_999_999, threshold));
        assert!(is_premium(12_000_000_000, threshold));
    }

    #[test]
    fn admission_table() {
        use Refusal::*;
        let quota_exceeded = |epoch| DenyEntry {
            reason: DenyReason::QuotaExceeded,
            until_epoch: epoch,
        };
        // (state, premium, units, switch on) -> Ok((used, bonus, deny change)) | Err(refusal)
        type Expect = Result<(u64, u64, Option<Option<DenyEntry>>), Refusal>;
        let cases: Vec<(&str, SenderState, bool, u64, bool, Expect)> = vec![
            (
                "no karma is refused",
                state(0, 0, 0, None),
                false,
                1,
                true,
                Err(NoKarma),
            ),
            (
                "first of two is free",
                state(2, 0, 0, None),
                false,
                1,
                true,
                Ok((1, 0, None)),
            ),
            (
                "the one reaching the quota is admitted and deny-lists",
                state(2, 1, 0, None),
                false,
                1,
                true,
                Ok((2, 0, Some(Some(quota_exceeded(7))))),
            ),
            (
                "denied sender is refused",
                state(2, 2, 0, Some(DenyReason::QuotaExceeded)),
                false,
                1,
                true,
                Err(Denied(quota_exceeded(7))),
            ),
            (
                "two units with one left is refused",
                state(2, 1, 0, None),
                false,
                2,
                true,
                Err(OverQuota {
                    needed: 2,
                    remaining: 1,
                }),
            ),
            (
                "premium clears quotaExceeded with a tier of bonus",
                state(2, 2, 0, Some(DenyReason::QuotaExceeded)),
                true,
                1,
                true,
                Ok((2, 2, Some(None))),
            ),
            (
                "bonus quota is gasless again",
                state(2, 2, 2, None),
                false,
                1,
                true,
                Ok((3, 2, None)),
            ),
            (
                "premium keeps an rln denial",
                state(2, 0, 0, Some(DenyReason::RlnViolation)),
                true,
                1,
                true,
                Ok((0, 0, None)),
            ),
            (
                "premium without denial changes nothing",
                state(2, 1, 0, None),
                true,
                5,
                true,
                Ok((1, 0, None)),
            ),
            (
                "kill switch refuses gasless",
                state(2, 0, 0, None),
                false,
                1,
                false,
                Err(GaslessDisabled),
            ),
            (
                "kill switch lets premium in",
                state(0, 0, 0, None),
                true,
                1,
                false,
                Ok((0, 0, None)),
            ),
        ];
        for (name, st, premium, units, on, expected) in cases {
            let got = admit(&st, premium, units, on).map(|e| (e.usage.used, e.usage.bonus, e.deny));
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn entry_tier_scenario() {
        // Entry tier: 2 free, refused, premium, 2 more free (bonus), refused again.
        let mut st = state(2, 0, 0, None);
        for _ in 0..2 {
            let e = admit(&st, false, 1, true).unwrap();
            st.apply(&e);
        }
        assert!(matches!(
            admit(&st, false, 1, true),
            Err(Refusal::Denied(_))
        ));
        let e = admit(&st, true, 1, true).unwrap();
        st.apply(&e);
        assert_eq!((st.deny, st.remaining()), (None, 2));
        for _ in 0..2 {
            let e = admit(&st, false, 1, true).unwrap();
            st.apply(&e);
        }
        assert!(matches!(
            admit(&st, false, 1, true),
            Err(Refusal::Denied(_))
        ));
    }
}
