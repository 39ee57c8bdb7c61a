//! The pool's indexes, behind the pool lock: per-sender nonce maps split into a pending run and
//! a queued rest, the hash index, and the eviction indexes (senders by pending count, by queued
//! count, by activity, and senders' last transactions by price).

use std::{
    cmp::Reverse,
    collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap},
    sync::Arc,
    time::{Duration, Instant},
};

use alloy_consensus::Transaction;
use alloy_primitives::{Address, B256, U256};

use super::PooledTx;

/// Eviction order: lowest effective tip (at the pool's base fee) first, then lowest max fee,
/// then the newest arrival (older transactions keep their place).
pub(crate) type PriceKey = (i128, u128, Reverse<u64>, B256);

/// One sender's transactions. Pending are the nonces `base..pending_end` (contiguous from the
/// account nonce, all present, executable in order); the rest are queued behind a gap.
#[derive(Debug)]
pub(crate) struct SenderTxs {
    pub txs: BTreeMap<u64, Arc<PooledTx>>,
    /// The account nonce as last seen in state.
    pub base: u64,
    /// First nonce after the contiguous run starting at `base`.
    pub pending_end: u64,
    /// Sum of the transactions' maximum costs (`gas * maxFee + value`).
    pub cost: U256,
    /// Last activity: the sender's first transaction, a transaction becoming pending, or a block
    /// advancing its nonce (geth's heartbeat). Adding queued transactions does not count.
    pub active: Instant,
}

/// What the eviction indexes know of a sender; compared before and after each change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Snapshot {
    pending: usize,
    queued: usize,
    active: Instant,
    /// Price key of the highest-nonce transaction.
    tail: Option<PriceKey>,
}

impl SenderTxs {
    pub(super) fn pending_count(&self) -> usize {
        usize::try_from(self.pending_end - self.base).unwrap_or(usize::MAX)
    }

    pub(super) fn queued_count(&self) -> usize {
        self.txs.len() - self.pending_count()
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

    pub(super) fn pending(&self) -> impl DoubleEndedIterator<Item = &Arc<PooledTx>> {
        self.txs
            .range(self.base..self.pending_end)
            .map(|(_, tx)| tx)
    }

    pub(super) fn queued(&self) -> impl DoubleEndedIterator<Item = &Arc<PooledTx>> {
        self.txs.range(self.pending_end..).map(|(_, tx)| tx)
    }
}

/// All pool state guarded by the pool lock.
#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub all: HashMap<B256, Arc<PooledTx>>,
    pub senders: HashMap<Address, SenderTxs>,
    /// Each sender's highest-nonce transaction (the only one evictable without leaving a gap),
    /// by price.
    by_price: BTreeSet<PriceKey>,
    /// Senders with pending transactions by their count (the largest loses slots first).
    by_pending: BTreeSet<(usize, Address)>,
    /// Senders with queued transactions: the most queued first, then the least recently active.
    by_queued: BTreeSet<(Reverse<usize>, Instant, Address)>,
    /// Senders with queued transactions by last activity (the lifetime).
    by_activity: BTreeSet<(Instant, Address)>,
    /// Base fee the price index is keyed at.
    base_fee: u64,
    pub pending: usize,
    pub queued: usize,
    /// Total bytes of the pooled encodings.
    pub bytes: usize,
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

/// The limits the pool enforces (from its config).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_txs: usize,
    pub max_bytes: usize,
    pub max_queued: usize,
    pub account_slots: usize,
    pub account_queue: usize,
}

/// A transaction about to be admitted, as the room planning sees it.
#[derive(Debug)]
pub(crate) struct Arrival<'a> {
    pub tx: &'a PooledTx,
    /// The same-nonce transaction it replaces.
    pub replaced: Option<&'a PooledTx>,
    /// Whether it will be pending (its nonce continues or is inside the sender's pending run).
    pub executable: bool,
}

