//! The serialized shapes: the `compaction` object written into each compacted
//! session (SPEC 6) and the per-session report row (`--report`).
//!
//! Maps are `BTreeMap`s and fields are declared in a fixed order, so the same
//! run always serializes to the same bytes.

use crate::model::Source;
use crate::policy::summary_writer::{SummarizerCounts, SummarizerUse};
use crate::policy::{Compaction, Effects, Mode, Reason, Sections, Tier, anchors::Category};
use crate::tokens::CounterKind;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// The `&'static str` a report writes for `name` (a mode, tier, reason,
/// format, counter or anchor category), so that rows can be read back
/// (`report --merge`); `None` for a name no release of ours writes.
fn static_name(name: &str) -> Option<&'static str> {
    let modes = [Mode::Lean, Mode::Legacy, Mode::Tiered, Mode::None].map(Mode::name);
    let tiers = [
        Tier::None,
        Tier::Dedup,
        Tier::MicroCompact,
        Tier::Truncate,
        Tier::StripMedia,
        Tier::Summary,
    ]
    .map(Tier::name);
    let reasons = [
        Reason::ModeNone,
        Reason::UnderTrigger,
        Reason::Compacted,
        Reason::TooShort,
        Reason::NothingNew,
        Reason::NoGain,
    ]
    .map(Reason::name);
    let counters =
        [CounterKind::O200k, CounterKind::Cl100k, CounterKind::Hermes].map(CounterKind::name);
    let categories = Category::ALL.map(Category::name);
    let formats = crate::formats::Format::ALL.iter().map(|f| f.name());
    let policies = crate::policy::spec::builtin::BUILT_IN.iter().filter_map(|s| match s.name {
        std::borrow::Cow::Borrowed(n) => Some(n),
        std::borrow::Cow::Owned(_) => None,
    });
    modes
        .into_iter()
        .chain(policies)
        .chain(tiers)
        .chain(reasons)
        .chain(counters)
        .chain(categories)
        .chain(formats)
        .find(|n| *n == name)
}

fn known<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    static_name(&s).ok_or_else(|| D::Error::custom(format!("unknown name `{s}`")))
}

fn known_keys<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<&'static str, AnchorCount>, D::Error> {
    BTreeMap::<String, AnchorCount>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| {
            static_name(&k)
                .map(|k| (k, v))
                .ok_or_else(|| D::Error::custom(format!("unknown anchor category `{k}`")))
        })
        .collect()
}

/// The `compaction` object of a compacted session.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CompactionObject {
    pub source: String,
    pub mode: &'static str,
    pub tier: &'static str,
    pub compacted: bool,
    pub counter: &'static str,
    pub head_messages: usize,
    pub summary_messages: usize,
    pub tail_messages: usize,
    pub messages_before: usize,
    pub messages_after: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// `[start, end)` of the original messages the summary replaced.
    pub summarized_range: Option<[usize; 2]>,
    /// Compacted, and still over the trigger threshold (SPEC 5).
    pub over_trigger: bool,
}

impl CompactionObject {
    pub fn new(source: &Source, c: &Compaction, counter: &'static str) -> CompactionObject {
        CompactionObject {
            source: source.to_string(),
            mode: c.policy_name(),
            tier: c.tier.name(),
            compacted: c.compacted,
            counter,
            head_messages: c.sections.head_messages,
            summary_messages: c.sections.summary_messages,
            tail_messages: c.sections.tail_messages,
            messages_before: c.messages_before,
            messages_after: c.messages_after,
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            summarized_range: c.summarized_range.map(|(a, b)| [a, b]),
            over_trigger: c.over_trigger,
        }
    }
}

/// The object as a JSON value, built field by field so that it cannot fail
/// (`serde_json::to_value` returns a `Result`, and a default on it would drop
/// the object): the same value, key order included, as its `Serialize`.
impl From<&CompactionObject> for serde_json::Value {
    fn from(c: &CompactionObject) -> serde_json::Value {
        use serde_json::Value;
        let range = match c.summarized_range {
            Some([a, b]) => Value::Array(vec![Value::from(a), Value::from(b)]),
            None => Value::Null,
        };
        let fields: [(&str, Value); 14] = [
            ("source", Value::from(c.source.as_str())),
            ("mode", Value::from(c.mode)),
            ("tier", Value::from(c.tier)),
            ("compacted", Value::from(c.compacted)),
            ("counter", Value::from(c.counter)),
            ("head_messages", Value::from(c.head_messages)),
            ("summary_messages", Value::from(c.summary_messages)),
            ("tail_messages", Value::from(c.tail_messages)),
            ("messages_before", Value::from(c.messages_before)),
            ("messages_after", Value::from(c.messages_after)),
            ("tokens_before", Value::from(c.tokens_before)),
            ("tokens_after", Value::from(c.tokens_after)),
            ("summarized_range", range),
            ("over_trigger", Value::from(c.over_trigger)),
        ];
        Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }
}

/// Found / retained anchors of one category.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct AnchorCount {
    pub found: usize,
    pub retained: usize,
}

