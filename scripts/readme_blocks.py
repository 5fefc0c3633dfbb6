#!/usr/bin/env python3
"""Runs every README code block marked ready to paste, verbatim, as a user would.

A block is marked by an HTML comment on the line before its opening fence:

    <!-- ready-to-paste -->
    ```sh
    compactor compact fixtures/openai/ -o target/out/ --window 32000
    ```

`sh`/`bash`/`shell` blocks run as they are; a `yaml` block is a CI step, and
the shell of each of its `run:` keys runs. Each block runs with `bash -e -o
pipefail` (a line that fails stops it, as it would stop a CI step) in a
fresh temporary directory holding a copy of the repository's `fixtures/` and
`.ci/baseline` (what the blocks name), with `compactor` on PATH (the binary
given, e.g. target/release/compactor), a `cargo` on PATH that stands in for
`cargo run --release -- ARGS` by running that binary (and refuses any other
cargo command: a block must not build), and HOME an empty directory. A block
must exit 0 and write nothing outside `target/` of its directory (a quick
start must leave a checkout clean). The text is extracted from the README
each run, never copied, so the README and what is tested cannot drift.

Usage:
    python3 scripts/readme_blocks.py --binary target/release/compactor [--readme README.md]
    python3 scripts/readme_blocks.py --list          # the marked blocks, with their lines

Exit 1 when a block fails (each failure names README.md:LINE, the line of
the block's opening fence), when a marker is not followed by a fence, or when
no block is marked; 2 on bad usage.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

MARKER = "<!-- ready-to-paste -->"
SHELL_LANGS = ("sh", "bash", "shell")
YAML_LANGS = ("yaml", "yml")
# Seconds a block may take (the fixtures' report takes a few).
TIMEOUT_SECONDS = 600
# What a block's directory holds before it runs, relative to the repository.
COPIED = ("fixtures", ".ci/baseline")

CARGO_SHIM = """#!/bin/sh
# readme_blocks.py: stands in for `cargo run --release -- ARGS` (the built binary).
if [ "$1" = run ]; then
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case "$1" in
      --release|-q|--quiet) shift ;;
      *) echo "readme_blocks.py: \\`cargo run $1\\` is not stood in for" >&2; exit 97 ;;
    esac
  done
  [ "${1:-}" = -- ] && shift
  exec compactor "$@"
