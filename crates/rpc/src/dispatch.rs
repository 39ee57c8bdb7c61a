//! One JSON-RPC message (an HTTP body or a whole WebSocket message) answered by the module's
//! methods, the same way on both transports.
//!
//! A well-formed call, or a batch of well-formed calls, is parsed once: straight into jsonrpsee
//! `Request`s (through [`Call`]), which borrow their method and params from the message. A batch
//! with any other entry is split first and then read entry by entry.
//! What does not parse as a call goes through the slower checks below, which answer what
//! jsonrpsee 0.26 gets wrong the way geth and the JSON-RPC 2.0 spec do:
//! - invalid JSON gets `-32700` with id null;
//! - a valid JSON value that is not an object or array gets `-32600` (jsonrpsee: `-32700`);
//! - an object whose `id` is an object, array, bool or not an unsigned integer gets `-32600` with
//!   id null (jsonrpsee parses it as a notification and drops it);
//! - an object without `id` whose `jsonrpc` or `method` is wrong gets `-32600` (jsonrpsee:
//!   `-32700`);
//! - notifications, alone or in a batch, get no answer.
//!
//! The parsed calls go to [`WireRules`] (batch limit, response size, disabled namespaces,
//! parameter errors) around [`ModuleService`], which calls the `RpcModule`'s methods as
//! jsonrpsee's own `RpcService` does (its constructor is crate-private). Where the server
//! serves the method, its [`Shortcuts`] come first: the light reads of `quick`, written
//! straight into the answer, and repeated eth_call and eth_estimateGas answered from the answers
//! kept at the head before their params are parsed.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use alloy_primitives::U64;
use futures::future::BoxFuture;
use jsonrpsee::core::middleware::{
    Batch, BatchEntry, BatchEntryErr, Notification, ResponseFuture, RpcServiceT,
};
use jsonrpsee::core::server::{
    prepare_error, BoundedSubscriptions, ConnectionId, MethodCallback, MethodResponse, MethodSink,
    Methods, SubscriptionState,
};
use jsonrpsee::server::IdProvider;
use jsonrpsee::types::error::ErrorCode;
use jsonrpsee::types::{
    ErrorObject, ErrorObjectOwned, Extensions, Id, InvalidRequest, Params, Request, TwoPointZero,
};
use jsonrpsee::IntoResponse;
use serde_json::value::RawValue;

use super::call_cache::{self, KeptCalls, CALL};
use super::error::RpcError;
use super::eth::{call_answer, gas_answer};
pub(crate) use super::middleware::Reply;
use super::middleware::{AnswersFirst, Entry, WireRules};
use super::quick::Quick;

/// What a connection's messages are answered by: the module's methods behind the wire rules.
pub(crate) type Service = WireRules<ModuleService>;

/// What the dispatcher answers before jsonrpsee's method machinery, for the methods a server
/// serves (see the module docs).
pub(crate) struct Shortcuts {
    pub(crate) kept_calls: KeptCalls,
    pub(crate) quick: Quick,
}

/// The answer of one method call: ready, or the future of an async method or a subscribe call.
type Answer = ResponseFuture<BoxFuture<'static, MethodResponse>, MethodResponse>;

/// The answer to one whole message (leading whitespace allowed).
pub(crate) async fn answer(data: &[u8], service: &Service, extensions: Extensions) -> Reply {
    let start = data
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(data.len());
    let body = &data[start..];
    if body.first() == Some(&b'[') {
        // (Read as text: skipping an unknown member's value does not check its UTF-8.)
        let Ok(body) = std::str::from_utf8(body) else {
            return Reply::Method(parse_error());
        };
        // Most batches hold well-formed calls only: those are read in one pass, any other entry
        // by entry.
        let batch = if let Ok(calls) = serde_json::from_str::<Vec<Call<'_>>>(body) {
            calls
                .into_iter()
                .map(|call| Ok(BatchEntry::Call(call.into_request(extensions.clone()))))
                .collect()
        } else {
            let Ok(entries) = serde_json::from_str::<Vec<&RawValue>>(body) else {
                return Reply::Method(parse_error());
            };
            entries
                .into_iter()
                .map(|entry| batch_entry(entry, &extensions))
                .collect()
        };
        return service.batch(batch).await;
    }
    if let Ok(call) = serde_json::from_slice::<Call<'_>>(body) {
        let req = call.into_request(extensions);
        let mut out = String::new();
        if service.quick(&req, &mut out) {
            return Reply::Rendered(out);
        }
        return Reply::Method(service.call(req).await);
    }
    let Ok(entry) = serde_json::from_slice::<&RawValue>(body) else {
        return Reply::Method(parse_error());
    };
    if !entry_is_sound(entry) {
        let err = ErrorObject::from(ErrorCode::InvalidRequest);
        return Reply::Method(MethodResponse::error(Id::Null, err));
    }
    if let Ok(mut n) = serde_json::from_str::<Notification<'_>>(entry.get()) {
        n.extensions = extensions;
        return Reply::Method(service.notification(n).await);
    }
    // An object that is neither: `-32600` with its id if it has a usable one.
    let (id, code) = prepare_error(body);
    Reply::Method(MethodResponse::error(id, ErrorObject::from(code)))
}

