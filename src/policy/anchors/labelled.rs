//! Precision and recall of the extractor per category, on the hand-labelled
//! set of real corpus lines (`fixtures/anchors/labelled.jsonl`, see its
//! README). The labels were made apart from the extractor; this test only
//! reads them.

use super::{AnchorSet, Category};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const LABELLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/anchors/labelled.jsonl");

/// Least precision and recall per category (the acceptance: 98% for
/// commits, PRs, paths and error lines, 95% for the rest).
fn floor(c: Category) -> f64 {
    match c {
        Category::Commits | Category::Prs | Category::Paths | Category::Errors => 0.98,
        Category::Branches | Category::Handles | Category::Urls => 0.95,
    }
}

/// Per category: (true positives, extracted, labelled), summed over items,
/// each item's values counted once.
#[derive(Default, Clone, Copy)]
struct Tally {
    hit: usize,
    got: usize,
    want: usize,
}

impl Tally {
    /// Precision and recall; a ratio of nothing to nothing is 1 (no value
    /// wrongly taken, none missed).
    fn ratios(self) -> (f64, f64) {
        let r = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        (r(self.hit, self.got), r(self.hit, self.want))
    }
}

/// The extractor's values of one item, per category. Error lines are taken
/// as the pipeline takes them: from every message but a file-read tool
/// result (what the call's tool family tells; here the item's kind).
fn extracted(item: &Value) -> BTreeMap<Category, BTreeSet<String>> {
    let text = item["text"].as_str().unwrap_or_default();
    let file_read = item["speaker"] == "tool" && item["kind"] == "file_read";
    let mut set = AnchorSet::new();
    set.extract(text, 0, !file_read);
    let mut out: BTreeMap<Category, BTreeSet<String>> = BTreeMap::new();
    for a in set.iter() {
        out.entry(a.category).or_default().insert(a.value);
    }
    out
}

#[test]
#[allow(clippy::print_stdout, reason = "the table is the test's report, quoted in the README")]
fn labelled_set_precision_and_recall_per_category() {
    let data = std::fs::read_to_string(LABELLED).unwrap();
    let mut tally: BTreeMap<Category, Tally> = BTreeMap::new();
    let mut misses: Vec<String> = Vec::new();
    let mut items = 0;
    for (n, line) in data.lines().enumerate() {
        let item: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        items += 1;
        let got = extracted(&item);
        for c in Category::ALL {
            let want: BTreeSet<String> = item["anchors"][c.name()]
                .as_array()
                .unwrap_or_else(|| panic!("line {}: no {c} list", n + 1))
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            let empty = BTreeSet::new();
            let got = got.get(&c).unwrap_or(&empty);
            let t = tally.entry(c).or_default();
            t.hit += got.intersection(&want).count();
            t.got += got.len();
            t.want += want.len();
            for v in got.difference(&want) {
                misses.push(format!("{} {c} false positive: {v:?}", item["id"]));
            }
            for v in want.difference(got) {
                misses.push(format!("{} {c} missed: {v:?}", item["id"]));
            }
        }
    }
    assert!(items >= 300, "the labelled set has {items} items");
    println!("labelled anchors: {items} lines");
    println!("| category | labelled | extracted | correct | precision | recall |");
    println!("|---|---:|---:|---:|---:|---:|");
    for c in Category::ALL {
        let t = tally[&c];
        let (p, r) = t.ratios();
        println!(
            "| {c} | {} | {} | {} | {:.1}% | {:.1}% |",
            t.want,
            t.got,
            t.hit,
            100.0 * p,
            100.0 * r
        );
    }
    for m in &misses {
        println!("{m}");
    }
    for c in Category::ALL {
        let (p, r) = tally[&c].ratios();
        assert!(p >= floor(c) && r >= floor(c), "{c}: precision {p:.3}, recall {r:.3}");
    }
}
