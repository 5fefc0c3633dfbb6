//! The record of one compaction: what was done to a session and why (the
//! `compaction` object of SPEC 6 and the report's figures).

use super::anchors::Category;
use super::{Mode, Tier};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts of what the stages changed (serialized as they stand in a report row).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// The sections of the output: messages and tokens of the head, the summary
/// and the tail, and the tokens the summary replaced (serialized as they stand
/// in a report row).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sections {
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
    /// How many distinct anchors of the summarized region the index holds.
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
    pub sections: Sections,
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
    pub summarizer: Option<super::summary_writer::SummarizerUse>,
    /// The policy's name when it is none of today's modes (`codex`, a
    /// `--policy` file's): `mode` names the others.
    pub policy: Option<&'static str>,
}

impl Compaction {
    /// The name of the policy that made this record.
    pub fn policy_name(&self) -> &'static str {
        self.policy.unwrap_or(self.mode.name())
    }
}

/// The record of a session that compaction left as it was.
pub(crate) fn unchanged_record(
    messages: usize,
    mode: Mode,
    tokens: u64,
    reason: Reason,
) -> Compaction {
    Compaction {
        mode,
        tier: Tier::None,
        reason,
        compacted: false,
        messages_before: messages,
        messages_after: messages,
        tokens_before: tokens,
        tokens_after: tokens,
        sections: Sections {
            tail_messages: messages,
            verbatim_tail_messages: messages,
            tail_tokens: tokens,
            ..Sections::default()
        },
        summarized_range: None,
        summary_merged: false,
        effects: Effects::default(),
        anchors: AnchorFigures::default(),
        user_messages_summarized: 0,
        user_messages_kept_whole: 0,
        secrets_masked: 0,
        over_trigger: false,
        summarizer: None,
        policy: None,
    }
}
