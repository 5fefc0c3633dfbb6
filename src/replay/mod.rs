//! Replay: walk a session call by call as the agent lived it, compacting when
//! the trigger fires, and measure what compaction saves and what the prompt
//! cache sees (SPEC 8).
//!
//! Before every assistant message (one API call) the request is tool schemas +
//! the live history. Without compaction the live history is the original
//! prefix; with it, the live history is the last compacted history plus the
//! original messages appended since. When a request reaches the trigger, the
//! live history is compacted (an earlier summary is updated, not nested).
//!
//! ## The trigger
//! Where the log recorded the provider's prompt size for the call, the trigger
//! uses it, as the reference agent does, corrected by what our compactions have
//! removed since (the provider measured the uncompacted run): `provider +
//! (ours_live − ours_original)`. Otherwise our own count. With `gateway`, the
//! fallback trigger (85% of the window or 5,000 messages) applies instead.
//!
//! Under `--history full` a log may hold the agent's own compactions: the
//! provider then measured the agent's context, not the whole history, and
//! the correction is against our count of that context
//! ([`agent::AgentContext`]): `provider + (ours_live − ours_agent)`.
//!
//! That is the request's prompt ([`Measure::Prompt`]). A spec may measure
//! otherwise: [`Measure::LastTotal`] is Codex's (`usage.rs`: the previous
//! call's prompt so measured plus its output, plus Codex's estimates of its
//! encrypted reasoning and of the tool outputs appended since). A
//! compaction's `tokens_after` is the prompt after it under either.
//!
//! ## Calls
//! A call is one provider response as the log records it
//! ([`Message::opens_call`]): the messages of one response count once, and
//! messages the client wrote (Claude Code's `<synthetic>` ones) not at all.
//! [`Recorded`] sums the usage the log records over those calls: the agent's
//! bill, its own compactions included.
//!
//! ## Anti-thrash (H)
//! After two compactions in a row that leave the request at or above the
//! threshold, compaction stops for the session, and the result says so.
//!
//! ## The cache model
//! Anthropic's "system and last 3" breakpoints: a request may read from cache
//! the longest prefix it shares with the previous request, up to that
//! request's last breakpoint at or before the point where they diverge; the
//! breakpoints are the end of the system prompt and the ends of the last three
//! messages. What follows the read prefix is written (cache write). Minimum
//! cacheable sizes and expiry are not modelled.
//!
//! ## Cost
//! Linear in the session: message sizes are counted once, request sizes are
//! kept as running sums, and the shared prefix is only recomputed after a
//! compaction (between compactions a request extends the previous one). An
//! original message is copied only into the input of a compaction it takes
//! part in, and compactions skip the anchor-retention figure (never read here).

pub mod agent;
mod totals;
pub mod usage;

pub use totals::Totals;

use crate::catalog::prices::Prices;
use crate::catalog::window;
use crate::model::key::message_key;
use crate::model::{Message, Session};
use crate::policy::spec::masked::MaskedHistory;
use crate::policy::spec::{CacheRule, Measure};
use crate::policy::{self, Policy, Prepared};
use crate::tokens::Meter;
use serde::Serialize;
use std::borrow::Cow;

/// How the trigger is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// The policy's threshold (the reference's main trigger).
    Threshold,
    /// The fallback ("gateway") trigger: 85% of the window or 5,000 messages.
    Gateway,
}

/// OpenAI caches prompts of at least this many tokens, in steps of
/// [`OPENAI_CACHE_STEP_TOKENS`] (developers.openai.com/api/docs/guides/prompt-caching;
/// openai-cookbook Prompt_Caching_201: "1024 tokens or more, with cache hits
/// occurring in increments of 128 tokens"; models before GPT-5.6).
pub const OPENAI_MIN_CACHED_TOKENS: u64 = 1_024;
pub const OPENAI_CACHE_STEP_TOKENS: u64 = 128;
/// Gemini's implicit cache: the minimum input of Gemini 2.5 Flash and Pro
/// (ai.google.dev/gemini-api/docs/caching, crawl "Last updated 2026-07-07").
pub const GEMINI_MIN_CACHED_TOKENS: u64 = 2_048;

/// Compactions in a row that leave the request over the threshold before
/// compaction stops for the session (H).
pub const THRASH_LIMIT: u32 = 2;

