//! `compactor stats`: what is in an archive, per file and in total, or per
//! day, project or model ([`by`]).

mod by;

use crate::cli::args::StatsArgs;
use crate::cli::config;
use crate::cmd::ExitStatus;
use crate::cmd::messages::{counted, err_message, n};
use compactor::pipeline::{Item, decode_job};
use compactor::report::recorded;
use compactor::report::stats::Stats;
use compactor::tokens::Meter;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;

pub fn run(args: &StatsArgs) -> anyhow::Result<ExitStatus> {
    let reading = config::Reading::from_args(&args.input, false)?;
    let inputs = &reading.inputs;
    let meter = Meter::new(args.counter, args.image_tokens);
    let lean = compactor::policy::Policy::new(compactor::Mode::Lean, args.window);
    let mut files: BTreeMap<usize, (String, Stats)> = BTreeMap::new();
    let mut groups: BTreeMap<Option<String>, Stats> = BTreeMap::new();
    let mut rejected = 0usize;
    // What the recorded compactions' lean compactions of the run remember.
    let caches = compactor::policy::Caches::default();
    crate::cmd::run_items(
        &reading,
        |item| match item {
            Item::Job(job) => {
                let (input, format) = (job.input, job.format);
                let (sessions, errors) = decode_job(job);
                let mut st = Stats::default();
                let mut keyed = Vec::new();
                for s in &sessions {
                    let mut one = Stats::of_session(s, &meter);
                    let rows = recorded::measure(s, &lean, &meter, &caches);
                    one.recorded.add_session(&s.source.to_string(), &rows);
                    st.merge(&one);
                    if let Some(g) = args.by {
                        keyed.push((by::key(g, s), one));
                    }
                }
                let errors = errors.iter().map(|r| r.to_string()).collect();
                (Some((input, format.name(), st)), keyed, errors)
            }
            Item::Failed { error, .. } => (None, Vec::new(), vec![error.to_string()]),
            Item::Start { .. } | Item::End { .. } => (None, Vec::new(), Vec::<String>::new()),
        },
        |(stats, keyed, errors)| {
            for (key, st) in keyed {
                groups.entry(key).or_default().merge(&st);
            }
            for e in errors {
                err_message!("{e}");
                rejected += 1;
            }
            if let Some((input, format, st)) = stats {
                files
                    .entry(input)
                    .or_insert_with(|| (format.to_string(), Stats::default()))
                    .1
                    .merge(&st);
            }
            Ok(())
        },
    )?;
    if crate::cmd::interrupted() {
        eprintln!("compactor: interrupted; no statistics were printed");
        return Ok(ExitStatus::Interrupted);
    }
    let mut total = Stats::default();
    for (_, st) in files.values() {
        total.merge(st);
    }
    let mut out = std::io::stdout().lock();
    if let Some(g) = args.by {
        if args.json {
            serde_json::to_writer_pretty(
                &mut out,
                &by::json(args.counter.name(), g, &groups, &total),
            )?;
            writeln!(out)?;
        } else {
            by::print(&mut out, g, &groups, &total)?;
        }
    } else if args.json {
        let per_file: Vec<_> = files
            .iter()
            .map(|(i, (format, st))| json!({"file": inputs[*i].display, "format": format, "stats": st}))
            .collect();
        let doc = json!({"counter": args.counter.name(), "files": per_file, "total": total});
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
    } else {
        for (i, (format, st)) in &files {
            print_stats(&mut out, &inputs[*i].display, Some(format), st, false)?;
        }
        if files.len() != 1 {
            let title = format!("TOTAL, {}", counted(files.len() as u64, "file", "files"));
            print_stats(&mut out, &title, None, &total, true)?;
        }
    }
    out.flush()?;
    Ok(if rejected > 0 { ExitStatus::Rejected } else { ExitStatus::Success })
}

/// `-12,345` / `12,345`.
fn signed(v: i64) -> String {
    let sign = if v < 0 { "-" } else { "" };
    format!("{sign}{}", n(v.unsigned_abs()))
}

/// `a 3 · b 2` from a map, largest first, at most `k` entries.
fn top(map: &BTreeMap<String, u64>, k: usize, suffix: &str) -> String {
    let mut items: Vec<(&String, &u64)> = map.iter().collect();
    items.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut parts: Vec<String> =
        items.iter().take(k).map(|(name, v)| format!("{name} {}{suffix}", n(**v))).collect();
    if items.len() > k {
        parts.push(format!("+{} more", items.len() - k));
    }
    if parts.is_empty() { "-".into() } else { parts.join(" · ") }
}

