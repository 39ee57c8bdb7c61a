//! The transaction pool, with geth's admission rules and error messages.
//!
//! Transactions are validated ([`validate`]) against the context of the next block ([`NextBlock`])
//! and the sender's account from a [`StateReader`], then kept per sender: the run of nonces
//! contiguous from the account nonce is *pending* (executable in order), the rest is *queued*
//! behind a nonce gap and promoted when the gap closes. One global cap bounds the pool; when it
//! is full the transaction with the lowest effective tip is evicted for a better-paying one.
//! Accepted transactions are journaled so the pool survives a restart ([`journal`]).

mod error;
mod inner;
pub mod journal;
pub mod validate;

#[cfg(test)]
pub(crate) mod test_utils;
#[cfg(test)]
mod tests;

use std::{collections::BTreeMap, path::PathBuf, sync::Arc, time::Instant};

use alloy_consensus::{
    transaction::{Recovered, SignerRecoverable},
    Transaction, TxEnvelope,
};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, B256, U256};
use parking_lot::Mutex;
use tokio::sync::broadcast;

pub use error::PoolError;

use crate::{chain::NextBlock, constants, storage::StateReader};
use inner::Inner;
use journal::Journal;

/// Pool settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    /// Capacity, pending and queued together.
    pub max_txs: usize,
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

/// The transaction pool: `Send + Sync`, share it through an `Arc`.
#[derive(Debug)]
pub struct Pool {
    cfg: PoolConfig,
    inner: Mutex<Inner>,
    /// The journal, locked after `inner` when both are held.
    journal: Mutex<Option<Journal>>,
    events: broadcast::Sender<B256>,
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
        })
    }

    /// Decodes, validates and inserts a raw EIP-2718 transaction; returns its hash.
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
        // State I/O happens outside the pool lock.
        let account = state.account(tx.signer())?;
        validate::validate_against_account(&tx, account.as_ref())?;
        let (account_nonce, balance) = account.map(|a| (a.nonce, a.balance)).unwrap_or_default();
        let sender = tx.signer();
        let nonce = tx.inner().nonce();
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
        let replaced = inner
            .senders
            .get(&sender)
            .and_then(|s| s.txs.get(&nonce))
            .cloned();
        let mut evict = None;
        match &replaced {
            Some(old) if !self.bump_ok(old, &pooled) => {
                return Err(PoolError::ReplaceUnderpriced);
            }
            Some(_) => {}
            None if inner.all.len() >= self.cfg.max_txs => {
                let cheapest = inner.cheapest().ok_or(PoolError::PoolFull)?;
                let new = inner.price_key(&pooled);
                if (new.0, new.1) <= (cheapest.0, cheapest.1) {
                    return Err(PoolError::PoolFull);
                }
                evict = Some(cheapest.3);
            }
            None => {}
        }
        if journal {
            // Journal before changing the pool: an error leaves it as it was.
            self.journal_append(&pooled.raw)?;
        }
        if let Some(victim) = evict {
            tracing::debug!(evicted = %victim, for_tx = %hash, "pool full, evicting the cheapest");
            inner.remove(&victim);
        }
        inner.next_seq += 1;
        promoted.extend(inner.insert(pooled, account_nonce));
        if replaced.is_some() {
            self.maybe_compact(&inner);
        }
        drop(inner);
        self.notify(promoted);
        Ok(hash)
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

    fn journal_append(&self, raw: &[u8]) -> Result<(), PoolError> {
        if let Some(j) = self.journal.lock().as_mut() {
            j.append(raw)?;
        }
        Ok(())
    }

    /// Rewrites the journal with the live transactions once dead records outnumber them:
    /// each rewrite is O(pool) but follows at least as many appends, so O(1) amortised.
    fn maybe_compact(&self, inner: &Inner) {
        let mut guard = self.journal.lock();
        let Some(j) = guard.as_mut() else { return };
        let live = inner.all.len();
        if j.records() <= constants::POOL_JOURNAL_COMPACT_MIN_RECORDS || j.records() <= 2 * live {
            return;
        }
        if let Err(e) = Self::rewrite_journal(j, inner) {
            tracing::warn!(error = %e, "could not compact the pool journal");
        }
    }

    /// Writes the live transactions, per sender in nonce order.
    fn rewrite_journal(j: &mut Journal, inner: &Inner) -> std::io::Result<()> {
        let txs = inner
            .senders
            .values()
            .flat_map(|s| s.txs.values())
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
    /// transactions (nonce below the account nonce), those the balance no longer covers and
    /// those above the block gas limit; promotes queued transactions whose gap closed.
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
        for (addr, (nonce, balance)) in accounts {
            inner.note_nonce(addr, nonce);
            promoted.extend(inner.reconcile(addr, nonce, balance, ctx.gas_limit));
        }
        self.maybe_compact(&inner);
        drop(inner);
        self.notify(promoted);
    }

    /// Removes transactions (e.g. one that failed in block building); the senders' later
    /// transactions move back to queued.
    pub fn remove(&self, hashes: &[B256]) {
        let mut inner = self.inner.lock();
        for hash in hashes {
            inner.remove(hash);
        }
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
            for (nonce, tx) in &s.txs {
                let side = if s.is_pending(*nonce) {
                    &mut content.pending
                } else {
                    &mut content.queued
                };
                side.entry(*addr).or_default().insert(*nonce, tx.clone());
            }
        }
        content
    }

    /// Hashes of transactions as they become pending (`newPendingTransactions`).
    pub fn subscribe(&self) -> broadcast::Receiver<B256> {
        self.events.subscribe()
    }

    /// Loads the journal, re-validating each transaction against `state` (those that no longer
    /// validate are dropped silently), then rewrites it with the survivors. Returns how many
    /// transactions were restored.
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
