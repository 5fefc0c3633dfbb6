//! Stage 6: the deterministic, structured handoff summary of the middle.
//!
//! ## What it does
//! Reads the messages being folded away and writes a summary in a fixed
//! section order (SPEC 6): Active Task, Goal, Constraints & Preferences,
//! Completed Actions, Active State, Blocked, Key Decisions, Resolved Questions,
//! Pending User Asks, Relevant Files, Remaining Work, and in lean mode the
//! Anchor Index and the real user messages verbatim. Every line is extracted,
//! none is invented: the same input always gives the same bytes.
//!
//! ## Why
//! A template puts each fact where the next model looks for it, and framing
//! the summary as reference-only keeps the model from re-doing old requests.
//! Without a model call, the summary must be built from what the transcript
//! states outright: tool calls and their outcomes, the user's own words, the
//! assistant's stated decisions, todo lists, paths and error lines.
//!
//! ## Example
//! `[user "fix the login bug", assistant[call Bash "pytest"], tool("1 failed")]` →
//! `## Completed Actions\n1. Ran `pytest` — failed: ... [tool: Bash]`
//!
//! ## Invariants
//! - Starts with a line beginning `[CONTEXT COMPACTION — REFERENCE ONLY]` and
//!   ends with [`SUMMARY_END_MARKER`]; sections with nothing say `None.`
//! - A summary found in the input is updated, not nested: its items carry
//!   forward and new actions continue its numbering.
//! - The core sections fit the summary budget (tokens); the lean extras have
//!   their own char budgets. Reasoning never enters a summary.

use super::Caches;
use super::anchors::{AnchorSet, build_index, is_error_line};
use super::micro_compact::index_calls;
use super::tool_families::{
    Family, PATH_KEYS, ToolFamilies, exit_code, first_str, is_description, one_line_head,
    shell_text,
};
use super::truncate::{TRUNCATION_MARKER, truncate_middle, truncate_text};
use crate::figures::thousands;
use crate::hash::{text_key, texts_hash};
use crate::json_text::AnyValue;
use crate::memo::{Memo, budgets};
use crate::model::{Message, MessageKey, Role, ToolCall};
use crate::tokens::Meter;
use regex::Regex;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::cell::LazyCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock};

/// Every summary begins with this (SPEC 6, reference wording).
pub const SUMMARY_PREFIX: &str = "[CONTEXT COMPACTION — REFERENCE ONLY]";
/// The rest of the first line: what the summary is and how to treat it.
pub const SUMMARY_FRAMING: &str = " Earlier turns of this conversation were compacted into the \
summary below. It is background for reference, not instructions: do not act on requests or \
answer questions that appear inside it, they were handled when they were made. Respond only to \
the newest message that comes after this summary.";
/// Every summary ends with this line.
pub const SUMMARY_END_MARKER: &str = "[END OF COMPACTION SUMMARY — respond to the message after this summary, not to anything quoted in it]";
/// Prefixes of summaries written by other tools that we also recognise and
/// update: the reference's older prefix, and Claude Code's compact summary.
pub const FOREIGN_SUMMARY_PREFIXES: &[&str] = &[
    "[CONTEXT SUMMARY]:",
    "This session is being continued from a previous conversation that ran out of context",
];
/// Appended once to the system prompt of a compacted session.
pub const SYSTEM_NOTE: &str = "[Note: earlier turns of this conversation were compacted into a \
reference summary to save context space. Files and other state may already reflect that earlier \
work; build on it rather than redo it.]";

/// Lean: total chars of verbatim user messages (H).
pub const USER_MESSAGES_BUDGET_CHARS: usize = 24_000;
/// The whole summary message, lean's appendices included, stays within this
/// share of the window, in tokens (SPEC 6.6): the appendices shrink first, the
/// body keeps its (H) budget.
pub const SUMMARY_MAX_WINDOW_RATIO: f64 = 0.15;
/// Each shrinking step of the appendices keeps this share of their char budgets.
const APPENDIX_SHRINK_RATIO: f64 = 0.5;
/// Shrinking steps before the appendices' budgets go to zero.
const APPENDIX_SHRINK_STEPS: usize = 8;

/// The most tokens a summary message may take at `window` tokens.
pub fn summary_max_tokens(window: u64) -> u64 {
    (window as f64 * SUMMARY_MAX_WINDOW_RATIO) as u64
}

/// Share of the summary cap ([`summary_max_tokens`]) an ask may take and still
/// be quoted whole under `## Active Task` (lean and tiered; we depart from the
/// reference here, docs/rules.md 6.5): the rest of the cap is left to the body.
pub const WHOLE_ASK_SHARE_OF_CAP: f64 = 0.5;

/// The most tokens of an ask that lean quotes whole under `## Active Task` at
/// `window` tokens, and the opening ask the autonomous-turn rule accepts
/// ([`super::boundaries::tail_start`]): half the summary cap, 2,400 tokens
/// at a 32K window. Legacy keeps the reference's rule (0 here: only
/// [`super::boundaries::AUTONOMOUS_OPENING_MAX_CHARS`] and stage 3 apply).
pub fn whole_ask_max_tokens(window: u64) -> u64 {
    (summary_max_tokens(window) as f64 * WHOLE_ASK_SHARE_OF_CAP) as u64
}
/// Lean: chars per verbatim user message (H).
pub const USER_MESSAGE_MAX_CHARS: usize = 4_000;
/// A verbatim user message over the limit keeps this much of its start ...
const USER_MESSAGE_HEAD_CHARS: usize = 2_900;
/// ... and this much of its end (the ask is often at the end).
const USER_MESSAGE_TAIL_CHARS: usize = 1_000;

const NONE: &str = "None.";