/// One API call of the replay.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Call {
    /// Index of the assistant message this call produced, in the original session.
    pub message: usize,
    /// Request tokens without compaction (our count of the original prefix).
    pub tokens_original: u64,
    /// Request tokens with compaction (our count of the live history).
    pub tokens_live: u64,
    /// The provider's recorded prompt size for this call, when the log has it.
    pub provider_tokens: Option<u64>,
    /// Our count of the request the agent itself sent, where its own
    /// compactions made it differ from `tokens_original` (`--history full`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_agent: Option<u64>,
    /// Compactions performed before this call.
    pub compactions: u32,
    /// Cache reads / writes of this request, without and with compaction.
    pub cache_read_original: u64,
    pub cache_write_original: u64,
    pub cache_read_live: u64,
    pub cache_write_live: u64,
    /// Output tokens of the call (recorded, else our count of the reply).
    pub output_tokens: u64,
    /// What the trigger compared before this call (before a compaction at
    /// it) under a spec that measures other than the prompt
    /// ([`Measure::LastTotal`]); `None` under [`Measure::Prompt`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure: Option<u64>,
}

impl Call {
    /// The request size the trigger compared before this call (see the module
    /// doc): the provider's recorded prompt size corrected by what compaction
    /// removed, where the log has it; our count of the live history otherwise;
    /// the spec's own measure where it has one ([`Call::measure`]).
    pub fn trigger_tokens(&self) -> u64 {
        if let Some(m) = self.measure {
            return m;
        }
        let measured = self.tokens_agent.unwrap_or(self.tokens_original);
        trigger_size(self.provider_tokens, self.tokens_live, measured)
    }
}

/// The trigger's measure of a request: `provider + (live − measured)` where the
/// provider recorded the prompt size (`measured` is our count of the request
/// it measured: the uncompacted history, or the agent's own context after
/// its compactions), else `live`, our count.
fn trigger_size(provider: Option<u64>, live: u64, measured: u64) -> u64 {
    match provider {
        Some(p) => (p + live).saturating_sub(measured),
        None => live,
    }
}

/// One compaction during the replay.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CompactionPoint {
    /// The call before which it happened (index into `calls`).
    pub before_call: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Still at or over the threshold after compacting.
    pub ineffective: bool,
}

/// The calls as the provider billed them: the usage the log records for
/// each call, summed (the agent's own compactions, where it made them,
/// are in these figures).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Recorded {
    /// Calls whose usage the log records.
    pub calls: usize,
    /// Of those, calls outside the conversation (Claude Code's inline
    /// sidechain events, [`crate::model::Session::side_calls`]): billed here,
    /// never in the peak.
    pub side_calls: usize,
    /// The agent's compactions among the messages replayed.
    pub compactions: usize,
    /// The largest prompt the provider measured.
    pub peak: u64,
    /// Prompt tokens billed: uncached input, cache reads and cache writes.
    pub billed: u64,
    /// Uncached input tokens.
    pub input: u64,
    pub cache_read: u64,
    /// Cache writes, of which `cache_write_1h` with a 1-hour lifetime.
    pub cache_write: u64,
    pub cache_write_1h: u64,
    pub output: u64,
}

impl Recorded {
    fn add(&mut self, u: &crate::model::Usage) {
        let Some(prompt) = u.prompt_tokens() else { return };
        self.peak = self.peak.max(prompt);
        self.add_billed(u, prompt);
    }

    /// A call outside the conversation: billed, not a request of the agent's context.
    fn add_side(&mut self, u: &crate::model::Usage) {
        let Some(prompt) = u.prompt_tokens() else { return };
        self.side_calls += 1;
        self.add_billed(u, prompt);
    }

    fn add_billed(&mut self, u: &crate::model::Usage, prompt: u64) {
        self.calls += 1;
        self.billed += prompt;
        self.input += u.input_tokens.unwrap_or(0);
        self.cache_read += u.cache_read_tokens.unwrap_or(0);
        self.cache_write += u.cache_write_tokens.unwrap_or(0);
        self.cache_write_1h += u.cache_write_1h_tokens.unwrap_or(0);
        self.output += u.output_tokens.unwrap_or(0);
    }

    /// Dollars of these calls: uncached input, cache reads, 5-minute and
    /// 1-hour cache writes and output, each at its price.
    pub fn cost(&self, p: &Prices) -> f64 {
        let write_1h = self.cache_write_1h.min(self.cache_write);
        (self.input as f64 * p.input
            + self.cache_read as f64 * p.cache_read
            + (self.cache_write - write_1h) as f64 * p.cache_write
            + write_1h as f64 * p.cache_write_1h()
            + self.output as f64 * p.output)
            / 1e6
    }
}

