//! Names the bad argument of a `-32602`: jsonrpsee only says "Invalid params" with the serde
//! error, so the failing position is found again against each method's parameter list.

use alloy_eips::{BlockId, BlockNumberOrTag};
use alloy_primitives::{Address, Bytes, B256, U256, U64};
use alloy_rpc_types_eth::{
    state::StateOverride, BlockOverrides, Filter, Index, TransactionRequest,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

type Check = fn(&Value) -> Result<(), String>;

/// One positional parameter of a method.
struct Arg {
    name: &'static str,
    expected: &'static str,
    check: Check,
    optional: bool,
}

fn check<T: DeserializeOwned>(v: &Value) -> Result<(), String> {
    T::deserialize(v).map(|_| ()).map_err(|e| e.to_string())
}

const fn req(name: &'static str, expected: &'static str, check: Check) -> Arg {
    Arg {
        name,
        expected,
        check,
        optional: false,
    }
}

const fn opt(name: &'static str, expected: &'static str, check: Check) -> Arg {
    Arg {
        name,
        expected,
        check,
        optional: true,
    }
}

const ADDRESS: &str = "a 20-byte address as 0x-prefixed hex";
const HASH: &str = "a 32-byte hash as 0x-prefixed hex";
const QUANTITY: &str = "a 0x-prefixed hex quantity";
const DATA: &str = "0x-prefixed hex bytes";
const BLOCK_ID: &str =
    "a block number (hex), a tag (latest, pending, earliest, safe, finalized) or {\"blockHash\": ...}";
const BLOCK_TAG: &str =
    "a block number (hex) or a tag (latest, pending, earliest, safe, finalized)";
const CALL: &str = "a call object {from, to, gas, gasPrice | maxFeePerGas, value, input | data}";
const FULL_TX: &str = "true for full transactions, false for hashes";
const FILTER: &str = "a filter object {fromBlock, toBlock, address, topics} or {blockHash, ...}";

fn signature(method: &str) -> Option<Vec<Arg>> {
    use alloy_primitives::Address as A;
    let args = match method {
        "eth_getBalance" | "eth_getTransactionCount" | "eth_getCode" => vec![
            req("address", ADDRESS, check::<A>),
            opt("block", BLOCK_ID, check::<BlockId>),
        ],
        "eth_getStorageAt" => vec![
            req("address", ADDRESS, check::<A>),
            req("slot", QUANTITY, check::<U256>),
            opt("block", BLOCK_ID, check::<BlockId>),
        ],
        "eth_call" => vec![
            req("transaction", CALL, check::<TransactionRequest>),
            opt("block", BLOCK_ID, check::<BlockId>),
            opt(
                "stateOverrides",
                "an object of address -> {balance, nonce, code, state, stateDiff}",
                check::<StateOverride>,
            ),
            opt(
                "blockOverrides",
                "an object {number, time, gasLimit, baseFee, ...}",
                check::<BlockOverrides>,
            ),
        ],
        "eth_estimateGas" => vec![
            req("transaction", CALL, check::<TransactionRequest>),
            opt("block", BLOCK_ID, check::<BlockId>),
            opt(
                "stateOverrides",
                "an object of address -> {balance, nonce, code, state, stateDiff}",
                check::<StateOverride>,
            ),
        ],
        "eth_createAccessList" => vec![
            req("transaction", CALL, check::<TransactionRequest>),
            opt("block", BLOCK_ID, check::<BlockId>),
        ],
        "eth_sendRawTransaction" => vec![req(
            "transaction",
            "the signed transaction as 0x-prefixed hex",
            check::<Bytes>,
        )],
        "eth_getTransactionByHash" | "eth_getTransactionReceipt" => {
            vec![req("hash", HASH, check::<B256>)]
        }
        "eth_getTransactionByBlockHashAndIndex" => vec![
            req("blockHash", HASH, check::<B256>),
            req("index", QUANTITY, check::<Index>),
        ],
        "eth_getTransactionByBlockNumberAndIndex" => vec![
            req("block", BLOCK_TAG, check::<BlockNumberOrTag>),
            req("index", QUANTITY, check::<Index>),
        ],
        "eth_getBlockReceipts" => vec![req("block", BLOCK_ID, check::<BlockId>)],
        "eth_getBlockByHash" => vec![
            req("blockHash", HASH, check::<B256>),
            req("fullTransactions", FULL_TX, check::<bool>),
        ],
        "eth_getBlockByNumber" => vec![
            req("block", BLOCK_TAG, check::<BlockNumberOrTag>),
            req("fullTransactions", FULL_TX, check::<bool>),
        ],
        "eth_getBlockTransactionCountByHash" | "eth_getUncleCountByBlockHash" => {
            vec![req("blockHash", HASH, check::<B256>)]
        }
        "eth_getBlockTransactionCountByNumber" | "eth_getUncleCountByBlockNumber" => {
            vec![req("block", BLOCK_TAG, check::<BlockNumberOrTag>)]
        }
        "eth_feeHistory" => vec![
            req("blockCount", QUANTITY, check::<U64>),
            req("newestBlock", BLOCK_TAG, check::<BlockNumberOrTag>),
            opt(
                "rewardPercentiles",
                "an increasing list of numbers between 0 and 100",
                check::<Vec<f64>>,
            ),
        ],
        "eth_getLogs" | "eth_newFilter" => vec![req("filter", FILTER, check::<Filter>)],
        "eth_getFilterChanges" | "eth_getFilterLogs" | "eth_uninstallFilter" => vec![req(
            "filterId",
            "a filter id as a hex quantity",
            check::<U256>,
        )],
        "eth_getProof" => vec![
            req("address", ADDRESS, check::<Address>),
            req(
                "storageKeys",
                "a list of 32-byte slots as hex",
                check::<Vec<B256>>,
            ),
            req("block", BLOCK_ID, check::<BlockId>),
        ],
        "web3_sha3" => vec![req("data", DATA, check::<Bytes>)],
        _ => return None,
    };
    Some(args)
}

/// A message naming the first bad or missing argument of `method`, if one can be found.
pub fn explain(method: &str, params: Option<&str>) -> Option<String> {
    let args = signature(method)?;
    let values = match params.map(serde_json::from_str::<Value>) {
        None => Vec::new(),
        Some(Ok(Value::Array(values))) => values,
        Some(Ok(Value::Null)) => Vec::new(),
        Some(_) => return Some(format!("{method} takes its parameters as a JSON array")),
    };
    for (i, arg) in args.iter().enumerate() {
        match values.get(i) {
            None | Some(Value::Null) if arg.optional => {}
            None => {
                return Some(format!(
                    "missing value for required argument {i} ({}): expected {}",
                    arg.name, arg.expected
                ))
            }
            Some(v) => {
                if let Err(e) = (arg.check)(v) {
                    return Some(format!(
                        "invalid argument {i} ({}): {e}; expected {}",
                        arg.name, arg.expected
                    ));
                }
            }
        }
    }
    (values.len() > args.len()).then(|| {
        format!(
            "too many arguments: {method} takes at most {}, got {}",
            args.len(),
            values.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_address_names_argument_zero_and_the_format() {
        let m = explain("eth_getBalance", Some(r#"["0x12","latest"]"#)).unwrap();
        assert!(m.starts_with("invalid argument 0 (address)"), "{m}");
        assert!(m.contains("20-byte address"), "{m}");
    }

    #[test]
    fn missing_required_argument_is_named() {
        let m = explain("eth_getBlockByNumber", Some(r#"["latest"]"#)).unwrap();
        assert_eq!(
            m,
            format!("missing value for required argument 1 (fullTransactions): expected {FULL_TX}")
        );
    }

    #[test]
    fn bad_block_tag_is_named() {
        let m = explain(
            "eth_getBalance",
            Some(r#"["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","lol"]"#),
        )
        .unwrap();
        assert!(m.starts_with("invalid argument 1 (block)"), "{m}");
    }

    #[test]
    fn too_many_arguments_are_reported() {
        let m = explain(
            "eth_getTransactionReceipt",
            Some(&format!(r#"["{}", 1]"#, B256::ZERO)),
        )
        .unwrap();
        assert!(m.starts_with("too many arguments"), "{m}");
    }

    #[test]
    fn valid_arguments_need_no_explanation() {
        assert_eq!(
            explain("eth_getBlockByNumber", Some(r#"["0x1", false]"#)),
            None
        );
        assert_eq!(explain("eth_unknown", Some("[]")), None);
    }
}
