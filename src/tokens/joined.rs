//! Test texts for the tokenizer's property tests: pieces of an alphabet
//! joined at random, so that the characters a test cares about meet in every
//! order.

use proptest::prelude::*;
use std::ops::Range;

/// Texts of `count` strings of `alphabet` (each drawn at random), joined.
pub(crate) fn joined(
    alphabet: &'static [&'static str],
    count: Range<usize>,
) -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(alphabet), count).prop_map(|p| p.concat())
}
