//! The `compactor` binary: parse the command line, run the subcommand, map the
//! result to an exit code. All logic is in the library; printing happens here.

mod cli;
mod cmd;

use clap::Parser;
use cmd::ExitStatus;
use std::process::ExitCode;

/// mimalloc: decoding, pruning and re-encoding sessions is allocation-heavy
/// (every JSON string and object), and glibc's malloc spent ~15% of a
/// `compact` run in allocation and free under `perf`.
///
/// Built with `no_thp`: mimalloc otherwise asks for transparent huge pages,
/// so every fresh 2 MB of heap is zeroed whole on first touch, though a run
/// touches only part of it. Without them a hermes run's peak RSS fell by a
/// third (159 -> 109 MB) and its wall time 18% (page zeroing was a quarter
/// of its samples under `perf`); an exact `compact -j2` kept its time and
/// lost ~19% of its RSS (benches/RESULTS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    compactor::io::parquet::quiet_guarded_panics();
    let cli = cli::Cli::parse();
    match cmd::run(cli.command) {
        Ok(status) => status.into(),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("compactor: {e:#}");
            ExitStatus::Error.into()
        }
    }
}

/// Returns true if and only if the error chain holds a broken pipe (`| head`), which is not a failure.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
