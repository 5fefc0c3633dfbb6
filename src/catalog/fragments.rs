//! A table keyed by name fragments, looked up by the longest fragment a name
//! contains: the one lookup behind the model table (windows) and the price
//! table.
//!
//! Fragments are stored lower-cased and a name is lower-cased before it is
//! searched, so `GPT-4o-mini` finds `gpt-4o-mini` before `gpt-4o` before
//! `gpt-4`. Entries are kept sorted (a `BTreeMap`), so listing them and
//! breaking a tie between two fragments of one length are deterministic: of
//! equal lengths, the fragment that sorts last wins.

use std::collections::BTreeMap;

/// Values by lower-cased name fragment.
#[derive(Clone, Debug)]
pub struct FragmentTable<V> {
    entries: BTreeMap<String, V>,
}

impl<V> FragmentTable<V> {
    /// A table of `entries` (fragments lower-cased; a later one replaces an
    /// earlier one of the same fragment).
    pub fn new<K: AsRef<str>>(entries: impl IntoIterator<Item = (K, V)>) -> FragmentTable<V> {
        let mut t = FragmentTable { entries: BTreeMap::new() };
        t.extend(entries);
        t
    }

    /// Adds or replaces entries (fragments are matched lower-cased).
    pub fn extend<K: AsRef<str>>(&mut self, entries: impl IntoIterator<Item = (K, V)>) {
        for (k, v) in entries {
            self.entries.insert(k.as_ref().to_lowercase(), v);
        }
    }

    /// The value of the longest fragment `name` contains (case-insensitive).
    pub fn lookup(&self, name: &str) -> Option<&V> {
        let name = name.to_lowercase();
        self.entries
            .iter()
            .filter(|(k, _)| name.contains(k.as_str()))
            .max_by_key(|(k, _)| k.len())
            .map(|(_, v)| v)
    }

    /// Every entry, sorted by fragment.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &V)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_contained_fragment_wins_whatever_the_case() {
        let t = FragmentTable::new([("gpt-4", 1), ("gpt-4o", 2), ("GPT-4o-mini", 3), ("o3", 4)]);
        assert_eq!(t.lookup("openai/gpt-4o-mini-2024"), Some(&3));
        assert_eq!(t.lookup("GPT-4O"), Some(&2));
        assert_eq!(t.lookup("gpt-4-0613"), Some(&1));
        assert_eq!(t.lookup("claude"), None);
    }

    /// Two fragments of one length in one name: the one that sorts last wins
    /// (the tables' behaviour before they shared this code).
    #[test]
    fn a_tie_in_length_goes_to_the_fragment_sorting_last() {
        let t = FragmentTable::new([("abc", 1), ("xyz", 2)]);
        assert_eq!(t.lookup("abc-xyz"), Some(&2));
        assert_eq!(t.lookup("xyz-abc"), Some(&2));
    }

    #[test]
    fn extend_replaces_and_entries_are_sorted_lower_cased() {
        let mut t = FragmentTable::new([("b", 1), ("a", 2)]);
        t.extend([("B".to_string(), 9), ("c".to_string(), 3)]);
        let all: Vec<(&str, i32)> = t.entries().map(|(k, &v)| (k, v)).collect();
        assert_eq!(all, [("a", 2), ("b", 9), ("c", 3)]);
    }
}
