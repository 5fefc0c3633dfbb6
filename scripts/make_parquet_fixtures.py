#!/usr/bin/env python3
"""Writes the small Parquet fixtures under fixtures/parquet/ with pyarrow.

    python3 scripts/make_parquet_fixtures.py

Rewrites fixtures/parquet/*.parquet (byte-identical on rerun with the same
pyarrow version; see fixtures/parquet/README.md). The data is synthetic and
tiny: there is no real Parquet transcript in ../shared/corpus (its README:
"Not found"), so these files exist to test reading tables that compactor did
not write.
"""

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    # 5. A table in our own schema of earlier versions (`openai-sessions/1`):
    # columns decided by the first rows, `content_parts` and `extra` JSON text.
    s = pa.string()
    call = pa.struct([("id", s), ("type", s), ("function", pa.struct([("name", s), ("arguments", s)]))])
    msg = pa.struct([
        ("role", s), ("content", s), ("content_parts", s), ("name", s), ("tool_call_id", s),
        ("tool_calls", pa.list_(call)), ("reasoning_content", s), ("extra", s),
    ])
    enc = lambda e: {"compactor:encoding": e}  # noqa: E731
    schema = pa.schema(
        [
            pa.field("messages", pa.list_(msg), metadata=enc("messages")),
            pa.field("compaction", s, metadata=enc("json")),
            pa.field("id", s),
            pa.field("extra", s, metadata=enc("extra")),
        ],
        metadata={"compactor:schema": "openai-sessions/1"},
    )
    rows = [
        {"messages": [
            {"role": "user", "content_parts": json.dumps([{"type": "text", "text": "hi"}])},
            {"role": "assistant", "extra": json.dumps({"content": None}), "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ], "compaction": json.dumps({"compacted": True}), "id": "v1-0", "extra": json.dumps({"n": 1})},
        {"messages": [{"role": "user", "content": "bare"}], "extra": json.dumps("bare_array")},
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), os.path.join(out, "ours_v1.parquet"), **opts)
    for name in sorted(os.listdir(out)):
        print(name, os.path.getsize(os.path.join(out, name)))



if __name__ == "__main__":
    make_fixtures()
