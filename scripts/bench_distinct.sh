#!/usr/bin/env bash
# Timings on distinct copies of the real corpus (issue 38), side by side with an
# older build when one is given; prints a Markdown table (progress on stderr).
#
#   scripts/bench_distinct.sh [OLD_BIN]   # REPS=3 COPIES=6 (env)
#
# Data: COPIES copies of ../shared/corpus made by scripts/distinct_copies.py
# (every line of every long string differs between copies, so no count cache
# or memo carries one copy's work to the next), of the logs WITHOUT earlier
# compactions, so that reading the whole history costs nothing extra: the
# Claude Code logs, the agent-trajectory JSON, SWE-agent and ToolBench, and the
# Codex rollouts but switch247__fleet-release (it holds compactions). Made
# once under target/bench/distinct-COPIES (never committed) and checked: each
# copy reads with `compactor stats` to the source's sessions, messages and calls.
#
# Runs, interleaved in REPS rounds (every run once, then again) so that a slow
# spell of this shared machine lands on all of them; medians of the rounds:
#   stats -j1 and -j2; compact --mode lean --force -j1 and -j2 (to a directory);
#   with OLD_BIN, its stats -j1 and compact -j1 next to ours;
#   two of our stats -j1 at once (the slower of the pair), against one alone: what
#   this machine's two cores give (the ceiling of a -j2 speed-up; other work on
#   the machine lowers it);
#   peak RSS of stats and compact on one session: a small one (SWE-agent's
#   function_calling_simple.traj) and a large one (Task-54's Claude Code log),
#   ours and OLD_BIN's.
# Ratios are the figures to read; seconds move with the machine's load.
# Called by scripts/bench.sh; figures and method in benches/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

OLD="${1:-${OLD_BIN:-}}"
REPS="${REPS:-3}"
COPIES="${COPIES:-6}"
WORK="${BENCH_DIR:-target/bench}"
CORPUS="${CORPUS:-../shared/corpus}"
BIN="${BIN:-target/release/compactor}"
DATA="$WORK/distinct-$COPIES"
SMALL="$CORPUS/swe-agent-traj/trajectories/demonstrations/function_calling_simple.traj"
LARGE="$CORPUS/claude-code-jsonl/Hale17OT__Task-54/sessions/develop-1.jsonl"

command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[ -x "$BIN" ] || cargo build --release -q --features bench-tools
mkdir -p "$WORK"
if [ ! -f "$DATA/.complete" ]; then
  rm -rf "$DATA"
  python3 scripts/distinct_copies.py \
    "$CORPUS/claude-code-jsonl" "$CORPUS/agent-trajectory-json" "$CORPUS/swe-agent-traj" \
    "$CORPUS/toolbench-dfsdt" "$CORPUS/codex-rollout-jsonl" "$DATA" \
    --copies "$COPIES" --exclude switch247__fleet-release --check "$BIN" >&2
  touch "$DATA/.complete"
fi
mb=$(du -sm --apparent-size "$DATA/" | cut -f1)

