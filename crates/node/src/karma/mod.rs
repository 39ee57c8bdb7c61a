//! Karma: the policy that makes the network gasless. Senders holding Karma get a daily quota of
//! free transactions by tier; past it (or when slashed) they pay premium fees.
//!
//! `config` is the typed genesis section, `policy` the pure rules, `ledger` the per-block
//! derivation that the chain commits with every block, and `contracts` the predeployed
//! Solidity. [`Karma`] is the service the pool, block building and the RPC ask: a sender's
//! state at the next block, admission, the kill switch and the operator's deny list.

pub mod config;
pub mod contracts;
pub mod ledger;
pub mod policy;

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
};

use alloy_consensus::TxEnvelope;
use alloy_primitives::{Address, B256, U256};
use parking_lot::{Mutex, RwLock};

pub use config::{FeeParams, KarmaConfig, KarmaConfigError};
use ledger::Ledger;
use policy::{Refusal, SenderState};

use crate::constants::KARMA_STATUS_CACHE_SIZE;
use crate::per_head::PerHead;
use l2node_storage::{StateReader, Storage, StorageError};
use l2node_trie::state::{DenyEntry, DenyReason, KarmaTier};

/// Why a transaction is refused by the Karma policy: the message says what to do.
#[derive(Debug, Clone, thiserror::Error)]
pub enum KarmaError {
    /// The gasless path is closed for this sender now.
    #[error("{}", refusal_message(.refusal, .tier.as_deref(), *.resets_at, *.threshold))]
    Refused {
        /// Why.
        refusal: Refusal,
        /// The sender's tier name.
        tier: Option<String>,
        /// When the window refreshes (Unix seconds).
        resets_at: u64,
        /// The premium threshold, wei per gas.
        threshold: U256,
    },
    /// A second, different gasless transaction for a sender and nonce that already has one
    /// pending (RLN: two signals in one slot).
    #[error("a different free transaction from {sender} with nonce {nonce} is already pending: two free transactions in the same slot violate the spam policy (RLN), and the sender has been reported for slashing; to replace a pending transaction, pay premium gas (at least {} gwei per gas)", gwei(*.threshold))]
    DoubleSignal {
        /// The sender.
        sender: Address,
        /// The nonce.
        nonce: u64,
        /// The premium threshold, wei per gas.
        threshold: U256,
    },
}

fn gwei(wei: U256) -> String {
    let gwei = U256::from(1_000_000_000u64);
    let (whole, frac) = (wei / gwei, wei % gwei);
    if frac.is_zero() {
        whole.to_string()
    } else {
        let frac = format!("{:09}", frac.to::<u64>());
        format!("{whole}.{}", frac.trim_end_matches('0'))
    }
}

/// Whether a kill-switch file with `content` (`None`: no file) turns the gasless path off: an
/// empty file or `true`, `on`, `enabled` (any case) does, no file or `false`, `off`, `disabled`
/// does not; any other content is returned as the error.
pub fn kill_switch_engaged(content: Option<&str>) -> Result<bool, &str> {
    let Some(content) = content else {
        return Ok(false);
    };
    match content.trim().to_ascii_lowercase().as_str() {
        "" | "true" | "on" | "enabled" => Ok(true),
        "false" | "off" | "disabled" => Ok(false),
        _ => Err(content.trim()),
    }
}

