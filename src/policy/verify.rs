//! Checks of a compaction's promises, as data: used by the tests and
//! available to reports (a regression gate can count violations).
//!
//! The promises (SPEC 5, 6): the output is a valid request wherever the input
//! was (sanitizing's pairing, and every rule of [`crate::request::check`]:
//! roles, parts, steps, call ids, names and arguments); the head keeps its place, its message count, roles and the text of
//! its system, user and assistant messages (the system prompt only gains the
//! note), while its tool results, call arguments and images may be pruned
//! (one-liners, dedup markers, shrunk arguments, placeholders); the protected
//! tail is verbatim but for stripped images (a merged summary only prefixes
//! the first tail message); the newest real user message survives verbatim
//! (in the summary's `## Active Task` when an autonomous turn folded it); the
//! recorded size is the real size and never exceeds the input's; a session
//! compacted with a summary holds exactly one.

use super::sanitize::validate;
use super::strip_media::{IMAGE_PLACEHOLDER, SCREENSHOT_PLACEHOLDER};
use super::summary::{is_summary, real_user_text};
use super::{Outcome, summary::SYSTEM_NOTE};
use crate::model::{Message, Part, Role, Session};
use crate::tokens::Meter;

/// Every broken promise of `out` (compacted from `input`), empty when all hold.
pub fn verify(input: &Session, out: &Outcome, meter: &Meter) -> Vec<String> {
    let mut problems = Vec::new();
    let c = &out.compaction;
    let o = &out.session.messages;
    let i = &input.messages;
    if validate(i).is_empty() {
        problems.extend(validate(o).into_iter().map(|p| format!("invalid request: {p}")));
    }
    // A valid request (what `--to` writes, what `report` measures) stays one
    // by every rule of `request::check`, not only the pairing above.
    if crate::request::check(i).is_empty() {
        problems
            .extend(crate::request::check(o).into_iter().map(|p| format!("not a request: {p}")));
    }
    let real = meter.request(&out.session);
    if real != c.tokens_after {
        problems.push(format!("recorded {} tokens after, measured {real}", c.tokens_after));
    }
    if c.tokens_after > c.tokens_before {
        problems.push(format!("request grew: {} -> {}", c.tokens_before, c.tokens_after));
    }
    if !c.compacted {
        let same = match &out.session {
            std::borrow::Cow::Borrowed(s) => std::ptr::eq(*s, input) || **s == *input,
            std::borrow::Cow::Owned(s) => s == input,
        };
        if !same {
            problems.push("an uncompacted session was changed".into());
        }
        return problems;
    }
    // One summary added: summaries the input kept outside the folded range
    // (earlier compactions, quoted prefixes) stay as they were.
    let folded = c.summarized_range.map_or(0..0, |(a, b)| a..b);
    if c.tier == super::Tier::Summary {
        let kept = i.iter().enumerate().filter(|(k, m)| !folded.contains(k) && is_summary(m));
        let added = o.iter().filter(|m| is_summary(m)).count() as i64 - kept.count() as i64;
        // (A kept input summary whose leading image became a placeholder no
        // longer reads as one: fewer, never more.)
        if added > 1 || !o.iter().any(is_summary) {
            problems.push(format!("{added} summary messages added to a summarized session"));
        }
    }
    // The head keeps its messages, roles and system/user/assistant text; its
    // tool results, arguments and images go through stages 1, 2 and 4. Tool
    // results that answer no earlier call are dropped even there (the request
    // must be valid, as the reference does over the whole list; found by the
    // pipeline fuzz target), and a call whose result is gone is removed.
    let answered: std::collections::HashSet<&str> =
        o.iter().filter(|m| m.is_tool_result()).filter_map(|m| m.tool_call_id.as_deref()).collect();
    let head = head_without_orphans(&i[..c.sections.head_messages.min(i.len())]);
    if o.len() < head.len() {
        problems.push(format!("head of {} messages, output of {}", head.len(), o.len()));
    }
    for (k, b) in head.iter().enumerate().take(o.len()) {
        let same = if k == 0 && b.role.is_system() {
            let (a, b) = (o[0].text_content(), b.text_content());
            a == b || a.strip_prefix(&*b).is_some_and(|rest| rest.trim() == SYSTEM_NOTE)
        } else {
            let kept = without_unanswered_calls(b, &answered);
            let calls = |m: &Message| m.tool_calls.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
            o[k].role == b.role
                && calls(&o[k]) == calls(&kept)
                && (b.is_tool_result() || own_text(&o[k]) == own_text(&kept))
        };
        if !same {
            problems.push(format!("head message {k} changed"));
        }
    }
    let v = c.sections.verbatim_tail_messages.min(o.len()).min(i.len());
    for k in 1..=v {
        let (a, b) = (&o[o.len() - k], &i[i.len() - k]);
        // The merged summary prefixes the first message after the head as
        // sanitizing left it (fuzz finding `tail_after_dropped_head_result`).
        let merged_here = c.summary_merged && o.len() - k == head.len();
        let same = if merged_here {
            a.text_content().ends_with(&*b.text_content())
        } else {
            a == b || *a == with_images_stripped(b)
        };
        if !same {
            problems.push(format!("tail message -{k} changed"));
        }
    }
    // Folded (an autonomous turn's ask, or the first message after the head
    // when nothing else could fold), it is the summary's `## Active Task`,
    // quoted as stage 3 and secret masking leave it.
    let newest = i.iter().rposition(|m| real_user_text(m).is_some());
    let folded_ask = newest.is_some_and(|n| folded.contains(&n))
        && o.iter().any(|m| is_summary(m) && !m.text_content().contains(ACTIVE_TASK_NONE));
    if let Some(u) = i.iter().rev().find_map(real_user_text)
        && !folded_ask
        && !o.iter().any(|m| {
            // Its stale images may be placeholders now: compare its own text.
            m.role == Role::User
                && (m.text_content().ends_with(&u) || own_text(m).join("\n").ends_with(&u))
        })
    {
        problems.push("the newest user message is not in the output verbatim".into());
    }
    problems
}

