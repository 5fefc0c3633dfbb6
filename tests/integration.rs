//! The one integration-test binary (ripgrep's layout): shared helpers, then one
//! module per concern.

// Helpers outside `#[test]` functions may panic too: they are test code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod macros;
mod util;

// `compactor compact` / `anchors` / `models` end to end through the binary.
mod cli;
// Golden cases: input, arguments, expected output, expected report lines.
mod golden;
// The determinism proof: threads, creation order, stdin, JSONL vs Parquet.
mod determinism;
// Hostile and broken input: no panic, nothing good lost.
mod hostile;
// `compact --resume`: killed runs finished from the manifest, same bytes.
mod resume;
// Big inputs and load: a 200 MB line (CI); 100,000 files and 4 GB (scripts/load_test.sh).
mod load;
// Property tests over generated sessions (proptest).
mod properties;
// The fuzz seed corpus replayed through the fuzz harnesses (fuzz/README.md).
mod fuzz_seeds;
// Issue #2's figures: a 500K-token session at a 1M window, legacy vs lean.
mod scale;
// The real corpus in ../shared/corpus; skipped, with a reason, when absent.
mod corpus;
// Issue 37 points 5-7: our compaction in the agent's own form, continuations, subagents.
mod lineage;
// `replay`, `report` and `check` through the binary.
mod report;
// Issue #7: the Arrow IPC worker mode, --shard, report --merge.
mod cluster;
// One module per dialect: corpus round trips, conversions, detection, bad input.
mod format_anthropic;
mod format_claude_code;
mod format_codex;
mod format_parquet;
mod format_sharegpt;
// Issue 25: converted sessions are valid requests (repairs, --keep-source-fields).
mod format_swe_agent;
mod format_toolbench;
mod requests;
// Issue 27: the agents' own folders without INPUT, `stats --by`, `--model auto`.
mod discover;
// Issue 29: the optional summarizer model, against a real HTTP server process.
mod summarizer;
