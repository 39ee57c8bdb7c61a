//! The Ethereum Foundation's blockchain tests (fork Cancun, `testdata/ef-blockchain-cancun.tar.gz`)
//! fed through the import path followers use ([`sync::import_raw`]).
//!
//! Each case gives a genesis (`pre` and `genesisBlockHeader`) and a list of blocks as RLP; a block
//! with `expectException` must be refused and leave nothing behind. The chain must end at
//! `lastblockhash` with every account of `postState` as given. The refusal reasons are printed
//! (`cargo test --test it ef_ -- --nocapture` shows them), next to the exception the case
//! expects.

use std::{collections::BTreeMap, io::Read, sync::Arc};

use alloy_consensus::{Block, TxEnvelope};
use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use alloy_rlp::Decodable;
use l2node_node::chain::open_chain;
use l2node_node::chainspec::ChainSpec;
use l2node_node::sync::{import_raw, Imported};
use l2node_storage::StateReader;
use serde::Deserialize;
use serde_json::{json, Value};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/ef-blockchain-cancun.tar.gz"
);

/// How many cases the archive holds (ethereum/tests, `ValidBlocks` and `InvalidBlocks`, Cancun).
const CASES: usize = 573;

/// Cases that depend on a rule the node deliberately does not apply, with the reason (none
/// today: side chains and reorganisations are followed).
const NOT_APPLIED: &[(&str, &str)] = &[];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    pre: Value,
    genesis_block_header: Value,
    blocks: Vec<TestBlock>,
    lastblockhash: B256,
    post_state: Option<BTreeMap<Address, PostAccount>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TestBlock {
    rlp: Bytes,
    expect_exception: Option<String>,
}

#[derive(Deserialize)]
struct PostAccount {
    balance: U256,
    nonce: U256,
    code: Bytes,
    storage: BTreeMap<U256, U256>,
}

/// Every case of the archive, as (file/case name, case).
fn cases() -> Vec<(String, Case)> {
    let file = std::fs::File::open(FIXTURE).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        if !path.ends_with(".json") {
            continue;
        }
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        let file: BTreeMap<String, Case> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let path = path.trim_start_matches("BlockchainTests/").to_string();
        out.extend(
            file.into_iter()
                .map(|(name, case)| (format!("{path}::{name}"), case)),
        );
    }
    out
}

/// The geth genesis of a case: its `pre` state, its genesis header's fields, and a config with
/// every fork through Cancun active from genesis on chain id 1 (what `"network": "Cancun"` means).
fn genesis(case: &Case) -> Value {
    let h = &case.genesis_block_header;
    json!({
        "config": {
            "chainId": 1,
            "homesteadBlock": 0, "eip150Block": 0, "eip155Block": 0, "eip158Block": 0,
            "byzantiumBlock": 0, "constantinopleBlock": 0, "petersburgBlock": 0,
            "istanbulBlock": 0, "berlinBlock": 0, "londonBlock": 0,
            "mergeNetsplitBlock": 0, "terminalTotalDifficulty": 0,
            "terminalTotalDifficultyPassed": true,
            "shanghaiTime": 0, "cancunTime": 0,
            "blobSchedule": { "cancun": { "target": 3, "max": 6, "baseFeeUpdateFraction": 3338477 } }
        },
        "nonce": h["nonce"],
        "timestamp": h["timestamp"],
        "extraData": h["extraData"],
        "gasLimit": h["gasLimit"],
        "difficulty": h["difficulty"],
        "mixHash": h["mixHash"],
        "coinbase": h["coinbase"],
        "baseFeePerGas": h["baseFeePerGas"],
        "blobGasUsed": h["blobGasUsed"],
        "excessBlobGas": h["excessBlobGas"],
        "alloc": case.pre,
    })
}

