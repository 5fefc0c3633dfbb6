//! The driver: [`compact`] decides whether a session is compacted, runs the
//! stages (tiered: one at a time up to the target) and folds the middle into
//! a summary (lean, legacy, and tiered's last tier), then assembles, sanitizes
//! and records what it did. Pure and deterministic, with one exception, which
//! is injected and bounded:
//!
//! ## What may block, and where
//! Without a summarizer (`Policy::summarizer` is `None`, every mode by
//! default), nothing here blocks, reads a file or the clock: `compact` is a
//! function of the session, the policy and the meter.
//!
//! With `--summarizer URL` or `--summarizer-cmd CMD`, [`summarize`] calls
//! [`SummaryWriter::write`] once per folded session (in `written_summary`),
//! on the thread that runs the compaction: a worker of `exec::run_ordered`'s
//! pool under `compact`, `report` and `replay` (never the reader or the
//! writer thread). The writer (`crate::summarizer`, the only library code
//! that does network or process I/O) may, on that thread:
//! - wait for a slot of the run-wide bound on requests in flight
//!   (`summarizer::Slots`, `--summarizer-concurrency`, default 2);
//! - read and write its cache files (`--summary-cache`, atomic files);
//! - make one blocking HTTP request per chunk of the middle (ureq, a global
//!   timeout of `--summarizer-timeout` seconds, default 120, and up to 3
//!   retries of a 429 or 5xx with a doubling backoff, a `Retry-After` of at
//!   most 10 s honoured), or run `--summarizer-cmd` and wait for it (killed
//!   at the same timeout); at most 16 chunks.
//!
//! So a worker may wait up to (timeout + backoff) x attempts x chunks for one
//! session, while the other workers go on (the bound is shared, not held
//! across sessions). Whatever happens, the outcome is a body or a typed
//! [`Fallback`] recorded in the compaction ([`SummarizerUse`]): never a panic,
//! never a stopped run. With the same cache (or a deterministic server at
//! temperature 0), reruns give the same bytes; `policy` itself imports
//! nothing from `summarizer`, `io` or `pipeline`: `scripts/import_cycles.py`
//! shows it, and so does this grep, which skips comments and prints nothing:
//! `grep -rn "^[^/]*crate::\(summarizer\|io\|pipeline\)" src/policy`.

use super::assemble::{self, Placement};
use super::record::unchanged_record;
use super::stages::{Recount, STAGES, Scope, borrowed, owned, prune, recounted};
use super::summary_writer::{self, BodyRequest, Fallback, SummarizerUse, SummaryWriter};
use super::{
    AnchorFigures, Compaction, Effects, Mode, Outcome, Policy, Prepared, Reason, Tier, boundaries,
    sanitize, summary,
};
use crate::catalog::window;
use crate::model::{Message, Session, SessionKey};
use crate::tokens::Meter;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Compacts one session. Pure and deterministic. Remembers nothing past
/// the call: a run of many compactions gives each a [`Prepared`] that shares
/// its [`super::Caches`].
pub fn compact<'a>(session: &'a Session, policy: &Policy, meter: &Meter) -> Outcome<'a> {
    let caches = super::Caches::default();
    let Outcome { session: out, compaction } =
        compact_prepared(&Prepared::new(session, &caches), policy, meter);
    // A borrowed outcome is always the input itself.
    let session = match out {
        Cow::Borrowed(_) => Cow::Borrowed(session),
        Cow::Owned(out) => Cow::Owned(out),
    };
    Outcome { session, compaction }
}

/// Compacts a prepared input: the same outcome as [`compact`] of its session,
/// sharing what other compactions of the same `Prepared` computed.
pub fn compact_prepared<'a>(input: &Prepared<'a>, policy: &Policy, meter: &Meter) -> Outcome<'a> {
    let mut outcome = compact_named(input, policy, meter);
    name_record(&mut outcome.compaction, policy);
    outcome
}

/// Names the policy in `record` when it is none of today's modes (theirs is
/// `mode`, and their records keep their bytes).
fn name_record(record: &mut Compaction, policy: &Policy) {
    if policy.spec.reference_mode().is_none() {
        record.policy = Some(policy.name());
    }
}

