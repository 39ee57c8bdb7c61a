//! Every default of the node, each with the reason for its value.

/// Chain id of `--dev`: "l2n" in ASCII (0x6c326e); no public network uses it.
pub const DEV_CHAIN_ID: u64 = 0x6c326e;
/// The mnemonic anvil and hardhat fund, so existing scripts and wallets work unchanged.
pub const DEV_MNEMONIC: &str = "test test test test test test test test test test test junk";
/// Dev accounts funded at genesis (anvil's default count).
pub const DEV_ACCOUNT_COUNT: u32 = 10;
/// Balance of each dev account in ether (anvil's default).
pub const DEV_ACCOUNT_BALANCE_ETH: u64 = 10_000;
/// Block gas limit of the dev chain: 30M, Ethereum mainnet's long-standing target-era limit.
pub const DEV_GAS_LIMIT: u64 = 30_000_000;
/// The dev sequencer's signing key: a fixed key, public by design (like the dev mnemonic); it
/// seals dev blocks only.
pub const DEV_SEQUENCER_KEY: [u8; 32] = [
    0x5d, 0x1a, 0x7b, 0x2e, 0x93, 0x4c, 0x21, 0x08, 0xfe, 0x6d, 0x4b, 0x90, 0x3a, 0x17, 0xc2, 0x55,
    0x8e, 0x01, 0x3f, 0xa4, 0x62, 0xd9, 0x7c, 0x10, 0xb3, 0x48, 0xe5, 0x2a, 0x96, 0x0f, 0x71, 0x3c,
];
/// The dev chain's `Karma` contract: "KARMA" in ASCII, then 1, easy to recognise in a trace.
pub const DEV_KARMA_ADDRESS: alloy_primitives::Address =
    alloy_primitives::address!("4b41524d41000000000000000000000000000001");
/// The dev chain's `KarmaTiers` contract ("KARMA" then 2).
pub const DEV_KARMA_TIERS_ADDRESS: alloy_primitives::Address =
    alloy_primitives::address!("4b41524d41000000000000000000000000000002");
/// Threads for heavy RPC work (tracing, `eth_simulateV1`, wide log searches, large proofs,
/// Otterscan searches): all cores but one, at least one. Light requests (calls, estimates,
/// state reads) keep their own pool, so a flood of heavy requests can occupy at most these
/// threads, which also run at a lower OS priority ([`RPC_HEAVY_NICE`]): the core left over
/// and the scheduler's preference keep light requests' latency near idle.
pub fn rpc_heavy_concurrency() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

/// The nice value of the heavy threads: the kernel gives a thread at +10 about a tenth of the
/// CPU of one at 0 when both want it, so light requests run first and heavy ones use what is
/// left.
pub const RPC_HEAVY_NICE: i32 = 10;

/// `eth_getLogs` over more blocks than this is heavy work; narrower searches (a few index
/// lookups) are light.
pub const RPC_LIGHT_LOGS_RANGE: u64 = 1_000;

/// `eth_getProof` with more storage keys than this is heavy work.
pub const RPC_LIGHT_PROOF_KEYS: usize = 32;

/// Default `--sequencer-group-lease`, seconds: a group's leader that stops renewing its lease
/// keeps the leadership this long, so blocks pause about this long plus a block period when
/// its machine is lost. 2 s is etcd's smallest lease with its default timings (1.5 s) rounded
/// up; a group on an etcd with shorter election timings can go lower.
pub const DEFAULT_SEQUENCER_GROUP_LEASE_SECS: u64 = 2;

/// Default block period of a sequencer, seconds (the network's 2 s cadence).
pub const DEFAULT_BLOCK_TIME_SECS: u64 = 2;
/// Longest `--block-time`: a day. Longer periods make no sense for a sequencer, and a period
/// near `u64::MAX` seconds overflows the miner's timer.
pub const MAX_BLOCK_TIME_SECS: u64 = 86_400;
/// Longest `--sequencer-group-lease`: an hour. A leader's lease is how long blocks pause when
/// its machine is lost, so seconds are what a group wants; huge values overflow the renewal
/// timer.
pub const MAX_SEQUENCER_GROUP_LEASE_SECS: u64 = 3_600;
/// Concurrent EVM jobs for RPC (call, estimate) when the core count is unknown.
pub const RPC_EVM_CONCURRENCY: usize = 2;

/// EVM jobs allowed per core.
pub const RPC_EVM_JOBS_PER_CORE: usize = 4;

