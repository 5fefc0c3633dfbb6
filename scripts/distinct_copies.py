#!/usr/bin/env python3
"""Write copies of a corpus of transcripts in which no long text is shared
between copies, so that a benchmark over the copies pays for every copy.

    python3 scripts/distinct_copies.py SRC [SRC...] DST [--copies 6] [--seed 1]
        [--exclude SUBSTRING]... [--check BIN]

Why: compactor remembers token counts, and several policy results, by a hash
of the text (`src/tokens/cache.rs`, `src/memo/`), and counts a long text it
has not seen line by line through the same cache (`src/tokens/lines.rs`). Six
plain copies of a corpus thus cost little more than one, and a benchmark over
them measures the caches, not the work. Here every line of every long string
(message texts, tool outputs, call arguments) differs from copy to copy.

What each copy k (1..COPIES) changes, as a pure function of the string and k,
so that strings equal within a file (a call id and the id its result answers,
a tool output and its duplicate) stay equal within a copy:
- a string of at least MIN_CHARS characters (`--min-chars`, default 32): in
  each of its lines that holds an ASCII letter or digit, one such character
  (chosen by a seeded hash of the line and k) is shifted by k within its class
  (a-z, A-Z, 0-9). Lines, lengths and character classes stay those of the
  original; two copies differ on every such line (another position, or the
  same position shifted by another k), and every copy differs from the source.
  ISO timestamps are left alone (readers parse them).
- a long string holding a JSON object or array (call arguments, JSON tool
  outputs) is parsed, every string value inside it of any length is changed
  as above (keys, numbers and layout are kept, so it stays valid JSON with the
  same keys), and it is written back in its own separators when they can be
  told (else compact).
- a JSON object under the key `input` (Claude Code's tool_use arguments) has
  every string value inside it changed, whatever their lengths: its serialized
  form is the text counted as the call's arguments.
Keys and every non-string value are kept. JSONL files are written one record a
line (compact); a JSON file keeps its indentation. Files are copied to
DST/copy-K/ under their path relative to their SRC (a directory SRC keeps its
own name as the first folder); README.md files and the like are skipped (only
.jsonl, .json and .traj are copied).

`--check BIN` runs `BIN stats --json` on each source and each copy and fails
unless every copied file reads to the same sessions, messages (by role) and
tool calls (their counts per tool, tool names aside) as its source: the copies
are valid transcripts of their dialect. Deterministic: the same inputs and
options give the same bytes. Used by scripts/bench.sh (never committed: the
copies go under target/).
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

MIN_CHARS = 32
# Copies shift a digit by k, so at most 9 copies stay distinct from each other.
MAX_COPIES = 9
DATA_SUFFIXES = (".jsonl", ".json", ".traj")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?$")
ALNUM = re.compile(r"[A-Za-z0-9]")


class Rewriter:
    """The change of copy `k` under `seed` (see the module doc)."""

    def __init__(self, k, seed, min_chars=MIN_CHARS):
        if not 1 <= k <= MAX_COPIES:
            raise ValueError(f"copy {k}: copies are numbered 1..{MAX_COPIES}")
        self.k = k
        self.salt = f"{seed}:{k}:".encode()
        self.min_chars = min_chars
        self.memo = {}

    def line(self, line):
        """`line` with one ASCII letter or digit shifted by k (unchanged if it has none)."""
        spots = [m.start() for m in ALNUM.finditer(line)]
        if not spots:
            return line
        h = hashlib.blake2b(self.salt + line.encode("utf-8", "surrogatepass"), digest_size=8)
        at = spots[int.from_bytes(h.digest(), "little") % len(spots)]
        c = line[at]
        if c.isdigit():
            c = chr((ord(c) - 48 + self.k) % 10 + 48)
        elif c.islower():
            c = chr((ord(c) - 97 + self.k) % 26 + 97)
        else:
            c = chr((ord(c) - 65 + self.k) % 26 + 65)
        return line[:at] + c + line[at + 1 :]

    def text(self, s):
        """Every line of `s` changed (`\\n`, `\\r\\n` and `\\r` kept as they were)."""
        return "".join(self.line(part) for part in re.split(r"(\r\n|\r|\n)", s))

    def string(self, s):
        """A string value of a record: changed if long (see the module doc)."""
        if len(s) < self.min_chars or TIMESTAMP.match(s):
            return s
        hit = self.memo.get(s)
        if hit is None:
            hit = self.json_text(s)
            if hit is None:
                hit = self.text(s)
            self.memo[s] = hit
        return hit

    def json_text(self, s):
        """`s` with every string inside it changed, if it is a JSON object or array; else None."""
        t = s.strip()
        if not t or t[0] not in "[{":
            return None
        try:
            v = json.loads(t)
        except ValueError:
            return None
        if not isinstance(v, (dict, list)):
            return None
        out = dump_like(self.all_strings(v), t)
        return s[: len(s) - len(s.lstrip())] + out + s[len(s.rstrip()) :]

    def all_strings(self, v):
        """`v` with every string value (not key) changed, whatever its length."""
        if isinstance(v, str):
            if TIMESTAMP.match(v):
                return v
            return self.string(v) if len(v) >= self.min_chars else self.text(v)
        if isinstance(v, list):
            return [self.all_strings(x) for x in v]
        if isinstance(v, dict):
            return {key: self.all_strings(x) for key, x in v.items()}
        return v

    def value(self, v, key=None):
        """A record (any JSON value) with its strings changed by the rules above."""
        if isinstance(v, str):
            return self.string(v)
        if isinstance(v, list):
            return [self.value(x, key) for x in v]
        if isinstance(v, dict):
            if key == "input":
                return self.all_strings(v)
            return {kk: self.value(x, kk) for kk, x in v.items()}
        return v


def dump_like(v, original):
    """`v` as JSON in the separators and escaping `original` was written in, when
    one of the usual ones reproduces it; else compact."""
    parsed = json.loads(original)
    for seps in ((",", ":"), (", ", ": ")):
        for ascii_only in (False, True):
            if json.dumps(parsed, separators=seps, ensure_ascii=ascii_only) == original:
                return json.dumps(v, separators=seps, ensure_ascii=ascii_only)
    for indent in (2, 4):
        for ascii_only in (False, True):
            if json.dumps(parsed, indent=indent, ensure_ascii=ascii_only) == original:
                return json.dumps(v, indent=indent, ensure_ascii=ascii_only)
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def read(path):
    """(records, kind): a whole JSON document, or one record per line."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return [json.loads(text)], "json"
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()], "jsonl"


