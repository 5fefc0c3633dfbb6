//! What the agent's own compactions kept, measured as ours are (issue 37).
//!
//! A log read `--history full` holds, for each compaction the agent made,
//! the conversation before it ([`RecordedCompaction::at`](crate::model::RecordedCompaction::at)) and what the agent
//! replaced it with (its summary and the messages it kept). Of the anchors of
//! that conversation (SHAs, PRs, paths, error lines, ...; SPEC 7), of the
//! paths the agent's own calls touched and of the user's own messages, we
//! count how many appear verbatim in what the agent kept, and beside it in
//! what `lean` keeps when it compacts the same conversation at the same
//! point. The sizes before and after are the provider's (as the log records
//! them) and ours.
//!
//! ## Invariants
//! - The denominators are the same for the agent and for lean: the whole
//!   conversation before the compaction, as it happened. What an earlier
//!   compaction of the agent already lost counts as lost again.
//! - A summary the log holds only encrypted (Codex's remote compaction) is
//!   not measurable: its retention is `None`, never 0%; what its kept
//!   messages hold is still given (`retained_in_kept`).
//! - Pure: the same session and policy give the same rows.

use crate::model::{Message, RecordedSummary, Role, Session};
use crate::policy::summary::real_user_text;
use crate::policy::{Caches, Policy, Prepared, compact_prepared, session_anchors, session_text};
use crate::replay::agent::AgentContext;
use crate::tokens::Meter;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Category of the paths the agent's calls named (read, written, run on).
pub const TOUCHED_PATHS: &str = "touched_paths";
/// Category of the user's own messages, each kept when quoted whole.
pub const USER_MESSAGES: &str = "user_messages";

/// Per category: `[kept, of]`.
pub type Retention = BTreeMap<String, [usize; 2]>;

/// What the log holds of the agent's summary.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SummaryKind {
    /// Its text: measurable.
    Text,
    /// Only encrypted (Codex's remote compaction): not measurable.
    Encrypted,
    /// None at all (the compaction kept messages only).
    Absent,
}

impl SummaryKind {
    pub fn name(self) -> &'static str {
        match self {
            SummaryKind::Text => "text",
            SummaryKind::Encrypted => "encrypted",
            SummaryKind::Absent => "absent",
        }
    }
}

/// One of the agent's compactions, measured.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RecordedRow {
    /// Messages of the full history before it.
    pub index: usize,
    pub timestamp: Option<String>,
    /// `auto` / `manual` where the log says.
    pub trigger: Option<String>,
    /// The request size before it: the log's own figure (`preTokens`), else
    /// the last call's recorded usage.
    pub tokens_before_provider: Option<u64>,
    /// Our count of the agent's context before it.
    pub tokens_before: u64,
    /// The next call's recorded prompt size.
    pub tokens_after_provider: Option<u64>,
    /// Our count of what the agent kept (system prompt, summary, kept messages).
    pub tokens_after: u64,
    /// `text`, `encrypted` or `absent`.
    pub summary: SummaryKind,
    /// Our count of the summary, when readable.
    pub summary_tokens: Option<u64>,
    pub kept_messages: usize,
    /// Of the conversation's anchors (and touched paths, user messages), how
    /// many the agent kept; `None` when its summary cannot be read.
    pub retained: Option<Retention>,
    /// The same, in its kept messages alone (measurable even when the
    /// summary is encrypted).
    pub retained_in_kept: Retention,
    /// `lean` compacting the same conversation at the same point.
    pub lean: LeanAtPoint,
}

/// What `lean` does with the conversation before a recorded compaction.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LeanAtPoint {
    pub tokens_after: u64,
    pub summary_tokens: u64,
    pub retained: Retention,
}

