//! `compactor replay`: walk each session call by call as the agent lived it,
//! compacting when the trigger fires, and report what it saved.

use crate::cli::args::ReplayArgs;
use crate::cli::config;
use crate::cli::values::ReportDest;
use crate::cmd::ExitStatus;
use crate::cmd::messages::{counted, err_message, n};
use compactor::formats::Format;
use compactor::io::output::{SessionWriter, TextLayout};
use compactor::pipeline::{Item, decode_job};
use compactor::policy::Prepared;
use compactor::replay::{Totals, Trigger, replay_prepared};
use compactor::report::wire::{CallRow, ReplayLabels, ReplayRow};
use std::io::Write;

pub fn run(args: &ReplayArgs) -> anyhow::Result<ExitStatus> {
    let reading = config::Reading::from_args(&args.input, args.quiet)?;
    // `--to`: the dialect of `--write-final` files (`None`: each input's own).
    let named = args.to.dialect()?.0;
    // What every compaction of the run remembers, shared by the workers.
    let caches = compactor::policy::Caches::default();
    let inputs = &reading.inputs;
    let summarizer = config::summarizer(&args.summarizer)?;
    // `--policy` (repeatable), else the mode: one row per policy and session.
    let policy_sets: Vec<config::Policies> = if args.policy.is_empty() {
        vec![config::policies(args.mode, &args.budget, false, None, summarizer.as_ref())?]
    } else {
        args.policy
            .iter()
            .map(|p| {
                config::policies_of(
                    &config::spec(p)?,
                    &args.budget,
                    false,
                    None,
                    summarizer.as_ref(),
                )
            })
            .collect::<anyhow::Result<_>>()?
    };
    if policy_sets.len() > 1 && args.write_final.is_some() {
        anyhow::bail!("--write-final takes one policy (got {} --policy)", policy_sets.len());
    }
    let mut defaulted = config::DefaultedCount::default();
    let meter = config::meter(&args.budget);
    let prices = config::price_book(args.prices.as_ref(), &args.budget)?;
    let trigger = if args.gateway { Trigger::Gateway } else { Trigger::Threshold };
    if args.report == Some(ReportDest::Stdout) && args.calls == Some(ReportDest::Stdout) {
        anyhow::bail!(
            "--report - and --calls - would both write to stdout: give one of them a file"
        );
    }
    let mut report = args.report.as_ref().map(ReportDest::open).transpose()?;
    let mut calls = args.calls.as_ref().map(ReportDest::open).transpose()?;
    let mut stdout = std::io::stdout().lock();
    let mut rejected = 0usize;
    let mut summarized = compactor::policy::summary_writer::SummarizerCounts::default();
    let mut unpriced = crate::cmd::unpriced::Unpriced::default();
    let mut final_writer: Option<SessionWriter> = None;
    let write_final = args.write_final.is_some();
    let mut total = Total::default();
    crate::cmd::run_items(
        &reading,
        |item| match item {
            Item::Job(job) => {
                let format = job.format;
                let (sessions, errors) = decode_job(job);
                let done: Vec<_> = sessions
                    .into_iter()
                    .flat_map(|s| {
                        let s = std::sync::Arc::new(s);
                        policy_sets
                            .iter()
                            .map(move |policies| (std::sync::Arc::clone(&s), policies))
                    })
                    .map(|(s, policies)| {
                        let (policy, chosen) = policies.for_session(&s);
                        let r =
                            replay_prepared(&Prepared::new(&s, &caches), policy, &meter, trigger);
                        // Built here, in parallel, and only when it is written.
                        let last = write_final.then(|| r.final_session(&s));
                        let priced = prices.as_ref().map(|book| config::session_prices(book, &s));
                        (s, policy.name(), r, last, policy.window, chosen, priced)
                    })
                    .collect();
                (Some((format, done)), errors.into_iter().map(|r| r.to_string()).collect(), None)
            }
            Item::Failed { error, .. } => (None, vec![error.to_string()], None),
            Item::Start { input, .. } => (None, Vec::new(), Some((input, true))),
            Item::End { input } => (None, Vec::new(), Some((input, false))),
        },
        |(done, errors, boundary)| {
            for e in errors {
                err_message!("{e}");
                rejected += 1;
            }
            match (boundary, args.write_final.as_ref()) {
                (Some((input, true)), Some(dir)) => {
                    final_writer = Some(SessionWriter::file(
                        &dir.join(&inputs[input].relative),
                        TextLayout::Jsonl,
                    )?);
                }
                (Some((_, false)), _) => {
                    if let Some(w) = final_writer.take() {
                        w.finish()?;
                    }
                }
                _ => {}
            }
            let Some((format, sessions)) = done else { return Ok(()) };
            for (session, name, r, last, window, chosen, priced) in sessions {
                defaulted.add(chosen.as_ref());
                let price = match priced {
                    Some(Err(model)) => {
                        unpriced.add(model);
                        None
                    }
                    Some(Ok(price)) => Some(price),
                    None => None,
                };

                let labels = ReplayLabels {
                    format: format.name(),
                    mode: name,
                    trigger: if args.gateway { "gateway" } else { "threshold" },
                    counter: meter.kind().name(),
                };
                let mut row = ReplayRow::new(
                    &session.source,
                    &session.id,
                    labels,
                    window,
                    &r,
                    price.as_ref(),
                );
                row.chosen = chosen;
                if let Some(s) = &row.summarizer {
                    summarized.merge(s);
                }
                total.add(&row, &r.totals);
                match report.as_mut() {
                    Some(w) => w.write(&serde_json::to_value(&row)?)?,
                    None => print_row(&mut stdout, &row, !args.policy.is_empty())?,
                }
                if let Some(w) = calls.as_mut() {
                    for (k, c) in r.calls.iter().enumerate() {
                        let line = CallRow {
                            source: row.source.clone(),
                            mode: row.mode,
                            call: k,
                            figures: c,
                        };
                        w.write(&serde_json::to_value(&line)?)?;
                    }
                }
                if let (Some(w), Some(last)) = (final_writer.as_mut(), last) {
                    let to = named.unwrap_or(format);
                    let to = if to.unit() == compactor::formats::Unit::File { format } else { to };
                    // A named target writes the clean request (`compactor::request`).
                    let values = match named {
                        Some(_) => {
                            let api = if to == Format::Anthropic {
                                compactor::request::Api::Messages
                            } else {
                                compactor::request::Api::ChatCompletions
                            };
                            let (clean, _) = compactor::request::normalize(&last, false, api);
                            if to == Format::Anthropic {
                                vec![compactor::request::messages::encode(&clean, None).0]
                            } else {
                                to.adapter().encode(&clean, None)
                            }
                        }
                        None => to.adapter().encode(&last, None),
                    };
                    for v in values {
                        w.write(&v)?;
                    }
                }
            }
            Ok(())
        },
    )?;
    if crate::cmd::stopped("the report files were not finished", &defaulted) {
        return Ok(ExitStatus::Interrupted);
    }
    if !args.quiet {
        eprintln!("{}", total.line());
    }
    if let Some(notice) = unpriced.notice() {
        eprintln!("{notice}");
    }
    if let Some(line) = crate::cmd::summarizer_line(&summarized) {
        eprintln!("{line}");
    }
    if let Some(w) = report {
        w.finish()?;
    }
    if let Some(w) = calls {
        w.finish()?;
    }
    stdout.flush()?;
    Ok(if rejected > 0 { ExitStatus::Rejected } else { ExitStatus::Success })
}

