#!/usr/bin/env python3
"""A Chat Completions server for the summarizer's integration tests (stdlib only).

Listens on 127.0.0.1, port 0 (the system picks one), prints the port on its first
line of standard output, and answers POST /v1/chat/completions:

  ok           200, content "## Active Task ... ## Goal\\nModel summary of: FIRST TURN LINE"
               and a usage of prompt_tokens = len(user content) // 4, completion_tokens = 7
  429-then-ok  the first --fail-first requests get 429 (Retry-After: 0), then ok
  500          always 500
  sleep        sleeps --sleep seconds, then ok (the client's timeout fires first)
  bad-json     200 with a body that is not JSON
  empty        200 with an empty content
  over-budget  200 with a content far over any summary budget

A prompt holding `SUMMARIZER-TEST-MODE=NAME` is answered in mode NAME instead.
Every request is appended to --log as one JSON line: path, authorization header,
body (as sent), the mode used, and how many requests were in flight when it came.
It exits after --max-requests requests or --max-seconds seconds, whichever is first.
"""

import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ["ok", "429-then-ok", "500", "sleep", "bad-json", "empty", "over-budget"]
MARKER = re.compile(r"SUMMARIZER-TEST-MODE=([a-z0-9-]+)")


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.requests = 0
        self.in_flight = 0
        self.failed_first = 0
        self.done = threading.Event()


def first_turn_line(user):
    """The first text line of the first turn: tells which session was summarized."""
    _, _, turns = user.partition("secrets masked):\n\n")
    lines = turns.splitlines()
    return lines[1].strip() if len(lines) > 1 else ""


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, body, headers=()):
            data = body.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length).decode("utf-8", "replace")
            with state.lock:
                state.requests += 1
                state.in_flight += 1
                in_flight = state.in_flight
                n = state.requests
            try:
                self.answer(raw, in_flight)
            finally:
                with state.lock:
                    state.in_flight -= 1
                if state.args.max_requests and n >= state.args.max_requests:
                    state.done.set()

        def answer(self, raw, in_flight):
            args = state.args
            try:
                request = json.loads(raw)
                user = request["messages"][-1]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                request, user = None, ""
            marker = MARKER.search(user)
            mode = marker.group(1) if marker else args.mode
            if mode == "429-then-ok":
                with state.lock:
                    fail = state.failed_first < args.fail_first
                    state.failed_first += int(fail)
                mode = "429" if fail else "ok"
            record = {
                "path": self.path,
                "authorization": self.headers.get("Authorization"),
                "body": raw,
                "mode": mode,
                "in_flight": in_flight,
            }
            with state.lock:
                with open(args.log, "a", encoding="utf-8") as f:
                    f.write(json.dumps(record) + "\n")
            if args.delay:
                time.sleep(args.delay)
            if self.path != "/v1/chat/completions" or request is None:
                return self.reply(404, '{"error":"not found"}')
            if mode == "429":
                return self.reply(429, '{"error":"slow down"}', [("Retry-After", "0")])
            if mode == "500":
                return self.reply(500, '{"error":"internal"}')
            if mode == "bad-json":
                return self.reply(200, "this is not json {")
            if mode == "sleep":
                time.sleep(args.sleep)
            if mode == "empty":
                content = ""
            elif mode == "over-budget":
                content = "## Goal\n" + "lorem ipsum dolor sit amet " * 20000
            else:
                content = (
                    "## Active Task\nNone.\n\n## Goal\nModel summary of: "
                    + first_turn_line(user)
                )
            body = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": request.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": len(user) // 4, "completion_tokens": 7},
            }
            return self.reply(200, json.dumps(body))

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=MODES, default="ok")
    p.add_argument("--log", required=True, help="append each request here (JSON lines)")
    p.add_argument("--max-requests", type=int, default=0, help="exit after N requests")
    p.add_argument("--max-seconds", type=float, default=60.0)
    p.add_argument("--fail-first", type=int, default=1, help="429-then-ok: requests refused")
    p.add_argument("--sleep", type=float, default=5.0, help="sleep mode: seconds")
    p.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    args = p.parse_args()
    state = State(args)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.done.wait(args.max_seconds)
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
