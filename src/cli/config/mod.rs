//! Resolution: parsed arguments (the low level, [`super::args`]) → the high
//! level each command runs with (inputs, window, threshold, policy, token
//! meter, workers, outputs). Everything that reads files or the environment
//! for configuration happens here, once per run; commands get the result.
//!
//! [`Reading`] is what every reading command shares; [`Compact`] is
//! `compact`'s whole configuration.

mod compact;
pub(crate) mod discovery;
mod prices;
mod summarizer;
mod windows;

pub use compact::{Arrow, Compact, Files, Route, rejects_sources};
pub use prices::{price_book, session_prices};
#[cfg(test)]
pub use summarizer::COMMAND_MODEL;
pub use summarizer::{options_text as summarizer_options, summarizer};
pub use windows::{DefaultedCount, Policies, policies, policies_of};

use super::args::{BudgetArgs, InputArgs};
use super::values::{ModelArg, PolicyArg};
use anyhow::{Context, bail};
use compactor::Mode;
use compactor::catalog::window::{DEFAULT_WINDOW_TOKENS, ModelTable};
use compactor::formats::Format;
use compactor::io::record_limit::RecordLimit;
use compactor::io::{Input, ReadOptions, expand_inputs_noting};
use compactor::model::History;
use compactor::pipeline::JobReader;
use compactor::policy::Policy;
use compactor::policy::spec::{PolicySpec, builtin};
use compactor::tokens::Meter;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// What a reading command reads, resolved once from [`InputArgs`]: the
/// expanded inputs, the forced dialect, how to read them, and the workers.
pub struct Reading {
    pub inputs: Vec<Input>,
    /// `--from`: `None` detects each file's dialect.
    pub from: Option<Format>,
    pub options: ReadOptions,
    /// `--history`: which part of an agent's log becomes messages.
    pub history: History,
    pub pool: rayon::ThreadPool,
    /// `-v`: name each file's detected format on stderr as it is read.
    pub verbose: bool,
}

impl Reading {
    /// Without an INPUT (`stats`, `report`, `replay`), the agents' own log
    /// folders ([`discovery`]), named on stderr unless `quiet`.
    pub fn from_args(args: &InputArgs, quiet: bool) -> anyhow::Result<Reading> {
        let inputs = if args.inputs.is_empty() {
            discovery::inputs(quiet)?.inputs
        } else {
            inputs(&args.inputs)?
        };
        let from = args.from.dialect()?;
        let pool = thread_pool(args.threads)?;
        Ok(Reading {
            inputs,
            from,
            options: read_options(args),
            history: args.history.resolve(),
            pool,
            verbose: args.verbose,
        })
    }

    /// A reader of every input, in order.
    pub fn reader(&self) -> JobReader<'_> {
        JobReader::new(&self.inputs, self.from)
            .with_options(self.options.clone())
            .with_history(self.history)
    }
}

/// The command line's inputs expanded, saying on stderr which files of our
/// own output directories were left out (they are not sessions).
pub fn inputs(args: &[String]) -> anyhow::Result<Vec<Input>> {
    let (inputs, skipped) = expand_inputs_noting(args)?;
    if let Some(first) = skipped.first() {
        let more = match skipped.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        eprintln!(
            "compactor: note: skipped {}{more}: not listed as an output by its directory's {} (compactor's own report or rejects); name a file to read it",
            first.display(),
            compactor::io::manifest::MANIFEST_NAME
        );
    }
    Ok(inputs)
}

/// How inputs are read: the Parquet / Arrow columns and the record size
/// limit (records over it are not kept: `compact --rejects` asks for that).
pub fn read_options(args: &InputArgs) -> ReadOptions {
    ReadOptions {
        restore: compactor::formats::parquet::RESTORE,
        messages_column: args.messages_column.clone(),
        source_column: args.source_column.clone(),
        limit: RecordLimit { max_bytes: args.max_record_bytes, keep_in: None },
    }
}

/// The model table, extended by `--models-file`.
pub fn model_table(file: Option<&Path>) -> anyhow::Result<ModelTable> {
    let mut table = ModelTable::default();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let extra: BTreeMap<String, u64> = serde_json::from_str(&text).with_context(|| {
            format!("{}: expected a JSON object of {{\"model-fragment\": tokens}}", path.display())
        })?;
        table.extend(extra);
    }
    Ok(table)
}

