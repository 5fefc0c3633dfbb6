#!/usr/bin/env python3
"""Cross-checks compactor's Parquet files with another Parquet reader, and
makes the small Parquet fixtures under fixtures/parquet/ with another writer.

    python3 scripts/check_parquet.py OUT.parquet IN.jsonl [--rows=N] [--reader=pyarrow|duckdb|polars]
        Reads OUT.parquet (written by `compactor compact IN.jsonl --mode none
        --to parquet -o OUT.parquet`) with pyarrow, or else duckdb, or else
        polars, undoes compactor's documented encoding (src/io/parquet.rs:
        `content`/`content_parts`/`extra` per message, JSON-text columns, the
        trailing `extra` column, the "bare_array" marker), and compares the row
        count and the first N sessions (default 5) with IN.jsonl as JSON
        values (whole sessions with pyarrow, which exposes the Arrow field
        metadata naming the JSON-text columns; messages only otherwise). Prints what it compared; exits 1 on any mismatch, 2 when no
        reader is importable (`pip install pyarrow duckdb`).

    python3 scripts/check_parquet.py --make-fixtures
        Rewrites fixtures/parquet/*.parquet with pyarrow (byte-identical on
        rerun with the same pyarrow version; see fixtures/parquet/README.md).
        The data is synthetic and tiny: there is no real Parquet transcript in
        ../shared/corpus (its README: "Not found"), so these files exist to
        test reading tables that compactor did not write.

Not part of CI (pyarrow is not a build dependency); stdlib + pyarrow/duckdb/polars.
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_rows(path, want=None):
    """Rows of a Parquet file as Python dicts: (reader, rows, columns, encodings).

    Only pyarrow exposes Arrow field metadata (`compactor:encoding`); with
    duckdb or polars the encodings are unknown, so only messages are compared.
    """
    if want in (None, "pyarrow"):
        try:
            import pyarrow.parquet as pq

            schema = pq.ParquetFile(path).schema_arrow
            enc = {
                f.name: (f.metadata or {}).get(b"compactor:encoding", b"").decode()
                for f in schema
            }
            return "pyarrow", pq.read_table(path).to_pylist(), schema.names, enc
        except ImportError:
            pass
    if want in (None, "duckdb"):
        try:
            import duckdb

            rel = duckdb.sql(f"SELECT * FROM read_parquet('{path}')")
            cols = rel.columns
            return "duckdb", [dict(zip(cols, r)) for r in rel.fetchall()], cols, None
        except ImportError:
            pass
    if want in (None, "polars"):
        try:
            import polars as pl

            df = pl.read_parquet(path)
            return "polars", df.to_dicts(), df.columns, None
        except ImportError:
            pass
    print("no Parquet reader: pip install pyarrow duckdb", file=sys.stderr)
    sys.exit(2)


def restore_message(m):
    if m is None:
        return None
    extra = json.loads(m["extra"]) if m.get("extra") is not None else None
    if extra is not None and not isinstance(extra, dict):
        return extra
    out = {}
    for k in ("role", "content", "name", "tool_call_id", "reasoning_content"):
        if m.get(k) is not None:
            out[k] = m[k]
    if m.get("content_parts") is not None:
        out["content"] = json.loads(m["content_parts"])
    if m.get("tool_calls") is not None:
        calls = []
        for c in m["tool_calls"]:
            call = {k: c[k] for k in ("id", "type") if c.get(k) is not None}
            if c.get("function") is not None:
                f = c["function"]
                call["function"] = {k: f[k] for k in ("name", "arguments") if f.get(k) is not None}
            calls.append(call)
        out["tool_calls"] = calls
    out.update(extra or {})
    return out


def restore_row(row, cols, enc):
    """The session a row stands for; with `enc` None, only its messages (and bare-ness)."""
    out = {}
    if row.get("messages") is not None:
        out["messages"] = [restore_message(m) for m in row["messages"]]
    bare = row.get("extra") == '"bare_array"'
    if enc is None:
        return out["messages"] if bare else {"messages": out.get("messages")}
    for c in cols:
        v = row.get(c)
        if c == "messages" or v is None:
            continue
        e = enc.get(c, "")
        if e == "json":
            out[c] = json.loads(v)
        elif e == "extra":
            x = json.loads(v)
            if x != "bare_array":
                out.update(x)
        else:
            out[c] = v
    return out["messages"] if bare else out


def check(parquet, jsonl, n, reader=None):
    reader, rows, cols, enc = read_rows(parquet, reader)
    with open(jsonl, encoding="utf-8") as f:
        want = [json.loads(line) for line in f if line.strip()]
    what = "whole sessions" if enc is not None else "messages only"
    print(f"reader: {reader} (comparing {what}); columns: {', '.join(cols)}")
    print(f"rows: parquet {len(rows)}, jsonl {len(want)}")
    bad = len(rows) != len(want)
    for i, (row, expected) in enumerate(zip(rows[:n], want[:n])):
        got = restore_row(row, cols, enc)
        if enc is None and isinstance(expected, dict):
            expected = {"messages": expected.get("messages")}
        msgs = got if isinstance(got, list) else got.get("messages") or []
        ok = got == expected
        bad |= not ok
        first = msgs[0].get("role") if msgs and isinstance(msgs[0], dict) else None
        print(f"row {i}: {len(msgs)} messages, first role {first!r}: {'equal' if ok else 'DIFFERENT'}")
        if not ok and isinstance(got, dict) and isinstance(expected, dict):
            for k in sorted(set(got) | set(expected)):
                if got.get(k) != expected.get(k):
                    print(f"  key {k!r} differs")
    print("MISMATCH" if bad else "OK")
    return 1 if bad else 0


def make_fixtures():
    import datetime
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    out = os.path.join(ROOT, "fixtures", "parquet")
    os.makedirs(out, exist_ok=True)
    opts = dict(compression="zstd", write_statistics=True)

    # 1. Hugging Face chat convention plus one column of each awkward type.
    msg = pa.struct([("role", pa.string()), ("content", pa.string())])
    table = pa.table(
        {
            "messages": pa.array(
                [
                    [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"}],
                    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                     {"role": "assistant", "content": "Hello."}],
                    [{"role": "user", "content": "你好"}, {"role": "assistant", "content": None}],
                ],
                type=pa.list_(msg),
            ),
            "id": pa.array(["hf-0", "hf-1", "hf-2"]),
            "score": pa.array([0.5, None, 1.0], type=pa.float64()),
            "turns": pa.array([2, 3, 2], type=pa.int32()),
            "created": pa.array(
                [datetime.datetime(2024, 5, 1, 12, 0, 0, 250000), None,
                 datetime.datetime(1969, 12, 31, 23, 59, 59)],
                type=pa.timestamp("ms", tz="UTC"),
            ),
            "day": pa.array([datetime.date(2024, 5, 1), datetime.date(2000, 2, 29), None], type=pa.date32()),
            "blob": pa.array([b"foobar", b"", None], type=pa.binary()),
            "tags": pa.array([["math"], [], None], type=pa.list_(pa.string())),
            "attrs": pa.array([[("k", 1)], [], [("a", 2), ("b", 3)]], type=pa.map_(pa.string(), pa.int64())),
            "split": pa.array(["train", "test", "train"]).dictionary_encode(),
            "price": pa.array([decimal.Decimal("12.50"), decimal.Decimal("-0.01"), None], type=pa.decimal128(5, 2)),
        }
    )
    pq.write_table(table, os.path.join(out, "hf_chat.parquet"), **opts)

    # 2. Tool calls the Hugging Face way: the struct is the union of every message's keys.
    call = pa.struct([
        ("id", pa.string()), ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ])
    msg = pa.struct([
        ("role", pa.string()), ("content", pa.string()), ("tool_calls", pa.list_(call)),
        ("tool_call_id", pa.string()), ("name", pa.string()),
    ])
    table = pa.table(
        {
            "messages": pa.array(
                [[
                    {"role": "user", "content": "Weather in Paris?"},
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
                        {"id": "call_2", "type": "function",
                         "function": {"name": "get_time", "arguments": "{\"city\": \"Paris\"}"}},
                    ]},
                    {"role": "tool", "content": "18C, cloudy", "tool_call_id": "call_1", "name": "get_weather"},
                    {"role": "tool", "content": "14:05", "tool_call_id": "call_2", "name": "get_time"},
                    {"role": "assistant", "content": "18C and cloudy; it is 14:05."},
                ]],
                type=pa.list_(msg),
            ),
            "id": pa.array(["tools-0"]),
        }
    )
    pq.write_table(table, os.path.join(out, "hf_tools.parquet"), **opts)

    # 3. Messages as a JSON string column (--messages-column conversation); row 1 is not JSON.
    table = pa.table(
        {
            "id": pa.array(["j-0", "j-1", "j-2"]),
            "conversation": pa.array([
                json.dumps([{"role": "user", "content": "one"}, {"role": "assistant", "content": "1"}]),
                "[{\"role\": \"user\", \"content\": ",
                json.dumps([{"role": "user", "content": "three"}]),
            ]),
        }
    )
    pq.write_table(table, os.path.join(out, "messages_json.parquet"), **opts)

    # 4. Not a session table.
    table = pa.table({"text": pa.array(["a", "b"]), "label": pa.array([0, 1])})
    pq.write_table(table, os.path.join(out, "no_messages.parquet"), **opts)
    for name in sorted(os.listdir(out)):
        print(name, os.path.getsize(os.path.join(out, name)))


def main(argv):
    if argv[1:] == ["--make-fixtures"]:
        make_fixtures()
        return 0
    args, n, reader = [], 5, None
    for a in argv[1:]:
        if a.startswith("--rows="):
            n = int(a.split("=", 1)[1])
        elif a.startswith("--reader="):
            reader = a.split("=", 1)[1]
        else:
            args.append(a)
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    return check(args[0], args[1], n, reader)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
