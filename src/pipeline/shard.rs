//! Deterministic sharding (`--shard K/N`): which sessions one of N
//! independent workers processes.
//!
//! ## What it does
//! A session belongs to shard `xxh3_64(id) mod N`, where `id` is the session's
//! stable id as the reports print it ([`Session::id`](crate::model::Session)):
//! the record's own `id` / `session_id` / `conversation_id` / `uuid` field when
//! it has one, else its source (`path:line`, `path[row]`, or the
//! `--source-column` cell). xxh3 is XXH3-64 with seed 0 over the id's UTF-8
//! bytes: a fixed, published function, the same on every machine, platform and
//! release (std's `DefaultHasher` is not, and `RandomState` is random on purpose).
//!
//! ## Why
//! Array jobs (Slurm, Kubernetes indexed Jobs) give each worker only its index.
//! With a hash of the id, N workers over the same inputs cover every session
//! exactly once, with no coordination and no shared state; reports of the
//! shards merge back into the unsharded report (`compactor report --merge`).
//!
//! ## Invariants
//! - For a given N, every id is in exactly one shard `0 <= K < N`.
//! - Sessions without an id of their own are keyed by their source, so every
//!   worker must be given the inputs under the same names (same paths, same
//!   order); the README says so.

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The shard an id falls in, for `count` shards.
    pub fn of(id: &str, count: u64) -> u64 {
        xxhash_rust::xxh3::xxh3_64(id.as_bytes()) % count.max(1)
    }

    /// Returns true if and only if the session with this id belongs to this shard.
    pub fn contains(&self, id: &str) -> bool {
        Shard::of(id, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("expected K/N with 0 <= K < N (e.g. 0/4), got `{s}`");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        assert_eq!("1/4".parse::<Shard>(), Ok(Shard { index: 1, count: 4 }));
        for bad in ["4/4", "0/0", "1", "a/2", "-1/2", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_hash_is_fixed() {
        // XXH3-64, seed 0: these values must never change (shards of a run
        // started with one release must be merged by another).
        assert_eq!(xxhash_rust::xxh3::xxh3_64(b""), 0x2d06800538d394c2);
        let ids = ["a", "session-1", "corpus.parquet[3]"];
        let shards: Vec<u64> = ids.iter().map(|id| Shard::of(id, 4)).collect();
        assert_eq!(
            shards,
            ids.iter().map(|id| xxhash_rust::xxh3::xxh3_64(id.as_bytes()) % 4).collect::<Vec<_>>()
        );
    }

    #[test]
    fn every_id_is_in_exactly_one_shard() {
        for i in 0..1000 {
            let id = format!("s{i}");
            let n = (0..4).filter(|k| Shard { index: *k, count: 4 }.contains(&id)).count();
            assert_eq!(n, 1);
        }
    }
}
