//! What is kept for the head block only (the RPC's head block JSON and eth_call and
//! eth_estimateGas answers, Karma's sender statuses for the next block): a value tagged with the
//! head's hash, which is never read for another hash and starts afresh when something is kept
//! for a new one (a new head, or an unwind's, whose hash differs).
//!
//! Callers keep a value only once they know it was computed at that block, so a request that
//! began before a newer head or an unwind cannot file its answer under the wrong hash.

use alloy_primitives::B256;

/// A `T` kept for the head block `hash`.
#[derive(Debug, Default)]
pub struct PerHead<T> {
    hash: B256,
    value: T,
}

impl<T: Default> PerHead<T> {
    /// What is kept for `head`, if that is the head it was kept for.
    pub fn get(&self, head: B256) -> Option<&T> {
        (self.hash == head).then_some(&self.value)
    }

    /// What is kept for `head`, to add to: for another head than before, the earlier head's
    /// value is returned for the caller to drop (outside its lock) and an empty one is kept.
    pub fn for_head(&mut self, head: B256) -> (&mut T, Option<T>) {
        let earlier = (self.hash != head).then(|| {
            self.hash = head;
            std::mem::take(&mut self.value)
        });
        (&mut self.value, earlier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_read_for_its_head_only_and_a_new_head_starts_afresh() {
        let (a, b) = (B256::repeat_byte(1), B256::repeat_byte(2));
        let mut kept = PerHead::<Vec<u8>>::default();
        assert_eq!(kept.get(a), None);
        let (value, earlier) = kept.for_head(a);
        value.push(1);
        assert_eq!(earlier, Some(vec![]));
        let (value, earlier) = kept.for_head(a);
        value.push(2);
        assert_eq!(earlier, None);
        assert_eq!(kept.get(a), Some(&vec![1, 2]));
        assert_eq!(kept.get(b), None);
        let (_, earlier) = kept.for_head(b);
        assert_eq!(earlier, Some(vec![1, 2]));
        assert_eq!(kept.get(a), None);
        assert_eq!(kept.get(b), Some(&vec![]));
    }
}
