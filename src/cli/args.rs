//! Command-line arguments (clap derive): the low level. This layer only parses
//! and validates values; `config` resolves them, once per run, into the high
//! level each command runs with.

use crate::cli::values::{
    AnchorBudgetArg, InputFormat, ModelArg, OutputFormat, PolicyArg, PricesArg, ReportDest,
};
use clap::{Args, Parser, Subcommand};
use compactor::Mode;
use compactor::tokens::CounterKind;
use std::path::PathBuf;

/// Offline batch compactor for LLM-agent transcripts.
///
/// Keeps the head and a recent tail of each session verbatim, folds the middle
/// into a structured, reference-only summary, and clears old tool outputs, the
/// way a live agent compacts its context, but offline, in bulk and
/// deterministically.
#[derive(Debug, Parser)]
#[command(name = "compactor", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Compact(CompactArgs),
    Anchors(AnchorsArgs),
    Models(ModelsArgs),
    Stats(StatsArgs),
    Replay(ReplayArgs),
    Report(ReportArgs),
    Check(CheckArgs),
    #[cfg(feature = "bench-tools")]
    #[command(hide = true)]
    Synth(SynthArgs),
    #[cfg(feature = "bench-tools")]
    #[command(hide = true)]
    Tokenize(TokenizeArgs),
}

/// What a command reads, and with how many workers: shared by every command
/// that reads sessions.
#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Input files or directories (walked recursively, sorted); `-` reads standard input
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format: auto (default: decided per file from its first records), openai,
    /// anthropic, claude-code, codex, sharegpt, swe-agent or toolbench
    #[arg(long, default_value = "auto", value_parser = clap::value_parser!(InputFormat))]
    pub from: InputFormat,

    /// Parquet input: a string column holding each row's messages as JSON
    #[arg(long, value_name = "NAME")]
    pub messages_column: Option<String>,

    /// Parquet / Arrow input: a string column naming each row's source (in the
    /// `compaction` object, reports and errors, and the id of rows without one)
    /// [default: FILE[row]]
    #[arg(long, value_name = "NAME")]
    pub source_column: Option<String>,

    /// Worker threads [default: all cores]
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,

    /// Which part of an agent's log is read (Claude Code, Codex): `full`, the
    /// conversation as it happened (before and after the agent's own compactions,
    /// which are measured apart), or `live`, what follows its last compaction (the
    /// context a resumed agent sees)
    #[arg(long, value_enum, default_value_t = HistoryArg::Full, value_name = "full|live")]
    pub history: HistoryArg,

    /// Longest record read (a JSONL line, or a file read as one JSON document), in bytes
    /// as read after gzip/zstd, with an optional KiB, MiB or GiB suffix: a longer one is
    /// rejected without being held in memory (kept in --rejects), and the rest of the file
    /// is read
    #[arg(long, value_name = "BYTES", default_value = "256MiB", value_parser = byte_size)]
    pub max_record_bytes: u64,

    /// Say which format was detected for each file
    #[arg(short, long)]
    pub verbose: bool,
}

/// `--history`: which part of an agent's log is read ([`compactor::model::History`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryArg {
    Full,
    Live,
}

impl HistoryArg {
    pub fn resolve(self) -> compactor::model::History {
        match self {
            HistoryArg::Full => compactor::model::History::Full,
            HistoryArg::Live => compactor::model::History::Live,
        }
    }
}

/// Binary size suffixes of [`byte_size`], and the bytes each stands for.
const BYTE_SUFFIXES: [(&str, u64); 3] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)];

/// A byte count: digits, then optionally `KiB`, `MiB` or `GiB` (`256MiB`); never 0.
fn byte_size(arg: &str) -> Result<u64, String> {
    let (digits, unit) = BYTE_SUFFIXES
        .iter()
        .find_map(|(suffix, unit)| arg.strip_suffix(suffix).map(|d| (d, *unit)))
        .unwrap_or((arg, 1));
    let n: u64 = digits.trim().parse().map_err(|_| {
        format!("expected a number of bytes, optionally with a KiB, MiB or GiB suffix, got `{arg}`")
    })?;
    match n.checked_mul(unit) {
        Some(0) => Err("must be at least 1 byte".into()),
        Some(bytes) => Ok(bytes),
        None => Err(format!("`{arg}` is too large")),
    }
}

