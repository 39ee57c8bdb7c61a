//! The WebSocket transport. tokio-tungstenite reads the frames of an upgraded connection,
//! reassembles them, unmasks them, answers pings and close frames and enforces its size caps;
//! this module only ever sees whole messages. Each message then gets what an HTTP body gets:
//! - a message over `--rpc-ws-max-frame-size` is answered with one `-32005` naming the limit and
//!   the flag (id null), and the connection stays open; past the limit plus
//!   [`RPC_WS_OVERSIZE_SLACK`] tungstenite stops reading it, and the `-32005` is followed by a
//!   close frame (1009), since the connection cannot be read any further;
//! - `dispatch` parses it and answers it as an HTTP body is answered (the same JSON-RPC id and
//!   batch rules, the same `WireRules`, plus: no subscribe call inside a batch), calling the
//!   `RpcModule`'s methods with this connection's id, sink and subscription limit.
//!
//! Every answer, subscription notification and ping goes out through one channel per connection
//! (jsonrpsee's `MethodSink`) to the connection's writer task. Subscriptions end when the client
//! unsubscribes (jsonrpsee's unsubscribe callback, keyed by this connection's id) or when the
//! writer task ends and drops the channel's receiver (then every `SubscriptionSink::closed()` of
//! the connection resolves). Pings go out every ping interval (30 s by default); a connection
//! from which nothing (not even a pong) arrived for the inactivity limit (60 s) is closed.
//!
//! The HTTP side of the WebSocket port (connection cap, header timeout, `Host` and `Origin`
//! checks, `GET /`, 405) stays in `accept` and `http_layer`; [`WsUpgrade`] answers the upgrade
//! requests that passed them.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use http::header::{self, HeaderValue};
use http::{Method, StatusCode};
use hyper::body::Bytes;
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use jsonrpsee::core::server::{
    BoundedSubscriptions, ConnectionId, MethodResponse, MethodSink, Methods,
};
use jsonrpsee::server::{HttpBody, HttpResponse, IdProvider, StopHandle};
use jsonrpsee::types::{ErrorObjectOwned, Extensions, Id};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;
use tower::Layer;

use super::dispatch::{answer, ModuleService, Reply, Service, Shortcuts, Subscriptions};
use super::error::RpcError;
use super::middleware::WireRulesLayer;
use l2node_node::constants::{RPC_WS_CLOSE_TIMEOUT, RPC_WS_MESSAGE_BUFFER, RPC_WS_OVERSIZE_SLACK};

/// The WebSocket settings of [`super::RpcServerConfig`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct WsSettings {
    /// Largest message in bytes (`--rpc-ws-max-frame-size`).
    pub(crate) max_message: u32,
    /// Largest response in bytes, passed to the methods (they answer `-32008`, which
    /// `WireRules` turns into `-32005`).
    pub(crate) max_response_body: u32,
    /// Most live subscriptions per connection.
    pub(crate) max_subscriptions: u32,
    /// How often each connection is pinged.
    pub(crate) ping_interval: Duration,
    /// A connection silent for this long (no frame at all, not even a pong) is closed.
    pub(crate) inactivity_limit: Duration,
}

/// One WebSocket server: shared by all its connections.
pub(crate) struct WsServer {
    methods: Methods,
    shortcuts: Option<Arc<Shortcuts>>,
    rules: WireRulesLayer,
    settings: WsSettings,
    /// tungstenite's limits: the message limit plus [`RPC_WS_OVERSIZE_SLACK`], so that a
    /// message somewhat over the limit is still read whole, answered, and the connection kept.
    config: WebSocketConfig,
    id_provider: Arc<dyn IdProvider>,
    /// The `-32005` answer to a message over the limit (id null), made once.
    too_large: Box<RawValue>,
    next_conn_id: AtomicUsize,
}

