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

use std::collections::{hash_map::Entry, HashMap};

use alloy_primitives::{Bytes, B256};
use parking_lot::Mutex;

use super::per_head::PerHead;

/// Most bytes of requests and answers kept for one head: a bound on the memory the cache holds
/// whatever its entry limit, small beside the page cache (`--db-cache-size`).
const MAX_BYTES: usize = 8 << 20;

/// Largest call output kept: larger ones are rare, and cost little beside their transfer.
const MAX_OUTPUT: usize = 64 << 10;

/// Largest call input whose answers are kept: the key holds the input (as hex), and larger
/// inputs (big deployments) are rarely asked again.
pub(crate) const MAX_INPUT: usize = 64 << 10;

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
    answers: HashMap<Box<[u8]>, Answer>,
}

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

    /// Keeps `answer` to `key` at `head`, the chain's head when the caller checked: a new hash
    /// drops the previous head's answers. Within the limits only.
    pub(crate) fn insert(&self, head: B256, key: Vec<u8>, answer: Answer) {
        let size = ENTRY_OVERHEAD
            + key.len()
            + match &answer {
                Answer::Call { output, .. } if output.len() > MAX_OUTPUT => return,
                Answer::Call { output, .. } => output.len(),
                Answer::Gas(_) => 0,
            };
        let earlier = {
            let mut kept = self.head.lock();
            let (kept, earlier) = kept.for_head(head);
            if kept.answers.len() < self.max_entries && kept.bytes + size <= MAX_BYTES {
                // Two misses of one request both insert: the second changes nothing.
                if let Entry::Vacant(slot) = kept.answers.entry(key.into_boxed_slice()) {
                    slot.insert(answer);
                    kept.bytes += size;
                }
            }
            earlier
        };
        // The previous head's answers are freed outside the lock.
        drop(earlier);
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
        cache.insert(a, k.clone(), call(7));
        assert_eq!(cache.get(a, &k), Some(call(7)));
        // Another method's request of the same JSON is another entry.
        let gas = key(1, &("0xabc", 1)).unwrap();
        assert_eq!(cache.get(a, &gas), None);
        cache.insert(a, gas.clone(), Answer::Gas(21_000));
        assert_eq!(cache.get(a, &gas), Some(Answer::Gas(21_000)));
        // The same answer kept twice (two misses of one request) is counted once.
        let bytes = cache.head.lock().get(a).unwrap().bytes;
        cache.insert(a, gas.clone(), Answer::Gas(21_000));
        assert_eq!(cache.head.lock().get(a).unwrap().bytes, bytes);
        // A new head (or an unwind's) answers nothing of the old one, and drops it.
        assert_eq!(cache.get(b, &k), None);
        cache.insert(b, k.clone(), call(8));
        assert_eq!(cache.get(b, &k), Some(call(8)));
        assert_eq!(cache.get(a, &k), None);
        assert_eq!(cache.get(b, &gas), None);
    }

    #[test]
    fn the_limits_hold() {
        let head = B256::repeat_byte(1);
        let cache = CallCache::new(2);
        for i in 0..4u8 {
            cache.insert(head, vec![i], call(i));
        }
        assert_eq!(cache.get(head, &[0]), Some(call(0)));
        assert_eq!(cache.get(head, &[1]), Some(call(1)));
        assert_eq!(cache.get(head, &[2]), None, "over the entry limit");

        let cache = CallCache::new(usize::MAX);
        let big = Answer::Call {
            output: Bytes::from(vec![0; MAX_OUTPUT + 1]),
            reverted: false,
        };
        cache.insert(head, vec![0], big);
        assert_eq!(cache.get(head, &[0]), None, "an output over MAX_OUTPUT");
        let mut kept = 0;
        for i in 0..=(MAX_BYTES / MAX_OUTPUT) as u32 {
            let answer = Answer::Call {
                output: Bytes::from(vec![0; MAX_OUTPUT]),
                reverted: false,
            };
            cache.insert(head, i.to_be_bytes().to_vec(), answer);
            kept += usize::from(cache.get(head, &i.to_be_bytes()).is_some());
        }
        assert!(
            kept * (MAX_OUTPUT + ENTRY_OVERHEAD) <= MAX_BYTES,
            "{kept} outputs kept"
        );
        assert!(kept > 0);

        let off = CallCache::new(0);
        assert!(!off.enabled());
        off.insert(head, vec![0], call(0));
        assert_eq!(off.get(head, &[0]), None);
    }
}
