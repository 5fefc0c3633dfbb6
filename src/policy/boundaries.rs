//! Stage 5: where the protected head ends and the kept tail begins.
//!
//! ## What it does
//! - Head: the system prompt plus the first 3 non-system messages (H), or
//!   none of them when the session already holds a compaction summary near
//!   its start; extended forward over a tool group it would split.
//! - Tail: walk back from the end adding message tokens until the budget, with
//!   a soft ceiling of 1.5 × budget; keep at least min(8, ...) messages (H);
//!   then move the cut back so no tool group is split, and further back so the
//!   newest real user message and the newest assistant reply with visible text
//!   are in the tail.
//! - Autonomous turn (H, reference #80449): when the in-progress turn (the
//!   newest real user message and everything after it) alone is bigger than
//!   the soft ceiling, holds tool calls, and opens with a user message of at
//!   most 1,400 chars that is not itself over the ceiling, the newest-user
//!   rule is relaxed: the group-aligned cut inside the turn stands and the
//!   user's request rides in the summary's `## Active Task`, verbatim. The
//!   visible-reply rule then looks inside the turn only (a reply before the
//!   ask is an earlier turn's, and would pull the whole turn back just the same).
//!   We depart from the reference on purpose: an opening ask of at most
//!   [`Tail::whole_ask_tokens`] (half the summary cap in lean and tiered mode)
//!   qualifies too, however many chars it has, and the summary quotes it
//!   whole. Real asks run to thousands of chars; under the 1,400-char rule
//!   they kept a session of one long turn over the trigger after compaction.
//! - Nothing to fold (H): [`first_group_end`] gives the cut a compaction that
//!   must fold uses when the aligned cut would leave the middle empty: the
//!   message after the head and its whole tool group are folded.
//!
//! ## Why
//! The head holds the task as first stated, the tail the work in flight. A cut
//! inside a tool group would leave a call without its result (an API error),
//! and a newest user message folded into the summary would be read as history.
//!
//! ## Example
//! `sys u a u a[call] t t u a` with a tail budget that reaches into the `t`s
//! → the cut moves to `a[call]`: `head | middle | a[call] t t u a`.
//!
//! A coding agent's session is often one ask and hundreds of calls: without
//! the autonomous-turn rule the tail swallows the whole turn and the
//! compacted request stays over the trigger.
//!
//! ## Invariants
//! - Every rule after the walk only moves the cut earlier (the tail only
//!   grows), except the autonomous-turn rule, which leaves the aligned cut
//!   where it is instead of moving it back to the turn's user message.
//! - `head_end <= tail_start <= len`; when everything after the head fits the
//!   budget, the tail is the minimum (8 messages, fewer in a shorter session).

use super::summary::{is_summary, real_user_text};
use crate::catalog::window::tail_soft_ceiling;
use crate::model::{Message, Role};
use std::borrow::Borrow;
use std::collections::HashMap;

/// Non-system messages protected at the start (H).
pub const PROTECT_FIRST_N: usize = 3;
/// The tail keeps at least this many messages (H).
pub const MIN_TAIL_MESSAGES: usize = 8;
/// How far past the head a summary is looked for to decide the head is empty (H).
const SUMMARY_PROBE_EXTRA: usize = 4;
/// An autonomous turn opens with a user message of at most this many chars
/// (H, reference #80449): a request short enough to quote whole in the
/// summary's `## Active Task`.
pub const AUTONOMOUS_OPENING_MAX_CHARS: usize = 1_400;

/// What decides the tail's start besides the messages.
#[derive(Clone, Copy, Debug)]
pub struct Tail {
    /// The tail budget in tokens (soft ceiling 1.5 × this).
    pub budget: u64,
    /// An opening ask of at most this many tokens makes a long turn
    /// autonomous whatever its length in chars; 0 keeps the reference's rule
    /// alone ([`AUTONOMOUS_OPENING_MAX_CHARS`]).
    pub whole_ask_tokens: u64,
}

