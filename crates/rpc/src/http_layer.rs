//! HTTP-level tower middleware in front of each server's service: host allowlist, CORS, `GET /`,
//! 405/415/413 and the request-body checks jsonrpsee gets wrong. On the WebSocket port it checks
//! `Host` and `Origin` before handing an upgrade request to `ws`, which applies [`sanitize`] to
//! each whole WebSocket message as `post` does to a body.
//!
//! CORS stays hand-written: tower-http's `CorsLayer` answers every `OPTIONS` itself with 200 and
//! no `Access-Control-Allow-Origin` for a foreign origin, where this server answers 403 naming
//! `--rpc-http-cors-origins` (and 405 to an `OPTIONS` without `Origin`).
//!
//! jsonrpsee 0.26 answers several cases differently from geth and the JSON-RPC 2.0 spec, and it
//! never shows those requests to the RPC middleware, so they are fixed here on the raw body:
//! - invalid JSON gets HTTP 400 when the body does not start with `{`/`[`: here always HTTP 200
//!   with `-32700` and id null, like geth;
//! - a valid JSON value that is not an object or array gets `-32700`: here `-32600`;
//! - an object whose `id` is an object, array, bool or not an unsigned integer parses as a
//!   *notification* and is silently dropped: here it is answered with `-32600`, id null;
//! - an object without `id` whose `jsonrpc` or `method` is wrong gets `-32700`: here `-32600`;
//! - a notification answers with the body `null`: here an empty body;
//! - an oversized body gets 413 with `-32007`: here 413 with `-32005` naming the limit and flag.
//!
//! A body that does not arrive within the body timeout gets 408 with `-32005`, and the connection
//! is closed: a client trickling its body cannot hold a connection slot (see `accept`).
//!
//! Requests to rewrite are replaced by `{"id":null}`, which jsonrpsee answers with exactly the
//! spec's `{"jsonrpc":"2.0","error":{"code":-32600,..},"id":null}`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use jsonrpsee::core::BoxError;
use jsonrpsee::server::{HttpBody, HttpRequest, HttpResponse};
use serde_json::value::RawValue;

use super::{
    error::{response_body, RpcError},
    middleware::Transport,
};

/// Stand-in for an entry jsonrpsee would misread: it answers it with `-32600` and id null.
const INVALID_ENTRY: &str = r#"{"id":null}"#;

/// Settings of the HTTP layer for one server.
#[derive(Debug, Clone)]
struct Settings {
    transport: Transport,
    max_request_body: u32,
    /// Longest reading a POST body may take.
    body_timeout: Duration,
    /// Lower-cased host names; `None` = any host.
    host_allowlist: Option<Vec<String>>,
    /// HTTP: origins allowed by CORS (exact match); WS: origins allowed to connect (rules, see
    /// [`origin_matches`]). `None` = any origin.
    origins: Option<Vec<String>>,
    /// HTTP: the dashboard page served to browsers at `GET /` (see `dashboard.rs`).
    dashboard: Option<String>,
    /// HTTP: where `GET /readiness` reads the node's status.
    probes: Option<ProbeSource>,
}

/// What Besu's `/readiness` probe looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeStatus {
    /// Connected peers.
    pub peers: u64,
    /// Blocks behind the best block peers announced.
    pub blocks_behind: u64,
    /// A sequencer group member's part (`leader`, `standby`, `paused`); `None` outside a group.
    pub sequencer: Option<&'static str>,
}

/// The node's status for the readiness probe, read on each probe.
#[derive(Clone)]
pub struct ProbeSource(pub Arc<dyn Fn() -> ProbeStatus + Send + Sync>);

impl std::fmt::Debug for ProbeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProbeSource")
    }
}

impl PartialEq for ProbeSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ProbeSource {}

/// Besu's readiness defaults: at least one peer, at most two blocks behind.
const READINESS_MIN_PEERS: u64 = 1;
/// See [`READINESS_MIN_PEERS`].
const READINESS_MAX_BLOCKS_BEHIND: u64 = 2;

/// `tower::Layer` installing [`HttpWire`].
#[derive(Debug, Clone)]
pub struct HttpWireLayer {
    settings: Arc<Settings>,
}

