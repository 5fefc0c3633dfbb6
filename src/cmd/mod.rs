//! The subcommands, one file (or folder) each, and the dispatch to them.
//! Each exposes `run`, which takes its arguments resolved
//! ([`crate::cli::config`]) and returns an [`ExitStatus`].

mod anchors;
mod check;
mod compact;
pub(crate) mod messages;
mod models;
mod output_lock;
mod replay;
mod report;
mod stats;
#[cfg(feature = "bench-tools")]
mod synth;
#[cfg(feature = "bench-tools")]
mod tokenize;
mod unpriced;

use crate::cli::Command;
use crate::cli::config::{self, Reading};
use std::process::ExitCode;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// 130: stopped by Ctrl-C / SIGTERM; only complete outputs were kept.
    Interrupted,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        ExitCode::from(match s {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Error => 2,
            ExitStatus::Rejected => 3,
            ExitStatus::Interrupted => 130,
        })
    }
}

pub fn run(command: Command) -> anyhow::Result<ExitStatus> {
    match command {
        Command::Compact(args) => compact::run(&config::Compact::from_args(&args)?),
        Command::Anchors(args) => anchors::run(&args),
        Command::Models(args) => models::run(&args),
        Command::Stats(args) => stats::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Check(args) => check::run(&args),
        #[cfg(feature = "bench-tools")]
        Command::Synth(args) => synth::run(&args),
        #[cfg(feature = "bench-tools")]
        Command::Tokenize(args) => tokenize::run(&args),
    }
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static HANDLER: Once = Once::new();

/// The flag raised by Ctrl-C (SIGINT) or SIGTERM, with the handler installed
/// on first use. The first signal asks the run to stop reading and finish the
/// sessions in flight; a second one exits at once (temporary files are never
/// renamed into place, so even then no partial output appears under a final name).
pub fn interrupt_flag() -> &'static AtomicBool {
    HANDLER.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    });
    &INTERRUPTED
}

/// Returns true if and only if a stop was requested.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The end of a run over sessions that may have used `--model auto`: true
/// when a stop was requested, after saying so on stderr with what was left
/// `unfinished`; otherwise false, after the notice of the sessions given the
/// default window, if any.
pub fn stopped(unfinished: &str, defaulted: &config::DefaultedCount) -> bool {
    if interrupted() {
        eprintln!("compactor: interrupted; {unfinished}");
        return true;
    }
    if let Some(notice) = defaulted.notice() {
        eprintln!("{notice}");
    }
    false
}

/// Runs `work` on every item of `reading`'s inputs, on its pool, and feeds
/// `sink` the results in input order: [`compactor::exec::run_ordered`] with
/// the CLI's in-flight bound and Ctrl-C flag. The caller checks [`interrupted`] after.
pub fn run_items<O: Send>(
    reading: &Reading,
    work: impl Fn(compactor::pipeline::Item) -> O + Sync,
    sink: impl FnMut(O) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut reader = reading.reader();
    compactor::exec::run_ordered(
        &reading.pool,
        config::in_flight(&reading.pool),
        interrupt_flag(),
        || {
            let item = reader.next_item();
            // Items come in input order, so these lines do too.
            if let Some(compactor::pipeline::Item::Start { input, format, .. }) = &item
                && reading.verbose
            {
                eprintln!("compactor: {}: {format}", reading.inputs[*input].display);
            }
            item
        },
        work,
        sink,
    )?;
    note_skipped(&reading.inputs, reader.skipped());
    Ok(())
}

/// Files named in the note on skipped non-transcripts; the rest are counted.
const SKIPPED_NAMED: usize = 5;

/// The one note on the files a directory walk found that are no transcript
/// (`compactor::pipeline::sniff`): how many, and the first few with what each is.
pub fn note_skipped(
    inputs: &[compactor::io::Input],
    skipped: &[(usize, compactor::pipeline::sniff::NotTranscript)],
) {
    if skipped.is_empty() {
        return;
    }
    let mut named: Vec<String> = skipped
        .iter()
        .take(SKIPPED_NAMED)
        .map(|(i, what)| format!("{} ({what})", inputs[*i].display))
        .collect();
    if skipped.len() > SKIPPED_NAMED {
        named.push(format!("and {} more", messages::n((skipped.len() - SKIPPED_NAMED) as u64)));
    }
    eprintln!(
        "compactor: note: skipped {}: {}; name a file to read it anyway",
        messages::counted(
            skipped.len() as u64,
            "file that is not a transcript",
            "files that are not transcripts"
        ),
        named.join(", ")
    );
}

/// The summarizer's line under the summary: bodies used (cached), fallbacks
/// by reason, requests and the summarizer's own tokens; `None` when no
/// summary was asked of it.
pub fn summarizer_line(s: &compactor::policy::summary_writer::SummarizerCounts) -> Option<String> {
    if s.is_empty() {
        return None;
    }
    let reasons: Vec<String> = s.reasons.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    let reasons =
        if reasons.is_empty() { String::new() } else { format!(" ({})", reasons.join(", ")) };
    Some(format!(
        "compactor: summarizer: {} used ({} cached), {} fallback{reasons}; {}, {} prompt + {} completion tokens",
        compactor::figures::thousands(s.used),
        compactor::figures::thousands(s.cached),
        compactor::figures::thousands(s.fallback),
        match s.calls {
            1 => "1 request".to_string(),
            n => format!("{} requests", compactor::figures::thousands(n)),
        },
        compactor::figures::thousands(s.prompt_tokens),
        compactor::figures::thousands(s.completion_tokens),
    ))
}