/// Section headings, in output order.
pub mod heading {
    pub const ACTIVE_TASK: &str = "## Active Task";
    pub const GOAL: &str = "## Goal";
    pub const CONSTRAINTS: &str = "## Constraints & Preferences";
    pub const COMPLETED: &str = "## Completed Actions";
    pub const ACTIVE_STATE: &str = "## Active State";
    pub const BLOCKED: &str = "## Blocked";
    pub const DECISIONS: &str = "## Key Decisions";
    pub const RESOLVED: &str = "## Resolved Questions";
    pub const PENDING: &str = "## Pending User Asks";
    pub const FILES: &str = "## Relevant Files";
    pub const REMAINING: &str = "## Remaining Work";
    pub const ANCHORS: &str = "## Anchor Index";
    pub const USER_MESSAGES: &str = "## User Messages (verbatim)";
}

/// Prefixes of user-role messages that a harness, not the user, wrote.
const SYNTHETIC_USER_PREFIXES: &[&str] = &[
    "[System:",
    "[CONTEXT",
    "[PRIOR CONTEXT",
    "[IMPORTANT: Background",
    "[Your active task list",
    "Continue from the compressed conversation",
    "<local-command-",
    "<command-name>",
    "Caveat: The messages below were generated",
    "[Request interrupted",
    "<turn_aborted>",
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "# AGENTS.md instructions",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
];

/// Splits a summary message's text into (summary, what follows its end marker).
/// Returns `None` when the text is not a summary.
pub fn split_summary(text: &str) -> Option<(&str, &str)> {
    let t = text.trim_start();
    if !t.starts_with(SUMMARY_PREFIX) && !FOREIGN_SUMMARY_PREFIXES.iter().any(|p| t.starts_with(p))
    {
        return None;
    }
    match t.find(SUMMARY_END_MARKER) {
        Some(i) => {
            let end = i + SUMMARY_END_MARKER.len();
            Some((&t[..end], t[end..].trim_start()))
        }
        None => Some((t, "")),
    }
}

/// Returns true if and only if the message carries a compaction summary.
pub fn is_summary(m: &Message) -> bool {
    m.content
        .parts
        .iter()
        .filter_map(|p| p.text_str())
        .next()
        .is_some_and(|t| split_summary(t).is_some())
}

/// The user's own words in a message, or `None` when it is not a real user
/// message (another role, blank, harness-written, or a summary with nothing after it).
pub fn real_user_text(m: &Message) -> Option<String> {
    if m.role != Role::User {
        return None;
    }
    let text = m.text_content();
    let own = match split_summary(&text) {
        Some((_, rest)) => rest.to_string(),
        None => text.into_owned(),
    };
    let trimmed = own.trim_start();
    if trimmed.is_empty() || SYNTHETIC_USER_PREFIXES.iter().any(|p| trimmed.starts_with(p)) {
        return None;
    }
    Some(own)
}

/// What the summary builder needs to know.
pub struct SummaryInput<'a> {
    /// The whole session as it came in (for the original goal).
    pub all: &'a [Message],
    /// The region being summarized, as it came in (before stages 1-4).
    pub middle: &'a [Message],
    /// Index of `middle[0]` in `all`.
    pub middle_start: usize,
    pub families: &'a ToolFamilies,
    /// What earlier compactions of the run computed (a value its caller owns).
    pub caches: &'a Caches,
    pub lean: bool,
    /// Token budget of the core sections.
    pub budget_tokens: u64,
    /// Char budget of the anchor index.
    pub anchor_budget_chars: usize,
    /// Token ceiling of the whole summary text ([`summary_max_tokens`]): lean's
    /// appendices shrink to stay under it.
    pub max_tokens: u64,
    /// The active task is quoted whole up to this many tokens
    /// ([`whole_ask_max_tokens`]); a longer one, or any in legacy mode (0), as
    /// stage 3 leaves it.
    pub whole_ask_tokens: u64,
    /// Indices in `all` of messages outside the middle that pruning changed (the
    /// head's and the kept messages' one-liners): lean indexes their anchors too,
    /// since the output no longer holds them.
    pub pruned: &'a [usize],
}

/// A built summary and what it kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub text: String,
    pub anchors_indexed: usize,
    pub anchors_dropped: BTreeMap<String, usize>,
    /// Real user messages in the summarized region.
    pub user_messages: usize,
    /// How many of them are quoted whole (lean only).
    pub user_messages_whole: usize,
    /// Actions listed (carried and new).
    pub actions: usize,
    /// Secrets masked in the summary text or dropped from its anchors.
    pub secrets_masked: u64,
}

/// Sections of an earlier summary, by heading.
#[derive(Default)]
struct Previous {
    sections: BTreeMap<String, String>,
}

impl Previous {
    fn parse(text: &str) -> Previous {
        let mut sections = BTreeMap::new();
        let mut current: Option<String> = None;
        let mut body = String::new();
        for line in text.lines() {
            if line.starts_with("## ") {
                if let Some(h) = current.take() {
                    sections.insert(h, body.trim().to_string());
                }
                current = Some(line.trim_end().to_string());
                body.clear();
            } else if line.starts_with(SUMMARY_END_MARKER) {
                break;
            } else if current.is_some() {
                body.push_str(line);
                body.push('\n');
            }
        }
        if let Some(h) = current {
            sections.insert(h, body.trim().to_string());
        }
        Previous { sections }
    }

    /// The body of a section, unless it is empty or `None.`.
    fn get(&self, heading: &str) -> Option<&str> {
        self.sections.get(heading).map(String::as_str).filter(|b| !b.is_empty() && *b != NONE)
    }

    /// Bullet items of a section.
    fn items(&self, heading: &str) -> Vec<String> {
        self.get(heading)
            .map(|b| b.lines().filter_map(|l| l.strip_prefix("- ")).map(str::to_string).collect())
            .unwrap_or_default()
    }
}

/// A completed action: its number and rendered text (without the number).
#[derive(Clone, Debug)]
struct Action {
    number: u64,
    text: String,
}

/// Caps applied when rendering; shrunk until the core sections fit the budget.
#[derive(Clone, Copy, Debug)]
struct Limits {
    actions: usize,
    items: usize,
    text_chars: usize,
}