impl HttpWireLayer {
    /// Layer for one server. `origins` are the CORS origins of HTTP or the allowed origins of
    /// WebSocket. A `"*"` entry in `host_allowlist` or `origins` allows any value. A request body
    /// not received within `body_timeout` gets HTTP 408.
    pub fn new(
        transport: Transport,
        max_request_body: u32,
        body_timeout: Duration,
        host_allowlist: &[String],
        origins: &[String],
    ) -> Self {
        let host_allowlist = (!host_allowlist.iter().any(|h| h == "*")).then(|| {
            host_allowlist
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect()
        });
        let origins = (!origins.iter().any(|o| o == "*")).then(|| {
            origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect()
        });
        Self {
            settings: Arc::new(Settings {
                transport,
                max_request_body,
                body_timeout,
                host_allowlist,
                origins,
                dashboard: None,
                probes: None,
            }),
        }
    }

    /// Serves Besu's `GET /liveness` and, with a status source, `GET /readiness`
    /// (`?minPeers=N&maxBlocksBehind=M`): 200 or 503 with a JSON body, for Kubernetes or load
    /// balancer probes.
    pub fn with_probes(mut self, source: Option<ProbeSource>) -> Self {
        Arc::make_mut(&mut self.settings).probes = source;
        self
    }

    /// Serves the dashboard at `GET /` to browsers (`Accept: text/html`), pointing its live
    /// updates at the WebSocket port `ws_port`.
    pub fn with_dashboard(mut self, ws_port: Option<u16>) -> Self {
        Arc::make_mut(&mut self.settings).dashboard = Some(super::dashboard::page(ws_port));
        self
    }

    /// Handles one request with `inner` behind it: what [`HttpWire`] does, without boxing the
    /// future (the accept loop's hyper service awaits it directly).
    pub(crate) fn handle<S>(
        &self,
        inner: S,
        req: HttpRequest,
    ) -> impl Future<Output = Result<HttpResponse, BoxError>> + Send + 'static
    where
        S: tower::Service<HttpRequest, Response = HttpResponse, Error = BoxError> + Send + 'static,
        S::Future: Send,
    {
        handle(self.settings.clone(), inner, req)
    }
}

impl<S> tower::Layer<S> for HttpWireLayer {
    type Service = HttpWire<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HttpWire {
            inner,
            settings: self.settings.clone(),
        }
    }
}

/// The HTTP middleware; see the module docs.
#[derive(Debug, Clone)]
pub struct HttpWire<S> {
    inner: S,
    settings: Arc<Settings>,
}

type BoxFuture = Pin<Box<dyn Future<Output = Result<HttpResponse, BoxError>> + Send>>;

impl<S> tower::Service<HttpRequest> for HttpWire<S>
where
    S: tower::Service<HttpRequest, Response = HttpResponse, Error = BoxError>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = HttpResponse;
    type Error = BoxError;
    type Future = BoxFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: HttpRequest) -> Self::Future {
        let settings = self.settings.clone();
        // Take the service that was driven to readiness, leave a fresh clone behind.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(handle(settings, inner, req))
    }
}

