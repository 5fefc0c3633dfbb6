//! Text helpers of the stages and the retention measure: char limits, line
//! counts, and every text of a session as a model reads it.

use crate::model::Message;

/// Returns true if and only if `text` has more than `n` chars, counting them
/// only when its length in bytes does not tell (a char is 1 to 4 bytes): the
/// stages hold whole tool outputs against limits in chars.
pub(crate) fn more_chars_than(text: &str, n: usize) -> bool {
    text.len() > n && (text.len() > 4 * n || text.chars().count() > n)
}

/// The newlines in `text`. Tool outputs' line counts (descriptions, the
/// summary's outcomes) read every byte of every long result: counted in
/// blocks whose sum fits a byte, which the compiler vectorizes (far fewer
/// instructions than `str::matches`, which stops at every newline, and than
/// a plain filtered count, which it does not vectorize: benches/RESULTS.md,
/// 2026-12-02).
pub(crate) fn newlines(text: &str) -> usize {
    let mut blocks = text.as_bytes().chunks_exact(128);
    let mut n: usize = 0;
    for block in blocks.by_ref() {
        n += usize::from(block.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>());
    }
    n + blocks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// Every text of a session that a model would read, joined: content, reasoning, call arguments.
pub fn session_text(messages: &[Message]) -> String {
    let mut out = String::new();
    for (text, piece) in read_texts(messages) {
        push_read(text, piece, &mut out);
    }
    out
}

/// The texts [`session_text`] joins, in order, each with what it is.
pub(crate) fn read_texts(messages: &[Message]) -> impl Iterator<Item = (&str, Piece)> {
    messages.iter().flat_map(|m| {
        let parts = m.content.parts.iter().filter_map(|p| p.text_str()).map(|t| (t, Piece::Text));
        parts.chain(m.tool_calls.iter().map(|c| (c.arguments.as_str(), Piece::Arguments)))
    })
}

/// Appends one text as [`session_text`] joins it: a line of its own, and for
/// arguments then each string they hold (when they are JSON).
pub(crate) fn push_read(text: &str, piece: Piece, out: &mut String) {
    out.push_str(text);
    out.push('\n');
    if piece == Piece::Arguments
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(text)
    {
        push_strings(&v, out);
    }
}

fn push_strings(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(items) => items.iter().for_each(|x| push_strings(x, out)),
        serde_json::Value::Object(map) => map.values().for_each(|x| push_strings(x, out)),
        _ => {}
    }
}

/// What an output text is to [`Prepared::retention`]: a text part, or a
/// call's arguments (searched with the strings they hold, as [`session_text`] joins them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Piece {
    Text,
    Arguments,
}
