#!/usr/bin/env bash
# End-to-end benchmark of the release binary, one run, figures in benches/RESULTS.md.
#
#   scripts/bench.sh [SIZE_MB]        # default 1024 (1 GB)
#   BIG_MB=4096 scripts/bench.sh      # also peak RSS of `compact` on a 4 GB corpus
#   REPS=5 scripts/bench.sh           # rounds of the timed runs (default 3)
#   OLD_BIN=/tmp/old scripts/bench.sh # also an older build beside this one (distinct copies)
#
# Builds release; makes (once, under target/bench, never committed) a corpus of
# SIZE_MB of OpenAI JSONL from the shapes of ../shared/corpus plus synthetic
# sessions with images and reasoning (scripts/make_bench_corpus.py); then times:
#   - the floor: `compactor tokenize` (read, decode, tokenize every text once, no cache)
#   - `compact --mode lean` at -j1 and -j2, `--counter hermes` at -j1,
#   - `report` (four modes, with replay) and `replay` at -j2,
#   - replay of one 2,000- and one 20,000-message session (linearity),
#   - per-session latency of a forced compaction of 300-message sessions,
#   - stats and compact on distinct copies of the real corpus, side by side with
#     OLD_BIN when it is set (scripts/bench_distinct.sh, scripts/distinct_copies.py),
# with wall time and peak RSS from /usr/bin/time -v. The runs the ratios are
# made of go in REPS interleaved rounds (every run once, then again), so a slow
# spell of this shared machine lands on all of them; the tables give medians,
# the spread and the largest peak RSS. Two single-thread floors run at once
# measure what two cores give this machine (the ceiling of any -j2 speed-up).
# Nothing here is a test: CI never times anything.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MB="${1:-${SIZE_MB:-1024}}"
BIG_MB="${BIG_MB:-0}"
REPS="${REPS:-3}"
WORK="${BENCH_DIR:-target/bench}"
CORPUS="${CORPUS:-../shared/corpus}"
OUT="${RESULTS:-benches/RESULTS.md}"
BIN=target/release/compactor

command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
cargo build --release -q --features bench-tools
mkdir -p "$WORK"

# --- corpus -------------------------------------------------------------------
make_corpus() { BENCH_DIR="$WORK" CORPUS="$CORPUS" scripts/bench_corpus.sh "$1"; }
data="$(make_corpus "$SIZE_MB")"
bytes=$(stat -c %s "$data")
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')

# --- measuring ----------------------------------------------------------------
# run NAME CMD...: runs CMD under /usr/bin/time -v; sets WALL (s) and RSS (MB).
run() {
  local name="$1"; shift
  /usr/bin/time -v "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || {
    local rc=$?
    # exit 3 (some records rejected) still measured a full run
    [ "$rc" -eq 3 ] || { echo "$name failed ($rc):" >&2; tail -5 "$WORK/$name.err" >&2; exit 1; }
  }
  WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$WORK/$name.err")
  RSS=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$WORK/$name.err")
  echo "  $name: ${WALL} s, ${RSS} MB" >&2
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rate() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

sessions=$(grep -c '' "$data")
echo "corpus: $data ($mb MB, $sessions sessions)" >&2

# median / spread of a list of seconds; the largest of a list of MB.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2); print (NR % 2) ? v[m] : (v[m] + v[m + 1]) / 2 }'; }
spread() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }'; }
largest() { printf '%s\n' "$@" | sort -g | tail -1; }

names=(tokenize_j1 tokenize_j2 compact_j1 compact_j2 hermes_j1 report_j2 replay_j2)
cmd_of() {
  case "$1" in
    tokenize_j1) echo "$BIN tokenize $data -j1" ;;
    tokenize_j2) echo "$BIN tokenize $data -j2" ;;
    compact_j1) echo "$BIN compact $data -j1 -q -o $WORK/out.jsonl" ;;
    compact_j2) echo "$BIN compact $data -j2 -q -o $WORK/out.jsonl" ;;
    hermes_j1) echo "$BIN compact $data -j1 -q --counter hermes -o $WORK/out-hermes.jsonl" ;;
    report_j2) echo "$BIN report $data -j2 -q -o $WORK/report" ;;
    replay_j2) echo "$BIN replay $data -j2 --report $WORK/replay.jsonl" ;;
  esac
}
declare -A walls rsss
for round in $(seq "$REPS"); do
  echo "round $round of $REPS" >&2
  for name in "${names[@]}"; do
    # shellcheck disable=SC2046 # the command is split into words on purpose
    run "$name" $(cmd_of "$name")
    walls[$name]+="$WALL "; rsss[$name]+="$RSS "
  done
