//! Archive statistics: what is in a set of sessions, measured the way
//! compaction measures it (`compactor stats`).
//!
//! Per session, then merged per file and in total: messages by role, tool calls
//! and tokens by tool, tokens in images and reasoning, the largest messages,
//! and, where the log recorded the provider's usage, the provider's prompt size
//! of each call beside our count of the same request.
//!
//! Pure computation: no I/O, deterministic (ordered maps, stable tie-breaks).

use crate::model::{Message, Part, Session};
use crate::replay::agent::AgentContext;
use crate::report::recorded::RecordedTotals;
use crate::tokens::Meter;
use serde::Serialize;
use std::collections::BTreeMap;

/// How many of the largest messages are kept.
pub const LARGEST_KEPT: usize = 5;
/// Chars of a largest message shown as its preview.
const PREVIEW_CHARS: usize = 80;

/// One of the largest messages.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Largest {
    pub source: String,
    pub index: usize,
    pub role: String,
    /// The tool a result answers or a call makes, when there is one.
    pub tool: Option<String>,
    pub tokens: u64,
    pub preview: String,
}

/// Provider-recorded usage beside our count, over the calls that recorded it.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct UsageComparison {
    /// Provider calls ([`Message::opens_call`]: one per response, never a
    /// client-written `<synthetic>` message) with recorded input usage.
    pub calls: u64,
    /// Sum of input + cache read + cache write tokens the provider recorded.
    pub provider_tokens: u64,
    /// Sum of our count of the same requests: everything before each call
    /// that the agent's context held (after one of its own compactions, what
    /// it kept and what followed; [`AgentContext`]).
    pub our_tokens: u64,
    /// `100 × (ours − provider) / provider`.
    pub diff_pct: f64,
    /// Median of (provider − ours) per call: what the log does not hold
    /// (system prompt, tool schemas) when it is roughly constant.
    pub median_gap: i64,
    #[serde(skip)]
    gaps: Vec<i64>,
}

/// Statistics of a set of sessions.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Stats {
    pub sessions: u64,
    pub messages: u64,
    pub messages_by_role: BTreeMap<String, u64>,
    pub tool_calls: u64,
    pub tool_calls_by_name: BTreeMap<String, u64>,
    /// Request tokens of every session (schemas + messages + framing).
    pub tokens: u64,
    pub tokens_by_role: BTreeMap<String, u64>,
    /// Tokens of each tool's calls and results.
    pub tokens_by_tool: BTreeMap<String, u64>,
    pub tool_schema_tokens: u64,
    pub images: u64,
    pub image_tokens: u64,
    pub reasoning_tokens: u64,
    pub recorded_compactions: u64,
    /// Sessions that are a subagent's own log ([`Session::parent`]).
    pub subagent_sessions: u64,
    /// Those placed in the conversation (`--history full`), measured, with
    /// lean at the same points ([`crate::report::recorded`]); filled by the
    /// caller, which chooses lean's window.
    #[serde(skip_serializing_if = "RecordedTotals::is_empty")]
    pub recorded: RecordedTotals,
    pub largest: Vec<Largest>,
    pub usage: UsageComparison,
}

fn preview(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut s: String = one.chars().take(PREVIEW_CHARS).collect();
    if one.chars().count() > PREVIEW_CHARS {
        s.push('…');
    }
    s
}

/// A message as its preview shows it: its text, or, for a message that only
/// calls tools, its calls (`call Bash {"command": "cargo test"}; call Read ...`).
fn preview_of(m: &Message) -> String {
    let text = m.text_content();
    if !text.trim().is_empty() || m.tool_calls.is_empty() {
        return preview(&text);
    }
    let calls: Vec<String> =
        m.tool_calls.iter().map(|c| format!("call {} {}", c.name, c.arguments)).collect();
    preview(&calls.join("; "))
}