fn compact_named<'a>(input: &Prepared<'a>, policy: &Policy, meter: &Meter) -> Outcome<'a> {
    let session = input.session();
    let tokens = input.tokens(meter);
    let fixed = meter.tools(session.tools.as_ref()) + meter.request_overhead();
    let before = fixed + tokens.iter().sum::<u64>();
    if let Some(record) = untriggered(policy, session.messages.len(), before) {
        return Outcome { session: Cow::Borrowed(session), compaction: record };
    }
    let mut record = unchanged_record(session.messages.len(), policy.mode, before, Reason::NoGain);
    if is_recorded_output(session, session.messages.len(), before, meter) {
        record.reason = Reason::NothingNew;
        return Outcome { session: Cow::Borrowed(session), compaction: record };
    }
    let measured = Measured { input, tokens: &tokens, fixed, before };
    let outcome = match policy.mode {
        // A spec that is not one of today's modes (issue 39).
        _ if policy.spec.reference_mode().is_none() => compact_spec(&measured, policy, meter),
        Mode::Tiered => compact_tiered(&measured, policy, meter),
        Mode::Lean | Mode::Legacy => {
            summarize(&measured, policy, meter, policy.mode, Pruning::Run { truncate: false }, None)
        }
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

/// A spec that is none of today's modes: its edits and decision
/// ([`super::spec::run::plan`]), then the summarizing pass when it folds.
fn compact_spec<'a>(measured: &Measured<'a, '_>, policy: &Policy, meter: &Meter) -> Outcome<'a> {
    use super::spec::run::{Plan, keep_user_messages, plan};
    let Measured { input, tokens, fixed, before } = *measured;
    let session = input.session();
    let msgs = &session.messages;
    match plan(msgs, policy, meter, tokens, fixed, before) {
        Plan::Leave(reason) => Outcome {
            session: Cow::Borrowed(session),
            compaction: unchanged_record(msgs.len(), Mode::Lean, before, reason),
        },
        Plan::Fold { slots, effects, tokens: counts, cut } => {
            let done = Pruning::Done { slots, effects, tokens: counts };
            let mut outcome = summarize(measured, policy, meter, Mode::Lean, done, Some(cut));
            if let Some(budget) = policy.spec.protect.user_messages_tokens {
                keep_user_messages(&mut outcome, msgs, budget, fixed, meter);
            }
            outcome
        }
        Plan::Edited { slots, effects, tier, tokens_after } => {
            let out = session.with_messages(owned(slots));
            let mut record = unchanged_record(msgs.len(), Mode::Lean, before, Reason::Compacted);
            record.tier = tier;
            record.compacted = true;
            record.tokens_after = tokens_after;
            record.sections.tail_tokens = tokens_after - fixed;
            record.effects = effects;
            record.anchors = anchor_figures(input, &out, policy, None);
            Outcome { session: Cow::Owned(out), compaction: record }
        }
    }
}

/// Returns true if and only if the session, holding `messages` messages of
/// `tokens` tokens, is exactly what an earlier run of ours wrote: its
/// `compaction` record's message count and token total (under the same
/// counter) still match, so nothing was appended since.
pub(crate) fn is_recorded_output(
    session: &Session,
    messages: usize,
    tokens: u64,
    meter: &Meter,
) -> bool {
    let Some(c) = session.read(SessionKey::Compaction).and_then(|v| v.as_object()) else {
        return false;
    };
    let get = |k: &str| c.get(k).and_then(serde_json::Value::as_u64);
    c.get("counter").and_then(serde_json::Value::as_str) == Some(meter.kind().name())
        && get("tokens_after") == Some(tokens)
        && get("messages_after") == Some(messages as u64)
}

/// The record of a session of `messages` messages and `before` tokens that
/// `policy` does not compact whatever it holds (mode `none`, under the
/// trigger); `None` when compaction must look at it. What [`compact`] returns
/// for such a session, for callers that know its size without decoding it.
pub(crate) fn untriggered(policy: &Policy, messages: usize, before: u64) -> Option<Compaction> {
    let mut record = untriggered_record(policy, messages, before)?;
    name_record(&mut record, policy);
    Some(record)
}

fn untriggered_record(policy: &Policy, messages: usize, before: u64) -> Option<Compaction> {
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

/// Index of a compaction summary in `msgs[range]`, if any.
fn summary_in(msgs: &[Message], range: std::ops::Range<usize>) -> Option<usize> {
    range.rev().find(|&i| summary::is_summary(&msgs[i]))
}

/// The input and its sizes under the meter: each message's tokens, the part
/// of the request that is not messages (tool schemas, overhead), and the total.
#[derive(Clone, Copy)]
pub(super) struct Measured<'a, 't> {
    pub input: &'t Prepared<'a>,
    pub tokens: &'t [u64],
    pub fixed: u64,
    pub before: u64,
}

/// Tiered mode: one stage at a time until the request is at or under the target.
fn compact_tiered<'a>(measured: &Measured<'a, '_>, policy: &Policy, meter: &Meter) -> Outcome<'a> {
    let Measured { input, tokens, fixed, before } = *measured;
    let session = input.session();
    let target = policy.tiered_target();
    let msgs = &session.messages;
    let head_end = boundaries::head_end(msgs, policy.protect_first_n);
    // The protected range of tiered mode is lean's.
    let tail = policy.tail(Mode::Lean);
    let protected = boundaries::tail_start(msgs, tokens, head_end, tail);
    // Stages 1, 2 and 4 reach into the head (SPEC 5); truncation does not.
    let scope =
        Scope { reach: 0..protected.max(head_end), body: head_end..protected.max(head_end) };
    let mut pruned = borrowed(msgs);
    let mut effects = Effects::default();
    let mut counts = Vec::new();
    for stage in &STAGES {
        (stage.run)(&mut pruned, &scope, policy, input.caches(), &mut effects);
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
            record.tier = stage.tier;
            record.compacted = true;
            record.tokens_after = after;
            record.sections.head_messages = head_end;
            record.sections.head_tokens = counts[..head_end].iter().sum();
            record.sections.tail_messages = out.messages.len() - head_end;
            record.sections.verbatim_tail_messages = msgs.len() - protected;
            record.sections.tail_tokens = after - record.sections.head_tokens - fixed;
            record.effects = effects;
            record.anchors = anchor_figures(input, &out, policy, None);
            return Outcome { session: Cow::Owned(out), compaction: record };
        }
    }
    // The summary tier prunes exactly as the tiers above did (same stages, same
    // order, same range): it takes their result instead of pruning again.
    let done = Pruning::Done { slots: pruned, effects, tokens: counts };
    summarize(measured, policy, meter, Mode::Tiered, done, None)
}

/// Stages 1-4 before a summary: run them, or take what a caller already ran.
pub(super) enum Pruning<'a> {
    /// Run them; stage 3 (truncation) only when `truncate`.
    Run { truncate: bool },
    /// Tiered mode ran all four, one at a time, over the same range: the
    /// messages as they left them, what they did, and the messages' sizes.
    Done { slots: Vec<Cow<'a, Message>>, effects: Effects, tokens: Vec<u64> },
}

/// The summarizing pass (lean, legacy, and tiered's last tier: the
/// record's tier is [`Tier::Summary`]). `cut_at`: where the protected tail
/// starts when a spec decides it (issue 39), instead of `mode`'s tail walk.
pub(super) fn summarize<'a>(
    measured: &Measured<'a, '_>,
    policy: &Policy,
    meter: &Meter,
    mode: Mode,
    pruning: Pruning<'a>,
    cut_at: Option<usize>,
) -> Outcome<'a> {
    let Measured { input, tokens, fixed, before } = *measured;
    let session = input.session();
    let msgs = &session.messages;
    let tail = policy.tail(mode);
    let head_end = boundaries::head_end(msgs, policy.protect_first_n);
    let too_short = || Outcome {
        session: Cow::Borrowed(session),
        compaction: unchanged_record(session.messages.len(), mode, before, Reason::TooShort),
    };
    let mut protected =
        cut_at.unwrap_or_else(|| boundaries::tail_start(msgs, tokens, head_end, tail));
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
    // (`Slot`): the folded middle is never copied, and changed messages are
    // counted again only where the cut reads their sizes (`Recount`: from the
    // end back, so mostly not the middle). The output takes the kept
    // messages as they are.
    let (mut pruned, mut effects, pruned_tokens) = match pruning {
        Pruning::Run { truncate } => {
            let mut pruned = borrowed(msgs);
            let scope = Scope { reach: 0..protected, body: head_end..protected };
            let effects = prune(&mut pruned, &scope, policy, input.caches(), truncate);
            (pruned, effects, None)
        }
        Pruning::Done { slots, effects, tokens } => (slots, effects, Some(tokens)),
    };
    let pruned_cut = || match &pruned_tokens {
        Some(counts) => boundaries::tail_start(&pruned, counts, head_end, tail),
        None => {
            let mut sizes = Recount::new(tokens, &pruned, meter);
            boundaries::tail_start_sized(&pruned, &mut sizes, head_end, tail)
        }
    };
    let mut cut = cut_at.unwrap_or_else(pruned_cut).min(protected);
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
            caches: input.caches(),
            lean,
            budget_tokens: window::summary_budget(middle_tokens, policy.window),
            anchor_budget_chars: policy.anchor_budget.resolve(region_chars),
            max_tokens: summary::summary_max_tokens(policy.window),
            whole_ask_tokens: tail.whole_ask_tokens,
            pruned: &rewritten,
        };
        let (built, used) = match &policy.summarizer {
            None => (summary::build_summary(&input, meter), None),
            Some(writer) => written_summary(writer.as_ref(), &input, meter),
        };
        let built =
            super::spec::headings::laid_out(policy.spec.summary, built, used.as_ref(), meter);
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
    record.tier = Tier::Summary;
    record.compacted = out.messages != session.messages;
    record.messages_after = out.messages.len();
    record.tokens_after = after;
    record.sections.head_messages = head_end;
    record.sections.head_tokens = out_tokens[..head_end.min(out_tokens.len())].iter().sum();
    record.sections.summary_messages = summary_messages;
    record.summary_merged = matches!(placement, Some(Placement::Merged { .. }));
    record.sections.summary_tokens = summary_out.as_ref().map_or(0, |s| meter.text(&s.text));
    record.sections.tail_messages = out.messages.len() - tail_start;
    record.sections.verbatim_tail_messages = msgs.len() - protected;
    record.sections.tail_tokens = out_tokens[tail_start..].iter().sum::<u64>()
        - if record.summary_merged { record.sections.summary_tokens } else { 0 };
    record.sections.middle_tokens = tokens[head_end..cut.max(head_end)].iter().sum();
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
        indexed: built.map_or(0, |s| s.anchors_indexed),
        dropped_for_budget: built.map(|s| s.anchors_dropped.clone()).unwrap_or_default(),
    }
}
