//! What a dev node adds, as anvil and geth --dev do: transaction filling (`eth_fillTransaction`,
//! on every node), the dev accounts unlocked for `eth_sendTransaction`, `eth_signTransaction`,
//! `eth_sign` and `eth_signTypedData_v4` (`--dev` only), the `DEV` namespace's block
//! controls (`evm_mine`, `evm_increaseTime`, `evm_setNextBlockTimestamp`), and the `TESTING`
//! namespace's `testing_buildBlockV1`.
//!
//! Nothing here changes state outside a block: the controls decide when the sequencer seals and
//! how it stamps blocks, so every follower computes the same state from the same blocks.

use std::sync::Arc;

use alloy_consensus::{transaction::Recovered, TxEnvelope, TypedTransaction};
use alloy_dyn_abi::TypedData;
use alloy_eips::Encodable2718;
use alloy_network::TxSignerSync;
use alloy_primitives::{Address, Bytes, Signature, TxKind, B256, U256, U64};
use alloy_rpc_types_eth::TransactionRequest;
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use jsonrpsee::core::{async_trait, RpcResult as JsonRpcResult};
use l2node_api::{
    types::{
        BuiltPayloadV1, ExecutionPayload, MineOptions, NumberOrHex, PayloadAttributes,
        RpcTransaction, SignedTransaction,
    },
    DevApiServer, TestingApiServer,
};
use l2node_node::chain::Chain;
use l2node_node::constants::MAX_DEV_TIMESTAMP;
use l2node_node::executor::{self, CallRequest};
use l2node_node::miner::MineTrigger;
use l2node_node::testing::{build_payload, PayloadError, PayloadRequest};
use l2node_storage::StateReader;

use super::{
    convert,
    error::{RpcError, RpcResult},
    eth::{blocking, EthRpc},
};

impl EthRpc {
    /// The unlocked key of `address`.
    pub(super) fn unlocked(&self, address: Address) -> RpcResult<&PrivateKeySigner> {
        if self.cfg.unlocked.is_empty() {
            return Err(RpcError::Refused(format!(
                "unknown account {address}: this node holds no keys (only a --dev node unlocks \
                 its dev accounts); sign the transaction in your wallet (or cast --private-key) \
                 and send it with eth_sendRawTransaction"
            )));
        }
        self.cfg
            .unlocked
            .iter()
            .find(|k| k.address() == address)
            .ok_or_else(|| {
                RpcError::Refused(format!(
                    "unknown account {address}: this dev node unlocks only its dev accounts \
                     (eth_accounts lists them); send from one of those, or sign elsewhere and \
                     use eth_sendRawTransaction"
                ))
            })
    }

    /// `request` with what it leaves out filled as `eth_sendTransaction` sends it: the chain
    /// id, the nonce (pooled transactions included), the gas (eth_estimateGas), and the fees:
    /// twice the next base fee plus [`EthRpc::fill_tip`] (free for a Karma holder within quota;
    /// a sender on the premium path is told what to pay, never charged it unasked). A
    /// `gasPrice` makes a legacy transaction, as geth.
    pub(super) async fn fill(
        &self,
        mut request: TransactionRequest,
    ) -> RpcResult<TypedTransaction> {
        let from = sender(&request)?;
        if let (Some(input), Some(data)) = (&request.input.input, &request.input.data) {
            if input != data {
                return Err(RpcError::InvalidParams(
                    "both \"data\" and \"input\" are set and not equal. Please use \"input\" to \
                     pass transaction call data"
                        .into(),
                ));
            }
        }
        let chain_id = self.chain.spec().chain_id;
        match request.chain_id {
            Some(have) if have != chain_id => {
                return Err(RpcError::InvalidParams(format!(
                    "chainId does not match node's (have={have}, want={chain_id})"
                )))
            }
            _ => request.chain_id = Some(chain_id),
        }
        // No `to`: a creation (alloy's builder wants it said).
        request.to.get_or_insert(TxKind::Create);
        if request.nonce.is_none() {
            let nonce = match self.pool.pending_nonce(from) {
                Some(n) => n,
                None => {
                    let chain = self.chain.clone();
                    blocking(move || {
                        let state = chain.storage().state_at(None)?;
                        Ok(state.account(from)?.map_or(0, |a| a.nonce))
                    })
                    .await?
                }
            };
            request.nonce = Some(nonce);
        }
        if request.gas.is_none() {
            let call = CallRequest::new(request.clone(), self.cfg.gas_cap);
            let gas = self
                .evm_call(None, move |at| Ok(executor::estimate_gas(at, &call)?))
                .await?;
            request.gas = Some(gas);
        }
        if request.gas_price.is_none() {
            let tip = match request.max_priority_fee_per_gas {
                Some(tip) => tip,
                None => self.fill_tip(from, request.gas.unwrap_or_default()).await?,
            };
            request.max_priority_fee_per_gas = Some(tip);
            let base = u128::from(self.chain.next_block().base_fee);
            request
                .max_fee_per_gas
                .get_or_insert(base.saturating_mul(2).saturating_add(tip));
        }
        request.build_typed_tx().map_err(|_| {
            RpcError::InvalidParams(
                "the transaction cannot be built from these fields: give either gasPrice or \
                 maxFeePerGas with maxPriorityFeePerGas, and no blob fields"
                    .into(),
            )
        })
    }

