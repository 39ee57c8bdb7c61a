//! How `estimate` and `send` show a fee quote: text for people (what it costs, why a premium
//! applies, when the quota window refreshes, in local time) or one JSON object for programs.

use std::{
    fmt::Write as _,
    time::{SystemTime, UNIX_EPOCH},
};

use alloy_primitives::{Address, U256};
use l2node_client::{api::types::KarmaStatus, FeeQuote, FeeState, PremiumReason};
use serde_json::{json, Value};

/// The chain's native token.
pub(crate) const NATIVE: &str = "ETH";

/// ANSI styling, on only when the stream is a terminal (and `NO_COLOR` is unset).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    on: bool,
}

impl Style {
    /// Styling for a stream that is (`terminal`) or is not a terminal.
    pub(crate) fn new(terminal: bool) -> Self {
        Self {
            on: terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn paint(self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }

    pub(crate) fn green(self, s: &str) -> String {
        self.paint("1;32", s)
    }
    pub(crate) fn yellow(self, s: &str) -> String {
        self.paint("1;33", s)
    }
    pub(crate) fn red(self, s: &str) -> String {
        self.paint("1;31", s)
    }
    pub(crate) fn dim(self, s: &str) -> String {
        self.paint("2", s)
    }
}

/// `n` with thousands separators: `480,000`.
pub(crate) fn grouped(n: impl std::fmt::Display) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `wei / 10^decimals` in decimal, without trailing zeros: `0.000252`, `12`, `1.5`.
pub(crate) fn decimal(wei: U256, decimals: usize) -> String {
    let digits = wei.to_string();
    let (int, frac) = if digits.len() > decimals {
        let (i, f) = digits.split_at(digits.len() - decimals);
        (i.to_owned(), f.to_owned())
    } else {
        ("0".to_owned(), format!("{digits:0>decimals$}"))
    };
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int
    } else {
        format!("{int}.{frac}")
    }
}

/// Wei as the native token: `0.000252 ETH`.
pub(crate) fn eth(wei: U256) -> String {
    format!("{} {NATIVE}", decimal(wei, 18))
}

/// Wei as gwei: `12 gwei`.
pub(crate) fn gwei(wei: u128) -> String {
    format!("{} gwei", decimal(U256::from(wei), 9))
}

/// A duration in whole units, largest first: `3h 12m`, `1d 2h`, `45s`.
pub(crate) fn duration(secs: u64) -> String {
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, m) => format!("{h}h {m}m"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

/// Unix seconds as local time (the machine's time zone: `TZ` or /etc/localtime).
pub(crate) fn local_time(unix: u64) -> String {
    match jiff::Timestamp::from_second(i64::try_from(unix).unwrap_or(i64::MAX)) {
        Ok(ts) => ts
            .to_zoned(jiff::tz::TimeZone::system())
            .strftime("%Y-%m-%d %H:%M:%S %Z")
            .to_string(),
        Err(_) => format!("unix time {unix}"),
    }
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// "at <local time> (in <duration>)".
fn when(resets_at: u64, now: SystemTime) -> String {
    let left = resets_at.saturating_sub(unix(now));
    if left == 0 {
        format!("at {}, now", local_time(resets_at))
    } else {
        format!("at {}, in {}", local_time(resets_at), duration(left))
    }
}

/// Quota units a transaction of `gas_limit` uses (the node's rule, at the default unit size).
fn quota_units(gas_limit: u64) -> u64 {
    l2node_node::karma::policy::quota_units(
        gas_limit,
        l2node_node::constants::KARMA_DEFAULT_QUOTA_UNIT_GAS,
    )
}

/// The camelCase name of a premium reason (as the node names deny reasons).
pub(crate) fn reason_name(r: PremiumReason) -> &'static str {
    match r {
        PremiumReason::QuotaExceeded => "quotaExceeded",
        PremiumReason::RlnViolation => "rlnViolation",
        PremiumReason::Operator => "operator",
        PremiumReason::NoKarma => "noKarma",
        PremiumReason::GaslessUnavailable => "gaslessUnavailable",
    }
}

fn state_name(s: FeeState) -> &'static str {
    match s {
        FeeState::Gasless => "gasless",
        FeeState::Premium { .. } => "premium",
        FeeState::Standard => "standard",
    }
}

/// Why a premium applies, as a sentence.
fn why(reason: PremiumReason, status: Option<&KarmaStatus>) -> String {
    let tier = status
        .filter(|s| !s.tier.name.is_empty())
        .map(|s| format!("the {} tier", s.tier.name))
        .unwrap_or_else(|| "its tier".to_owned());
    match reason {
        PremiumReason::QuotaExceeded => match status {
            Some(s) => format!(
                "the sender has used up the free quota of {tier} ({} of {} used in this window).",
                grouped(s.used),
                grouped(s.quota)
            ),
            None => "the sender has used up the free quota of its tier for this window.".into(),
        },
        PremiumReason::RlnViolation => {
            "the sender violated the RLN spam policy and was slashed: no free transactions until the window refreshes.".into()
        }
        PremiumReason::Operator => "the operator put the sender on the deny list.".into(),
        PremiumReason::NoKarma => {
            "the sender holds no Karma, so it has no free transactions.".into()
        }
        PremiumReason::GaslessUnavailable => match status {
            Some(s) if !s.remaining.is_zero() => format!(
                "free transactions are unavailable right now (switched off by the operator, or this \
                 transaction needs more quota than the {} left).",
                grouped(s.remaining)
            ),
            _ => "free transactions are unavailable right now (switched off by the operator).".into(),
        },
    }
}

/// The fee: `Premium fee: 0.000252 ETH at most (21,000 gas x 12 gwei)` and the per-gas fields.
fn fee_lines(label: &str, q: &FeeQuote, st: Style, out: &mut String) {
    let head = format!(
        "{label}: {} at most ({} gas x {})",
        eth(q.max_cost()),
        grouped(q.gas_limit),
        gwei(q.max_fee_per_gas)
    );
    let _ = writeln!(
        out,
        "{}\n  priority fee {} per gas, max fee {} per gas (base fee {})",
        if label == "Fee" {
            head
        } else {
            st.yellow(&head)
        },
        gwei(q.priority_fee_per_gas),
        gwei(q.max_fee_per_gas),
        gwei(q.base_fee_per_gas)
    );
}

/// What the sender is about to send: shown above a quote.
pub(crate) struct Summary<'a> {
    /// The sender.
    pub from: Address,
    /// The recipient (`None`: contract creation).
    pub to: Option<Address>,
    /// Value in wei.
    pub value: U256,
    /// Calldata length.
    pub data_len: usize,
    /// The sender's Karma, when the node told it.
    pub status: Option<&'a KarmaStatus>,
}

