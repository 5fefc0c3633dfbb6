#!/usr/bin/env python3
"""Cut the `claude-code` fixtures of `compactor` from the shared corpus.

Run from anywhere (stdlib only, Python 3.9+):

    python3 scripts/slice_claude_code.py [--corpus DIR] [--out DIR]
    python3 scripts/slice_claude_code.py --check-only   # validate existing files, write nothing

Defaults (relative to the repository root): --corpus ../shared/corpus,
--out fixtures/claude_code. Deterministic: real slices are the source lines
copied byte for byte (LF-terminated); synthetic files are serialized with
compact separators, UTF-8, ensure_ascii=False, keys in Claude Code's own order.
No clock, no randomness: two runs give byte-identical files.

Provenance (raw Claude Code logs, corpus folder `claude-code-jsonl/`, see
../shared/corpus/README.md section 1; licence: none stated in the source repos):

* task128_start.jsonl -- Strawhat404/TASK-128 @ 53ffb4faa4f10b6ce472d0549f970eb904e7774d,
  sessions/develop-1.jsonl, lines 1-26: the session's start (null root parent,
  permission-mode, deferred_tools_delta / skill_listing attachments, snapshots,
  thinking, streamed parts of one message.id).
* task128_mid.jsonl -- same file, lines 338-373: streamed parts with tool results
  and snapshots between them (parallel calls answered one by one), a `<synthetic>`
  assistant reply, system turn_duration, a task_reminder attachment,
  permission-mode, an isMeta user message, and a tool call the source never
  answers (line 370). Starts mid-session: its first parentUuid points before it.
* task64_api_errors.jsonl -- Strawhat404/TASK-64 @ 245858116cad25079847b28830c17a892e45cc63,
  sessions/develop-1.jsonl, lines 403-424: ten system api_error events, a
  `<synthetic>` reply, turn_duration, a 33 kB tool result.
* task43_start.jsonl -- Hale17OT/Task-43 @ 60ca640323c1c0ce66ff32d5e92a89209c5fecfc,
  sessions/develop-1.jsonl, lines 1-43: the session's start with queue-operation
  records, thinking, an error result and tool_reference result lists; the
  densest slice (about 17K tokens), used where a forced compaction at a 32K
  window must have something to fold.
* task43_orphans.jsonl -- same file, lines 225-249: parentUuids pointing at events the
  source never wrote, and four tool results whose tool_use is missing (real gaps).
* task43_parallel.jsonl -- same file, lines 272-296: calls answered one by one,
  then two calls of one message.id issued before either result, with snapshots
  between all of them.

Synthetic edge cases (written here, clearly synthetic, fixed timestamps):

* edge_compact_boundary.jsonl -- a conversation, a `compact_boundary`
  (compactMetadata preTokens 155000, trigger auto), the `isCompactSummary` user
  message, and a turn after it (thinking + text + tool_use streamed parts).
* edge_sidechain.jsonl -- a Task call whose sub-agent events (isSidechain true)
  sit in the main file before the Task result.
* edge_orphan_result.jsonl -- a tool_result whose tool_use is missing, a
  parentUuid pointing forward (events out of order), an error result with a
  block-list content.
* edge_unknown_event.jsonl -- an old-style `summary` record, unknown event
  types (with and without uuid), a string-content assistant reply, a tool_use
  written before the text of its message, a user event holding a tool_result and
  a text block, server tool blocks, an image block, `last-prompt` at the end.

Validation: every line parses as a JSON object; every file is < 150,000 bytes;
a real slice never creates an orphan result (every tool_result whose tool_use
the source has is inside the slice with it) and leaves no call unanswered unless
the source never answers it either.
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_BYTES = 150_000

SLICES = [
    # (output, corpus path, first line, last line), 1-based, inclusive.
    ("task128_start.jsonl", "claude-code-jsonl/Strawhat404__TASK-128/sessions/develop-1.jsonl", 1, 26),
    ("task128_mid.jsonl", "claude-code-jsonl/Strawhat404__TASK-128/sessions/develop-1.jsonl", 338, 373),
    ("task64_api_errors.jsonl", "claude-code-jsonl/Strawhat404__TASK-64/sessions/develop-1.jsonl", 403, 424),
    ("task43_start.jsonl", "claude-code-jsonl/Hale17OT__Task-43/sessions/develop-1.jsonl", 1, 43),
    ("task43_orphans.jsonl", "claude-code-jsonl/Hale17OT__Task-43/sessions/develop-1.jsonl", 225, 249),
    ("task43_parallel.jsonl", "claude-code-jsonl/Hale17OT__Task-43/sessions/develop-1.jsonl", 272, 296),
]


def uid(n):
    """A fixed, readable uuid for synthetic events."""
    return "00000000-0000-4000-8000-%012d" % n


def ts(sec):
    return "2026-05-01T10:%02d:%02d.000Z" % (sec // 60, sec % 60)


def envelope(kind, n, parent, sec, session, **extra):
    """A chat event in Claude Code's key order; `message` is filled by the caller."""
    ev = {
        "parentUuid": uid(parent) if isinstance(parent, int) else parent,
        "isSidechain": False,
        "type": kind,
        "message": None,
        "uuid": uid(n),
        "timestamp": ts(sec),
        "userType": "external",
        "entrypoint": "cli",
        "cwd": "/home/dev/repo",
        "sessionId": session,
        "version": "2.1.89",
        "gitBranch": "main",
    }
    ev.update(extra)
    return ev


