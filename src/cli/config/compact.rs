//! `compact`, resolved: the arguments become, once, everything the run needs
//! (inputs, policy, meter, workers, where each output goes and in what
//! layout), and outputs that would overwrite an input or land inside an input
//! directory are refused here, before anything is written.
//!
//! Two routes ([`Route`]): files (`-o FILE`, `-o DIR/`, standard output; the
//! session layouts of [`Layout`]) and an Arrow IPC stream (`--from arrow-ipc
//! --to arrow-ipc`, the Spark and Ray worker contract).

use super::{inputs, meter, policy, read_options, thread_pool};
use crate::cli::args::{BudgetArgs, CompactArgs};
use crate::cli::values::{InputFormat, OutputFormat, ReportDest};
use anyhow::bail;
use compactor::formats::Format;
use compactor::io::manifest;
use compactor::io::output::{Layout, Target};
use compactor::io::record_limit::DEFAULT_MAX_RECORD_BYTES;
use compactor::io::{Input, ReadOptions, expand_inputs};
use compactor::model::History;
use compactor::pipeline::Policies;
use compactor::pipeline::shard::Shard;
use compactor::pipeline::{Engine, Handover};
use compactor::policy::Policy;
use compactor::tokens::Meter;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// `compact`'s high-level configuration.
pub struct Compact {
    pub policy: Policy,
    /// `--model auto`: each session's policy by its log's model (`policy` is
    /// the default window's).
    pub policies: Option<Policies>,
    pub meter: Meter,
    pub pool: rayon::ThreadPool,
    pub read: ReadOptions,
    /// `--history`: which part of an agent's log becomes messages.
    pub history: History,
    pub report: Option<ReportDest>,
    pub rejects: Option<PathBuf>,
    pub shard: Option<Shard>,
    pub strict: bool,
    pub redact: bool,
    pub quiet: bool,
    pub route: Route,
}

/// The way sessions go through a run: from files to files (or standard
/// output), or one Arrow IPC stream to another (the input side's container is
/// [`compactor::io::Container`]).
pub enum Route {
    Files(Files),
    Arrow(Arrow),
}

/// Sessions read from files and written as files (or standard output).
pub struct Files {
    pub inputs: Vec<Input>,
    /// `--from`: `None` detects each file's dialect.
    pub from: Option<Format>,
    pub target: Target,
    /// The layout of a [`Target::File`], from its name.
    pub file_layout: Layout,
    /// `-o` as given, for messages.
    pub output_arg: String,
    /// `--to`: `None` writes each input's own dialect.
    pub to: Option<Format>,
    /// The output is Parquet (`--to parquet`, or a `.parquet` output file).
    pub parquet: bool,
    /// What the workers hand the writer: JSON lines for JSON Lines out
    /// (stdout, a `.jsonl` file), each input's own layout under `-o DIR/`
    /// (lines, or documents laid out pretty), so that the writer copies
    /// bytes; `Value`s for Parquet or one pretty output file.
    pub handover: Handover,
    pub keep_source_fields: bool,
    pub resume: bool,
    pub verbose: bool,
    /// Every option that changes the bytes written, as text for the
    /// manifest's options hash.
    pub options: String,
}

/// One Arrow IPC stream in, one out.
pub struct Arrow {
    pub input: Input,
    /// `None`: standard output.
    pub output: Option<PathBuf>,
}

impl Compact {
    /// Resolves `compact`'s arguments. The outputs are checked first, then the
    /// policy is built, then the formats: the order in which the errors are
    /// given.
    pub fn from_args(args: &CompactArgs) -> anyhow::Result<Compact> {
        // `--model auto` is asked for by name here: without it `compact` keeps
        // one window (the default), so that its fast path (untouched lines
        // passed through after a skim) stays on.
        let auto = super::windows::is_auto(&args.budget, super::windows::Unnamed::OneWindow);
        let arrow_ipc =
            args.input.from == InputFormat::ArrowIpc || args.to == OutputFormat::ArrowIpc;
        // The outputs, checked: an Arrow stream's, or the files' (made `Files`
        // with the formats below).
        let checked = if arrow_ipc { Err(arrow(args)?) } else { Ok(files_outputs(args)?) };
        let mut policy = match &args.policy {
            Some(p) => {
                super::policy_of(&super::spec(p)?, &args.budget, args.force, args.target_tokens)?
            }
            None => policy(args.mode, &args.budget, args.force, args.target_tokens)?,
        };
        policy.summarizer = super::summarizer(&args.summarizer)?;
        let meter = meter(&args.budget);
        let pool = thread_pool(args.input.threads)?;
        let route = match checked {
            Ok(outputs) => {
                // Retention figures live only in report rows: without `--report`
                // nobody reads them, and measuring them reads the anchors of every
                // whole input and searches every output (a visible share of a
                // `--counter hermes` run).
                policy.measure_retention = args.report.is_some();
                Route::Files(files_formats(args, outputs)?)
            }
            Err(stream) => Route::Arrow(stream),
        };
        let policies = if auto {
            let table = super::model_table(args.budget.models_file.as_deref())?;
            Some(Policies::new(policy.clone(), Some((table, args.budget.threshold_cap))))
        } else {
            None
        };
        Ok(Compact {
            policy,
            policies,
            meter,
            pool,
            read: read_options_keeping(&args.input, args.rejects.as_deref()),
            history: args.input.history.resolve(),
            report: args.report.clone(),
            rejects: args.rejects.clone(),
            shard: args.shard,
            strict: args.strict,
            redact: args.redact,
            quiet: args.quiet,
            route,
        })
    }

