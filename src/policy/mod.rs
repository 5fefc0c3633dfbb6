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
//! Nothing here does I/O or prints; `compact` is deterministic.

pub mod anchors;
pub mod assemble;
pub mod boundaries;
pub mod dedup;
pub mod micro_compact;
pub mod sanitize;
pub mod strip_media;
pub mod summary;
pub mod summary_writer;
pub mod tool_families;
pub mod truncate;
pub mod verify;

use crate::model::{Message, Session};
use crate::tokens::{CounterKind, Meter};
use crate::window;
use anchors::{AnchorBudget, AnchorSet, Category};
use assemble::Placement;
use micro_compact::index_calls;
use std::borrow::{Borrow, Cow};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use summary_writer::{BodyRequest, Fallback, SummarizerUse, SummaryWriter};
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

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Lean => "lean",
            Mode::Legacy => "legacy",
            Mode::Tiered => "tiered",
            Mode::None => "none",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "lean" => Ok(Mode::Lean),
            "legacy" => Ok(Mode::Legacy),
            "tiered" => Ok(Mode::Tiered),
            "none" => Ok(Mode::None),
            other => Err(format!("unknown mode `{other}` (expected lean, legacy, tiered or none)")),
        }
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

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::None => "none",
            Tier::Dedup => "dedup",
            Tier::MicroCompact => "micro_compact",
            Tier::Truncate => "truncate",
            Tier::StripMedia => "strip_media",
            Tier::Summary => "summary",
        }
    }
}

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
    pub summarizer: Option<Arc<dyn SummaryWriter>>,
}

impl Policy {
    /// The reference defaults for `mode` at `window` tokens.
    pub fn new(mode: Mode, window: u64) -> Policy {
        Policy {
            mode,
            window,
            threshold: window::threshold_tokens(window, None),
            target_tokens: None,
            force: false,
            protect_first_n: boundaries::PROTECT_FIRST_N,
            anchor_budget: AnchorBudget::Auto,
            families: ToolFamilies::default(),
            measure_retention: true,
            summarizer: None,
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
        Some(self.threshold.min(over_target))
    }

    /// The tail budget of a summarizing pass in `mode`.
    fn tail_budget(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Legacy => window::legacy_tail_budget(self.threshold, self.window),
            Mode::Lean | Mode::Tiered | Mode::None => window::lean_tail_budget(self.window),
        }
    }

    /// The size `tiered` mode stops at.
    pub fn tiered_target(&self) -> u64 {
        self.target_tokens.unwrap_or(self.threshold / 2)
    }
}

/// Counts of what the stages changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    pub duplicates_marked: usize,
    pub tool_results_cleared: usize,
    pub args_shrunk: usize,
    pub chars_truncated: u64,
    pub images_stripped: usize,
    pub reasoning_dropped: usize,
    pub results_dropped: usize,
    pub calls_dropped: usize,
}

/// Why a session ended up as it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// `--mode none`.
    ModeNone,
    /// The request is under the trigger and nothing forced compaction.
    UnderTrigger,
    /// Compaction ran.
    Compacted,
    /// Too few messages outside the head and tail to do anything.
    TooShort,
    /// Already compacted, with nothing new since the summary.
    NothingNew,
    /// Compaction would not have made the request smaller.
    NoGain,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::ModeNone => "mode_none",
            Reason::UnderTrigger => "under_trigger",
            Reason::Compacted => "compacted",
            Reason::TooShort => "too_short",
            Reason::NothingNew => "nothing_new",
            Reason::NoGain => "no_gain",
        }
    }
}

/// Anchor figures of one session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnchorFigures {
    /// Per category: (distinct anchors in the input, of them still verbatim in the output).
    pub retention: BTreeMap<Category, (usize, usize)>,
    /// Distinct anchors of the summarized region, and how many the index holds.
    pub region_found: usize,
    pub indexed: usize,
    pub dropped_for_budget: BTreeMap<String, usize>,
}