/// Where each tool group starts and ends, by call id.
///
/// A group is an assistant message with calls and every result that answers
/// one of them, wherever the results sit (Codex logs put each parallel call in
/// its own assistant message, then all the results). A result whose call id is
/// unknown belongs to the nearest assistant-with-calls before its run of results.
struct Groups {
    /// Per message: the position of the call a result answers.
    call_of: Vec<Option<usize>>,
    /// `suffix_min[i]`: the earliest call answered by a result at or after `i`.
    suffix_min: Vec<usize>,
    /// `prefix_max[i]`: one past the last result of a call before `i` (0 if none).
    prefix_max: Vec<usize>,
}

impl Groups {
    fn new<M: Borrow<Message>>(msgs: &[M]) -> Groups {
        let msg = |i: usize| -> &Message { msgs[i].borrow() };
        let n = msgs.len();
        let mut call_of = vec![None; n];
        let mut last_call: HashMap<&str, usize> = HashMap::new();
        for (i, answers) in call_of.iter_mut().enumerate() {
            let m = msg(i);
            if m.is_tool_result() {
                let by_id = m.tool_call_id.as_deref().and_then(|id| last_call.get(id).copied());
                *answers = by_id.or_else(|| {
                    let mut j = i;
                    while j > 0 && msg(j - 1).is_tool_result() {
                        j -= 1;
                    }
                    (j > 0 && msg(j - 1).has_tool_calls()).then(|| j - 1)
                });
            }
            for c in m.tool_calls.iter() {
                last_call.insert(c.id.as_str(), i);
            }
        }
        let mut suffix_min = vec![usize::MAX; n + 1];
        for i in (0..n).rev() {
            suffix_min[i] = suffix_min[i + 1].min(call_of[i].unwrap_or(usize::MAX));
        }
        let mut last_result = vec![0usize; n];
        for (i, c) in call_of.iter().enumerate() {
            if let Some(c) = c {
                last_result[*c] = last_result[*c].max(i + 1);
            }
        }
        let mut prefix_max = vec![0usize; n + 1];
        for i in 0..n {
            prefix_max[i + 1] = prefix_max[i].max(last_result[i]);
        }
        Groups { call_of, suffix_min, prefix_max }
    }

    /// Moves a cut back until no result after it answers a call before it.
    fn align_backward(&self, mut cut: usize) -> usize {
        while cut < self.suffix_min.len() && self.suffix_min[cut] < cut {
            cut = self.suffix_min[cut];
        }
        cut
    }

    /// Moves the end of the head forward until every call in it has its results in it.
    fn align_forward(&self, mut end: usize) -> usize {
        while end < self.prefix_max.len() && self.prefix_max[end] > end {
            end = self.prefix_max[end];
        }
        end
    }
}

/// Moves a cut at `idx` back so that no tool group is split by it.
pub fn align_backward(msgs: &[Message], idx: usize) -> usize {
    Groups::new(msgs).align_backward(idx.min(msgs.len()))
}

/// End (exclusive) of the protected head.
pub fn head_end(msgs: &[Message], protect_first_n: usize) -> usize {
    let sys = msgs.iter().take_while(|m| m.role.is_system()).count();
    let probe_end = (sys + protect_first_n + SUMMARY_PROBE_EXTRA).min(msgs.len());
    let holds_summary = msgs[sys..probe_end].iter().any(is_summary);
    let n = if holds_summary { 0 } else { protect_first_n };
    Groups::new(msgs).align_forward((sys + n).min(msgs.len()))
}

/// The minimum tail for a session with `available` messages after the head
/// that could be summarized (the reference's floor arithmetic).
fn min_tail(available: usize) -> usize {
    if available <= 1 {
        return available;
    }
    let compressible_cap = available.saturating_sub(2).max(3);
    MIN_TAIL_MESSAGES.min(compressible_cap).min(available)
}

/// Message sizes as [`tail_start_sized`] reads them.
///
/// Invariant the readers keep: every size asked for lies in a suffix of the
/// session that is walked from the newest message back, so the sizes asked
/// for are exactly those from the lowest index asked to the end. A source
/// may therefore work out sizes lazily, from the end back, and never work
/// out one below the lowest index asked (`stages::Recount`).
pub trait Sizes {
    /// Message `i`'s size in tokens.
    fn size(&mut self, i: usize) -> u64;
}

