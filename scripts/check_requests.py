#!/usr/bin/env python3
"""Check that records are request bodies the OpenAI or Anthropic API accepts.

An independent checker: it shares no code with compactor's writers and was
written from the public API references only:

  [OAI]  OpenAI API reference, "Create chat completion" (POST /v1/chat/completions),
         request body: https://platform.openai.com/docs/api-reference/chat/create
         (message objects ChatCompletionRequest{Developer,System,User,Assistant,
         Tool}Message, content parts, ChatCompletionMessageToolCall, tools).
  [OAI-FC] OpenAI function-calling guide: the results of a model's tool calls are
         sent back as `tool` messages carrying the call's `tool_call_id`.
  [ANT]  Anthropic API reference, "Create a Message" (POST /v1/messages), body
         parameters: https://platform.claude.com/docs/en/api/messages/create
         (MessageParam, ContentBlockParam union, ToolUseBlockParam,
         ToolResultBlockParam, ThinkingBlockParam, tools, system).
  [ANT-TU] Anthropic tool-use guide, "Handling tool use and tool results":
         tool_result blocks must immediately follow their tool_use blocks (in the
         next user message) and must come first in that message's content.

Where each rule comes from:

  OpenAI Chat Completions (--api openai)
    * top-level keys: the documented request-body parameters [OAI]
      (`functions` / `function_call` are deprecated there in favour of `tools` /
      `tool_choice`; this checker reports them, like the deprecated `function` role)
    * roles developer/system/user/assistant/tool and the keys each message type
      documents [OAI]; `reasoning_content` on assistant messages is not in [OAI]
      but is accepted as the widely served readable-reasoning field (a string)
    * content: string or array of parts; per role the part types [OAI] lists
      (system/developer/tool: text; user: text, image_url, input_audio, file;
      assistant: text, refusal); assistant content "Required unless tool_calls
      ... is specified" [OAI]
    * "empty turn": a user/assistant message with no visible text, image or tool
      call (not an API error, but chat templates render it as an empty turn)
    * tool_calls: array of {id, type: "function", function: {name, arguments}},
      `arguments` is "the arguments ... in JSON format" (a string) [OAI];
      function name "must be a-z, A-Z, 0-9, or contain underscores and dashes,
      with a maximum length of 64" [OAI]
    * sequencing: each call is answered by one `tool` message with its
      tool_call_id, right after the assistant message [OAI-FC] (the API rejects
      "An assistant message with 'tool_calls' must be followed by tool messages
      responding to each 'tool_call_id'"); `--strict-order` additionally wants
      the results in call order (the API itself allows any order)
    * tools: array of {type: "function", function: {name, description?,
      parameters?, strict?}} [OAI]

  Anthropic Messages (--api anthropic)
    * top-level keys: the documented body parameters [ANT] (generally available
      ones; beta-only parameters need --allow-key)
    * `system`: string or array of text blocks [ANT]
    * messages: role user|assistant, "Our models are trained to operate on
      alternating user and assistant conversational turns" [ANT]; the first
      message is a user turn; each message is exactly {role, content} [ANT]
    * content: string or array of ContentBlockParam [ANT]; text blocks must be
      non-empty (the API answers "text content blocks must be non-empty" /
      "must contain non-whitespace text"); image sources base64 (jpeg, png, gif,
      webp) or url [ANT]; tool_use {id, name, input: object} [ANT] (id pattern
      ^[a-zA-Z0-9_-]+$, name pattern ^[a-zA-Z0-9_-]{1,64}$ as in the tools
      reference); tool_result {tool_use_id, content?, is_error?} [ANT]; thinking
      {thinking, signature} and redacted_thinking {data} [ANT]
    * pairing: [ANT-TU] as above; each tool_use answered once
    * tools: custom tools {name, description?, input_schema, cache_control?} [ANT];
      server tools (a `type` other than "custom") are only checked loosely

Usage:
  python3 scripts/check_requests.py --api openai|anthropic [--allow-key KEY ...]
      [--allow-inflight] [--strict-order] [-q] FILE_OR_DIR...

Exit status: 0 no violation, 1 violations, 2 usage error / unreadable file / a
line that is not JSON. Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

# --------------------------------------------------------------------------
# Result type


@dataclass(frozen=True)
class Violation:
    """One rule broken by a request: `where` is a JSON path inside it."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def _v(out: list[Violation], where: str, what: str) -> None:
    out.append(Violation(where, what))


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _a(word: str) -> str:
    """'a user' / 'an assistant'."""
    return ("an " if word.startswith(("a", "e", "i", "o")) else "a ") + word


def _is_blank(text: Any) -> bool:
    return not isinstance(text, str) or not text.strip()


def _check_keys(
    out: list[Violation],
    where: str,
    obj: dict,
    required: Iterable[str],
    optional: Iterable[str],
    what: str,
) -> None:
    """Report missing required keys and keys outside required | optional."""
    required = list(required)
    allowed = set(required) | set(optional)
    for key in required:
        if key not in obj:
            _v(out, where, f"{what} is missing required key '{key}'")
    for key in obj:
        if key not in allowed:
            _v(out, f"{where}.{key}", f"unexpected key '{key}' on {what} (allowed: {', '.join(sorted(allowed))})")


# Function / tool names: [OAI] "Must be a-z, A-Z, 0-9, or contain underscores
# and dashes, with a maximum length of 64."; [ANT] tools[].name the same.
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# [ANT] tool_use.id
ANTHROPIC_TOOL_USE_ID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")


def _check_tool_name(out: list[Violation], where: str, name: Any) -> None:
    if not isinstance(name, str):
        _v(out, where, f"name must be a string, got {_type_name(name)}")
    elif not TOOL_NAME_RE.match(name):
        _v(out, where, f"name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$")


# ==========================================================================
# OpenAI Chat Completions
# ==========================================================================

