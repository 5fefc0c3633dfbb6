//! Checks of a compaction's promises, as data: used by the tests and
//! available to reports (a regression gate can count violations).
//!
//! The promises (SPEC 6): the output is a valid request wherever the input
//! was (sanitizing's pairing, and every rule of [`crate::request::check`]:
//! roles, parts, steps, call ids, names and arguments); the head and the protected tail are verbatim (the system prompt only
//! gains the note, a merged summary only prefixes the first tail message); the
//! newest real user message survives verbatim; the recorded size is the real
//! size and never exceeds the input's.

use super::sanitize::validate;
use super::summary::real_user_text;
use super::{Outcome, summary::SYSTEM_NOTE};
use crate::model::{Message, Role, Session};
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
    // The head is verbatim but for tool results that answer no earlier call:
    // the request must be valid, so sanitizing drops those even there (as the
    // reference does, over the whole list). Found by the pipeline fuzz target.
    // Likewise a call whose result is gone (or never was) is removed from it.
    let answered: std::collections::HashSet<&str> =
        o.iter().filter(|m| m.is_tool_result()).filter_map(|m| m.tool_call_id.as_deref()).collect();
    let head = head_without_orphans(&i[..c.head_messages.min(i.len())]);
    for (k, b) in head.iter().enumerate().take(o.len()) {
        let same = if k == 0 && b.role.is_system() {
            let (a, b) = (o[0].text_content(), b.text_content());
            a == b || a.strip_prefix(&*b).is_some_and(|rest| rest.trim() == SYSTEM_NOTE)
        } else {
            o[k] == **b || o[k] == without_unanswered_calls(b, &answered)
        };
        if !same {
            problems.push(format!("head message {k} changed"));
        }
    }
    let v = c.verbatim_tail_messages.min(o.len()).min(i.len());
    for k in 1..=v {
        let (a, b) = (&o[o.len() - k], &i[i.len() - k]);
        // The merged summary prefixes the first message after the head as
        // sanitizing left it (fuzz finding `tail_after_dropped_head_result`).
        let merged_here = c.summary_merged && o.len() - k == head.len();
        let same =
            if merged_here { a.text_content().ends_with(&*b.text_content()) } else { a == b };
        if !same {
            problems.push(format!("tail message -{k} changed"));
        }
    }
    if let Some(u) = i.iter().rev().find_map(real_user_text)
        && !o.iter().any(|m| m.role == Role::User && m.text_content().ends_with(&u))
    {
        problems.push("the newest user message is not in the output verbatim".into());
    }
    problems
}

/// `m` as sanitizing leaves it when only the calls in `answered` kept their results.
fn without_unanswered_calls(m: &Message, answered: &std::collections::HashSet<&str>) -> Message {
    let mut m = m.clone();
    let before = m.tool_calls.len();
    m.tool_calls_mut().retain(|c| answered.contains(c.id.as_str()));
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