done
# shellcheck disable=SC2086 # lists of numbers
{
  floor1=$(median ${walls[tokenize_j1]}); floor1_rss=$(largest ${rsss[tokenize_j1]})
  floor2=$(median ${walls[tokenize_j2]}); floor2_rss=$(largest ${rsss[tokenize_j2]})
  c1=$(median ${walls[compact_j1]}); c1_rss=$(largest ${rsss[compact_j1]})
  c2=$(median ${walls[compact_j2]}); c2_rss=$(largest ${rsss[compact_j2]})
  h1=$(median ${walls[hermes_j1]}); h1_rss=$(largest ${rsss[hermes_j1]})
  r2=$(median ${walls[report_j2]}); r2_rss=$(largest ${rsss[report_j2]})
  p2=$(median ${walls[replay_j2]}); p2_rss=$(largest ${rsss[replay_j2]})
}

# The machine's own ceiling: two single-thread floors at once against one alone.
pair_walls=()
for round in $(seq "$REPS"); do
  /usr/bin/time -f %e -o "$WORK/pair1.time" "$BIN" tokenize "$data" -j1 >/dev/null 2>&1 &
  /usr/bin/time -f %e -o "$WORK/pair2.time" "$BIN" tokenize "$data" -j1 >/dev/null 2>&1 &
  wait
  pair_walls+=("$(largest "$(tail -1 "$WORK/pair1.time")" "$(tail -1 "$WORK/pair2.time")")")
done
pair=$(median "${pair_walls[@]}")
echo "  two tokenize -j1 at once: ${pair_walls[*]} s" >&2
rm -f "$WORK/out.jsonl" "$WORK/out-hermes.jsonl"

# Replay linearity: one session of 2,000 and one of 20,000 messages; medians of 3.
"$BIN" synth --sessions 1 --messages 2000 --seed 101 -o "$WORK/m2k.jsonl"
"$BIN" synth --sessions 1 --messages 20000 --seed 101 -o "$WORK/m20k.jsonl"
: >"$WORK/empty.jsonl"
# Medians of five, interleaved: the 2,000-message replay takes a third of a
# second, and one slow run of it moves the ratio by whole units.
lin=5; t0=(); t2=(); t20=()
for i in $(seq "$lin"); do
  run startup "$BIN" replay "$WORK/empty.jsonl" --report "$WORK/r0.jsonl"; t0+=("$WALL")
  run replay_2k "$BIN" replay "$WORK/m2k.jsonl" -j1 --report "$WORK/r2k.jsonl"; t2+=("$WALL")
  run replay_20k "$BIN" replay "$WORK/m20k.jsonl" -j1 --report "$WORK/r20k.jsonl"; t20+=("$WALL")
done
startup=$(median "${t0[@]}"); t2k=$(median "${t2[@]}"); t20k=$(median "${t20[@]}")
calls2k=$(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r.get("calls", "?"), r.get("compactions", "?"))' "$WORK/r2k.jsonl")
calls20k=$(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r.get("calls", "?"), r.get("compactions", "?"))' "$WORK/r20k.jsonl")

# Latency: 200 sessions of ~300 messages, each compacted (forced), one thread.
"$BIN" synth --sessions 200 --messages 300 --seed 500 -o "$WORK/m300.jsonl"
run latency "$BIN" compact "$WORK/m300.jsonl" -j1 -q --force --report "$WORK/m300-report.jsonl" -o "$WORK/m300-out.jsonl"
lat_wall=$WALL
lat_ms=$(awk -v w="$WALL" -v s="$startup" 'BEGIN { printf "%.1f", (w - s) * 1000 / 200 }')
m300_mb=$(awk -v b="$(stat -c %s "$WORK/m300.jsonl")" 'BEGIN { printf "%.1f", b / 1e6 }')

big_line=""
if [ "$BIG_MB" -gt 0 ]; then
  big="$(make_corpus "$BIG_MB")"
  big_bytes=$(stat -c %s "$big")
  run compact_big_j2 "$BIN" compact "$big" -j2 -q -o "$WORK/out-big.jsonl"
  rm -f "$WORK/out-big.jsonl"
  big_line="| compact --mode lean, -j2, $(rate "$big_bytes" 1e6) MB corpus (one run) | $WALL | | $(rate "$big_bytes" "$(awk -v w="$WALL" 'BEGIN{print w*1e6}')") | | $RSS |"
  big_rss=$RSS
fi

# Distinct copies of the real corpus: stats against compact, -j1 against -j2,
# and this build against OLD_BIN (issue 38).
distinct_table="$(BENCH_DIR="$WORK" CORPUS="$CORPUS" BIN="$BIN" REPS="$REPS" scripts/bench_distinct.sh "${OLD_BIN:-}")"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
mbs() { awk -v b="$bytes" -v w="$1" 'BEGIN { printf "%.1f", b / 1e6 / w }'; }
sps() { awk -v s="$sessions" -v w="$1" 'BEGIN { printf "%.1f", s / w }'; }

