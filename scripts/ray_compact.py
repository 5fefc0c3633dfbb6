#!/usr/bin/env python3
"""Compact a Parquet dataset of sessions on Ray Data, through the compactor binary.

    python3 scripts/ray_compact.py DATASET OUT [--binary PATH] [--source-column NAME] \\
        [--batch-rows N] [--num-cpus N] [--local N] [-- COMPACT_OPTIONS...]

The same job as scripts/spark_compact.py (read its docstring for the contract):
`map_batches(batch_format="pyarrow")` pipes each batch of `--batch-rows`
sessions through one `compactor compact - --from arrow-ipc --to arrow-ipc`
process (Arrow IPC over a pipe), and OUT receives compacted/ (Parquet, written
by Ray's writer) and report.jsonl (one
`--report` line per session, sorted by (session id, source)).

Resources: each map task takes `--num-cpus` CPUs (default 1) and runs the
binary with as many worker threads; a task holds one batch of `--batch-rows`
sessions (default 64) in and one out, plus the process (~200 MB). Ray starts
one process per batch, so keep batches large enough that the binary's start
(about 0.1 s: the tokenizer tables) is small beside the batch's work.

Shipping the binary: give `--binary PATH` a path every node can execute
(a shared filesystem, or a file placed by `runtime_env={"working_dir": DIR}`
holding it, then `--binary ./compactor`); `--local N` starts a local Ray with N
CPUs (what the tests use).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spark_compact import pipe_through, probe_schema, storage_schema  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("out")
    ap.add_argument("--binary", default="target/release/compactor")
    ap.add_argument("--source-column")
    ap.add_argument("--batch-rows", type=int, default=64)
    ap.add_argument("--num-cpus", type=int, default=1)
    ap.add_argument("--local", type=int, help="start a local Ray with this many CPUs")
    args, rest = ap.parse_known_args(argv)
    opts = [a for a in rest if a != "--"]
    if args.source_column:
        opts += ["--source-column", args.source_column]
    opts += ["-j", str(args.num_cpus)]
    binary = os.path.abspath(args.binary)

    import pyarrow as pa
    import pyarrow.dataset as pads
    import ray

    if args.local:
        ray.init(num_cpus=args.local, include_dashboard=False, log_to_driver=False)
    else:
        ray.init()
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False

    in_schema = pads.dataset(args.dataset, format="parquet").schema
    out_schema = storage_schema(probe_schema(binary, in_schema, opts))

    def compact_batch(table: pa.Table) -> pa.Table:
        out = list(pipe_through(binary, opts, in_schema, table.to_batches()))
        return pa.Table.from_batches(out, schema=out_schema)

    ds = ray.data.read_parquet(args.dataset)
    out = ds.map_batches(
        compact_batch,
        batch_format="pyarrow",
        batch_size=args.batch_rows,
        num_cpus=args.num_cpus,
        zero_copy_batch=True,
    ).materialize()
    out.drop_columns(["compactor_report"]).write_parquet(os.path.join(args.out, "compacted"))
    lines = []
    for batch in out.select_columns(["compactor_report"]).iter_batches(batch_format="pyarrow"):
        lines.extend(batch.column("compactor_report").to_pylist())
    ray.shutdown()
    rows = [json.loads(l) for l in lines]
    order = sorted(range(len(lines)), key=lambda i: (rows[i]["id"], rows[i]["source"]))
    with open(os.path.join(args.out, "report.jsonl"), "w", encoding="utf-8") as f:
        for i in order:
            f.write(lines[i] + "\n")
    print(
        f"ray_compact: {len(rows)} sessions, {sum(r['compacted'] for r in rows)} compacted: "
        f"{sum(r['tokens_before'] for r in rows)} -> {sum(r['tokens_after'] for r in rows)} tokens -> {args.out}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