/// Window, counter and policy options shared by every command that compacts.
/// The help of `--window` and `--model` says each command's own default
/// (`auto_model`, `one_model`, `fixed_model` and the `*_window` beside them).
#[derive(Debug, Args, Clone)]
pub struct BudgetArgs {
    /// Context window in tokens, for every session
    #[arg(long, value_name = "TOKENS")]
    pub window: Option<u64>,

    /// Model name whose window to use (longest matching entry of `compactor models`)
    #[arg(long, value_name = "NAME|auto", value_parser = clap::value_parser!(ModelArg))]
    pub model: Option<ModelArg>,

    /// JSON file of extra model windows: {"name-fragment": tokens, ...}
    #[arg(long, value_name = "FILE")]
    pub models_file: Option<PathBuf>,

    /// Token counter: o200k (exact, default), cl100k (exact), hermes (the reference estimate)
    #[arg(long, default_value = "o200k", value_parser = clap::value_parser!(CounterKind))]
    pub counter: CounterKind,

    /// BPE implementation for o200k/cl100k: bpe-openai (fast) or tiktoken (the reference); counts are identical
    #[arg(long, default_value = "bpe-openai", value_name = "NAME",
          value_parser = clap::value_parser!(compactor::tokens::Tokenizer))]
    pub tokenizer: compactor::tokens::Tokenizer,

    /// Tokens charged per image, however large
    #[arg(long, value_name = "TOKENS", default_value_t = compactor::tokens::DEFAULT_IMAGE_TOKENS)]
    pub image_tokens: u64,

    /// Absolute cap on the trigger threshold, in tokens
    #[arg(long, value_name = "TOKENS")]
    pub threshold_cap: Option<u64>,

    /// Anchor index budget: `auto` (max of 7000 and 4% of the compacted chars) or a char count
    #[arg(long, default_value = "auto", value_name = "auto|CHARS",
          value_parser = clap::value_parser!(AnchorBudgetArg))]
    pub anchor_budget: AnchorBudgetArg,

    /// JSON file that adds or overrides tool families (same shape as the built-in table)
    #[arg(long, value_name = "FILE")]
    pub tool_families: Option<PathBuf>,
}

/// The optional summarizer model: writes the summary body (SPEC 6); the frame,
/// the appendices and the budget stay ours, and any failure falls back to the
/// deterministic body, counted per reason.
#[derive(Debug, Args, Clone)]
pub struct SummarizerArgs {
    /// OpenAI-compatible base URL, plain HTTP (e.g. http://localhost:8000/v1): the summary
    /// body is asked of POST URL/chat/completions
    #[arg(long, value_name = "URL")]
    pub summarizer: Option<String>,

    /// Model name sent with each summarizer request [--summarizer-cmd default: default]
    #[arg(long, value_name = "NAME")]
    pub summarizer_model: Option<String>,

    /// Environment variable holding the summarizer's API key (sent as `Authorization:
    /// Bearer`; never printed, reported or cached)
    #[arg(long, value_name = "VAR")]
    pub summarizer_key_env: Option<String>,

    /// Command run with `sh -c` for each summarizer request: the request JSON on its standard
    /// input, the summary body on its standard output
    #[arg(long, value_name = "CMD")]
    pub summarizer_cmd: Option<String>,

    /// The summarizer's context window in tokens: a longer middle is summarized in chunks,
    /// each updating the summary of the ones before
    #[arg(long, value_name = "TOKENS", default_value_t = compactor::summarizer::DEFAULT_WINDOW_TOKENS)]
    pub summarizer_window: u64,

    /// Summarizer requests in flight at once, over the whole run
    #[arg(long, value_name = "N", default_value_t = compactor::summarizer::DEFAULT_CONCURRENCY)]
    pub summarizer_concurrency: usize,

    /// Seconds a summarizer request (or command) may take
    #[arg(long, value_name = "SECS", default_value_t = compactor::summarizer::DEFAULT_TIMEOUT_SECS)]
    pub summarizer_timeout: u64,

