//! Result types of l2node-specific methods (the standard ones come from alloy-rpc-types-eth).

use alloy_primitives::{U256, U64};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;

pub use alloy_eips::eip7910::EthConfig;
pub use alloy_rpc_types_eth::simulate::{SimulatePayload, SimulatedBlock};
pub use alloy_rpc_types_eth::{
    state::StateOverride, AccessListResult, Block, BlockId, BlockNumberOrTag, BlockOverrides,
    EIP1186AccountProofResponse, FeeHistory, Filter, FilterChanges, Index, Log, Transaction,
    TransactionReceipt, TransactionRequest,
};
pub use alloy_rpc_types_trace::otterscan::{
    BlockDetails, ContractCreator, InternalOperation, OtsBlockTransactions, TraceEntry,
    TransactionsWithReceipts,
};
pub use alloy_rpc_types_trace::{
    geth::{GethDebugTracingCallOptions, GethDebugTracingOptions, GethTrace, TraceResult},
    parity::{LocalizedTransactionTrace, TraceResults, TraceResultsWithTransactionHash, TraceType},
};
pub use alloy_serde::storage::JsonStorageKey;

/// `txpool_status`: counts of executable and future transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TxpoolStatus {
    /// Transactions ready for the next block.
    pub pending: U64,
    /// Transactions waiting for a nonce gap to close.
    pub queued: U64,
}

/// `txpool_content`: sender (EIP-55 checksummed, as geth's `Address.Hex()`) -> nonce (decimal
/// string, as geth) -> transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TxpoolContent {
    /// Executable transactions.
    pub pending: BTreeMap<String, BTreeMap<String, RpcTransaction>>,
    /// Future transactions.
    pub queued: BTreeMap<String, BTreeMap<String, RpcTransaction>>,
}

/// A transaction as geth answers it: like [`Transaction`], but a transaction that is not in a
/// block yet carries `"blockTimestamp": null` (alloy leaves the key out).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct RpcTransaction(pub Transaction);

impl Serialize for RpcTransaction {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.block_timestamp.is_some() {
            return self.0.serialize(s);
        }
        let mut v = serde_json::to_value(&self.0).map_err(serde::ser::Error::custom)?;
        if let Some(m) = v.as_object_mut() {
            m.insert("blockTimestamp".into(), serde_json::Value::Null);
        }
        v.serialize(s)
    }
}

/// eth_getBlockByNumber's answer: a block, or geth's `pending` block, whose `hash`, `nonce` and
/// `miner` are null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BlockOrPending {
    /// A sealed block.
    Block(Box<Block>),
    /// The pending block with geth's null fields.
    Pending(serde_json::Value),
    /// A sealed block as JSON the server prepared once (the head block, which many clients
    /// poll). Server side only: a client reads the same JSON as [`BlockOrPending::Block`].
    #[serde(skip_deserializing)]
    Prepared(PreparedJson),
}

/// JSON prepared once and shared by every answer that holds it; serialized as is.
#[derive(Debug, Clone)]
pub struct PreparedJson(pub std::sync::Arc<serde_json::value::RawValue>);

impl PreparedJson {
    /// `value` as JSON.
    pub fn of<T: Serialize>(value: &T) -> serde_json::Result<Self> {
        Ok(Self(serde_json::value::to_raw_value(value)?.into()))
    }
}

impl PartialEq for PreparedJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Serialize for PreparedJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// `txpool_contentFrom`: nonce (decimal string, as geth) -> transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TxpoolContentFrom {
    /// Executable transactions.
    pub pending: BTreeMap<String, RpcTransaction>,
    /// Future transactions.
    pub queued: BTreeMap<String, RpcTransaction>,
}

/// `txpool_inspect`: sender (EIP-55) -> nonce (decimal) -> geth's summary
/// `"<to>: <value> wei + <gas> gas × <fee cap> wei"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TxpoolInspect {
    /// Executable transactions.
    pub pending: BTreeMap<String, BTreeMap<String, String>>,
    /// Future transactions.
    pub queued: BTreeMap<String, BTreeMap<String, String>>,
}

/// Most slots one `eth_getStorageValues` reads (geth's, reth's and Besu's 1024).
pub const MAX_STORAGE_VALUES_SLOTS: usize = 1_024;

/// One entry of `debug_getBadBlocks` (geth's `BadBlockArgs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BadBlock {
    /// The block's hash.
    pub hash: alloy_primitives::B256,
    /// The block as `eth_getBlockByHash(hash, true)` shows it.
    pub block: Block,
    /// Its RLP encoding.
    pub rlp: alloy_primitives::Bytes,
}

