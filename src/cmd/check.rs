//! `compactor check`: compare a report with a baseline; exit 1 when a figure
//! regressed by more than its tolerance (CI gate).

use crate::cli::args::CheckArgs;
use crate::cmd::ExitStatus;
use crate::cmd::messages::{counted, n};
use anyhow::Context;
use compactor::io::atomic::write_atomic;
use compactor::io::atomic_dir::replace_dir;
use compactor::report::aggregate::{CorpusSummary, ModeSummary};
use compactor::report::fingerprint::pair;
use compactor::report::policies::PolicySummary;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Input differences listed before `check` refuses to compare.
const MAX_LISTED_DIFFERENCES: usize = 10;

/// A figure compared by `check`, and how it may move.
struct Figure {
    name: &'static str,
    /// `None` when the figure does not apply (0 of 0).
    get: fn(&ModeSummary) -> Option<f64>,
    /// True if and only if a higher value is better.
    higher_is_better: bool,
}

const FIGURES: &[Figure] = &[
    Figure { name: "saved_pct", get: |m| Some(m.saved_pct), higher_is_better: true },
    Figure {
        name: "anchor_retention_pct",
        get: |m| m.anchor_retention_pct,
        higher_is_better: true,
    },
    Figure {
        name: "api_validity_failures",
        get: |m| Some(m.api_validity_failures as f64),
        higher_is_better: false,
    },
    Figure {
        name: "user_messages_kept_whole_pct",
        get: |m| m.user_messages_kept_whole_pct,
        higher_is_better: true,
    },
];

/// A figure of `report --policies` compared by `check`, per policy.
struct PolicyFigure {
    name: &'static str,
    /// `None` when the figure does not apply (no anchors found, not priced).
    get: fn(&PolicySummary) -> Option<f64>,
    /// How it may move: a share of its baseline value (counts and dollars,
    /// lower is better, `--policy-tolerance`), or points of a percentage
    /// (retention, higher is better, `--retention-tolerance`).
    relative: bool,
}

/// The modes' table and the policies' table.
const MODE_WIDTHS: Widths = Widths { label: 8, figure: 30, value: 12 };
const POLICY_WIDTHS: Widths = Widths { label: 26, figure: 24, value: 14 };

const POLICY_FIGURES: &[PolicyFigure] = &[
    PolicyFigure { name: "billed_input", get: |p| Some(p.billed as f64), relative: true },
    PolicyFigure { name: "cache_writes", get: |p| Some(p.cache_write as f64), relative: true },
    PolicyFigure { name: "cost_usd", get: |p| p.cost_usd, relative: true },
    PolicyFigure { name: "peak_context", get: |p| Some(p.peak as f64), relative: true },
    PolicyFigure { name: "compactions", get: |p| Some(p.compactions as f64), relative: true },
    PolicyFigure {
        name: "requests_over_trigger",
        get: |p| Some(p.over_trigger as f64),
        relative: true,
    },
    PolicyFigure {
        name: "anchor_retention_pct",
        get: PolicySummary::retention_pct,
        relative: false,
    },
];

/// `summary.json` of a report directory, or the file itself.
fn summary_path(p: &Path) -> PathBuf {
    if p.is_dir() { p.join("summary.json") } else { p.to_path_buf() }
}

fn load(p: &Path) -> anyhow::Result<CorpusSummary> {
    let path = summary_path(p);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not a compactor summary.json", path.display()))
}

/// Per (source, mode): saved_pct, from a report directory's sessions.jsonl.
/// `renamed` (baseline file, current file) names each source as the current
/// report names the same bytes.
fn session_savings(p: &Path, renamed: &[(String, String)]) -> BTreeMap<(String, String), f64> {
    let Ok(text) = std::fs::read_to_string(p.join("sessions.jsonl")) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            Some((
                (renamed_source(v["source"].as_str()?, renamed), v["mode"].as_str()?.to_string()),
                v["saved_pct"].as_f64()?,
            ))
        })
        .collect()
}

/// A session's source (`FILE`, `FILE:LINE` or `FILE[ROW]`) with its file
/// named as `renamed` says.
fn renamed_source(source: &str, renamed: &[(String, String)]) -> String {
    for (from, to) in renamed {
        if let Some(rest) = source.strip_prefix(from.as_str())
            && (rest.is_empty() || rest.starts_with(':') || rest.starts_with('['))
        {
            return format!("{to}{rest}");
        }
    }
    source.to_string()
}

/// The options of a summary that decide its figures, by name.
fn options(s: &CorpusSummary) -> BTreeMap<String, String> {
    let mut o = s.options.clone();
    o.insert("counter".into(), s.counter.clone());
    o.insert("window".into(), s.window.to_string());
    o.insert("threshold".into(), s.threshold.to_string());
    o
}

