//! The transaction pool, with geth's admission rules and error messages.
//!
//! Transactions are validated ([`validate`]) against the context of the next block ([`NextBlock`])
//! and the sender's account from a [`StateReader`], then kept per sender: the run of nonces
//! contiguous from the account nonce is *pending* (executable in order), the rest is *queued*
//! behind a nonce gap and promoted when the gap closes.
//!
//! Transactions can cost nothing on this network, so spam is free and the pool is bounded the
//! way geth's legacypool is, by counts and not only by price ([`PoolConfig`]): queued
//! transactions per sender and in total, their lifetime, the pool's transactions and bytes, and
//! the cumulative cost of a sender's transactions against its balance. When the pool is full a
//! newcomer evicts queued transactions first, then pending ones of the sender holding the most
//! slots above its guarantee, then (geth's rule) cheaper ones; always a sender's highest nonce,
//! so no pending transaction is left behind a gap, and never to let a sender grow past its share.
//! Executable transactions are journaled so the pool survives a restart ([`journal`]); queued
//! ones are journaled only once they become pending, so junk that can never execute does not
//! come back.

mod error;
mod inner;
pub mod journal;
pub mod validate;

#[cfg(test)]
pub(crate) mod test_utils;
#[cfg(test)]
mod tests;

use std::{
    collections::BTreeMap,
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use alloy_consensus::{
    transaction::{Recovered, SignerRecoverable},
    Transaction, TxEnvelope,
};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, B256, U256};
use parking_lot::Mutex;
use tokio::sync::broadcast;

pub use error::PoolError;

use crate::chain::NextBlock;
use crate::constants;
use crate::exclusions::{Exclusion, Exclusions, Stage};
use crate::karma::{Karma, KarmaError};
use inner::{Arrival, Inner, Limits, SenderTxs, Victims};
use journal::Journal;
use l2node_storage::StateReader;

/// Pool settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    /// Capacity in transactions, pending and queued together; also the global pending limit
    /// (geth's `GlobalSlots`), since queued transactions are evicted first when the pool is full.
    pub max_txs: usize,
    /// Capacity in bytes of transaction encodings, pending and queued together.
    pub max_bytes: usize,
    /// Queued transactions in the whole pool (geth's `GlobalQueue`).
    pub max_queued: usize,
    /// Pending transactions guaranteed to each sender when the pool is full (geth's
    /// `AccountSlots`).
    pub account_slots: usize,
    /// Queued transactions per sender (geth's `AccountQueue`).
    pub account_queue: usize,
    /// Queued transactions of a sender without activity for this long are dropped (geth's
    /// `Lifetime`); checked after each block.
    pub queue_lifetime: Duration,
    /// Journal file; `None` keeps the pool in memory only.
    pub journal_path: Option<PathBuf>,
    /// Minimum percent by which a replacement must raise both max fee and tip.
    pub price_bump_percent: u64,
    /// Largest accepted EIP-2718 encoding in bytes.
    pub max_tx_size: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            max_txs: constants::POOL_MAX_TXS,
            max_bytes: constants::POOL_MAX_BYTES,
            max_queued: constants::POOL_GLOBAL_QUEUE,
            account_slots: constants::POOL_ACCOUNT_SLOTS,
            account_queue: constants::POOL_ACCOUNT_QUEUE,
            queue_lifetime: constants::POOL_QUEUE_LIFETIME,
            journal_path: None,
            price_bump_percent: constants::POOL_PRICE_BUMP_PERCENT,
            max_tx_size: constants::POOL_MAX_TX_SIZE,
        }
    }
}

/// A validated transaction in the pool.
#[derive(Debug)]
pub struct PooledTx {
    /// The transaction with its recovered sender.
    pub tx: Recovered<TxEnvelope>,
    /// Transaction hash.
    pub hash: B256,
    /// The EIP-2718 encoding.
    pub raw: Bytes,
    /// When the pool accepted it.
    pub added: Instant,
    /// Arrival order within the pool.
    seq: u64,
    /// `gas_limit * max_fee + value`.
    cost: U256,
}

