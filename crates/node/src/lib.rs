//! The l2node core as a library: the chain and its services (executor, pool, miner, Karma, fees,
//! peers and sync). No servers: `l2node-rpc` serves these services and `l2node-launch` wires them.

pub mod chain;
pub mod chainspec;
pub mod constants;
pub mod dev;
pub mod exclusions;
pub mod executor;
pub mod fees;
pub mod group;
pub mod import;
pub mod karma;
pub mod logs;
pub mod metrics;
pub mod miner;
pub mod p2p;
pub mod per_head;
pub mod pool;
pub mod sync;
#[cfg(any(test, feature = "test-utils"))]
pub mod test_utils;
pub mod testing;

/// Lowers the calling thread's scheduling priority to the nice value `nice`. On Linux the nice
/// value belongs to the thread, and the threads it starts inherit it; elsewhere this does
/// nothing.
pub fn lower_thread_priority(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority only reads its integer arguments; `who = 0` is the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}
