//! Transaction admission with the Karma policy on and off, and the Karma lookup alone.
//!
//! `cargo bench -p l2node-rpc --bench karma` (criterion; `-- admission` or `-- status_next`
//! runs one group).
//!
//! - `admission/{karma_on,karma_off}/N`: `Pool::add_raw` of N pre-signed gasless 1-wei
//!   transfers from dev account 0 (nonces 0..N, so the sender has up to N-1 pending
//!   transactions when the last one arrives) into a fresh pool, as `eth_sendRawTransaction`
//!   calls it (`chain.next_block()` per call). The chain is a real redb `Storage` in a
//!   tempdir opened with the dev genesis; "off" is the same genesis without its `karma`
//!   section (same accounts, same predeployed contracts, no policy). The pool is wired like
//!   `l2node_launch::spawn` wires it, one `Karma` service per chain shared by every pool. Criterion's
//!   throughput line gives transactions/s; time / N is ns per transaction.
//!   `admission/decode_and_recover` is the floor under both: decoding one of those
//!   transactions and recovering its sender. `admission_recovered/*` is the same as
//!   `admission/*` through `Pool::add` with the senders already recovered: the pool and policy
//!   work alone, where Karma's share is visible (recovery is ~95% of `add_raw`).
//! - `status_next/*`: `Karma::status_next` for a sender at the top tier (account 0) and one
//!   without Karma (account 9); `warm` is the steady state between two blocks (the sender's
//!   status kept for the head), `cold` reads it on every call, as the first lookup of each
//!   sender after each new block does (a head hash that is not the stored head's: nothing is
//!   kept, the tiers are derived again too).
//! - `premium_quote/*`: what the premium path of `l2_estimateGas` adds after the Karma lookup,
//!   `PremiumQuote::priority_fee` (unsigned tx RLP, deflate of `from ++ rlp`, fee formula), for
//!   a 1-wei transfer and a `Token.transfer` call; `compressed_size` is the deflate alone.
//!
//! One empty block is sealed at the current time before measuring, so the head (and the
//! ledger's recorded tiers) are in the current epoch, as on a running dev node.

use std::{hint::black_box, sync::Arc};

use alloy_consensus::{
    transaction::{Recovered, SignerRecoverable},
    TxEip1559, TxEnvelope,
};
use alloy_eips::eip2718::{Decodable2718, Encodable2718};
use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use alloy_rpc_types_eth::TransactionRequest;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput};
use l2node_node::chain::Chain;
use l2node_node::chainspec::ChainSpec;
use l2node_node::constants::DEV_CHAIN_ID;
use l2node_node::dev::{dev_accounts, dev_genesis, dev_karma_config, dev_sequencer};
use l2node_node::executor;
use l2node_node::fees::{premium::PremiumQuote, pricing};
use l2node_node::karma::Karma;
use l2node_node::pool::{Pool, PoolConfig};
use l2node_node::test_utils::{self, BOB};
use l2node_storage::Storage;

/// The node binary's allocator (`crates/cli/src/main.rs`): the figures are the node's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Transactions per measured batch (one fresh pool each).
const BATCHES: [usize; 3] = [1, 16, 256];

/// A dev chain in a tempdir, with its Karma service when the genesis has a `karma` section.
struct Fixture {
    chain: Chain,
    karma: Option<Arc<Karma>>,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new(with_karma: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut genesis = dev_genesis(0);
        if !with_karma {
            genesis.config.extra_fields.remove("karma");
        }
        let spec = Arc::new(ChainSpec::from_genesis(genesis).unwrap());
        let storage = Storage::open(&dir.path().join("chain.redb")).unwrap();
        let chain = Chain::open(storage, spec).unwrap();
        assert_eq!(chain.ledger().is_some(), with_karma);
        seal_empty_block(&chain);
        // As `l2node_launch::spawn`: one service per chain, no kill-switch file.
        let karma = chain.ledger().map(|ledger| {
            Arc::new(Karma::new(ledger.clone(), chain.storage().clone(), None).unwrap())
        });
        Self {
            chain,
            karma,
            _dir: dir,
        }
    }

    fn pool(&self) -> Pool {
        let pool = Pool::new(PoolConfig::default()).unwrap();
        match &self.karma {
            Some(k) => pool.with_karma(k.clone()),
            None => pool,
        }
    }
}

