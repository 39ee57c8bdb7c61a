//! The reads wallets and dashboards poll most, answered in the dispatcher: eth_blockNumber,
//! eth_chainId, eth_getBalance and eth_getTransactionCount.
//!
//! They are the same `EthApiServer` methods, called with the same typed arguments. What is
//! skipped is jsonrpsee's method machinery around them:
//! - the params are read with a visitor instead of a `ParamsSequence`;
//! - the answer is written straight into the response (or into a batch's array);
//! - jsonrpsee serializes a `MethodResponse`, then parses it again to check it, and parses a
//!   batch's array again once it is built; none of that happens here.
//!
//! A profile of eth_getBalance under wrk put that machinery at about a tenth of the node's CPU,
//! and the same per entry of a batch.
//!
//! (Over WebSocket, the connection's sink takes checked JSON, so the answer is parsed once
//! there.)
//!
//! Only the common cases are taken:
//! - eth_getBalance's and eth_getTransactionCount's params: an array of at most two plain
//!   strings (no escapes), an address of 40 hex digits after `0x`, and a block tag or number
//!   that is not 66 characters long (that length reads as a block hash);
//! - the method answers without an error, within `--rpc-max-response-size`.
//!
//! Anything else (objects, `null`, escapes, any error) goes the usual way, which reads, answers
//! and words errors exactly as before. The integration test
//! `dev::a_quick_read_reads_as_the_methods_answer` checks that both ways give the same bytes.

use std::borrow::Cow;

use alloy_eips::{BlockId, BlockNumberOrTag};
use alloy_primitives::{Address, U256, U64};
use jsonrpsee::types::Id;
use l2node_api::EthApiServer;

use super::eth::EthRpc;

/// Room reserved for one answer: a numeric id and a 256-bit result take at most 122 bytes, so
/// the answer is written without growing the string.
const ANSWER_CAPACITY: usize = 128;

/// The methods answered here; see the module docs.
pub(crate) struct Quick {
    eth: EthRpc,
}

impl Quick {
    pub(crate) fn new(eth: EthRpc) -> Self {
        Self { eth }
    }

    /// Whether `method` is one of those answered here.
    pub(crate) fn takes(method: &str) -> bool {
        matches!(
            method,
            "eth_blockNumber" | "eth_chainId" | "eth_getBalance" | "eth_getTransactionCount"
        )
    }

    /// Appends the response to a call of `method` with `params` (the raw JSON) and `id` to
    /// `out` and returns `true`, if the method is one of those answered here, the params have a
    /// common shape, and the method answers without an error in at most `max` bytes. Otherwise
    /// `out` is left as it was and the call goes the usual way.
    pub(crate) fn answer(
        &self,
        id: &Id<'_>,
        method: &str,
        params: Option<&str>,
        max: usize,
        out: &mut String,
    ) -> bool {
        let Some(value) = self.value(method, params) else {
            return false;
        };
        let start = out.len();
        out.reserve(ANSWER_CAPACITY);
        out.push_str(r#"{"jsonrpc":"2.0","id":"#);
        push_id(out, id);
        out.push_str(r#","result":""#);
        push_quantity(out, &value.to_be_bytes::<32>());
        out.push_str("\"}");
        // Over the limit (a long id), the usual way answers the limit's error.
        if out.len() - start > max {
            out.truncate(start);
            return false;
        }
        true
    }

    /// The method's answer, when its params have a common shape and it answers without error.
    fn value(&self, method: &str, params: Option<&str>) -> Option<U256> {
        let u64 = |n: U64| U256::from(n.to::<u64>());
        match method {
            // Without params: jsonrpsee ignores whatever params are sent.
            "eth_blockNumber" => self.eth.block_number().ok().map(u64),
            "eth_chainId" => self.eth.chain_id().ok().map(u64),
            "eth_getBalance" => {
                let (address, block) = address_and_block(params)?;
                self.eth.balance(address, block).ok()
            }
            "eth_getTransactionCount" => {
                let (address, block) = address_and_block(params)?;
                self.eth.transaction_count(address, block).ok().map(u64)
            }
            _ => None,
        }
    }
}

/// `[address]` or `[address, block]` in their common shapes (see the module docs).
fn address_and_block(params: Option<&str>) -> Option<(Address, Option<BlockId>)> {
    let Strings { len, items } = serde_json::from_str(params?).ok()?;
    let [address, block] = items;
    if len == 0 || address.len() != 42 || !address.starts_with("0x") {
        return None;
    }
    let address: Address = address.parse().ok()?;
    if len == 1 {
        return Some((address, None));
    }
    // serde reads a 66-character string as a block hash, anything else as `BlockNumberOrTag`
    // does (which lower-cases a copy of it first, so the usual tags are matched here).
    let tag = match block {
        "latest" => BlockNumberOrTag::Latest,
        "pending" => BlockNumberOrTag::Pending,
        "safe" => BlockNumberOrTag::Safe,
        "finalized" => BlockNumberOrTag::Finalized,
        "earliest" => BlockNumberOrTag::Earliest,
        _ if block.len() == 66 => return None,
        _ => block.parse().ok()?,
    };
    Some((address, Some(BlockId::from(tag))))
}

/// A JSON array of at most two strings without escapes, borrowed from the message.
struct Strings<'a> {
    len: usize,
    items: [&'a str; 2],
}

impl<'de> serde::Deserialize<'de> for Strings<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Strings<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("at most two strings")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut strings = Strings {
                    len: 0,
                    items: [""; 2],
                };
                while let Some(s) = seq.next_element::<&'de str>()? {
                    let Some(slot) = strings.items.get_mut(strings.len) else {
                        return Err(serde::de::Error::invalid_length(3, &self));
                    };
                    *slot = s;
                    strings.len += 1;
                }
                Ok(strings)
            }
        }
        d.deserialize_seq(Visitor)
    }
}