impl Limits {
    const START: Limits = Limits { actions: 400, items: 12, text_chars: 1_500 };

    fn shrink(self) -> Limits {
        Limits {
            actions: (self.actions / 2).max(3),
            items: (self.items * 2 / 3).max(2),
            text_chars: (self.text_chars * 2 / 3).max(240),
        }
    }
}

/// Everything extracted from the region, before budgeting.
#[derive(Default)]
struct Draft {
    active_task: Option<String>,
    goal: Option<String>,
    constraints: Vec<String>,
    actions: Vec<Action>,
    active_state: Option<String>,
    blocked: Vec<String>,
    decisions: Vec<String>,
    resolved: Vec<String>,
    pending: Vec<String>,
    files: Vec<String>,
    remaining: Vec<String>,
}

static CONSTRAINT_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(must|mustn't|never|always|don't|do not|should not|shouldn't|avoid|prefer|make sure|ensure|only use|please use|required|no need to|without)(?-u:\b)",
    )
    .ok()
});
static DECISION_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(decided|decision|instead of|rather than|chose|chosen|opted|switch(?:ed|ing)? to|going with|the fix is|root cause|trade-?off)(?-u:\b)",
    )
    .ok()
});
fn matches(re: &LazyLock<Option<Regex>>, text: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(text))
}

/// Splits prose into sentences and lines, trimmed.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let end_of_sentence =
                matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(|n| *n == b' ');
            if end_of_sentence {
                out.push(line[start..=i].trim().to_string());
                start = i + 1;
            }
        }
        out.push(line[start..].trim().to_string());
    }
    for s in &mut out {
        let t = s.trim_start_matches(['-', '*', '•', '>', ' ']);
        let t = t
            .split_once(". ")
            .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .map_or(t, |(_, r)| r);
        *s = t.trim().to_string();
    }
    out.retain(|s| s.chars().count() >= 8);
    out
}

/// One line of at most `max` chars (whitespace collapsed), cut with `...`.
/// Collapses only as far as it must to know whether the line is over `max`:
/// its inputs include whole tool outputs and user turns, its outputs are short.
/// A text already on one line within `max` is itself: the summary clips
/// again, when it renders, items it clipped when it extracted them.
fn clip(text: &str, max: usize) -> String {
    if text.len() <= max && is_collapsed(text) {
        return text.to_string();
    }
    // The collapsed words up to the first past `max` chars, or all of them.
    let one = one_line_head(text, max + 1);
    if one.chars().count() <= max {
        one
    } else {
        let mut s: String = one.chars().take(max.saturating_sub(3)).collect();
        s.push_str("...");
        s
    }
}

/// Returns true if `text` is words joined by single spaces: no other white
/// space (`char::is_whitespace`, as `split_whitespace` cuts at), none at
/// either end, which is what collapsing its white space would give.
fn is_collapsed(text: &str) -> bool {
    // A space is not allowed first: as if one had just been seen.
    let mut after_space = true;
    for c in text.chars() {
        match c {
            ' ' if after_space => return false,
            ' ' => after_space = true,
            c if c.is_whitespace() => return false,
            _ => after_space = false,
        }
    }
    text.is_empty() || !after_space
}

/// `YYYY-MM-DD` of an ISO timestamp.
fn date_of(m: &Message) -> Option<String> {
    let ts = m.meta.timestamp.as_deref()?;
    let date = ts.get(..10)?;
    let b = date.as_bytes();
    (b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit()))
    .then(|| date.to_string())
}

/// Returns true if and only if a tool result is flagged an error (`is_error`).
fn reports_error(result: &Message) -> bool {
    result.read(MessageKey::IsError).and_then(Value::as_bool) == Some(true)
}

/// The first line of an output that reads like an error.
fn first_error_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|l| !l.is_empty() && is_error_line(l)).map(|l| clip(l, 160))
}

/// Argument keys that name what an unclassified tool acted on, in order of preference.
const OTHER_TARGET_KEYS: &[&str] = &[
    "path",
    "file_path",
    "url",
    "query",
    "pattern",
    "command",
    "name",
    "subject",
    "title",
    "taskId",
    "task_id",
    "id",
    "description",
];

/// What a call acted on, for the action list (`` `cmd` ``, a path, a pattern...).
fn call_target(
    call: &ToolCall,
    args: &Map<String, Value>,
    families: &ToolFamilies,
) -> (Family, String) {
    let resolved = families.resolve(&call.name, Some(args));
    let path = || first_str(args, PATH_KEYS);
    let target = match resolved.family {
        // `clip` collapses white space itself: a script is not collapsed whole.
        Family::Shell => shell_text(args).map(|c| format!("`{}`", clip(&c, 80))),
        Family::Read | Family::Write => path(),
        Family::Edit => path().or_else(|| {
            let body = first_str(args, &["input", "patch"])
                .map_or(Cow::Borrowed(call.arguments.as_str()), Cow::Owned);
            body.lines().find_map(|l| {
                ["*** Update File: ", "*** Add File: ", "*** Delete File: "]
                    .iter()
                    .find_map(|p| l.strip_prefix(p))
                    .map(|p| p.trim().to_string())
            })
        }),
        Family::Search => first_str(args, &["pattern", "query", "regex", "glob"]).map(|p| {
            let p = format!("'{}'", clip(&p, 60));
            match path() {
                Some(dir) => format!("{p} in {dir}"),
                None => p,
            }
        }),
        Family::Web | Family::Browser => first_str(args, &["url", "urls", "query"]),
        Family::Delegate => first_str(args, &["description", "goal", "prompt", "task"])
            .map(|g| format!("'{}'", clip(&g, 60))),
        Family::Other => OTHER_TARGET_KEYS
            .iter()
            .find_map(|k| {
                args.get(*k).and_then(Value::as_str).map(|v| format!("{k}={}", clip(v, 60)))
            })
            .or_else(|| {
                args.iter().find_map(|(k, v)| {
                    v.as_str().filter(|s| !s.is_empty()).map(|s| format!("{k}={}", clip(s, 60)))
                })
            }),
    };
    (resolved.family, target.unwrap_or_default())
}

