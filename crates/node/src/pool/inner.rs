//! The pool's indexes, behind the pool lock: per-sender nonce maps split into a pending run and
//! a queued rest, the hash index, and a price index for eviction.

use std::{
    cmp::Reverse,
    collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap},
    sync::Arc,
};

use alloy_consensus::Transaction;
use alloy_primitives::{Address, B256, U256};

use super::PooledTx;

/// Eviction order: lowest effective tip (at the pool's base fee) first, then lowest max fee,
/// then the newest arrival (older transactions keep their place).
pub(crate) type PriceKey = (i128, u128, Reverse<u64>, B256);

/// One sender's transactions. Pending are the nonces `base..pending_end` (contiguous from the
/// account nonce, executable in order); the rest are queued behind a gap.
#[derive(Debug, Default)]
pub(crate) struct SenderTxs {
    pub txs: BTreeMap<u64, Arc<PooledTx>>,
    /// The account nonce as last seen in state.
    pub base: u64,
    /// First nonce after the contiguous run starting at `base`.
    pub pending_end: u64,
}

impl SenderTxs {
    fn counts(&self) -> (usize, usize) {
        let pending = self.txs.range(self.base..self.pending_end).count();
        (pending, self.txs.len() - pending)
    }

    pub(super) fn is_pending(&self, nonce: u64) -> bool {
        (self.base..self.pending_end).contains(&nonce)
    }

    /// Extends the pending run over consecutive nonces; returns the hashes that became pending.
    fn extend_run(&mut self) -> Vec<B256> {
        let mut promoted = Vec::new();
        while let Some(tx) = self.txs.get(&self.pending_end) {
            promoted.push(tx.hash);
            self.pending_end += 1;
        }
        promoted
    }

    pub(super) fn pending(&self) -> impl Iterator<Item = &Arc<PooledTx>> {
        self.txs
            .range(self.base..self.pending_end)
            .map(|(_, tx)| tx)
    }
}

/// All pool state guarded by the pool lock.
#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub all: HashMap<B256, Arc<PooledTx>>,
    pub senders: HashMap<Address, SenderTxs>,
    by_price: BTreeSet<PriceKey>,
    /// Base fee the price index is keyed at.
    base_fee: u64,
    pub pending: usize,
    pub queued: usize,
    /// Arrival counter: ties in price are broken by arrival.
    pub next_seq: u64,
    /// Blocks seen by `on_new_block` so far.
    pub epoch: u64,
    /// Account nonces read after recent blocks, with the epoch they were read in. A validation
    /// that read the state before that block (its snapshot was taken just before the commit)
    /// has a stale, lower nonce: without this floor it would rebuild a sender whose
    /// transactions were all just included with the old nonce, and its next transaction would
    /// sit queued behind a gap that never closes.
    nonce_floor: HashMap<Address, (u64, u64)>,
}

/// Epochs a nonce floor is kept: far longer than a validation can take, however loaded the box.
const NONCE_FLOOR_EPOCHS: u64 = 1024;

/// Effective tip at `base_fee`, negative when the max fee is below the base fee.
fn effective_tip(tx: &PooledTx, base_fee: u64) -> i128 {
    let max_fee = i128::try_from(tx.max_fee()).unwrap_or(i128::MAX);
    let tip = i128::try_from(tx.tip_cap()).unwrap_or(i128::MAX);
    tip.min(max_fee - i128::from(base_fee))
}

impl Inner {
    pub(super) fn price_key(&self, tx: &PooledTx) -> PriceKey {
        (
            effective_tip(tx, self.base_fee),
            tx.max_fee(),
            Reverse(tx.seq),
            tx.hash,
        )
    }

    /// Records a nonce read from state after the latest block.
    pub(super) fn note_nonce(&mut self, sender: Address, nonce: u64) {
        let floor = self
            .nonce_floor
            .entry(sender)
            .or_insert((nonce, self.epoch));
        *floor = (floor.0.max(nonce), self.epoch);
    }

    /// Starts a new epoch (a block); forgets floors too old to matter, O(1) amortised.
    pub(super) fn next_epoch(&mut self) {
        self.epoch += 1;
        if self.epoch.is_multiple_of(NONCE_FLOOR_EPOCHS) {
            let epoch = self.epoch;
            self.nonce_floor
                .retain(|_, (_, e)| *e + NONCE_FLOOR_EPOCHS > epoch);
        }
    }

    /// The highest nonce `sender` is known to have reached (0 when unknown): state only moves
    /// forward, so a lower nonce read elsewhere is stale.
    pub(super) fn known_nonce(&self, sender: &Address) -> u64 {
        let floor = self.nonce_floor.get(sender).map_or(0, |f| f.0);
        self.senders
            .get(sender)
            .map_or(floor, |s| s.base.max(floor))
    }

    /// Re-keys the price index when the base fee changed (once per block at most).
    pub(super) fn set_base_fee(&mut self, base_fee: u64) {
        if base_fee != self.base_fee {
            self.base_fee = base_fee;
            let keys = self.all.values().map(|tx| self.price_key(tx)).collect();
            self.by_price = keys;
        }
    }

    /// The cheapest pooled transaction, the first to evict.
    pub(super) fn cheapest(&self) -> Option<PriceKey> {
        self.by_price.first().copied()
    }

