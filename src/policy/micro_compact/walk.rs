//! Shrinking call arguments by walking their text, without a tree.
//!
//! ## What it does
//! [`walked`] reads a JSON text once and writes what parsing it into a
//! `Value`, cutting its long string leaves and writing it back as compact
//! JSON would write ([`super::tree_shrunk`]), copying the text as it goes:
//! whitespace between tokens dropped, every string written with serde_json's
//! escapes, each string value over [`SHRINK_LEAF_CHARS`] chars cut to that
//! many chars and marked.
//!
//! ## Why
//! Stage 2 shrinks every long argument text outside the protected tail, and
//! those texts hold whole files (an edit's, a write's): the tree costs a map
//! per object and a `String` per string, then a second pass to write them,
//! where the walk copies bytes once.
//!
//! ## Example
//! `{"path": "a.rs", "content": "<1,000 x c>"}` →
//! `{"path":"a.rs","content":"<200 x c>...[truncated]"}`, as the tree writes it.
//!
//! ## Invariants
//! - The walk takes only texts whose tree would write them back predictably:
//!   integers of at most [`MAX_INTEGER_DIGITS`] digits (no `-0`, no fraction or
//!   exponent, which the tree may rewrite), objects of at most
//!   [`MAX_KEYS_COMPARED`] keys without a repeated one (the tree keeps the
//!   last value at the first place), at most [`MAX_DEPTH`] levels (under
//!   serde_json's 128). Anything else, invalid JSON included, is
//!   [`Walk::Unsure`], and the caller asks the tree: the type makes a caller
//!   handle it.
//! - On what it takes, the result is the tree's byte for byte (pinned by a
//!   proptest against [`super::tree_shrunk`] in `micro_compact::tests`).

use super::{ARGS_TRUNCATION_MARKER, SHRINK_LEAF_CHARS};

/// Integers longer than this many digits may not fit an `i64` / `u64` (the
/// tree would write them as floats): the walk leaves them to the tree.
pub(super) const MAX_INTEGER_DIGITS: usize = 18;
/// Objects with more keys are left to the tree (the walk looks for a
/// repeated key by comparing each to those before it).
pub(super) const MAX_KEYS_COMPARED: usize = 64;
/// Deeper texts are left to the tree (serde_json refuses past 128 levels).
pub(super) const MAX_DEPTH: usize = 64;

/// What the walk of an argument text found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Walk {
    /// Valid JSON with no string leaf to cut: the tree changes nothing either.
    Unchanged,
    /// The text with its long leaves cut, as the tree writes it.
    Shrunk(String),
    /// Outside what the walk takes (or not JSON): ask the tree.
    Unsure,
}

/// The walk of `text` (see the module doc).
pub(super) fn walked(text: &str) -> Walk {
    let mut w =
        Walker { b: text.as_bytes(), i: 0, out: Vec::with_capacity(text.len()), cut: false };
    let whole = w.value(0).and_then(|()| {
        w.skip_space();
        (w.i == w.b.len()).then_some(())
    });
    match whole {
        None => Walk::Unsure,
        Some(()) if !w.cut => Walk::Unchanged,
        Some(()) => String::from_utf8(w.out).map_or(Walk::Unsure, Walk::Shrunk),
    }
}

/// A walk in progress: the text, where it is, what it wrote, and whether it
/// cut a leaf. Every step returns `None` when the text leaves the subset.
struct Walker<'t> {
    b: &'t [u8],
    i: usize,
    out: Vec<u8>,
    cut: bool,
}