async fn handle<S>(
    settings: Arc<Settings>,
    mut inner: S,
    req: HttpRequest,
) -> Result<HttpResponse, BoxError>
where
    S: tower::Service<HttpRequest, Response = HttpResponse, Error = BoxError>,
{
    if !host_allowed(&settings, req.headers()) {
        return Ok(text(
            StatusCode::FORBIDDEN,
            "Host not allowed: add it to --host-allowlist (\"*\" allows any host)\n",
        ));
    }
    let origin = req.headers().get(header::ORIGIN).cloned();
    let cors_origin = origin
        .as_ref()
        .filter(|_| settings.transport == Transport::Http)
        .and_then(|o| allowed_origin(&settings, o));

    let is_ws_upgrade = jsonrpsee::server::ws::is_upgrade_request(&req);
    let mut rp = if is_ws_upgrade {
        if settings.transport == Transport::Ws {
            if !ws_origin_allowed(&settings, origin.as_ref()) {
                return Ok(text(
                    StatusCode::FORBIDDEN,
                    "WebSocket origin not allowed: add it to --rpc-ws-origins (\"*\" allows any)\n",
                ));
            }
            inner.call(req).await?
        } else {
            text(
                StatusCode::BAD_REQUEST,
                "This is the l2node JSON-RPC HTTP endpoint; WebSocket connections go to the WebSocket port\n",
            )
        }
    } else {
        match *req.method() {
            Method::OPTIONS if origin.is_some() => {
                if cors_origin.is_none() {
                    return Ok(text(
                        StatusCode::FORBIDDEN,
                        "CORS origin not allowed: add it to --rpc-http-cors-origins\n",
                    ));
                }
                preflight(req.headers())
            }
            Method::GET | Method::HEAD
                if settings.transport == Transport::Http && req.uri().path() == "/liveness" =>
            {
                json(StatusCode::OK, r#"{"status":"UP"}"#.into())
            }
            Method::GET | Method::HEAD
                if settings.transport == Transport::Http && req.uri().path() == "/readiness" =>
            {
                readiness(settings.probes.as_ref(), req.uri().query())
            }
            Method::GET | Method::HEAD if req.uri().path() == "/" => match &settings.dashboard {
                Some(page) if super::dashboard::wants_html(req.headers()) => html(page),
                _ => describe(settings.transport),
            },
            Method::POST if settings.transport == Transport::Http => {
                if !content_type_is_json(req.headers()) {
                    text(
                        StatusCode::UNSUPPORTED_MEDIA_TYPE,
                        "Content-Type must be application/json\n",
                    )
                } else {
                    post(&settings, inner, req).await?
                }
            }
            _ => method_not_allowed(settings.transport),
        }
    };
    if let Some(origin) = cors_origin {
        let headers = rp.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    Ok(rp)
}

/// Reads, checks and forwards a JSON-RPC POST.
async fn post<S>(
    settings: &Settings,
    mut inner: S,
    req: HttpRequest,
) -> Result<HttpResponse, BoxError>
where
    S: tower::Service<HttpRequest, Response = HttpResponse, Error = BoxError>,
{
    let limit = settings.max_request_body;
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > u64::from(limit)) {
        return Ok(too_large(limit));
    }
    let (mut parts, body) = req.into_parts();
    let mut collect = std::pin::pin!(Limited::new(body, limit as usize).collect());
    // hyper has usually read the whole body with the head: then no timer is set up at all.
    let first = std::future::poll_fn(|cx| Poll::Ready(collect.as_mut().poll(cx))).await;
    let collected = match first {
        Poll::Ready(collected) => collected,
        Poll::Pending => match tokio::time::timeout(settings.body_timeout, collect).await {
            Ok(collected) => collected,
            Err(_) => return Ok(body_timed_out(settings.body_timeout)),
        },
    };
    let body = match collected {
        Ok(collected) => collected.to_bytes(),
        Err(err) if err.downcast_ref::<LengthLimitError>().is_some() => {
            return Ok(too_large(limit))
        }
        Err(err) => return Err(err),
    };
    let body = match sanitize(&body) {
        Sanitized::Unchanged(start) => body.slice(start..),
        Sanitized::Rewritten(body) => body.into(),
        Sanitized::ParseError => return Ok(json(StatusCode::OK, response_body(RpcError::Parse))),
    };
    // jsonrpsee checks the Content-Type against a fixed list: give it the one it knows.
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    let rp = inner
        .call(HttpRequest::from_parts(
            parts,
            HttpBody::new(Full::new(body)),
        ))
        .await?;

    let (parts, body) = rp.into_parts();
    let body = body.collect().await?.to_bytes();
    // jsonrpsee answers notifications with `null`; JSON-RPC says: no response at all.
    let body = if &body[..] == b"null" {
        Default::default()
    } else {
        body
    };
    Ok(HttpResponse::from_parts(
        parts,
        HttpBody::new(Full::new(body)),
    ))
}

/// What [`sanitize`] decided about a request body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sanitized {
    /// Forward as it is, from this offset (leading whitespace skipped).
    Unchanged(usize),
    /// Forward this body instead.
    Rewritten(String),
    /// Not JSON: answer `-32700`.
    ParseError,
}