/// What was done to one session: the SPEC 6 `compaction` record and report figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Compaction {
    pub mode: Mode,
    pub tier: Tier,
    pub reason: Reason,
    pub compacted: bool,
    pub messages_before: usize,
    pub messages_after: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub head_messages: usize,
    pub summary_messages: usize,
    /// Messages after the summary (kept + protected tail).
    pub tail_messages: usize,
    /// The last messages, copied verbatim from the input (the protected tail).
    pub verbatim_tail_messages: usize,
    pub head_tokens: u64,
    pub summary_tokens: u64,
    pub tail_tokens: u64,
    /// Tokens of the messages the summary replaced, before compaction.
    pub middle_tokens: u64,
    /// Original message index range `[start, end)` the summary replaced.
    pub summarized_range: Option<(usize, usize)>,
    pub summary_merged: bool,
    pub effects: Effects,
    pub anchors: AnchorFigures,
    pub user_messages_summarized: usize,
    pub user_messages_kept_whole: usize,
    /// Secrets the summary did not quote (masked, or dropped from its anchor index).
    pub secrets_masked: u64,
    /// Compacted, and the request is still over the trigger threshold (SPEC 5).
    pub over_trigger: bool,
    /// What the summarizer did, when one is configured and a summary was built.
    pub summarizer: Option<SummarizerUse>,
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

/// One input, with what compaction learns of it whatever the policy, computed
/// at most once: `report` compacts each session under three policies, and the
/// input's anchors (for the retention figures) are the same for all three.
/// It borrows the session, so the facts cannot outlive or miss a change to it.
#[derive(Debug)]
pub struct Prepared<'a> {
    session: &'a Session,
    /// The input's anchors, with the tool families they were read with.
    anchors: OnceLock<(ToolFamilies, AnchorSet)>,
    /// The input's per-message token counts, with the counter and image cost
    /// they were counted with: each mode would otherwise look every text up
    /// in the count cache again (hashing it whole).
    tokens: OnceLock<((CounterKind, u64), Vec<u64>)>,
    /// The input anchors found in each output text searched so far, by text
    /// (see [`Prepared::retention`]): `report`'s modes keep the same head and
    /// tail, and each would search them again.
    occurring: Mutex<HashMap<PieceKey, Box<[u32]>>>,
    /// Each message's identity for replay's shared-prefix test: `report`
    /// replays every session under each mode.
    keys: OnceLock<Vec<u128>>,
}

/// An output text by its hash and length ([`crate::memo::text_key`]) and what it is.
type PieceKey = ((u128, usize), Piece);

/// What an output text is to [`Prepared::retention`]: a text part, or a
/// call's arguments (searched with the strings they hold, as [`session_text`] joins them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Piece {
    Text,
    Arguments,
}

impl<'a> Prepared<'a> {
    pub fn new(session: &'a Session) -> Prepared<'a> {
        Prepared {
            session,
            anchors: OnceLock::new(),
            tokens: OnceLock::new(),
            occurring: Mutex::default(),
            keys: OnceLock::new(),
        }
    }

    /// An input whose per-message tokens under `meter` the caller already
    /// holds: `replay` keeps the size of every message of its live history as
    /// a running sum, and a compaction of that history would otherwise look
    /// every text up in the count cache again. `tokens` must be what
    /// `meter.messages` gives for the session (asserted in unit tests).
    pub(crate) fn with_tokens(
        session: &'a Session,
        meter: &Meter,
        tokens: Vec<u64>,
    ) -> Prepared<'a> {
        #[cfg(test)]
        assert_eq!(tokens, meter.messages(&session.messages), "the tokens given are the meter's");
        let counted = OnceLock::from(((meter.kind(), meter.image_tokens()), tokens));
        Prepared { tokens: counted, ..Prepared::new(session) }
    }