    /// Fills `request` and signs it with the unlocked key of its `from`.
    pub(super) async fn sign_filled(&self, request: TransactionRequest) -> RpcResult<TxEnvelope> {
        // Before the estimate: an account the node does not hold fails at once.
        let key = self.unlocked(sender(&request)?)?.clone();
        let mut tx = self.fill(request).await?;
        let signature = key
            .sign_transaction_sync(&mut tx)
            .map_err(|e| RpcError::Refused(format!("cannot sign: {e}")))?;
        Ok(tx.into_envelope(signature))
    }

    /// `eth_sendTransaction`: fill, sign, then the path of `eth_sendRawTransaction`.
    pub(super) async fn send_unlocked(&self, request: TransactionRequest) -> RpcResult<B256> {
        // The nonce is read when filling: the next send waits until this one is pooled.
        let _nonce = self.send_lock.lock().await;
        let signed = self.sign_filled(request).await?;
        self.submit_raw(signed.encoded_2718().into()).await
    }

    /// `eth_fillTransaction`: the filled transaction, unsigned (a zero signature, as geth).
    pub(super) async fn fill_unsigned(
        &self,
        request: TransactionRequest,
    ) -> RpcResult<SignedTransaction> {
        let from = request.from.unwrap_or_default();
        let request = TransactionRequest {
            from: Some(from),
            ..request
        };
        let tx = self.fill(request).await?;
        let envelope = tx.into_envelope(Signature::new(U256::ZERO, U256::ZERO, false));
        let raw = Bytes::from(envelope.encoded_2718());
        Ok(SignedTransaction {
            raw,
            tx: RpcTransaction(convert::rpc_pending_tx(&Recovered::new_unchecked(
                envelope, from,
            ))),
        })
    }

    /// `eth_sign`: the EIP-191 signature of `message` (r, s, v with v 27 or 28).
    pub(super) fn sign_message(&self, address: Address, message: &[u8]) -> RpcResult<Bytes> {
        let signature = self
            .unlocked(address)?
            .sign_message_sync(message)
            .map_err(|e| RpcError::Refused(format!("cannot sign: {e}")))?;
        Ok(signature.as_bytes().to_vec().into())
    }

    /// `eth_signTypedData_v4`: the EIP-712 signature of `typed_data`, given as an object or as
    /// its JSON text (ethers and viem send text).
    pub(super) fn sign_typed(
        &self,
        address: Address,
        typed_data: serde_json::Value,
    ) -> RpcResult<Bytes> {
        let key = self.unlocked(address)?;
        let parsed = match &typed_data {
            serde_json::Value::String(text) => serde_json::from_str::<TypedData>(text),
            other => serde_json::from_value::<TypedData>(other.clone()),
        }
        .map_err(|e| {
            RpcError::InvalidParams(format!(
                "invalid argument 1 (typedData): {}; expected EIP-712 typed data {{types, \
                 primaryType, domain, message}}",
                l2node_api::plain_error(&e)
            ))
        })?;
        let hash = parsed
            .eip712_signing_hash()
            .map_err(|e| RpcError::InvalidParams(format!("invalid argument 1 (typedData): {e}")))?;
        let signature = key
            .sign_hash_sync(&hash)
            .map_err(|e| RpcError::Refused(format!("cannot sign: {e}")))?;
        Ok(signature.as_bytes().to_vec().into())
    }
}

