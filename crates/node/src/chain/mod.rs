//! The canonical chain: genesis, the one execute-verify-commit path, the head and block
//! notifications.
//!
//! Blocks from the local miner and from `l2node import` both end in [`Chain::commit`], and a
//! block is committed to storage before anyone hears of it.

pub mod clique;
mod genesis;
mod next;
mod reorg;
mod snap;
mod validate;

use std::sync::Arc;

use alloy_consensus::{
    proofs, Block, BlockBody, Header, ReceiptEnvelope, TxEnvelope, TxReceipt as _,
};
use alloy_eips::BlockNumberOrTag;
use alloy_hardforks::EthereumHardforks;
use alloy_primitives::{Address, Bloom, B256, U256};
use alloy_signer_local::PrivateKeySigner;
use parking_lot::{Mutex, RwLock};
use revm::bytecode::Bytecode;
use tokio::sync::broadcast;

pub use next::{Clock, NextBlock};
pub use reorg::{Competing, Reorg};

use crate::chainspec::ChainSpec;
use crate::executor::{self, ExecError};
use crate::karma::ledger::Ledger;
use l2node_storage::{BlockToStore, Storage, StorageError, StoredBlock};
use l2node_trie as trie;
use l2node_trie::state::{AccountChange, AccountState, StateChanges};

/// Errors of the chain layer.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// Storage failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Execution failed.
    #[error("block {number}: {source}")]
    Exec {
        /// Block number.
        number: u64,
        /// The execution error.
        source: ExecError,
    },
    /// The sequencer group did not take the sealed block into its log (another member leads,
    /// or the engine is unreachable): the block is neither stored nor announced.
    #[error("block {number} was not published: the sequencer group's log refused it: {reason}")]
    NotInGroupLog {
        /// Block number.
        number: u64,
        /// Why.
        reason: String,
    },
    /// The seal is missing, invalid or from a stranger.
    #[error(transparent)]
    Seal(#[from] clique::SealError),
    /// A state snapshot cannot be taken or completed.
    #[error("state snapshot: {0}")]
    Snapshot(String),
    /// A header field disagrees with what executing the block produced.
    #[error("block {number}: {field} mismatch: header has {expected}, computed {computed}")]
    Mismatch {
        /// Block number.
        number: u64,
        /// Which field (e.g. "state root").
        field: &'static str,
        /// Value in the header.
        expected: String,
        /// Value computed locally.
        computed: String,
    },
    /// A header field breaks a rule of the chain (checked against the parent and the fork
    /// schedule, see `chain/validate.rs`).
    #[error("block {number}: invalid {field}: header has {has}, expected {expected}")]
    InvalidHeader {
        /// Block number.
        number: u64,
        /// Which field (e.g. "gas limit").
        field: &'static str,
        /// Value in the header.
        has: String,
        /// What the rule allows.
        expected: String,
    },
    /// A block whose parent this node has not seen (neither on its chain nor among the
    /// competing blocks it keeps).
    #[error("block {number}: unknown parent {parent}")]
    UnknownParent {
        /// Block number.
        number: u64,
        /// The parent hash it names.
        parent: B256,
    },
    /// A transaction signature does not recover.
    #[error("block {number}: transaction {index} has an invalid signature")]
    InvalidSignature {
        /// Block number.
        number: u64,
        /// Index in the block.
        index: usize,
    },
    /// The data directory holds a different chain than the genesis given.
    #[error("the data directory holds a chain with genesis {stored}, but the genesis config gives {configured}; use another --data-path or the matching genesis")]
    GenesisMismatch {
        /// Genesis hash on disk.
        stored: B256,
        /// Genesis hash of the configuration.
        configured: B256,
    },
    /// The configured genesis (config or alloc) differs from the one the chain was created with.
    #[error("the data directory holds a chain created with a different genesis: {differences}; use another --data-path or the matching genesis")]
    GenesisConfigMismatch {
        /// The differing fields, as `path: stored X, configured Y`.
        differences: String,
    },
    /// Taking back one of this node's own blocks for a reorganisation failed (storage, or
    /// executing the block again): this node's fault, never the competing chain's.
    #[error("cannot take back block {number} to reorganise: {cause}")]
    Unwind {
        /// The block that could not be taken back.
        number: u64,
        /// Why.
        cause: Box<ChainError>,
    },
    /// A Clique chain whose genesis names no signer: no block's seal could be checked.
    #[error("the genesis has a clique section but its extraData names no signer ({len} bytes; a Clique genesis extraData is 32 vanity bytes, the 20-byte signer addresses, 65 zero bytes): blocks of this chain could not be checked; list the sequencer's address there")]
    NoCliqueSigners {
        /// Length of the genesis extraData.
        len: usize,
    },
}