    /// The session it prepares.
    pub fn session(&self) -> &'a Session {
        self.session
    }

    /// The tokens of each input message under `meter`: counted once, then
    /// shared (counted afresh, not kept, under another counter or image cost).
    pub(crate) fn tokens(&self, meter: &Meter) -> Cow<'_, [u64]> {
        let key = (meter.kind(), meter.image_tokens());
        let (counted_with, tokens) =
            self.tokens.get_or_init(|| (key, meter.messages(&self.session.messages)));
        if *counted_with == key {
            Cow::Borrowed(tokens)
        } else {
            Cow::Owned(meter.messages(&self.session.messages))
        }
    }

    /// Each input message's key for the shared-prefix test of
    /// [`crate::replay`]: computed once, then shared.
    pub(crate) fn message_keys(&self) -> &[u128] {
        self.keys.get_or_init(|| self.session.messages.iter().map(crate::replay::key).collect())
    }

    /// The anchors of the whole input, read with `families`: computed once,
    /// then shared (computed afresh, not kept, for other families).
    fn anchors(&self, families: &ToolFamilies) -> Cow<'_, AnchorSet> {
        let (read_with, set) = self
            .anchors
            .get_or_init(|| (families.clone(), session_anchors(&self.session.messages, families)));
        if read_with == families {
            Cow::Borrowed(set)
        } else {
            Cow::Owned(session_anchors(&self.session.messages, families))
        }
    }

    /// Per category: (distinct anchors of the input read with `families`, how
    /// many appear verbatim in `output`): what [`AnchorSet::retention`] gives for
    /// [`session_text`] of `output`, searched text by text (no anchor spans the
    /// newline that joins two). What each text holds is kept: an output that
    /// keeps a text searched for an earlier output does not search it again.
    pub(crate) fn retention(
        &self,
        families: &ToolFamilies,
        output: &[Message],
    ) -> BTreeMap<Category, (usize, usize)> {
        let set = self.anchors(families);
        let mut found = vec![false; set.len()];
        // Only the set this input keeps has its results kept.
        let mut kept = matches!(set, Cow::Borrowed(_))
            .then(|| self.occurring.lock().unwrap_or_else(PoisonError::into_inner));
        for (text, piece) in read_texts(output) {
            let search = || match piece {
                Piece::Text => set.occurring(text),
                Piece::Arguments => {
                    let mut joined = String::new();
                    push_read(text, piece, &mut joined);
                    set.occurring(&joined)
                }
            };
            let mut put = |ids: &[u32]| ids.iter().for_each(|&i| found[i as usize] = true);
            match kept.as_mut() {
                Some(kept) if text.len() >= MIN_KEPT_SEARCH_BYTES => put(kept
                    .entry((crate::memo::text_key(text), piece))
                    .or_insert_with(|| search().into_boxed_slice())),
                _ => put(&search()),
            }
        }
        set.retention_of(&found)
    }
}

/// Shorter output texts are searched again rather than kept by
/// [`Prepared::retention`]: hashing and a map entry would cost more.
const MIN_KEPT_SEARCH_BYTES: usize = 64;

/// Compacts one session. Pure and deterministic.
pub fn compact<'a>(session: &'a Session, policy: &Policy, meter: &Meter) -> Outcome<'a> {
    compact_prepared(&Prepared::new(session), policy, meter)
}

/// Compacts a prepared input: the same outcome as [`compact`] of its session,
/// sharing what other compactions of the same `Prepared` computed.
pub fn compact_prepared<'a>(input: &Prepared<'a>, policy: &Policy, meter: &Meter) -> Outcome<'a> {
    let session = input.session;
    let tokens = input.tokens(meter);
    let fixed = meter.tools(session.tools.as_ref()) + meter.request_overhead();
    let before = fixed + tokens.iter().sum::<u64>();
    if let Some(record) = untriggered(policy, session.messages.len(), before) {
        return Outcome { session: Cow::Borrowed(session), compaction: record };
    }
    let mut record = unchanged_record(session.messages.len(), policy.mode, before, Reason::NoGain);
    if is_recorded_output(session, before, meter) {
        record.reason = Reason::NothingNew;
        return Outcome { session: Cow::Borrowed(session), compaction: record };
    }
    let outcome = match policy.mode {
        Mode::Tiered => compact_tiered(input, policy, meter, &tokens, fixed, before),
        Mode::Lean | Mode::Legacy => summarize(
            input,
            policy,
            meter,
            &tokens,
            fixed,
            before,
            policy.mode,
            Pruning::Run { truncate: false },
            Tier::Summary,
        ),
        // Returned by `untriggered` above.
        Mode::None => Outcome { session: Cow::Borrowed(session), compaction: record.clone() },
    };
    // Never make a request bigger (a forced compaction of a short session can).
    if outcome.compaction.compacted && outcome.compaction.tokens_after >= before {
        record.reason = Reason::NoGain;
        // The summarizer was asked all the same: what it did and spent is counted.
        record.summarizer = outcome.compaction.summarizer;
        return Outcome { session: Cow::Borrowed(session), compaction: record };
    }
    let mut outcome = outcome;
    let c = &mut outcome.compaction;
    c.over_trigger = c.compacted && c.tokens_after > policy.threshold;
    outcome
}