    /// Sampling temperature of the summarizer
    #[arg(long, value_name = "T", default_value_t = 0.0)]
    pub summarizer_temperature: f64,

    /// Directory of summarizer answers keyed by a hash of the request (model, prompt,
    /// parameters): a rerun asks nothing twice
    #[arg(long, value_name = "DIR")]
    pub summary_cache: Option<PathBuf>,

    /// Answer only from --summary-cache, never call out (a miss falls back, counted as cache_miss)
    #[arg(long, requires = "summary_cache")]
    pub summary_cache_only: bool,
}

/// `--model`'s help where it may name `auto`.
macro_rules! model_help {
    () => {
        "Model name whose window to use (longest matching entry of `compactor models`), or \
         `auto`: each session's model as its log names it (Claude Code `message.model`, Codex \
         `turn_context.model`), 200000 when the log names none the table knows"
    };
}

/// `--model` of a command whose sessions get their own model's window unless
/// told otherwise (`replay`, `report`: `--model auto`).
fn auto_model(a: clap::Arg) -> clap::Arg {
    a.help(concat!(model_help!(), " [default: auto]"))
}

/// `--window` of `replay` and `report`.
fn auto_window(a: clap::Arg) -> clap::Arg {
    a.help(
        "Context window in tokens, for every session [default: from --model NAME; without \
         either, each session's own model's (auto)]",
    )
}

/// `--model` of `compact`, which gives every session one window unless
/// `--model auto` is asked for: without it, sessions under the trigger are
/// passed through after a skim, never decoded to read their model.
fn one_model(a: clap::Arg) -> clap::Arg {
    a.help(concat!(model_help!(), " [default: none: one window for every session]"))
}

/// `--model` of a command that knows one window only (`anchors`, `tokenize`).
fn fixed_model(a: clap::Arg) -> clap::Arg {
    a.help(
        "Model name whose window to use (longest matching entry of `compactor models`; `auto` \
         is the default window here) [default: none: one window for every session]",
    )
}

/// `--window` of a command that gives every session one window by default
/// (`compact`, `anchors`, `tokenize`).
fn one_window(a: clap::Arg) -> clap::Arg {
    a.help("Context window in tokens, for every session [default: from --model NAME, else 200000]")
}

/// The help of INPUT where it defaults to the agents' own log folders
/// (`compactor::discover`): a macro, so that `report` can extend the text.
macro_rules! log_folder_inputs_help {
    () => {
        "Input files or directories (walked recursively, sorted); `-` reads standard input \
     [default: the agents' own log folders: $CLAUDE_CONFIG_DIR/projects, else \
     ~/.config/claude/projects and ~/.claude/projects; $CODEX_HOME/sessions, else \
     ~/.codex/sessions]"
    };
}

/// INPUT made optional, defaulting to the agents' own log folders (`stats`,
/// `replay`, `report`, `compact`).
fn log_folder_inputs(a: clap::Arg) -> clap::Arg {
    a.required(false).help(log_folder_inputs_help!())
}