/// Runs one case; `Err` says what went wrong. Refusals of invalid blocks go to `log`.
fn run(case: &Case, log: &mut Vec<String>) -> Result<(), String> {
    let genesis = serde_json::from_value(genesis(case)).map_err(|e| format!("genesis: {e}"))?;
    let spec = Arc::new(ChainSpec::from_genesis(genesis).map_err(|e| format!("spec: {e}"))?);
    let dir = tempfile::tempdir().unwrap();
    let chain = open_chain(dir.path(), spec).map_err(|e| format!("open: {e}"))?;
    let expected: B256 = serde_json::from_value(case.genesis_block_header["hash"].clone())
        .map_err(|e| format!("genesis hash: {e}"))?;
    if chain.head().hash != expected {
        return Err(format!(
            "genesis hash {} (the case's is {expected})",
            chain.head().hash
        ));
    }
    for (i, block) in case.blocks.iter().enumerate() {
        let head = chain.head().hash;
        let result = import_raw(&chain, &block.rlp);
        match (&block.expect_exception, result) {
            (None, Ok(Imported::New(_) | Imported::Competing(_))) => {}
            (None, Ok(Imported::Known(n))) => {
                return Err(format!("block {i}: already known as block {n}"))
            }
            (None, Err(e)) => return Err(format!("block {i} refused: {e}")),
            (Some(exception), Ok(_)) => {
                return Err(format!("block {i} imported, expected {exception}"))
            }
            (Some(exception), Err(e)) => {
                log.push(format!("block {i}: expected {exception}, refused: {e}"));
                if chain.head().hash != head {
                    return Err(format!("block {i} refused but the head moved"));
                }
                // Nothing of the refused block is stored.
                if let Ok(refused) = Block::<TxEnvelope>::decode(&mut block.rlp.as_ref()) {
                    let hash = refused.header.hash_slow();
                    if chain.storage().block_number(&hash).unwrap().is_some() {
                        return Err(format!("refused block {i} ({hash}) is stored"));
                    }
                }
            }
        }
    }
    let head = chain.head();
    if head.hash != case.lastblockhash {
        return Err(format!(
            "head {} at {}, the case ends at {}",
            head.hash, head.header.number, case.lastblockhash
        ));
    }
    let Some(post) = &case.post_state else {
        // Large cases give only `postStateHash`; the head's state root, checked on import
        // against the computed one, is that hash.
        return Ok(());
    };
    let state = chain.storage().state_at(None).unwrap();
    for (address, want) in post {
        let got = state
            .account(*address)
            .unwrap()
            .ok_or_else(|| format!("{address} is missing from the state"))?;
        let code_hash = keccak256(&want.code);
        if got.balance != want.balance
            || U256::from(got.nonce) != want.nonce
            || got.code_hash != code_hash
        {
            return Err(format!(
                "{address}: balance {} nonce {} code {}, expected {} {} {code_hash}",
                got.balance, got.nonce, got.code_hash, want.balance, want.nonce
            ));
        }
        for (slot, value) in &want.storage {
            let stored = state.storage(*address, *slot).unwrap();
            if stored != *value {
                return Err(format!(
                    "{address} slot {slot:#x}: {stored:#x}, expected {value:#x}"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn ef_blockchain_tests_cancun_import() {
    let cases = cases();
    assert_eq!(cases.len(), CASES, "cases in {FIXTURE}");
    let mut failures = Vec::new();
    let mut passed = 0;
    for (name, case) in &cases {
        let mut log = Vec::new();
        let outcome = run(case, &mut log);
        for line in log {
            println!("{name}: {line}");
        }
        let allowed = NOT_APPLIED.iter().find(|(n, _)| n == name);
        match (outcome, allowed) {
            (Ok(()), None) => passed += 1,
            (Ok(()), Some(_)) => {
                failures.push(format!("{name}: passes, remove it from NOT_APPLIED"))
            }
            (Err(e), Some((_, why))) => println!("{name}: not applied ({why}): {e}"),
            (Err(e), None) => failures.push(format!("{name}: {e}")),
        }
    }
    println!(
        "EF blockchain tests (Cancun): {passed} of {} passed, {} not applied",
        cases.len(),
        NOT_APPLIED.len()
    );
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
