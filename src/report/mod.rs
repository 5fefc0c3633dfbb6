//! Reports: per-session rows and run totals, as data. Printers live in the binary.
//!
//! The serialized shapes are in [`wire`], separate from the internal types, so
//! that the output schema is a deliberate contract. [`stats`]: archive
//! statistics (`compactor stats`), totals of another kind.

pub mod aggregate;
pub mod fingerprint;
pub mod policies;
pub mod recorded;
pub mod render;
pub mod stats;
pub mod table;
pub mod wire;

use crate::policy::Compaction;
use std::collections::BTreeMap;

/// What was wrong with a rejected record, for counting rejects by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RejectKind {
    /// Not JSON (bad syntax, invalid UTF-8, nesting too deep).
    InvalidJson,
    /// JSON, but not a session of its format (missing or mistyped fields).
    Malformed,
    /// The input (or the rest of it) could not be read: I/O errors, truncated
    /// compressed streams, unreadable Parquet, an undetectable format.
    Unreadable,
    /// Longer than `--max-record-bytes` (`crate::io::record_limit`): streamed
    /// past, never held.
    Oversized,
}

impl RejectKind {
    pub const ALL: [RejectKind; 4] = [
        RejectKind::InvalidJson,
        RejectKind::Malformed,
        RejectKind::Unreadable,
        RejectKind::Oversized,
    ];

    /// The name used in summaries and reports.
    pub fn name(self) -> &'static str {
        match self {
            RejectKind::InvalidJson => "invalid_json",
            RejectKind::Malformed => "malformed",
            RejectKind::Unreadable => "unreadable",
            RejectKind::Oversized => "oversized",
        }
    }
}

/// Totals of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub inputs: usize,
    pub sessions: usize,
    pub compacted: usize,
    /// Compacted sessions still over the trigger threshold.
    pub over_trigger: usize,
    pub rejected: usize,
    /// Rejected records by kind ([`RejectKind::name`]).
    pub rejected_by_kind: BTreeMap<&'static str, usize>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// What making converted sessions valid requests repaired ([`crate::request`]).
    pub repairs: crate::request::Repairs,
    /// What the summarizer model did (`--summarizer*`).
    pub summarizer: crate::policy::summary_writer::SummarizerCounts,
}

impl RunSummary {
    /// Adds one session's record.
    pub fn add(&mut self, c: &Compaction) {
        self.sessions += 1;
        self.compacted += usize::from(c.compacted);
        self.over_trigger += usize::from(c.over_trigger);
        self.tokens_before += c.tokens_before;
        self.tokens_after += c.tokens_after;
        if let Some(u) = &c.summarizer {
            self.summarizer.add(u);
        }
    }

    /// Adds another run's (or input's) totals.
    pub fn merge(&mut self, other: &RunSummary) {
        crate::figures::tally::tally_fields!(self, other; inputs, sessions, compacted, over_trigger,
            rejected, rejected_by_kind, tokens_before, tokens_after);
        self.repairs.merge(&other.repairs);
        self.summarizer.merge(&other.summarizer);
    }

    /// Counts one rejected record.
    pub fn reject(&mut self, kind: RejectKind) {
        self.rejected += 1;
        *self.rejected_by_kind.entry(kind.name()).or_default() += 1;
    }

    /// Share of tokens saved, in percent (0 when there were none).
    pub fn saved_pct(&self) -> f64 {
        saved_pct(self.tokens_before, self.tokens_after)
    }

    /// The totals a resume manifest line recorded for one input, to add to a
    /// run's summary when the input is skipped.
    pub fn from_manifest(e: &crate::io::manifest::Entry) -> RunSummary {
        RunSummary {
            inputs: 0,
            sessions: e.sessions,
            compacted: e.compacted,
            over_trigger: e.over_trigger,
            rejected: e.rejected,
            // Kinds are not kept per input: a resumed run's skipped rejects
            // count in the total only.
            rejected_by_kind: Default::default(),
            tokens_before: e.tokens_before,
            tokens_after: e.tokens_after,
            repairs: Default::default(),
            // Nor is the summarizer's: a skipped input asked it nothing this run.
            summarizer: Default::default(),
        }
    }
}

/// `100 × (before − after) / before`, rounded to two decimals.
pub fn saved_pct(before: u64, after: u64) -> f64 {
    if before == 0 {
        return 0.0;
    }
    let pct = (before as f64 - after as f64) * 100.0 / before as f64;
    (pct * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_pct_rounds_and_handles_zero() {
        assert_eq!(saved_pct(0, 0), 0.0);
        assert_eq!(saved_pct(3, 2), 33.33);
        assert_eq!(saved_pct(100, 120), -20.0);
    }

    /// A skipped input adds what its manifest line recorded, counted as no
    /// input (the caller counts skipped inputs) and with no kinds of reject.
    #[test]
    fn a_manifest_line_gives_its_recorded_totals() {
        use crate::io::manifest::{Entry, Fingerprint};
        let e = Entry {
            fingerprint: Fingerprint { input: "a.jsonl".into(), size: 10, mtime_ns: 1 },
            options: "h".into(),
            output: "a.jsonl".into(),
            output_size: 9,
            sessions: 5,
            compacted: 3,
            over_trigger: 1,
            rejected: 2,
            tokens_before: 1000,
            tokens_after: 400,
        };
        let mut run = RunSummary { inputs: 1, sessions: 1, ..RunSummary::default() };
        run.merge(&RunSummary::from_manifest(&e));
        assert_eq!((run.inputs, run.sessions, run.compacted, run.over_trigger), (1, 6, 3, 1));
        assert_eq!((run.rejected, run.tokens_before, run.tokens_after), (2, 1000, 400));
        assert!(run.rejected_by_kind.is_empty());
    }
}