impl Walker<'_> {
    fn skip_space(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        self.skip_space();
        match *self.b.get(self.i)? {
            b'{' if depth < MAX_DEPTH => self.object(depth + 1),
            b'[' if depth < MAX_DEPTH => self.array(depth + 1),
            b'"' => self.string(true),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.integer(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then_some(())?;
        self.out.extend_from_slice(word);
        self.i = end;
        Some(())
    }

    /// An integer written as the tree writes it back, else `None`.
    fn integer(&mut self) -> Option<()> {
        let start = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        let digits_from = self.i;
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        let digits = &self.b[digits_from..self.i];
        let plain = !digits.is_empty()
            && digits.len() <= MAX_INTEGER_DIGITS
            && (digits[0] != b'0' || (digits.len() == 1 && digits_from == start))
            && !matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E'));
        plain.then(|| self.out.extend_from_slice(&self.b[start..self.i]))
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if self.opened(b']') {
            return Some(());
        }
        loop {
            self.value(depth)?;
            if self.closed(b']')? {
                return Some(());
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        if self.opened(b'}') {
            return Some(());
        }
        // Keys as written (escapes are canonical, so equal keys are equal bytes).
        let mut keys: Vec<(usize, usize)> = Vec::new();
        loop {
            self.skip_space();
            if self.b.get(self.i) != Some(&b'"') || keys.len() == MAX_KEYS_COMPARED {
                return None;
            }
            let from = self.out.len() + 1;
            self.string(false)?;
            let key = (from, self.out.len() - 1);
            if keys.iter().any(|&(s, e)| self.out[s..e] == self.out[key.0..key.1]) {
                return None;
            }
            keys.push(key);
            self.skip_space();
            (self.b.get(self.i) == Some(&b':')).then_some(())?;
            self.i += 1;
            self.out.push(b':');
            self.value(depth)?;
            if self.closed(b'}')? {
                return Some(());
            }
        }
    }

    /// Writes the bracket at `self.i`; true when `close` follows (empty).
    fn opened(&mut self, close: u8) -> bool {
        self.out.push(self.b[self.i]);
        self.i += 1;
        self.skip_space();
        let empty = self.b.get(self.i) == Some(&close);
        if empty {
            self.i += 1;
            self.out.push(close);
        }
        empty
    }

    /// After an item: `Some(true)` at `close`, `Some(false)` at a comma.
    fn closed(&mut self, close: u8) -> Option<bool> {
        self.skip_space();
        let c = *self.b.get(self.i)?;
        self.i += 1;
        self.out.push(c);
        match c {
            b',' => Some(false),
            _ if c == close => Some(true),
            _ => None,
        }
    }

    /// A string at `self.i` written with serde_json's escapes; a value
    /// (`leaf`) over the limit is cut and marked. Runs of plain bytes are
    /// found a word at a time ([`plain_len`]) and copied whole; past a cut,
    /// only checked.
    fn string(&mut self, leaf: bool) -> Option<()> {
        let marked_len = SHRINK_LEAF_CHARS + ARGS_TRUNCATION_MARKER.chars().count();
        self.i += 1;
        self.out.push(b'"');
        let mut chars = 0usize;
        let mut cut_at = None;
        loop {
            if cut_at.is_some() && chars > marked_len {
                // Cut, and longer than a marked leaf: the rest is only checked.
                self.skip_rest()?;
                break;
            }
            let rest = &self.b[self.i..];
            let run = &rest[..plain_len(rest)];
            let run_chars = chars_in(run);
            if leaf && cut_at.is_none() && chars + run_chars > SHRINK_LEAF_CHARS {
                let keep = byte_of_char(run, SHRINK_LEAF_CHARS - chars);
                cut_at = Some(self.out.len() + keep);
            }
            // Past the cut, bytes are written only while the string may still
            // turn out to be already marked (exactly `marked_len` chars).
            if cut_at.is_none() || chars <= marked_len {
                self.out.extend_from_slice(run);
            }
            chars += run_chars;
            self.i += run.len();
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    break;
                }
                b'\\' => {}
                _ => return None,
            }
            if leaf && cut_at.is_none() && chars == SHRINK_LEAF_CHARS {
                cut_at = Some(self.out.len());
            }
            let ch = self.escape()?;
            if cut_at.is_none() || chars <= marked_len {
                self.put_char(ch);
            }
            chars += 1;
        }
        if let Some(at) = cut_at {
            // Cut before, as the tree leaves it: then every byte was written.
            let marked =
                chars == marked_len && self.out.ends_with(ARGS_TRUNCATION_MARKER.as_bytes());
            if !marked {
                self.out.truncate(at);
                self.out.extend_from_slice(ARGS_TRUNCATION_MARKER.as_bytes());
                self.cut = true;
            }
        }
        self.out.push(b'"');
        Some(())
    }

    /// Steps past the rest of a string, escapes checked, writing nothing.
    fn skip_rest(&mut self) -> Option<()> {
        loop {
            self.i += plain_len(&self.b[self.i..]);
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                b'\\' => {
                    self.escape()?;
                }
                _ => return None,
            }
        }
    }

    /// The char of the escape at `self.i`.
    fn escape(&mut self) -> Option<char> {
        let e = *self.b.get(self.i + 1)?;
        self.i += 2;
        let ch = match e {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                if (0xD800..0xDC00).contains(&high) {
                    (self.b.get(self.i..self.i + 2)? == b"\\u").then_some(())?;
                    self.i += 2;
                    let low = self.hex4()?;
                    (0xDC00..0xE000).contains(&low).then_some(())?;
                    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?
                } else {
                    char::from_u32(high)?
                }
            }
            _ => return None,
        };
        Some(ch)
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = std::str::from_utf8(self.b.get(self.i..self.i + 4)?).ok()?;
        if !digits.bytes().all(|d| d.is_ascii_hexdigit()) {
            return None;
        }
        self.i += 4;
        u32::from_str_radix(digits, 16).ok()
    }

    /// `ch` as serde_json writes it inside a string.
    fn put_char(&mut self, ch: char) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let short = match ch {
            '"' => Some(b'"'),
            '\\' => Some(b'\\'),
            '\u{8}' => Some(b'b'),
            '\u{c}' => Some(b'f'),
            '\n' => Some(b'n'),
            '\r' => Some(b'r'),
            '\t' => Some(b't'),
            _ => None,
        };
        match short {
            Some(s) => self.out.extend_from_slice(&[b'\\', s]),
            None if (ch as u32) < 0x20 => {
                let n = ch as usize;
                self.out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[n >> 4], HEX[n & 0xF]]);
            }
            None => {
                let mut buf = [0u8; 4];
                self.out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

/// Chars in `run`, valid UTF-8 (bytes that start a char).
fn chars_in(run: &[u8]) -> usize {
    run.iter().filter(|&&c| (c as i8) >= -0x40).count()
}

/// The byte offset in `run` where its char number `n` starts.
fn byte_of_char(run: &[u8], n: usize) -> usize {
    run.iter()
        .enumerate()
        .filter(|&(_, &c)| (c as i8) >= -0x40)
        .nth(n)
        .map_or(run.len(), |(k, _)| k)
}

/// Bytes at the start of `b` before a quote, a backslash or a control byte
/// (all of `b` when it has none), read eight at a time.
fn plain_len(b: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    let mut k = 0;
    while let Some(word) = b.get(k..k + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        let w = u64::from_le_bytes(word);
        let quote = w ^ (ONES * u64::from(b'"'));
        let slash = w ^ (ONES * u64::from(b'\\'));
        // A zero byte of `quote` / `slash`, a byte under 0x20 of `w`: each
        // test sets a high bit if and only if the word holds such a byte.
        let found = (quote.wrapping_sub(ONES) & !quote)
            | (slash.wrapping_sub(ONES) & !slash)
            | (w.wrapping_sub(ONES * 0x20) & !w);
        if found & HIGH != 0 {
            break;
        }
        k += 8;
    }
    k + b[k..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).unwrap_or(b.len() - k)
}

#[cfg(test)]
mod tests {
    use super::plain_len;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// The word-at-a-time scan stops where a byte-at-a-time one does.
        #[test]
        fn plain_len_is_the_first_special_byte(
            bytes in proptest::collection::vec(
                proptest::sample::select(vec![b'a', b'"', b'\\', 0x1f, 0x00, 0x20, 0x7f, 0x80, 0xe9, 0xff]),
                0..40,
            ),
        ) {
            let scalar = bytes
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .unwrap_or(bytes.len());
            proptest::prop_assert_eq!(plain_len(&bytes), scalar);
        }
    }
}
