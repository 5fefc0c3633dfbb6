#!/usr/bin/env python3
"""Compact a Parquet dataset of sessions on Spark, through the compactor binary.

    spark-submit --master local[2] --files target/release/compactor \\
        scripts/spark_compact.py DATASET OUT [--binary compactor] [--source-column NAME] \\
        [--batch-rows N] [-- COMPACT_OPTIONS...]

    python3 scripts/spark_compact.py DATASET OUT --master local[2] --binary target/release/compactor

DATASET is a Parquet file or directory of session rows (the table `compactor
compact --to parquet` writes, or any table with a `messages` list<struct>
column). OUT receives:

    OUT/compacted/   the compacted rows, Parquet (Spark's part files)
    OUT/report.jsonl the merged report: one `compact --report` line per
                     session, sorted by (session id, source)

How it works. Each partition is piped through one `compactor compact - --from
arrow-ipc --to arrow-ipc` process with `mapInArrow`: a thread writes the
partition's Arrow batches to the process's standard input while the task reads
the compacted batches from its standard output, so memory is a few batches per
task. The output schema is asked of the binary once, on the driver (a stream
with no batches gives just the schema), so every task writes the same one.
Each output row carries its report line in the `compactor_report` column; the
job persists the compacted rows once (disk), writes the other columns as
Parquet, and sorts the report column into OUT/report.jsonl.

Shipping the binary. `--files PATH/compactor` (or `--binary PATH`, which calls
`SparkContext.addFile`) copies it to every executor; tasks find it with
`SparkFiles.get("compactor")`. Build it for the executors' platform (a static
musl build avoids glibc mismatches) and strip it (`strip -o compactor
target/release/compactor`: the release profile keeps debug info). Every
COMPACT_OPTION after `--` is passed to each worker (`--window`, `--mode`, ...).

Sessions need a stable id for a distributed run to name them as a local run
does: an `id` / `session_id` / `conversation_id` / `uuid` column, or
`--source-column NAME` (a column naming each row's origin). Without either,
a session's id is its position in its task's stream, which depends on the
partitioning.

Resource settings: one compactor process per task uses `-j` worker threads
(default: `spark.task.cpus`, so set `spark.task.cpus` to the cores a task
may use, e.g. 2-4, and `spark.executor.cores` to a multiple of it). Memory
per task is a few input batches of `--batch-rows` sessions (default 64; the
binary keeps one batch per worker thread in flight), plus the largest session:
`spark.executor.memory` of 2-4 GB per task is ample for typical transcripts;
`spark.executor.memoryOverhead` must cover the compactor process (it lives
outside the JVM heap): about 200 MB plus 4 batches.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading


def compactor_args(binary, opts):
    return [binary, "compact", "-", "--from", "arrow-ipc", "--to", "arrow-ipc", "-q", *opts]


def probe_schema(binary, in_schema, opts):
    """The output schema the binary writes for rows of `in_schema`."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    pa.ipc.new_stream(sink, in_schema).close()
    out = subprocess.run(
        compactor_args(binary, opts), input=sink.getvalue().to_pybytes(), capture_output=True
    )
    if out.returncode != 0:
        raise RuntimeError(f"compactor: {out.stderr.decode(errors='replace')}")
    return pa.ipc.open_stream(out.stdout).schema


def storage_schema(schema):
    """`schema` with every extension type (schema 3's `arrow.json` fields) as its
    storage type, `utf8`: Spark's Arrow conversion knows no extension types, so
    the cluster path carries JSON as plain strings both ways (README, "Where the
    cluster path differs"; `check_parquet.py` names such files)."""
    import pyarrow as pa

    def plain(t):
        if isinstance(t, pa.BaseExtensionType):
            return plain(t.storage_type)
        if pa.types.is_list(t):
            return pa.list_(field(t.value_field))
        if pa.types.is_large_list(t):
            return pa.large_list(field(t.value_field))
        if pa.types.is_struct(t):
            return pa.struct([field(f) for f in t])
        return t

    def field(f):
        return pa.field(f.name, plain(f.type), f.nullable, f.metadata)

    return pa.schema([field(f) for f in schema], metadata=schema.metadata)


