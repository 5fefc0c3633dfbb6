"""Tests of scripts/readme_blocks.py on small made-up READMEs and a fake binary.

Run: python3 -m unittest scripts/test_readme_blocks.py
"""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "readme_blocks.py")
sys.path.insert(0, HERE)
import readme_blocks  # noqa: E402

FENCE = "```"


def readme(*parts):
    return "\n".join(parts) + "\n"


def marked(lang, body):
    return f"<!-- ready-to-paste -->\n{FENCE}{lang}\n{body}\n{FENCE}"


class Extraction(unittest.TestCase):
    def test_only_marked_blocks_with_their_fence_lines(self):
        text = readme(
            "# t",
            f"{FENCE}sh\nnot marked\n{FENCE}",
            marked("sh", "echo one"),
            "",
            "<!-- ready-to-paste -->",
            "",
            f"{FENCE}yaml\n- run: echo two\n{FENCE}",
        )
        found = readme_blocks.blocks(text)
        self.assertEqual([(b.line, b.lang) for b in found], [(6, "sh"), (12, "yaml")])
        self.assertEqual(found[0].text, "echo one\n")

    def test_a_marker_without_a_block_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "line 2: .* not followed by a fenced code block"):
            readme_blocks.blocks(readme("x", "<!-- ready-to-paste -->", "text"))
        with self.assertRaisesRegex(ValueError, "never closed"):
            readme_blocks.blocks(readme("<!-- ready-to-paste -->", f"{FENCE}sh", "x"))

    def test_yaml_run_keys_are_the_script(self):
        step = "\n".join([
            "- name: gate",
            "  run: |",
            "    a --x \\",
            "      --y",
            "    b",
            "- name: other",
            "  run: c",
        ])
        self.assertEqual(readme_blocks.yaml_runs(step), ["a --x \\\n  --y\nb\n", "c\n"])
        with self.assertRaisesRegex(ValueError, "cannot run a ```python block"):
            readme_blocks.script_of(readme_blocks.Block(3, "python", "print(1)\n"))


class Running(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.binary = os.path.join(self.dir.name, "fake-compactor")
        with open(self.binary, "w", encoding="utf-8") as f:
            f.write('#!/bin/sh\necho "fake $*"\n[ "$1" = fail ] && exit 4\nexit 0\n')
        os.chmod(self.binary, 0o755)

    def tearDown(self):
        self.dir.cleanup()

    def run_readme(self, text):
        path = os.path.join(self.dir.name, "README.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        done = subprocess.run(
            [sys.executable, SCRIPT, "--readme", path, "--binary", self.binary],
            capture_output=True, text=True, check=False,
        )
        return done.returncode, done.stdout + done.stderr

    def test_blocks_run_verbatim_with_compactor_and_cargo_run(self):
        code, out = self.run_readme(readme(
            marked("sh", "compactor stats fixtures/x\nls fixtures/openai >/dev/null\nmkdir -p target && echo > target/r"),
            marked("yaml", "- name: gate\n  run: |\n    cargo run --release -- check --baseline .ci/baseline"),
        ))
        self.assertEqual(code, 0, out)
        self.assertIn("2 of 2 ready-to-paste blocks ran as written", out)

    def test_a_failing_line_fails_the_block_with_its_line(self):
        code, out = self.run_readme(readme("# t", "", marked("sh", "compactor fail\necho after")))
        self.assertEqual(code, 1, out)
        self.assertIn("README.md:4: the ready-to-paste block failed: exit 4", out)
        self.assertIn("fake fail", out)

    def test_cargo_other_than_run_is_refused_and_stray_files_fail(self):
        code, out = self.run_readme(readme(marked("sh", "cargo build --release")))
        self.assertEqual(code, 1, out)
        self.assertIn("only `cargo run --release -- ...` is stood in for", out)
        code, out = self.run_readme(readme(marked("sh", "echo x > report.jsonl")))
        self.assertEqual(code, 1, out)
        self.assertIn("wrote outside target/: report.jsonl", out)

    def test_no_marked_block_is_an_error(self):
        code, out = self.run_readme(readme("# nothing", f"{FENCE}sh\necho\n{FENCE}"))
        self.assertEqual(code, 1, out)
        self.assertIn("no block is marked", out)


if __name__ == "__main__":
    unittest.main()