/// Concurrent EVM jobs for RPC: [`RPC_EVM_JOBS_PER_CORE`] per core. Exactly one per core left
/// cores idle under an eth_call load: every job then waited for a permit round trip (blocking
/// thread -> async task -> next waiter -> blocking thread), and the wake-ups cost more than a
/// small call. A few queued jobs per core keep the blocking threads busy; the bound still keeps
/// a flood of calls from starving block production of CPU for long.
pub fn rpc_evm_concurrency() -> usize {
    std::thread::available_parallelism()
        .map_or(RPC_EVM_CONCURRENCY, |n| n.get().max(RPC_EVM_CONCURRENCY))
        * RPC_EVM_JOBS_PER_CORE
}
/// How long a built `pending` block is served again while neither the head nor the pool's
/// counts change: its timestamp is "now", so it is rebuilt at least this often; a flood of
/// `pending` reads then costs one block build per second, not one per request.
pub const PENDING_BLOCK_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(1);
/// Most storage keys one eth_getProof proves: each key walks the storage trie from the root,
/// and 1,024 covers any contract's real needs while bounding the work of one request.
pub const MAX_PROOF_KEYS: usize = 1_024;
/// Wall-clock limit of one log search (eth_getLogs, eth_getFilterLogs, a filter poll): the same
/// 5 s as an EVM call; past it the caller is told to ask for a smaller range.
pub const LOG_SEARCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// Largest eth_getLogs block range (`--rpc-max-logs-range`), Besu's default.
pub const MAX_LOGS_RANGE: u64 = 5_000;
/// Most logs in one eth_getLogs answer; past it the caller is told a smaller range to retry.
pub const MAX_LOGS_PER_RESPONSE: usize = 20_000;
/// Filters not polled for this long are removed: 5 minutes, geth's filter timeout.
pub const FILTER_TIMEOUT_SECS: u64 = 300;
/// Most polling filters installed at once (all clients together): a filter is small, but
/// every pending-transaction filter holds a channel receiver, and without a cap a client could
/// install filters until memory runs out.
pub const MAX_FILTERS: usize = 10_000;
/// Buffer of block notifications per subscriber; a subscriber this far behind is dropped.
pub const SUBSCRIPTION_BUFFER: usize = 1_024;
/// Blocks the gas price oracle samples (geth's `--gpo.blocks`).
pub const GPO_BLOCKS: u64 = 20;
/// Percentile of sampled tips the oracle suggests (geth's `--gpo.percentile`).
pub const GPO_PERCENTILE: usize = 60;
/// Most blocks one eth_feeHistory covers (geth's limit).
pub const FEE_HISTORY_MAX_BLOCKS: u64 = 1_024;
/// Most reward percentiles one eth_feeHistory accepts (geth's limit).
pub const FEE_HISTORY_MAX_PERCENTILES: usize = 100;
use std::time::Duration;

/// Gas limit of a genesis block whose `gasLimit` is 0: geth's `params.GenesisGasLimit`, so a
/// genesis file yields the same genesis hash in l2node as in geth.
pub const DEFAULT_GENESIS_GAS_LIMIT: u64 = 4_712_388;

