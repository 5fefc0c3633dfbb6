//! `compactor compact`: read sessions, compact them in parallel, write them in
//! input order, with an optional per-session report and rejects file.
//!
//! Memory is bounded by the batch in flight: records are read in batches of at
//! most [`BATCH_RECORDS`] records or [`BATCH_BYTES`] bytes, each batch is
//! processed on the worker pool and written before the next is read.

use crate::cli::args::CompactArgs;
use crate::cli::config;
use crate::cmd::ExitStatus;
use crate::messages::err_message;
use anyhow::{Context, bail};
use compactor::io::output::{Layout, SessionWriter, Target};
use compactor::io::{Container, Input, RawRecord, ReadError, RecordReader, expand_inputs};
use compactor::pipeline::{Engine, Output, Processed};
use compactor::report::RunSummary;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Most records read before a batch is processed.
pub const BATCH_RECORDS: usize = 512;
/// Most input bytes read before a batch is processed.
pub const BATCH_BYTES: u64 = 64 << 20;

pub fn run(args: &CompactArgs) -> anyhow::Result<ExitStatus> {
    let inputs = expand_inputs(&args.inputs)?;
    let target = Target::parse(&args.output);
    refuse_overwrites(&inputs, &target, args.report.as_deref(), args.rejects.as_deref())?;
    let policy = config::policy(args.mode, &args.budget, args.force, args.target_tokens)?;
    let meter = config::meter(&args.budget);
    let pool = config::thread_pool(args.threads)?;
    let engine = Engine {
        policy: &policy,
        meter: &meter,
        from: config::input_format(&args.from)?,
        to: config::output_format(&args.to)?,
    };

    let report_to_stdout = args.report.as_deref().is_some_and(|p| p == Path::new("-"));
    if report_to_stdout && target == Target::Stdout {
        bail!(
            "--report - and -o - would both write to standard output; send one of them to a file"
        );
    }
    let mut report = match args.report.as_deref() {
        Some(_) if report_to_stdout => Some(SessionWriter::stdout()),
        Some(p) => Some(SessionWriter::file(p, Layout::Jsonl)?),
        None => None,
    };
    let mut rejects = args.rejects.as_deref().map(RejectsFile::create).transpose()?;
    let mut shared = match &target {
        Target::Stdout => Some(SessionWriter::stdout()),
        Target::File(p) => Some(SessionWriter::file(p, layout_for_name(p))?),
        Target::Dir(_) => None,
    };
    let progress = progress_bar(&inputs, args.quiet);
    let mut summary = RunSummary::default();
    let mut done_bytes = 0u64;

    for input in &inputs {
        let size =
            input.path.as_ref().and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len());
        let mut reader = match RecordReader::open(input) {
            Ok(r) => r,
            Err(e) => {
                reject(
                    &e.source.to_string(),
                    &e.message,
                    &e.raw,
                    &mut rejects,
                    &mut summary,
                    args.strict,
                )?;
                done_bytes += size;
                continue;
            }
        };
        summary.inputs += 1;
        let mut per_file = match &target {
            Target::Dir(dir) => Some(SessionWriter::file(
                &dir.join(&input.relative),
                layout_for(reader.container()),
            )?),
            Target::Stdout | Target::File(_) => None,
        };
        loop {
            let (batch, read_error) = next_batch(&mut reader);
            if batch.is_empty() && read_error.is_none() {
                break;
            }
            let results = pool.install(|| engine.process_batch(batch));
            let writer = per_file.as_mut().or(shared.as_mut()).context("no output writer")?;
            for item in results {
                match item {
                    Processed::Session(done) => {
                        match &done.output {
                            Output::Raw(bytes) => writer.write_raw(bytes)?,
                            Output::Value(v) => writer.write(v)?,
                        }
                        if let Some(r) = report.as_mut() {
                            r.write(&serde_json::to_value(&done.row)?)?;
                        }
                        summary.add(&done.compaction);
                    }
                    Processed::Rejected { source, reason, raw } => {
                        reject(
                            &source.to_string(),
                            &reason,
                            &raw,
                            &mut rejects,
                            &mut summary,
                            args.strict,
                        )?;
                    }
                }
            }
            if let Some(e) = read_error {
                reject(
                    &e.source.to_string(),
                    &e.message,
                    &e.raw,
                    &mut rejects,
                    &mut summary,
                    args.strict,
                )?;
                break;
            }
            progress.set_position(done_bytes + reader.bytes_read().min(size));
        }
        if let Some(w) = per_file {
            w.finish()?;
        }
        done_bytes += size;
        progress.set_position(done_bytes);
    }
    if let Some(w) = shared {
        w.finish()?;
    }
    if let Some(r) = report {
        r.finish()?;
    }
    if let Some(r) = rejects {
        r.finish()?;
    }
    progress.finish_and_clear();
    if !args.quiet {
        print_summary(&summary);
    }
    Ok(if summary.rejected > 0 { ExitStatus::Rejected } else { ExitStatus::Success })
}

