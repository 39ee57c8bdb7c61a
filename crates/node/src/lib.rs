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

/// How long mimalloc (the allocator of the node binary and of its benches) keeps memory it has
/// freed before it gives it back to the OS. Its default, one second, is shorter than a
/// follower's cycle of trie write-outs and redb page-cache turnover (a few seconds): memory given
/// back was faulted in and zeroed again by the kernel soon after. In the snapshot bench's full
/// sync (1M accounts), alternating runs with 10 s gave 53.3 and 54.5 s against 54.9 and 56.3 s
/// with the default; never giving memory back gave 53.6-54.7 s against 57.5-59.1 s, but a node
/// would then keep the peak of any burst for good. Ten seconds is jemalloc's default decay
/// (reth's allocator): an idle node still shrinks.
pub const ALLOCATOR_PURGE_DELAY_MS: std::ffi::c_long = 10_000;

/// mimalloc's `mi_option_purge_delay` (its position in `mi_option_t` of mimalloc 3, which
/// `libmimalloc-sys` builds, and of mimalloc 2).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets mimalloc's options for a node ([`ALLOCATOR_PURGE_DELAY_MS`]) and, on Linux, turns
/// transparent huge pages off for the process. Binaries whose global allocator is mimalloc call
/// it first thing in `main`; with another allocator the purge delay does nothing that matters.
///
/// mimalloc asks for huge pages for its arenas, so memory it takes back into use after giving it
/// back faults in 2 MiB at a time, each zeroed whole however little of it is used: in a profile
/// of the snapshot bench's full sync (1M accounts) the kernel's zeroing of huge pages was 15% of
/// the node's CPU, and 0.3% with huge pages off (resident memory 1.42 GB against 1.46 GB). In
/// alternating runs the sync took 46.9, 45.2, 46.2 and 44.2 s with them off against 49.3, 47.5
/// and 45.0 s, and the state-root bench at ten million accounts gave 8.83 and 8.35 ms against
/// 9.57 ms.
pub fn tune_allocator() {
    // SAFETY: mi_option_set stores an integer option; the option index is a valid one.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ALLOCATOR_PURGE_DELAY_MS);
    }
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE only sets a flag of the calling process (which its children
    // inherit); it reads no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

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