/// A replay's figures and final history.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Replay {
    pub threshold: u64,
    pub calls: Vec<Call>,
    pub compactions: Vec<CompactionPoint>,
    /// Compaction stopped after [`THRASH_LIMIT`] ineffective compactions in a row.
    pub thrash_stopped: bool,
    /// Peaks, billed and cache-read tokens over the calls.
    #[serde(flatten)]
    pub totals: Totals,
    /// With a summarizer: what it did over the compactions, its tokens included.
    pub summarizer: Option<crate::policy::summary_writer::SummarizerCounts>,
    pub cache_write_original: u64,
    pub cache_write_live: u64,
    pub output_tokens: u64,
    /// The calls as the log records their usage; `None` when it records none.
    pub recorded: Option<Recorded>,
    /// The live history at the end is `compacted` (the last compaction's
    /// output) followed by the original messages from `appended_from` on:
    /// kept apart so that the original messages are never copied
    /// ([`Replay::final_session`] builds the whole history when asked).
    #[serde(skip)]
    compacted: Vec<Message>,
    #[serde(skip)]
    appended_from: usize,
}

/// A request as the cache sees it: per-message keys and cumulative sizes.
#[derive(Clone, Debug, Default)]
struct Request {
    keys: Vec<u128>,
    /// `ends[i]`: tokens up to and including message `i` (schemas and framing included).
    ends: Vec<u64>,
    /// Tokens before the first message (schemas, framing).
    base: u64,
    /// Number of leading system messages (the system-prompt breakpoint).
    system: usize,
}

impl Request {
    fn total(&self) -> u64 {
        self.ends.last().copied().unwrap_or(self.base)
    }

    /// The tokens of each message, in order (what was pushed).
    fn message_tokens(&self) -> Vec<u64> {
        let mut before = self.base;
        self.ends
            .iter()
            .map(|&end| {
                let tokens = end - before;
                before = end;
                tokens
            })
            .collect()
    }

    fn push(&mut self, key: u128, tokens: u64, is_system: bool) {
        let total = self.total();
        if is_system && self.keys.len() == self.system {
            self.system += 1;
        }
        self.keys.push(key);
        self.ends.push(total + tokens);
    }

    /// Rewrites messages in place, `(index, key, tokens)` by ascending index,
    /// the sizes after them moved by the difference; returns the first index
    /// whose key changed (the length when none did).
    fn replace(&mut self, edits: impl IntoIterator<Item = (usize, u128, u64)>) -> usize {
        let mut edits = edits.into_iter().peekable();
        let mut first = self.keys.len();
        let Some(&(start, _, _)) = edits.peek() else { return first };
        let mut before = if start == 0 { self.base } else { self.ends[start - 1] };
        let (mut added, mut removed) = (0u64, 0u64);
        for k in start..self.ends.len() {
            let end = self.ends[k];
            if let Some(&(j, key, tokens)) = edits.peek()
                && j == k
            {
                edits.next();
                added += tokens;
                removed += end - before;
                if key != self.keys[k] {
                    first = first.min(k);
                }
                self.keys[k] = key;
            }
            before = end;
            self.ends[k] = end - removed + added;
        }
        first
    }

    /// What the next request's cache test needs of this one: O(1) to take,
    /// where a clone of the request would make replay quadratic.
    fn snapshot(&self) -> Snapshot {
        let n = self.keys.len();
        // Breakpoints: end of the system prompt, ends of the last 3 messages.
        let mut breakpoints: Vec<(usize, u64)> =
            (n.saturating_sub(3)..n).map(|i| (i + 1, self.ends[i])).collect();
        if self.system > 0 {
            breakpoints.push((self.system, self.ends[self.system - 1]));
        }
        Snapshot { len: n, base: self.base, total: self.total(), breakpoints }
    }

