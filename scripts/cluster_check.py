#!/usr/bin/env python3
"""Checks a distributed run (spark_compact.py / ray_compact.py) against the plain binary.

    python3 scripts/cluster_check.py BINARY DATASET LOCAL.jsonl LOCAL.report.jsonl ENGINE_OUT \\
        --key COLUMN [-- COMPACT_OPTIONS...]

LOCAL.jsonl and LOCAL.report.jsonl are what `compactor compact DATASET --to openai
-o LOCAL.jsonl --report LOCAL.report.jsonl COMPACT_OPTIONS` wrote; ENGINE_OUT is
the job's output directory (compacted/ and report.jsonl).

- The report: the local report lines sorted by (id, source) must equal
  ENGINE_OUT/report.jsonl byte for byte.
- The rows: every engine row, decoded from the table schema (the encodings come
  from the schema the binary declares for DATASET: Spark's Parquet writer drops
  Arrow field metadata), must equal the local record with the same key, as
  canonical JSON (sorted keys; the JSON values, not their spelling, since the
  local file is JSON Lines and the engine's is Parquet). Same count, no key twice.
Exits 1 on any difference, printing the first ones.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from check_parquet import restore_row  # noqa: E402
from spark_compact import probe_schema  # noqa: E402


def canonical(v):
    return json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def main(argv):
    if "--" in argv:
        i = argv.index("--")
        argv, opts = argv[:i], argv[i + 1:]
    else:
        opts = []
    binary, dataset, local, local_report, engine = argv[:5]
    key = argv[argv.index("--key") + 1]
    import pyarrow.dataset as pads

    bad = 0
    with open(local_report, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    lines.sort(key=lambda l: (json.loads(l)["id"], json.loads(l)["source"]))
    with open(os.path.join(engine, "report.jsonl"), encoding="utf-8") as f:
        got = [l.rstrip("\n") for l in f if l.strip()]
    if lines == got:
        print(f"report: {len(got)} lines, equal byte for byte")
    else:
        bad += 1
        print(f"report: DIFFERENT ({len(lines)} local lines, {len(got)} engine lines)")
        for a, b in zip(lines, got):
            if a != b:
                print(f"  local:  {a[:300]}\n  engine: {b[:300]}")
                break

    schema = probe_schema(binary, pads.dataset(dataset, format="parquet").schema, opts)
    enc = {f.name: (f.metadata or {}).get(b"compactor:encoding", b"").decode() for f in schema}
    table = pads.dataset(os.path.join(engine, "compacted"), format="parquet").to_table()
    engine_rows = {}
    for row in table.to_pylist():
        rec = restore_row(row, table.column_names, enc)
        k = rec[key]
        if k in engine_rows:
            bad += 1
            print(f"rows: {k!r} twice in the engine output")
        engine_rows[k] = canonical(rec)
    with open(local, encoding="utf-8") as f:
        local_rows = {}
        for l in f:
            if l.strip():
                rec = json.loads(l)
                local_rows[rec[key]] = canonical(rec)
    diff = [k for k in sorted(set(local_rows) | set(engine_rows)) if local_rows.get(k) != engine_rows.get(k)]
    if diff:
        bad += 1
        print(f"rows: {len(diff)} of {len(local_rows)} DIFFERENT, e.g. {diff[:3]}")
    else:
        print(f"rows: {len(engine_rows)} sessions, equal (canonical JSON, sorted by {key})")
    print("MISMATCH" if bad else "OK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
