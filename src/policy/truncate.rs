//! Stage 3: truncate long texts, keeping both ends.
//!
//! ## What it does
//! A text longer than 6,000 chars keeps its first 4,000 and last 1,500 chars
//! with `\n...[truncated]...\n` between them (H).
//!
//! ## Why
//! The start of a long text says what it is, the end says how it finished;
//! the middle of a 50K-char log is rarely what the next turn needs.
//!
//! ## Example
//! `user: <9,000 chars>` → `user: <4,000 chars>\n...[truncated]...\n<1,500 chars>`
//!
//! ## Invariants
//! - Cuts fall on char boundaries, and on a line break when one lies within
//!   200 chars of the cut (the kept part only shrinks).
//! - A text that already holds the marker is never truncated again.
//! - Applies to messages outside the tail in `tiered` mode and to every text
//!   quoted into a summary.

use super::Slot;
use crate::model::Message;
use std::ops::Range;

/// Texts longer than this many chars are truncated (H).
pub const TRUNCATE_OVER_CHARS: usize = 6_000;
/// Chars kept from the start (H).
pub const TRUNCATE_HEAD_CHARS: usize = 4_000;
/// Chars kept from the end (H).
pub const TRUNCATE_TAIL_CHARS: usize = 1_500;
/// Placed where the middle was removed (H).
pub const TRUNCATION_MARKER: &str = "\n...[truncated]...\n";
/// A cut moves to a line break this close to it.
const LINE_SNAP_CHARS: usize = 200;

/// Byte offset of the `n`-th char of `s` (or `s.len()`).
fn byte_at(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// Truncates `text` to `head` + marker + `tail` chars when it has more than
/// `limit` chars and was not truncated before. Returns `None` when unchanged.
pub fn truncate_middle(text: &str, limit: usize, head: usize, tail: usize) -> Option<String> {
    if text.contains(TRUNCATION_MARKER) {
        return None;
    }
    let n = text.chars().count();
    if n <= limit || head + tail >= n {
        return None;
    }
    let mut head_end = byte_at(text, head);
    let snap_from = byte_at(text, head.saturating_sub(LINE_SNAP_CHARS));
    if let Some(p) = text[snap_from..head_end].rfind('\n') {
        head_end = snap_from + p;
    }
    let mut tail_start = byte_at(text, n - tail);
    let snap_to = byte_at(text, (n - tail + LINE_SNAP_CHARS).min(n));
    if !text[..tail_start].ends_with('\n')
        && let Some(p) = text[tail_start..snap_to].find('\n')
    {
        tail_start += p + 1;
    }
    let mut out =
        String::with_capacity(head_end + TRUNCATION_MARKER.len() + text.len() - tail_start);
    out.push_str(&text[..head_end]);
    out.push_str(TRUNCATION_MARKER);
    out.push_str(&text[tail_start..]);
    Some(out)
}

/// Truncates with the reference limits (6,000 → 4,000 + 1,500).
pub fn truncate_text(text: &str) -> Option<String> {
    truncate_middle(text, TRUNCATE_OVER_CHARS, TRUNCATE_HEAD_CHARS, TRUNCATE_TAIL_CHARS)
}

/// Truncates every text part of the messages in `range`; returns chars removed.
pub fn truncate_messages<S: Slot>(messages: &mut [S], range: Range<usize>) -> u64 {
    let mut removed = 0u64;
    for slot in &mut messages[range] {
        let m: &Message = (*slot).borrow();
        let short: Vec<(usize, String)> = m
            .content
            .parts
            .iter()
            .enumerate()
            .filter_map(|(k, part)| {
                let text = part.text_str()?;
                let short = truncate_text(text)?;
                removed += (text.chars().count() - short.chars().count()) as u64;
                Some((k, short))
            })
            .collect();
        if short.is_empty() {
            continue;
        }
        let parts = slot.write().content.parts_mut();
        for (k, text) in short {
            parts[k].set_text(text);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(truncate_text(&"a".repeat(6_000)), None);
    }

    #[test]
    fn keeps_head_and_tail() {
        let text: String = (0..7_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let out = truncate_text(&text).unwrap();
        assert_eq!(out.chars().count(), 4_000 + TRUNCATION_MARKER.chars().count() + 1_500);
        assert!(out.starts_with(&text[..4_000]));
        assert!(out.ends_with(&text[text.len() - 1_500..]));
    }

    #[test]
    fn multibyte_text_cuts_on_char_boundaries() {
        let text = "日本語のテキスト🙂".repeat(1_000); // 9,000 chars, 3-4 bytes each
        let out = truncate_text(&text).unwrap();
        assert_eq!(out.chars().count(), 4_000 + TRUNCATION_MARKER.chars().count() + 1_500);
        assert!(out.starts_with("日本語"));
        assert!(out.ends_with("🙂"));
    }

    #[test]
    fn cuts_snap_to_nearby_line_breaks() {
        let line = format!("{}\n", "x".repeat(99)); // 100 chars per line
        let text = line.repeat(80); // 8,000 chars
        let out = truncate_text(&text).unwrap();
        let (head, tail) = out.split_once(TRUNCATION_MARKER).unwrap();
        // Head ends at the last newline before char 4,000 (exclusive), tail starts on a line.
        assert_eq!(head.len(), 3_999);
        assert!(head.ends_with('x'));
        assert!(tail.starts_with('x'));
        assert_eq!(tail.len(), 1_500);
    }

    #[test]
    fn never_truncates_twice() {
        let text = "y".repeat(20_000);
        let once = truncate_text(&text).unwrap();
        assert_eq!(truncate_text(&once), None);
        let padded = format!("{once}{}", "z".repeat(10_000));
        assert_eq!(truncate_text(&padded), None);
    }

    #[test]
    fn stage_counts_removed_chars_in_range_only() {
        let mut msgs = vec![
            Message::text(Role::User, "a".repeat(10_000)),
            Message::text(Role::User, "b".repeat(10_000)),
        ];
        let removed = truncate_messages(&mut msgs, 0..1);
        assert_eq!(removed, (10_000 - 5_500 - TRUNCATION_MARKER.chars().count()) as u64);
        assert_eq!(msgs[1].text_content().len(), 10_000);
    }
}