fn refusal_message(
    refusal: &Refusal,
    tier: Option<&str>,
    resets_at: u64,
    threshold: U256,
) -> String {
    let pay = format!(
        "or pay premium gas (at least {} gwei per gas) to proceed",
        gwei(threshold)
    );
    let at = utc(resets_at);
    let tier = tier.unwrap_or("none");
    match refusal {
        Refusal::GaslessDisabled => format!("Free transactions are switched off on this network for now (operator kill switch); pay premium gas (at least {} gwei per gas) to proceed.", gwei(threshold)),
        Refusal::NoKarma => format!("This sender holds no Karma, and free transactions need Karma (tier \"{tier}\" has no free quota). Earn Karma to get a daily quota of free transactions, {pay}."),
        // Some quota is left, just not enough for this transaction: say so, not "used up".
        Refusal::OverQuota { needed, remaining } if *remaining > 0 => format!("This free transaction needs {needed} quota units for its gas limit and only {remaining} are left for your Karma tier (\"{tier}\") in this window, counting pending transactions. Lower the gas limit, wait for the window that resets at {at}, {pay}."),
        Refusal::Denied(DenyEntry { reason: DenyReason::QuotaExceeded, .. }) | Refusal::OverQuota { .. } => format!("Free transaction limit reached: the quota of your Karma tier (\"{tier}\") is used up for this window, counting pending transactions. Wait for the window that resets at {at}, earn more Karma to upgrade your tier, {pay}."),
        Refusal::Denied(DenyEntry { reason: DenyReason::RlnViolation, .. }) => format!("This sender was slashed for violating the spam policy (RLN: two different free transactions in one slot) and gets no free transactions until the window resets at {at}; {pay}."),
        Refusal::Denied(DenyEntry { reason: DenyReason::Operator, until_epoch }) => {
            let until = if *until_epoch == u64::MAX { "until the operator lifts it".to_owned() } else { format!("until {at}") };
            format!("This sender is on the operator's deny list {until} and gets no free transactions; {pay}.")
        }
    }
}

