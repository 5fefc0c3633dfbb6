//! `compactor models`: the model table with the trigger and budgets each window gets.

use crate::cli::args::ModelsArgs;
use crate::cli::config;
use crate::cmd::ExitStatus;
use compactor::catalog::window::{lean_tail_budget, legacy_tail_budget, threshold_tokens};
use std::io::Write;

pub fn run(args: &ModelsArgs) -> anyhow::Result<ExitStatus> {
    let table = config::model_table(args.models_file.as_deref())?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<24} {:>10} {:>10} {:>11} {:>10}",
        "model", "window", "threshold", "legacy_tail", "lean_tail"
    )?;
    for (name, window) in table.entries() {
        let threshold = threshold_tokens(window, None);
        writeln!(
            out,
            "{name:<24} {window:>10} {threshold:>10} {:>11} {:>10}",
            legacy_tail_budget(threshold, window),
            lean_tail_budget(window)
        )?;
    }
    Ok(ExitStatus::Success)
}
