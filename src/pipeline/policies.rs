//! Each session's policy under one mode: one for every session (`--window N`,
//! `--model NAME`), or, under `--model auto`, the policy of the window its
//! log's model has in the model table (the default window when the log names
//! no model the table knows). Every policy is built before any session is
//! read; workers only pick one, so the choice cannot depend on thread timing.

use crate::catalog::window::{Chosen, FROM_DEFAULT, ModelTable};
use crate::discover::facts;
use crate::model::Session;
use crate::policy::Policy;
use std::collections::BTreeMap;

/// The policies of one mode: the one policy, or one per window of the table.
#[derive(Clone, Debug)]
pub struct Policies {
    /// Under `--window` / `--model NAME`, and the default window's under `auto`.
    base: Policy,
    /// `auto`: the model table and a policy for each of its windows.
    auto: Option<(ModelTable, BTreeMap<u64, Policy>)>,
}

impl Policies {
    /// The policies of `base`'s mode: `base` alone, or with `auto` (the
    /// model table and the threshold cap) one more per window of the table,
    /// each with that window's threshold.
    pub fn new(base: Policy, auto: Option<(ModelTable, Option<u64>)>) -> Policies {
        let Some((table, cap)) = auto else { return Policies { base, auto: None } };
        let by_window = table
            .entries()
            .map(|(_, w)| w)
            .filter(|&w| w > 0)
            .map(|w| {
                let mut p = base.clone();
                p.set_window(w, cap);
                (w, p)
            })
            .collect();
        Policies { base, auto: Some((table, by_window)) }
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
        self.for_model(facts::model(session).as_deref())
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
