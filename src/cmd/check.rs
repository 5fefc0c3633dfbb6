//! `compactor check`: compare a report with a baseline; exit 1 when a figure
//! regressed by more than its tolerance (CI gate).

use crate::cli::args::CheckArgs;
use crate::cmd::ExitStatus;
use anyhow::Context;
use compactor::io::atomic::write_atomic;
use compactor::report::aggregate::{CorpusSummary, ModeSummary};
use compactor::report::fingerprint::differences;
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
fn session_savings(p: &Path) -> BTreeMap<(String, String), f64> {
    let Ok(text) = std::fs::read_to_string(p.join("sessions.jsonl")) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            Some((
                (v["source"].as_str()?.to_string(), v["mode"].as_str()?.to_string()),
                v["saved_pct"].as_f64()?,
            ))
        })
        .collect()
}

/// The options of a summary that decide its figures, by name.
fn options(s: &CorpusSummary) -> BTreeMap<String, String> {
    let mut o = s.options.clone();
    o.insert("counter".into(), s.counter.clone());
    o.insert("window".into(), s.window.to_string());
    o.insert("threshold".into(), s.threshold.to_string());
    o
}

/// Refuses (exit 2) two reports of different inputs unless allowed, and warns
/// about options that differ. Returns the status to stop with, if any.
fn comparable(
    args: &CheckArgs,
    baseline: &CorpusSummary,
    current: &CorpusSummary,
) -> Option<ExitStatus> {
    match (&baseline.inputs, &current.inputs) {
        (Some(a), Some(b)) => {
            let diff = differences(a, b, MAX_LISTED_DIFFERENCES);
            if !diff.is_empty() {
                let verb = if args.allow_different_inputs { "warning" } else { "error" };
                eprintln!(
                    "compactor: {verb}: {} and {} measured different inputs:",
                    args.baseline.display(),
                    args.current.display()
                );
                for d in &diff {
                    eprintln!("  {d}");
                }
                if !args.allow_different_inputs {
                    eprintln!(
                        "hint: compare reports of the same inputs, or pass --allow-different-inputs"
                    );
                    return Some(ExitStatus::Error);
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
    None
}

pub fn run(args: &CheckArgs) -> anyhow::Result<ExitStatus> {
    let current = load(&args.current)?;
    if args.update_baseline {
        let to = summary_path(&args.baseline);
        let mut text = serde_json::to_string_pretty(&current)?;
        text.push('\n');
        write_atomic(&to, text.as_bytes())?;
        if args.current.is_dir() && args.baseline.is_dir() {
            let rows = std::fs::read(args.current.join("sessions.jsonl")).unwrap_or_default();
            write_atomic(&args.baseline.join("sessions.jsonl"), &rows)?;
        }
        eprintln!("compactor: baseline {} updated", to.display());
        return Ok(ExitStatus::Success);
    }
    let baseline = load(&args.baseline)?;
    if let Some(stop) = comparable(args, &baseline, &current) {
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
            let (Some(b), Some(c)) = ((f.get)(base), (f.get)(cur)) else {
                let show = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.2}"));
                let (b, c) = (show((f.get)(base)), show((f.get)(cur)));
                writeln!(out, "{mode:<8} {:<30} {b:>12} {c:>12} {:>9}  n/a", f.name, "")?;
                continue;
            };
            let delta = c - b;
            let worse = if f.name == "api_validity_failures" {
                c > tolerance(f.name)
            } else if f.higher_is_better {
                -delta > tolerance(f.name) + 1e-9
            } else {
                delta > tolerance(f.name) + 1e-9
            };
            regressed += usize::from(worse);
            let status = if worse { "REGRESSED" } else { "ok" };
            writeln!(out, "{mode:<8} {:<30} {b:>12.2} {c:>12.2} {delta:>+9.2}  {status}", f.name)?;
        }
    }
    if args.baseline.is_dir() && args.current.is_dir() {
        let (a, b) = (session_savings(&args.baseline), session_savings(&args.current));
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
        writeln!(out, "\n{regressed} figures regressed beyond their tolerance")?;
        Ok(ExitStatus::Failure)
    } else {
        writeln!(out, "\nok: no figure regressed beyond its tolerance")?;
        Ok(ExitStatus::Success)
    }
}
