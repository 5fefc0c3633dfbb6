//! Each session's window, resolved once: `--window N` or `--model NAME` give
//! every session the same one; `--model auto` (the default without either)
//! gives each the window of the model its log names (`compactor::facts`),
//! from the model table, or the default window when the log names no model
//! the table knows. One policy per window is built here, before any session
//! is read; workers only pick one.

use super::{model_table, policy};
use crate::cli::args::BudgetArgs;
use compactor::Mode;
use compactor::model::Session;
use compactor::policy::Policy;
use compactor::window::{Chosen, FROM_DEFAULT, ModelTable, threshold_tokens};
use std::collections::BTreeMap;

/// The `--model` value that asks for each session's own model.
pub const AUTO: &str = "auto";

/// Returns true if and only if these options leave each session's window to its log.
pub fn is_auto(args: &BudgetArgs) -> bool {
    args.window.is_none() && args.model.as_deref().is_none_or(|m| m == AUTO)
}

/// The policies of one mode: the one policy, or one per window of the table.
pub struct Policies {
    /// Under `--window` / `--model NAME`, and the default window's under `auto`.
    base: Policy,
    /// `auto`: the model table and a policy for each of its windows.
    auto: Option<(ModelTable, BTreeMap<u64, Policy>)>,
}

impl Policies {
    pub fn from_args(
        mode: Mode,
        args: &BudgetArgs,
        force: bool,
        target: Option<u64>,
    ) -> anyhow::Result<Policies> {
        let base = policy(mode, args, force, target)?;
        if !is_auto(args) {
            return Ok(Policies { base, auto: None });
        }
        let table = model_table(args.models_file.as_deref())?;
        let by_window = table
            .entries()
            .map(|(_, w)| w)
            .filter(|&w| w > 0)
            .map(|w| {
                let mut p = base.clone();
                p.window = w;
                p.threshold = threshold_tokens(w, args.threshold_cap);
                (w, p)
            })
            .collect();
        Ok(Policies { base, auto: Some((table, by_window)) })
    }

    /// Returns true if and only if each session's window comes from its log.
    pub fn is_auto(&self) -> bool {
        self.auto.is_some()
    }

    /// The one policy (under `auto`: the default window's).
    pub fn base(&self) -> &Policy {
        &self.base
    }

    /// The policy for `session`, and under `auto` how its window was chosen.
    pub fn for_session(&self, session: &Session) -> (&Policy, Option<Chosen>) {
        if self.auto.is_none() {
            return (&self.base, None);
        }
        self.for_model(compactor::facts::model(session).as_deref())
    }

    /// The policy at `window` (the base one when no other has it).
    pub fn for_window(&self, window: u64) -> &Policy {
        match &self.auto {
            Some((_, by_window)) if window != self.base.window => {
                by_window.get(&window).unwrap_or(&self.base)
            }
            _ => &self.base,
        }
    }

    /// [`Policies::for_session`] of a session whose log names `model`.
    pub fn for_model(&self, model: Option<&str>) -> (&Policy, Option<Chosen>) {
        let Some((table, by_window)) = &self.auto else { return (&self.base, None) };
        let (window, chosen) = table.choose(model);
        let policy = match chosen.window_from.as_str() {
            FROM_DEFAULT => &self.base,
            _ => by_window.get(&window).unwrap_or(&self.base),
        };
        (policy, Some(chosen))
    }
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
            compactor::policy::tool_families::thousands(self.sessions as u64),
            compactor::policy::tool_families::thousands(compactor::window::DEFAULT_WINDOW_TOKENS),
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