    /// Tokens this request can read from the cache written by `prev`, given
    /// that they share their first `shared` messages, under `rule`.
    fn cache_read(&self, prev: &Snapshot, shared: usize, rule: CacheRule) -> u64 {
        if prev.len == 0 || self.base != prev.base {
            return 0;
        }
        let prefix_rule = match rule {
            CacheRule::Anthropic => None,
            CacheRule::OpenaiPrefix => Some((OPENAI_MIN_CACHED_TOKENS, OPENAI_CACHE_STEP_TOKENS)),
            CacheRule::GeminiPrefix => Some((GEMINI_MIN_CACHED_TOKENS, 1)),
        };
        if let Some((min, step)) = prefix_rule {
            // Automatic prefix caching: the longest shared prefix, in steps,
            // when both requests are long enough to be cached.
            if prev.total < min || self.total() < min {
                return 0;
            }
            let prefix = match shared {
                0 => self.base,
                k => self.ends[k - 1],
            };
            return prefix.checked_div(step).map_or(0, |n| n * step);
        }
        prev.breakpoints
            .iter()
            .filter(|(b, _)| *b <= shared)
            .max_by_key(|(b, _)| *b)
            .map_or(0, |(_, tokens)| *tokens)
    }
}

/// The cache breakpoints of a request already sent.
#[derive(Clone, Debug, Default)]
struct Snapshot {
    /// Messages in it.
    len: usize,
    base: u64,
    /// Its tokens.
    total: u64,
    /// (breakpoint after this many messages, tokens up to it).
    breakpoints: Vec<(usize, u64)>,
}

/// Returns true if and only if an edit left `after` as `before` was: the
/// same shared parts and calls (an edit writes new ones), and the same reasoning.
fn same_message(after: &Message, before: &Message) -> bool {
    std::sync::Arc::ptr_eq(&after.content.parts, &before.content.parts)
        && std::sync::Arc::ptr_eq(&after.tool_calls, &before.tool_calls)
        && after.reasoning == before.reasoning
        && after.role == before.role
}

