//! What [`super::normalize()`] changed to make a session a valid request, by kind.

use std::collections::BTreeMap;

/// A kind of repair. Each is counted per session (report `repairs`) and
/// summed on the run's summary line; none is silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Repair {
    /// Assistant messages of one step (text, reasoning, calls logged as
    /// separate items) joined into one message.
    StepsJoined,
    /// Tool results put back in the order of their calls, or text logged
    /// after a call moved before the step's results.
    Reordered,
    /// A tool result whose call is not in the open step (never made, or its
    /// step already closed): dropped, as sanitizing drops it.
    OrphanResultsDropped,
    /// A second result for the same call: dropped.
    DuplicateResultsDropped,
    /// A call no result answers (not the in-flight last one): dropped.
    UnansweredCallsDropped,
    /// Reasoning that is not text (encrypted, redacted, signature only): dropped.
    OpaqueReasoningDropped,
    /// A content part retyped to `text` (`input_text`, `output_text`, `tool_output`, ...).
    PartsRetyped,
    /// A part with no request form (`tool_reference` and the like) written as text.
    PartsToText,
    /// A part with no request form and no text: dropped.
    PartsDropped,
    /// A tool call duplicated as a content part (`tool_call` parts beside `tool_calls`): dropped.
    CallPartsDropped,
    /// A tool call read from a content part because the message had no `tool_calls`.
    CallsFromParts,
    /// An image where the API takes none (assistant, tool, system): written as text.
    ImagesToText,
    /// A call without an id given one; a reused id made unique.
    CallIdsAssigned,
    /// A tool name outside `[A-Za-z0-9_-]{1,64}`: other characters became `_`.
    NamesSanitized,
    /// Arguments that are not a JSON object (Codex free-form input) wrapped as `{"input": ...}`.
    ArgumentsWrapped,
    /// A role the API does not have written as `user`.
    RolesMapped,
    /// A user or assistant message with nothing in it: given the text `(empty)`
    /// (or `(tool call removed)` when its calls were dropped).
    EmptyFilled,
    /// A tool schema in no request form: dropped.
    ToolSchemasDropped,
    /// Consecutive messages of one role merged (Anthropic alternation).
    TurnsMerged,
    /// System or developer text after the start, moved into the top-level
    /// `system` (Anthropic) or written as a user message.
    SystemMoved,
    /// Readable reasoning with no signature, which the Messages API takes
    /// only signed: left out of an Anthropic request.
    ReasoningUnsigned,
}

impl Repair {
    pub const ALL: [Repair; 21] = [
        Repair::StepsJoined,
        Repair::Reordered,
        Repair::OrphanResultsDropped,
        Repair::DuplicateResultsDropped,
        Repair::UnansweredCallsDropped,
        Repair::OpaqueReasoningDropped,
        Repair::PartsRetyped,
        Repair::PartsToText,
        Repair::PartsDropped,
        Repair::CallPartsDropped,
        Repair::CallsFromParts,
        Repair::ImagesToText,
        Repair::CallIdsAssigned,
        Repair::NamesSanitized,
        Repair::ArgumentsWrapped,
        Repair::RolesMapped,
        Repair::EmptyFilled,
        Repair::ToolSchemasDropped,
        Repair::TurnsMerged,
        Repair::SystemMoved,
        Repair::ReasoningUnsigned,
    ];

    /// The name in reports and on the summary line.
    pub fn name(self) -> &'static str {
        match self {
            Repair::StepsJoined => "steps_joined",
            Repair::Reordered => "reordered",
            Repair::OrphanResultsDropped => "orphan_results_dropped",
            Repair::DuplicateResultsDropped => "duplicate_results_dropped",
            Repair::UnansweredCallsDropped => "unanswered_calls_dropped",
            Repair::OpaqueReasoningDropped => "opaque_reasoning_dropped",
            Repair::PartsRetyped => "parts_retyped",
            Repair::PartsToText => "parts_to_text",
            Repair::PartsDropped => "parts_dropped",
            Repair::CallPartsDropped => "call_parts_dropped",
            Repair::CallsFromParts => "calls_from_parts",
            Repair::ImagesToText => "images_to_text",
            Repair::CallIdsAssigned => "call_ids_assigned",
            Repair::NamesSanitized => "names_sanitized",
            Repair::ArgumentsWrapped => "arguments_wrapped",
            Repair::RolesMapped => "roles_mapped",
            Repair::EmptyFilled => "empty_filled",
            Repair::ToolSchemasDropped => "tool_schemas_dropped",
            Repair::TurnsMerged => "turns_merged",
            Repair::SystemMoved => "system_moved",
            Repair::ReasoningUnsigned => "reasoning_unsigned",
        }
    }
}

/// Repairs of one session (or a run), by kind; kinds never seen are absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repairs(BTreeMap<Repair, u64>);

impl Repairs {
    pub fn add(&mut self, r: Repair, n: u64) {
        if n > 0 {
            *self.0.entry(r).or_default() += n;
        }
    }

    pub fn count(&self, r: Repair) -> u64 {
        self.0.get(&r).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn merge(&mut self, other: &Repairs) {
        for (r, n) in &other.0 {
            self.add(*r, *n);
        }
    }

    /// By name, for reports.
    pub fn by_name(&self) -> BTreeMap<String, u64> {
        self.0.iter().map(|(r, n)| (r.name().to_string(), *n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_zero_counts_are_absent() {
        let names: std::collections::BTreeSet<&str> =
            Repair::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(names.len(), Repair::ALL.len());
        let mut r = Repairs::default();
        r.add(Repair::Reordered, 0);
        assert!(r.is_empty());
        r.add(Repair::Reordered, 2);
        r.add(Repair::Reordered, 1);
        assert_eq!(r.count(Repair::Reordered), 3);
        assert_eq!(r.by_name().get("reordered"), Some(&3));
    }
}