impl ChainError {
    /// Whether the failure is this node's own (its storage, or its own blocks), not the
    /// block's: a peer that sent the block is not at fault.
    pub fn is_local(&self) -> bool {
        matches!(self, Self::Storage(_) | Self::Unwind { .. })
    }
}

/// The canonical head.
#[derive(Debug, Clone)]
pub struct Head {
    /// Head header.
    pub header: Header,
    /// Head hash.
    pub hash: B256,
}

/// A committed block, as announced to subscribers.
#[derive(Debug)]
pub struct NewBlock {
    /// The block.
    pub block: StoredBlock,
    /// Its receipts.
    pub receipts: Vec<ReceiptEnvelope>,
}

/// The chain service shared by the miner, import and RPC.
pub struct Chain {
    genesis: B256,
    storage: Storage,
    /// Replaced (never changed) when the merge by total difficulty is found.
    spec: RwLock<Arc<ChainSpec>>,
    head: RwLock<Arc<Head>>,
    write: Mutex<()>,
    blocks: broadcast::Sender<Arc<NewBlock>>,
    signers: Vec<Address>,
    /// The Karma ledger rules, on a chain with a `karma` section.
    ledger: Option<Ledger>,
    /// The head's total difficulty while the chain waits for the merge by total difficulty
    /// (see [`ChainSpec::awaits_merge`]); `None` otherwise.
    total_difficulty: Mutex<Option<U256>>,
    /// What the next block is stamped with (moved only by the dev methods).
    clock: next::Clock,
    /// The RLP of blocks import refused lately, oldest first (`debug_getBadBlocks`).
    bad_blocks: Mutex<std::collections::VecDeque<alloy_primitives::Bytes>>,
    /// Competing blocks import has seen that do not extend the head (see `reorg.rs`).
    side: Mutex<reorg::SideBlocks>,
    /// Blocks taken back by a reorganisation, announced before the new chain's blocks.
    reorgs: broadcast::Sender<Arc<reorg::Reorg>>,
    /// Tests: the block whose unwind fails (a storage failure halfway through a reorganisation).
    #[cfg(test)]
    fail_unwind_at: Mutex<Option<u64>>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("head", &self.head.read().header.number)
            .finish()
    }
}

/// The database file inside a data directory.
pub fn db_path(data_dir: &std::path::Path) -> std::path::PathBuf {
    data_dir.join("chain.redb")
}

/// Opens the database of a data directory and the chain on it, without serving, with the
/// default page cache.
pub fn open_chain(
    data_dir: &std::path::Path,
    spec: Arc<ChainSpec>,
) -> Result<Arc<Chain>, ChainError> {
    open_chain_with_cache(
        data_dir,
        spec,
        l2node_storage::DEFAULT_DB_CACHE_BYTES,
        None,
        l2node_storage::DEFAULT_PROOF_WINDOW,
    )
}

/// [`open_chain`] with a page cache of `cache_bytes` (`--db-cache-size`), the blocks of state
/// history to keep (`--history-window`, `None`: archive) and the blocks whose trie can be read
/// (`--rpc-eth-proof-window`): a node's start and `l2node import` share it.
pub fn open_chain_with_cache(
    data_dir: &std::path::Path,
    spec: Arc<ChainSpec>,
    cache_bytes: usize,
    history_window: Option<u64>,
    proof_window: u64,
) -> Result<Arc<Chain>, ChainError> {
    let storage = Storage::open_with_cache(&db_path(data_dir), cache_bytes)?
        .with_history_window(history_window)
        .with_proof_window(proof_window);
    Ok(Arc::new(Chain::open(storage, spec)?))
}

