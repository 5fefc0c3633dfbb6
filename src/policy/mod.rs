//! The compaction pipeline: a pure function from (session, policy) to a
//! compacted session and a record of what was done (SPEC 6).
//!
//! Stages, cheapest first, one file each:
//! 1. [`dedup`] — repeated tool outputs become a pointer to the newest copy;
//! 2. [`micro_compact`] — old tool outputs become one-liners, long arguments shrink;
//! 3. [`truncate`] — long texts keep their head and tail;
//! 4. [`strip_media`] — old images and reasoning go;
//! 5. [`boundaries`] — protected head and tail;
//! 6. [`summary`] — the middle becomes a structured, reference-only summary;
//! 7. [`assemble`] — head + summary + tail with alternating roles;
//! 8. [`sanitize`] — call/result pairs repaired outside the tail.
//!
//! Modes: `lean` (default) and `legacy` run 1, 2, 4 outside the protected tail
//! (the head included: its place and its system, user and assistant text are
//! protected, not its tool results, arguments and images; stage 4's images go
//! everywhere but the newest image-bearing user message) and then fold the
//! middle (they differ in tail budget and lean's extras);
//! `tiered` runs 1-4 one at a time and stops at the target, summarizing only
//! if still over; `none` changes nothing.
//!
//! Nothing here does I/O or prints; `compact` is deterministic. The one
//! exception is injected: a `Policy::summarizer` may block its worker on a
//! request (what and where: the `driver` module's doc).

pub mod anchors;
pub mod assemble;
pub mod boundaries;
mod caches;
pub mod dedup;
mod driver;
pub mod micro_compact;
mod prepared;
mod record;
pub mod sanitize;
pub mod spec;
pub mod stages;
pub mod strip_media;
pub mod summary;
pub mod summary_writer;
#[cfg(test)]
mod test_msgs;
mod text;
pub mod tool_families;
pub mod truncate;
pub mod verify;

pub use caches::{Caches, Reach};
pub use driver::{compact, compact_prepared};
pub(crate) use driver::{is_recorded_output, untriggered};
pub use prepared::{Prepared, session_anchors, session_anchors_line};
pub use record::{AnchorFigures, Compaction, Effects, Reason, Sections};
pub use stages::Slot;
pub use text::session_text;
pub(crate) use text::{more_chars_than, newlines};

use crate::catalog::window;
use crate::model::Session;
use anchors::AnchorBudget;
use std::borrow::Cow;
use std::str::FromStr;
use tool_families::ToolFamilies;

/// How a session is compacted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Small verbatim tail (2.5% of the window), anchors and user messages in the summary.
    Lean,
    /// The reference's original large tail (20% of the threshold).
    Legacy,
    /// Cheapest stage first, summary only if still over the target.
    Tiered,
    /// No change: format conversion and counting.
    None,
}

crate::model::names::named!(Mode {
    Lean => "lean",
    Legacy => "legacy",
    Tiered => "tiered",
    None => "none",
});

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::from_name(s)
            .ok_or_else(|| format!("unknown mode `{s}` (expected lean, legacy, tiered or none)"))
    }
}

/// The last stage a session needed, in pipeline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Nothing was done.
    None,
    Dedup,
    MicroCompact,
    Truncate,
    StripMedia,
    Summary,
}

crate::model::names::named!(Tier {
    None => "none",
    Dedup => "dedup",
    MicroCompact => "micro_compact",
    Truncate => "truncate",
    StripMedia => "strip_media",
    Summary => "summary",
});

/// Everything that decides how a session is compacted.
#[derive(Clone, Debug)]
pub struct Policy {
    pub mode: Mode,
    /// Context window in tokens.
    pub window: u64,
    /// Trigger threshold in tokens (see [`window::threshold_tokens`]).
    pub threshold: u64,
    /// Compact sessions over this size even under the trigger; in `tiered`
    /// mode, also the size to stop at (default: half the threshold).
    pub target_tokens: Option<u64>,
    /// Compact every session, as a manual `/compress` would.
    pub force: bool,
    /// Non-system messages protected at the start.
    pub protect_first_n: usize,
    pub anchor_budget: AnchorBudget,
    pub families: ToolFamilies,
    /// Measure anchor retention for the record ([`AnchorFigures::retention`]):
    /// it extracts the anchors of the whole input and searches the output for
    /// them. Replay turns it off: its compactions' records are never read, and
    /// it compacts the live history again at every trigger; so does `compact`
    /// without `--report`, whose records go nowhere the figures are shown.
    pub measure_retention: bool,
    /// `--summarizer` / `--summarizer-cmd`: writes the summary body; the
    /// deterministic one when `None` or when it fails ([`summary_writer`]).
    pub summarizer: Option<std::sync::Arc<dyn summary_writer::SummaryWriter>>,
    /// What the policy decides, as data ([`spec`]): one of today's modes runs
    /// that mode's code ([`spec::PolicySpec::reference_mode`]), any other spec
    /// runs the engine of `spec/run.rs`. `mode`, `threshold` and `protect_first_n` are read
    /// from it when the policy is built.
    pub spec: std::sync::Arc<spec::PolicySpec>,
}

