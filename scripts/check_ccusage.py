#!/usr/bin/env python3
"""Our `recorded` replay row against ccusage, the tool Claude Code users trust for their bills.

Issue 37: on Claude Code logs, the tokens and cost `compactor replay` says the agent's own
calls were billed (`recorded`, `cost_recorded` in its `--report` rows) must equal what
ccusage 20.0.24 (`ccusage session --json --offline`) says per session, within 1%.

Written apart from the crate: it reads only the two tools' outputs. The logs are laid out
as Claude Code lays them out (`CLAUDE_CONFIG_DIR/projects/<project>/<sessionId>.jsonl`,
subagents at `<project>/<sessionId>/subagents/*.jsonl`); ccusage folds a session's
subagent logs into its row, so ours are summed per session id the same way, by path.
Each log (with its subagents) gets a config directory and a ccusage run of its own:
ccusage drops a call whose `message.id` it saw in any other file, so slices of one
session (our fixtures) would otherwise count each other's calls out.

    scripts/check_ccusage.py COMPACTOR_BIN CCUSAGE_BIN LOG_OR_DIR...

Exit 0 when every session agrees, 1 when one does not, 2 on usage errors.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TOLERANCE = 0.01


def session_id(path: Path) -> str:
    """The sessionId of a Claude Code log: its first line that names one."""
    with path.open(encoding="utf-8") as f:
        for line in f:
            try:
                v = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(v, dict) and isinstance(v.get("sessionId"), str) and v["sessionId"]:
                return v["sessionId"]
    raise SystemExit(f"{path}: no sessionId in any line")


def lay_out(logs, root: Path):
    """Copies each log to root/projects/<project>/<sessionId>.jsonl, <project> being
    the folder it is in (a subagent log, under .../<sessionId>/subagents/, keeps its
    place beside its parent). Returns {copied path: ccusage session key}."""
    keys = {}
    for i, log in enumerate(logs):
        if log.parent.name == "subagents":
            parent = log.parent.parent.name
            project = log.parent.parent.parent.name or f"p{i}"
            dest = root / "projects" / project / parent / "subagents" / log.name
            key = parent
        else:
            sid = session_id(log)
            project = log.parent.name or f"p{i}"
            dest = root / "projects" / project / f"{sid}.jsonl"
            key = sid
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, dest)
        keys[str(dest)] = key
    return keys


def logs_of(args):
    """The session logs named or found under a directory (a subagent log goes with its parent)."""
    out = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            out.extend(sorted(x for x in p.rglob("*.jsonl") if x.parent.name != "subagents"))
        else:
            out.append(p)
    return out


def compare(ours: dict, theirs: dict):
    """Rows of (session, figure, ours, ccusage, ok)."""
    rows = []
    for key in sorted(set(ours) | set(theirs)):
        o, t = ours.get(key), theirs.get(key)
        if o is None or t is None:
            rows.append((key, "session", o is not None, t is not None, False))
            continue
        for fig in ("input", "output", "cache_write", "cache_read", "total", "cost"):
            a, b = o[fig], t[fig]
            ok = abs(a - b) <= TOLERANCE * max(abs(b), 1e-9) or a == b
            rows.append((key, fig, a, b, ok))
    return rows


def ours_by_session(rows, keys):
    out = {}
    for r in rows:
        rec = r.get("recorded")
        if rec is None:
            continue
        key = keys.get(r["source"].rsplit(":", 1)[0] if r["source"] not in keys else r["source"])
        if key is None:
            continue
        s = out.setdefault(
            key, {"input": 0, "output": 0, "cache_write": 0, "cache_read": 0, "total": 0, "cost": 0.0}
        )
        s["input"] += rec["input"]
        s["output"] += rec["output"]
        s["cache_write"] += rec["cache_write"]
        s["cache_read"] += rec["cache_read"]
        s["total"] += rec["input"] + rec["output"] + rec["cache_write"] + rec["cache_read"]
        s["cost"] += r.get("cost_recorded") or 0.0
    return out


def theirs_by_session(doc):
    out = {}
    for s in doc.get("session", []):
        out[s["period"]] = {
            "input": s["inputTokens"],
            "output": s["outputTokens"],
            "cache_write": s["cacheCreationTokens"],
            "cache_read": s["cacheReadTokens"],
            "total": s["totalTokens"],
            "cost": s["totalCost"],
        }
    return out


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    compactor, ccusage = argv[1], argv[2]
    logs = logs_of(argv[3:])
    if not logs:
        print("no .jsonl logs given", file=sys.stderr)
        return 2
    parents = [l for l in logs if l.parent.name != "subagents"]
    ours, theirs = {}, {}
    for parent in parents:
        subagents = sorted((parent.parent / parent.stem / "subagents").glob("*.jsonl"))
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            keys = lay_out([parent, *subagents], root)
            env = dict(os.environ, CLAUDE_CONFIG_DIR=str(root))
            doc = json.loads(
                subprocess.run(
                    [ccusage, "session", "--json", "--offline"],
                    env=env, check=True, capture_output=True, text=True,
                ).stdout
            )
            report = root / "replay.jsonl"
            subprocess.run(
                [compactor, "replay", "-q", "--prices", "--report", str(report), *sorted(keys)],
                check=True, capture_output=True,
            )
            rows = [json.loads(l) for l in report.read_text().splitlines() if l.strip()]
        label = str(parent)
        for key, v in ours_by_session(rows, keys).items():
            ours[f"{label} ({key})"] = v
        for key, v in theirs_by_session(doc).items():
            theirs[f"{label} ({key})"] = v
    table = compare(ours, theirs)
    bad = [r for r in table if not r[4]]
    sessions = len({r[0] for r in table})
    for key, fig, a, b, ok in table:
        if fig in ("total", "cost") or not ok:
            mark = "ok " if ok else "BAD"
            print(f"{mark} {key} {fig}: compactor {a} vs ccusage {b}")
    if bad:
        print(f"{len(bad)} figures differ by more than {TOLERANCE:.0%}", file=sys.stderr)
        return 1
    print(f"ok: {sessions} sessions, tokens and cost within {TOLERANCE:.0%} of ccusage")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