/// Refuses (exit 2) two reports of different inputs unless allowed, says how
/// the inputs were matched, and warns about options that differ. Returns the
/// status to stop with, if any, and the baseline files the current report
/// names differently (baseline name, current name).
fn comparable(
    args: &CheckArgs,
    baseline: &CorpusSummary,
    current: &CorpusSummary,
) -> (Option<ExitStatus>, Vec<(String, String)>) {
    let mut renamed = Vec::new();
    match (&baseline.inputs, &current.inputs) {
        (Some(a), Some(b)) => {
            let pairing = pair(a, b, MAX_LISTED_DIFFERENCES);
            let diff = &pairing.differences;
            if pairing.by_content > 0 {
                let moved = match pairing.renamed.as_slice() {
                    [] => String::new(),
                    [(x, y), ..] => format!(
                        " ({} under another path, e.g. {x} -> {y})",
                        n(pairing.renamed.len() as u64)
                    ),
                };
                eprintln!(
                    "compactor: inputs: {} matched by content{moved}",
                    counted(pairing.by_content as u64, "file", "files")
                );
            }
            renamed = pairing.renamed.clone();
            if !diff.is_empty() {
                let verb = if args.allow_different_inputs { "warning" } else { "error" };
                eprintln!(
                    "compactor: {verb}: {} and {} measured different inputs:",
                    args.baseline.display(),
                    args.current.display()
                );
                for d in diff {
                    eprintln!("  {d}");
                }
                if !args.allow_different_inputs {
                    eprintln!(
                        "hint: compare reports of the same inputs, or pass --allow-different-inputs"
                    );
                    return (Some(ExitStatus::Error), renamed);
                }
            }
        }
        (a, _) => {
            let which = if a.is_none() { &args.baseline } else { &args.current };
            eprintln!(
                "compactor: warning: {} records no input fingerprint (made by an older \
                     compactor); cannot tell whether the inputs are the same",
                which.display()
            );
        }
    }
    let (a, b) = (options(baseline), options(current));
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for name in names {
        let (x, y) = (a.get(name), b.get(name));
        if x != y {
            eprintln!(
                "compactor: warning: option {name} differs: {} in the baseline, {} now; comparing anyway",
                x.map_or("(not recorded)", String::as_str),
                y.map_or("(not recorded)", String::as_str)
            );
        }
    }
    (None, renamed)
}

/// `--update-baseline`: the current report becomes the baseline. A baseline
/// directory is replaced as one unit (written beside it, then swapped in:
/// [`replace_dir`]), so no file of an older baseline stays beside the new
/// figures; a baseline `summary.json` file is replaced atomically.
fn update_baseline(args: &CheckArgs, current: &CorpusSummary) -> anyhow::Result<ExitStatus> {
    let to = &args.baseline;
    let as_dir = to.is_dir() || (!to.exists() && to.extension().is_none_or(|e| e != "json"));
    if !as_dir {
        let mut text = serde_json::to_string_pretty(current)?;
        text.push('\n');
        write_atomic(to, text.as_bytes())?;
        eprintln!("compactor: baseline {} updated", to.display());
        return Ok(ExitStatus::Success);
    }
    let from = &args.current;
    let files: Vec<(std::ffi::OsString, Vec<u8>)> = if from.is_dir() {
        // Every report file, byte for byte (`shard.json` and `sessions.parquet` too).
        let mut names: Vec<PathBuf> = std::fs::read_dir(from)
            .with_context(|| format!("{}: cannot read", from.display()))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|p| {
                let bytes =
                    std::fs::read(&p).with_context(|| format!("{}: cannot read", p.display()))?;
                Ok((p.file_name().unwrap_or_default().to_os_string(), bytes))
            })
            .collect::<anyhow::Result<_>>()?
    } else {
        let mut text = serde_json::to_string_pretty(current)?;
        text.push('\n');
        vec![("summary.json".into(), text.into_bytes())]
    };
    replace_dir(to, |dir| {
        for (name, bytes) in &files {
            std::fs::write(dir.join(name), bytes)
                .with_context(|| format!("{}: cannot write", dir.join(name).display()))?;
        }
        Ok(())
    })?;
    eprintln!(
        "compactor: baseline {} replaced by {} ({})",
        to.display(),
        from.display(),
        counted(files.len() as u64, "file", "files")
    );
    Ok(ExitStatus::Success)
}

/// A table's column widths: the label (mode or policy), the figure, each value.
struct Widths {
    label: usize,
    figure: usize,
    value: usize,
}

/// One line of a table: `label`'s `figure` in both reports and how it moved
/// (`judge` gives the delta as shown and whether it regressed), or `n/a`
/// when either report has no value; returns true if it regressed.
fn figure_line(
    out: &mut impl Write,
    w: &Widths,
    (label, figure): (&str, &str),
    (base, cur): (Option<f64>, Option<f64>),
    judge: impl Fn(f64, f64) -> (String, bool),
) -> std::io::Result<bool> {
    let Widths { label: lw, figure: fw, value: vw } = *w;
    let (Some(b), Some(c)) = (base, cur) else {
        let show = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.2}"));
        let (b, c) = (show(base), show(cur));
        writeln!(out, "{label:<lw$} {figure:<fw$} {b:>vw$} {c:>vw$} {:>9}  n/a", "")?;
        return Ok(false);
    };
    let (delta, worse) = judge(b, c);
    let status = if worse { "REGRESSED" } else { "ok" };
    writeln!(out, "{label:<lw$} {figure:<fw$} {b:>vw$.2} {c:>vw$.2} {delta:>9}  {status}")?;
    Ok(worse)
}

