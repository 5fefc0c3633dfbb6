//! Totals that add up: counts, and counts by key, merged field by field. The
//! figures a compaction records (its summarizer counts here; run summaries and
//! archive statistics in `report`) are summed over sessions, shards and
//! inputs; each says which of its fields add up, in one list.

use std::collections::BTreeMap;

/// A total that another of its kind adds into.
pub trait Tally {
    /// Adds `other` into `self`.
    fn tally(&mut self, other: &Self);
}

impl Tally for u64 {
    fn tally(&mut self, other: &u64) {
        *self += other;
    }
}

impl Tally for usize {
    fn tally(&mut self, other: &usize) {
        *self += other;
    }
}

/// Counts by key: each of `other`'s adds into the same key's.
impl<K: Ord + Clone, V: Tally + Default> Tally for BTreeMap<K, V> {
    fn tally(&mut self, other: &Self) {
        for (k, v) in other {
            self.entry(k.clone()).or_default().tally(v);
        }
    }
}

/// Adds each named field of `$from` into the same field of `$into`
/// ([`Tally::tally`]): totals merged field by field.
macro_rules! tally_fields {
    ($into:expr, $from:expr; $($field:ident),+ $(,)?) => {
        $( $crate::figures::tally::Tally::tally(&mut $into.$field, &$from.$field); )+
    };
}
pub(crate) use tally_fields;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Totals {
        runs: u64,
        items: usize,
        by_kind: BTreeMap<&'static str, u64>,
    }

    #[test]
    fn fields_and_keys_add_up() {
        let mut a = Totals { runs: 1, items: 2, by_kind: BTreeMap::from([("x", 1), ("y", 2)]) };
        let b = Totals { runs: 10, items: 20, by_kind: BTreeMap::from([("y", 5), ("z", 7)]) };
        tally_fields!(a, b; runs, items, by_kind);
        assert_eq!((a.runs, a.items), (11, 22));
        assert_eq!(a.by_kind, BTreeMap::from([("x", 1), ("y", 7), ("z", 7)]));
    }
}