/// The id as jsonrpsee's `Id` serializes it.
fn push_id(out: &mut String, id: &Id<'_>) {
    match id {
        Id::Null => out.push_str("null"),
        Id::Number(n) => out.push_str(itoa::Buffer::new().format(*n)),
        // Borrowed from the message, so it had no escapes: no `"`, `\` or control characters,
        // which are all serde_json would escape.
        Id::Str(Cow::Borrowed(s)) => {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
        Id::Str(Cow::Owned(s)) => {
            out.push_str(&serde_json::to_string(s).expect("a string serializes"));
        }
    }
}

/// Big-endian `be` as a JSON-RPC quantity's digits: lower-case hex without leading zeros, `0`
/// for zero (as alloy's `U64` and `U256` serialize).
fn push_quantity(out: &mut String, be: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digit = |nibble: u8| char::from(DIGITS[usize::from(nibble)]);
    out.push_str("0x");
    let first = be.iter().position(|&b| b != 0).unwrap_or(be.len());
    let Some((&lead, rest)) = be[first..].split_first() else {
        out.push('0');
        return;
    };
    if lead >> 4 != 0 {
        out.push(digit(lead >> 4));
    }
    out.push(digit(lead & 0x0f));
    for &b in rest {
        out.push(digit(b >> 4));
        out.push(digit(b & 0x0f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_as_alloys() {
        for v in [0u64, 1, 0xf, 0x10, 0xabc, u64::MAX] {
            let mut out = String::new();
            push_quantity(&mut out, &v.to_be_bytes());
            assert_eq!(
                format!("\"{out}\""),
                serde_json::to_string(&U64::from(v)).unwrap()
            );
        }
        for v in [U256::ZERO, U256::from(7), U256::MAX, U256::from(1) << 200] {
            let mut out = String::new();
            push_quantity(&mut out, &v.to_be_bytes::<32>());
            assert_eq!(format!("\"{out}\""), serde_json::to_string(&v).unwrap());
        }
    }

    #[test]
    fn ids_read_as_jsonrpsees() {
        for raw in [
            "null",
            "0",
            "18446744073709551615",
            r#""a""#,
            r#""a\"b\u0041""#,
        ] {
            let id: Id<'_> = serde_json::from_str(raw).unwrap();
            let mut out = String::new();
            push_id(&mut out, &id);
            assert_eq!(out, serde_json::to_string(&id).unwrap(), "{raw}");
        }
    }

    #[test]
    fn only_common_params_are_taken() {
        let a = "0x00000000000000000000000000000000000000aa";
        let taken = |p: &str| address_and_block(Some(p));
        assert_eq!(
            taken(&format!(r#"["{a}"]"#)),
            Some((a.parse().unwrap(), None))
        );
        assert_eq!(
            taken(&format!(r#" [ "{a}" , "latest" ] "#)),
            Some((a.parse().unwrap(), Some(BlockId::latest())))
        );
        assert_eq!(
            taken(&format!(r#"["{a}","0x1f"]"#)).unwrap().1,
            Some(BlockId::number(31))
        );
        // As serde reads them.
        for block in ["Latest", "safe", "0x0"] {
            let want: BlockId = serde_json::from_str(&format!(r#""{block}""#)).unwrap();
            assert_eq!(
                taken(&format!(r#"["{a}","{block}"]"#)).unwrap().1,
                Some(want)
            );
        }
        for params in [
            "[]".to_owned(),
            format!(r#"["{a}",null]"#),
            format!(r#"["{a}",{{"blockNumber":"0x1"}}]"#),
            format!(r#"["{a}","latest",1]"#),
            format!(r#"["{}","latest"]"#, &a[2..]),
            format!(r#"["{a}","0x{}"]"#, "0".repeat(64)),
            format!(r#"["{a}","lat\u0065st"]"#),
            format!(r#"["{a}","1"]"#),
            format!(r#"{{"address":"{a}"}}"#),
        ] {
            assert_eq!(taken(&params), None, "{params}");
        }
        assert_eq!(address_and_block(None), None);
    }
}
