//! A small client of etcd's v3 API through its JSON gateway (`POST /v3/kv/txn` and friends,
//! served on the client port by every etcd since 3.3): the key-value transactions, ranges and
//! leases the group needs.
//!
//! Why the gateway and not gRPC: the maintained gRPC client (`etcd-client`) compiles etcd's
//! protobuf files at build time and so needs `protoc` on every machine that builds l2node,
//! group or not. The gateway is the same v3 API (same requests, same guarantees), documented
//! by etcd, and needs only the HTTP client and JSON we already build. Keys and values travel
//! base64-encoded, 64-bit integers as JSON strings, as the gateway's protobuf JSON mapping has
//! them.

use std::{
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use serde::{de::DeserializeOwned, Deserialize, Deserializer};
use serde_json::{json, Value};

/// What talking to etcd can fail with.
#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    /// No endpoint answered.
    #[error("etcd is unreachable at {endpoints}: {reason}")]
    Unreachable {
        /// The endpoints tried.
        endpoints: String,
        /// The last failure.
        reason: String,
    },
    /// etcd answered with an error (e.g. a lease that expired).
    #[error("etcd refused {path}: {message}")]
    Refused {
        /// The API path.
        path: &'static str,
        /// etcd's message.
        message: String,
        /// etcd's gRPC status code (5: not found).
        code: i64,
    },
    /// An answer that is not the API's JSON.
    #[error("etcd answered {path} with unexpected JSON: {reason}")]
    Malformed {
        /// The API path.
        path: &'static str,
        /// What did not parse.
        reason: String,
    },
}

/// The client: the endpoints of one etcd cluster, tried in turn.
#[derive(Debug)]
pub struct Etcd {
    http: reqwest::Client,
    endpoints: Vec<String>,
    /// The endpoint that answered last; tried first.
    current: AtomicUsize,
}

/// A key-value pair as etcd keeps it.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyValue {
    /// The key.
    #[serde(deserialize_with = "bytes")]
    pub key: Vec<u8>,
    /// The value.
    #[serde(default, deserialize_with = "bytes")]
    pub value: Vec<u8>,
    /// The revision that created the key (0 for none).
    #[serde(default, deserialize_with = "int")]
    pub create_revision: i64,
}

/// A range's answer.
#[derive(Debug, Default, Deserialize)]
pub struct RangeResponse {
    /// The pairs, in key order (or reversed).
    #[serde(default)]
    pub kvs: Vec<KeyValue>,
}

/// The header every answer carries.
#[derive(Debug, Default, Deserialize)]
pub struct Header {
    /// The store's revision after the request.
    #[serde(default, deserialize_with = "int")]
    pub revision: i64,
}

/// A transaction's answer.
#[derive(Debug, Default, Deserialize)]
pub struct TxnResponse {
    /// The header.
    #[serde(default)]
    pub header: Header,
    /// Whether every comparison held (the success branch ran).
    #[serde(default)]
    pub succeeded: bool,
    /// One answer per operation of the branch that ran.
    #[serde(default)]
    pub responses: Vec<OpResponse>,
}

/// One operation's answer within a transaction.
#[derive(Debug, Default, Deserialize)]
pub struct OpResponse {
    /// A range's answer.
    pub response_range: Option<RangeResponse>,
}

#[derive(Deserialize)]
struct GrantResponse {
    #[serde(rename = "ID", deserialize_with = "int")]
    id: i64,
}

#[derive(Deserialize)]
struct KeepAliveResponse {
    result: KeepAliveResult,
}

#[derive(Deserialize)]
struct KeepAliveResult {
    #[serde(rename = "TTL", default, deserialize_with = "int")]
    ttl: i64,
}

#[derive(Deserialize)]
struct ErrorResponse {
    #[serde(default)]
    message: String,
    #[serde(default)]
    code: i64,
}

/// A comparison of a transaction, on one key.
pub enum Compare<'a> {
    /// The key was created at this revision (0: the key does not exist).
    Created(&'a [u8], i64),
}