/// Wall-clock limit of one `eth_call` / `eth_estimateGas` / `eth_createAccessList` run: geth's
/// `--rpc.evmtimeout` default (5 s); an endless loop in a view call must not pin a core.
pub const EVM_CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Wall-clock budget of a call run on the async worker that received it (eth_call,
/// eth_estimateGas, eth_createAccessList, l2_estimateGas). Most calls take tens of
/// microseconds, a hand-off to a blocking thread and back costs more than that; a call past
/// 1 ms loses at most that much when it moves to a blocking thread, and a light request queued
/// behind it on the same worker waits at most that long.
pub const EVM_INLINE_BUDGET: Duration = Duration::from_millis(1);

/// Interpreter steps between two clock reads of the EVM deadline: reading the clock is ~20 ns,
/// an opcode ~10-100 ns, so checking every 1024 steps costs nothing and overshoots by < 1 ms.
pub const EVM_DEADLINE_CHECK_STEPS: u64 = 1024;

/// Gas cap of `eth_call` / `eth_estimateGas` when the caller gives none: geth's `--rpc.gascap`
/// default (50M), high enough for any block-sized call.
pub const DEFAULT_RPC_GAS_CAP: u64 = 50_000_000;

/// eth_call and eth_estimateGas answers kept for the head block (`--rpc-call-cache-size`): room
/// for the distinct calls that pages and wallets poll between two blocks, within the cache's
/// 8 MiB.
pub const DEFAULT_RPC_CALL_CACHE_SIZE: usize = 4096;

/// eth_estimateGas stops its binary search once `(hi - lo) / hi` falls below this ratio:
/// geth's `estimateGasErrorRatio` (1.5%), so estimates match geth's within rounding.
pub const ESTIMATE_GAS_ERROR_RATIO: f64 = 0.015;

/// Rounds of eth_createAccessList before giving up on a stable list: the list changes the gas
/// (warm vs cold), which can change the path taken; geth loops until stable, we cap it.
pub const ACCESS_LIST_MAX_ROUNDS: usize = 10;
/// Transaction pool capacity (pending + queued). A 30M-gas block holds ~1,400 transfers, so a
/// burst of 10,000+ transfers spans several 2 s blocks and must wait in the pool rather than be
/// refused (geth's 6,144 slots would reject part of such a burst). 65,536 pooled transactions
/// stay around 20 MB for typical sizes; when full, the cheapest is evicted.
pub const POOL_MAX_TXS: usize = 65_536;
/// Minimum fee bump (percent of both max fee and tip) for a same-nonce replacement: geth's
/// `PriceBump` default, so wallets' "speed up" buttons behave as on Ethereum.
pub const POOL_PRICE_BUMP_PERCENT: u64 = 10;
/// Largest accepted transaction encoding: geth's `txMaxSize` (4 × 32 KiB slots), which bounds
/// the cost of relaying and journaling a single transaction.
pub const POOL_MAX_TX_SIZE: usize = 128 * 1024;
/// Buffered new-pending-tx notifications per subscriber; a subscriber lagging further behind
/// misses hashes (as geth's newPendingTransactions may), it never blocks the pool.
pub const POOL_EVENT_CHANNEL_CAPACITY: usize = 4096;
/// Journal records below which the journal is never compacted: rewriting a small file on every
/// block would be pure churn; above it the journal is rewritten once dead records exceed live ones.
pub const POOL_JOURNAL_COMPACT_MIN_RECORDS: usize = 1024;

// Pool limits against spam (transactions can cost nothing here, so spam is free): geth's
// legacypool model. `POOL_MAX_TXS` above is the global pending limit (geth's GlobalSlots) and
// the capacity of the whole pool; queued transactions are evicted first when it is full.

/// Pending transactions guaranteed to each sender (geth's `AccountSlots`): when the pool is full,
/// pending transactions are only evicted from senders holding more than this, largest first.
pub const POOL_ACCOUNT_SLOTS: usize = 16;
/// Queued (non-executable, behind a nonce gap) transactions per sender (geth's `AccountQueue`):
/// a sender can never fill the pool with transactions that cannot execute.
pub const POOL_ACCOUNT_QUEUE: usize = 64;
/// Queued transactions in the whole pool (geth's `GlobalQueue`): bounds the junk all senders
/// together can park behind nonce gaps.
pub const POOL_GLOBAL_QUEUE: usize = 1024;
/// Queued transactions of a sender without activity (a transaction becoming pending, or a block
/// advancing its nonce) for this long are dropped: 3 hours, geth's `Lifetime`.
pub const POOL_QUEUE_LIFETIME: std::time::Duration = std::time::Duration::from_secs(3 * 60 * 60);
/// Total bytes of pooled transaction encodings: 64 MiB (512 maximum-size transactions, ~500,000
/// transfers), so the pool's memory and its journal stay bounded whatever the transactions'
/// sizes; geth bounds the same by counting 32 KiB slots.
pub const POOL_MAX_BYTES: usize = 64 * 1024 * 1024;
// ---------------------------------------------------------------------------------------------
// JSON-RPC servers (rpc/server.rs)
// ---------------------------------------------------------------------------------------------

/// HTTP JSON-RPC port: the Ethereum convention (geth, Besu, anvil) that wallets and tools assume.
pub const DEFAULT_RPC_HTTP_PORT: u16 = 8545;

/// WebSocket JSON-RPC port: geth's and Besu's default, one above the HTTP port.
pub const DEFAULT_RPC_WS_PORT: u16 = 8546;

/// HTTP listen address: loopback only, so a fresh node is not an open RPC endpoint on the network.
pub const DEFAULT_RPC_HTTP_ADDR: std::net::SocketAddr = std::net::SocketAddr::V4(
    std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, DEFAULT_RPC_HTTP_PORT),
);

