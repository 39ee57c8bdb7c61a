//! [`Client`]: estimates that always carry `from`, and sends that re-estimate before every
//! signature.

use std::time::{Duration, SystemTime};

use alloy_consensus::{SignableTransaction, TxEip1559, TxEnvelope};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use alloy_rpc_types_eth::{TransactionInput, TransactionRequest};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use jsonrpsee::{
    http_client::{HttpClient, HttpClientBuilder},
    ws_client::{WsClient, WsClientBuilder},
};
use l2node_api::{EthApiClient, L2ApiClient, NetApiClient};
use tokio::sync::OnceCell;

use crate::{ClientError, FeeQuote};

/// Attempts of one [`Client::send`], each with a fresh estimate.
pub const SEND_ATTEMPTS: usize = 3;
/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A call to estimate or send. `from` is required: the sender's Karma selects the fees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The sender.
    pub from: Address,
    /// The recipient; `None` creates a contract from `data`.
    pub to: Option<Address>,
    /// Wei sent along.
    pub value: U256,
    /// Calldata (or init code).
    pub data: Bytes,
}

impl Call {
    /// A plain call from `from` to `to`.
    pub fn new(from: Address, to: Address) -> Self {
        Self {
            from,
            to: Some(to),
            value: U256::ZERO,
            data: Bytes::new(),
        }
    }

    /// With `value` wei.
    pub fn value(mut self, value: U256) -> Self {
        self.value = value;
        self
    }

    /// With calldata.
    pub fn data(mut self, data: Bytes) -> Self {
        self.data = data;
        self
    }

    /// The JSON-RPC call object.
    pub fn to_request(&self) -> TransactionRequest {
        TransactionRequest {
            from: Some(self.from),
            to: Some(self.to.map_or(TxKind::Create, TxKind::Call)),
            value: Some(self.value),
            input: TransactionInput::new(self.data.clone()),
            ..Default::default()
        }
    }
}

/// A transaction the node accepted.
#[derive(Debug, Clone)]
pub struct Sent {
    /// Its hash.
    pub hash: B256,
    /// The quote it was built from (taken right before signing).
    pub quote: FeeQuote,
    /// Attempts it took.
    pub attempts: usize,
}

enum Rpc {
    Http(HttpClient),
    Ws(WsClient),
}

/// Runs `$e` with `$c` bound to the transport's jsonrpsee client.
macro_rules! rpc {
    ($self:ident, $c:ident => $e:expr) => {
        match &$self.rpc {
            Rpc::Http($c) => $e,
            Rpc::Ws($c) => $e,
        }
    };
}

/// A connection to a node over HTTP or WebSocket.
pub struct Client {
    rpc: Rpc,
    chain_id: OnceCell<u64>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let transport = match self.rpc {
            Rpc::Http(_) => "http",
            Rpc::Ws(_) => "ws",
        };
        f.debug_struct("Client")
            .field("transport", &transport)
            .finish()
    }
}

impl Client {
    /// Connects to `url` (`http(s)://` or `ws(s)://`).
    pub async fn connect(url: &str) -> Result<Self, ClientError> {
        let rpc = if url.starts_with("ws://") || url.starts_with("wss://") {
            Rpc::Ws(
                WsClientBuilder::default()
                    .request_timeout(REQUEST_TIMEOUT)
                    .build(url)
                    .await?,
            )
        } else {
            Rpc::Http(
                HttpClientBuilder::default()
                    .request_timeout(REQUEST_TIMEOUT)
                    .build(url)?,
            )
        };
        Ok(Self {
            rpc,
            chain_id: OnceCell::new(),
        })
    }

    /// The node's chain id (asked once).
    pub async fn chain_id(&self) -> Result<u64, ClientError> {
        self.chain_id
            .get_or_try_init(|| async {
                let id = rpc!(self, c => EthApiClient::chain_id(c).await)?;
                Ok::<_, ClientError>(id.to::<u64>())
            })
            .await
            .copied()
    }

    /// A fresh quote for `call`: `l2_estimateGas` and the sender's `l2_getKarmaStatus`, asked
    /// together. On a chain without Karma the state is [`crate::FeeState::Standard`].
    pub async fn estimate(&self, call: &Call) -> Result<FeeQuote, ClientError> {
        let req = call.to_request();
        let (estimate, status) = tokio::join!(
            async { rpc!(self, c => L2ApiClient::estimate_gas(c, req, None, None).await) },
            async { rpc!(self, c => L2ApiClient::karma_status(c, call.from, None).await) },
        );
        let estimate = estimate?;
        let status = match status.map_err(ClientError::from) {
            Ok(s) => Some(s),
            Err(ClientError::Rpc { message, .. }) if message.contains("no Karma policy") => None,
            Err(e) => return Err(e),
        };
        FeeQuote::new(&estimate, status.as_ref(), SystemTime::now())
    }

    /// The sender's next nonce, pool included.
    pub async fn pending_nonce(&self, who: Address) -> Result<u64, ClientError> {
        let n = rpc!(self, c => EthApiClient::transaction_count(c, who, Some(alloy_eips::BlockId::pending())).await)?;
        Ok(n.to::<u64>())
    }