impl Chain {
    /// Opens the chain in `storage`, writing genesis first if the database is new.
    pub fn open(storage: Storage, spec: Arc<ChainSpec>) -> Result<Self, ChainError> {
        let signers = clique::genesis_signers(&spec.genesis.extra_data);
        if spec.clique.is_some() && signers.is_empty() {
            return Err(ChainError::NoCliqueSigners {
                len: spec.genesis.extra_data.len(),
            });
        }
        let configured = spec.genesis_header(B256::ZERO);
        let ledger = spec.karma.clone().map(Ledger::new);
        let head = match storage.head_number()? {
            None => {
                // The config first: a crash before block 0 is committed leaves a database
                // without a head, which the next start fills anew; a crash after it, one whose
                // genesis is checked against its config (not one taken for a database from
                // before configs were stored).
                storage.put_genesis_config(&genesis::canonical_json(&spec.genesis))?;
                let changes = genesis_changes(&spec);
                let header = configured.clone();
                let (_, hash) = storage.commit_block(0, &changes, |root| {
                    let mut header = header;
                    header.state_root = root;
                    Ok::<_, ChainError>(BlockToStore {
                        header,
                        body: genesis_body(&spec),
                        senders: vec![],
                        receipts: vec![],
                        karma: ledger
                            .as_ref()
                            .map(|l| l.genesis_delta(spec.genesis.timestamp))
                            .unwrap_or_default(),
                    })
                })?;
                tracing::info!(target: "l2node::chain", %hash, "wrote genesis");
                storage.header(0)?.expect("genesis just written")
            }
            Some(n) => {
                let stored_config = storage.genesis_config()?;
                if let Some(json) = &stored_config {
                    genesis::compare(json, &spec.genesis)?;
                }
                let stored = storage
                    .header(0)?
                    .expect("genesis exists when a head exists");
                let mut expected = configured;
                expected.state_root = stored.state_root;
                if expected.hash_slow() != stored.hash_slow() {
                    return Err(ChainError::GenesisMismatch {
                        stored: stored.hash_slow(),
                        configured: expected.hash_slow(),
                    });
                }
                if stored_config.is_none() {
                    // A database from before the genesis was stored: keep it from now on.
                    storage.put_genesis_config(&genesis::canonical_json(&spec.genesis))?;
                    tracing::info!(target: "l2node::chain", "stored the genesis config with the chain");
                }
                storage.header(n)?.expect("head header exists")
            }
        };
        let (spec, total_difficulty) = match find_merge(&storage, &spec, head.number)? {
            Merge::At(number) => (Arc::new(spec.with_merge_block(number)), None),
            Merge::Awaited(td) => (spec, td),
        };
        let total_difficulty = Mutex::new(total_difficulty);
        let (blocks, _) = broadcast::channel(crate::constants::SUBSCRIPTION_BUFFER);
        let genesis = storage
            .header(0)?
            .expect("genesis exists when a head exists")
            .hash_slow();
        Ok(Self {
            genesis,
            storage,
            head: RwLock::new(Arc::new(Head {
                hash: head.hash_slow(),
                header: head,
            })),
            spec: RwLock::new(spec),
            write: Mutex::new(()),
            blocks,
            signers,
            ledger,
            total_difficulty,
            clock: Default::default(),
            bad_blocks: Default::default(),
            side: Default::default(),
            reorgs: broadcast::channel(crate::constants::SUBSCRIPTION_BUFFER).0,
            #[cfg(test)]
            fail_unwind_at: Mutex::new(None),
        })
    }

    /// The Karma ledger rules (`None` on a chain without Karma).
    pub fn ledger(&self) -> Option<&Ledger> {
        self.ledger.as_ref()
    }

    /// The addresses allowed to seal blocks (Clique's signers; empty on another chain).
    pub fn signers(&self) -> &[Address] {
        &self.signers
    }

    /// The genesis block hash (the chain's identity among peers).
    pub fn genesis_hash(&self) -> B256 {
        self.genesis
    }