/// The session's recorded compactions placed in its messages, measured;
/// `lean` is the policy lean compacts with (forced: the agent compacted here).
pub fn measure(
    session: &Session,
    lean: &Policy,
    meter: &Meter,
    caches: &Caches,
) -> Vec<RecordedRow> {
    // Nothing placed in the messages (no compaction, or a log read live):
    // no row, and no count of every message on the way (stats and report
    // call this for every session).
    if session.recorded_compactions.iter().all(|c| c.at.is_none()) {
        return Vec::new();
    }
    let msgs = &session.messages;
    let base = meter.tools(session.tools.as_ref()) + meter.request_overhead();
    let tokens = meter.messages(msgs);
    let agent = AgentContext::new(session, meter);
    // Our count of the agent's context just before each message (before a
    // compaction of the agent's that sits there).
    let mut before = Vec::with_capacity(msgs.len() + 1);
    let mut total = base;
    for (i, t) in tokens.iter().enumerate() {
        before.push(total);
        if let Some(restart) = agent.restart_at(i) {
            total = base + restart;
        }
        total += t;
    }
    before.push(total);
    let mut forced = lean.clone();
    forced.force = true;
    forced.measure_retention = false;
    let mut rows = Vec::new();
    for c in &session.recorded_compactions {
        let Some(at) = c.at.filter(|&a| a <= msgs.len()) else { continue };
        let history = &msgs[..at];
        let measure = Measure::new(history, lean, caches);
        let kept_text = session_text(&c.kept);
        let summary_text = c.summary.text().unwrap_or_default();
        let agent_text = format!("{summary_text}\n{kept_text}");
        let replaced = session.with_messages(history.to_vec());
        let lean_out = compact_prepared(&Prepared::new(&replaced, caches), &forced, meter);
        let provider_before = msgs[..at]
            .iter()
            .rev()
            .find(|m| m.opens_call())
            .and_then(|m| m.meta.usage.and_then(|u| u.prompt_tokens()));
        let provider_after = msgs[at..]
            .iter()
            .find(|m| m.opens_call())
            .and_then(|m| m.meta.usage.and_then(|u| u.prompt_tokens()));
        rows.push(RecordedRow {
            index: at,
            timestamp: c.timestamp.clone(),
            trigger: c.trigger.clone(),
            tokens_before_provider: c.pre_tokens.or(provider_before),
            tokens_before: before[at],
            tokens_after_provider: provider_after,
            tokens_after: base + agent.restart_at(at).unwrap_or(0),
            summary: match c.summary {
                RecordedSummary::Text(_) => SummaryKind::Text,
                RecordedSummary::Encrypted => SummaryKind::Encrypted,
                RecordedSummary::Absent => SummaryKind::Absent,
            },
            summary_tokens: c.summary.text().map(|t| meter.text(t)),
            kept_messages: c.kept.len(),
            retained: matches!(c.summary, RecordedSummary::Text(_) | RecordedSummary::Absent)
                .then(|| measure.retention(&agent_text)),
            retained_in_kept: measure.retention(&kept_text),
            lean: LeanAtPoint {
                tokens_after: lean_out.compaction.tokens_after,
                summary_tokens: lean_out.compaction.sections.summary_tokens,
                retained: measure.retention(&session_text(&lean_out.session.messages)),
            },
        });
    }
    rows
}

/// A recorded compaction with the session it is in.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RecordedEntry {
    pub source: String,
    #[serde(flatten)]
    pub row: RecordedRow,
}

/// The recorded compactions of a run, and their retention summed per
/// category (`[kept, of]`), the agent's beside lean's at the same points.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RecordedTotals {
    /// Sessions holding at least one.
    pub sessions: u64,
    pub compactions: u64,
    /// Those whose summary can be read (text or none at all).
    pub measurable: u64,
    /// Over the measurable compactions: what the agent kept (summary and
    /// kept messages) ...
    pub agent: Retention,
    /// ... and what lean kept at the same points.
    pub lean_at_measurable: Retention,
    /// Over every compaction: what the agent's kept messages alone hold ...
    pub agent_kept_messages: Retention,
    /// ... and what lean kept.
    pub lean: Retention,
    /// Each compaction, in input order.
    pub rows: Vec<RecordedEntry>,
}

impl RecordedTotals {
    /// Adds one session's rows.
    pub fn add_session(&mut self, source: &str, rows: &[RecordedRow]) {
        if rows.is_empty() {
            return;
        }
        self.sessions += 1;
        for r in rows {
            self.compactions += 1;
            if let Some(kept) = &r.retained {
                self.measurable += 1;
                add_retention(&mut self.agent, kept);
                add_retention(&mut self.lean_at_measurable, &r.lean.retained);
            }
            add_retention(&mut self.agent_kept_messages, &r.retained_in_kept);
            add_retention(&mut self.lean, &r.lean.retained);
            self.rows.push(RecordedEntry { source: source.to_string(), row: r.clone() });
        }
    }

    /// Adds another set's (a file's, a group's).
    pub fn merge(&mut self, other: &RecordedTotals) {
        self.sessions += other.sessions;
        self.compactions += other.compactions;
        self.measurable += other.measurable;
        for (into, from) in [
            (&mut self.agent, &other.agent),
            (&mut self.lean_at_measurable, &other.lean_at_measurable),
            (&mut self.agent_kept_messages, &other.agent_kept_messages),
            (&mut self.lean, &other.lean),
        ] {
            add_retention(into, from);
        }
        self.rows.extend(other.rows.iter().cloned());
    }

    /// Returns true if and only if no session held a recorded compaction.
    pub fn is_empty(&self) -> bool {
        self.compactions == 0
    }
}

fn add_retention(into: &mut Retention, from: &Retention) {
    for (cat, [kept, of]) in from {
        let e = into.entry(cat.clone()).or_default();
        e[0] += kept;
        e[1] += of;
    }
}

/// What is counted in the conversation before a compaction.
struct Measure {
    anchors: crate::policy::anchors::AnchorSet,
    /// Paths the agent's calls named, in their arguments.
    touched: BTreeSet<String>,
    /// The user's own messages, trimmed.
    users: Vec<String>,
}

