//! Tokens of one piece of the pre-split (a word, a run of spaces or of
//! punctuation), counted without `bpe`'s encoder for all but long pieces.
//!
//! What: [`count`] answers 1 for a piece that is a token (one probe of
//! [`Ranks`]), runs `tiktoken`'s merge on a piece of at most
//! [`MERGED_MAX_BYTES`] that is not, and leaves a longer one to
//! `bpe::BytePairEncoding::count`.
//!
//! Why: `BytePairEncoding::count` builds a fresh encoder for every piece (a
//! `Vec` of tokens and a bit field: two allocations) and finds each token by
//! walking an Aho-Corasick automaton of megabytes byte by byte, one dependent
//! load per byte, then checks the pair against the merges in a hash map. On
//! the distinct copies of the corpus most pieces were whole tokens;
//! `benches/RESULTS.md` (2026-12-04) has the share, and the instructions and
//! times before and after.
//!
//! Why the count is exact: both are `tiktoken`'s own rules.
//! - A piece that is a token encodes as that token: `tiktoken` looks a piece
//!   up in its ranks first (`CoreBPE::encode_ordinary`), and `bpe` checks when
//!   it builds a vocabulary that every token encodes to itself (a test counts
//!   every token with `bpe` and finds 1).
//! - [`merged`] is `tiktoken`'s `_byte_pair_merge` (openai/tiktoken
//!   `src/lib.rs`, as vendored in tiktoken-rs 0.12.1 `src/vendor_tiktoken.rs`),
//!   which `tiktoken` runs on every piece shorter than 100 bytes: merge the
//!   adjacent pair of lowest rank (the leftmost among equals) until no pair is
//!   a token; the count is the number of parts left. The ranks are `bpe`'s
//!   token ids (see [`Ranks`]). A proptest pins it to `bpe`'s count, and the
//!   integration tests pin every count of the fixtures and the corpus to
//!   `tiktoken-rs`.
//!
//! Example (`o200k_base`): `" hello"` is a token: 1. `" compactor"` is not:
//! merged into `" compact"` + `"or"`: 2.

use super::ranks::Ranks;
use bpe_openai::byte_pair_encoding::BytePairEncoding;

/// Longest piece counted by the merge, in bytes. The merge rescans its parts
/// after each step (quadratic in the piece); longer pieces, rare (runs of
/// spaces or `=`, long identifiers), go to `bpe`'s linear encoder. Our
/// choice, below `tiktoken`'s own limit of 100 for the same loop.
pub(crate) const MERGED_MAX_BYTES: usize = 64;

/// Marks a pair that is no token (`tiktoken`'s `Rank::MAX`).
const NO_RANK: u32 = u32::MAX;

/// Tokens of `piece` in the vocabulary of `ranks` and `bpe` (the same one).
#[inline]
pub(crate) fn count(ranks: &Ranks, bpe: &BytePairEncoding, piece: &[u8]) -> u64 {
    if piece.is_empty() {
        return 0;
    }
    if ranks.get(piece).is_some() {
        return 1;
    }
    if piece.len() <= MERGED_MAX_BYTES {
        return merged(ranks, piece);
    }
    bpe.count(piece) as u64
}

