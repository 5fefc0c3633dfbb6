"""Tests of scripts/check_ccusage.py's own logic (no ccusage, no compactor needed)."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import check_ccusage as c  # noqa: E402


class Checker(unittest.TestCase):
    def test_theirs_reads_the_20_0_24_session_shape(self):
        doc = {"session": [{"period": "s1", "inputTokens": 1, "outputTokens": 2,
                            "cacheCreationTokens": 3, "cacheReadTokens": 4,
                            "totalTokens": 10, "totalCost": 0.5}]}
        self.assertEqual(c.theirs_by_session(doc)["s1"]["total"], 10)

    def test_ours_sums_a_sessions_logs_and_its_subagents(self):
        rec = {"input": 1, "output": 2, "cache_write": 3, "cache_read": 4}
        rows = [{"source": "/a/p/s1.jsonl", "recorded": rec, "cost_recorded": 0.25},
                {"source": "/a/p/s1/subagents/x.jsonl", "recorded": rec, "cost_recorded": 0.25},
                {"source": "/a/p/s2.jsonl"}]
        keys = {"/a/p/s1.jsonl": "s1", "/a/p/s1/subagents/x.jsonl": "s1", "/a/p/s2.jsonl": "s2"}
        ours = c.ours_by_session(rows, keys)
        self.assertEqual(ours["s1"]["total"], 20)
        self.assertEqual(ours["s1"]["cost"], 0.5)
        self.assertNotIn("s2", ours, "a row without recorded usage bills nothing")

    def test_a_difference_over_one_percent_fails_and_a_missing_session_too(self):
        fig = {"input": 100, "output": 100, "cache_write": 100, "cache_read": 100,
               "total": 400, "cost": 1.0}
        near = dict(fig, total=403)
        far = dict(fig, total=420)
        self.assertTrue(all(r[4] for r in c.compare({"s": near}, {"s": fig})))
        self.assertFalse(all(r[4] for r in c.compare({"s": far}, {"s": fig})))
        self.assertFalse(all(r[4] for r in c.compare({}, {"s": fig})))

    def test_logs_are_laid_out_as_claude_code_lays_them_out(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "src"
            (src / "sid-1" / "subagents").mkdir(parents=True)
            log = src / "a.jsonl"
            log.write_text(json.dumps({"sessionId": "sid-1"}) + "\n")
            sub = src / "sid-1" / "subagents" / "agent-x.jsonl"
            sub.write_text(json.dumps({"sessionId": "sid-1"}) + "\n")
            root = Path(tmp) / "root"
            keys = c.lay_out([log, sub], root)
            paths = sorted(str(Path(k).relative_to(root)) for k in keys)
            self.assertEqual(paths, ["projects/src/sid-1.jsonl",
                                     "projects/src/sid-1/subagents/agent-x.jsonl"])
            self.assertEqual(set(keys.values()), {"sid-1"})


if __name__ == "__main__":
    unittest.main()
