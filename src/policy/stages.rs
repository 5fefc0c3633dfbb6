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