/// Compact agent sessions.
///
/// Reads sessions in any supported dialect (OpenAI, Anthropic, ShareGPT,
/// Claude Code, Codex CLI, SWE-agent, ToolBench; JSONL, JSON, `.traj`,
/// Parquet, Arrow IPC; `.gz` and `.zst` read transparently; `--from` forces
/// one), compacts each session whose request reaches the trigger threshold,
/// and writes them in input order (`--to` converts). Sessions are processed in parallel; output bytes do not depend
/// on the thread count.
///
/// Examples:
///
///   compactor compact fixtures/openai/ -o out/ --report report.jsonl
///
///   compactor compact sessions.jsonl.gz -o compacted.jsonl --model gpt-4o
///
///   cat s.jsonl | compactor compact - --mode tiered --force > out.jsonl
///
///   compactor compact sessions/ --shard 3/8 -o part-3.jsonl --report report-3.jsonl
///
///   compactor compact - --from arrow-ipc --to arrow-ipc < in.arrows > out.arrows
///
/// Arrow IPC mode (what a Spark or Ray worker runs; `scripts/spark_compact.py`,
/// `scripts/ray_compact.py`): one input (`-` or a file), one output (`-` or a
/// file), both Arrow IPC streams. The output schema follows from the input's
/// (a stream with no batches gives just the schema); one output batch per input
/// batch, with one row per session of it and that session's report line in the
/// `compactor_report` column. Nothing but the stream goes to standard output.
#[derive(Debug, Args)]
#[command(mut_arg("inputs", |a| log_folder_inputs(a).help(concat!(
    log_folder_inputs_help!(),
    ", which needs -o DIR/"
))))]
#[command(mut_arg("model", one_model), mut_arg("window", one_window))]
#[command(mut_arg("from", |a| a.help(
    "Input format: auto (default: decided per file from its first records), openai, \
     anthropic, claude-code, codex, sharegpt, swe-agent, toolbench, or arrow-ipc \
     (an Arrow IPC stream of session rows in the Parquet table schema; needs --to arrow-ipc)"
)))]
pub struct CompactArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Output: a file (all sessions, input order), a directory (`DIR/` or existing:
    /// one file per input, same relative name), or `-` for standard output
    #[arg(short, long, default_value = "-", value_name = "OUT")]
    pub output: String,

    /// lean (default), legacy, tiered or none
    #[arg(long, default_value = "lean", value_parser = clap::value_parser!(Mode))]
    pub mode: Mode,

    /// Compact under a policy instead of a mode: a built-in one (claude-code,
    /// codex, openhands, openhands-masking, anthropic-context-editing,
    /// gemini-cli, or a mode's name) or a TOML/JSON policy file (docs/policies.md)
    #[arg(long, value_name = "NAME|FILE", conflicts_with = "mode")]
    pub policy: Option<String>,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// Compact every session, even under the trigger (like a manual /compress)
    #[arg(long)]
    pub force: bool,

    /// Compact sessions over this size; in tiered mode also the size to stop at
    /// [tiered default: half the trigger threshold]
    #[arg(long, value_name = "TOKENS")]
    pub target_tokens: Option<u64>,

    /// Output format: same (default), openai, anthropic, sharegpt, parquet, or arrow-ipc
    /// (an Arrow IPC stream: the compacted rows, each with its report line in the
    /// trailing `compactor_report` column; needs --from arrow-ipc)
    #[arg(long, default_value = "same", value_parser = clap::value_parser!(OutputFormat))]
    pub to: OutputFormat,

    /// With --to: write the source dialect's fields too (message envelopes, non-chat
    /// records, session metadata), so that X -> openai -> X gives X back. Without it a
    /// converted session is a clean request of its API (roles, text, steps, paired calls)
    #[arg(long)]
    pub keep_source_fields: bool,

    /// Process only the sessions of shard K of N: those whose id hashes
    /// (xxh3-64 of the id) to K mod N. N workers with K = 0..N-1 cover the input once
    #[arg(long, value_name = "K/N", value_parser = clap::value_parser!(compactor::pipeline::shard::Shard))]
    pub shard: Option<compactor::pipeline::shard::Shard>,

    /// Write one JSON line per session (the compaction figures) to FILE (`-`: standard output)
    #[arg(long, value_name = "FILE", value_parser = clap::value_parser!(ReportDest))]
    pub report: Option<ReportDest>,

    /// Write every rejected record, unchanged, to FILE
    #[arg(long, value_name = "FILE")]
    pub rejects: Option<PathBuf>,

    /// Stop at the first rejected record
    #[arg(long)]
    pub strict: bool,

    /// Mask credentials (API keys, tokens, JWTs, private keys, passwords) in everything written
    #[arg(long)]
    pub redact: bool,

    /// With `-o DIR/`: skip inputs whose output files an earlier run with the same options
    /// finished (recorded in DIR/.compactor-manifest.jsonl with each input's size and mtime)
    #[arg(long)]
    pub resume: bool,

    /// No progress bar, no summary and no list of the log folders read on stderr
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub summarizer: SummarizerArgs,
}

