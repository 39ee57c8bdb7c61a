//! JSON-level RPC middleware: batch limit, response-size errors and subscriptions over HTTP.
//!
//! jsonrpsee 0.26 gets these subtly different from geth and the network's node interface, so this
//! layer wraps the service that calls the methods (`dispatch`'s `ModuleService`) and answers them
//! itself:
//! - a batch over the limit gets ONE `-32005` error object (jsonrpsee: `-32010`); jsonrpsee's own
//!   batch limit is set to unlimited so that only this check applies;
//! - an empty batch gets one `-32600` object, not an array;
//! - an oversized response gets `-32005` naming the limit (jsonrpsee: `-32008`/`-32011`);
//! - a subscription method called over HTTP gets `-32601` naming WebSocket (jsonrpsee: `-32603`);
//! - a subscribe call inside a WebSocket batch gets `-32600` (jsonrpsee answered it twice).
//!
//! (A WebSocket message over the limit never gets here: `ws` answers it with `-32005`.)
//!
//! Batches are executed here rather than by the inner service so that every call in a batch goes
//! through the same rules as a single call.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use jsonrpsee::core::middleware::{BatchEntry, BatchEntryErr, Notification, RpcServiceT};
use jsonrpsee::core::server::{MethodCallback, MethodResponse, Methods};
use jsonrpsee::types::error::OVERSIZED_RESPONSE_CODE;
use jsonrpsee::types::{ErrorObjectOwned, Id, Request};
use l2node_api::error as code;
use l2node_node::metrics;

use super::error::RpcError;
use super::quick::Quick;

/// The answer to one message, as the transports send it.
#[derive(Debug)]
pub(crate) enum Reply {
    /// Made by jsonrpsee's types: a call's response or error, nothing for notifications, or a
    /// subscribe call's answer (already sent through the connection's sink).
    Method(MethodResponse),
    /// A call's response or a batch's array, written by the dispatcher.
    Rendered(String),
}

impl Reply {
    /// The JSON to send; empty for notifications.
    pub(crate) fn into_json(self) -> String {
        match self {
            Self::Method(rp) if rp.is_notification() => String::new(),
            Self::Method(rp) => String::from(Box::<str>::from(rp.into_json())),
            Self::Rendered(json) => json,
        }
    }

    #[cfg(test)]
    pub(crate) fn json(&self) -> &str {
        match self {
            Self::Method(rp) => rp.as_json().get(),
            Self::Rendered(json) => json,
        }
    }
}

/// One entry of a batch: a call, a notification, or the error it is answered with.
pub(crate) type Entry<'a> = Result<BatchEntry<'a>, BatchEntryErr<'a>>;

/// What [`WireRules`] wraps: a service of the module's methods that may answer some calls into
/// an answer being written, before the methods (`dispatch`'s `ModuleService`, with `quick`).
pub trait AnswersFirst:
    RpcServiceT<
        MethodResponse = MethodResponse,
        BatchResponse = MethodResponse,
        NotificationResponse = MethodResponse,
    > + Clone
    + Send
    + Sync
    + 'static
{
    /// Appends the answer to `req` to `out` and returns `true`, or leaves `out` as it was.
    fn quick(&self, req: &Request<'_>, out: &mut String) -> bool;
}

/// Which transport a server speaks; decides whether subscriptions are available.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// HTTP POST: calls only.
    Http,
    /// WebSocket: calls and subscriptions.
    Ws,
}

/// Settings shared by every connection of one server.
#[derive(Debug)]
struct Rules {
    transport: Transport,
    max_batch_size: Option<usize>,
    max_response_body: u32,
    /// Subscribe and unsubscribe methods of the module: refused over HTTP.
    subscription_methods: HashSet<String>,
    /// Subscribe methods only: refused inside a WS batch, where jsonrpsee would answer them twice
    /// (once alone through the subscription sink, once in the batch array).
    subscribe_methods: HashSet<String>,
    /// Where to point HTTP users who try to subscribe, e.g. `ws://127.0.0.1:8546`.
    ws_url: Option<String>,
    /// Methods the node has but this server does not serve, and the flag that enables them.
    disabled: HashSet<String>,
    api_flag: &'static str,
}