#[async_trait]
impl TestingApiServer for EthRpc {
    async fn build_block_v1(
        &self,
        parent_block_hash: B256,
        attributes: PayloadAttributes,
        transactions: Option<Vec<Bytes>>,
        extra_data: Option<Bytes>,
    ) -> JsonRpcResult<BuiltPayloadV1> {
        if attributes
            .withdrawals
            .as_ref()
            .is_some_and(|w| !w.is_empty())
        {
            return Err(RpcError::InvalidParams(
                "invalid argument 1 (payloadAttributes): withdrawals must be empty: this network \
                 has no beacon chain"
                    .into(),
            )
            .into());
        }
        let req = PayloadRequest {
            parent: parent_block_hash,
            timestamp: attributes.timestamp.to(),
            prev_randao: attributes.prev_randao,
            fee_recipient: attributes.suggested_fee_recipient,
            parent_beacon_block_root: attributes.parent_beacon_block_root,
            transactions,
            extra_data,
        };
        let (chain, pool) = (self.chain.clone(), self.pool.clone());
        let built = self
            .bounded(move || {
                build_payload(&chain, &pool, req).map_err(|e| match e {
                    PayloadError::UnknownParent(_) => RpcError::InvalidParams(e.to_string()),
                    PayloadError::InvalidTransaction(m) => RpcError::Refused(m),
                    PayloadError::Chain(c) => RpcError::Chain(c),
                })
            })
            .await?;
        let header = &built.block.header;
        let execution_payload = ExecutionPayload {
            parent_hash: header.parent_hash,
            fee_recipient: header.beneficiary,
            state_root: header.state_root,
            receipts_root: header.receipts_root,
            logs_bloom: header.logs_bloom,
            prev_randao: header.mix_hash,
            block_number: U64::from(header.number),
            gas_limit: U64::from(header.gas_limit),
            gas_used: U64::from(header.gas_used),
            timestamp: U64::from(header.timestamp),
            extra_data: header.extra_data.clone(),
            base_fee_per_gas: U256::from(header.base_fee_per_gas.unwrap_or_default()),
            block_hash: header.hash_slow(),
            transactions: built
                .block
                .body
                .transactions
                .iter()
                .map(|t| t.encoded_2718().into())
                .collect(),
            withdrawals: Vec::new(),
            blob_gas_used: U64::from(header.blob_gas_used.unwrap_or_default()),
            excess_blob_gas: U64::from(header.excess_blob_gas.unwrap_or_default()),
        };
        Ok(BuiltPayloadV1 {
            execution_payload,
            block_value: built.value,
            blobs_bundle: Default::default(),
            should_override_builder: false,
            execution_requests: built
                .requests
                .iter()
                .filter(|r| r.len() > 1)
                .cloned()
                .collect(),
        })
    }
}

/// The `DEV` namespace's handlers.
#[derive(Clone)]
pub(super) struct DevRpc {
    pub(super) chain: Arc<Chain>,
    /// The running miner; `None` on a node that does not seal.
    pub(super) miner: Option<MineTrigger>,
}

impl DevRpc {
    fn miner(&self, method: &str) -> RpcResult<&MineTrigger> {
        self.miner.as_ref().ok_or_else(|| {
            RpcError::Refused(format!(
                "{method} needs the sequencer: this node does not seal blocks (a follower); send \
                 it to the node that seals (eth_coinbase answers there)"
            ))
        })
    }

    /// Stamps the next block `timestamp`, after the head's.
    fn set_next(&self, timestamp: u64) -> RpcResult<()> {
        if timestamp > MAX_DEV_TIMESTAMP {
            return Err(RpcError::InvalidParams(format!(
                "The timestamp is too big: {timestamp} is after {MAX_DEV_TIMESTAMP} (the end \
                 of the year 9999)"
            )));
        }
        let head = self.chain.head().header.timestamp;
        if timestamp <= head {
            return Err(RpcError::InvalidParams(format!(
                "Timestamp error: {timestamp} is lower than or equal to previous block's \
                 timestamp ({head}); give a later time"
            )));
        }
        self.chain.clock().set_next(timestamp);
        Ok(())
    }
}

#[async_trait]
impl DevApiServer for DevRpc {
    async fn mine(&self, options: Option<MineOptions>) -> JsonRpcResult<String> {
        let miner = self.miner("evm_mine")?;
        let (timestamp, blocks) = match options {
            None => (None, 1),
            Some(MineOptions::Timestamp(t)) => (Some(t.get()), 1),
            Some(MineOptions::Options { timestamp, blocks }) => (
                timestamp.map(NumberOrHex::get),
                blocks.map_or(1, NumberOrHex::get),
            ),
        };
        if blocks > l2node_node::constants::DEV_MINE_MAX_BLOCKS {
            return Err(RpcError::InvalidParams(format!(
                "blocks: {blocks} is more than one evm_mine seals (at most {}); call it again",
                l2node_node::constants::DEV_MINE_MAX_BLOCKS
            ))
            .into());
        }
        if let Some(t) = timestamp {
            self.set_next(t)?;
        }
        for _ in 0..blocks {
            match miner.mine().await {
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(RpcError::Refused(format!("evm_mine: {e}")).into()),
                None => {
                    return Err(RpcError::Refused(
                        "evm_mine: the miner has stopped (the node is shutting down)".into(),
                    )
                    .into())
                }
            }
        }
        Ok("0x0".into())
    }

    async fn increase_time(&self, seconds: NumberOrHex) -> JsonRpcResult<i64> {
        self.miner("evm_increaseTime")?;
        let seconds = seconds.get();
        Ok(self.chain.clock().increase(seconds).ok_or_else(|| {
            RpcError::InvalidParams(format!(
                "seconds: {seconds} would move the clock past {MAX_DEV_TIMESTAMP} (the end of \
                 the year 9999); give fewer"
            ))
        })?)
    }

    async fn set_next_block_timestamp(&self, timestamp: NumberOrHex) -> JsonRpcResult<()> {
        self.miner("evm_setNextBlockTimestamp")?;
        Ok(self.set_next(timestamp.get())?)
    }
}

/// The request's `from`, which signing and filling need.
fn sender(request: &TransactionRequest) -> RpcResult<Address> {
    request.from.ok_or_else(|| {
        RpcError::InvalidParams(
            "from is required: name the account that sends the transaction".into(),
        )
    })
}
