//! The pre-split of ASCII text by hand: where the piece that `o200k_base`'s or
//! `cl100k_base`'s regex matches at a position ends, found with a few byte
//! comparisons, or `None` when a byte it must look at is not ASCII (then the
//! caller asks the regex).
//!
//! Why: the regex is searched once per piece (~4 bytes), and each anchored
//! search of `regex-automata`'s meta engine costs hundreds of instructions of
//! set-up and lazy-DFA stepping for a handful of bytes; on the distinct copies
//! of the corpus it was a large share of `stats`' instructions once the
//! encoder no longer ran on whole-token pieces (`benches/RESULTS.md`,
//! 2026-12-04 and 2026-12-05).
//!
//! The patterns (`bpe-openai` 0.3.2, `src/lib.rs`, its emulation of
//! `tiktoken`'s `\s+(?!\S)`: the second pattern's match gives back its last
//! character), tried in this order:
//! - o200k words: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//!   `|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//!   `|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+$`;
//! - cl100k words: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}`
//!   `| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+$`;
//! - then, for both, `\s+\s` less its last character, then `\s+`.
//!
//! Why the pieces are the regex's: the patterns are alternations tried in
//! order, each quantifier greedy, as a backtracking engine would (leftmost-first).
//! Restricted to ASCII their classes are plain byte sets: `\p{Lu}` is `A-Z`,
//! `\p{Ll}` is `a-z`, `\p{N}` is `0-9`, `\p{Lt}`, `\p{Lm}`, `\p{Lo}` and
//! `\p{M}` hold no ASCII byte, and `\s` is `\t`, `\n`, vertical tab, form feed,
//! `\r` and space (Unicode's White_Space, which leaves out `\x1C`-`\x1F`). Each
//! function below follows its alternatives in order and says which one it
//! stands for. Whenever the answer depends on a byte that is not ASCII (a run
//! that could go on with a Unicode letter, digit or space; a contraction's
//! letter, since `(?i:s)` also matches U+017F) it returns `None`. Proptests
//! compare every piece with `bpe-openai`'s own split on texts made of every
//! ASCII byte and the awkward non-ASCII ones.
//!
//! Example (`o200k_base`): `"  Hello world's\n\n\t-->x"` is cut into `" "`,
//! `" Hello"`, `" world's"`, `"\n\n"`, `"\t"`, `"-->"`, `"x"`.

/// Whose pre-split pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// `o200k_base`: case-aware words with their contraction, `/` after newlines.
    O200k,
    /// `cl100k_base`: contractions first, any letters as a word.
    Cl100k,
}

/// What a byte is to the patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// Past the end of the text.
    End,
    /// Not ASCII: the regex must decide.
    Other,
    Upper,
    Lower,
    Digit,
    /// `\r` or `\n`: white space that `[\r\n]` also matches.
    Newline,
    /// `\t`, vertical tab, form feed, space.
    Space,
    /// Any other ASCII byte: `[^\s\p{L}\p{N}]`.
    Punct,
}

use Class::*;

/// Every byte's class.
const CLASSES: [Class; 256] = {
    let mut t = [Punct; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = match b as u8 {
            b'A'..=b'Z' => Upper,
            b'a'..=b'z' => Lower,
            b'0'..=b'9' => Digit,
            b'\n' | b'\r' => Newline,
            b'\t' | 0x0B | 0x0C | b' ' => Space,
            0x80..=0xFF => Other,
            _ => Punct,
        };
        b += 1;
    }
    t
};

#[inline]
fn class(b: &[u8], i: usize) -> Class {
    match b.get(i) {
        Some(&c) => CLASSES[c as usize],
        None => End,
    }
}

/// The end of the piece that starts at `at` (`at < b.len()`), or `None` if it
/// depends on a byte that is not ASCII.
#[inline]
pub(crate) fn piece_end(pattern: Pattern, b: &[u8], at: usize) -> Option<usize> {
    match class(b, at) {
        End | Other => None,
        Upper | Lower => letters(pattern, b, at),
        Digit => digits(b, at),
        Newline | Space => spaces(pattern, b, at),
        Punct => {
            // cl100k: `(?i:'s|'t|'re|'ve|'m|'ll|'d)` comes first.
            if pattern == Pattern::Cl100k
                && b[at] == b'\''
                && let Some(end) = contraction(b, at)?
            {
                return Some(end);
            }
            match class(b, at + 1) {
                // `[^\r\n\p{L}\p{N}]?` then the letters.
                Upper | Lower => letters(pattern, b, at + 1),
                Other => None,
                // ` ?[^\s\p{L}\p{N}]+...` without its space.
                _ => punctuation(pattern, b, at),
            }
        }
    }
}