def user(n, parent, sec, session, content, **extra):
    ev = envelope("user", n, parent, sec, session, **extra)
    ev["message"] = {"role": "user", "content": content}
    return ev


def assistant(n, parent, sec, session, msg_id, blocks, stop=None, **extra):
    ev = envelope("assistant", n, parent, sec, session, **extra)
    ev["message"] = {
        "model": "claude-opus-4-6",
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "cache_creation_input_tokens": 120, "cache_read_input_tokens": 9000, "output_tokens": 40},
    }
    ev["requestId"] = "req_" + msg_id[4:]
    return ev


def text(t):
    return {"type": "text", "text": t}


def tool_use(i, name, inp):
    return {"type": "tool_use", "id": i, "name": name, "input": inp, "caller": {"type": "direct"}}


def result(i, content, **extra):
    b = {"tool_use_id": i, "type": "tool_result", "content": content}
    b.update(extra)
    return b


def snapshot(n, sec):
    return {
        "type": "file-history-snapshot",
        "messageId": uid(n),
        "snapshot": {"messageId": uid(n), "trackedFileBackups": {}, "timestamp": ts(sec)},
        "isSnapshotUpdate": False,
    }


def edge_compact_boundary():
    s = "5e55a7e0-0000-4000-8000-00000000b0da"
    return [
        snapshot(1, 0),
        user(1, None, 0, s, "Fix the failing parser test in src/parse.rs", promptId="p-1"),
        assistant(2, 1, 3, s, "msg_01Boundary00000000001", [tool_use("toolu_b1", "Bash", {"command": "cargo test parse"})], "tool_use"),
        user(3, 2, 5, s, [result("toolu_b1", "test parse::rejects_empty ... FAILED\nerror: test failed")],
             toolUseResult={"stdout": "test parse::rejects_empty ... FAILED", "stderr": "", "interrupted": False},
             sourceToolAssistantUUID=uid(2)),
        assistant(4, 3, 8, s, "msg_01Boundary00000000002", [text("The parser panics on empty input; I will return an error instead.")], "end_turn"),
        {
            "parentUuid": None, "logicalParentUuid": uid(4), "isSidechain": False, "userType": "external",
            "cwd": "/home/dev/repo", "sessionId": s, "version": "2.1.89", "gitBranch": "main",
            "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "isMeta": False, "timestamp": ts(60), "uuid": uid(5), "level": "info",
            "compactMetadata": {"trigger": "auto", "preTokens": 155000},
        },
        user(6, 5, 61, s,
             "This session is being continued from a previous conversation that ran out of context. "
             "The conversation is summarized below:\nAnalysis:\nThe user asked to fix the failing parser test.\n\n"
             "Summary:\n1. Primary Request and Intent: fix `parse::rejects_empty` in src/parse.rs.\n"
             "2. Current Work: the parser panics on empty input; it must return ParseError::Empty.",
             isVisibleInTranscriptOnly=True, isCompactSummary=True),
        snapshot(7, 70),
        user(7, 6, 70, s, "Also handle whitespace-only input the same way.", promptId="p-2"),
        assistant(8, 7, 74, s, "msg_01Boundary00000000003", [{"type": "thinking", "thinking": "", "signature": "EsYBCkYIBxgCKkB0ZXN0"}]),
        assistant(9, 8, 75, s, "msg_01Boundary00000000003", [text("Handling empty and whitespace-only input together.")]),
        assistant(10, 9, 76, s, "msg_01Boundary00000000003",
                  [tool_use("toolu_b2", "Edit", {"file_path": "src/parse.rs", "old_string": "if input.is_empty()", "new_string": "if input.trim().is_empty()"})],
                  "tool_use"),
        user(11, 10, 77, s, [result("toolu_b2", "The file src/parse.rs has been updated successfully.")],
             toolUseResult={"filePath": "src/parse.rs", "oldString": "if input.is_empty()", "newString": "if input.trim().is_empty()"},
             sourceToolAssistantUUID=uid(10)),
        assistant(12, 11, 80, s, "msg_01Boundary00000000004", [text("Done: empty and whitespace-only input now return ParseError::Empty.")], "end_turn"),
        {"parentUuid": uid(12), "isSidechain": False, "type": "system", "subtype": "turn_duration", "durationMs": 80000,
         "timestamp": ts(81), "uuid": uid(13), "isMeta": False, "sessionId": s},
    ]


