//! Stage 8: make the assembled session a valid request again.
//!
//! ## What it does
//! Outside the protected tail: drops tool results whose call is gone (or that
//! come before their call, or answer it a second time), and drops tool calls
//! whose result is gone; an assistant message left with nothing keeps the text
//! `(tool call removed)` (H).
//!
//! ## Why
//! Both OpenAI and Anthropic reject a result without its call and a call
//! without its result. Boundaries never split a group, so this only repairs
//! what the input itself had broken.
//!
//! ## Example
//! `a[call x] u t(y)` → `a("(tool call removed)") u`
//!
//! ## Invariants
//! - Never alters the protected tail.
//! - A call still in flight at the end of the session (nothing but non-chat
//!   records after it) is the agent's last action and stays as it is.

use crate::model::{Message, Role};
use serde_json::Value;
use std::collections::HashSet;

/// Left in an assistant message whose every call was removed (H). Defined in
/// `request`, below `policy`, which writes the same text when a conversion
/// drops every call of a message.
pub const CALL_REMOVED_TEXT: &str = crate::request::normalize::CALL_REMOVED_TEXT;

/// What sanitizing removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sanitized {
    pub results_dropped: usize,
    pub calls_dropped: usize,
}

fn is_chat(m: &Message) -> bool {
    matches!(m.role, Role::User | Role::Assistant | Role::Tool)
}

/// Repairs call/result pairing in `messages[..protected_from]`. Non-chat
/// records attached to a dropped message move to the next message (or to
/// `trailing` when it was the last).
pub fn sanitize(
    messages: &mut Vec<Message>,
    protected_from: usize,
    trailing: &mut Vec<Value>,
) -> Sanitized {
    let mut out = Sanitized::default();
    let protected_from = protected_from.min(messages.len());
    // Results: keep those answering a call made before them, once.
    let mut called: HashSet<String> = HashSet::new();
    let mut answered: HashSet<String> = HashSet::new();
    let mut keep = vec![true; messages.len()];
    for (i, m) in messages.iter().enumerate() {
        for c in m.tool_calls.iter() {
            called.insert(c.id.clone());
        }
        if m.is_tool_result() {
            let id = m.tool_call_id.clone().unwrap_or_default();
            let valid = called.contains(&id) && !answered.contains(&id);
            if i < protected_from && !valid {
                keep[i] = false;
                out.results_dropped += 1;
            } else {
                answered.insert(id);
            }
        }
    }
    // Calls: keep those answered by a kept result, or still in flight at the end.
    let last_chat = messages.iter().rposition(is_chat);
    for (i, m) in messages.iter_mut().enumerate().take(protected_from) {
        // All answered (the usual case): the calls, shared with the input, stay untouched.
        if Some(i) == last_chat || m.tool_calls.iter().all(|c| answered.contains(&c.id)) {
            continue;
        }
        let before = m.tool_calls.len();
        m.tool_calls_mut().retain(|c| answered.contains(&c.id));
        let removed = before - m.tool_calls.len();
        out.calls_dropped += removed;
        m.meta.made |= removed > 0;
        if removed > 0 && m.tool_calls.is_empty() && !m.has_visible_text() {
            m.content.replace_with_text(CALL_REMOVED_TEXT);
        }
    }
    let mut carried: Vec<Value> = Vec::new();
    let mut i = 0;
    messages.retain_mut(|m| {
        i += 1;
        if !keep[i - 1] {
            carried.append(&mut m.take_attached());
            return false;
        }
        if !carried.is_empty() {
            carried.append(&mut m.take_attached());
            m.attached = std::mem::take(&mut carried).into();
        }
        true
    });
    if !carried.is_empty() {
        carried.append(trailing);
        *trailing = carried;
    }
    out
}

