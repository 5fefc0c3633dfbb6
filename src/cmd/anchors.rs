//! `compactor anchors`: the anchors of each session as one JSON line.

use crate::cli::args::AnchorsArgs;
use crate::cli::config;
use crate::cmd::ExitStatus;
use crate::cmd::messages::err_message;
use compactor::Mode;
use compactor::model::Session;
use compactor::pipeline::{Item, decode_job};
use compactor::policy::Policy;
use compactor::policy::anchors::{AnchorSet, Category, build_index};
use compactor::policy::{boundaries, micro_compact::index_calls, session_anchors, summary};
use compactor::tokens::Meter;
use serde_json::{Map, Value, json};
use std::io::Write;

pub fn run(args: &AnchorsArgs) -> anyhow::Result<ExitStatus> {
    let reading = config::Reading::from_args(&args.input, false)?;
    let policy = config::policy(Mode::Lean, &args.window, true, None)?;
    let meter = config::meter(&args.window);
    let mut out = std::io::stdout().lock();
    let mut rejected = 0usize;
    crate::cmd::run_items(
        &reading,
        |item| match item {
            Item::Job(job) => {
                let (sessions, errors) = decode_job(job);
                let lines: Vec<Value> =
                    sessions.iter().map(|s| anchors_line(s, args, &policy, &meter)).collect();
                (lines, errors.iter().map(|r| r.to_string()).collect())
            }
            Item::Failed { error, .. } => (Vec::new(), vec![error.to_string()]),
            Item::Start { .. } | Item::End { .. } => (Vec::new(), Vec::new()),
        },
        |(lines, errors): (Vec<Value>, Vec<String>)| {
            for e in errors {
                err_message!("{e}");
                rejected += 1;
            }
            for line in lines {
                serde_json::to_writer(&mut out, &line)?;
                out.write_all(b"\n")?;
            }
            Ok(())
        },
    )?;
    if crate::cmd::interrupted() {
        return Ok(ExitStatus::Interrupted);
    }
    out.flush()?;
    Ok(if rejected > 0 { ExitStatus::Rejected } else { ExitStatus::Success })
}

fn anchors_line(session: &Session, args: &AnchorsArgs, policy: &Policy, meter: &Meter) -> Value {
    let msgs = &session.messages;
    let set = if args.region == "middle" {
        let tokens = meter.messages(msgs);
        let head = boundaries::head_end(msgs, policy.protect_first_n);
        let budget = compactor::catalog::window::lean_tail_budget(policy.window);
        let tail = boundaries::tail_start(msgs, &tokens, head, budget).max(head);
        let calls = index_calls(msgs);
        let mut set = AnchorSet::new();
        for (i, m) in msgs[head..tail].iter().enumerate() {
            summary::add_message_anchors(&mut set, m, (head + i) as u64, &policy.families, &calls);
        }
        set
    } else {
        session_anchors(msgs, &policy.families)
    };
    let kept: Option<String> = args.budget.map(|b| build_index(&set, b).body);
    let mut by_cat = Map::new();
    for cat in Category::ALL {
        let items: Vec<Value> = set
            .ranked(cat)
            .into_iter()
            .filter(|a| kept.as_ref().is_none_or(|body| body.contains(&a.value)))
            .map(|a| json!({"value": a.value, "count": a.count}))
            .collect();
        by_cat.insert(cat.name().to_string(), Value::Array(items));
    }
    json!({"source": session.source.to_string(), "id": session.id, "anchors": by_cat})
}
