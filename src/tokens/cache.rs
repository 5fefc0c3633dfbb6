//! Token counts by text hash, bounded (see [`crate::memo`] for the invariants).

use crate::hash::text_key;
use crate::memo::{Memo, budgets};

/// Texts shorter than this are tokenized directly. Hashing and a lookup cost a
/// small fraction of tokenizing even 50 bytes (benches/RESULTS.md, 2026-12-05),
/// so all but the tiniest texts are worth remembering: a compaction measures
/// the same short assistant turns and call arguments before, while and after
/// it prunes.
pub(crate) const MIN_CACHED_BYTES: usize = 24;

pub(crate) type Key = (u128, usize);

/// Token counts by text: a [`Memo`] whose budget is counted in entries.
pub(crate) struct TokenCache(Memo<Key, u64>);

impl TokenCache {
    pub(crate) fn new() -> TokenCache {
        TokenCache(Memo::with_budget(budgets::TOKENS))
    }

    pub(crate) fn get_or_insert(&self, text: &str, count: impl FnOnce() -> u64) -> u64 {
        self.get_or_insert_key(text_key(text), count)
    }

    /// Same, for a key the caller computed (e.g. a hash of a JSON tree, so
    /// that a schema need not be serialized to be found).
    pub(crate) fn get_or_insert_key(&self, key: Key, count: impl FnOnce() -> u64) -> u64 {
        self.0.get_or_insert_with(key.0, key, count, |_| 1)
    }
}