/// What the summary says when it has no active task.
const ACTIVE_TASK_NONE: &str = "## Active Task\nNone.";

/// The text parts of a message a person wrote (stage 4's placeholders left out).
fn own_text(m: &Message) -> Vec<&str> {
    let placeholder = |t: &&str| *t == IMAGE_PLACEHOLDER || *t == SCREENSHOT_PLACEHOLDER;
    m.content.parts.iter().filter_map(|p| p.text_str()).filter(|t| !placeholder(t)).collect()
}

/// `m` with its images replaced as stage 4 replaces them (whatever its place),
/// and so marked made by us ([`crate::model::MessageMeta::made`]).
fn with_images_stripped(m: &Message) -> Message {
    let mut m = m.clone();
    let placeholder = if m.is_tool_result() { SCREENSHOT_PLACEHOLDER } else { IMAGE_PLACEHOLDER };
    if m.content.parts.iter().any(Part::is_image) {
        m.meta.made = true;
        for part in m.content.parts_mut() {
            if part.is_image() {
                *part = Part::text(placeholder);
            }
        }
    }
    m
}

/// `m` as sanitizing leaves it when only the calls in `answered` kept their results.
fn without_unanswered_calls(m: &Message, answered: &std::collections::HashSet<&str>) -> Message {
    let mut m = m.clone();
    let before = m.tool_calls.len();
    m.tool_calls_mut().retain(|c| answered.contains(c.id.as_str()));
    m.meta.made |= m.tool_calls.len() < before;
    if m.tool_calls.len() < before && m.tool_calls.is_empty() && !m.has_visible_text() {
        m.content.replace_with_text(super::sanitize::CALL_REMOVED_TEXT);
    }
    m
}

/// `head` without the tool results that answer no call made before them (or
/// answer one already answered): what sanitizing leaves of a head.
fn head_without_orphans(head: &[Message]) -> Vec<&Message> {
    let mut called = std::collections::HashSet::new();
    let mut answered = std::collections::HashSet::new();
    let mut out = Vec::new();
    for m in head {
        for c in m.tool_calls.iter() {
            called.insert(c.id.clone());
        }
        if m.is_tool_result() {
            let id = m.tool_call_id.clone().unwrap_or_default();
            if !called.contains(&id) || !answered.insert(id) {
                continue;
            }
        }
        out.push(m);
    }
    out
}