impl WsServer {
    /// A server for `methods` (the namespaces served over WebSocket, with the dispatcher's
    /// `shortcuts`) with `rules` around them; subscription ids come from `id_provider`.
    pub(crate) fn new(
        methods: Methods,
        shortcuts: Option<Arc<Shortcuts>>,
        rules: WireRulesLayer,
        settings: WsSettings,
        id_provider: impl IdProvider + 'static,
    ) -> Arc<Self> {
        let cap = (settings.max_message as usize).saturating_add(RPC_WS_OVERSIZE_SLACK);
        let config = WebSocketConfig::default()
            .max_message_size(Some(cap))
            .max_frame_size(Some(cap));
        let too_large = MethodResponse::error(
            Id::Null,
            ErrorObjectOwned::from(RpcError::LimitExceeded(format!(
                "WebSocket message exceeds the max message size of {} bytes \
                 (--rpc-ws-max-frame-size); send smaller requests or batches",
                settings.max_message
            ))),
        )
        .into_json();
        Arc::new(Self {
            methods,
            shortcuts,
            rules,
            settings,
            config,
            id_provider: Arc::new(id_provider),
            too_large,
            next_conn_id: AtomicUsize::new(0),
        })
    }

    /// What `http_layer` hands the WebSocket port's upgrade requests to: it answers them and
    /// serves each upgraded connection until it closes, idles or `stop` fires.
    pub(crate) fn upgrader(self: &Arc<Self>, stop: StopHandle) -> WsUpgrade {
        WsUpgrade {
            server: self.clone(),
            stop,
        }
    }

    /// The service of one connection: the module's methods with this connection's id, sink and
    /// subscription limit, behind the wire rules.
    fn service(&self, conn_id: ConnectionId, sink: MethodSink) -> Service {
        self.rules.layer(ModuleService {
            methods: self.methods.clone(),
            conn_id,
            max_response_body: self.settings.max_response_body as usize,
            subscriptions: Some(Subscriptions {
                bound: BoundedSubscriptions::new(self.settings.max_subscriptions),
                sink,
                id_provider: self.id_provider.clone(),
            }),
            shortcuts: self.shortcuts.clone(),
        })
    }

    /// Serves one upgraded connection until it ends.
    async fn serve(self: Arc<Self>, upgraded: Upgraded, stop: StopHandle) {
        let stream = WebSocketStream::from_raw_socket(
            TokioIo::new(upgraded),
            Role::Server,
            Some(self.config),
        )
        .await;
        let (ws_out, mut ws_in) = stream.split();
        let (out_tx, out_rx) = mpsc::channel(RPC_WS_MESSAGE_BUFFER);
        let sink = MethodSink::new(out_tx);
        let (close_tx, close_rx) = oneshot::channel();
        let mut writer = tokio::spawn(write_loop(
            ws_out,
            out_rx,
            close_rx,
            self.settings.ping_interval,
        ));

        let conn_id = ConnectionId(self.next_conn_id.fetch_add(1, Relaxed));
        let mut extensions = Extensions::new();
        extensions.insert(conn_id);
        // Each call in flight holds a clone; `calls_done` resolves once all are dropped.
        let (pending, mut calls_done) = mpsc::channel::<()>(1);
        let conn = Connection {
            service: Arc::new(self.service(conn_id, sink.clone())),
            sink,
            extensions,
            pending,
            in_flight: Arc::new(tokio::sync::Semaphore::new(RPC_WS_MESSAGE_BUFFER)),
            max_message: self.settings.max_message as usize,
            too_large: self.too_large.clone(),
        };

        let stopped = stop.shutdown();
        tokio::pin!(stopped);
        let every = self.settings.ping_interval;
        let mut last_seen = Instant::now();
        let mut inactivity = tokio::time::interval_at(last_seen + every, every);
        inactivity.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let end = loop {
            tokio::select! {
                biased;
                () = &mut stopped => break End::Stopped,
                _ = inactivity.tick() => {
                    if last_seen.elapsed() > self.settings.inactivity_limit {
                        break End::Inactive;
                    }
                }
                frame = ws_in.next() => {
                    last_seen = Instant::now();
                    match frame {
                        Some(Ok(Message::Text(message))) => conn.on_message(message.into()).await,
                        Some(Ok(Message::Binary(data))) => conn.on_message(data).await,
                        // tungstenite answers pings itself, and a close frame too (the next read
                        // then ends the stream); a pong only counts as activity.
                        Some(Ok(_)) => {}
                        Some(Err(tungstenite::Error::Capacity(err))) => {
                            tracing::debug!(%err, "WebSocket message over the read cap");
                            conn.reject_too_large().await;
                            break End::TooLarge;
                        }
                        Some(Err(err)) => {
                            tracing::debug!(%err, "WebSocket read failed");
                            break End::Failed;
                        }
                        None => break End::Closed,
                    }
                }
            }
        };
        tracing::debug!(?end, conn = conn_id.0, "WebSocket connection ending");

        let Connection {
            service,
            pending,
            sink,
            ..
        } = conn;
        drop((service, pending));
        if matches!(end, End::Stopped) {
            // As jsonrpsee: answer the calls in flight first (unless the client is gone).
            tokio::select! {
                _ = calls_done.recv() => {}
                () = sink.closed() => {}
            }
        }
        drop(sink);
        match end.close_frame() {
            Some(frame) => {
                let _ = close_tx.send(frame);
            }
            None => drop(close_tx),
        }
        // The writer sends what is queued and the close frame; a client that does not read
        // cannot hold the connection (and its slot) open past the timeout.
        if tokio::time::timeout(RPC_WS_CLOSE_TIMEOUT, &mut writer)
            .await
            .is_err()
        {
            writer.abort();
        }
        // Dropping both halves drops the socket, which frees the connection's slot (`accept`).
    }
}

