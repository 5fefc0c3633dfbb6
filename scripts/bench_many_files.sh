#!/usr/bin/env bash
# One output per input against one output for all (issue 28, item 8): the same
# N small synthetic sessions (default 5,000) compacted from one JSONL file to
# one file, and from N one-session files to `-o DIR/` (which fsyncs every output
# and keeps the resume manifest). Prints both wall times (median of REPS rounds,
# interleaved) and their ratio. One run on a shared machine: quote the ratio.
#
#   scripts/bench_many_files.sh [N]          # REPS=3 by default
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-5000}"
REPS="${REPS:-3}"
WORK="${BENCH_DIR:-target/bench}/many-$N"
BIN="${BIN:-target/release/compactor}"
[ -n "${BIN_SET:-}" ] || cargo build --release -q --features bench-tools
mkdir -p "$WORK"
if [ ! -d "$WORK/files" ]; then
  "$BIN" synth --sessions "$N" --tokens 1000 -o "$WORK/one.jsonl"
  mkdir -p "$WORK/files.tmp"
  split -l 1 -a 6 -d --additional-suffix=.jsonl "$WORK/one.jsonl" "$WORK/files.tmp/s"
  mv "$WORK/files.tmp" "$WORK/files"
fi
wall() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
one=(); many=()
for _ in $(seq "$REPS"); do
  rm -rf "$WORK/out-one.jsonl" "$WORK/out-dir"
  one+=("$(wall "$BIN" compact -q "$WORK/one.jsonl" -o "$WORK/out-one.jsonl")")
  many+=("$(wall "$BIN" compact -q "$WORK/files" -o "$WORK/out-dir/")")
done
cat "$WORK"/out-dir/*.jsonl | cmp -s - "$WORK/out-one.jsonl" || { echo "outputs differ" >&2; exit 1; }
m1=$(printf '%s\n' "${one[@]}" | median)
m2=$(printf '%s\n' "${many[@]}" | median)
printf '%s sessions: one file %.2f s, %s files to -o DIR/ %.2f s, ratio %.1fx (median of %s)\n' \
  "$N" "$m1" "$N" "$m2" "$(echo "$m2 / $m1" | bc -l)" "$REPS"
