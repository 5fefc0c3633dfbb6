#!/usr/bin/env bash
# Checks that two builds of compactor write byte-identical outputs: the check
# every performance change must pass (a faster build must change no byte).
# Runs each command below with both binaries on the same input and compares
# every file and stream they write.
#
#   scripts/same_outputs.sh OLD_BIN NEW_BIN INPUT.jsonl [WORK_DIR]
#
# e.g. with a build of the commit before in another worktree:
#   git worktree add /tmp/old HEAD~1 && (cd /tmp/old && cargo build --release)
#   head -n 110 target/bench/corpus-1024MB.jsonl > /tmp/slice.jsonl
#   scripts/same_outputs.sh /tmp/old/target/release/compactor target/release/compactor /tmp/slice.jsonl
set -euo pipefail
OLD="${1:?usage: scripts/same_outputs.sh OLD_BIN NEW_BIN INPUT [WORK_DIR]}"
NEW="${2:?usage: scripts/same_outputs.sh OLD_BIN NEW_BIN INPUT [WORK_DIR]}"
INPUT="${3:?usage: scripts/same_outputs.sh OLD_BIN NEW_BIN INPUT [WORK_DIR]}"
WORK="${4:-$(mktemp -d)}"
rm -rf "$WORK/old" "$WORK/new"
mkdir -p "$WORK/old" "$WORK/new"

# NAME, then the arguments; OUT stands for the side's output directory.
check() {
  local name=$1
  shift
  local side bin
  for side in old new; do
    bin=$OLD
    [ "$side" = new ] && bin=$NEW
    "$bin" "${@//OUT/$WORK/$side}" >"$WORK/$side/$name.stdout" 2>"$WORK/$side/$name.stderr" ||
      echo "$?" >"$WORK/$side/$name.status"
    # Messages that name an output path name the side's directory: say OUT.
    sed -i "s#$WORK/$side#OUT#g" "$WORK/$side/$name.stdout" "$WORK/$side/$name.stderr"
  done
}

check lean compact "$INPUT" -j2 -q --mode lean --report OUT/lean-report.jsonl -o OUT/lean.jsonl
check redact compact "$INPUT" -j2 -q --mode lean --redact -o OUT/redact.jsonl
check tiered compact "$INPUT" -j2 -q --mode tiered --force --report OUT/tiered-report.jsonl -o OUT/tiered.jsonl
check legacy compact "$INPUT" -j2 -q --mode legacy --report OUT/legacy-report.jsonl -o OUT/legacy.jsonl
check hermes compact "$INPUT" -j2 -q --counter hermes --report OUT/hermes-report.jsonl -o OUT/hermes.jsonl
check report report "$INPUT" -j2 -q -o OUT/report
check report-hermes report "$INPUT" -j2 -q --counter hermes -o OUT/report-hermes
check replay replay "$INPUT" -j2 --calls OUT/calls.jsonl --write-final OUT/final --report OUT/replay.jsonl
check anchors anchors "$INPUT"
check stats stats "$INPUT" -j2
check stats-json stats "$INPUT" -j2 --json
check stats-by-session stats "$INPUT" -j2 --by session --json

if diff -r "$WORK/old" "$WORK/new" >/dev/null; then
  echo "same outputs: $(find "$WORK/new" -type f | wc -l) files ($WORK)"
else
  diff -rq "$WORK/old" "$WORK/new" || true
  echo "outputs differ ($WORK)" >&2
  exit 1
fi