impl Sizes for &[u64] {
    fn size(&mut self, i: usize) -> u64 {
        self[i]
    }
}

/// Start of the tail under `tail`. `tokens[i]` is message `i`'s size.
/// `msgs` may be the pruned messages (`Cow`s, see [`super::Slot`]).
pub fn tail_start<M: Borrow<Message>>(
    msgs: &[M],
    tokens: &[u64],
    head_end: usize,
    tail: Tail,
) -> usize {
    tail_start_sized(msgs, &mut { tokens }, head_end, tail)
}

/// [`tail_start`] with the sizes read from `tokens` as it needs them (only
/// sizes of a suffix of the messages are read: see [`Sizes`]).
pub fn tail_start_sized<M: Borrow<Message>>(
    msgs: &[M],
    tokens: &mut impl Sizes,
    head_end: usize,
    tail: Tail,
) -> usize {
    let budget = tail.budget;
    let n = msgs.len();
    if n <= head_end + 1 {
        // At most one message after the head: it is the newest, and the newest
        // message is never folded into a summary of itself.
        return head_end.min(n);
    }
    let min_tail = min_tail(n - head_end - 1);
    let soft = tail_soft_ceiling(budget);
    let mut acc = 0u64;
    let mut cut = n;
    for i in (head_end..n).rev() {
        let t = tokens.size(i);
        if acc + t > soft && n - i >= min_tail {
            break;
        }
        acc += t;
        cut = i;
    }
    if cut <= head_end && acc > 0 && acc <= soft {
        // Everything fit under the soft ceiling: walk again against the budget itself.
        let mut raw = 0u64;
        for j in (head_end..n).rev() {
            let t = tokens.size(j);
            if raw + t > budget && n - j >= min_tail {
                cut = j;
                break;
            }
            raw += t;
            cut = j;
        }
    }
    let fallback = n - min_tail;
    cut = cut.min(fallback);
    if cut <= head_end {
        cut = fallback.max(head_end + 1);
    }
    let groups = Groups::new(msgs);
    cut = groups.align_backward(cut);
    // In an autonomous turn the reply rule looks inside the turn only: a reply
    // before the ask belongs to an earlier turn, and keeping it would pull the
    // whole turn into the tail just the same.
    let mut replies_from = head_end;
    if let Some(u) = last_real_user(msgs, head_end)
        && u < cut
    {
        if autonomous_turn(msgs, tokens, u, soft, tail.whole_ask_tokens) {
            replies_from = u + 1;
        } else {
            cut = groups.align_backward(u);
        }
    }
    if let Some(a) = last_visible_assistant(msgs, replies_from)
        && a < cut
    {
        cut = groups.align_backward(a);
    }
    // A result nothing answers is not a group: the cut need not keep it.
    let mut cut = cut.max(head_end);
    while cut < n && msgs[cut].borrow().is_tool_result() && groups.call_of[cut].is_none() {
        cut += 1;
    }
    cut
}

/// Returns true if and only if the turn opened by the real user message at
/// `u` (it and everything after it) is an autonomous turn (H, #80449): bigger
/// than the `soft` ceiling in tokens, with tool calls inside it, opened by a
/// message of at most [`AUTONOMOUS_OPENING_MAX_CHARS`] chars or at most
/// `whole_ask_tokens` tokens that is not itself over the ceiling.
fn autonomous_turn<M: Borrow<Message>>(
    msgs: &[M],
    tokens: &mut impl Sizes,
    u: usize,
    soft: u64,
    whole_ask_tokens: u64,
) -> bool {
    let opening = msgs[u].borrow();
    // The turn is summed from its end back (the order `Sizes` promises).
    let turn: u64 = (u..msgs.len()).rev().map(|i| tokens.size(i)).sum();
    let at_u = tokens.size(u);
    let short = real_user_text(opening).is_some_and(|t| {
        !super::more_chars_than(&t, AUTONOMOUS_OPENING_MAX_CHARS) || at_u <= whole_ask_tokens
    });
    let calls = msgs[u + 1..].iter().any(|m| m.borrow().has_tool_calls());
    short && at_u <= soft && turn > soft && calls
}