def edge_sidechain():
    s = "5e55a7e0-0000-4000-8000-0000005dec4a"

    def side(ev, parent):
        ev["isSidechain"] = True
        ev["parentUuid"] = uid(parent) if isinstance(parent, int) else parent
        ev["agentId"] = "a1b2c3d4"
        return ev

    return [
        user(1, None, 0, s, "Find every caller of parse() using a sub-agent."),
        assistant(2, 1, 2, s, "msg_01Side0000000000000001",
                  [tool_use("toolu_s1", "Task", {"description": "find callers", "prompt": "List every caller of parse().", "subagent_type": "Explore"})],
                  "tool_use"),
        side(user(3, None, 3, s, "List every caller of parse()."), None),
        side(assistant(4, 3, 4, s, "msg_01Side0000000000000002", [tool_use("toolu_s2", "Grep", {"pattern": "parse\\(", "path": "src"})], "tool_use"), 3),
        side(user(5, 4, 5, s, [result("toolu_s2", "src/main.rs:12: parse(&line)\nsrc/cli.rs:40: parse(arg)")]), 4),
        side(assistant(6, 5, 6, s, "msg_01Side0000000000000003", [text("Two callers: src/main.rs:12 and src/cli.rs:40.")], "end_turn"), 5),
        user(7, 2, 7, s, [result("toolu_s1", [text("Two callers: src/main.rs:12 and src/cli.rs:40.")])],
             toolUseResult={"status": "completed", "totalDurationMs": 4000}, sourceToolAssistantUUID=uid(2)),
        assistant(8, 7, 9, s, "msg_01Side0000000000000004", [text("parse() is called from src/main.rs:12 and src/cli.rs:40.")], "end_turn"),
    ]


def edge_orphan_result():
    s = "5e55a7e0-0000-4000-8000-0000000f7a45"
    return [
        user(1, None, 0, s, "Run the tests and read the log."),
        assistant(2, 1, 2, s, "msg_01Orphan00000000000001", [tool_use("toolu_o1", "Bash", {"command": "make test"})], "tool_use"),
        # The result of a call the log never recorded (its assistant event is lost).
        user(3, "11111111-2222-4333-8444-555555555555", 3, s, [result("toolu_missing", "File created successfully at: /home/dev/repo/notes.md")],
             toolUseResult={"type": "create", "filePath": "/home/dev/repo/notes.md"}),
        user(4, 2, 4, s, [result("toolu_o1", [text("make: *** [test] Error 2"), text("1 failed, 9 passed")], is_error=True)],
             toolUseResult="Error: make: *** [test] Error 2", sourceToolAssistantUUID=uid(2)),
        # parentUuid points forward, to an event written after this one.
        assistant(5, 6, 6, s, "msg_01Orphan00000000000002", [text("One test fails.")], "end_turn"),
        user(6, 4, 5, s, "What failed?"),
        assistant(7, 5, 8, s, "msg_01Orphan00000000000003", [text("test_parse_empty failed: expected ParseError::Empty, got a panic.")], "end_turn"),
    ]