/// The quote as text, for people.
pub(crate) fn render_text(sum: &Summary<'_>, q: &FeeQuote, now: SystemTime, st: Style) -> String {
    let mut out = String::new();
    let row = |out: &mut String, k: &str, v: String| {
        let _ = writeln!(out, "{} {v}", st.dim(&format!("{k:<10}")));
    };
    row(&mut out, "From", sum.from.to_string());
    row(
        &mut out,
        "To",
        sum.to
            .map_or_else(|| "(new contract)".to_owned(), |a| a.to_string()),
    );
    row(&mut out, "Value", eth(sum.value));
    if sum.data_len > 0 {
        let unit = if sum.data_len == 1 { "byte" } else { "bytes" };
        row(
            &mut out,
            "Data",
            format!("{} {unit}", grouped(sum.data_len)),
        );
    }
    row(&mut out, "Gas limit", grouped(q.gas_limit));
    match q.state {
        FeeState::Gasless => {
            let units = quota_units(q.gas_limit);
            let left = sum.status.map_or_else(String::new, |s| {
                let tier = if s.tier.name.is_empty() {
                    String::new()
                } else {
                    format!("{} tier: ", s.tier.name)
                };
                // The bonus a premium transaction added, said where it is part of the quota.
                let bonus = if s.bonus.is_zero() {
                    String::new()
                } else {
                    format!(
                        ": {} free + {} bonus after your premium transaction",
                        grouped(s.tier.tx_per_epoch),
                        grouped(s.bonus)
                    )
                };
                format!(
                    " ({tier}{} of {} left{bonus}; the window refreshes {})",
                    grouped(s.remaining),
                    grouped(s.quota),
                    when(s.epoch_ends_at.to(), now)
                )
            });
            let _ = writeln!(
                out,
                "{} Uses {units} of your Karma quota{left}.",
                st.green("Free transaction: no fee.")
            );
        }
        FeeState::Premium {
            reason,
            window_resets_at,
        } => {
            fee_lines("Premium fee", q, st, &mut out);
            let _ = writeln!(out, "Why: {}", why(reason, sum.status));
            let then = when(window_resets_at, now);
            let _ = match reason {
                PremiumReason::NoKarma => writeln!(
                    out,
                    "You can pay the premium now, or wait until the window refreshes {then} \
                     (without Karma it stays premium)."
                ),
                PremiumReason::Operator => writeln!(
                    out,
                    "You can pay the premium now, or wait until the window refreshes {then} \
                     (when the denial ends)."
                ),
                PremiumReason::GaslessUnavailable => writeln!(
                    out,
                    "You can pay the premium now, or wait until the window refreshes {then} \
                     and try again."
                ),
                PremiumReason::QuotaExceeded | PremiumReason::RlnViolation => writeln!(
                    out,
                    "You can pay the premium now, or wait until the window refreshes {then} \
                     (then it is free)."
                ),
            };
        }
        FeeState::Standard => {
            fee_lines("Fee", q, st, &mut out);
        }
    }
    out
}

/// Hex quantity, as JSON-RPC writes numbers.
fn qty(n: impl std::fmt::LowerHex) -> String {
    format!("{n:#x}")
}