{
  echo "# Benchmark results"
  echo
  big_note=""; [ "$BIG_MB" -gt 0 ] && big_note=" (BIG_MB=$BIG_MB)"
  echo "From one run of \`scripts/bench.sh $SIZE_MB\`$big_note on $(date -u +%Y-%m-%d): commit \`$commit\`$dirty,"
  echo "$(nproc) cores ($cpu), $(free -g | awk '/Mem:/ { print $2 }') GiB RAM, $(rustc --version)."
  echo "Machines like this are noisy: read ratios, not absolute seconds. Wall time and"
  echo "peak RSS from \`/usr/bin/time -v\`; every run includes process start (~${startup} s:"
  echo "building the tokenizer, the empty-input replay below)."
  echo
  echo "Corpus: $mb MB, $sessions sessions of OpenAI JSONL: the real corpus in OpenAI shape"
  echo "plus synthetic sessions with images and reasoning, cycled with per-copy digit/vowel"
  echo "rotation so no copy is free for the count cache (\`scripts/make_bench_corpus.py\`)."
  echo
  echo "Timed runs: $REPS interleaved rounds; wall is the median (spread: fastest-slowest),"
  echo "peak RSS the largest of the rounds."
  echo
  echo "| run | wall s | spread s | MB/s | sessions/s | peak RSS MB |"
  echo "|---|---:|---:|---:|---:|---:|"
  row() { echo "| $1 | $2 | $(spread ${walls[$3]}) | $(mbs "$2") | $(sps "$2") | $4 |"; }
  row "floor: \`tokenize\` -j1" "$floor1" tokenize_j1 "$floor1_rss"
  row "floor: \`tokenize\` -j2" "$floor2" tokenize_j2 "$floor2_rss"
  row "\`compact --mode lean\` -j1" "$c1" compact_j1 "$c1_rss"
  row "\`compact --mode lean\` -j2" "$c2" compact_j2 "$c2_rss"
  row "\`compact --counter hermes\` -j1" "$h1" hermes_j1 "$h1_rss"
  row "\`report\` (4 modes + replay) -j2" "$r2" report_j2 "$r2_rss"
  row "\`replay --mode lean\` -j2" "$p2" replay_j2 "$p2_rss"
  echo "| two \`tokenize\` -j1 at once (each; the slower of the pair) | $pair | $(spread "${pair_walls[@]}") | $(mbs "$pair") each | | |"
  [ -n "$big_line" ] && echo "$big_line"
  echo
  echo "| figure | value | target |"
  echo "|---|---:|---|"
  echo "| compact -j2 / tokenizer floor -j2 | $(ratio "$c2" "$floor2") | at most 1.3 |"
  echo "| compact -j1 / tokenizer floor -j1 | $(ratio "$c1" "$floor1") | |"
  echo "| compact speed-up, -j1 -> -j2 | $(ratio "$c1" "$c2") | at least 1.7 |"
  echo "| floor speed-up, -j1 -> -j2 | $(ratio "$floor1" "$floor2") | |"
  echo "| this machine's two cores: throughput of two \`tokenize -j1\` at once / one alone | $(awk -v a="$floor1" -v b="$pair" 'BEGIN { printf "%.2f", 2 * a / b }') | (the ceiling of a speed-up) |"
  echo "| report -j2 / compact -j2 | $(ratio "$r2" "$c2") | at most 1.5 |"
  echo "| hermes counter, MB/s on one thread | $(mbs "$h1") | at least 100 |"
  echo "| peak RSS, compact -j2 | $c2_rss MB | below 400 MB |"
  if [ "$BIG_MB" -gt 0 ]; then
    echo "| peak RSS, $BIG_MB MB vs $SIZE_MB MB corpus | $big_rss vs $c2_rss MB ($(awk -v a="$big_rss" -v b="$c2_rss" 'BEGIN { printf "%+.0f%%", (a / b - 1) * 100 }')) | within 10% |"
  fi
  echo "| replay, 20,000 vs 2,000 messages (median of $lin, start-up subtracted) | $(awk -v a="$t20k" -v b="$t2k" -v s="$startup" 'BEGIN { printf "%.2f s / %.2f s = %.1fx", a - s, b - s, (a - s) / (b - s) }') | at most 12x (1.2 x 10) |"
  echo "| forced compaction of a 300-message session, one thread | $lat_ms ms mean (200 sessions, $m300_mb MB, start-up subtracted) | reference: 10-530 ms, median ~250 |"
  echo
  echo "Replay sessions (calls, compactions): 2,000 messages: $calls2k; 20,000 messages: $calls20k."
  echo
  echo "$distinct_table"
  # Hand-written analysis, kept across runs: everything after the marker line.
  if [ -f "$OUT" ] && grep -q '^<!-- analysis -->$' "$OUT"; then
    echo
    sed -n '/^<!-- analysis -->$/,$p' "$OUT"
  fi
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
cat "$OUT"