/// Checks a request body and replaces the entries jsonrpsee would misread (see module docs).
pub(crate) fn sanitize(body: &[u8]) -> Sanitized {
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let Ok(text) = std::str::from_utf8(&body[start..]) else {
        return Sanitized::ParseError;
    };
    match text.as_bytes().first() {
        Some(b'[') => {
            let Ok(entries) = serde_json::from_str::<Vec<&RawValue>>(text) else {
                return Sanitized::ParseError;
            };
            if entries.iter().all(|e| entry_is_sound(e)) {
                return Sanitized::Unchanged(start);
            }
            let mut out = String::with_capacity(text.len());
            out.push('[');
            for (i, entry) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(if entry_is_sound(entry) {
                    entry.get()
                } else {
                    INVALID_ENTRY
                });
            }
            out.push(']');
            Sanitized::Rewritten(out)
        }
        _ => match serde_json::from_str::<&RawValue>(text) {
            Err(_) => Sanitized::ParseError,
            Ok(value) if entry_is_sound(value) => Sanitized::Unchanged(start),
            Ok(_) => Sanitized::Rewritten(INVALID_ENTRY.to_owned()),
        },
    }
}

/// Whether jsonrpsee classifies this batch entry or single request correctly by itself.
fn entry_is_sound(entry: &RawValue) -> bool {
    let raw = entry.get();
    if !raw.starts_with('{') {
        // Arrays in a batch and scalars jsonrpsee handles; a top-level scalar it calls a parse
        // error, so rewrite it. (Nested arrays are not requests either.)
        return false;
    }
    // Fast path: only the three members that matter, borrowed, no map and no key allocations
    // (a batch of 100 spent more time here than in the calls). Duplicate keys make it fail;
    // the general map below then keeps the last one, as before.
    let fields = match serde_json::from_str::<Members<'_>>(raw) {
        Ok(m) => m,
        Err(_) => {
            let Ok(map) = serde_json::from_str::<std::collections::HashMap<String, &RawValue>>(raw)
            else {
                return false;
            };
            Members {
                id: map.get("id").copied(),
                jsonrpc: map.get("jsonrpc").copied(),
                method: map.get("method").copied(),
            }
        }
    };
    match fields.id {
        // jsonrpsee ids are strings, unsigned integers or null; anything else would make the
        // object parse as a notification and vanish.
        Some(id) => {
            let id = id.get();
            id == "null" || id.starts_with('"') || id.parse::<u64>().is_ok()
        }
        // A notification: fine if it is a well-formed one; otherwise jsonrpsee says -32700.
        None => {
            fields.jsonrpc.is_some_and(|v| v.get() == r#""2.0""#)
                && fields.method.is_some_and(|m| m.get().starts_with('"'))
        }
    }
}

/// The members of a request object [`entry_is_sound`] looks at, as raw JSON (`null` included:
/// a present `"id": null` is `Some`).
#[derive(serde::Deserialize)]
struct Members<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue as serde::Deserialize>::deserialize(d).map(Some)
}

fn host_allowed(settings: &Settings, headers: &HeaderMap) -> bool {
    let Some(allowlist) = &settings.host_allowlist else {
        return true;
    };
    // Browsers always send Host; a request without one cannot come from a rebinding page.
    let Some(host) = headers.get(header::HOST) else {
        return true;
    };
    let Ok(host) = host.to_str() else {
        return false;
    };
    let name = strip_port(host).to_ascii_lowercase();
    allowlist.contains(&name)
}

/// `example.com:80` -> `example.com`; `[::1]:8545` -> `::1`.
fn strip_port(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

fn allowed_origin(settings: &Settings, origin: &HeaderValue) -> Option<HeaderValue> {
    match &settings.origins {
        None => Some(origin.clone()),
        Some(list) => {
            let origin_str = origin.to_str().ok()?;
            list.iter()
                .any(|o| o.eq_ignore_ascii_case(origin_str))
                .then(|| origin.clone())
        }
    }
}

/// Whether a WebSocket upgrade may proceed: clients that send no `Origin` are not browsers and
/// always may; a browser page only from an allowed origin (geth's rule).
fn ws_origin_allowed(settings: &Settings, origin: Option<&HeaderValue>) -> bool {
    let (Some(rules), Some(origin)) = (&settings.origins, origin) else {
        return true;
    };
    let Some(origin) = origin.to_str().ok().and_then(split_origin) else {
        return false;
    };
    rules
        .iter()
        .filter_map(|r| split_origin(r))
        .any(|rule| origin_matches(rule, origin))
}

/// `scheme://host:port` split into its parts; scheme and port may be absent (`[::1]` keeps its
/// brackets).
fn split_origin(s: &str) -> Option<(Option<&str>, &str, Option<&str>)> {
    let (scheme, rest) = match s.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, s),
    };
    let rest = rest.trim_end_matches('/');
    let (host, port) = match rest.rfind(':') {
        Some(i) if !rest[i..].contains(']') => (&rest[..i], Some(&rest[i + 1..])),
        _ => (rest, None),
    };
    (!host.is_empty()).then_some((scheme, host, port))
}

