//! The engine of a spec that is none of today's modes: the edits
//! ([`edits`](super::edits)), then, when due, the summarizing pass the modes
//! share (the driver runs it, [`Plan::Fold`]) with the spec's own tail,
//! headings and budget.
//!
//! ## What it does
//! 1. An event trigger not reached: nothing (unless forced).
//! 2. Tool results masked or truncated, thinking cleared, as the spec says.
//! 3. The summary is due when the spec has one and its trigger fired: on
//!    events, the count; on tokens, the request before the edits, or after
//!    them when the masking runs ahead of the trigger (Claude Code's
//!    micro-compaction runs from 20,000 tokens below auto-compaction).
//! 4. The middle between the first `protect.first` messages and the
//!    protected end is folded; Codex's newest user messages up to a budget go
//!    back in before the summary.
//!
//! ## Invariants
//! - Pure and deterministic, like [`compact`](crate::policy::compact).
//! - No edit and no summary: the session is returned borrowed, unchanged.

use super::edits;
use super::{Last, Thinking, ToolResults, Trigger};
use crate::model::{Message, Role};
use crate::policy::stages::{borrowed, recounted};
use crate::policy::summary::{self, real_user_text};
use crate::policy::{Effects, Outcome, Policy, Reason, Tier, boundaries};
use crate::tokens::Meter;
use std::borrow::Cow;

/// Marks where a kept user message was cut to the rest of the budget (Codex's
/// `truncate_text` says "tokens truncated"; this wording is ours).
pub const USER_MESSAGE_CUT: &str = "…[tokens truncated]";

/// What [`plan`] decided for a session under a spec.
pub(in crate::policy) enum Plan<'a> {
    /// Leave it as it is, for this reason.
    Leave(Reason),
    /// The edits alone: the messages as they left them, what they did, the
    /// last stage they amount to, and the request's size after them.
    Edited { slots: Vec<Cow<'a, Message>>, effects: Effects, tier: Tier, tokens_after: u64 },
    /// Fold the middle up to `cut` (the summarizing pass), after the edits.
    Fold { slots: Vec<Cow<'a, Message>>, effects: Effects, tokens: Vec<u64>, cut: usize },
}

/// Decides and makes the edits of `policy`'s spec (none of today's modes) on
/// `msgs`, whose sizes are `tokens`, `fixed` the rest of the request and
/// `before` its whole size; the caller folds when told to.
pub(in crate::policy) fn plan<'a>(
    msgs: &'a [Message],
    policy: &Policy,
    meter: &Meter,
    tokens: &[u64],
    fixed: u64,
    before: u64,
) -> Plan<'a> {
    let spec = &policy.spec;
    let events = msgs.len();
    if let Trigger::Events(n) = spec.trigger
        && events <= n
        && !policy.force
    {
        return Plan::Leave(Reason::UnderTrigger);
    }

    let mut slots = borrowed(msgs);
    let mut effects = Effects::default();
    let mut tier = Tier::None;
    match &spec.tool_results {
        ToolResults::Masked(m) => {
            let placeholder = meter.text(&m.placeholder);
            effects.tool_results_cleared = edits::mask(&mut slots, tokens, m, placeholder);
            if effects.tool_results_cleared > 0 {
                tier = Tier::MicroCompact;
            }
        }
        ToolResults::Truncated(t) => {
            effects.chars_truncated = edits::truncate(&mut slots, tokens, t);
            if effects.chars_truncated > 0 {
                tier = Tier::Truncate;
            }
        }
        ToolResults::Kept | ToolResults::Stages | ToolResults::Tiers => {}
    }
    if let Thinking::Cleared(keep) = spec.thinking {
        effects.reasoning_dropped = edits::clear_thinking(&mut slots, keep);
        if effects.reasoning_dropped > 0 {
            tier = tier.max(Tier::StripMedia);
        }
    }
    let counts = recounted(tokens, &slots, meter);
    let after_edits = fixed + counts.iter().sum::<u64>();

    let fired = policy.force || before >= policy.threshold;
    let edits_ahead = spec.edits_from(policy.threshold) < policy.threshold;
    let summary_due = spec.summarizes()
        && match spec.trigger {
            Trigger::Events(n) => events > n || policy.force,
            Trigger::EveryRequest | Trigger::Never => false,
            _ => fired && (!edits_ahead || after_edits >= policy.threshold),
        };
    if summary_due {
        let head_end = boundaries::head_end(msgs, policy.protect_first_n);
        // The share is of the history as it came (Gemini CLI splits before it truncates).
        let cut = protected_from(msgs, tokens, head_end, spec.protect.last);
        return Plan::Fold { slots, effects, tokens: counts, cut };
    }
    if slots.iter().all(|s| matches!(s, Cow::Borrowed(_))) {
        return Plan::Leave(Reason::NoGain);
    }
    Plan::Edited { slots, effects, tier, tokens_after: after_edits }
}

/// Where the protected end starts in `msgs` (sizes `tokens`).
fn protected_from(msgs: &[Message], tokens: &[u64], head_end: usize, last: Last) -> usize {
    let n = msgs.len();
    let raw = match last {
        Last::Messages(k) => n.saturating_sub(k),
        Last::Share(f) => {
            let total: u64 = tokens[head_end.min(n)..].iter().sum();
            let want = (total as f64 * f) as u64;
            let mut acc = 0u64;
            let mut i = n;
            while i > head_end && acc < want {
                i -= 1;
                acc += tokens[i];
            }
            i
        }
        // Not allowed with this engine (`PolicySpec::check`): lean's tail then.
        Last::Lean | Last::Legacy => n,
    };
    boundaries::align_backward(msgs, raw.max(head_end))
}

/// Codex: the newest real user messages of the folded part, up to `budget`
/// tokens (the first that does not fit cut to the rest), go back in, in
/// order, just before the summary.
pub(in crate::policy) fn keep_user_messages(
    outcome: &mut Outcome<'_>,
    msgs: &[Message],
    budget: u64,
    fixed: u64,
    meter: &Meter,
) {
    let Some((from, to)) = outcome.compaction.summarized_range else { return };
    let Cow::Owned(out) = &mut outcome.session else { return };
    let mut kept: Vec<Message> = Vec::new();
    let mut left = budget;
    for m in msgs[from..to].iter().rev() {
        let Some(text) = real_user_text(m) else { continue };
        if summary::is_summary(m) {
            continue;
        }
        let t = meter.text(&text);
        if t <= left {
            left -= t;
            kept.push(Message::text(Role::User, text));
            continue;
        }
        if left > 0 {
            // About 4 chars a token (Codex's own estimate, truncate.rs).
            let chars = (left as usize).saturating_mul(4);
            let head: String = text.chars().take(chars).collect();
            kept.push(Message::text(Role::User, format!("{head}{USER_MESSAGE_CUT}")));
        }
        break;
    }
    if kept.is_empty() {
        return;
    }
    kept.reverse();
    let at = out.messages.iter().position(summary::is_summary).unwrap_or(out.messages.len());
    let whole = kept.iter().filter(|m| !m.text_content().ends_with(USER_MESSAGE_CUT)).count();
    for (k, mut m) in kept.into_iter().enumerate() {
        m.meta.made = true;
        out.messages.insert(at + k, m);
    }
    let c = &mut outcome.compaction;
    c.messages_after = out.messages.len();
    c.tokens_after = fixed + meter.messages(&out.messages).iter().sum::<u64>();
    c.user_messages_kept_whole = whole;
    c.sections.head_messages = at;
}
