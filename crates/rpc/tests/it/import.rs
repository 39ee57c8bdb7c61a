//! A geth-produced chain imports with every root matching and is served unchanged.

use std::sync::Arc;

use alloy_consensus::{Block, TxEnvelope};
use alloy_primitives::{keccak256, B256, U256, U64};
use alloy_rlp::Decodable;
use jsonrpsee::rpc_params;
use l2node_node::chain::open_chain;
use l2node_node::chainspec::ChainSpec;
use l2node_node::import::import_file;
use l2node_rpc::RpcServerConfig;

use crate::common::TestNode;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/chains/cancun-20-blocks"
);

fn fixture_blocks() -> Vec<Block<TxEnvelope>> {
    let bytes = std::fs::read(format!("{FIXTURE}/chain.rlp")).unwrap();
    let mut rest = bytes.as_slice();
    let mut blocks = Vec::new();
    while !rest.is_empty() {
        blocks.push(Block::decode(&mut rest).unwrap());
    }
    blocks
}

#[tokio::test]
async fn geth_chain_imports_and_is_served_with_identical_hashes() {
    let spec = Arc::new(ChainSpec::from_genesis_file(format!("{FIXTURE}/genesis.json")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let chain = open_chain(dir.path(), spec.clone()).unwrap();
    let done = import_file(&chain, format!("{FIXTURE}/chain.rlp").as_ref(), |_| {}).unwrap();
    assert_eq!(done.imported, 20);
    drop(chain);

    // Importing again skips what is already there.
    let chain = open_chain(dir.path(), spec.clone()).unwrap();
    assert_eq!(
        import_file(&chain, format!("{FIXTURE}/chain.rlp").as_ref(), |_| {})
            .unwrap()
            .skipped,
        20
    );
    drop(chain);

    let any = "127.0.0.1:0".parse().unwrap();
    let mut cfg = crate::common::dev_config(dir.path(), std::time::Duration::from_secs(2));
    cfg.spec = spec;
    cfg.signer = None;
    cfg.rpc_server = RpcServerConfig {
        http_addr: any,
        ws_addr: any,
        ..Default::default()
    };
    let node = TestNode::start_in(dir, cfg).await;
    assert_eq!(node.block_number().await, 20);

    let mut txs = 0;
    for block in fixture_blocks() {
        let n = block.header.number;
        let served: serde_json::Value = node
            .request(
                "eth_getBlockByNumber",
                rpc_params![format!("{n:#x}"), false],
            )
            .await;
        assert_eq!(
            served["hash"].as_str().unwrap().parse::<B256>().unwrap(),
            block.header.hash_slow(),
            "block {n}"
        );
        let hashes: Vec<B256> = serde_json::from_value(served["transactions"].clone()).unwrap();
        let expected: Vec<B256> = block
            .body
            .transactions
            .iter()
            .map(|t| *t.tx_hash())
            .collect();
        assert_eq!(hashes, expected, "transactions of block {n}");
        let receipts: Vec<serde_json::Value> = node
            .request("eth_getBlockReceipts", rpc_params![format!("{n:#x}")])
            .await;
        assert_eq!(receipts.len(), expected.len());
        for (r, h) in receipts.iter().zip(&expected) {
            assert_eq!(
                r["transactionHash"]
                    .as_str()
                    .unwrap()
                    .parse::<B256>()
                    .unwrap(),
                *h
            );
            let tx: serde_json::Value = node
                .request("eth_getTransactionByHash", rpc_params![h])
                .await;
            assert_eq!(tx["blockNumber"], format!("{n:#x}"));
        }
        txs += expected.len();
    }
    assert_eq!(txs, 73);
    node.stop().await;
}

#[test]
fn block_with_a_wrong_state_root_is_rejected_naming_the_root() {
    let spec = Arc::new(ChainSpec::from_genesis_file(format!("{FIXTURE}/genesis.json")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let chain = open_chain(dir.path(), spec).unwrap();
    let mut blocks = fixture_blocks();
    chain.import(blocks.remove(0)).unwrap();
    let mut bad = blocks.remove(0);
    bad.header.state_root = B256::repeat_byte(1);
    let err = chain.import(bad).unwrap_err().to_string();
    assert!(
        err.contains("block 2") && err.contains("state root"),
        "{err}"
    );
    assert_eq!(
        chain.head().header.number,
        1,
        "nothing of the bad block was written"
    );
}

#[test]
fn fixture_block_with_a_bad_header_field_is_rejected_naming_the_field() {
    let spec = Arc::new(ChainSpec::from_genesis_file(format!("{FIXTURE}/genesis.json")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let chain = open_chain(dir.path(), spec).unwrap();
    let mut blocks = fixture_blocks();
    let first = blocks.remove(0);
    let parent = first.header.clone();
    chain.import(first).unwrap();
    let good = blocks.remove(0);
    type Tamper = fn(&mut alloy_consensus::Header, &alloy_consensus::Header);
    let cases: [(&str, Tamper); 5] = [
        ("timestamp", |h, p| h.timestamp = p.timestamp),
        ("gas limit", |h, p| h.gas_limit = p.gas_limit * 2),
        ("base fee", |h, _| {
            h.base_fee_per_gas = h.base_fee_per_gas.map(|f| f + 1)
        }),
        ("withdrawals root", |h, _| {
            h.withdrawals_root = Some(B256::repeat_byte(1))
        }),
        ("excess blob gas", |h, _| {
            h.excess_blob_gas = h.excess_blob_gas.map(|e| e + 131_072)
        }),
    ];
    for (field, tamper) in cases {
        let mut bad = good.clone();
        tamper(&mut bad.header, &parent);
        let err = chain.import(bad).unwrap_err().to_string();
        assert!(
            err.contains("block 2") && err.contains(&format!("invalid {field}")),
            "{err}"
        );
        assert_eq!(
            chain.head().header.number,
            1,
            "nothing of the bad block was written"
        );
        assert!(chain.storage().block(2).unwrap().is_none());
    }
    chain.import(good).unwrap();
}

const ETHTEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/chains/geth-ethtest"
);

/// An account of geth's `dump` at the head of the geth-ethtest chain.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct DumpedAccount {
    /// Decimal.
    balance: String,
    nonce: u64,
    code_hash: B256,
    /// Slot to value, both hex; values without `0x` and leading zeros, as geth dumps them.
    #[serde(default)]
    storage: std::collections::BTreeMap<B256, String>,
}

#[tokio::test]
async fn geth_ethtest_chain_imports_through_cancun_and_prague_to_geths_head_state() {
    // go-ethereum's devp2p test chain: Shanghai at genesis, Cancun at time 60, Prague at 120
    // (blob parameters from its `blobSchedule`), blob and set-code transactions, 600 blocks.
    let spec = Arc::new(ChainSpec::from_genesis_file(format!("{ETHTEST}/genesis.json")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let rlp = dir.path().join("chain.rlp");
    let mut raw = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(
            std::fs::File::open(format!("{ETHTEST}/chain.rlp.gz")).unwrap(),
        ),
        &mut raw,
    )
    .unwrap();
    std::fs::write(&rlp, raw).unwrap();
    let chain = open_chain(&dir.path().join("db"), spec.clone()).unwrap();
    let done = import_file(&chain, &rlp, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((done.imported, chain.head().header.number), (600, 600));
    let head = chain.head();
    drop(chain);

    #[derive(serde::Deserialize)]
    struct Dump {
        root: B256,
        accounts: std::collections::BTreeMap<alloy_primitives::Address, DumpedAccount>,
    }
    let dump: Dump = serde_json::from_reader(flate2::read::GzDecoder::new(
        std::fs::File::open(format!("{ETHTEST}/headstate.json.gz")).unwrap(),
    ))
    .unwrap();
    assert_eq!(head.header.state_root, dump.root, "state root at the head");

    // The node serving the imported chain answers geth's state for every account.
    let node = serve_imported(dir, spec).await;
    let served: serde_json::Value = node
        .request("eth_getBlockByNumber", rpc_params!["latest", false])
        .await;
    assert_eq!(served["hash"], serde_json::json!(head.hash));
    let mut slots = 0;
    for (address, want) in &dump.accounts {
        let balance: U256 = node
            .request("eth_getBalance", rpc_params![address, "latest"])
            .await;
        assert_eq!(balance.to_string(), want.balance, "balance of {address}");
        let nonce: U64 = node
            .request("eth_getTransactionCount", rpc_params![address, "latest"])
            .await;
        assert_eq!(nonce.to::<u64>(), want.nonce, "nonce of {address}");
        let code: alloy_primitives::Bytes = node
            .request("eth_getCode", rpc_params![address, "latest"])
            .await;
        assert_eq!(keccak256(&code), want.code_hash, "code of {address}");
        for (slot, value) in &want.storage {
            let stored: B256 = node
                .request("eth_getStorageAt", rpc_params![address, slot, "latest"])
                .await;
            assert_eq!(
                U256::from_be_bytes(stored.0),
                U256::from_str_radix(value, 16).unwrap(),
                "slot {slot} of {address}"
            );
            slots += 1;
        }
    }
    assert_eq!((dump.accounts.len(), slots > 0), (194, true));
    // eth_config at the head: Prague since 120 (after the genesis), the genesis deposit contract.
    let config: serde_json::Value = node.request("eth_config", rpc_params![]).await;
    let current = &config["current"];
    assert_eq!(current["activationTime"], 120);
    assert_eq!(current["chainId"], "0xc72dd9d5e883e");
    assert_eq!(
        current["systemContracts"]["DEPOSIT_CONTRACT_ADDRESS"],
        "0x0000000000000000000000000000000000000000"
    );
    assert_eq!(config["next"], serde_json::Value::Null);
    node.stop().await;
}

/// A follower node (no signing key) serving the chain imported into `dir/db`.
async fn serve_imported(dir: tempfile::TempDir, spec: Arc<ChainSpec>) -> TestNode {
    let any = "127.0.0.1:0".parse().unwrap();
    let mut cfg =
        crate::common::dev_config(&dir.path().join("db"), std::time::Duration::from_secs(2));
    cfg.spec = spec;
    cfg.signer = None;
    cfg.rpc_server = RpcServerConfig {
        http_addr: any,
        ws_addr: any,
        ..Default::default()
    };
    TestNode::start_in(dir, cfg).await
}

const POW_ERA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/chains/pow-era");
const MERGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/chains/merge");

/// What a chain generated with py-evm (`testdata/chains/*/generate.py`) must import to.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Generated {
    genesis_hash: B256,
    head_hash: B256,
    accounts: std::collections::BTreeMap<alloy_primitives::Address, GeneratedAccount>,
}

#[derive(serde::Deserialize)]
struct GeneratedAccount {
    balance: U256,
    nonce: u64,
    code: Option<alloy_primitives::Bytes>,
    slot0: Option<U256>,
}

/// Imports the generated chain in `dir` (every hash must match) and serves it: the head state
/// of every listed account is checked over RPC, then the node is handed to `more`.
async fn import_generated<F: std::future::Future<Output = ()>>(
    dir: &str,
    blocks: u64,
    more: impl FnOnce(TestNode) -> F,
) {
    let expected: Generated =
        serde_json::from_slice(&std::fs::read(format!("{dir}/expected.json")).unwrap()).unwrap();
    let spec = Arc::new(ChainSpec::from_genesis_file(format!("{dir}/genesis.json")).unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let chain = open_chain(&tmp.path().join("db"), spec.clone()).unwrap();
    assert_eq!(chain.genesis_hash(), expected.genesis_hash);
    let done = import_file(&chain, format!("{dir}/chain.rlp").as_ref(), |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (done.imported, chain.head().hash),
        (blocks, expected.head_hash)
    );
    drop(chain);
    let node = serve_imported(tmp, spec).await;
    for (address, want) in &expected.accounts {
        let balance: U256 = node
            .request("eth_getBalance", rpc_params![address, "latest"])
            .await;
        assert_eq!(balance, want.balance, "balance of {address}");
        let nonce: U64 = node
            .request("eth_getTransactionCount", rpc_params![address, "latest"])
            .await;
        assert_eq!(nonce.to::<u64>(), want.nonce, "nonce of {address}");
        if let Some(code) = &want.code {
            let served: alloy_primitives::Bytes = node
                .request("eth_getCode", rpc_params![address, "latest"])
                .await;
            assert_eq!(&served, code, "code of {address}");
        }
        if let Some(slot0) = want.slot0 {
            let slot: U256 = node
                .request("eth_getStorageAt", rpc_params![address, "0x0", "latest"])
                .await;
            assert_eq!(slot, slot0, "slot 0 of {address}");
        }
    }
    more(node).await;
}

/// The pow-era chain (generated with py-evm, see `testdata/chains/pow-era/generate.py`):
/// Frontier, Homestead, Tangerine Whistle, Spurious Dragon, Byzantium, Petersburg. Its receipts
/// before Byzantium carry intermediate state roots, its blocks pay the era's block and uncle
/// rewards, and its difficulty and nonces are taken as given: importing it reproduces every hash
/// and the head state.
#[tokio::test]
async fn proof_of_work_era_chain_imports_with_intermediate_roots_and_block_rewards() {
    import_generated(POW_ERA, 12, |node| async move {
        // Block 4 (Homestead) holds a call that ran out of gas: its receipt has the state root
        // after it and no status; block 9 (Byzantium) has one too, with status 0.
        for (block, root) in [("0x4", true), ("0x9", false)] {
            let receipts: serde_json::Value = node
                .request("eth_getBlockReceipts", rpc_params![block])
                .await;
            let receipt = &receipts[0];
            assert_eq!(receipt["root"].is_string(), root, "{receipt}");
            assert_eq!(receipt["status"].is_string(), !root, "{receipt}");
        }
        node.stop().await;
    })
    .await;
}

/// The merge chain (py-evm, `testdata/chains/merge/generate.py`): proof of work through Berlin
/// and London (the first base fee at London), the merge at block 4 (difficulty 0, prevRandao,
/// no more block rewards), Shanghai's withdrawals and Cancun by time.
#[tokio::test]
async fn merge_transition_chain_imports_through_shanghai_and_cancun() {
    import_generated(MERGE, 10, |node| async move {
        let merged: serde_json::Value = node
            .request("eth_getBlockByNumber", rpc_params!["0x4", false])
            .await;
        assert_eq!(merged["difficulty"], "0x0");
        node.stop().await;
    })
    .await;
}

/// The same merge chain under a config that gives only the terminal total difficulty (no
/// `mergeNetsplitBlock`), as mainnet's does: the merge is found where the total difficulty
/// reaches it, while importing and again when a node opens the stored chain.
#[tokio::test]
async fn merge_by_terminal_total_difficulty_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut genesis: serde_json::Value =
        serde_json::from_slice(&std::fs::read(format!("{MERGE}/genesis.json")).unwrap()).unwrap();
    genesis["config"]
        .as_object_mut()
        .unwrap()
        .remove("mergeNetsplitBlock");
    std::fs::write(dir.path().join("genesis.json"), genesis.to_string()).unwrap();
    for file in ["chain.rlp", "expected.json"] {
        std::fs::copy(format!("{MERGE}/{file}"), dir.path().join(file)).unwrap();
    }
    let path = dir.path().to_str().unwrap().to_string();
    import_generated(&path, 10, |node| async move {
        node.stop().await;
    })
    .await;

    // A node opening a stored chain finds the merge among its blocks.
    let spec = Arc::new(ChainSpec::from_genesis_file(format!("{path}/genesis.json")).unwrap());
    assert!(spec.awaits_merge().is_some());
    let db = tempfile::tempdir().unwrap();
    let chain = open_chain(&db.path().join("db"), spec.clone()).unwrap();
    import_file(&chain, format!("{path}/chain.rlp").as_ref(), |_| {}).unwrap();
    drop(chain);
    let fresh = Arc::new(ChainSpec::from_genesis_file(format!("{path}/genesis.json")).unwrap());
    let chain = open_chain(&db.path().join("db"), fresh.clone()).unwrap();
    // The spec given stays as built; the chain's own spec has the merge.
    assert!(fresh.awaits_merge().is_some());
    let found = chain.spec();
    assert!(found.awaits_merge().is_none());
    use alloy_hardforks::EthereumHardforks;
    assert!(!found.is_paris_active_at_block(3) && found.is_paris_active_at_block(4));
}
