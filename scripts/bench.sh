#!/usr/bin/env bash
# End-to-end benchmark of the release binary, one run, figures in benches/RESULTS.md.
#
#   scripts/bench.sh [SIZE_MB]        # default 1024 (1 GB)
#   BIG_MB=4096 scripts/bench.sh      # also peak RSS of `compact` on a 4 GB corpus
#
# Builds release; makes (once, under target/bench, never committed) a corpus of
# SIZE_MB of OpenAI JSONL from the shapes of ../shared/corpus plus synthetic
# sessions with images and reasoning (scripts/make_bench_corpus.py); then times:
#   - the floor: `compactor tokenize` (read, decode, tokenize every text once, no cache)
#   - `compact --mode lean` at -j1 and -j2, `--counter hermes` at -j1,
#   - `report` (four modes, with replay) and `replay` at -j2,
#   - replay of one 2,000- and one 20,000-message session (linearity),
#   - per-session latency of a forced compaction of 300-message sessions,
# with wall time and peak RSS from /usr/bin/time -v. Nothing here is a test:
# CI never times anything.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MB="${1:-${SIZE_MB:-1024}}"
BIG_MB="${BIG_MB:-0}"
WORK="${BENCH_DIR:-target/bench}"
CORPUS="${CORPUS:-../shared/corpus}"
OUT="${RESULTS:-benches/RESULTS.md}"
BIN=target/release/compactor

command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
cargo build --release -q
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

run tokenize_j1 "$BIN" tokenize "$data" -j1;                      floor1=$WALL; floor1_rss=$RSS
run tokenize_j2 "$BIN" tokenize "$data" -j2;                      floor2=$WALL; floor2_rss=$RSS
run compact_j1 "$BIN" compact "$data" -j1 -q -o "$WORK/out.jsonl"; c1=$WALL; c1_rss=$RSS
run compact_j2 "$BIN" compact "$data" -j2 -q -o "$WORK/out.jsonl"; c2=$WALL; c2_rss=$RSS
run hermes_j1 "$BIN" compact "$data" -j1 -q --counter hermes -o "$WORK/out-hermes.jsonl"; h1=$WALL; h1_rss=$RSS
run report_j2 "$BIN" report "$data" -j2 -q -o "$WORK/report";    r2=$WALL; r2_rss=$RSS
run replay_j2 "$BIN" replay "$data" -j2 --report "$WORK/replay.jsonl"; p2=$WALL; p2_rss=$RSS
rm -f "$WORK/out.jsonl" "$WORK/out-hermes.jsonl"

# Replay linearity: one session of 2,000 and one of 20,000 messages; medians of 3.
"$BIN" synth --sessions 1 --messages 2000 --seed 101 -o "$WORK/m2k.jsonl"
"$BIN" synth --sessions 1 --messages 20000 --seed 101 -o "$WORK/m20k.jsonl"
: >"$WORK/empty.jsonl"
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
times=(); for i in 1 2 3; do run startup "$BIN" replay "$WORK/empty.jsonl" --report "$WORK/r0.jsonl"; times+=("$WALL"); done
startup=$(median3 "${times[@]}")
times=(); for i in 1 2 3; do run replay_2k "$BIN" replay "$WORK/m2k.jsonl" -j1 --report "$WORK/r2k.jsonl"; times+=("$WALL"); done
t2k=$(median3 "${times[@]}")
times=(); for i in 1 2 3; do run replay_20k "$BIN" replay "$WORK/m20k.jsonl" -j1 --report "$WORK/r20k.jsonl"; times+=("$WALL"); done
t20k=$(median3 "${times[@]}")
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
  big_line="| compact --mode lean, -j2, $(rate "$big_bytes" 1e6) MB corpus | $WALL | $(rate "$big_bytes" "$(awk -v w="$WALL" 'BEGIN{print w*1e6}')") | | $RSS |"
  big_rss=$RSS
fi

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
  echo "| run | wall s | MB/s | sessions/s | peak RSS MB |"
  echo "|---|---:|---:|---:|---:|"
  echo "| floor: \`tokenize\` -j1 | $floor1 | $(mbs "$floor1") | $(sps "$floor1") | $floor1_rss |"
  echo "| floor: \`tokenize\` -j2 | $floor2 | $(mbs "$floor2") | $(sps "$floor2") | $floor2_rss |"
  echo "| \`compact --mode lean\` -j1 | $c1 | $(mbs "$c1") | $(sps "$c1") | $c1_rss |"
  echo "| \`compact --mode lean\` -j2 | $c2 | $(mbs "$c2") | $(sps "$c2") | $c2_rss |"
  echo "| \`compact --counter hermes\` -j1 | $h1 | $(mbs "$h1") | $(sps "$h1") | $h1_rss |"
  echo "| \`report\` (4 modes + replay) -j2 | $r2 | $(mbs "$r2") | $(sps "$r2") | $r2_rss |"
  echo "| \`replay --mode lean\` -j2 | $p2 | $(mbs "$p2") | $(sps "$p2") | $p2_rss |"
  [ -n "$big_line" ] && echo "$big_line"
  echo
  echo "| figure | value | target |"
  echo "|---|---:|---|"
  echo "| compact -j2 / tokenizer floor -j2 | $(ratio "$c2" "$floor2") | at most 1.3 |"
  echo "| compact -j1 / tokenizer floor -j1 | $(ratio "$c1" "$floor1") | |"
  echo "| compact speed-up, -j1 -> -j2 | $(ratio "$c1" "$c2") | at least 1.7 |"
  echo "| report -j2 / compact -j2 | $(ratio "$r2" "$c2") | at most 1.5 |"
  echo "| hermes counter, MB/s on one thread | $(mbs "$h1") | at least 100 |"
  echo "| peak RSS, compact -j2 | $c2_rss MB | below 400 MB |"
  if [ "$BIG_MB" -gt 0 ]; then
    echo "| peak RSS, $BIG_MB MB vs $SIZE_MB MB corpus | $big_rss vs $c2_rss MB ($(awk -v a="$big_rss" -v b="$c2_rss" 'BEGIN { printf "%+.0f%%", (a / b - 1) * 100 }')) | within 10% |"
  fi
  echo "| replay, 20,000 vs 2,000 messages (median of 3, start-up subtracted) | $(awk -v a="$t20k" -v b="$t2k" -v s="$startup" 'BEGIN { printf "%.2f s / %.2f s = %.1fx", a - s, b - s, (a - s) / (b - s) }') | at most 12x (1.2 x 10) |"
  echo "| forced compaction of a 300-message session, one thread | $lat_ms ms mean (200 sessions, $m300_mb MB, start-up subtracted) | reference: 10-530 ms, median ~250 |"
  echo
  echo "Replay sessions (calls, compactions): 2,000 messages: $calls2k; 20,000 messages: $calls20k."
  # Hand-written analysis, kept across runs: everything after the marker line.
  if [ -f "$OUT" ] && grep -q '^<!-- analysis -->$' "$OUT"; then
    echo
    sed -n '/^<!-- analysis -->$/,$p' "$OUT"
  fi
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
cat "$OUT"