/// `tower::Layer` installing [`WireRules`] around the module's methods.
#[derive(Debug, Clone)]
pub struct WireRulesLayer {
    rules: Arc<Rules>,
}

impl WireRulesLayer {
    /// Rules for one server. `max_batch_size` follows the flag: 1, 0 and negative mean unlimited.
    /// `ws_url` is the WebSocket endpoint named in the error for subscriptions over HTTP (`None`
    /// when WebSocket is disabled).
    pub fn new(
        transport: Transport,
        methods: &Methods,
        max_batch_size: i64,
        max_response_body: u32,
        ws_url: Option<String>,
    ) -> Self {
        let subscription_methods = methods
            .method_names()
            .filter(|name| {
                matches!(
                    methods.method(name),
                    Some(MethodCallback::Subscription(_) | MethodCallback::Unsubscription(_))
                )
            })
            .map(str::to_owned)
            .collect();
        let subscribe_methods = methods
            .method_names()
            .filter(|name| matches!(methods.method(name), Some(MethodCallback::Subscription(_))))
            .map(str::to_owned)
            .collect();
        Self {
            rules: Arc::new(Rules {
                transport,
                max_batch_size: effective_batch_limit(max_batch_size),
                max_response_body,
                subscription_methods,
                subscribe_methods,
                ws_url,
                disabled: HashSet::new(),
                api_flag: "",
            }),
        }
    }
}

impl WireRulesLayer {
    /// Names `flag` in the answer to a method of `all` that `served` leaves out.
    pub fn with_disabled(mut self, all: &Methods, served: &Methods, flag: &'static str) -> Self {
        let rules = Arc::get_mut(&mut self.rules).expect("not shared yet");
        rules.disabled = all
            .method_names()
            .filter(|name| served.method(name).is_none())
            .map(str::to_owned)
            .collect();
        rules.api_flag = flag;
        self
    }
}

/// The batch limit a flag value means: `None` (unlimited) for 1, 0 and negative values.
pub fn effective_batch_limit(max_batch_size: i64) -> Option<usize> {
    (max_batch_size > 1).then(|| usize::try_from(max_batch_size).unwrap_or(usize::MAX))
}

impl<S> tower::Layer<S> for WireRulesLayer {
    type Service = WireRules<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WireRules {
            inner,
            rules: self.rules.clone(),
        }
    }
}

/// RPC middleware applying the wire rules of this module; see the module docs.
#[derive(Debug, Clone)]
pub struct WireRules<S> {
    inner: S,
    rules: Arc<Rules>,
}

impl<S> WireRules<S> {
    /// `-32601` naming the flag for a method of a namespace this server does not serve.
    fn not_enabled(&self, method: &str) -> Option<ErrorObjectOwned> {
        if !self.rules.disabled.contains(method) {
            return None;
        }
        // The namespace's flag name (`linea_estimateGas` belongs to L2).
        let namespace = super::Namespace::of(method).map_or_else(
            || {
                method
                    .split('_')
                    .next()
                    .unwrap_or(method)
                    .to_ascii_uppercase()
            },
            |n| n.to_string(),
        );
        Some(
            RpcError::MethodNotFound(format!(
                "{method} is not enabled on this server: add {namespace} to {}",
                self.rules.api_flag
            ))
            .into(),
        )
    }

    fn subscription_over_http(&self, method: &str) -> Option<ErrorObjectOwned> {
        if self.rules.transport != Transport::Http
            || !self.rules.subscription_methods.contains(method)
        {
            return None;
        }
        let target = match &self.rules.ws_url {
            Some(url) => format!("({url})"),
            None => "(enable one with --rpc-ws-enabled)".to_owned(),
        };
        Some(
            RpcError::MethodNotFound(format!(
                "{method} needs a WebSocket connection {target}; HTTP has no subscriptions \
                 — use eth_newFilter/eth_getFilterChanges to poll instead"
            ))
            .into(),
        )
    }
}