/// `2026-11-23 00:00:00 UTC` for Unix seconds.
pub fn utc(secs: u64) -> String {
    // Howard Hinnant's civil-from-days.
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A sender's Karma at a block: balance, tier and the policy state.
#[derive(Debug, Clone)]
pub struct SenderStatus {
    /// Karma balance (wei of KARMA).
    pub balance: U256,
    /// Tier index and tier.
    pub tier: Option<(usize, KarmaTier)>,
    /// Epoch, usage and active denial (operator entries included).
    pub state: SenderState,
    /// When the epoch ends (Unix seconds).
    pub epoch_ends_at: u64,
}

/// The tiers in force after head `.0` in epoch `.1`.
type CachedTiers = (B256, u64, Arc<Vec<KarmaTier>>);

/// Senders' statuses for the block after a head, by sender and epoch, as the head's state and
/// ledger give them (operator deny entries, which change between blocks, are not in them).
type CachedStatuses = PerHead<HashMap<(Address, u64), SenderStatus>>;

/// The Karma service of a node on a chain with a `karma` section.
#[derive(Debug)]
pub struct Karma {
    ledger: Ledger,
    storage: Storage,
    kill_switch_file: Option<PathBuf>,
    /// The kill-switch file existed at the last poll.
    file_off: AtomicBool,
    /// An operator turned gasless off (`l2admin_setKillSwitch`).
    admin_off: AtomicBool,
    /// Operator deny entries (sender -> last denied epoch), mirrored in storage.
    operator: RwLock<HashMap<Address, u64>>,
    /// Tiers in force for the block after a head.
    tiers_cache: Mutex<Option<CachedTiers>>,
    /// Senders' statuses for the block after the head (pool admission, estimates and
    /// `l2_getKarmaStatus` ask about the same senders many times a block).
    status_cache: Mutex<CachedStatuses>,
}

impl Karma {
    /// The service for `ledger` over `storage`.
    pub fn new(
        ledger: Ledger,
        storage: Storage,
        kill_switch_file: Option<PathBuf>,
    ) -> Result<Self, StorageError> {
        let operator = storage.operator_deny_list()?.into_iter().collect();
        let karma = Self {
            ledger,
            storage,
            kill_switch_file,
            file_off: AtomicBool::new(false),
            admin_off: AtomicBool::new(false),
            operator: RwLock::new(operator),
            tiers_cache: Mutex::new(None),
            status_cache: Mutex::default(),
        };
        karma.poll_kill_switch();
        Ok(karma)
    }

    /// The ledger rules.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The premium threshold, wei per gas.
    pub fn threshold(&self) -> U256 {
        self.ledger.config().premium_threshold
    }

    /// Whether the gasless path is open (neither the kill-switch file nor an operator closed it).
    pub fn gasless_enabled(&self) -> bool {
        !self.file_off.load(Ordering::Relaxed) && !self.admin_off.load(Ordering::Relaxed)
    }

    /// Looks at the kill-switch file once: gasless is off while it exists and is empty or says
    /// `true`, `on` or `enabled`, and on again when it is gone or says `false`, `off` or
    /// `disabled` (see [`kill_switch_engaged`]).
    pub fn poll_kill_switch(&self) {
        let Some(path) = &self.kill_switch_file else {
            return;
        };
        let content = std::fs::read_to_string(path).ok();
        let off = match kill_switch_engaged(content.as_deref()) {
            Ok(off) => off,
            Err(word) => {
                // Unreadable intent: keep the switch engaged (the file exists), and say so.
                if !self.file_off.load(Ordering::Relaxed) {
                    tracing::warn!(target: "l2node::karma", file = %path.display(), content = word, "kill-switch file says neither true/on/enabled nor false/off/disabled: free transactions stay off until it does");
                }
                true
            }
        };
        if self.file_off.swap(off, Ordering::Relaxed) != off {
            tracing::warn!(target: "l2node::karma", file = %path.display(), gasless = !off, "kill switch changed");
        }
    }

    /// Turns the gasless path off (`true`) or back on, as an operator.
    pub fn set_kill_switch(&self, off: bool) {
        self.admin_off.store(off, Ordering::Relaxed);
        tracing::warn!(target: "l2node::karma", gasless = !off, "kill switch set by operator");
    }

    /// Puts a sender on the operator deny list through `until_epoch` (inclusive; `None` =
    /// until removed), or takes it off (`remove`).
    pub fn set_operator_denied(
        &self,
        sender: Address,
        until_epoch: Option<u64>,
        remove: bool,
    ) -> Result<bool, StorageError> {
        let value = (!remove).then(|| until_epoch.unwrap_or(u64::MAX));
        self.storage.set_operator_denied(&sender, value)?;
        let mut list = self.operator.write();
        Ok(match value {
            Some(v) => list.insert(sender, v) != Some(v),
            None => list.remove(&sender).is_some(),
        })
    }

    /// The tiers in force in `epoch` (of `next_timestamp`) for the block after the head
    /// `head_hash`, kept for that head and epoch if `keep` (the reads were at that head).
    fn tiers_next(
        &self,
        state: &dyn StateReader,
        ledger: &l2node_storage::LedgerAt,
        (head_hash, keep): (B256, bool),
        (next_timestamp, epoch): (u64, u64),
    ) -> Result<Arc<Vec<KarmaTier>>, StorageError> {
        if let Some((h, e, tiers)) = self.tiers_cache.lock().as_ref() {
            if *h == head_hash && *e == epoch {
                return Ok(tiers.clone());
            }
        }
        let tiers = Arc::new(self.ledger.tiers_for(ledger, state, next_timestamp)?.tiers);
        if keep {
            *self.tiers_cache.lock() = Some((head_hash, epoch, tiers.clone()));
        }
        Ok(tiers)
    }

    /// A sender's Karma for the block after head `head_number` (hash `head_hash`, whose state
    /// `state` is) at `next_timestamp`: what admission and estimates decide on.
    ///
    /// What the head's state and ledger give is kept for that head (up to
    /// [`KARMA_STATUS_CACHE_SIZE`] senders), and only once both are known to be at `head_hash`;
    /// the operator's deny list is applied afresh every time.
    pub fn status_next(
        &self,
        state: &dyn StateReader,
        head_number: u64,
        head_hash: B256,
        next_timestamp: u64,
        sender: Address,
    ) -> Result<SenderStatus, StorageError> {
        let epoch = self.ledger.epochs().of(next_timestamp);
        let kept = self
            .status_cache
            .lock()
            .get(head_hash)
            .and_then(|statuses| statuses.get(&(sender, epoch)).cloned());
        let mut status = match kept {
            Some(status) => status,
            None => {
                let ledger = self.storage.ledger_at(Some(head_number))?;
                // Kept only for the chain's head (an older block's status would start its
                // cache afresh), and only if both views are of that very block: read at its
                // height (not at a later block an unwind then took back), and holding its hash
                // there (not another block an unwind put at that height meanwhile).
                let keep = ledger.at_head()
                    && state.stored_block() == Some(head_number)
                    && state.block_hash(head_number)? == head_hash
                    && ledger.block_hash()? == head_hash;
                let tiers =
                    self.tiers_next(state, &ledger, (head_hash, keep), (next_timestamp, epoch))?;
                let balance = self.ledger.balance(state, sender)?;
                let tier = policy::tier_of(balance, &tiers).map(|(i, t)| (i, t.clone()));
                let status = SenderStatus {
                    balance,
                    tier,
                    epoch_ends_at: self.ledger.epochs().ends_at(epoch),
                    state: self
                        .ledger
                        .sender_state(&ledger, &tiers, epoch, sender, balance)?,
                };
                if keep {
                    let earlier = {
                        let mut cache = self.status_cache.lock();
                        let (statuses, earlier) = cache.for_head(head_hash);
                        if statuses.len() < KARMA_STATUS_CACHE_SIZE {
                            statuses.insert((sender, epoch), status.clone());
                        }
                        earlier
                    };
                    drop(earlier);
                }
                status
            }
        };
        if status.state.deny.is_none() {
            if let Some(until) = self.operator.read().get(&sender).filter(|u| **u >= epoch) {
                status.state.deny = Some(DenyEntry {
                    reason: DenyReason::Operator,
                    until_epoch: *until,
                });
            }
        }
        Ok(status)
    }

    /// Admission of a transaction (premium or not, using `units` quota units) from a sender in
    /// `status` that already has `pending_units` gasless units in the pool.
    pub fn admit_units(
        &self,
        status: &SenderStatus,
        pending_units: u64,
        premium: bool,
        units: u64,
    ) -> Result<(), KarmaError> {
        let mut st = status.state.clone();
        st.usage.used = st.usage.used.saturating_add(pending_units);
        policy::admit(&st, premium, units, self.gasless_enabled())
            .map(|_| ())
            .map_err(|refusal| self.refused(status, refusal))
    }

    /// The refusal error for `status`.
    pub fn refused(&self, status: &SenderStatus, refusal: Refusal) -> KarmaError {
        let resets_at = match refusal {
            Refusal::Denied(d) if d.until_epoch != status.state.epoch => {
                self.ledger.epochs().ends_at(d.until_epoch)
            }
            _ => status.epoch_ends_at,
        };
        KarmaError::Refused {
            refusal,
            tier: status.tier.as_ref().map(|(_, t)| t.name.clone()),
            resets_at,
            threshold: self.threshold(),
        }
    }
}

/// Karma admission inside one block being built: each sender's state is loaded once and
/// updated with every gasless transaction let through, so a block never holds more free
/// transactions than the quota (whatever the pool held when the quota or switch changed).
pub struct BlockGate<'a> {
    karma: &'a Karma,
    state: &'a dyn StateReader,
    head: (u64, B256),
    timestamp: u64,
    base_fee: u64,
    /// Each sender's status with this block's transactions counted, and its state before them.
    senders: HashMap<Address, Option<(SenderStatus, SenderState)>>,
}