/// Transactions chosen for eviction, with what their removal frees.
#[derive(Debug, Default)]
pub(crate) struct Victims {
    pub txs: Vec<Arc<PooledTx>>,
    bytes: usize,
    queued: usize,
    per_sender: HashMap<Address, usize>,
}

impl Victims {
    pub(super) fn push(&mut self, tx: &Arc<PooledTx>, queued: bool) {
        self.bytes += tx.raw.len();
        self.queued += usize::from(queued);
        *self.per_sender.entry(tx.sender()).or_default() += 1;
        self.txs.push(tx.clone());
    }

    fn taken(&self, sender: &Address) -> usize {
        self.per_sender.get(sender).copied().unwrap_or(0)
    }
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
            let keys = self
                .senders
                .values()
                .filter_map(|s| s.txs.values().next_back())
                .map(|tx| self.price_key(tx))
                .collect();
            self.by_price = keys;
        }
    }

    fn snapshot(&self, s: &SenderTxs) -> Snapshot {
        Snapshot {
            pending: s.pending_count(),
            queued: s.queued_count(),
            active: s.active,
            tail: s.txs.values().next_back().map(|tx| self.price_key(tx)),
        }
    }

    fn unindex(&mut self, sender: Address, snap: &Snapshot) {
        if let Some(key) = &snap.tail {
            self.by_price.remove(key);
        }
        if snap.pending > 0 {
            self.by_pending.remove(&(snap.pending, sender));
        }
        if snap.queued > 0 {
            self.by_queued
                .remove(&(Reverse(snap.queued), snap.active, sender));
            self.by_activity.remove(&(snap.active, sender));
        }
        self.pending -= snap.pending;
        self.queued -= snap.queued;
    }

    fn index(&mut self, sender: Address, snap: &Snapshot) {
        if let Some(key) = snap.tail {
            self.by_price.insert(key);
        }
        if snap.pending > 0 {
            self.by_pending.insert((snap.pending, sender));
        }
        if snap.queued > 0 {
            self.by_queued
                .insert((Reverse(snap.queued), snap.active, sender));
            self.by_activity.insert((snap.active, sender));
        }
        self.pending += snap.pending;
        self.queued += snap.queued;
    }

    /// Runs `f` on `sender`'s entry keeping the totals and the eviction indexes right, and drops
    /// the entry when it ends up empty. The entry is created with `base` as account nonce if
    /// missing. O(log n) besides what `f` does.
    fn with_sender<R>(
        &mut self,
        sender: Address,
        base: u64,
        f: impl FnOnce(&mut SenderTxs) -> R,
    ) -> R {
        let before = self.senders.get(&sender).map(|s| self.snapshot(s));
        let entry = self.senders.entry(sender).or_insert_with(|| SenderTxs {
            txs: BTreeMap::new(),
            base,
            pending_end: base,
            cost: U256::ZERO,
            active: Instant::now(),
        });
        let out = f(entry);
        let after = if entry.txs.is_empty() {
            self.senders.remove(&sender);
            None
        } else {
            self.senders.get(&sender).map(|s| self.snapshot(s))
        };
        if before != after {
            if let Some(snap) = before {
                self.unindex(sender, &snap);
            }
            if let Some(snap) = after {
                self.index(sender, &snap);
            }
        }
        out
    }

    /// Inserts a validated transaction, replacing any of the same sender and nonce (the caller
    /// checked the price bump). Returns the hashes that became pending (the new transaction if
    /// it is executable, plus queued ones whose gap it closed).
    pub(super) fn insert(&mut self, tx: Arc<PooledTx>, account_nonce: u64) -> Vec<B256> {
        let sender = tx.sender();
        let nonce = tx.nonce();
        let replaced = self
            .senders
            .get(&sender)
            .and_then(|s| s.txs.get(&nonce))
            .cloned();
        if let Some(old) = &replaced {
            self.all.remove(&old.hash);
            self.bytes -= old.raw.len();
        }
        self.all.insert(tx.hash, tx.clone());
        self.bytes += tx.raw.len();
        self.with_sender(sender, account_nonce, |s| {
            let hash = tx.hash;
            if let Some(old) = &replaced {
                s.cost = s.cost.saturating_sub(old.cost);
            }
            s.cost = s.cost.saturating_add(tx.cost);
            s.txs.insert(nonce, tx);
            let promoted = if s.is_pending(nonce) {
                vec![hash]
            } else {
                s.extend_run()
            };
            if !promoted.is_empty() {
                s.active = Instant::now();
            }
            promoted
        })
    }

    /// Removes one transaction; its sender's later pending transactions drop back to queued.
    pub(super) fn remove(&mut self, hash: &B256) -> Option<Arc<PooledTx>> {
        let tx = self.all.remove(hash)?;
        self.bytes -= tx.raw.len();
        let base = self.senders.get(&tx.sender()).map_or(0, |s| s.base);
        self.with_sender(tx.sender(), base, |s| {
            s.txs.remove(&tx.nonce());
            s.cost = s.cost.saturating_sub(tx.cost);
            if s.is_pending(tx.nonce()) {
                s.pending_end = tx.nonce();
            }
        });
        Some(tx)
    }

    /// Brings one sender up to date with its account: drops transactions whose nonce is used or
    /// that exceed the block gas limit, and, from the highest nonce down, those the balance no
    /// longer covers together with the ones before them; re-splits pending and queued. Returns
    /// the hashes that moved from queued to pending.
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
        let mut spent = U256::ZERO;
        let mut overdrawn = false;
        let doomed: Vec<B256> = entry
            .txs
            .values()
            .filter(|tx| {
                if tx.nonce() < nonce {
                    return true;
                }
                spent = spent.saturating_add(tx.cost);
                overdrawn |= spent > balance;
                overdrawn || tx.gas_limit() > gas_limit
            })
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
            let promoted: Vec<B256> = s
                .txs
                .range(s.base..s.pending_end)
                .filter(|(n, _)| !(old_base..old_end).contains(*n))
                .map(|(_, tx)| tx.hash)
                .collect();
            if nonce > old_base || !promoted.is_empty() {
                s.active = Instant::now();
            }
            promoted
        })
    }

    /// Chooses what to evict so that `new` fits the limits, without changing the pool; `None`
    /// when it cannot fit ("txpool is full"). `victims` may already hold transactions (the
    /// sender's own highest queued one displaced by a lower nonce). Never picks a transaction
    /// of the arriving sender, and always a sender's highest remaining nonce, so no pending
    /// transaction is left behind a gap. In order:
    ///
    /// 1. queued transactions, from the sender with the most queued (then the least recently
    ///    active), highest nonce first; a queued arrival only takes them from a sender that keeps
    ///    more queued than the arrival's sender will have;
    /// 2. for an executable arrival, pending transactions of the sender holding the most above
    ///    its `account_slots` guarantee, while it keeps more than the arrival's sender will have:
    ///    this works at price 0;
    /// 3. for an executable arrival from a sender within its guarantee, senders' last
    ///    transactions paying strictly less than the arrival, cheapest first (geth's rule).
    ///
    /// O((victims + senders visited) log n): each walk stops at the first sender that cannot
    /// give room, since the indexes are sorted.
    pub(super) fn plan_room(
        &self,
        limits: &Limits,
        new: &Arrival<'_>,
        mut victims: Victims,
    ) -> Option<Victims> {
        let sender = new.tx.sender();
        let own = self.senders.get(&sender);
        let own_pending = own.map_or(0, |s| s.pending_count());
        let own_queued = own.map_or(0, |s| s.queued_count());
        let adds_queued = !new.executable && new.replaced.is_none();
        let fits = |v: &Victims| {
            let count = self.all.len() - v.txs.len() + usize::from(new.replaced.is_none());
            let bytes =
                self.bytes - v.bytes - new.replaced.map_or(0, |r| r.raw.len()) + new.tx.raw.len();
            let queued_ok = !adds_queued || self.queued - v.queued < limits.max_queued;
            count <= limits.max_txs && bytes <= limits.max_bytes && queued_ok
        };
        if fits(&victims) {
            return Some(victims);
        }
        // 1. Queued first.
        for (Reverse(queued), _, addr) in &self.by_queued {
            if !new.executable && *queued <= own_queued + 1 {
                break;
            }
            if *addr == sender {
                continue;
            }
            for tx in self.senders[addr].queued().rev() {
                if !new.executable && queued - victims.taken(addr) <= own_queued + 1 {
                    break;
                }
                victims.push(tx, true);
                if fits(&victims) {
                    return Some(victims);
                }
            }
        }
        if !new.executable {
            return None;
        }
        // 2. Pending of the senders above their guarantee, by share.
        for (pending, addr) in self.by_pending.iter().rev() {
            if *pending <= limits.account_slots || *pending <= own_pending + 1 {
                break;
            }
            if *addr == sender {
                continue;
            }
            for tx in self.senders[addr].pending().rev() {
                let left = pending - victims.taken(addr);
                if left <= limits.account_slots || left <= own_pending + 1 {
                    break;
                }
                victims.push(tx, false);
                if fits(&victims) {
                    return Some(victims);
                }
            }
        }
        // 3. By price, for senders within their guarantee.
        if own_pending >= limits.account_slots {
            return None;
        }
        let new_key = self.price_key(new.tx);
        for key in &self.by_price {
            if (key.0, key.1) >= (new_key.0, new_key.1) {
                break;
            }
            let tx = &self.all[&key.3];
            if tx.sender() == sender || victims.taken(&tx.sender()) > 0 {
                continue;
            }
            let queued = !self.senders[&tx.sender()].is_pending(tx.nonce());
            victims.push(tx, queued);
            if fits(&victims) {
                return Some(victims);
            }
        }
        None
    }

    /// Drops the queued transactions of senders inactive since `now - lifetime` (geth's
    /// lifetime); returns how many were dropped. O(dropped log n).
    pub(super) fn expire_queued(&mut self, now: Instant, lifetime: Duration) -> Vec<Arc<PooledTx>> {
        let mut dropped = Vec::new();
        while let Some(&(active, addr)) = self.by_activity.first() {
            if now.saturating_duration_since(active) < lifetime {
                break;
            }
            let hashes: Vec<B256> = self.senders[&addr].queued().map(|tx| tx.hash).collect();
            if hashes.is_empty() {
                break;
            }
            dropped.extend(hashes.iter().filter_map(|hash| self.remove(hash)));
        }
        dropped
    }

    /// Brings the queued counts back within the limits after transactions were demoted (a
    /// removal or a block left a gap): `senders`' queued beyond `account_queue` first, then the
    /// most queued senders' while the pool holds more than `max_queued`, highest nonces first.
    pub(super) fn truncate_queued(&mut self, senders: &[Address], limits: &Limits) -> usize {
        let mut dropped = 0;
        for addr in senders {
            let excess: Vec<B256> = self.senders.get(addr).map_or(Vec::new(), |s| {
                let over = s.queued_count().saturating_sub(limits.account_queue);
                s.queued().rev().take(over).map(|tx| tx.hash).collect()
            });
            for hash in &excess {
                self.remove(hash);
            }
            dropped += excess.len();
        }
        while self.queued > limits.max_queued {
            let Some(&(_, _, addr)) = self.by_queued.first() else {
                break;
            };
            let Some(hash) = self.senders[&addr].queued().next_back().map(|tx| tx.hash) else {
                break;
            };
            self.remove(&hash);
            dropped += 1;
        }
        dropped
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