/// The cut that folds the first message after the head and the rest of its
/// tool group (H, "nothing to fold"); `None` when that would fold every
/// message after the head (the newest message is never folded).
pub fn first_group_end<M: Borrow<Message>>(msgs: &[M], head_end: usize) -> Option<usize> {
    let n = msgs.len();
    if head_end + 1 >= n {
        return None;
    }
    let cut = Groups::new(msgs).align_forward(head_end + 1);
    (cut < n).then_some(cut)
}

/// Index of the newest real user message at or after `from`.
pub fn last_real_user<M: Borrow<Message>>(msgs: &[M], from: usize) -> Option<usize> {
    (from..msgs.len()).rev().find(|&i| real_user_text(msgs[i].borrow()).is_some())
}

/// Index of the newest assistant message with visible text at or after
/// `from` (summaries excluded), else of the newest assistant message.
pub fn last_visible_assistant<M: Borrow<Message>>(msgs: &[M], from: usize) -> Option<usize> {
    let msg = |i: usize| -> &Message { msgs[i].borrow() };
    let is_assistant = |i: &usize| msg(*i).role == Role::Assistant && !is_summary(msg(*i));
    (from..msgs.len())
        .rev()
        .filter(is_assistant)
        .find(|&i| msg(i).has_visible_text())
        .or_else(|| (from..msgs.len()).rev().find(is_assistant))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_msgs::{asst, calls, result, user};

    /// The system prompt `s`, then `rest`.
    fn with_system(rest: impl IntoIterator<Item = Message>) -> Vec<Message> {
        let mut msgs = vec![Message::text(Role::System, "s")];
        msgs.extend(rest);
        msgs
    }

    /// `group` at 10, between a head (0-3), six fillers (4-9) and a user
    /// message with five replies after it.
    fn around(group: impl IntoIterator<Item = Message>) -> Vec<Message> {
        let mut msgs = with_system([user("u"), asst("a"), user("u")]);
        msgs.extend(std::iter::repeat_with(|| asst("filler")).take(6));
        msgs.extend(group);
        msgs.push(user("now"));
        msgs.extend(std::iter::repeat_with(|| asst("done")).take(5));
        msgs
    }

    /// Found by the property test: a session whose only message after the
    /// head was the newest user message (an image, over the tail budget) had
    /// that message summarized. One message after the head is all tail.
    #[test]
    fn a_single_message_after_the_head_is_never_summarized() {
        let msgs = with_system([user("a"), user("b"), user("c"), user("look at this")]);
        let tokens = [5, 5, 5, 5, 1_500];
        assert_eq!(tail_start(&msgs, &tokens, 4, reference(100)), 4);
        assert_eq!(tail_start(&msgs[..4], &tokens[..4], 4, reference(100)), 4);
    }

    #[test]
    fn head_is_system_plus_three() {
        let msgs = with_system([user("u"), asst("a"), user("u2"), asst("a2")]);
        assert_eq!(head_end(&msgs, PROTECT_FIRST_N), 4);
    }

    #[test]
    fn straddling_head_group_is_absorbed() {
        let msgs = with_system([
            user("u"),
            asst("a"),
            calls(&["x", "y"]),
            result("x", "out"),
            result("y", "out"),
            user("u2"),
        ]);
        assert_eq!(head_end(&msgs, PROTECT_FIRST_N), 6);
    }

    #[test]
    fn head_is_empty_after_a_summary() {
        let summary = user(&format!("{} body", super::super::summary::SUMMARY_PREFIX));
        let msgs = with_system([user("u"), asst("a"), user("u2"), summary, asst("x")]);
        assert_eq!(head_end(&msgs, PROTECT_FIRST_N), 1);
    }

    #[test]
    fn tail_cut_inside_a_group_moves_to_its_parent() {
        // 0 sys, 1-3 head, 4-9 filler, 10 call with results 11-13, then 14 user, 15-19 replies.
        let msgs = around([
            calls(&["a", "b", "c"]),
            result("a", "out"),
            result("b", "out"),
            result("c", "out"),
        ]);
        let tokens = vec![10u64; msgs.len()];
        // Soft ceiling 81: the walk takes 19..=12 (80 tokens) and stops at result 12.
        assert_eq!(tail_start(&msgs, &tokens, 4, reference(54)), 10);
    }

    #[test]
    fn split_parallel_calls_stay_whole() {
        // Codex shape: each parallel call in its own assistant message, then all results.
        let msgs = around([
            calls(&["p"]), // 10
            calls(&["q"]),
            calls(&["r"]),
            result("p", "out"), // 13
            result("q", "out"),
            result("r", "out"),
        ]);
        let tokens = vec![10u64; msgs.len()];
        for budget in 1..200 {
            let cut = tail_start(&msgs, &tokens, 4, reference(budget));
            assert!(!(11..=15).contains(&cut), "budget {budget}: cut {cut} splits the group");
        }
    }

    #[test]
    fn head_extends_over_split_parallel_calls() {
        let msgs = with_system([
            user("u"),
            calls(&["p"]),
            calls(&["q"]),
            result("p", "out"),
            result("q", "out"),
            user("v"),
        ]);
        assert_eq!(head_end(&msgs, PROTECT_FIRST_N), 6);
    }

    #[test]
    fn minimum_tail_when_everything_fits() {
        let mut msgs = with_system([]);
        for i in 0..20 {
            msgs.push(if i % 2 == 0 { user("u") } else { asst("a") });
        }
        let tokens = vec![1u64; msgs.len()];
        let cut = tail_start(&msgs, &tokens, 4, reference(1_000_000));
        assert_eq!(msgs.len() - cut, MIN_TAIL_MESSAGES);
    }

    #[test]
    fn short_sessions_keep_fewer() {
        let msgs: Vec<Message> =
            [user("a"), asst("b"), user("c"), asst("d"), user("e"), asst("f"), user("g")].into();
        let tokens = vec![1u64; msgs.len()];
        let cut = tail_start(&msgs, &tokens, 3, reference(1_000_000));
        // available = 3 after the head (one must remain summarizable): min tail 3.
        assert_eq!(cut, 4);
    }

    /// The reference's tail rule at `budget` tokens (no ask accepted by size).
    fn reference(budget: u64) -> Tail {
        Tail { budget, whole_ask_tokens: 0 }
    }

    /// `sys u a u | ask reply (call result) x 12`, 5 tokens a message, budget
    /// 20 (soft ceiling 30): the turn opened by `ask` is 130 tokens.
    fn one_long_turn(ask: &str) -> (Vec<Message>, Vec<u64>) {
        let mut msgs = with_system([user("u"), asst("a"), user("u")]);
        msgs.push(user(ask)); // 4
        msgs.push(asst("visible reply")); // 5
        for k in 0..12 {
            msgs.push(calls(&[&format!("k{k}")]));
            msgs.push(result(&format!("k{k}"), "out"));
        }
        let tokens = vec![5u64; msgs.len()];
        (msgs, tokens)
    }

    #[test]
    fn newest_user_and_visible_reply_end_in_the_tail() {
        // An opening message over 1,400 chars: not an autonomous turn, the rule holds.
        let (msgs, tokens) = one_long_turn(&"x".repeat(AUTONOMOUS_OPENING_MAX_CHARS + 1));
        let cut = tail_start(&msgs, &tokens, 4, reference(20));
        assert_eq!(cut, 4, "cut {cut} must keep the user message at 4");
        // No tool calls inside the turn: not autonomous either.
        let mut plain = msgs;
        plain[4] = user("the real ask");
        for m in &mut plain[6..] {
            *m = asst("thinking aloud");
        }
        assert_eq!(tail_start(&plain, &tokens, 4, reference(20)), 4);
    }

    /// SPEC 5 "autonomous turn" (H, reference #80449): one ask of at most 1,400
    /// chars, tool calls inside the turn, the turn bigger than the soft
    /// ceiling: the newest-user rule is relaxed and the aligned cut inside the
    /// turn stands (the visible-reply rule still holds).
    #[test]
    fn an_autonomous_turn_is_cut_inside() {
        let (msgs, tokens) = one_long_turn(&"x".repeat(AUTONOMOUS_OPENING_MAX_CHARS));
        let cut = tail_start(&msgs, &tokens, 4, reference(20));
        assert_eq!(cut, 5, "the visible reply at 5, inside the turn, pulls the cut back to it");
        // A reply before the ask is an earlier turn's: it does not pull the cut back.
        let mut earlier = msgs.clone();
        earlier.swap(4, 5);
        let cut = tail_start(&earlier, &tokens, 4, reference(20));
        assert_eq!(cut, earlier.len() - MIN_TAIL_MESSAGES);
        let mut silent = msgs;
        silent[5] = calls(&["k-first"]);
        silent.insert(6, result("k-first", "out"));
        let tokens = vec![5u64; silent.len()];
        let cut = tail_start(&silent, &tokens, 4, reference(20));
        // The walk stops at the soft ceiling but keeps the 8-message floor.
        assert_eq!(cut, silent.len() - MIN_TAIL_MESSAGES);
        assert!(silent[cut].has_tool_calls());
        // The turn no bigger than the soft ceiling: the rule holds.
        let small = vec![1u64; silent.len()];
        assert_eq!(tail_start(&silent, &small, 4, reference(20)), 4);
        // The opening message itself over the soft ceiling: the rule holds.
        let mut big_ask = tokens;
        big_ask[4] = 31;
        assert_eq!(tail_start(&silent, &big_ask, 4, reference(20)), 4);
    }

    /// Our departure from the reference (docs/rules.md 6.5): an opening ask
    /// over 1,400 chars still opens an autonomous turn when its tokens fit
    /// `whole_ask_tokens`; one token more and the reference's rule holds.
    #[test]
    fn a_long_ask_within_half_the_summary_cap_opens_an_autonomous_turn() {
        let (msgs, mut tokens) = one_long_turn(&"x".repeat(AUTONOMOUS_OPENING_MAX_CHARS * 3));
        tokens[4] = 12; // the ask: 12 tokens, under the soft ceiling of 30
        let lean = |limit| Tail { budget: 20, whole_ask_tokens: limit };
        assert_eq!(tail_start(&msgs, &tokens, 4, lean(12)), 5, "at the limit: cut inside");
        assert_eq!(tail_start(&msgs, &tokens, 4, lean(11)), 4, "one over: the ask is kept");
        assert_eq!(tail_start(&msgs, &tokens, 4, reference(20)), 4, "the reference's rule");
    }

    /// SPEC 5 "nothing to fold" (H): the cut moves to the message after the
    /// head and forward past that message's tool group.
    #[test]
    fn the_first_group_after_the_head_is_folded() {
        let mut msgs = with_system([user("u"), asst("a"), user("u")]);
        msgs.extend([
            calls(&["p", "q"]),
            result("p", "out"),
            result("q", "out"),
            user("next"),
            asst("done"),
        ]);
        assert_eq!(first_group_end(&msgs, 4), Some(7));
        // A plain message after the head: just it.
        let plain: Vec<Message> = [&msgs[..4], &[asst("x")], &msgs[7..]].concat();
        assert_eq!(first_group_end(&plain, 4), Some(5));
        // The group reaches the end: nothing can be folded.
        assert_eq!(first_group_end(&msgs[..7], 4), None);
        assert_eq!(first_group_end(&msgs[..5], 4), None);
    }

    #[test]
    fn the_tail_only_grows_under_alignment() {
        let mut msgs = with_system([]);
        for k in 0..30 {
            msgs.push(user(&format!("u{k}")));
            msgs.push(calls(&[&format!("c{k}")]));
            msgs.push(result(&format!("c{k}"), "out"));
            msgs.push(asst("ok"));
        }
        let tokens: Vec<u64> = (0..msgs.len() as u64).map(|i| 5 + i % 7).collect();
        for budget in [1u64, 10, 50, 100, 200, 400, 10_000] {
            let cut = tail_start(&msgs, &tokens, 4, reference(budget));
            assert!(cut >= 4 && cut <= msgs.len());
            assert!(msgs.len() - cut >= MIN_TAIL_MESSAGES.min(msgs.len() - 5));
            if cut < msgs.len() {
                assert!(!msgs[cut].is_tool_result(), "budget {budget}: cut on a result");
            }
        }
    }
}