/// The letters alternatives from `s` (an ASCII letter), a prefix before it
/// already taken. o200k: `[\p{Lu}...]*[\p{Ll}...]+` or else `[\p{Lu}...]+[\p{Ll}...]*`,
/// then an optional contraction; cl100k: `\p{L}+`.
fn letters(pattern: Pattern, b: &[u8], s: usize) -> Option<usize> {
    let mut i = s;
    match pattern {
        Pattern::Cl100k => {
            while matches!(class(b, i), Upper | Lower) {
                i += 1;
            }
            (class(b, i) != Other).then_some(i)
        }
        Pattern::O200k => {
            while class(b, i) == Upper {
                i += 1;
            }
            // A run of capitals ends the word unless small letters follow
            // (the first alternative); either way, up to the last of them.
            match class(b, i) {
                Other => return None,
                Lower => {
                    while class(b, i) == Lower {
                        i += 1;
                    }
                    if class(b, i) == Other {
                        return None;
                    }
                }
                _ => {}
            }
            if b.get(i) == Some(&b'\'')
                && let Some(end) = contraction(b, i)?
            {
                i = end;
            }
            Some(i)
        }
    }
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `at` (an apostrophe): `Some(Some(end))`
/// if it matches, `Some(None)` if not, `None` if a letter it needs is not ASCII.
fn contraction(b: &[u8], at: usize) -> Option<Option<usize>> {
    let lower = |i: usize| -> Option<u8> {
        b.get(i).map_or(Some(0), |&c| c.is_ascii().then(|| c.to_ascii_lowercase()))
    };
    let end = match lower(at + 1)? {
        b's' | b't' | b'm' | b'd' => Some(at + 2),
        first @ (b'r' | b'v' | b'l') => {
            let second = if first == b'l' { b'l' } else { b'e' };
            (lower(at + 2)? == second).then_some(at + 3)
        }
        _ => None,
    };
    Some(end)
}

/// `\p{N}{1,3}` from `at` (a digit).
fn digits(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    while i < at + 3 && class(b, i) == Digit {
        i += 1;
    }
    (i == at + 3 || class(b, i) != Other).then_some(i)
}

/// `[^\s\p{L}\p{N}]+` from `from` (a punctuation byte), then o200k's
/// `[\r\n/]*` or cl100k's `[\r\n]*`.
fn punctuation(pattern: Pattern, b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while class(b, i) == Punct {
        i += 1;
    }
    if class(b, i) == Other {
        return None;
    }
    while matches!(b.get(i), Some(b'\r' | b'\n'))
        || (pattern == Pattern::O200k && b.get(i) == Some(&b'/'))
    {
        i += 1;
    }
    Some(i)
}

/// A piece that starts with white space, whose whole run `W` (up to `j`) is
/// followed by a byte the alternatives can tell. In order: one character other
/// than a newline before letters is their prefix; one space before punctuation
/// is its ` ?`; `\s*[\r\n]+` takes `W` up to its last newline; `\s+$` takes
/// `W` at the end of the text; `\s+\s`, less its look-ahead, takes all of `W`
/// but its last character; `\s+` takes a lone one.
fn spaces(pattern: Pattern, b: &[u8], at: usize) -> Option<usize> {
    let mut j = at;
    let mut last_newline = None;
    loop {
        match class(b, j) {
            Space => {}
            Newline => last_newline = Some(j),
            _ => break,
        }
        j += 1;
    }
    let next = class(b, j);
    if next == Other {
        return None;
    }
    if j == at + 1 {
        match next {
            Upper | Lower if class(b, at) == Space => return letters(pattern, b, j),
            Punct if b[at] == b' ' => return punctuation(pattern, b, j),
            _ => {}
        }
    }
    Some(match last_newline {
        Some(n) => n + 1,
        None if next == End || j == at + 1 => j,
        None => j - 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pieces(pattern: Pattern, text: &str) -> Option<Vec<&str>> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut at = 0;
        while at < b.len() {
            let end = piece_end(pattern, b, at)?;
            assert!(end > at, "{pattern:?}: empty piece at {at} of {text:?}");
            out.push(&text[at..end]);
            at = end;
        }
        Some(out)
    }

    fn theirs(pattern: Pattern) -> &'static bpe_openai::Tokenizer {
        match pattern {
            Pattern::O200k => bpe_openai::o200k_base(),
            Pattern::Cl100k => bpe_openai::cl100k_base(),
        }
    }

    #[test]
    fn the_module_example() {
        let text = "  Hello world's\n\n\t-->x";
        assert_eq!(
            pieces(Pattern::O200k, text).unwrap(),
            [" ", " Hello", " world's", "\n\n", "\t", "-->", "x"]
        );
        assert_eq!(
            pieces(Pattern::Cl100k, text).unwrap(),
            [" ", " Hello", " world", "'s", "\n\n", "\t", "-->", "x"]
        );
    }

    /// o200k's punctuation takes the newlines and slashes after it; cl100k's the newlines.
    #[test]
    fn punctuation_takes_what_follows_it() {
        let text = "x;\n/y ?\n/";
        assert_eq!(pieces(Pattern::O200k, text).unwrap(), ["x", ";\n/", "y", " ?\n/"]);
        assert_eq!(pieces(Pattern::Cl100k, text).unwrap(), ["x", ";\n", "/y", " ?\n", "/"]);
    }

    /// Prose and code in ASCII are cut without the regex, at every position.
    #[test]
    fn ascii_text_needs_no_regex() {
        let text =
            "fn main() {\n    let x = vec![1, 2345];  // it's HTTPServer's\r\n}\n\t/* done */ ";
        for p in [Pattern::O200k, Pattern::Cl100k] {
            let ours = pieces(p, text).expect("all ASCII");
            assert_eq!(ours, theirs(p).split(text).collect::<Vec<_>>(), "{p:?}");
        }
    }

    /// Where a byte it must look at is not ASCII, the regex decides; where the
    /// piece ends before one, the hand split does.
    #[test]
    fn a_byte_that_is_not_ascii_is_left_to_the_regex() {
        // (text, o200k's answer at 0, cl100k's)
        let cases = [
            ("é", None, None),
            ("abé", None, None),
            ("ab\u{a0}", None, None),
            ("  \u{a0}x", None, None),
            ("12\u{663}", None, None),
            ("'ſ", None, None),
            ("(é", None, None),
            ("x'ſ", None, Some(1)),
            ("123é", Some(3), Some(3)),
            ("ab.é", Some(2), Some(2)),
            ("\n\u{a0}", None, None),
        ];
        for (text, o200k, cl100k) in cases {
            assert_eq!(piece_end(Pattern::O200k, text.as_bytes(), 0), o200k, "o200k {text:?}");
            assert_eq!(piece_end(Pattern::Cl100k, text.as_bytes(), 0), cl100k, "cl100k {text:?}");
        }
    }

    /// Every ASCII byte, several times over, and the non-ASCII characters the
    /// patterns tell apart (letters of each case, a mark, digits, spaces, the
    /// long s that `(?i:s)` matches).
    fn alphabet() -> Vec<String> {
        let mut a: Vec<String> = (0u8..128).map(|b| char::from(b).to_string()).collect();
        for s in [
            " ", " ", "  ", "\n", "\r\n", "\t", "a", "e", "s", "t", "re", "ve", "ll", "A", "S",
            "Z", "'", "'", "/", "0", "9", "é", "É", "\u{301}", "ǅ", "ʰ", "日", "\u{a0}",
            "\u{2028}", "\u{3000}", "\u{663}", "²", "ſ", "\u{212a}", "🙂", "\u{85}",
        ] {
            a.push(s.to_string());
        }
        a
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Where the hand split decides, it cuts where the regex does: the
        /// pieces decided from every position equal `bpe-openai`'s.
        #[test]
        fn decided_pieces_are_the_regexes(
            parts in proptest::collection::vec(proptest::sample::select(alphabet()), 0..50)
        ) {
            let text = parts.concat();
            for p in [Pattern::O200k, Pattern::Cl100k] {
                let mut at = 0;
                for piece in theirs(p).split(&text) {
                    if let Some(end) = piece_end(p, text.as_bytes(), at) {
                        prop_assert_eq!(&text[at..end], piece, "{:?} at {} of {:?}", p, at, text);
                    }
                    at += piece.len();
                }
            }
        }
    }
}
