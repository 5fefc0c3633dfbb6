//! `compactor tokenize` (hidden): the floor every other command is measured
//! against. Reads and decodes like `compact`, then tokenizes every text of
//! every session once, with no count cache, and prints the total.

use crate::cli::args::TokenizeArgs;
use crate::cli::config;
use crate::cmd::ExitStatus;
use crate::cmd::messages::err_message;
use compactor::pipeline::{Item, decode_job};

pub fn run(args: &TokenizeArgs) -> anyhow::Result<ExitStatus> {
    let reading = config::Reading::from_args(&args.input, false)?;
    let meter = config::meter(&args.budget).without_cache();
    let (mut sessions, mut tokens, mut rejected) = (0u64, 0u64, 0u64);
    crate::cmd::run_items(
        &reading,
        |item| match item {
            Item::Job(job) => {
                let (decoded, errors) = decode_job(job);
                for r in &errors {
                    err_message!("{r}");
                }
                let total: u64 = decoded.iter().map(|s| meter.request(s)).sum();
                (decoded.len() as u64, total, errors.len() as u64)
            }
            Item::Failed { error, .. } => {
                err_message!("{error}");
                (0, 0, 1)
            }
            Item::Start { .. } | Item::End { .. } => (0, 0, 0),
        },
        |(s, t, r)| {
            sessions += s;
            tokens += t;
            rejected += r;
            Ok(())
        },
    )?;
    println!("{sessions} sessions, {tokens} tokens ({})", meter.kind().name());
    Ok(if rejected > 0 { ExitStatus::Rejected } else { ExitStatus::Success })
}
