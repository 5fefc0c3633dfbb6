//! Hashing: every hash the crate computes, in one place.
//!
//! All but [`short64`] (and the map hasher below) are XXH3 with seed 0
//! (`xxhash-rust`); clippy's `disallowed-methods` and `disallowed-types` (see
//! `clippy.toml`) keep its functions out of every other module. What a hash promises depends on where it goes:
//!
//! | what | function | bits | lives |
//! |---|---|---|---|
//! | memo keys: a text, a few texts ([`text_key`], [`texts_hash`]) | XXH3-128 | 128 | in the process |
//! | a message's prompt-cache key (`model::key`), a JSON tree's token-count key (`tokens`), the tool-family map's texts | [`Digest`] | 128 | in the process |
//! | a session's shard (`pipeline::shard`) | [`of64`] | 64 | published: the Spark/Ray workers compute the same (Python `xxhash.xxh3_64_intdigest`) |
//! | a token's slot in a vocabulary's rank table (`tokens::ranks`) | [`short64`] (a multiply per 8 bytes) | 64 | in the process |
//! | an input file's fingerprint in `summary.json` (`report::fingerprint`) | [`Digest`] | 64, hex | on disk: `check` compares runs by it |
//! | the options hash of a manifest (`io::manifest`) | [`of128`] | 128, hex | on disk: `--resume` compares it |
//! | a summarizer cache key (`summarizer::cache`) | [`Digest`] | 128, hex | on disk: the cache file's name |
//! | a written Claude Code event's uuid (`formats::claude_code`) | [`of128`] | 128 | in outputs |
//!
//! The ones on disk or in outputs must never change for the same input: a
//! change here is a change of a file format. None is a security check (XXH3 is
//! not keyed; what is hashed is the user's own data).
//!
//! The map hasher for keys that are already such hashes is [`KeyHasher`].

mod key_hasher;
mod short;

pub(crate) use key_hasher::KeyHasher;
pub(crate) use short::short64;

// The one module that may name the hash functions themselves.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
use xxhash_rust::xxh3::{Xxh3, xxh3_64, xxh3_128};

/// XXH3-64 of `bytes`.
#[allow(clippy::disallowed_methods)]
pub(crate) fn of64(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

/// XXH3-128 of `bytes`.
#[allow(clippy::disallowed_methods)]
pub(crate) fn of128(bytes: &[u8]) -> u128 {
    xxh3_128(bytes)
}

/// A hash fed piece by piece: XXH3 of the concatenated pieces, in 64 or 128
/// bits (the same as [`of64`] / [`of128`] of the whole).
#[allow(clippy::disallowed_types)]
pub(crate) struct Digest(Xxh3);

#[allow(clippy::disallowed_types, clippy::disallowed_methods)]
impl Digest {
    pub(crate) fn new() -> Digest {
        Digest(Xxh3::new())
    }

    #[inline]
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub(crate) fn finish64(&self) -> u64 {
        self.0.digest()
    }

    pub(crate) fn finish128(&self) -> u128 {
        self.0.digest128()
    }
}

/// The key of a text: its XXH3-128 hash and its length.
pub(crate) fn text_key(text: &str) -> (u128, usize) {
    (of128(text.as_bytes()), text.len())
}

/// One XXH3-128 hash of several texts, each after its length (so that no two
/// lists of texts run together into the same bytes), then of `flags`: the key
/// of a value computed from a few texts (a call and its result).
pub(crate) fn texts_hash<'t>(texts: impl IntoIterator<Item = &'t str>, flags: &[u8]) -> u128 {
    let mut h = Digest::new();
    for t in texts {
        h.update(&t.len().to_le_bytes());
        h.update(t.as_bytes());
    }
    h.update(flags);
    h.finish128()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hashes that go to disk or to other programs are pinned: a change of
    /// one of these values is a change of a file format (see the module doc).
    #[test]
    fn published_hashes_keep_their_values() {
        // XXH3-64 of "" with seed 0, the published test vector.
        assert_eq!(of64(b""), 0x2d06_8005_38d3_94c2);
        // The shard workers compute xxh3_64 of the id; pinned in pipeline::shard too.
        let mut d = Digest::new();
        d.update(b"ab");
        d.update(b"c");
        assert_eq!(d.finish64(), of64(b"abc"));
        assert_eq!(d.finish128(), of128(b"abc"));
        assert_eq!(of128(b""), 0x99aa_06d3_0147_98d8_6001_c324_468d_497f);
    }

    /// Texts that run together into the same bytes, or differ only in their
    /// flags, hash apart; the same texts and flags hash alike.
    #[test]
    fn texts_hash_tells_lists_apart() {
        let h = |texts: &[&str], flags: &[u8]| texts_hash(texts.iter().copied(), flags);
        assert_eq!(h(&["ab", "c"], &[1]), h(&["ab", "c"], &[1]));
        assert_ne!(h(&["ab", "c"], &[1]), h(&["a", "bc"], &[1]));
        assert_ne!(h(&["ab", ""], &[1]), h(&["ab"], &[0, 1]));
        assert_ne!(h(&["ab", "c"], &[1]), h(&["ab", "c"], &[0]));
        assert_ne!(h(&[], &[]), h(&[""], &[]));
    }
}
