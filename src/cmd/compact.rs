//! `compactor compact`: read sessions, compact them in parallel, write them in
//! input order, with an optional per-session report and rejects file.
//!
//! Reading, compacting and writing overlap through [`compactor::exec::run_ordered`]:
//! one thread reads, the pool compacts, this thread writes in input order, and
//! memory is bounded by the few sessions in flight (`config::in_flight`).

use crate::cli::args::CompactArgs;
use crate::cli::config;
use crate::cmd::ExitStatus;
use crate::messages::err_message;
use anyhow::{Context, bail};
use compactor::formats::{Format, Unit};
use compactor::io::manifest::{self, Fingerprint, Manifest};
use compactor::io::output::{Layout, SessionWriter, Target};
use compactor::io::{Container, Input, ReadOptions, expand_inputs};
use compactor::pipeline::{Engine, Item, JobReader, Output, Processed};
use compactor::report::RejectKind;
use compactor::report::RunSummary;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub fn run(args: &CompactArgs) -> anyhow::Result<ExitStatus> {
    if args.input.from == "arrow-ipc" || args.to == "arrow-ipc" {
        return crate::cmd::compact_arrow::run(args);
    }
    let all_inputs = expand_inputs(&args.input.inputs)?;
    let target = Target::parse(&args.output);
    refuse_overwrites(&all_inputs, &target, args.report.as_deref(), args.rejects.as_deref())?;
    refuse_output_inside_inputs(&args.input.inputs, &target)?;
    let mut resume = Resume::start(args, &target, all_inputs)?;
    let mut manifest = resume.manifest.take();
    let inputs = &resume.todo;
    let mut policy = config::policy(args.mode, &args.budget, args.force, args.target_tokens)?;
    // Retention figures live only in report rows: without `--report` nobody
    // reads them, and measuring them reads the anchors of every whole input
    // and searches every output (~10% of a `--counter hermes` run).
    policy.measure_retention = args.report.is_some();
    let meter = config::meter(&args.budget);
    let pool = config::thread_pool(args.input.threads)?;
    let (mut to, mut parquet_out) = config::output_format(&args.to)?;
    if let Target::File(p) = &target
        && layout_for_name(p) == Layout::Parquet
    {
        if to.is_some_and(|f| f != Format::OpenAi) {
            bail!(
                "{}: a Parquet output holds OpenAI-shaped rows; drop --to {} or choose another name",
                p.display(),
                args.to
            );
        }
        (to, parquet_out) = (Some(Format::OpenAi), true);
    }
    // JSON Lines out (stdout, a .jsonl file, or a directory of them): workers
    // serialize, the writer copies. Other layouts re-read what they are given.
    let lines = !parquet_out
        && match &target {
            Target::Stdout | Target::Dir(_) => true,
            Target::File(p) => layout_for_name(p) == Layout::Jsonl,
        };
    let engine = Engine {
        policy: &policy,
        meter: &meter,
        to,
        redact: args.redact,
        lines,
        shard: args.shard,
        keep_source_fields: args.keep_source_fields,
    };
    let options = ReadOptions {
        messages_column: args.input.messages_column.clone(),
        source_column: args.input.source_column.clone(),
    };
    let mut jobs =
        JobReader::new(inputs, config::input_format(&args.input.from)?).with_options(options);

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
    // A file dialect's sessions are files: several of them in one output are
    // one stream of events that no tool reads back as sessions.
    let concatenates = inputs.len() > 1 && !matches!(target, Target::Dir(_));
    let progress = progress_bar(inputs, args.quiet);
    let mut summary = RunSummary { inputs: inputs.len(), ..RunSummary::default() };
    // Each input's own totals, for its manifest entry.
    let mut tally = vec![RunSummary::default(); inputs.len()];
    let mut per_file: Option<(SessionWriter, PathBuf)> = None;
    let mut finished_files = 0usize;

    let stop = crate::cmd::interrupt_flag();
    compactor::exec::run_ordered(
        &pool,
        config::in_flight(&pool),
        stop,
        || jobs.next_item(),
        |item| engine.process_item(item),
        |processed| {
            for item in processed {
                match item {
                    Processed::Item(Item::Start { input, container, format }) => {
                        if args.verbose {
                            eprintln!("compactor: {}: {format}", inputs[input].display);
                        }
                        if let Target::Dir(dir) = &target {
                            let layout = layout_for(container, format, to, parquet_out);
                            let mut name = dir.join(&inputs[input].relative);
                            if layout == Layout::Parquet && container != Container::Parquet {
                                name = with_extension(&name, "parquet");
                            } else if layout != Layout::Parquet && container == Container::Parquet {
                                name = with_extension(&name, "jsonl");
                            }
                            per_file = Some((SessionWriter::file(&name, layout)?, name));
                        }
                    }
                    Processed::Item(Item::End { input }) => {
                        if let Some((w, name)) = per_file.take() {
                            w.finish()?;
                            finished_files += 1;
                            if let (Some(m), Target::Dir(dir)) = (manifest.as_mut(), &target) {
                                record_finished(m, dir, &resume, input, &name, &tally[input])?;
                            }
                        }
                        progress.inc(input_size(&inputs[input]));
                    }
                    Processed::Item(Item::Failed { input, error })
                        if in_shard(args, &error.source.to_string()) =>
                    {
                        tally[input].rejected += 1;
                        reject(
                            RejectKind::Unreadable,
                            &error.source.to_string(),
                            &error.message,
                            &error.raw,
                            &mut rejects,
                            &mut summary,
                            args,
                        )?;
                        if per_file.is_none() {
                            progress.inc(input_size(&inputs[input]));
                        }
                    }
                    Processed::Item(Item::Failed { input, .. }) => {
                        if per_file.is_none() {
                            progress.inc(input_size(&inputs[input]));
                        }
                    }
                    Processed::Item(Item::Job(_)) => {}
                    Processed::Session(done) => {
                        if to.is_none() && done.format.unit() == Unit::File && concatenates {
                            bail!(
                                "{}: {} holds one session per file, and {} inputs would be \
                                 concatenated into one output; write one file per input with \
                                 `-o DIR/`, or convert with --to openai, anthropic, sharegpt or \
                                 parquet (nothing was written)",
                                done.source.path,
                                done.format,
                                inputs.len()
                            );
                        }
                        let writer = per_file
                            .as_mut()
                            .map(|(w, _)| w)
                            .or(shared.as_mut())
                            .context("no output writer")?;
                        match &done.output {
                            Output::Raw(lines) => {
                                lines.iter().try_for_each(|l| writer.write_raw(l))?
                            }
                            Output::Values(values) => {
                                values.iter().try_for_each(|v| writer.write(v))?
                            }
                        }
                        if let Some(r) = report.as_mut() {
                            r.write(&serde_json::to_value(&done.row)?)?;
                        }
                        summary.add(&done.compaction);
                        summary.repairs.merge(&done.repairs);
                        tally[done.input].add(&done.compaction);
                    }
                    Processed::Rejected { source, .. } if !in_shard(args, &source.to_string()) => {}
                    Processed::Rejected { input, source, kind, reason, raw } => {
                        tally[input].rejected += 1;
                        reject(
                            kind,
                            &source.to_string(),
                            &reason,
                            &raw,
                            &mut rejects,
                            &mut summary,
                            args,
                        )?;
                    }
                }
            }
            Ok(())
        },
    )?;
    if crate::cmd::interrupted() {
        // Outputs not finished are dropped: their temporary files are deleted.
        drop(shared);
        drop(per_file);
        drop(report);
        drop(rejects);
        progress.finish_and_clear();
        let kept = if matches!(target, Target::Dir(_)) {
            format!(
                "{finished_files} of {} output files are complete and kept; \
                 run again with --resume to finish the rest",
                inputs.len()
            )
        } else {
            "no output was written".to_string()
        };
        eprintln!("compactor: interrupted after {} sessions; {kept}", summary.sessions);
        return Ok(ExitStatus::Interrupted);
    }
    match shared {
        // Nothing could be written: no output file, rather than an empty one
        // that a later run would read as a file of no sessions.
        Some(w) if summary.sessions == 0 && summary.rejected > 0 && target != Target::Stdout => {
            drop(w);
            eprintln!("compactor: every record was rejected; {} was not written", args.output);
        }
        Some(w) => w.finish()?,
        None => {}
    }
    if let Some(r) = report {
        r.finish()?;
    }
    if let Some(r) = rejects {
        r.finish()?;
    }
    progress.finish_and_clear();
    for e in &resume.skipped {
        summary.merge(&e.totals());
    }
    summary.inputs += resume.skipped.len();
    if !args.quiet {
        if !resume.skipped.is_empty() {
            eprintln!(
                "compactor: resumed: {} of {} inputs were finished by an earlier run and skipped",
                resume.skipped.len(),
                summary.inputs
            );
        }
        print_summary(&summary);
    }
    Ok(if summary.rejected > 0 { ExitStatus::Rejected } else { ExitStatus::Success })
}

