//! Cutting a long text where its BPE count is cut anyway, so that it can be
//! counted line by line through the cache.
//!
//! Why: the texts a run measures are often mostly lines it has measured before
//! in another text. A summary is rendered, found over budget and rendered
//! again with shorter lists; each replay trigger's summary carries the lines of
//! the one before; a file is read, edited and read again. The whole-text cache
//! misses on each of these; a cache of lines does not. Measured with callgrind
//! (instructions, `-j1`): fewer for both `report` and `compact` on the bench
//! corpus's compacted sessions and on `../shared/corpus` (benches/RESULTS.md,
//! 2026-12-01, evening).
//!
//! Why the count is exact: both BPE vocabularies (`o200k_base`, `cl100k_base`)
//! first cut a text into pieces with a regex and encode each piece alone, so a
//! text's count is the sum of its pieces' counts. A cut between `a` and `b` is
//! harmless when the pieces of `a + b` are the pieces of `a` followed by those of
//! `b`. That holds when `a` ends with `\n` and `b` starts with an ASCII character
//! that is neither white space nor `/`:
//! - no alternative of either pattern can match across that point: the letter,
//!   number and contraction alternatives hold no `\n`; the white-space ones
//!   (`\s*[\r\n]+`, `\s+(?!\S)`, `\s+`) stop at a non-space; the punctuation one
//!   (` ?[^\s\p{L}\p{N}]+[\r\n/]*`, `[\r\n]*` in cl100k) runs on after a newline
//!   only into `\r`, `\n` or `/`;
//! - so the piece holding `a`'s last `\n` ends there in `a + b` as in `a`
//!   (white space after a newline goes to `\s*[\r\n]+`, which takes the whole
//!   run up to its last newline, before the end-of-text and look-ahead
//!   alternatives are tried), and the next piece starts at `b`, where matching
//!   sees exactly what it sees in `b` alone.
//!
//! Non-ASCII next characters are not cut before, though most would be safe, so
//! that no Unicode class needs to be reasoned about. Tests pin the sum against
//! the whole count on generated texts full of the awkward characters and on
//! every text of the fixtures and the corpus, for both tokenizers.

/// The pieces of `text`, in order, each ending where a BPE count may be cut
/// and each at least `min` bytes long except the last. They join back to `text`.
pub(crate) fn cut(text: &str, min: usize) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut newlines = memchr::memchr_iter(b'\n', bytes);
    std::iter::from_fn(move || {
        if start == bytes.len() {
            return None;
        }
        let from = start;
        start = newlines
            .by_ref()
            .map(|i| i + 1)
            .find(|&end| end - from >= min && bytes.get(end).is_some_and(|&b| may_follow(b)))
            .unwrap_or(bytes.len());
        Some(&text[from..start])
    })
}

/// Whether a cut after `\n` may come before the byte `b` (see the module doc).
/// ASCII white space here is Unicode's (`\s` in both patterns): it includes the
/// vertical tab, which [`u8::is_ascii_whitespace`] does not.
fn may_follow(b: u8) -> bool {
    b.is_ascii() && !b.is_ascii_whitespace() && b != 0x0B && b != b'/'
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cuts_after_a_newline_before_a_safe_byte_only() {
        let pieces: Vec<&str> = cut("one\ntwo\n three\n/four\n\x0Bfive\n\nsix", 1).collect();
        assert_eq!(pieces, ["one\n", "two\n three\n/four\n\x0Bfive\n\n", "six"]);
        assert_eq!(cut("", 1).count(), 0);
        assert_eq!(cut("no newline", 1).collect::<Vec<_>>(), ["no newline"]);
        // Not before a non-ASCII character, whatever its class.
        assert_eq!(cut("a\né\n\u{a0}b", 1).collect::<Vec<_>>(), ["a\né\n\u{a0}b"]);
    }

    #[test]
    fn pieces_are_at_least_min_bytes_but_the_last() {
        let text = "ab\ncd\nefgh\nij\nk";
        assert_eq!(cut(text, 5).collect::<Vec<_>>(), ["ab\ncd\n", "efgh\n", "ij\nk"]);
        assert_eq!(cut(text, 100).collect::<Vec<_>>(), [text]);
    }

    /// Characters that meet at a cut in every way the patterns care about:
    /// newlines and carriage returns, Unicode and ASCII white space (vertical
    /// tab, no-break space, line separator), `/` and other punctuation,
    /// contractions, digits, letters of each case and script, marks, emoji.
    #[rustfmt::skip]
    const ALPHABET: &[&str] = &[
        "\n", "\n", "\n", "\r", "\r\n", " ", "  ", "\t", "\x0B", "\x0C", "\u{a0}", "\u{2028}",
        "\u{3000}", "/", "./", ".", "-", "#", "*", "'s", "'LL", "\"", "{", "}", "1", "123",
        "4567", "a", "word", "Word", "WORD", "é", "É", "\u{301}", "日本", "ǅ", "ʰ", "🙂", "_",
        "\\", "<|endoftext|>",
    ];

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(ALPHABET), 0..80)
            .prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The sum of the pieces' counts is the whole text's count, for both
        /// vocabularies and both tokenizers (the reference's regex is
        /// `fancy-regex` with a real look-ahead, the fast one emulates it).
        #[test]
        fn pieces_count_what_the_whole_counts(t in text()) {
            use crate::tokens::{CounterKind, Meter, Tokenizer, DEFAULT_IMAGE_TOKENS};
            prop_assert_eq!(cut(&t, 1).collect::<String>(), t.as_str());
            for kind in [CounterKind::O200k, CounterKind::Cl100k] {
                for tokenizer in [Tokenizer::BpeOpenai, Tokenizer::Tiktoken] {
                    let m = Meter::with_tokenizer(kind, tokenizer, DEFAULT_IMAGE_TOKENS);
                    let whole = m.count_uncached(&t);
                    let sum: u64 = cut(&t, 1).map(|p| m.count_uncached(p)).sum();
                    prop_assert_eq!(sum, whole, "{:?} {:?} {:?}", kind, tokenizer, t);
                }
            }
        }
    }
}