# [OAI] request body parameters.
OPENAI_TOP_LEVEL_KEYS = frozenset({
    "messages", "model", "audio", "frequency_penalty", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n",
    "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key",
    "prompt_cache_retention", "reasoning_effort", "response_format",
    "safety_identifier", "seed", "service_tier", "stop", "store", "stream",
    "stream_options", "temperature", "tool_choice", "tools", "top_logprobs",
    "top_p", "user", "verbosity", "web_search_options",
})
# [OAI] deprecated parameters and their replacements.
OPENAI_DEPRECATED_TOP_LEVEL = {"functions": "tools", "function_call": "tool_choice"}

# [OAI] keys of each message type (role -> allowed keys).
OPENAI_MESSAGE_KEYS: dict[str, frozenset[str]] = {
    "system": frozenset({"role", "content", "name"}),
    "developer": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    # reasoning_content: non-standard, widely served readable reasoning.
    "assistant": frozenset({"role", "content", "name", "tool_calls", "refusal", "audio", "reasoning_content"}),
    "tool": frozenset({"role", "content", "tool_call_id"}),
}

# [OAI] content part types each role may send.
OPENAI_PART_TYPES: dict[str, frozenset[str]] = {
    "system": frozenset({"text"}),
    "developer": frozenset({"text"}),
    "tool": frozenset({"text"}),
    "user": frozenset({"text", "image_url", "input_audio", "file"}),
    "assistant": frozenset({"text", "refusal"}),
}

# Part types seen in transcripts that belong to other APIs: a hint per type.
FOREIGN_PART_HINTS = {
    "input_text": "a Responses API part; Chat Completions uses 'text'",
    "output_text": "a Responses API part; Chat Completions uses 'text'",
    "input_image": "a Responses API part; Chat Completions uses 'image_url'",
    "reasoning": "a Responses API reasoning item, not a content part",
    "thinking": "an Anthropic thinking block, not a Chat Completions part",
    "redacted_thinking": "an Anthropic block, not a Chat Completions part",
    "tool_use": "an Anthropic block; calls go in assistant 'tool_calls'",
    "tool_result": "an Anthropic block; results go in role 'tool' messages",
    "tool_reference": "an Anthropic tool-search block, not a Chat Completions part",
    "tool_call": "calls go in assistant 'tool_calls'",
    "tool_output": "results go in role 'tool' messages",
    "function_call": "a Responses API item; calls go in assistant 'tool_calls'",
    "function_call_output": "a Responses API item; results go in role 'tool' messages",
    "image": "an Anthropic block; Chat Completions uses 'image_url'",
}

OPENAI_IMAGE_DETAIL = frozenset({"auto", "low", "high"})
OPENAI_AUDIO_FORMATS = frozenset({"wav", "mp3"})
OPENAI_TOOL_CHOICE_STRINGS = frozenset({"none", "auto", "required"})


def validate_openai(
    req: Any,
    allow_keys: Iterable[str] = (),
    allow_inflight: bool = False,
    strict_order: bool = False,
) -> list[Violation]:
    """All violations of one Chat Completions request body."""
    out: list[Violation] = []
    if not isinstance(req, dict):
        _v(out, "(request)", f"must be a JSON object, got {_type_name(req)}")
        return out
    _openai_top_level(out, req, set(allow_keys))
    messages = req.get("messages")
    if not isinstance(messages, list):
        if "messages" in req:
            _v(out, "messages", f"must be an array, got {_type_name(messages)}")
        return out
    if not messages:
        _v(out, "messages", "must be a non-empty array")
        return out
    for i, msg in enumerate(messages):
        _openai_message(out, f"messages[{i}]", msg)
    _openai_duplicate_call_ids(out, messages)
    _openai_sequencing(out, messages, allow_inflight, strict_order)
    if "tools" in req:
        _openai_tools(out, req["tools"])
    if "tool_choice" in req:
        _openai_tool_choice(out, req["tool_choice"])
    return out


def _openai_top_level(out: list[Violation], req: dict, allow_keys: set[str]) -> None:
    if "messages" not in req:
        _v(out, "messages", "missing (required)")
    for key in req:
        if key in OPENAI_TOP_LEVEL_KEYS or key in allow_keys:
            continue
        if key in OPENAI_DEPRECATED_TOP_LEVEL:
            _v(out, key, f"deprecated parameter; use '{OPENAI_DEPRECATED_TOP_LEVEL[key]}'")
        else:
            _v(out, key, "unknown top-level key (not a Chat Completions request parameter)")


def _openai_message(out: list[Violation], where: str, msg: Any) -> None:
    """Role, allowed keys and per-field shape of one message."""
    if not isinstance(msg, dict):
        _v(out, where, f"message must be an object, got {_type_name(msg)}")
        return
    role = msg.get("role")
    if role == "function":
        _v(out, f"{where}.role", "deprecated role 'function'; use role 'tool' with tool_call_id")
        return
    if role not in OPENAI_MESSAGE_KEYS:
        if "role" not in msg:
            _v(out, f"{where}.role", "missing")
        else:
            _v(out, f"{where}.role", f"{role!r} is not one of {', '.join(OPENAI_MESSAGE_KEYS)}")
        return
    allowed = OPENAI_MESSAGE_KEYS[role]
    for key in msg:
        if key not in allowed:
            _v(out, f"{where}.{key}", f"unexpected key '{key}' on {_a(role)} message (allowed: {', '.join(sorted(allowed))})")
    if "name" in msg and not isinstance(msg["name"], str):
        _v(out, f"{where}.name", f"must be a string, got {_type_name(msg['name'])}")

    content_ok = _openai_content(out, where, role, msg)
    if role == "assistant":
        _openai_assistant_fields(out, where, msg)
    if role == "tool":
        tcid = msg.get("tool_call_id")
        if not isinstance(tcid, str) or not tcid:
            _v(out, f"{where}.tool_call_id", "must be a non-empty string" + ("" if "tool_call_id" in msg else " (missing)"))
    if content_ok and role in ("user", "assistant") and _openai_is_empty_turn(msg):
        _v(out, f"{where}.content", "empty turn: no text, image or tool call (chat templates render it as an empty turn)")