impl std::fmt::Debug for BlockGate<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockGate")
            .field("head", &self.head)
            .finish_non_exhaustive()
    }
}

impl BlockGate<'_> {
    /// Whether `tx` from `sender` may go into the block (it is counted if so). `Err(Some(_))`:
    /// the policy refuses the transaction itself (no Karma, a denial, the kill switch, more units
    /// than the sender has left before this block); `Err(None)`: it is only left out of this
    /// block (the units this block's earlier transactions reserve, or the sender's state could
    /// not be read).
    pub fn check(&mut self, tx: &TxEnvelope, sender: Address) -> Result<(), Option<KarmaError>> {
        let (premium, units) = self.karma.ledger.classify(tx, self.base_fee);
        if premium {
            return Ok(());
        }
        let entry = self.senders.entry(sender).or_insert_with(|| {
            self.karma
                .status_next(self.state, self.head.0, self.head.1, self.timestamp, sender)
                .inspect_err(|e| tracing::warn!(target: "l2node::karma", %sender, error = %e, "cannot read Karma state; leaving its free transactions out of this block"))
                .ok()
                .map(|status| {
                    let before = status.state.clone();
                    (status, before)
                })
        });
        let Some((status, before)) = entry else {
            return Err(None);
        };
        let enabled = self.karma.gasless_enabled();
        match policy::admit(&status.state, false, units, enabled) {
            Ok(effect) => {
                status.state.apply(&effect);
                Ok(())
            }
            // The ledger charges the gas used, so what this block reserves by gas limit may be
            // back for the next one: wait there. Else the refusal of the transaction on its own.
            Err(_) => match policy::admit(before, false, units, enabled) {
                Ok(_) => Err(None),
                Err(alone) => Err(Some(self.karma.refused(status, alone))),
            },
        }
    }
}

