#!/usr/bin/env python3
"""Cut the `codex` fixtures (fixtures/codex/) from the shared corpus.

Run from anywhere (stdlib only, Python 3.11+):

    python3 scripts/slice_codex.py [--corpus DIR] [--out DIR]

Defaults (relative to the repository root): --corpus ../shared/corpus,
--out fixtures/codex. Output is deterministic and byte-identical on rerun:
real slices copy whole source lines byte for byte (no re-serialization), in
source order; synthetic files use a fixed JSON encoding (compact separators,
UTF-8, LF) and fixed timestamps. No clock, no randomness.

Provenance (see ../shared/corpus/README.md, section 2; licence: none stated in
the source repositories):

* w1t9_head.jsonl -- eaglepointAiLabs/TASK-w1t9 @ 9509e97d16c05cff24e4be46b71d75e35a7a9470,
  sessions/session-1.jsonl (Codex CLI 0.117.0, gpt-5.4, PowerShell): lines
  1..N, N the last line under 180,000 bytes after which every call has its
  output. Parallel `shell_command` batches, `apply_patch` custom tool calls,
  encrypted reasoning, token counts, exec_command_end events.
* fleet_compacted.jsonl -- switch247/fleet-release @ 5577fe567e44c18d4f0990034dfc01f12c46cd9f,
  sessions/019d3038-dccc-7f00-8998-e5cde528d946.jsonl (Codex Desktop 0.117.0-alpha,
  gpt-5.3-codex): line 1 (session_meta with `dynamic_tools`) + lines 1311..N
  around the first `compacted` item (source line 1330: empty `message`,
  `replacement_history` of user/developer messages and an encrypted
  `compaction` item), N as above.
* depot_tail.jsonl -- Strawhat404/DepotCycle-Device-Lifecycle-Marketplace @
  b70fe0b21caa02a39d6200ee56add217a0449a46, sessions/develop-1.jsonl (Codex CLI
  0.116.0, gpt-5.4): line 1 + lines 282..412 (the end; line 282 is the first
  line after a finished tool group): exec_command / write_stdin batches,
  apply_patch calls, a `turn_aborted` turn, and a last `function_call` that
  never got its output (in flight). The longest such tail under 180,000 bytes.

Synthetic edge cases (written here; fixed timestamps 2026-01-01T00:00:NN.000Z):

* edge_items.jsonl -- an item `id` on a function_call, reasoning between
  parallel calls, custom_tool_call + local_shell_call in one group, outputs as
  a string, an array of content items and an object, an output whose call is
  missing, unknown items (ghost_snapshot, web_search_call, a future type), a
  repeated token_count, and reasoning left at the end with no message after it.
* edge_compacted.jsonl -- a `compacted` item with a replacement history (user
  messages, a developer message, an encrypted compaction item), an output after
  it whose call is before it, and new turns.
* edge_compacted_legacy.jsonl -- an older `compacted` item with only a
  `message` (the summary text) and no replacement history.

Also writes fixtures/codex/README.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 180_000

W1T9 = "codex-rollout-jsonl/eaglepointAiLabs__TASK-w1t9/sessions/session-1.jsonl"
FLEET = (
    "codex-rollout-jsonl/switch247__fleet-release/sessions/"
    "019d3038-dccc-7f00-8998-e5cde528d946.jsonl"
)
DEPOT = (
    "codex-rollout-jsonl/Strawhat404__DepotCycle-Device-Lifecycle-Marketplace/sessions/develop-1.jsonl"
)
CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
OUTPUTS = {"function_call_output", "custom_tool_call_output"}


def raw_lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [line for line in data.split(b"\n") if line.strip()]


def cut(lines: list[bytes], start: list[bytes]) -> list[bytes]:
    """`start` then as many of `lines` as fit, ending where no call is open."""
    out = list(start)
    size = sum(len(x) + 1 for x in out)
    best = len(out)
    open_calls: set[str] = set()
    for line in lines:
        size += len(line) + 1
        if size > MAX_BYTES:
            break
        out.append(line)
        rec = json.loads(line)
        p = rec.get("payload") or {}
        if rec.get("type") == "response_item":
            if p.get("type") in CALLS:
                open_calls.add(p.get("call_id"))
            elif p.get("type") in OUTPUTS:
                open_calls.discard(p.get("call_id"))
        if not open_calls:
            best = len(out)
    return out[:best]


def ts(n: int) -> str:
    return f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z"


def dump(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Lines:
    """Synthetic rollout lines with increasing fixed timestamps."""

    def __init__(self) -> None:
        self.items: list[bytes] = []

    def add(self, kind: str, payload: dict) -> None:
        n = len(self.items)
        self.items.append(dump({"timestamp": ts(n), "type": kind, "payload": payload}))

    def item(self, payload: dict) -> None:
        self.add("response_item", payload)

    def event(self, payload: dict) -> None:
        self.add("event_msg", payload)


def meta(lines: Lines, sid: str) -> None:
    lines.add(
        "session_meta",
        {
            "id": sid,
            "timestamp": ts(0),
            "cwd": "/work/demo",
            "originator": "codex_cli_rs",
            "cli_version": "0.117.0",
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, a coding agent. Be concise."},
        },
    )


def msg(role: str, text: str, **extra: object) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}], **extra}


def reasoning(tag: str) -> dict:
    return {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": f"**{tag}**"}],
        "content": None,
        "encrypted_content": "gAAAAAB" + tag.encode().hex() * 8,
    }


def call(call_id: str, command: str) -> dict:
    args = json.dumps({"command": command, "workdir": "/work/demo"}, separators=(",", ":"))
    return {"type": "function_call", "name": "shell_command", "arguments": args, "call_id": call_id}


def out(call_id: str, output: object, kind: str = "function_call_output") -> dict:
    return {"type": kind, "call_id": call_id, "output": output}


def token_count(total: int, last: int) -> dict:
    def usage(n: int) -> dict:
        return {
            "input_tokens": n,
            "cached_input_tokens": n // 2,
            "output_tokens": 50,
            "reasoning_output_tokens": 10,
            "total_tokens": n + 50,
        }

    return {
        "type": "token_count",
        "info": {"total_token_usage": usage(total), "last_token_usage": usage(last), "model_context_window": 258400},
        "rate_limits": None,
    }


def edge_items() -> list[bytes]:
    x = Lines()
    meta(x, "00000000-0000-7000-8000-000000000001")
    x.add("turn_context", {"turn_id": "t1", "cwd": "/work/demo", "model": "gpt-5.4"})
    x.item(msg("developer", "<permissions instructions>sandboxed</permissions instructions>"))
    x.item(msg("user", "<environment_context>\n  <cwd>/work/demo</cwd>\n</environment_context>"))
    x.item(msg("user", "The test in tests/test_math.py fails with ZeroDivisionError. Please fix it."))
    x.event({"type": "user_message", "message": "The test in tests/test_math.py fails with ZeroDivisionError. Please fix it.", "images": []})
    x.event({"type": "token_count", "info": None, "rate_limits": None})
    x.item(reasoning("Inspecting"))
    x.event({"type": "agent_message", "message": "Looking at the test first."})
    x.item(msg("assistant", "Looking at the test first.", phase="commentary", id="msg_01"))
    c1 = call("call_e1", "pytest -q tests/test_math.py")
    x.item({"type": "function_call", "id": "fc_01", "name": c1["name"], "arguments": c1["arguments"], "call_id": "call_e1"})
    x.item(reasoning("Also the patch"))
    x.item(
        {
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": "call_e2",
            "name": "apply_patch",
            "input": "*** Begin Patch\n*** Update File: src/math.py\n@@\n-    return a / b\n+    return a / b if b else 0\n*** End Patch\n",
        }
    )
    x.item(
        {
            "type": "local_shell_call",
            "call_id": "call_e3",
            "status": "completed",
            "action": {"type": "exec", "command": ["bash", "-lc", "git status --short"], "timeout_ms": 10000},
        }
    )
    x.event(token_count(1200, 1200))
    x.event({"type": "exec_command_end", "call_id": "call_e1", "exit_code": 1, "aggregated_output": "1 failed"})
    x.item(out("call_e1", "Exit code: 1\nOutput:\nFAILED tests/test_math.py::test_div - ZeroDivisionError: division by zero\n1 failed in 0.02s\n"))
    x.item(out("call_e2", '{"output":"Success. Updated the following files:\\nM src/math.py\\n","metadata":{"exit_code":0}}', "custom_tool_call_output"))
    x.item(out("call_e3", [{"type": "input_text", "text": " M src/math.py\n"}]))
    x.item(out("call_e9", "output of a call this log never recorded"))
    x.event(token_count(1200, 1200))
    x.item({"type": "ghost_snapshot", "ghost_commit": {"id": "0123abc", "parent": None}})
    x.item(reasoning("Rerun"))
    x.item(call("call_e4", "pytest -q"))
    x.event(token_count(2600, 1400))
    x.item(out("call_e4", {"content": "1 passed in 0.01s", "success": True}))
    x.item({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "python zero division"}})
    x.item({"type": "future_item_type", "data": {"k": [1, 2, 3]}})
    x.item(reasoning("Done"))
    x.item(msg("assistant", "Fixed `src/math.py`: division by zero now returns 0, and the test passes.", phase="final_answer"))
    x.event(token_count(4100, 1500))
    x.event({"type": "task_complete", "turn_id": "t1", "last_agent_message": "Fixed."})
    x.item(reasoning("Dangling"))
    return x.items


def edge_compacted() -> list[bytes]:
    x = Lines()
    meta(x, "00000000-0000-7000-8000-000000000002")
    x.item(msg("developer", "<permissions instructions>sandboxed</permissions instructions>"))
    x.item(msg("user", "Build the CLI in src/main.rs."))
    x.item(reasoning("Plan"))
    x.item(msg("assistant", "Starting with the argument parser."))
    x.item(call("call_c1", "cargo build"))
    x.event(token_count(900, 900))
    x.item(out("call_c1", "Exit code: 0\nOutput:\n   Compiling demo v0.1.0\n"))
    x.item(call("call_c2", "cargo test"))
    history = [
        msg("user", "Build the CLI in src/main.rs."),
        msg("developer", "<permissions instructions>sandboxed</permissions instructions>"),
        msg("user", "<environment_context>\n  <cwd>/work/demo</cwd>\n</environment_context>"),
        {"type": "compaction", "encrypted_content": "gAAAAABcompactionsummary" + "ab" * 40},
    ]
    x.add("compacted", {"message": "", "replacement_history": history})
    x.add("turn_context", {"turn_id": "t2", "cwd": "/work/demo", "model": "gpt-5.4"})
    x.event({"type": "context_compacted"})
    x.item(out("call_c2", "Exit code: 101\nOutput:\nerror[E0425]: cannot find value `args` in this scope\n"))
    x.item(msg("user", "Continue, and add a --verbose flag."))
    x.item(reasoning("Verbose"))
    x.item(call("call_c3", "rg -n verbose src"))
    x.event(token_count(2000, 1100))
    x.item(out("call_c3", "Exit code: 1\nOutput:\n"))
    x.item(msg("assistant", "Added `--verbose` in src/main.rs; `cargo test` passes."))
    return x.items


def edge_compacted_legacy() -> list[bytes]:
    x = Lines()
    meta(x, "00000000-0000-7000-8000-000000000003")
    x.item(msg("user", "Rename the crate to demo-cli."))
    x.item(msg("assistant", "Renamed in Cargo.toml."))
    x.add("compacted", {"message": "Summary so far: the crate was renamed to demo-cli in Cargo.toml."})
    x.item(msg("user", "Now update the README."))
    x.item(call("call_l1", "sed -i s/demo/demo-cli/ README.md"))
    x.item(out("call_l1", "Exit code: 0\n"))
    x.item(msg("assistant", "README updated."))
    return x.items


README = """# `codex` fixtures

