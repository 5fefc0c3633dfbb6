//! `compactor report INPUT...`: the figures of every session under each mode,
//! read once and measured in parallel; with `--shard K/N`, only one shard's
//! sessions, with the `shard.json` that `--merge` needs.

use super::{CHARTED_SESSIONS, Charted, ShardFile, write_report};
use crate::cli::args::ReportArgs;
use crate::cli::config;
use crate::cmd::ExitStatus;
use crate::cmd::messages::{counted, err_message};
use anyhow::Context;
use compactor::formats::openai::{FastPath, Reads};
use compactor::io::atomic::write_atomic;
use compactor::pipeline::shard::selects;
use compactor::pipeline::{Item, Rejection, decode_job_with};
use compactor::policy::summary::real_user_text;
use compactor::policy::{Prepared, compact_prepared, verify::verify};
use compactor::replay::{Trigger, replay_prepared};
use compactor::report::aggregate::{RejectCounts, ReportRow, summarize};
use compactor::report::fingerprint::fingerprint;
use compactor::report::recorded;
use compactor::report::render::Series;
use compactor::report::wire::{ReplayLabels, ReplayRow, SessionRow};
use serde_json::Value;

/// The token trigger of `p`, when it has one (the "requests over the
/// trigger" figure): none for an event count or every request.
fn token_trigger(p: &compactor::Policy) -> Option<u64> {
    use compactor::policy::spec::Trigger;
    match p.spec.trigger {
        Trigger::Events(_) | Trigger::EveryRequest => None,
        _ => Some(p.threshold),
    }
}