def _openai_content(out: list[Violation], where: str, role: str, msg: dict) -> bool:
    """Check `content`; False when it is malformed (already reported)."""
    has_calls = isinstance(msg.get("tool_calls"), list) and bool(msg.get("tool_calls"))
    if "content" not in msg or msg["content"] is None:
        if role == "assistant":
            if has_calls:
                return True
            _v(out, f"{where}.content", "null or absent on an assistant message without tool_calls")
        else:
            state = "null" if "content" in msg else "missing"
            _v(out, f"{where}.content", f"{state}; {_a(role)} message needs a string or an array of parts")
        return False
    content = msg["content"]
    if isinstance(content, str):
        return True
    if not isinstance(content, list):
        _v(out, f"{where}.content", f"must be a string or an array of parts, got {_type_name(content)}")
        return False
    if not content:
        _v(out, f"{where}.content", "empty array of parts")
        return False
    ok = True
    for k, part in enumerate(content):
        ok &= _openai_part(out, f"{where}.content[{k}]", role, part)
    return ok


def _openai_part(out: list[Violation], where: str, role: str, part: Any) -> bool:
    """One content part: its type is allowed for the role and its shape is exact."""
    if not isinstance(part, dict):
        _v(out, where, f"content part must be an object, got {_type_name(part)}")
        return False
    ok = True
    if "encrypted_content" in part:
        _v(out, f"{where}.encrypted_content", "part carries encrypted_content (opaque reasoning state; not a Chat Completions part)")
        ok = False
    ptype = part.get("type")
    allowed = OPENAI_PART_TYPES[role]
    if ptype not in allowed:
        hint = FOREIGN_PART_HINTS.get(ptype) if isinstance(ptype, str) else None
        _v(out, f"{where}.type", f"content part type {ptype!r} is not allowed in {_a(role)} message "
           f"(allowed: {', '.join(sorted(allowed))})" + (f": {hint}" if hint else ""))
        return False
    before = len(out)
    if ptype == "text":
        _check_keys(out, where, part, ("type", "text"), (), "a text part")
        if "text" in part and not isinstance(part["text"], str):
            _v(out, f"{where}.text", f"must be a string, got {_type_name(part['text'])}")
    elif ptype == "refusal":
        _check_keys(out, where, part, ("type", "refusal"), (), "a refusal part")
        if "refusal" in part and not isinstance(part["refusal"], str):
            _v(out, f"{where}.refusal", f"must be a string, got {_type_name(part['refusal'])}")
    elif ptype == "image_url":
        _check_keys(out, where, part, ("type", "image_url"), (), "an image_url part")
        img = part.get("image_url")
        if "image_url" in part:
            if not isinstance(img, dict):
                _v(out, f"{where}.image_url", f"must be an object {{url, detail?}}, got {_type_name(img)}")
            else:
                _check_keys(out, f"{where}.image_url", img, ("url",), ("detail",), "image_url")
                if "url" in img and (not isinstance(img["url"], str) or not img["url"]):
                    _v(out, f"{where}.image_url.url", "must be a non-empty string (a URL or a data: URL)")
                if "detail" in img and img["detail"] not in OPENAI_IMAGE_DETAIL:
                    _v(out, f"{where}.image_url.detail", f"{img['detail']!r} is not one of auto, low, high")
    elif ptype == "input_audio":
        _check_keys(out, where, part, ("type", "input_audio"), (), "an input_audio part")
        audio = part.get("input_audio")
        if isinstance(audio, dict):
            _check_keys(out, f"{where}.input_audio", audio, ("data", "format"), (), "input_audio")
            if "format" in audio and audio["format"] not in OPENAI_AUDIO_FORMATS:
                _v(out, f"{where}.input_audio.format", f"{audio['format']!r} is not one of wav, mp3")
        elif "input_audio" in part:
            _v(out, f"{where}.input_audio", f"must be an object {{data, format}}, got {_type_name(audio)}")
    elif ptype == "file":
        _check_keys(out, where, part, ("type", "file"), (), "a file part")
        f = part.get("file")
        if isinstance(f, dict):
            _check_keys(out, f"{where}.file", f, (), ("file_data", "file_id", "filename"), "file")
        elif "file" in part:
            _v(out, f"{where}.file", f"must be an object {{file_data?, file_id?, filename?}}, got {_type_name(f)}")
    return ok and len(out) == before


def _openai_assistant_fields(out: list[Violation], where: str, msg: dict) -> None:
    if "refusal" in msg and msg["refusal"] is not None and not isinstance(msg["refusal"], str):
        _v(out, f"{where}.refusal", f"must be a string or null, got {_type_name(msg['refusal'])}")
    if "reasoning_content" in msg and not isinstance(msg["reasoning_content"], str):
        _v(out, f"{where}.reasoning_content", f"must be a string, got {_type_name(msg['reasoning_content'])}")
    if "audio" in msg and msg["audio"] is not None:
        audio = msg["audio"]
        if not isinstance(audio, dict):
            _v(out, f"{where}.audio", f"must be an object {{id}}, got {_type_name(audio)}")
        else:
            _check_keys(out, f"{where}.audio", audio, ("id",), (), "audio")
    if "tool_calls" in msg:
        _openai_tool_calls(out, f"{where}.tool_calls", msg["tool_calls"])