/// `eth_capabilities`: one kind of history this node serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryCapability {
    /// The node keeps none of it.
    pub disabled: bool,
    /// The oldest block it is kept for (absent when disabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_block: Option<U64>,
}

/// `eth_capabilities`'s head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilitiesHead {
    /// Its number.
    pub number: U64,
    /// Its hash.
    pub hash: alloy_primitives::B256,
}

/// `eth_capabilities` (execution-apis): the head and what history is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The head block.
    pub head: CapabilitiesHead,
    /// Account and storage state.
    pub state: HistoryCapability,
    /// Transactions by hash.
    pub tx: HistoryCapability,
    /// Logs (eth_getLogs).
    pub logs: HistoryCapability,
    /// Receipts.
    pub receipts: HistoryCapability,
    /// Block bodies and headers.
    pub blocks: HistoryCapability,
    /// Merkle proofs of state (eth_getProof).
    pub stateproofs: HistoryCapability,
}

/// `testing_buildBlockV1`'s payload attributes (engine API `PayloadAttributesV3`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PayloadAttributes {
    /// The block's timestamp.
    pub timestamp: U64,
    /// PREVRANDAO.
    pub prev_randao: alloy_primitives::B256,
    /// The fee recipient.
    pub suggested_fee_recipient: alloy_primitives::Address,
    /// Withdrawals (this network has none: only an empty list is accepted).
    #[serde(default)]
    pub withdrawals: Option<Vec<serde_json::Value>>,
    /// The parent beacon block root (Cancun on).
    #[serde(default)]
    pub parent_beacon_block_root: Option<alloy_primitives::B256>,
}

/// An engine API `ExecutionPayloadV3`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionPayload {
    /// Parent hash.
    pub parent_hash: alloy_primitives::B256,
    /// Fee recipient.
    pub fee_recipient: alloy_primitives::Address,
    /// State root.
    pub state_root: alloy_primitives::B256,
    /// Receipts root.
    pub receipts_root: alloy_primitives::B256,
    /// Logs bloom.
    pub logs_bloom: alloy_primitives::Bloom,
    /// PREVRANDAO.
    pub prev_randao: alloy_primitives::B256,
    /// Number.
    pub block_number: U64,
    /// Gas limit.
    pub gas_limit: U64,
    /// Gas used.
    pub gas_used: U64,
    /// Timestamp.
    pub timestamp: U64,
    /// Extra data.
    pub extra_data: alloy_primitives::Bytes,
    /// Base fee.
    pub base_fee_per_gas: U256,
    /// The block hash.
    pub block_hash: alloy_primitives::B256,
    /// The EIP-2718 transactions.
    pub transactions: Vec<alloy_primitives::Bytes>,
    /// Withdrawals (none here).
    pub withdrawals: Vec<serde_json::Value>,
    /// Blob gas used.
    pub blob_gas_used: U64,
    /// Excess blob gas.
    pub excess_blob_gas: U64,
}

/// Blobs of a built payload (none here: the pool takes no blob transactions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct BlobsBundle {
    /// KZG commitments.
    pub commitments: Vec<alloy_primitives::Bytes>,
    /// KZG proofs.
    pub proofs: Vec<alloy_primitives::Bytes>,
    /// Blobs.
    pub blobs: Vec<alloy_primitives::Bytes>,
}

/// `testing_buildBlockV1`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuiltPayloadV1 {
    /// The payload.
    pub execution_payload: ExecutionPayload,
    /// What the fee recipient earns.
    pub block_value: U256,
    /// Its blobs.
    pub blobs_bundle: BlobsBundle,
    /// Always false (no builder network here).
    pub should_override_builder: bool,
    /// The EIP-7685 requests, each its type byte and data.
    pub execution_requests: Vec<alloy_primitives::Bytes>,
}

/// `eth_fillTransaction` (geth's `SignTransactionResult`): the EIP-2718 encoding with a zero
/// signature and the transaction as an object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignedTransaction {
    /// The encoding `eth_sendRawTransaction` takes.
    pub raw: alloy_primitives::Bytes,
    /// The transaction, its fields filled.
    pub tx: RpcTransaction,
}

/// A count or a time as anvil and geth take it: a JSON number or a hex quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NumberOrHex {
    /// A JSON number.
    Number(u64),
    /// A 0x-prefixed hex quantity.
    Hex(U64),
}

impl NumberOrHex {
    /// The value.
    pub fn get(self) -> u64 {
        match self {
            Self::Number(n) => n,
            Self::Hex(n) => n.to::<u64>(),
        }
    }
}