/// One `--report` line.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SessionRow {
    pub source: String,
    pub id: String,
    #[serde(deserialize_with = "known")]
    pub format: &'static str,
    #[serde(deserialize_with = "known")]
    pub mode: &'static str,
    #[serde(deserialize_with = "known")]
    pub tier: &'static str,
    #[serde(deserialize_with = "known")]
    pub reason: &'static str,
    pub compacted: bool,
    /// Compacted, and still over the trigger threshold (SPEC 5).
    #[serde(default)]
    pub over_trigger: bool,
    #[serde(deserialize_with = "known")]
    pub counter: &'static str,
    pub messages_before: usize,
    pub messages_after: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub saved_pct: f64,
    /// `head_messages` ... `middle_tokens`, in place.
    #[serde(flatten)]
    pub sections: Sections,
    pub summarized_range: Option<[usize; 2]>,
    pub summary_merged: bool,
    /// `duplicates_marked` ... `calls_dropped`, in place.
    #[serde(flatten)]
    pub effects: Effects,
    pub anchors_found: usize,
    pub anchors_retained: usize,
    #[serde(deserialize_with = "known_keys")]
    pub anchors: BTreeMap<&'static str, AnchorCount>,
    pub anchors_indexed: usize,
    pub anchors_dropped_for_budget: BTreeMap<String, usize>,
    pub user_messages_summarized: usize,
    pub user_messages_kept_whole: usize,
    /// Secrets the summary did not quote (masked, or dropped from its anchors).
    pub secrets_kept_out_of_summary: u64,
    /// With `--redact`: secrets masked in the written output, by kind.
    pub secrets_redacted: BTreeMap<String, u64>,
    /// Converted sessions: what making them valid requests repaired, by kind
    /// (`--to openai|anthropic|sharegpt|parquet`; see `compactor::request`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub repairs: BTreeMap<String, u64>,
    /// `--summarizer*`, on a session whose summary was asked of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<SummarizerObject>,
    /// A compacted session: the id of its continuation ([`crate::model::continuation_id`]),
    /// which a converted output carries as its `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuation_id: Option<String>,
    /// A subagent's log: the session that started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    /// A subagent's log: the parent's call that started it, where its log says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
}

/// A report line's `summarizer`: whether the model's body was used (from the
/// cache or not), or why it fell back, and the summarizer's own tokens.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SummarizerObject {
    pub used: bool,
    pub cached: bool,
    pub fallback: bool,
    /// The fallback's reason (`timeout`, `http_500`, `over_budget`, ...).
    pub reason: Option<String>,
    /// Requests the model answered (cache hits excluded).
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl SummarizerObject {
    pub fn new(u: &SummarizerUse) -> SummarizerObject {
        SummarizerObject {
            used: u.used,
            cached: u.cached,
            fallback: u.fallback.is_some(),
            reason: u.fallback.map(|f| f.name()),
            calls: u.spent.calls,
            prompt_tokens: u.spent.prompt_tokens,
            completion_tokens: u.spent.completion_tokens,
        }
    }

    /// The same use, for totals.
    pub fn to_use(&self) -> SummarizerCounts {
        let mut c = SummarizerCounts {
            used: u64::from(self.used),
            cached: u64::from(self.used && self.cached),
            fallback: u64::from(self.fallback),
            calls: self.calls,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            ..SummarizerCounts::default()
        };
        if let Some(r) = &self.reason {
            c.reasons.insert(r.clone(), 1);
        }
        c
    }
}

impl SessionRow {
    pub fn new(
        source: &Source,
        id: &str,
        format: &'static str,
        c: &Compaction,
        counter: &'static str,
    ) -> SessionRow {
        let anchors: BTreeMap<&'static str, AnchorCount> = Category::ALL
            .iter()
            .map(|cat| {
                let (found, retained) = c.anchors.retention.get(cat).copied().unwrap_or((0, 0));
                (cat.name(), AnchorCount { found, retained })
            })
            .collect();
        SessionRow {
            source: source.to_string(),
            id: id.to_string(),
            format,
            mode: c.policy_name(),
            tier: c.tier.name(),
            reason: c.reason.name(),
            compacted: c.compacted,
            over_trigger: c.over_trigger,
            counter,
            messages_before: c.messages_before,
            messages_after: c.messages_after,
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            saved_pct: super::saved_pct(c.tokens_before, c.tokens_after),
            sections: c.sections,
            summarized_range: c.summarized_range.map(|(a, b)| [a, b]),
            summary_merged: c.summary_merged,
            effects: c.effects,
            anchors_found: anchors.values().map(|a| a.found).sum(),
            anchors_retained: anchors.values().map(|a| a.retained).sum(),
            anchors,
            anchors_indexed: c.anchors.indexed,
            anchors_dropped_for_budget: c.anchors.dropped_for_budget.clone(),
            user_messages_summarized: c.user_messages_summarized,
            user_messages_kept_whole: c.user_messages_kept_whole,
            secrets_kept_out_of_summary: c.secrets_masked,
            secrets_redacted: BTreeMap::new(),
            repairs: BTreeMap::new(),
            summarizer: c.summarizer.as_ref().map(SummarizerObject::new),
            continuation_id: None,
            parent_session_id: None,
            parent_call_id: None,
        }
    }
}