def _openai_tool_calls(out: list[Violation], where: str, calls: Any) -> None:
    """[OAI] ChatCompletionMessageToolCall: {id, type: "function", function: {name, arguments}}."""
    if not isinstance(calls, list):
        _v(out, where, f"must be an array, got {_type_name(calls)}")
        return
    if not calls:
        _v(out, where, "empty array (omit tool_calls when there are no calls)")
        return
    for k, call in enumerate(calls):
        w = f"{where}[{k}]"
        if not isinstance(call, dict):
            _v(out, w, f"tool call must be an object, got {_type_name(call)}")
            continue
        _check_keys(out, w, call, ("id", "type", "function"), (), "a tool call")
        if "id" in call and (not isinstance(call["id"], str) or not call["id"]):
            _v(out, f"{w}.id", "must be a non-empty string")
        if "type" in call and call["type"] != "function":
            _v(out, f"{w}.type", f"tool call type {call['type']!r} is not 'function'")
        fn = call.get("function")
        if "function" not in call:
            continue
        if not isinstance(fn, dict):
            _v(out, f"{w}.function", f"must be an object {{name, arguments}}, got {_type_name(fn)}")
            continue
        _check_keys(out, f"{w}.function", fn, ("name", "arguments"), (), "a tool call's function")
        if "name" in fn:
            _check_tool_name(out, f"{w}.function.name", fn["name"])
        if "arguments" in fn:
            args = fn["arguments"]
            if not isinstance(args, str):
                _v(out, f"{w}.function.arguments", f"must be a JSON-encoded string, got {_type_name(args)}")
            else:
                try:
                    json.loads(args)
                except ValueError as exc:
                    _v(out, f"{w}.function.arguments", f"not valid JSON ({exc})")


def _openai_is_empty_turn(msg: dict) -> bool:
    """No non-whitespace text, no image/audio/file, no tool calls, no refusal."""
    if isinstance(msg.get("tool_calls"), list) and msg["tool_calls"]:
        return False
    if isinstance(msg.get("refusal"), str) and msg["refusal"].strip():
        return False
    if isinstance(msg.get("audio"), dict):
        return False
    content = msg.get("content")
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        for part in content:
            ptype = part.get("type")
            if ptype in ("image_url", "input_audio", "file"):
                return False
            if ptype in ("text", "refusal") and not _is_blank(part.get(ptype)):
                return False
    return True


def _call_ids(msg: Any) -> list[str]:
    """The string ids of an assistant message's tool calls, in order."""
    if not isinstance(msg, dict) or msg.get("role") != "assistant":
        return []
    calls = msg.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"]]


def _openai_duplicate_call_ids(out: list[Violation], messages: list) -> None:
    seen: dict[str, str] = {}
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") != "assistant" or not isinstance(msg.get("tool_calls"), list):
            continue
        for k, call in enumerate(msg["tool_calls"]):
            if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
                continue
            where = f"messages[{i}].tool_calls[{k}].id"
            if call["id"] in seen:
                _v(out, where, f"duplicate tool call id {call['id']!r} (also {seen[call['id']]})")
            else:
                seen[call["id"]] = where


def _openai_sequencing(out: list[Violation], messages: list, allow_inflight: bool, strict_order: bool) -> None:
    """Each assistant's calls are answered by the tool messages right after it.

    Walks the messages keeping the nearest preceding assistant message (`owner`)
    and whether only tool messages came since (`direct`).
    """
    owner: int | None = None          # index of the nearest preceding assistant message
    owner_calls: list[str] = []       # its call ids, in order
    answered: dict[str, int] = {}     # call id -> index of the tool message answering it
    direct = True                     # only tool messages since `owner`
    interrupted_by = ""               # "messages[i] (role 'user')": what closed the block
    # call id -> index of the assistant message that issued it (for hints)
    issued_at: dict[str, int] = {}

    def flush_unanswered(reason: str) -> None:
        for cid in owner_calls:
            if cid not in answered:
                _v(out, f"messages[{owner}].tool_calls[{_call_index(messages[owner], cid)}].id",
                   f"tool call {cid!r} unanswered: {reason}")

    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role == "tool":
            tcid = msg.get("tool_call_id")
            if not isinstance(tcid, str) or not tcid:
                continue  # reported by _openai_message
            where = f"messages[{i}].tool_call_id"
            if owner is None:
                _v(out, where, f"orphan tool result {tcid!r}: no preceding assistant message with tool_calls")
                continue
            if tcid not in owner_calls:
                hint = ""
                if tcid in issued_at:
                    hint = f" (it is a call of messages[{issued_at[tcid]}])"
                _v(out, where, f"orphan tool result {tcid!r}: not a call of the nearest preceding "
                   f"assistant message messages[{owner}]{hint}")
                continue
            if tcid in answered:
                _v(out, where, f"tool call {tcid!r} already answered at messages[{answered[tcid]}]")
                continue
            if not direct:
                _v(out, where, f"tool result {tcid!r} does not directly follow messages[{owner}]: "
                   f"{interrupted_by} comes between")
                answered[tcid] = i
                continue
            if strict_order:
                expected = next(c for c in owner_calls if c not in answered)
                if tcid != expected:
                    _v(out, where, f"[strict-order] tool result {tcid!r} out of call order (expected {expected!r} next)")
            answered[tcid] = i
            continue

        # A non-tool message closes the block of results of `owner`.
        if owner is not None and direct:
            interrupted_by = f"messages[{i}] (role {role!r})"
            if any(c not in answered for c in owner_calls):
                flush_unanswered(f"{interrupted_by} comes before its tool result")
            direct = False
        if role == "assistant":
            owner, owner_calls, answered, direct = i, _call_ids(msg), {}, True
            for cid in owner_calls:
                issued_at.setdefault(cid, i)

    if owner is not None and direct and any(c not in answered for c in owner_calls):
        last = len(messages) - 1
        if owner == last and allow_inflight:
            return
        if owner == last:
            flush_unanswered("the request ends (--allow-inflight accepts the calls of a final assistant message)")
        else:
            flush_unanswered("the request ends before its tool result")