/// Print the anchors of each session as JSON lines.
///
/// Anchors are exact identifiers found verbatim in a transcript: PR and issue
/// references, commit SHAs, branch names, file paths, error lines, handles and
/// URLs. Each session prints one line: its source and, per category, the
/// distinct anchors ranked by count then recency.
///
/// Examples:
///
///   compactor anchors fixtures/edge/cjk.jsonl
///
///   compactor anchors sessions/ --region middle --budget 7000
#[derive(Debug, Args)]
#[command(mut_arg("model", fixed_model), mut_arg("window", one_window))]
pub struct AnchorsArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Which messages: `all` of the session, or the `middle` lean mode would summarize
    #[arg(long, default_value = "all", value_enum)]
    pub region: Region,

    /// Keep only what an anchor index of this many chars would hold
    #[arg(long, value_name = "CHARS")]
    pub budget: Option<usize>,

    #[command(flatten)]
    pub window: BudgetArgs,
}

/// `anchors --region`: which messages' anchors are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Region {
    /// Every message of the session.
    All,
    /// The middle lean mode would summarize.
    Middle,
}

/// List the built-in model windows and the budgets derived from them.
///
/// Examples:
///
///   compactor models
///
///   compactor models --models-file my-models.json
#[derive(Debug, Args, Clone)]
pub struct ModelsArgs {
    /// JSON file of extra model windows: {"name-fragment": tokens, ...}
    #[arg(long, value_name = "FILE")]
    pub models_file: Option<PathBuf>,
}

/// The benchmark floor: read and decode every session and tokenize each of its
/// texts once, without the count cache; print the total. `scripts/bench.sh`
/// sets `compact`'s time against this one.
#[cfg(feature = "bench-tools")]
#[derive(Debug, Args)]
#[command(mut_arg("model", fixed_model), mut_arg("window", one_window))]
pub struct TokenizeArgs {
    #[command(flatten)]
    pub input: InputArgs,

    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// Write seeded synthetic sessions (OpenAI JSONL) for tests and benchmarks.
#[cfg(feature = "bench-tools")]
#[derive(Debug, Args)]
pub struct SynthArgs {
    /// Number of sessions
    #[arg(long, default_value_t = 10)]
    pub sessions: u64,

    /// Approximate tokens per session
    #[arg(long, default_value_t = 50_000)]
    pub tokens: u64,

    /// Stop each session at about this many messages (instead of --tokens)
    #[arg(long)]
    pub messages: Option<usize>,

    /// Seed of the first session (session k uses seed + k)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Output file (`-` for standard output)
    #[arg(short, long, default_value = "-")]
    pub output: String,
}

/// Describe archives: sessions, messages, tool calls and tokens, per file and in total.
///
/// Counts messages by role and tool calls by tool; measures tokens by role, by
/// tool, in images and in reasoning; lists the largest messages; and where the
/// log recorded the provider's usage (Claude Code, Codex), sets the provider's
/// prompt size of each call beside our count of the same request.
///
/// Examples:
///
///   compactor stats ~/.claude/projects/my-project/
///
///   compactor stats sessions.jsonl --json > stats.json
///
///   compactor stats --by day       # ~/.claude/projects and ~/.codex/sessions, per day
#[derive(Debug, Args)]
#[command(mut_arg("inputs", log_folder_inputs))]
pub struct StatsArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// One JSON document instead of text
    #[arg(long)]
    pub json: bool,

    /// Token counter: o200k, cl100k or hermes
    #[arg(long, default_value = "o200k", value_parser = clap::value_parser!(CounterKind))]
    pub counter: CounterKind,

    /// Tokens charged per image
    #[arg(long, value_name = "TOKENS", default_value_t = compactor::tokens::DEFAULT_IMAGE_TOKENS)]
    pub image_tokens: u64,

    /// Window lean compacts at when set beside each compaction the agent made itself
    #[arg(long, value_name = "TOKENS", default_value_t = compactor::catalog::window::DEFAULT_WINDOW_TOKENS)]
    pub window: u64,

    /// One table row per day (UTC, of the session's first timestamp), project (the
    /// working folder its log names) or model (the first its log names), instead of per file
    #[arg(long, value_enum, value_name = "day|project|model")]
    pub by: Option<GroupBy>,
}

/// `stats --by`: what the sessions are grouped by (`compactor::discover::facts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    Day,
    Project,
    Model,
}

impl GroupBy {
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Day => "day",
            GroupBy::Project => "project",
            GroupBy::Model => "model",
        }
    }
}