/// Returns true if and only if the session is exactly what an earlier run of
/// ours wrote: its `compaction` record's message count and token total (under
/// the same counter) still match, so nothing was appended since.
fn is_recorded_output(session: &Session, tokens: u64, meter: &Meter) -> bool {
    let Some(c) = session.extra.get("compaction").and_then(|v| v.as_object()) else { return false };
    let get = |k: &str| c.get(k).and_then(serde_json::Value::as_u64);
    c.get("counter").and_then(serde_json::Value::as_str) == Some(meter.kind().name())
        && get("tokens_after") == Some(tokens)
        && get("messages_after") == Some(session.messages.len() as u64)
}

/// The record of a session of `messages` messages and `before` tokens that
/// `policy` does not compact whatever it holds (mode `none`, under the
/// trigger); `None` when compaction must look at it. What [`compact`] returns
/// for such a session, for callers that know its size without decoding it.
pub(crate) fn untriggered(policy: &Policy, messages: usize, before: u64) -> Option<Compaction> {
    if policy.mode == Mode::None {
        return Some(unchanged_record(messages, policy.mode, before, Reason::ModeNone));
    }
    match policy.acts_from() {
        Some(from) if before < from => {
            Some(unchanged_record(messages, policy.mode, before, Reason::UnderTrigger))
        }
        _ => None,
    }
}

fn unchanged_record(messages: usize, mode: Mode, tokens: u64, reason: Reason) -> Compaction {
    Compaction {
        mode,
        tier: Tier::None,
        reason,
        compacted: false,
        messages_before: messages,
        messages_after: messages,
        tokens_before: tokens,
        tokens_after: tokens,
        head_messages: 0,
        summary_messages: 0,
        tail_messages: messages,
        verbatim_tail_messages: messages,
        head_tokens: 0,
        summary_tokens: 0,
        tail_tokens: tokens,
        middle_tokens: 0,
        summarized_range: None,
        summary_merged: false,
        effects: Effects::default(),
        anchors: AnchorFigures::default(),
        user_messages_summarized: 0,
        user_messages_kept_whole: 0,
        secrets_masked: 0,
        over_trigger: false,
        summarizer: None,
    }
}

/// A message a pruning stage may rewrite. `summarize` and tiered mode run the
/// stages over `Cow`s borrowed from the input, so pruning clones only the
/// messages it changes, not the session (the folded middle is never cloned); a
/// slice of owned messages works the same (tests). A stage calls `write`
/// only where it changes something.
pub trait Slot: Borrow<Message> {
    fn write(&mut self) -> &mut Message;
}

impl Slot for Message {
    fn write(&mut self) -> &mut Message {
        self
    }
}

impl Slot for Cow<'_, Message> {
    fn write(&mut self) -> &mut Message {
        self.to_mut()
    }
}

/// The input's messages as slots for the stages, none cloned yet.
fn borrowed(msgs: &[Message]) -> Vec<Cow<'_, Message>> {
    msgs.iter().map(Cow::Borrowed).collect()
}