/// Why a connection's read loop ended.
#[derive(Debug)]
enum End {
    /// The server is stopping.
    Stopped,
    /// Nothing arrived for the inactivity limit.
    Inactive,
    /// A message over tungstenite's cap: the stream cannot be read further.
    TooLarge,
    /// The client closed the connection.
    Closed,
    /// A protocol or socket error (logged where it happened).
    Failed,
}

impl End {
    /// The close frame to send, if the connection can still take one.
    fn close_frame(&self) -> Option<CloseFrame> {
        let (code, reason) = match self {
            End::Stopped => (CloseCode::Away, "server stopping"),
            End::Inactive => (CloseCode::Away, "no pong within the inactivity limit"),
            End::TooLarge => (CloseCode::Size, "message too big"),
            End::Closed | End::Failed => return None,
        };
        Some(CloseFrame {
            code,
            reason: reason.into(),
        })
    }
}

/// What the read loop of one connection needs to answer a message.
struct Connection {
    service: Arc<Service>,
    sink: MethodSink,
    extensions: Extensions,
    pending: mpsc::Sender<()>,
    /// Calls in flight on this connection: at most [`RPC_WS_MESSAGE_BUFFER`]; past it the read
    /// loop waits, so a client that sends without reading cannot pile up tasks and answers.
    in_flight: Arc<tokio::sync::Semaphore>,
    max_message: usize,
    too_large: Box<RawValue>,
}

impl Connection {
    /// Checks the size, then answers the message on a task of its own (as jsonrpsee does, so that
    /// a slow call does not hold up the next messages).
    async fn on_message(&self, data: Bytes) {
        if data.len() > self.max_message {
            self.reject_too_large().await;
            return;
        }
        let Ok(permit) = self.in_flight.clone().acquire_owned().await else {
            return;
        };
        let service = self.service.clone();
        let sink = self.sink.clone();
        let extensions = self.extensions.clone();
        let pending = self.pending.clone();
        tokio::spawn(async move {
            let _pending = (pending, permit);
            // Calls are not tied to the read loop: stop them once nobody can read the answer.
            let reply = tokio::select! {
                biased;
                () = sink.closed() => return,
                reply = answer(&data, &service, extensions) => reply,
            };
            match reply {
                // Notifications get nothing; a subscribe call's answer already went out through
                // the sink (jsonrpsee's `accept`/`reject`).
                Reply::Method(rp) if rp.is_method_call() => {
                    let is_success = rp.is_success();
                    let (json, on_close, _) = rp.into_parts();
                    if sink.send(json).await.is_ok() {
                        if let Some(n) = on_close {
                            n.notify(is_success);
                        }
                    }
                }
                Reply::Method(_) => {}
                Reply::Rendered(json) => {
                    // (The sink takes checked JSON: over WebSocket the answer is parsed once.)
                    let json = RawValue::from_string(json).expect("the dispatcher writes JSON");
                    let _ = sink.send(json).await;
                }
            }
        });
    }