/// Replay sessions call by call, compacting when the trigger fires.
///
/// Before every assistant message (an API call) the request is the tool schemas
/// plus the history so far. When it reaches the trigger (the provider's recorded
/// prompt size where the log has it, else our count), the history is compacted
/// and the original messages keep being appended. Reports per session: calls,
/// compactions, peak request, input tokens billed and cache reads with and
/// without compaction, and with --prices the cost.
///
/// Examples:
///
///   compactor replay sessions/ --model claude-sonnet-4 --report replay.jsonl
///
///   compactor replay s.jsonl --window 128000 --calls calls.jsonl --write-final final/
///
///   compactor replay ~/.claude/projects --prices
///
///   compactor replay s.jsonl --model claude-sonnet-4 --prices=my-prices.json
#[derive(Debug, Args)]
#[command(mut_arg("inputs", log_folder_inputs))]
#[command(mut_arg("model", auto_model), mut_arg("window", auto_window))]
pub struct ReplayArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// lean (default), legacy, tiered or none
    #[arg(long, default_value = "lean", value_parser = clap::value_parser!(Mode))]
    pub mode: Mode,

    /// Replay under this policy instead of the mode: a built-in one or a
    /// TOML/JSON policy file (docs/policies.md); repeat it for one row per
    /// policy and session
    #[arg(long, value_name = "NAME|FILE", conflicts_with = "mode")]
    pub policy: Vec<String>,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// One JSON line per session to FILE, or to stdout with `-` [default: one
    /// text line per session on stdout]
    #[arg(long, value_name = "FILE", value_parser = clap::value_parser!(ReportDest))]
    pub report: Option<ReportDest>,

    /// One JSON line per API call to FILE, or to stdout with `-`
    #[arg(long, value_name = "FILE", value_parser = clap::value_parser!(ReportDest))]
    pub calls: Option<ReportDest>,

    /// Write the history the agent would hold at the end, one file per input, under DIR
    #[arg(long, value_name = "DIR")]
    pub write_final: Option<PathBuf>,

    /// Format of --write-final files: same (default), openai, anthropic or sharegpt
    #[arg(long, default_value = "same", value_parser = clap::value_parser!(OutputFormat))]
    pub to: OutputFormat,

    /// Price the calls ($/Mtok, built-in table; each session at its log's model, or all at --model NAME; `--prices=FILE` extends it)
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "", value_parser = clap::value_parser!(PricesArg))]
    pub prices: Option<PricesArg>,

    /// Use the fallback trigger: 85% of the window or 5,000 messages
    #[arg(long)]
    pub gateway: bool,

    /// No total line and no list of the log folders read on stderr
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub summarizer: SummarizerArgs,
}

/// Compare policies: every session under none, legacy, lean and tiered, side by side.
///
/// Writes to DIR: sessions.jsonl and sessions.csv (one row per session and mode:
/// compaction figures, anchors, replay figures, broken promises), summary.json
/// (corpus totals and percentiles per mode and per format), report.md (the tables,
/// legacy vs lean first) and report.html (the same with SVG charts: request size per
/// call of the longest sessions against the trigger, and the distribution of
/// savings). No timestamps: the same input gives the same bytes.
///
/// Examples:
///
///   compactor report fixtures/ -o target/report --window 32000
///
///   compactor report sessions/ -o report/ --model claude-sonnet-4 --parquet
///
///   compactor report sessions/ -o shards/2 --shard 2/4     # one of 4 array-job workers
///
///   compactor report --merge shards/0 shards/1 shards/2 shards/3 -o report/
///
/// With --shard K/N the directory also holds shard.json (the shard, and where
/// each of its sessions stands in the whole input), and --merge turns the N
/// shard directories of one run into the report the unsharded run writes, byte
/// for byte.
#[derive(Debug, Args)]
#[command(mut_arg("inputs", |a| log_folder_inputs(a).help(concat!(
    log_folder_inputs_help!(),
    ". With --merge: the report directories of the shards"
))))]
#[command(mut_arg("model", auto_model), mut_arg("window", auto_window))]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Merge the shard report directories given as inputs into one report
    #[arg(long, conflicts_with = "shard")]
    pub merge: bool,

    /// Only the sessions of shard K of N (xxh3-64 of the session id, mod N)
    #[arg(long, value_name = "K/N", value_parser = clap::value_parser!(compactor::pipeline::shard::Shard))]
    pub shard: Option<compactor::pipeline::shard::Shard>,

    /// Directory for the report files
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,

    /// Policies to report besides today's four (none, legacy, lean, tiered,
    /// always reported): built-in names, `all` for every built-in one, or
    /// TOML/JSON policy files, comma-separated (docs/policies.md)
    #[arg(long, value_name = "a,b,c|all", value_delimiter = ',', value_parser = clap::value_parser!(PolicyArg))]
    pub policies: Vec<PolicyArg>,

    /// Price each policy's calls in the --policies table ($/Mtok, built-in table; each session at its log's model, or all at --model NAME; `--prices=FILE` extends it)
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "", requires = "policies", value_parser = clap::value_parser!(PricesArg))]
    pub prices: Option<PricesArg>,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// Compact every session, even under the trigger
    #[arg(long)]
    pub force: bool,

    /// Compact sessions over this size; in tiered mode also the size to stop at
    #[arg(long, value_name = "TOKENS")]
    pub target_tokens: Option<u64>,

    /// Also write sessions.parquet
    #[arg(long)]
    pub parquet: bool,

    /// No summary line and no list of the log folders read on stderr
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub summarizer: SummarizerArgs,
}