    /// The storage underneath.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The chain configuration.
    pub fn spec(&self) -> Arc<ChainSpec> {
        self.spec.read().clone()
    }

    /// Keeps the RLP of a block import refused as invalid (the last
    /// [`crate::constants::BAD_BLOCKS_KEPT`]).
    pub fn record_bad_block(&self, raw: alloy_primitives::Bytes) {
        let mut bad = self.bad_blocks.lock();
        if bad.len() == crate::constants::BAD_BLOCKS_KEPT {
            bad.pop_front();
        }
        bad.push_back(raw);
    }

    /// The RLP of the blocks import refused lately, newest first.
    pub fn bad_blocks(&self) -> Vec<alloy_primitives::Bytes> {
        self.bad_blocks.lock().iter().rev().cloned().collect()
    }

    /// The clock the next block is stamped with.
    pub fn clock(&self) -> &next::Clock {
        &self.clock
    }

    /// The current head.
    pub fn head(&self) -> Arc<Head> {
        self.head.read().clone()
    }

    /// The number a block tag means now, or `None` for a number beyond the head. One
    /// sequencer gives instant finality, so `safe`, `finalized` (and `pending`, for reads of
    /// state) are the head.
    pub fn resolve_tag(&self, tag: BlockNumberOrTag) -> Option<u64> {
        let head = self.head().header.number;
        match tag {
            BlockNumberOrTag::Earliest => Some(0),
            BlockNumberOrTag::Latest
            | BlockNumberOrTag::Safe
            | BlockNumberOrTag::Finalized
            | BlockNumberOrTag::Pending => Some(head),
            BlockNumberOrTag::Number(n) => (n <= head).then_some(n),
        }
    }

