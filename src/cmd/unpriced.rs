//! Sessions `--prices` could not price (replay, report), counted by model
//! for one notice on stderr.

use crate::cmd::messages::{counted, n};
use std::collections::BTreeMap;

/// How a session whose log names no model is listed.
const NO_MODEL: &str = "(the log names no model)";

/// Unpriced sessions by the model their log names.
#[derive(Default)]
pub struct Unpriced(BTreeMap<String, usize>);

impl Unpriced {
    /// Counts one session whose log names `model` (`None`: no model).
    pub fn add(&mut self, model: Option<String>) {
        *self.0.entry(model.unwrap_or_else(|| NO_MODEL.to_string())).or_default() += 1;
    }

    /// The notice, when a session was left without a cost.
    pub fn notice(&self) -> Option<String> {
        let total: usize = self.0.values().sum();
        if total == 0 {
            return None;
        }
        let by_model: Vec<String> =
            self.0.iter().map(|(m, k)| format!("{m} {}", n(*k as u64))).collect();
        Some(format!(
            "compactor: --prices: {} without a price, cost left out ({})\nhint: add the model with --prices FILE, or price every session as one with --model NAME",
            counted(total as u64, "session", "sessions"),
            by_model.join("; ")
        ))
    }
}