/// Compare a report with a baseline; exit 1 when a figure regressed (for CI).
///
/// Compares, per mode, the corpus figures of two `summary.json` files (or report
/// directories): tokens saved (%), anchor retention (%), API-validity failures,
/// and user messages kept whole (%). With `report --policies` in both, per policy
/// too: billed input, cache writes, cost, peak context, compactions and requests
/// over the trigger (each may rise by --policy-tolerance percent) and anchor
/// retention (--retention-tolerance points). Prints a table of what moved, and
/// when both are report directories, the sessions whose savings moved most.
///
/// Examples:
///
///   compactor check --baseline .ci/baseline --current target/report
///
///   compactor check --baseline .ci/baseline --current target/report --update-baseline
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The baseline: a summary.json or a report directory
    #[arg(long, value_name = "PATH")]
    pub baseline: PathBuf,

    /// The current report: a summary.json or a report directory
    #[arg(long, value_name = "PATH")]
    pub current: PathBuf,

    /// Points of saved % that may be lost
    #[arg(long, default_value_t = 1.0, value_name = "POINTS")]
    pub saved_tolerance: f64,

    /// Points of anchor retention % that may be lost
    #[arg(long, default_value_t = 0.0, value_name = "POINTS")]
    pub retention_tolerance: f64,

    /// Sessions with broken promises allowed
    #[arg(long, default_value_t = 0.0, value_name = "N")]
    pub validity_tolerance: f64,

    /// Points of user-messages-kept-whole % that may be lost
    #[arg(long, default_value_t = 0.0, value_name = "POINTS")]
    pub users_tolerance: f64,

    /// Percent a `report --policies` count or cost (billed input, cache writes, cost, peak context, compactions, requests over the trigger) may rise
    #[arg(long, default_value_t = 1.0, value_name = "PERCENT")]
    pub policy_tolerance: f64,

    /// Write the current figures over the baseline, on purpose
    #[arg(long)]
    pub update_baseline: bool,

    /// Compare reports of different input files (by default refused, exit 2)
    #[arg(long)]
    pub allow_different_inputs: bool,
}

#[cfg(test)]
mod tests {
    use super::byte_size;

    #[test]
    fn byte_sizes_take_binary_suffixes_and_refuse_zero_and_garbage() {
        assert_eq!(byte_size("1000"), Ok(1000));
        assert_eq!(byte_size("256MiB"), Ok(256 << 20));
        assert_eq!(byte_size("4KiB"), Ok(4096));
        assert_eq!(byte_size("2GiB"), Ok(2 << 30));
        for bad in ["0", "0MiB", "", "12MB", "1.5GiB", "-1", "99999999999999GiB"] {
            assert!(byte_size(bad).is_err(), "{bad}");
        }
    }
}