/// WebSocket listen address: loopback only, for the same reason as [`DEFAULT_RPC_HTTP_ADDR`].
pub const DEFAULT_RPC_WS_ADDR: std::net::SocketAddr = std::net::SocketAddr::V4(
    std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, DEFAULT_RPC_WS_PORT),
);

/// Most requests in one JSON-RPC batch (`--rpc-http-max-batch-size`): the network's value, Besu's
/// default. 1, 0 and negative values mean unlimited (the network's node interface spells
/// unlimited 1, Besu spells it -1).
pub const DEFAULT_RPC_MAX_BATCH_SIZE: i64 = 1024;

/// Largest request body in bytes (`--rpc-http-max-request-content-length`): 5 MiB, the interface
/// document's value; comfortably above a full block of raw transactions in one batch.
pub const DEFAULT_RPC_MAX_REQUEST_BODY: u32 = 5 * 1024 * 1024;

/// Largest response body in bytes: 25 MiB, enough for a full block with transactions or a wide
/// `eth_getLogs`, while bounding the memory one request can pin.
pub const DEFAULT_RPC_MAX_RESPONSE_BODY: u32 = 25 * 1024 * 1024;

/// Most open TCP connections per server (`--rpc-max-connections`, HTTP and WS each): 80, Besu's
/// `--rpc-http-max-active-connections` and `--rpc-ws-max-active-connections`. A connection holds
/// its slot from accept to close (idle keep-alive time included), a WebSocket with up to
/// [`DEFAULT_RPC_MAX_SUBSCRIPTIONS_PER_CONNECTION`] subscriptions, so this bounds the node's
/// sockets, tasks and subscription memory; connections over it get HTTP 503 and are closed at
/// once. Far more than a locally run node's clients need (wrk benchmarks use 32), and the
/// timeouts below keep idle or slow clients from holding slots.
pub const DEFAULT_RPC_MAX_CONNECTIONS: u32 = 80;

/// Longest a client may take to send a request's headers, counted from its first byte (or, on a
/// new connection, from accept: the first request must arrive this soon). 10 s is ample for any
/// real client, even over a slow link, and bounds how long a slowloris client (a header
/// trickled byte by byte, or nothing at all) holds one of the [`DEFAULT_RPC_MAX_CONNECTIONS`].
pub const RPC_HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Longest an HTTP keep-alive connection may sit idle between requests: 120 s, geth's
/// `IdleTimeout`. Longer than the idle timeouts of client pools (Go's `net/http`, behind geth's
/// `ethclient`, keeps idle connections 90 s; Node's undici 4 s), so a client rarely sends a
/// request on a connection the server is just closing; and short enough that an abandoned
/// socket gives its slot back.
pub const RPC_HTTP_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Longest reading one HTTP request body may take: 10 s, enough for a full
/// [`DEFAULT_RPC_MAX_REQUEST_BODY`] (5 MiB) at 4 Mbit/s; a client trickling its body gets HTTP
/// 408 with a JSON-RPC error, and the connection is closed.
pub const RPC_BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The WebSocket server pings each connection this often: 30 s, geth's ping interval, well
/// under the 60 s idle timeouts of common proxies and NATs.
pub const RPC_WS_PING_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);

/// A WebSocket that has sent nothing, not even a pong, for this long is closed: 60 s, two ping
/// intervals, so one late pong is forgiven. It is checked at every ping, so a dead peer is
/// dropped 60-90 s after its last frame. Clients that answer pings (every WebSocket library does
/// it by itself) are never closed for being quiet: a `newHeads` subscription may legitimately
/// wait minutes for a block on a chain without traffic.
pub const RPC_WS_INACTIVITY_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// How long a connection refused for being over [`DEFAULT_RPC_MAX_CONNECTIONS`] is kept to
/// deliver its HTTP 503: the server sends the answer, then reads and discards what the client
/// sends for up to 1 s, so that closing does not reset the connection before the client has
/// read the answer. At most `--rpc-max-connections` refused connections linger at once; the
/// others are closed right after the answer is written.
pub const RPC_REFUSED_LINGER: std::time::Duration = std::time::Duration::from_secs(1);

/// Pause of an accept loop after an accept error that is not about one connection (e.g. "too
/// many open files"): 100 ms lets sockets close instead of spinning on the error.
pub const RPC_ACCEPT_ERROR_BACKOFF: std::time::Duration = std::time::Duration::from_millis(100);

