//! The four pruning stages (SPEC 6, stages 1-4), behind one signature and
//! one table that lean, legacy and tiered share.
//!
//! A stage rewrites messages in place, only where it changes something
//! ([`Slot::write`]), inside the range its [`Scope`] gives it, and adds what it
//! did to the [`Effects`]. Lean and legacy run the table in order before a
//! summary (`prune`); tiered runs it one stage at a time and stops at the
//! target. Adding a stage is one file and one line of [`STAGES`].

use super::{Caches, Effects, Policy, Tier, dedup, micro_compact, strip_media, truncate};
use crate::model::Message;
use crate::tokens::Meter;
use std::borrow::{Borrow, Cow};
use std::ops::Range;

/// A message a pruning stage may rewrite. `summarize` and tiered mode run the
/// stages over `Cow`s borrowed from the input, so pruning clones only the
/// messages it changes, not the session (the folded middle is never cloned); a
/// slice of owned messages works the same (tests). A stage calls `write`
/// only where it changes something.
///
/// `write` is the only way a stage gets a `&mut Message`, and it marks the
/// message as made by us ([`MessageMeta::made`](crate::model::MessageMeta::made)):
/// the fact a training output's loss flag (`train`) is read from, kept by this
/// signature rather than by comparing messages afterwards.
pub trait Slot: Borrow<Message> {
    fn write(&mut self) -> &mut Message;
}

impl Slot for Message {
    fn write(&mut self) -> &mut Message {
        self.meta.made = true;
        self
    }
}

impl Slot for Cow<'_, Message> {
    fn write(&mut self) -> &mut Message {
        let m = self.to_mut();
        m.meta.made = true;
        m
    }
}

/// The input's messages as slots for the stages, none cloned yet.
pub(crate) fn borrowed(msgs: &[Message]) -> Vec<Cow<'_, Message>> {
    msgs.iter().map(Cow::Borrowed).collect()
}

/// Sizes of pruned messages: the input's (`tokens`) where a stage left the
/// message alone, counted again where it wrote one.
pub(crate) fn recounted(tokens: &[u64], pruned: &[Cow<'_, Message>], meter: &Meter) -> Vec<u64> {
    let again = |(t, m): (&u64, &Cow<'_, Message>)| match m {
        Cow::Borrowed(_) => *t,
        Cow::Owned(m) => meter.message(m),
    };
    tokens.iter().zip(pruned).map(again).collect()
}

/// [`recounted`] worked out as [`boundaries::tail_start_sized`](super::boundaries::tail_start_sized)
/// asks, from the newest message back: a size below the lowest index asked
/// for is never counted (lean and legacy's cut reads only the tail's sizes,
/// while the stages rewrite mostly the middle, which is folded anyway).
///
/// Invariant: `counts[from..]` is `recounted(tokens, pruned, meter)[from..]`.
pub(crate) struct Recount<'s, 'm> {
    pruned: &'s [Cow<'m, Message>],
    meter: &'s Meter,
    counts: Vec<u64>,
    from: usize,
}