/// One `replay --report` line: a session replayed call by call.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReplayRow {
    pub source: String,
    pub id: String,
    pub format: &'static str,
    pub mode: &'static str,
    pub trigger: &'static str,
    pub counter: &'static str,
    pub window: u64,
    /// `--model auto`: the model the log names and where the window came
    /// from (`model`, `window_from`); absent under `--window` / `--model NAME`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<crate::catalog::window::Chosen>,
    pub threshold: u64,
    pub calls: usize,
    /// Calls whose provider usage the log recorded.
    pub provider_calls: usize,
    pub compactions: usize,
    pub compaction_points: Vec<crate::replay::CompactionPoint>,
    pub thrash_stopped: bool,
    pub peak_original: u64,
    pub peak_live: u64,
    pub billed_original: u64,
    pub billed_live: u64,
    pub billed_saved_pct: f64,
    pub cache_read_original: u64,
    pub cache_read_live: u64,
    pub cache_write_original: u64,
    pub cache_write_live: u64,
    pub output_tokens: u64,
    /// Dollars without / with compaction (`--prices`).
    pub cost_original: Option<f64>,
    pub cost_live: Option<f64>,
    /// `--summarizer*`: what the summarizer did over the replay's compactions,
    /// its own tokens included ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<SummarizerCounts>,
    /// ... and their dollars at the same prices (`--prices`; not in `cost_live`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer_cost: Option<f64>,
    /// The calls as the provider billed them (the usage the log records; the
    /// agent's own compactions where it made them), when it records any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<crate::replay::Recorded>,
    /// Their dollars (`--prices`), 1-hour cache writes at their own price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_recorded: Option<f64>,
}

/// How a replay was run, as its rows name it: the input's format, the mode,
/// the trigger (`threshold` or `gateway`) and the token counter.
#[derive(Clone, Copy, Debug)]
pub struct ReplayLabels {
    pub format: &'static str,
    pub mode: &'static str,
    pub trigger: &'static str,
    pub counter: &'static str,
}

impl ReplayRow {
    pub fn new(
        source: &Source,
        id: &str,
        labels: ReplayLabels,
        window: u64,
        r: &crate::replay::Replay,
        prices: Option<&crate::catalog::prices::Prices>,
    ) -> ReplayRow {
        let ReplayLabels { format, mode, trigger, counter } = labels;
        let cost = prices.map(|p| r.cost(p));
        let round = |x: f64| (x * 1e6).round() / 1e6;
        let t = &r.totals;
        ReplayRow {
            source: source.to_string(),
            id: id.to_string(),
            format,
            mode,
            trigger,
            counter,
            window,
            chosen: None,
            threshold: r.threshold,
            calls: r.calls.len(),
            provider_calls: r.calls.iter().filter(|c| c.provider_tokens.is_some()).count(),
            compactions: r.compactions.len(),
            compaction_points: r.compactions.clone(),
            thrash_stopped: r.thrash_stopped,
            peak_original: t.peak_original,
            peak_live: t.peak_live,
            billed_original: t.billed_original,
            billed_live: t.billed_live,
            billed_saved_pct: super::saved_pct(t.billed_original, t.billed_live),
            cache_read_original: t.cache_read_original,
            cache_read_live: t.cache_read_live,
            cache_write_original: r.cache_write_original,
            cache_write_live: r.cache_write_live,
            output_tokens: r.output_tokens,
            cost_original: cost.map(|c| round(c.0)),
            cost_live: cost.map(|c| round(c.1)),
            summarizer: r.summarizer.clone(),
            summarizer_cost: r.summarizer.as_ref().and(prices).map(|p| round(r.summarizer_cost(p))),
            recorded: r.recorded.clone(),
            cost_recorded: r.recorded.as_ref().zip(prices).map(|(rec, p)| round(rec.cost(p))),
        }
    }
}

/// One `replay --calls` line: one API call of a replayed session.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CallRow<'a> {
    pub source: String,
    pub mode: &'static str,
    pub call: usize,
    #[serde(flatten)]
    pub figures: &'a crate::replay::Call,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compaction_object_value_is_its_serialization() {
        for range in [Some([2, 40]), None] {
            let c = CompactionObject {
                source: "a.jsonl:3".into(),
                mode: "lean",
                tier: "summary",
                compacted: true,
                counter: "o200k",
                head_messages: 2,
                summary_messages: 1,
                tail_messages: 9,
                messages_before: 50,
                messages_after: 12,
                tokens_before: 150_000,
                tokens_after: 20_000,
                summarized_range: range,
                over_trigger: false,
            };
            let want = serde_json::to_string(&c).unwrap();
            assert_eq!(crate::json_text::text(&serde_json::Value::from(&c)), want);
        }
    }
}