pub(super) fn run(args: &ReportArgs) -> anyhow::Result<ExitStatus> {
    let reading = config::Reading::from_args(&args.input, args.quiet)?;
    let meter = config::meter(&args.budget);
    let summarizer = config::summarizer(&args.summarizer)?;
    let prices = config::price_book(args.prices.as_ref(), &args.budget)?;
    let mut unpriced = crate::cmd::unpriced::Unpriced::default();
    // Today's four, then what `--policies` adds (`config::specs`).
    let shard = args.shard;
    let specs = config::specs(&args.policies)?;
    let by_policy = !args.policies.is_empty();
    if by_policy && (shard.is_some() || args.merge) {
        anyhow::bail!("--policies: not with --shard or --merge (its figures are not in the rows)");
    }
    let policies: Vec<config::Policies> = specs
        .iter()
        .map(|s| {
            config::policies_of(
                s,
                &args.budget,
                args.force,
                args.target_tokens,
                summarizer.as_ref(),
            )
        })
        .collect::<anyhow::Result<_>>()?;
    let mut totals: Vec<compactor::report::policies::PolicySummary> =
        vec![Default::default(); policies.len()];
    let auto = policies.iter().any(config::Policies::is_auto);
    let mut defaulted = config::DefaultedCount::default();
    // Under `--model auto`, the windows the sessions got (one: `summary.json` names it).
    let mut windows: std::collections::BTreeSet<u64> = std::collections::BTreeSet::new();
    let mut rows: Vec<ReportRow> = Vec::new();
    let mut charted: Vec<Charted> = Vec::new();
    // Position of the next session in the whole input, and of each one kept.
    let mut position = 0u64;
    let mut positions: Vec<u64> = Vec::new();
    let mut rejected = RejectCounts::default();
    let counter = meter.kind().name();
    // What every compaction and replay of the run remembers.
    let caches = compactor::policy::Caches::default();
    crate::cmd::run_items(
        &reading,
        |item| match item {
            Item::Job(job) => {
                let format = job.format;
                // Report never writes sessions: unread fields need no tree,
                // where the one rule of the fast paths lets it.
                let reads = if auto { Reads::Facts } else { Reads::Compaction };
                let (sessions, errors) = decode_job_with(job, FastPath::Kept.may_run(reads));
                // The model each log names, read before `normalize` drops the envelopes.
                let models: Vec<Option<String>> = sessions
                    .iter()
                    .map(|s| if auto { compactor::discover::facts::model(s) } else { None })
                    .collect();
                // Figures are of the requests the agent sent: the session as
                // a clean request (`compactor::request`; images where either
                // API takes them, tool screenshots included), repairs counted.
                let api = compactor::request::Api::Messages;
                let normalized: Vec<(compactor::model::Session, compactor::request::Repairs)> =
                    sessions.iter().map(|s| compactor::request::normalize(s, false, api)).collect();
                let mut out = Vec::new();
                for (((s, repairs), model), raw) in normalized.iter().zip(&models).zip(&sessions) {
                    if !selects(shard, &s.id) {
                        out.push(None);
                        continue;
                    }
                    let mut session_rows = Vec::new();
                    let mut series = Vec::new();
                    let mut figures = Vec::new();
                    // The input's anchors and counts are read once for every mode.
                    let prepared = Prepared::new(s, &caches);
                    // Replay walks the session as the log holds it, call by
                    // call, as `compactor replay` does: the same figures in both
                    // (a clean request joins a reply's text to its calls, and
                    // drops the agent's own compactions and calls made of nothing).
                    let as_logged = Prepared::new(raw, &caches);
                    let users = s.messages.iter().filter(|m| real_user_text(m).is_some()).count();
                    // `--prices`: the session's prices, by the model its log names.
                    let price = prices.as_ref().map(|book| config::session_prices(book, raw));
                    for policies in &policies {
                        let (p, chosen) = policies.for_model(model.as_deref());
                        let outcome = compact_prepared(&prepared, p, &meter);
                        let problems = verify(s, &outcome, &meter).len();
                        let r = replay_prepared(&as_logged, p, &meter, Trigger::Threshold);
                        let mut row = SessionRow::new(
                            &s.source,
                            &s.id,
                            format.name(),
                            &outcome.compaction,
                            counter,
                        );
                        row.repairs = repairs.by_name();
                        row.parent_session_id = s.parent.as_ref().map(|p| p.session_id.clone());
                        row.parent_call_id = s.parent.as_ref().and_then(|p| p.call_id.clone());
                        let labels = ReplayLabels {
                            format: format.name(),
                            mode: p.name(),
                            trigger: "threshold",
                            counter,
                        };
                        let mut rr = ReplayRow::new(&s.source, &s.id, labels, p.window, &r, None);
                        rr.chosen = chosen;
                        let mut report_row = ReportRow::new(row, problems, users, &rr);
                        if p.spec.reference_mode() == Some(compactor::Mode::Lean) {
                            // The agent's own compactions, beside lean at the same points.
                            report_row.recorded_compactions =
                                recorded::measure(raw, p, &meter, &caches);
                        }
                        session_rows.push(report_row);
                        series.push(Series::from_replay(&s.source.to_string(), p.name(), &r));
                        if by_policy {
                            let mut f = compactor::report::policies::PolicySummary::default();
                            f.add(&r, token_trigger(p), &outcome.compaction);
                            if let Some(price) = &price {
                                f.add_cost(price.as_ref().ok().map(|p| r.cost(p).1));
                            }
                            figures.push(f);
                        }
                    }
                    let unpriced_model = match price {
                        Some(Err(model)) => Some(model),
                        _ => None,
                    };
                    out.push(Some((session_rows, series, figures, unpriced_model)));
                }
                (out, errors)
            }
            Item::Failed { error, .. } => (Vec::new(), vec![Rejection::from(error)]),
            Item::Start { .. } | Item::End { .. } => (Vec::new(), Vec::new()),
        },
        |(sessions, errors)| {
            for e in errors {
                // A record that is not a session has no id: its source picks the shard.
                if selects(shard, &e.source.to_string()) {
                    err_message!("{e}");
                    rejected.count(e.kind.name());
                }
            }
            for session in sessions {
                let here = position;
                position += 1;
                let Some((session_rows, series, figures, unpriced_model)) = session else {
                    continue;
                };
                if let Some(model) = unpriced_model {
                    unpriced.add(model);
                }
                for (total, f) in totals.iter_mut().zip(&figures) {
                    total.absorb(f);
                }
                positions.push(here);
                if let Some(first) = session_rows.first() {
                    defaulted.add(first.chosen.as_ref());
                    windows.extend(first.window);
                }
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
    if crate::cmd::stopped("no report was written", &defaulted) {
        return Ok(ExitStatus::Interrupted);
    }
    // The one window of the run; under `--model auto` with sessions of several
    // windows, the default one (each row names its own).
    let base = policies.first().map(config::Policies::base);
    let (mut window, mut threshold) = base.map_or((0, 0), |p| (p.window, p.threshold));
    if let (Some(&w), 1) = (windows.first(), windows.len()) {
        window = w;
        threshold = policies.first().map_or(0, |p| p.for_window(w).threshold);
    }
    let mut summary = summarize(&rows, counter, window, threshold);
    summary.options = recorded_options(args);
    summary.inputs = Some(fingerprint(&reading.inputs)?);
    let any_rejected = rejected.total > 0;
    summary.rejected = rejected;
    if by_policy {
        summary.policies = specs.iter().map(|s| s.name.to_string()).zip(totals).collect();
    }
    let values: Vec<Value> = rows.iter().map(serde_json::to_value).collect::<Result<_, _>>()?;
    let dir = &args.output;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create directory", dir.display()))?;
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
    // The policies' rows in the order asked for (`summary.json` keys them by name).
    let by_policy_rows: Vec<(String, compactor::report::policies::PolicySummary)> = specs
        .iter()
        .filter_map(|s| {
            summary.policies.get(s.name.as_ref()).map(|p| (s.name.to_string(), p.clone()))
        })
        .collect();
    write_report(dir, &rows, &values, &summary, series, args.parquet, &by_policy_rows)?;
    if !args.quiet {
        eprintln!(
            "compactor: {} × {} {} -> {}",
            counted(summary.sessions, "session", "sessions"),
            policies.len(),
            if by_policy { "policies" } else { "modes" },
            dir.display()
        );
        let mut summarized = compactor::policy::summary_writer::SummarizerCounts::default();
        for m in summary.modes.values() {
            for s in [&m.summarizer, &m.replay.summarizer].into_iter().flatten() {
                summarized.merge(s);
            }
        }
        if let Some(line) = crate::cmd::summarizer_line(&summarized) {
            eprintln!("{line}");
        }
    }
    if let Some(notice) = unpriced.notice() {
        eprintln!("{notice}");
    }
    Ok(if any_rejected { ExitStatus::Rejected } else { ExitStatus::Success })
}

/// The options besides window, threshold and counter that move the figures,
/// recorded in `summary.json` for `check` (a tokenizer implementation is not
/// one: its counts are the same).
fn recorded_options(args: &ReportArgs) -> std::collections::BTreeMap<String, String> {
    let b = &args.budget;
    let file = |p: &Option<std::path::PathBuf>| {
        p.as_ref().map_or_else(|| "(built-in)".to_string(), |p| p.display().to_string())
    };
    [
        (
            "model",
            match (b.window, &b.model) {
                (Some(_), _) => "(--window)".to_string(),
                (None, Some(m)) => m.to_string(),
                (None, None) => "auto".to_string(),
            },
        ),
        ("force", args.force.to_string()),
        ("target_tokens", args.target_tokens.map_or_else(|| "none".into(), |t| t.to_string())),
        ("image_tokens", b.image_tokens.to_string()),
        ("anchor_budget", b.anchor_budget.to_string()),
        ("tool_families", file(&b.tool_families)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    // Named only when set, so that reports without it keep their bytes.
    .chain(summarizer_option(args).map(|v| ("summarizer".to_string(), v)))
    .collect()
}

/// The summarizer, as `summary.json` records it: the model and what serves
/// it (the command line, or that it is an endpoint; never the URL's key).
fn summarizer_option(args: &ReportArgs) -> Option<String> {
    let s = &args.summarizer;
    let model = s.summarizer_model.as_deref().unwrap_or("default");
    match (&s.summarizer, &s.summarizer_cmd) {
        (Some(_), _) => Some(format!("{model} (endpoint)")),
        (None, Some(cmd)) => Some(format!("{model} (command: {cmd})")),
        (None, None) => None,
    }
}