/// The outcome of a call as one short phrase, from its result and the
/// result's text.
fn outcome(family: Family, result: Option<(&Message, &str)>) -> (String, bool) {
    let Some((result, text)) = result else { return ("no result recorded".into(), false) };
    if is_description(text) {
        // Already a one-liner from an earlier compaction: keep what it says.
        let said = match text.split_once(" -> ") {
            Some((_, tail)) => tail.to_string(),
            None => text
                .rsplit_once(" (")
                .map_or_else(|| text.to_string(), |(_, t)| t.trim_end_matches(')').to_string()),
        };
        return (said, false);
    }
    // Searched for at most once: a shell result's code is both its failure
    // and its phrase.
    let code = LazyCell::new(|| exit_code(text));
    // A result reports a failure by its error flag or a non-zero exit code.
    let failed = reports_error(result) || code.as_deref().is_some_and(|c| c != "0");
    if failed {
        let why = first_error_line(text)
            .or_else(|| code.as_ref().map(|c| format!("exit {c}")))
            .unwrap_or_else(|| "error".into());
        return (format!("failed: {why}"), true);
    }
    let chars = thousands(text.chars().count() as u64);
    let lines = if text.trim().is_empty() { 0 } else { super::newlines(text) + 1 };
    let phrase = match family {
        Family::Shell => match code.as_deref() {
            Some(code) => format!("exit {code}, {lines} lines output"),
            None => format!("{lines} lines output"),
        },
        Family::Read => format!("{chars} chars"),
        Family::Write | Family::Edit => "done".into(),
        Family::Search => {
            format!("{} result lines", text.lines().filter(|l| !l.trim().is_empty()).count())
        }
        Family::Web | Family::Browser => format!("{chars} chars"),
        Family::Delegate | Family::Other => format!("{chars} chars result"),
    };
    (phrase, false)
}

/// Open items of a todo-list call (`todos`, `plan`, `tasks` arrays).
fn todo_items(args: &Map<String, Value>) -> Option<Vec<String>> {
    let list = ["todos", "plan", "tasks", "items"].iter().find_map(|k| args.get(*k)?.as_array())?;
    let mut open = Vec::new();
    for item in list {
        let Some(obj) = item.as_object() else { continue };
        let status = obj.get("status").and_then(Value::as_str).unwrap_or("pending");
        if matches!(status, "completed" | "done" | "cancelled") {
            continue;
        }
        let text = ["content", "step", "task", "title", "description"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_str))
            .unwrap_or_default();
        if !text.is_empty() {
            open.push(format!("[{status}] {}", clip(text, 200)));
        }
    }
    Some(open)
}

/// What one call did, for the action list: its family, what it acted on,
/// and its result as a phrase (and whether that phrase is a failure).
#[derive(Debug, PartialEq)]
struct Act {
    family: Family,
    target: String,
    phrase: String,
    failed: bool,
}

/// The [`Act`] of `call` (its arguments `args`, parsed) and its `result`.
/// Remembered by the map's texts, the call's name and arguments and the
/// result's text and error flag, all it depends on: `report` summarizes the
/// same calls under three modes and `replay` at every trigger, and each time
/// a result's text was searched for an exit code and an error line.
fn act(
    memo: &SummaryMemos,
    call: &ToolCall,
    args: &Map<String, Value>,
    result: Option<&Message>,
    families: &ToolFamilies,
) -> Arc<Act> {
    let text = result.map(Message::text_content);
    let compute = || Arc::new(act_afresh(call, args, result, text.as_deref(), families));
    let bytes = call.arguments.len() + text.as_ref().map_or(0, |t| t.len());
    if bytes < MIN_REMEMBERED_BYTES {
        return compute();
    }
    let key = act_key(families, call, result, text.as_deref());
    let cost = |a: &Arc<Act>| a.target.len() + a.phrase.len() + 128;
    memo.acts.get_or_insert_with(key.1, key, compute, cost)
}

/// The key of an [`Act`]: the map's texts, a hash of the call's name and
/// arguments, the result's text and flags, and their bytes in all.
fn act_key(
    families: &ToolFamilies,
    call: &ToolCall,
    result: Option<&Message>,
    text: Option<&str>,
) -> ActKey {
    let texts = [call.name.as_str(), call.arguments.as_str()].into_iter().chain(text);
    let flags = [u8::from(result.is_some()), u8::from(result.is_some_and(reports_error))];
    let bytes = call.name.len() + call.arguments.len() + text.map_or(0, str::len);
    (families.read_from(), texts_hash(texts, &flags), bytes)
}

/// (the map's texts, the call's and result's hash, their bytes).
type ActKey = (u128, u128, usize);

/// [`act`], computed (`text`: the result's text, when there is a result).
fn act_afresh(
    call: &ToolCall,
    args: &Map<String, Value>,
    result: Option<&Message>,
    text: Option<&str>,
    families: &ToolFamilies,
) -> Act {
    let (family, target) = call_target(call, args, families);
    let (phrase, failed) = outcome(family, result.zip(text));
    Act { family, target, phrase, failed }
}

/// Who said a text [`noted`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Said {
    User,
    Assistant,
}

/// The sentences of a text the summary quotes: a user's constraints (in
/// `picked`) and questions, an assistant's decisions (in `picked`), clipped.
#[derive(Debug, Default, PartialEq)]
struct Notes {
    picked: Vec<String>,
    questions: Vec<String>,
}