/// Sizes of pruned messages: the input's (`tokens`) where a stage left the
/// message alone, counted again where it wrote one.
fn recounted(tokens: &[u64], pruned: &[Cow<'_, Message>], meter: &Meter) -> Vec<u64> {
    let again = |(t, m): (&u64, &Cow<'_, Message>)| match m {
        Cow::Borrowed(_) => *t,
        Cow::Owned(m) => meter.message(m),
    };
    tokens.iter().zip(pruned).map(again).collect()
}

/// The slots as owned messages (cloning those no stage wrote).
fn owned(slots: Vec<Cow<'_, Message>>) -> Vec<Message> {
    slots.into_iter().map(Cow::into_owned).collect()
}

/// Index of a compaction summary in `msgs[range]`, if any.
fn summary_in(msgs: &[Message], range: std::ops::Range<usize>) -> Option<usize> {
    range.rev().find(|&i| summary::is_summary(&msgs[i]))
}

/// Runs stages 1, 2 and 4 on `msgs[..protected]` (the head included, SPEC 5),
/// and 3 when `truncate` on `msgs[head_end..protected]` (it would cut the
/// head's text); stage 4's images go in the whole session.
fn prune<S: Slot>(
    msgs: &mut [S],
    head_end: usize,
    protected: usize,
    policy: &Policy,
    truncate: bool,
) -> Effects {
    let range = 0..protected;
    let mut e = Effects {
        duplicates_marked: dedup::dedup_tool_results(msgs, range.clone()),
        ..Effects::default()
    };
    let mc = micro_compact::micro_compact(msgs, range.clone(), &policy.families);
    e.tool_results_cleared = mc.results_cleared;
    e.args_shrunk = mc.args_shrunk;
    if truncate {
        e.chars_truncated = truncate::truncate_messages(msgs, head_end..protected);
    }
    let s = strip_media::strip_media(msgs, range);
    e.images_stripped = s.images;
    e.reasoning_dropped = s.reasoning;
    e
}

/// Tiered mode: one stage at a time until the request is at or under the target.
fn compact_tiered<'a>(
    input: &Prepared<'a>,
    policy: &Policy,
    meter: &Meter,
    tokens: &[u64],
    fixed: u64,
    before: u64,
) -> Outcome<'a> {
    let session = input.session;
    let target = policy.tiered_target();
    let msgs = &session.messages;
    let head_end = boundaries::head_end(msgs, policy.protect_first_n);
    let protected = boundaries::tail_start(msgs, tokens, head_end, policy.tail_budget(Mode::Lean));
    // Stages 1, 2 and 4 reach into the head (SPEC 5); truncation does not.
    let range = 0..protected.max(head_end);
    let body = head_end..protected.max(head_end);
    let mut pruned = borrowed(msgs);
    let mut effects = Effects::default();
    let mut counts = Vec::new();
    for tier in [Tier::Dedup, Tier::MicroCompact, Tier::Truncate, Tier::StripMedia] {
        match tier {
            Tier::Dedup => {
                effects.duplicates_marked = dedup::dedup_tool_results(&mut pruned, range.clone())
            }
            Tier::MicroCompact => {
                let mc = micro_compact::micro_compact(&mut pruned, range.clone(), &policy.families);
                effects.tool_results_cleared = mc.results_cleared;
                effects.args_shrunk = mc.args_shrunk;
            }
            Tier::Truncate => {
                effects.chars_truncated = truncate::truncate_messages(&mut pruned, body.clone())
            }
            Tier::StripMedia => {
                let s = strip_media::strip_media(&mut pruned, range.clone());
                effects.images_stripped = s.images;
                effects.reasoning_dropped = s.reasoning;
            }
            Tier::None | Tier::Summary => {}
        }
        counts = recounted(tokens, &pruned, meter);
        let after = fixed + counts.iter().sum::<u64>();
        if after <= target {
            let out = session.with_messages(owned(pruned));
            if out.messages == session.messages {
                // Already at the target and no stage changed anything: say so.
                let record =
                    unchanged_record(session.messages.len(), Mode::Tiered, before, Reason::NoGain);
                return Outcome { session: Cow::Borrowed(session), compaction: record };
            }
            let mut record =
                unchanged_record(session.messages.len(), Mode::Tiered, before, Reason::Compacted);
            record.tier = tier;
            record.compacted = true;
            record.tokens_after = after;
            record.head_messages = head_end;
            record.head_tokens = counts[..head_end].iter().sum();
            record.tail_messages = out.messages.len() - head_end;
            record.verbatim_tail_messages = msgs.len() - protected;
            record.tail_tokens = after - record.head_tokens - fixed;
            record.effects = effects;
            record.anchors = anchor_figures(input, &out, policy, None);
            return Outcome { session: Cow::Owned(out), compaction: record };
        }
    }
    // The summary tier prunes exactly as the tiers above did (same stages, same
    // order, same range): it takes their result instead of pruning again.
    let done = Pruning::Done { slots: pruned, effects, tokens: counts };
    summarize(input, policy, meter, tokens, fixed, before, Mode::Tiered, done, Tier::Summary)
}

