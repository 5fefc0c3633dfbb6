//! `compactor anchors`: the anchors of each session as one JSON line.

use crate::cli::args::{AnchorsArgs, Region};
use crate::cli::config;
use crate::cmd::ExitStatus;
use crate::cmd::messages::err_message;
use compactor::Mode;
use compactor::model::Session;
use compactor::pipeline::{Item, decode_job};
use compactor::policy::Policy;
use compactor::policy::{Caches, session_anchors_line};
use compactor::tokens::Meter;
use serde_json::Value;
use std::io::Write;

pub fn run(args: &AnchorsArgs) -> anyhow::Result<ExitStatus> {
    let reading = config::Reading::from_args(&args.input, false)?;
    let policy = config::policy(Mode::Lean, &args.window, true, None)?;
    let meter = config::meter(&args.window);
    let caches = Caches::default();
    let mut out = std::io::stdout().lock();
    let mut rejected = 0usize;
    crate::cmd::run_items(
        &reading,
        |item| match item {
            Item::Job(job) => {
                let (sessions, errors) = decode_job(job);
                let lines: Vec<Value> = sessions
                    .iter()
                    .map(|s| anchors_line(s, args, &policy, &meter, &caches))
                    .collect();
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

fn anchors_line(
    session: &Session,
    args: &AnchorsArgs,
    policy: &Policy,
    meter: &Meter,
    caches: &Caches,
) -> Value {
    session_anchors_line(session, args.region == Region::Middle, args.budget, policy, meter, caches)
}