impl PooledTx {
    /// The sender.
    pub fn sender(&self) -> Address {
        self.tx.signer()
    }

    /// The record of this transaction dropped at `block_number` for `reason` (stage
    /// `SEQUENCER`: block building, or the pool's lifetime rule).
    pub fn exclusion(&self, reason: String, block_number: u64, timestamp: u64) -> Exclusion {
        Exclusion {
            tx_hash: self.hash,
            from: self.sender(),
            nonce: self.tx.inner().nonce(),
            stage: Stage::Sequencer,
            reason,
            block_number,
            timestamp,
        }
    }

    /// The nonce.
    pub fn nonce(&self) -> u64 {
        self.tx.inner().nonce()
    }

    /// The gas limit.
    pub fn gas_limit(&self) -> u64 {
        self.tx.inner().gas_limit()
    }

    /// Max fee per gas (the gas price of legacy transactions).
    pub fn max_fee(&self) -> u128 {
        self.tx.inner().max_fee_per_gas()
    }

    /// Max priority fee per gas (the gas price of legacy transactions).
    pub fn tip_cap(&self) -> u128 {
        validate::tip_cap(self.tx.inner())
    }

    /// Tip per gas paid at `base_fee`, `None` when the max fee is below it.
    pub fn effective_tip(&self, base_fee: u64) -> Option<u128> {
        self.tx.inner().effective_tip_per_gas(base_fee)
    }

    /// Maximum cost: `gas_limit * max_fee + value`.
    pub fn cost(&self) -> U256 {
        self.cost
    }
}

/// Pool contents grouped by sender then nonce (`txpool_content`).
#[derive(Debug, Clone, Default)]
pub struct PoolContent {
    /// Executable transactions.
    pub pending: BTreeMap<Address, BTreeMap<u64, Arc<PooledTx>>>,
    /// Transactions behind a nonce gap.
    pub queued: BTreeMap<Address, BTreeMap<u64, Arc<PooledTx>>>,
}

impl PoolContent {
    fn add(&mut self, addr: Address, s: &inner::SenderTxs) {
        for (nonce, tx) in &s.txs {
            let side = if s.is_pending(*nonce) {
                &mut self.pending
            } else {
                &mut self.queued
            };
            side.entry(addr).or_default().insert(*nonce, tx.clone());
        }
    }
}

/// The transaction pool: `Send + Sync`, share it through an `Arc`.
#[derive(Debug)]
pub struct Pool {
    cfg: PoolConfig,
    inner: Mutex<Inner>,
    /// The journal, locked after `inner` when both are held.
    journal: Mutex<Option<Journal>>,
    events: broadcast::Sender<B256>,
    /// The Karma policy, on a chain with a `karma` section.
    karma: Option<Arc<Karma>>,
    /// Senders seen sending two different gasless transactions for one nonce, for a slasher.
    double_signals: Option<tokio::sync::mpsc::UnboundedSender<Address>>,
    /// Where refused and dropped transactions are recorded, when the node keeps them.
    exclusions: Option<Arc<Exclusions>>,
}

impl Pool {
    /// Creates an empty pool, opening (not loading) the journal if one is configured.
    pub fn new(cfg: PoolConfig) -> Result<Self, PoolError> {
        let journal = cfg.journal_path.as_deref().map(Journal::open).transpose()?;
        let (events, _) = broadcast::channel(constants::POOL_EVENT_CHANNEL_CAPACITY);
        Ok(Self {
            cfg,
            inner: Mutex::new(Inner::default()),
            journal: Mutex::new(journal),
            events,
            karma: None,
            double_signals: None,
            exclusions: None,
        })
    }

    /// Records the transactions this pool refuses or drops in `exclusions`.
    pub fn with_exclusions(mut self, exclusions: Arc<Exclusions>) -> Self {
        self.exclusions = Some(exclusions);
        self
    }

    /// The records of transactions that never landed, when the node keeps them.
    pub fn exclusions(&self) -> Option<&Arc<Exclusions>> {
        self.exclusions.as_ref()
    }

