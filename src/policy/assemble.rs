//! Stage 7: head + summary + tail, with roles that keep alternating.
//!
//! ## What it does
//! Inserts the summary as its own message between the head and the rest,
//! choosing its role so roles alternate: `user` after an assistant or tool
//! message (or when nothing but a system prompt precedes it), `assistant`
//! after a user message. When the first message after it has that same role
//! and the other role would collide with the head, the summary is merged into
//! that first message instead (prepended, the message's own text kept after
//! it). Appends a one-time note to the system prompt (H).
//!
//! ## Why
//! Anthropic rejects two consecutive messages of one role and some OpenAI-
//! compatible servers do too; a summary that breaks alternation would make the
//! compacted session unusable as a request.
//!
//! ## Example
//! `sys u a | S | a` → `sys u a user(S) a`; `sys u a | S | u a` → a user
//! summary would meet `u` and an assistant one would follow `a`, so it merges:
//! `sys u a user(S + u) a`.
//!
//! ## Invariants
//! - The head is not changed, except the system note appended once.
//! - A merged summary is prepended; the message's own content follows verbatim.

use super::summary::SYSTEM_NOTE;
use crate::model::{Message, Role};

/// Where the summary went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// A message of its own at this index, with this role.
    Standalone { index: usize, role_user: bool },
    /// Merged into the message at this index.
    Merged { index: usize },
}

/// Chooses the summary's role, or `None` when it must be merged.
fn choose_role(last_head: Option<&Role>, first_after: Option<&Role>) -> Option<Role> {
    let force_user = matches!(last_head, None | Some(Role::System | Role::Developer));
    let role = match last_head {
        Some(Role::Assistant | Role::Tool) => Role::User,
        _ if force_user => Role::User,
        _ => Role::Assistant,
    };
    if first_after != Some(&role) {
        return Some(role);
    }
    let flipped = if role == Role::User { Role::Assistant } else { Role::User };
    (!force_user && last_head != Some(&flipped)).then_some(flipped)
}

/// Builds `head + summary + rest`.
pub fn assemble(
    mut head: Vec<Message>,
    summary: &str,
    rest: Vec<Message>,
) -> (Vec<Message>, Placement) {
    let last_head = head.last().map(|m| m.role.clone());
    let first_after = rest.first().map(|m| m.role.clone());
    let index = head.len();
    let role = choose_role(last_head.as_ref(), first_after.as_ref());
    let placement = match (role, rest.is_empty()) {
        (Some(role), _) => {
            let role_user = role == Role::User;
            head.push(Message::made(role, summary));
            Placement::Standalone { index, role_user }
        }
        (None, true) => {
            head.push(Message::made(Role::User, summary));
            Placement::Standalone { index, role_user: true }
        }
        (None, false) => Placement::Merged { index },
    };
    let mut out = head;
    out.extend(rest);
    if let Placement::Merged { index } = placement {
        out[index].content.prepend_text(summary);
        out[index].meta.made = true;
    }
    (out, placement)
}

/// Appends [`SYSTEM_NOTE`] to the system prompt once. Returns true if and only if it was added.
pub fn add_system_note(messages: &mut [Message]) -> bool {
    let Some(sys) = messages.first_mut().filter(|m| m.role.is_system()) else { return false };
    if sys.text_content().contains(SYSTEM_NOTE) {
        return false;
    }
    sys.content.append_text(SYSTEM_NOTE);
    sys.meta.made = true;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(role: Role) -> Message {
        Message::text(role, "x")
    }

    fn roles(ms: &[Message]) -> Vec<&str> {
        ms.iter().map(|m| m.role.as_str()).collect()
    }

    #[test]
    fn user_after_assistant() {
        let (out, p) = assemble(
            vec![m(Role::System), m(Role::User), m(Role::Assistant)],
            "S",
            vec![m(Role::Assistant)],
        );
        assert_eq!(roles(&out), ["system", "user", "assistant", "user", "assistant"]);
        assert_eq!(p, Placement::Standalone { index: 3, role_user: true });
    }

    #[test]
    fn assistant_after_user() {
        let (out, _) = assemble(vec![m(Role::System), m(Role::User)], "S", vec![m(Role::User)]);
        assert_eq!(roles(&out), ["system", "user", "assistant", "user"]);
    }

    #[test]
    fn merged_when_both_roles_collide() {
        let (out, p) = assemble(
            vec![m(Role::System), m(Role::User), m(Role::Assistant)],
            "S",
            vec![m(Role::User), m(Role::Assistant)],
        );
        assert_eq!(p, Placement::Merged { index: 3 });
        assert_eq!(roles(&out), ["system", "user", "assistant", "user", "assistant"]);
        assert_eq!(out[3].text_content(), "S\n\nx");
    }

    #[test]
    fn forced_user_after_system_merges_into_a_user_tail() {
        let (out, p) =
            assemble(vec![m(Role::System)], "S", vec![m(Role::User), m(Role::Assistant)]);
        assert_eq!(p, Placement::Merged { index: 1 });
        assert_eq!(roles(&out), ["system", "user", "assistant"]);
    }

    #[test]
    fn forced_user_after_system_before_assistant() {
        let (out, _) = assemble(vec![m(Role::System)], "S", vec![m(Role::Assistant)]);
        assert_eq!(roles(&out), ["system", "user", "assistant"]);
    }

    #[test]
    fn alternation_holds_for_every_neighbour_pair() {
        let all = [Role::System, Role::User, Role::Assistant, Role::Tool];
        for head in
            [None, Some(Role::System), Some(Role::User), Some(Role::Assistant), Some(Role::Tool)]
        {
            for after in all.iter().skip(1).cloned().map(Some).chain([None]) {
                let h: Vec<Message> = head.clone().map(m).into_iter().collect();
                let r: Vec<Message> = after.clone().map(m).into_iter().collect();
                let (out, _) = assemble(h, "S", r);
                for w in out.windows(2) {
                    let same =
                        w[0].role == w[1].role && matches!(w[0].role, Role::User | Role::Assistant);
                    assert!(!same, "{head:?} | {after:?}: {:?}", roles(&out));
                }
            }
        }
    }

    #[test]
    fn system_note_is_added_once() {
        let mut ms = vec![m(Role::System), m(Role::User)];
        assert!(add_system_note(&mut ms));
        assert!(!add_system_note(&mut ms));
        assert_eq!(ms[0].text_content().matches(SYSTEM_NOTE).count(), 1);
        let mut no_sys = vec![m(Role::User)];
        assert!(!add_system_note(&mut no_sys));
    }
}