impl Measure {
    fn new(history: &[Message], policy: &Policy, caches: &Caches) -> Measure {
        let anchors = session_anchors(history, &policy.families, caches);
        let calls: Vec<&str> = history
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .flat_map(|m| m.tool_calls.iter().map(|c| c.arguments.as_str()))
            .collect();
        let touched = anchors
            .ranked(crate::policy::anchors::Category::Paths)
            .into_iter()
            .map(|a| a.value)
            .filter(|p| calls.iter().any(|args| args.contains(p.as_str())))
            .collect();
        let users =
            history.iter().filter_map(real_user_text).map(|t| t.trim().to_string()).collect();
        Measure { anchors, touched, users }
    }

    /// Per category, `[kept, of]` in `kept`.
    fn retention(&self, kept: &str) -> Retention {
        let mut out: Retention = self
            .anchors
            .retention(kept)
            .into_iter()
            .map(|(c, (of, found))| (c.name().to_string(), [found, of]))
            .collect();
        let touched = self.touched.iter().filter(|p| kept.contains(p.as_str())).count();
        out.insert(TOUCHED_PATHS.into(), [touched, self.touched.len()]);
        let users = self.users.iter().filter(|u| kept.contains(u.as_str())).count();
        out.insert(USER_MESSAGES.into(), [users, self.users.len()]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RecordedCompaction, ToolCall};
    use crate::policy::Mode;
    use crate::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS};

    fn call(id: &str, args: &str) -> Message {
        let mut m = Message::text(Role::Assistant, "");
        m.tool_calls_mut().push(ToolCall {
            id: id.into(),
            name: "Bash".into(),
            arguments: args.into(),
            ..ToolCall::default()
        });
        m
    }

    fn result(id: &str, text: &str) -> Message {
        let mut m = Message::text(Role::Tool, text);
        m.tool_call_id = Some(id.into());
        m
    }

    /// A conversation with two paths (one read by a call), a commit and an
    /// error line; the agent's summary keeps the read path and the commit and
    /// quotes one of the two user messages: its figures, counted by hand.
    #[test]
    fn the_agents_summary_is_measured_against_the_conversation_it_replaced() {
        let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
        let mut msgs = vec![
            Message::text(Role::User, "Fix the parser in src/parse.rs please."),
            call("c1", r#"{"command":"cargo check --bin parse src/parse.rs"}"#),
            result("c1", "fn parse() {}\nerror[E0308]: mismatched types"),
            Message::text(Role::Assistant, "Commit 3f2a9c1e fixed docs/notes.md earlier."),
            Message::text(Role::User, "Also handle empty input."),
        ];
        for k in 0..15 {
            let id = format!("s{k}");
            msgs.push(call(&id, &format!(r#"{{"command":"make step-{k}"}}"#)));
            msgs.push(result(&id, &format!("step {k} {}", "x ".repeat(2_000))));
        }
        let mut s = Session { messages: msgs, ..Session::default() };
        let summary = "The user asked to fix src/parse.rs; commit 3f2a9c1e. \
                       Also handle empty input.";
        s.recorded_compactions = vec![RecordedCompaction {
            at: Some(35),
            trigger: Some("auto".into()),
            pre_tokens: Some(9_000),
            summary: RecordedSummary::Text(summary.into()),
            ..RecordedCompaction::default()
        }];
        s.messages.push(Message::text(Role::User, "next"));
        let rows = measure(&s, &Policy::new(Mode::Lean, 32_000), &meter, &Caches::default());
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.index, r.trigger.as_deref(), r.tokens_before_provider),
            (35, Some("auto"), Some(9_000))
        );
        let kept = r.retained.as_ref().unwrap();
        assert_eq!(kept["paths"], [1, 2], "src/parse.rs, not docs/notes.md");
        assert_eq!(kept[TOUCHED_PATHS], [1, 1]);
        assert_eq!(kept["commits"], [1, 1]);
        assert_eq!(kept["errors"], [0, 1]);
        assert_eq!(kept[USER_MESSAGES], [1, 2]);
        let base = meter.request_overhead();
        let whole: u64 = meter.messages(&s.messages[..35]).iter().sum();
        assert_eq!(r.tokens_before, base + whole);
        assert_eq!(r.tokens_after, base + meter.message(&Message::text(Role::User, summary)));
        assert_eq!(r.summary_tokens, Some(meter.text(summary)));
        // Lean at the same point keeps every path and the error line.
        assert_eq!(r.lean.retained["paths"], [2, 2]);
        assert_eq!(r.lean.retained["errors"], [1, 1]);
        assert!(
            r.lean.tokens_after < r.tokens_before,
            "{} {}",
            r.lean.tokens_after,
            r.tokens_before
        );
        // Encrypted: not measurable, never 0%.
        s.recorded_compactions[0].summary = RecordedSummary::Encrypted;
        let r = &measure(&s, &Policy::new(Mode::Lean, 32_000), &meter, &Caches::default())[0];
        assert_eq!(r.retained, None);
        assert_eq!(r.summary, SummaryKind::Encrypted);
        assert_eq!(r.retained_in_kept["paths"], [0, 2]);
    }
}
