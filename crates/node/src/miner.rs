//! The sequencer's block producer: every block period (or on each transaction with
//! `--block-time 0`) it builds a block from the pool, seals it and commits it. The same build
//! gives readers the `pending` block.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use alloy_consensus::ReceiptEnvelope;
use alloy_primitives::{Address, B256};
use alloy_signer_local::PrivateKeySigner;
use parking_lot::Mutex;
use tokio::sync::{
    broadcast::{self, error::RecvError},
    mpsc, oneshot,
};

use crate::chain::{Chain, ChainError, NextBlock};
use crate::constants::{MINE_REQUESTS_QUEUED, PENDING_BLOCK_MAX_AGE};
use crate::executor;
use crate::group::SequencerGroup;
use crate::pool::Pool;
use l2node_storage::StoredBlock;

/// How the miner runs.
#[derive(Debug, Clone)]
pub struct MinerConfig {
    /// Block period; zero mines as soon as transactions arrive.
    pub block_time: Duration,
    /// Seal blocks without transactions too.
    pub create_empty_blocks: bool,
    /// The sealing key.
    pub key: PrivateKeySigner,
    /// The extraData vanity of every sealed block: the pricing inputs on a Karma chain (so
    /// every node quotes premium fees from the same figures), zeros otherwise.
    pub vanity: [u8; 32],
    /// The sequencer group this node is a member of (`--sequencer-group`): it seals only while
    /// it leads, and each block goes into the group's log before it is stored or announced.
    pub group: Option<Arc<dyn SequencerGroup>>,
}

/// A request to seal one block now, whatever the pool holds (`evm_mine`); the answer is the
/// sealed block's number, or why it failed.
pub type MineRequest = oneshot::Sender<Result<u64, String>>;

/// Asks the running miner for a block (the dev namespace's `evm_mine`).
#[derive(Debug, Clone)]
pub struct MineTrigger(mpsc::Sender<MineRequest>);

impl MineTrigger {
    /// A trigger and the receiver [`run`] takes.
    pub fn new() -> (Self, mpsc::Receiver<MineRequest>) {
        let (tx, rx) = mpsc::channel(MINE_REQUESTS_QUEUED);
        (Self(tx), rx)
    }

    /// Seals one block and returns its number; `None` when no miner runs.
    pub async fn mine(&self) -> Option<Result<u64, String>> {
        let (tx, rx) = oneshot::channel();
        self.0.send(tx).await.ok()?;
        rx.await.ok()
    }
}