/// `tiktoken`'s merge of a piece of 2 to [`MERGED_MAX_BYTES`] bytes: the
/// number of parts left. The parts are a list linked through arrays on the
/// stack, indexed by where each part starts: `next[k]` is where the part after
/// it starts (`n` after the last), `rank[k]` the rank of part `k` merged with
/// that next part. `tiktoken` keeps them in a vector and removes the merged
/// part, moving the rest; the order it scans them in is the same.
fn merged(ranks: &Ranks, piece: &[u8]) -> u64 {
    let n = piece.len();
    debug_assert!((2..=MERGED_MAX_BYTES).contains(&n));
    let mut next = [0u8; MERGED_MAX_BYTES];
    let mut rank = [NO_RANK; MERGED_MAX_BYTES];
    for (i, next) in next[..n].iter_mut().enumerate() {
        *next = (i + 1) as u8;
    }
    for i in 0..n - 1 {
        rank[i] = ranks.get(&piece[i..i + 2]).unwrap_or(NO_RANK);
    }
    let mut parts = n as u64;
    loop {
        // The pair of lowest rank, the leftmost of equals, and the part before it.
        let (mut best, mut at, mut before) = (NO_RANK, 0, None);
        let (mut k, mut prev) = (0, None);
        while k < n {
            if rank[k] < best {
                (best, at, before) = (rank[k], k, prev);
            }
            prev = Some(k);
            k = next[k] as usize;
        }
        if best == NO_RANK {
            return parts;
        }
        // Part `at` takes in the part after it, up to `end`.
        let end = next[next[at] as usize] as usize;
        next[at] = end as u8;
        parts -= 1;
        rank[at] = if end < n {
            ranks.get(&piece[at..next[end] as usize]).unwrap_or(NO_RANK)
        } else {
            NO_RANK
        };
        if let Some(p) = before {
            rank[p] = ranks.get(&piece[p..end]).unwrap_or(NO_RANK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::joined::joined;
    use proptest::prelude::*;
    use std::sync::LazyLock;

    static O200K: LazyLock<Ranks> = LazyLock::new(|| Ranks::new(&bpe_openai::o200k_base().bpe));
    static CL100K: LazyLock<Ranks> = LazyLock::new(|| Ranks::new(&bpe_openai::cl100k_base().bpe));

    fn o200k() -> (&'static Ranks, &'static BytePairEncoding) {
        (&O200K, &bpe_openai::o200k_base().bpe)
    }

    #[test]
    fn the_module_example() {
        let (ranks, bpe) = o200k();
        assert_eq!(count(ranks, bpe, b" hello"), 1);
        assert_eq!(count(ranks, bpe, b" compactor"), 2);
        assert_eq!(merged(ranks, b" compactor"), 2);
        assert_eq!(count(ranks, bpe, b""), 0);
    }

    /// Pieces of every length up to past the merge's limit, both ways.
    #[test]
    fn long_and_short_pieces_count_as_bpe_counts() {
        let (ranks, bpe) = o200k();
        let text =
            "thequickbrownfoxjumpsoverthelazydog_0123456789ABCDEFGHIJ=====ééé🙂xyz".repeat(3);
        let bytes = text.as_bytes();
        for n in 1..=bytes.len().min(MERGED_MAX_BYTES + 20) {
            let piece = &bytes[..n];
            assert_eq!(count(ranks, bpe, piece), bpe.count(piece) as u64, "{n} bytes");
        }
    }

    /// Characters that make pieces of many tokens: letters that seldom meet,
    /// digits, punctuation, spaces, and multi-byte characters whose bytes
    /// merge in odd ways.
    #[rustfmt::skip]
    const ALPHABET: &[&str] = &[
        "a", "e", "q", "x", "z", "th", "ing", "Q", "Z", "0", "7", "_", "=", "-", "/", "\\", " ",
        "  ", "\t", "\n", "é", "日", "本", "🙂", "\u{301}", "ж", "ʰ", "\u{a0}", "\u{7f}", "\u{0}",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// The merge counts what `bpe`'s encoder counts, in both vocabularies.
        #[test]
        fn merged_counts_equal_bpes(text in joined(ALPHABET, 1..24)) {
            let bytes = &text.as_bytes()[..text.len().min(MERGED_MAX_BYTES)];
            for (ranks, bpe) in
                [(&*O200K, &bpe_openai::o200k_base().bpe), (&*CL100K, &bpe_openai::cl100k_base().bpe)]
            {
                prop_assert_eq!(count(ranks, bpe, bytes), bpe.count(bytes) as u64, "{:?}", bytes);
            }
        }
    }
}
