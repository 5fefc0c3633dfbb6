#!/usr/bin/env python3
"""Tests of scripts/check_parquet.py: it passes a good directory, and catches
files with differing schemas, an empty turn, and tool messages whose calls are
missing (as when calls sat in a JSON catch-all instead of `tool_calls`).

    python3 -m unittest scripts/test_check_parquet.py

The tables are built here with pyarrow in the documented schema (README,
"Parquet schema"), not by compactor.
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check_parquet  # noqa: E402

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # pragma: no cover
    pa = None


def schema(with_compaction=True):
    s = pa.string()
    pair = lambda a, b: pa.struct([(a, s), (b, s)])  # noqa: E731
    part = pa.struct([("type", s), ("text", s), ("image_url", pair("url", "detail"))])
    call = pa.struct([("id", s), ("type", s), ("function", pair("name", "arguments")), ("extra", s)])
    message = pa.struct([
        ("role", s), ("content", s), ("parts", pa.list_(part)), ("name", s), ("tool_call_id", s),
        ("tool_calls", pa.list_(call)), ("reasoning_content", s), ("extra", s),
    ])
    fields = [("id", s), ("source", s), ("messages", pa.list_(message)), ("tools", s)]
    if with_compaction:
        fields.append(("compaction", s))
    fields.append(("metadata", s))
    return pa.schema(fields)


def call(i, name="f"):
    return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}, "extra": None}


def good_row(i):
    return {
        "id": f"s{i}",
        "source": f"in.jsonl:{i + 1}",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Run it."},
            {"role": "assistant", "content": None, "tool_calls": [call(1), call(2, "g")]},
            {"role": "tool", "content": "ok", "tool_call_id": "c1"},
            {"role": "tool", "content": "ok too", "tool_call_id": "c2"},
            {"role": "assistant", "content": "Done."},
        ],
        "tools": None,
        "compaction": None,
        "metadata": None,
    }


def write(dir_, name, rows, with_compaction=True):
    sch = schema(with_compaction)
    rows = [{k: v for k, v in r.items() if k in sch.names} for r in rows]
    pq.write_table(pa.Table.from_pylist(rows, schema=sch), os.path.join(dir_, name))


def run(dir_, templates=False):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        failures, totals = check_parquet.check(dir_, chat_templates=templates)
    return failures.items, totals, out.getvalue()


def has_template_tools():
    try:
        import datasets  # noqa: F401
        import jsonschema  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


TOOLS = json.dumps([
    {"type": "function", "function": {"name": n, "parameters": {
        "type": "object", "properties": {"x": {"type": "integer"}}, "required": []}}} for n in ("f", "g")])


@unittest.skipIf(pa is None, "pyarrow is not installed")
class CheckParquetTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        os.makedirs(os.path.join(self.dir, "sub"))

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_good_directory_passes_with_its_counts(self):
        write(self.dir, "a.parquet", [good_row(0), good_row(1)])
        write(os.path.join(self.dir, "sub"), "b.parquet", [good_row(2)])
        failures, totals, out = run(self.dir)
        self.assertEqual(failures, [], out)
        self.assertEqual((totals["rows"], totals["calls"], totals["tool_messages"]), (3, 6, 6))
        self.assertEqual(totals["empty_turns"], 0)
        # The call-only assistant turn is counted under plain ChatML, not an error.
        self.assertEqual(totals["call_only_turns"], 3)
        self.assertIn("duckdb: one table, 3 rows", out)
        self.assertIn("polars: one table, 3 rows", out)

    def test_differing_schemas_are_caught(self):
        write(self.dir, "a.parquet", [good_row(0)])
        write(self.dir, "b.parquet", [good_row(1)], with_compaction=False)
        failures, _, _ = run(self.dir)
        self.assertEqual(len(failures), 1, failures)
        self.assertIn("b.parquet differs", failures[0])

    def test_an_empty_turn_is_caught(self):
        row = good_row(0)
        # Text only in a catch-all: `content` null, as the old content_parts did.
        row["messages"][5] = {"role": "assistant", "content": None,
                              "extra": '{"content": [{"type": "text", "text": "Done."}]}'}
        write(self.dir, "a.parquet", [row])
        failures, totals, _ = run(self.dir)
        self.assertEqual(totals["empty_turns"], 2, failures)  # under both templates
        self.assertTrue(all("message 5 (assistant) is an empty turn" in f for f in failures), failures)
        self.assertEqual(len(failures), 2)

    def test_missing_calls_are_caught(self):
        row = good_row(0)
        # The calls in a catch-all, not in `tool_calls`: the results answer nothing.
        row["messages"][2] = {"role": "assistant", "content": "Running.",
                              "extra": '{"tool_calls": [{"id": "c1"}, {"id": "c2"}]}'}
        write(self.dir, "a.parquet", [row])
        failures, _, _ = run(self.dir)
        self.assertEqual(len(failures), 2, failures)
        self.assertIn("tool result 'c1' answers no call before it", failures[0])

    def test_an_unanswered_call_before_the_end_is_caught(self):
        row = good_row(0)
        del row["messages"][4]
        write(self.dir, "a.parquet", [row])
        failures, _, _ = run(self.dir)
        self.assertEqual(failures, ["row 's0' (in.jsonl:1): message 2: call 'c2' has no tool message"])

    def test_the_calls_of_the_last_message_may_be_in_flight(self):
        row = good_row(0)
        row["messages"] = row["messages"][:3]
        write(self.dir, "a.parquet", [row])
        failures, totals, _ = run(self.dir)
        self.assertEqual(failures, [])
        self.assertEqual(totals["in_flight_calls"], 2)


@unittest.skipIf(pa is None or not has_template_tools(), "pyarrow, datasets, transformers or jsonschema is missing")
class TemplateCheckTest(unittest.TestCase):
    """Step 7: the published templates, straight from `datasets`."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_good_rows_render_under_every_template_and_json_kinds_are_named(self):
        rows = [dict(good_row(i), tools=TOOLS) for i in range(2)]
        write(self.dir, "a.parquet", rows)
        failures, totals, out = run(self.dir, templates=True)
        self.assertEqual(failures, [], out)
        self.assertIn("JSON fields as plain strings: 1 files (a.parquet)", out)
        self.assertEqual(totals["templates"]["qwen2.5"]["rendered"], 2)
        self.assertEqual(totals["templates"]["llama3.1"]["rendered"], 2)
        # good_row's first assistant message holds only calls; Mistral takes it.
        self.assertEqual(totals["templates"]["mistral"]["rendered"], 2)

    def test_undeclared_tools_and_invalid_arguments_are_caught(self):
        row = good_row(0)
        row["tools"] = json.dumps(json.loads(TOOLS)[:1])  # declares f only
        row["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{"x": "not an integer"}'
        write(self.dir, "a.parquet", [row])
        failures, _, _ = run(self.dir, templates=True)
        self.assertIn("row 's0': call 'c2' to 'g', which `tools` does not declare", failures)
        self.assertTrue(any("call 'c1' does not validate" in f for f in failures), failures)

    def test_double_encoded_arguments_are_caught(self):
        row = dict(good_row(0), tools=TOOLS)
        # Arguments encoded twice: a JSON string holding the JSON object's text.
        row["messages"][2]["tool_calls"][0]["function"]["arguments"] = json.dumps("{}")
        write(self.dir, "a.parquet", [row])
        failures, totals, _ = run(self.dir, templates=True)
        self.assertGreaterEqual(totals["templates"]["qwen2.5"]["double_encoded"], 1, failures)
        self.assertTrue(any("arguments as a JSON string" in f for f in failures), failures)


if __name__ == "__main__":
    unittest.main()
