//! Replay totals: peak request sizes and billed / cache-read tokens, without
//! and with compaction.
//!
//! What: [`Totals`] adds up one replay call by call ([`Totals::add`]) and
//! many replays session by session ([`Totals::absorb`]).
//! Why: a replay, the `replay` command's closing line and a report's mode
//! summary all total the same six figures; one type keeps the rule (peaks by
//! maximum, the rest by sum) in one place.
//! Example: calls of 100 and 300 tokens give a peak of 300 and 400 billed;
//! absorbing a session with peak 200 and 50 billed keeps the peak, bills 450.
//! Invariants: `peak_*` never exceeds `billed_*`; absorbing is associative
//! and commutative, so the totals do not depend on the order of sessions.

use super::Call;
use serde::{Deserialize, Serialize};

/// Peaks and sums of request tokens over calls or sessions.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Totals {
    /// The largest request without compaction.
    pub peak_original: u64,
    /// The largest request with compaction.
    pub peak_live: u64,
    /// Input tokens billed over all calls without compaction (sum of request sizes).
    pub billed_original: u64,
    /// The same with compaction.
    pub billed_live: u64,
    /// Input tokens read from the prompt cache without compaction.
    pub cache_read_original: u64,
    /// The same with compaction.
    pub cache_read_live: u64,
}

impl Totals {
    /// Counts one call: its requests are the peaks' candidates and are billed.
    pub fn add(&mut self, c: &Call) {
        self.absorb(&Totals {
            peak_original: c.tokens_original,
            peak_live: c.tokens_live,
            billed_original: c.tokens_original,
            billed_live: c.tokens_live,
            cache_read_original: c.cache_read_original,
            cache_read_live: c.cache_read_live,
        });
    }

    /// Takes in another set of totals: peaks by maximum, the rest summed.
    pub fn absorb(&mut self, o: &Totals) {
        self.peak_original = self.peak_original.max(o.peak_original);
        self.peak_live = self.peak_live.max(o.peak_live);
        self.billed_original += o.billed_original;
        self.billed_live += o.billed_live;
        self.cache_read_original += o.cache_read_original;
        self.cache_read_live += o.cache_read_live;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(original: u64, live: u64, read: u64) -> Call {
        Call {
            tokens_original: original,
            tokens_live: live,
            cache_read_original: read,
            cache_read_live: read / 2,
            ..Call::default()
        }
    }

    #[test]
    fn calls_give_peaks_by_maximum_and_bills_by_sum() {
        let mut t = Totals::default();
        t.add(&call(100, 90, 0));
        t.add(&call(300, 120, 100));
        t.add(&call(200, 60, 40));
        assert_eq!((t.peak_original, t.peak_live), (300, 120));
        assert_eq!((t.billed_original, t.billed_live), (600, 270));
        assert_eq!((t.cache_read_original, t.cache_read_live), (140, 70));
    }

    #[test]
    fn absorbing_sessions_does_not_depend_on_their_order() {
        let mut a = Totals::default();
        a.add(&call(500, 200, 10));
        let mut b = Totals::default();
        b.add(&call(100, 300, 20));
        b.add(&call(50, 50, 0));
        let (mut ab, mut ba) = (Totals::default(), Totals::default());
        ab.absorb(&a);
        ab.absorb(&b);
        ba.absorb(&b);
        ba.absorb(&a);
        assert_eq!(ab, ba);
        assert_eq!((ab.peak_original, ab.peak_live), (500, 300));
        assert_eq!((ab.billed_original, ab.billed_live), (650, 550));
    }
}