impl Policy {
    /// The reference defaults for `mode` at `window` tokens.
    pub fn new(mode: Mode, window: u64) -> Policy {
        Policy::from_spec(std::sync::Arc::new(spec::builtin::of_mode(mode).clone()), window)
    }

    /// The policy `spec` describes at `window` tokens (our window: a spec's own,
    /// [`spec::PolicySpec::window`], moves only its trigger and shares).
    pub fn from_spec(spec: std::sync::Arc<spec::PolicySpec>, window: u64) -> Policy {
        Policy {
            // A spec that is none of today's modes runs `spec::run`, not a mode.
            mode: spec.reference_mode().unwrap_or(Mode::Lean),
            window,
            threshold: spec.threshold(window, None),
            target_tokens: None,
            force: false,
            protect_first_n: spec.protect.first,
            anchor_budget: AnchorBudget::Auto,
            families: ToolFamilies::default(),
            measure_retention: true,
            summarizer: None,
            spec,
        }
    }

    /// The policy's name (its spec's): `lean`, `codex`, a file's own
    /// ([`spec::file`] keeps a loaded name for the whole run).
    pub fn name(&self) -> &'static str {
        match &self.spec.name {
            Cow::Borrowed(name) => name,
            Cow::Owned(_) => spec::file::UNNAMED,
        }
    }

    /// Sets the window and the threshold its trigger gives there (`cap`:
    /// `--threshold-cap`).
    pub fn set_window(&mut self, window: u64, cap: Option<u64>) {
        self.window = window;
        self.threshold = self.spec.threshold(window, cap);
    }

    /// Returns true if and only if a request of `tokens` over a history of
    /// `messages` messages is still over the trigger after a compaction (one
    /// step to the anti-thrash stop): never for a policy that only edits.
    pub fn still_over(&self, tokens: u64, messages: usize) -> bool {
        match self.spec.trigger {
            spec::Trigger::Events(n) => messages > n,
            spec::Trigger::EveryRequest | spec::Trigger::Never => false,
            _ => self.spec.summarizes() && tokens >= self.threshold,
        }
    }

    /// Returns true if and only if a replay compacts before a call whose
    /// request measures `tokens` and whose live history holds `messages`
    /// messages (`fires_at`: the size the policy acts from).
    pub fn fires(&self, tokens: u64, messages: usize) -> bool {
        match self.spec.trigger {
            spec::Trigger::Never => false,
            spec::Trigger::Events(n) => messages > n,
            spec::Trigger::EveryRequest => true,
            _ => tokens >= self.spec.edits_from(self.threshold),
        }
    }

    /// The smallest request, in tokens, that compaction acts on (the trigger,
    /// or one over `target_tokens` when that is lower); `None` when it acts
    /// on every session (`force`), `u64::MAX` in mode `none`.
    pub fn acts_from(&self) -> Option<u64> {
        if self.mode == Mode::None {
            return Some(u64::MAX);
        }
        if self.force {
            return None;
        }
        let over_target = self.target_tokens.map_or(u64::MAX, |t| t.saturating_add(1));
        Some(self.spec.edits_from(self.threshold).min(over_target))
    }

    /// The tail budget of a summarizing pass in `mode`.
    fn tail_budget(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Legacy => window::legacy_tail_budget(self.threshold, self.window),
            Mode::Lean | Mode::Tiered | Mode::None => window::lean_tail_budget(self.window),
        }
    }

    /// The longest ask a summarizing pass in `mode` quotes whole and accepts
    /// as an autonomous turn's opening, in tokens: half the summary cap, but
    /// legacy keeps the reference's rule (docs/rules.md 6.5).
    fn whole_ask_tokens(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Legacy => 0,
            Mode::Lean | Mode::Tiered | Mode::None => summary::whole_ask_max_tokens(self.window),
        }
    }

    /// What finds the tail of a summarizing pass in `mode` (stage 5).
    pub fn tail(&self, mode: Mode) -> boundaries::Tail {
        boundaries::Tail {
            budget: self.tail_budget(mode),
            whole_ask_tokens: self.whole_ask_tokens(mode),
        }
    }

    /// The size `tiered` mode stops at.
    pub fn tiered_target(&self) -> u64 {
        self.target_tokens.unwrap_or(self.threshold / 2)
    }
}

/// A compacted session and its record.
///
/// The session is borrowed from the input when compaction left it as it was
/// (mode `none`, under the trigger, nothing to gain): most sessions of an
/// archive, which would otherwise be copied whole only to be written back or
/// compared with themselves.
#[derive(Clone, Debug)]
pub struct Outcome<'a> {
    pub session: Cow<'a, Session>,
    pub compaction: Compaction,
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
