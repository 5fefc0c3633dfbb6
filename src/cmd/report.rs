//! `compactor report`: every session under none, legacy, lean and tiered,
//! side by side: rows, corpus figures, Markdown tables and an HTML page.

use crate::cli::args::ReportArgs;
use crate::cli::config;
use crate::cmd::ExitStatus;
use crate::messages::err_message;
use compactor::Mode;
use compactor::io::output::write_atomic;
use compactor::io::{ReadOptions, expand_inputs};
use compactor::pipeline::{Item, JobReader, Rejection, decode_job_with};
use compactor::policy::{Policy, Prepared, compact_prepared, verify::verify};
use compactor::replay::{Trigger, replay_prepared};
use compactor::report::aggregate::{RejectCounts, ReportRow, summarize};
use compactor::report::render::{Series, csv, html, markdown};
use compactor::report::table::write_rows;
use compactor::report::wire::{ReplayRow, SessionRow};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// Sessions whose per-call chart is drawn (the longest, by calls).
const CHARTED_SESSIONS: usize = 3;

const MODES: [Mode; 4] = [Mode::None, Mode::Legacy, Mode::Lean, Mode::Tiered];

/// `shard.json`, written beside a `--shard K/N` report: what `--merge` needs
/// that the other files do not hold.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ShardFile {
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
pub(crate) struct Charted {
    pub position: u64,
    pub calls: usize,
    pub series: Vec<Series>,
}

pub fn run(args: &ReportArgs) -> anyhow::Result<ExitStatus> {
    if args.merge {
        return crate::cmd::report_merge::run(args);
    }
    let inputs = expand_inputs(&args.inputs)?;
    let meter = config::meter(&args.budget);
    let pool = config::thread_pool(args.threads)?;
    let policies: Vec<Policy> = MODES
        .iter()
        .map(|m| config::policy(*m, &args.budget, args.force, args.target_tokens))
        .collect::<anyhow::Result<_>>()?;
    let options = ReadOptions {
        messages_column: args.messages_column.clone(),
        source_column: args.source_column.clone(),
    };
    let mut reader =
        JobReader::new(&inputs, config::input_format(&args.from)?).with_options(options);
    let mut rows: Vec<ReportRow> = Vec::new();
    let mut charted: Vec<Charted> = Vec::new();
    // Position of the next session in the whole input, and of each one kept.
    let mut position = 0u64;
    let mut positions: Vec<u64> = Vec::new();
    let shard = args.shard;
    let mut rejected = RejectCounts::default();
    let counter = meter.kind().name();
    crate::cmd::run_items(
        &pool,
        &mut reader,
        |item| match item {
            Item::Job(job) => {
                let format = job.format;
                // Report never writes sessions: unread fields need no tree.
                let (sessions, errors) = decode_job_with(job, true);
                // Figures are of the requests the agent sent: the session as
                // a clean request (`compactor::request`; images where either
                // API takes them, tool screenshots included), repairs counted.
                let api = compactor::request::Api::Messages;
                let sessions: Vec<(compactor::model::Session, compactor::request::Repairs)> =
                    sessions.iter().map(|s| compactor::request::normalize(s, false, api)).collect();
                let mut out = Vec::new();
                for (s, repairs) in &sessions {
                    if shard.is_some_and(|k| !k.contains(&s.id)) {
                        out.push(None);
                        continue;
                    }
                    let mut session_rows = Vec::new();
                    let mut series = Vec::new();
                    // The input's anchors and counts are read once for every mode.
                    let prepared = Prepared::new(s);
                    for p in &policies {
                        let outcome = compact_prepared(&prepared, p, &meter);
                        let problems = verify(s, &outcome, &meter).len();
                        let r = replay_prepared(&prepared, p, &meter, Trigger::Threshold);
                        let mut row = SessionRow::new(
                            &s.source,
                            &s.id,
                            format.name(),
                            &outcome.compaction,
                            counter,
                        );
                        row.repairs = repairs.by_name();
                        let rr = ReplayRow::new(
                            &s.source,
                            &s.id,
                            format.name(),
                            p.mode.name(),
                            "threshold",
                            counter,
                            p.window,
                            &r,
                            None,
                        );
                        session_rows.push(ReportRow::new(row, problems, &rr));
                        series.push(Series {
                            source: s.source.to_string(),
                            mode: p.mode.name().to_string(),
                            threshold: p.threshold,
                            tokens: r.calls.iter().map(|c| c.tokens_live).collect(),
                        });
                    }
                    out.push(Some((session_rows, series)));
                }
                (out, errors)
            }
            Item::Failed { error, .. } => (Vec::new(), vec![Rejection::from(error)]),
            Item::Start { .. } | Item::End { .. } => (Vec::new(), Vec::new()),
        },
        |(sessions, errors)| {
            for e in errors {
                // A record that is not a session has no id: its source picks the shard.
                if shard.is_none_or(|k| k.contains(&e.source.to_string())) {
                    err_message!("{e}");
                    rejected.count(e.kind.name());
                }
            }
            for session in sessions {
                let here = position;
                position += 1;
                let Some((session_rows, series)) = session else { continue };
                positions.push(here);
                let calls = series.first().map_or(0, |s| s.tokens.len());
                rows.extend(session_rows);
                // Keep the longest sessions' series; ties go to the earlier input.
                charted.push(Charted { position: here, calls, series });
                charted.sort_by_key(|c| std::cmp::Reverse(c.calls));
                charted.truncate(CHARTED_SESSIONS);
            }
            Ok(())
        },
    )?;
    if crate::cmd::interrupted() {
        eprintln!("compactor: interrupted; no report was written");
        return Ok(ExitStatus::Interrupted);
    }
    let threshold = policies.first().map_or(0, |p| p.threshold);
    let window = policies.first().map_or(0, |p| p.window);
    let mut summary = summarize(&rows, counter, window, threshold);
    let any_rejected = rejected.total > 0;
    summary.rejected = rejected;
    let values: Vec<Value> = rows.iter().map(serde_json::to_value).collect::<Result<_, _>>()?;
    let dir = &args.output;
    std::fs::create_dir_all(dir)?;
    if let Some(k) = shard {
        let file = ShardFile {
            shard: k.to_string(),
            sessions_total: position,
            sessions: positions,
            charted: std::mem::take(&mut charted),
        };
        let mut text = serde_json::to_string_pretty(&file)?;
        text.push('\n');
        write_atomic(&dir.join("shard.json"), text.as_bytes())?;
        charted = file.charted;
    }
    let series: Vec<Series> = charted.into_iter().flat_map(|c| c.series).collect();
    write_report(dir, &rows, &values, &summary, series, args.parquet)?;
    if !args.quiet {
        eprintln!(
            "compactor: {} sessions × {} modes -> {}",
            summary.sessions,
            MODES.len(),
            dir.display()
        );
    }
    Ok(if any_rejected { ExitStatus::Rejected } else { ExitStatus::Success })
}

/// Writes the report files of `rows` (their JSON `values`) and `summary` into `dir`.
pub(crate) fn write_report(
    dir: &Path,
    rows: &[ReportRow],
    values: &[Value],
    summary: &compactor::report::aggregate::CorpusSummary,
    series: Vec<Series>,
    parquet: bool,
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
    write_atomic(&dir.join("report.md"), markdown(summary).as_bytes())?;
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
    write_atomic(&dir.join("report.html"), html(summary, &series, &savings).as_bytes())?;
    if parquet {
        write_rows(&dir.join("sessions.parquet"), values)?;
    }
    Ok(())
}
