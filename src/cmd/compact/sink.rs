//! Where `compact`'s processed items go, in input order: the session outputs
//! (one shared file or standard output, or one file per input under `-o
//! DIR/`), the manifest entry of each finished output file, the report and
//! rejects ([`Ledger`]), and the progress bar.
//!
//! The writer thread calls [`Sink::accept`] for every [`Processed`] item and
//! then [`Sink::finish`] (or [`Sink::abandon`] when interrupted). `open_file`
//! is the only code that opens a session output file; [`Outputs`] holds the
//! open ones and commits the finished ones. The report and rejects files are
//! opened by [`Ledger::create`], the Arrow IPC stream in `super::arrow`.

use super::ledger::Ledger;
use super::resume::Resume;
use crate::cli::config::{Compact, Files};
use anyhow::{Context, bail};
use compactor::formats::{Format, Unit};
use compactor::io::output::{Layout, SessionWriter, Target};
use compactor::io::sync_batch::SyncBatch;
use compactor::io::{Container, Input};
use compactor::pipeline::{Done, Item, Output, Processed, layout_for};
use compactor::report::RunSummary;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The session outputs of a run: the shared one, or the current input's.
struct Outputs {
    /// Standard output or `-o FILE`: every session, in input order.
    shared: Option<SessionWriter>,
    /// Under `-o DIR/`: the current input's output file.
    per_file: Option<SessionWriter>,
    /// Output files finished under `-o DIR/` and waiting to be made durable
    /// together, with the input and totals of each for its manifest entry.
    batch: SyncBatch,
    awaiting: Vec<(usize, RunSummary)>,
    /// Output files committed under `-o DIR/`.
    finished_files: usize,
}

impl Outputs {
    /// Makes the waiting output files durable, renames them into place and
    /// records them in the manifest (after their renames).
    fn commit(&mut self, resume: &mut Resume, target: &Target) -> anyhow::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let names = self.batch.commit()?;
        self.finished_files += names.len();
        let finished: Vec<_> = std::mem::take(&mut self.awaiting)
            .into_iter()
            .zip(names)
            .map(|((input, totals), name)| (input, name, totals))
            .collect();
        match target {
            Target::Dir(dir) => resume.record(dir, &finished),
            _ => Ok(()),
        }
    }
}

/// The writer side of a `compact` run over files.
pub struct Sink<'a> {
    cfg: &'a Compact,
    files: &'a Files,
    /// The inputs read, in order (those `--resume` did not skip).
    inputs: &'a [Input],
    resume: Resume,
    outputs: Outputs,
    ledger: Ledger,
    /// Each input's own totals, for its manifest entry.
    tally: Vec<RunSummary>,
    progress: ProgressBar,
}