impl Stats {
    /// Statistics of one session.
    pub fn of_session(s: &Session, meter: &Meter) -> Stats {
        let mut st = Stats {
            sessions: 1,
            recorded_compactions: s.recorded_compactions.len() as u64,
            subagent_sessions: u64::from(s.parent.is_some()),
            ..Stats::default()
        };
        st.tool_schema_tokens = meter.tools(s.tools.as_ref());
        let call_names: BTreeMap<&str, &str> = s
            .messages
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .map(|c| (c.id.as_str(), c.name.as_str()))
            .collect();
        let base = st.tool_schema_tokens + meter.request_overhead();
        let mut prefix = base;
        // The agent's own context: the prefix, restarted at each of its compactions.
        let agent = AgentContext::new(s, meter);
        let mut context = base;
        // Every message's size; the few largest are described after the loop.
        let mut sizes = Vec::with_capacity(s.messages.len());
        for (i, m) in s.messages.iter().enumerate() {
            let tokens = meter.message(m);
            sizes.push((tokens, i));
            let role = m.role.as_str();
            if let Some(restart) = agent.restart_at(i) {
                context = base + restart;
            }
            // The request of the call that produced this assistant message is
            // the agent's context before it.
            if m.opens_call()
                && let Some(provider) = m.meta.usage.and_then(|u| u.prompt_tokens())
            {
                st.usage.calls += 1;
                st.usage.provider_tokens += provider;
                st.usage.our_tokens += context;
                st.usage.gaps.push(provider as i64 - context as i64);
            }
            prefix += tokens;
            context += tokens;
            st.messages += 1;
            add(&mut st.messages_by_role, role, 1);
            add(&mut st.tokens_by_role, role, tokens);
            for part in m.content.parts.iter() {
                match part {
                    Part::Image { .. } => {
                        st.images += 1;
                        st.image_tokens += meter.part(part);
                    }
                    Part::Reasoning(_) => st.reasoning_tokens += meter.part(part),
                    Part::Text(_) | Part::Other(_) => {}
                }
            }
            if let Some(r) = &m.reasoning {
                st.reasoning_tokens += meter.text(&r.text);
            }
            for c in m.tool_calls.iter() {
                st.tool_calls += 1;
                add(&mut st.tool_calls_by_name, &c.name, 1);
                let t = meter.text(&c.arguments) + meter.text(&c.name) + meter.text(&c.id);
                add(&mut st.tokens_by_tool, &c.name, t);
            }
            if m.is_tool_result() {
                add(&mut st.tokens_by_tool, tool_of(m, &call_names), tokens);
            }
        }
        st.tokens = prefix;
        // The order of `top` within one session (one source): tokens, then index.
        sizes.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let source = s.source.to_string();
        let largest = sizes.iter().take(LARGEST_KEPT).map(|&(tokens, index)| {
            let m = &s.messages[index];
            let tool = if m.is_tool_result() {
                Some(tool_of(m, &call_names).to_string())
            } else {
                m.tool_calls.first().map(|c| c.name.clone())
            };
            Largest {
                source: source.clone(),
                index,
                role: m.role.as_str().to_string(),
                tool,
                tokens,
                preview: preview_of(m),
            }
        });
        st.largest = top(largest.collect());
        st.usage.finish();
        st
    }

    /// Adds `other` (a session, file or set) into `self`.
    pub fn merge(&mut self, other: &Stats) {
        crate::figures::tally::tally_fields!(self, other; sessions, messages, messages_by_role,
            tool_calls, tool_calls_by_name, tokens, tokens_by_role, tokens_by_tool,
            tool_schema_tokens, images, image_tokens, reasoning_tokens, recorded_compactions,
            subagent_sessions);
        let mut largest = std::mem::take(&mut self.largest);
        largest.extend(other.largest.iter().cloned());
        self.largest = top(largest);
        self.recorded.merge(&other.recorded);
        crate::figures::tally::tally_fields!(self.usage, other.usage; calls, provider_tokens, our_tokens);
        self.usage.gaps.extend(other.usage.gaps.iter().copied());
        self.usage.finish();
    }
}

impl UsageComparison {
    fn finish(&mut self) {
        self.diff_pct = if self.provider_tokens == 0 {
            0.0
        } else {
            let pct = (self.our_tokens as f64 - self.provider_tokens as f64) * 100.0
                / self.provider_tokens as f64;
            (pct * 100.0).round() / 100.0
        };
        let mut g = self.gaps.clone();
        g.sort_unstable();
        self.median_gap = g.get(g.len() / 2).copied().unwrap_or(0);
    }
}

/// The tool a result answers: the name of the call it answers, else the
/// name it carries, else `unknown`.
fn tool_of<'a>(m: &'a Message, call_names: &BTreeMap<&'a str, &'a str>) -> &'a str {
    m.tool_call_id
        .as_deref()
        .and_then(|id| call_names.get(id).copied())
        .or_else(|| m.result_name())
        .unwrap_or("unknown")
}

/// Adds `n` to `key`'s count in `map` (the key copied only when new).
fn add(map: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    match map.get_mut(key) {
        Some(v) => *v += n,
        None => {
            map.insert(key.to_string(), n);
        }
    }
}