/// The context window: `--window`, else `--model` in the table, else (and
/// under `--model auto`, whose per-session windows [`Policies`] picks) the default.
pub fn window(args: &BudgetArgs) -> anyhow::Result<u64> {
    if let Some(w) = args.window {
        if w == 0 {
            bail!("--window must be positive");
        }
        return Ok(w);
    }
    match args.model.as_ref().and_then(ModelArg::named) {
        Some(model) => model_table(args.models_file.as_deref())?.lookup(model).with_context(|| {
            format!("unknown model `{model}`\nhint: give --window N, or add it with --models-file (see `compactor models`)")
        }),
        _ => Ok(DEFAULT_WINDOW_TOKENS),
    }
}

/// The compaction policy for `mode` under these budget options.
pub fn policy(
    mode: Mode,
    args: &BudgetArgs,
    force: bool,
    target: Option<u64>,
) -> anyhow::Result<Policy> {
    policy_of(
        &Arc::new(compactor::policy::spec::builtin::of_mode(mode).clone()),
        args,
        force,
        target,
    )
}

/// The policy `arg` names: a built-in one (`lean`, `codex`, ...), else a
/// TOML or JSON file (`--policy FILE`, docs/policies.md).
pub fn spec(arg: &str) -> anyhow::Result<Arc<PolicySpec>> {
    if let Some(s) = builtin::find(arg) {
        return Ok(Arc::new(s.clone()));
    }
    let path = Path::new(arg);
    if !path.exists() {
        bail!(
            "unknown policy `{arg}`: not a built-in one ({}) nor a file\nhint: give a TOML or JSON policy file (docs/policies.md)",
            builtin::names()
        );
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("{arg}: cannot read"))?;
    Ok(Arc::new(compactor::policy::spec::file::parse(path, &text).map_err(anyhow::Error::msg)?))
}

/// The policies `report --policies` names, after today's four (always
/// reported: the report's figures are built on them): `all` for every
/// built-in one, else each name or file once, in order.
pub fn specs(list: &[PolicyArg]) -> anyhow::Result<Vec<Arc<PolicySpec>>> {
    let mut out: Vec<Arc<PolicySpec>> =
        builtin::MODES.iter().map(|m| spec(m)).collect::<anyhow::Result<_>>()?;
    for arg in list {
        let more: Vec<Arc<PolicySpec>> = match arg {
            PolicyArg::All => builtin::BUILT_IN.iter().map(|s| Arc::new(s.clone())).collect(),
            PolicyArg::One(name) => vec![spec(name)?],
        };
        for s in more {
            if let Some(o) = out.iter().find(|o| o.name == s.name) {
                if **o != *s {
                    bail!("--policies: two different policies are named `{}`", s.name);
                }
                continue;
            }
            out.push(s);
        }
    }
    Ok(out)
}

/// [`policy`] of any spec (a built-in one or a `--policy` file's).
pub fn policy_of(
    spec: &Arc<PolicySpec>,
    args: &BudgetArgs,
    force: bool,
    target: Option<u64>,
) -> anyhow::Result<Policy> {
    let window = window(args)?;
    let mut policy = Policy::from_spec(Arc::clone(spec), window);
    policy.set_window(window, args.threshold_cap);
    policy.force = force;
    policy.target_tokens = target;
    policy.anchor_budget = args.anchor_budget.0;
    if let Some(path) = &args.tool_families {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        policy
            .families
            .extend_from_json(&text)
            .map_err(|e| anyhow::anyhow!("{}: invalid tool-family file: {e}", path.display()))?;
    }
    Ok(policy)
}

/// The token meter (one tokenizer per process).
pub fn meter(args: &BudgetArgs) -> Meter {
    Meter::with_tokenizer(args.counter, args.tokenizer, args.image_tokens)
}

/// Items allowed between reading and writing: enough to keep every worker busy
/// while one slow session holds the head of the output order, few enough that
/// memory stays a few dozen sessions. Fewer (12 for two threads) let one
/// large session at the head leave the other worker idle; more used the
/// cores no better at the same peak RSS (benches/RESULTS.md).
pub fn in_flight(pool: &rayon::ThreadPool) -> usize {
    16 * pool.current_num_threads()
}

/// A rayon pool of `threads` workers (all cores by default).
pub fn thread_pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 {
            bail!("--threads must be at least 1");
        }
        b = b.num_threads(n);
    }
    b.build().context("cannot start worker threads")
}
