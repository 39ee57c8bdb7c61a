//! The pool for heavy work (tracing, `eth_simulateV1`, wide log searches, large proofs,
//! Otterscan searches), apart from the light requests' blocking threads: at most
//! [`l2node_node::constants::rpc_heavy_concurrency`] heavy jobs run at once, on threads of a
//! lower OS priority, so a flood of heavy requests cannot starve light ones (reth#24105,
//! reth#23678).

use std::{panic::AssertUnwindSafe, sync::Arc};

use tokio::sync::{oneshot, Semaphore};

use super::error::{RpcError, RpcResult};
use l2node_node::constants::RPC_HEAVY_NICE;

/// Heavy jobs handed to the pool per thread: the one it runs and the next, queued, so that a
/// thread going from one job to the next does not sleep and get woken up in between (under a
/// trace flood that hand-off was a fifth of the node's CPU). Any more wait on the async
/// runtime, where a request whose client left costs nothing.
const JOBS_PER_THREAD: usize = 2;

/// Heavy-work threads and their permits.
pub(super) struct HeavyPool {
    pool: rayon::ThreadPool,
    /// [`JOBS_PER_THREAD`] per thread: a request waits here (on the async runtime) rather than
    /// in the pool's queue.
    permits: Arc<Semaphore>,
}

impl HeavyPool {
    /// A pool of `threads` heavy-work threads.
    pub(super) fn new(threads: usize) -> Self {
        let threads = threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("l2node-heavy-{i}"))
            .start_handler(|_| l2node_node::lower_thread_priority(RPC_HEAVY_NICE))
            .build()
            .expect("the heavy-work threads start");
        Self {
            pool,
            permits: Arc::new(Semaphore::new(threads * JOBS_PER_THREAD)),
        }
    }

    /// Runs `f` on a heavy-work thread once one is free.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> RpcResult<T> + Send + 'static,
    ) -> RpcResult<T> {
        let _permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(RpcError::Closed)?;
        let (tx, rx) = oneshot::channel();
        self.pool.spawn(move || {
            let _ = tx.send(std::panic::catch_unwind(AssertUnwindSafe(f)));
        });
        match rx.await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) | Err(_) => {
                tracing::error!(target: "l2node::rpc", "a heavy request's job panicked");
                Err(RpcError::JobFailed)
            }
        }
    }
}