/// The inputs a run has to do, and the manifest it keeps (directory outputs only).
struct Resume {
    /// Inputs to read, in order.
    todo: Vec<Input>,
    /// Their fingerprints (`None` for standard input, which is never skipped).
    fingerprints: Vec<Option<Fingerprint>>,
    /// Entries of the inputs skipped as finished.
    skipped: Vec<manifest::Entry>,
    options: String,
    manifest: Option<Manifest>,
}

impl Resume {
    /// Decides which inputs to skip (`--resume`) and starts the manifest.
    fn start(args: &CompactArgs, target: &Target, inputs: Vec<Input>) -> anyhow::Result<Resume> {
        let options = manifest::options_hash(&output_options(args));
        let Target::Dir(dir) = target else {
            if args.resume {
                bail!(
                    "--resume needs a directory output (-o DIR/), where each input has its own output file"
                );
            }
            let fingerprints = vec![None; inputs.len()];
            return Ok(Resume {
                todo: inputs,
                fingerprints,
                skipped: Vec::new(),
                options,
                manifest: None,
            });
        };
        let old = if args.resume { manifest::load(dir)? } else { Vec::new() };
        let (mut todo, mut fingerprints, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
        for input in inputs {
            let fp = input.path.as_deref().and_then(|p| Fingerprint::of(p, &input.relative).ok());
            match fp.as_ref().and_then(|fp| manifest::finished(&old, dir, fp, &options)) {
                Some(entry) => skipped.push(entry.clone()),
                None => {
                    todo.push(input);
                    fingerprints.push(fp);
                }
            }
        }
        let manifest = Some(Manifest::create(dir, &skipped)?);
        Ok(Resume { todo, fingerprints, skipped, options, manifest })
    }
}

/// Every option that changes the bytes written, as text for the manifest's
/// options hash (not threads, progress, or where reports and rejects go).
fn output_options(args: &CompactArgs) -> String {
    // Named only when set, so that manifests of earlier runs still match.
    let keep = if args.keep_source_fields { " keep_source_fields=true" } else { "" };
    format!(
        "mode={:?} budget={:?} force={} target_tokens={:?} from={} to={} messages_column={:?} \
         source_column={:?} shard={:?} redact={}{keep}",
        args.mode,
        args.budget,
        args.force,
        args.target_tokens,
        args.input.from,
        args.to,
        args.input.messages_column,
        args.input.source_column,
        args.shard.map(|s| s.to_string()),
        args.redact
    )
}

/// Appends a finished output to the manifest (after its rename).
fn record_finished(
    m: &mut Manifest,
    dir: &Path,
    resume: &Resume,
    input: usize,
    output: &Path,
    totals: &RunSummary,
) -> anyhow::Result<()> {
    let Some(fingerprint) = resume.fingerprints[input].clone() else { return Ok(()) };
    let output_size = std::fs::metadata(output)?.len();
    let output = output.strip_prefix(dir).unwrap_or(output).to_string_lossy().into_owned();
    m.append(&manifest::Entry {
        fingerprint,
        options: resume.options.clone(),
        output,
        output_size,
        sessions: totals.sessions,
        compacted: totals.compacted,
        over_trigger: totals.over_trigger,
        rejected: totals.rejected,
        tokens_before: totals.tokens_before,
        tokens_after: totals.tokens_after,
    })
}

/// Returns true if and only if a record without a session id (one that could
/// not be read) is reported by this shard: it is keyed by its source, so each
/// bad record is reported by exactly one of N shards.
pub(crate) fn in_shard(args: &CompactArgs, source: &str) -> bool {
    args.shard.is_none_or(|s| s.contains(source))
}

fn input_size(input: &Input) -> u64 {
    input.path.as_ref().and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len())
}