def _call_index(msg: dict, cid: str) -> int:
    for k, call in enumerate(msg.get("tool_calls") or []):
        if isinstance(call, dict) and call.get("id") == cid:
            return k
    return -1


def _openai_tools(out: list[Violation], tools: Any) -> None:
    """[OAI] tools: [{type: "function", function: {name, description?, parameters?, strict?}}]."""
    if not isinstance(tools, list):
        _v(out, "tools", f"must be an array, got {_type_name(tools)}")
        return
    if not tools:
        _v(out, "tools", "empty array (omit tools when there are none)")
    for k, tool in enumerate(tools):
        w = f"tools[{k}]"
        if not isinstance(tool, dict):
            _v(out, w, f"tool must be an object, got {_type_name(tool)}")
            continue
        _check_keys(out, w, tool, ("type", "function"), (), "a tool")
        if "type" in tool and tool["type"] != "function":
            _v(out, f"{w}.type", f"tool type {tool['type']!r} is not 'function'")
        fn = tool.get("function")
        if not isinstance(fn, dict):
            if "function" in tool:
                _v(out, f"{w}.function", f"must be an object, got {_type_name(fn)}")
            continue
        _check_keys(out, f"{w}.function", fn, ("name",), ("description", "parameters", "strict"), "a function definition")
        if "name" in fn:
            _check_tool_name(out, f"{w}.function.name", fn["name"])
        if "description" in fn and not isinstance(fn["description"], str):
            _v(out, f"{w}.function.description", f"must be a string, got {_type_name(fn['description'])}")
        if "parameters" in fn and not isinstance(fn["parameters"], dict):
            _v(out, f"{w}.function.parameters", f"must be an object (a JSON Schema), got {_type_name(fn['parameters'])}")
        if "strict" in fn and fn["strict"] is not None and not isinstance(fn["strict"], bool):
            _v(out, f"{w}.function.strict", f"must be a boolean, got {_type_name(fn['strict'])}")


def _openai_tool_choice(out: list[Violation], choice: Any) -> None:
    """[OAI] tool_choice: "none" | "auto" | "required" | {type, ...}."""
    if isinstance(choice, str):
        if choice not in OPENAI_TOOL_CHOICE_STRINGS:
            _v(out, "tool_choice", f"{choice!r} is not one of none, auto, required")
    elif isinstance(choice, dict):
        if choice.get("type") not in ("function", "allowed_tools", "custom"):
            _v(out, "tool_choice.type", f"{choice.get('type')!r} is not one of function, allowed_tools, custom")
    else:
        _v(out, "tool_choice", f"must be a string or an object, got {_type_name(choice)}")


# ==========================================================================
# Anthropic Messages
# ==========================================================================

# [ANT] body parameters (generally available).
ANTHROPIC_TOP_LEVEL_KEYS = frozenset({
    "messages", "model", "max_tokens", "cache_control", "container", "inference_geo",
    "metadata", "output_config", "service_tier", "stop_sequences", "stream", "system",
    "temperature", "thinking", "tool_choice", "tools", "top_k", "top_p",
})

ANTHROPIC_ROLES = ("user", "assistant")
ANTHROPIC_IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

# [ANT] block type -> (required keys, optional keys).
ANTHROPIC_BLOCK_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "text": (("type", "text"), ("cache_control", "citations")),
    "image": (("type", "source"), ("cache_control",)),
    "document": (("type", "source"), ("cache_control", "citations", "context", "title")),
    "search_result": (("type", "source", "title", "content"), ("cache_control", "citations")),
    "tool_use": (("type", "id", "name", "input"), ("cache_control", "caller")),
    "tool_result": (("type", "tool_use_id"), ("content", "is_error", "cache_control")),
    "thinking": (("type", "thinking", "signature"), ()),
    "redacted_thinking": (("type", "data"), ()),
    "tool_reference": (("type", "tool_name"), ("cache_control",)),
}
# Server-tool blocks ([ANT] ContentBlockParam) replayed in assistant turns:
# accepted with a type check only.
ANTHROPIC_SERVER_TOOL_BLOCKS = frozenset({
    "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
    "code_execution_tool_result", "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result", "tool_search_tool_result", "container_upload",
})
_ANT_ANY_ROLE = frozenset({"text", "image", "document", "search_result"})
# Block types each role may carry.
ANTHROPIC_BLOCKS_BY_ROLE: dict[str, frozenset[str]] = {
    "user": _ANT_ANY_ROLE | {"tool_result"},
    "assistant": _ANT_ANY_ROLE | {"tool_use", "thinking", "redacted_thinking"} | ANTHROPIC_SERVER_TOOL_BLOCKS,
}
# [ANT] ToolResultBlockParam.content array items.
ANTHROPIC_TOOL_RESULT_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_reference"})


def validate_anthropic(
    req: Any,
    allow_keys: Iterable[str] = (),
    allow_inflight: bool = False,
    strict_order: bool = False,  # accepted for a uniform signature; Anthropic has no ordered variant
) -> list[Violation]:
    """All violations of one Messages request body."""
    out: list[Violation] = []
    if not isinstance(req, dict):
        _v(out, "(request)", f"must be a JSON object, got {_type_name(req)}")
        return out
    _anthropic_top_level(out, req, set(allow_keys))
    if "system" in req:
        _anthropic_system(out, req["system"])
    messages = req.get("messages")
    if not isinstance(messages, list):
        if "messages" in req:
            _v(out, "messages", f"must be an array, got {_type_name(messages)}")
        return out
    if not messages:
        _v(out, "messages", "must be a non-empty array")
        return out
    for i, msg in enumerate(messages):
        _anthropic_message(out, f"messages[{i}]", msg)
    _anthropic_turns(out, messages)
    _anthropic_pairing(out, messages, allow_inflight)
    if "tools" in req:
        _anthropic_tools(out, req["tools"])
    if "tool_choice" in req:
        _anthropic_tool_choice(out, req["tool_choice"])
    return out