def pipe_through(binary, opts, in_schema, batches):
    """Streams `batches` through one compactor process; yields its output batches.

    Spark (and Ray) hand batches over without Arrow field metadata and with
    their own list item names; the batches are cast back to the dataset's own
    schema first, so the binary sees the table as written (JSON-text columns
    stay marked as such). What it writes back is yielded with its JSON fields as
    plain strings ([`storage_schema`]), which every engine takes.
    """
    import pyarrow as pa

    if not os.access(binary, os.X_OK):
        os.chmod(binary, 0o755)
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        compactor_args(binary, opts), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err
    )
    failure = []

    def feed():
        try:
            with pa.ipc.new_stream(proc.stdin, in_schema) as w:
                for b in batches:
                    t = pa.Table.from_batches([b]).select(in_schema.names).cast(in_schema)
                    for c in t.to_batches():
                        w.write_batch(c)
        except BrokenPipeError:
            pass  # the process failed: its exit status and stderr say why
        except BaseException as e:  # noqa: BLE001 - reported below
            failure.append(e)
        finally:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        reader = pa.ipc.open_stream(proc.stdout)
        plain = storage_schema(reader.schema)
        for b in reader:
            yield from pa.Table.from_batches([b]).cast(plain).to_batches()
    except pa.ArrowInvalid:
        pass  # an empty or cut stream: the exit status below says why
    feeder.join()
    code = proc.wait()
    if failure:
        raise failure[0]
    if code != 0:
        err.seek(0)
        raise RuntimeError(f"compactor exited with {code}: {err.read().decode(errors='replace')}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("out")
    ap.add_argument("--binary", help="the compactor binary on the driver; shipped with addFile")
    ap.add_argument("--master", help="e.g. local[2] (default: what spark-submit says)")
    ap.add_argument("--source-column", help="column naming each row's source (see the docstring)")
    ap.add_argument("--batch-rows", type=int, default=64, help="sessions per Arrow batch")
    ap.add_argument("--threads", type=int, help="-j of each compactor process (default spark.task.cpus)")
    args, rest = ap.parse_known_args(argv)
    opts = [a for a in rest if a != "--"]

    import pyarrow.dataset as pads
    from pyspark import SparkFiles
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.storagelevel import StorageLevel

    builder = SparkSession.builder.appName("compactor")
    if args.master:
        builder = builder.master(args.master)
    builder = builder.config("spark.sql.execution.arrow.maxRecordsPerBatch", str(args.batch_rows))
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    binary = args.binary or "compactor"
    if args.binary:
        sc.addFile(os.path.abspath(args.binary))
    name = os.path.basename(binary)
    local_binary = args.binary or SparkFiles.get(name)

    threads = args.threads or int(sc.getConf().get("spark.task.cpus", "1"))
    if args.source_column:
        opts += ["--source-column", args.source_column]
    opts += ["-j", str(threads)]

    # The dataset's own Arrow schema, with the field metadata Spark drops.
    in_schema = pads.dataset(args.dataset, format="parquet").schema
    out_schema = probe_schema(local_binary, in_schema, opts)

    def compact_partition(batches):
        yield from pipe_through(SparkFiles.get(name), opts, in_schema, batches)

    df = spark.read.parquet(args.dataset).select(*in_schema.names)
    out = df.mapInArrow(compact_partition, from_arrow_schema(storage_schema(out_schema)))
    out = out.persist(StorageLevel.DISK_ONLY)
    data_columns = [c for c in out_schema.names if c != "compactor_report"]
    out.select(*data_columns).write.mode("overwrite").parquet(os.path.join(args.out, "compacted"))

    # The merged report: every session's line, sorted by (id, source), one file.
    key_id = F.get_json_object("compactor_report", "$.id")
    key_src = F.get_json_object("compactor_report", "$.source")
    parts = os.path.join(args.out, "_report_parts")
    (
        out.select("compactor_report")
        .orderBy(key_id, key_src)
        .write.mode("overwrite")
        .text(parts)
    )
    out.unpersist()
    spark.stop()
    totals = write_report(parts, os.path.join(args.out, "report.jsonl"))
    print(
        f"spark_compact: {totals['sessions']} sessions, {totals['compacted']} compacted: "
        f"{totals['before']} -> {totals['after']} tokens -> {args.out}",
        file=sys.stderr,
    )


def write_report(parts_dir, path):
    """Concatenates the sorted part files (range-partitioned, in name order) into `path`."""
    import shutil

    totals = {"sessions": 0, "compacted": 0, "before": 0, "after": 0}
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        for name in sorted(os.listdir(parts_dir)):
            if not name.startswith("part-"):
                continue
            with open(os.path.join(parts_dir, name), encoding="utf-8") as f:
                for line in f:
                    row = json.loads(line)
                    totals["sessions"] += 1
                    totals["compacted"] += int(row["compacted"])
                    totals["before"] += row["tokens_before"]
                    totals["after"] += row["tokens_after"]
                    out.write(line if line.endswith("\n") else line + "\n")
    os.replace(tmp, path)
    shutil.rmtree(parts_dir)
    return totals


if __name__ == "__main__":
    main(sys.argv[1:])