/// The replay's totals over its sessions, for the line on stderr.
#[derive(Default)]
struct Total {
    sessions: u64,
    calls: u64,
    compactions: u64,
    stopped: u64,
    /// Peaks (the largest of any session), billed and cache-read tokens.
    totals: Totals,
    /// Dollars without and with compaction, over the priced sessions.
    cost: Option<(f64, f64, u64)>,
}

impl Total {
    /// Adds a session: its row and its replay's totals.
    fn add(&mut self, r: &ReplayRow, totals: &Totals) {
        self.sessions += 1;
        self.calls += r.calls as u64;
        self.compactions += r.compactions as u64;
        self.stopped += u64::from(r.thrash_stopped);
        self.totals.absorb(totals);
        if let (Some(a), Some(b)) = (r.cost_original, r.cost_live) {
            let (x, y, k) = self.cost.unwrap_or_default();
            self.cost = Some((x + a, y + b, k + 1));
        }
    }

    /// `compactor: replayed 12 sessions, ...: billed 6,481,228 -> 3,539,788 tokens (45.4% saved), ...`.
    fn line(&self) -> String {
        let stopped = match self.stopped {
            0 => String::new(),
            k => format!(" ({} stopped as ineffective)", counted(k, "session", "sessions")),
        };
        let cost = match self.cost {
            Some((a, b, k)) => {
                format!(
                    ", ${a:.2} -> ${b:.2} over {}",
                    counted(k, "priced session", "priced sessions")
                )
            }
            None => String::new(),
        };
        let t = &self.totals;
        format!(
            "compactor: replayed {}, {}, {}{stopped}: peak {} -> {}, billed {} -> {} tokens ({:.1}% saved), cache reads {} -> {}{cost}",
            counted(self.sessions, "session", "sessions"),
            counted(self.calls, "call", "calls"),
            counted(self.compactions, "compaction", "compactions"),
            n(t.peak_original),
            n(t.peak_live),
            n(t.billed_original),
            n(t.billed_live),
            compactor::report::saved_pct(t.billed_original, t.billed_live),
            n(t.cache_read_original),
            n(t.cache_read_live),
        )
    }
}