    /// [`Pool::add_raw`] for bytes that came through `stage` (JSON-RPC or a peer), recording a
    /// refusal (but "already known") in the exclusions at head `head`.
    pub fn add_raw_recorded(
        &self,
        raw: &[u8],
        state: &dyn StateReader,
        ctx: &NextBlock,
        stage: Stage,
    ) -> Result<B256, PoolError> {
        let added = self.add_raw(raw, state, ctx);
        if let (Err(e), Some(exclusions)) = (&added, &self.exclusions) {
            // Known already, or the node's own failure (journal, state): not a refusal.
            if !matches!(
                e,
                PoolError::AlreadyKnown | PoolError::Journal(_) | PoolError::State(_)
            ) {
                let head = ctx.number.saturating_sub(1);
                if let Some(record) = Exclusion::of_raw(raw, stage, e.to_string(), head) {
                    exclusions.record(record, stage != Stage::Rpc);
                }
            }
        }
        added
    }

    /// Applies the Karma policy to admission (README, "Karma").
    pub fn with_karma(mut self, karma: Arc<Karma>) -> Self {
        self.karma = Some(karma);
        self
    }

    /// Refuses a second, different gasless transaction for a sender and nonce that already
    /// has one pending, and reports the sender on `slash` (a sequencer with a slasher key).
    pub fn with_double_signal_reports(
        mut self,
        slash: tokio::sync::mpsc::UnboundedSender<Address>,
    ) -> Self {
        self.double_signals = Some(slash);
        self
    }

    /// The Karma policy, if the chain has one.
    pub fn karma(&self) -> Option<&Arc<Karma>> {
        self.karma.as_ref()
    }

    /// Gasless quota units of `sender`'s executable pooled transactions: they count against the
    /// quota before they are mined. Queued ones (behind a nonce gap) hold none: a wallet whose
    /// later nonces arrive first must not find its first nonce refused for quota they hold.
    pub fn pending_units(&self, sender: &Address, base_fee: u64) -> u64 {
        let Some(karma) = &self.karma else { return 0 };
        let inner = self.inner.lock();
        inner
            .senders
            .get(sender)
            .map_or(0, |s| Self::gasless_units(karma, s, None, base_fee))
    }

    /// The units the gasless transactions of `s` reserve: its executable run only (nonces from
    /// its account nonce up to the first gap), `skip_nonce` left out (the one being replaced).
    fn gasless_units(karma: &Karma, s: &SenderTxs, skip_nonce: Option<u64>, base_fee: u64) -> u64 {
        s.txs
            .range(s.base..s.pending_end.max(s.base))
            .filter(|(n, _)| Some(**n) != skip_nonce)
            .map(|(_, t)| karma.ledger().classify(t.tx.inner(), base_fee))
            .filter(|(premium, _)| !premium)
            .map(|(_, units)| units)
            .sum()
    }

    /// Decodes, validates and inserts a raw EIP-2718 transaction; returns its hash. The size is
    /// checked before any decoding or signature recovery.
    pub fn add_raw(
        &self,
        raw: &[u8],
        state: &dyn StateReader,
        ctx: &NextBlock,
    ) -> Result<B256, PoolError> {
        self.add_raw_inner(raw, state, ctx, true)
    }

    /// Validates and inserts a transaction; returns its hash.
    pub fn add(
        &self,
        tx: Recovered<TxEnvelope>,
        state: &dyn StateReader,
        ctx: &NextBlock,
    ) -> Result<B256, PoolError> {
        let raw = Bytes::from(tx.inner().encoded_2718());
        self.insert_validated(tx, raw, state, ctx, true)
    }

    fn add_raw_inner(
        &self,
        raw: &[u8],
        state: &dyn StateReader,
        ctx: &NextBlock,
        journal: bool,
    ) -> Result<B256, PoolError> {
        // A blob transaction (type 3) carries its blobs: it has the blob pool's larger limit.
        let limit = if raw.first() == Some(&3) {
            constants::BLOB_TX_MAX_SIZE.max(self.cfg.max_tx_size)
        } else {
            self.cfg.max_tx_size
        };
        if raw.len() > limit {
            return Err(PoolError::OversizedData {
                size: raw.len(),
                limit,
            });
        }
        let env = validate::decode_raw(raw)?;
        // Cheap duplicate check before the signature recovery.
        if self.inner.lock().all.contains_key(env.tx_hash()) {
            return Err(PoolError::AlreadyKnown);
        }
        let tx = env
            .try_into_recovered()
            .map_err(|_| PoolError::InvalidSender)?;
        self.insert_validated(tx, Bytes::copy_from_slice(raw), state, ctx, journal)
    }

