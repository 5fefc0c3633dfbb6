//! The live history of a spec whose only edits are masking (and thinking
//! cleared), kept from call to call by replay: [`MaskedHistory`].
//!
//! ## What it does
//! Replay asks such a spec (OpenHands' observation masking, Anthropic's
//! context editing) to edit the live history before every call. Instead of
//! running [`edits::mask`] and [`edits::clear_thinking`] over the whole
//! history each time, [`MaskedHistory`] holds the history with what those
//! two would look at, kept as messages arrive ([`MaskedHistory::push`]):
//! - the tool results not yet cleared, oldest first, with their rank among
//!   all results, and the sum of their sizes (`rest`);
//! - the assistant messages that still hold reasoning, oldest first.
//!
//! [`MaskedHistory::edit`] then looks only at the front of those queues: the
//! results that left the newest window since the previous call, the turns
//! whose thinking is no longer among the newest.
//!
//! ## Why
//! The whole recomputation is O(messages) at every call, O(calls x
//! messages) a session: most of `report --policies all`'s time beyond the
//! four modes (issue 39). This is O(what changes) a call.
//!
//! ## Example
//! keep 1: results A, B arrive (A, B open); the next call clears A (the
//! front, outside the newest 1) and pops it; C arrives; the next call clears
//! B only, without looking at A again.
//!
//! ## Invariants
//! - The messages can only grow by [`MaskedHistory::push`] and change by
//!   [`MaskedHistory::edit`]: the queues and `rest` always describe them
//!   (fields private).
//! - `edit` makes exactly the edits [`edits::mask`] then
//!   [`edits::clear_thinking`] would make on the whole history, and leaves
//!   it as it was when they would free nothing ([`Reason::NoGain`] of a
//!   compaction that does not shrink the request). Why the front suffices:
//!   the results `mask` may clear are a prefix of all results (the older
//!   ones), those not cleared are `open` in order, and it clears the open
//!   ones oldest first, stopping at most once, so what it clears is a front
//!   of `open`; a cleared result is never edited again, and a result never
//!   comes back into the newest window. Pinned against the whole
//!   recomputation on generated histories (tests below).
//! - Only specs whose masking needs no tool names (no `exclude_tools` or
//!   `only_tools`: a name may come from a call later in the history) and
//!   that never summarize are kept this way ([`MaskedHistory::for_spec`]).
//!
//! [`Reason::NoGain`]: crate::policy::Reason::NoGain

use super::edits;
use super::{Masking, PolicySpec, Thinking, ToolResults, Trigger};
use crate::model::Message;
use crate::policy::Slot;
use crate::tokens::Meter;
use std::collections::VecDeque;

/// See the module doc.
#[derive(Clone, Debug)]
pub(crate) struct MaskedHistory {
    masking: Masking,
    /// Thinking kept in the newest this many turns that hold any (`None`: kept).
    thinking: Option<usize>,
    placeholder_tokens: u64,
    messages: Vec<Message>,
    /// `sizes[i]`: message `i`'s tokens.
    sizes: Vec<u64>,
    /// Tool results seen (cleared or not).
    results: usize,
    /// Tool results not cleared, oldest first: (index, rank among results).
    open: VecDeque<(usize, usize)>,
    /// The tokens of the `open` results.
    rest: u64,
    /// Assistant messages that hold reasoning, oldest first.
    holders: VecDeque<usize>,
}

/// What [`MaskedHistory::edit`] changed: the indices of the messages it
/// rewrote, in order.
pub(crate) type Edited = Vec<usize>;

impl MaskedHistory {
    /// An empty history for `spec`, when its edits can be kept this way (see
    /// the module doc); `None` for every other spec.
    pub(crate) fn for_spec(spec: &PolicySpec, meter: &Meter) -> Option<MaskedHistory> {
        let ToolResults::Masked(m) = &spec.tool_results else { return None };
        let by_name = !m.exclude_tools.is_empty() || !m.only_tools.is_empty();
        if by_name || spec.summarizes() || matches!(spec.trigger, Trigger::Events(_)) {
            return None;
        }
        let thinking = match spec.thinking {
            Thinking::Kept => None,
            Thinking::Cleared(keep) => Some(keep),
        };
        Some(MaskedHistory {
            masking: m.clone(),
            thinking,
            placeholder_tokens: meter.text(&m.placeholder),
            messages: Vec::new(),
            sizes: Vec::new(),
            results: 0,
            open: VecDeque::new(),
            rest: 0,
            holders: VecDeque::new(),
        })
    }

    /// The history as edited so far.
    pub(crate) fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The history as edited so far, given up.
    pub(crate) fn into_messages(self) -> Vec<Message> {
        self.messages
    }

    /// Message `i`'s tokens.
    pub(crate) fn size(&self, i: usize) -> u64 {
        self.sizes[i]
    }

