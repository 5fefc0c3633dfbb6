//! Stage 1: replace repeated tool outputs with a pointer to the newest copy.
//!
//! ## What it does
//! Outside the protected tail, a tool result of at least 200 chars whose exact
//! text appears again in a later tool result becomes
//! `[Duplicate tool output — same content as a more recent call]` (H).
//!
//! ## Why
//! Agents re-read the same file and re-run the same failing command; each copy
//! costs the same tokens and says nothing new. It is the cheapest stage: no
//! information is lost, since the newest copy stays.
//!
//! ## Example
//! `tool(A) … tool(A)` → `tool([Duplicate …]) … tool(A)`
//!
//! ## Invariants
//! - The newest copy (which may be in the tail) is never touched.
//! - Only text-only tool results are compared; one with an image is unique.

use super::{Slot, more_chars_than};
use crate::hash::text_key;
use crate::model::{Message, Part};
use std::collections::HashSet;
use std::ops::Range;

/// Replaces an older copy of a repeated tool output (H).
pub const DUPLICATE_MARKER: &str = "[Duplicate tool output — same content as a more recent call]";
/// Outputs shorter than this are left alone (H).
pub const DEDUP_MIN_CHARS: usize = 200;

/// Marks older duplicates inside `range`; returns how many were replaced.
pub fn dedup_tool_results<S: Slot>(messages: &mut [S], range: Range<usize>) -> usize {
    let mut seen: HashSet<(u128, usize)> = HashSet::new();
    let mut replaced = 0;
    for i in (0..messages.len()).rev() {
        let m: &Message = messages[i].borrow();
        if !m.is_tool_result() || !m.content.parts.iter().all(|p| matches!(p, Part::Text(_))) {
            continue;
        }
        let text = m.text_content();
        // Fewer than DEDUP_MIN_CHARS chars, or already a marker.
        if !more_chars_than(&text, DEDUP_MIN_CHARS - 1) || text == DUPLICATE_MARKER {
            continue;
        }
        let key = text_key(&text);
        if !seen.insert(key) && range.contains(&i) {
            messages[i].write().content.replace_with_text(DUPLICATE_MARKER);
            replaced += 1;
        }
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;
    use crate::policy::test_msgs::result;

    /// Tool results of `texts` deduplicated inside `range`: how many were
    /// replaced, and every text after.
    fn dedup(texts: &[&str], range: Range<usize>) -> (usize, Vec<String>) {
        let mut msgs: Vec<Message> = texts.iter().map(|t| result("c", t)).collect();
        let replaced = dedup_tool_results(&mut msgs, range);
        (replaced, msgs.iter().map(|m| m.text_content().into_owned()).collect())
    }

    #[test]
    fn keeps_the_newest_copy() {
        let big = "x".repeat(300);
        let (replaced, out) = dedup(&[&big, "other", &big, &big], 0..4);
        assert_eq!(replaced, 2);
        assert_eq!(out, [DUPLICATE_MARKER, "other", DUPLICATE_MARKER, big.as_str()]);
    }

    #[test]
    fn short_outputs_and_the_tail_are_left_alone() {
        let small = "y".repeat(199);
        let big = "z".repeat(200);
        let (small, big) = (small.as_str(), big.as_str());
        // Protected tail starts at 3: index 3 is a duplicate of 4 but protected.
        let (replaced, out) = dedup(&[small, small, big, big, big], 0..3);
        assert_eq!(replaced, 1);
        assert_eq!(out, [small, small, DUPLICATE_MARKER, big, big]);
    }

    #[test]
    fn only_tool_results_count() {
        let big = "w".repeat(400);
        let mut msgs = vec![Message::text(Role::User, &big), result("c", &big)];
        assert_eq!(dedup_tool_results(&mut msgs, 0..2), 0);
    }
}