/// Stages 1-4 before a summary: run them, or take what a caller already ran.
enum Pruning<'a> {
    /// Run them; stage 3 (truncation) only when `truncate`.
    Run { truncate: bool },
    /// Tiered mode ran all four, one at a time, over the same range: the
    /// messages as they left them, what they did, and the messages' sizes.
    Done { slots: Vec<Cow<'a, Message>>, effects: Effects, tokens: Vec<u64> },
}

/// The summarizing pass (lean, legacy, and tiered's last tier).
#[allow(clippy::too_many_arguments)]
fn summarize<'a>(
    input: &Prepared<'a>,
    policy: &Policy,
    meter: &Meter,
    tokens: &[u64],
    fixed: u64,
    before: u64,
    mode: Mode,
    pruning: Pruning<'a>,
    tier: Tier,
) -> Outcome<'a> {
    let session = input.session;
    let msgs = &session.messages;
    let budget = policy.tail_budget(if mode == Mode::Legacy { Mode::Legacy } else { Mode::Lean });
    let head_end = boundaries::head_end(msgs, policy.protect_first_n);
    let too_short = || Outcome {
        session: Cow::Borrowed(session),
        compaction: unchanged_record(session.messages.len(), mode, before, Reason::TooShort),
    };
    let mut protected = boundaries::tail_start(msgs, tokens, head_end, budget);
    if protected <= head_end {
        // Nothing to fold (H): this compaction must fold, so the first group goes.
        match boundaries::first_group_end(msgs, head_end) {
            Some(c) => protected = c,
            None => return too_short(),
        }
    }
    // Our own output compacted again: only the earlier summary (and the old head
    // before it) lies between the head and the tail.
    if let Some(s) = summary_in(msgs, head_end..protected)
        && s + 1 == protected
        && s - head_end <= policy.protect_first_n
        && !policy.force
    {
        return Outcome {
            session: Cow::Borrowed(session),
            compaction: unchanged_record(session.messages.len(), mode, before, Reason::NothingNew),
        };
    }

    // The stages run over borrowed messages and clone only those they change
    // (`Slot`): the folded middle is never copied, and only changed messages
    // are counted again. The output takes the kept messages as they are.
    let (mut pruned, mut effects, pruned_tokens) = match pruning {
        Pruning::Run { truncate } => {
            let mut pruned = borrowed(msgs);
            let effects = prune(&mut pruned, head_end, protected, policy, truncate);
            let counts = recounted(tokens, &pruned, meter);
            (pruned, effects, counts)
        }
        Pruning::Done { slots, effects, tokens } => (slots, effects, tokens),
    };
    let mut cut = boundaries::tail_start(&pruned, &pruned_tokens, head_end, budget).min(protected);
    if cut <= head_end {
        // Nothing to fold once pruned (H): the cut steps past the first group,
        // and the protected tail starts there if it started before.
        match boundaries::first_group_end(&pruned, head_end) {
            Some(c) => cut = c,
            None => return too_short(),
        }
        protected = protected.max(cut);
    }

    let lean = mode != Mode::Legacy;
    let (out_msgs, summary_out, placement, kept_from, summarizer_use) = {
        let middle = &msgs[head_end..cut];
        let middle_tokens: u64 = tokens[head_end..cut].iter().sum();
        let region_chars: usize = middle.iter().map(|m| m.content.text_chars()).sum();
        // Messages outside the middle that the stages rewrote (the head's and
        // the kept messages' tool results): their anchors go in the index.
        let rewritten: Vec<usize> = (0..protected)
            .filter(|i| !(head_end..cut).contains(i) && matches!(pruned[*i], Cow::Owned(_)))
            .collect();
        let input = summary::SummaryInput {
            all: msgs,
            middle,
            middle_start: head_end,
            families: &policy.families,
            lean,
            budget_tokens: window::summary_budget(middle_tokens, policy.window),
            anchor_budget_chars: policy.anchor_budget.resolve(region_chars),
            max_tokens: summary::summary_max_tokens(policy.window),
            pruned: &rewritten,
        };
        let (built, used) = match &policy.summarizer {
            None => (summary::build_summary(&input, meter), None),
            Some(writer) => written_summary(writer.as_ref(), &input, meter),
        };
        let rest = owned(pruned.split_off(cut));
        pruned.truncate(head_end);
        let (mut out, placement) = assemble::assemble(owned(pruned), &built.text, rest);
        // Non-chat records of the folded messages stay in the file, with the summary.
        let mut carried: Vec<serde_json::Value> =
            middle.iter().flat_map(|m| m.attached.iter().cloned()).collect();
        let kept_from = match placement {
            Placement::Standalone { index, .. } => {
                out[index].attached = carried.into();
                index + 1
            }
            Placement::Merged { index } => {
                carried.append(&mut out[index].take_attached());
                out[index].attached = carried.into();
                index
            }
        };
        (out, Some(built), Some(placement), kept_from, used)
    };
    let mut out_msgs = out_msgs;
    assemble::add_system_note(&mut out_msgs);
    let protected_from = kept_from + (protected - cut);
    let mut trailing = session.trailing.clone();
    let s = sanitize::sanitize(&mut out_msgs, protected_from, &mut trailing);
    effects.results_dropped = s.results_dropped;
    effects.calls_dropped = s.calls_dropped;

    let out = Session { trailing, ..session.with_messages(out_msgs) };
    let out_tokens = meter.messages(&out.messages);
    let after = fixed + out_tokens.iter().sum::<u64>();
    let summary_messages = usize::from(matches!(placement, Some(Placement::Standalone { .. })));
    let tail_start = (kept_from).min(out_tokens.len());
    let mut record = unchanged_record(session.messages.len(), mode, before, Reason::Compacted);
    record.tier = tier;
    record.compacted = out.messages != session.messages;
    record.messages_after = out.messages.len();
    record.tokens_after = after;
    record.head_messages = head_end;
    record.head_tokens = out_tokens[..head_end.min(out_tokens.len())].iter().sum();
    record.summary_messages = summary_messages;
    record.summary_merged = matches!(placement, Some(Placement::Merged { .. }));
    record.summary_tokens = summary_out.as_ref().map_or(0, |s| meter.text(&s.text));
    record.tail_messages = out.messages.len() - tail_start;
    record.verbatim_tail_messages = msgs.len() - protected;
    record.tail_tokens = out_tokens[tail_start..].iter().sum::<u64>()
        - if record.summary_merged { record.summary_tokens } else { 0 };
    record.middle_tokens = tokens[head_end..cut.max(head_end)].iter().sum();
    record.summarized_range = (cut > head_end).then_some((head_end, cut));
    record.effects = effects;
    if let Some(s) = &summary_out {
        record.user_messages_summarized = s.user_messages;
        record.user_messages_kept_whole = s.user_messages_whole;
        record.secrets_masked = s.secrets_masked;
    }
    record.anchors = anchor_figures(input, &out, policy, summary_out.as_ref());
    record.summarizer = summarizer_use;
    Outcome { session: Cow::Owned(out), compaction: record }
}