# run NAME BIN ARGS...: one timed run; appends its wall seconds to WALLS[NAME]
# and its peak RSS (MB) to RSS[NAME].
declare -A WALLS RSS
run() {
  local name=$1 bin=$2
  shift 2
  rm -rf "$WORK/distinct-out"
  /usr/bin/time -f '%e %M' -o "$WORK/distinct.time" "$bin" "$@" >/dev/null 2>"$WORK/distinct.err" || {
    echo "$name failed:" >&2; tail -5 "$WORK/distinct.err" >&2; exit 1
  }
  read -r wall kb <"$WORK/distinct.time"
  WALLS[$name]+="$wall "
  RSS[$name]+="$((kb / 1024)) "
  echo "  $name: $wall s, $((kb / 1024)) MB" >&2
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2); print (NR % 2) ? v[m] : (v[m] + v[m + 1]) / 2 }'; }
largest() { printf '%s\n' "$@" | sort -g | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# shellcheck disable=SC2086 # lists of numbers
med() { median ${WALLS[$1]}; }

compact_args=(compact "$DATA" -q --mode lean --force -o "$WORK/distinct-out/")
for round in $(seq "$REPS"); do
  echo "round $round of $REPS ($mb MB, $COPIES copies)" >&2
  run stats_j1 "$BIN" stats "$DATA" -j1
  [ -n "$OLD" ] && run old_stats_j1 "$OLD" stats "$DATA" -j1
  run compact_j1 "$BIN" "${compact_args[@]}" -j1
  [ -n "$OLD" ] && run old_compact_j1 "$OLD" "${compact_args[@]}" -j1
  run stats_j2 "$BIN" stats "$DATA" -j2
  run compact_j2 "$BIN" "${compact_args[@]}" -j2
  /usr/bin/time -f %e -o "$WORK/pair1.time" "$BIN" stats "$DATA" -j1 >/dev/null 2>&1 &
  /usr/bin/time -f %e -o "$WORK/pair2.time" "$BIN" stats "$DATA" -j1 >/dev/null 2>&1 &
  wait
  slower=$(printf '%s\n' "$(cat "$WORK/pair1.time")" "$(cat "$WORK/pair2.time")" | sort -g | tail -1)
  WALLS[pair]+="$slower "
  echo "  two stats -j1 at once: $slower s (the slower)" >&2
  for side in new old; do
    bin=$BIN
    if [ "$side" = old ]; then [ -n "$OLD" ] || continue; bin=$OLD; fi
    run "${side}_small_stats" "$bin" stats "$SMALL" -j1
    run "${side}_small_compact" "$bin" compact "$SMALL" -q -j1 --mode lean --force -o "$WORK/distinct-out/"
    run "${side}_large_compact" "$bin" compact "$LARGE" -q -j1 --mode lean --force -o "$WORK/distinct-out/"
  done
done
rm -rf "$WORK/distinct-out"

s1=$(med stats_j1); s2=$(med stats_j2); c1=$(med compact_j1); c2=$(med compact_j2)
pair=$(med pair)
# shellcheck disable=SC2086 # lists of numbers
rss() { largest ${RSS[$1]}; }
rss_row() {
  local old=""
  [ -n "$OLD" ] && old=" (old: $(rss "old_$2") MB)"
  echo "| peak RSS, $1 | $(rss "new_$2") MB$old | $3 |"
}
echo "Distinct copies: $COPIES x the corpus without compactions, $mb MB; medians of $REPS interleaved rounds; \`$(basename "$BIN")\` = $(git rev-parse --short HEAD 2>/dev/null || echo '?')${OLD:+, old = \`$OLD\`}."
echo
echo "| figure | value | target |"
echo "|---|---:|---|"
echo "| \`stats\` -j1 / -j2, s | $s1 / $s2 | |"
echo "| \`compact --mode lean --force\` -j1 / -j2, s | $c1 / $c2 | |"
if [ -n "$OLD" ]; then
  o1=$(med old_stats_j1); oc=$(med old_compact_j1)
  echo "| old \`stats\` / \`compact\` -j1, s | $o1 / $oc | |"
  echo "| \`stats\` speed-up, old / new, -j1 | $(ratio "$o1" "$s1") | at least 1.2 when old is \`3617458\` (issue 38) |"
  echo "| \`compact\` speed-up, old / new, -j1 | $(ratio "$oc" "$c1") | |"
  echo "| old compact / old stats, -j1 | $(ratio "$oc" "$o1") | |"
fi
echo "| compact / stats, -j1 | $(ratio "$c1" "$s1") | at most 1.3 |"
echo "| compact / stats, -j2 | $(ratio "$c2" "$s2") | at most 1.3 |"
echo "| compact speed-up, -j1 / -j2 | $(ratio "$c1" "$c2") | at least 1.7 |"
echo "| stats speed-up, -j1 / -j2 | $(ratio "$s1" "$s2") | |"
echo "| this machine's two cores: 2 x one stats -j1 / two at once | $(awk -v a="$s1" -v b="$pair" 'BEGIN { printf "%.2f", 2 * a / b }') | (the ceiling of a speed-up) |"
rss_row "stats of one small session (\`function_calling_simple.traj\`)" small_stats "about 82 MB at most"
rss_row "compact of the same" small_compact ""
rss_row "compact of one large session (Task-54, 2.9 MB)" large_compact ""
