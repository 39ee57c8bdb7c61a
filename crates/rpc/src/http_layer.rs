//! The HTTP side of each server, in front of the JSON-RPC calls: host allowlist, CORS, `GET /`,
//! the probes, 405/415/413/408, and on the HTTP port the POST body, answered by `dispatch` (one
//! parse, the JSON-RPC id and batch rules, `WireRules`, the module's methods). On the WebSocket
//! port it checks `Host` and `Origin` before handing an upgrade request to `ws`, whose messages
//! `dispatch` answers the same way.
//!
//! CORS stays hand-written: tower-http's `CorsLayer` answers every `OPTIONS` itself with 200 and
//! no `Access-Control-Allow-Origin` for a foreign origin, where this server answers 403 naming
//! `--rpc-http-cors-origins` (and 405 to an `OPTIONS` without `Origin`).
//!
//! As geth: every JSON-RPC answer is HTTP 200 with `application/json` (invalid JSON too, with
//! `-32700` and id null); a notification, or a batch of only notifications, gets an empty body;
//! an oversized body gets 413 with `-32005` naming the limit and the flag. A body that does not
//! arrive within the body timeout gets 408 with `-32005`, and the connection is closed: a client
//! trickling its body cannot hold a connection slot (see `accept`).

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;
use jsonrpsee::core::BoxError;
use jsonrpsee::server::{HttpBody, HttpResponse};
use jsonrpsee::types::Extensions;

use super::{
    dispatch,
    error::{response_body, RpcError},
    middleware::Transport,
    ws::WsUpgrade,
};

/// A request as hyper hands it over (its body not boxed).
pub(crate) type Request = hyper::Request<Incoming>;

/// What a server's requests go to once the HTTP checks passed.
#[derive(Clone)]
pub(crate) enum Backend {
    /// The HTTP port: JSON-RPC bodies, answered by the module's methods (one service for all
    /// connections: HTTP has no per-connection state).
    Calls(Arc<dispatch::Service>),
    /// The WebSocket port: upgrade requests.
    Upgrade(WsUpgrade),
}

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

/// The HTTP side of one server; see the module docs.
#[derive(Debug, Clone)]
pub struct HttpWire {
    settings: Arc<Settings>,
}

impl HttpWire {
    /// The HTTP side of one server. `origins` are the CORS origins of HTTP or the allowed origins of
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

    /// Handles one request with `backend` behind it.
    pub(crate) fn handle(
        &self,
        backend: Backend,
        req: Request,
    ) -> impl Future<Output = Result<HttpResponse, BoxError>> + Send + 'static {
        handle(self.settings.clone(), backend, req)
    }
}

async fn handle(
    settings: Arc<Settings>,
    backend: Backend,
    req: Request,
) -> Result<HttpResponse, BoxError> {
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
        match backend {
            Backend::Upgrade(ws) => {
                if !ws_origin_allowed(&settings, origin.as_ref()) {
                    return Ok(text(
                        StatusCode::FORBIDDEN,
                        "WebSocket origin not allowed: add it to --rpc-ws-origins (\"*\" allows any)\n",
                    ));
                }
                ws.upgrade(req)
            }
            Backend::Calls(_) => text(
                StatusCode::BAD_REQUEST,
                "This is the l2node JSON-RPC HTTP endpoint; WebSocket connections go to the WebSocket port\n",
            ),
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
            Method::POST => match &backend {
                Backend::Calls(_) if !content_type_is_json(req.headers()) => text(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "Content-Type must be application/json\n",
                ),
                Backend::Calls(calls) => post(&settings, calls, req).await?,
                Backend::Upgrade(_) => method_not_allowed(settings.transport),
            },
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

/// Reads, checks and answers a JSON-RPC POST.
async fn post(
    settings: &Settings,
    calls: &dispatch::Service,
    req: Request,
) -> Result<HttpResponse, BoxError> {
    let limit = settings.max_request_body;
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > u64::from(limit)) {
        return Ok(too_large(limit));
    }
    let mut collect = std::pin::pin!(Limited::new(req.into_body(), limit as usize).collect());
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
    // JSON-RPC answers notifications with nothing at all (an empty body).
    let reply = dispatch::answer(&body, calls, Extensions::new()).await;
    Ok(json(StatusCode::OK, reply.into_json()))
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
    let name = strip_port(host);
    // The allowlist is lower-cased once; each request compares without allocating.
    allowlist
        .iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(name))
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
