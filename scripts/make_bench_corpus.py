#!/usr/bin/env python3
"""Write a benchmark corpus of about SIZE bytes of OpenAI-shaped JSONL sessions.

    python3 scripts/make_bench_corpus.py SEED_JSONL OUT.jsonl SIZE_MB

SEED_JSONL is the real corpus (`../shared/corpus`) converted to OpenAI JSONL by
`compactor compact --mode none --to openai` (plus, from `scripts/bench.sh`,
some `compactor synth` sessions with images and reasoning). Copies are cycled
until SIZE_MB is reached; copy k rotates every digit by k and, from the tenth
copy on, the five lowercase vowels by k // 10, in every text (never in ids,
roles or JSON arguments), so that texts differ between copies (the count cache
cannot make a copy free) while their shape, length and character classes stay
those of real transcripts. Deterministic: the same inputs give the same bytes.
Never committed (the default corpus is 1 GB).
"""

import json
import sys

DIGITS = "0123456789"
VOWELS = "aeiou"


def table(k):
    d = k % 10
    v = (k // 10) % 5
    src = DIGITS + VOWELS
    dst = DIGITS[d:] + DIGITS[:d] + VOWELS[v:] + VOWELS[:v]
    return str.maketrans(src, dst)


def mutate_content(content, tr):
    if isinstance(content, str):
        return content.translate(tr)
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part = dict(part)
                part["text"] = part["text"].translate(tr)
            out.append(part)
        return out
    return content


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    seed_path, out_path, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(seed_path, encoding="utf-8") as f:
        seeds = [json.loads(line) for line in f if line.strip()]
    if not seeds:
        sys.exit(f"{seed_path}: no sessions")
    limit = size_mb * 1024 * 1024
    written = 0
    sessions = 0
    k = 0
    with open(out_path, "w", encoding="utf-8") as out:
        while written < limit:
            tr = table(k)
            for i, s in enumerate(seeds):
                s = dict(s)
                s["id"] = f"bench-{k}-{i}"
                msgs = []
                for m in s.get("messages", []):
                    m = dict(m)
                    if "content" in m:
                        m["content"] = mutate_content(m["content"], tr)
                    if isinstance(m.get("reasoning_content"), str):
                        m["reasoning_content"] = m["reasoning_content"].translate(tr)
                    msgs.append(m)
                s["messages"] = msgs
                line = json.dumps(s, ensure_ascii=False, separators=(",", ":")) + "\n"
                out.write(line)
                written += len(line.encode("utf-8"))
                sessions += 1
                if written >= limit:
                    break
            k += 1
    print(f"{out_path}: {sessions} sessions, {written / 1e6:.0f} MB ({k} passes over {len(seeds)} seeds)")


if __name__ == "__main__":
    main()