/// Seals one block without transactions at the next block's timestamp (now).
fn seal_empty_block(chain: &Chain) {
    let next = chain.next_block();
    let state = chain.storage().state_at(None).unwrap();
    let built = executor::build_block(
        &chain.spec(),
        &state,
        &next.parent.header,
        next.attributes(),
        std::iter::empty(),
    )
    .unwrap();
    drop(state);
    chain
        .commit_built(built, [0u8; 32], &dev_sequencer())
        .unwrap();
}

/// `n` signed 1-wei transfers from dev account 0, nonces 0..n, priced gasless (1 gwei max fee,
/// no tip: below the 12 gwei premium threshold).
fn gasless_transfers(n: usize) -> Vec<Bytes> {
    let key = &dev_accounts()[0];
    (0..n as u64)
        .map(|nonce| {
            let tx = TxEip1559 {
                chain_id: DEV_CHAIN_ID,
                nonce,
                gas_limit: 21_000,
                max_fee_per_gas: 1_000_000_000,
                max_priority_fee_per_gas: 0,
                to: TxKind::Call(BOB),
                value: U256::from(1),
                ..Default::default()
            };
            Bytes::from(test_utils::sign(key, tx).inner().encoded_2718())
        })
        .collect()
}

/// Checks once, outside any measurement, that the batch is admitted and takes the gasless
/// path (so "on" measures the quota check, not a refusal or the premium shortcut).
fn check(fx: &Fixture, raws: &[Bytes]) {
    let pool = fx.pool();
    let state = fx.chain.storage().state_at(None).unwrap();
    let next = fx.chain.next_block();
    for raw in raws {
        pool.add_raw(raw, &state, &next).expect("admitted");
    }
    assert_eq!(pool.status(), (raws.len(), 0));
    if let Some(k) = &fx.karma {
        let tx = TxEnvelope::decode_2718(&mut &raws[0][..]).expect("decodes");
        assert!(!k.ledger().classify(&tx, next.base_fee).0, "gasless");
        let sender = dev_accounts()[0].address();
        assert_eq!(
            pool.pending_units(&sender, next.base_fee),
            raws.len() as u64
        );
    }
}

fn admission(c: &mut Criterion) {
    let mut group = c.benchmark_group("admission");
    for (label, with_karma) in [("karma_on", true), ("karma_off", false)] {
        let fx = Fixture::new(with_karma);
        for n in BATCHES {
            let raws = gasless_transfers(n);
            check(&fx, &raws);
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(BenchmarkId::new(label, n), &raws, |b, raws| {
                b.iter_batched(
                    || (fx.pool(), fx.chain.storage().state_at(None).unwrap()),
                    |(pool, state)| {
                        for raw in raws {
                            black_box(pool.add_raw(raw, &state, &fx.chain.next_block()).unwrap());
                        }
                        // Dropped outside the measurement.
                        (pool, state)
                    },
                    // A pool preallocates its event channel: keep few inputs alive at once.
                    BatchSize::NumIterations(32),
                );
            });
        }
    }
    // The floor every admission pays whatever the policy: decoding and signature recovery.
    let raw = gasless_transfers(1).remove(0);
    group.throughput(Throughput::Elements(1));
    group.bench_function("decode_and_recover", |b| {
        b.iter(|| {
            let tx = TxEnvelope::decode_2718(&mut black_box(&raw[..])).unwrap();
            black_box(tx.recover_signer().unwrap())
        });
    });
    group.finish();
}

/// [`admission`] without the signature recovery that dominates it: `Pool::add` of the same
/// transactions already recovered, so the policy's share is visible.
fn admission_recovered(c: &mut Criterion) {
    let mut group = c.benchmark_group("admission_recovered");
    for (label, with_karma) in [("karma_on", true), ("karma_off", false)] {
        let fx = Fixture::new(with_karma);
        for n in BATCHES {
            let txs: Vec<Recovered<TxEnvelope>> = gasless_transfers(n)
                .iter()
                .map(|raw| {
                    let tx = TxEnvelope::decode_2718(&mut &raw[..]).unwrap();
                    let sender = tx.recover_signer().unwrap();
                    Recovered::new_unchecked(tx, sender)
                })
                .collect();
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(BenchmarkId::new(label, n), &txs, |b, txs| {
                b.iter_batched(
                    || {
                        (
                            fx.pool(),
                            fx.chain.storage().state_at(None).unwrap(),
                            txs.clone(),
                        )
                    },
                    |(pool, state, txs)| {
                        for tx in txs {
                            black_box(pool.add(tx, &state, &fx.chain.next_block()).unwrap());
                        }
                        (pool, state)
                    },
                    BatchSize::NumIterations(32),
                );
            });
        }
    }
    group.finish();
}

