//! eth_call and eth_estimateGas answers at the head, kept until the next head
//! (`--rpc-call-cache-size`).
//!
//! An answer depends only on the block it runs on and the request: a call runs on the block's
//! header and on the state after it, and nothing changes a block's state but a new block (the
//! dev controls only decide when and how blocks are sealed). So a request asked again at the
//! same head (a dapp's `balanceOf` or multicall polled by every open page, a wallet's estimate
//! asked again while its user edits the amount) is answered from here without running the EVM.
//!
//! Only the head's answers are kept, keyed by the head's hash (`PerHead`): the cache starts
//! afresh at each new head and at an unwind, so it never answers for another block, and it holds at most one
//! block's worth of answers, within [`MAX_BYTES`]. Answers at older blocks are not kept (a block
//! explorer walking history would only churn it). Errors are not kept, reverts are (a revert is
//! an answer).
//!
//! A call whose block is the head by name (`latest`, or no block) is also kept under its params
//! exactly as sent, and [`KeptCalls`] answers the same params again before they are parsed
//! (the request's envelope is read, its params are not): a page polling one call sends the same
//! bytes each time, and reaching a kept answer through jsonrpsee's method call, the parse of
//! the transaction and the key made from it cost more than half of such a call.

use std::collections::{hash_map::Entry, HashMap};
use std::sync::Arc;

use alloy_primitives::{Bytes, B256};
use parking_lot::Mutex;

use l2node_node::chain::Chain;
use l2node_node::per_head::PerHead;

/// [`key`]'s method byte of eth_call.
pub(crate) const CALL: u8 = 0;
/// [`key`]'s method byte of eth_estimateGas.
pub(crate) const ESTIMATE_GAS: u8 = 1;

/// Most bytes of requests and answers kept for one head: a bound on the memory the cache holds
/// whatever its entry limit, small beside the page cache (`--db-cache-size`).
const MAX_BYTES: usize = 8 << 20;

/// Largest call output kept: larger ones are rare, and cost little beside their transfer.
const MAX_OUTPUT: usize = 64 << 10;

/// Largest call input whose answers are kept: the key holds the input (as hex), and larger
/// inputs (big deployments) are rarely asked again.
pub(crate) const MAX_INPUT: usize = 64 << 10;

/// Longest params as sent that are looked up or kept as such: an input of [`MAX_INPUT`] bytes
/// in hex, and room for the rest of the call.
const MAX_SENT: usize = 2 * MAX_INPUT + 4096;

/// What an entry costs besides its key and output bytes (the map's slot, the key's box, the
/// answer), counted against [`MAX_BYTES`] so that many small answers stay within it too.
const ENTRY_OVERHEAD: usize = std::mem::size_of::<(Box<[u8]>, Answer)>() + 16;

/// A cached answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// eth_call: the return data, or the revert data when `reverted`.
    Call { output: Bytes, reverted: bool },
    /// eth_estimateGas.
    Gas(u64),
}

/// What a request is cached under: which method, and the request as JSON (serialized from its
/// parsed form, so spellings of the same value such as `0x01` and `0x1` share an entry).
pub(crate) fn key(method: u8, request: &impl serde::Serialize) -> Option<Vec<u8>> {
    let mut key = vec![method];
    serde_json::to_writer(&mut key, request).ok()?;
    Some(key)
}

/// See the module docs.
pub(crate) struct CallCache {
    max_entries: usize,
    head: Mutex<PerHead<HeadAnswers>>,
}

/// One head's answers.
#[derive(Default)]
struct HeadAnswers {
    bytes: usize,
    /// Entries of both maps (the limit counts them together).
    entries: usize,
    answers: HashMap<Box<[u8]>, Answer>,
    /// The same answers by params as sent, per method byte.
    sent: [HashMap<Arc<str>, Answer>; 2],
}

/// An eth_call's or eth_estimateGas's params as sent, in the call's extensions when the
/// dispatcher found no answer kept under them: the method keeps its answer under them too if
/// its block is the head by name.
#[derive(Clone)]
pub(crate) struct SentParams(Arc<str>);

impl CallCache {
    /// A cache of at most `max_entries` answers per head; 0 keeps none.
    pub(crate) fn new(max_entries: usize) -> Self {
        Self {
            max_entries,
            head: Mutex::default(),
        }
    }