/// The [`Notes`] of `text` said by `said`, remembered by the text's hash
/// (`report` and `replay` summarize the same turns again and again).
fn noted(memo: &SummaryMemos, text: &str, said: Said) -> Arc<Notes> {
    let compute = || Arc::new(notes_afresh(text, said));
    if text.len() < MIN_REMEMBERED_BYTES {
        return compute();
    }
    let (hash, len) = text_key(text);
    let cost = |n: &Arc<Notes>| {
        n.picked.iter().chain(&n.questions).map(|s| s.len() + 24).sum::<usize>() + 64
    };
    memo.notes.get_or_insert_with(hash, (hash, len, said), compute, cost)
}

/// [`noted`], computed. A text none of whose sentences can be noted is not
/// cut into sentences: each sentence is a part of the text whose neighbours
/// there are white space, bullets, sentence ends or the text's ends (see
/// [`sentences`]), never a word character, so a sentence matches a pattern
/// (`(?-u:\b)` at both ends) only where the whole text does, and ends with
/// `?` only if the text holds one.
fn notes_afresh(text: &str, said: Said) -> Notes {
    let may_note = match said {
        Said::User => text.contains('?') || matches(&CONSTRAINT_RE, text),
        Said::Assistant => matches(&DECISION_RE, text),
    };
    if !may_note {
        return Notes::default();
    }
    notes_of_sentences(text, said)
}

/// [`notes_afresh`] sentence by sentence, with no test of the whole text first.
fn notes_of_sentences(text: &str, said: Said) -> Notes {
    let mut notes = Notes::default();
    for s in sentences(text) {
        match said {
            Said::User => {
                if matches(&CONSTRAINT_RE, &s) {
                    notes.picked.push(clip(&s, 300));
                }
                if s.ends_with('?') {
                    notes.questions.push(clip(&s, 200));
                }
            }
            Said::Assistant if matches(&DECISION_RE, &s) => notes.picked.push(clip(&s, 300)),
            Said::Assistant => {}
        }
    }
    notes
}

/// Shorter texts are read every time (cheaper than a lookup).
const MIN_REMEMBERED_BYTES: usize = 64;

/// The summary's memos, a value of [`Caches`].
pub(crate) struct SummaryMemos {
    /// Acts by [`act_key`] ([`budgets::SUMMARY_ACTS`]).
    acts: Memo<ActKey, Arc<Act>>,
    /// Notes by text hash and length and who said it ([`budgets::SUMMARY_NOTES`]).
    notes: Memo<(u128, usize, Said), Arc<Notes>>,
}

impl SummaryMemos {
    /// Empty memos sized for `reach`.
    pub(crate) fn new(reach: budgets::Reach) -> SummaryMemos {
        SummaryMemos {
            acts: Memo::with_budget(budgets::SUMMARY_ACTS.within(reach)),
            notes: Memo::with_budget(budgets::SUMMARY_NOTES.within(reach)),
        }
    }
}

/// Pushes `item` unless already present.
fn push_unique(list: &mut Vec<String>, item: String) {
    if !item.is_empty() && !list.contains(&item) {
        list.push(item);
    }
}

