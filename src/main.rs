//! The `compactor` binary: parse the command line, run the subcommand, map the
//! result to an exit code. All logic is in the library; printing happens here.

mod cli;
mod cmd;

use clap::Parser;
use cmd::ExitStatus;
use std::process::ExitCode;

/// mimalloc: decoding, pruning and re-encoding sessions is allocation-heavy
/// (every JSON string and object), and glibc's malloc showed as a large
/// share of a `compact` run under `perf`.
///
/// Built with `no_thp`: mimalloc otherwise asks for transparent huge pages,
/// so every fresh 2 MB of heap is zeroed whole on first touch, though a run
/// touches only part of it; without them peak RSS and wall time fall (the
/// figures: benches/RESULTS.md, 2026-11-30, "mimalloc without transparent
/// huge pages").
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