/// The summary with `writer`'s body, or the deterministic one and why.
fn written_summary(
    writer: &dyn SummaryWriter,
    input: &summary::SummaryInput<'_>,
    meter: &Meter,
) -> (summary::Summary, Option<SummarizerUse>) {
    let request = BodyRequest { middle: input.middle, budget_tokens: input.budget_tokens };
    let (body, mut used) = match writer.write(&request, meter) {
        Ok(body) => {
            let text = summary_writer::clean_body(&body.text);
            let used =
                SummarizerUse { cached: body.cached, spent: body.spent, ..Default::default() };
            (text, used)
        }
        Err(f) => {
            let used =
                SummarizerUse { fallback: Some(f.reason), spent: f.spent, ..Default::default() };
            return (summary::build_summary(input, meter), Some(used));
        }
    };
    let fallback = if body.is_empty() {
        Some(Fallback::Empty)
    } else if !meter.fits(&body, input.budget_tokens) {
        Some(Fallback::OverBudget)
    } else {
        None
    };
    if let Some(reason) = fallback {
        used.fallback = Some(reason);
        used.cached = false;
        return (summary::build_summary(input, meter), Some(used));
    }
    used.used = true;
    (summary::build_summary_with(input, meter, Some(&body)), Some(used))
}

/// Returns true if and only if `text` has more than `n` chars, counting them
/// only when its length in bytes does not tell (a char is 1 to 4 bytes): the
/// stages hold whole tool outputs against limits in chars.
pub(crate) fn more_chars_than(text: &str, n: usize) -> bool {
    text.len() > n && (text.len() > 4 * n || text.chars().count() > n)
}