/// One entry of a batch, classified as jsonrpsee's server does, with the rules of the module
/// docs for the entries it would misread.
fn batch_entry<'a>(entry: &'a RawValue, extensions: &Extensions) -> Entry<'a> {
    let raw = entry.get();
    if let Ok(call) = serde_json::from_str::<Call<'a>>(raw) {
        return Ok(BatchEntry::Call(call.into_request(extensions.clone())));
    }
    if !entry_is_sound(entry) {
        return Err(BatchEntryErr::new(
            Id::Null,
            ErrorCode::InvalidRequest.into(),
        ));
    }
    if let Ok(mut n) = serde_json::from_str::<Notification<'a>>(raw) {
        n.extensions = extensions.clone();
        return Ok(BatchEntry::Notification(n));
    }
    let id = serde_json::from_str::<InvalidRequest<'a>>(raw).map_or(Id::Null, |r| r.id);
    Err(BatchEntryErr::new(id, ErrorCode::InvalidRequest.into()))
}

/// A well-formed call: jsonrpsee's `Request` with the same fields and rules, whose `id` is read
/// by a visitor instead of jsonrpsee's untagged enum. That enum buffers the id and tries `null`
/// first, so every numeric or string id built and formatted a serde error before it matched
/// (5% of the node's CPU on eth_blockNumber).
#[derive(serde::Deserialize)]
struct Call<'a> {
    /// Only "2.0" deserializes.
    #[serde(rename = "jsonrpc")]
    _jsonrpc: TwoPointZero,
    #[serde(borrow, deserialize_with = "call_id")]
    id: Id<'a>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: Option<Cow<'a, RawValue>>,
}

impl<'a> Call<'a> {
    fn into_request(self, extensions: Extensions) -> Request<'a> {
        Request {
            jsonrpc: TwoPointZero,
            id: self.id,
            method: self.method,
            params: self.params,
            extensions,
        }
    }
}

/// An id as jsonrpsee's `Id` reads it: `null`, an unsigned integer that fits in 64 bits, or a
/// string (borrowed unless it has escapes); anything else fails.
fn call_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Id<'de>, D::Error> {
    struct IdVisitor;
    impl<'de> serde::de::Visitor<'de> for IdVisitor {
        type Value = Id<'de>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("null, an unsigned integer or a string")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Id<'de>, E> {
            Ok(Id::Null)
        }
        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Id<'de>, E> {
            Ok(Id::Number(n))
        }
        fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Id<'de>, E> {
            Ok(Id::Str(Cow::Borrowed(s)))
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Id<'de>, E> {
            Ok(Id::Str(Cow::Owned(s.to_owned())))
        }
        fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Id<'de>, E> {
            Ok(Id::Str(Cow::Owned(s)))
        }
    }
    d.deserialize_any(IdVisitor)
}

/// The response to an eth_call (`byte` [`CALL`]) or eth_estimateGas answered from the kept
/// answers: what the method's registration makes of the same answer.
fn kept_answer(
    id: Id<'_>,
    byte: u8,
    answer: call_cache::Answer,
    max: usize,
    extensions: Extensions,
) -> MethodResponse {
    let rp = if byte == CALL {
        MethodResponse::response(id, call_answer(answer).into_response(), max)
    } else {
        let gas = Ok::<_, ErrorObjectOwned>(U64::from(gas_answer(answer)));
        MethodResponse::response(id, gas.into_response(), max)
    };
    rp.with_extensions(extensions)
}