/// geth's `ruleAllowsOrigin`: every part the rule names must match; a part it leaves out
/// matches anything.
fn origin_matches(
    (scheme, host, port): (Option<&str>, &str, Option<&str>),
    (o_scheme, o_host, o_port): (Option<&str>, &str, Option<&str>),
) -> bool {
    scheme.is_none_or(|s| Some(s) == o_scheme)
        && host.eq_ignore_ascii_case(o_host)
        && port.is_none_or(|p| Some(p) == o_port)
}

/// Accepts `application/json` and `application/json-rpc` with any parameters (charset ...).
fn content_type_is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim())
        .is_some_and(|media| {
            media.eq_ignore_ascii_case("application/json")
                || media.eq_ignore_ascii_case("application/json-rpc")
        })
}

fn preflight(headers: &HeaderMap) -> HttpResponse {
    let allow_headers = headers
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned()
        .unwrap_or(HeaderValue::from_static("content-type"));
    let mut rp = HttpResponse::new(HttpBody::empty());
    *rp.status_mut() = StatusCode::NO_CONTENT;
    let h = rp.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("POST, GET, OPTIONS"),
    );
    h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, allow_headers);
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    rp
}

fn describe(transport: Transport) -> HttpResponse {
    text(
        StatusCode::OK,
        match transport {
            Transport::Http => {
                "This is an l2node JSON-RPC endpoint. POST JSON-RPC 2.0 requests to / with \
                 Content-Type: application/json.\n"
            }
            Transport::Ws => {
                "This is an l2node JSON-RPC WebSocket endpoint. Connect with a WebSocket client \
                 and send JSON-RPC 2.0 requests as text frames.\n"
            }
        },
    )
}

fn method_not_allowed(transport: Transport) -> HttpResponse {
    let mut rp = text(
        StatusCode::METHOD_NOT_ALLOWED,
        match transport {
            Transport::Http => "Method not allowed: POST JSON-RPC 2.0 requests to /\n",
            Transport::Ws => "Method not allowed: this port speaks JSON-RPC over WebSocket only\n",
        },
    );
    rp.headers_mut().insert(
        header::ALLOW,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    rp
}

fn too_large(limit: u32) -> HttpResponse {
    let err = RpcError::LimitExceeded(format!(
        "Request body exceeds the max request content length of {limit} bytes \
         (--rpc-http-max-request-content-length)"
    ));
    json(StatusCode::PAYLOAD_TOO_LARGE, response_body(err))
}

/// HTTP 408 with a JSON-RPC error; `Connection: close`, since the rest of the body is not read.
fn body_timed_out(timeout: Duration) -> HttpResponse {
    let err = RpcError::LimitExceeded(format!(
        "Request body not received within {timeout:?}; send it at once, or in smaller requests"
    ));
    let mut rp = json(StatusCode::REQUEST_TIMEOUT, response_body(err));
    rp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    rp
}

fn text(status: StatusCode, body: &'static str) -> HttpResponse {
    let mut rp = HttpResponse::new(HttpBody::from(body));
    *rp.status_mut() = status;
    rp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    rp
}

fn html(page: &str) -> HttpResponse {
    let mut rp = HttpResponse::new(HttpBody::from(page.to_owned()));
    rp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // The page only talks to its own origin; nothing else may frame or feed it.
    rp.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src *; frame-ancestors 'none'",
        ),
    );
    rp
}

