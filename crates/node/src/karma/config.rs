//! The typed `karma` section of a genesis config (`config.karma`): contract addresses, the
//! initial tiers, the epoch, the quota unit, the premium threshold and the fee parameters.
//! Parsed once at start; a malformed section is refused with the path of the bad field.

use alloy_primitives::{Address, U256};
use serde::{Deserialize, Serialize};

use crate::constants::{
    KARMA_DEFAULT_EPOCH_LENGTH, KARMA_DEFAULT_PREMIUM_THRESHOLD_WEI, KARMA_DEFAULT_QUOTA_UNIT_GAS,
};
use l2node_trie::state::KarmaTier;

/// `config.karma` of the genesis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KarmaConfig {
    /// The `Karma` token contract.
    pub karma_contract: Address,
    /// The `KarmaTiers` contract.
    pub tiers_contract: Address,
    /// Tiers in force from genesis until the first epoch after a `TiersUpdated`.
    #[serde(default = "default_tiers")]
    pub tiers: Vec<KarmaTier>,
    /// Epoch (quota window) length in seconds of block time.
    #[serde(default = "default_epoch_length")]
    pub epoch_length: u64,
    /// Block timestamp at which epoch 0 starts (0 = the Unix epoch: epochs are UTC days).
    #[serde(default)]
    pub epoch_origin: u64,
    /// Gas per quota unit: a transaction uses 1 unit up to this much gas, else
    /// `floor(gas / quotaUnitGas)`.
    #[serde(default = "default_quota_unit")]
    pub quota_unit_gas: u64,
    /// Effective gas price (wei) from which a transaction is premium.
    #[serde(default = "default_threshold")]
    pub premium_threshold: U256,
    /// Inputs of the premium fee formula.
    #[serde(default)]
    pub fees: FeeParams,
}

/// The inputs of the premium fee formula (`fees::pricing`), as the sequencer publishes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeeParams {
    /// Fixed cost per gas, kwei.
    pub fixed_cost_kwei: u32,
    /// The L2 gas price, kwei.
    pub l2_gas_price_kwei: u32,
    /// L1 gas price = L2 gas price x this ratio.
    pub gas_price_ratio: u64,
    /// L1 gas to verify one batch.
    pub verification_gas_cost: u64,
    /// Compressed bytes one batch verification covers.
    pub verification_capacity: u64,
    /// Safety margin on the standard fee, percent (120 = x1.2).
    pub margin_percent: u64,
}

impl Default for FeeParams {
    fn default() -> Self {
        use crate::constants::*;
        Self {
            fixed_cost_kwei: KARMA_DEFAULT_FIXED_COST_KWEI,
            l2_gas_price_kwei: KARMA_DEFAULT_L2_GAS_PRICE_KWEI,
            gas_price_ratio: KARMA_DEFAULT_GAS_PRICE_RATIO,
            verification_gas_cost: KARMA_DEFAULT_VERIFICATION_GAS_COST,
            verification_capacity: KARMA_DEFAULT_VERIFICATION_CAPACITY,
            margin_percent: KARMA_DEFAULT_MARGIN_PERCENT,
        }
    }
}

fn default_tiers() -> Vec<KarmaTier> {
    default_tier_table()
}
fn default_epoch_length() -> u64 {
    KARMA_DEFAULT_EPOCH_LENGTH
}
fn default_quota_unit() -> u64 {
    KARMA_DEFAULT_QUOTA_UNIT_GAS
}
fn default_threshold() -> U256 {
    U256::from(KARMA_DEFAULT_PREMIUM_THRESHOLD_WEI)
}

/// One KARMA in wei (18 decimals).
pub const ONE_KARMA: U256 = U256::from_limbs([1_000_000_000_000_000_000, 0, 0, 0]);

