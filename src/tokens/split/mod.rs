//! `bpe-openai`'s count: its pre-split cut by hand where the text is ASCII
//! ([`ascii`]), by its own regex elsewhere; each piece counted by
//! [`super::piece`].
//!
//! Why by hand: `bpe_openai::Tokenizer::count` cuts a text into pieces with
//! one anchored regex search per piece (a piece is ~4 bytes), each costing
//! hundreds of instructions; and each search takes its scratch space from the
//! regex's shared pool, whose first user owns a fast slot and marks it busy
//! and free again on every search, in a word every other thread reads on every
//! search of its own: two threads counting at once passed that word's cache
//! line between the cores millions of times a second (benches/RESULTS.md,
//! 2026-12-01, night). Until the hand split, this module compiled a copy of the
//! regex and kept a search cache per thread for that reason. Now the regex cuts
//! only the pieces that start at, or run into, a byte that is not ASCII: a
//! small share of a distinct copy of the corpus, too few to pay for a second
//! compiled regex's memory and start-up (benches/RESULTS.md, 2026-12-04 and
//! 2026-12-05), so they go through `bpe-openai`'s own `split` and its pool.
//! Text made mostly of such pieces (emoji, non-Latin punctuation between
//! words) shares the pool between threads again.
//!
//! A text's pieces are the regex's: the hand split follows its alternatives
//! (see [`ascii`]) and hands every other position to it. Tests pin the pieces
//! to `bpe_openai::Tokenizer::split` on generated texts, and the tokenizer
//! tests pin the counts to `tiktoken-rs` on the fixtures and corpus.

mod ascii;

use super::piece;
use super::ranks::Ranks;
use ascii::Pattern;
use std::sync::LazyLock;

/// A vocabulary with its pre-split.
pub(crate) struct Splitter {
    tokenizer: &'static bpe_openai::Tokenizer,
    /// Whose pattern [`ascii`] follows (the one `tokenizer` splits with).
    pattern: Pattern,
    /// Its tokens by their bytes, for [`piece::count`].
    ranks: Ranks,
}

static O200K: LazyLock<Splitter> =
    LazyLock::new(|| Splitter::new(bpe_openai::o200k_base(), Pattern::O200k));
static CL100K: LazyLock<Splitter> =
    LazyLock::new(|| Splitter::new(bpe_openai::cl100k_base(), Pattern::Cl100k));

pub(crate) fn o200k() -> &'static Splitter {
    &O200K
}

pub(crate) fn cl100k() -> &'static Splitter {
    &CL100K
}

impl Splitter {
    fn new(tokenizer: &'static bpe_openai::Tokenizer, pattern: Pattern) -> Splitter {
        Splitter { tokenizer, pattern, ranks: Ranks::new(&tokenizer.bpe) }
    }

    /// Tokens of `text`: the sum of its pieces' BPE counts.
    pub(crate) fn count(&self, text: &str) -> u64 {
        let mut total = 0u64;
        self.each_piece(text, |piece| {
            total += piece::count(&self.ranks, &self.tokenizer.bpe, piece.as_bytes());
        });
        total
    }

    /// Calls `f` on each piece of `text`, in order; they join back to `text`.
    /// Each piece is cut by hand where its bytes are ASCII ([`ascii`]), else
    /// by the regex: `bpe-openai`'s first piece of the rest of the text, which
    /// is the piece its own split finds there (an anchored search of the same
    /// rest; the patterns look at nothing before it).
    fn each_piece<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) {
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < text.len() {
            let end = match ascii::piece_end(self.pattern, bytes, at) {
                Some(end) => end,
                None => at + self.tokenizer.split(&text[at..]).next().map_or(0, str::len),
            };
            if end <= at {
                break;
            }
            f(&text[at..end]);
            at = end;
        }
        debug_assert_eq!(at, text.len(), "every position starts a piece");
    }

    #[cfg(test)]
    fn pieces<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        self.each_piece(text, |p| out.push(p));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::joined::joined;
    use proptest::prelude::*;

    #[test]
    fn pieces_are_bpe_openais() {
        let text = "Hello, World's  \n\n  fine?\tx = 12345;\n// path/to/file.rs \u{a0}日本語 🙂 ";
        for (ours, theirs) in
            [(o200k(), bpe_openai::o200k_base()), (cl100k(), bpe_openai::cl100k_base())]
        {
            assert_eq!(ours.pieces(text), theirs.split(text).collect::<Vec<_>>());
            assert_eq!(ours.count(text), theirs.count(text) as u64);
        }
        assert_eq!(o200k().count(""), 0);
    }

    /// Counting from another thread counts the same.
    #[test]
    fn threads_count_alike() {
        let text = "fn main() {\n    println!(\"héllo\");\n}\n".repeat(50);
        let here = o200k().count(&text);
        let there = std::thread::spawn({
            let text = text.clone();
            move || (o200k().count(&text), cl100k().count(&text))
        })
        .join()
        .unwrap();
        assert_eq!((here, cl100k().count(&text)), there);
        assert_eq!(here, bpe_openai::o200k_base().count(text.as_str()) as u64);
    }

    /// The characters the patterns tell apart, to be joined at random.
    #[rustfmt::skip]
    const ALPHABET: &[&str] = &[
        "\n", "\r", "\r\n", " ", "  ", "\t", "\x0B", "\x0C", "\u{a0}", "\u{2028}", "\u{3000}",
        "/", "./", ".", "-", "#", "*", "'s", "'LL", "'d", "\"", "{", "}", "1", "123", "4567",
        "a", "word", "Word", "WORD", "é", "É", "\u{301}", "日本", "ǅ", "ʰ", "🙂", "_", "\\",
        "<|endoftext|>",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn pieces_match_bpe_openai_on_any_text(text in joined(ALPHABET, 0..60)) {
            for (ours, theirs) in
                [(o200k(), bpe_openai::o200k_base()), (cl100k(), bpe_openai::cl100k_base())]
            {
                prop_assert_eq!(ours.pieces(&text), theirs.split(&text).collect::<Vec<_>>());
            }
        }
    }
}