def _anthropic_top_level(out: list[Violation], req: dict, allow_keys: set[str]) -> None:
    if "messages" not in req:
        _v(out, "messages", "missing (required)")
    for key in req:
        if key not in ANTHROPIC_TOP_LEVEL_KEYS and key not in allow_keys:
            _v(out, key, "unknown top-level key (not a Messages request parameter)")


def _anthropic_system(out: list[Violation], system: Any) -> None:
    """[ANT] system: string or array of text blocks."""
    if isinstance(system, str):
        return
    if not isinstance(system, list):
        _v(out, "system", f"must be a string or an array of text blocks, got {_type_name(system)}")
        return
    for k, block in enumerate(system):
        w = f"system[{k}]"
        if not isinstance(block, dict) or block.get("type") != "text":
            got = block.get("type") if isinstance(block, dict) else _type_name(block)
            _v(out, w, f"system blocks must be text blocks, got {got!r}")
            continue
        _anthropic_block(out, w, block, "system")


def _anthropic_message(out: list[Violation], where: str, msg: Any) -> None:
    if not isinstance(msg, dict):
        _v(out, where, f"message must be an object, got {_type_name(msg)}")
        return
    role = msg.get("role")
    for key in msg:
        if key not in ("role", "content"):
            _v(out, f"{where}.{key}", f"unexpected key '{key}' on a message (allowed: content, role)")
    if role not in ANTHROPIC_ROLES:
        if role == "system":
            _v(out, f"{where}.role", "role 'system' is not allowed in messages; use the top-level 'system' parameter")
        elif "role" not in msg:
            _v(out, f"{where}.role", "missing")
        else:
            _v(out, f"{where}.role", f"{role!r} is not one of user, assistant")
        return
    if "content" not in msg:
        _v(out, f"{where}.content", "missing")
        return
    content = msg["content"]
    if isinstance(content, str):
        if not content.strip():
            _v(out, f"{where}.content", "empty or whitespace-only text content")
        return
    if not isinstance(content, list):
        _v(out, f"{where}.content", f"must be a string or an array of content blocks, got {_type_name(content)}")
        return
    if not content:
        _v(out, f"{where}.content", "empty array of content blocks")
        return
    for k, block in enumerate(content):
        _anthropic_block(out, f"{where}.content[{k}]", block, role)


def _anthropic_block(out: list[Violation], where: str, block: Any, role: str) -> None:
    """One content block: type allowed for `role` ("system", "tool_result" for nested), exact keys."""
    if not isinstance(block, dict):
        _v(out, where, f"content block must be an object, got {_type_name(block)}")
        return
    btype = block.get("type")
    if role == "system":
        allowed = frozenset({"text"})
    elif role == "tool_result":
        allowed = ANTHROPIC_TOOL_RESULT_BLOCKS
    else:
        allowed = ANTHROPIC_BLOCKS_BY_ROLE[role]
    if btype not in allowed:
        known = btype in ANTHROPIC_BLOCK_KEYS or btype in ANTHROPIC_SERVER_TOOL_BLOCKS
        if known and role in ANTHROPIC_ROLES:
            _v(out, f"{where}.type", f"a {btype!r} block is not allowed in {_a(role)} message")
        elif known:
            _v(out, f"{where}.type", f"a {btype!r} block is not allowed in {role} content")
        else:
            _v(out, f"{where}.type", f"unknown content block type {btype!r}")
        return
    if btype in ANTHROPIC_SERVER_TOOL_BLOCKS:
        return  # loosely: type check only
    required, optional = ANTHROPIC_BLOCK_KEYS[btype]
    _check_keys(out, where, block, required, optional, f"a {btype} block")
    if "cache_control" in block:
        _anthropic_cache_control(out, f"{where}.cache_control", block["cache_control"])

    if btype == "text":
        text = block.get("text")
        if "text" in block and not isinstance(text, str):
            _v(out, f"{where}.text", f"must be a string, got {_type_name(text)}")
        elif isinstance(text, str) and not text.strip():
            _v(out, f"{where}.text", "text block is empty or whitespace-only")
    elif btype == "image":
        _anthropic_image_source(out, f"{where}.source", block.get("source"))
    elif btype in ("document", "search_result"):
        pass  # allowed; not checked further
    elif btype == "tool_use":
        tid = block.get("id")
        if "id" in block and (not isinstance(tid, str) or not ANTHROPIC_TOOL_USE_ID_RE.match(tid)):
            _v(out, f"{where}.id", f"tool_use id {tid!r} does not match ^[a-zA-Z0-9_-]+$")
        if "name" in block:
            _check_tool_name(out, f"{where}.name", block["name"])
        if "input" in block and not isinstance(block["input"], dict):
            _v(out, f"{where}.input", f"must be an object, got {_type_name(block['input'])}")
    elif btype == "tool_result":
        if "tool_use_id" in block and (not isinstance(block["tool_use_id"], str) or not block["tool_use_id"]):
            _v(out, f"{where}.tool_use_id", "must be a non-empty string")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            _v(out, f"{where}.is_error", f"must be a boolean, got {_type_name(block['is_error'])}")
        if "content" in block:
            inner = block["content"]
            if isinstance(inner, list):
                for k, sub in enumerate(inner):
                    _anthropic_block(out, f"{where}.content[{k}]", sub, "tool_result")
            elif not isinstance(inner, str):
                _v(out, f"{where}.content", f"must be a string or an array of blocks, got {_type_name(inner)}")
    elif btype == "thinking":
        if "thinking" in block and not isinstance(block["thinking"], str):
            _v(out, f"{where}.thinking", f"must be a string, got {_type_name(block['thinking'])}")
        if "signature" in block and (not isinstance(block["signature"], str) or not block["signature"]):
            _v(out, f"{where}.signature", "must be a non-empty string")
    elif btype == "redacted_thinking":
        if "data" in block and not isinstance(block["data"], str):
            _v(out, f"{where}.data", f"must be a string, got {_type_name(block['data'])}")
    elif btype == "tool_reference":
        if "tool_name" in block and not isinstance(block["tool_name"], str):
            _v(out, f"{where}.tool_name", f"must be a string, got {_type_name(block['tool_name'])}")