/// How long a new connection at the cap waits for the slot of the idle connection it evicted:
/// closing takes one pass of that connection's task, far below this; past it the new
/// connection is refused rather than queued.
pub const RPC_EVICTION_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// Most live subscriptions on one WebSocket connection: 1024, jsonrpsee's default; a dapp needs a
/// handful, and the cap stops one client from exhausting the node.
pub const DEFAULT_RPC_MAX_SUBSCRIPTIONS_PER_CONNECTION: u32 = 1024;

/// Largest WebSocket message in bytes: the same 5 MiB as an HTTP request body, so anything that
/// can be POSTed can also be sent over the WebSocket.
pub const DEFAULT_RPC_WS_MAX_MESSAGE: u32 = DEFAULT_RPC_MAX_REQUEST_BODY;

/// How far past `--rpc-ws-max-frame-size` a WebSocket message is still read whole: up to 1 MiB
/// more, it is answered `-32005` and the connection stays open. A larger one is not read
/// (tungstenite stops at the frame header, or once the fragments pass it): it is answered
/// `-32005` too, then the connection is closed (1009), since the rest of it cannot be skipped.
/// This bounds what one connection buffers to the limit plus 1 MiB.
pub const RPC_WS_OVERSIZE_SLACK: usize = 1024 * 1024;

/// Answers and notifications queued for one WebSocket connection before senders wait: 1024,
/// jsonrpsee's default message buffer.
pub const RPC_WS_MESSAGE_BUFFER: usize = 1024;

/// How long a closing WebSocket connection may take to send what is queued and its close frame;
/// then it is dropped, so a client that stopped reading cannot keep its connection slot.
pub const RPC_WS_CLOSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// Hosts accepted in the `Host` header (`--host-allowlist`, Besu's default): loopback names only,
/// which stops DNS-rebinding attacks from web pages; `"*"` accepts any host.
pub const DEFAULT_RPC_HOST_ALLOWLIST: &[&str] = &["localhost", "127.0.0.1"];

/// Browser origins allowed by CORS (`--rpc-http-cors-origins`, Besu's default): none, so web pages
/// cannot call the node unless the operator opts in; `"*"` allows every origin.
pub const DEFAULT_RPC_CORS_ORIGINS: &[&str] = &[];

/// Namespaces served over HTTP and WebSocket unless `--rpc-http-api` / `--rpc-ws-api` say
/// otherwise: Besu's default (ETH, NET, WEB3) plus L2, since `l2_estimateGas` is what every
/// client of this network calls. `txpool`, which shows every pending transaction, and the
/// operator namespace `l2admin` stay off until the operator turns them on.
pub const DEFAULT_RPC_APIS: &[&str] = &["eth", "net", "web3", "l2"];

/// Browser origins allowed to open a WebSocket (`--rpc-ws-origins`, geth's `--ws.origins`
/// default): pages served from this machine only (any scheme and port), so a web page the
/// operator visits cannot read the pool, subscribe or send through the node. Clients that send
/// no `Origin` (every non-browser client) are not affected; `"*"` allows every origin.
pub const DEFAULT_RPC_WS_ORIGINS: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// Largest blob transaction (network form: the transaction with its blobs, commitments and
/// proofs) the pool takes: geth's blob pool `txMaxSize`, room for the 6 blobs EIP-7594 allows
/// per transaction with their cell proofs.
pub const BLOB_TX_MAX_SIZE: usize = 1024 * 1024;

/// Deepest reorganisation import follows (blocks taken back from the head): a competing chain
/// that forks deeper is kept but never followed, so no peer can make the node unwind a long
/// stretch of history. A Clique L2 with one sequencer reorganises only if that sequencer
/// equivocates, by a block or two; this leaves ample room.
pub const MAX_REORG_DEPTH: u64 = 128;

/// Most competing blocks kept in memory (the lowest go first): room for a few competing
/// chains up to [`MAX_REORG_DEPTH`] long, bounded whatever peers send.
pub const MAX_SIDE_BLOCKS: usize = 512;

/// Most refused blocks kept in memory for `debug_getBadBlocks` (geth's `badBlockToKeep`):
/// enough to see what a misbehaving peer sent, bounded whatever it sends.
pub const BAD_BLOCKS_KEPT: usize = 10;

