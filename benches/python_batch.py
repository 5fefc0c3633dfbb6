#!/usr/bin/env python3
"""compact_batch (the Python package) against the CLI on the same rows.

    python3 benches/python_batch.py ROWS.jsonl [--bin target/release/compactor] [--rounds 3]

ROWS.jsonl: OpenAI session records, one per line (e.g. the corpus written
`compact DIR --mode none --to openai`). Times, per round, the CLI compacting the
file (`compact ROWS --window 32000 --force --to openai -o OUT`, process start
included) and `compactor.compact_batch` over the same rows as columns
(`json.loads` of the file excluded, the conversion of the batch to and from
JSON included), every core for both; prints the medians and their ratio, and
checks that both give the same records (the compaction object's
`source` aside: a row is `-:1`, the CLI's line `FILE:N`).
"""

import json
import statistics
import subprocess
import sys
import tempfile
import time

import compactor

OPTIONS = {"window": 32000, "force": True, "to": "openai"}


def main(argv):
    rows_path = argv[0]
    binary = argv[argv.index("--bin") + 1] if "--bin" in argv else "target/release/compactor"
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    with open(rows_path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    batch = {"id": [r.get("id") for r in rows], "messages": [r["messages"] for r in rows],
             "tools": [r.get("tools") for r in rows]}
    cli_times, py_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/out.jsonl"
        for _ in range(rounds):
            t = time.perf_counter()
            subprocess.run([binary, "compact", rows_path, "-q", "-o", out, "--window", "32000", "--force",
                            "--to", "openai"], check=True)
            cli_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            got = compactor.compact_batch(batch, **OPTIONS)
            py_times.append(time.perf_counter() - t)
        with open(out, encoding="utf-8") as f:
            want = [json.loads(line) for line in f]
    def figures(c):  # the compaction object but its source (`-:1` for a row, `FILE:N` for the CLI)
        return {k: v for k, v in (c or {}).items() if k != "source"}

    same = all(got["messages"][i] == w["messages"] and figures(got["compaction"][i]) == figures(w.get("compaction"))
               for i, w in enumerate(want))
    cli, py = statistics.median(cli_times), statistics.median(py_times)
    print(f"{len(rows)} rows: CLI {cli:.2f} s, compact_batch {py:.2f} s (medians of {rounds}), "
          f"ratio {py / cli:.2f}; same records: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
