#!/usr/bin/env python3
"""Build the OpenAI-chat fixtures for `compactor` from the shared transcript corpus.

Run from anywhere (stdlib only, Python 3.11+):

    python3 scripts/make_fixtures.py [--corpus DIR] [--out DIR] [--edge-out DIR] [--readme FILE]
    python3 scripts/make_fixtures.py --check-only      # validate existing files, write nothing

Defaults (relative to the repository root): --corpus ../shared/corpus,
--out fixtures/openai; --edge-out and --readme default to <out>/../edge and
<out>/../README.md (fixtures/edge, fixtures/README.md).
Output is deterministic: no randomness, no clock, fixed JSON encoding
(compact separators, UTF-8, `ensure_ascii=False`, LF line endings), so two runs
give byte-identical files. Every file is validated after it is written.

Output format: JSONL, one session per line:
    {"id": ..., "messages": [...OpenAI chat messages...], "tools"?: [...], "meta": {...}}
A message keeps the source's ISO-8601 timestamp in "timestamp" when the source
has one; no timestamps are invented.

Converted real slices (fixtures/openai/) -- whole messages only, cut after at
most 150 messages at a point where every tool call has its result, and under
250,000 bytes per file. "meta" records repo, commit, path and slice.

* claude_code_task54.jsonl -- Hale17OT/Task-54 @ 5fe37ad3, sessions/develop-1.jsonl
  (raw Claude Code 2.1.89 log, claude-opus-4-6; corpus copy in
  claude-code-jsonl/Hale17OT__Task-54/). Main chain only (isSidechain false);
  non-message events (file-history-snapshot, queue-operation, system
  turn_duration, ...) skipped; assistant events sharing one message.id are
  merged into one assistant message (text blocks -> content, tool_use ->
  tool_calls with arguments = json.dumps(input); the thinking blocks are empty,
  signature-only, and are dropped); each tool_result block -> one "tool"
  message (string content kept, block lists kept as parts: text -> text part,
  other parts such as `tool_reference` verbatim; `is_error: true` kept as an
  extra field). Claude Code logs carry no system prompt, so there is none.
* codex_w1t9.jsonl -- eaglepointAiLabs/TASK-w1t9 @ 9509e97d, sessions/session-1.jsonl
  (raw Codex CLI 0.117.0 rollout, gpt-5.4). session_meta.base_instructions.text
  -> system message; response_item messages -> developer/user/assistant
  (input_text/output_text parts -> plain text; one part -> string, several ->
  a list of text parts); consecutive function_call / custom_tool_call items ->
  ONE assistant message with several tool_calls (custom_tool_call arguments =
  json.dumps({"input": input})); function_call_output / custom_tool_call_output
  -> tool messages; reasoning (encrypted), event_msg and turn_context dropped.
* swe_agent_marshmallow.jsonl -- SWE-agent/SWE-agent @ 3ea751c0,
  trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source/marshmallow-code__marshmallow-1867.traj
  (function-calling `history`: role "tool", tool_calls, tool_call_ids). The
  pydicom-1458 trajectory in the corpus is in the old text-action format (no
  tool role), so the function-calling marshmallow-1867 run is used instead.
  Whole history (28 messages); note the source REUSES tool call ids
  (call_5iDdbOYybq7L19vqXmR0DPaU four times), each reuse answered before the next.
* trajectory_richh.jsonl -- richh-s/TASK-20260318-393C91 @ 1ef85188,
  sessions/develop-1.json (already OpenAI chat, converted Claude Code
  claude-sonnet-4-6 session with inline <thinking> text and a compaction
  boundary). Messages copied as they are; top-level fields other than
  messages dropped (model/task_id/phases summarised in meta).

Synthetic edge cases (fixtures/edge/) -- composed here, clearly synthetic, no timestamps:

* images.jsonl -- inline base64 PNG images in user content and in a
  screenshot tool result (content = [image_url part, text part]).
* parallel_calls.jsonl -- assistant messages with 3 parallel tool calls each
  (read_file / Grep / Bash) plus a `tools` schema list; one batch answers its
  calls out of order.
* huge_output.jsonl -- one ~1,000,000-character test-log tool result with a
  failing test buried in it, ~20 normal messages around it.
* cjk.jsonl -- Chinese / Japanese / Korean conversation with tool calls, CJK
  file paths and a `FileNotFoundError: [Errno 2]` line.
* unknown_roles.jsonl -- line 1 a bare JSON array of messages; line 2 a session
  with role "exit" and unknown extra fields on messages and on the session.
* bad_lines.jsonl -- valid, not-JSON, valid, JSON-but-not-a-session ({"foo": 1}),
  valid session with a message whose content is a number.

fixtures/README.md is generated too (table of files, sizes, counts, provenance).
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import sys
import zlib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SIZE_CAP = 250_000  # bytes per converted fixture file
HUGE_CAP = 1_100_000  # bytes for edge/huge_output.jsonl
TARGET_MSGS = 150

# Provenance, from /work/shared/corpus/README.md.
CLAUDE = {
    "local": "claude-code-jsonl/Hale17OT__Task-54/sessions/develop-1.jsonl",
    "source_repo": "Hale17OT/Task-54",
    "source_commit": "5fe37ad3dbad750bf6deb6d1ce25dbe97995daf2",
    "source_path": "sessions/develop-1.jsonl",
    "source_format": "claude-code-jsonl (raw Claude Code 2.1.89 session log)",
    "license": "none stated in source repo",
}
CODEX = {
    "local": "codex-rollout-jsonl/eaglepointAiLabs__TASK-w1t9/sessions/session-1.jsonl",
    "source_repo": "eaglepointAiLabs/TASK-w1t9",
    "source_commit": "9509e97d16c05cff24e4be46b71d75e35a7a9470",
    "source_path": "sessions/session-1.jsonl",
    "source_format": "codex-rollout-jsonl (raw Codex CLI 0.117.0 rollout)",
    "license": "none stated in source repo",
}
SWE_PATH = (
    "trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source/"
    "marshmallow-code__marshmallow-1867.traj"
)
SWE = {
    "local": "swe-agent-traj/" + SWE_PATH,
    "source_repo": "SWE-agent/SWE-agent",
    "source_commit": "3ea751c087f32b16e039a2233dd6eefecef325d5",
    "source_path": SWE_PATH,
    "source_format": "swe-agent .traj history (function-calling variant)",
    "license": "MIT",
}
RICHH = {
    "local": "agent-trajectory-json/richh-s__TASK-20260318-393C91/sessions/develop-1.json",
    "source_repo": "richh-s/TASK-20260318-393C91",
    "source_commit": "1ef851888cb5bc67fa70c7cf9a35180f0fb582f2",
    "source_path": "sessions/develop-1.json",
    "source_format": "agent-trajectory-json (openai-chat variant)",
    "license": "none stated in source repo",
}


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")


# --------------------------------------------------------------------------
# Pairing helpers
# --------------------------------------------------------------------------


def balanced_cuts(messages: list[dict]) -> list[int]:
    """Prefix lengths n at which no tool call in messages[:n] is unanswered."""
    pending: dict[str, int] = {}
    cuts = []
    for n, m in enumerate(messages, start=1):
        if isinstance(m, dict):
            for tc in m.get("tool_calls") or []:
                pending[tc["id"]] = pending.get(tc["id"], 0) + 1
            if m.get("role") == "tool" and m.get("tool_call_id") in pending:
                tid = m["tool_call_id"]
                pending[tid] -= 1
                if not pending[tid]:
                    del pending[tid]
        if not pending:
            cuts.append(n)
    return cuts


def slice_session(sid: str, messages: list[dict], prov: dict, extra_meta: dict | None = None,
                  target: int = TARGET_MSGS, cap: int = SIZE_CAP) -> tuple[str, int]:
    """Largest balanced prefix of <= target messages whose JSONL line fits in cap bytes."""
    total = len(messages)
    for n in reversed([c for c in balanced_cuts(messages) if c <= target]):
        meta = {k: v for k, v in prov.items() if k != "local"}
        meta["slice"] = f"messages 0..{n} of {total}"
        meta["converted_by"] = "scripts/make_fixtures.py"
        if extra_meta:
            meta.update(extra_meta)
        line = dumps({"id": sid, "messages": messages[:n], "meta": meta})
        if len(line.encode("utf-8")) + 1 <= cap:
            return line, n
    raise SystemExit(f"no balanced cut of {sid} fits in {cap} bytes")


# --------------------------------------------------------------------------
# Real sources
# --------------------------------------------------------------------------


def convert_claude_code(path: Path) -> tuple[str, list[dict]]:
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: list[dict] = []
    open_asst: dict | None = None  # last assistant message, still open for merging
    session_id = None

    def tool_result_content(c):
        if c is None or isinstance(c, str):
            return "" if c is None else c
        parts = []
        for p in c:
            if p.get("type") == "text":
                parts.append({"type": "text", "text": p.get("text", "")})
            elif p.get("type") == "image" and (p.get("source") or {}).get("type") == "base64":
                src = p["source"]
                parts.append({"type": "image_url",
                              "image_url": {"url": f"data:{src['media_type']};base64,{src['data']}"}})
            else:
                parts.append(p)
        return parts

    for ev in events:
        if ev.get("type") not in ("user", "assistant") or ev.get("isSidechain"):
            continue
        session_id = session_id or ev.get("sessionId")
        msg = ev.get("message") or {}
        ts = ev.get("timestamp")
        content = msg.get("content")
        if ev["type"] == "assistant":
            mid = msg.get("id")
            if open_asst is None or open_asst["_id"] != mid:
                open_asst = {"role": "assistant", "_id": mid, "_texts": [], "_reasoning": [],
                             "_calls": [], "timestamp": ts}
                out.append(open_asst)
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            for b in blocks:
                t = b.get("type")
                if t == "text":
                    open_asst["_texts"].append(b.get("text", ""))
                elif t == "thinking":
                    if b.get("thinking"):
                        open_asst["_reasoning"].append(b["thinking"])
                elif t == "tool_use":
                    open_asst["_calls"].append({
                        "id": b["id"], "type": "function",
                        "function": {"name": b["name"], "arguments": json.dumps(b.get("input", {}))},
                    })
            continue
        # user event
        if isinstance(content, str):
            out.append({"role": "user", "content": content, "timestamp": ts})
            open_asst = None
            continue
        texts = []
        for b in content or []:
            t = b.get("type")
            if t == "tool_result":
                tm = {"role": "tool", "tool_call_id": b["tool_use_id"],
                      "content": tool_result_content(b.get("content"))}
                if b.get("is_error"):
                    tm["is_error"] = True
                tm["timestamp"] = ts
                out.append(tm)
            elif t == "text":
                texts.append({"type": "text", "text": b.get("text", "")})
            elif t == "image" and (b.get("source") or {}).get("type") == "base64":
                src = b["source"]
                texts.append({"type": "image_url",
                              "image_url": {"url": f"data:{src['media_type']};base64,{src['data']}"}})
        if texts:
            out.append({"role": "user", "content": texts, "timestamp": ts})
            open_asst = None

    final = []
    for m in out:
        if m["role"] != "assistant":
            final.append(m)
            continue
        texts, calls, reasoning = m["_texts"], m["_calls"], m["_reasoning"]
        if not texts and not calls and not reasoning:
            continue  # only empty (redacted) thinking blocks
        fm: dict = {"role": "assistant"}
        if not texts:
            fm["content"] = None
        elif len(texts) == 1:
            fm["content"] = texts[0]
        else:
            fm["content"] = [{"type": "text", "text": t} for t in texts]
        if calls:
            fm["tool_calls"] = calls
        if reasoning:
            fm["reasoning_content"] = "\n\n".join(reasoning)
        fm["timestamp"] = m["timestamp"]
        final.append(fm)
    return session_id or "claude-code-session", final


def convert_codex(path: Path) -> tuple[str, list[dict]]:
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: list[dict] = []
    session_id = None
    call_group: dict | None = None  # assistant message collecting consecutive calls

    for it in items:
        ts = it.get("timestamp")
        p = it.get("payload") or {}
        if it.get("type") == "session_meta":
            session_id = p.get("id")
            text = (p.get("base_instructions") or {}).get("text")
            if text:
                out.append({"role": "system", "content": text, "timestamp": ts})
            continue
        if it.get("type") != "response_item":
            continue
        t = p.get("type")
        if t == "reasoning":
            continue  # encrypted; dropping it does not break call grouping
        if t in ("function_call", "custom_tool_call"):
            if t == "function_call":
                args = p.get("arguments", "")
            else:
                args = json.dumps({"input": p.get("input", "")})
            call = {"id": p["call_id"], "type": "function", "function": {"name": p["name"], "arguments": args}}
            if call_group is None:
                call_group = {"role": "assistant", "content": None, "tool_calls": [], "timestamp": ts}
                out.append(call_group)
            call_group["tool_calls"].append(call)
            continue
        call_group = None
        if t in ("function_call_output", "custom_tool_call_output"):
            output = p.get("output")
            if not isinstance(output, str):
                output = json.dumps(output)
            out.append({"role": "tool", "tool_call_id": p["call_id"], "content": output, "timestamp": ts})
        elif t == "message":
            parts = [c.get("text", "") for c in p.get("content") or [] if "text" in c]
            content = parts[0] if len(parts) == 1 else [{"type": "text", "text": s} for s in parts]
            out.append({"role": p.get("role"), "content": content, "timestamp": ts})
    return session_id or "codex-session", out


def convert_swe(path: Path) -> tuple[str, list[dict]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out: list[dict] = []
    for h in data["history"]:
        if h.get("is_demo"):
            continue  # demonstration context; none in this file
        role = h["role"]
        m: dict = {"role": role, "content": h.get("content")}
        if role == "assistant" and h.get("tool_calls"):
            m["tool_calls"] = h["tool_calls"]
        if role == "tool":
            ids = h.get("tool_call_ids") or []
            m["tool_call_id"] = ids[0] if ids else None
        out.append(m)
    return "swe-agent/marshmallow-code__marshmallow-1867/function_calling_replace_from_source", out


def merge_parallel_batches(messages: list[dict]) -> tuple[list[dict], int]:
    """Merge tool-call-only assistant messages issued while calls are still open.

    The richh-s converter wrote each tool_use block of one Claude API message as
    its own assistant message, and results arrive interleaved
    (call, call, result, call, call, result...). A model cannot issue new calls
    before all results of its previous turn are back, so every call issued while
    another is unanswered belongs to the same API message: those calls are
    appended to the first message of the batch, and the results stay in source
    order after it. Returns (messages, number of messages merged away).
    """
    out: list[dict] = []
    batch: dict | None = None
    open_ids: set[str] = set()
    seen_results: set[str] = set()  # the source has one result logged before its call
    merged = 0
    for m in messages:
        calls = m.get("tool_calls") if m.get("role") == "assistant" else None
        if calls:
            new_open = {tc["id"] for tc in calls} - seen_results
            if m.get("content") in (None, "") and batch is not None and open_ids:
                batch["tool_calls"] = batch["tool_calls"] + calls
                open_ids |= new_open
                merged += 1
                continue
            batch = dict(m)
            open_ids = new_open
            out.append(batch)
            continue
        if m.get("role") == "tool":
            seen_results.add(m.get("tool_call_id"))
            open_ids.discard(m.get("tool_call_id"))
        else:
            batch, open_ids = None, set()  # any other message ends the batch
        out.append(m)
    return out, merged


def convert_richh(path: Path) -> tuple[str, list[dict], dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    messages, merged = merge_parallel_batches(data["messages"])
    extra = {"source_model": data.get("model"), "source_task_id": data.get("task_id"),
             "source_message_count": len(data["messages"]),
             "normalized": f"in the full {len(data['messages'])}-message session, {merged} single-call assistant messages issued while earlier calls were still "
                           "open were merged into the batch's first assistant message (parallel tool_calls)"}
    return "richh-s/TASK-20260318-393C91/develop-1", messages, extra


# --------------------------------------------------------------------------
# Synthetic edge cases
# --------------------------------------------------------------------------

TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def png_b64(width: int, height: int, seed: int) -> str:
    """A valid RGB PNG with a deterministic pattern (zlib level 0 = stored blocks)."""
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows += bytes(((x * 16 + seed) % 256, (y * 16 + 2 * seed) % 256, ((x + y) * 8 + 3 * seed) % 256))

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(bytes(rows), 0)) + chunk(b"IEND", b""))
    return base64.b64encode(png).decode("ascii")


def call(cid: str, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


def synthetic_meta(what: str) -> dict:
    return {"synthetic": True, "generated_by": "scripts/make_fixtures.py", "description": what}


def edge_images() -> list[str]:
    img_a = "data:image/png;base64," + TINY_PNG
    img_b = "data:image/png;base64," + png_b64(16, 16, 1)
    shot1 = "data:image/png;base64," + png_b64(32, 20, 7)
    shot2 = "data:image/png;base64," + png_b64(32, 20, 9)
    img_c = "data:image/png;base64," + png_b64(24, 24, 3)
    msgs = [
        {"role": "system", "content": "You are a front-end coding agent. You can look at screenshots with browser_screenshot and run shell commands with Bash."},
        {"role": "user", "content": [
            {"type": "text", "text": "The login page looks broken on mobile. Here are two screenshots: the first is the expected design, the second is what we get."},
            {"type": "image_url", "image_url": {"url": img_a}},
            {"type": "image_url", "image_url": {"url": img_b, "detail": "high"}},
            {"type": "text", "text": "Can you fix the layout in src/pages/LoginPage.vue?"},
        ]},
        {"role": "assistant", "content": "I can see the form overflows the viewport in the second screenshot. Let me open the page and take my own screenshot first."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_img_01", "Bash", {"command": "npm run dev -- --port 5173 &"})]},
        {"role": "tool", "tool_call_id": "call_img_01", "content": "  VITE v5.2.0  ready in 412 ms\n\n  ->  Local:   http://localhost:5173/\n"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_img_02", "browser_screenshot", {"url": "http://localhost:5173/login", "width": 375, "height": 812})]},
        {"role": "tool", "tool_call_id": "call_img_02", "content": [
            {"type": "image_url", "image_url": {"url": shot1}},
            {"type": "text", "text": "Screenshot of http://localhost:5173/login at 375x812 (mobile viewport)."},
        ]},
        {"role": "assistant", "content": "Reproduced: `.auth-card` has a fixed `width: 480px`. Reading the component."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_img_03", "Read", {"file_path": "src/pages/LoginPage.vue"})]},
        {"role": "tool", "tool_call_id": "call_img_03", "content": "1\t<template>\n2\t  <section class=\"auth-page\">\n3\t    <form class=\"auth-card\" @submit.prevent=\"submit\">\n4\t      <h1>Sign in</h1>\n5\t      <input v-model=\"username\" />\n6\t      <input v-model=\"password\" type=\"password\" />\n7\t      <button>Sign in</button>\n8\t    </form>\n9\t  </section>\n10\t</template>\n11\t<style scoped>\n12\t.auth-card { width: 480px; padding: 2rem; }\n13\t</style>\n"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_img_04", "Edit", {"file_path": "src/pages/LoginPage.vue", "old_string": ".auth-card { width: 480px; padding: 2rem; }", "new_string": ".auth-card { width: 100%; max-width: 480px; padding: 2rem; box-sizing: border-box; }"})]},
        {"role": "tool", "tool_call_id": "call_img_04", "content": "The file src/pages/LoginPage.vue has been updated successfully."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_img_05", "browser_screenshot", {"url": "http://localhost:5173/login", "width": 375, "height": 812})]},
        {"role": "tool", "tool_call_id": "call_img_05", "content": [
            {"type": "image_url", "image_url": {"url": shot2}},
            {"type": "text", "text": "Screenshot of http://localhost:5173/login at 375x812 (mobile viewport)."},
        ]},
        {"role": "assistant", "content": "The card now fits the mobile viewport (max-width 480px, full width below that)."},
        {"role": "user", "content": [
            {"type": "text", "text": "Better. The button is still misaligned on the dashboard though, see this:"},
            {"type": "image_url", "image_url": {"url": img_c}},
        ]},
        {"role": "assistant", "content": None, "tool_calls": [call("call_img_06", "Grep", {"pattern": "class=\"primary-btn\"", "path": "src"})]},
        {"role": "tool", "tool_call_id": "call_img_06", "content": "src/pages/DashboardPage.vue:14:      <button class=\"primary-btn\" style=\"margin-left: 37px\">New order</button>"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_img_07", "Edit", {"file_path": "src/pages/DashboardPage.vue", "old_string": "<button class=\"primary-btn\" style=\"margin-left: 37px\">", "new_string": "<button class=\"primary-btn\">"})]},
        {"role": "tool", "tool_call_id": "call_img_07", "content": "The file src/pages/DashboardPage.vue has been updated successfully."},
        {"role": "assistant", "content": "Removed the stray inline `margin-left: 37px` on the dashboard button; it now aligns with the grid. Both layout issues are fixed."},
        {"role": "user", "content": "Thanks, looks good now."},
    ]
    return [dumps({"id": "edge-images", "messages": msgs,
                   "meta": synthetic_meta("inline base64 PNG images in user content and in screenshot tool results")})]


PARALLEL_TOOLS = [
    {"type": "function", "function": {"name": "read_file", "description": "Read a file from the workspace.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {"name": "Grep", "description": "Search file contents with a regular expression.",
                                      "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}}, "required": ["pattern"]}}},
    {"type": "function", "function": {"name": "Bash", "description": "Run a shell command.",
                                      "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
]


def edge_parallel() -> list[str]:
    modules = ["orders", "payments", "inventory", "shipping", "users", "reports", "notifications", "audit"]
    msgs: list[dict] = [
        {"role": "system", "content": "You are a coding agent. Use read_file, Grep and Bash. Prefer issuing independent tool calls in parallel."},
        {"role": "user", "content": "Audit every service module for unhandled promise rejections and list the offending call sites."},
    ]
    for i, mod in enumerate(modules):
        ids = [f"call_par_{i:02d}_{k}" for k in "abc"]
        calls = [
            call(ids[0], "read_file", {"path": f"src/services/{mod}.ts"}),
            call(ids[1], "Grep", {"pattern": r"\.then\(|await ", "path": f"src/services/{mod}.ts"}),
            call(ids[2], "Bash", {"command": f"npx eslint src/services/{mod}.ts --rule '@typescript-eslint/no-floating-promises: error'"}),
        ]
        text = None if i % 3 else f"Checking the {mod} service: source, async call sites and lint in parallel."
        msgs.append({"role": "assistant", "content": text, "tool_calls": calls})
        n_async = 2 + i % 3
        results = [
            "\n".join([f"{k + 1}\t" + line for k, line in enumerate([
                f"import {{ db }} from '../db';",
                f"export async function list{mod.capitalize()}() {{",
                f"  return db.query('SELECT * FROM {mod}');",
                "}",
                f"export function refresh{mod.capitalize()}Cache() {{",
                f"  db.query('REFRESH MATERIALIZED VIEW {mod}_summary');",
                "}",
            ])]),
            "\n".join(f"src/services/{mod}.ts:{3 + 3 * k}:  await db.query(...)" for k in range(n_async)),
            (f"src/services/{mod}.ts\n  6:3  error  Promises must be awaited, end with a call to .catch, or be explicitly marked as ignored with the `void` operator  @typescript-eslint/no-floating-promises\n\n1 problem (1 error, 0 warnings)\nexit code 1"
             if i % 2 == 0 else "exit code 0"),
        ]
        order = [2, 0, 1] if i == 3 else [0, 1, 2]  # batch 3 answers out of order
        for k in order:
            msgs.append({"role": "tool", "tool_call_id": ids[k], "content": results[k]})
    msgs.append({"role": "assistant", "content": "Floating promises (not awaited, no .catch) in: "
                 + ", ".join(f"src/services/{m}.ts:6" for k, m in enumerate(modules) if k % 2 == 0)
                 + ". The other modules lint clean."})
    msgs.append({"role": "user", "content": "Fix them."})
    msgs.append({"role": "assistant", "content": "Will do: each `refresh*Cache` will `await` the query and be marked `async`."})
    return [dumps({"id": "edge-parallel-calls", "messages": msgs, "tools": PARALLEL_TOOLS,
                   "meta": synthetic_meta("assistant messages with 3 parallel tool calls each; batch 3 answered out of order")})]


def huge_log(target_chars: int = 1_000_000) -> tuple[str, str, int]:
    """A pytest-style log of just under target_chars with one failure in the middle.

    Returns (log, failing test id, number of tests)."""
    suites = ["api/orders", "api/payments", "api/inventory", "web/checkout", "web/cart", "worker/email"]
    verbs = ["creates", "updates", "rejects invalid", "lists", "deletes", "paginates"]
    nouns = ["order", "refund", "coupon", "line item", "customer", "invoice", "shipment"]
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.11.9, pytest-8.2.0, pluggy-1.5.0",
             "rootdir: /workspace/app, configfile: pyproject.toml",
             "collected ????? items", ""]
    size = sum(len(s) + 1 for s in lines)
    i = 0
    error_at = None
    failing = ""
    while True:
        suite = suites[i % len(suites)]
        verb = verbs[(i * 7) % len(verbs)]
        noun = nouns[(i * 11) % len(nouns)]
        ms = (i * 7919) % 997 + 3
        if error_at is None and size >= target_chars // 2:
            error_at = i
            failing = f"tests/{suite}/test_refunds.py::test_refund_rounding_half_cent"
            block = [
                f"[{i:06d}] tests/{suite}/test_refunds.py::test_refund_rounding_half_cent FAILED ({ms} ms)",
                "    def test_refund_rounding_half_cent(client):",
                "        resp = client.post('/api/orders/4411/refund', json={'amount': '10.005'})",
                ">       assert resp.json()['refunded'] == '10.01'",
                "E       AssertionError: assert '10.00' == '10.01'",
                "E         - 10.01",
                "E         + 10.00",
                f"tests/{suite}/test_refunds.py:88: AssertionError",
                "ERROR app.billing.refunds: refund 4411 quantized with ROUND_HALF_EVEN (decimal context default), expected ROUND_HALF_UP",
            ]
        else:
            block = [f"[{i:06d}] tests/{suite}/test_{noun.replace(' ', '_')}s.py::test_{verb.replace(' ', '_')}_{noun.replace(' ', '_')}_{i % 97} PASSED ({ms} ms)"]
            if i % 50 == 0:
                block.append(f"INFO  app.db.pool: connections in use={i % 17} idle={20 - i % 17} waiting=0")
        add = sum(len(s) + 1 for s in block)
        if size + add > target_chars - 250:
            break
        lines += block
        size += add
        i += 1
    lines[3] = f"collected {i:5d} items"  # same width as the placeholder
    # No short-summary "FAILED ..." line: the failure is only visible mid-log.
    tail = [f"=========== 1 failed, {i - 1} passed in 412.77s ==========="]
    return "\n".join(lines + tail), failing, i


def edge_huge() -> list[str]:
    log, failing, total = huge_log()
    msgs = [
        {"role": "system", "content": "You are a coding agent working in /workspace/app. Run tests with Bash."},
        {"role": "user", "content": "CI is red on main. Find the failing test and fix it."},
        {"role": "assistant", "content": "Let me check the recent commits first."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_huge_01", "Bash", {"command": "git log --oneline -5"})]},
        {"role": "tool", "tool_call_id": "call_huge_01", "content": "a1c9e02 billing: move refund math to Decimal\n77b3f10 orders: add pagination\n5e2d441 deps: bump pytest to 8.2\n0b9a7c3 web: cart badge count\n9f00d1e initial import"},
        {"role": "assistant", "content": "The refund change is the likely culprit. Running the full suite to see exactly what fails."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_huge_02", "Bash", {"command": "pytest -p no:cacheprovider -v 2>&1 | tee /tmp/test.log"})]},
        {"role": "tool", "tool_call_id": "call_huge_02", "content": log},
        {"role": "assistant", "content": f"One failure: {failing} - the 10.005 refund comes out as 10.00 (half-even rounding). Opening the billing code."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_huge_03", "Grep", {"pattern": "quantize", "path": "app/billing"})]},
        {"role": "tool", "tool_call_id": "call_huge_03", "content": "app/billing/refunds.py:42:    amount = Decimal(raw).quantize(Decimal('0.01'))"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_huge_04", "Read", {"file_path": "app/billing/refunds.py", "offset": 36, "limit": 12})]},
        {"role": "tool", "tool_call_id": "call_huge_04", "content": "36\tfrom decimal import Decimal, ROUND_HALF_UP\n37\t\n38\t\n39\tdef refund_amount(raw: str) -> Decimal:\n40\t    if not raw:\n41\t        raise ValueError('empty amount')\n42\t    amount = Decimal(raw).quantize(Decimal('0.01'))\n43\t    return amount\n"},
        {"role": "assistant", "content": "`quantize` uses the context rounding (ROUND_HALF_EVEN here) instead of ROUND_HALF_UP. Fixing."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_huge_05", "Edit", {"file_path": "app/billing/refunds.py", "old_string": "Decimal(raw).quantize(Decimal('0.01'))", "new_string": "Decimal(raw).quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)"})]},
        {"role": "tool", "tool_call_id": "call_huge_05", "content": "The file app/billing/refunds.py has been updated successfully."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_huge_06", "Bash", {"command": "pytest -q tests -k refund"})]},
        {"role": "tool", "tool_call_id": "call_huge_06", "content": f"........................................                                 [100%]\n40 passed, {total - 40} deselected in 6.12s"},
        {"role": "assistant", "content": "Refund tests pass. Fixed `app/billing/refunds.py:42` to round with ROUND_HALF_UP; the 10.005 refund now gives 10.01."},
        {"role": "user", "content": "Great, please also add a changelog entry."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_huge_07", "Bash", {"command": "printf '%s\\n' '- Fix refund rounding (ROUND_HALF_UP)' >> CHANGELOG.md && tail -n 3 CHANGELOG.md"})]},
        {"role": "tool", "tool_call_id": "call_huge_07", "content": "## Unreleased\n- Add order pagination\n- Fix refund rounding (ROUND_HALF_UP)"},
        {"role": "assistant", "content": "Added the changelog entry under Unreleased."},
    ]
    return [dumps({"id": "edge-huge-output", "messages": msgs,
                   "meta": synthetic_meta("one ~1,000,000-character pytest log tool result (message 7) with one failure in the middle")})]


def edge_cjk() -> list[str]:
    msgs = [
        {"role": "system", "content": "你是一个编程助手。请用用户的语言回答。可以使用 Bash、Read 和 Edit 工具。"},
        {"role": "user", "content": "请帮我看看为什么 `scripts/导入数据.py` 运行失败了？报告文件应该在 /home/用户/项目/数据/ 目录下。"},
        {"role": "assistant", "content": "好的，我先运行一下这个脚本，看看具体的错误信息。"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_cjk_01", "Bash", {"command": "python3 scripts/导入数据.py --输入 /home/用户/项目/数据/报告.csv"})]},
        {"role": "tool", "tool_call_id": "call_cjk_01", "content": "Traceback (most recent call last):\n  File \"/home/用户/项目/scripts/导入数据.py\", line 27, in <module>\n    主函数()\n  File \"/home/用户/项目/scripts/导入数据.py\", line 19, in 主函数\n    with open(路径, encoding=\"utf-8\") as 文件:\nFileNotFoundError: [Errno 2] No such file or directory: '/home/用户/项目/数据/报告.csv'"},
        {"role": "assistant", "content": "错误是 `FileNotFoundError`：找不到 `/home/用户/项目/数据/报告.csv`。我来列一下这个目录里实际有哪些文件。"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_cjk_02", "Bash", {"command": "ls -la /home/用户/项目/数据/"})]},
        {"role": "tool", "tool_call_id": "call_cjk_02", "content": "总计 24\ndrwxr-xr-x 2 用户 用户 4096  3月 28 10:02 .\ndrwxr-xr-x 6 用户 用户 4096  3月 28 09:55 ..\n-rw-r--r-- 1 用户 用户 8123  3月 28 10:02 报告_2024.csv\n-rw-r--r-- 1 用户 用户 2210  3月 28 10:01 说明.md"},
        {"role": "assistant", "content": "目录里只有 `报告_2024.csv`，没有 `报告.csv`。看一下脚本是怎么拼路径的。"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_cjk_03", "Read", {"file_path": "/home/用户/项目/scripts/导入数据.py"})]},
        {"role": "tool", "tool_call_id": "call_cjk_03", "content": "1\timport argparse\n2\timport csv\n3\t\n4\t默认路径 = \"/home/用户/项目/数据/报告.csv\"\n5\t\n6\t\n7\tdef 解析参数():\n8\t    p = argparse.ArgumentParser(description=\"导入报告数据\")\n9\t    p.add_argument(\"--输入\", default=默认路径)\n10\t    return p.parse_args()\n11\t\n12\t\n13\tdef 主函数():\n14\t    参数 = 解析参数()\n15\t    路径 = 参数.输入\n16\t    # TODO: 支持年份后缀\n17\t    行数 = 0\n18\t    print(f\"读取 {路径}\")\n19\t    with open(路径, encoding=\"utf-8\") as 文件:\n20\t        for 行 in csv.reader(文件):\n21\t            行数 += 1\n22\t    print(f\"共导入 {行数} 行\")\n23\t\n24\t\n25\tif __name__ == \"__main__\":\n26\t    # 入口\n27\t    主函数()"},
        {"role": "assistant", "content": "默认路径写死成了 `报告.csv`。我把它改成自动选择最新的 `报告_*.csv`。"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_cjk_04", "Edit", {"file_path": "/home/用户/项目/scripts/导入数据.py", "old_string": "默认路径 = \"/home/用户/项目/数据/报告.csv\"", "new_string": "默认路径 = max(glob.glob(\"/home/用户/项目/数据/报告_*.csv\"), default=\"/home/用户/项目/数据/报告.csv\")"})]},
        {"role": "tool", "tool_call_id": "call_cjk_04", "content": "The file /home/用户/项目/scripts/导入数据.py has been updated successfully."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_cjk_05", "Bash", {"command": "python3 scripts/导入数据.py"})]},
        {"role": "tool", "tool_call_id": "call_cjk_05", "content": "Traceback (most recent call last):\n  File \"/home/用户/项目/scripts/导入数据.py\", line 4, in <module>\n    默认路径 = max(glob.glob(\"/home/用户/项目/数据/报告_*.csv\"), default=\"/home/用户/项目/数据/报告.csv\")\nNameError: name 'glob' is not defined"},
        {"role": "assistant", "content": "忘了导入 `glob`，补上。"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_cjk_06", "Edit", {"file_path": "/home/用户/项目/scripts/导入数据.py", "old_string": "import csv\n", "new_string": "import csv\nimport glob\n"})]},
        {"role": "tool", "tool_call_id": "call_cjk_06", "content": "The file /home/用户/项目/scripts/导入数据.py has been updated successfully."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_cjk_07", "Bash", {"command": "python3 scripts/導入データ.py"}), call("call_cjk_08", "Bash", {"command": "python3 scripts/导入数据.py"})]},
        {"role": "tool", "tool_call_id": "call_cjk_07", "content": "python3: can't open file '/home/用户/项目/scripts/導入データ.py': [Errno 2] No such file or directory"},
        {"role": "tool", "tool_call_id": "call_cjk_08", "content": "读取 /home/用户/项目/数据/报告_2024.csv\n共导入 212 行"},
        {"role": "assistant", "content": "修好了：脚本现在读取 `报告_2024.csv`，共导入 212 行。（第一个命令用了日文文件名 `導入データ.py`，那个文件不存在，可以忽略。）"},
        {"role": "user", "content": "ありがとうございます。同じ修正を `scripts/レポート出力.py` にもお願いできますか？"},
        {"role": "assistant", "content": "承知しました。まず `scripts/レポート出力.py` でハードコードされたパスを検索します。"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_cjk_09", "Grep", {"pattern": "報告|报告", "path": "scripts/レポート出力.py"})]},
        {"role": "tool", "tool_call_id": "call_cjk_09", "content": "scripts/レポート出力.py:8:出力先 = \"/home/用户/项目/数据/报告.csv\"  # 固定パス"},
        {"role": "assistant", "content": "8行目に同じ固定パスがあります。同じ方法で修正しました（`glob` で最新の `报告_*.csv` を選びます）。"},
        {"role": "user", "content": "감사합니다! 마지막으로 README에 한국어 설명도 추가해 주세요. 파일은 docs/사용법.md 입니다."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_cjk_10", "Bash", {"command": "cat >> docs/사용법.md <<'EOF'\n## 데이터 가져오기\n`python3 scripts/导入数据.py` 는 가장 최근의 `报告_*.csv` 파일을 자동으로 읽습니다.\nEOF"})]},
        {"role": "tool", "tool_call_id": "call_cjk_10", "content": ""},
        {"role": "assistant", "content": "docs/사용법.md 에 \"데이터 가져오기\" 섹션을 추가했습니다. 스크립트는 이제 가장 최근의 보고서 파일을 자동으로 선택합니다."},
    ]
    return [dumps({"id": "edge-cjk", "messages": msgs,
                   "meta": synthetic_meta("Chinese/Japanese/Korean text, CJK file paths, FileNotFoundError and NameError lines")})]


def edge_unknown_roles() -> list[str]:
    bare = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What does `git stash pop` do?"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_bare_01", "Bash", {"command": "git help stash | head -n 5"})]},
        {"role": "tool", "tool_call_id": "call_bare_01", "content": "GIT-STASH(1)\n\nNAME\n       git-stash - Stash the changes in a dirty working directory away"},
        {"role": "assistant", "content": "It re-applies the most recent stash entry to your working tree and drops it from the stash list if it applied cleanly."},
    ]
    session = {
        "id": "edge-unknown-roles",
        "x_client": {"name": "example-agent", "build": "synthetic"},
        "messages": [
            {"role": "system", "content": "You are a coding agent.", "x_prompt_version": 3},
            {"role": "user", "content": "Run the linter and then stop.", "name": "alice", "x_ui": {"source": "cli", "pinned": True}},
            {"role": "assistant", "content": None, "tool_calls": [call("call_unk_01", "Bash", {"command": "ruff check ."})],
             "x_trace_id": "trace-0001", "annotations": [{"kind": "note", "text": "first run"}]},
            {"role": "tool", "tool_call_id": "call_unk_01", "content": "All checks passed!", "x_exit_code": 0, "x_duration_ms": 812},
            {"role": "function", "name": "legacy_lookup", "content": "{\"status\": \"ok\"}"},
            {"role": "assistant", "content": "Lint is clean. Stopping as requested.", "x_trace_id": "trace-0002",
             "refusal": None, "audio": None},
            {"role": "exit", "content": "session ended by user", "x_exit": {"code": 0, "reason": "user_quit"}},
        ],
        "meta": synthetic_meta("unknown role `exit`, legacy role `function`, unknown fields on messages and session"),
        "x_trailer": [1, 2, 3],
    }
    return [dumps(bare), dumps(session)]


def edge_bad_lines() -> list[str]:
    def ok(sid: str, q: str, a: str) -> str:
        return dumps({"id": sid, "messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}],
                      "meta": synthetic_meta("valid session in bad_lines.jsonl")})

    return [
        ok("edge-bad-lines-1", "ping", "pong"),
        '{"id": "edge-bad-lines-2", "messages": [{"role": "user", "content": "truncated',  # not JSON
        ok("edge-bad-lines-3", "What is 2 + 2?", "4"),
        dumps({"foo": 1}),  # JSON, not a session
        dumps({"id": "edge-bad-lines-5", "messages": [{"role": "user", "content": 42}, {"role": "assistant", "content": "?"}],
               "meta": synthetic_meta("message 0 has numeric content (invalid)")}),
    ]


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


def check_pairing(messages: list, where: str) -> list[str]:
    errs = []
    pending: dict[str, int] = {}
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            errs.append(f"{where}: message {i} is not an object")
            continue
        for tc in m.get("tool_calls") or []:
            tid = tc.get("id")
            if tid in pending:
                errs.append(f"{where}: message {i}: call id {tid} reused while still unanswered")
            pending[tid] = i
            fn = tc.get("function") or {}
            if not isinstance(fn.get("arguments"), str):
                errs.append(f"{where}: message {i}: arguments of {tid} is not a string")
            else:
                try:
                    json.loads(fn["arguments"])
                except ValueError:
                    errs.append(f"{where}: message {i}: arguments of {tid} is not JSON")
        if m.get("role") == "tool":
            tid = m.get("tool_call_id")
            if tid not in pending:
                errs.append(f"{where}: message {i}: tool result {tid} answers no earlier open call")
            else:
                del pending[tid]
    for tid, i in pending.items():
        errs.append(f"{where}: call {tid} (message {i}) has no result")
    return errs


def check_adjacency(messages: list, where: str) -> list[str]:
    """Strict OpenAI shape: an assistant message's tool results follow it directly
    (in any order), before any other non-tool message."""
    errs = []
    open_ids: set = set()
    opened_at = None
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool":
            if m.get("tool_call_id") in open_ids:
                open_ids.discard(m.get("tool_call_id"))
            else:
                errs.append(f"{where}: message {i}: tool result not adjacent to its call")
            continue
        if open_ids:
            errs.append(f"{where}: message {i} ({m.get('role')}) interrupts the results of message {opened_at}")
            open_ids = set()
        if m.get("tool_calls"):
            open_ids = {tc.get("id") for tc in m["tool_calls"]}
            opened_at = i
    if open_ids:
        errs.append(f"{where}: results of message {opened_at} incomplete at end")
    return errs


def validate(openai_dir: Path, edge_dir: Path) -> tuple[list[str], list[dict]]:
    errs: list[str] = []
    stats: list[dict] = []
    files = sorted(openai_dir.glob("*.jsonl")) + sorted(edge_dir.glob("*.jsonl"))
    for f in files:
        raw = f.read_bytes()
        rel = f"{f.parent.name}/{f.name}"
        cap = HUGE_CAP if f.name == "huge_output.jsonl" else SIZE_CAP
        if len(raw) > cap:
            errs.append(f"{rel}: {len(raw)} bytes > cap {cap}")
        lines = raw.decode("utf-8").split("\n")
        if lines[-1] == "":
            lines.pop()
        sessions = 0
        msg_counts = []
        for ln, line in enumerate(lines, start=1):
            where = f"{rel}:{ln}"
            try:
                rec = json.loads(line)
            except ValueError:
                if f.name == "bad_lines.jsonl" and ln == 2:
                    continue  # intended
                errs.append(f"{where}: not JSON")
                continue
            if isinstance(rec, list):
                msgs = rec
            elif isinstance(rec, dict) and isinstance(rec.get("messages"), list):
                msgs = rec["messages"]
            else:
                if f.name == "bad_lines.jsonl" and ln == 4:
                    continue  # intended
                errs.append(f"{where}: not a session")
                continue
            sessions += 1
            msg_counts.append(len(msgs))
            errs += check_pairing(msgs, where)
            errs += check_adjacency(msgs, where)
            bad_content = [i for i, m in enumerate(msgs) if isinstance(m, dict)
                           and not (m.get("content") is None or isinstance(m.get("content"), (str, list)))]
            if bad_content and not (f.name == "bad_lines.jsonl" and ln == 5):
                errs.append(f"{where}: messages {bad_content} have invalid content")
            if f.name == "bad_lines.jsonl" and ln == 5 and not bad_content:
                errs.append(f"{where}: expected a message with numeric content")
            if f.parent == openai_dir:
                meta = rec.get("meta") or {}
                for k in ("source_repo", "source_commit", "source_path", "slice"):
                    if k not in meta:
                        errs.append(f"{where}: meta.{k} missing")
        if f.name == "huge_output.jsonl":
            biggest = max((len(m.get("content")) for m in json.loads(lines[0])["messages"]
                           if isinstance(m.get("content"), str)), default=0)
            if not 990_000 <= biggest <= 1_000_000:
                errs.append(f"{rel}: largest tool result only {biggest} chars")
        stats.append({"file": rel, "bytes": len(raw), "lines": len(lines), "sessions": sessions, "messages": msg_counts})
    return errs, stats


# --------------------------------------------------------------------------
# README
# --------------------------------------------------------------------------


def fmt_size(n: int) -> str:
    return f"{n / 1000:.1f} kB" if n < 1_000_000 else f"{n / 1_000_000:.2f} MB"


def readme(stats: list[dict], slices: dict[str, str]) -> str:
    by = {s["file"]: s for s in stats}

    def row(file: str, what: str, source: str) -> str:
        s = by[file]
        msgs = "+".join(str(n) for n in s["messages"]) or "0"
        return f"| `{file}` | {what} | {source} | {fmt_size(s['bytes'])} ({s['bytes']:,} B) | {s['lines']} | {s['sessions']} | {msgs} |"

    def src(p: dict, file: str) -> str:
        return (f"{p['source_repo']} @ `{p['source_commit'][:12]}`, `{p['source_path']}`, "
                f"{slices[file]} (licence: {p['license']})")

    rows = [
        row("openai/claude_code_task54.jsonl",
            "Raw Claude Code log (claude-opus-4-6) converted to OpenAI chat: plan mode, Agent/ToolSearch/Bash/Read/Write calls, "
            "merged parallel tool_use blocks (up to 10 calls in one message), tool errors (`is_error`), `tool_reference` result parts; no system prompt in source",
            src(CLAUDE, "openai/claude_code_task54.jsonl")),
        row("openai/codex_w1t9.jsonl",
            "Raw Codex CLI rollout (gpt-5.4) converted: base instructions as system, developer/user context messages, "
            "PowerShell `shell_command` calls in parallel batches (up to 9), `apply_patch` custom tool calls",
            src(CODEX, "openai/codex_w1t9.jsonl")),
        row("openai/swe_agent_marshmallow.jsonl",
            "SWE-agent function-calling history (marshmallow-1867 replay): `bash`/`open`/`create`/`insert`/`edit`/`find_file`/`submit` calls; "
            "source reuses call ids (each answered before reuse)",
            src(SWE, "openai/swe_agent_marshmallow.jsonl")),
        row("openai/trajectory_richh.jsonl",
            "Already-OpenAI-chat Claude Code session (claude-sonnet-4-6): inline `<thinking>` text, many large `Write` calls, "
            "a `[compact_boundary]` system message + continuation summary at messages 112-113",
            src(RICHH, "openai/trajectory_richh.jsonl")),
        row("edge/images.jsonl", "Inline base64 PNGs: 2 in the first user message, 1 in a later user message, screenshot tool results as `[image_url, text]` parts", "synthetic"),
        row("edge/parallel_calls.jsonl", "8 assistant messages with 3 parallel calls each (`read_file`, `Grep`, `Bash`) + `tools` schemas; batch 3 answers out of call order", "synthetic"),
        row("edge/huge_output.jsonl", "One ~1,000,000-character (just under) pytest log tool result (message 7) with one failing test + `ERROR` line in the middle", "synthetic"),
        row("edge/cjk.jsonl", "Chinese/Japanese/Korean text, CJK paths, `FileNotFoundError: [Errno 2]`, a parallel pair of calls", "synthetic"),
        row("edge/unknown_roles.jsonl", "Line 1: bare JSON array of messages. Line 2: roles `exit` and `function`, unknown `x_*` fields on messages and session (must round-trip)", "synthetic"),
        row("edge/bad_lines.jsonl", "Line 1 valid; 2 not JSON; 3 valid; 4 `{\"foo\":1}` (not a session); 5 valid shape but message 0 has numeric content", "synthetic"),
    ]
    return "\n".join([
        "# Fixtures",
        "",
        "Test inputs for `compactor`, all in OpenAI chat format: JSONL, one session per line,",
        '`{"id", "messages": [...], "tools"?, "meta"}` (`unknown_roles.jsonl` line 1 is a bare array).',
        "",
        "Regenerate (deterministic, byte-identical; stdlib Python 3.11; needs the corpus at `../shared/corpus`):",
        "",
        "```sh",
        "python3 scripts/make_fixtures.py            # writes fixtures/openai, fixtures/edge, this README, then validates",
        "python3 scripts/make_fixtures.py --check-only",
        "```",
        "",
        "The script's docstring describes each conversion rule. Validation checks: every line parses",
        "(except the intended bad line), every tool call id is answered exactly once by a later `tool`",
        "message before the id is used again, every `tool` message answers an earlier open call, the results of",
        "an assistant message follow it directly (before any other non-tool message), call arguments are JSON",
        "strings, converted files are <= 250,000 bytes, `huge_output.jsonl` <= 1,100,000 bytes.",
        "",
        "| file | what | source (repo @ commit, path, slice) | size | lines | sessions | messages |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "## Provenance and licences",
        "",
        "`openai/` files are slices of real agent runs copied from public GitHub repositories (see",
        "`/work/shared/corpus/README.md`). Slices keep whole messages and cut at a point where no tool",
        "call is unanswered; `meta.slice` gives `messages 0..N of M` (M = messages after conversion).",
        "Timestamps are the source's own (`timestamp` on each message; the SWE-agent and richh-s sources have none).",
        "The 150-message target was cut to 69 (Claude Code) and 45 (Codex) messages by the 250,000-byte cap:",
        "single tool results of 44-53 kB and large `Write` payloads come early in those sessions.",
        "",
        "Normalisation beyond the format mapping: in `trajectory_richh.jsonl` the source wrote each parallel",
        "tool call as its own assistant message with results interleaved (call, call, result, call, ...);",
        "calls issued while an earlier call was still unanswered are merged into the first assistant message",
        "of that batch, results kept in source order (`meta.normalized`). Claude Code events are merged by",
        "`message.id` the same way. The marshmallow SWE-agent source reuses call ids across turns; kept as is.",
        "",
        "- Hale17OT/Task-54, eaglepointAiLabs/TASK-w1t9, richh-s/TASK-20260318-393C91: **no licence stated** in",
        "  the source repositories (contractor repos that commit agent sessions next to the code). They contain",
        "  local usernames and paths; a scan for API-key patterns in the corpus found nothing.",
        "- SWE-agent/SWE-agent: MIT.",
        "- `edge/` files are synthetic, written by `scripts/make_fixtures.py`.",
        "",
        "The corpus README mentions `pydicom-1458` among the SWE-agent runs, but that trajectory uses the old",
        "text-action format (no `tool` role / `tool_calls`), so the function-calling fixture is built from the",
        "marshmallow-1867 function-calling run instead.",
        "",
    ])


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=REPO_ROOT.parent / "shared" / "corpus")
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "fixtures" / "openai")
    ap.add_argument("--edge-out", type=Path, default=None, help="default: <out>/../edge")
    ap.add_argument("--readme", type=Path, default=None, help="default: <out>/../README.md")
    ap.add_argument("--check-only", action="store_true", help="validate existing fixtures, write nothing")
    a = ap.parse_args()
    a.edge_out = a.edge_out or a.out.parent / "edge"
    a.readme = a.readme or a.out.parent / "README.md"

    if not a.check_only:
        slices: dict[str, str] = {}

        def emit(name: str, line: str, n: int, total: int) -> None:
            write_lines(a.out / name, [line])
            slices[f"openai/{name}"] = f"messages 0..{n} of {total}"

        sid, msgs = convert_claude_code(a.corpus / CLAUDE["local"])
        line, n = slice_session(sid, msgs, CLAUDE)
        emit("claude_code_task54.jsonl", line, n, len(msgs))

        sid, msgs = convert_codex(a.corpus / CODEX["local"])
        line, n = slice_session(sid, msgs, CODEX)
        emit("codex_w1t9.jsonl", line, n, len(msgs))

        sid, msgs = convert_swe(a.corpus / SWE["local"])
        line, n = slice_session(sid, msgs, SWE)
        emit("swe_agent_marshmallow.jsonl", line, n, len(msgs))

        sid, msgs, extra = convert_richh(a.corpus / RICHH["local"])
        line, n = slice_session(sid, msgs, RICHH, extra)
        emit("trajectory_richh.jsonl", line, n, len(msgs))

        write_lines(a.edge_out / "images.jsonl", edge_images())
        write_lines(a.edge_out / "parallel_calls.jsonl", edge_parallel())
        write_lines(a.edge_out / "huge_output.jsonl", edge_huge())
        write_lines(a.edge_out / "cjk.jsonl", edge_cjk())
        write_lines(a.edge_out / "unknown_roles.jsonl", edge_unknown_roles())
        write_lines(a.edge_out / "bad_lines.jsonl", edge_bad_lines())

    errs, stats = validate(a.out, a.edge_out)
    if not a.check_only:
        a.readme.parent.mkdir(parents=True, exist_ok=True)
        a.readme.write_text(readme(stats, slices), encoding="utf-8", newline="\n")
    for s in stats:
        print(f"{s['file']:40s} {s['bytes']:>9,} B  lines={s['lines']}  sessions={s['sessions']}  messages={s['messages']}")
    if errs:
        print(f"\n{len(errs)} validation error(s):", file=sys.stderr)
        for e in errs:
            print("  " + e, file=sys.stderr)
        return 1
    print("\nvalidation OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
