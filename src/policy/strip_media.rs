//! Stage 4: strip old images and reasoning.
//!
//! ## What it does
//! Every image of the session, wherever it is (head and protected tail
//! included, H), except those of the newest image-bearing user message becomes
//! `[Attached image — stripped after compression]`; an image inside a tool
//! result (a screenshot) becomes `[screenshot removed to save context]` (H).
//! Reasoning / thinking outside the tail (in the range given) is dropped.
//!
//! ## Why
//! An image is charged ~1,500 tokens on every request that carries it, and a
//! computer-use session carries dozens of stale screenshots. Reasoning is the
//! model's scratch work: it never enters a summary, and nothing after it needs it.
//!
//! ## Example
//! `user[img, "look"] … user[img2]` → `user["[Attached image — …]", "look"] … user[img2]`
//!
//! ## Invariants
//! - Images change anywhere, reasoning only in `range`; the newest
//!   image-bearing user message keeps its images. Nothing else changes: a
//!   message keeps its place, its role and its other parts.
//! - A message never ends up with no content at all: a message that held
//!   nothing but reasoning keeps a short placeholder.

use super::Slot;
use crate::model::{Message, Part, Role};
use std::borrow::Borrow;
use std::ops::Range;

/// Replaces a stripped image (H).
pub const IMAGE_PLACEHOLDER: &str = "[Attached image — stripped after compression]";
/// Replaces a stripped tool-result screenshot (H).
pub const SCREENSHOT_PLACEHOLDER: &str = "[screenshot removed to save context]";
/// Left in a message whose only content was reasoning.
pub const REASONING_PLACEHOLDER: &str = "[reasoning removed to save context]";

/// What stage 4 removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stripped {
    pub images: usize,
    pub reasoning: usize,
}

/// Index of the newest user message that carries an image.
fn newest_image_user<M: Borrow<Message>>(messages: &[M]) -> Option<usize> {
    messages
        .iter()
        .map(Borrow::borrow)
        .rposition(|m| m.role == Role::User && m.content.parts.iter().any(Part::is_image))
}

/// Strips the images of every message (but the newest image-bearing user
/// message's) and the reasoning of the messages in `range`.
pub fn strip_media<S: Slot>(messages: &mut [S], range: Range<usize>) -> Stripped {
    let keep = newest_image_user(messages);
    let mut out = Stripped::default();
    for (i, slot) in messages.iter_mut().enumerate() {
        let m: &Message = (*slot).borrow();
        let images = Some(i) != keep && m.content.parts.iter().any(Part::is_image);
        let reasoning = range.contains(&i)
            && (m.content.parts.iter().any(|p| matches!(p, Part::Reasoning(_)))
                || m.reasoning.is_some());
        if !images && !reasoning {
            continue;
        }
        let m = slot.write();
        if Some(i) != keep {
            let placeholder =
                if m.is_tool_result() { SCREENSHOT_PLACEHOLDER } else { IMAGE_PLACEHOLDER };
            for part in m.content.parts_mut() {
                if part.is_image() {
                    *part = Part::text(placeholder);
                    out.images += 1;
                }
            }
        }
        if !reasoning {
            continue;
        }
        let had_parts = !m.content.parts.is_empty();
        let before = m.content.parts.len();
        m.content.parts_mut().retain(|p| !matches!(p, Part::Reasoning(_)));
        out.reasoning += before - m.content.parts.len();
        if m.reasoning.take().is_some() {
            out.reasoning += 1;
        }
        if had_parts && m.content.parts.is_empty() && m.tool_calls.is_empty() {
            m.content.replace_with_text(REASONING_PLACEHOLDER);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContentForm, Reasoning};
    use serde_json::Map;

    fn image() -> Part {
        Part::Image { raw: Map::new(), info: Default::default() }
    }

    fn with_parts(role: Role, parts: Vec<Part>) -> Message {
        let mut m = Message::text(role, "");
        m.content.parts = parts.into();
        m.content.form = ContentForm::Parts;
        m
    }

    #[test]
    fn keeps_only_the_newest_user_images() {
        let mut msgs = vec![
            with_parts(Role::User, vec![image(), Part::text("first")]),
            with_parts(Role::Tool, vec![image()]),
            with_parts(Role::User, vec![image(), image()]),
            Message::text(Role::User, "no image, newer"),
        ];
        let s = strip_media(&mut msgs, 0..4);
        assert_eq!(s.images, 2);
        assert_eq!(msgs[0].content.parts[0].text_str(), Some(IMAGE_PLACEHOLDER));
        assert_eq!(msgs[0].content.parts[1].text_str(), Some("first"));
        assert_eq!(msgs[1].content.parts[0].text_str(), Some(SCREENSHOT_PLACEHOLDER));
        assert!(msgs[2].content.parts.iter().all(Part::is_image));
    }

    /// SPEC 6.4 (H): images go in the head and the protected tail too (outside
    /// `range`), but for the newest image-bearing user message's; a tail
    /// message keeps its reasoning, place and text.
    #[test]
    fn images_go_everywhere_but_reasoning_only_in_range() {
        let mut tail_shot = with_parts(Role::Tool, vec![Part::text("ran"), image()]);
        tail_shot.reasoning = None;
        let mut reasoned = with_parts(Role::Assistant, vec![Part::text("see"), image()]);
        reasoned.reasoning = Some(Reasoning { field: "reasoning".into(), text: "r".into() });
        let mut msgs = vec![
            with_parts(Role::User, vec![image(), Part::text("head image")]), // head
            Message::text(Role::Assistant, "middle"),
            tail_shot, // tail from here
            reasoned,
            with_parts(Role::User, vec![Part::text("newest"), image()]),
            Message::text(Role::Assistant, "ok"),
        ];
        let s = strip_media(&mut msgs, 0..2);
        assert_eq!(s, Stripped { images: 3, reasoning: 0 });
        assert_eq!(msgs[0].content.parts[0].text_str(), Some(IMAGE_PLACEHOLDER));
        assert_eq!(msgs[0].content.parts[1].text_str(), Some("head image"));
        assert_eq!(msgs[2].content.parts[0].text_str(), Some("ran"));
        assert_eq!(msgs[2].content.parts[1].text_str(), Some(SCREENSHOT_PLACEHOLDER));
        assert_eq!(msgs[3].content.parts[1].text_str(), Some(IMAGE_PLACEHOLDER));
        assert!(msgs[3].reasoning.is_some(), "the tail keeps its reasoning");
        assert!(msgs[4].content.parts[1].is_image(), "the newest image-bearing user message");
    }

    #[test]
    fn drops_reasoning_in_range_only() {
        let mut a = Message::text(Role::Assistant, "answer");
        a.reasoning = Some(Reasoning { field: "reasoning_content".into(), text: "hmm".into() });
        let mut thinking_only = with_parts(Role::Assistant, vec![Part::Reasoning(Map::new())]);
        thinking_only.content.form = ContentForm::Parts;
        let mut msgs = vec![a.clone(), thinking_only, a];
        let s = strip_media(&mut msgs, 0..2);
        assert_eq!(s.reasoning, 2);
        assert!(msgs[0].reasoning.is_none());
        assert_eq!(msgs[1].text_content(), REASONING_PLACEHOLDER);
        assert!(msgs[2].reasoning.is_some());
    }
}
