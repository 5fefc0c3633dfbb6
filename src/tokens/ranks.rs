//! A vocabulary's tokens by their bytes: the rank (token id) of a byte
//! string, or `None` if it is not a token.
//!
//! What: a read-only open-addressing table of every token of a `bpe`
//! vocabulary, built once with the vocabulary (a few milliseconds, 2 MB for
//! `o200k_base`), and a direct table of the tokens of one and two bytes
//! (256 KB), which `tiktoken`'s merge asks for most: it starts by looking up
//! every pair of adjacent bytes. [`Ranks::get`] reads the direct table or
//! hashes the bytes and probes.
//!
//! Why: `bpe::BytePairEncoding` answers no such question in its public API,
//! and counting a piece needs it twice over (`tokens::piece`): a piece that is
//! a token is one token, found by one probe instead of an encoder's run; a
//! short piece that is not is counted by `tiktoken`'s merge, which asks the
//! rank of each pair it might merge.
//!
//! A token's rank is its id: `bpe` numbers the tokens of a `.tiktoken` file
//! in the file's order, which is the order of their ranks (`tiktoken` merges
//! by rank, and a test checks every id against `tiktoken-rs`'s decoder).
//!
//! Invariants: the table holds exactly the vocabulary's tokens, each once, and
//! is never written after it is built (shared by every thread, no lock).

use bpe_openai::byte_pair_encoding::BytePairEncoding;

/// Slots per token, at least: a load of at most one half keeps the probes of
/// a miss short (a byte string that is not a token ends at the first empty slot).
const SLOTS_PER_TOKEN: usize = 2;

/// Marks an empty slot (no vocabulary has 2^32 - 1 tokens).
const EMPTY: u32 = u32::MAX;

/// Entries of the direct table: every byte, then every pair of bytes.
const SHORT_SLOTS: usize = 256 + 256 * 256;

/// Where a byte string of one or two bytes sits in the direct table.
#[inline]
fn short_slot(bytes: &[u8]) -> Option<usize> {
    match *bytes {
        [b] => Some(b as usize),
        [a, b] => Some(256 + ((a as usize) << 8 | b as usize)),
        _ => None,
    }
}

/// The tokens of one vocabulary, by their bytes.
pub(crate) struct Ranks {
    bpe: &'static BytePairEncoding,
    /// The rank of the token of one byte `b` at `b`, of two bytes `a b` at
    /// `256 + (a << 8 | b)`, or [`EMPTY`]: [`SHORT_SLOTS`] entries.
    short: Box<[u32]>,
    /// Token ids at the slot their bytes hash to, or the next free one after
    /// it (linear probing); [`EMPTY`] elsewhere. Length a power of two.
    slots: Box<[u32]>,
    /// The longest token, in bytes: no longer byte string is looked up.
    longest: usize,
}

impl Ranks {
    /// The table of every token of `bpe`.
    pub(crate) fn new(bpe: &'static BytePairEncoding) -> Ranks {
        let n = bpe.num_tokens();
        let len = (n * SLOTS_PER_TOKEN).next_power_of_two().max(1);
        let mut slots = vec![EMPTY; len].into_boxed_slice();
        let mut short = vec![EMPTY; SHORT_SLOTS].into_boxed_slice();
        let mut longest = 0;
        for id in 0..n as u32 {
            let bytes = bpe.token_bytes(id);
            longest = longest.max(bytes.len());
            if let Some(at) = short_slot(bytes) {
                short[at] = id;
                continue;
            }
            let mut at = slot_of(bytes, len);
            while slots[at] != EMPTY {
                at = (at + 1) & (len - 1);
            }
            slots[at] = id;
        }
        Ranks { bpe, short, slots, longest }
    }

    /// The rank (id) of the token whose bytes are `bytes`, if there is one.
    #[inline]
    pub(crate) fn get(&self, bytes: &[u8]) -> Option<u32> {
        if let Some(at) = short_slot(bytes) {
            let id = self.short[at];
            return (id != EMPTY).then_some(id);
        }
        if bytes.is_empty() || bytes.len() > self.longest {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = slot_of(bytes, self.slots.len());
        loop {
            let id = self.slots[at];
            if id == EMPTY {
                return None;
            }
            if self.bpe.token_bytes(id) == bytes {
                return Some(id);
            }
            at = (at + 1) & mask;
        }
    }
}

/// The first slot to try for `bytes` in a table of `len` slots (a power of two).
#[inline]
fn slot_of(bytes: &[u8], len: usize) -> usize {
    (crate::hash::short64(bytes) as usize) & (len - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each vocabulary with `tiktoken-rs`'s build of the same file.
    fn vocabularies() -> [(&'static BytePairEncoding, &'static tiktoken_rs::CoreBPE); 2] {
        [
            (&bpe_openai::o200k_base().bpe, tiktoken_rs::o200k_base_singleton()),
            (&bpe_openai::cl100k_base().bpe, tiktoken_rs::cl100k_base_singleton()),
        ]
    }

    /// Every token is found under its own id, that id is its rank in
    /// `tiktoken` (whose decoder maps it back to the same bytes), and `bpe`
    /// counts it as one token (what `tokens::piece` relies on).
    #[test]
    fn every_token_is_found_at_its_rank_and_counts_one() {
        for (bpe, tiktoken) in vocabularies() {
            let ranks = Ranks::new(bpe);
            for id in 0..bpe.num_tokens() as u32 {
                let bytes = bpe.token_bytes(id);
                assert_eq!(ranks.get(bytes), Some(id), "token {id} {bytes:?}");
                assert_eq!(tiktoken.decode_bytes(&[id]).ok().as_deref(), Some(bytes), "rank {id}");
                assert_eq!(bpe.count(bytes), 1, "token {id} {bytes:?}");
            }
        }
    }

    #[test]
    fn byte_strings_that_are_not_tokens_are_not_found() {
        for (bpe, _) in vocabularies() {
            let ranks = Ranks::new(bpe);
            for bytes in [&b""[..], b" compactor", b"\xff\xfe", &[b'x'; 300][..]] {
                assert_eq!(ranks.get(bytes), None, "{bytes:?}");
                assert_ne!(bpe.count(bytes), 1, "{bytes:?} is one token after all");
            }
            assert!(ranks.get(b" hello").is_some() && ranks.get(b"\n").is_some());
            // Every byte is a token; of the pairs, some are not.
            assert!((0..=255u8).all(|b| ranks.get(&[b]).is_some()));
            assert!(ranks.get(b"\xff\xfe").is_none() && ranks.get(b"in").is_some());
        }
    }
}