    /// The engine every session goes through.
    pub fn engine(&self) -> Engine<'_> {
        let (to, handover, keep_source_fields, training) = match &self.route {
            Route::Files(f) => {
                (f.to, f.handover, f.keep_source_fields, f.parquet && !f.keep_source_fields)
            }
            // The worker mode is a row transport: other columns pass through, as
            // `--keep-source-fields` has them (the clean request drops them), and
            // rows are not made training rows (README, "Running on a cluster").
            Route::Arrow(_) => (Some(Format::OpenAi), Handover::Values, true, false),
        };
        Engine {
            policy: &self.policy,
            auto: self.policies.as_ref(),
            meter: &self.meter,
            // Each session is compacted once: memos sized for one compaction.
            caches: compactor::policy::Caches::new(compactor::policy::Reach::Session),
            to,
            redact: self.redact,
            handover,
            shard: self.shard,
            keep_source_fields,
            training,
        }
    }
}

/// The files plan, up to the formats: inputs, target, refusals. Without an
/// INPUT, the agents' own log folders, as the other readers read them; their
/// logs hold one session per file, so they are written one output per input
/// (`-o DIR/`), never concatenated.
fn files_outputs(args: &CompactArgs) -> anyhow::Result<FileOutputs> {
    let target = Target::parse(&args.output);
    let (inputs, roots) = if args.input.inputs.is_empty() {
        if !matches!(target, Target::Dir(_)) {
            bail!(
                "no INPUT given: compact would read the agents' own log folders, one session per \
                 file, which go to a directory\nhint: give -o DIR/ (one compacted log per log, under \
                 DIR/claude-code/ and DIR/codex/), or the files or directories to read"
            );
        }
        let found = super::discovery::inputs(args.quiet)?;
        let roots = found.folders.iter().map(|p| p.display().to_string()).collect();
        (found.inputs, roots)
    } else {
        (inputs(&args.input.inputs)?, args.input.inputs.clone())
    };
    refuse_overwrites(
        &inputs,
        &target,
        args.report.as_ref().and_then(ReportDest::file),
        args.rejects.as_deref(),
    )?;
    refuse_output_inside_inputs(&roots, &target)?;
    if args.resume && !matches!(target, Target::Dir(_)) {
        bail!(
            "--resume needs a directory output (-o DIR/), where each input has its own output file"
        );
    }
    let file_layout = match &target {
        Target::File(p) => layout_for_name(p),
        Target::Stdout | Target::Dir(_) => Layout::Jsonl,
    };
    Ok(FileOutputs { inputs, target, file_layout })
}

/// The files route's inputs and outputs, checked before the policy is built;
/// [`files_formats`] makes them [`Files`].
struct FileOutputs {
    inputs: Vec<Input>,
    target: Target,
    file_layout: Layout,
}

/// The rest of the files plan: `--to`, `--from`, and what they imply.
fn files_formats(args: &CompactArgs, outputs: FileOutputs) -> anyhow::Result<Files> {
    let FileOutputs { inputs, target, file_layout } = outputs;
    let (mut to, mut parquet) = args.to.dialect()?;
    if let Target::File(p) = &target
        && file_layout == Layout::Parquet
    {
        if to.is_some_and(|f| f != Format::OpenAi) {
            bail!(
                "{}: a Parquet output holds OpenAI-shaped rows; drop --to {} or choose another name",
                p.display(),
                args.to
            );
        }
        (to, parquet) = (Some(Format::OpenAi), true);
    }
    let handover = match &target {
        _ if parquet => Handover::Values,
        Target::Stdout => Handover::Lines,
        Target::Dir(_) => Handover::PerInput,
        Target::File(_) if file_layout == Layout::Jsonl => Handover::Lines,
        Target::File(_) => Handover::Values,
    };
    if args.report == Some(ReportDest::Stdout) && target == Target::Stdout {
        bail!(
            "--report - and -o - would both write to standard output; send one of them to a file"
        );
    }
    Ok(Files {
        inputs,
        from: args.input.from.dialect()?,
        target,
        file_layout,
        output_arg: args.output.clone(),
        to,
        parquet,
        handover,
        keep_source_fields: args.keep_source_fields,
        resume: args.resume,
        verbose: args.input.verbose,
        options: output_options(args)?,
    })
}