    /// Whether answers are kept at all.
    pub(crate) fn enabled(&self) -> bool {
        self.max_entries > 0
    }

    /// The answer to `key` at the head `head`, if it was kept.
    pub(crate) fn get(&self, head: B256, key: &[u8]) -> Option<Answer> {
        self.head.lock().get(head)?.answers.get(key).cloned()
    }

    /// The answer to `method`'s `params` as sent at the head `head`, if it was kept.
    fn get_sent(&self, head: B256, method: u8, params: &str) -> Option<Answer> {
        let kept = self.head.lock();
        kept.get(head)?.sent[usize::from(method)]
            .get(params)
            .cloned()
    }

    /// Keeps `answer` to `key` (made by [`key`] for `method`), and to `sent` (the params as
    /// sent) if given, at `head`, the chain's head when the caller checked: a new hash drops
    /// the previous head's answers. Within the limits only (an entry under the params as sent
    /// counts as an entry, and its key's bytes; the output is shared).
    pub(crate) fn insert(
        &self,
        head: B256,
        (method, key): (u8, Vec<u8>),
        sent: Option<&SentParams>,
        answer: Answer,
    ) {
        let output = match &answer {
            Answer::Call { output, .. } if output.len() > MAX_OUTPUT => return,
            Answer::Call { output, .. } => output.len(),
            Answer::Gas(_) => 0,
        };
        let earlier = {
            let mut kept = self.head.lock();
            let (kept, earlier) = kept.for_head(head);
            let size = ENTRY_OVERHEAD + key.len() + output;
            if kept.entries < self.max_entries && kept.bytes + size <= MAX_BYTES {
                // Two misses of one request both insert: the second changes nothing.
                if let Entry::Vacant(slot) = kept.answers.entry(key.into_boxed_slice()) {
                    slot.insert(answer.clone());
                    kept.bytes += size;
                    kept.entries += 1;
                }
            }
            if let Some(SentParams(sent)) = sent {
                let size = ENTRY_OVERHEAD + sent.len();
                if kept.entries < self.max_entries && kept.bytes + size <= MAX_BYTES {
                    if let Entry::Vacant(slot) = kept.sent[usize::from(method)].entry(sent.clone())
                    {
                        slot.insert(answer);
                        kept.bytes += size;
                        kept.entries += 1;
                    }
                }
            }
            earlier
        };
        // The previous head's answers are freed outside the lock.
        drop(earlier);
    }
}

/// The answers kept at the head, looked up by the dispatcher before a call is parsed.
#[derive(Clone)]
pub(crate) struct KeptCalls {
    pub(crate) cache: Arc<CallCache>,
    pub(crate) chain: Arc<Chain>,
}

impl KeptCalls {
    /// `method`'s cache byte if its answers are kept by params as sent.
    pub(crate) fn method_byte(method: &str) -> Option<u8> {
        match method {
            "eth_call" => Some(CALL),
            "eth_estimateGas" => Some(ESTIMATE_GAS),
            _ => None,
        }
    }