impl Karma {
    /// The gate for a block at `timestamp` with `base_fee` on head `head` (number, hash) whose
    /// state is `state`.
    pub fn block_gate<'a>(
        &'a self,
        state: &'a dyn StateReader,
        head: (u64, B256),
        timestamp: u64,
        base_fee: u64,
    ) -> BlockGate<'a> {
        BlockGate {
            karma: self,
            state,
            head,
            timestamp,
            base_fee,
            senders: HashMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_civil_time() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_795_392_000), "2026-11-23 00:00:00 UTC");
        assert_eq!(utc(951_786_061), "2000-02-29 01:01:01 UTC");
    }

    #[test]
    fn refusal_headline_matches_the_case() {
        let threshold = U256::from(12_000_000_000u64);
        let msg = |r: Refusal| refusal_message(&r, Some("newbie"), 1_795_392_000, threshold);
        let short = msg(Refusal::OverQuota {
            needed: 3,
            remaining: 1,
        });
        assert!(
            short.starts_with("This free transaction needs 3 quota units")
                && short.contains("only 1 are left")
                && short.contains("Lower the gas limit")
                && short.contains("12 gwei")
                && !short.contains("limit reached"),
            "{short}"
        );
        for used_up in [
            Refusal::OverQuota {
                needed: 1,
                remaining: 0,
            },
            Refusal::Denied(DenyEntry {
                reason: DenyReason::QuotaExceeded,
                until_epoch: 1,
            }),
        ] {
            let m = msg(used_up);
            assert!(m.starts_with("Free transaction limit reached"), "{m}");
        }
        assert!(msg(Refusal::NoKarma).starts_with("This sender holds no Karma"));
        assert!(msg(Refusal::GaslessDisabled).contains("kill switch"));
        let rln = msg(Refusal::Denied(DenyEntry {
            reason: DenyReason::RlnViolation,
            until_epoch: 1,
        }));
        assert!(rln.contains("slashed"), "{rln}");
        let op = msg(Refusal::Denied(DenyEntry {
            reason: DenyReason::Operator,
            until_epoch: u64::MAX,
        }));
        assert!(
            op.contains("operator's deny list until the operator lifts it"),
            "{op}"
        );
    }

    #[test]
    fn kill_switch_file_content_says_on_or_off() {
        for on in ["", "\n", "true", "ON\n", " Enabled "] {
            assert_eq!(kill_switch_engaged(Some(on)), Ok(true), "{on:?}");
        }
        for off in ["false", "Off\n", "disabled"] {
            assert_eq!(kill_switch_engaged(Some(off)), Ok(false), "{off:?}");
        }
        assert_eq!(kill_switch_engaged(None), Ok(false));
        assert_eq!(kill_switch_engaged(Some("maybe\n")), Err("maybe"));
    }

    #[test]
    fn gwei_is_exact() {
        assert_eq!(gwei(U256::from(12_000_000_000u64)), "12");
        assert_eq!(gwei(U256::from(1_500_000_000u64)), "1.5");
    }
}