def edge_unknown_event():
    s = "5e55a7e0-0000-4000-8000-000000c0ffee"
    return [
        {"type": "summary", "summary": "Parser fixes and a web lookup", "leafUuid": uid(9)},
        {"type": "custom-title", "customTitle": "parser", "sessionId": s},
        user(1, None, 0, s, "Look up the RFC for the date format, then fix the parser."),
        {"type": "future-event", "uuid": uid(50), "parentUuid": uid(1), "sessionId": s, "data": {"kind": "hint", "n": 1}},
        assistant(2, 1, 2, s, "msg_01Unknown0000000000001", "A plain string reply from an older client.", "end_turn"),
        user(3, 2, 3, s, [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}},
                          text("What is in this screenshot?")]),
        assistant(4, 3, 5, s, "msg_01Unknown0000000000002",
                  [tool_use("toolu_u1", "Read", {"file_path": "src/date.rs"}), text("Reading the date module first, explaining after.")],
                  "tool_use"),
        user(5, 4, 6, s, [result("toolu_u1", "1\tpub fn parse_date(s: &str) -> Date {"), text("Also, please hurry.")],
             toolUseResult={"type": "text", "file": {"filePath": "src/date.rs", "numLines": 1}}),
        {"parentUuid": uid(5), "isSidechain": False, "type": "progress", "data": {"type": "hook_progress", "hookName": "PostToolUse"},
         "uuid": uid(51), "timestamp": ts(7), "sessionId": s},
        {"type": "brand-new-type", "foo": [1, 2, 3]},
        assistant(6, 51, 8, s, "msg_01Unknown0000000000003",
                  [{"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "RFC 3339 date format"}},
                   {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [{"type": "web_search_result", "url": "https://www.rfc-editor.org/rfc/rfc3339", "title": "RFC 3339"}]},
                   text("RFC 3339 it is: https://www.rfc-editor.org/rfc/rfc3339")],
                  "end_turn"),
        {"type": "last-prompt", "lastPrompt": "Look up the RFC for the date format, then fix the parser.", "sessionId": s},
    ]


SYNTHETIC = [
    ("edge_compact_boundary.jsonl", edge_compact_boundary),
    ("edge_sidechain.jsonl", edge_sidechain),
    ("edge_orphan_result.jsonl", edge_orphan_result),
    ("edge_unknown_event.jsonl", edge_unknown_event),
]


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def blocks_of(ev):
    m = ev.get("message")
    c = m.get("content") if isinstance(m, dict) else None
    return c if isinstance(c, list) else []


def cut(corpus, rel, first, last):
    with open(os.path.join(corpus, rel), "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines, lines[first - 1:last]


def validate_slice(name, all_lines, piece):
    events = [json.loads(l) for l in all_lines]
    answered = {b.get("tool_use_id") for e in events for b in blocks_of(e) if b.get("type") == "tool_result"}
    known = {b.get("id") for e in events for b in blocks_of(e) if b.get("type") == "tool_use"}
    calls = set()
    for raw in piece:
        e = json.loads(raw)
        for b in blocks_of(e):
            if b.get("type") == "tool_use":
                calls.add(b["id"])
            if b.get("type") == "tool_result":
                tid = b.get("tool_use_id")
                if tid in known and tid not in calls:
                    sys.exit("%s: the slice cuts off the call of result %s" % (name, tid))
                calls.discard(tid)
    left = {c for c in calls if c in answered}
    if left:
        sys.exit("%s: calls answered only after the slice: %s" % (name, sorted(left)))


def check_file(path):
    data = open(path, "rb").read()
    if len(data) >= MAX_BYTES:
        sys.exit("%s: %d bytes (limit %d)" % (path, len(data), MAX_BYTES))
    if not data.endswith(b"\n"):
        sys.exit("%s: no final newline" % path)
    for i, line in enumerate(data.split(b"\n")[:-1]):
        if not isinstance(json.loads(line), dict):
            sys.exit("%s:%d: not a JSON object" % (path, i + 1))
    return len(data), data.count(b"\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--out", default=os.path.join(ROOT, "fixtures", "claude_code"))
    ap.add_argument("--check-only", action="store_true")
    args = ap.parse_args()
    names = [s[0] for s in SLICES] + [s[0] for s in SYNTHETIC]
    if not args.check_only:
        os.makedirs(args.out, exist_ok=True)
        for name, rel, first, last in SLICES:
            all_lines, piece = cut(args.corpus, rel, first, last)
            validate_slice(name, all_lines, piece)
            with open(os.path.join(args.out, name), "wb") as f:
                f.write(b"".join(l + b"\n" for l in piece))
        for name, build in SYNTHETIC:
            with open(os.path.join(args.out, name), "wb") as f:
                f.write("".join(dumps(e) + "\n" for e in build()).encode("utf-8"))
    for name in names:
        size, lines = check_file(os.path.join(args.out, name))
        print("%-28s %7d bytes %4d lines" % (name, size, lines))


if __name__ == "__main__":
    main()
