//! Each session's window, resolved once: `--window N` or `--model NAME` give
//! every session the same one; `--model auto` (the default without either)
//! gives each the window of the model its log names (`compactor::discover::facts`),
//! from the model table, or the default window when the log names no model
//! the table knows. One policy per window is built here, before any session
//! is read; workers only pick one.

use super::{model_table, policy_of};
use crate::cli::args::BudgetArgs;
use crate::cli::values::ModelArg;
use compactor::Mode;
use compactor::catalog::window::{Chosen, FROM_DEFAULT};
pub use compactor::pipeline::Policies;
use compactor::policy::spec::PolicySpec;
use compactor::policy::summary_writer::SummaryWriter;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a command does given neither `--window` nor `--model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unnamed {
    /// One window, the default (`compact`: its skim of untouched lines needs
    /// one trigger for every session).
    OneWindow,
    /// Each session's own model's window, as `--model auto` (the readers).
    EachSessions,
}

/// Returns true if and only if these options leave each session's window to
/// its log: `--model auto`, or neither `--window` nor `--model` where the
/// command's default (`unnamed`) is each session's. The one rule of `auto`.
pub fn is_auto(args: &BudgetArgs, unnamed: Unnamed) -> bool {
    args.window.is_none()
        && match &args.model {
            Some(m) => *m == ModelArg::Auto,
            None => unnamed == Unnamed::EachSessions,
        }
}

/// The policies of `mode` under these options (see [`Policies`]).
pub fn policies(
    mode: Mode,
    args: &BudgetArgs,
    force: bool,
    target: Option<u64>,
    summarizer: Option<&Arc<dyn SummaryWriter>>,
) -> anyhow::Result<Policies> {
    let spec = Arc::new(compactor::policy::spec::builtin::of_mode(mode).clone());
    policies_of(&spec, args, force, target, summarizer)
}

/// [`policies`] of any spec (a built-in one or a `--policy` file's).
pub fn policies_of(
    spec: &Arc<PolicySpec>,
    args: &BudgetArgs,
    force: bool,
    target: Option<u64>,
    summarizer: Option<&Arc<dyn SummaryWriter>>,
) -> anyhow::Result<Policies> {
    let mut base = policy_of(spec, args, force, target)?;
    base.summarizer = summarizer.cloned();
    if !is_auto(args, Unnamed::EachSessions) {
        return Ok(Policies::new(base, None));
    }
    let table = model_table(args.models_file.as_deref())?;
    Ok(Policies::new(base, Some((table, args.threshold_cap))))
}

/// Counts the sessions `--model auto` gave the default window, and says so on stderr once.
#[derive(Default)]
pub struct DefaultedCount {
    sessions: usize,
    /// The models the table does not know, with their session counts.
    unknown: BTreeMap<String, usize>,
}

impl DefaultedCount {
    pub fn add(&mut self, chosen: Option<&Chosen>) {
        if let Some(c) = chosen.filter(|c| c.window_from == FROM_DEFAULT) {
            self.sessions += 1;
            if let Some(m) = &c.model {
                *self.unknown.entry(m.clone()).or_default() += 1;
            }
        }
    }

    /// The stderr notice, if any session got the default window.
    pub fn notice(&self) -> Option<String> {
        if self.sessions == 0 {
            return None;
        }
        let plural = if self.sessions == 1 { "" } else { "s" };
        let mut text = format!(
            "compactor: --model auto: {} session{plural} named no model of the table; given the default window, {} tokens",
            compactor::figures::thousands(self.sessions as u64),
            compactor::figures::thousands(compactor::catalog::window::DEFAULT_WINDOW_TOKENS),
        );
        if !self.unknown.is_empty() {
            let names: Vec<String> =
                self.unknown.iter().map(|(m, n)| format!("{m} ({n})")).collect();
            text.push_str(&format!(
                "\n  unknown models: {}\nhint: add them with --models-file, or give --window N",
                names.join(", ")
            ));
        }
        Some(text)
    }
}
