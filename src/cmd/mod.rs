//! One file per subcommand; each exposes `run(&Args) -> Result<ExitStatus>`.

mod anchors;
mod check;
mod compact;
mod models;
mod replay;
mod report;
mod stats;
mod synth;

use crate::cli::Command;
use std::process::ExitCode;

/// How a run ended. The numbers are part of the interface (README: Exit codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: everything was read and written.
    Success,
    /// 1: `check` found a regression.
    Failure,
    /// 2: usage or I/O error; nothing final was written for the failing output.
    Error,
    /// 3: finished, but some records were rejected.
    Rejected,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        ExitCode::from(match s {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Error => 2,
            ExitStatus::Rejected => 3,
        })
    }
}

pub fn run(command: Command) -> anyhow::Result<ExitStatus> {
    match command {
        Command::Compact(args) => compact::run(&args),
        Command::Anchors(args) => anchors::run(&args),
        Command::Models(args) => models::run(&args),
        Command::Stats(args) => stats::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Synth(args) => synth::run(&args),
    }
}