/// The `report --policies` figures of every policy in both reports: one
/// line each, as the modes' table; returns how many regressed.
fn check_policies(
    out: &mut impl Write,
    args: &CheckArgs,
    baseline: &CorpusSummary,
    current: &CorpusSummary,
) -> anyhow::Result<usize> {
    if current.policies.is_empty() {
        return Ok(0);
    }
    writeln!(
        out,
        "\n{:<26} {:<24} {:>14} {:>14} {:>9}  status",
        "policy", "figure", "baseline", "current", "delta"
    )?;
    let mut regressed = 0;
    for (name, cur) in &current.policies {
        let Some(base) = baseline.policies.get(name) else {
            writeln!(out, "{name:<26} (not in the baseline)")?;
            continue;
        };
        for f in POLICY_FIGURES {
            let worse = figure_line(
                out,
                &POLICY_WIDTHS,
                (name, f.name),
                ((f.get)(base), (f.get)(cur)),
                |b, c| {
                    if f.relative {
                        // Percent of the baseline; from 0, any rise is a regression.
                        let pct = if b > 0.0 {
                            (c - b) * 100.0 / b
                        } else if c > 0.0 {
                            f64::INFINITY
                        } else {
                            0.0
                        };
                        (format!("{pct:+.2}%"), pct > args.policy_tolerance + 1e-9)
                    } else {
                        (format!("{:+.2}", c - b), b - c > args.retention_tolerance + 1e-9)
                    }
                },
            )?;
            regressed += usize::from(worse);
        }
    }
    Ok(regressed)
}

pub fn run(args: &CheckArgs) -> anyhow::Result<ExitStatus> {
    let current = load(&args.current)?;
    if args.update_baseline {
        return update_baseline(args, &current);
    }
    let baseline = load(&args.baseline)?;
    let (stop, renamed) = comparable(args, &baseline, &current);
    if let Some(stop) = stop {
        return Ok(stop);
    }
    let tolerance = |name: &str| match name {
        "saved_pct" => args.saved_tolerance,
        "anchor_retention_pct" => args.retention_tolerance,
        "api_validity_failures" => args.validity_tolerance,
        _ => args.users_tolerance,
    };
    let mut out = std::io::stdout().lock();
    let mut regressed = 0;
    writeln!(
        out,
        "{:<8} {:<30} {:>12} {:>12} {:>9}  status",
        "mode", "figure", "baseline", "current", "delta"
    )?;
    for (mode, cur) in &current.modes {
        if mode == "none" {
            continue;
        }
        let Some(base) = baseline.modes.get(mode) else {
            writeln!(out, "{mode:<8} (not in the baseline)")?;
            continue;
        };
        for f in FIGURES {
            let worse = figure_line(
                &mut out,
                &MODE_WIDTHS,
                (mode, f.name),
                ((f.get)(base), (f.get)(cur)),
                |b, c| {
                    let delta = c - b;
                    let t = tolerance(f.name);
                    let worse = if f.name == "api_validity_failures" {
                        c > t
                    } else if f.higher_is_better {
                        -delta > t + 1e-9
                    } else {
                        delta > t + 1e-9
                    };
                    (format!("{delta:+.2}"), worse)
                },
            )?;
            regressed += usize::from(worse);
        }
    }
    regressed += check_policies(&mut out, args, &baseline, &current)?;
    if args.baseline.is_dir() && args.current.is_dir() {
        let a = session_savings(&args.baseline, &renamed);
        let b = session_savings(&args.current, &[]);
        let mut moved: Vec<(f64, &(String, String), f64, f64)> = b
            .iter()
            .filter_map(|(k, c)| a.get(k).map(|o| (c - o, k, *o, *c)))
            .filter(|m| m.0.abs() > 1e-9)
            .collect();
        moved.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(y.1)));
        if !moved.is_empty() {
            writeln!(out, "\nsessions that moved most (saved %):")?;
            for (d, (src, mode), o, c) in moved.iter().take(5) {
                writeln!(out, "  {mode:<7} {src}: {o:.2} -> {c:.2} ({d:+.2})")?;
            }
        }
    }
    if regressed > 0 {
        let what = counted(regressed as u64, "figure", "figures");
        let verb = if regressed == 1 {
            "regressed beyond its tolerance"
        } else {
            "regressed beyond their tolerance"
        };
        writeln!(out, "\n{what} {verb}")?;
        Ok(ExitStatus::Failure)
    } else {
        writeln!(out, "\nok: no figure regressed beyond its tolerance")?;
        Ok(ExitStatus::Success)
    }
}
