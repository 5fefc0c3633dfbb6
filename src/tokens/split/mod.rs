//! `bpe-openai`'s count: its pre-split cut by hand where the text is ASCII
//! ([`ascii`]), else by its regex searched through a cache that belongs to the
//! calling thread; each piece counted by [`super::piece`].
//!
//! Why: `bpe_openai::Tokenizer::count` cuts a text into pieces with one
//! anchored regex search per piece (a piece is ~4 bytes), and each search takes
//! its scratch space from the regex's shared pool. The pool's first user owns a
//! fast slot and marks it busy and free again on every search, in a word every
//! other thread reads on every search of its own; the others lock a mutex. Two
//! threads counting at once thus pass that word's cache line between the cores
//! millions of times a second. Measured here (`o200k`, 19 MB of texts counted
//! by each of one or two threads, six alternated rounds): two threads cost each
//! other 17% of their time through the shared pool and 5% with a cache each.
//! Single-threaded the two are the same speed; the counts are the same.
//!
//! The patterns are `bpe-openai`'s (its emulation of `tiktoken`'s look-ahead:
//! the second pattern's match gives back its last character). Tests pin the
//! pieces, by hand and by regex, to `bpe_openai::Tokenizer::split` on generated
//! texts, and the tokenizer tests pin the counts to `tiktoken-rs` on the
//! fixtures and corpus.

mod ascii;

use super::piece;
use super::ranks::Ranks;
use ascii::Pattern;
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};
use std::cell::RefCell;
use std::sync::LazyLock;

/// A vocabulary with its pre-split regex.
pub(crate) struct Splitter {
    tokenizer: &'static bpe_openai::Tokenizer,
    /// Whose pattern [`ascii`] follows.
    pattern: Pattern,
    /// Its tokens by their bytes, for [`piece::count`].
    ranks: Ranks,
    /// `None` only if the patterns failed to compile (they are constants and
    /// a test compiles them): then `bpe-openai`'s own split is used, which
    /// counts the same, through its shared pool.
    regex: Option<Regex>,
    /// Which of this thread's caches goes with `regex`.
    slot: usize,
}

/// Letters, numbers and contractions, in `o200k_base`'s split of cases.
const O200K_WORDS: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+$",
);

const CL100K_WORDS: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
    r"|[^\r\n\p{L}\p{N}]?\p{L}+",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+",
    r"|\s+$",
);

/// `\s+(?!\S)` as two patterns: white space followed by white space, less the
/// last character; then any white space.
const SPACE_BEFORE_SPACE: &str = r"\s+\s";
const SPACE: &str = r"\s+";
/// By pattern (words, [`SPACE_BEFORE_SPACE`], [`SPACE`]): does a match give
/// back its last character (the look-ahead)?
const LOOKAHEAD: [bool; 3] = [false, true, false];

static O200K: LazyLock<Splitter> =
    LazyLock::new(|| Splitter::new(bpe_openai::o200k_base(), Pattern::O200k, O200K_WORDS, 0));
static CL100K: LazyLock<Splitter> =
    LazyLock::new(|| Splitter::new(bpe_openai::cl100k_base(), Pattern::Cl100k, CL100K_WORDS, 1));

thread_local! {
    /// One search cache per splitter (by `slot`), made on first use.
    static CACHES: RefCell<[Option<Cache>; 2]> = const { RefCell::new([None, None]) };
}

pub(crate) fn o200k() -> &'static Splitter {
    &O200K
}

pub(crate) fn cl100k() -> &'static Splitter {
    &CL100K
}

impl Splitter {
    fn new(
        tokenizer: &'static bpe_openai::Tokenizer,
        pattern: Pattern,
        words: &str,
        slot: usize,
    ) -> Splitter {
        let regex = Regex::new_many(&[words, SPACE_BEFORE_SPACE, SPACE]).ok();
        Splitter { tokenizer, pattern, ranks: Ranks::new(&tokenizer.bpe), regex, slot }
    }

    /// Tokens of `text`: the sum of its pieces' BPE counts.
    pub(crate) fn count(&self, text: &str) -> u64 {
        let Some(regex) = &self.regex else {
            return self.tokenizer.count(text) as u64;
        };
        CACHES.with_borrow_mut(|caches| {
            let cache = caches[self.slot].get_or_insert_with(|| regex.create_cache());
            let mut total = 0u64;
            self.each_piece(regex, cache, text, |piece| {
                total += piece::count(&self.ranks, &self.tokenizer.bpe, piece.as_bytes());
            });
            total
        })
    }

    /// Calls `f` on each piece of `text`, in order; they join back to `text`.
    /// Each piece is cut by hand where its bytes are ASCII ([`ascii`]), else
    /// by the regex.
    fn each_piece<'t>(
        &self,
        regex: &Regex,
        cache: &mut Cache,
        text: &'t str,
        mut f: impl FnMut(&'t str),
    ) {
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < text.len() {
            let end = match ascii::piece_end(self.pattern, bytes, at) {
                Some(end) => end,
                None => Self::regex_end(regex, cache, text, at),
            };
            if end <= at {
                break;
            }
            f(&text[at..end]);
            at = end;
        }
        debug_assert_eq!(at, text.len(), "every position starts a piece");
    }

    /// Where the regex's piece that starts at `at` ends (`at` if none does).
    fn regex_end(regex: &Regex, cache: &mut Cache, text: &str, at: usize) -> usize {
        let input = Input::new(&text[at..]).anchored(Anchored::Yes);
        // Some alternative matches at every position (`\s+`, or one
        // character of the letter, number or punctuation ones).
        let Some(m) = regex.search_with(cache, &input) else { return at };
        let mut end = at + m.end();
        if LOOKAHEAD[m.pattern().as_usize()] {
            end -= text[at..end].chars().next_back().map_or(0, char::len_utf8);
        }
        end
    }

    #[cfg(test)]
    fn pieces<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let Some(regex) = &self.regex else { return Vec::new() };
        let mut cache = regex.create_cache();
        let mut out = Vec::new();
        self.each_piece(regex, &mut cache, text, |p| out.push(p));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn patterns_compile() {
        assert!(o200k().regex.is_some() && cl100k().regex.is_some());
    }

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

    /// Counting from another thread uses that thread's cache and counts the same.
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
        fn pieces_match_bpe_openai_on_any_text(
            parts in proptest::collection::vec(proptest::sample::select(ALPHABET), 0..60)
        ) {
            let text = parts.concat();
            for (ours, theirs) in
                [(o200k(), bpe_openai::o200k_base()), (cl100k(), bpe_openai::cl100k_base())]
            {
                prop_assert_eq!(ours.pieces(&text), theirs.split(&text).collect::<Vec<_>>());
            }
        }
    }
}
