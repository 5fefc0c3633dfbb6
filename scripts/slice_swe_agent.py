#!/usr/bin/env python3
"""Cut the `swe-agent` fixtures (fixtures/swe_agent/) from the shared corpus.

Run from anywhere (stdlib only, Python 3.11+):

    python3 scripts/slice_swe_agent.py [--corpus DIR] [--out DIR]

Defaults (relative to the repository root): --corpus ../shared/corpus,
--out fixtures/swe_agent. Deterministic and byte-identical on rerun: the real
trajectories are small enough to copy whole, byte for byte (a SWE-agent
`.traj` is one JSON document; cutting its `history` would make `trajectory`
and `info` disagree with it). The mini-swe-agent file is synthetic, written
with a fixed JSON encoding (indent 2, UTF-8, LF).

Provenance: repo SWE-agent/SWE-agent @ 3ea751c087f32b16e039a2233dd6eefecef325d5,
licence MIT (../shared/corpus/README.md, section 4):

* function_calling_simple.traj -- trajectories/demonstrations/function_calling_simple.traj:
  function-calling format (assistant `tool_calls`, `tool` messages with
  `tool_call_ids`), `history` only.
* marshmallow_function_calling.traj --
  trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling__install-1/marshmallow-code__marshmallow-1867.traj:
  function-calling format with `trajectory`, `info` and `replay_config`.
* pydicom_text_action.traj --
  tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj:
  old text-action format (actions in assistant `content`, observations as
  `user` messages) with an `is_demo` demonstration entry; GPT-4 run.
* humanevalfix_text_action.traj --
  trajectories/demonstrations/human_thought__swe-bench-HumanEvalFix-python__lcb__t-0.00__p-0.95__c-4.00__install-0/humanevalfix-python-0.traj:
  text-action format with `message_type` on every entry.

Synthetic:

* mini_swe_agent.traj.json -- a mini-swe-agent trajectory
  (`{"info", "messages", "trajectory_format": "mini-swe-agent-1"}`); the
  corpus has none.

Also writes fixtures/swe_agent/README.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = "swe-agent-traj"
COPIES = [
    (
        "function_calling_simple.traj",
        "trajectories/demonstrations/function_calling_simple.traj",
        "Real: function-calling format, `history` only",
    ),
    (
        "marshmallow_function_calling.traj",
        "trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling__install-1/"
        "marshmallow-code__marshmallow-1867.traj",
        "Real: function-calling format with `trajectory`, `info`, `replay_config`",
    ),
    (
        "pydicom_text_action.traj",
        "tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/"
        "pydicom__pydicom-1458.traj",
        "Real: old text-action format with an `is_demo` demonstration (GPT-4)",
    ),
    (
        "humanevalfix_text_action.traj",
        "trajectories/demonstrations/human_thought__swe-bench-HumanEvalFix-python__lcb__t-0.00__p-0.95__c-4.00__install-0/"
        "humanevalfix-python-0.traj",
        "Real: text-action format with `message_type` on every entry",
    ),
]


def mini() -> bytes:
    doc = {
        "info": {
            "exit_status": "Submitted",
            "submission": "diff --git a/calc.py b/calc.py\n-    return a/b\n+    return a/b if b else 0\n",
            "model_stats": {"instance_cost": 0.01, "api_calls": 3},
            "mini_version": "1.0.0",
        },
        "messages": [
            {"role": "system", "content": "You are a helpful assistant that can interact with a computer shell."},
            {"role": "user", "content": "Please solve this issue: calc.divide(1, 0) raises ZeroDivisionError."},
            {
                "role": "assistant",
                "content": "THOUGHT: look at the file.\n\n```bash\ncat calc.py\n```",
                "extra": {"response": {"id": "r1"}},
            },
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\ndef divide(a, b):\n    return a/b\n</output>"},
            {
                "role": "assistant",
                "content": "THOUGHT: guard b.\n\n```bash\nsed -i 's|return a/b|return a/b if b else 0|' calc.py\n```",
            },
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
            {"role": "assistant", "content": "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```"},
        ],
        "trajectory_format": "mini-swe-agent-1",
    }
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


README = """# `swe-agent` fixtures

SWE-agent trajectories (`.traj`, one JSON document per file), copied byte for byte from the
shared corpus by `scripts/slice_swe_agent.py` (deterministic; see its docstring), plus one
synthetic mini-swe-agent `.traj.json`. See `src/formats/swe_agent.rs` for the mapping.

| file | what | source | bytes | history |
|---|---|---|---|---|
{rows}

Real files: SWE-agent/SWE-agent @ `3ea751c087f3` (MIT), see `../shared/corpus/README.md` section 4.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--out", type=Path, default=ROOT / "fixtures" / "swe_agent")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, rel, what in COPIES:
        data = (a.corpus / BASE / rel).read_bytes()
        assert len(data) < 200_000, (name, len(data))
        n = len(json.loads(data)["history"])
        (a.out / name).write_bytes(data)
        rows.append(f"| `{name}` | {what} | `{rel}` | {len(data):,} | {n} |")
    data = mini()
    (a.out / "mini_swe_agent.traj.json").write_bytes(data)
    n = len(json.loads(data)["messages"])
    rows.append(f"| `mini_swe_agent.traj.json` | Synthetic: mini-swe-agent `messages` + `info` | synthetic | {len(data):,} | {n} (messages) |")
    (a.out / "README.md").write_text(README.replace("{rows}", "\n".join(rows)), encoding="utf-8")


if __name__ == "__main__":
    main()