def _anthropic_image_source(out: list[Violation], where: str, source: Any) -> None:
    """[ANT] image source: {type: base64, media_type, data} | {type: url, url}."""
    if source is None:
        return  # missing key already reported
    if not isinstance(source, dict):
        _v(out, where, f"must be an object, got {_type_name(source)}")
        return
    stype = source.get("type")
    if stype == "base64":
        _check_keys(out, where, source, ("type", "media_type", "data"), (), "a base64 image source")
        if "media_type" in source and source["media_type"] not in ANTHROPIC_IMAGE_MEDIA_TYPES:
            _v(out, f"{where}.media_type", f"{source['media_type']!r} is not one of {', '.join(sorted(ANTHROPIC_IMAGE_MEDIA_TYPES))}")
        if "data" in source and not isinstance(source["data"], str):
            _v(out, f"{where}.data", f"must be a string, got {_type_name(source['data'])}")
    elif stype == "url":
        _check_keys(out, where, source, ("type", "url"), (), "a url image source")
        if "url" in source and (not isinstance(source["url"], str) or not source["url"]):
            _v(out, f"{where}.url", "must be a non-empty string")
    else:
        _v(out, f"{where}.type", f"image source type {stype!r} is not one of base64, url")


def _anthropic_cache_control(out: list[Violation], where: str, cc: Any) -> None:
    if cc is None:
        return
    if not isinstance(cc, dict) or cc.get("type") != "ephemeral":
        _v(out, where, "must be {type: 'ephemeral', ttl?}")
        return
    _check_keys(out, where, cc, ("type",), ("ttl",), "cache_control")
    if "ttl" in cc and cc["ttl"] not in ("5m", "1h"):
        _v(out, f"{where}.ttl", f"{cc['ttl']!r} is not one of 5m, 1h")


def _anthropic_turns(out: list[Violation], messages: list) -> None:
    """First message is user; user and assistant strictly alternate."""
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    if roles[0] in ANTHROPIC_ROLES and roles[0] != "user":
        _v(out, "messages[0].role", f"the first message must be a user turn, got {roles[0]!r}")
    for i in range(1, len(roles)):
        if roles[i] in ANTHROPIC_ROLES and roles[i] == roles[i - 1]:
            _v(out, f"messages[{i}].role", f"two {roles[i]} messages in a row (messages[{i - 1}] and messages[{i}]); turns must alternate")


def _blocks(msg: Any) -> list:
    if isinstance(msg, dict) and isinstance(msg.get("content"), list):
        return msg["content"]
    return []


def _tool_use_ids(msg: Any) -> list[tuple[int, str]]:
    """(block index, id) of an assistant message's tool_use blocks."""
    if not isinstance(msg, dict) or msg.get("role") != "assistant":
        return []
    return [(k, b["id"]) for k, b in enumerate(_blocks(msg))
            if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)]


def _anthropic_pairing(out: list[Violation], messages: list, allow_inflight: bool) -> None:
    """[ANT-TU] tool_use answered in the very next user message, results first, once each."""
    issued_at: dict[str, int] = {}
    for i, msg in enumerate(messages):
        for k, tid in _tool_use_ids(msg):
            if tid in issued_at:
                _v(out, f"messages[{i}].content[{k}].id", f"duplicate tool_use id {tid!r} (also in messages[{issued_at[tid]}])")
            else:
                issued_at[tid] = i

    last = len(messages) - 1
    for i, msg in enumerate(messages):
        uses = _tool_use_ids(msg)
        if uses:
            nxt = messages[i + 1] if i < last else None
            nxt_is_user = isinstance(nxt, dict) and nxt.get("role") == "user"
            results = {b.get("tool_use_id") for b in _blocks(nxt)
                       if isinstance(b, dict) and b.get("type") == "tool_result"} if nxt_is_user else set()
            for k, tid in uses:
                if tid in results:
                    continue
                if nxt is None:
                    if allow_inflight:
                        continue
                    why = "the request ends (--allow-inflight accepts the tool_use blocks of a final assistant message)"
                elif not nxt_is_user:
                    why = f"messages[{i + 1}] is not a user message"
                else:
                    why = f"no tool_result with this id in the next message messages[{i + 1}]"
                _v(out, f"messages[{i}].content[{k}].id", f"tool_use {tid!r} unanswered: {why}")

        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        prev_ids = {tid for _, tid in _tool_use_ids(messages[i - 1])} if i > 0 else set()
        answered: dict[str, int] = {}
        first_other: int | None = None
        for k, block in enumerate(_blocks(msg)):
            if not isinstance(block, dict):
                continue
            if block.get("type") != "tool_result":
                if first_other is None:
                    first_other = k
                continue
            w = f"messages[{i}].content[{k}]"
            if first_other is not None:
                _v(out, w, f"tool_result comes after {_a(str(_blocks(msg)[first_other].get('type')))} block "
                   f"(content[{first_other}]); tool_result blocks must come first")
            tid = block.get("tool_use_id")
            if not isinstance(tid, str) or not tid:
                continue
            if tid not in prev_ids:
                hint = f" (its tool_use is in messages[{issued_at[tid]}])" if tid in issued_at else ""
                _v(out, f"{w}.tool_use_id", f"tool_result {tid!r} does not answer a tool_use of the immediately "
                   f"preceding assistant message{hint}")
            elif tid in answered:
                _v(out, f"{w}.tool_use_id", f"tool_use {tid!r} already answered at content[{answered[tid]}]")
            else:
                answered[tid] = k


