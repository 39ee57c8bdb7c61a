//! The accept loop of each JSON-RPC server: `--rpc-max-connections` counts TCP connections, and
//! idle, silent or slow clients give theirs back.
//!
//! jsonrpsee's own server takes its connection permit per HTTP request, once the body is read,
//! so it bounds requests in flight, not sockets: any number of idle, half-sent or trickling
//! connections could stay open. Here instead:
//! - a permit of `max_connections` is taken at accept and held for the life of the TCP
//!   connection (the socket wrapper owns it, so an upgraded WebSocket keeps it until it closes);
//!   at the cap a new connection takes the slot of the connection idle the longest (no request
//!   in flight: a keep-alive client between requests, or a socket that never sent a whole
//!   head), so idle sockets cannot lock clients out; only when every connection is busy is the
//!   new one answered HTTP 503 naming the flag and closed, never queued;
//! - a watchdog per connection closes it when a request head is not complete within the header
//!   timeout (counted from accept, or from the head's first byte) or when it sits idle between
//!   requests past the idle timeout; a slow body is `http_layer`'s (HTTP 408), a silent
//!   WebSocket `ws`'s (pings);
//! - hyper serves each connection (HTTP/1.1 with upgrades, or HTTP/2; at most hyper's default of
//!   200 concurrent streams per HTTP/2 connection) with `http_layer` in front of the server's
//!   backend (the module's methods on the HTTP port, `ws`'s upgrades on the WebSocket port);
//!   `TCP_NODELAY` is set as jsonrpsee sets it;
//! - on stop the loop drops the listener and each connection finishes its requests (hyper's
//!   graceful shutdown); WebSockets close through the stop handle `ws` holds.
//!
//! Per request this adds a few relaxed atomic operations on the connection's own counters (and
//! a relaxed store per socket read): no allocation, no lock. The watchdog wakes every quarter
//! timeout (at most once a second) per connection. (hyper's `header_read_timeout` would allocate and register a
//! timer for every request, and cannot tell a slow header from an idle keep-alive connection.)

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use jsonrpsee::server::StopHandle;
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Interval, MissedTickBehavior};

use super::http_layer::{Backend, HttpWire};
use l2node_node::constants::{RPC_ACCEPT_ERROR_BACKOFF, RPC_EVICTION_WAIT, RPC_REFUSED_LINGER};

/// Connection limits of one server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// Most open TCP connections.
    pub(crate) max_connections: u32,
    /// Longest a request head may take, from accept or from its first byte.
    pub(crate) header_timeout: Duration,
    /// Longest a connection may stay idle between requests.
    pub(crate) idle_timeout: Duration,
}

/// Serves `listener` until `stop` fires: each accepted connection's requests go through `wire`
/// to `backend`. `transport` names the server in logs.
pub(crate) async fn serve(
    listener: TcpListener,
    limits: ConnectionLimits,
    wire: HttpWire,
    backend: Backend,
    stop: StopHandle,
    transport: &'static str,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections as usize));
    let open = Arc::new(Connections::default());
    let lingering = Arc::new(Semaphore::new(limits.max_connections as usize));
    let refusal: Arc<[u8]> = refusal(limits.max_connections).into();
    let stopped = stop.clone().shutdown();
    tokio::pin!(stopped);
    loop {
        let (socket, peer) = tokio::select! {
            biased;
            () = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    accept_failed(transport, err).await;
                    continue;
                }
            },
        };
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => Some(slot),
            // At the cap: close the connection idle the longest and take its slot once freed.
            Err(_) if open.evict_idlest() => {
                tokio::time::timeout(RPC_EVICTION_WAIT, slots.clone().acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok)
            }
            Err(_) => None,
        };
        let Some(slot) = slot else {
            tracing::debug!(%peer, transport, "JSON-RPC connection refused: --rpc-max-connections reached");
            refuse(socket, &lingering, &refusal);
            continue;
        };
        if let Err(err) = socket.set_nodelay(true) {
            tracing::debug!(%peer, %err, "cannot set TCP_NODELAY");
        }
        tokio::spawn(connection(
            socket,
            slot,
            backend.clone(),
            wire.clone(),
            limits,
            stop.clone(),
            open.clone(),
        ));
    }
    // The port closes now; `ServerHandle::stopped` resolves once the connections have ended too
    // (each holds a clone of `stop`).
    drop(listener);
}