fn print_row(out: &mut impl Write, r: &ReplayRow, named: bool) -> anyhow::Result<()> {
    // `--policy`: each line names its policy.
    let policy = if named { format!(" [{}]", r.mode) } else { String::new() };
    let cost = match (r.cost_original, r.cost_live) {
        (Some(a), Some(b)) => format!(", ${a:.2} -> ${b:.2}"),
        _ => String::new(),
    };
    let window = match &r.chosen {
        Some(c) => format!(
            " [window {} from {}]",
            n(r.window),
            match (&c.model, c.window_from.as_str()) {
                (Some(m), compactor::catalog::window::FROM_MODEL) => m.clone(),
                (Some(m), _) => format!("the default: {m} is not in the table"),
                (None, _) => "the default: the log names no model".to_string(),
            }
        ),
        None => String::new(),
    };
    writeln!(
        out,
        "{}{policy}{window}: {}, {}{}, peak {} -> {}, billed {} -> {} ({:.1}% saved), cache reads {} -> {}{cost}",
        r.source,
        counted(r.calls as u64, "call", "calls"),
        counted(r.compactions as u64, "compaction", "compactions"),
        if r.thrash_stopped { " (stopped: ineffective twice)" } else { "" },
        n(r.peak_original),
        n(r.peak_live),
        n(r.billed_original),
        n(r.billed_live),
        r.billed_saved_pct,
        n(r.cache_read_original),
        n(r.cache_read_live),
    )?;
    if let Some(rec) = &r.recorded {
        let cost = r.cost_recorded.map(|c| format!(", ${c:.2}")).unwrap_or_default();
        let n = compactor::figures::thousands;
        let side = if rec.side_calls > 0 {
            format!(" ({} of them sidechain, outside the conversation)", n(rec.side_calls as u64))
        } else {
            String::new()
        };
        writeln!(
            out,
            "  recorded (the agent's own calls as billed): {} calls{side}, {} compactions, peak {}, billed {}, cache reads {}, cache writes {} ({} of them 1-hour), output {}{cost}",
            n(rec.calls as u64),
            n(rec.compactions as u64),
            n(rec.peak),
            n(rec.billed),
            n(rec.cache_read),
            n(rec.cache_write),
            n(rec.cache_write_1h),
            n(rec.output),
        )?;
    }
    Ok(())
}
