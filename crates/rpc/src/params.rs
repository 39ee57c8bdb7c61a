//! Names the bad argument of a `-32602`: jsonrpsee only says "Invalid params" with the serde
//! error, so the failing position is found again against the method's parameters, as declared
//! once in `l2node_api` (its method tables).

use l2node_api::MethodKind;
use serde_json::Value;

/// A message naming the first bad or missing argument of `method`, if one can be found.
pub(super) fn explain(method: &str, params: Option<&str>) -> Option<String> {
    let spec = l2node_api::find_method(method)?;
    if spec.kind == MethodKind::Subscription {
        // jsonrpsee already sent the subscription's error through its sink; what the middleware
        // sees is a placeholder, and a rewritten response would be a second answer.
        return None;
    }
    let args = spec.params;
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
    use alloy_primitives::B256;

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
            "missing value for required argument 1 (fullTransactions): expected a boolean (true \
             or false)"
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

    #[test]
    fn argument_names_come_from_the_api_in_camel_case() {
        let m = explain("eth_call", Some(r#"[{}, "latest", 5]"#)).unwrap();
        assert!(
            m.starts_with("invalid argument 2 (stateOverrides): "),
            "{m}"
        );
        assert!(
            m.ends_with(
                "expected an object of address -> {balance, nonce, code, state, stateDiff}"
            ),
            "{m}"
        );
        let m = explain("eth_feeHistory", Some(r#"["0x1"]"#)).unwrap();
        assert!(
            m.starts_with("missing value for required argument 1 (newestBlock)"),
            "{m}"
        );
    }

    #[test]
    fn optional_arguments_may_be_missing_or_null() {
        let addr = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
        assert_eq!(
            explain("eth_getBalance", Some(&format!(r#"["{addr}"]"#))),
            None
        );
        assert_eq!(
            explain("eth_getBalance", Some(&format!(r#"["{addr}", null]"#))),
            None
        );
    }

    #[test]
    fn subscriptions_are_left_alone_unsubscribe_is_explained() {
        assert_eq!(explain("eth_subscribe", Some("[5]")), None);
        let m = explain("eth_unsubscribe", Some("[]")).unwrap();
        assert!(
            m.starts_with("missing value for required argument 0 (subscriptionId)"),
            "{m}"
        );
    }

    #[test]
    fn parameters_must_be_an_array() {
        assert_eq!(
            explain("eth_getBalance", Some(r#"{"address": 1}"#)).unwrap(),
            "eth_getBalance takes its parameters as a JSON array"
        );
    }
}