def indent_of(path):
    """The indentation of a pretty-printed JSON file (None if written on one line)."""
    with open(path, encoding="utf-8") as f:
        f.readline()
        second = f.readline()
    spaces = len(second) - len(second.lstrip(" "))
    return spaces or None


def write(path, records, kind, indent):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        if kind == "json":
            json.dump(records[0], f, ensure_ascii=False, indent=indent)
            f.write("\n")
        else:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")))
                f.write("\n")
    os.replace(tmp, path)


def inputs(sources, excludes):
    """(path, relative path under DST/copy-K) of every data file of the sources, sorted."""
    found = []
    for src in sources:
        src = os.path.normpath(src)
        if os.path.isfile(src):
            found.append((src, os.path.basename(src)))
            continue
        if not os.path.isdir(src):
            sys.exit(f"{src}: no such file or directory")
        for root, dirs, files in os.walk(src):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                if not name.endswith(DATA_SUFFIXES) or any(e in path for e in excludes):
                    continue
                found.append((path, os.path.join(os.path.basename(src), os.path.relpath(path, src))))
    return found


def stats_counts(binary, paths):
    """By file read by `BIN stats --json PATHS...` (its path as stats names it):
    what a copy must keep."""
    out = subprocess.run(
        [binary, "stats", "--json", *paths], check=True, capture_output=True, text=True
    ).stdout
    counts = {}
    for f in json.loads(out)["files"]:
        s = f["stats"]
        counts[os.path.normpath(f["file"])] = (
            f["format"],
            s["sessions"],
            s["messages"],
            s["messages_by_role"],
            s["tool_calls"],
            sorted(s["tool_calls_by_name"].values()),
        )
    return counts


def check(binary, files, dst, copies):
    """Fails unless every copy of every file reads as its source does (see the module doc)."""
    source = stats_counts(binary, [path for path, _ in files])
    want = {rel: source.get(os.path.normpath(path)) for path, rel in files}
    for k in range(1, copies + 1):
        root = os.path.join(dst, f"copy-{k}")
        got = stats_counts(binary, [root])
        for rel, counts in want.items():
            mine = got.get(os.path.normpath(os.path.join(root, rel)))
            if counts is None or mine != counts:
                sys.exit(f"{rel}: copy {k} reads as {mine}, the source as {counts}")
    print(f"checked: {len(files)} files x {copies} copies read to the source's counts", file=sys.stderr)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="SRC... DST")
    p.add_argument("--copies", type=int, default=6)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--min-chars", type=int, default=MIN_CHARS)
    p.add_argument("--exclude", action="append", default=[], metavar="SUBSTRING")
    p.add_argument("--check", metavar="BIN", help="compactor binary to check the copies with")
    a = p.parse_args(argv)
    if len(a.paths) < 2:
        p.error("need at least one SRC and the DST")
    if not 1 <= a.copies <= MAX_COPIES:
        p.error(f"--copies: 1 to {MAX_COPIES}")
    *sources, dst = a.paths
    files = inputs(sources, a.exclude)
    if not files:
        sys.exit("no .jsonl, .json or .traj file in the sources")
    total = 0
    for path, rel in files:
        records, kind = read(path)
        indent = indent_of(path) if kind == "json" else None
        for k in range(1, a.copies + 1):
            rw = Rewriter(k, a.seed, a.min_chars)
            out = os.path.join(dst, f"copy-{k}", rel)
            write(out, [rw.value(r) for r in records], kind, indent)
            total += os.path.getsize(out)
    print(f"{dst}: {len(files)} files x {a.copies} copies, {total / 1e6:.1f} MB", file=sys.stderr)
    if a.check:
        check(a.check, files, dst, a.copies)


if __name__ == "__main__":
    main()