    fn insert_validated(
        &self,
        tx: Recovered<TxEnvelope>,
        raw: Bytes,
        state: &dyn StateReader,
        ctx: &NextBlock,
        journal: bool,
    ) -> Result<B256, PoolError> {
        let hash = *tx.inner().tx_hash();
        if self.inner.lock().all.contains_key(&hash) {
            return Err(PoolError::AlreadyKnown);
        }
        validate::validate_stateless(&tx, raw.len(), self.cfg.max_tx_size, ctx)?;
        // Blocks carry a blob transaction without its blobs; `raw` (gossip, the journal) keeps
        // them.
        let tx = validate::without_sidecar(tx);
        // State I/O happens outside the pool lock.
        let account = state.account(tx.signer())?;
        validate::validate_against_account(&tx, account.as_ref())?;
        let (account_nonce, balance) = account.map(|a| (a.nonce, a.balance)).unwrap_or_default();
        let sender = tx.signer();
        let nonce = tx.inner().nonce();
        // Karma state I/O also happens outside the lock; the pending count is taken under it.
        let karma = match &self.karma {
            Some(k) => {
                let status = k.status_next(
                    state,
                    ctx.parent.header.number,
                    ctx.parent.hash,
                    ctx.timestamp,
                    sender,
                )?;
                let (premium, units) = k.ledger().classify(tx.inner(), ctx.base_fee);
                Some((k, status, premium, units))
            }
            None => None,
        };
        let cost = validate::max_cost(tx.inner());

        let mut inner = self.inner.lock();
        if inner.all.contains_key(&hash) {
            return Err(PoolError::AlreadyKnown);
        }
        // The state may predate a block the pool already reconciled: never go back in nonce.
        let account_nonce = account_nonce.max(inner.known_nonce(&sender));
        if nonce < account_nonce {
            return Err(PoolError::NonceTooLow {
                next: account_nonce,
                nonce,
            });
        }
        inner.set_base_fee(ctx.base_fee);
        // Also here, not only after blocks: with no block for a while the lifetime still holds.
        // O(1) unless something expires.
        self.expire_queued(&mut inner, Instant::now(), ctx.number.saturating_sub(1));
        let mut promoted = Vec::new();
        if inner
            .senders
            .get(&sender)
            .is_some_and(|s| s.base != account_nonce)
        {
            promoted = inner.reconcile(sender, account_nonce, balance, ctx.gas_limit);
        }
        let pooled = Arc::new(PooledTx {
            tx,
            hash,
            raw,
            added: Instant::now(),
            seq: inner.next_seq,
            cost,
        });
        let limits = self.limits();
        let own = inner.senders.get(&sender);
        let replaced = own.and_then(|s| s.txs.get(&nonce)).cloned();
        if let Some((k, status, premium, units)) = &karma {
            if !premium {
                if let (Some(old), Some(report)) = (&replaced, &self.double_signals) {
                    if !k.ledger().classify(old.tx.inner(), ctx.base_fee).0 {
                        let _ = report.send(sender);
                        crate::metrics::karma_admission("refused");
                        return Err(PoolError::Karma(KarmaError::DoubleSignal {
                            sender,
                            nonce,
                            threshold: k.threshold(),
                        }));
                    }
                }
                let pending =
                    own.map_or(0, |s| Self::gasless_units(k, s, Some(nonce), ctx.base_fee));
                if let Err(e) = k.admit_units(status, pending, false, *units) {
                    crate::metrics::karma_admission("refused");
                    return Err(e.into());
                }
            }
            crate::metrics::karma_admission(if *premium { "premium" } else { "gasless" });
        }
        if let Some(old) = &replaced {
            if !self.bump_ok(old, &pooled) {
                return Err(PoolError::ReplaceUnderpriced);
            }
        }
        // geth's overdraft check: the sender's other transactions plus this one, against the
        // balance (a replacement counts instead of the transaction it replaces).
        let spent = own
            .map_or(U256::ZERO, |s| s.cost)
            .saturating_sub(replaced.as_ref().map_or(U256::ZERO, |old| old.cost));
        let need = spent.saturating_add(cost);
        if need > balance {
            return Err(PoolError::Overdraft {
                balance,
                queued_cost: spent,
                tx_cost: cost,
            });
        }
        let pending_end = own.map_or(account_nonce, |s| s.pending_end);
        let executable = nonce <= pending_end;
        let mut victims = Victims::default();
        let own_queued = own.map_or(0, |s| s.queued_count());
        if !executable && replaced.is_none() && own_queued >= limits.account_queue {
            // Like geth's per-account cap, keep the lowest nonces: a lower one displaces the
            // highest queued, a higher one is refused.
            match own.and_then(|s| s.queued().next_back()) {
                Some(highest) if highest.nonce() > nonce => victims.push(highest, true),
                _ => {
                    return Err(PoolError::AccountLimitExceeded {
                        queued: own_queued,
                        limit: limits.account_queue,
                    })
                }
            }
        }
        let arrival = Arrival {
            tx: &pooled,
            replaced: replaced.as_deref(),
            executable,
        };
        let victims = inner
            .plan_room(&limits, &arrival, victims)
            .ok_or(PoolError::PoolFull)?;
        if journal {
            // Journal before changing the pool: an error leaves it as it was. Only what is (or
            // becomes) pending is journaled.
            let mut raws: Vec<Bytes> = promoted
                .iter()
                .filter_map(|h| inner.all.get(h))
                .map(|tx| tx.raw.clone())
                .collect();
            if executable {
                raws.push(pooled.raw.clone());
                if nonce == pending_end {
                    if let Some(s) = inner.senders.get(&sender) {
                        // The queued run this transaction promotes.
                        raws.extend(
                            (nonce + 1..)
                                .map_while(|n| s.txs.get(&n))
                                .map(|tx| tx.raw.clone()),
                        );
                    }
                }
            }
            self.journal_append(raws.iter().map(|r| r.as_ref()))?;
        }
        for victim in &victims.txs {
            tracing::debug!(evicted = %victim.hash, for_tx = %hash, "pool full, evicting");
            inner.remove(&victim.hash);
        }
        inner.next_seq += 1;
        promoted.extend(inner.insert(pooled, account_nonce));
        if replaced.is_some() || !victims.txs.is_empty() {
            self.maybe_compact(&inner);
        }
        drop(inner);
        self.notify(promoted);
        Ok(hash)
    }

