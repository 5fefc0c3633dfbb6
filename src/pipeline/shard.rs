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
        crate::hash::of64(id.as_bytes()) % count.max(1)
    }

    /// Returns true if and only if the session with this id belongs to this shard.
    pub fn contains(&self, id: &str) -> bool {
        Shard::of(id, self.count) == self.index
    }
}

/// Whether `shard` (none: every one) takes what is keyed by `key`: a
/// session's id, or the source of a record that has none.
pub fn selects(shard: Option<Shard>, key: &str) -> bool {
    shard.is_none_or(|s| s.contains(key))
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

    /// XXH3-64, seed 0, of the id's UTF-8 bytes, mod N: these shards must
    /// never change (shards of a run started with one release must be merged
    /// by another). The literals come from another implementation of the
    /// published function (Python's `xxhash` 3.x, `xxh3_64_intdigest`), not
    /// from this code.
    #[test]
    fn the_hash_is_fixed() {
        for (id, hash, of_4, of_7) in [
            ("", 0x2d06_8005_38d3_94c2, 2, 4),
            ("a", 0xe6c6_32b6_1e96_4e1f, 3, 1),
            ("session-1", 0xc07e_a649_48c9_a305, 1, 3),
            ("corpus.parquet[3]", 0x8bdb_14ab_95e7_3cda, 2, 6),
            ("openai.jsonl:7", 0x894e_1831_30b1_2055, 1, 1),
        ] {
            // Every hash here is below u64::MAX, so mod u64::MAX is the hash itself.
            assert_eq!(Shard::of(id, u64::MAX), hash, "{id:?}");
            assert_eq!((Shard::of(id, 4), Shard::of(id, 7)), (of_4, of_7), "{id:?}");
        }
        // One shard (or a count of 0, read as 1) holds every id.
        assert_eq!((Shard::of("a", 1), Shard::of("a", 0)), (0, 0));
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