/// An operation of a transaction.
pub enum Op<'a> {
    /// Writes `value` at `key`, attached to a lease (0: none).
    Put(&'a [u8], &'a [u8], i64),
    /// Deletes `key`.
    Delete(&'a [u8]),
    /// Reads `key`.
    Get(&'a [u8]),
}

impl Etcd {
    /// A client of the cluster at `endpoints` (`http://host:port`), each request bounded by
    /// `timeout`.
    pub fn new(endpoints: Vec<String>, timeout: Duration) -> Result<Self, EtcdError> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| EtcdError::Unreachable {
                endpoints: endpoints.join(","),
                reason: e.to_string(),
            })?;
        Ok(Self {
            http,
            endpoints: endpoints
                .into_iter()
                .map(|e| e.trim_end_matches('/').to_owned())
                .collect(),
            current: AtomicUsize::new(0),
        })
    }

    /// POSTs `body` to `path` on the endpoint that answered last, then on the others.
    async fn post<T: DeserializeOwned>(
        &self,
        path: &'static str,
        body: &Value,
    ) -> Result<T, EtcdError> {
        let body = serde_json::to_vec(body).expect("a JSON value serializes");
        let first = self.current.load(Ordering::Relaxed);
        let mut last = String::new();
        for i in 0..self.endpoints.len() {
            let index = (first + i) % self.endpoints.len();
            let url = format!("{}{path}", self.endpoints[index]);
            let answer = match self.http.post(&url).body(body.clone()).send().await {
                Ok(a) => a,
                Err(e) => {
                    last = format!("{url}: {e}");
                    continue;
                }
            };
            let status = answer.status();
            let bytes = match answer.bytes().await {
                Ok(b) => b,
                Err(e) => {
                    last = format!("{url}: {e}");
                    continue;
                }
            };
            // An endpoint that cannot serve (a member cut off from the quorum answers "no
            // leader" as 503; a proxy before a dead one, 502) did not apply the request: the
            // next one may. Other errors are answers.
            if matches!(status.as_u16(), 502 | 503) {
                last = format!(
                    "{url}: HTTP {status}: {}",
                    String::from_utf8_lossy(&bytes).trim()
                );
                continue;
            }
            self.current.store(index, Ordering::Relaxed);
            if !status.is_success() {
                let e: ErrorResponse =
                    serde_json::from_slice(&bytes).map_err(|e| EtcdError::Malformed {
                        path,
                        reason: format!("HTTP {status}: {e}"),
                    })?;
                return Err(EtcdError::Refused {
                    path,
                    message: e.message,
                    code: e.code,
                });
            }
            return serde_json::from_slice(&bytes).map_err(|e| EtcdError::Malformed {
                path,
                reason: e.to_string(),
            });
        }
        Err(EtcdError::Unreachable {
            endpoints: self.endpoints.join(","),
            reason: last,
        })
    }

    /// A new lease of `ttl` seconds; its id.
    pub async fn grant(&self, ttl: u64) -> Result<i64, EtcdError> {
        let r: GrantResponse = self
            .post("/v3/lease/grant", &json!({ "TTL": ttl.to_string() }))
            .await?;
        Ok(r.id)
    }

    /// Renews lease `id`; the seconds it has again, or `None` when it had already expired.
    pub async fn keep_alive(&self, id: i64) -> Result<Option<u64>, EtcdError> {
        let r: KeepAliveResponse = self
            .post("/v3/lease/keepalive", &json!({ "ID": id.to_string() }))
            .await?;
        Ok((r.result.ttl > 0).then_some(r.result.ttl as u64))
    }

    /// Ends lease `id` now: the keys attached to it are deleted.
    pub async fn revoke(&self, id: i64) -> Result<(), EtcdError> {
        match self
            .post::<Value>("/v3/lease/revoke", &json!({ "ID": id.to_string() }))
            .await
        {
            // Already gone.
            Err(EtcdError::Refused { code: 5, .. }) => Ok(()),
            other => other.map(drop),
        }
    }

    /// The keys from `from` (inclusive) to `to` (exclusive), at most `limit`, in key order.
    pub async fn range(
        &self,
        from: &[u8],
        to: &[u8],
        limit: u64,
    ) -> Result<Vec<KeyValue>, EtcdError> {
        let r: RangeResponse = self
            .post(
                "/v3/kv/range",
                &json!({
                    "key": B64.encode(from),
                    "range_end": B64.encode(to),
                    "limit": limit.to_string(),
                }),
            )
            .await?;
        Ok(r.kvs)
    }

    /// Runs `success` when every comparison holds, `failure` otherwise, atomically.
    pub async fn txn(
        &self,
        compare: &[Compare<'_>],
        success: &[Op<'_>],
        failure: &[Op<'_>],
    ) -> Result<TxnResponse, EtcdError> {
        let compare: Vec<Value> = compare
            .iter()
            .map(|c| match c {
                Compare::Created(key, revision) => json!({
                    "target": "CREATE",
                    "result": "EQUAL",
                    "key": B64.encode(key),
                    "create_revision": revision.to_string(),
                }),
            })
            .collect();
        let ops = |ops: &[Op<'_>]| -> Vec<Value> {
            ops.iter()
                .map(|op| match op {
                    Op::Put(key, value, lease) => json!({"request_put": {
                        "key": B64.encode(key),
                        "value": B64.encode(value),
                        "lease": lease.to_string(),
                    }}),
                    Op::Delete(key) => json!({"request_delete_range": {"key": B64.encode(key)}}),
                    Op::Get(key) => json!({"request_range": {"key": B64.encode(key)}}),
                })
                .collect()
        };
        self.post(
            "/v3/kv/txn",
            &json!({"compare": compare, "success": ops(success), "failure": ops(failure)}),
        )
        .await
    }
}

/// base64 bytes (absent: empty).
fn bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let s = String::deserialize(d)?;
    B64.decode(s).map_err(serde::de::Error::custom)
}

/// A 64-bit integer, which the gateway writes as a string.
fn int<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Int {
        Text(String),
        Number(i64),
    }
    match Int::deserialize(d)? {
        Int::Text(s) => s.parse().map_err(serde::de::Error::custom),
        Int::Number(n) => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_gateways_json() {
        let r: TxnResponse = serde_json::from_str(
            r#"{"header":{"cluster_id":"1","revision":"42","raft_term":"2"},"succeeded":true,
                "responses":[{"response_put":{"header":{"revision":"42"}}}]}"#,
        )
        .unwrap();
        assert!(r.succeeded);
        assert_eq!(r.header.revision, 42);
        // A failed transaction leaves `succeeded` out; a range answers its pairs.
        let r: TxnResponse = serde_json::from_str(
            r#"{"header":{"revision":"7"},"responses":[{"response_range":{"header":{},
                "kvs":[{"key":"L2wvbGVhZGVy","create_revision":"2","mod_revision":"2",
                "version":"1","value":"bTE=","lease":"9"}],"count":"1"}}]}"#,
        )
        .unwrap();
        assert!(!r.succeeded);
        let kv = &r.responses[0].response_range.as_ref().unwrap().kvs[0];
        assert_eq!(kv.key, b"/l/leader");
        assert_eq!(kv.value, b"m1");
        assert_eq!(kv.create_revision, 2);
        // An expired lease's keepalive has no TTL.
        let k: KeepAliveResponse =
            serde_json::from_str(r#"{"result":{"header":{},"ID":"5"}}"#).unwrap();
        assert_eq!(k.result.ttl, 0);
    }

    /// An HTTP endpoint on loopback that answers every request with `status` and `body`.
    async fn canned(status: &'static str, body: &'static str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let answer = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        url
    }

    #[tokio::test]
    async fn an_endpoint_that_cannot_serve_passes_the_request_to_the_next() {
        let cut_off = canned(
            "503 Service Unavailable",
            r#"{"error":"etcdserver: no leader","code":14,"message":"etcdserver: no leader"}"#,
        )
        .await;
        let healthy = canned("200 OK", r#"{"header":{},"ID":"77","TTL":"2"}"#).await;
        let etcd = Etcd::new(vec![cut_off, healthy], Duration::from_secs(5)).unwrap();
        assert_eq!(etcd.grant(2).await.unwrap(), 77);
        assert_eq!(
            etcd.current.load(Ordering::Relaxed),
            1,
            "the healthy one is asked first now"
        );
    }
}