    fn limits(&self) -> Limits {
        Limits {
            max_txs: self.cfg.max_txs,
            max_bytes: self.cfg.max_bytes,
            max_queued: self.cfg.max_queued,
            account_slots: self.cfg.account_slots,
            account_queue: self.cfg.account_queue,
        }
    }

    /// geth's replacement rule: both max fee and tip strictly higher and at least
    /// `price_bump_percent` above the old ones.
    fn bump_ok(&self, old: &PooledTx, new: &PooledTx) -> bool {
        let bump = U256::from(100 + self.cfg.price_bump_percent);
        let threshold = |v: u128| U256::from(v) * bump / U256::from(100);
        new.max_fee() > old.max_fee()
            && new.tip_cap() > old.tip_cap()
            && U256::from(new.max_fee()) >= threshold(old.max_fee())
            && U256::from(new.tip_cap()) >= threshold(old.tip_cap())
    }

    fn journal_append<'a>(
        &self,
        raws: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<(), PoolError> {
        if let Some(j) = self.journal.lock().as_mut() {
            for raw in raws {
                j.append(raw)?;
            }
        }
        Ok(())
    }

    /// Journals transactions that just became pending (after a block), logging a failure: the
    /// pool change already happened and is right without them.
    fn journal_promoted(&self, inner: &Inner, hashes: &[B256]) {
        let raws = hashes
            .iter()
            .filter_map(|h| inner.all.get(h))
            .map(|tx| tx.raw.as_ref());
        if let Err(e) = self.journal_append(raws) {
            tracing::warn!(error = %e, "could not journal promoted transactions");
        }
    }