impl<'s, 'm> Recount<'s, 'm> {
    pub(crate) fn new(tokens: &'s [u64], pruned: &'s [Cow<'m, Message>], meter: &'s Meter) -> Self {
        Recount { pruned, meter, counts: tokens.to_vec(), from: tokens.len() }
    }
}

impl super::boundaries::Sizes for Recount<'_, '_> {
    fn size(&mut self, i: usize) -> u64 {
        while self.from > i {
            self.from -= 1;
            if let Cow::Owned(m) = &self.pruned[self.from] {
                self.counts[self.from] = self.meter.message(m);
            }
        }
        self.counts[i]
    }
}

/// The slots as owned messages (cloning those no stage wrote).
pub(crate) fn owned(slots: Vec<Cow<'_, Message>>) -> Vec<Message> {
    slots.into_iter().map(Cow::into_owned).collect()
}

/// Where the stages may write: `reach` for dedup, micro-compaction and media
/// (the head included, SPEC 5), `body` for truncation (which would cut the
/// head's text).
pub struct Scope {
    pub reach: Range<usize>,
    pub body: Range<usize>,
}

/// What a stage does: rewrite the slots inside its scope under the policy,
/// adding its figures to the effects.
pub type Run = fn(&mut [Cow<'_, Message>], &Scope, &Policy, &Caches, &mut Effects);

/// One pruning stage: the tier it is, and what it does.
pub struct Stage {
    pub tier: Tier,
    pub run: Run,
}

impl Stage {
    /// The stage of `tier` that does `run` (a row of [`STAGES`]).
    const fn new(tier: Tier, run: Run) -> Stage {
        Stage { tier, run }
    }
}

/// The stages, cheapest first (SPEC 6): each runs its pass over the range its
/// scope gives it and records the pass's figures in the effects.
pub const STAGES: [Stage; 4] = [
    Stage::new(Tier::Dedup, |msgs, scope, _, _, e| {
        e.duplicates_marked = dedup::dedup_tool_results(msgs, scope.reach.clone());
    }),
    Stage::new(Tier::MicroCompact, |msgs, scope, p, caches, e| {
        let mc = micro_compact::micro_compact(msgs, scope.reach.clone(), &p.families, caches);
        e.tool_results_cleared = mc.results_cleared;
        e.args_shrunk = mc.args_shrunk;
    }),
    Stage::new(Tier::Truncate, |msgs, scope, _, _, e| {
        e.chars_truncated = truncate::truncate_messages(msgs, scope.body.clone());
    }),
    Stage::new(Tier::StripMedia, |msgs, scope, _, _, e| {
        let s = strip_media::strip_media(msgs, scope.reach.clone());
        e.images_stripped = s.images;
        e.reasoning_dropped = s.reasoning;
    }),
];

/// Runs every stage of [`STAGES`] in order, truncation only when `truncate`.
pub(crate) fn prune(
    msgs: &mut [Cow<'_, Message>],
    scope: &Scope,
    policy: &Policy,
    caches: &Caches,
    truncate: bool,
) -> Effects {
    let mut effects = Effects::default();
    for stage in STAGES.iter().filter(|s| truncate || s.tier != Tier::Truncate) {
        (stage.run)(msgs, scope, policy, caches, &mut effects);
    }
    effects
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::boundaries::{Tail, tail_start, tail_start_sized};
    use crate::policy::test_msgs::{asst, calls, result, user};
    use crate::tokens::o200k_meter;

    /// Turns of every kind, the odd ones long, and the stages' rewrites
    /// (shorter texts) on every third message.
    fn pruned_session() -> (Vec<Message>, Vec<Cow<'static, Message>>) {
        let mut msgs = vec![Message::text(crate::model::Role::System, "s")];
        for i in 0..40 {
            let long = "word ".repeat(if i % 2 == 1 { 300 } else { 20 });
            let id = format!("c{i}");
            msgs.push(if i % 7 == 0 { user("ok") } else { user(&long) });
            msgs.push(calls(&[id.as_str()]));
            msgs.push(result(&id, &long));
            msgs.push(asst(&long));
        }
        let pruned = msgs
            .iter()
            .enumerate()
            .map(|(i, m)| {
                if i % 3 == 0 {
                    let mut m = m.clone();
                    m.content = crate::model::Content::from_text("cut");
                    Cow::Owned(m)
                } else {
                    Cow::Owned(m.clone())
                }
            })
            .collect();
        (msgs, pruned)
    }

    /// The lazy count gives the cut of the whole recount, for every budget
    /// and rule of the ask, and counts nothing below where the cut read.
    #[test]
    fn lazy_recount_cuts_where_the_whole_recount_does() {
        let meter = o200k_meter();
        let (msgs, pruned) = pruned_session();
        let tokens = meter.messages(&msgs);
        // Borrowed slots (left alone) keep the input's sizes, which here differ
        // from what counting them would give: a recount must not touch them.
        let tokens: Vec<u64> = tokens.iter().map(|t| t + 3).collect();
        let mut slots: Vec<Cow<'_, Message>> = pruned;
        for (i, s) in slots.iter_mut().enumerate() {
            if i % 3 == 1 {
                *s = Cow::Borrowed(&msgs[i]);
            }
        }
        let whole = recounted(&tokens, &slots, &meter);
        for budget in [0, 10, 100, 500, 2_000, 8_000, 40_000, 1_000_000] {
            for whole_ask_tokens in [0, 50, 5_000] {
                for head_end in [1, 4] {
                    let tail = Tail { budget, whole_ask_tokens };
                    let mut lazy = Recount::new(&tokens, &slots, &meter);
                    let got = tail_start_sized(&slots, &mut lazy, head_end, tail);
                    assert_eq!(got, tail_start(&slots, &whole, head_end, tail), "{budget}");
                    assert_eq!(lazy.counts[lazy.from..], whole[lazy.from..], "{budget}");
                    assert!(lazy.from >= head_end.min(got), "{budget}");
                }
            }
        }
    }
}