/// The largest messages, biggest first, ties by source then index.
fn top(mut items: Vec<Largest>) -> Vec<Largest> {
    items.sort_by(|a, b| {
        b.tokens.cmp(&a.tokens).then(a.source.cmp(&b.source)).then(a.index.cmp(&b.index))
    });
    items.truncate(LARGEST_KEPT);
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, Role, ToolCall, Usage};
    use crate::tokens::o200k_meter as meter;

    fn session() -> Session {
        let mut call = Message::text(Role::Assistant, "checking");
        call.tool_calls_mut().push(ToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: r#"{"command":"ls"}"#.into(),
            ..Default::default()
        });
        call.meta.usage = Some(Usage {
            input_tokens: Some(100),
            cache_read_tokens: Some(900),
            ..Default::default()
        });
        let mut result = Message::text(Role::Tool, "a.rs\nb.rs\n".repeat(50));
        result.tool_call_id = Some("c1".into());
        let mut answer = Message::text(Role::Assistant, "two files");
        answer.meta.usage = Some(Usage { input_tokens: Some(2_000), ..Default::default() });
        Session {
            messages: vec![
                Message::text(Role::System, "be brief"),
                Message::text(Role::User, "list files"),
                call,
                result,
                answer,
            ],
            ..Session::default()
        }
    }

    #[test]
    fn counts_and_tokens_add_up() {
        let m = meter();
        let s = session();
        let st = Stats::of_session(&s, &m);
        assert_eq!(st.messages, 5);
        assert_eq!(st.messages_by_role["assistant"], 2);
        assert_eq!(st.tool_calls_by_name["Bash"], 1);
        assert_eq!(st.tokens, m.request(&s));
        assert_eq!(st.tokens_by_role.values().sum::<u64>() + m.request_overhead(), st.tokens);
        assert!(st.tokens_by_tool["Bash"] > m.message(&s.messages[3]) - 1);
        assert_eq!(st.largest[0].index, 3);
        assert_eq!(st.largest[0].tool.as_deref(), Some("Bash"));
    }

    #[test]
    fn provider_usage_is_compared_with_the_request_before_each_call() {
        let m = meter();
        let s = session();
        let st = Stats::of_session(&s, &m);
        assert_eq!(st.usage.calls, 2);
        assert_eq!(st.usage.provider_tokens, 1_000 + 2_000);
        let before_call: u64 =
            m.request_overhead() + s.messages[..2].iter().map(|x| m.message(x)).sum::<u64>();
        let before_answer: u64 =
            before_call + s.messages[2..4].iter().map(|x| m.message(x)).sum::<u64>();
        assert_eq!(st.usage.our_tokens, before_call + before_answer);
    }

    /// Issue 41, point 10: a message that only calls a tool showed an empty
    /// preview; it shows the call, name and arguments, cut like any preview.
    #[test]
    fn a_call_only_message_previews_its_call() {
        let mut call = Message::text(Role::Assistant, "");
        call.tool_calls_mut().push(ToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: format!(r#"{{"command": "cargo test {}"}}"#, "x".repeat(100)),
            ..Default::default()
        });
        let p = preview_of(&call);
        assert!(p.starts_with(r#"call Bash {"command": "cargo test xxx"#), "{p}");
        assert_eq!(p.chars().count(), PREVIEW_CHARS + 1, "cut, with an ellipsis: {p}");
        assert_eq!(preview_of(&Message::text(Role::User, "  a\n b ")), "a b");
        let s =
            Session { messages: vec![Message::text(Role::User, "hi"), call], ..Session::default() };
        let st = Stats::of_session(&s, &meter());
        let largest = st.largest.iter().find(|l| l.index == 1).unwrap();
        assert!(largest.preview.starts_with("call Bash "), "{largest:?}");
    }

    /// Only the largest messages are described (describing all of them was
    /// waste in `stats`: benches/RESULTS.md, 2026-12-05, session 7); which they
    /// are and in what order is what sorting every message's description gave:
    /// tokens, then position.
    #[test]
    fn the_largest_are_the_biggest_messages_ties_by_position() {
        let m = meter();
        let sizes = [3, 40, 7, 40, 1, 90, 7, 40, 12];
        let mut messages: Vec<Message> =
            sizes.iter().map(|n| Message::text(Role::User, "word ".repeat(*n))).collect();
        messages[3].role = Role::Tool;
        messages[3].tool_call_id = Some("c9".into());
        let s = Session { messages, ..Session::default() };
        let st = Stats::of_session(&s, &m);
        let mut every: Vec<(u64, usize)> =
            s.messages.iter().enumerate().map(|(i, x)| (m.message(x), i)).collect();
        every.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let got: Vec<(u64, usize)> = st.largest.iter().map(|l| (l.tokens, l.index)).collect();
        assert_eq!(got, every[..LARGEST_KEPT].to_vec());
        // 3 is a result: its call id counts too. 1 and 7 tie, in order.
        assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), [5, 3, 1, 7, 8]);
        let tool = st.largest.iter().find(|l| l.index == 3).and_then(|l| l.tool.clone());
        assert_eq!(tool.as_deref(), Some("unknown"), "a result of no known call");
        assert_eq!(st.tokens_by_tool["unknown"], m.message(&s.messages[3]));
        assert!(st.largest.iter().all(|l| l.preview.starts_with("word word")));
    }

    #[test]
    fn merge_is_order_independent_for_totals() {
        let m = meter();
        let a = Stats::of_session(&session(), &m);
        let mut ab = a.clone();
        ab.merge(&a);
        assert_eq!(ab.sessions, 2);
        assert_eq!(ab.tokens, 2 * a.tokens);
        assert_eq!(ab.usage.calls, 4);
        assert_eq!(ab.largest.len(), LARGEST_KEPT.min(2 * a.largest.len()));
    }
}
