//! `compactor report`: every session under none, legacy, lean and tiered,
//! side by side: rows, corpus figures, Markdown tables and an HTML page.
//!
//! [`measure`] runs the sessions of the inputs (or one shard of them);
//! [`merge`] puts the shard reports of one run back together. Both write the
//! report files with [`write_report`], so a merged report is the unsharded
//! run's, byte for byte.

mod measure;
mod merge;

use crate::cli::args::ReportArgs;
use crate::cmd::ExitStatus;
use compactor::io::atomic::write_atomic;
use compactor::report::aggregate::{CorpusSummary, ReportRow};
use compactor::report::policies::PolicySummary;
use compactor::report::render::{
    BILLED_CHART, RETENTION_CHART, Series, csv, html, markdown, policies_markdown, policy_charts,
};
use compactor::report::table::write_rows;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// Sessions whose per-call chart is drawn (the longest, by calls).
const CHARTED_SESSIONS: usize = 3;

/// Runs `report` (or `--merge`) with its output directory locked for the
/// whole run (`compactor::io::lock`).
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitStatus> {
    let target = compactor::io::output::Target::Dir(args.output.clone());
    let _lock = crate::cmd::output_lock::lock(&target, &args.output.display().to_string())?;
    if args.merge { merge::run(args) } else { measure::run(args) }
}

/// `shard.json`, written beside a `--shard K/N` report: what `--merge` needs
/// that the other files do not hold.
#[derive(Debug, Serialize, Deserialize)]
struct ShardFile {
    /// `K/N`.
    pub shard: String,
    /// Sessions in the whole input (every shard reads all of it).
    pub sessions_total: u64,
    /// For each session of this shard, in `sessions.jsonl` order, its position
    /// in the whole input (0-based): the order of the unsharded report.
    pub sessions: Vec<u64>,
    /// This shard's charted sessions (the longest by calls), each with its
    /// position and its per-mode series.
    pub charted: Vec<Charted>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Charted {
    pub position: u64,
    pub calls: usize,
    pub series: Vec<Series>,
}

/// Writes the report files of `rows` (their JSON `values`) and `summary` into
/// `dir`; `by_policy`: `report --policies`' rows, in the order asked for (its
/// section of report.md and report.html, and its two charts).
fn write_report(
    dir: &Path,
    rows: &[ReportRow],
    values: &[Value],
    summary: &CorpusSummary,
    series: Vec<Series>,
    parquet: bool,
    by_policy: &[(String, PolicySummary)],
) -> anyhow::Result<()> {
    let mut jsonl = String::new();
    for v in values {
        jsonl.push_str(&serde_json::to_string(v)?);
        jsonl.push('\n');
    }
    write_atomic(&dir.join("sessions.jsonl"), jsonl.as_bytes())?;
    write_atomic(&dir.join("sessions.csv"), csv(values).as_bytes())?;
    let mut summary_json = serde_json::to_string_pretty(summary)?;
    summary_json.push('\n');
    write_atomic(&dir.join("summary.json"), summary_json.as_bytes())?;
    let mut md = markdown(summary);
    if !by_policy.is_empty() {
        md.push_str(&policies_markdown(by_policy));
        let (billed, kept) = policy_charts(by_policy);
        write_atomic(&dir.join(BILLED_CHART), billed.as_bytes())?;
        write_atomic(&dir.join(RETENTION_CHART), kept.as_bytes())?;
    }
    write_atomic(&dir.join("report.md"), md.as_bytes())?;
    let savings: Vec<(String, Vec<f64>)> = ["legacy", "lean", "tiered"]
        .iter()
        .map(|m| {
            let v = rows
                .iter()
                .filter(|r| r.compaction.mode == *m && r.compaction.compacted)
                .map(|r| r.compaction.saved_pct)
                .collect();
            (m.to_string(), v)
        })
        .collect();
    write_atomic(&dir.join("report.html"), html(summary, &series, &savings, by_policy).as_bytes())?;
    if parquet {
        write_rows(&dir.join("sessions.parquet"), values)?;
    }
    Ok(())
}