/// Messages the two requests share from the start.
fn shared_prefix(a: &[u128], b: &[u128]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Makes a masking spec's edits on its kept history `h` before a call (see
/// [`MaskedHistory`]) and on the live request; returns how many leading
/// messages the request now shares with the one sent at the previous call
/// (`prev`), `None` when nothing changed. The same as compacting the whole
/// live history with the spec (`compact_prepared`), at the cost of the edits.
fn edit_kept(
    h: &mut MaskedHistory,
    live_req: &mut Request,
    prev: &Snapshot,
    session: &Session,
    meter: &Meter,
) -> Option<usize> {
    let total = live_req.total();
    if policy::is_recorded_output(session, h.messages().len(), total, meter) {
        return None;
    }
    let changed = h.edit(meter, total);
    if changed.is_empty() {
        return None;
    }
    let msgs = h.messages();
    let first = live_req.replace(changed.iter().map(|&j| (j, message_key(&msgs[j]), h.size(j))));
    Some(first.min(prev.len))
}

/// Replays `session` under `policy`, with caches of its own (a run of many
/// replays shares one through [`replay_prepared`]).
pub fn replay(session: &Session, policy: &Policy, meter: &Meter, trigger: Trigger) -> Replay {
    let caches = crate::policy::Caches::default();
    replay_prepared(&Prepared::new(session, &caches), policy, meter, trigger)
}

/// Replays a prepared input: the same result as [`replay`] of its session,
/// sharing the message counts with other compactions of it (`report` compacts
/// and replays each session under every mode).
pub fn replay_prepared(
    input: &Prepared<'_>,
    policy: &Policy,
    meter: &Meter,
    trigger: Trigger,
) -> Replay {
    let session = input.session();
    let msgs = &session.messages;
    let tokens = input.tokens(meter);
    let keys = input.message_keys();
    let base = meter.tools(session.tools.as_ref()) + meter.request_overhead();
    let mut out = Replay { threshold: policy.threshold, ..Replay::default() };
    let mut forced = policy.clone();
    forced.force = true;
    // Only the compacted history and its size are read from each compaction.
    forced.measure_retention = false;

    let mut original = Request { base, ..Request::default() };
    let mut prev_original = Snapshot { base, ..Snapshot::default() };
    // The live history as messages: the last compaction's output, then the
    // original messages from `appended_from` on (borrowed, not copied: only a
    // compaction needs them as its own session). And as the cache sees it.
    let mut compacted: Vec<Message> = Vec::new();
    let mut appended_from = 0usize;
    // The session's other fields, copied once and reused as every compaction's input.
    let mut shell: Option<Session> = None;
    let mut live_req = Request { base, ..Request::default() };
    let mut prev_live = Snapshot { base, ..Snapshot::default() };
    // After a compaction: how many leading messages the new live request
    // shares with the one sent at the previous call.
    let mut live_shared: Option<usize> = None;
    let mut ineffective_in_a_row = 0u32;
    // Our count of the context the agent sent (the provider measured it).
    let agent = agent::AgentContext::new(session, meter);
    let mut agent_total = base;
    let mut recorded = Recorded::default();
    // A server-side policy (Anthropic's context editing) edits each request;
    // the client's history, and the replay's final one, stay whole.
    let server_side = policy.spec.applies == crate::policy::spec::Applies::Request;
    let rule = policy.spec.cache;
    // Codex's measure, kept over the live history when the spec asks for it.
    let mut usage = (policy.spec.measure == Measure::LastTotal).then(usage::TotalUsage::default);
    // A spec that only masks keeps its live history from call to call and
    // edits what changed (`MaskedHistory`): the whole history is not
    // handed to a compaction at every call.
    let mut masked = MaskedHistory::for_spec(&policy.spec, meter);

    for (i, m) in msgs.iter().enumerate() {
        if let Some(restart) = agent.restart_at(i) {
            agent_total = base + restart;
            recorded.compactions += 1;
        }
        if m.opens_call() {
            let provider = m.meta.usage.and_then(|u| u.prompt_tokens());
            if let Some(u) = &m.meta.usage {
                recorded.add(u);
            }
            // The trigger, measured before the call.
            let measured = |live_total: u64| trigger_size(provider, live_total, agent_total);
            let fires = |size: u64, n: usize| match trigger {
                Trigger::Threshold => policy.fires(size, n),
                Trigger::Gateway => window::gateway_triggered(size, n, policy.window),
            };
            let compacts = policy.mode != crate::policy::Mode::None && !out.thrash_stopped;
            let live_len = compacted.len() + (i - appended_from);
            // A server-side policy measures the whole history (the client
            // sends it all); its edits are idempotent and only grow as the
            // history does, so the live request is edited in place.
            let prompt = measured(if server_side { original.total() } else { live_req.total() });
            let measure = usage.as_ref().map(usage::TotalUsage::tokens);
            let size = measure.unwrap_or(prompt);
            if compacts && fires(size, live_len) {
                let before = measure.unwrap_or_else(|| measured(live_req.total()));
                let edited = if let Some(h) = &mut masked {
                    edit_kept(h, &mut live_req, &prev_live, session, meter)
                } else {
                    let current = shell.get_or_insert_with(|| session.with_messages(Vec::new()));
                    current.messages = std::mem::take(&mut compacted);
                    current.messages.extend(msgs[appended_from..i].iter().cloned());
                    appended_from = i;
                    // The live request holds the size of every message of `current`.
                    let sizes = live_req.message_tokens();
                    let prepared =
                        Prepared::with_tokens(current, input.caches(), meter, sizes.clone());
                    let result = match policy.spec.reference_mode() {
                        Some(_) => policy::compact_prepared(&prepared, &forced, meter),
                        // A spec compares its own sizes with its trigger (a summary
                        // after edits that run ahead of it): in our count, as the
                        // provider's measure is to ours here.
                        None => {
                            let mut p = forced.clone();
                            let ours = live_req.total();
                            p.threshold = (p.threshold + ours).saturating_sub(before);
                            policy::compact_prepared(&prepared, &p, meter)
                        }
                    };
                    if let Some(u) = &result.compaction.summarizer {
                        out.summarizer.get_or_insert_default().add(u);
                    }
                    let unchanged = matches!(result.session, Cow::Borrowed(_));
                    if unchanged && policy.spec.reference_mode().is_none() {
                        // A spec's edit that found nothing to do is no compaction:
                        // the live history stays as it was (masking at every call).
                        compacted = std::mem::take(&mut current.messages);
                        None
                    } else {
                        let output = match result.session {
                            Cow::Owned(s) => Some(s.messages),
                            Cow::Borrowed(_) => None,
                        };
                        compacted = output.unwrap_or_else(|| std::mem::take(&mut current.messages));
                        let old = std::mem::replace(
                            &mut live_req,
                            Request { base, ..Request::default() },
                        );
                        // Edits without a fold keep every message in place: one
                        // the edit left alone keeps its key and size.
                        let in_place = policy.spec.reference_mode().is_none()
                            && compacted.len() == current.messages.len();
                        for (j, lm) in compacted.iter().enumerate() {
                            if in_place && same_message(lm, &current.messages[j]) {
                                live_req.push(old.keys[j], sizes[j], lm.role.is_system());
                            } else {
                                live_req.push(
                                    message_key(lm),
                                    meter.message(lm),
                                    lm.role.is_system(),
                                );
                            }
                        }
                        let sent = &old.keys[..prev_live.len.min(old.keys.len())];
                        Some(shared_prefix(&live_req.keys, sent))
                    }
                };
                live_shared = edited;
                if edited.is_some() {
                    if let Some(u) = &mut usage {
                        u.restart(masked.as_ref().map_or(&compacted[..], MaskedHistory::messages));
                    }
                    let after = measured(live_req.total());
                    let ineffective = policy.still_over(after, live_req.keys.len());
                    out.compactions.push(CompactionPoint {
                        before_call: out.calls.len(),
                        tokens_before: before,
                        tokens_after: after,
                        ineffective,
                    });
                    ineffective_in_a_row = if ineffective { ineffective_in_a_row + 1 } else { 0 };
                    if ineffective_in_a_row >= THRASH_LIMIT {
                        out.thrash_stopped = true;
                    }
                }
            }
            let shared_live = live_shared.take().unwrap_or(prev_live.len);
            let read_live = live_req.cache_read(&prev_live, shared_live, rule);
            let read_original = original.cache_read(&prev_original, prev_original.len, rule);
            let output = m.meta.usage.and_then(|u| u.output_tokens).unwrap_or(tokens[i]);
            let call = Call {
                message: i,
                tokens_original: original.total(),
                tokens_live: live_req.total(),
                provider_tokens: provider,
                tokens_agent: (!agent.is_whole_history()).then_some(agent_total),
                compactions: out.compactions.len() as u32,
                cache_read_original: read_original,
                cache_write_original: original.total() - read_original,
                cache_read_live: read_live,
                cache_write_live: live_req.total() - read_live,
                output_tokens: output,
                measure,
            };
            if let Some(u) = &mut usage {
                u.responded(measured(live_req.total()), output);
            }
            out.totals.add(&call);
            out.cache_write_original += call.cache_write_original;
            out.cache_write_live += call.cache_write_live;
            out.output_tokens += output;
            out.calls.push(call);
            prev_original = original.snapshot();
            prev_live = live_req.snapshot();
        }
        original.push(keys[i], tokens[i], m.role.is_system());
        live_req.push(keys[i], tokens[i], m.role.is_system());
        if let Some(h) = &mut masked {
            h.push(m, tokens[i]);
        }
        if let Some(u) = &mut usage {
            u.push(m);
        }
        agent_total += tokens[i];
    }
    for u in &session.side_calls {
        recorded.add_side(u);
    }
    out.recorded = (recorded.calls > 0).then_some(recorded);
    if let Some(h) = masked {
        (compacted, appended_from) = (h.into_messages(), msgs.len());
    }
    if server_side {
        (compacted, appended_from) = (Vec::new(), 0);
    }
    out.compacted = compacted;
    out.appended_from = appended_from;
    out
}

impl Replay {
    /// The history the agent would hold at the end of `session` (the session
    /// this replay walked): the last compaction's output and the original
    /// messages appended since; the session itself when nothing was compacted.
    pub fn final_session(&self, session: &Session) -> Session {
        let mut messages = self.compacted.clone();
        messages.extend(
            session.messages[self.appended_from.min(session.messages.len())..].iter().cloned(),
        );
        session.with_messages(messages)
    }

    /// Dollars of the summarizer's own tokens (prompt at the input price,
    /// completion at the output price); 0 without a summarizer.
    pub fn summarizer_cost(&self, p: &Prices) -> f64 {
        self.summarizer.as_ref().map_or(0.0, |s| {
            (s.prompt_tokens as f64 * p.input + s.completion_tokens as f64 * p.output) / 1e6
        })
    }

    /// Dollars for all calls without and with compaction.
    pub fn cost(&self, p: &Prices) -> (f64, f64) {
        let per = |uncached: u64, read: u64, write: u64| {
            (uncached as f64 * p.input + read as f64 * p.cache_read + write as f64 * p.cache_write)
                / 1e6
        };
        let out = self.output_tokens as f64 * p.output / 1e6;
        // Cache writes are the uncached part of each request; reads the cached part.
        let original = per(0, self.totals.cache_read_original, self.cache_write_original) + out;
        let live = per(0, self.totals.cache_read_live, self.cache_write_live) + out;
        (original, live)
    }
}

#[cfg(test)]
mod tests;
