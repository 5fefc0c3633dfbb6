//! `compactor report --merge DIR...`: the report of a sharded run.
//!
//! Each shard directory (`compactor report --shard K/N`) holds the rows of its
//! sessions and a `shard.json` saying where each of them stands in the whole
//! input. The merge checks that the directories are the N shards of one run
//! (each K once, the same N, window, threshold, counter, options, input files
//! and input size), puts the rows back in input order, and writes every report
//! file from them with the same code as an unsharded run: the result is that
//! run's report, byte for byte (rows are parsed and written again as they
//! were: keys keep their order and floats round-trip exactly).

use super::{CHARTED_SESSIONS, ShardFile, write_report};
use crate::cli::args::ReportArgs;
use crate::cmd::ExitStatus;
use crate::cmd::messages::counted;
use anyhow::{Context, bail};
use compactor::report::aggregate::{CorpusSummary, ReportRow, summarize};
use compactor::report::render::Series;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Rows per session in `sessions.jsonl` (one per report mode).
const MODES: usize = compactor::report::aggregate::REPORT_MODES.len();

struct Shard {
    dir: PathBuf,
    file: ShardFile,
    summary: CorpusSummary,
    lines: Vec<String>,
}

fn read_shard(dir: &Path) -> anyhow::Result<Shard> {
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .with_context(|| format!("{}: cannot read", dir.join(name).display()))
    };
    if !dir.join("shard.json").exists() {
        bail!(
            "{}: not a shard report (no shard.json)\nhint: write shard reports with `compactor report --shard K/N`",
            dir.display()
        );
    }
    let file: ShardFile = serde_json::from_str(&read("shard.json")?)
        .with_context(|| format!("{}: invalid shard.json", dir.display()))?;
    let summary: CorpusSummary = serde_json::from_str(&read("summary.json")?)
        .with_context(|| format!("{}: invalid summary.json", dir.display()))?;
    let lines: Vec<String> = read("sessions.jsonl")?.lines().map(str::to_string).collect();
    if lines.len() != file.sessions.len() * MODES {
        bail!(
            "{}: sessions.jsonl has {} rows, shard.json lists {} sessions ({MODES} rows each)",
            dir.display(),
            lines.len(),
            file.sessions.len()
        );
    }
    Ok(Shard { dir: dir.to_path_buf(), file, summary, lines })
}

pub(super) fn run(args: &ReportArgs) -> anyhow::Result<ExitStatus> {
    let out = &args.output;
    let shards: Vec<Shard> = args
        .input
        .inputs
        .iter()
        .map(|d| read_shard(Path::new(d)))
        .collect::<anyhow::Result<_>>()?;
    for s in &shards {
        if std::fs::canonicalize(&s.dir).ok() == std::fs::canonicalize(out).ok() {
            bail!(
                "{}: the merged report would overwrite a shard; choose another -o",
                out.display()
            );
        }
    }
    let Some(first) = shards.first() else { bail!("--merge needs the shard directories") };
    let parse = |s: &Shard| -> anyhow::Result<(u64, u64)> {
        let shard: compactor::pipeline::shard::Shard = s
            .file
            .shard
            .parse()
            .map_err(|e: String| anyhow::anyhow!("{}: shard.json: {e}", s.dir.display()))?;
        Ok((shard.index, shard.count))
    };
    let (_, count) = parse(first)?;
    let mut seen = vec![None::<&Path>; usize::try_from(count).unwrap_or(0)];
    for s in &shards {
        let (k, n) = parse(s)?;
        if n != count {
            bail!(
                "{}: shard {}, but {} is of {count} shards",
                s.dir.display(),
                s.file.shard,
                first.dir.display()
            );
        }
        let same = |a: &CorpusSummary, b: &CorpusSummary| {
            a.counter == b.counter
                && a.window == b.window
                && a.threshold == b.threshold
                && a.options == b.options
                && a.inputs == b.inputs
        };
        if !same(&s.summary, &first.summary) || s.file.sessions_total != first.file.sessions_total {
            bail!(
                "{} and {} are not shards of the same run (counter, window, threshold, options, input files or input size differ)",
                first.dir.display(),
                s.dir.display()
            );
        }
        let slot = usize::try_from(k).ok().and_then(|k| seen.get_mut(k)).context("shard index")?;
        if let Some(other) = slot {
            bail!(
                "shard {} given twice: {} and {}",
                s.file.shard,
                other.display(),
                s.dir.display()
            );
        }
        *slot = Some(&s.dir);
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_none())
        .map(|(k, _)| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        bail!("shards missing: {} (a merged report needs all {count})", missing.join(", "));
    }

    // Sessions back in input order; each position once.
    let mut sessions: Vec<(u64, &[String])> = Vec::new();
    for s in &shards {
        for (i, pos) in s.file.sessions.iter().enumerate() {
            sessions.push((*pos, &s.lines[i * MODES..(i + 1) * MODES]));
        }
    }
    sessions.sort_by_key(|(pos, _)| *pos);
    if sessions.windows(2).any(|w| w[0].0 == w[1].0) {
        bail!("a session appears in two shards: were the shards run over different inputs?");
    }
    if sessions.len() as u64 != first.file.sessions_total {
        bail!(
            "the shards hold {} sessions, the input had {}: were they run over different inputs?",
            sessions.len(),
            first.file.sessions_total
        );
    }
    let mut values = Vec::new();
    let mut rows = Vec::new();
    for line in sessions.iter().flat_map(|(_, lines)| lines.iter()) {
        let v: Value = serde_json::from_str(line).context("sessions.jsonl: invalid row")?;
        rows.push(ReportRow::from_json(&v).context("sessions.jsonl: not a report row")?);
        values.push(v);
    }
    let mut summary =
        summarize(&rows, &first.summary.counter, first.summary.window, first.summary.threshold);
    summary.options = first.summary.options.clone();
    summary.inputs = first.summary.inputs.clone();
    // Each bad record was reported by exactly one shard (keyed by its source).
    for s in &shards {
        summary.rejected.total += s.summary.rejected.total;
        for (kind, n) in &s.summary.rejected.by_kind {
            *summary.rejected.by_kind.entry(kind.clone()).or_default() += n;
        }
    }
    let mut charted: Vec<(usize, u64, &[Series])> = shards
        .iter()
        .flat_map(|s| s.file.charted.iter().map(|c| (c.calls, c.position, c.series.as_slice())))
        .collect();
    // The unsharded rule: the longest by calls, ties to the earlier input.
    charted.sort_by_key(|c| (std::cmp::Reverse(c.0), c.1));
    charted.truncate(CHARTED_SESSIONS);
    let series: Vec<Series> = charted.iter().flat_map(|c| c.2.iter().cloned()).collect();
    std::fs::create_dir_all(out)
        .with_context(|| format!("{}: cannot create directory", out.display()))?;
    write_report(out, &rows, &values, &summary, series, args.parquet, &[])?;
    if !args.quiet {
        eprintln!(
            "compactor: {}, {} × {MODES} modes -> {}",
            counted(shards.len() as u64, "shard", "shards"),
            counted(summary.sessions, "session", "sessions"),
            out.display()
        );
    }
    Ok(ExitStatus::Success)
}