    /// Notifications of committed blocks, in order.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<NewBlock>> {
        self.blocks.subscribe()
    }

    /// Imports a block from outside (a file or a peer): checks the seal and the header against
    /// its parent and the fork rules (`validate`), executes it, and commits it only if every
    /// computed root matches the header.
    pub fn import(&self, block: Block<TxEnvelope>) -> Result<B256, ChainError> {
        self.import_with(block, true)
    }

    /// [`Chain::import`] without waiting for the disk unless `durable` (see
    /// [`Storage::commit_block_with`]): a follower syncing ranges of blocks waits for it only
    /// every few seconds ([`crate::sync::SyncDurability`]). A crash in between loses only
    /// blocks the peers still have; the node syncs them again.
    pub fn import_with(&self, block: Block<TxEnvelope>, durable: bool) -> Result<B256, ChainError> {
        self.import_prepared(block, Prepared::default(), durable)
    }

    /// [`Chain::import_with`] with what [`Prepared`] holds already computed for this block (a
    /// follower prepares the next blocks while it imports this one); what it lacks is computed
    /// here.
    pub fn import_prepared(
        &self,
        block: Block<TxEnvelope>,
        prepared: Prepared,
        durable: bool,
    ) -> Result<B256, ChainError> {
        let _guard = self.write.lock();
        self.import_locked(block, prepared, durable)
    }

    /// [`Chain::import_prepared`] under the write lock the caller holds.
    fn import_locked(
        &self,
        block: Block<TxEnvelope>,
        prepared: Prepared,
        durable: bool,
    ) -> Result<B256, ChainError> {
        let started = std::time::Instant::now();
        let number = block.header.number;
        let parent = self.head();
        check(number, "parent hash", block.header.parent_hash, parent.hash)?;
        check(number, "number", number, parent.header.number + 1)?;
        let mut total_difficulty = self.total_difficulty.lock();
        let mut spec = self.spec();
        if let (Some(ttd), Some(td)) = (spec.awaits_merge(), *total_difficulty) {
            if td >= ttd {
                // The parent reached the terminal total difficulty: this is the first block of
                // proof of stake (geth's rule), whatever it claims.
                tracing::info!(target: "l2node::chain", number, "the merge: proof of stake from this block");
                spec = Arc::new(spec.with_merge_block(number));
                *self.spec.write() = spec.clone();
            }
        }
        // `open` refuses a Clique chain without signers.
        if spec.clique.is_some() {
            let signer = clique::signer(&block.header)?;
            if !self.signers.contains(&signer) {
                return Err(clique::SealError::Unauthorized { number, signer }.into());
            }
        }
        validate::before_execution(&spec, &parent.header, &block)?;
        check(
            number,
            "transactions root",
            block.header.transactions_root,
            prepared
                .transactions_root
                .unwrap_or_else(|| proofs::calculate_transaction_root(&block.body.transactions)),
        )?;
        let senders = match prepared.senders {
            Some(senders) if senders.len() == block.body.transactions.len() => senders,
            _ => recover_senders(number, &block.body.transactions)?,
        };
        let state = self.storage.state_at(None)?;
        let out = if spec.is_byzantium_active_at_block(number) {
            executor::execute_block(&spec, &state, &block, &senders, None)
        } else {
            // Receipts carry intermediate state roots: each over the parent's trie (the head's)
            // with the block's changes so far kept in memory.
            self.storage
                .with_trie_at(number - 1, |trie| {
                    let mut root_of = |changes: &StateChanges| {
                        let mut overlay = trie::OverlayTrie::new(trie);
                        trie::apply_changes(&mut overlay, changes)
                            .map_err(|e| ExecError::Storage(e.into()))
                    };
                    executor::execute_block(&spec, &state, &block, &senders, Some(&mut root_of))
                })?
                .unwrap_or_else(|first| {
                    unreachable!("the head's trie is always readable (proofs from {first})")
                })
        }
        .map_err(|source| ChainError::Exec { number, source })?;
        drop(state);
        let header = block.header;
        let header_difficulty = header.difficulty;
        check(number, "gas used", header.gas_used, out.gas_used)?;
        check(
            number,
            "receipts root",
            header.receipts_root,
            proofs::calculate_receipt_root(&out.receipts),
        )?;
        let bloom = out
            .receipts
            .iter()
            .fold(Bloom::ZERO, |acc, r| acc | r.bloom());
        check(number, "logs bloom", header.logs_bloom, bloom)?;
        validate::requests_hash(&header, &out.requests)?;
        let body = BlockBody {
            transactions: block.body.transactions,
            ommers: block.body.ommers,
            withdrawals: block.body.withdrawals,
        };
        let hash = self.commit(number, &out.changes, durable, |root| {
            check(number, "state root", header.state_root, root)?;
            Ok(BlockToStore {
                header,
                body,
                senders,
                receipts: out.receipts,
                karma: Default::default(),
            })
        })?;
        *total_difficulty = match *total_difficulty {
            Some(td) if spec.awaits_merge().is_some() => Some(td + header_difficulty),
            _ => None,
        };
        crate::metrics::block_imported(started.elapsed());
        Ok(hash)
    }

    /// Commits a block the local miner built: fills the state root, seals (on a Clique chain),
    /// writes, announces.
    pub fn commit_built(
        &self,
        built: executor::BuiltBlock,
        vanity: [u8; clique::VANITY_LEN],
        key: &PrivateKeySigner,
    ) -> Result<B256, ChainError> {
        self.commit_built_to(built, vanity, key, None)
    }

    /// [`Chain::commit_built`], with the sealed block first recorded in a sequencer group's
    /// log (when `group` is given): a block the log refuses is neither stored nor announced.
    pub fn commit_built_to(
        &self,
        mut built: executor::BuiltBlock,
        vanity: [u8; clique::VANITY_LEN],
        key: &PrivateKeySigner,
        group: Option<&dyn crate::group::SequencerGroup>,
    ) -> Result<B256, ChainError> {
        let _guard = self.write.lock();
        let number = built.header.number;
        let head = self.head();
        if built.header.parent_hash != head.hash {
            // The head moved while building; the caller rebuilds.
            return Err(ChainError::Mismatch {
                number,
                field: "parent hash",
                expected: head.hash.to_string(),
                computed: built.header.parent_hash.to_string(),
            });
        }
        let senders: Vec<Address> = built.transactions.iter().map(|t| t.signer()).collect();
        let transactions: Vec<TxEnvelope> = built
            .transactions
            .drain(..)
            .map(|t| t.into_inner())
            .collect();
        let header = built.header;
        let receipts = built.receipts;
        let withdrawals = self
            .spec()
            .is_shanghai_active_at(header.timestamp)
            .then(Default::default);
        let clique = self.spec().clique.is_some();
        self.commit(number, &built.changes, true, move |root| {
            let mut header = header;
            header.state_root = root;
            if clique {
                clique::seal(&mut header, vanity, key);
            } else {
                // No seal outside Clique: extraData keeps the vanity alone, within the 32
                // bytes such a chain allows.
                header.extra_data = vanity.to_vec().into();
            }
            let block = alloy_consensus::Block {
                header,
                body: BlockBody {
                    transactions,
                    ommers: vec![],
                    withdrawals,
                },
            };
            if let Some(group) = group {
                group
                    .append(number, block.header.hash_slow(), &alloy_rlp::encode(&block))
                    .map_err(|reason| ChainError::NotInGroupLog { number, reason })?;
            }
            Ok(BlockToStore {
                header: block.header,
                body: block.body,
                senders,
                receipts,
                karma: Default::default(),
            })
        })
    }

    fn commit(
        &self,
        number: u64,
        changes: &[AccountChange],
        durable: bool,
        seal: impl FnOnce(B256) -> Result<BlockToStore, ChainError>,
    ) -> Result<B256, ChainError> {
        let (block, hash) = self
            .storage
            .commit_block_with(number, changes, durable, |root| {
                let mut block = seal(root)?;
                if let Some(ledger) = &self.ledger {
                    // Storage still holds the parent here: the ledger and state before the block.
                    block.karma = ledger.block_delta(
                        &self.storage.ledger_at(None)?,
                        &self.storage.state_at(None)?,
                        &block.header,
                        &block.body.transactions,
                        &block.senders,
                        &block.receipts,
                    )?;
                }
                Ok::<_, ChainError>(block)
            })?;
        let BlockToStore {
            header,
            body,
            senders,
            receipts,
            karma: _,
        } = block;
        *self.head.write() = Arc::new(Head {
            header: header.clone(),
            hash,
        });
        // Committed first, announced second: nobody hears of a block the database does not
        // hold. (A synced range's blocks before its last are not on disk yet when announced: a
        // crash can take them back, and the follower syncs the same sealed blocks again.)
        let _ = self.blocks.send(Arc::new(NewBlock {
            block: StoredBlock {
                header,
                hash,
                body,
                senders,
            },
            receipts,
        }));
        // After the announcement, so that no block waits for the buffer's write-out.
        self.storage.flush_trie_if_full();
        Ok(hash)
    }
}

