//! `compactor compact`: read sessions, compact them in parallel, write them in
//! input order, with an optional per-session report and rejects file.
//!
//! Reading, compacting and writing overlap through [`compactor::exec::run_ordered`]:
//! one thread reads, the pool compacts ([`compactor::pipeline::Engine`]), and
//! this thread hands each result, in input order, to the [`Sink`], so memory
//! is bounded by the few sessions in flight (`config::in_flight`). The
//! arguments arrive resolved ([`Compact`]); the output container is files
//! (here) or an Arrow IPC stream ([`arrow`]).

mod arrow;
mod ledger;
mod resume;
mod sink;

use crate::cli::config::{self, Compact, Files, Route};
use crate::cmd::ExitStatus;
use resume::Resume;
use sink::Sink;

pub fn run(cfg: &Compact) -> anyhow::Result<ExitStatus> {
    match &cfg.route {
        Route::Files(files) => run_files(cfg, files),
        Route::Arrow(stream) => arrow::run(cfg, stream),
    }
}

/// Sessions from files to files (or standard output). The output is locked
/// for the whole run, before the manifest is read or anything is written.
fn run_files(cfg: &Compact, files: &Files) -> anyhow::Result<ExitStatus> {
    let _lock = crate::cmd::output_lock::lock(&files.target, &files.output_arg)?;
    let mut resume = Resume::start(files)?;
    let inputs = std::mem::take(&mut resume.todo);
    let engine = cfg.engine();
    let mut sink = Sink::create(cfg, files, &inputs, resume)?;
    let mut jobs = compactor::pipeline::JobReader::new(&inputs, files.from)
        .with_options(cfg.read.clone())
        .with_history(cfg.history);
    let run = compactor::exec::run_ordered(
        &cfg.pool,
        config::in_flight(&cfg.pool),
        crate::cmd::interrupt_flag(),
        || jobs.next_item(),
        |item| engine.process_item(item),
        |processed| processed.into_iter().try_for_each(|p| sink.accept(p)),
    );
    if let Err(e) = run {
        return Err(sink.stop(e));
    }
    crate::cmd::note_skipped(&inputs, jobs.skipped());
    if crate::cmd::interrupted() {
        sink.abandon();
        return Ok(ExitStatus::Interrupted);
    }
    let mut summary = sink.finish()?;
    // A skipped file is no input of the run (the note above names it).
    summary.inputs = summary.inputs.saturating_sub(jobs.skipped().len());
    if !cfg.quiet {
        ledger::print_summary(&summary);
    }
    Ok(if summary.rejected > 0 { ExitStatus::Rejected } else { ExitStatus::Success })
}
