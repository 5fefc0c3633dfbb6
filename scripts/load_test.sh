#!/usr/bin/env bash
# The load tests of issue #6, too slow for CI: 100,000 small files in one tree,
# and a 4 GB archive, each with bounded memory and open files (tests/load.rs,
# `#[ignore]`d there). Prints each test's figures.
#
#   scripts/load_test.sh              # makes the 4 GB archive once (target/bench)
#   LOAD_ARCHIVE=big.jsonl scripts/load_test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q --features bench-tools
if [ -z "${LOAD_ARCHIVE:-}" ]; then
  # The benchmark's generator: shapes of ../shared/corpus, texts varied per copy.
  LOAD_ARCHIVE="$(scripts/bench_corpus.sh 4096)"
fi
export LOAD_ARCHIVE
echo "archive: $LOAD_ARCHIVE ($(stat -c %s "$LOAD_ARCHIVE") bytes)"
cargo test --release --test integration load:: -- --ignored --nocapture --test-threads 1 2>&1 |
  grep -E '^(test |100,000|4 GB|200 MB|test result)|panicked|assert'
