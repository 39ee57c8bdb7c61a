//! The jsonrpsee API traits: eth, net, web3 and txpool namespaces.

use alloy_primitives::{Address, Bytes, B256, U256, U64};
use jsonrpsee::{core::RpcResult, proc_macros::rpc};

use crate::types::*;

/// The `eth_` namespace (execution-apis).
#[rpc(server, client, namespace = "eth")]
pub trait EthApi {
    /// Chain id (EIP-695).
    #[method(name = "chainId")]
    async fn chain_id(&self) -> RpcResult<U64>;
    /// `false`, or the sync progress of a follower.
    #[method(name = "syncing")]
    async fn syncing(&self) -> RpcResult<SyncStatus>;
    /// Number of the head block.
    #[method(name = "blockNumber")]
    async fn block_number(&self) -> RpcResult<U64>;
    /// Unlocked accounts: always empty, l2node holds no user keys.
    #[method(name = "accounts")]
    async fn accounts(&self) -> RpcResult<Vec<Address>>;
    /// Balance of an account at a block.
    #[method(name = "getBalance")]
    async fn balance(&self, address: Address, block: Option<BlockId>) -> RpcResult<U256>;
    /// Nonce of an account at a block (`pending` counts pool transactions).
    #[method(name = "getTransactionCount")]
    async fn transaction_count(&self, address: Address, block: Option<BlockId>) -> RpcResult<U64>;
    /// Code of an account at a block.
    #[method(name = "getCode")]
    async fn code(&self, address: Address, block: Option<BlockId>) -> RpcResult<Bytes>;
    /// A storage slot at a block.
    #[method(name = "getStorageAt")]
    async fn storage_at(
        &self,
        address: Address,
        slot: U256,
        block: Option<BlockId>,
    ) -> RpcResult<B256>;
    /// Executes a call without a transaction.
    #[method(name = "call")]
    async fn call(
        &self,
        request: TransactionRequest,
        block: Option<BlockId>,
        state_overrides: Option<StateOverride>,
        block_overrides: Option<Box<BlockOverrides>>,
    ) -> RpcResult<Bytes>;
    /// Gas a transaction needs (binary search, 1.5% tolerance).
    #[method(name = "estimateGas")]
    async fn estimate_gas(
        &self,
        request: TransactionRequest,
        block: Option<BlockId>,
        state_overrides: Option<StateOverride>,
    ) -> RpcResult<U64>;
    /// Access list and gas used of a call.
    #[method(name = "createAccessList")]
    async fn create_access_list(
        &self,
        request: TransactionRequest,
        block: Option<BlockId>,
    ) -> RpcResult<AccessListResult>;
    /// Submits a signed transaction.
    #[method(name = "sendRawTransaction")]
    async fn send_raw_transaction(&self, bytes: Bytes) -> RpcResult<B256>;
    /// A transaction by hash (pool or chain).
    #[method(name = "getTransactionByHash")]
    async fn transaction_by_hash(&self, hash: B256) -> RpcResult<Option<Transaction>>;
    /// A transaction by block hash and index.
    #[method(name = "getTransactionByBlockHashAndIndex")]
    async fn transaction_by_block_hash_and_index(
        &self,
        hash: B256,
        index: Index,
    ) -> RpcResult<Option<Transaction>>;
    /// A transaction by block number and index.
    #[method(name = "getTransactionByBlockNumberAndIndex")]
    async fn transaction_by_block_number_and_index(
        &self,
        block: BlockNumberOrTag,
        index: Index,
    ) -> RpcResult<Option<Transaction>>;
    /// Receipt of a mined transaction.
    #[method(name = "getTransactionReceipt")]
    async fn transaction_receipt(&self, hash: B256) -> RpcResult<Option<TransactionReceipt>>;
    /// All receipts of a block.
    #[method(name = "getBlockReceipts")]
    async fn block_receipts(&self, block: BlockId) -> RpcResult<Option<Vec<TransactionReceipt>>>;
    /// A block by hash.
    #[method(name = "getBlockByHash")]
    async fn block_by_hash(&self, hash: B256, full: bool) -> RpcResult<Option<Block>>;
    /// A block by number or tag (`pending` = what the sequencer would build next).
    #[method(name = "getBlockByNumber")]
    async fn block_by_number(
        &self,
        block: BlockNumberOrTag,
        full: bool,
    ) -> RpcResult<Option<Block>>;
    /// Transaction count of a block by hash.
    #[method(name = "getBlockTransactionCountByHash")]
    async fn block_transaction_count_by_hash(&self, hash: B256) -> RpcResult<Option<U64>>;
    /// Transaction count of a block by number.
    #[method(name = "getBlockTransactionCountByNumber")]
    async fn block_transaction_count_by_number(
        &self,
        block: BlockNumberOrTag,
    ) -> RpcResult<Option<U64>>;
    /// Uncle count by block hash (always 0 after the merge).
    #[method(name = "getUncleCountByBlockHash")]
    async fn uncle_count_by_block_hash(&self, hash: B256) -> RpcResult<Option<U64>>;
    /// Uncle count by block number (always 0 after the merge).
    #[method(name = "getUncleCountByBlockNumber")]
    async fn uncle_count_by_block_number(&self, block: BlockNumberOrTag) -> RpcResult<Option<U64>>;
    /// Suggested legacy gas price.
    #[method(name = "gasPrice")]
    async fn gas_price(&self) -> RpcResult<U256>;
    /// Suggested priority fee.
    #[method(name = "maxPriorityFeePerGas")]
    async fn max_priority_fee_per_gas(&self) -> RpcResult<U256>;
    /// Base fees, gas ratios and reward percentiles of recent blocks.
    #[method(name = "feeHistory")]
    async fn fee_history(
        &self,
        block_count: U64,
        newest: BlockNumberOrTag,
        percentiles: Option<Vec<f64>>,
    ) -> RpcResult<FeeHistory>;
    /// Logs matching a filter.
    #[method(name = "getLogs")]
    async fn logs(&self, filter: Filter) -> RpcResult<Vec<Log>>;
    /// Installs a log filter; returns its id.
    #[method(name = "newFilter")]
    async fn new_filter(&self, filter: Filter) -> RpcResult<U256>;
    /// Installs a new-block filter.
    #[method(name = "newBlockFilter")]
    async fn new_block_filter(&self) -> RpcResult<U256>;
    /// Installs a pending-transaction filter.
    #[method(name = "newPendingTransactionFilter")]
    async fn new_pending_transaction_filter(&self) -> RpcResult<U256>;
    /// Changes since the last poll of a filter.
    #[method(name = "getFilterChanges")]
    async fn filter_changes(&self, id: U256) -> RpcResult<FilterChanges>;
    /// All logs of a log filter.
    #[method(name = "getFilterLogs")]
    async fn filter_logs(&self, id: U256) -> RpcResult<Vec<Log>>;
    /// Removes a filter.
    #[method(name = "uninstallFilter")]
    async fn uninstall_filter(&self, id: U256) -> RpcResult<bool>;
    /// Merkle proofs of an account and its slots (EIP-1186).
    #[method(name = "getProof")]
    async fn proof(
        &self,
        address: Address,
        keys: Vec<B256>,
        block: BlockId,
    ) -> RpcResult<EIP1186AccountProofResponse>;
}

