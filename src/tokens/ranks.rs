//! A vocabulary's tokens by their bytes: the rank (token id) of a byte
//! string, or `None` if it is not a token.
//!
//! What: a read-only open-addressing table of every token of a `bpe`
//! vocabulary, built once with the vocabulary (4 bytes a slot: 1.3 MB for
//! `o200k_base`), and a direct table of the tokens of one and two bytes
//! (256 KB), which `tiktoken`'s merge asks for most: it starts by looking up
//! every pair of adjacent bytes. [`Ranks::get`] reads the direct table, or
//! hashes the bytes and probes; each slot holds a token's id and a few more
//! bits of its hash, so that a probe compares bytes only with a token whose
//! hash agrees there (a miss, most of the merge's questions, reads a run of
//! slots and no token).
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

use crate::hash::short64;
use bpe_openai::byte_pair_encoding::BytePairEncoding;

/// Slots per token, as a fraction: a load of 5/8, where a hit reads ~2 slots
/// and a miss ~4 (linear probing), comparing no bytes but the token's. A
/// power of two costs either way: at a load of 0.76 more probe instructions in
/// `stats`, at 0.38 more memory (benches/RESULTS.md, 2026-12-05).
const SLOTS_PER_TOKEN: (usize, usize) = (8, 5);

/// Marks an empty slot: its id bits, all ones, are no token's id (see [`Ranks::new`]).
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
    /// The longer tokens, each at the slot its bytes hash to or the next free
    /// one after it (linear probing), as `id | tag << id_bits` where `tag` is
    /// [`Ranks::tag`] of its hash; [`EMPTY`] elsewhere.
    slots: Box<[u32]>,
    /// Bits of a slot that hold the id: enough for every id and for one more
    /// value, all ones, that no id takes.
    id_bits: u32,
    /// The longest token, in bytes: no longer byte string is looked up.
    longest: usize,
}

impl Ranks {
    /// The table of every token of `bpe`.
    pub(crate) fn new(bpe: &'static BytePairEncoding) -> Ranks {
        let n = bpe.num_tokens();
        let id_bits = (n + 1).next_power_of_two().trailing_zeros();
        let len = (n * SLOTS_PER_TOKEN.0 / SLOTS_PER_TOKEN.1).max(1);
        let mut ranks = Ranks {
            bpe,
            short: vec![EMPTY; SHORT_SLOTS].into_boxed_slice(),
            slots: vec![EMPTY; len].into_boxed_slice(),
            id_bits,
            longest: 0,
        };
        for id in 0..n as u32 {
            let bytes = bpe.token_bytes(id);
            ranks.longest = ranks.longest.max(bytes.len());
            if let Some(at) = short_slot(bytes) {
                ranks.short[at] = id;
                continue;
            }
            let h = short64(bytes);
            let mut at = ranks.first_slot(h);
            while ranks.slots[at] != EMPTY {
                at = ranks.after(at);
            }
            ranks.slots[at] = id | ranks.tag(h).checked_shl(id_bits).unwrap_or(0);
        }
        ranks
    }

    /// The slot a byte string of hash `h` is looked for first: the high bits
    /// of `h` scaled to the table's length (a multiply, no division).
    #[inline]
    fn first_slot(&self, h: u64) -> usize {
        ((u128::from(h) * self.slots.len() as u128) >> 64) as usize
    }

    /// The slot probed after `at`.
    #[inline]
    fn after(&self, at: usize) -> usize {
        if at + 1 == self.slots.len() { 0 } else { at + 1 }
    }

    /// The bits of hash `h` a slot keeps beside the id: low ones, which
    /// [`Ranks::first_slot`] hardly uses.
    #[inline]
    fn tag(&self, h: u64) -> u32 {
        (h as u32).checked_shr(self.id_bits).unwrap_or(0)
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
        let h = short64(bytes);
        let tag = self.tag(h);
        let id_mask = EMPTY.checked_shr(32 - self.id_bits).unwrap_or(0);
        let mut at = self.first_slot(h);
        loop {
            let slot = self.slots[at];
            if slot == EMPTY {
                return None;
            }
            if slot.checked_shr(self.id_bits).unwrap_or(0) == tag {
                let id = slot & id_mask;
                if self.bpe.token_bytes(id) == bytes {
                    return Some(id);
                }
            }
            at = self.after(at);
        }
    }
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