/// Checks that `messages` is a valid request for both OpenAI and Anthropic as
/// far as tool calls go: every result directly follows the message whose call
/// it answers, every call is answered exactly once before the next non-result
/// message, and ids are unique. A call left unanswered at the very end (in
/// flight) is allowed. Returns the problems found, empty when valid.
pub fn validate(messages: &[Message]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut pending_from = 0;
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        if m.is_tool_result() {
            let id = m.tool_call_id.as_deref().unwrap_or("");
            match pending.iter().position(|p| *p == id) {
                Some(k) => {
                    pending.remove(k);
                }
                None => problems.push(format!(
                    "message {i}: tool result `{id}` answers no call of message {pending_from}"
                )),
            }
            continue;
        }
        if !pending.is_empty() {
            problems.push(format!(
                "message {i}: calls {pending:?} of message {pending_from} are unanswered"
            ));
        }
        pending = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
        pending_from = i;
        for c in m.tool_calls.iter() {
            if !seen.insert(c.id.as_str()) {
                problems.push(format!("message {i}: duplicate call id `{}`", c.id));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_msgs::{calls, result};

    #[test]
    fn drops_orphans_both_ways() {
        let mut ms = vec![
            calls(&["a", "b"]),
            result("a", "r"),
            result("zzz", "r"),
            Message::text(Role::User, "u"),
            Message::text(Role::Assistant, "ok"),
        ];
        let s = sanitize(&mut ms, 3, &mut Vec::new());
        assert_eq!(s, Sanitized { results_dropped: 1, calls_dropped: 1 });
        assert_eq!(ms.len(), 4);
        assert_eq!(ms[0].tool_calls.len(), 1);
    }

    #[test]
    fn empty_assistant_keeps_a_marker() {
        let mut ms = vec![
            calls(&["gone"]),
            Message::text(Role::User, "u"),
            Message::text(Role::Assistant, "ok"),
        ];
        sanitize(&mut ms, 1, &mut Vec::new());
        assert!(ms[0].tool_calls.is_empty());
        assert_eq!(ms[0].text_content(), CALL_REMOVED_TEXT);
    }

    #[test]
    fn results_before_their_call_and_duplicates_go() {
        let mut ms = vec![
            result("a", "r"),
            calls(&["a"]),
            result("a", "r"),
            result("a", "r"),
            Message::text(Role::User, "u"),
        ];
        let s = sanitize(&mut ms, 4, &mut Vec::new());
        assert_eq!(s.results_dropped, 2);
        assert_eq!(ms.len(), 3);
        assert!(ms[1].is_tool_result());
    }

    #[test]
    fn the_tail_is_never_touched() {
        let mut ms = vec![Message::text(Role::User, "u"), result("orphan", "r"), calls(&["x"])];
        let before = ms.clone();
        let s = sanitize(&mut ms, 1, &mut Vec::new());
        assert_eq!(s, Sanitized::default());
        assert_eq!(ms, before);
    }

    #[test]
    fn validate_finds_pairing_problems() {
        assert!(
            validate(&[calls(&["a"]), result("a", "r"), Message::text(Role::User, "u")]).is_empty()
        );
        assert!(validate(&[Message::text(Role::User, "u"), calls(&["a"])]).is_empty(), "in flight");
        assert_eq!(validate(&[result("x", "r")]).len(), 1);
        assert_eq!(
            validate(&[calls(&["a", "b"]), result("a", "r"), Message::text(Role::User, "u")]).len(),
            1
        );
        assert_eq!(
            validate(&[calls(&["a"]), result("a", "r"), calls(&["a"]), result("a", "r")]).len(),
            1,
            "duplicate id"
        );
        assert_eq!(
            validate(&[calls(&["a"]), calls(&["b"]), result("a", "r"), result("b", "r")]).len(),
            2,
            "split groups"
        );
    }

    #[test]
    fn records_attached_to_dropped_messages_move_on() {
        let mut orphan = result("zzz", "r");
        orphan.attached = vec![serde_json::json!({"type": "snapshot", "n": 1})].into();
        let mut last = result("yyy", "r");
        last.attached = vec![serde_json::json!({"n": 2})].into();
        let mut ms =
            vec![Message::text(Role::User, "u"), orphan, Message::text(Role::Assistant, "a"), last];
        let mut trailing = vec![serde_json::json!({"n": 3})];
        sanitize(&mut ms, 4, &mut trailing);
        assert_eq!(ms.len(), 2);
        assert_eq!(ms[1].attached.as_slice(), [serde_json::json!({"type": "snapshot", "n": 1})]);
        assert_eq!(trailing, [serde_json::json!({"n": 2}), serde_json::json!({"n": 3})]);
    }

    #[test]
    fn in_flight_call_at_the_end_stays() {
        let mut ms = vec![
            Message::text(Role::User, "u"),
            calls(&["x"]),
            Message::text(Role::Other("exit".into()), ""),
        ];
        let s = sanitize(&mut ms, 3, &mut Vec::new());
        assert_eq!(s, Sanitized::default());
        assert_eq!(ms[1].tool_calls.len(), 1);
    }
}