    /// `-32005` naming the limit and its flag, id null (the message is not parsed).
    async fn reject_too_large(&self) {
        let _ = self.sink.send(self.too_large.clone()).await;
    }
}

/// The writer task of one connection: answers and notifications from the sink, pings, and at
/// the end the close frame. Ends when told to close, when the socket fails, or when every sender
/// of the sink is gone; dropping `out` then ends the connection's subscriptions.
async fn write_loop<S>(
    mut ws: S,
    mut out: mpsc::Receiver<Box<RawValue>>,
    mut close: oneshot::Receiver<CloseFrame>,
    ping_every: Duration,
) where
    S: futures::Sink<Message, Error = tungstenite::Error> + Unpin,
{
    let mut ping = tokio::time::interval(ping_every);
    ping.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let result: Result<(), tungstenite::Error> = async {
        loop {
            tokio::select! {
                biased;
                frame = &mut close => {
                    let Ok(frame) = frame else { return Ok(()) };
                    while let Ok(json) = out.try_recv() {
                        ws.feed(text(json)).await?;
                    }
                    return ws.send(Message::Close(Some(frame))).await;
                }
                json = out.recv() => {
                    let Some(json) = json else { return Ok(()) };
                    ws.feed(text(json)).await?;
                    // What else is queued goes out with the same flush (notification bursts).
                    while let Ok(json) = out.try_recv() {
                        ws.feed(text(json)).await?;
                    }
                    ws.flush().await?;
                }
                _ = ping.tick() => ws.send(Message::Ping(Bytes::new())).await?,
            }
        }
    }
    .await;
    if let Err(err) = result {
        tracing::debug!(%err, "WebSocket write failed");
    }
}

/// A JSON-RPC message as one text frame, without copying it.
fn text(json: Box<RawValue>) -> Message {
    Message::Text(String::from(Box::<str>::from(json)).into())
}

/// What `http_layer` hands the WebSocket port's upgrade requests to (see [`WsServer::upgrader`]).
#[derive(Clone)]
pub(crate) struct WsUpgrade {
    server: Arc<WsServer>,
    stop: StopHandle,
}

impl WsUpgrade {
    /// Answers an upgrade request that passed `http_layer`'s checks: `101 Switching Protocols`,
    /// and once hyper has sent it, the connection is served on a task of its own.
    pub(crate) fn upgrade<B>(self, mut req: http::Request<B>) -> HttpResponse {
        let accept = match handshake(&req) {
            Ok(accept) => accept,
            Err(rp) => return *rp,
        };
        // Taken now, before hyper sends the 101: the socket is handed over once it is sent.
        let on_upgrade = hyper::upgrade::on(&mut req);
        let Self { server, stop } = self;
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => server.serve(upgraded, stop).await,
                Err(err) => tracing::debug!(%err, "WebSocket upgrade failed"),
            }
        });
        let mut rp = HttpResponse::new(HttpBody::empty());
        *rp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let h = rp.headers_mut();
        h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        h.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
        rp
    }
}