/// `evm_mine`'s optional argument (anvil's `MineOptions`): a timestamp, or an object with the
/// timestamp of the first block and how many blocks to seal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MineOptions {
    /// `{timestamp, blocks}`, both optional.
    Options {
        /// The first block's timestamp.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<NumberOrHex>,
        /// How many blocks (default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blocks: Option<NumberOrHex>,
    },
    /// The block's timestamp.
    Timestamp(NumberOrHex),
}

/// `l2_estimateGas` / `linea_estimateGas`: build the transaction with `gas = gasLimit`,
/// `maxPriorityFeePerGas = priorityFeePerGas`, `maxFeePerGas = 2 x baseFeePerGas +
/// priorityFeePerGas`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L2GasEstimate {
    /// What eth_estimateGas gives.
    pub gas_limit: U64,
    /// The next block's base fee.
    pub base_fee_per_gas: U256,
    /// 0 on the gasless path; on the premium path at least the premium threshold.
    pub priority_fee_per_gas: U256,
}

/// Whether a sender's next free transaction is free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FeeState {
    /// Quota left, not denied, gasless on: fees are zero.
    Gasless,
    /// Fees apply (quota used up, denied, no Karma, or gasless switched off).
    Premium,
}

/// A tier as `l2_getKarmaStatus` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KarmaTierInfo {
    /// Index in the tier table.
    pub id: U64,
    /// Name.
    pub name: String,
    /// Quota units per epoch.
    pub tx_per_epoch: U64,
}

/// `l2_getKarmaStatus`: everything a client needs to explain a premium and say when the
/// window refreshes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KarmaStatus {
    /// Karma balance (wei of KARMA, 18 decimals).
    pub karma: U256,
    /// The tier the balance buys.
    pub tier: KarmaTierInfo,
    /// Quota units this epoch: `tier.txPerEpoch + bonus`.
    pub quota: U64,
    /// Units a premium transaction added this epoch (one tier's worth, after the free quota was
    /// used up); 0 from a node that does not report it.
    #[serde(default)]
    pub bonus: U64,
    /// Units used, including pending free transactions.
    pub used: U64,
    /// Units left.
    pub remaining: U64,
    /// The epoch.
    pub epoch: U64,
    /// When the epoch ends and the quota refreshes (Unix seconds).
    pub epoch_ends_at: U64,
    /// On the deny list.
    pub denied: bool,
    /// `quotaExceeded`, `rlnViolation` or `operator`.
    pub deny_reason: Option<String>,
    /// When the denial ends (Unix seconds).
    pub denied_until: Option<U64>,
    /// `gasless` or `premium`.
    pub fee_state: FeeState,
}

/// `l2_getTransactionExclusionStatus` / `linea_getTransactionExclusionStatusV1`: why a
/// transaction never landed, in the shape of Linea's transaction-exclusion API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionExclusion {
    /// The transaction.
    pub tx_hash: alloy_primitives::B256,
    /// Its sender.
    pub from: alloy_primitives::Address,
    /// Its nonce.
    pub nonce: U64,
    /// `RPC` (refused by a node's JSON-RPC), `P2P` (refused by a node that received it from a
    /// peer) or `SEQUENCER` (dropped while building a block).
    pub tx_rejection_stage: String,
    /// Why, in the words of the refusal.
    pub reason_message: String,
    /// The head when it was refused, or the block being built (`SEQUENCER`).
    pub block_number: U64,
    /// When, as an ISO 8601 UTC time (`2026-11-24T10:00:00Z`).
    pub timestamp: String,
}

/// One entry of `admin_peers`, in geth's shape (`enode` is the peer's libp2p multiaddr: l2node
/// peers over libp2p, not devp2p).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminPeer {
    /// The peer's address with its id (`/ip4/../tcp/../p2p/<id>`).
    pub enode: String,
    /// libp2p peer id.
    pub id: String,
    /// The peer's agent (`l2node/0.1.0`), empty before identify answered.
    pub name: String,
    /// The protocols the peer announced.
    pub caps: Vec<String>,
    /// The connection.
    pub network: AdminPeerNetwork,
    /// Per-protocol state: `l2node.head` is the peer's head number, when known.
    pub protocols: serde_json::Value,
}

/// The connection of an [`AdminPeer`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdminPeerNetwork {
    /// Our side.
    pub local_address: String,
    /// Their side.
    pub remote_address: String,
    /// Whether they dialled us.
    pub inbound: bool,
    /// Always false: l2node has no trusted-peer list.
    pub trusted: bool,
    /// Whether the peer is one of our `--bootnodes` (kept connected).
    #[serde(rename = "static")]
    pub is_static: bool,
}

