//! A bounded, sharded map from text hash to token count.
//!
//! Keys are 128-bit xxh3 hashes plus the text length, so a false hit needs a
//! 128-bit collision between two texts of the same length. Each shard is cleared
//! when it fills rather than evicting one entry at a time: the cache is an
//! accelerator, and a clear is O(1) amortized and keeps memory bounded.

use std::collections::HashMap;
use std::sync::Mutex;

/// Texts shorter than this are tokenized directly. Hashing and a lookup cost
/// tens of nanoseconds, tokenizing even 50 bytes a few microseconds, so all but
/// the tiniest texts are worth remembering: a compaction measures the same
/// short assistant turns and call arguments before, while and after it prunes.
pub(crate) const MIN_CACHED_BYTES: usize = 24;

const SHARDS: usize = 32;
/// Entries per shard before it is cleared. An entry is 48 B (key, count) plus a
/// control byte, and a map of 8,192 entries has 16,384 buckets (hashbrown keeps
/// 1/8 free and rounds up to a power of two): ~0.8 MB a shard, ~26 MB in all,
/// reached within the first GB of a run, so memory does not grow with the
/// archive. (At 1 << 15 it was ~100 MB, and a 4 GB run still filled shards a
/// 1 GB run had not: +11% peak RSS.) 262,144 counts are far more than one
/// session's messages, which is where re-counting happens.
const SHARD_CAPACITY: usize = 1 << 13;

pub(crate) type Key = (u128, usize);

pub(crate) struct TokenCache {
    shards: Vec<Mutex<HashMap<Key, u64>>>,
}

impl TokenCache {
    pub(crate) fn new() -> TokenCache {
        TokenCache { shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect() }
    }

    pub(crate) fn get_or_insert(&self, text: &str, count: impl FnOnce() -> u64) -> u64 {
        let hash = xxhash_rust::xxh3::xxh3_128(text.as_bytes());
        self.get_or_insert_key((hash, text.len()), count)
    }

    /// Same, for a key the caller computed (e.g. a hash of a JSON tree, so
    /// that a schema need not be serialized to be found).
    pub(crate) fn get_or_insert_key(&self, key: Key, count: impl FnOnce() -> u64) -> u64 {
        let hash = key.0;
        let shard = &self.shards[(hash as usize) % SHARDS];
        if let Ok(map) = shard.lock()
            && let Some(&n) = map.get(&key)
        {
            return n;
        }
        // Count outside the lock: tokenizing is the slow part and must run in parallel.
        let n = count();
        if let Ok(mut map) = shard.lock() {
            if map.len() >= SHARD_CAPACITY {
                map.clear();
            }
            map.insert(key, n);
        }
        n
    }
}