/// `-32601` for the test-node methods of anvil and hardhat that l2node leaves out on purpose,
/// in geth's wording for a missing method (which ethers and viem recognise), followed by why
/// and what to use instead.
fn left_out(method: &str) -> Option<ErrorObjectOwned> {
    let test_node = ["anvil_", "hardhat_", "evm_"]
        .iter()
        .any(|p| method.starts_with(p));
    if !test_node || l2node_api::find_method(method).is_some() {
        return None;
    }
    let name = method.split_once('_').map_or(method, |(_, name)| name);
    let instead = match name {
        "mine" => "use evm_mine (DEV namespace, on with --dev)".to_owned(),
        "increaseTime" | "setNextBlockTimestamp" => {
            format!("use evm_{name} (DEV namespace, on with --dev)")
        }
        _ => "it would change state outside a block, and every l2node must compute the same \
              state from the same blocks. Fund an account with a transfer from a dev account \
              (eth_sendTransaction from eth_accounts), deploy code with a transaction, and \
              start over with a fresh data directory instead of reverting"
            .to_owned(),
    };
    Some(
        RpcError::MethodNotFound(format!(
            "the method {method} does not exist/is not available: {instead}"
        ))
        .into(),
    )
}

/// `-32005` for a response larger than `--rpc-max-response-size` allows.
fn response_too_large(limit: u32) -> ErrorObjectOwned {
    RpcError::LimitExceeded(format!(
        "Response exceeds the max response body size of {limit} bytes \
         (--rpc-max-response-size); ask for less (a smaller block range, fewer calls in the \
         batch) or raise the limit"
    ))
    .into()
}

/// `-32600` for a subscribe call inside a WS batch: jsonrpsee would send its answer twice.
fn subscribe_in_batch(req: Request<'_>) -> MethodResponse {
    let err = RpcError::InvalidRequest(format!(
        "{} cannot be part of a batch; send it as a single request",
        req.method_name()
    ));
    MethodResponse::error(req.id.clone().into_owned(), ErrorObjectOwned::from(err))
        .with_extensions(req.extensions.clone())
}

/// Replaces jsonrpsee's oversized-response error (`-32008`) by ours, keeping the request id.
fn rewrite_oversized(rp: MethodResponse, limit: u32) -> MethodResponse {
    if rp.as_error_code() != Some(OVERSIZED_RESPONSE_CODE) {
        return rp;
    }
    // `InvalidRequest` is jsonrpsee's "object with just an id": the cheapest way to read it back.
    let id = serde_json::from_str::<jsonrpsee::types::InvalidRequest<'_>>(rp.as_json().get())
        .map(|r| r.id.into_owned())
        .unwrap_or(Id::Null);
    let extensions = rp.extensions().clone();
    MethodResponse::error(id, response_too_large(limit)).with_extensions(extensions)
}

/// Replaces jsonrpsee's bare "Invalid params" by a message naming the argument and the format
/// it needs (see `params.rs`), keeping the serde detail.
fn name_bad_param(rp: MethodResponse, method: &str, params: Option<&str>) -> MethodResponse {
    if rp.as_error_code() != Some(code::INVALID_PARAMS) {
        return rp;
    }
    let parsed: Result<jsonrpsee::types::Response<'_, serde_json::Value>, _> =
        serde_json::from_str(rp.as_json().get());
    let Ok(response) = parsed else { return rp };
    let jsonrpsee::types::ResponsePayload::Error(err) = &response.payload else {
        return rp;
    };
    if err.message() != jsonrpsee::types::error::INVALID_PARAMS_MSG {
        return rp; // a handler's own message already names the problem
    }
    let Some(message) = super::params::explain(method, params) else {
        return rp;
    };
    let id = response.id.clone().into_owned();
    let extensions = rp.extensions().clone();
    MethodResponse::error(id, ErrorObjectOwned::from(RpcError::InvalidParams(message)))
        .with_extensions(extensions)
}