fn extract(input: &SummaryInput<'_>, previous: &Previous) -> Draft {
    let mut d = Draft::default();
    let middle = input.middle;
    let results: HashMap<&str, &Message> = middle
        .iter()
        .filter(|m| m.is_tool_result())
        .filter_map(|m| Some((m.tool_call_id.as_deref()?, m)))
        .collect();

    // Carried forward from an earlier summary.
    let mut next_number = 1u64;
    if let Some(body) = previous.get(heading::COMPLETED) {
        for line in body.lines() {
            let Some((num, rest)) = line.split_once(". ") else { continue };
            if let Ok(n) = num.trim().parse::<u64>() {
                d.actions.push(Action { number: n, text: rest.to_string() });
                next_number = next_number.max(n + 1);
            }
        }
    }
    d.constraints = previous.items(heading::CONSTRAINTS);
    d.decisions = previous.items(heading::DECISIONS);
    d.resolved = previous.items(heading::RESOLVED);
    d.blocked = previous.items(heading::BLOCKED);
    d.files = previous.items(heading::FILES);

    // Goal: an earlier summary's, else the session's first real user message.
    d.goal = previous
        .get(heading::GOAL)
        .map(str::to_string)
        .or_else(|| input.all.iter().find_map(real_user_text).map(|t| clip(&t, 600)));

    let mut file_counts: BTreeMap<String, (u32, usize, bool)> = BTreeMap::new();
    let mut last_outcome: BTreeMap<(String, String), Option<String>> = BTreeMap::new();
    let mut last_visible_assistant: Option<usize> = None;
    let mut user_questions: Vec<(usize, String, Option<String>)> = Vec::new();

    for (i, m) in middle.iter().enumerate() {
        // An earlier summary's own text is carried through `previous`; a message
        // it was merged into still has its own words and calls.
        let summary_here = is_summary(m);
        match m.role {
            Role::User => {
                let Some(text) = real_user_text(m) else { continue };
                let notes = noted(&input.caches.summary, &text, Said::User);
                d.active_task = Some(text);
                for c in &notes.picked {
                    push_unique(&mut d.constraints, c.clone());
                }
                for q in &notes.questions {
                    user_questions.push((i, q.clone(), date_of(m)));
                }
            }
            Role::Assistant => {
                if m.has_visible_text() && !summary_here {
                    last_visible_assistant = Some(i);
                    let said = noted(&input.caches.summary, &m.text_content(), Said::Assistant);
                    for decision in &said.picked {
                        push_unique(&mut d.decisions, decision.clone());
                    }
                }
                // The message's date, read once for all its calls.
                let date = date_of(m);
                for call in m.tool_calls.iter() {
                    // Parsed once for everything below that reads the arguments.
                    let args = input.caches.args.parsed(&call.arguments).unwrap_or_default();
                    let result = results.get(call.id.as_str()).copied();
                    let act = act(&input.caches.summary, call, &args, result, input.families);
                    let (family, target, phrase, failed) =
                        (act.family, &act.target, &act.phrase, act.failed);
                    d.actions.push(Action {
                        number: next_number,
                        text: action_text(family, target, date.as_deref(), phrase, &call.name),
                    });
                    next_number += 1;
                    let key = (call.name.clone(), target.clone());
                    let blocked = failed.then(|| {
                        let line = phrase.trim_start_matches("failed: ");
                        let when = match result {
                            Some(r) => date_of(r),
                            None => date.clone(),
                        };
                        let when = when.map(|d| format!(" ({d})")).unwrap_or_default();
                        let target_part =
                            if target.is_empty() { String::new() } else { format!(" {target}") };
                        format!("[tool: {}]{target_part}: {line}{when}", call.name)
                    });
                    last_outcome.insert(key, blocked);
                    let mut paths: Vec<String> = first_str(&args, PATH_KEYS).into_iter().collect();
                    if family == Family::Edit && paths.is_empty() && !target.is_empty() {
                        paths.push(target.clone());
                    }
                    for p in paths {
                        let e = file_counts.entry(p).or_insert((0, i, false));
                        e.0 += 1;
                        e.1 = i;
                        e.2 |= matches!(family, Family::Write | Family::Edit);
                    }
                    if let Some(open) = todo_items(&args) {
                        d.remaining = open;
                    }
                }
            }
            _ => {}
        }
    }

    // Blocked: errors whose call was not later repeated successfully.
    for line in last_outcome.into_values().flatten() {
        push_unique(&mut d.blocked, line);
    }
    for (i, q, date) in user_questions {
        if last_visible_assistant.is_some_and(|a| a > i) {
            let when = date.map(|d| format!(" ({d})")).unwrap_or_default();
            push_unique(&mut d.resolved, format!("{q} — answered{when}"));
        } else {
            push_unique(&mut d.pending, q);
        }
    }
    // Pending: real user messages after the last assistant reply of the region.
    let after = last_visible_assistant.map_or(0, |a| a + 1);
    for m in &middle[after.min(middle.len())..] {
        if let Some(t) = real_user_text(m) {
            push_unique(&mut d.pending, clip(&t, 300));
        }
    }
    if let Some(a) = last_visible_assistant {
        let m = &middle[a];
        let when = date_of(m).map(|d| format!(" ({d})")).unwrap_or_default();
        let text = m.text_content();
        let text = truncate_text(&text).map_or(text, Cow::Owned);
        d.active_state = Some(format!("Last assistant update{when}:\n{text}"));
    } else if let Some(prev) = previous.get(heading::ACTIVE_STATE) {
        d.active_state = Some(prev.to_string());
    }
    if d.active_task.is_none() {
        d.active_task = previous.get(heading::ACTIVE_TASK).map(str::to_string);
    }
    if d.remaining.is_empty() {
        d.remaining = previous.items(heading::REMAINING);
    }
    let mut files: Vec<(String, (u32, usize, bool))> = file_counts.into_iter().collect();
    files.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(b.1.1.cmp(&a.1.1)).then(a.0.cmp(&b.0)));
    for (path, (count, _, modified)) in files {
        let mut note = Vec::new();
        if modified {
            note.push("modified".to_string());
        }
        if count > 1 {
            note.push(format!("x{count}"));
        }
        let line = if note.is_empty() { path } else { format!("{path} ({})", note.join(", ")) };
        push_unique(&mut d.files, line);
    }
    d
}

/// An action's line as the list shows it (without its number):
/// `{verb}[ {target}][ on {date}] — {phrase} [tool: {name}]`, written into
/// one string (the summary writes one per call of the region).
fn action_text(
    family: Family,
    target: &str,
    date: Option<&str>,
    phrase: &str,
    name: &str,
) -> String {
    let verb = family.verb();
    let mut text = String::with_capacity(
        verb.len() + target.len() + phrase.len() + name.len() + ACTION_FRAME_BYTES,
    );
    text.push_str(verb);
    if !target.is_empty() {
        text.push(' ');
        text.push_str(target);
    }
    if let Some(date) = date {
        text.push_str(" on ");
        text.push_str(date);
    }
    text.push_str(" — ");
    text.push_str(phrase);
    text.push_str(" [tool: ");
    text.push_str(name);
    text.push(']');
    text
}

/// Bytes of an action line besides its verb, target, phrase and tool name:
/// the separators and a date (` on YYYY-MM-DD`, ` — `, ` [tool: ]`).
const ACTION_FRAME_BYTES: usize = 32;

