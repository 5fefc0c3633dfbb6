#!/usr/bin/env python3
"""Build the Anthropic and ShareGPT fixtures for `compactor` from its OpenAI fixtures.

Run from anywhere (stdlib only, Python 3.11+):

    python3 scripts/make_record_fixtures.py            # writes fixtures/anthropic, fixtures/sharegpt
    python3 scripts/make_record_fixtures.py --check    # rebuild in memory, fail if a file differs

The corpus (../shared/corpus) has no Anthropic Messages or ShareGPT files, so these
fixtures are conversions of slices of the OpenAI fixtures (themselves real agent runs,
see fixtures/README.md) plus small hand-written edge cases. The conversion is written
here, independently of the Rust adapters, so that the tests compare two
implementations: the Rust decoder must read these files back into the same messages,
tool calls, results and images as the OpenAI originals.

Deterministic: no clock, no randomness; fixed JSON encoding (compact separators,
UTF-8, ensure_ascii=False, LF line endings); byte-identical on every run.

Inputs: line 1 of fixtures/openai/{claude_code_task54,codex_w1t9,swe_agent_marshmallow,
trajectory_richh}.jsonl and fixtures/edge/{images,parallel_calls,cjk}.jsonl.

Slices: the longest prefix of at most 150 messages that ends where no tool call is
unanswered and whose OpenAI JSON is at most 120,000 bytes (edge files: whole). Each
record's "meta" keeps the OpenAI fixture's meta and adds "converted_from" (file),
"openai_messages" (the prefix length N) and "converted_by".

Anthropic Messages request logs (fixtures/anthropic/<same name>.jsonl), written the
way an API request log looks, with no compactor-specific field:
* a leading system message -> top-level "system" (string);
* user content: strings as they are; parts -> blocks, `image_url` data URLs -> image
  blocks with a base64 source, other URLs -> a url source;
* developer messages (Codex) -> user messages (Anthropic has no developer role);
* assistant: text -> a string when there are no tool calls, else a text block before
  the tool_use blocks (`input` = the parsed arguments);
* each run of consecutive tool messages -> ONE user message of tool_result blocks
  (`content` a string or blocks, `is_error` kept);
* OpenAI `tools` -> {"name", "description", "input_schema"};
* message timestamps are dropped (request logs have none).

ShareGPT, Hermes function-calling style (fixtures/sharegpt/<same name>.jsonl), the
way the Hermes agent saves trajectories:
* system and developer messages -> "system" entries, user -> "human";
* assistant -> "gpt": the text, then one `<tool_call>\\n{json.dumps({"name", "arguments"},
  ensure_ascii=False)}\\n</tool_call>` per call, joined by newlines;
* each run of consecutive tool messages -> ONE "tool" entry of
  `<tool_response>\\n{json.dumps({"tool_call_id", "name", "content"}, ensure_ascii=False)}\\n</tool_response>`
  blocks joined by newlines (`is_error` kept as a key);
* content that is not plain text (images, `tool_reference` parts) uses the compactor's
  documented `content_parts` carrier: the value holds the text parts joined by "\\n",
  `content_parts` the parts list with each text part's "text" replaced by its length;
* OpenAI `tools` -> a top-level "tools" JSON string.

Edge cases (edge_cases.jsonl in each directory) are hand-written here; see
EDGE_ANTHROPIC and EDGE_SHAREGPT below for what each line exercises.

fixtures/anthropic/README.md and fixtures/sharegpt/README.md are generated too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SOURCES = [
    "openai/claude_code_task54.jsonl",
    "openai/codex_w1t9.jsonl",
    "openai/swe_agent_marshmallow.jsonl",
    "openai/trajectory_richh.jsonl",
    "edge/images.jsonl",
    "edge/parallel_calls.jsonl",
    "edge/cjk.jsonl",
]
MAX_MESSAGES = 150
SLICE_CAP = 120_000  # bytes of the sliced OpenAI messages' JSON
FILE_CAP = 200_000  # bytes per written fixture file
GENERATOR = "scripts/make_record_fixtures.py"


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------
# Slicing
# --------------------------------------------------------------------------


def balanced_cuts(messages: list[dict]) -> list[int]:
    """Prefix lengths n at which no tool call in messages[:n] is unanswered."""
    pending: dict[str, int] = {}
    cuts = []
    for n, m in enumerate(messages, start=1):
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


def slice_len(messages: list[dict], whole: bool) -> int:
    if whole:
        return len(messages)
    for n in reversed([c for c in balanced_cuts(messages) if c <= MAX_MESSAGES]):
        if len(dumps(messages[:n]).encode("utf-8")) <= SLICE_CAP:
            return n
    raise SystemExit("no balanced cut fits")


# --------------------------------------------------------------------------
# OpenAI -> Anthropic
# --------------------------------------------------------------------------


def image_block(part: dict) -> dict:
    iu = part.get("image_url")
    url = iu.get("url") if isinstance(iu, dict) else iu
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[len("data:"):].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def anthropic_blocks(parts: list) -> list:
    out = []
    for p in parts:
        if isinstance(p, dict) and p.get("type") == "image_url":
            out.append(image_block(p))
        else:
            out.append(p)
    return out


def anthropic_content(content):
    if isinstance(content, list):
        return anthropic_blocks(content)
    return "" if content is None else content


def to_anthropic(record: dict, messages: list[dict], meta: dict) -> dict:
    out: dict = {"id": record["id"]}
    i = 0
    if messages and messages[0]["role"] == "system":
        out["system"] = messages[0]["content"]
        i = 1
    conv = []
    while i < len(messages):
        m = messages[i]
        role = m["role"]
        if role == "tool":
            blocks = []
            while i < len(messages) and messages[i]["role"] == "tool":
                t = messages[i]
                block = {"type": "tool_result", "tool_use_id": t["tool_call_id"],
                         "content": anthropic_content(t.get("content"))}
                if t.get("is_error"):
                    block["is_error"] = True
                blocks.append(block)
                i += 1
            conv.append({"role": "user", "content": blocks})
            continue
        if role == "assistant":
            calls = m.get("tool_calls") or []
            content = m.get("content")
            if not calls:
                conv.append({"role": "assistant", "content": anthropic_content(content)})
            else:
                blocks = []
                if isinstance(content, str) and content:
                    blocks.append({"type": "text", "text": content})
                elif isinstance(content, list):
                    blocks.extend(anthropic_blocks(content))
                for tc in calls:
                    fn = tc["function"]
                    blocks.append({"type": "tool_use", "id": tc["id"], "name": fn["name"],
                                   "input": json.loads(fn["arguments"])})
                conv.append({"role": "assistant", "content": blocks})
        else:  # user, developer
            conv.append({"role": "user", "content": anthropic_content(m.get("content"))})
        i += 1
    out["messages"] = conv
    if record.get("tools"):
        out["tools"] = [{"name": t["function"]["name"],
                         "description": t["function"].get("description", ""),
                         "input_schema": t["function"].get("parameters", {"type": "object"})}
                        for t in record["tools"]]
    out["meta"] = meta
    return out


# --------------------------------------------------------------------------
# OpenAI -> ShareGPT (Hermes)
# --------------------------------------------------------------------------


def text_and_parts(content) -> tuple[str, list | None]:
    """The text of a content value and, for part lists, the content_parts carrier."""
    if content is None:
        return "", None
    if isinstance(content, str):
        return content, None
    texts, carrier = [], []
    for p in content:
        if isinstance(p, dict) and isinstance(p.get("text"), str) and p.get("type") not in (
                "image_url", "input_image", "image", "thinking", "redacted_thinking", "reasoning"):
            texts.append(p["text"])
            q = dict(p)
            q["text"] = len(p["text"])
            carrier.append(q)
        else:
            carrier.append(p)
    return "\n".join(texts), carrier


def to_sharegpt(record: dict, messages: list[dict], meta: dict) -> dict:
    conv = []
    names: dict[str, str] = {}
    i = 0
    while i < len(messages):
        m = messages[i]
        role = m["role"]
        if role == "tool":
            blocks = []
            while i < len(messages) and messages[i]["role"] == "tool":
                t = messages[i]
                text, carrier = text_and_parts(t.get("content"))
                obj = {"tool_call_id": t["tool_call_id"], "name": names.get(t["tool_call_id"], "unknown"),
                       "content": text}
                if carrier is not None:
                    obj["content_parts"] = carrier
                if t.get("is_error"):
                    obj["is_error"] = True
                blocks.append("<tool_response>\n" + json.dumps(obj, ensure_ascii=False) + "\n</tool_response>")
                i += 1
            conv.append({"from": "tool", "value": "\n".join(blocks)})
            continue
        text, carrier = text_and_parts(m.get("content"))
        entry: dict
        if role == "assistant":
            pieces = [text] if text else []
            for tc in m.get("tool_calls") or []:
                fn = tc["function"]
                names[tc["id"]] = fn["name"]
                call = {"name": fn["name"], "arguments": json.loads(fn["arguments"])}
                pieces.append("<tool_call>\n" + json.dumps(call, ensure_ascii=False) + "\n</tool_call>")
            entry = {"from": "gpt", "value": "\n".join(pieces)}
        elif role in ("system", "developer"):
            entry = {"from": "system", "value": text}
        else:
            entry = {"from": "human", "value": text}
        if carrier is not None:
            entry["content_parts"] = carrier
        conv.append(entry)
        i += 1
    out: dict = {"id": record["id"], "conversations": conv}
    if record.get("tools"):
        out["tools"] = json.dumps(record["tools"], ensure_ascii=False)
    out["meta"] = meta
    return out


# --------------------------------------------------------------------------
# Hand-written edge cases
# --------------------------------------------------------------------------

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
SYNTH = {"synthetic": True, "generated_by": GENERATOR}

EDGE_ANTHROPIC = [
    # Thinking with a signature, redacted thinking, cache_control on system blocks,
    # text and tool_result blocks; parallel tool_use; a tool_result that is an error;
    # a tool_result holding an image; text after the results in the same user message.
    {
        "id": "anthropic-edge-thinking",
        "model": "claude-sonnet-4-5",
        "max_tokens": 16000,
        "thinking": {"type": "enabled", "budget_tokens": 8000},
        "system": [
            {"type": "text", "text": "You are a coding agent working in /repo."},
            {"type": "text", "text": "Project rules: run `cargo test` before committing.",
             "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [
            {"role": "user", "content": "The build fails on CI. Find out why and fix it."},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should read the CI log first, then the failing test.",
                 "signature": "EqQBCkYIBxgCKkBsig0001"},
                {"type": "text", "text": "Let me read the CI configuration."},
                {"type": "tool_use", "id": "toolu_01EdgeRead", "name": "Read",
                 "input": {"file_path": "/repo/.github/workflows/ci.yml"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01EdgeRead",
                 "content": "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test --locked"},
            ]},
            {"role": "assistant", "content": [
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
                {"type": "tool_use", "id": "toolu_01EdgeTest", "name": "Bash",
                 "input": {"command": "cargo test --locked 2>&1 | tail -5", "timeout": 600000}},
                {"type": "tool_use", "id": "toolu_01EdgeShot", "name": "screenshot",
                 "input": {"url": "http://localhost:8080/ci"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01EdgeTest", "is_error": True,
                 "content": [{"type": "text", "text": "error: the lock file needs to be updated but --locked was passed\nExit code 101"}]},
                {"type": "tool_result", "tool_use_id": "toolu_01EdgeShot",
                 "content": [
                     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1PX}},
                     {"type": "text", "text": "CI dashboard: 1 failed job"},
                 ],
                 "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "Note: do not bump any dependency versions."},
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Cargo.lock is stale; regenerate it without upgrades.",
                 "signature": "EqQBCkYIBxgCKkBsig0002"},
                {"type": "text", "text": "Cargo.lock is out of date. I'll regenerate it without upgrading anything."},
                {"type": "tool_use", "id": "toolu_01EdgeFix", "name": "Bash",
                 "input": {"command": "cargo update --workspace --offline"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01EdgeFix", "content": ""},
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Fixed: Cargo.lock now matches Cargo.toml; `cargo test --locked` passes."},
            ]},
        ],
        "tools": [
            {"name": "Read", "description": "Read a file", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}},
            {"name": "Bash", "description": "Run a shell command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}}}},
            {"name": "screenshot", "description": "Screenshot a URL", "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}}},
        ],
        "meta": SYNTH,
    },
    # Text between tool_use blocks (block order), a user message whose text comes
    # before its tool_result, a url image source, consecutive user messages,
    # metadata / stop_sequences / tool_choice passthrough, CJK input.
    {
        "id": "anthropic-edge-order",
        "model": "claude-opus-4-1",
        "max_tokens": 4096,
        "metadata": {"user_id": "user-7f3a"},
        "stop_sequences": ["</done>"],
        "tool_choice": {"type": "auto"},
        "system": "Answer in the user's language.",
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "这张截图里的错误是什么？"},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/screens/error-42.png"}},
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "我先搜索日志。"},
                {"type": "tool_use", "id": "toolu_02Grep", "name": "Grep", "input": {"pattern": "错误|ERROR", "path": "logs/"}},
                {"type": "text", "text": "同时查看配置文件。"},
                {"type": "tool_use", "id": "toolu_02Read", "name": "Read", "input": {"file_path": "config/设置.toml"}},
            ]},
            {"role": "user", "content": [
                {"type": "text", "text": "(结果如下)"},
                {"type": "tool_result", "tool_use_id": "toolu_02Grep", "content": "logs/app.log:17: ERROR 连接超时 (timeout=30s)"},
                {"type": "tool_result", "tool_use_id": "toolu_02Read", "content": "[网络]\ntimeout = 30\n"},
            ]},
            {"role": "user", "content": "请把超时改成 60 秒。"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_02Edit", "name": "Edit",
                 "input": {"file_path": "config/设置.toml", "old_string": "timeout = 30", "new_string": "timeout = 60"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_02Edit", "content": "The file config/设置.toml has been updated."},
            ]},
            {"role": "assistant", "content": "已将超时从 30 秒改为 60 秒。</done>"},
        ],
        "meta": SYNTH,
    },
]

EDGE_SHAREGPT = [
    # Hermes function-calling v1 (NousResearch dataset) style: Python-literal tool
    # calls with "arguments" first, two calls in one turn, responses without ids
    # (name + object content), dataset keys (category, subcategory, task).
    {
        "id": "sharegpt-edge-hermes-v1",
        "conversations": [
            {"from": "system", "value": "You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags.\n<tools>\n[{'type': 'function', 'function': {'name': 'get_stock_price', 'parameters': {'type': 'object', 'properties': {'symbol': {'type': 'string'}}, 'required': ['symbol']}}}]\n</tools>"},
            {"from": "human", "value": "What are the current prices of TSLA and AAPL?"},
            {"from": "gpt", "value": "<tool_call>\n{'arguments': {'symbol': 'TSLA'}, 'name': 'get_stock_price'}\n</tool_call>\n<tool_call>\n{'arguments': {'symbol': 'AAPL'}, 'name': 'get_stock_price'}\n</tool_call>\n"},
            {"from": "tool", "value": "<tool_response>\n{\"name\": \"get_stock_price\", \"content\": {\"symbol\": \"TSLA\", \"price\": 191.97, \"currency\": \"USD\"}}\n</tool_response>\n<tool_response>\n{\"name\": \"get_stock_price\", \"content\": {\"symbol\": \"AAPL\", \"price\": 182.52, \"currency\": \"USD\"}}\n</tool_response>\n"},
            {"from": "gpt", "value": "TSLA trades at $191.97 and AAPL at $182.52."},
        ],
        "category": "Finance",
        "subcategory": "Stock Market",
        "task": "Get stock prices",
    },
    # LLaMA-Factory old style: function_call / observation turns, top-level system
    # and a tools JSON string.
    {
        "conversations": [
            {"from": "human", "value": "What's the weather in Beijing?"},
            {"from": "function_call", "value": "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Beijing\"}}"},
            {"from": "observation", "value": "{\"city\": \"Beijing\", \"temperature\": 18, \"condition\": \"sunny\"}"},
            {"from": "gpt", "value": "It's sunny in Beijing today, around 18°C."},
            {"from": "human", "value": "And in Shanghai?"},
            {"from": "function_call", "value": "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Shanghai\"}}"},
            {"from": "observation", "value": "{\"city\": \"Shanghai\", \"temperature\": 22, \"condition\": \"rain\"}"},
            {"from": "gpt", "value": "Shanghai: 22°C with rain."},
        ],
        "system": "You are a weather assistant.",
        "tools": "[{\"name\": \"get_weather\", \"description\": \"Look up weather for a city\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}]",
    },
    # Hermes agent trajectory: <think> blocks, text before, between and after the
    # tags, three calls in one turn answered out of order (by id), a result that is
    # not JSON, an error result, compact JSON in one call, trajectory keys.
    {
        "conversations": [
            {"from": "system", "value": "You are a function calling AI model. <tools>[{\"name\": \"terminal\"}, {\"name\": \"read_file\"}, {\"name\": \"search_files\"}]</tools>"},
            {"from": "human", "value": "Why does `make test` fail?"},
            {"from": "gpt", "value": "<think>\nRun the tests, read the Makefile and look for the fixture in parallel.\n</think>\nChecking three things at once.\n<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"make test 2>&1 | tail -3\"}}\n</tool_call>\nand\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"Makefile\"}}\n</tool_call>\n<tool_call>{\"name\":\"search_files\",\"arguments\":{\"pattern\":\"conftest.py\"}}</tool_call>\nWaiting for results."},
            {"from": "tool", "value": "<tool_response>\n{\"tool_call_id\": \"call_c\", \"name\": \"search_files\", \"content\": \"tests/conftest.py\"}\n</tool_response>\n<tool_response>\n{\"tool_call_id\": \"call_a\", \"name\": \"terminal\", \"content\": \"E   ModuleNotFoundError: No module named 'pytest_asyncio'\\nmake: *** [test] Error 1\", \"is_error\": true}\n</tool_response>\n<tool_response>\ntest:\n\tpytest -q\n</tool_response>"},
            {"from": "gpt", "value": "<think>\n</think>\nThe test run is missing `pytest_asyncio`; install it with `pip install pytest-asyncio`."},
        ],
        "timestamp": "2026-05-15T10:42:00",
        "model": "hermes-4-70b",
        "completed": True,
    },
    # Original ShareGPT (chat only): human / gpt / chatgpt labels, markdown, a
    # per-entry key.
    {
        "id": "sharegpt-edge-chat",
        "conversations": [
            {"from": "human", "value": "Write a haiku about Rust's borrow checker."},
            {"from": "gpt", "value": "Mutable, shared—no.\nLifetimes braid through my code;\nthe compiler smiles.", "markdown": None},
            {"from": "human", "value": "Now explain it in one sentence."},
            {"from": "chatgpt", "value": "The borrow checker guarantees at compile time that a value has either one mutable reference or any number of shared ones, never both."},
        ],
    },
]


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def readme(dialect: str, rows: list[tuple[str, str, int, int]]) -> str:
    head = {
        "anthropic": ("Anthropic Messages API request logs", "src/formats/anthropic.rs"),
        "sharegpt": ("ShareGPT conversations (Hermes function-calling style)", "src/formats/sharegpt.rs"),
    }[dialect]
    lines = [
        f"# `{dialect}` fixtures",
        "",
        f"{head[0]}, one session per line (see `{head[1]}` for the field map).",
        "",
        f"Generated by `{GENERATOR}` (deterministic, stdlib only): `python3 {GENERATOR}`;",
        f"`python3 {GENERATOR} --check` verifies the files are up to date.",
        "The corpus has no files in this format, so the real sessions here are",
        "**conversions of slices of the OpenAI fixtures** (real agent runs, provenance and",
        "licences in `fixtures/README.md`), written by that Python script independently of",
        "the Rust adapter; `tests/format_" + dialect + ".rs` checks the Rust decoder reads them",
        "back into the same messages, tool calls, results and images as the originals.",
        "",
        "| file | converted from | OpenAI messages | bytes |",
        "|---|---|---|---|",
    ]
    for name, src, n, size in rows:
        lines.append(f"| `{name}` | `{src}` | {n} | {size:,} |")
    lines += [
        "",
        "`edge_cases.jsonl` is hand-written (synthetic): "
        + ("thinking blocks with signatures, redacted thinking, `cache_control` on system and "
           "result blocks, system as blocks, parallel `tool_use`, an `is_error` result, a result "
           "holding an image, text before / after results in one user message, text between "
           "`tool_use` blocks, a url image source, consecutive user messages, request fields "
           "(`metadata`, `stop_sequences`, `tool_choice`, `thinking`)."
           if dialect == "anthropic" else
           "Hermes function-calling v1 (Python-literal calls, responses without ids), "
           "LLaMA-Factory `function_call` / `observation` turns with a top-level `system` and "
           "a `tools` string, a Hermes agent trajectory (`<think>`, text around and between "
           "tags, three calls answered out of order, a non-JSON result, compact JSON), and a "
           "plain ShareGPT chat (`chatgpt` label, a per-entry key)."),
        "",
    ]
    return "\n".join(lines)


def build() -> dict[Path, str]:
    files: dict[Path, str] = {}
    rows: dict[str, list] = {"anthropic": [], "sharegpt": []}
    for rel in SOURCES:
        src = REPO_ROOT / "fixtures" / rel
        record = json.loads(src.read_text(encoding="utf-8").splitlines()[0])
        messages = record["messages"]
        n = slice_len(messages, whole=rel.startswith("edge/"))
        meta = dict(record.get("meta") or {})
        meta["converted_from"] = f"fixtures/{rel}"
        meta["openai_messages"] = n
        meta["record_slice"] = f"messages 0..{n} of {len(messages)}"
        meta["converted_by"] = GENERATOR
        name = Path(rel).name
        for dialect, convert in (("anthropic", to_anthropic), ("sharegpt", to_sharegpt)):
            line = dumps(convert(record, messages[:n], meta)) + "\n"
            size = len(line.encode("utf-8"))
            if size > FILE_CAP:
                raise SystemExit(f"{dialect}/{name}: {size} bytes > {FILE_CAP}")
            files[REPO_ROOT / "fixtures" / dialect / name] = line
            rows[dialect].append((name, f"fixtures/{rel}", n, size))
    for dialect, edge in (("anthropic", EDGE_ANTHROPIC), ("sharegpt", EDGE_SHAREGPT)):
        files[REPO_ROOT / "fixtures" / dialect / "edge_cases.jsonl"] = "".join(dumps(e) + "\n" for e in edge)
        files[REPO_ROOT / "fixtures" / dialect / "README.md"] = readme(dialect, rows[dialect])
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if a file differs from a rebuild")
    args = ap.parse_args()
    files = build()
    if args.check:
        stale = [p for p, text in files.items()
                 if not p.exists() or p.read_text(encoding="utf-8") != text]
        for p in stale:
            print(f"stale: {p.relative_to(REPO_ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    for p, text in sorted(files.items()):
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print(f"wrote {p.relative_to(REPO_ROOT)} ({len(text.encode('utf-8')):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