    /// Rewrites the journal with the live pending transactions once dead records outnumber
    /// them: each rewrite is O(pool) but follows at least as many appends, so O(1) amortised.
    fn maybe_compact(&self, inner: &Inner) {
        let mut guard = self.journal.lock();
        let Some(j) = guard.as_mut() else { return };
        let live = inner.pending;
        if j.records() <= constants::POOL_JOURNAL_COMPACT_MIN_RECORDS || j.records() <= 2 * live {
            return;
        }
        if let Err(e) = Self::rewrite_journal(j, inner) {
            tracing::warn!(error = %e, "could not compact the pool journal");
        }
    }

    /// Writes the live pending transactions, per sender in nonce order (queued ones are not
    /// persisted: see the module docs).
    fn rewrite_journal(j: &mut Journal, inner: &Inner) -> std::io::Result<()> {
        let txs = inner
            .senders
            .values()
            .flat_map(|s| s.pending())
            .map(|tx| tx.raw.as_ref());
        j.rewrite(txs)
    }

    fn notify(&self, hashes: Vec<B256>) {
        for hash in hashes {
            // No subscribers is fine.
            let _ = self.events.send(hash);
        }
    }

    /// Transactions ready to execute, in block order: highest effective tip first across
    /// senders, nonce order within a sender; a sender's run stops at the first transaction
    /// whose max fee is below `base_fee`.
    pub fn best(&self, base_fee: u64) -> Vec<Arc<PooledTx>> {
        self.inner.lock().best(base_fee)
    }

    /// After a block: re-reads every pooled sender's account and drops included or stale
    /// transactions (nonce below the account nonce), those the balance no longer covers
    /// (together, from the highest nonce down) and those above the block gas limit; promotes
    /// queued transactions whose gap closed; drops queued transactions past their lifetime.
    pub fn on_new_block(&self, state: &dyn StateReader, ctx: &NextBlock) {
        let senders: Vec<Address> = self.inner.lock().senders.keys().copied().collect();
        self.on_new_block_touched(state, ctx, &senders);
    }

    /// [`Pool::on_new_block`] restricted to `touched` senders (the accounts whose nonce or
    /// balance the block changed); cheaper when the caller knows them.
    pub fn on_new_block_touched(
        &self,
        state: &dyn StateReader,
        ctx: &NextBlock,
        touched: &[Address],
    ) {
        let accounts: Vec<_> = touched
            .iter()
            .filter_map(|addr| match state.account(*addr) {
                Ok(acc) => Some((*addr, acc.map(|a| (a.nonce, a.balance)).unwrap_or_default())),
                Err(e) => {
                    tracing::warn!(sender = %addr, error = %e, "pool: cannot read account");
                    None
                }
            })
            .collect();
        let mut inner = self.inner.lock();
        inner.next_epoch();
        inner.set_base_fee(ctx.base_fee);
        let mut promoted = Vec::new();
        let mut reconciled = Vec::with_capacity(accounts.len());
        for (addr, (nonce, balance)) in accounts {
            inner.note_nonce(addr, nonce);
            promoted.extend(inner.reconcile(addr, nonce, balance, ctx.gas_limit));
            reconciled.push(addr);
        }
        // A transaction dropped above the gas limit can leave later ones queued.
        inner.truncate_queued(&reconciled, &self.limits());
        promoted.retain(|h| inner.all.contains_key(h));
        self.journal_promoted(&inner, &promoted);
        self.expire_queued(&mut inner, Instant::now(), ctx.number.saturating_sub(1));
        self.maybe_compact(&inner);
        drop(inner);
        self.notify(promoted);
    }