    /// The answer kept at the head for `method`'s `params` as sent; if none, what the method
    /// may keep its answer under (`None` when the cache is off or the params too long).
    pub(crate) fn lookup(&self, method: u8, params: &str) -> Result<Answer, Option<SentParams>> {
        if !self.cache.enabled() || params.len() > MAX_SENT {
            return Err(None);
        }
        match self.cache.get_sent(self.chain.head().hash, method, params) {
            Some(answer) => Ok(answer),
            None => Err(Some(SentParams(Arc::from(params)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(byte: u8) -> Answer {
        Answer::Call {
            output: Bytes::from(vec![byte; 32]),
            reverted: false,
        }
    }

    #[test]
    fn answers_are_kept_for_their_head_only() {
        let cache = CallCache::new(16);
        let (a, b) = (B256::repeat_byte(1), B256::repeat_byte(2));
        let k = key(0, &("0xabc", 1)).unwrap();
        assert_eq!(cache.get(a, &k), None);
        cache.insert(a, (CALL, k.clone()), None, call(7));
        assert_eq!(cache.get(a, &k), Some(call(7)));
        // Another method's request of the same JSON is another entry.
        let gas = key(1, &("0xabc", 1)).unwrap();
        assert_eq!(cache.get(a, &gas), None);
        cache.insert(a, (ESTIMATE_GAS, gas.clone()), None, Answer::Gas(21_000));
        assert_eq!(cache.get(a, &gas), Some(Answer::Gas(21_000)));
        // The same answer kept twice (two misses of one request) is counted once.
        let bytes = cache.head.lock().get(a).unwrap().bytes;
        cache.insert(a, (ESTIMATE_GAS, gas.clone()), None, Answer::Gas(21_000));
        assert_eq!(cache.head.lock().get(a).unwrap().bytes, bytes);
        // A new head (or an unwind's) answers nothing of the old one, and drops it.
        assert_eq!(cache.get(b, &k), None);
        cache.insert(b, (CALL, k.clone()), None, call(8));
        assert_eq!(cache.get(b, &k), Some(call(8)));
        assert_eq!(cache.get(a, &k), None);
        assert_eq!(cache.get(b, &gas), None);
    }

    #[test]
    fn the_limits_hold() {
        let head = B256::repeat_byte(1);
        let cache = CallCache::new(2);
        for i in 0..4u8 {
            cache.insert(head, (CALL, vec![i]), None, call(i));
        }
        assert_eq!(cache.get(head, &[0]), Some(call(0)));
        assert_eq!(cache.get(head, &[1]), Some(call(1)));
        assert_eq!(cache.get(head, &[2]), None, "over the entry limit");

        let cache = CallCache::new(usize::MAX);
        let big = Answer::Call {
            output: Bytes::from(vec![0; MAX_OUTPUT + 1]),
            reverted: false,
        };
        cache.insert(head, (CALL, vec![0]), None, big);
        assert_eq!(cache.get(head, &[0]), None, "an output over MAX_OUTPUT");
        let mut kept = 0;
        for i in 0..=(MAX_BYTES / MAX_OUTPUT) as u32 {
            let answer = Answer::Call {
                output: Bytes::from(vec![0; MAX_OUTPUT]),
                reverted: false,
            };
            cache.insert(head, (CALL, i.to_be_bytes().to_vec()), None, answer);
            kept += usize::from(cache.get(head, &i.to_be_bytes()).is_some());
        }
        assert!(
            kept * (MAX_OUTPUT + ENTRY_OVERHEAD) <= MAX_BYTES,
            "{kept} outputs kept"
        );
        assert!(kept > 0);

        let off = CallCache::new(0);
        assert!(!off.enabled());
        off.insert(head, (CALL, vec![0]), None, call(0));
        assert_eq!(off.get(head, &[0]), None);
    }

    #[test]
    fn answers_by_params_as_sent_are_kept_for_their_head_and_method_only() {
        let cache = CallCache::new(16);
        let (a, b) = (B256::repeat_byte(1), B256::repeat_byte(2));
        let params = r#"[{"to":"0x0000000000000000000000000000000000000007"},"latest"]"#;
        let sent = SentParams(Arc::from(params));
        cache.insert(a, (CALL, key(CALL, &params).unwrap()), Some(&sent), call(7));
        assert_eq!(cache.get_sent(a, CALL, params), Some(call(7)));
        assert_eq!(cache.get_sent(a, ESTIMATE_GAS, params), None);
        assert_eq!(cache.get_sent(a, CALL, &params.replace(',', ", ")), None);
        assert_eq!(cache.get_sent(b, CALL, params), None);
        // Counted once however often it is kept.
        let bytes = cache.head.lock().get(a).unwrap().bytes;
        cache.insert(a, (CALL, key(CALL, &params).unwrap()), Some(&sent), call(7));
        assert_eq!(cache.head.lock().get(a).unwrap().bytes, bytes);
        cache.insert(
            b,
            (ESTIMATE_GAS, key(ESTIMATE_GAS, &params).unwrap()),
            Some(&sent),
            Answer::Gas(1),
        );
        assert_eq!(
            cache.get_sent(b, ESTIMATE_GAS, params),
            Some(Answer::Gas(1))
        );
        assert_eq!(
            cache.get_sent(a, CALL, params),
            None,
            "a new head drops them"
        );

        // Both kinds count against the entry limit, the parsed form first.
        let one = CallCache::new(1);
        let parsed = key(CALL, &params).unwrap();
        one.insert(a, (CALL, parsed.clone()), Some(&sent), call(7));
        assert_eq!(one.get(a, &parsed), Some(call(7)));
        assert_eq!(one.get_sent(a, CALL, params), None);
    }
}