/// The `eth_subscribe` pub/sub API (WebSocket only).
#[rpc(server, client, namespace = "eth")]
pub trait EthPubSubApi {
    /// `newHeads`, `logs` (with a filter object) or `newPendingTransactions`.
    #[subscription(name = "subscribe" => "subscription", unsubscribe = "unsubscribe", item = serde_json::Value)]
    async fn subscribe_to(
        &self,
        kind: String,
        params: Option<serde_json::Value>,
    ) -> jsonrpsee::core::SubscriptionResult;
}

/// The `net_` namespace.
#[rpc(server, client, namespace = "net")]
pub trait NetApi {
    /// Network id (the chain id, decimal string).
    #[method(name = "version")]
    fn version(&self) -> RpcResult<String>;
    /// Whether the node accepts peer connections.
    #[method(name = "listening")]
    fn listening(&self) -> RpcResult<bool>;
    /// Number of connected peers.
    #[method(name = "peerCount")]
    fn peer_count(&self) -> RpcResult<U64>;
}

/// The `web3_` namespace.
#[rpc(server, client, namespace = "web3")]
pub trait Web3Api {
    /// Client name and version.
    #[method(name = "clientVersion")]
    fn client_version(&self) -> RpcResult<String>;
    /// keccak256 of the given bytes.
    #[method(name = "sha3")]
    fn sha3(&self, data: Bytes) -> RpcResult<B256>;
}

/// The `txpool_` namespace.
#[rpc(server, client, namespace = "txpool")]
pub trait TxpoolApi {
    /// Pending and queued counts.
    #[method(name = "status")]
    async fn status(&self) -> RpcResult<TxpoolStatus>;
    /// Every pooled transaction, by sender and nonce.
    #[method(name = "content")]
    async fn content(&self) -> RpcResult<TxpoolContent>;
}