impl<'a> Sink<'a> {
    /// Opens the report, the rejects file and the shared output.
    pub fn create(
        cfg: &'a Compact,
        files: &'a Files,
        inputs: &'a [Input],
        resume: Resume,
    ) -> anyhow::Result<Sink<'a>> {
        let mut ledger = Ledger::create(cfg)?;
        let shared = match &files.target {
            Target::Stdout => Some(SessionWriter::stdout()),
            Target::File(p) => Some(open_file(p, files.file_layout)?),
            Target::Dir(_) => None,
        };
        ledger.summary.inputs = inputs.len();
        Ok(Sink {
            cfg,
            files,
            inputs,
            tally: vec![RunSummary::default(); inputs.len()],
            progress: progress_bar(inputs, cfg.quiet),
            resume,
            outputs: Outputs {
                shared,
                per_file: None,
                batch: SyncBatch::default(),
                awaiting: Vec::new(),
                finished_files: 0,
            },
            ledger,
        })
    }

    /// Takes one processed item, in input order.
    pub fn accept(&mut self, item: Processed) -> anyhow::Result<()> {
        self.take(item)?;
        if self.outputs.batch.is_due() {
            self.outputs.commit(&mut self.resume, &self.files.target)?;
        }
        Ok(())
    }

    fn take(&mut self, item: Processed) -> anyhow::Result<()> {
        match item {
            Processed::Item(Item::Start { input, container, format }) => {
                self.start(input, container, format)
            }
            Processed::Item(Item::End { input }) => self.end(input),
            Processed::Unreadable { input } => {
                if self.outputs.per_file.is_none() {
                    self.progress.inc(self.inputs[input].size_on_disk().unwrap_or(0));
                }
                Ok(())
            }
            // The engine turns a failed file into `Rejected` and `Unreadable`.
            Processed::Item(Item::Failed { .. }) => Ok(()),
            Processed::Item(Item::Job(_)) => Ok(()),
            Processed::Session(done) => self.session(*done),
            // The engine gives back only this shard's.
            Processed::Rejected { input, source, kind, reason, raw } => {
                let source = source.to_string();
                self.tally[input].rejected += 1;
                self.ledger.reject(kind, &source, &reason, raw)
            }
        }
    }

    /// A file starts: under `-o DIR/`, its output file opens.
    fn start(&mut self, input: usize, container: Container, format: Format) -> anyhow::Result<()> {
        let inputs = self.inputs;
        if self.files.verbose {
            eprintln!("compactor: {}: {format}", inputs[input].display);
        }
        if let Target::Dir(dir) = &self.files.target {
            let layout = layout_for(container, format, self.files.to, self.files.parquet);
            let mut name = dir.join(&inputs[input].relative);
            if layout == Layout::Parquet && container != Container::Parquet {
                name = with_extension(&name, "parquet");
            } else if layout != Layout::Parquet && container == Container::Parquet {
                name = with_extension(&name, "jsonl");
            }
            self.outputs.per_file = Some(open_file(&name, layout)?);
        }
        Ok(())
    }

    /// A file ends: its output file (if its own) is finished and recorded.
    fn end(&mut self, input: usize) -> anyhow::Result<()> {
        let finished = self.outputs.per_file.take().map(SessionWriter::finish_unsynced);
        if let Some(file) = finished.transpose()?.flatten() {
            self.outputs.awaiting.push((input, self.tally[input].clone()));
            self.outputs.batch.push(file);
        }
        self.progress.inc(self.inputs[input].size_on_disk().unwrap_or(0));
        Ok(())
    }

    /// Writes a session, then its report row.
    fn session(&mut self, done: Done) -> anyhow::Result<()> {
        // A file dialect's sessions are files: several of them in one output are
        // one stream of events that no tool reads back as sessions.
        let concatenates = self.inputs.len() > 1 && !matches!(self.files.target, Target::Dir(_));
        if self.files.to.is_none() && done.format.unit() == Unit::File && concatenates {
            bail!(
                "{}: {} holds one session per file, and {} inputs would be \
                 concatenated into one output; write one file per input with \
                 `-o DIR/`, or convert with --to openai, anthropic, sharegpt or \
                 parquet (nothing was written)",
                done.source.path,
                done.format,
                self.inputs.len()
            );
        }
        let writer = self
            .outputs
            .per_file
            .as_mut()
            .or(self.outputs.shared.as_mut())
            .context("no output writer")?;
        let source = done.source.to_string();
        writer.origin(&done.id, &source);
        match done.output {
            Output::Raw(lines) => lines.iter().try_for_each(|l| writer.write_raw(l)),
            Output::Values(values) => values.iter().try_for_each(|v| writer.write(v)),
            Output::Pretty(records) => {
                records.into_iter().try_for_each(|r| writer.write_laid_out(r))
            }
        }
        .with_context(|| format!("{source}: writing its session"))?;
        self.ledger.session(&done.row, done.window.as_ref(), &done.compaction, &done.repairs)?;
        self.tally[done.input].add(&done.compaction);
        Ok(())
    }

    /// Finishes every output. An output file of a run whose every record was
    /// rejected is not written, rather than left empty for a later run to read
    /// as a file of no sessions. Returns the run's totals, inputs skipped by
    /// `--resume` included.
    pub fn finish(self) -> anyhow::Result<RunSummary> {
        let Sink { cfg, files, mut resume, mut outputs, ledger, progress, .. } = self;
        outputs.commit(&mut resume, &files.target)?;
        match outputs.shared {
            Some(w)
                if ledger.summary.sessions == 0
                    && ledger.summary.rejected > 0
                    && files.target != Target::Stdout =>
            {
                drop(w);
                eprintln!(
                    "compactor: every record was rejected; {} was not written",
                    files.output_arg
                );
            }
            Some(w) => w.finish()?,
            None => {}
        }
        let mut summary = ledger.finish()?;
        progress.finish_and_clear();
        for e in &resume.skipped {
            summary.merge(&RunSummary::from_manifest(e));
        }
        summary.inputs += resume.skipped.len();
        if !resume.skipped.is_empty() && !cfg.quiet {
            eprintln!(
                "compactor: resumed: {} of {} inputs were finished by an earlier run and skipped",
                resume.skipped.len(),
                summary.inputs
            );
        }
        Ok(summary)
    }

    /// Stops at a fatal `error` (an output that cannot be opened or written):
    /// under `-o DIR/`, the output files of the inputs before the one that
    /// failed are complete, so they are committed and recorded in the
    /// manifest, whatever batch they were waiting in; the rest are dropped.
    /// Which files are kept therefore depends on the input order alone, not on
    /// the timing of batches (before, a file still waiting was deleted). Says
    /// what was kept, and returns the error to report.
    pub fn stop(self, error: anyhow::Error) -> anyhow::Error {
        let Sink { files, inputs, mut resume, mut outputs, ledger, progress, .. } = self;
        drop(outputs.per_file.take());
        let committed = outputs.commit(&mut resume, &files.target);
        drop(ledger);
        progress.finish_and_clear();
        if matches!(files.target, Target::Dir(_)) {
            eprintln!(
                "compactor: stopped by an error; {}",
                kept_files(outputs.finished_files, inputs.len())
            );
        }
        match committed {
            Ok(()) => error,
            Err(e) => error.context(format!("and keeping the finished output files failed: {e:#}")),
        }
    }

    /// Stops without finishing: outputs not finished are dropped (their
    /// temporary files are deleted). Says what was kept.
    pub fn abandon(self) {
        let Sink { files, inputs, outputs, ledger, progress, .. } = self;
        let Outputs { shared, per_file, batch, finished_files, .. } = outputs;
        drop(shared);
        drop(per_file);
        drop(batch);
        let summary = ledger.abandon();
        progress.finish_and_clear();
        let kept = if matches!(files.target, Target::Dir(_)) {
            kept_files(finished_files, inputs.len())
        } else {
            "no output was written".to_string()
        };
        eprintln!(
            "compactor: interrupted after {}; {kept}",
            crate::cmd::messages::counted(summary.sessions as u64, "session", "sessions")
        );
    }
}

/// What a run that stops early says it kept under `-o DIR/`.
fn kept_files(finished: usize, inputs: usize) -> String {
    format!(
        "{} of {} output files are complete and kept; run again with --resume to finish the rest",
        crate::cmd::messages::n(finished as u64),
        crate::cmd::messages::n(inputs as u64)
    )
}

/// The output file at `path` in `layout` (a Parquet one with the session row
/// mapping of `formats::parquet`).
fn open_file(path: &Path, layout: Layout) -> anyhow::Result<SessionWriter> {
    match layout.text() {
        Some(text) => SessionWriter::file(path, text),
        None => Ok(SessionWriter::parquet(compactor::formats::parquet::writer(path)?)),
    }
}

/// `dir/a.jsonl.gz` → `dir/a.parquet`: the name with every extension replaced by `ext`.
fn with_extension(path: &Path, ext: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.split('.').next().filter(|s| !s.is_empty()).unwrap_or("out");
    path.with_file_name(format!("{stem}.{ext}"))
}

fn progress_bar(inputs: &[Input], quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let total: u64 = inputs.iter().filter_map(Input::size_on_disk).sum();
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_position(0);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
    {
        bar.set_style(style);
    }
    bar
}
