#!/usr/bin/env python3
"""Cut the `toolbench` fixtures (fixtures/toolbench/) from the shared corpus.

Run from anywhere (stdlib only, Python 3.11+):

    python3 scripts/slice_toolbench.py [--corpus DIR] [--out DIR]

Defaults (relative to the repository root): --corpus ../shared/corpus,
--out fixtures/toolbench. Deterministic and byte-identical on rerun: each
answer is one JSON document whose parts (search tree, candidates, message
lists) refer to each other, so the small ones are copied whole, byte for byte.

Provenance: repo OpenBMB/ToolBench @ d56fdd89faf8c91fa135090b212bb9057ee5cfc2,
licence Apache-2.0, path data_example/answer/ (../shared/corpus/README.md,
section 5). Real gpt-3.5-turbo DFSDT runs against RapidAPI tools:

* G1_57_ChatGPT_DFS_woFilter_w2.json -- G1_answer/57_...: 5 train_messages
  lists (the last has 11 messages), "This is not the first time you try this
  task" user turns with `valid`, assistant text + `function_call`, a final
  `Finish` call with no result.
* G1_10_ChatGPT_DFS_woFilter_w2.json -- G1_answer/10_...: 3 lists, the last
  has 7 messages (plain function calls).
* G1_69_ChatGPT_DFS_woFilter_w2.json -- G1_answer/69_...: no
  `train_messages` at all, only the search `tree` (zero messages).

Also writes fixtures/toolbench/README.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = "toolbench-dfsdt/data_example/answer"
COPIES = [
    ("G1_57_ChatGPT_DFS_woFilter_w2.json", "G1_answer/57_ChatGPT_DFS_woFilter_w2.json",
     "Real: retries with `valid` user turns, text + `function_call`, a final `Finish` call"),
    ("G1_10_ChatGPT_DFS_woFilter_w2.json", "G1_answer/10_ChatGPT_DFS_woFilter_w2.json",
     "Real: plain function calls"),
    ("G1_69_ChatGPT_DFS_woFilter_w2.json", "G1_answer/69_ChatGPT_DFS_woFilter_w2.json",
     "Real: search `tree` only, no `train_messages` (zero messages)"),
]

README = """# `toolbench` fixtures

ToolBench DFSDT answers (one JSON document per file), copied byte for byte from the shared
corpus by `scripts/slice_toolbench.py` (deterministic; see its docstring). See
`src/formats/toolbench.rs` for the mapping (the last `train_messages` list is the transcript).

| file | what | source | bytes | lists | messages (last list) |
|---|---|---|---|---|---|
{rows}

Source: OpenBMB/ToolBench @ `d56fdd89faf8` (Apache-2.0), `data_example/answer/`; see
`../shared/corpus/README.md` section 5.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--out", type=Path, default=ROOT / "fixtures" / "toolbench")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, rel, what in COPIES:
        data = (a.corpus / BASE / rel).read_bytes()
        assert len(data) < 200_000, (name, len(data))
        lists = json.loads(data)["answer_generation"].get("train_messages") or []
        last = len(lists[-1]) if lists else 0
        (a.out / name).write_bytes(data)
        rows.append(f"| `{name}` | {what} | `{rel}` | {len(data):,} | {len(lists)} | {last} |")
    (a.out / "README.md").write_text(README.replace("{rows}", "\n".join(rows)), encoding="utf-8")


if __name__ == "__main__":
    main()
