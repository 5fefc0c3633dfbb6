#!/usr/bin/env bash
# Issue 25's gate: every converted session is a request its API accepts.
#
# Writes `--to openai` and `--to anthropic` outputs of every fixture and every
# corpus file (when ../shared/corpus exists), with `--mode none` and with
# `--mode lean --force`, and runs scripts/check_requests.py over them: a checker
# written apart from the writers, from the APIs' reference docs. Exits 1 on any
# violation.
#
#   scripts/check_requests.sh [BINARY] [CORPUS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/compactor}"
corpus="${2:-../shared/corpus}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

inputs=(fixtures/openai fixtures/claude_code fixtures/codex fixtures/anthropic fixtures/sharegpt
  fixtures/swe_agent fixtures/toolbench fixtures/parquet fixtures/edge)
if [ -d "$corpus" ]; then
  inputs+=("$corpus")
else
  echo "check_requests: $corpus not found: fixtures only"
fi

status=0
for api in openai anthropic; do
  for mode in none lean; do
    dir="$out/$api-$mode/"
    extra=()
    [ "$mode" = lean ] && extra=(--force --window 32000)
    # Rejected records (exit 3: the fixtures hold deliberately bad lines) are
    # not requests; everything written must be one.
    for input in "${inputs[@]}"; do
      # One output directory per input: fixture folders share file names.
      set +e
      "$bin" compact "$input" --to "$api" --mode "$mode" "${extra[@]}" -q \
        -o "$dir$(basename "$input")/"
      code=$?
      set -e
      if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then
        echo "check_requests: compact $input --to $api --mode $mode exited $code" >&2
        exit 2
      fi
    done
    echo "== --to $api --mode $mode"
    python3 scripts/check_requests.py --api "$api" --allow-key id --allow-key parent_id --allow-key compaction \
      --allow-inflight -q "$dir" || status=1
  done
done
exit "$status"