/// `admin_nodeInfo`, in geth's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdminNodeInfo {
    /// This node's address other nodes can put in `--bootnodes`; empty without peer-to-peer.
    pub enode: String,
    /// libp2p peer id.
    pub id: String,
    /// Client name and version.
    pub name: String,
    /// Every listen address.
    pub listen_addr: Vec<String>,
    /// Per-protocol state: `l2node.{network, genesis, head, headNumber, syncing}`.
    pub protocols: serde_json::Value,
}

/// `eth_syncing`: `false`, or the progress of a sync, exactly the three fields of the
/// execution-apis `SyncingStatus` (alloy's `SyncStatus` adds `warpChunks*: null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syncing {
    /// Not syncing (`false`).
    No,
    /// Syncing.
    Progress(SyncProgress),
}

/// The progress object of [`Syncing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncProgress {
    /// Head when the sync started.
    pub starting_block: U64,
    /// Head now.
    pub current_block: U64,
    /// The best head peers announced.
    pub highest_block: U64,
}

impl Serialize for Syncing {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::No => s.serialize_bool(false),
            Self::Progress(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Syncing {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Flag(bool),
            Progress(SyncProgress),
        }
        match Wire::deserialize(d)? {
            Wire::Flag(false) => Ok(Self::No),
            Wire::Flag(true) => Err(serde::de::Error::custom(
                "eth_syncing answers false or a progress object, not true",
            )),
            Wire::Progress(p) => Ok(Self::Progress(p)),
        }
    }
}

#[cfg(test)]
mod syncing_tests {
    use super::*;

    #[test]
    fn syncing_is_false_or_exactly_three_quantities() {
        assert_eq!(serde_json::to_string(&Syncing::No).unwrap(), "false");
        let p = Syncing::Progress(SyncProgress {
            starting_block: U64::from(1),
            current_block: U64::from(2),
            highest_block: U64::from(300),
        });
        let json = serde_json::to_value(p).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"startingBlock": "0x1", "currentBlock": "0x2", "highestBlock": "0x12c"})
        );
        assert_eq!(serde_json::from_value::<Syncing>(json).unwrap(), p);
        assert_eq!(
            serde_json::from_str::<Syncing>("false").unwrap(),
            Syncing::No
        );
        assert!(serde_json::from_str::<Syncing>("true").is_err());
    }
}

/// A storage slot as `eth_getStorageAt` takes it, by geth's rule: hex (the `0x` is optional,
/// an odd number of digits is allowed), at most 32 bytes, left-padded. A longer key is refused,
/// not truncated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageSlot(pub alloy_primitives::B256);

impl Serialize for StorageSlot {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for StorageSlot {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let s = String::deserialize(d)?;
        let digits = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .unwrap_or(&s);
        let padded;
        let digits = if digits.len() % 2 == 1 {
            padded = format!("0{digits}");
            &padded
        } else {
            digits
        };
        let bytes = alloy_primitives::hex::decode(digits)
            .map_err(|_| D::Error::custom("hex string invalid"))?;
        if bytes.len() > 32 {
            return Err(D::Error::custom(format!(
                "hex string too long ({} bytes), want at most 32 bytes",
                bytes.len()
            )));
        }
        Ok(Self(alloy_primitives::B256::left_padding_from(&bytes)))
    }
}

#[cfg(test)]
mod slot_tests {
    use super::*;

    #[test]
    fn storage_slots_follow_geths_rule() {
        let slot = |s: &str| serde_json::from_value::<StorageSlot>(serde_json::json!(s));
        let one = alloy_primitives::B256::with_last_byte(1);
        for ok in ["0x1", "0x01", "1", "0X0001", &format!("{one}")] {
            assert_eq!(slot(ok).unwrap().0, one, "{ok}");
        }
        assert_eq!(slot("0x").unwrap().0, alloy_primitives::B256::ZERO);
        let long = format!("0x00{}", "11".repeat(32));
        assert!(slot(&long)
            .unwrap_err()
            .to_string()
            .contains("at most 32 bytes"));
        assert!(slot("0xzz")
            .unwrap_err()
            .to_string()
            .contains("hex string invalid"));
    }
}

/// The leader of a sequencer group as a member last saw it (`conductor_leaderWithID`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupLeader {
    /// The leader's member name (`--sequencer-group-name`).
    pub name: String,
    /// Its term: the etcd revision at which it took the leadership (a later leadership has a
    /// larger term).
    pub term: i64,
}

/// A sequencer group's member (`conductor_members`); each member refreshes its own entry
/// about every second while it is alive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupMember {
    /// Its name.
    pub name: String,
    /// Its head block when it last wrote its entry.
    pub head: u64,
    /// Paused by an operator (`conductor_pause`).
    pub paused: bool,
    /// Whether it leads now.
    #[serde(default)]
    pub leader: bool,
}