    /// Signs and sends `call` as an EIP-1559 transaction built from a quote taken right before
    /// signing (`gas = gasLimit`, `maxPriorityFeePerGas = priorityFeePerGas`, `maxFeePerGas =
    /// 2 x base + priority`). A refusal a new quote can fix (nonce taken, underpriced, the free
    /// quota ran out meanwhile) or a transport failure is retried with a new quote, up to
    /// [`SEND_ATTEMPTS`] times. A premium quote is sent like any other: fees never block.
    ///
    /// A transaction is sent at most once: "already known" means the node holds this very
    /// transaction, which is then the answer; and after a send whose answer was lost (a
    /// transport failure or a timeout, when the node may have taken it), the retries keep its
    /// nonce, so that at most one of them can be mined, and one that finds the lost
    /// transaction at the node answers with it.
    pub async fn send(&self, call: &Call, signer: &PrivateKeySigner) -> Result<Sent, ClientError> {
        if call.from != signer.address() {
            return Err(ClientError::Signing(format!(
                "call.from {} is not the signer's address {}",
                call.from,
                signer.address()
            )));
        }
        let chain_id = self.chain_id().await?;
        // The nonce and transaction of a send whose answer was lost.
        let mut lost: Option<(u64, B256, FeeQuote)> = None;
        let mut attempt = 0;
        loop {
            attempt += 1;
            if let Some((_, hash, quote)) = &lost {
                if self.known(*hash).await {
                    return Ok(Sent {
                        hash: *hash,
                        quote: quote.clone(),
                        attempts: attempt - 1,
                    });
                }
            }
            let quote = self.estimate(call).await?;
            let nonce = match &lost {
                Some((nonce, ..)) => *nonce,
                None => self.pending_nonce(call.from).await?,
            };
            let raw = sign(call, signer, chain_id, nonce, &quote)?;
            let hash = alloy_primitives::keccak256(&raw);
            let sent = rpc!(self, c => EthApiClient::send_raw_transaction(c, raw).await);
            let e = match sent.map_err(ClientError::from) {
                Ok(hash) => {
                    return Ok(Sent {
                        hash,
                        quote,
                        attempts: attempt,
                    })
                }
                Err(e) if e.is_already_known() => {
                    return Ok(Sent {
                        hash,
                        quote,
                        attempts: attempt,
                    })
                }
                Err(e) => e,
            };
            if matches!(e, ClientError::Transport(_) | ClientError::Timeout) && lost.is_none() {
                lost = Some((nonce, hash, quote));
            }
            if !e.is_retryable_send_error() {
                return Err(e);
            }
            if attempt >= SEND_ATTEMPTS {
                return Err(ClientError::Exhausted {
                    attempts: attempt,
                    last: Box::new(e),
                });
            }
        }
    }

    /// Whether the node holds transaction `hash` (pooled or mined); `false` when it cannot say.
    async fn known(&self, hash: B256) -> bool {
        rpc!(self, c => EthApiClient::transaction_by_hash(c, hash).await).is_ok_and(|t| t.is_some())
    }

    /// `eth_blockNumber`.
    pub async fn block_number(&self) -> Result<u64, ClientError> {
        Ok(rpc!(self, c => EthApiClient::block_number(c).await)?.to())
    }

    /// Whether `eth_syncing` reports progress (anything but `false`).
    pub async fn syncing(&self) -> Result<bool, ClientError> {
        let s = rpc!(self, c => EthApiClient::syncing(c).await)?;
        Ok(!matches!(s, l2node_api::types::Syncing::No))
    }

    /// The address that seals this node's blocks (`eth_coinbase`), or `None` for a node that
    /// does not seal (a follower answers `eth_coinbase` with an error, as geth does).
    pub async fn sealer(&self) -> Option<Address> {
        rpc!(self, c => EthApiClient::coinbase(c).await).ok()
    }

    /// `net_peerCount`.
    pub async fn peer_count(&self) -> Result<u64, ClientError> {
        Ok(rpc!(self, c => NetApiClient::peer_count(c).await)?.to())
    }

    /// Why `hash` never landed, if the node recorded a refusal (`l2_getTransactionExclusionStatus`).
    pub async fn exclusion(
        &self,
        hash: B256,
    ) -> Result<Option<l2node_api::types::TransactionExclusion>, ClientError> {
        Ok(rpc!(self, c => L2ApiClient::transaction_exclusion_status(c, hash).await)?)
    }

    /// The receipt of `hash`, once mined.
    pub async fn receipt(
        &self,
        hash: B256,
    ) -> Result<Option<alloy_rpc_types_eth::TransactionReceipt>, ClientError> {
        Ok(rpc!(self, c => EthApiClient::transaction_receipt(c, hash).await)?)
    }
}

/// The signed EIP-2718 bytes of `call` with the fields of `quote`.
fn sign(
    call: &Call,
    signer: &PrivateKeySigner,
    chain_id: u64,
    nonce: u64,
    quote: &FeeQuote,
) -> Result<Bytes, ClientError> {
    let tx = TxEip1559 {
        chain_id,
        nonce,
        gas_limit: quote.gas_limit,
        max_fee_per_gas: quote.max_fee_per_gas,
        max_priority_fee_per_gas: quote.priority_fee_per_gas,
        to: call.to.map_or(TxKind::Create, TxKind::Call),
        value: call.value,
        access_list: Default::default(),
        input: call.data.clone(),
    };
    let sig = signer
        .sign_hash_sync(&tx.signature_hash())
        .map_err(|e| ClientError::Signing(e.to_string()))?;
    Ok(TxEnvelope::from(tx.into_signed(sig)).encoded_2718().into())
}