/// Besu's readiness answer: UP (200) when the node has at least `minPeers` peers and is at
/// most `maxBlocksBehind` blocks behind, else DOWN (503); a bad query is 400.
fn readiness(source: Option<&ProbeSource>, query: Option<&str>) -> HttpResponse {
    let mut min_peers = READINESS_MIN_PEERS;
    let mut max_behind = READINESS_MAX_BLOCKS_BEHIND;
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let target = match key {
            "minPeers" => &mut min_peers,
            "maxBlocksBehind" => &mut max_behind,
            _ => continue,
        };
        match value.parse() {
            Ok(v) => *target = v,
            Err(_) => {
                let body = serde_json::json!({"status": "DOWN", "error": format!("{key} must be a non-negative integer, got {value:?}")});
                return json(StatusCode::BAD_REQUEST, body.to_string());
            }
        }
    }
    let status = source.map(|s| (s.0)()).unwrap_or(ProbeStatus {
        peers: 0,
        blocks_behind: 0,
        sequencer: None,
    });
    let peers_ok = status.peers >= min_peers;
    let in_sync = status.blocks_behind <= max_behind;
    let up = peers_ok && in_sync;
    let mut body = serde_json::json!({
        "status": if up { "UP" } else { "DOWN" },
        "checks": {
            "peers": {"status": if peers_ok { "UP" } else { "DOWN" }, "peers": status.peers, "minPeers": min_peers},
            "sync": {"status": if in_sync { "UP" } else { "DOWN" }, "blocksBehind": status.blocks_behind, "maxBlocksBehind": max_behind},
        },
    });
    if let Some(role) = status.sequencer {
        body["sequencer"] = role.into();
    }
    let code = if up {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json(code, body.to_string())
}

fn json(status: StatusCode, body: String) -> HttpResponse {
    let mut rp = HttpResponse::new(HttpBody::from(body));
    *rp.status_mut() = status;
    rp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    rp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sound_requests_pass_unchanged() {
        let single = br#" {"jsonrpc":"2.0","method":"eth_blockNumber","id":1}"#;
        assert_eq!(sanitize(single), Sanitized::Unchanged(1));
        let batch = br#"[{"jsonrpc":"2.0","method":"a","id":"x"},{"jsonrpc":"2.0","method":"b"}]"#;
        assert_eq!(sanitize(batch), Sanitized::Unchanged(0));
        assert_eq!(sanitize(b"[]"), Sanitized::Unchanged(0));
    }

    #[test]
    fn misread_entries_become_invalid_requests() {
        let object_id = br#"{"jsonrpc":"2.0","method":"a","id":{}}"#;
        assert_eq!(
            sanitize(object_id),
            Sanitized::Rewritten(INVALID_ENTRY.into())
        );
        let bad_method = br#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#;
        assert_eq!(
            sanitize(bad_method),
            Sanitized::Rewritten(INVALID_ENTRY.into())
        );
        assert_eq!(sanitize(b"1"), Sanitized::Rewritten(INVALID_ENTRY.into()));
        let batch =
            br#"[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"a","id":[1]}]"#;
        assert_eq!(
            sanitize(batch),
            Sanitized::Rewritten(format!(
                r#"[{{"jsonrpc":"2.0","method":"a","id":1}},{INVALID_ENTRY}]"#
            ))
        );
    }

    #[test]
    fn invalid_json_is_a_parse_error() {
        assert_eq!(sanitize(b""), Sanitized::ParseError);
        assert_eq!(
            sanitize(br#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#),
            Sanitized::ParseError
        );
        assert_eq!(
            sanitize(br#"[{"jsonrpc":"2.0","method":"sum"},{"jsonrpc":"2.0","method""#),
            Sanitized::ParseError
        );
    }

    #[test]
    fn ws_origin_rules_follow_geth() {
        let rule = |r| split_origin(r).unwrap();
        let origin = |o| split_origin(o).unwrap();
        assert!(origin_matches(
            rule("localhost"),
            origin("http://localhost:3000")
        ));
        assert!(origin_matches(rule("[::1]"), origin("https://[::1]:8080")));
        assert!(origin_matches(
            rule("http://dapp.example"),
            origin("http://dapp.example:1")
        ));
        assert!(!origin_matches(
            rule("http://dapp.example"),
            origin("https://dapp.example")
        ));
        assert!(!origin_matches(
            rule("localhost:3000"),
            origin("http://localhost:3001")
        ));
        assert!(!origin_matches(
            rule("127.0.0.1"),
            origin("http://evil.example")
        ));
        assert!(!origin_matches(
            rule("localhost"),
            origin("http://localhost.evil.example")
        ));
    }

    #[test]
    fn host_port_is_ignored() {
        assert_eq!(strip_port("localhost:8545"), "localhost");
        assert_eq!(strip_port("[::1]:8545"), "::1");
        assert_eq!(strip_port("example.com"), "example.com");
    }
}
