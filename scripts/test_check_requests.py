"""Tests for scripts/check_requests.py: each real-world violation is caught.

Run from the repository root with either of:
  python3 -m unittest scripts/test_check_requests.py -v
  python3 -m pytest scripts/test_check_requests.py
All cases are small inline requests written for these tests.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check_requests  # noqa: E402
from check_requests import validate_request  # noqa: E402


def call(cid: str, name: str = "bash", args: str = '{"cmd": "ls"}') -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def user(text: str = "Fix the failing test.") -> dict:
    return {"role": "user", "content": text}


def assistant_calls(*calls: dict, content: str | None = None) -> dict:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool(cid: str, text: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": text}


class Base(unittest.TestCase):
    api = "openai"

    def check(self, req: dict, **kw) -> list[str]:
        return [str(v) for v in validate_request(req, self.api, **kw)]

    def assertViolation(self, req: dict, where: str, fragment: str, **kw) -> list[str]:
        found = self.check(req, **kw)
        hits = [v for v in found if v.startswith(where + ":") and fragment in v]
        self.assertTrue(hits, f"expected '{where}: ...{fragment}...' in:\n  " + "\n  ".join(found or ["(none)"]))
        return found

    def assertClean(self, req: dict, **kw) -> None:
        found = self.check(req, **kw)
        self.assertEqual(found, [], "expected no violation, got:\n  " + "\n  ".join(found))


# ---------------------------------------------------------------------------
# OpenAI Chat Completions: violations


class OpenAIViolations(Base):
    api = "openai"

    def test_tool_call_typed_function_call(self):
        req = {"messages": [user(), {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function_call", "function": {"name": "bash", "arguments": "{}"}}]}, tool("c1")]}
        self.assertViolation(req, "messages[1].tool_calls[0].type", "tool call type 'function_call' is not 'function'")

    def test_input_text_part(self):
        req = {"messages": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}
        self.assertViolation(req, "messages[0].content[0].type", "content part type 'input_text' is not allowed in a user message")

    def test_output_text_part(self):
        req = {"messages": [user(), {"role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]}
        self.assertViolation(req, "messages[1].content[0].type", "content part type 'output_text' is not allowed in an assistant message")

    def test_reasoning_part_with_encrypted_content(self):
        req = {"messages": [user(), {"role": "assistant", "content": [
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB..."},
            {"type": "text", "text": "Done."}]}]}
        found = self.assertViolation(req, "messages[1].content[0].encrypted_content", "part carries encrypted_content")
        self.assertIn("messages[1].content[0].type: content part type 'reasoning' is not allowed in an assistant message "
                      "(allowed: refusal, text): a Responses API reasoning item, not a content part", found)

    def test_assistant_calls_then_second_assistant_before_results(self):
        req = {"messages": [user(), assistant_calls(call("c1")),
                            {"role": "assistant", "content": "Let me look."}, tool("c1")]}
        found = self.assertViolation(req, "messages[1].tool_calls[0].id",
                                     "tool call 'c1' unanswered: messages[2] (role 'assistant') comes before its tool result")
        self.assertIn("messages[3].tool_call_id: orphan tool result 'c1': not a call of the nearest preceding assistant "
                      "message messages[2] (it is a call of messages[1])", found)

    def test_parallel_calls_as_separate_assistant_messages(self):
        # call A, call B, result A, result B
        req = {"messages": [user(), assistant_calls(call("A")), assistant_calls(call("B")), tool("A"), tool("B")]}
        found = self.assertViolation(req, "messages[1].tool_calls[0].id",
                                     "tool call 'A' unanswered: messages[2] (role 'assistant') comes before its tool result")
        self.assertIn("messages[3].tool_call_id: orphan tool result 'A': not a call of the nearest preceding assistant "
                      "message messages[2] (it is a call of messages[1])", found)
        self.assertEqual(len(found), 2, found)  # result B is fine

    def test_claude_thinking_part_empty_with_signature(self):
        req = {"messages": [user(), {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "", "signature": "EqQBCkYIBRgCKkD..."},
            {"type": "text", "text": "Running the tests."}]}]}
        self.assertViolation(req, "messages[1].content[0].type",
                             "content part type 'thinking' is not allowed in an assistant message")

    def test_tool_reference_part(self):
        req = {"messages": [user(), assistant_calls(call("c1", "ToolSearch", '{"query": "select:Read"}')),
                            {"role": "tool", "tool_call_id": "c1",
                             "content": [{"type": "tool_reference", "tool_name": "Read"}]}]}
        self.assertViolation(req, "messages[2].content[0].type",
                             "content part type 'tool_reference' is not allowed in a tool message (allowed: text)")

    def test_orphan_tool_result(self):
        req = {"messages": [user(), {"role": "assistant", "content": "Sure."}, tool("ghost")]}
        self.assertViolation(req, "messages[2].tool_call_id",
                             "orphan tool result 'ghost': not a call of the nearest preceding assistant message messages[1]")

    def test_orphan_tool_result_without_any_assistant(self):
        req = {"messages": [user(), tool("ghost")]}
        self.assertViolation(req, "messages[1].tool_call_id",
                             "orphan tool result 'ghost': no preceding assistant message with tool_calls")

    def test_claude_code_keys_on_message(self):
        msg = {"role": "user", "content": "hi", "parentUuid": "8f1c", "message": {"role": "user", "content": "hi"},
               "toolUseResult": {"stdout": ""}}
        found = self.check({"messages": [msg]})
        for key in ("parentUuid", "message", "toolUseResult"):
            self.assertIn(f"messages[0].{key}: unexpected key '{key}' on a user message (allowed: content, name, role)", found)

    def test_tool_call_part(self):
        req = {"messages": [user(), {"role": "assistant", "content": [
            {"type": "tool_call", "id": "c1", "name": "bash", "arguments": "{}"}]}]}
        self.assertViolation(req, "messages[1].content[0].type",
                             "content part type 'tool_call' is not allowed in an assistant message")

    def test_tool_output_part(self):
        req = {"messages": [user(), assistant_calls(call("c1")),
                            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "tool_output", "output": "ok"}]}]}
        self.assertViolation(req, "messages[2].content[0].type",
                             "content part type 'tool_output' is not allowed in a tool message")

    def test_arguments_not_a_string(self):
        req = {"messages": [user(), assistant_calls({"id": "c1", "type": "function",
                                                     "function": {"name": "bash", "arguments": {"cmd": "ls"}}}), tool("c1")]}
        self.assertViolation(req, "messages[1].tool_calls[0].function.arguments",
                             "must be a JSON-encoded string, got object")

    def test_arguments_not_json(self):
        req = {"messages": [user(), assistant_calls(call("c1", args='{"cmd": ')), tool("c1")]}
        self.assertViolation(req, "messages[1].tool_calls[0].function.arguments", "not valid JSON")

    def test_content_null_on_user_message(self):
        req = {"messages": [{"role": "user", "content": None}]}
        found = self.assertViolation(req, "messages[0].content", "null; a user message needs a string or an array of parts")
        self.assertEqual(len(found), 1, found)

    def test_empty_assistant_turn(self):
        req = {"messages": [user(), {"role": "assistant", "content": ""}, user("Go on.")]}
        self.assertViolation(req, "messages[1].content", "empty turn: no text, image or tool call")

    def test_whitespace_only_user_text_parts_are_an_empty_turn(self):
        req = {"messages": [{"role": "user", "content": [{"type": "text", "text": " \n"}]}]}
        self.assertViolation(req, "messages[0].content", "empty turn")

    def test_unknown_top_level_key(self):
        req = {"messages": [user()], "meta": {"source": "x"}}
        self.assertViolation(req, "meta", "unknown top-level key")

    def test_allow_key_accepts_metadata_keys(self):
        req = {"id": "s1", "compaction": {"mode": "lean"}, "messages": [user()]}
        self.assertViolation(req, "id", "unknown top-level key")
        self.assertClean(req, allow_keys=["id", "compaction"])

    def test_deprecated_function_role(self):
        req = {"messages": [user(), {"role": "function", "name": "bash", "content": "ok"}]}
        self.assertViolation(req, "messages[1].role", "deprecated role 'function'")

    def test_unanswered_call_mid_request(self):
        req = {"messages": [user(), assistant_calls(call("c1"), call("c2")), tool("c1"), user("and?")]}
        self.assertViolation(req, "messages[1].tool_calls[1].id",
                             "tool call 'c2' unanswered: messages[3] (role 'user') comes before its tool result")

    def test_result_after_user_message(self):
        req = {"messages": [user(), assistant_calls(call("c1")), user("wait"), tool("c1")]}
        self.assertViolation(req, "messages[3].tool_call_id",
                             "tool result 'c1' does not directly follow messages[1]: messages[2] (role 'user') comes between")

    def test_call_answered_twice(self):
        req = {"messages": [user(), assistant_calls(call("c1")), tool("c1"), tool("c1")]}
        self.assertViolation(req, "messages[3].tool_call_id", "tool call 'c1' already answered at messages[2]")

    def test_duplicate_call_ids_in_request(self):
        req = {"messages": [user(), assistant_calls(call("c1")), tool("c1"), assistant_calls(call("c1")), tool("c1"),
                            {"role": "assistant", "content": "Done."}]}
        self.assertViolation(req, "messages[3].tool_calls[0].id", "duplicate tool call id 'c1' (also messages[1].tool_calls[0].id)")

    def test_final_call_unanswered_without_allow_inflight(self):
        req = {"messages": [user(), assistant_calls(call("c1"))]}
        self.assertViolation(req, "messages[1].tool_calls[0].id", "tool call 'c1' unanswered: the request ends")

    def test_inflight_applies_only_to_the_last_message(self):
        req = {"messages": [user(), assistant_calls(call("c1"), call("c2")), tool("c1")]}
        self.assertViolation(req, "messages[1].tool_calls[1].id", "tool call 'c2' unanswered: the request ends",
                             allow_inflight=True)

    def test_strict_order_reports_results_out_of_call_order(self):
        req = {"messages": [user(), assistant_calls(call("a"), call("b")), tool("b"), tool("a"),
                            {"role": "assistant", "content": "Both done."}]}
        self.assertClean(req)  # the API allows any order
        self.assertViolation(req, "messages[2].tool_call_id",
                             "[strict-order] tool result 'b' out of call order (expected 'a' next)", strict_order=True)

    def test_bad_function_name(self):
        req = {"messages": [user(), assistant_calls(call("c1", "multi_tool_use.parallel")), tool("c1")]}
        self.assertViolation(req, "messages[1].tool_calls[0].function.name", "does not match ^[a-zA-Z0-9_-]{1,64}$")

    def test_text_part_with_extra_key(self):
        req = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]}
        self.assertViolation(req, "messages[0].content[0].cache_control", "unexpected key 'cache_control' on a text part")

    def test_tools_entry_shape(self):
        req = {"messages": [user()], "tools": [{"name": "bash", "input_schema": {"type": "object"}}]}
        found = self.assertViolation(req, "tools[0]", "a tool is missing required key 'type'")
        self.assertIn("tools[0].input_schema: unexpected key 'input_schema' on a tool (allowed: function, type)", found)

    def test_reasoning_content_must_be_a_string(self):
        req = {"messages": [user(), {"role": "assistant", "content": "ok", "reasoning_content": ["x"]}]}
        self.assertViolation(req, "messages[1].reasoning_content", "must be a string, got array")


# ---------------------------------------------------------------------------
# OpenAI Chat Completions: valid requests


class OpenAIValid(Base):
    api = "openai"

    def test_system_prompt_and_parallel_calls_answered_in_order(self):
        req = {
            "model": "gpt-4.1", "max_tokens": 512, "temperature": 0,
            "messages": [
                {"role": "system", "content": "You are a coding agent."},
                user(),
                assistant_calls(call("c1", "read_file", '{"path": "a.py"}'), call("c2", "Grep", '{"pattern": "def"}'),
                                content="Reading both files."),
                tool("c1", "print(1)"), tool("c2", "a.py:1:def f():"),
                {"role": "assistant", "content": "Found it."},
            ],
            "tools": [
                {"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                                  "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
                {"type": "function", "function": {"name": "Grep", "parameters": {"type": "object"}, "strict": False}},
            ],
            "tool_choice": "auto",
        }
        self.assertClean(req)
        self.assertClean(req, strict_order=True)

    def test_image_part(self):
        req = {"messages": [
            {"role": "developer", "content": [{"type": "text", "text": "Describe screenshots."}]},
            {"role": "user", "content": [{"type": "text", "text": "What is wrong here?"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}}]},
        ]}
        self.assertClean(req)

    def test_image_only_user_turn_is_not_empty(self):
        req = {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]}
        self.assertClean(req)

    def test_reasoning_content(self):
        req = {"messages": [user(), {"role": "assistant", "content": "The bug is in a.py.",
                                     "reasoning_content": "The traceback points at line 3."}]}
        self.assertClean(req)

    def test_inflight_last_call_with_allow_inflight(self):
        req = {"messages": [user(), assistant_calls(call("c1")), tool("c1"),
                            assistant_calls(call("c2", "bash", '{"cmd": "pytest"}'), content="Running tests.")]}
        self.assertClean(req, allow_inflight=True)


# ---------------------------------------------------------------------------
# Anthropic Messages


def a_tool_use(tid: str, name: str = "bash") -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": {"cmd": "ls"}}


def a_tool_result(tid: str, text: str = "ok") -> dict:
    return {"type": "tool_result", "tool_use_id": tid, "content": text}


class AnthropicViolations(Base):
    api = "anthropic"

    def test_tool_result_not_right_after_its_tool_use(self):
        req = {"messages": [
            user(),
            {"role": "assistant", "content": [a_tool_use("toolu_1")]},
            {"role": "user", "content": "Any news?"},
            {"role": "assistant", "content": "Still waiting."},
            {"role": "user", "content": [a_tool_result("toolu_1")]},
        ]}
        found = self.assertViolation(req, "messages[1].content[0].id",
                                     "tool_use 'toolu_1' unanswered: no tool_result with this id in the next message messages[2]")
        self.assertIn("messages[4].content[0].tool_use_id: tool_result 'toolu_1' does not answer a tool_use of the "
                      "immediately preceding assistant message (its tool_use is in messages[1])", found)

    def test_two_user_messages_in_a_row(self):
        req = {"messages": [user("first"), user("second")]}
        self.assertViolation(req, "messages[1].role", "two user messages in a row (messages[0] and messages[1]); turns must alternate")

    def test_system_role_message_in_messages(self):
        req = {"messages": [{"role": "system", "content": "Be brief."}, user()]}
        self.assertViolation(req, "messages[0].role", "role 'system' is not allowed in messages; use the top-level 'system' parameter")

    def test_thinking_block_without_signature(self):
        req = {"messages": [user(), {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Let me check."}, {"type": "text", "text": "Checking."}]}]}
        self.assertViolation(req, "messages[1].content[0]", "a thinking block is missing required key 'signature'")

    def test_tool_use_in_user_message(self):
        req = {"messages": [{"role": "user", "content": [{"type": "text", "text": "run it"}, a_tool_use("toolu_1")]}]}
        self.assertViolation(req, "messages[0].content[1].type", "a 'tool_use' block is not allowed in a user message")

    def test_empty_text_block(self):
        req = {"messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]}
        self.assertViolation(req, "messages[0].content[0].text", "text block is empty or whitespace-only")

    def test_tool_result_after_text_block(self):
        req = {"messages": [user(), {"role": "assistant", "content": [a_tool_use("toolu_1")]},
                            {"role": "user", "content": [{"type": "text", "text": "Here:"}, a_tool_result("toolu_1")]}]}
        self.assertViolation(req, "messages[2].content[1]", "tool_result comes after a text block (content[0]); tool_result blocks must come first")

    def test_first_message_must_be_user(self):
        req = {"messages": [{"role": "assistant", "content": "Hello."}, user()]}
        self.assertViolation(req, "messages[0].role", "the first message must be a user turn")

    def test_extra_message_key(self):
        req = {"messages": [{"role": "user", "content": "hi", "timestamp": "2025-01-01T00:00:00Z"}]}
        self.assertViolation(req, "messages[0].timestamp", "unexpected key 'timestamp' on a message")

    def test_unknown_block_type(self):
        req = {"messages": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}
        self.assertViolation(req, "messages[0].content[0].type", "unknown content block type 'input_text'")

    def test_final_tool_use_unanswered_without_allow_inflight(self):
        req = {"messages": [user(), {"role": "assistant", "content": [a_tool_use("toolu_1")]}]}
        self.assertViolation(req, "messages[1].content[0].id", "tool_use 'toolu_1' unanswered: the request ends")


class AnthropicValid(Base):
    api = "anthropic"

    def test_full_request(self):
        req = {
            "model": "claude-sonnet-4-5", "max_tokens": 1024,
            "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "What does this screenshot show?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Two reads at once.", "signature": "EqQBCkYIBRgC"},
                    {"type": "text", "text": "Reading both files."},
                    a_tool_use("toolu_1", "Read"), a_tool_use("toolu_2", "Read")]},
                {"role": "user", "content": [
                    a_tool_result("toolu_1"),
                    {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
                     "content": [{"type": "text", "text": "No such file"}]},
                    {"type": "text", "text": "Keep going."}]},
                {"role": "assistant", "content": [a_tool_use("toolu_3", "Bash")]},
            ],
            "tools": [{"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}},
                      {"name": "Bash", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "auto"},
        }
        self.assertClean(req, allow_inflight=True)


# ---------------------------------------------------------------------------
# Command line


class CommandLine(unittest.TestCase):
    def run_cli(self, *args: str) -> tuple[int, str]:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = check_requests.main(list(args))
        return code, buf.getvalue()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name: str, text: str) -> str:
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return path

    def test_clean_directory_exits_0(self):
        self.write("sub/a.jsonl", json.dumps({"id": "x", "messages": [user()]}) + "\n\n")
        self.write("report.jsonl", "not json\n")          # skipped
        self.write("out.rejects.jsonl", "not json\n")     # skipped
        code, text = self.run_cli("--api", "openai", "--allow-key", "id", self.dir)
        self.assertEqual(code, 0, text)
        self.assertEqual(text.strip(), "0 violations in 1 records (1 files)")

    def test_violation_lines_and_exit_1(self):
        path = self.write("a.jsonl", json.dumps({"messages": [user()]}) + "\n" + json.dumps({"messages": [], "x": 1}) + "\n")
        code, text = self.run_cli("--api", "openai", path)
        self.assertEqual(code, 1)
        lines = text.splitlines()
        self.assertIn(f"{path}:2: x: unknown top-level key (not a Chat Completions request parameter)", lines)
        self.assertIn(f"{path}:2: messages: must be a non-empty array", lines)
        self.assertEqual(lines[-1], "2 violations in 2 records (1 files)")

    def test_json_array_locations(self):
        path = self.write("a.json", json.dumps([{"messages": [user()]}, {"messages": [user(), user()]}]))
        code, text = self.run_cli("--api", "anthropic", path)
        self.assertEqual(code, 1)
        self.assertIn(f"{path}[1]: messages[1].role: two user messages in a row", text)

    def test_bad_json_line_exits_2(self):
        path = self.write("a.jsonl", json.dumps({"messages": [user()]}) + "\n{oops\n")
        code, text = self.run_cli("--api", "openai", path)
        self.assertEqual(code, 2)
        self.assertIn(f"{path}:2: (record): not JSON", text)

    def test_missing_file_exits_2(self):
        code, text = self.run_cli("--api", "openai", os.path.join(self.dir, "nope.jsonl"))
        self.assertEqual(code, 2)
        self.assertIn("cannot read", text)

    def test_quiet_prints_at_most_20(self):
        bad = json.dumps({"messages": [user()], "junk": 1})
        path = self.write("a.jsonl", "\n".join([bad] * 30) + "\n")
        code, text = self.run_cli("--api", "openai", "-q", path)
        self.assertEqual(code, 1)
        lines = text.splitlines()
        self.assertEqual(len(lines), 21)
        self.assertEqual(lines[-1], "30 violations in 30 records (1 files)")

    def test_usage_error_exits_2(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as ctx:
            check_requests.main(["--api", "gemini", "x.jsonl"])
        self.assertEqual(ctx.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