/// The network's default tier table (README, "Karma"): contiguous, inclusive bounds, `entry`
/// is exactly 1 KARMA.
pub fn default_tier_table() -> Vec<KarmaTier> {
    // (name, lower bound in whole KARMA, quota); each tier ends 1 wei below the next one's
    // bound, `entry` is exactly 1 KARMA and `newbie` starts 1 wei above it.
    let table: [(&str, u64, u32); 11] = [
        ("none", 0, 0),
        ("entry", 1, 2),
        ("newbie", 1, 6),
        ("basic", 50, 16),
        ("active", 500, 96),
        ("regular", 5_000, 480),
        ("power", 20_000, 960),
        ("pro", 100_000, 10_080),
        ("high-throughput", 500_000, 108_000),
        ("s-tier", 5_000_000, 240_000),
        ("legendary", 10_000_000, 480_000),
    ];
    let mins: Vec<U256> = table
        .iter()
        .map(|(name, k, _)| U256::from(*k) * ONE_KARMA + U256::from(u8::from(*name == "newbie")))
        .collect();
    table
        .iter()
        .enumerate()
        .map(|(i, (name, _, quota))| KarmaTier {
            min_karma: mins[i],
            max_karma: mins
                .get(i + 1)
                .map_or(U256::MAX, |next| *next - U256::from(1)),
            name: (*name).to_owned(),
            tx_per_epoch: *quota,
        })
        .collect()
}

/// A `karma` section that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid config.karma.{field}: {reason}")]
pub struct KarmaConfigError {
    /// Path of the bad field inside `config.karma`.
    pub field: String,
    /// What is wrong and how to fix it.
    pub reason: String,
}

impl KarmaConfig {
    /// Parses and checks `config.karma`.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, KarmaConfigError> {
        let cfg: KarmaConfig =
            serde_path_to_error::deserialize(value).map_err(|e| KarmaConfigError {
                field: e.path().to_string(),
                reason: e.inner().to_string(),
            })?;
        cfg.validate()?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), KarmaConfigError> {
        let bad = |field: &str, reason: String| {
            Err(KarmaConfigError {
                field: field.to_owned(),
                reason,
            })
        };
        if self.epoch_length == 0 {
            return bad("epochLength", "must be at least 1 second".into());
        }
        if self.quota_unit_gas == 0 {
            return bad("quotaUnitGas", "must be at least 1 gas".into());
        }
        if self.fees.verification_capacity == 0 {
            return bad(
                "fees.verificationCapacity",
                "must be at least 1 byte".into(),
            );
        }
        if let Err((i, reason)) = check_tiers(&self.tiers) {
            return bad(&format!("tiers[{i}]"), reason);
        }
        Ok(())
    }
}

/// Most tiers `KarmaTiers` holds (its tier ids are `uint8`).
pub const MAX_TIERS: usize = 255;

/// `KarmaTiers.updateTiers`'s rules: at most [`MAX_TIERS`], non-empty, the first starts at 0, each starts 1 wei above
/// the previous one's maximum, `max >= min`, a name of 1..=32 bytes. On failure, the index of
/// the bad tier and the rule it breaks.
pub fn check_tiers(tiers: &[KarmaTier]) -> Result<(), (usize, String)> {
    if tiers.is_empty() {
        return Err((
            0,
            "the tier list is empty; give at least one tier starting at 0".into(),
        ));
    }
    for (i, t) in tiers.iter().enumerate() {
        if t.name.is_empty() || t.name.len() > 32 {
            return Err((
                i,
                format!("name must be 1 to 32 bytes, got {}", t.name.len()),
            ));
        }
        if t.max_karma < t.min_karma {
            return Err((
                i,
                format!("maxKarma {} is below minKarma {}", t.max_karma, t.min_karma),
            ));
        }
        let expected = match i {
            0 => U256::ZERO,
            _ => match tiers[i - 1].max_karma.checked_add(U256::from(1)) {
                Some(v) => v,
                None => return Err((i, "the previous tier already ends at the maximum".into())),
            },
        };
        if t.min_karma != expected {
            return Err((
                i,
                format!(
                    "minKarma must be {expected} (contiguous with the previous tier), got {}",
                    t.min_karma
                ),
            ));
        }
    }
    Ok(())
}
