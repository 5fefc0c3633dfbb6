//! A bounded, sharded, thread-safe memo of a pure function of text.
//!
//! Some things are computed again and again on the same texts: token counts
//! (a compaction measures the same turns before, while and after it prunes),
//! anchor scans (the summary region, then the whole session for retention;
//! a call's arguments with the strings they hold), parsed call arguments (the
//! summary, the tool-result descriptions and the tool families each read
//! them), and what stage 2 and the summary make of a call, its result and a
//! turn (a description, shrunk arguments, an action's target and outcome, the
//! sentences quoted): `report` does it for three modes and at every replay
//! trigger. Each is remembered here by a 128-bit hash of its input. A
//! [`Memo`] is a value, never a static: its owner (a `Meter`, or
//! `policy::Caches`, owned by the run) decides how long it lives.
//!
//! ## Invariants
//! - A memo changes no result, only its cost: what it holds is a pure function
//!   of the key, and a miss computes it afresh. Keys hold the hash *and* the
//!   text length, so a false hit needs a 128-bit collision between two texts
//!   of the same length.
//! - Memory is bounded: each shard has a budget (in whatever unit its user
//!   measures entries: entries, bytes) and is cleared when an insert would pass
//!   it. A clear is O(1) amortized and needs no eviction order; the memo is an
//!   accelerator and the texts worth remembering come back within one session.
//! - The value is computed outside the lock, so slow work (tokenizing) runs on
//!   every thread at once; two threads may compute the same value, and the
//!   second insert replaces an equal value.

pub(crate) mod budgets;
pub(crate) mod call_args;

use crate::hash::KeyHasher;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};
use std::sync::Mutex;

/// One shard: entries, and how much of the budget they use.
struct Shard<K, V> {
    map: HashMap<K, V, BuildHasherDefault<KeyHasher>>,
    used: usize,
}

pub(crate) struct Memo<K, V> {
    shards: Box<[Mutex<Shard<K, V>>]>,
    shard_budget: usize,
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    /// A memo of `budget` (see [`budgets`]).
    pub(crate) fn with_budget(budget: budgets::Budget) -> Memo<K, V> {
        Memo::new(budget.shards, budget.per_shard)
    }

    /// A memo of `shards` shards, each cleared when its entries' costs would
    /// pass `shard_budget`.
    pub(crate) fn new(shards: usize, shard_budget: usize) -> Memo<K, V> {
        let shards = (0..shards.max(1))
            .map(|_| Mutex::new(Shard { map: HashMap::default(), used: 0 }))
            .collect();
        Memo { shards, shard_budget }
    }

    /// The value of `key`, computed by `compute` on a miss and remembered at
    /// `cost(&value)` of its shard's budget. `hash` picks the shard (the key's
    /// text hash: its low bits are as good as any).
    pub(crate) fn get_or_insert_with(
        &self,
        hash: u128,
        key: K,
        compute: impl FnOnce() -> V,
        cost: impl FnOnce(&V) -> usize,
    ) -> V {
        let shard = &self.shards[(hash as usize) % self.shards.len()];
        if let Ok(guard) = shard.lock()
            && let Some(hit) = guard.map.get(&key)
        {
            return hit.clone();
        }
        let value = compute();
        let size = cost(&value);
        // A poisoned lock (a panic elsewhere while holding it) only loses the insert.
        if let Ok(mut guard) = shard.lock() {
            if guard.used + size > self.shard_budget {
                guard.map.clear();
                guard.used = 0;
            }
            if guard.map.insert(key, value.clone()).is_none() {
                guard.used += size;
            }
        }
        value
    }

    /// Budget in use over all shards (for tests of the bound).
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map_or(0, |g| g.used)).sum()
    }

    /// Entries over all shards.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map_or(0, |g| g.map.len())).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::text_key;
    use std::cell::Cell;

    #[test]
    fn a_hit_returns_the_remembered_value_without_computing() {
        let memo: Memo<(u128, usize), u64> = Memo::new(4, 100);
        let calls = Cell::new(0);
        for _ in 0..3 {
            let key = text_key("hello");
            let v = memo.get_or_insert_with(
                key.0,
                key,
                || {
                    calls.set(calls.get() + 1);
                    42
                },
                |_| 1,
            );
            assert_eq!(v, 42);
        }
        assert_eq!(calls.get(), 1);
        assert_eq!((memo.len(), memo.used()), (1, 1));
    }

    /// Filling past the budget clears a shard: the bound holds and every answer
    /// stays the computed one.
    #[test]
    fn a_full_shard_is_cleared_and_answers_stay_right() {
        let memo: Memo<u64, u64> = Memo::new(2, 10);
        for _ in 0..3 {
            for i in 0..100u64 {
                let v = memo.get_or_insert_with(u128::from(i), i, || i * 7, |_| 3);
                assert_eq!(v, i * 7);
                assert!(memo.used() <= 2 * 10, "{}", memo.used());
            }
        }
        // Each shard holds at most 10 / 3 entries of cost 3.
        assert!(memo.len() <= 2 * 3, "{}", memo.len());
    }

    /// An entry costlier than a whole shard is computed and returned, then
    /// cleared by the next insert into that shard.
    #[test]
    fn an_entry_larger_than_the_budget_is_still_answered() {
        let memo: Memo<u64, String> = Memo::new(1, 4);
        let big = memo.get_or_insert_with(0, 0, || "x".repeat(10), String::len);
        assert_eq!(big.len(), 10);
        let small = memo.get_or_insert_with(1, 1, || "y".into(), String::len);
        assert_eq!(small, "y");
        assert_eq!(memo.used(), 1);
    }
}
