#!/usr/bin/env python3
"""Checks a distributed run (spark_compact.py / ray_compact.py) against the plain binary.

    python3 scripts/cluster_check.py BINARY DATASET LOCAL.jsonl LOCAL.report.jsonl ENGINE_OUT \\
        --key COLUMN [-- COMPACT_OPTIONS...]

LOCAL.jsonl and LOCAL.report.jsonl are what `compactor compact DATASET --to openai
-o LOCAL.jsonl --report LOCAL.report.jsonl COMPACT_OPTIONS` wrote; ENGINE_OUT is
the job's output directory (compacted/ and report.jsonl).

- The report: the local report lines sorted by (id, source) must equal
  ENGINE_OUT/report.jsonl byte for byte.
- The rows: every engine row, decoded from the one Parquet schema (README,
  "Parquet schema"; decoded here, apart from the Rust reader), must equal the
  local record of the same session, as canonical JSON (sorted keys; the JSON
  values, not their spelling, since the local file is JSON Lines and the
  engine's is Parquet). A session is keyed by COLUMN of the engine row
  (`source`: where the session was read) and, locally, by that field of the
  report line of the same position (the local file has one record per
  report line, in order). Same count, no key twice.
- Read back by compactor: `BINARY compact ENGINE_OUT/compacted --mode none --to
  openai --keep-source-fields` gives the local records (as a multiset of
  canonical JSON): the engines' Parquet writers drop field metadata, and
  compactor must still know the one schema.
Exits 1 on any difference, printing the first ones.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))



def drop_nulls(v):
    """A struct read back as a dict, without its null fields (a null field is an absent key)."""
    if isinstance(v, dict):
        return {k: drop_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [drop_nulls(x) for x in v]
    return v


def with_extra(d, extra):
    """`d` with the JSON object `extra` merged over it (a non-object is the whole value)."""
    if extra is None:
        return d
    x = json.loads(extra)
    if not isinstance(x, dict):
        return x
    d.update(x)
    return d


def restore_message(m):
    if m is None:
        return None
    out = {}
    for k in ("role", "content", "name", "tool_call_id"):
        if m.get(k) is not None:
            out[k] = m[k]
    if m.get("parts") is not None:
        out["content"] = drop_nulls(m["parts"])
    if m.get("tool_calls") is not None:
        out["tool_calls"] = [
            None if c is None else with_extra(drop_nulls({k: c[k] for k in ("id", "type", "function")}), c.get("extra"))
            for c in m["tool_calls"]
        ]
    if m.get("reasoning_content") is not None:
        out["reasoning_content"] = m["reasoning_content"]
    out = with_extra(out, m.get("extra"))
    # A null `content` is `content: null`, unless the message had none.
    if isinstance(out, dict) and not out.pop("$no_content", False):
        out.setdefault("content", None)
    return out


def restore_row(row):
    """The session record a row of the one Parquet schema stands for."""
    out = {}
    if row.get("messages") is not None:
        out["messages"] = [restore_message(m) for m in row["messages"]]
    if row.get("id") is not None:
        out["id"] = row["id"]
    for k in ("tools", "compaction"):
        if row.get(k) is not None:
            out[k] = json.loads(row[k])
    meta = json.loads(row["metadata"]) if row.get("metadata") is not None else None
    if meta == "bare_array":
        return out["messages"]
    out.update(meta or {})
    return out


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

    table = pads.dataset(os.path.join(engine, "compacted"), format="parquet").to_table()
    engine_rows = {}
    for row in table.to_pylist():
        rec = restore_row(row)
        k = row[key]
        if k in engine_rows:
            bad += 1
            print(f"rows: {k!r} twice in the engine output")
        engine_rows[k] = canonical(rec)
    with open(local_report, encoding="utf-8") as f:
        keys = [json.loads(l)[key] for l in f if l.strip()]
    with open(local, encoding="utf-8") as f:
        records = [json.loads(l) for l in f if l.strip()]
    if len(keys) != len(records):
        bad += 1
        print(f"local: {len(records)} records but {len(keys)} report lines")
    local_rows = {k: canonical(rec) for k, rec in zip(keys, records)}
    diff = [k for k in sorted(set(local_rows) | set(engine_rows)) if local_rows.get(k) != engine_rows.get(k)]
    if diff:
        bad += 1
        print(f"rows: {len(diff)} of {len(local_rows)} DIFFERENT, e.g. {diff[:3]}")
    else:
        print(f"rows: {len(engine_rows)} sessions, equal (canonical JSON, sorted by {key})")
    # The engine's files read back by compactor itself (Spark and Ray drop the
    # field metadata: the one schema must be known by its shape).
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "back.jsonl")
        subprocess.run(
            [binary, "compact", os.path.join(engine, "compacted"), "--mode", "none", "--to", "openai",
             "--keep-source-fields", "-q", "-o", out],
            check=True,
        )
        with open(out, encoding="utf-8") as f:
            back = sorted(canonical(json.loads(l)) for l in f if l.strip())
    if back == sorted(local_rows.values()):
        print(f"read back by compactor: {len(back)} sessions, equal to the local records")
    else:
        bad += 1
        n = sum(1 for a, b in zip(back, sorted(local_rows.values())) if a != b)
        print(f"read back by compactor: DIFFERENT ({len(back)} sessions, {n} differ)")
    print("MISMATCH" if bad else "OK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
