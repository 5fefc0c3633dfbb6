"""Tests of scripts/import_cycles.py on small made-up crates.

Run: python3 -m unittest scripts/test_import_cycles.py
"""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "import_cycles.py")


def run(files, *flags):
    with tempfile.TemporaryDirectory() as src:
        for path, text in files.items():
            full = os.path.join(src, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        done = subprocess.run(
            [sys.executable, SCRIPT, *flags, src], capture_output=True, text=True, check=False
        )
        return done.returncode, done.stdout


class ImportCycles(unittest.TestCase):
    def test_a_layered_crate_has_no_cycle(self):
        code, out = run({
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a.rs": "pub struct A;\n",
            "b/mod.rs": "mod c;\nuse crate::a::A;\n",
            "b/c.rs": "use super::super::a::A;\n",
        })
        self.assertEqual(code, 0, out)
        self.assertIn("file-level cycles: 0", out)
        self.assertIn("top-level module cycles: 0", out)

    def test_two_files_using_each_other_are_a_cycle(self):
        code, out = run({
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a.rs": "use crate::b::{B, other::X};\npub struct A;\n",
            "b.rs": "pub struct B;\nfn f() { let _ = crate::a::A; }\n",
        })
        self.assertEqual(code, 1, out)
        self.assertIn("cycle: src/a.rs <-> src/b.rs", out)
        self.assertIn("top-level module cycles: 1", out)

    def test_a_parent_declaring_its_child_is_no_edge(self):
        code, out = run({
            "lib.rs": "pub mod a;\n",
            "a/mod.rs": "pub mod child;\npub struct A;\n",
            "a/child.rs": "use super::A;\n",
        })
        self.assertEqual(code, 0, out)

    def test_paths_in_comments_and_strings_are_not_imports(self):
        code, out = run({
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a.rs": "use crate::b::B;\n",
            "b.rs": "// crate::a::A\nconst S: &str = \"crate::a::A\";\npub struct B;\n",
        })
        self.assertEqual(code, 0, out)

    def test_test_code_counts_only_with_the_flag(self):
        files = {
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a.rs": "use crate::b::B;\n",
            "b.rs": "pub struct B;\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n",
        }
        self.assertEqual(run(files)[0], 0)
        code, out = run(files, "--tests")
        self.assertEqual(code, 1, out)

    def test_a_path_attribute_file_is_its_module(self):
        code, out = run({
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a/mod.rs": "#[path = \"x_tests.rs\"]\nmod x;\npub struct A;\n",
            "a/x_tests.rs": "use crate::b::B;\n",
            "b.rs": "use crate::a::A;\npub struct B;\n",
        })
        self.assertEqual(code, 1, out)
        self.assertIn("a -> b  (src/a/x_tests.rs:1)", out)

    def test_modules_of_the_binary_are_their_own(self):
        # The binary's `crate::` is its own root; `compactor::` reaches the library.
        files = {
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a.rs": "pub struct A;\n",
            "b.rs": "use crate::a::A;\n",
            "main.rs": "mod cmd;\nmod other;\n",
            "cmd.rs": "use compactor::b;\nuse crate::other::O;\n",
            "other.rs": "pub struct O;\n",
        }
        self.assertEqual(run(files)[0], 0)
        files["other.rs"] = "pub struct O;\nuse crate::cmd;\n"
        code, out = run(files)
        self.assertEqual(code, 1, out)
        self.assertIn("bin:cmd <-> bin:other", out)


if __name__ == "__main__":
    unittest.main()
