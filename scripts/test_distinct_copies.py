#!/usr/bin/env python3
"""Tests of scripts/distinct_copies.py: every long string and every line of it
differs between copies and from the source, while what readers pair up or
parse (equal strings, JSON arguments and their keys, timestamps, short
strings) stays as it was.

    python3 -m unittest scripts/test_distinct_copies.py

With `COMPACTOR_BIN` set to a built binary, also runs the script's `--check`
(each copy reads with `compactor stats` to the source's counts) on fixtures/.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import distinct_copies as dc  # noqa: E402

LONG = "The quick brown fox jumps over the lazy dog, 12 times.\n  indented line two\n\n}"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def copies(value, n=dc.MAX_COPIES):
    return [dc.Rewriter(k, seed=1).value(value) for k in range(1, n + 1)]


class RewriteTest(unittest.TestCase):
    def test_every_line_of_a_long_string_differs_in_every_copy(self):
        outs = copies(LONG)
        for out in outs:
            self.assertEqual(len(out), len(LONG))
            self.assertEqual(out.count("\n"), LONG.count("\n"))
            for mine, theirs in zip(out.split("\n"), LONG.split("\n")):
                if any(c.isalnum() for c in theirs):
                    self.assertNotEqual(mine, theirs)
                    # One character changed, within its class.
                    diff = [(a, b) for a, b in zip(mine, theirs) if a != b]
                    self.assertEqual(len(diff), 1, (mine, theirs))
                    a, b = diff[0]
                    self.assertTrue(
                        (a.islower() and b.islower())
                        or (a.isupper() and b.isupper())
                        or (a.isdigit() and b.isdigit())
                    )
                else:
                    self.assertEqual(mine, theirs)
        # Pairwise distinct on every line that has a letter or digit.
        for i in range(len(outs)):
            for j in range(i + 1, len(outs)):
                for a, b, src in zip(outs[i].split("\n"), outs[j].split("\n"), LONG.split("\n")):
                    if any(c.isalnum() for c in src):
                        self.assertNotEqual(a, b, (i, j, src))

    def test_equal_strings_stay_equal_within_a_copy_and_short_ones_stay(self):
        record = {"id": "x" * 40, "answers": "x" * 40, "short": "toolu_01", "when": "2026-04-01T12:00:00.000000+00:00"}
        for out in copies(record):
            self.assertEqual(out["id"], out["answers"])
            self.assertNotEqual(out["id"], record["id"])
            self.assertEqual(out["short"], "toolu_01")
            self.assertEqual(out["when"], record["when"])
            self.assertEqual(list(out), list(record))

    def test_json_in_a_string_keeps_its_keys_layout_and_validity(self):
        for seps in ((",", ":"), (", ", ": ")):
            args = json.dumps({"command": "ls -la", "path": "/tmp/a.txt", "n": 3}, separators=seps)
            for out in copies({"arguments": args}):
                text = out["arguments"]
                parsed = json.loads(text)
                self.assertEqual(list(parsed), ["command", "path", "n"])
                self.assertEqual(parsed["n"], 3)
                self.assertNotEqual(parsed["command"], "ls -la")
                self.assertNotEqual(parsed["path"], "/tmp/a.txt")
                self.assertEqual(json.dumps(parsed, separators=seps), text)

    def test_claude_code_input_objects_change_whatever_their_lengths(self):
        block = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a.py"}}
        for out in copies(block):
            self.assertEqual(out["name"], "Read")
            self.assertEqual(out["type"], "tool_use")
            self.assertNotEqual(out["input"]["file_path"], "/a.py")
            self.assertEqual(list(out["input"]), ["file_path"])

    def test_copies_are_deterministic_and_numbered_one_to_nine(self):
        self.assertEqual(copies(LONG, 3), copies(LONG, 3))
        self.assertNotEqual(dc.Rewriter(1, seed=1).value(LONG), dc.Rewriter(1, seed=2).value(LONG))
        with self.assertRaises(ValueError):
            dc.Rewriter(dc.MAX_COPIES + 1, seed=1)


class FilesTest(unittest.TestCase):
    def test_jsonl_and_json_files_are_copied_under_copy_k(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "src")
            os.makedirs(os.path.join(src, "sub"))
            with open(os.path.join(src, "a.jsonl"), "w") as f:
                f.write(json.dumps({"text": LONG}) + "\n" + json.dumps({"text": "short"}) + "\n")
            with open(os.path.join(src, "sub", "b.json"), "w") as f:
                json.dump({"messages": [{"role": "user", "content": LONG}]}, f, indent=4)
            with open(os.path.join(src, "README.md"), "w") as f:
                f.write("not data\n")
            dst = os.path.join(tmp, "dst")
            dc.main([src, dst, "--copies", "2"])
            for k in (1, 2):
                root = os.path.join(dst, f"copy-{k}", "src")
                self.assertEqual(sorted(os.listdir(root)), ["a.jsonl", "sub"])
                lines = read(os.path.join(root, "a.jsonl")).splitlines()
                self.assertEqual(len(lines), 2)
                self.assertNotEqual(json.loads(lines[0])["text"], LONG)
                self.assertEqual(json.loads(lines[1])["text"], "short")
                doc = read(os.path.join(root, "sub", "b.json"))
                self.assertTrue(doc.startswith('{\n    "messages"'), doc[:30])

    @unittest.skipUnless(os.environ.get("COMPACTOR_BIN"), "set COMPACTOR_BIN to a built compactor")
    def test_copies_of_the_fixtures_read_to_the_same_counts(self):
        fixtures = os.path.join(HERE, "..", "fixtures")
        with tempfile.TemporaryDirectory() as tmp:
            run = subprocess.run(
                [sys.executable, os.path.join(HERE, "distinct_copies.py"),
                 os.path.join(fixtures, "claude_code"), os.path.join(fixtures, "codex"),
                 os.path.join(fixtures, "openai"), os.path.join(fixtures, "swe_agent"),
                 os.path.join(fixtures, "toolbench"), tmp, "--copies", "3",
                 "--check", os.environ["COMPACTOR_BIN"]],
                capture_output=True, text=True,
            )
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("read to the source's counts", run.stderr)


if __name__ == "__main__":
    unittest.main()