    /// Drops the queued transactions of senders without activity for `queue_lifetime` before
    /// `now` (run after each block, as the miner calls [`Pool::on_new_block_touched`], and on
    /// each admission).
    fn expire_queued(&self, inner: &mut Inner, now: Instant, head: u64) -> usize {
        let dropped = inner.expire_queued(now, self.cfg.queue_lifetime);
        if !dropped.is_empty() {
            tracing::debug!(
                dropped = dropped.len(),
                "pool: dropped queued transactions past their lifetime"
            );
        }
        if let Some(exclusions) = &self.exclusions {
            let reason = format!(
                "dropped from the pool: queued behind a nonce gap for {} s without the missing \
                 nonce arriving; send the missing nonce, then this one again",
                self.cfg.queue_lifetime.as_secs()
            );
            for t in &dropped {
                let record = t.exclusion(reason.clone(), head, crate::exclusions::unix_now());
                exclusions.record(record, false);
            }
        }
        dropped.len()
    }

    /// Removes transactions (e.g. one that failed in block building); the senders' later
    /// transactions move back to queued.
    pub fn remove(&self, hashes: &[B256]) {
        let mut inner = self.inner.lock();
        let senders: Vec<Address> = hashes
            .iter()
            .filter_map(|hash| inner.remove(hash))
            .map(|tx| tx.sender())
            .collect();
        // The demoted transactions count against the queued limits.
        inner.truncate_queued(&senders, &self.limits());
        self.maybe_compact(&inner);
    }

    /// A pooled transaction by hash.
    pub fn get(&self, hash: &B256) -> Option<Arc<PooledTx>> {
        self.inner.lock().all.get(hash).cloned()
    }

    /// The nonce after the sender's pending run (`eth_getTransactionCount` "pending"), `None`
    /// when the sender has no pending transaction (use the account nonce).
    pub fn pending_nonce(&self, sender: Address) -> Option<u64> {
        let inner = self.inner.lock();
        inner
            .senders
            .get(&sender)
            .filter(|s| s.pending_end > s.base)
            .map(|s| s.pending_end)
    }

    /// Numbers of pending and queued transactions.
    pub fn status(&self) -> (usize, usize) {
        let inner = self.inner.lock();
        (inner.pending, inner.queued)
    }

    /// All transactions grouped into pending and queued, by sender then nonce.
    pub fn content(&self) -> PoolContent {
        let inner = self.inner.lock();
        let mut content = PoolContent::default();
        for (addr, s) in &inner.senders {
            content.add(*addr, s);
        }
        content
    }

    /// [`Pool::content`] of one sender (`txpool_contentFrom`).
    pub fn content_from(&self, sender: Address) -> PoolContent {
        let inner = self.inner.lock();
        let mut content = PoolContent::default();
        if let Some(s) = inner.senders.get(&sender) {
            content.add(sender, s);
        }
        content
    }

    /// Hashes of transactions as they become pending (`newPendingTransactions`).
    pub fn subscribe(&self) -> broadcast::Receiver<B256> {
        self.events.subscribe()
    }

    /// Loads the journal, re-validating each transaction against `state` through the same
    /// admission as new ones, limits included (those refused are dropped silently), then
    /// rewrites it with the pending survivors, so refused and queued records do not accumulate
    /// across restarts. Returns how many transactions were restored.
    pub fn load_journal(
        &self,
        state: &dyn StateReader,
        ctx: &NextBlock,
    ) -> Result<usize, PoolError> {
        let records = match self.journal.lock().as_mut() {
            Some(j) => j.read_all()?,
            None => return Ok(0),
        };
        let mut added = Vec::new();
        for raw in records {
            match self.add_raw_inner(&raw, state, ctx, false) {
                Ok(hash) => added.push(hash),
                Err(PoolError::Journal(e)) => return Err(e.into()),
                Err(PoolError::State(e)) => return Err(e.into()),
                Err(e) => tracing::debug!(error = %e, "dropping journaled transaction"),
            }
        }
        let inner = self.inner.lock();
        if let Some(j) = self.journal.lock().as_mut() {
            Self::rewrite_journal(j, &inner)?;
        }
        // Later records may have replaced or evicted earlier ones: count the survivors.
        Ok(added.iter().filter(|h| inner.all.contains_key(*h)).count())
    }
}