/// `-32700` with id null.
pub(crate) fn parse_error() -> MethodResponse {
    MethodResponse::error(Id::Null, ErrorObjectOwned::from(RpcError::Parse))
}

/// Whether jsonrpsee classifies this single request or batch entry correctly by itself (see the
/// module docs): an object whose `id` is null, a string or an unsigned integer, or a
/// well-formed notification.
fn entry_is_sound(entry: &RawValue) -> bool {
    let raw = entry.get();
    if !raw.starts_with('{') {
        return false;
    }
    // Only the three members that matter, borrowed. Duplicate keys make it fail; the general
    // map below then keeps the last one.
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
        Some(id) => {
            let id = id.get();
            id == "null" || id.starts_with('"') || id.parse::<u64>().is_ok()
        }
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

/// A WebSocket connection's subscriptions: its limit, its sink and how ids are made.
#[derive(Clone)]
pub(crate) struct Subscriptions {
    pub(crate) bound: BoundedSubscriptions,
    pub(crate) sink: MethodSink,
    pub(crate) id_provider: Arc<dyn IdProvider>,
}

/// The `RpcModule`'s methods called for one connection (WebSocket) or one server (HTTP, which
/// has no subscriptions: `WireRules` refuses them first).
#[derive(Clone)]
pub(crate) struct ModuleService {
    pub(crate) methods: Methods,
    pub(crate) conn_id: ConnectionId,
    pub(crate) max_response_body: usize,
    pub(crate) subscriptions: Option<Subscriptions>,
    /// Answers before jsonrpsee's method machinery (`None`: none). Shared: the service is
    /// cloned for every call that goes through jsonrpsee's methods.
    pub(crate) shortcuts: Option<Arc<Shortcuts>>,
}

impl AnswersFirst for ModuleService {
    /// [`Quick`]'s answer to `req`, appended to `out`, if this service serves its method; see
    /// [`Quick::answer`].
    fn quick(&self, req: &Request<'_>, out: &mut String) -> bool {
        let params = req.params.as_deref().map(RawValue::get);
        self.shortcuts.as_ref().is_some_and(|s| {
            self.methods.method(&req.method).is_some()
                && s.quick
                    .answer(&req.id, &req.method, params, self.max_response_body, out)
        })
    }
}

impl RpcServiceT for ModuleService {
    type MethodResponse = MethodResponse;
    type BatchResponse = MethodResponse;
    type NotificationResponse = MethodResponse;

    fn call<'a>(&self, req: Request<'a>) -> impl Future<Output = MethodResponse> + Send + 'a {
        let Request {
            id,
            method,
            params,
            extensions,
            ..
        } = req;
        let params = Params::new(params.as_deref().map(RawValue::get));
        let max = self.max_response_body;
        let error = |id, err: ErrorObjectOwned, extensions| {
            Answer::ready(MethodResponse::error(id, err).with_extensions(extensions))
        };
        match self.methods.method(&method) {
            None => error(id, ErrorCode::MethodNotFound.into(), extensions),
            Some(MethodCallback::Sync(cb)) => Answer::ready(cb(id, params, max, extensions)),
            Some(MethodCallback::Async(cb)) => {
                let mut extensions = extensions;
                let kept = self
                    .shortcuts
                    .as_ref()
                    .map(|s| &s.kept_calls)
                    .zip(KeptCalls::method_byte(&method));
                if let (Some((kept, byte)), Some(sent)) = (kept, params.as_str()) {
                    match kept.lookup(byte, sent) {
                        Ok(answer) => {
                            return Answer::ready(kept_answer(id, byte, answer, max, extensions))
                        }
                        Err(Some(sent)) => {
                            extensions.insert(sent);
                        }
                        Err(None) => {}
                    }
                }
                Answer::future(cb(
                    id.into_owned(),
                    params.into_owned(),
                    self.conn_id,
                    max,
                    extensions,
                ))
            }
            Some(MethodCallback::Subscription(cb)) => {
                let Some(subs) = &self.subscriptions else {
                    return error(id, ErrorCode::InternalError.into(), extensions);
                };
                match subs.bound.acquire() {
                    Some(permit) => {
                        let state = SubscriptionState {
                            conn_id: self.conn_id,
                            id_provider: &*subs.id_provider,
                            subscription_permit: permit,
                        };
                        Answer::future(cb(id, params, subs.sink.clone(), state, extensions))
                    }
                    None => error(
                        id,
                        RpcError::LimitExceeded(format!(
                            "this connection already has {} subscriptions, the most allowed \
                             (--rpc-ws-max-subscriptions); unsubscribe one or open another \
                             connection",
                            subs.bound.max()
                        ))
                        .into(),
                        extensions,
                    ),
                }
            }
            // Never limited: unsubscribing must always be possible.
            Some(MethodCallback::Unsubscription(cb)) => {
                Answer::ready(cb(id, params, self.conn_id, max, extensions))
            }
        }
    }

    /// Never called: `WireRules`, always around this service, answers a batch entry by entry
    /// (one copy of the batch rules, in `middleware`).
    fn batch<'a>(&self, batch: Batch<'a>) -> impl Future<Output = MethodResponse> + Send + 'a {
        debug_assert!(false, "WireRules answers batches");
        drop(batch);
        std::future::ready(MethodResponse::error(
            Id::Null,
            ErrorObject::from(ErrorCode::InternalError),
        ))
    }

    fn notification<'a>(
        &self,
        n: Notification<'a>,
    ) -> impl Future<Output = MethodResponse> + Send + 'a {
        std::future::ready(MethodResponse::notification().with_extensions(n.extensions))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::middleware::{Transport, WireRulesLayer};
    use jsonrpsee::RpcModule;
    use serde_json::Value;
    use tower::Layer;

    /// The methods of a tiny module over HTTP, with a batch limit of 4.
    fn service() -> Service {
        let mut module = RpcModule::new(());
        module
            .register_method("eth_blockNumber", |_, _, _| "0x0")
            .unwrap();
        let methods: Methods = module.into();
        WireRulesLayer::new(Transport::Http, &methods, 4, 1 << 20, None).layer(ModuleService {
            methods,
            conn_id: ConnectionId(0),
            max_response_body: 1 << 20,
            subscriptions: None,
            shortcuts: None,
        })
    }

    async fn ask(message: &str) -> Value {
        let reply = answer(message.as_bytes(), &service(), Extensions::new()).await;
        serde_json::from_str(reply.json()).unwrap()
    }

    #[tokio::test]
    async fn sound_requests_are_answered_alone_and_in_batches() {
        let call = r#" {"jsonrpc":"2.0","method":"eth_blockNumber","id":1}"#;
        assert_eq!(
            ask(call).await,
            serde_json::json!({"jsonrpc":"2.0","result":"0x0","id":1})
        );
        let batch = format!(r#"[{call},{{"jsonrpc":"2.0","method":"eth_blockNumber","id":"x"}}]"#);
        let v = ask(&batch).await;
        assert_eq!((&v[0]["id"], &v[1]["id"]), (&1.into(), &"x".into()), "{v}");
    }

    #[tokio::test]
    async fn misread_entries_become_invalid_requests_with_id_null() {
        for message in [
            r#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":{}}"#,
            r#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":true}"#,
            r#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":-1}"#,
            r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
            "1",
            "[]",
        ] {
            let v = ask(message).await;
            assert_eq!(v["error"]["code"], -32600, "{message}: {v}");
            assert!(v["id"].is_null(), "{message}: {v}");
        }
        let v =
            ask(r#"[{"jsonrpc":"2.0","method":"eth_blockNumber","id":1},{"id":[1]},["x"]]"#).await;
        assert_eq!(v[0]["result"], "0x0", "{v}");
        for entry in [&v[1], &v[2]] {
            assert_eq!(entry["error"]["code"], -32600, "{v}");
            assert!(entry["id"].is_null(), "{v}");
        }
    }

    #[tokio::test]
    async fn invalid_json_is_a_parse_error() {
        for message in [
            "",
            "{not json",
            r#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#,
            r#"[{"jsonrpc":"2.0","method":"sum"},{"jsonrpc":"2.0","method""#,
        ] {
            let v = ask(message).await;
            assert_eq!(v["error"]["code"], -32700, "{message}: {v}");
            assert!(v["id"].is_null(), "{message}: {v}");
        }
    }

    /// A batch is checked as UTF-8 as a whole (a member nobody reads is skipped unchecked).
    #[tokio::test]
    async fn a_batch_that_is_not_utf8_is_a_parse_error() {
        let message =
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_blockNumber\",\"x\":\"\xff\"}]";
        let reply = answer(message, &service(), Extensions::new()).await;
        let v: Value = serde_json::from_str(reply.json()).unwrap();
        assert_eq!(v["error"]["code"], -32700, "{v}");
    }

    #[tokio::test]
    async fn notifications_get_no_answer() {
        let note = r#"{"jsonrpc":"2.0","method":"eth_blockNumber"}"#;
        for message in [note.to_owned(), format!("[{note},{note}]")] {
            let reply = answer(message.as_bytes(), &service(), Extensions::new()).await;
            assert!(reply.into_json().is_empty(), "{message}");
        }
    }

    /// `Call` accepts exactly what jsonrpsee's `Request` accepts and reads the same id, method
    /// and params.
    #[test]
    fn a_call_parses_as_jsonrpsee_parses_a_request() {
        let messages = [
            r#"{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m","params":{"a":1}}"#,
            r#"{"jsonrpc":"2.0","id":"abc","method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b\u00e9","method":"m\n"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":"m"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            r#"{"id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","extra":[1,2]}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
            r#""2.0""#,
        ];
        for message in messages {
            let ours = serde_json::from_str::<Call<'_>>(message)
                .map(|c| c.into_request(Extensions::new()));
            let theirs = serde_json::from_str::<Request<'_>>(message);
            match (ours, theirs) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.id, b.id, "{message}");
                    assert_eq!(a.method, b.method, "{message}");
                    assert_eq!(
                        a.params.as_deref().map(RawValue::get),
                        b.params.as_deref().map(RawValue::get),
                        "{message}"
                    );
                }
                (Err(_), Err(_)) => {}
                (a, b) => panic!(
                    "{message}: ours {:?}, jsonrpsee's {:?}",
                    a.is_ok(),
                    b.is_ok()
                ),
            }
        }
    }

    /// An answer from the kept answers reads exactly as the method's own answer of it (the
    /// methods return `call_answer` and `gas_answer` of it through their registration).
    #[tokio::test]
    async fn a_kept_answer_reads_as_the_methods_answer() {
        use alloy_primitives::Bytes;
        use call_cache::{Answer, ESTIMATE_GAS};
        let answers = [
            (
                CALL,
                Answer::Call {
                    output: Bytes::from(vec![1, 2, 3]),
                    reverted: false,
                },
            ),
            (
                CALL,
                Answer::Call {
                    output: Bytes::from(vec![8, 195, 121, 160]),
                    reverted: true,
                },
            ),
            (
                CALL,
                Answer::Call {
                    output: Bytes::new(),
                    reverted: true,
                },
            ),
            (ESTIMATE_GAS, Answer::Gas(21_000)),
        ];
        for (byte, answer) in answers {
            let mut module = RpcModule::new(answer.clone());
            module
                .register_async_method("eth_call", |_, kept, _| async move {
                    call_answer((*kept).clone())
                })
                .unwrap();
            module
                .register_async_method("eth_estimateGas", |_, kept, _| async move {
                    Ok::<_, ErrorObjectOwned>(U64::from(gas_answer((*kept).clone())))
                })
                .unwrap();
            let methods: Methods = module.into();
            let name = if byte == CALL {
                "eth_call"
            } else {
                "eth_estimateGas"
            };
            let Some(MethodCallback::Async(cb)) = methods.method(name) else {
                panic!("registered above")
            };
            for id in [Id::Number(7), Id::Str("a\\\"b".into())] {
                let no_params = Params::new(None);
                let theirs = cb(
                    id.clone(),
                    no_params,
                    ConnectionId(0),
                    1 << 20,
                    Extensions::new(),
                );
                let ours = kept_answer(id, byte, answer.clone(), 1 << 20, Extensions::new());
                let theirs = theirs.await;
                assert_eq!(ours.as_json().get(), theirs.as_json().get());
                assert_eq!(ours.is_success(), theirs.is_success());
            }
        }
    }
}