/// Reports a rejected record and writes it to the rejects file.
fn reject(
    kind: RejectKind,
    source: &str,
    reason: &str,
    raw: &[u8],
    rejects: &mut Option<RejectsFile>,
    summary: &mut RunSummary,
    args: &CompactArgs,
) -> anyhow::Result<()> {
    err_message!("{source}: {reason}");
    summary.reject(kind);
    if let Some(r) = rejects.as_mut() {
        if args.redact {
            let mut masked = compactor::redact::Masked::new();
            let text = String::from_utf8_lossy(raw);
            r.write(compactor::redact::redact(&text, &mut masked).as_bytes())?;
        } else {
            r.write(raw)?;
        }
    }
    if args.strict {
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
    let name = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst")).unwrap_or(&name);
    if name.ends_with(".json") {
        Layout::Array
    } else if name.ends_with(".parquet") {
        Layout::Parquet
    } else {
        Layout::Jsonl
    }
}

/// Layout of a per-input output: the input's own, unless a conversion
/// turns one session per file into one session per line, or asks for Parquet.
fn layout_for(container: Container, from: Format, to: Option<Format>, parquet_out: bool) -> Layout {
    if parquet_out || (container == Container::Parquet && to.is_none()) {
        return Layout::Parquet;
    }
    let to = to.unwrap_or(from);
    if from.unit() == Unit::File && to.unit() == Unit::Record {
        return Layout::Jsonl;
    }
    match container {
        Container::Jsonl | Container::Parquet => Layout::Jsonl,
        Container::Document => Layout::Document,
        Container::DocumentArray => Layout::Array,
    }
}

/// `dir/a.jsonl.gz` → `dir/a.parquet`: the name with every extension replaced by `ext`.
fn with_extension(path: &Path, ext: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.split('.').next().filter(|s| !s.is_empty()).unwrap_or("out");
    path.with_file_name(format!("{stem}.{ext}"))
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

/// Refuses an output inside an input directory: the next run over that
/// directory would read this run's outputs (and manifest) as inputs.
fn refuse_output_inside_inputs(inputs: &[String], target: &Target) -> anyhow::Result<()> {
    let out = match target {
        Target::Stdout => return Ok(()),
        Target::File(p) | Target::Dir(p) => p,
    };
    let Ok(out_abs) = std::path::absolute(out) else { return Ok(()) };
    for input in inputs.iter().map(Path::new).filter(|p| p.is_dir()) {
        let Ok(dir) = std::fs::canonicalize(input) else { continue };
        // The output may not exist yet: resolve its nearest existing ancestor.
        let mut existing = out_abs.as_path();
        let mut rest = Vec::new();
        while !existing.exists() {
            let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                break;
            };
            rest.push(name);
            existing = parent;
        }
        let Ok(mut resolved) = std::fs::canonicalize(existing) else { continue };
        resolved.extend(rest.iter().rev());
        if resolved.starts_with(&dir) {
            bail!(
                "{}: the output is inside the input directory {}; a later run over it would \
                 read these outputs as inputs: write outside it",
                out.display(),
                input.display()
            );
        }
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
    bar.set_position(0);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
    {
        bar.set_style(style);
    }
    bar
}

pub(crate) fn print_summary(s: &RunSummary) {
    let rejected = if s.rejected > 0 {
        let kinds: Vec<String> =
            s.rejected_by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let kinds =
            if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join(", ")) };
        format!("; {}{kinds}", plural(s.rejected as u64, "record rejected", "records rejected"))
    } else {
        String::new()
    };
    let repairs = if s.repairs.is_empty() {
        String::new()
    } else {
        let kinds: Vec<String> =
            s.repairs.by_name().iter().map(|(k, n)| format!("{n} {k}")).collect();
        let n = plural(s.repairs.total(), "repair", "repairs");
        format!("; {n} to make valid requests ({})", kinds.join(", "))
    };
    eprintln!(
        "compactor: {} from {}, {} compacted ({} still over the trigger): {} -> {} tokens ({:.1}% saved){repairs}{rejected}",
        plural(s.sessions as u64, "session", "sessions"),
        plural(s.inputs as u64, "input", "inputs"),
        s.compacted,
        s.over_trigger,
        s.tokens_before,
        s.tokens_after,
        s.saved_pct()
    );
}

/// `1 session`, `2 sessions`.
fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {many}") }
}
