#!/usr/bin/env bash
# The distributed runs give the local run's bytes (issue #7).
#
#   scripts/test_cluster.sh [DATA_DIR]        # default ../shared/corpus, else the fixtures
#   CLUSTER_ENGINES="spark" scripts/test_cluster.sh fixtures
#
# 1. Converts DATA_DIR to Parquet with compactor itself (`--mode none --to
#    parquet`: its `source` column names each row's original file and line, a
#    stable name per session for the lake, since not every row has an id of
#    its own), and splits it into two files.
# 2. Runs the plain binary on that dataset (`--to openai --report`).
# 3. Runs scripts/spark_compact.py in local[2] mode and scripts/ray_compact.py
#    on a local 2-CPU Ray, and checks each with scripts/cluster_check.py: the
#    merged report equals the local report byte for byte (sorted by session
#    id), and every compacted row equals the local one (sorted by session id).
# Prints wall times; exits 1 on any difference. Needs pyarrow, pyspark (with
# Java 17) and ray; .ci/run installs them when it can, and skips otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
bin="$root/target/release/compactor"
[ -x "$bin" ] || cargo build --release
engines="${CLUSTER_ENGINES:-spark ray}"

data="${1:-../shared/corpus}"
opts=()
if [ ! -d "$data" ]; then
  echo "test_cluster: $data is absent; using the fixtures"
  data=fixtures
fi
work="$root/target/cluster-test"
rm -rf "$work"
mkdir -p "$work/lake"
if [ "$data" = fixtures ]; then
  # Valid fixtures of every dialect; at a 32K window several of them compact.
  inputs=(openai claude_code codex anthropic sharegpt swe_agent toolbench
          edge/images.jsonl edge/parallel_calls.jsonl edge/huge_output.jsonl edge/cjk.jsonl)
  opts=(--window 32000)
  (cd fixtures && "$bin" compact "${inputs[@]}" --mode none --to parquet --keep-source-fields -o "$work/converted.parquet" --report "$work/converted.jsonl" -q)
else
  (cd "$(dirname "$data")" && "$bin" compact "$(basename "$data")" --mode none --to parquet --keep-source-fields -o "$work/converted.parquet" --report "$work/converted.jsonl" -q)
fi

python3 - "$work" <<'PY'
import json, sys
import pyarrow.parquet as pq
work = sys.argv[1]
table = pq.read_table(f"{work}/converted.parquet")
sources = [json.loads(l)["source"] for l in open(f"{work}/converted.jsonl")]
assert sources == table.column("source").to_pylist(), "the source column is the report's"
half = table.num_rows // 2
for i, part in enumerate([table.slice(0, half), table.slice(half)]):
    pq.write_table(part, f"{work}/lake/part-{i}.parquet", compression="zstd")
print(f"test_cluster: {table.num_rows} sessions in {work}/lake (2 files)")
PY

now() { date +%s.%N; }
t0=$(now)
"$bin" compact "$work/lake" --source-column source "${opts[@]}" --to openai --keep-source-fields \
  -o "$work/local.jsonl" --report "$work/local.report.jsonl" -q
t1=$(now)
echo "test_cluster: plain binary: $(echo "$t1 - $t0" | bc) s"

status=0
for engine in $engines; do
  t0=$(now)
  if [ "$engine" = spark ]; then
    python3 scripts/spark_compact.py "$work/lake" "$work/spark" --master 'local[2]' \
      --binary "$bin" --source-column source -- "${opts[@]}" 2>"$work/spark.log" \
      || { tail -40 "$work/spark.log"; exit 1; }
  else
    python3 scripts/ray_compact.py "$work/lake" "$work/ray" --local 2 \
      --binary "$bin" --source-column source -- "${opts[@]}" 2>"$work/ray.log" \
      || { tail -40 "$work/ray.log"; exit 1; }
  fi
  t1=$(now)
  echo "test_cluster: $engine local mode: $(echo "$t1 - $t0" | bc) s"
  grep -ho "[a-z]*_compact: .*" "$work/$engine.log" || true
  python3 scripts/cluster_check.py "$bin" "$work/lake" "$work/local.jsonl" "$work/local.report.jsonl" \
    "$work/$engine" --key source -- --source-column source "${opts[@]}" || status=1
done
exit $status