impl<S: AnswersFirst> WireRules<S> {
    /// One call: refused here if this server does not serve it, otherwise answered by the
    /// module's method, with jsonrpsee's oversized-response and bare invalid-params errors
    /// reworded.
    pub(crate) fn call<'a>(
        &self,
        req: Request<'a>,
    ) -> impl Future<Output = MethodResponse> + Send + 'a {
        let refusal = self
            .not_enabled(&req.method)
            .or_else(|| self.subscription_over_http(&req.method))
            .or_else(|| left_out(&req.method))
            .map(|err| {
                MethodResponse::error(req.id.clone().into_owned(), err)
                    .with_extensions(req.extensions.clone())
            });
        let inner = self.inner.clone();
        let limit = self.rules.max_response_body;
        // Cheap clones: both borrow from the request body.
        let (method, params) = (req.method.clone(), req.params.clone());
        async move {
            match refusal {
                Some(rp) => rp,
                None => {
                    let started = metrics::recording_rpc_calls().then(Instant::now);
                    let rp = rewrite_oversized(inner.call(req).await, limit);
                    if let Some(started) = started {
                        metrics::rpc_call(&method, started.elapsed());
                    }
                    name_bad_param(rp, &method, params.as_deref().map(|p| p.get()))
                }
            }
        }
    }

    /// A call of one of `quick`'s methods that this server serves, answered into `out` (see
    /// [`AnswersFirst::quick`]), and counted in the metrics as [`Self::call`] counts calls.
    /// `false` when the call must go through [`Self::call`].
    pub(crate) fn quick(&self, req: &Request<'_>, out: &mut String) -> bool {
        if !Quick::takes(&req.method) {
            return false;
        }
        let started = metrics::recording_rpc_calls().then(Instant::now);
        let answered = self.inner.quick(req, out);
        if let (true, Some(started)) = (answered, started) {
            metrics::rpc_call(&req.method, started.elapsed());
        }
        answered
    }

    /// A batch: each entry answered in order as a single call would be, into one array.
    pub(crate) async fn batch(&self, batch: Vec<Entry<'_>>) -> Reply {
        let error = |err| Reply::Method(MethodResponse::error(Id::Null, err));
        if batch.is_empty() {
            return error(RpcError::InvalidRequest("Invalid request".into()).into());
        }
        if let Some(limit) = self.rules.max_batch_size {
            if batch.len() > limit {
                return error(RpcError::BatchTooLarge { limit }.into());
            }
        }
        let limit = self.rules.max_response_body;
        let mut out = String::with_capacity(2048);
        out.push('[');
        for entry in batch {
            match entry {
                Ok(BatchEntry::Call(req))
                    if self.rules.transport == Transport::Ws
                        && self.rules.subscribe_methods.contains(req.method_name()) =>
                {
                    out.push_str(subscribe_in_batch(req).as_json().get());
                }
                Ok(BatchEntry::Call(req)) => {
                    if !self.quick(&req, &mut out) {
                        out.push_str(self.call(req).await.as_json().get());
                    }
                }
                Ok(BatchEntry::Notification(_)) => continue,
                Err(err) => {
                    let (err, id) = err.into_parts();
                    out.push_str(MethodResponse::error(id, err).as_json().get());
                }
            }
            // The array so far and its closing bracket, as jsonrpsee's batch builder counts.
            if out.len() + 1 > limit as usize {
                return error(response_too_large(limit));
            }
            out.push(',');
        }
        if out.len() == 1 {
            // Notifications only: HTTP sends an empty body, WebSocket sends nothing.
            return Reply::Method(MethodResponse::notification());
        }
        out.pop();
        out.push(']');
        Reply::Rendered(out)
    }

    /// A notification: nothing to answer.
    pub(crate) async fn notification(&self, n: Notification<'_>) -> MethodResponse {
        self.inner.notification(n).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_limit_of_one_zero_or_negative_is_unlimited() {
        assert_eq!(effective_batch_limit(1), None);
        assert_eq!(effective_batch_limit(0), None);
        assert_eq!(effective_batch_limit(-1), None);
        assert_eq!(effective_batch_limit(2), Some(2));
        assert_eq!(effective_batch_limit(1024), Some(1024));
    }
}
