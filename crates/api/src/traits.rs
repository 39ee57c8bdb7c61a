//! The jsonrpsee API traits (eth, net, web3 and txpool namespaces) and their method tables,
//! declared once through `declare_api!`.

use alloy_primitives::{Address, Bytes, B256, U256, U64};
#[cfg(any(feature = "server", feature = "client"))]
use jsonrpsee::proc_macros::rpc;
// The client traits replace `RpcResult` by the client's result type.
#[cfg(any(feature = "server", feature = "client"))]
#[cfg_attr(not(feature = "server"), allow(unused_imports))]
use jsonrpsee::core::RpcResult;

use crate::types::*;

declare_api! {
    // jsonrpsee's `#[rpc]` for each combination of the crate features `server` and `client`.
    // Written here rather than inside the macro: the code jsonrpsee generates takes the hygiene
    // of this attribute, which must be the one of the methods below (`self`, argument names).
    #[cfg_attr(all(feature = "server", feature = "client"), rpc(server, client))]
    #[cfg_attr(all(feature = "server", not(feature = "client")), rpc(server))]
    #[cfg_attr(all(not(feature = "server"), feature = "client"), rpc(client))]
    traits:

    /// The `eth_` namespace (execution-apis).
    #[table(ETH_METHODS, server = EthApiServer)]
    pub trait EthApi {
        /// Chain id (EIP-695).
        #[method(name = "eth_chainId")]
        fn chain_id(&self) -> RpcResult<U64>;
        /// `false`, or the sync progress of a follower.
        #[method(name = "eth_syncing")]
        fn syncing(&self) -> RpcResult<Syncing>;
        /// The base fee per blob gas of the head block (`null` before Cancun).
        #[method(name = "eth_blobBaseFee")]
        fn blob_base_fee(&self) -> RpcResult<Option<U256>>;
        /// The address the sequencer seals with; an error on a node that does not seal.
        #[method(name = "eth_coinbase")]
        fn coinbase(&self) -> RpcResult<Address>;
        /// The fork configuration in force at the head, the next scheduled one and the last
        /// (EIP-7910).
        #[method(name = "eth_config")]
        fn config(&self) -> RpcResult<EthConfig>;
        /// Blocks of calls simulated on top of a block, with block and state overrides
        /// (execution-apis `eth_simulateV1`).
        #[method(name = "eth_simulateV1")]
        async fn simulate_v1(
            &self,
            payload: SimulatePayload,
            block: Option<BlockId>,
        ) -> RpcResult<Vec<SimulatedBlock<Block>>>;
        /// Number of the head block.
        #[method(name = "eth_blockNumber")]
        fn block_number(&self) -> RpcResult<U64>;
        /// Unlocked accounts: the dev accounts on a `--dev` node, empty on any other (l2node
        /// holds no user keys).
        #[method(name = "eth_accounts")]
        fn accounts(&self) -> RpcResult<Vec<Address>>;
        /// Fills (as `eth_fillTransaction`), signs with an unlocked account (`--dev` only) and
        /// sends a transaction.
        #[method(name = "eth_sendTransaction")]
        async fn send_transaction(&self, transaction: TransactionRequest) -> RpcResult<B256>;
        /// Fills and signs a transaction with an unlocked account (`--dev` only), without
        /// sending it: the EIP-2718 encoding (execution-apis and anvil).
        #[method(name = "eth_signTransaction")]
        async fn sign_transaction(&self, transaction: TransactionRequest) -> RpcResult<Bytes>;
        /// Fills a transaction's missing fields (nonce, gas, fees, chain id) as
        /// `eth_sendTransaction` would, unsigned (geth's `{raw, tx}`).
        #[method(name = "eth_fillTransaction")]
        async fn fill_transaction(
            &self,
            transaction: TransactionRequest,
        ) -> RpcResult<SignedTransaction>;
        /// An EIP-191 signature (`personal_sign`'s prefix) by an unlocked account (`--dev`).
        #[method(name = "eth_sign")]
        async fn sign(&self, address: Address, message: Bytes) -> RpcResult<Bytes>;
        /// An EIP-712 signature of typed data (an object or its JSON text) by an unlocked
        /// account (`--dev`).
        #[method(name = "eth_signTypedData_v4")]
        async fn sign_typed_data_v4(
            &self,
            address: Address,
            typed_data: serde_json::Value,
        ) -> RpcResult<Bytes>;
        /// Balance of an account at a block.
        #[method(name = "eth_getBalance")]
        fn balance(&self, address: Address, block: Option<BlockId>) -> RpcResult<U256>;
        /// Nonce of an account at a block (`pending` counts pool transactions).
        #[method(name = "eth_getTransactionCount")]
        fn transaction_count(&self, address: Address, block: Option<BlockId>) -> RpcResult<U64>;
        /// Code of an account at a block.
        #[method(name = "eth_getCode")]
        fn code(&self, address: Address, block: Option<BlockId>) -> RpcResult<Bytes>;
        /// A storage slot at a block.
        #[method(name = "eth_getStorageAt")]
        fn storage_at(
            &self,
            address: Address,
            slot: StorageSlot,
            block: Option<BlockId>,
        ) -> RpcResult<B256>;
        /// Executes a call without a transaction. (The server reads the call's extensions: the
        /// params as sent, when it may keep its answer under them.)
        #[method(name = "eth_call", with_extensions)]
        async fn call(
            &self,
            transaction: TransactionRequest,
            block: Option<BlockId>,
            state_overrides: Option<StateOverride>,
            block_overrides: Option<Box<BlockOverrides>>,
        ) -> RpcResult<Bytes>;
        /// Gas a transaction needs (binary search, 1.5% tolerance). (Extensions: as eth_call.)
        #[method(name = "eth_estimateGas", with_extensions)]
        async fn estimate_gas(
            &self,
            transaction: TransactionRequest,
            block: Option<BlockId>,
            state_overrides: Option<StateOverride>,
        ) -> RpcResult<U64>;
        /// Access list and gas used of a call.
        #[method(name = "eth_createAccessList")]
        async fn create_access_list(
            &self,
            transaction: TransactionRequest,
            block: Option<BlockId>,
        ) -> RpcResult<AccessListResult>;
        /// Submits a signed transaction.
        #[method(name = "eth_sendRawTransaction")]
        async fn send_raw_transaction(&self, transaction: Bytes) -> RpcResult<B256>;
        /// A transaction by hash (pool or chain).
        #[method(name = "eth_getTransactionByHash")]
        async fn transaction_by_hash(&self, hash: B256) -> RpcResult<Option<RpcTransaction>>;
        /// A transaction by block hash and index.
        #[method(name = "eth_getTransactionByBlockHashAndIndex")]
        async fn transaction_by_block_hash_and_index(
            &self,
            block_hash: B256,
            index: Index,
        ) -> RpcResult<Option<Transaction>>;
        /// A transaction by block number and index.
        #[method(name = "eth_getTransactionByBlockNumberAndIndex")]
        async fn transaction_by_block_number_and_index(
            &self,
            block: BlockNumberOrTag,
            index: Index,
        ) -> RpcResult<Option<Transaction>>;
        /// Receipt of a mined transaction.
        #[method(name = "eth_getTransactionReceipt")]
        async fn transaction_receipt(&self, hash: B256) -> RpcResult<Option<TransactionReceipt>>;
        /// All receipts of a block.
        #[method(name = "eth_getBlockReceipts")]
        async fn block_receipts(&self, block: BlockId) -> RpcResult<Option<Vec<TransactionReceipt>>>;
        /// A block by hash.
        #[method(name = "eth_getBlockByHash")]
        async fn block_by_hash(&self, block_hash: B256, full_transactions: bool) -> RpcResult<Option<Block>>;
        /// A block by number or tag (`pending` = what the sequencer would build next).
        #[method(name = "eth_getBlockByNumber")]
        async fn block_by_number(
            &self,
            block: BlockNumberOrTag,
            full_transactions: bool,
        ) -> RpcResult<Option<BlockOrPending>>;
        /// Transaction count of a block by hash.
        #[method(name = "eth_getBlockTransactionCountByHash")]
        async fn block_transaction_count_by_hash(&self, block_hash: B256) -> RpcResult<Option<U64>>;
        /// Transaction count of a block by number.
        #[method(name = "eth_getBlockTransactionCountByNumber")]
        async fn block_transaction_count_by_number(
            &self,
            block: BlockNumberOrTag,
        ) -> RpcResult<Option<U64>>;
        /// Uncle count by block hash (always 0 after the merge).
        #[method(name = "eth_getUncleCountByBlockHash")]
        async fn uncle_count_by_block_hash(&self, block_hash: B256) -> RpcResult<Option<U64>>;
        /// Uncle count by block number (always 0 after the merge).
        #[method(name = "eth_getUncleCountByBlockNumber")]
        async fn uncle_count_by_block_number(&self, block: BlockNumberOrTag) -> RpcResult<Option<U64>>;
        /// Suggested legacy gas price.
        #[method(name = "eth_gasPrice")]
        async fn gas_price(&self) -> RpcResult<U256>;
        /// Suggested priority fee.
        #[method(name = "eth_maxPriorityFeePerGas")]
        async fn max_priority_fee_per_gas(&self) -> RpcResult<U256>;
        /// Base fees, gas ratios and reward percentiles of recent blocks.
        #[method(name = "eth_feeHistory")]
        async fn fee_history(
            &self,
            block_count: U64,
            newest_block: BlockNumberOrTag,
            reward_percentiles: Option<Vec<f64>>,
        ) -> RpcResult<FeeHistory>;
        /// Logs matching a filter.
        #[method(name = "eth_getLogs")]
        async fn logs(&self, filter: Filter) -> RpcResult<Vec<Log>>;
        /// Installs a log filter; returns its id.
        #[method(name = "eth_newFilter")]
        async fn new_filter(&self, filter: Filter) -> RpcResult<U256>;
        /// Installs a new-block filter.
        #[method(name = "eth_newBlockFilter")]
        async fn new_block_filter(&self) -> RpcResult<U256>;
        /// Installs a pending-transaction filter.
        #[method(name = "eth_newPendingTransactionFilter")]
        async fn new_pending_transaction_filter(&self) -> RpcResult<U256>;
        /// Changes since the last poll of a filter.
        #[method(name = "eth_getFilterChanges")]
        async fn filter_changes(&self, filter_id: U256) -> RpcResult<FilterChanges>;
        /// All logs of a log filter.
        #[method(name = "eth_getFilterLogs")]
        async fn filter_logs(&self, filter_id: U256) -> RpcResult<Vec<Log>>;
        /// Removes a filter.
        #[method(name = "eth_uninstallFilter")]
        async fn uninstall_filter(&self, filter_id: U256) -> RpcResult<bool>;
        /// Merkle proofs of an account and its slots (EIP-1186).
        #[method(name = "eth_getProof")]
        async fn proof(
            &self,
            address: Address,
            storage_keys: Vec<JsonStorageKey>,
            block: Option<BlockId>,
        ) -> RpcResult<EIP1186AccountProofResponse>;
        /// Many storage slots of many accounts at one block (`latest` by default), at most
        /// [`crate::types::MAX_STORAGE_VALUES_SLOTS`] slots in all.
        #[method(name = "eth_getStorageValues")]
        async fn storage_values(
            &self,
            requests: std::collections::BTreeMap<Address, Vec<StorageSlot>>,
            block: Option<BlockId>,
        ) -> RpcResult<std::collections::BTreeMap<String, Vec<B256>>>;
        /// The base fee of the next block (`null` before London).
        #[method(name = "eth_baseFee")]
        fn base_fee(&self) -> RpcResult<Option<U256>>;
        /// What history this node serves: the head and, per kind of data, whether it is kept
        /// and from which block.
        #[method(name = "eth_capabilities")]
        async fn capabilities(&self) -> RpcResult<Capabilities>;
        /// EIP-7966: sends a signed transaction and answers its receipt once it is mined,
        /// within `timeout` milliseconds (the node's default when left out; capped).
        #[method(name = "eth_sendRawTransactionSync")]
        async fn send_raw_transaction_sync(
            &self,
            bytes: Bytes,
            timeout: Option<NumberOrHex>,
        ) -> RpcResult<TransactionReceipt>;
    }

    /// The `eth_subscribe` pub/sub API (WebSocket only).
    #[table(ETH_PUBSUB_METHODS, server = EthPubSubApiServer)]
    pub trait EthPubSubApi {
        /// `newHeads`, `logs` (with a filter object), `newPendingTransactions` or `syncing`.
        #[subscription(
            name = "eth_subscribe" => "eth_subscription",
            unsubscribe = "eth_unsubscribe",
            item = serde_json::Value
        )]
        async fn subscribe_to(
            &self,
            // Any JSON here, checked by the server: jsonrpsee's own refusal of a missing or
            // non-string kind would read "No more params" / "invalid type".
            kind: Option<serde_json::Value>,
            params: Option<serde_json::Value>,
        ) -> jsonrpsee::core::SubscriptionResult;
    }

    /// The `net_` namespace.
    #[table(NET_METHODS, server = NetApiServer)]
    pub trait NetApi {
        /// Network id (the chain id, decimal string).
        #[method(name = "net_version")]
        fn version(&self) -> RpcResult<String>;
        /// Whether the node accepts peer connections.
        #[method(name = "net_listening")]
        fn listening(&self) -> RpcResult<bool>;
        /// Number of connected peers.
        #[method(name = "net_peerCount")]
        fn peer_count(&self) -> RpcResult<U64>;
    }

    /// The `web3_` namespace.
    #[table(WEB3_METHODS, server = Web3ApiServer)]
    pub trait Web3Api {
        /// Client name and version.
        #[method(name = "web3_clientVersion")]
        fn client_version(&self) -> RpcResult<String>;
        /// keccak256 of the given bytes.
        #[method(name = "web3_sha3")]
        fn sha3(&self, data: Bytes) -> RpcResult<B256>;
    }

    /// The `l2_` namespace: Karma-aware fees. `linea_estimateGas` is `l2_estimateGas` under the
    /// name viem's Linea-family chains already call.
    #[table(L2_METHODS, server = L2ApiServer)]
    pub trait L2Api {
        /// Gas limit and the fee fields for the sender's Karma state: zero fees on the gasless
        /// path, premium fees otherwise. `from` is required.
        #[method(name = "l2_estimateGas")]
        async fn estimate_gas(
            &self,
            call: TransactionRequest,
            block: Option<BlockId>,
            state_overrides: Option<StateOverride>,
        ) -> RpcResult<L2GasEstimate>;
        /// `l2_estimateGas` under Linea's name.
        #[method(name = "linea_estimateGas")]
        async fn linea_estimate_gas(
            &self,
            call: TransactionRequest,
            block: Option<BlockId>,
            state_overrides: Option<StateOverride>,
        ) -> RpcResult<L2GasEstimate>;
        /// A sender's Karma: tier, quota, usage, denial and fee state.
        #[method(name = "l2_getKarmaStatus")]
        async fn karma_status(&self, address: Address, block: Option<BlockId>) -> RpcResult<KarmaStatus>;
        /// Why a transaction never landed: where it was refused and why, or null when this
        /// node has no such record (kept 7 days).
        #[method(name = "l2_getTransactionExclusionStatus")]
        async fn transaction_exclusion_status(
            &self,
            tx_hash: B256,
        ) -> RpcResult<Option<TransactionExclusion>>;
        /// `l2_getTransactionExclusionStatus` under Linea's name.
        #[method(name = "linea_getTransactionExclusionStatusV1")]
        async fn linea_transaction_exclusion_status(
            &self,
            tx_hash: B256,
        ) -> RpcResult<Option<TransactionExclusion>>;
    }

    /// The `l2admin_` namespace: operator controls of the Karma policy (off by default).
    #[table(L2ADMIN_METHODS, server = L2AdminApiServer)]
    pub trait L2AdminApi {
        /// Puts a sender on the operator deny list, through `untilEpoch` (inclusive) or until
        /// removed; returns whether the list changed.
        #[method(name = "l2admin_addToDenyList")]
        async fn add_to_deny_list(&self, address: Address, until_epoch: Option<U64>) -> RpcResult<bool>;
        /// Takes a sender off the operator deny list; returns whether it was there.
        #[method(name = "l2admin_removeFromDenyList")]
        async fn remove_from_deny_list(&self, address: Address) -> RpcResult<bool>;
        /// Turns every gasless path off (`true`) or back on (`false`); returns whether gasless
        /// is now enabled.
        #[method(name = "l2admin_setKillSwitch")]
        async fn set_kill_switch(&self, on: bool) -> RpcResult<bool>;
    }

    /// The `conductor_` namespace: a sequencer group member's controls, in the spirit of the
    /// OP stack's op-conductor (off by default; loopback only, like ADMIN).
    #[table(CONDUCTOR_METHODS, server = ConductorApiServer)]
    pub trait ConductorApi {
        /// Whether this member holds the group's leadership.
        #[method(name = "conductor_leader")]
        fn leader(&self) -> RpcResult<bool>;
        /// Whether this member leads and seals (not paused).
        #[method(name = "conductor_active")]
        fn active(&self) -> RpcResult<bool>;
        /// The leader as this member last saw it, or null when there is none.
        #[method(name = "conductor_leaderWithID")]
        fn leader_with_id(&self) -> RpcResult<Option<GroupLeader>>;
        /// The members that are alive, with their heads.
        #[method(name = "conductor_members")]
        fn members(&self) -> RpcResult<Vec<GroupMember>>;
        /// Stops campaigning and sealing; a leader gives up its leadership to another member.
        #[method(name = "conductor_pause")]
        fn pause(&self) -> RpcResult<()>;
        /// Takes part in elections again.
        #[method(name = "conductor_resume")]
        fn resume(&self) -> RpcResult<()>;
        /// The leader gives up its leadership so another member takes it (it stays out of the
        /// next elections for two leases).
        #[method(name = "conductor_transferLeader")]
        fn transfer_leader(&self) -> RpcResult<()>;
    }

    /// The `admin_` namespace: the peer-to-peer layer, for operators (off by default).
    #[table(ADMIN_METHODS, server = AdminApiServer)]
    pub trait AdminApi {
        /// Connected peers.
        #[method(name = "admin_peers")]
        fn peers(&self) -> RpcResult<Vec<AdminPeer>>;
        /// This node: its id, listen addresses and chain.
        #[method(name = "admin_nodeInfo")]
        fn node_info(&self) -> RpcResult<AdminNodeInfo>;
    }

    /// The `debug_` namespace: raw encodings (off by default, like geth's and Besu's DEBUG).
    #[table(DEBUG_METHODS, server = DebugApiServer)]
    pub trait DebugApi {
        /// The RLP of a block's header.
        #[method(name = "debug_getRawHeader")]
        async fn raw_header(&self, block: BlockId) -> RpcResult<Bytes>;
        /// The RLP of a block.
        #[method(name = "debug_getRawBlock")]
        async fn raw_block(&self, block: BlockId) -> RpcResult<Bytes>;
        /// The EIP-2718 encoding of each receipt of a block.
        #[method(name = "debug_getRawReceipts")]
        async fn raw_receipts(&self, block: BlockId) -> RpcResult<Vec<Bytes>>;
        /// The EIP-2718 encoding of a transaction, mined or pooled (`null` when unknown, as
        /// geth).
        #[method(name = "debug_getRawTransaction")]
        async fn raw_transaction(&self, hash: B256) -> RpcResult<Option<Bytes>>;
        /// The blocks import refused lately (the last 10, as geth), newest first, each with
        /// its hash, its fields and its RLP.
        #[method(name = "debug_getBadBlocks")]
        async fn bad_blocks(&self) -> RpcResult<Vec<BadBlock>>;
        /// A mined transaction replayed under one of geth's tracers (the struct logger by
        /// default; `callTracer`, `prestateTracer`, `4byteTracer`, `noopTracer`,
        /// `flatCallTracer`, `muxTracer`).
        #[method(name = "debug_traceTransaction")]
        async fn trace_transaction(
            &self,
            hash: B256,
            opts: Option<GethDebugTracingOptions>,
        ) -> RpcResult<GethTrace>;
        /// A call like `eth_call`, traced.
        #[method(name = "debug_traceCall")]
        async fn trace_call(
            &self,
            call: TransactionRequest,
            block: Option<BlockId>,
            opts: Option<GethDebugTracingCallOptions>,
        ) -> RpcResult<GethTrace>;
        /// Every transaction of a block by number, traced.
        #[method(name = "debug_traceBlockByNumber")]
        async fn trace_block_by_number(
            &self,
            block: BlockNumberOrTag,
            opts: Option<GethDebugTracingOptions>,
        ) -> RpcResult<Vec<TraceResult>>;
        /// Every transaction of a block by hash, traced.
        #[method(name = "debug_traceBlockByHash")]
        async fn trace_block_by_hash(
            &self,
            hash: B256,
            opts: Option<GethDebugTracingOptions>,
        ) -> RpcResult<Vec<TraceResult>>;
    }

    /// The `trace_` namespace: Parity-style traces, as reth and anvil answer them (off by
    /// default, like Besu's TRACE).
    #[table(TRACE_METHODS, server = TraceApiServer)]
    pub trait TraceApi {
        /// Every call frame of a mined transaction (`null` for an unknown transaction).
        #[method(name = "trace_transaction")]
        async fn transaction(&self, hash: B256) -> RpcResult<Option<Vec<LocalizedTransactionTrace>>>;
        /// Every call frame of every transaction of a block (`null` for an unknown block).
        #[method(name = "trace_block")]
        async fn block(&self, block: BlockId) -> RpcResult<Option<Vec<LocalizedTransactionTrace>>>;
        /// A call like `eth_call` with the asked trace types (`trace`, `vmTrace`, `stateDiff`).
        #[method(name = "trace_call")]
        async fn call(
            &self,
            call: TransactionRequest,
            trace_types: Vec<TraceType>,
            block: Option<BlockId>,
        ) -> RpcResult<TraceResults>;
        /// Each transaction of a block replayed with the asked trace types.
        #[method(name = "trace_replayBlockTransactions")]
        async fn replay_block_transactions(
            &self,
            block: BlockId,
            trace_types: Vec<TraceType>,
        ) -> RpcResult<Option<Vec<TraceResultsWithTransactionHash>>>;
    }

    /// Otterscan's `ots_` namespace (API level 8), as Erigon and anvil serve it.
    #[table(OTS_METHODS, server = OtsApiServer)]
    pub trait OtsApi {
        /// The Otterscan API level this node implements (8).
        #[method(name = "ots_getApiLevel")]
        async fn get_api_level(&self) -> RpcResult<u64>;
        /// Whether `address` holds code at `block`.
        #[method(name = "ots_hasCode")]
        async fn has_code(&self, address: Address, block: BlockId) -> RpcResult<bool>;
        /// The ether transfers, creations and self-destructs inside a mined transaction.
        #[method(name = "ots_getInternalOperations")]
        async fn get_internal_operations(&self, hash: B256) -> RpcResult<Vec<InternalOperation>>;
        /// The revert data of a mined transaction (`0x` when it did not revert).
        #[method(name = "ots_getTransactionError")]
        async fn get_transaction_error(&self, hash: B256) -> RpcResult<Bytes>;
        /// Every call frame of a mined transaction.
        #[method(name = "ots_traceTransaction")]
        async fn trace_transaction(&self, hash: B256) -> RpcResult<Vec<TraceEntry>>;
        /// A block without its transactions, with its issuance and total fees.
        #[method(name = "ots_getBlockDetails")]
        async fn get_block_details(&self, block: BlockNumberOrTag) -> RpcResult<BlockDetails>;
        /// [`Self::get_block_details`] by block hash.
        #[method(name = "ots_getBlockDetailsByHash")]
        async fn get_block_details_by_hash(&self, hash: B256) -> RpcResult<BlockDetails>;
        /// One page of a block's transactions with their receipts (without logs).
        #[method(name = "ots_getBlockTransactions")]
        async fn get_block_transactions(
            &self,
            block: BlockNumberOrTag,
            page: U64,
            page_size: U64,
        ) -> RpcResult<OtsBlockTransactions>;
        /// The hash of the transaction `sender` sent with `nonce` (`null` if none).
        #[method(name = "ots_getTransactionBySenderAndNonce")]
        async fn get_transaction_by_sender_and_nonce(
            &self,
            sender: Address,
            nonce: U64,
        ) -> RpcResult<Option<B256>>;
        /// The transaction that created the contract at `address` and its direct creator.
        #[method(name = "ots_getContractCreator")]
        async fn get_contract_creator(&self, address: Address) -> RpcResult<Option<ContractCreator>>;
        /// Transactions that touched `address`, newest first, in blocks before `block` (0: from
        /// the head).
        #[method(name = "ots_searchTransactionsBefore")]
        async fn search_transactions_before(
            &self,
            address: Address,
            block: U64,
            page_size: U64,
        ) -> RpcResult<TransactionsWithReceipts>;
        /// Transactions that touched `address`, newest first, in blocks after `block` (0: from
        /// genesis).
        #[method(name = "ots_searchTransactionsAfter")]
        async fn search_transactions_after(
            &self,
            address: Address,
            block: U64,
            page_size: U64,
        ) -> RpcResult<TransactionsWithReceipts>;
    }

    /// The `DEV` namespace: anvil's block-production controls, on by default only with `--dev`.
    /// They change when blocks are sealed and how they are stamped, never state outside a
    /// block, so followers stay in step.
    #[table(DEV_METHODS, server = DevApiServer)]
    pub trait DevApi {
        /// Seals blocks now, with or without transactions; answers "0x0" (as anvil).
        #[method(name = "evm_mine")]
        async fn mine(&self, options: Option<MineOptions>) -> RpcResult<String>;
        /// Moves the sequencer's clock forward; answers the total offset in seconds.
        #[method(name = "evm_increaseTime")]
        async fn increase_time(&self, seconds: NumberOrHex) -> RpcResult<i64>;
        /// The timestamp of the next block; later blocks continue from it.
        #[method(name = "evm_setNextBlockTimestamp")]
        async fn set_next_block_timestamp(&self, timestamp: NumberOrHex) -> RpcResult<()>;
    }

    /// The `TESTING` namespace (execution-apis): off by default, for test harnesses.
    #[table(TESTING_METHODS, server = TestingApiServer)]
    pub trait TestingApi {
        /// The block this node would build on `parent_block_hash` from `transactions` (all of
        /// them, in order; `null` takes the pool's), without storing it or moving the head.
        #[method(name = "testing_buildBlockV1")]
        async fn build_block_v1(
            &self,
            parent_block_hash: B256,
            payload_attributes: PayloadAttributes,
            transactions: Option<Vec<Bytes>>,
            extra_data: Option<Bytes>,
        ) -> RpcResult<BuiltPayloadV1>;
    }

    /// The `rpc_` namespace, served on every transport.
    #[table(RPC_METHODS, server = RpcApiServer)]
    pub trait RpcApi {
        /// The namespaces this transport serves, each with version "1.0".
        #[method(name = "rpc_modules")]
        fn modules(&self) -> RpcResult<std::collections::BTreeMap<String, String>>;
    }

    /// The `txpool_` namespace.
    #[table(TXPOOL_METHODS, server = TxpoolApiServer)]
    pub trait TxpoolApi {
        /// Pending and queued counts.
        #[method(name = "txpool_status")]
        async fn status(&self) -> RpcResult<TxpoolStatus>;
        /// Every pooled transaction, by sender and nonce.
        #[method(name = "txpool_content")]
        async fn content(&self) -> RpcResult<TxpoolContent>;
        /// One sender's pooled transactions, by nonce.
        #[method(name = "txpool_contentFrom")]
        async fn content_from(&self, address: Address) -> RpcResult<TxpoolContentFrom>;
        /// Every pooled transaction as geth's one-line summary, by sender and nonce.
        #[method(name = "txpool_inspect")]
        async fn inspect(&self) -> RpcResult<TxpoolInspect>;
    }
}