/// The newlines in `text`. Tool outputs' line counts (descriptions, the
/// summary's outcomes) read every byte of every long result: counted in
/// blocks whose sum fits a byte, which the compiler vectorizes (a tenth of
/// the instructions of `str::matches`, which stops at every newline, and of
/// a plain filtered count, which it does not vectorize).
pub(crate) fn newlines(text: &str) -> usize {
    let mut blocks = text.as_bytes().chunks_exact(128);
    let mut n: usize = 0;
    for block in blocks.by_ref() {
        n += usize::from(block.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>());
    }
    n + blocks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// Every text of a session that a model would read, joined: content, reasoning, call arguments.
pub fn session_text(messages: &[Message]) -> String {
    let mut out = String::new();
    for (text, piece) in read_texts(messages) {
        push_read(text, piece, &mut out);
    }
    out
}

/// The texts [`session_text`] joins, in order, each with what it is.
fn read_texts(messages: &[Message]) -> impl Iterator<Item = (&str, Piece)> {
    messages.iter().flat_map(|m| {
        let parts = m.content.parts.iter().filter_map(|p| p.text_str()).map(|t| (t, Piece::Text));
        parts.chain(m.tool_calls.iter().map(|c| (c.arguments.as_str(), Piece::Arguments)))
    })
}

/// Appends one text as [`session_text`] joins it: a line of its own, and for
/// arguments then each string they hold (when they are JSON).
fn push_read(text: &str, piece: Piece, out: &mut String) {
    out.push_str(text);
    out.push('\n');
    if piece == Piece::Arguments
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(text)
    {
        push_strings(&v, out);
    }
}

fn push_strings(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(items) => items.iter().for_each(|x| push_strings(x, out)),
        serde_json::Value::Object(map) => map.values().for_each(|x| push_strings(x, out)),
        _ => {}
    }
}

/// The anchors of a session (all of its messages).
pub fn session_anchors(messages: &[Message], families: &ToolFamilies) -> AnchorSet {
    let mut set = AnchorSet::new();
    let calls = index_calls(messages);
    for (i, m) in messages.iter().enumerate() {
        summary::add_message_anchors(&mut set, m, i as u64, families, &calls);
    }
    set
}

fn anchor_figures(
    input: &Prepared<'_>,
    output: &Session,
    policy: &Policy,
    built: Option<&summary::Summary>,
) -> AnchorFigures {
    let retention = if policy.measure_retention {
        input.retention(&policy.families, &output.messages)
    } else {
        BTreeMap::new()
    };
    AnchorFigures {
        retention,
        region_found: built.map_or(0, |s| s.anchors_found),
        indexed: built.map_or(0, |s| s.anchors_indexed),
        dropped_for_budget: built.map(|s| s.anchors_dropped.clone()).unwrap_or_default(),
    }
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