/// Runs the miner until the task is dropped: every block period (or on each transaction with
/// a zero period), and at once for each request of a [`MineTrigger`].
pub async fn run(
    chain: Arc<Chain>,
    pool: Arc<Pool>,
    cfg: MinerConfig,
    mut requests: mpsc::Receiver<MineRequest>,
) {
    let mut pending = pool.subscribe();
    let mut ticker = (!cfg.block_time.is_zero()).then(|| {
        // The first block one period after the start, as geth's dev period does (an interval's
        // first tick is at once, which would seal whatever arrived while the node started).
        let first = tokio::time::Instant::now() + cfg.block_time;
        let mut t = tokio::time::interval_at(first, cfg.block_time);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    // With --block-time 0, pending transactions (e.g. restored from the journal) start a block
    // right away; after that each arrival does.
    let mut mined_last = true;
    let mut requests_open = true;
    // Never notified outside a group.
    let leadership = cfg
        .group
        .as_ref()
        .map(|g| g.leadership_taken())
        .unwrap_or_default();
    loop {
        let forced = tokio::select! {
            _ = leadership.notified() => {
                match ticker.as_mut() {
                    Some(t) => {
                        t.reset_at(first_slot(&chain, cfg.block_time));
                        continue;
                    }
                    // Mining on arrival: what arrived while another member led goes in now.
                    None => None,
                }
            }
            request = requests.recv(), if requests_open => match request {
                Some(reply) => Some(reply),
                None => {
                    requests_open = false;
                    continue;
                }
            },
            closed = next_turn(ticker.as_mut(), mined_last, &pool, &mut pending) => {
                if closed {
                    return;
                }
                None
            }
        };
        // Everything that arrived meanwhile goes into the same block.
        while pending.try_recv().is_ok() {}
        if let Some(Err(why)) = cfg.group.as_ref().map(|g| g.may_seal()) {
            mined_last = false;
            if let Some(reply) = forced {
                let _ = reply.send(Err(format!("this node does not seal now: {why}")));
            }
            continue;
        }
        let (chain2, pool2, cfg2, force) =
            (chain.clone(), pool.clone(), cfg.clone(), forced.is_some());
        let result =
            tokio::task::spawn_blocking(move || mine_one(&chain2, &pool2, &cfg2, force)).await;
        mined_last = false;
        let answer = match result {
            Ok(Ok(Some((number, txs)))) => {
                mined_last = true;
                tracing::info!(target: "l2node::miner", number, txs, "sealed block");
                Ok(number)
            }
            Ok(Ok(None)) => Ok(chain.head().header.number),
            Ok(Err(e)) => {
                tracing::error!(target: "l2node::miner", error = %e, "block production failed");
                Err(e.to_string())
            }
            Err(e) => {
                tracing::error!(target: "l2node::miner", error = %e, "block production panicked");
                Err("block production panicked (see the node's log)".to_string())
            }
        };
        if let Some(reply) = forced {
            let _ = reply.send(answer);
        }
    }
}

/// When a block period has passed since the head's timestamp (now, if it already has): when a
/// member that just took the leadership seals its first block.
fn first_slot(chain: &Chain, block_time: Duration) -> tokio::time::Instant {
    let due = Duration::from_secs(chain.head().header.timestamp) + block_time;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    tokio::time::Instant::now() + due.saturating_sub(now)
}

/// Waits for the miner's next turn: the next tick, or (with a zero period) pending work.
/// `true` when the pool is gone.
async fn next_turn(
    ticker: Option<&mut tokio::time::Interval>,
    mined_last: bool,
    pool: &Pool,
    pending: &mut broadcast::Receiver<B256>,
) -> bool {
    match ticker {
        Some(t) => {
            t.tick().await;
            false
        }
        None if mined_last && pool.status().0 > 0 => false,
        None => matches!(pending.recv().await, Err(RecvError::Closed)),
    }
}

/// Builds the next block from the pool's best transactions on top of `next.parent`, without
/// sealing or committing it: the miner's block and the RPC's `pending` block are this one build.
pub fn build_next(
    chain: &Chain,
    pool: &Pool,
    next: &NextBlock,
) -> Result<executor::BuiltBlock, ChainError> {
    build_next_refusing(chain, pool, next, &mut Vec::new())
}

/// A pooled transaction the Karma policy kept out of a block, and why.
type Refused = (Arc<crate::pool::PooledTx>, String);

/// [`build_next`], collecting in `refused` the gasless transactions the Karma policy keeps out
/// of the block (quota used up meanwhile, a denial, the kill switch).
fn build_next_refusing(
    chain: &Chain,
    pool: &Pool,
    next: &NextBlock,
    refused: &mut Vec<Refused>,
) -> Result<executor::BuiltBlock, ChainError> {
    // The parent's state even if a block lands meanwhile (commit_built then refuses the build).
    let state = chain.storage().state_at(Some(next.parent.header.number))?;
    let candidates = pool.best(next.base_fee);
    let mut held_back = std::collections::HashSet::new();
    let mut gate = pool.karma().map(|k| {
        k.block_gate(
            &state,
            (next.parent.header.number, next.parent.hash),
            next.timestamp,
            next.base_fee,
        )
    });
    executor::build_block(
        &chain.spec(),
        &state,
        &next.parent.header,
        next.attributes(),
        candidates
            .iter()
            .filter(|t| {
                let Some(g) = gate.as_mut() else { return true };
                // A sender's later nonces cannot go in after one was left out.
                if held_back.contains(&t.sender()) {
                    return false;
                }
                match g.check(t.tx.inner(), t.sender()) {
                    Ok(()) => true,
                    Err(why) => {
                        held_back.insert(t.sender());
                        if let Some(why) = why {
                            refused.push(((*t).clone(), why.to_string()));
                        }
                        false
                    }
                }
            })
            .map(|t| t.tx.clone()),
    )
    .map_err(|source| ChainError::Exec {
        number: next.number,
        source,
    })
}

/// The block the sequencer would build next, with its receipts (not sealed: no state root or
/// signature, and never stored).
#[derive(Debug)]
pub struct PendingBlock {
    /// The block.
    pub block: StoredBlock,
    /// Receipts of its transactions.
    pub receipts: Vec<ReceiptEnvelope>,
}

/// Builds the [`PendingBlock`] on the current head.
pub fn pending_block(chain: &Chain, pool: &Pool) -> Result<PendingBlock, ChainError> {
    let built = build_next(chain, pool, &chain.next_block())?;
    let block = built.to_block();
    let senders = built.transactions.iter().map(|t| t.signer()).collect();
    let block = StoredBlock {
        hash: block.header.hash_slow(),
        header: block.header,
        body: block.body,
        senders,
    };
    Ok(PendingBlock {
        block,
        receipts: built.receipts,
    })
}

/// What a cached pending block was built from: the head and the pool's counts.
type PendingKey = (B256, (usize, usize));

/// The pending block for readers (`eth_getBlockByNumber("pending")`, `eth_feeHistory` up to
/// `pending`): built at most once per head and pool state and [`PENDING_BLOCK_MAX_AGE`], one
/// build at a time, so a flood of pending reads costs one build instead of one per request and
/// leaves the cores to the miner.
#[derive(Debug)]
pub struct PendingBlocks {
    chain: Arc<Chain>,
    pool: Arc<Pool>,
    last: Mutex<Option<(PendingKey, Instant, Arc<PendingBlock>)>>,
}

impl PendingBlocks {
    /// Pending blocks of `chain` from `pool`.
    pub fn new(chain: Arc<Chain>, pool: Arc<Pool>) -> Self {
        Self {
            chain,
            pool,
            last: Mutex::new(None),
        }
    }

    /// The current pending block (blocking: call it off the async runtime).
    pub fn get(&self) -> Result<Arc<PendingBlock>, ChainError> {
        // Held across the build: concurrent callers wait for it and reuse it.
        let mut last = self.last.lock();
        let key = (self.chain.head().hash, self.pool.status());
        if let Some((k, at, block)) = last.as_ref() {
            if *k == key && at.elapsed() < PENDING_BLOCK_MAX_AGE {
                return Ok(block.clone());
            }
        }
        let block = Arc::new(pending_block(&self.chain, &self.pool)?);
        *last = Some((key, Instant::now(), block.clone()));
        Ok(block)
    }
}

/// Builds, seals and commits one block on the current head. Returns the number and
/// transaction count, or `None` when there was nothing to do.
pub fn mine_one(
    chain: &Chain,
    pool: &Pool,
    cfg: &MinerConfig,
    force: bool,
) -> Result<Option<(u64, usize)>, ChainError> {
    let next = chain.next_block();
    let create_empty = cfg.create_empty_blocks || force;
    if pool.status().0 == 0 && !create_empty {
        return Ok(None);
    }
    let started = Instant::now();
    let mut refused = Vec::new();
    let built = build_next_refusing(chain, pool, &next, &mut refused)?;
    let mut invalid: Vec<_> = built.invalid.iter().map(|(h, _)| *h).collect();
    for (hash, reason) in &built.invalid {
        tracing::debug!(target: "l2node::miner", %hash, %reason, "dropped invalid transaction");
    }
    // What the policy refuses now would wait in the pool for a new window with no answer for
    // its sender: drop it and record why (the sender can resend it, paying the premium).
    invalid.extend(refused.iter().map(|(t, _)| t.hash));
    let dropped: Vec<_> = built
        .invalid
        .iter()
        .filter_map(|(hash, reason)| Some((pool.get(hash)?, reason.to_string())))
        .chain(refused)
        .collect();
    let count = built.transactions.len();
    if count == 0 && !create_empty {
        pool.remove(&invalid);
        record_dropped(pool, dropped, next.number, next.timestamp);
        return Ok(None);
    }
    // Only accounts the block changed can have a new nonce or a lower balance: re-reading
    // those (not every pooled sender) keeps the per-block pool work O(block), not O(pool).
    let touched: Vec<Address> = built.changes.iter().map(|c| c.address).collect();
    chain.commit_built_to(built, cfg.vanity, &cfg.key, cfg.group.as_deref())?;
    chain.clock().sealed(next.timestamp);
    crate::metrics::block_sealed(started.elapsed());
    pool.remove(&invalid);
    record_dropped(pool, dropped, next.number, next.timestamp);
    let state = chain.storage().state_at(None)?;
    let after = chain.next_block();
    if after.gas_limit == next.gas_limit {
        pool.on_new_block_touched(&state, &after, &touched);
    } else {
        // A new gas limit can invalidate any sender's transactions.
        pool.on_new_block(&state, &after);
    }
    Ok(Some((next.number, count)))
}

/// Records the transactions block `number` dropped (once they are out of the pool), and
/// announces them to the peers.
fn record_dropped(pool: &Pool, dropped: Vec<Refused>, number: u64, timestamp: u64) {
    let Some(exclusions) = pool.exclusions() else {
        return;
    };
    for (t, reason) in dropped {
        exclusions.record(t.exclusion(reason, number, timestamp), true);
    }
}

/// The sequencer's slasher: for each sender reported by the pool for two different gasless
/// transactions in one slot, submits `Karma.slash(sender)` signed by `key` (a premium
/// transaction, so it never depends on the slasher's own quota). One slash per sender and
/// epoch.
pub async fn run_slasher(
    chain: Arc<Chain>,
    pool: Arc<Pool>,
    key: PrivateKeySigner,
    mut reports: tokio::sync::mpsc::UnboundedReceiver<Address>,
) {
    let mut slashed = std::collections::HashSet::new();
    while let Some(sender) = reports.recv().await {
        let Some(karma) = pool.karma().cloned() else {
            return;
        };
        let next = chain.next_block();
        let epoch = karma.ledger().epochs().of(next.timestamp);
        // Earlier epochs' entries are done with.
        slashed.retain(|(_, e)| *e >= epoch);
        if !slashed.insert((sender, epoch)) {
            continue;
        }
        let (chain2, pool2, key2) = (chain.clone(), pool.clone(), key.clone());
        let result = tokio::task::spawn_blocking(move || {
            submit_slash(&chain2, &pool2, &karma, &key2, sender, &next)
        })
        .await;
        match result {
            Ok(Ok(hash)) => {
                tracing::warn!(target: "l2node::karma", %sender, %hash, "double signal: submitted Karma.slash")
            }
            Ok(Err(e)) => {
                tracing::error!(target: "l2node::karma", %sender, error = %e, "cannot submit Karma.slash");
                // The sender's next double signal tries again.
                slashed.remove(&(sender, epoch));
            }
            Err(e) => {
                tracing::error!(target: "l2node::karma", %sender, error = %e, "slash task failed");
                slashed.remove(&(sender, epoch));
            }
        }
    }
}

fn submit_slash(
    chain: &Chain,
    pool: &Pool,
    karma: &crate::karma::Karma,
    key: &PrivateKeySigner,
    sender: Address,
    next: &NextBlock,
) -> Result<B256, crate::pool::PoolError> {
    use alloy_consensus::{SignableTransaction, TxEip1559};
    use alloy_signer::SignerSync;
    use alloy_sol_types::SolCall;
    let state = chain.storage().state_at(None)?;
    let me = key.address();
    let nonce = match pool.pending_nonce(me) {
        Some(n) => n,
        None => l2node_storage::StateReader::account(&state, me)?.map_or(0, |a| a.nonce),
    };
    let price = u128::try_from(karma.threshold()).unwrap_or(u128::MAX);
    let tx = TxEip1559 {
        chain_id: next.chain_id,
        nonce,
        gas_limit: crate::constants::KARMA_SLASH_GAS_LIMIT,
        max_fee_per_gas: price.saturating_add(u128::from(next.base_fee)),
        max_priority_fee_per_gas: price,
        to: alloy_primitives::TxKind::Call(karma.ledger().config().karma_contract),
        value: alloy_primitives::U256::ZERO,
        access_list: Default::default(),
        input: crate::karma::contracts::IKarma::slashCall { account: sender }
            .abi_encode()
            .into(),
    };
    let sig = key
        .sign_hash_sync(&tx.signature_hash())
        .map_err(|_| crate::pool::PoolError::InvalidSender)?;
    let env = alloy_consensus::TxEnvelope::from(tx.into_signed(sig));
    let recovered = alloy_consensus::transaction::Recovered::new_unchecked(env, me);
    pool.add(recovered, &state, next)
}