def _anthropic_tools(out: list[Violation], tools: Any) -> None:
    """[ANT] tools: custom {name, description?, input_schema, cache_control?}; server tools loosely."""
    if not isinstance(tools, list):
        _v(out, "tools", f"must be an array, got {_type_name(tools)}")
        return
    for k, tool in enumerate(tools):
        w = f"tools[{k}]"
        if not isinstance(tool, dict):
            _v(out, w, f"tool must be an object, got {_type_name(tool)}")
            continue
        ttype = tool.get("type", "custom")
        if ttype != "custom":
            if not isinstance(tool.get("name"), str):
                _v(out, f"{w}.name", "server tool needs a string name")
            continue
        _check_keys(out, w, tool, ("name", "input_schema"), ("type", "description", "cache_control", "strict"), "a custom tool")
        if "name" in tool:
            _check_tool_name(out, f"{w}.name", tool["name"])
        if "description" in tool and not isinstance(tool["description"], str):
            _v(out, f"{w}.description", f"must be a string, got {_type_name(tool['description'])}")
        if "input_schema" in tool and not isinstance(tool["input_schema"], dict):
            _v(out, f"{w}.input_schema", f"must be an object (a JSON Schema), got {_type_name(tool['input_schema'])}")
        if "cache_control" in tool:
            _anthropic_cache_control(out, f"{w}.cache_control", tool["cache_control"])


def _anthropic_tool_choice(out: list[Violation], choice: Any) -> None:
    """[ANT] tool_choice: {type: auto|any|tool|none, name?, disable_parallel_tool_use?}."""
    if not isinstance(choice, dict):
        _v(out, "tool_choice", f"must be an object, got {_type_name(choice)}")
        return
    ctype = choice.get("type")
    if ctype not in ("auto", "any", "tool", "none"):
        _v(out, "tool_choice.type", f"{ctype!r} is not one of auto, any, tool, none")
    if ctype == "tool" and not isinstance(choice.get("name"), str):
        _v(out, "tool_choice.name", "required (a string) when type is 'tool'")


# ==========================================================================
# Entry point used by the tests and the CLI


VALIDATORS = {"openai": validate_openai, "anthropic": validate_anthropic}


def validate_request(
    req: Any,
    api: str,
    allow_keys: Iterable[str] = (),
    allow_inflight: bool = False,
    strict_order: bool = False,
) -> list[Violation]:
    """All violations of one request body for `api` ("openai" or "anthropic")."""
    return VALIDATORS[api](req, allow_keys=allow_keys, allow_inflight=allow_inflight, strict_order=strict_order)


# ==========================================================================
# Files

def _skip_name(name: str) -> bool:
    return name.startswith(".") or name.startswith("report") or name.startswith("manifest") or name.endswith(".rejects.jsonl")


def collect_files(paths: Iterable[str]) -> Iterator[str]:
    """Named files as given; directories walked (sorted) for *.jsonl / *.json / *.traj.

    `.traj`: compactor's `-o DIR/` keeps each input's file name, so a converted
    SWE-agent trajectory is a JSON Lines file still named `.traj`.
    """
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith((".jsonl", ".json", ".traj")) and not _skip_name(name):
                        yield os.path.join(root, name)
        else:
            yield path


class FileError(Exception):
    """A file or line that cannot be read as JSON (exit status 2)."""


def iter_records(path: str) -> Iterator[tuple[str, Any]]:
    """(location, record) pairs; location is PATH:LINE, PATH[k] or PATH.

    A line that is not JSON yields (location, FileError).
    """
    try:
        with open(path, encoding="utf-8") as fh:
            if path.endswith(".json"):
                text = fh.read()
                try:
                    doc = json.loads(text)
                except ValueError as exc:
                    yield path, FileError(f"not JSON ({exc})")
                    return
                if isinstance(doc, list):
                    for k, rec in enumerate(doc):
                        yield f"{path}[{k}]", rec
                else:
                    yield path, doc
                return
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as exc:
                    yield f"{path}:{lineno}", FileError(f"not JSON ({exc})")
                    continue
                yield f"{path}:{lineno}", rec
    except (OSError, UnicodeDecodeError) as exc:
        raise FileError(f"cannot read: {exc}") from exc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check request bodies against the OpenAI / Anthropic API references.")
    ap.add_argument("--api", required=True, choices=sorted(VALIDATORS))
    ap.add_argument("--allow-key", action="append", default=[], metavar="KEY",
                    help="top-level key accepted as metadata (repeatable)")
    ap.add_argument("--allow-inflight", action="store_true",
                    help="accept unanswered calls of a final assistant message")
    ap.add_argument("--strict-order", action="store_true",
                    help="openai: also require tool results in call order")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="print at most the first 20 violations and the summary line")
    ap.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    args = ap.parse_args(argv)

    shown = 0
    n_violations = n_records = n_files = 0
    status = 0

    def report(line: str) -> None:
        nonlocal shown
        if not args.quiet or shown < 20:
            print(line)
        shown += 1

    for path in collect_files(args.paths):
        n_files += 1
        try:
            for loc, rec in iter_records(path):
                n_records += 1
                if isinstance(rec, FileError):
                    n_violations += 1
                    status = 2
                    report(f"{loc}: (record): {rec}")
                    continue
                for viol in validate_request(rec, args.api, args.allow_key, args.allow_inflight, args.strict_order):
                    n_violations += 1
                    status = max(status, 1)
                    report(f"{loc}: {viol}")
        except FileError as exc:
            n_violations += 1
            status = 2
            report(f"{path}: (file): {exc}")

    print(f"{n_violations} violations in {n_records} records ({n_files} files)")
    return status


if __name__ == "__main__":
    sys.exit(main())