Codex CLI rollout JSONL (one session per file, every line `{"timestamp", "type", "payload"}`),
cut by `scripts/slice_codex.py` (deterministic, byte-identical on rerun; real slices copy the
source lines byte for byte). See `src/formats/codex.rs` for how each line maps to messages.

| file | what | source | bytes | lines |
|---|---|---|---|---|
{rows}

Real slices come from the shared corpus (`../shared/corpus/README.md`, section 2); their
repositories state no licence. They hold local usernames and paths; a scan for API-key
patterns found nothing. Synthetic files are written by the script and carry fixed timestamps.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--out", type=Path, default=ROOT / "fixtures" / "codex")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)

    w1t9 = raw_lines(a.corpus / W1T9)
    fleet = raw_lines(a.corpus / FLEET)
    depot = raw_lines(a.corpus / DEPOT)
    w1t9_cut = cut(w1t9, [])
    fleet_cut = cut(fleet[1310:], [fleet[0]])
    files = [
        (
            "w1t9_head.jsonl",
            w1t9_cut,
            "Real: parallel PowerShell `shell_command` batches, `apply_patch` custom calls, reasoning, token counts",
            f"eaglepointAiLabs/TASK-w1t9 @ `9509e97d16c0`, `sessions/session-1.jsonl`, lines 1..{len(w1t9_cut)} of {len(w1t9)}",
        ),
        (
            "fleet_compacted.jsonl",
            fleet_cut,
            "Real: a `compacted` item (replacement history + encrypted compaction) mid-session",
            f"switch247/fleet-release @ `5577fe567e44`, `sessions/019d3038-….jsonl`, line 1 + lines 1311..{1310 + len(fleet_cut) - 1} of {len(fleet)}",
        ),
        (
            "depot_tail.jsonl",
            [depot[0]] + depot[281:],
            "Real: exec_command batches, apply_patch, a `turn_aborted` turn; the session ends with a call in flight",
            f"Strawhat404/DepotCycle-Device-Lifecycle-Marketplace @ `b70fe0b21caa`, `sessions/develop-1.jsonl`, line 1 + lines 282..{len(depot)} of {len(depot)}",
        ),
        ("edge_items.jsonl", edge_items(), "Synthetic: item ids, reasoning between calls, custom/local-shell calls, output shapes, orphan output, unknown items, dangling reasoning", "synthetic"),
        ("edge_compacted.jsonl", edge_compacted(), "Synthetic: `compacted` with replacement history; an output after it whose call is before it", "synthetic"),
        ("edge_compacted_legacy.jsonl", edge_compacted_legacy(), "Synthetic: older `compacted` with only a summary `message`", "synthetic"),
    ]
    rows = []
    for name, lines, what, source in files:
        data = b"".join(line + b"\n" for line in lines)
        assert len(data) < 200_000, (name, len(data))
        for line in lines:
            json.loads(line)
        (a.out / name).write_bytes(data)
        rows.append(f"| `{name}` | {what} | {source} | {len(data):,} | {len(lines)} |")
    (a.out / "README.md").write_text(README.replace("{rows}", "\n".join(rows)), encoding="utf-8")


if __name__ == "__main__":
    main()