/// The Arrow IPC plan: one stream in, one out.
fn arrow(args: &CompactArgs) -> anyhow::Result<Arrow> {
    if args.input.from != InputFormat::ArrowIpc || args.to != OutputFormat::ArrowIpc {
        bail!(
            "--from arrow-ipc and --to arrow-ipc go together (one Arrow IPC stream in, one out)\nhint: to write a table from files, use --to parquet"
        );
    }
    let [one] = args.input.inputs.as_slice() else {
        bail!("--from arrow-ipc reads one stream: give one input, `-` or a file");
    };
    let inputs = expand_inputs(std::slice::from_ref(one))?;
    let [input] = inputs.as_slice() else {
        bail!("{one}: --from arrow-ipc reads one stream, not a directory");
    };
    let output: Option<PathBuf> = match Target::parse(&args.output) {
        Target::Stdout => None,
        Target::Dir(o) => bail!(
            "{}: --to arrow-ipc writes one stream: give a file or `-`, not a directory",
            o.display()
        ),
        Target::File(o) => Some(o),
    };
    if args.report == Some(ReportDest::Stdout) && output.is_none() {
        bail!(
            "--report - would mix the report into the Arrow stream on standard output; every row already carries its report line in the `compactor_report` column"
        );
    }
    refuse_overwriting_stream(
        input.path.as_deref(),
        &[
            output.as_deref(),
            args.report.as_ref().and_then(ReportDest::file),
            args.rejects.as_deref(),
            args.rejects.as_deref().map(rejects_sources).as_deref(),
        ],
    )?;
    Ok(Arrow { input: input.clone(), output })
}

/// Every option that changes the bytes written, as text for the manifest's
/// options hash (not threads, progress, or where reports and rejects go).
/// A file-valued option counts by its contents, not its path
/// ([`manifest::option_file`]): an edited `--tool-families` file redoes the
/// inputs on `--resume`.
fn output_options(args: &CompactArgs) -> anyhow::Result<String> {
    // Named only when set, so that manifests of earlier runs still match.
    let keep = if args.keep_source_fields { " keep_source_fields=true" } else { "" };
    let budget = BudgetArgs { models_file: None, tool_families: None, ..args.budget.clone() };
    let mut files = String::new();
    for (name, path) in
        [("models_file", &args.budget.models_file), ("tool_families", &args.budget.tool_families)]
    {
        if let Some(path) = path {
            files += &format!(" {name}={}", manifest::option_file(path)?);
        }
    }
    let limit = args.input.max_record_bytes;
    if limit != DEFAULT_MAX_RECORD_BYTES {
        // A record over the limit is rejected, not written.
        files += &format!(" max_record_bytes={limit}");
    }
    Ok(format!(
        "mode={:?} budget={budget:?}{files} force={} target_tokens={:?} from={} to={} messages_column={:?} \
         source_column={:?} shard={:?} redact={} history={}{keep}",
        args.mode,
        args.force,
        args.target_tokens,
        args.input.from,
        args.to,
        args.input.messages_column,
        args.input.source_column,
        args.shard.map(|s| s.to_string()),
        args.redact,
        args.input.history.resolve()
    ) + &super::summarizer_options(&args.summarizer).unwrap_or_default()
        + &policy_option(args.policy.as_deref())?)
}

/// `--policy`, as the options record names it: the name, and a file's own
/// record ([`manifest::option_file`]); nothing without it, so that a run of a
/// mode keeps its record.
fn policy_option(policy: Option<&str>) -> anyhow::Result<String> {
    let Some(p) = policy else { return Ok(String::new()) };
    // A policy that does not resolve fails here, with its own message.
    super::spec(p)?;
    if compactor::policy::spec::builtin::find(p).is_some() {
        return Ok(format!(" policy={p}"));
    }
    Ok(format!(" policy={}", manifest::option_file(Path::new(p))?))
}

/// [`read_options`], and with `--rejects FILE` records over `--max-record-bytes`
/// kept in spills beside `FILE` (on its file system, not in `/tmp`, which may
/// be memory), to be copied into it.
fn read_options_keeping(args: &crate::cli::args::InputArgs, rejects: Option<&Path>) -> ReadOptions {
    let mut options = read_options(args);
    options.limit.keep_in = rejects.map(|p| match p.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    });
    options
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

/// Refuses any output (sessions, report, rejects and their sources) that is an input, and two
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
        check(&rejects_sources(p), "rejects' sources file")?;
    }
    Ok(())
}

/// The sources file written beside `--rejects FILE`:
/// `rejects.jsonl` → `rejects.sources.jsonl`.
pub fn rejects_sources(rejects: &Path) -> PathBuf {
    let name = rejects.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    rejects.with_file_name(format!("{stem}.sources.jsonl"))
}

/// Refuses any output that is the input stream's file.
fn refuse_overwriting_stream(
    input: Option<&Path>,
    outputs: &[Option<&Path>],
) -> anyhow::Result<()> {
    let Some(input) = input.and_then(|p| std::fs::canonicalize(p).ok()) else { return Ok(()) };
    for out in outputs.iter().flatten() {
        if std::fs::canonicalize(out).is_ok_and(|c| c == input) {
            bail!("{}: this output would overwrite the input; choose another path", out.display());
        }
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