fn status_next(c: &mut Criterion) {
    let fx = Fixture::new(true);
    let karma = fx.karma.clone().unwrap();
    let state = fx.chain.storage().state_at(None).unwrap();
    let next = fx.chain.next_block();
    let (number, hash) = (next.parent.header.number, next.parent.hash);
    let accounts = dev_accounts();
    let senders: [(&str, Address); 2] = [
        ("legendary", accounts[0].address()),
        ("no_karma", accounts[9].address()),
    ];
    for (name, sender) in senders {
        let s = karma
            .status_next(&state, number, hash, next.timestamp, sender)
            .unwrap();
        eprintln!(
            "status_next {name}: tier {:?}, quota {}, used {}",
            s.tier.as_ref().map(|(_, t)| t.name.as_str()),
            s.state.quota(),
            s.state.usage.used
        );
    }
    let mut group = c.benchmark_group("status_next");
    for (name, sender) in senders {
        group.bench_function(BenchmarkId::new("warm", name), |b| {
            b.iter(|| {
                black_box(
                    karma
                        .status_next(&state, number, hash, next.timestamp, black_box(sender))
                        .unwrap(),
                )
            });
        });
    }
    // A head hash that is not the stored head's: nothing is kept, every read is made.
    let mut i = 0u64;
    group.bench_function(BenchmarkId::new("cold", senders[0].0), |b| {
        b.iter(|| {
            i += 1;
            let head = B256::left_padding_from(&i.to_be_bytes());
            black_box(
                karma
                    .status_next(&state, number, head, next.timestamp, senders[0].1)
                    .unwrap(),
            )
        });
    });
    group.finish();
}

fn premium_quote(c: &mut Criterion) {
    let cfg = dev_karma_config();
    let quote = PremiumQuote {
        karma: &cfg,
        head_extra_data: &[],
        chain_id: DEV_CHAIN_ID,
    };
    let from = dev_accounts()[9].address();
    let token = Address::repeat_byte(0x70);
    let mut call = vec![0xa9, 0x05, 0x9c, 0xbb];
    call.extend_from_slice(&B256::left_padding_from(BOB.as_slice()).0);
    call.extend_from_slice(&U256::from(1).to_be_bytes::<32>());
    let requests = [
        (
            "transfer",
            TransactionRequest::default()
                .from(from)
                .to(BOB)
                .value(U256::from(1)),
            21_000u64,
        ),
        (
            "erc20",
            TransactionRequest::default()
                .from(from)
                .to(token)
                .input(Bytes::from(call).into()),
            35_000,
        ),
    ];
    let mut group = c.benchmark_group("premium_quote");
    for (name, req, gas) in &requests {
        let fee = quote.priority_fee(req, from, 0, *gas);
        eprintln!("premium_quote {name}: priority fee {fee} wei per gas");
        group.bench_function(BenchmarkId::new("priority_fee", name), |b| {
            b.iter(|| black_box(quote.priority_fee(black_box(req), from, 0, *gas)));
        });
    }
    let rlp = pricing::unsigned_tx_rlp(&requests[0].1, DEV_CHAIN_ID, 0, 21_000);
    group.bench_function(BenchmarkId::new("compressed_size", "transfer"), |b| {
        b.iter(|| black_box(pricing::compressed_size(from, black_box(&rlp))));
    });
    group.finish();
}

fn main() {
    l2node_node::tune_allocator();
    let mut c = Criterion::default().configure_from_args();
    admission(&mut c);
    admission_recovered(&mut c);
    status_next(&mut c);
    premium_quote(&mut c);
    c.final_summary();
}