/// Checks the rest of an upgrade request (`http_layer` checked `Upgrade`/`Connection`, `Host`
/// and `Origin`) and computes `Sec-WebSocket-Accept` (RFC 6455 4.2).
fn handshake<B>(req: &http::Request<B>) -> Result<HeaderValue, Box<HttpResponse>> {
    if req.method() != Method::GET {
        return Err(Box::new(plain(
            StatusCode::BAD_REQUEST,
            "A WebSocket handshake is a GET request\n",
        )));
    }
    let headers = req.headers();
    let version_13 = headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_some_and(|v| v == "13");
    if !version_13 {
        let mut rp = plain(
            StatusCode::UPGRADE_REQUIRED,
            "Unsupported WebSocket version: this server speaks version 13\n",
        );
        rp.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return Err(Box::new(rp));
    }
    // A key is 16 random bytes in base64: 24 characters.
    let Some(key) = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .filter(|key| key.len() == 24)
    else {
        return Err(Box::new(plain(
            StatusCode::BAD_REQUEST,
            "Missing or malformed Sec-WebSocket-Key\n",
        )));
    };
    // Base64 is always a valid header value.
    HeaderValue::from_str(&derive_accept_key(key.as_bytes())).map_err(|_| {
        Box::new(plain(
            StatusCode::BAD_REQUEST,
            "Missing or malformed Sec-WebSocket-Key\n",
        ))
    })
}

fn plain(status: StatusCode, body: &'static str) -> HttpResponse {
    let mut rp = HttpResponse::new(HttpBody::from(body));
    *rp.status_mut() = status;
    rp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    rp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::middleware::Transport;
    use crate::server::HexSubscriptionIdProvider;
    use jsonrpsee::RpcModule;
    use serde_json::Value;

    #[test]
    fn handshake_answers_the_rfc_6455_example_key() {
        let req = http::Request::get("/")
            .header(header::SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ==")
            .header(header::SEC_WEBSOCKET_VERSION, "13")
            .body(HttpBody::empty())
            .unwrap();
        assert_eq!(handshake(&req).unwrap(), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        let old = http::Request::get("/")
            .header(header::SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ==")
            .header(header::SEC_WEBSOCKET_VERSION, "8")
            .body(HttpBody::empty())
            .unwrap();
        assert_eq!(
            handshake(&old).unwrap_err().status(),
            StatusCode::UPGRADE_REQUIRED
        );
    }

    /// A server over a tiny module, with a batch limit of 4.
    fn server() -> Arc<WsServer> {
        let mut module = RpcModule::new(());
        module
            .register_method("eth_blockNumber", |_, _, _| "0x0")
            .unwrap();
        let methods: Methods = module.into();
        let rules = WireRulesLayer::new(Transport::Ws, &methods, 4, 1 << 20, None);
        WsServer::new(
            methods,
            None,
            rules,
            WsSettings {
                max_message: 1 << 16,
                max_response_body: 1 << 20,
                max_subscriptions: 4,
                ping_interval: Duration::from_secs(30),
                inactivity_limit: Duration::from_secs(60),
            },
            HexSubscriptionIdProvider,
        )
    }

    async fn ask(service: &Service, message: &str) -> Reply {
        answer(message.as_bytes(), service, Extensions::new()).await
    }

    fn json(reply: &Reply) -> Value {
        serde_json::from_str(reply.json()).unwrap()
    }

    /// The id, batch and notification rules are `dispatch`'s (tested there); here, that a
    /// connection's messages reach its service with the server's rules.
    #[tokio::test]
    async fn messages_are_answered_with_the_servers_rules() {
        let (tx, _rx) = mpsc::channel(16);
        let service = server().service(ConnectionId(0), MethodSink::new(tx));
        let call = r#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":1}"#;
        assert_eq!(
            json(&ask(&service, call).await),
            serde_json::json!({"jsonrpc":"2.0","result":"0x0","id":1})
        );
        // Over the batch limit: one -32005 object.
        let batch = format!("[{}]", [call; 5].join(","));
        let v = json(&ask(&service, &batch).await);
        assert_eq!(v["error"]["code"], -32005, "{v}");
        assert!(v["id"].is_null(), "{v}");
    }

    #[test]
    fn the_oversize_answer_names_the_limit_and_the_flag() {
        let server = server();
        let v: Value = serde_json::from_str(server.too_large.get()).unwrap();
        assert_eq!(v["error"]["code"], -32005);
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains("65536 bytes") && message.contains("--rpc-ws-max-frame-size"));
        assert!(v["id"].is_null());
    }
}