fi
echo "readme_blocks.py: a ready-to-paste block ran \\`cargo $*\\`; only \\`cargo run --release -- ...\\` is stood in for" >&2
exit 97
"""


class Block:
    def __init__(self, line, lang, text):
        self.line = line  # 1-based line of the opening fence
        self.lang = lang
        self.text = text

    def __repr__(self):
        return f"Block(line={self.line}, lang={self.lang!r})"


def blocks(readme_text):
    """The marked blocks of a README, in order. Raises ValueError for a
    marker not followed by a fenced block."""
    lines = readme_text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != MARKER:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines) or not lines[j].lstrip().startswith("```"):
            raise ValueError(f"line {i + 1}: {MARKER} is not followed by a fenced code block")
        fence = lines[j].strip()
        lang = fence[3:].strip().split()[0] if fence[3:].strip() else ""
        body = []
        k = j + 1
        while k < len(lines) and lines[k].strip() != "```":
            body.append(lines[k])
            k += 1
        if k >= len(lines):
            raise ValueError(f"line {j + 1}: the code block is never closed")
        out.append(Block(j + 1, lang, "\n".join(body) + "\n"))
        i = k + 1
    return out


def yaml_runs(text):
    """The shell of each `run:` key of a CI step written in YAML: a block
    scalar (`run: |`) dedented, or a one-line value."""
    lines = text.split("\n")
    runs = []
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        key = stripped[2:] if stripped.startswith("- ") else stripped
        if not key.startswith("run:"):
            i += 1
            continue
        value = key[len("run:"):].strip()
        if value in ("|", "|-", ">", ">-"):
            indent = len(lines[i]) - len(stripped)
            body = []
            i += 1
            while i < len(lines):
                line = lines[i]
                if line.strip() and len(line) - len(line.lstrip()) <= indent:
                    break
                body.append(line)
                i += 1
            runs.append(textwrap.dedent("\n".join(body)).strip("\n") + "\n")
        else:
            runs.append(value + "\n")
            i += 1
    return runs


def script_of(block):
    """The shell a block runs."""
    if block.lang in SHELL_LANGS:
        return block.text
    if block.lang in YAML_LANGS:
        runs = yaml_runs(block.text)
        if not runs:
            raise ValueError(f"line {block.line}: a yaml block with no `run:` key")
        return "".join(runs)
    raise ValueError(f"line {block.line}: cannot run a ```{block.lang} block")


def files_under(root):
    out = set()
    for d, _, files in os.walk(root):
        for f in files:
            out.add(os.path.relpath(os.path.join(d, f), root))
    return out


def run_block(block, repo, binary):
    """Runs one block in a fresh directory; returns (ok, what went wrong,
    the script and the end of its output)."""
    script = script_of(block)
    with tempfile.TemporaryDirectory(prefix="readme-block-") as work:
        for rel in COPIED:
            src = os.path.join(repo, rel)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(work, rel))
        tools = os.path.join(work, ".readme-tools")
        home = os.path.join(work, ".readme-home")
        os.makedirs(tools)
        os.makedirs(home)
        os.symlink(os.path.abspath(binary), os.path.join(tools, "compactor"))
        with open(os.path.join(tools, "cargo"), "w", encoding="utf-8") as f:
            f.write(CARGO_SHIM)
        os.chmod(os.path.join(tools, "cargo"), 0o755)
        before = files_under(work)
        env = dict(os.environ)
        env["PATH"] = tools + os.pathsep + env.get("PATH", "")
        env["HOME"] = home
        for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
            env.pop(var, None)
        try:
            done = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", script],
                cwd=work, env=env, capture_output=True, text=True,
                timeout=TIMEOUT_SECONDS, check=False,
            )
            code, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired:
            code, output = None, f"timed out after {TIMEOUT_SECONDS} s"
        stray = sorted(
            f for f in files_under(work) - before
            if not f.startswith("target" + os.sep) and not f.startswith(".readme-")
        )
    problems = []
    if code != 0:
        problems.append(f"exit {code}" if code is not None else output)
    if stray:
        problems.append("wrote outside target/: " + ", ".join(stray[:5]))
    tail = "\n".join(output.strip().split("\n")[-20:])
    report = f"--- script\n{script}--- output (last lines)\n{tail}\n"
    return not problems, "; ".join(problems), report


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--readme", default=os.path.join(repo, "README.md"))
    parser.add_argument("--binary", help="the compactor binary (target/release/compactor)")
    parser.add_argument("--list", action="store_true", help="print the marked blocks and stop")
    args = parser.parse_args(argv)
    name = os.path.relpath(args.readme, repo) if args.readme.startswith(repo) else args.readme
    with open(args.readme, encoding="utf-8") as f:
        text = f.read()
    try:
        found = blocks(text)
        scripts = [script_of(b) for b in found]
    except ValueError as e:
        print(f"{name}:{e}", file=sys.stderr)
        return 1
    if not found:
        print(f"{name}: no block is marked {MARKER}", file=sys.stderr)
        return 1
    if args.list:
        for b, s in zip(found, scripts):
            print(f"{name}:{b.line} ({b.lang})\n{s}")
        return 0
    if not args.binary or not os.access(args.binary, os.X_OK):
        print("--binary: give the built compactor (target/release/compactor)", file=sys.stderr)
        return 2
    failed = 0
    for b in found:
        ok, why, report = run_block(b, repo, args.binary)
        if ok:
            print(f"{name}:{b.line}: ok ({b.lang})")
        else:
            failed += 1
            print(f"{name}:{b.line}: the ready-to-paste block failed: {why}\n{report}", file=sys.stderr)
    print(f"{len(found) - failed} of {len(found)} ready-to-paste blocks ran as written")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
