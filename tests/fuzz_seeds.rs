//! Replays the committed fuzz seeds (`fuzz/seeds/<target>/`) through the same
//! harnesses the fuzz targets call (`compactor::fuzzing`), on stable and
//! without cargo-fuzz. Minimized findings are added there as seeds too, so
//! each one stays a regression test (see fuzz/README.md).

use crate::util::root;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs every seed of `target` through `harness`; returns how many ran.
fn replay(target: &str, harness: fn(&[u8])) -> usize {
    let dir = root().join("fuzz").join("seeds").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut failed = Vec::new();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        assert!(data.len() < 20_000, "{}: seeds stay under 20 KB", f.display());
        if catch_unwind(AssertUnwindSafe(|| harness(&data))).is_err() {
            failed.push(f.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(failed.is_empty(), "{target}: {} seeds broke an invariant: {failed:?}", failed.len());
    files.len()
}

#[test]
fn fuzz_seeds_decode() {
    let n = replay("decode", compactor::fuzzing::decode);
    assert!(n >= 30, "only {n} decode seeds");
}

#[test]
fn fuzz_seeds_parquet() {
    let n = replay("parquet", compactor::fuzzing::parquet);
    assert!(n >= 10, "only {n} parquet seeds");
}

#[test]
fn fuzz_seeds_skim() {
    let n = replay("skim", compactor::fuzzing::skim);
    assert!(n >= 20, "only {n} skim seeds");
}

#[test]
fn fuzz_seeds_pipeline() {
    let n = replay("pipeline", compactor::fuzzing::pipeline);
    assert!(n >= 10, "only {n} pipeline seeds");
}

/// Runs one minimized finding through its harness (each also runs above with
/// the rest of its target's seeds; this names it in the test list).
fn finding(target: &str, name: &str, harness: fn(&[u8])) {
    let path = root().join("fuzz").join("seeds").join(target).join(format!("finding_{name}"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    harness(&data);
}

/// `verify` looked for a merged summary at the input's head length, one past
/// where it is once sanitizing has dropped an orphan result from the head.
#[test]
fn fuzz_pipeline_tail_after_dropped_head_result() {
    finding("pipeline", "tail_after_dropped_head_result", compactor::fuzzing::pipeline);
}

/// A forced compaction dropped a head result answering no call; a valid
/// request wins, and `verify` checks the head after that repair.
#[test]
fn fuzz_pipeline_orphan_result_in_head() {
    finding("pipeline", "orphan_result_in_head", compactor::fuzzing::pipeline);
}

/// `verify` flagged a head call whose result was gone in the input: it now
/// compares head messages with the call pairing repair applied.
#[test]
fn fuzz_pipeline_unanswered_call_in_head() {
    finding("pipeline", "unanswered_call_in_head", compactor::fuzzing::pipeline);
}
