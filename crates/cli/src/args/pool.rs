//! Transaction pool limits (`--tx-pool-*`, Besu's prefix) and their [`PoolConfig`]. The limits
//! follow geth's legacypool (GlobalSlots, AccountSlots, AccountQueue, GlobalQueue, Lifetime),
//! since transactions can cost nothing here and spam is free; the defaults and their reasons are
//! in `l2node_node::constants` (`POOL_*`).

use std::{
    num::{NonZeroU64, NonZeroUsize},
    time::Duration,
};

use l2node_node::constants as c;
use l2node_node::pool::PoolConfig;

use super::secs;

/// A non-zero default.
fn nz(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).expect("the pool's default limits are non-zero")
}

option_group! {
    /// Transaction pool.
    #[command(next_help_heading = "Transaction pool")]
    pub(crate) struct PoolArgs {
        /// Most transactions in the pool, pending and queued together (also the pending limit:
        /// queued ones are evicted first when it is full).
        #[arg(long, value_name = "N", default_value_t = nz(c::POOL_MAX_TXS))]
        pub tx_pool_max_size: NonZeroUsize,
        /// Most bytes of transaction encodings in the pool, pending and queued together.
        #[arg(long, value_name = "BYTES", default_value_t = nz(c::POOL_MAX_BYTES))]
        pub tx_pool_max_bytes: NonZeroUsize,
        /// Most queued transactions (behind a nonce gap) in the whole pool.
        #[arg(long, value_name = "N", default_value_t = c::POOL_GLOBAL_QUEUE)]
        pub tx_pool_max_queued: usize,
        /// Pending transactions guaranteed to each sender when the pool is full.
        #[arg(long, value_name = "N", default_value_t = c::POOL_ACCOUNT_SLOTS)]
        pub tx_pool_account_slots: usize,
        /// Most queued transactions (behind a nonce gap) per sender.
        #[arg(long, value_name = "N", default_value_t = c::POOL_ACCOUNT_QUEUE)]
        pub tx_pool_max_future_by_sender: usize,
        /// Seconds after which a sender's queued transactions are dropped if nothing of it
        /// moved (checked after each block).
        #[arg(long, value_name = "SECS", default_value_t = secs(c::POOL_QUEUE_LIFETIME))]
        pub tx_pool_queue_lifetime: NonZeroU64,
        /// Minimum percent by which a same-nonce replacement raises both max fee and tip.
        #[arg(long, value_name = "PERCENT", default_value_t = c::POOL_PRICE_BUMP_PERCENT)]
        pub tx_pool_price_bump: u64,
        /// Largest accepted transaction encoding in bytes.
        #[arg(long, value_name = "BYTES", default_value_t = nz(c::POOL_MAX_TX_SIZE))]
        pub tx_pool_max_tx_size: NonZeroUsize,
    }
}

impl PoolArgs {
    /// The pool's configuration. Every field is named, so a new limit in [`PoolConfig`] does
    /// not compile until it has a flag.
    pub(crate) fn config(&self) -> PoolConfig {
        PoolConfig {
            max_txs: self.tx_pool_max_size.get(),
            max_bytes: self.tx_pool_max_bytes.get(),
            max_queued: self.tx_pool_max_queued,
            account_slots: self.tx_pool_account_slots,
            account_queue: self.tx_pool_max_future_by_sender,
            queue_lifetime: Duration::from_secs(self.tx_pool_queue_lifetime.get()),
            // `spawn` puts it in the data directory (`pool.journal`): a location, not a limit,
            // and devnet's two nodes must not share one.
            journal_path: None,
            price_bump_percent: self.tx_pool_price_bump,
            max_tx_size: self.tx_pool_max_tx_size.get(),
        }
    }
}