    /// Runs `f` on `sender`'s entry keeping the pending/queued totals right, and drops the entry
    /// when it ends up empty. The entry is created with `base` as account nonce if missing.
    fn with_sender<R>(
        &mut self,
        sender: Address,
        base: u64,
        f: impl FnOnce(&mut SenderTxs) -> R,
    ) -> R {
        let entry = self.senders.entry(sender).or_insert_with(|| SenderTxs {
            txs: BTreeMap::new(),
            base,
            pending_end: base,
        });
        let (p0, q0) = entry.counts();
        let out = f(entry);
        let (p1, q1) = entry.counts();
        if entry.txs.is_empty() {
            self.senders.remove(&sender);
        }
        self.pending = self.pending + p1 - p0;
        self.queued = self.queued + q1 - q0;
        out
    }

    /// Inserts a validated transaction, replacing any of the same sender and nonce (the caller
    /// checked the price bump). Returns the hashes that became pending (the new transaction if
    /// it is executable, plus queued ones whose gap it closed).
    pub(super) fn insert(&mut self, tx: Arc<PooledTx>, account_nonce: u64) -> Vec<B256> {
        let sender = tx.sender();
        let nonce = tx.nonce();
        if let Some(old) = self
            .senders
            .get(&sender)
            .and_then(|s| s.txs.get(&nonce))
            .cloned()
        {
            self.all.remove(&old.hash);
            let key = self.price_key(&old);
            self.by_price.remove(&key);
        }
        self.all.insert(tx.hash, tx.clone());
        let key = self.price_key(&tx);
        self.by_price.insert(key);
        self.with_sender(sender, account_nonce, |s| {
            let hash = tx.hash;
            s.txs.insert(nonce, tx);
            if s.is_pending(nonce) {
                vec![hash]
            } else {
                s.extend_run()
            }
        })
    }

    /// Removes one transaction; its sender's later pending transactions drop back to queued.
    pub(super) fn remove(&mut self, hash: &B256) -> Option<Arc<PooledTx>> {
        let tx = self.all.remove(hash)?;
        let key = self.price_key(&tx);
        self.by_price.remove(&key);
        let base = self.senders.get(&tx.sender()).map_or(0, |s| s.base);
        self.with_sender(tx.sender(), base, |s| {
            s.txs.remove(&tx.nonce());
            if s.is_pending(tx.nonce()) {
                s.pending_end = tx.nonce();
            }
        });
        Some(tx)
    }

    /// Brings one sender up to date with its account: drops transactions whose nonce is used,
    /// that cost more than the balance, or that exceed the block gas limit; re-splits pending
    /// and queued. Returns the hashes that moved from queued to pending.
    pub(super) fn reconcile(
        &mut self,
        sender: Address,
        nonce: u64,
        balance: U256,
        gas_limit: u64,
    ) -> Vec<B256> {
        let Some(entry) = self.senders.get(&sender) else {
            return Vec::new();
        };
        let doomed: Vec<B256> = entry
            .txs
            .values()
            .filter(|tx| tx.nonce() < nonce || tx.cost > balance || tx.gas_limit() > gas_limit)
            .map(|tx| tx.hash)
            .collect();
        for hash in &doomed {
            self.remove(hash);
        }
        if !self.senders.contains_key(&sender) {
            return Vec::new();
        }
        self.with_sender(sender, nonce, |s| {
            let (old_base, old_end) = (s.base, s.pending_end);
            s.base = nonce;
            s.pending_end = nonce;
            s.extend_run();
            s.txs
                .range(s.base..s.pending_end)
                .filter(|(n, _)| !(old_base..old_end).contains(*n))
                .map(|(_, tx)| tx.hash)
                .collect()
        })
    }

    /// Executable transactions in block order: per sender the pending run in nonce order,
    /// cut at the first transaction whose max fee is below `base_fee`; across senders the
    /// highest effective tip first, earlier arrival on ties (geth's price-and-nonce order).
    pub(super) fn best(&self, base_fee: u64) -> Vec<Arc<PooledTx>> {
        /// Heap entry: a sender's next transaction.
        struct Head<'a> {
            tip: u128,
            seq: u64,
            tx: &'a Arc<PooledTx>,
            rest: Rest<'a>,
        }
        impl PartialEq for Head<'_> {
            fn eq(&self, other: &Self) -> bool {
                self.cmp(other) == std::cmp::Ordering::Equal
            }
        }
        impl Eq for Head<'_> {}
        impl PartialOrd for Head<'_> {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for Head<'_> {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                (self.tip, Reverse(self.seq)).cmp(&(other.tip, Reverse(other.seq)))
            }
        }
        type Rest<'a> = Box<dyn Iterator<Item = &'a Arc<PooledTx>> + 'a>;
        /// `None` (the sender is done) when the max fee is below the base fee.
        fn head<'a>(tx: &'a Arc<PooledTx>, rest: Rest<'a>, base_fee: u64) -> Option<Head<'a>> {
            let tip = tx.tx.inner().effective_tip_per_gas(base_fee)?;
            Some(Head {
                tip,
                seq: tx.seq,
                tx,
                rest,
            })
        }
        let mut heap = BinaryHeap::new();
        for s in self.senders.values() {
            let mut it = s.pending();
            if let Some(h) = it.next().and_then(|tx| head(tx, Box::new(it), base_fee)) {
                heap.push(h);
            }
        }
        let mut out = Vec::with_capacity(self.pending);
        while let Some(Head { tx, mut rest, .. }) = heap.pop() {
            out.push(tx.clone());
            if let Some(h) = rest.next().and_then(|next| head(next, rest, base_fee)) {
                heap.push(h);
            }
        }
        out
    }
}
