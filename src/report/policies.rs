//! `report --policies`: one row per policy (issue 39) over every session:
//! calls, compactions, peak context, billed input, cache reads and writes,
//! requests still over the trigger, and anchor retention by category; its
//! own section of report.md and report.html and two charts (drawn by
//! `render::policies`).
//!
//! Kept apart from the modes' tables (`render`): the figures come from each
//! policy's replay and compaction, summed here, and `summary.json` holds them
//! under `policies`, keyed by name, only when `--policies` is given.

use crate::figures::pct;
use crate::policy::Compaction;
use crate::replay::Replay;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One policy's figures over the sessions of a report.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PolicySummary {
    pub sessions: u64,
    /// Replayed calls, and compactions (a server-side edit counts at each
    /// call it edits).
    pub calls: u64,
    pub compactions: u64,
    /// The largest request of any session, in tokens.
    pub peak: u64,
    /// Input tokens of every request, summed; of them read from and written
    /// to the cache (replay's cache model, the policy's provider rule).
    pub billed: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// Requests whose size was still at or over the policy's token trigger
    /// (policies without a token trigger: 0), by one yardstick for every
    /// policy: our count of the request as sent (`Call::tokens_live`), not
    /// the policy's own trigger measure (Codex's `last_total` decides when
    /// codex compacts, not what this counts).
    pub over_trigger: u64,
    /// Per anchor category: (in the inputs, still verbatim in the outputs)
    /// of one compaction of each session (`compact` under the policy).
    pub retention: BTreeMap<String, (u64, u64)>,
    /// Dollars of every call of the priced sessions (`report --prices`), each
    /// at its log's model; `None` without `--prices`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Sessions `--prices` had no price for (their cost is left out).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced: u64,
}

/// Dollars kept to the millionth: sums in `summary.json` without float
/// noise (`1.371865`, not `1.3718650000000001`).
fn micro(dollars: f64) -> f64 {
    (dollars * 1e6).round() / 1e6
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PolicySummary {
    /// Adds one session: its replay under the policy, whose token trigger is
    /// `threshold` when it has one, and its compaction.
    pub fn add(&mut self, r: &Replay, threshold: Option<u64>, c: &Compaction) {
        self.sessions += 1;
        self.calls += r.calls.len() as u64;
        self.compactions += r.compactions.len() as u64;
        self.peak = self.peak.max(r.totals.peak_live);
        self.billed += r.totals.billed_live;
        self.cache_read += r.totals.cache_read_live;
        self.cache_write += r.cache_write_live;
        if let Some(t) = threshold {
            self.over_trigger += r.calls.iter().filter(|k| k.tokens_live >= t).count() as u64;
        }
        for (cat, (found, kept)) in &c.anchors.retention {
            let e = self.retention.entry(cat.name().to_string()).or_default();
            e.0 += *found as u64;
            e.1 += *kept as u64;
        }
    }

    /// Adds one session's cost under `--prices` (`None`: the session had no
    /// price, and is counted as unpriced).
    pub fn add_cost(&mut self, cost: Option<f64>) {
        match cost {
            Some(c) => self.cost_usd = Some(micro(self.cost_usd.unwrap_or(0.0) + c)),
            None => self.unpriced += 1,
        }
    }

    /// Adds another part's figures (another session, another shard).
    pub fn absorb(&mut self, o: &PolicySummary) {
        self.sessions += o.sessions;
        self.calls += o.calls;
        self.compactions += o.compactions;
        self.peak = self.peak.max(o.peak);
        self.billed += o.billed;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.over_trigger += o.over_trigger;
        if let Some(c) = o.cost_usd {
            self.cost_usd = Some(micro(self.cost_usd.unwrap_or(0.0) + c));
        }
        self.unpriced += o.unpriced;
        for (cat, (f, k)) in &o.retention {
            let e = self.retention.entry(cat.clone()).or_default();
            e.0 += f;
            e.1 += k;
        }
    }

    /// Anchors retained over all categories, in percent (`None`: none found).
    pub fn retention_pct(&self) -> Option<f64> {
        let (found, kept) = self.retention.values().fold((0, 0), |(f, k), (a, b)| (f + a, k + b));
        pct(kept, found)
    }
}
