#!/usr/bin/env bash
# Prints the path of a benchmark corpus of SIZE_MB of OpenAI JSONL, making it
# first if needed (under target/bench, never committed): the real corpus
# (../shared/corpus) converted to OpenAI JSONL, plus synthetic sessions with
# images and reasoning, cycled with varied texts by scripts/make_bench_corpus.py.
# Used by scripts/bench.sh and scripts/load_test.sh.
#
#   scripts/bench_corpus.sh 1024     # -> target/bench/corpus-1024MB.jsonl
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB="${1:?usage: scripts/bench_corpus.sh SIZE_MB}"
WORK="${BENCH_DIR:-target/bench}"
CORPUS="${CORPUS:-../shared/corpus}"
BIN=target/release/compactor
cargo build --release -q --features bench-tools
mkdir -p "$WORK"
seed="$WORK/seed.jsonl"
if [ ! -s "$seed" ]; then
  : >"$seed.tmp"
  if [ -d "$CORPUS" ]; then
    "$BIN" compact "$CORPUS" --mode none --to openai -q -o "$WORK/seed-corpus.jsonl" >&2
    cat "$WORK/seed-corpus.jsonl" >>"$seed.tmp"
  else
    echo "note: $CORPUS is absent; the corpus is synthetic only" >&2
  fi
  "$BIN" synth --sessions 12 --tokens 60000 --seed 7 -o "$WORK/seed-synth.jsonl" >&2
  cat "$WORK/seed-synth.jsonl" >>"$seed.tmp"
  mv "$seed.tmp" "$seed"
fi
path="$WORK/corpus-${SIZE_MB}MB.jsonl"
[ -s "$path" ] || python3 scripts/make_bench_corpus.py "$seed" "$path" "$SIZE_MB" >&2
echo "$path"