/// Reads up to one batch of records; a read error ends the input.
fn next_batch(reader: &mut RecordReader) -> (Vec<RawRecord>, Option<ReadError>) {
    let mut batch = Vec::new();
    let start = reader.bytes_read();
    while batch.len() < BATCH_RECORDS && reader.bytes_read() - start < BATCH_BYTES {
        match reader.next_record() {
            Some(Ok(r)) => batch.push(r),
            Some(Err(e)) => return (batch, Some(e)),
            None => break,
        }
    }
    (batch, None)
}

/// Reports a rejected record and writes it to the rejects file.
fn reject(
    source: &str,
    reason: &str,
    raw: &[u8],
    rejects: &mut Option<RejectsFile>,
    summary: &mut RunSummary,
    strict: bool,
) -> anyhow::Result<()> {
    err_message!("{source}: {reason}");
    summary.rejected += 1;
    if let Some(r) = rejects.as_mut() {
        r.write(raw)?;
    }
    if strict {
        bail!("stopped at the first rejected record (--strict); no output was written");
    }
    Ok(())
}

/// Rejected records, each written unchanged on its own line.
struct RejectsFile {
    file: compactor::io::output::AtomicFile,
}

impl RejectsFile {
    fn create(path: &Path) -> anyhow::Result<RejectsFile> {
        Ok(RejectsFile { file: compactor::io::output::AtomicFile::create(path)? })
    }

    fn write(&mut self, raw: &[u8]) -> anyhow::Result<()> {
        use std::io::Write;
        self.file.file().write_all(raw)?;
        self.file.file().write_all(b"\n")?;
        Ok(())
    }

    fn finish(self) -> anyhow::Result<()> {
        self.file.commit()
    }
}

/// Layout of a single output file, from its name.
fn layout_for_name(path: &Path) -> Layout {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    if name.ends_with(".json") { Layout::Array } else { Layout::Jsonl }
}

/// Layout of a per-input output: the input's own.
fn layout_for(container: Container) -> Layout {
    match container {
        Container::Jsonl => Layout::Jsonl,
        Container::Document => Layout::Document,
        Container::DocumentArray => Layout::Array,
    }
}

/// Refuses any output (sessions, report, rejects) that is an input, and two
/// inputs that would write the same output file.
fn refuse_overwrites(
    inputs: &[Input],
    target: &Target,
    report: Option<&Path>,
    rejects: Option<&Path>,
) -> anyhow::Result<()> {
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    let input_paths: HashSet<PathBuf> =
        inputs.iter().filter_map(|i| i.path.as_deref()).filter_map(canonical).collect();
    let check = |out: &Path, what: &str| -> anyhow::Result<()> {
        if canonical(out).is_some_and(|c| input_paths.contains(&c)) {
            bail!(
                "{}: the {what} would overwrite an input; choose another output path",
                out.display()
            );
        }
        Ok(())
    };
    match target {
        Target::Stdout => {}
        Target::File(p) => check(p, "output")?,
        Target::Dir(dir) => {
            let mut seen = HashSet::new();
            for input in inputs {
                let out = dir.join(&input.relative);
                check(&out, "output")?;
                if !seen.insert(out.clone()) {
                    bail!(
                        "{}: two inputs would be written to the same output file\nhint: pass their common directory instead of the files",
                        out.display()
                    );
                }
            }
        }
    }
    if let Some(p) = report {
        check(p, "report")?;
    }
    if let Some(p) = rejects {
        check(p, "rejects file")?;
    }
    Ok(())
}

fn progress_bar(inputs: &[Input], quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let total: u64 = inputs
        .iter()
        .filter_map(|i| i.path.as_ref())
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
    {
        bar.set_style(style);
    }
    bar
}

fn print_summary(s: &RunSummary) {
    let rejected =
        if s.rejected > 0 { format!("; {} records rejected", s.rejected) } else { String::new() };
    eprintln!(
        "compactor: {} sessions from {} inputs, {} compacted: {} -> {} tokens ({:.1}% saved){rejected}",
        s.sessions,
        s.inputs,
        s.compacted,
        s.tokens_before,
        s.tokens_after,
        s.saved_pct()
    );
}
