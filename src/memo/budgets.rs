//! Every memo and its budget, in one place.
//!
//! The memos are values: the token counts' in each `Meter`, the others in
//! `policy::Caches`, which the engine (and `report`'s, `replay`'s and
//! `anchors`' runs) owns, one per run. Each memo's type sits beside the code
//! that fills it (its values are that code's types, which live above this
//! leaf); what each may hold is decided here, so that the memory they can
//! take is read in one file.
//! A shard is cleared when an insert would pass its budget (see
//! [`crate::memo`]); the unit of a budget is its memo's.
//!
//! | memo | where | key | unit | in all |
//! |---|---|---|---|---|
//! | token counts | `tokens/cache.rs` (one per `Meter`) | text | entries | 262,144 |
//! | parsed call arguments | `memo/call_args.rs` `CallArgs` | text | bytes of text | 16 MB |
//! | anchor scans | `policy/anchors` `Scans::whole` | text, errors taken | bytes of scans | 16 MB |
//! | anchor scans of pieces | `policy/anchors` `Scans::pieces` | text | bytes of scans | 4 MB |
//! | result descriptions | `policy/tool_families.rs` `Described` | map, output, call | bytes | 2 MB |
//! | shrunk arguments | `policy/micro_compact/` `ShrunkArgs` | text | bytes | 4 MB |
//! | summary acts | `policy/summary.rs` `SummaryMemos::acts` | map, call and result, their bytes | bytes | 2 MB |
//! | summary notes | `policy/summary.rs` `SummaryMemos::notes` | text, speaker | bytes | 2 MB |
//!
//! Those are the sizes for a run that compacts the same history again
//! ([`Reach::Run`]: `report`, `replay`); `compact`'s memos ([`Reach::Session`])
//! hold a sixteenth of each but the token counts.

/// How much a memo may hold: `shards` shards of `per_shard` each, in the
/// memo's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) shards: usize,
    pub(crate) per_shard: usize,
}

impl Budget {
    /// The whole memo's bound, in its unit.
    #[cfg(test)]
    pub(crate) const fn total(self) -> usize {
        self.shards * self.per_shard
    }

    /// This budget for a run of `reach`: whole for [`Reach::Run`], a
    /// [`SESSION_SHARE`]th of each shard for [`Reach::Session`].
    pub(crate) const fn within(self, reach: Reach) -> Budget {
        match reach {
            Reach::Run => self,
            Reach::Session => Budget { per_shard: self.per_shard / SESSION_SHARE, ..self },
        }
    }
}

/// How far apart the repeats a run's compaction memos catch lie, which sizes
/// them (the budgets below are [`Reach::Run`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Across the run: `report` compacts every session under several modes
    /// and `replay` at every trigger, each reading the same history again.
    Run,
    /// Within one session's compaction: `compact` reads a session's texts a
    /// few times while compacting it (the stages, then the summary, then the
    /// retention scan) and never again. Memory the memos would hold beyond
    /// that is only fresh pages and cache misses for the next session
    /// (benches/RESULTS.md, 2026-12-05, session 9).
    Session,
}

/// A [`Reach::Session`] memo holds this share of a [`Reach::Run`] one: 1 MB
/// of parsed arguments and 1 MB of anchor scans, more than the largest
/// session of the bench corpus reads. Our estimate, from that corpus.
const SESSION_SHARE: usize = 16;

/// Token counts, in entries. An entry is 48 B (key, count) plus a control
/// byte, and a map of 8,192 entries has 16,384 buckets (hashbrown keeps 1/8
/// free and rounds up to a power of two): ~0.8 MB a shard, ~26 MB in all,
/// reached within the first GB of a run, so memory does not grow with the
/// archive (a shard four times as large kept growing the peak RSS of runs
/// over a GB). 262,144 counts are far more than one session's messages,
/// which is where re-counting happens.
pub(crate) const TOKENS: Budget = Budget { shards: 32, per_shard: 1 << 13 };

/// Parsed call arguments, in bytes of argument text (parsed trees take about
/// as much again; 16 MB of text in all).
pub(crate) const CALL_ARGS: Budget = Budget { shards: 16, per_shard: 1 << 20 };

/// Anchor scans, in bytes of scan results (16 MB in all).
pub(crate) const ANCHOR_SCANS: Budget = Budget { shards: 16, per_shard: 1 << 20 };

/// Anchor scans of a text's pieces, in bytes of scan results (4 MB in all:
/// its texts come back within a session, where the scans of single texts
/// come back across sessions too).
pub(crate) const ANCHOR_PIECES: Budget = Budget { shards: 16, per_shard: 1 << 18 };

/// Descriptions of tool results, in bytes (2 MB in all: what is described
/// again is described within a session or two).
pub(crate) const DESCRIBED: Budget = Budget { shards: 16, per_shard: 1 << 17 };

/// Shrunk call arguments, in bytes (4 MB in all).
pub(crate) const SHRUNK: Budget = Budget { shards: 16, per_shard: 1 << 18 };

/// The summary's acts, in bytes (2 MB in all).
pub(crate) const SUMMARY_ACTS: Budget = Budget { shards: 16, per_shard: 1 << 17 };

/// The summary's notes, in bytes (2 MB in all).
pub(crate) const SUMMARY_NOTES: Budget = Budget { shards: 16, per_shard: 1 << 17 };

#[cfg(test)]
mod tests {
    use super::*;

    /// The table of the module doc is these numbers.
    #[test]
    fn the_totals_are_the_documented_ones() {
        const MB: usize = 1 << 20;
        assert_eq!(TOKENS.total(), 262_144);
        assert_eq!(CALL_ARGS.total(), 16 * MB);
        assert_eq!(ANCHOR_SCANS.total(), 16 * MB);
        assert_eq!(ANCHOR_PIECES.total(), 4 * MB);
        assert_eq!(DESCRIBED.total(), 2 * MB);
        assert_eq!(SHRUNK.total(), 4 * MB);
        assert_eq!(SUMMARY_ACTS.total(), 2 * MB);
        assert_eq!(SUMMARY_NOTES.total(), 2 * MB);
    }

    /// A run's reach sizes its memos: whole across the run, a sixteenth of
    /// each shard (and of the whole) within one session's compaction.
    #[test]
    fn a_session_reach_holds_a_sixteenth() {
        const MB: usize = 1 << 20;
        assert_eq!(CALL_ARGS.within(Reach::Run), CALL_ARGS);
        assert_eq!(CALL_ARGS.within(Reach::Session).total(), MB);
        assert_eq!(ANCHOR_SCANS.within(Reach::Session).total(), MB);
        for b in [ANCHOR_PIECES, DESCRIBED, SHRUNK, SUMMARY_ACTS, SUMMARY_NOTES] {
            let s = b.within(Reach::Session);
            assert_eq!((s.shards, s.total() * SESSION_SHARE), (b.shards, b.total()));
        }
    }
}
