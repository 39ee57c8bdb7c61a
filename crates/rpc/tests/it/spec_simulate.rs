//! eth_simulateV1 against the execution-apis specification's own test cases
//! (`testdata/execution-apis/eth_simulateV1/*.io`, recorded from geth on the specification's
//! Osaka test chain).
//!
//! The node runs a chain shaped like that one where the answers depend on it: the same chain id,
//! a 200M gas limit, Osaka from genesis, the head's timestamp (540) and a base fee whose next
//! block's is the recorded 0x16dd3d0. The cases chosen use fresh addresses and overrides, not
//! the test chain's accounts, so every field must be equal except those that name the chain's
//! history: the block number and hashes, the parent hash and the state root.

use std::path::Path;

use alloy_primitives::U256;
use jsonrpsee::core::client::ClientT;
use serde_json::Value;

use crate::common::TestNode;

/// The chain id of execution-apis' test chain.
const SPEC_CHAIN_ID: u64 = 0xc72dd9d5e883e;
/// The head of execution-apis' test chain is at this timestamp; simulated blocks follow at +12.
const SPEC_HEAD_TIME: u64 = 540;
/// The test chain's block gas limit.
const SPEC_GAS_LIMIT: u64 = 0xbebc200;
/// A base fee whose successor after an empty block (7/8 of it) is the recorded 0x16dd3d0.
const SPEC_HEAD_BASE_FEE: u64 = 27_399_844;

/// Fields that differ between any two chains: where the simulated blocks sit in history, and
/// the difficulty (the test chain is past the merge, where it is 0; this one seals with Clique,
/// and a simulated block keeps its parent's, as geth's before the merge).
const HISTORY_FIELDS: [&str; 7] = [
    "difficulty",
    "number",
    "hash",
    "parentHash",
    "stateRoot",
    "blockHash",
    "blockNumber",
];

fn strip_history(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for key in HISTORY_FIELDS {
                map.remove(key);
            }
            map.values_mut().for_each(strip_history);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_history),
        _ => {}
    }
}

/// The first differing path between two JSON values.
fn first_difference(path: &str, got: &Value, want: &Value) -> Option<String> {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for key in g.keys().chain(w.keys()) {
                let (a, b) = (
                    g.get(key).unwrap_or(&Value::Null),
                    w.get(key).unwrap_or(&Value::Null),
                );
                if let Some(d) = first_difference(&format!("{path}.{key}"), a, b) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(g), Value::Array(w)) if g.len() == w.len() => g
            .iter()
            .zip(w)
            .enumerate()
            .find_map(|(i, (a, b))| first_difference(&format!("{path}[{i}]"), a, b)),
        _ if got == want => None,
        _ => Some(format!("{path}: got {got}, want {want}")),
    }
}

/// One `.io` case: the request after `>>`, the answer after `<<`.
fn read_case(path: &Path) -> (Value, Value) {
    let text = std::fs::read_to_string(path).unwrap();
    let line = |prefix: &str| -> Value {
        let l = text
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("{}: no {prefix} line", path.display()));
        serde_json::from_str(l).unwrap()
    };
    (line(">> "), line("<< "))
}

#[tokio::test]
async fn execution_apis_simulate_cases_answer_as_recorded() {
    let node = TestNode::start_with(|cfg| {
        let mut genesis = l2node_node::dev::dev_genesis(0);
        genesis.config.extra_fields.remove("karma");
        // The test chain's base fee follows EIP-1559.
        genesis.config.extra_fields.remove("zeroBaseFee");
        genesis.config.chain_id = SPEC_CHAIN_ID;
        genesis.timestamp = SPEC_HEAD_TIME;
        genesis.gas_limit = SPEC_GAS_LIMIT;
        genesis.base_fee_per_gas = Some(SPEC_HEAD_BASE_FEE.into());
        // The recorded calls come from accounts the overrides fund, but for the account whose
        // EIP-7702 authorizations the delegation cases carry: funded in the test chain's
        // genesis (an authority that exists earns a refund).
        genesis.alloc.insert(
            alloy_primitives::address!("0x1f4924b14f34e24159387c0a4cdbaa32f3ddb0cf"),
            alloy_genesis::GenesisAccount::default()
                .with_balance(U256::from(10u64).pow(U256::from(30))),
        );
        cfg.spec =
            std::sync::Arc::new(l2node_node::chainspec::ChainSpec::from_genesis(genesis).unwrap());
    })
    .await;
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/execution-apis/eth_simulateV1");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "io"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 20, "the cases are in {}", dir.display());
    let mut failures = Vec::new();
    for path in &paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (request, want) = read_case(path);
        let mut params = jsonrpsee::core::params::ArrayParams::new();
        for p in request["params"].as_array().unwrap() {
            params.insert(p).unwrap();
        }
        let got = match node
            .http
            .request::<Value, _>("eth_simulateV1", params)
            .await
        {
            Ok(result) => serde_json::json!({ "result": result }),
            Err(jsonrpsee::core::ClientError::Call(e)) => {
                serde_json::json!({ "error": { "code": e.code(), "message": e.message() } })
            }
            Err(other) => panic!("{name}: {other}"),
        };
        let difference = match (&want.get("error"), got.get("error")) {
            // Codes must match; messages are the node's own (they name the field and the fix).
            (Some(w), Some(g)) => (w["code"] != g["code"]).then(|| {
                format!(
                    "error code {} ({}), want {} ({})",
                    g["code"], g["message"], w["code"], w["message"]
                )
            }),
            (Some(w), None) => Some(format!("answered a result, want error {w}")),
            (None, Some(g)) => Some(format!("answered error {g}")),
            (None, None) => {
                let (mut g, mut w) = (got["result"].clone(), want["result"].clone());
                strip_history(&mut g);
                strip_history(&mut w);
                first_difference("result", &g, &w)
            }
        };
        match difference {
            Some(d) => failures.push(format!("{name}: {d}")),
            None => eprintln!("ok   {name}"),
        }
    }
    eprintln!(
        "{} of {} execution-apis eth_simulateV1 cases answer as recorded",
        paths.len() - failures.len(),
        paths.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