/// The quote as JSON (the field names and hex quantities of `l2_estimateGas`, plus the state).
pub(crate) fn quote_json(from: Address, q: &FeeQuote) -> Value {
    let (reason, resets) = match q.state {
        FeeState::Premium {
            reason,
            window_resets_at,
        } => (Some(reason_name(reason)), Some(window_resets_at)),
        _ => (None, None),
    };
    json!({
        "from": from,
        "gasLimit": qty(q.gas_limit),
        "baseFeePerGas": qty(q.base_fee_per_gas),
        "priorityFeePerGas": qty(q.priority_fee_per_gas),
        "maxFeePerGas": qty(q.max_fee_per_gas),
        "maxCost": qty(q.max_cost()),
        "state": state_name(q.state),
        "reason": reason,
        "windowResetsAt": resets,
        "takenAt": unix(q.taken_at),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn quote(priority: u128, state: FeeState) -> FeeQuote {
        FeeQuote {
            gas_limit: 21_000,
            base_fee_per_gas: 0,
            priority_fee_per_gas: priority,
            max_fee_per_gas: priority,
            state,
            taken_at: UNIX_EPOCH + Duration::from_secs(1_000),
        }
    }

    fn summary() -> Summary<'static> {
        Summary {
            from: Address::repeat_byte(1),
            to: Some(Address::repeat_byte(2)),
            value: U256::ZERO,
            data_len: 0,
            status: None,
        }
    }

    #[test]
    fn numbers_format_for_people() {
        assert_eq!(grouped(480_000), "480,000");
        assert_eq!(grouped(21_000), "21,000");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(eth(U256::from(252_000_000_000_000u64)), "0.000252 ETH");
        assert_eq!(eth(U256::from(10u64.pow(18))), "1 ETH");
        assert_eq!(eth(U256::ZERO), "0 ETH");
        assert_eq!(eth(U256::from(1)), "0.000000000000000001 ETH");
        assert_eq!(gwei(12_000_000_000), "12 gwei");
        assert_eq!(gwei(1_500_000_000), "1.5 gwei");
        assert_eq!(gwei(7), "0.000000007 gwei");
        assert_eq!(duration(3 * 3600 + 12 * 60 + 5), "3h 12m");
        assert_eq!(duration(45), "45s");
        assert_eq!(duration(600), "10m");
        assert_eq!(duration(86_400 + 7200), "1d 2h");
    }

    #[test]
    fn gasless_text_has_no_fee_warning() {
        let t = render_text(
            &summary(),
            &quote(0, FeeState::Gasless),
            UNIX_EPOCH,
            Style::new(false),
        );
        assert!(
            t.contains("Free transaction: no fee. Uses 1 of your Karma quota."),
            "{t}"
        );
        assert!(!t.contains("Premium") && !t.contains("ETH at most"), "{t}");
        assert!(!t.contains('\x1b'), "no colour when not a terminal");
    }

    #[test]
    fn premium_text_explains_and_gives_the_refresh_time() {
        for (reason, says) in [
            (PremiumReason::QuotaExceeded, "used up the free quota"),
            (PremiumReason::RlnViolation, "RLN spam policy"),
            (PremiumReason::Operator, "deny list"),
            (PremiumReason::NoKarma, "holds no Karma"),
            (PremiumReason::GaslessUnavailable, "unavailable"),
        ] {
            let q = quote(
                12_000_000_000,
                FeeState::Premium {
                    reason,
                    window_resets_at: 3 * 3600 + 12 * 60 + 30,
                },
            );
            let t = render_text(
                &summary(),
                &q,
                UNIX_EPOCH + Duration::from_secs(30),
                Style::new(false),
            );
            assert!(
                t.contains("Premium fee: 0.000252 ETH at most (21,000 gas x 12 gwei)"),
                "{t}"
            );
            assert!(
                t.contains("priority fee 12 gwei per gas, max fee 12 gwei per gas"),
                "{t}"
            );
            assert!(t.contains(says), "{reason:?}: {t}");
            assert!(
                t.contains("pay the premium now, or wait until the window refreshes at"),
                "{t}"
            );
            assert!(t.contains(", in 3h 12m"), "{t}");
        }
    }

    #[test]
    fn json_names_the_state_and_reason() {
        let q = quote(
            12_000_000_000,
            FeeState::Premium {
                reason: PremiumReason::NoKarma,
                window_resets_at: 86_400,
            },
        );
        let j = quote_json(Address::ZERO, &q);
        assert_eq!(j["state"], "premium");
        assert_eq!(j["reason"], "noKarma");
        assert_eq!(j["windowResetsAt"], 86_400);
        assert_eq!(j["gasLimit"], "0x5208");
        assert_eq!(j["priorityFeePerGas"], "0x2cb417800");
        assert_eq!(j["takenAt"], 1_000);
        let j = quote_json(Address::ZERO, &quote(0, FeeState::Gasless));
        assert_eq!(
            (j["state"].as_str(), j["reason"].is_null()),
            (Some("gasless"), true)
        );
    }
}