/// How long `eth_sendRawTransactionSync` (EIP-7966) waits for the receipt when the caller
/// gives no timeout: geth's `TxSyncDefaultTimeout`.
pub const TX_SYNC_DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// The longest a caller may make `eth_sendRawTransactionSync` wait (longer asks are lowered
/// to it): geth's `TxSyncMaxTimeout`, so a request cannot hold a connection for long.
pub const TX_SYNC_MAX_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The latest time the dev clock may be moved to (`evm_increaseTime`,
/// `evm_setNextBlockTimestamp`): the last second of the year 9999, so every later block
/// timestamp (each a second after its parent) stays far from overflowing and every tool can
/// still print it as a date.
pub const MAX_DEV_TIMESTAMP: u64 = 253_402_300_799;

/// Most blocks one `evm_mine` seals: each is a real block every follower imports, so a
/// typo cannot start a million of them.
pub const DEV_MINE_MAX_BLOCKS: u64 = 10_000;

/// `evm_mine` requests waiting for the miner; more wait for room (each is one block, sealed
/// in a few milliseconds).
pub const MINE_REQUESTS_QUEUED: usize = 64;

/// EIP-7934 (Osaka): the largest RLP-encoded block, 10 MiB less a 2 MiB margin for the
/// consensus layer's wrapping (geth's `params.MaxBlockSize`).
pub const MAX_RLP_BLOCK_SIZE: usize = 8_388_608;

/// Room the block builder leaves under [`MAX_RLP_BLOCK_SIZE`] for the header, the list
/// prefixes and the withdrawals: it counts only the transactions' encodings (geth's miner keeps
/// a 1 MB buffer the same way).
pub const BLOCK_SIZE_HEADROOM: usize = 1_000_000;

/// Smallest gas limit an imported block may have: geth's `params.MinGasLimit` (5,000), the
/// Yellow Paper's floor; a block below it could not hold even a transfer.
pub const MIN_BLOCK_GAS_LIMIT: u64 = 5_000;

/// Largest gas limit an imported block may have: geth's `params.MaxGasLimit` (2^63 - 1), so
/// gas arithmetic done in signed 64-bit integers by other clients cannot overflow.
pub const MAX_BLOCK_GAS_LIMIT: u64 = i64::MAX as u64;

/// Most differences listed when the configured genesis differs from the one stored with the
/// chain: enough to see what changed, short enough for one error line when a whole alloc differs.
pub const MAX_GENESIS_DIFFERENCES_REPORTED: usize = 5;

/// Karma epoch (quota window) length: one UTC day (the network's Karma rules; README, "Karma").
pub const KARMA_DEFAULT_EPOCH_LENGTH: u64 = 86_400;
/// Gas per quota unit: a plain transfer to a mid-size contract call costs one unit.
pub const KARMA_DEFAULT_QUOTA_UNIT_GAS: u64 = 100_000;
/// Effective gas price from which a transaction is premium: 12 gwei (the network's Karma rules).
pub const KARMA_DEFAULT_PREMIUM_THRESHOLD_WEI: u64 = 12_000_000_000;
/// Default inputs of the premium fee formula (`fees::pricing`), Linea-like magnitudes: an
/// L2 gas price of 0.1 gwei, an L1/L2 price ratio of 15, 1.2M L1 gas to verify a batch of
/// 90,000 compressed bytes, a fixed 0.03 gwei per gas and a 20% margin. With them a plain
/// transfer's standard fee stays below the premium threshold, so premium costs the threshold.
pub const KARMA_DEFAULT_FIXED_COST_KWEI: u32 = 30_000;
/// See [`KARMA_DEFAULT_FIXED_COST_KWEI`].
pub const KARMA_DEFAULT_L2_GAS_PRICE_KWEI: u32 = 100_000;
/// See [`KARMA_DEFAULT_FIXED_COST_KWEI`].
pub const KARMA_DEFAULT_GAS_PRICE_RATIO: u64 = 15;
/// See [`KARMA_DEFAULT_FIXED_COST_KWEI`].
pub const KARMA_DEFAULT_VERIFICATION_GAS_COST: u64 = 1_200_000;
/// See [`KARMA_DEFAULT_FIXED_COST_KWEI`].
pub const KARMA_DEFAULT_VERIFICATION_CAPACITY: u64 = 90_000;
/// See [`KARMA_DEFAULT_FIXED_COST_KWEI`].
pub const KARMA_DEFAULT_MARGIN_PERCENT: u64 = 120;
/// Senders whose Karma status for the next block is kept per head (`Karma::status_next`):
/// about 200 bytes each, so at most about 1 MiB, room for every sender a busy block and the
/// wallets estimating between two blocks ask about; past it statuses are read, not kept.
pub const KARMA_STATUS_CACHE_SIZE: usize = 4096;
/// How often the kill-switch file is looked at.
pub const KARMA_KILL_SWITCH_POLL: std::time::Duration = std::time::Duration::from_secs(1);
/// Gas limit of the sequencer's `Karma.slash` transaction: the call writes two balances and
/// emits two events (about 40k gas); 100k leaves room for a cold start of every slot.
pub const KARMA_SLASH_GAS_LIMIT: u64 = 100_000;
/// How often the metric gauges (head, head age, pool sizes) are refreshed: Prometheus scrapes
/// every 15 s by default, and a head age that is at most a second stale is exact enough.
pub const METRICS_REFRESH: std::time::Duration = std::time::Duration::from_secs(1);
/// Besu's metrics port.
pub const DEFAULT_METRICS_PORT: u16 = 9545;

/// The libp2p port, the one geth and Besu use for devp2p (a node runs one or the other).
pub const DEFAULT_P2P_PORT: u16 = 30303;
/// Default `--max-peers`: a follower needs one sequencer, a sequencer serves a handful of
/// followers; 25 is geth's light-server default and keeps per-peer gossip cheap.
pub const DEFAULT_MAX_PEERS: u32 = 25;
/// Most blocks in one sync response: an empty block is ~600 bytes, so 512 of them are ~300 KB,
/// large enough that a round trip on loopback costs well under a millisecond per 100 blocks.
pub const SYNC_MAX_BLOCKS_PER_RESPONSE: u64 = 512;
/// Most prepared blocks (decoded, senders recovered, transactions root computed) that a synced
/// range's preparing thread keeps waiting for the import (`sync::PreparedRange`; a range queued
/// behind the one being imported fills its own). Recovering a block takes about as long as
/// executing it, so with two the recovery stopped whenever the executing thread paused for a trie
/// write-out (about a third of a second every 32 blocks at a million accounts, as the buffer was
/// then) and the executing thread then waited for it: in the snapshot bench's full sync, 63.1-65.6
/// s with eight against 63.9-72.7 s with two (three alternating runs each). With 32, more than the
/// 26 blocks of 1,300 transfers a response of [`SYNC_MAX_RESPONSE_BYTES`] holds, a queued range is
/// prepared whole while the one before is imported, so recovery also goes on through the periodic
/// waits for the disk ([`SYNC_DURABLE_INTERVAL`]), which stopped it after eight: 45.9-50.6 s
/// (median 48.1 s) against 50.4-52.4 s (fifteen runs and eight). A prepared range of transfers
/// holds about three times its 4 MiB of RLP (decoded transactions and their senders), and at most
/// [`crate::sync::RangePlanner::MAX_QUEUED`] ranges are prepared at a time.
pub const SYNC_RECOVERY_AHEAD: usize = 32;
/// Longest a follower syncing in ranges goes without waiting for the disk
/// ([`crate::sync::SyncDurability`]): what a crash can cost it in blocks to fetch again. Ten
/// seconds is a few ranges at full speed, so the waits are a small part of a sync.
pub const SYNC_DURABLE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(10);
/// How long the importer waits for more work before it waits for the disk for the synced
/// blocks not yet on it: longer than a peer takes to answer the next range while one is
/// imported, so that a sync from a peer slower than the import does not wait after every
/// range, and short enough that a caught-up follower's blocks are soon on disk.
pub const SYNC_IDLE_BEFORE_DURABLE: std::time::Duration = std::time::Duration::from_secs(1);
/// Most headers in one sync response: a header is about 600 bytes, so 1,024 (geth's limit for
/// a devp2p header request) stay well under [`SYNC_MAX_RESPONSE_BYTES`].
pub const SYNC_MAX_HEADERS_PER_RESPONSE: u64 = 1024;
/// The nice value of a synced range's preparing thread and its recovery threads. Recovering a
/// block's senders takes about as much CPU as executing and storing it, and on two cores the
/// executing thread, on which the whole range waits, shared them with two recovering ones: in
/// the snapshot bench's full sync (1M accounts) it waited for a core 11.6% of the time at 0 and
/// 7.7% at +5; with the rest of its work faster since, 16% at +5 (8.2-8.4 s of a 50.5 s sync,
/// its `schedstat`). At +10 it waited 5.1-5.5 s and that sync took 47.5-49.1 s against
/// 50.2-50.8 s, but the network bench's sync of 100 blocks of 100 transfers, where recovery is
/// the slower part, lost 6% (18,498-20,386 tx/s against 19,392-22,173, four alternating pairs),
/// so +5 stays. Helpers at +19 beside a preparing thread at 0 made the executing thread wait
/// longer (9.3-9.8 s). At +5 (a third of the weight of a thread at 0) recovery still gets every
/// idle cycle, and enough of a busy core to keep a follower syncing while its RPC threads are
/// busy.
pub const SYNC_RECOVERY_NICE: i32 = 5;
/// Most bytes in one sync response (the last block may cross it; at least one block is always
/// sent). Below the cbor codec's 10 MiB response limit.
pub const SYNC_MAX_RESPONSE_BYTES: usize = 4 << 20;
/// Largest gossip message (a block or a transaction): a full 30M-gas block of calldata is
/// under 2 MiB; gossipsub's default of 64 KiB would drop ordinary blocks.
pub const GOSSIP_MAX_MESSAGE_BYTES: usize = 8 << 20;
/// How long a peer that sent an invalid block stays banned.
pub const P2P_BAN_DURATION: std::time::Duration = std::time::Duration::from_secs(600);
/// How often a disconnected bootnode is dialled again, so a follower finds its sequencer again
/// within seconds after a restart.
pub const P2P_REDIAL_INTERVAL: std::time::Duration = std::time::Duration::from_secs(2);
/// Snapshots are offered at multiples of this many blocks, so that peers in step offer the same
/// block and a joining follower fetches chunks from all of them: well within the default proof
/// window (128), whose tries a snapshot is read from.
pub const SNAPSHOT_INTERVAL: u64 = 64;
/// How long a served snapshot's index is kept without a request: it pins a read snapshot of the
/// database (whose newer pages cannot be reused meanwhile), so not for long.
pub const SNAPSHOT_INDEX_IDLE: std::time::Duration = std::time::Duration::from_secs(30);
/// About the most bytes of one page of a snapshot chunk (a chunk is sent in pages: one
/// subtrie of a large state, or one contract with much storage, can exceed the 10 MiB response
/// limit of the sync protocol; a large account continues on the next page).
pub const SNAPSHOT_PAGE_BYTES: usize = 2 << 20;
/// Headers before a snapshot's block that a joining follower fetches with it: the BLOCKHASH
/// opcode reads the 256 most recent.
pub const SNAPSHOT_HEADERS: u64 = 256;
/// Most bytes of one snapshot chunk a joining follower takes from a peer (a peer that sends
/// more is refused): 1/256 of a state far larger than any this node is built for.
pub const SNAPSHOT_MAX_CHUNK_BYTES: usize = 1 << 30;
/// How long a joining follower waits, after its first peer answers, for the rest of its
/// bootnodes before it asks for a snapshot: peers answer a few milliseconds to seconds apart,
/// and a join asked of the first alone would take every chunk from it (no spread, no second
/// opinion). Geth's downloader waits for its minimum of peers in the same way.
pub const SNAPSHOT_PEERS_SETTLE: std::time::Duration = std::time::Duration::from_secs(10);
/// Chunk requests a joining follower keeps in flight.
pub const SNAPSHOT_CHUNKS_IN_FLIGHT: usize = 8;
/// How long a sync request may take before the peer is considered gone for that range.
pub const SYNC_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);
/// A follower counts as syncing (not merely following gossip) once the best peer is more than
/// this many blocks ahead: one block behind is the normal state between a seal and its gossip.
pub const SYNC_DISTANCE: u64 = 1;
/// How long stopping a node waits for its blocking jobs (a block build, an EVM call, a trace)
/// to finish: the longest of them is bounded by the EVM call timeout (5 s).
pub const NODE_STOP_JOBS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a record of a transaction that never landed is kept: 7 days, long enough for a user
/// to come back and ask why, as Linea keeps them.
pub const TX_EXCLUSION_RETENTION_SECS: u64 = 7 * 86_400;

/// Most records of transactions that never landed kept in storage: 100,000 (a few tens of MB at
/// most); past it the oldest go first, so a refusal flood cannot grow the database without end.
pub const TX_EXCLUSION_MAX_RECORDS: u64 = 100_000;

/// Most records buffered in memory between two flushes; a larger flood keeps the newest.
pub const TX_EXCLUSION_BUFFER: usize = 10_000;

/// How often the buffered records are written (one write transaction each time, off the request
/// path).
pub const TX_EXCLUSION_FLUSH: std::time::Duration = std::time::Duration::from_secs(1);