/// One of the agent's compactions: where, how big before and after, and
/// what it kept beside lean at the same point.
fn print_recorded(
    out: &mut impl Write,
    e: &recorded::RecordedEntry,
    sources: bool,
) -> std::io::Result<()> {
    let r = &e.row;
    let at = if sources { format!("{}#{}", e.source, r.index) } else { format!("#{}", r.index) };
    let maybe = |v: Option<u64>| v.map_or_else(|| "-".to_string(), n);
    let when = r.timestamp.as_deref().unwrap_or("-");
    let trigger = r.trigger.as_deref().map(|t| format!(", {t}")).unwrap_or_default();
    writeln!(
        out,
        "    at {at} ({when}{trigger}): before {} provider / {} ours, after {} / {} tok \
         (lean: {}); summary {}, {} kept {}",
        maybe(r.tokens_before_provider),
        n(r.tokens_before),
        maybe(r.tokens_after_provider),
        n(r.tokens_after),
        n(r.lean.tokens_after),
        match r.summary_tokens {
            Some(t) => format!("{} tok", n(t)),
            None => r.summary.name().to_string(),
        },
        n(r.kept_messages as u64),
        if r.kept_messages == 1 { "message" } else { "messages" }
    )?;
    let cell = |m: &recorded::Retention, c: &str| {
        m.get(c).filter(|v| v[1] > 0).map(|[k, o]| format!("{}/{}", n(*k as u64), n(*o as u64)))
    };
    let (whose, agent) = match &r.retained {
        Some(kept) => ("agent", kept),
        // Encrypted: its kept messages only, never read as 0% kept.
        None => ("agent's kept messages (summary encrypted)", &r.retained_in_kept),
    };
    let kept: Vec<String> = r
        .lean
        .retained
        .keys()
        .filter_map(|c| {
            let lean = cell(&r.lean.retained, c)?;
            Some(format!("{c} {} vs {lean}", cell(agent, c).unwrap_or_else(|| "-".into())))
        })
        .collect();
    writeln!(out, "      kept, {whose} vs lean: {}", kept.join(" · "))
}

fn print_stats(
    out: &mut impl Write,
    title: &str,
    format: Option<&str>,
    st: &Stats,
    sources: bool,
) -> std::io::Result<()> {
    let format = format.map(|f| format!("{f}, ")).unwrap_or_default();
    let plural = if st.sessions == 1 { "" } else { "s" };
    let subagents = match st.subagent_sessions {
        0 => String::new(),
        k => format!(" ({} of them subagent{})", n(k), if k == 1 { "" } else { "s" }),
    };
    writeln!(out, "{title} — {format}{} session{plural}{subagents}", n(st.sessions))?;
    writeln!(out, "  messages    {:>12}   {}", n(st.messages), top(&st.messages_by_role, 6, ""))?;
    writeln!(out, "  tokens      {:>12}   {}", n(st.tokens), top(&st.tokens_by_role, 6, ""))?;
    writeln!(
        out,
        "              {:>12}   images {} ({} tok) · reasoning {} tok · tool schemas {} tok",
        "",
        n(st.images),
        n(st.image_tokens),
        n(st.reasoning_tokens),
        n(st.tool_schema_tokens)
    )?;
    writeln!(
        out,
        "  tool calls  {:>12}   {}",
        n(st.tool_calls),
        top(&st.tool_calls_by_name, 6, "")
    )?;
    writeln!(out, "  by tool     {:>12}   {}", "", top(&st.tokens_by_tool, 6, " tok"))?;
    if st.recorded_compactions > 0 {
        writeln!(
            out,
            "  compacted   {:>12}   {} the agent made itself, recorded in the log",
            n(st.recorded_compactions),
            if st.recorded_compactions == 1 { "compaction" } else { "compactions" }
        )?;
    }
    for e in &st.recorded.rows {
        print_recorded(out, e, sources)?;
    }
    if st.usage.calls > 0 {
        let u = &st.usage;
        writeln!(
            out,
            "  usage       {:>12}   calls with provider usage: provider {} vs ours {} tok ({:+.1}%), median gap {} tok/call",
            n(u.calls),
            n(u.provider_tokens),
            n(u.our_tokens),
            u.diff_pct,
            signed(u.median_gap)
        )?;
    }
    for l in &st.largest {
        let tool = l.tool.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
        let at =
            if sources { format!("{}#{}", l.source, l.index) } else { format!("#{}", l.index) };
        writeln!(out, "  largest     {:>12}   {at} {}{tool}: {}", n(l.tokens), l.role, l.preview)?;
    }
    writeln!(out)
}
