//! What compactions of one run remember, as one value its caller owns.
//!
//! What: parsed call arguments, anchor scans (of texts and of arguments'
//! pieces), tool-result descriptions, shrunk arguments and the summary's acts
//! and notes, each a [`crate::memo::Memo`] with its budget
//! ([`crate::memo::budgets`]).
//!
//! Why: `report` compacts every session under three modes and `replay` at
//! every trigger, and each reads the same calls and texts again. The memos
//! were process-wide statics; as a value, the engine (and `report`'s and
//! `replay`'s callers) owns one per run and hands it down, so a test or a
//! library user gets fresh ones and nothing outlives the run that filled it.
//!
//! Example: `let caches = Caches::default();` then
//! `policy::compact_prepared(&Prepared::new(&session, &caches), &policy, &meter)`.
//!
//! Invariants:
//! - A cache changes no result, only its cost: each memo's key holds
//!   everything its value depends on (a text's hash *and* length; the tool
//!   map's texts where the value reads the map), which each memo's key test
//!   checks input by input.
//! - It is `Sync`: the workers of a run share one.

use super::anchors::Scans;
use super::micro_compact::ShrunkArgs;
use super::summary::SummaryMemos;
use super::tool_families::Described;
pub use crate::memo::budgets::Reach;
use crate::memo::call_args::CallArgs;

/// The memos of compaction (see the module doc).
pub struct Caches {
    pub(crate) args: CallArgs,
    pub(crate) scans: Scans,
    pub(crate) described: Described,
    pub(crate) shrunk: ShrunkArgs,
    pub(crate) summary: SummaryMemos,
}

impl Caches {
    /// Empty memos sized for a run of `reach`: [`Reach::Session`] for a run
    /// that compacts each session once (`compact`), [`Reach::Run`] for one
    /// that compacts the same history again (`report`, `replay`).
    pub fn new(reach: Reach) -> Caches {
        Caches {
            args: CallArgs::new(reach),
            scans: Scans::new(reach),
            described: Described::new(reach),
            shrunk: ShrunkArgs::new(reach),
            summary: SummaryMemos::new(reach),
        }
    }
}

/// [`Reach::Run`]'s memos: right for any run, at most their memory.
impl Default for Caches {
    fn default() -> Self {
        Caches::new(Reach::Run)
    }
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Caches")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workers of a run share one.
    #[test]
    fn caches_are_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Caches>();
    }
}