/// Errors about one connection are skipped; others (out of file descriptors ...) pause the loop.
async fn accept_failed(transport: &'static str, err: io::Error) {
    use io::ErrorKind::*;
    if matches!(
        err.kind(),
        ConnectionAborted | ConnectionReset | Interrupted
    ) {
        tracing::debug!(%err, transport, "JSON-RPC accept failed");
    } else {
        tracing::warn!(%err, transport, "JSON-RPC accept failed; pausing");
        tokio::time::sleep(RPC_ACCEPT_ERROR_BACKOFF).await;
    }
}

/// The answer to a connection over the cap.
fn refusal(max_connections: u32) -> Vec<u8> {
    let body = format!(
        "Too many open connections: this server accepts {max_connections} at a time \
         (--rpc-max-connections); try again later\n"
    );
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Answers 503 and closes. While fewer than `max_connections` refusals linger, the socket is
/// kept up to [`RPC_REFUSED_LINGER`] to read what the client sends, so that closing it does not
/// reset the connection before the client reads the answer.
fn refuse(socket: TcpStream, lingering: &Arc<Semaphore>, refusal: &Arc<[u8]>) {
    match lingering.clone().try_acquire_owned() {
        Ok(permit) => {
            let refusal = refusal.clone();
            tokio::spawn(async move {
                let mut socket = socket;
                let _ = tokio::time::timeout(RPC_REFUSED_LINGER, async {
                    socket.write_all(&refusal).await?;
                    socket.shutdown().await?;
                    let mut buf = [0u8; 1024];
                    while socket.read(&mut buf).await? != 0 {}
                    io::Result::Ok(())
                })
                .await;
                drop(permit);
            });
        }
        Err(_) => {
            // A fresh socket's send buffer is empty: the short answer is written at once.
            if let Ok(socket) = socket.into_std() {
                let _ = io::Write::write(&mut &socket, refusal);
            }
        }
    }
}

/// What the watchdog of a connection watches; written by the socket and the service.
#[derive(Debug, Default)]
struct Activity {
    /// Requests handed to the service.
    started: AtomicU64,
    /// Requests whose response future completed (or was dropped).
    finished: AtomicU64,
    /// Whether bytes were read since the watchdog last looked.
    read: AtomicBool,
    /// When the connection last became idle, in [`Connections`]' order of such events.
    idle_since: AtomicU64,
    /// Told to close to make room for a new connection.
    evict: Notify,
}

impl Activity {
    fn is_idle(&self) -> bool {
        self.started.load(Relaxed) == self.finished.load(Relaxed)
    }
}

/// The connections a server is serving over HTTP (an upgraded WebSocket leaves it), to find
/// the one idle the longest when the cap is reached.
#[derive(Debug, Default)]
struct Connections {
    /// Counts connections becoming idle: an order, not a time, so no two are equal.
    idle_events: AtomicU64,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Activity>>>,
}

impl Connections {
    fn now(&self) -> u64 {
        self.idle_events.fetch_add(1, Relaxed)
    }

    fn add(&self, activity: Arc<Activity>) -> u64 {
        activity.idle_since.store(self.now(), Relaxed);
        let id = self.next_id.fetch_add(1, Relaxed);
        self.open.lock().insert(id, activity);
        id
    }

    fn remove(&self, id: u64) {
        self.open.lock().remove(&id);
    }

    /// Tells the connection idle the longest to close; `false` when every one is busy. O(open
    /// connections), only at the cap.
    fn evict_idlest(&self) -> bool {
        let open = self.open.lock();
        let idlest = open
            .values()
            .filter(|a| a.is_idle())
            .min_by_key(|a| a.idle_since.load(Relaxed));
        match idlest {
            Some(a) => {
                a.evict.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Counts a request as finished when dropped.
struct InFlight(Arc<Activity>, Arc<Connections>);

impl InFlight {
    fn start(activity: &Arc<Activity>, open: &Arc<Connections>) -> Self {
        activity.started.fetch_add(1, Relaxed);
        Self(activity.clone(), open.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.idle_since.store(self.1.now(), Relaxed);
        self.0.finished.fetch_add(1, Relaxed);
    }
}

/// Serves one accepted connection until it closes, stalls or the server stops.
async fn connection(
    socket: TcpStream,
    slot: OwnedSemaphorePermit,
    backend: Backend,
    wire: HttpWire,
    limits: ConnectionLimits,
    stop: StopHandle,
    open: Arc<Connections>,
) {
    let activity = Arc::new(Activity::default());
    let id = open.add(activity.clone());
    let io = TokioIo::new(Socket {
        stream: socket,
        activity: activity.clone(),
        _slot: slot,
    });
    let (requests, registry) = (activity.clone(), open.clone());
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let in_flight = InFlight::start(&requests, &registry);
        let response = wire.handle(backend.clone(), req);
        async move {
            let _in_flight = in_flight;
            // (An error closes the connection, as with jsonrpsee's server. `io::Error` rather than
            // `BoxError`: a `dyn` error type here trips the compiler's `Send` check of the task.)
            response.await.map_err(io::Error::other)
        }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The watchdog below does it, without a timer per request (hyper warns without a timer).
    builder.http1().header_read_timeout(None);
    let conn = builder.serve_connection_with_upgrades(io, service);
    let mut watchdog = Watchdog::new(activity.clone(), limits);
    let stopped = stop.shutdown();
    tokio::pin!(conn, stopped);
    let mut stopping = false;
    loop {
        tokio::select! {
            biased;
            res = conn.as_mut() => {
                if let Err(err) = res {
                    tracing::debug!(%err, "JSON-RPC connection ended");
                }
                break;
            }
            () = &mut stopped, if !stopping => {
                // Finish the requests in flight, then close; keep watching for stalls.
                conn.as_mut().graceful_shutdown();
                stopping = true;
            }
            reason = watchdog.expired() => {
                tracing::debug!(reason, "JSON-RPC connection closed");
                break;
            }
            // Told while idle; if a request has started since, it is no longer idle and stays
            // (the new connection then waits for another slot or is refused).
            () = activity.evict.notified(), if !stopping => {
                if activity.is_idle() {
                    tracing::debug!("JSON-RPC connection closed to make room for a new one");
                    break;
                }
            }
        }
    }
    open.remove(id);
}

/// Closes connections that stall: no complete request head within the header timeout, or idle
/// past the idle timeout. It looks every quarter of the shorter timeout (10 ms to 1 s), so it
/// closes up to one look late; a head's timeout counts from the look that first sees its bytes.
struct Watchdog {
    activity: Arc<Activity>,
    limits: ConnectionLimits,
    ticks: Interval,
    /// `activity.started` at the last look.
    seen: u64,
    state: Watch,
}

enum Watch {
    /// Requests in flight: their bodies and answers are other layers' business.
    Busy,
    /// Waiting for a request: closed at `deadline`; `head` once bytes of one have arrived.
    Waiting { deadline: Instant, head: bool },
}

impl Watchdog {
    fn new(activity: Arc<Activity>, limits: ConnectionLimits) -> Self {
        let tick = (limits.header_timeout.min(limits.idle_timeout) / 4)
            .clamp(Duration::from_millis(10), Duration::from_secs(1));
        let now = Instant::now();
        let mut ticks = tokio::time::interval_at(now + tick, tick);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Self {
            activity,
            limits,
            ticks,
            seen: 0,
            // A new connection must send its first request head within the header timeout.
            state: Watch::Waiting {
                deadline: now + limits.header_timeout,
                head: true,
            },
        }
    }

    /// Resolves with the reason once the connection has stalled. Cancel-safe.
    async fn expired(&mut self) -> &'static str {
        loop {
            let now = self.ticks.tick().await;
            if let Some(reason) = self.look(now) {
                return reason;
            }
        }
    }

    fn look(&mut self, now: Instant) -> Option<&'static str> {
        let started = self.activity.started.load(Relaxed);
        let finished = self.activity.finished.load(Relaxed);
        let read = self.activity.read.swap(false, Relaxed);
        if started != finished {
            self.state = Watch::Busy;
            return None;
        }
        if started != self.seen || matches!(self.state, Watch::Busy) {
            // A request ended since the last look: idle from about now. (Bytes read meanwhile
            // may belong to the next head; then it gets the idle timeout, no more.)
            self.seen = started;
            self.state = Watch::Waiting {
                deadline: now + self.limits.idle_timeout,
                head: false,
            };
            return None;
        }
        let Watch::Waiting { deadline, head } = &mut self.state else {
            return None;
        };
        if read && !*head {
            *head = true;
            *deadline = (*deadline).min(now + self.limits.header_timeout);
        }
        (now >= *deadline).then_some(if *head {
            "request head not received within the header timeout"
        } else {
            "idle past the keep-alive timeout"
        })
    }
}

/// The accepted socket, holding the connection's slot until it is dropped (after an upgrade, by
/// `ws`'s connection tasks, which own hyper's `Upgraded` and with it this socket), and noting
/// reads for the watchdog.
struct Socket {
    stream: TcpStream,
    activity: Arc<Activity>,
    _slot: OwnedSemaphorePermit,
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.read.store(true, Relaxed);
        }
        poll
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watchdog(header: u64, idle: u64) -> Watchdog {
        let limits = ConnectionLimits {
            max_connections: 1,
            header_timeout: Duration::from_secs(header),
            idle_timeout: Duration::from_secs(idle),
        };
        Watchdog::new(Arc::new(Activity::default()), limits)
    }

    #[tokio::test]
    async fn watchdog_tells_slow_heads_from_idle_connections() {
        let s = Duration::from_secs;
        let mut w = watchdog(10, 60);
        let t0 = Instant::now();
        // A new connection: the first head is due within the header timeout.
        assert_eq!(w.look(t0 + s(9)), None);
        assert!(w.look(t0 + s(10)).unwrap().contains("header"));

        // A request in flight is never timed out here.
        let mut w = watchdog(10, 60);
        let a = w.activity.clone();
        a.started.fetch_add(1, Relaxed);
        assert_eq!(w.look(t0 + s(100)), None);
        // Answered: idle from the next look, for the idle timeout.
        a.finished.fetch_add(1, Relaxed);
        assert_eq!(w.look(t0 + s(101)), None);
        assert_eq!(w.look(t0 + s(160)), None);
        assert!(w.look(t0 + s(161)).unwrap().contains("idle"));

        // Bytes of a new head while idle: the header timeout applies from then.
        let mut w = watchdog(10, 60);
        let a = w.activity.clone();
        a.started.fetch_add(1, Relaxed);
        a.finished.fetch_add(1, Relaxed);
        assert_eq!(w.look(t0), None);
        a.read.store(true, Relaxed);
        assert_eq!(w.look(t0 + s(5)), None);
        assert_eq!(w.look(t0 + s(14)), None);
        assert!(w.look(t0 + s(15)).unwrap().contains("header"));
    }

    #[test]
    fn refusal_is_a_complete_http_response_naming_the_flag() {
        let raw = String::from_utf8(refusal(80)).unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "));
        assert!(head.contains(&format!("Content-Length: {}", body.len())));
        assert!(body.contains("--rpc-max-connections"));
        assert!(body.contains("80"));
    }
}