    /// Appends `m`, of `tokens` tokens.
    pub(crate) fn push(&mut self, m: &Message, tokens: u64) {
        let i = self.messages.len();
        if m.is_tool_result() {
            if !m.content.text_is(self.masking.placeholder.as_ref()) {
                self.open.push_back((i, self.results));
                self.rest += tokens;
            }
            self.results += 1;
        }
        if edits::holds_reasoning(m) {
            self.holders.push_back(i);
        }
        self.messages.push(m.clone());
        self.sizes.push(tokens);
    }

    /// Makes the spec's edits before a call (see the module doc), counting
    /// the rewritten messages with `meter`; `total` is the request's size
    /// now (the edits are dropped when they leave it at least as big).
    /// Returns what changed, empty when nothing did.
    pub(crate) fn edit(&mut self, meter: &Meter, total: u64) -> Edited {
        let m = &self.masking;
        let n = self.messages.len();
        let older = |&&(i, rank): &&(usize, usize)| match m.count {
            super::Count::Results => rank < self.results.saturating_sub(m.keep_newest),
            super::Count::Messages => i < n.saturating_sub(m.keep_newest),
        };
        let mut rest = self.rest;
        let mut freed = 0u64;
        let mut cleared = 0usize;
        for &(i, _) in self.open.iter().take_while(older) {
            if m.stop_under_tokens.is_some_and(|limit| rest <= limit) {
                break;
            }
            rest -= self.sizes[i];
            freed += self.sizes[i].saturating_sub(self.placeholder_tokens);
            cleared += 1;
        }
        if freed < m.clear_at_least {
            cleared = 0;
        }
        let thought = self.thinking.map_or(0, |keep| self.holders.len().saturating_sub(keep));

        // The edits on copies first: dropped if they do not shrink the request.
        let masked = self.open.iter().take(cleared).map(|&(i, _)| i);
        let mut edits: Vec<(usize, Message, u64)> = Vec::with_capacity(cleared + thought);
        for i in masked {
            let mut msg = self.messages[i].clone();
            msg.write().content.replace_with_text(m.placeholder.as_ref());
            edits.push((i, msg, 0));
        }
        for &i in self.holders.iter().take(thought) {
            let mut one = [self.messages[i].clone()];
            edits::clear_thinking(&mut one, 0);
            let [msg] = one;
            edits.push((i, msg, 0));
        }
        if edits.is_empty() {
            return Vec::new();
        }
        let mut after = total;
        for (i, msg, size) in &mut edits {
            *size = meter.message(msg);
            after = after - self.sizes[*i] + *size;
        }
        if after >= total {
            return Vec::new();
        }
        for _ in 0..cleared {
            if let Some((i, _)) = self.open.pop_front() {
                self.rest -= self.sizes[i];
            }
        }
        self.holders.drain(..thought);
        edits.sort_by_key(|(i, _, _)| *i);
        let mut changed = Vec::with_capacity(edits.len());
        for (i, msg, size) in edits {
            self.messages[i] = msg;
            self.sizes[i] = size;
            changed.push(i);
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Reasoning, Role};
    use crate::policy::spec::{Count, builtin};
    use crate::policy::test_msgs::{call, result};
    use crate::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS};
    use proptest::prelude::*;
    use std::borrow::Cow;

    fn meter() -> Meter {
        Meter::new(CounterKind::Hermes, DEFAULT_IMAGE_TOKENS)
    }

    /// The whole recomputation: `edits::mask` then `edits::clear_thinking`
    /// over the whole history, dropped unless the request shrinks (what
    /// replay did at every call before [`MaskedHistory`]).
    fn whole(msgs: &[Message], spec: &PolicySpec, meter: &Meter) -> Vec<Message> {
        let ToolResults::Masked(m) = &spec.tool_results else { unreachable!() };
        let sizes = meter.messages(msgs);
        let mut slots: Vec<Cow<'_, Message>> = msgs.iter().map(Cow::Borrowed).collect();
        edits::mask(&mut slots, &sizes, m, meter.text(&m.placeholder));
        if let Thinking::Cleared(keep) = spec.thinking {
            edits::clear_thinking(&mut slots, keep);
        }
        let out: Vec<Message> = slots.into_iter().map(Cow::into_owned).collect();
        let before: u64 = sizes.iter().sum();
        let after: u64 = meter.messages(&out).iter().sum();
        if after >= before { msgs.to_vec() } else { out }
    }

    /// One generated message: a call and its result of `len` lines, a user
    /// message, an assistant turn with thinking, or a result already masked.
    fn message(kind: u8, len: usize, k: usize, placeholder: &str) -> Vec<Message> {
        let id = format!("t{k}");
        match kind {
            0 => vec![call(&id, "Bash", "{}"), result(&id, &"out\n".repeat(len))],
            1 => vec![Message::text(Role::User, "go on")],
            2 => {
                let mut m = Message::text(Role::Assistant, "thinking");
                m.reasoning =
                    Some(Reasoning { field: "reasoning".into(), text: "hmm".repeat(len) });
                vec![m]
            }
            _ => vec![call(&id, "Read", "{}"), result(&id, placeholder)],
        }
    }