/// Where a chain stands with the merge by total difficulty.
enum Merge {
    /// The merge is the stored block of this number.
    At(u64),
    /// Not reached yet: the head's total difficulty, on a chain that awaits the merge.
    Awaited(Option<U256>),
}

/// On a chain that awaits the merge by total difficulty, finds it among the stored blocks (the
/// first block whose parent reached the terminal total difficulty). Reads every stored header
/// once, at open, on such chains only.
fn find_merge(storage: &Storage, spec: &ChainSpec, head: u64) -> Result<Merge, ChainError> {
    let Some(ttd) = spec.awaits_merge() else {
        return Ok(Merge::Awaited(None));
    };
    let mut td = U256::ZERO;
    for n in 0..=head {
        td += storage.header(n)?.map(|h| h.difficulty).unwrap_or_default();
        if td >= ttd && n < head {
            return Ok(Merge::At(n + 1));
        }
    }
    Ok(Merge::Awaited(Some(td)))
}

/// What an import needs that depends on the block alone, not on its parent's state: a follower
/// computes it for the next blocks on another thread while it imports this one
/// (`sync::PreparedRange`). What it lacks is computed by the import. Its fields are private so
/// that a transactions root can only be the one computed from the block it is imported with.
#[derive(Debug, Default)]
pub struct Prepared {
    /// The sender of each transaction ([`recover_senders`]).
    senders: Option<Vec<Address>>,
    /// The root of the block's transactions, as the import compares it with the header's.
    transactions_root: Option<B256>,
}