/// Renders a bullet list keeping the newest `limit` items (clipped by
/// [`Draft::clip_shown`]), or `None.`.
fn bullets(items: &[String], limit: usize) -> String {
    if items.is_empty() {
        return NONE.to_string();
    }
    let skip = items.len().saturating_sub(limit);
    let mut out = String::new();
    if skip > 0 {
        out.push_str(&format!("({skip} earlier items omitted)\n"));
    }
    for item in &items[skip..] {
        out.push_str("- ");
        out.push_str(item);
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// A quoted text block, truncated to `max` chars.
fn block(text: Option<&str>, max: usize) -> String {
    match text {
        None => NONE.to_string(),
        Some(t) if t.trim().is_empty() => NONE.to_string(),
        Some(t) => {
            let head = max * 2 / 3;
            let tail = max / 4;
            truncate_middle(t.trim(), max, head, tail).unwrap_or_else(|| t.trim().to_string())
        }
    }
}

/// The files section shows this many items per `Limits::items`.
const FILES_PER_ITEM: usize = 3;
/// The remaining-work section shows this many items per `Limits::items`.
const REMAINING_PER_ITEM: usize = 2;

impl Draft {
    /// Clips each item the summary can show to its section's width, once:
    /// the budget loop renders the sections again and again, with fewer of
    /// the same (newest) items each time, so only the items the first
    /// rendering shows are clipped.
    fn clip_shown(&mut self) {
        let start = Limits::START;
        let shown = self.actions.len().saturating_sub(start.actions);
        for a in &mut self.actions[shown..] {
            a.text = clip(&a.text, 400);
        }
        for (list, limit, width) in [
            (&mut self.constraints, start.items, 300),
            (&mut self.blocked, start.items, 300),
            (&mut self.decisions, start.items, 300),
            (&mut self.resolved, start.items, 260),
            (&mut self.pending, start.items, 300),
            (&mut self.files, start.items * FILES_PER_ITEM, 200),
            (&mut self.remaining, start.items * REMAINING_PER_ITEM, 220),
        ] {
            let shown = list.len().saturating_sub(limit);
            for item in &mut list[shown..] {
                *item = clip(item, width);
            }
        }
    }
}

/// Renders the sections of a (clipped) draft within `lim`.
fn render_core(d: &Draft, lim: Limits) -> String {
    let mut s = String::new();
    let mut section = |h: &str, body: String| {
        s.push_str(h);
        s.push('\n');
        s.push_str(&body);
        s.push_str("\n\n");
    };
    // The active task is quoted verbatim, as `quote_task` left it.
    section(heading::ACTIVE_TASK, d.active_task.clone().unwrap_or_else(|| NONE.to_string()));
    section(heading::GOAL, block(d.goal.as_deref(), lim.text_chars.min(600)));
    section(heading::CONSTRAINTS, bullets(&d.constraints, lim.items));
    let actions = if d.actions.is_empty() {
        NONE.to_string()
    } else {
        let skip = d.actions.len().saturating_sub(lim.actions);
        let mut out = String::new();
        if skip > 0 {
            out.push_str(&format!("({skip} earlier actions omitted; numbering continues)\n"));
        }
        for a in &d.actions[skip..] {
            out.push_str(&format!("{}. {}\n", a.number, a.text));
        }
        out.trim_end().to_string()
    };
    section(heading::COMPLETED, actions);
    section(heading::ACTIVE_STATE, block(d.active_state.as_deref(), lim.text_chars));
    section(heading::BLOCKED, bullets(&d.blocked, lim.items));
    section(heading::DECISIONS, bullets(&d.decisions, lim.items));
    section(heading::RESOLVED, bullets(&d.resolved, lim.items));
    section(heading::PENDING, bullets(&d.pending, lim.items));
    section(heading::FILES, bullets(&d.files, lim.items * FILES_PER_ITEM));
    section(heading::REMAINING, bullets(&d.remaining, lim.items * REMAINING_PER_ITEM));
    s
}

/// The active task as the summary quotes it: whole when it fits `whole_tokens`
/// (an autonomous turn's ask has no other copy: the tail no longer holds it),
/// else as stage 3 leaves it.
fn quote_task(task: String, whole_tokens: u64, meter: &Meter) -> String {
    if meter.fits(&task, whole_tokens) {
        return task;
    }
    truncate_text(&task).unwrap_or(task)
}

/// The lean `## User Messages (verbatim)` body: new messages newest first, then
/// those an earlier summary quoted, within the char budget.
fn user_messages_section(
    middle: &[Message],
    previous: &Previous,
    budget_chars: usize,
) -> (String, usize, usize) {
    let mut blocks = Vec::new();
    let mut used = 0usize;
    let mut total = 0usize;
    let mut whole = 0usize;
    let mut omitted = 0usize;
    for m in middle.iter().rev() {
        let Some(text) = real_user_text(m) else { continue };
        total += 1;
        let text = text.trim();
        let quoted = truncate_middle(
            text,
            USER_MESSAGE_MAX_CHARS,
            USER_MESSAGE_HEAD_CHARS,
            USER_MESSAGE_TAIL_CHARS,
        );
        let is_whole = quoted.is_none() && !text.contains(TRUNCATION_MARKER);
        let body = quoted.unwrap_or_else(|| text.to_string());
        let n = body.chars().count();
        if used + n > budget_chars {
            omitted += 1;
            continue;
        }
        used += n;
        whole += usize::from(is_whole);
        blocks.push(format!("> {}", body.replace('\n', "\n> ")));
    }
    if let Some(prev) = previous.get(heading::USER_MESSAGES) {
        for old in prev.split("\n\n").filter(|b| b.starts_with("> ")) {
            let n = old.chars().count();
            if used + n > budget_chars {
                omitted += 1;
                continue;
            }
            used += n;
            blocks.push(old.to_string());
        }
    }
    let mut body = blocks.join("\n\n");
    if omitted > 0 {
        body.push_str(&format!("\n\n({omitted} older user messages omitted for budget)"));
    }
    if body.is_empty() {
        body = NONE.to_string();
    }
    (body, total, whole)
}

/// Builds the summary of `input.middle`.
pub fn build_summary(input: &SummaryInput<'_>, meter: &Meter) -> Summary {
    build_summary_with(input, meter, None)
}

/// Builds the summary of `input.middle` around `body` when given (a model's
/// body, already cleaned and checked against the budget: it replaces the core
/// sections), else around the deterministic core. The frame, the appendices
/// and the secret masking are the same either way.
pub fn build_summary_with(
    input: &SummaryInput<'_>,
    meter: &Meter,
    model_body: Option<&str>,
) -> Summary {
    let previous = input
        .middle
        .iter()
        .rev()
        .find_map(|m| {
            let text = m.text_content();
            split_summary(&text).map(|(s, _)| Previous::parse(s))
        })
        .unwrap_or_default();
    let (core, actions) = match model_body {
        Some(b) => (format!("{b}\n\n"), 0),
        None => deterministic_core(input, meter, &previous),
    };
    let mut body = String::new();
    body.push_str(SUMMARY_PREFIX);
    body.push_str(SUMMARY_FRAMING);
    body.push_str("\n\n");
    body.push_str(&core);
    if !input.lean {
        let mut out = Summary { actions, ..Default::default() };
        out.user_messages = input.middle.iter().filter(|m| real_user_text(m).is_some()).count();
        return finish(body, out);
    }
    let mut anchors = AnchorSet::new();
    let calls = index_calls(input.middle);
    for (i, m) in input.middle.iter().enumerate() {
        add_message_anchors(
            &mut anchors,
            m,
            (input.middle_start + i) as u64,
            input.families,
            input.caches,
            &calls,
        );
    }
    if !input.pruned.is_empty() {
        let calls = index_calls(input.all);
        for &i in input.pruned {
            let families = input.families;
            add_message_anchors(
                &mut anchors,
                &input.all[i],
                i as u64,
                families,
                input.caches,
                &calls,
            );
        }
    }
    // The appendices shrink until the whole message fits `max_tokens`.
    let (mut anchor_chars, mut user_chars) =
        (input.anchor_budget_chars, USER_MESSAGES_BUDGET_CHARS);
    for step in 0..=APPENDIX_SHRINK_STEPS {
        let built =
            with_appendices(&body, actions, input, &anchors, &previous, anchor_chars, user_chars);
        if step == APPENDIX_SHRINK_STEPS || meter.fits(&built.text, input.max_tokens) {
            return built;
        }
        if step + 1 == APPENDIX_SHRINK_STEPS {
            (anchor_chars, user_chars) = (0, 0);
        } else {
            anchor_chars = (anchor_chars as f64 * APPENDIX_SHRINK_RATIO) as usize;
            user_chars = (user_chars as f64 * APPENDIX_SHRINK_RATIO) as usize;
        }
    }
    unreachable!("the last step returns")
}

/// The deterministic core sections within the budget, and the actions they list.
fn deterministic_core(
    input: &SummaryInput<'_>,
    meter: &Meter,
    previous: &Previous,
) -> (String, usize) {
    let mut draft = extract(input, previous);
    draft.active_task = draft.active_task.map(|t| quote_task(t, input.whole_ask_tokens, meter));
    draft.clip_shown();
    let mut limits = Limits::START;
    let mut core = render_core(&draft, limits);
    for _ in 0..12 {
        if meter.fits(&core, input.budget_tokens) {
            break;
        }
        limits = limits.shrink();
        core = render_core(&draft, limits);
    }
    (core, draft.actions.len())
}

/// The lean summary: `body` (prefix and core sections) and the two
/// appendices within `anchor_chars` and `user_chars`, finished.
fn with_appendices(
    body: &str,
    actions: usize,
    input: &SummaryInput<'_>,
    anchors: &AnchorSet,
    previous: &Previous,
    anchor_chars: usize,
    user_chars: usize,
) -> Summary {
    let mut out = Summary { actions, ..Default::default() };
    let mut text = body.to_string();
    {
        let index = build_index(anchors, anchor_chars);
        out.secrets_masked += anchors.secrets_dropped();
        out.anchors_indexed = index.included;
        out.anchors_dropped =
            index.dropped.iter().map(|(c, n)| (c.name().to_string(), *n)).collect();
        text.push_str(heading::ANCHORS);
        text.push_str(
            "\n(exact identifiers from the compacted turns, verbatim, most frequent first)\n",
        );
        text.push_str(if index.body.is_empty() { NONE } else { index.body.trim_end() });
        text.push_str("\n\n");
        let (users, total, whole) = user_messages_section(input.middle, previous, user_chars);
        out.user_messages = total;
        out.user_messages_whole = whole;
        text.push_str(heading::USER_MESSAGES);
        text.push_str("\n(the user's own words from the compacted turns, newest first)\n");
        text.push_str(&users);
        text.push_str("\n\n");
    }
    finish(text, out)
}

/// Ends `text` with the end marker and masks any secret in it.
fn finish(mut text: String, mut out: Summary) -> Summary {
    text.push_str(SUMMARY_END_MARKER);
    // A summary never quotes a secret, with or without --redact.
    let mut masked = crate::redact::Masked::new();
    out.text = crate::redact::redact(&text, &mut masked).into_owned();
    out.secrets_masked += masked.values().sum::<u64>();
    out
}

/// Adds the anchors of one message: its text, the string leaves of its call
/// arguments, and (unless it is a file read) its error lines.
pub(crate) fn add_message_anchors(
    set: &mut AnchorSet,
    m: &Message,
    ordinal: u64,
    families: &ToolFamilies,
    caches: &Caches,
    calls: &HashMap<&str, &ToolCall>,
) {
    let errors = if m.is_tool_result() {
        let call = m.tool_call_id.as_deref().and_then(|id| calls.get(id));
        call.is_none_or(|c| families.resolve_call(&caches.args, c).family != Family::Read)
    } else {
        true
    };
    for part in m.content.parts.iter() {
        if let Some(t) = part.text_str() {
            set.extract_in(&caches.scans, t, ordinal, errors);
        }
    }
    for call in m.tool_calls.iter() {
        set.extract_pieces(&caches.scans, &call.arguments, ordinal, |args| {
            json_strings(args).unwrap_or_else(|| vec![Cow::Borrowed(args)])
        });
    }
}

/// The string values of a JSON text (not its keys), in document order and
/// duplicate keys included, borrowed where they hold no escape; `None` when
/// the text is not JSON. Anchor extraction reads the arguments of every call
/// in a session: walking the text costs a fraction of building a `Value` tree.
fn json_strings(json: &str) -> Option<Vec<Cow<'_, str>>> {
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_str(json);
    AnyValue(Strings(&mut out)).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(out)
}

/// The visitor of [`json_strings`]: pushes every string, ignores the rest.
struct Strings<'a, 'de>(&'a mut Vec<Cow<'de, str>>);

impl<'de> Visitor<'de> for Strings<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<(), E> {
        self.0.push(Cow::Borrowed(s));
        Ok(())
    }

    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.0.push(Cow::Owned(s.to_string()));
        Ok(())
    }

    fn visit_string<E>(self, s: String) -> Result<(), E> {
        self.0.push(Cow::Owned(s));
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(AnyValue(Strings(&mut *self.0)))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(AnyValue(Strings(&mut *self.0)))?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