    fn masking_of(spec: &PolicySpec) -> &Masking {
        let ToolResults::Masked(m) = &spec.tool_results else { unreachable!() };
        m
    }

    /// Replays `plan` with edits before every step, both ways, and compares
    /// the histories after each.
    fn same_as_whole(spec: &PolicySpec, plan: &[(u8, usize)]) -> Result<(), TestCaseError> {
        let meter = meter();
        let placeholder = masking_of(spec).placeholder.to_string();
        let mut kept = MaskedHistory::for_spec(spec, &meter).expect("a masking spec");
        let mut live: Vec<Message> = Vec::new();
        for (k, &(kind, len)) in plan.iter().enumerate() {
            for m in message(kind, len, k, &placeholder) {
                kept.push(&m, meter.message(&m));
                live.push(m);
            }
            let total: u64 = meter.messages(&live).iter().sum();
            let changed = kept.edit(&meter, total);
            let expected = whole(&live, spec, &meter);
            let differ: Vec<usize> = (0..live.len()).filter(|&i| expected[i] != live[i]).collect();
            prop_assert_eq!(&changed, &differ, "step {}", k);
            live = expected;
            prop_assert_eq!(kept.messages(), &live[..], "step {}", k);
            let sizes = meter.messages(&live);
            prop_assert_eq!(&kept.sizes, &sizes, "step {}", k);
        }
        Ok(())
    }

    fn spec(name: &str) -> PolicySpec {
        builtin::find(name).expect("a built-in").clone()
    }

    /// Variations of the built-ins: every rule of [`Masking`] that the state
    /// keeps (counts, a minimum to clear, a residual, thinking).
    fn specs() -> Vec<PolicySpec> {
        let mut out = vec![spec("openhands-masking"), spec("anthropic-context-editing")];
        let mut base = spec("anthropic-context-editing");
        let ToolResults::Masked(m) = &mut base.tool_results else { unreachable!() };
        m.clear_at_least = 40;
        out.push(base.clone());
        let ToolResults::Masked(m) = &mut base.tool_results else { unreachable!() };
        m.clear_at_least = 0;
        m.stop_under_tokens = Some(60);
        m.count = Count::Messages;
        base.thinking = Thinking::Cleared(0);
        out.push(base);
        out
    }

    proptest! {
        #[test]
        fn kept_history_equals_the_whole_recomputation(
            plan in prop::collection::vec((0u8..4, 0usize..40), 0..40),
            which in 0usize..4,
        ) {
            same_as_whole(&specs()[which], &plan)?;
        }
    }

    #[test]
    fn clears_only_what_left_the_window_and_nothing_that_would_grow() {
        let meter = meter();
        let spec = spec("openhands-masking");
        let mut kept = MaskedHistory::for_spec(&spec, &meter).expect("a masking spec");
        let mut total = 0;
        for k in 0..5 {
            for m in message(0, 20, k, "") {
                total += meter.message(&m);
                kept.push(&m, meter.message(&m));
            }
        }
        // 10 messages, the newest 5 kept: results 1 and 3 (indices) go.
        assert_eq!(kept.edit(&meter, total), vec![1, 3]);
        assert!(kept.messages()[1].content.text_is(masking_of(&spec).placeholder.as_ref()));
        assert_eq!(kept.open.len(), 3);
        // Nothing new left the window: nothing to do, nothing looked at twice.
        assert!(kept.edit(&meter, total).is_empty());
        // A result smaller than the placeholder is left as it is.
        let mut tiny = MaskedHistory::for_spec(&spec, &meter).expect("a masking spec");
        let msgs: Vec<Message> = (0..4).flat_map(|k| message(0, 0, k, "")).collect();
        for m in &msgs {
            tiny.push(m, meter.message(m));
        }
        let total = meter.messages(&msgs).iter().sum();
        assert!(tiny.edit(&meter, total).is_empty());
        assert_eq!(tiny.messages(), &msgs[..]);
    }

    #[test]
    fn specs_that_need_names_or_summarize_are_not_kept() {
        let meter = meter();
        assert!(MaskedHistory::for_spec(&spec("claude-code"), &meter).is_none());
        assert!(MaskedHistory::for_spec(&spec("lean"), &meter).is_none());
        let mut named = spec("openhands-masking");
        let ToolResults::Masked(m) = &mut named.tool_results else { unreachable!() };
        m.exclude_tools = Cow::Owned(vec![Cow::Borrowed("Edit")]);
        assert!(MaskedHistory::for_spec(&named, &meter).is_none());
    }
}