impl Prepared {
    /// Everything, for `block`; the senders are `None` if a signature is bad (the import
    /// reports it, in its order of checks).
    pub fn of(block: &Block<TxEnvelope>) -> Self {
        let txs = &block.body.transactions;
        Self {
            senders: recover_senders(block.header.number, txs).ok(),
            transactions_root: Some(proofs::calculate_transaction_root(txs)),
        }
    }

    /// The senders only, known from elsewhere (the pool, or the stored block); the import
    /// recovers them if the count does not match.
    pub fn with_senders(senders: Option<Vec<Address>>) -> Self {
        Self {
            senders,
            transactions_root: None,
        }
    }
}

/// The signer of each transaction, on this thread: [`ChainError::InvalidSignature`] names the
/// first transaction (`offset` + its index) without one.
fn recover_senders_serial(
    number: u64,
    offset: usize,
    txs: &[TxEnvelope],
) -> Result<Vec<Address>, ChainError> {
    txs.iter()
        .enumerate()
        .map(|(i, tx)| {
            alloy_consensus::transaction::SignerRecoverable::recover_signer(tx).map_err(|_| {
                ChainError::InvalidSignature {
                    number,
                    index: offset + i,
                }
            })
        })
        .collect()
}

/// The signer of each transaction of block `number`, split over the machine's cores for large
/// blocks: signature recovery (about 40 µs each on this project's 2-core reference machine) is
/// about half the CPU of a follower's sync of plain transfers, the largest part that does not
/// depend on the parent's state.
pub fn recover_senders(number: u64, txs: &[TxEnvelope]) -> Result<Vec<Address>, ChainError> {
    if txs.len() < PARALLEL_RECOVERY_MIN_TXS {
        return recover_senders_serial(number, 0, txs);
    }
    // `available_parallelism` reads the cgroup files on every call: once is enough.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let threads =
        *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads < 2 {
        return recover_senders_serial(number, 0, txs);
    }
    let chunk = txs.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = txs
            .chunks(chunk)
            .enumerate()
            .map(|(i, c)| scope.spawn(move || recover_senders_serial(number, i * chunk, c)))
            .collect();
        let mut senders = Vec::with_capacity(txs.len());
        for h in handles {
            senders.extend(h.join().expect("sender recovery does not panic")?);
        }
        Ok(senders)
    })
}

/// Below this many transactions, spawning recovery threads costs more than it saves.
const PARALLEL_RECOVERY_MIN_TXS: usize = 64;

fn check<T: PartialEq + std::fmt::Display>(
    number: u64,
    field: &'static str,
    expected: T,
    computed: T,
) -> Result<(), ChainError> {
    if expected == computed {
        Ok(())
    } else {
        Err(ChainError::Mismatch {
            number,
            field,
            expected: expected.to_string(),
            computed: computed.to_string(),
        })
    }
}

fn genesis_body(spec: &ChainSpec) -> BlockBody<TxEnvelope> {
    BlockBody {
        transactions: vec![],
        ommers: vec![],
        withdrawals: spec
            .is_shanghai_active_at(spec.genesis.timestamp)
            .then(Default::default),
    }
}

/// The genesis alloc as state changes.
pub fn genesis_changes(spec: &ChainSpec) -> Vec<AccountChange> {
    spec.genesis
        .alloc
        .iter()
        .map(|(address, acc)| {
            let code = acc
                .code
                .clone()
                .filter(|c| !c.is_empty())
                .map(Bytecode::new_raw);
            AccountChange {
                address: *address,
                before: None,
                info: Some(AccountState {
                    nonce: acc.nonce.unwrap_or_default(),
                    balance: acc.balance,
                    code_hash: code
                        .as_ref()
                        .map_or(revm::primitives::KECCAK_EMPTY, |c| c.hash_slow()),
                }),
                new_code: code,
                storage_before: Vec::new(),
                storage_wiped: false,
                storage: acc
                    .storage
                    .iter()
                    .flatten()
                    .map(|(k, v)| (U256::from_be_bytes(k.0), U256::from_be_bytes(v.0)))
                    .filter(|(_, v)| !v.is_zero())
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
