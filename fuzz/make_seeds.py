#!/usr/bin/env python3
"""Builds the committed seed corpus fuzz/seeds/<target>/ from fixtures/.

Run from the repository root: python3 fuzz/make_seeds.py [path/to/compactor]
(the binary makes the Parquet seeds). Every seed stays under 20 KB.
`python3 fuzz/make_seeds.py --only skim` rewrites fuzz/seeds/skim alone (the
other targets' directories also hold hand-added `finding_*` seeds).
"""
import gzip, json, os, random, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "compactor")
LIMIT = 20_000
# The decode selector: the first byte modulo 8 picks Format::ALL[i], 7 detects.
SEL = {"claude_code": b"0", "codex": b"1", "swe_agent": b"2", "toolbench": b"3",
       "sharegpt": b"4", "anthropic": b"5", "openai": b"6", "detect": b"7"}


def fx(*p):
    return os.path.join(ROOT, "fixtures", *p)


def write(target, name, data):
    assert len(data) < LIMIT, (target, name, len(data))
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode()


def shrink(v, budget):
    """Cuts lists and strings of a JSON value until it serializes under `budget` bytes."""
    keep, chars = 64, 4000
    while True:
        def cut(x):
            if isinstance(x, list):
                return [cut(y) for y in x[:keep]]
            if isinstance(x, dict):
                return {k: cut(y) for k, y in x.items()}
            if isinstance(x, str):
                return x[:chars]
            return x
        out = cut(v)
        if len(dumps(out)) < budget or (keep <= 2 and chars <= 20):
            return out
        keep, chars = max(2, keep * 2 // 3), max(20, chars * 2 // 3)


def first_lines(path, budget):
    out = b""
    for line in open(path, "rb").read().split(b"\n"):
        if len(out) + len(line) + 1 >= budget:
            break
        out += line + b"\n"
    return out


def record_lines(path, budget):
    """Each record of a JSONL file shrunk to fit, joined; at most `budget` bytes."""
    lines = [l for l in open(path, "rb").read().split(b"\n") if l.strip()]
    each = budget // max(1, len(lines))
    out = b""
    for l in lines:
        try:
            v = json.loads(l)
        except ValueError:
            out += l[:each] + b"\n"
            continue
        out += (l if len(l) < each else dumps(shrink(v, each))) + b"\n"
    return out


# skim: OpenAI session lines in every shape the skim reads or gives up on.
SKIM_SHAPES = [
    b'{"id":"s1","messages":[{"role":"user","content":"hello"}]}',
    b'{"id":12,"uuid":"u","messages":[{"role":"user","content":null},{"role":"assistant"}]}',
    b'{"mess\\u0061ges":[{"r\\u006fle":"user","content":"line\\none \\u00e9 \\ud83d\\ude00 \xe6\xbc\xa2\xe5\xad\x97"}]}',
    b'{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}},'
    b'{"type":"thinking","thinking":"t"},{"type":"reasoning","text":"r"},{"type":"redacted_thinking","data":"d"},'
    b'{"type":"tool_call","id":"c","arguments":{"k":[1,2.5]}},{"type":"text","text":5},"bare",3,null,[1]]}]}',
    b'{"tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"assistant","content":null,"tool_calls":['
    b'{"id":"c1","function":{"name":"read","arguments":"{\\"p\\":1}"}},{"function":{"name":null,"arguments":{"a":null}}},'
    b'{"id":5,"function":{}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}',
    b'{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"a"}},{"function":{"name":3}}]},'
    b'{"role":"assistant","tool_calls":[7]},{"role":"assistant","tool_calls":{"x":1}}]}',
    b'{"messages":[{"role":"assistant","reasoning_content":{"x":1},"reasoning":"r","content":"c"}]}',
    b'{"meta":{"a":1.5,"b":[1, 2]},"compactor_trailing":[{"t":1}],"messages":[{"role":"user","content":"x",'
    b'"toolUseResult":{"s":-0},"compactor_attached":[{"t":"a"},3],"usage":{"prompt_tokens":1},"x":1e300}]}',
    b'{"tools":[{"a":1}],"tools":null,"id":"a","id":7,"messages":[]}',
    b'{"messages":[],"x":1e400}',
    b'{"messages":[],"x":"\\ud800"}',
    b'{"messages":[],"messages":[{"role":"user"}]}',
    b'{"messages":[{"role":"user","content":"a","content":"bb"}]}',
    b'{"messages":[{"role":"user","content":[{"text":"a","text":"b"}]}]}',
    b'{"messages":[{"role":"user","compactor_attached":{}}]}',
    b'{"messages":[{"content":"no role"}]}',
    b'{"messages":[{"role":"user","content":5}]}',
    b'[{"role":"user","content":"bare array"}]',
    b'{"messages":[]} trailing',
    b'{"messages":[{"role":"user","content":"\xff"}]}',
    b'{"x":' + b"[" * 200 + b"]" * 200 + b',"messages":[]}',
]


def fixture_jsonl():
    """name -> (format, bytes): fixture slices, one or a few records per dialect."""
    jsonl = {}
    for fmt in ["openai", "anthropic", "sharegpt", "edge"]:
        for f in sorted(os.listdir(fx(fmt))):
            if not f.endswith(".jsonl") or f == "huge_output.jsonl":
                continue
            data = record_lines(fx(fmt, f), 6000)
            jsonl[f"{fmt}_{f}"] = ("openai" if fmt == "edge" else fmt, data)
    for fmt in ["claude_code", "codex"]:
        for f in sorted(os.listdir(fx(fmt))):
            if f.endswith(".jsonl"):
                jsonl[f"{fmt}_{f}"] = (fmt, first_lines(fx(fmt, f), 8000))
    for fmt in ["swe_agent", "toolbench"]:
        for f in sorted(os.listdir(fx(fmt))):
            if f.endswith("README.md"):
                continue
            v = json.load(open(fx(fmt, f)))
            compact = dumps(shrink(v, 8000))
            jsonl[f"{fmt}_{f}"] = (fmt, compact + b"\n")
            if len(compact) < 6000:
                jsonl[f"{fmt}_{f}.pretty"] = (fmt, json.dumps(shrink(v, 6000), indent=1).encode())
    return jsonl


def skim_seeds(jsonl):
    for name, (fmt, data) in sorted(jsonl.items()):
        if fmt == "openai":
            write("skim", f"jsonl_{name}", data)
    for i, line in enumerate(SKIM_SHAPES):
        write("skim", f"shape_{i:02}", line + b"\n")


def main():
    if sys.argv[1:] == ["--only", "skim"]:
        shutil.rmtree(os.path.join(SEEDS, "skim"), ignore_errors=True)
        skim_seeds(fixture_jsonl())
        return
    if os.path.isdir(SEEDS):
        shutil.rmtree(SEEDS)
    rng = random.Random(20261130)
    jsonl = fixture_jsonl()
    skim_seeds(jsonl)
    # A few files per dialect, forced; the first of each also detected.
    per_dir = {}
    for name, (fmt, data) in sorted(jsonl.items()):
        d = name.split("_", 1)[0] if not name.startswith(("claude_code", "swe_agent")) else fmt
        per_dir[d] = per_dir.get(d, 0) + 1
        if per_dir[d] > 3:
            continue
        write("decode", f"{fmt}_{name}", SEL[fmt] + data)
        if per_dir[d] == 1:
            write("decode", f"detect_{name}", SEL["detect"] + data)
    some = jsonl["openai_edge_parallel_calls.jsonl"][1] if "openai_edge_parallel_calls.jsonl" in jsonl else jsonl["edge_parallel_calls.jsonl"][1]
    edge = {
        "empty": b"",
        "blank_lines": b"\n \r\n\t\n",
        "bad_utf8": b'{"messages":[{"role":"user","content":"\xff\xfe\xc3"}]}\n',
        "lone_surrogate": b'{"messages":[{"role":"user","content":"\\ud800 x \\udfff"}]}\n',
        "nul_bytes": b'{"messages":[{"role":"user","content":"a\\u0000b"}]}\n\x00\x00\n',
        "deep_nesting": b"[" * 5000 + b"]" * 5000 + b"\n",
        "deep_nesting_unclosed": b'{"messages":' + b"[" * 3000 + b"\n",
        "duplicate_keys": b'{"messages":[{"role":"user","content":"a","content":"b"}],"messages":[]}\n',
        "wrong_types": b'{"messages":[{"role":5,"content":null},{"role":"user","content":{"a":1}}]}\n',
        "crlf_and_truncated": b'{"messages":[{"role":"user","content":"hi"}]}\r\n{"messages":[{"role":"us',
        "document_array": b'[\n {"messages": [{"role": "user", "content": "a"}]},\n {"messages": []}\n]\n',
        "session_array_line": b'[{"messages":[{"role":"user","content":"a"}]},{"messages":[]}]\n',
        "bare_message_array": b'[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]\n',
        "tool_result_first": b'{"messages":[{"role":"tool","tool_call_id":"x","content":"r"},{"role":"assistant","content":null,"tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}]}]}\n',
        "gzip": gzip.compress(some[:4000], mtime=0),
        "gzip_truncated": gzip.compress(some[:4000], mtime=0)[:200],
        "parquet_magic_garbage": b"PAR1 not really",
        "number_and_string_lines": b'1\n"x"\nnull\n{"messages":[]}\n',
    }
    try:
        import zstandard  # noqa: F401
    except ImportError:
        zstd = shutil.which("zstd")
        if zstd:
            r = subprocess.run([zstd, "-q", "-c"], input=some[:4000], capture_output=True, check=True)
            edge["zstd"] = r.stdout
            edge["zstd_truncated"] = r.stdout[:100]
    for name, data in edge.items():
        for fmt in ["detect", "openai"] + (["claude_code"] if len(data) < 300 else []):
            write("decode", f"edge_{name}_{fmt}", SEL[fmt] + data)

    # parquet: our own files (made by the tool), the fixtures, and broken ones.
    with tempfile.TemporaryDirectory() as tmp:
        made = []
        for name, (fmt, data) in sorted(jsonl.items()):
            if fmt not in ("openai", "anthropic", "sharegpt") or b"\xff" in data:
                continue
            src = os.path.join(tmp, name + ".jsonl")
            open(src, "wb").write(data)
            dst = os.path.join(tmp, name + ".parquet")
            r = subprocess.run([BIN, "compact", src, "--mode", "none", "--to", "parquet",
                                "-o", dst, "--quiet"], capture_output=True)
            if os.path.exists(dst) and os.path.getsize(dst) < LIMIT:
                made.append((name, open(dst, "rb").read()))
        for name, data in made[:14]:
            write("parquet", f"tool_{name}.parquet", data)
    for f in sorted(os.listdir(fx("parquet"))):
        if f.endswith(".parquet"):
            write("parquet", f"fixture_{f}", open(fx("parquet", f), "rb").read())
    base = open(fx("parquet", "hf_tools.parquet"), "rb").read()
    write("parquet", "broken_empty", b"")
    write("parquet", "broken_magic_only", b"PAR1PAR1")
    write("parquet", "broken_truncated_footer.parquet", base[:-20])
    write("parquet", "broken_footer_length.parquet", base[:-8] + b"\xff\xff\x00\x00PAR1")
    write("parquet", "broken_no_data.parquet", b"PAR1" + base[-(8 + 400):])
    for i in range(4):
        b = bytearray(base)
        for _ in range(6):
            b[rng.randrange(4, len(b) - 4)] = rng.randrange(256)
        write("parquet", f"broken_flipped_{i}.parquet", bytes(b))

    # pipeline: session programs (selector bit 4 clear) and OpenAI JSONL (bit 4 set).
    for i in range(16):
        n = rng.choice([16, 64, 256, 1024, 4096])
        write("pipeline", f"program_{i:02}", bytes([i & 3]) + bytes(rng.randrange(256) for _ in range(n)))
    for name, (fmt, data) in sorted(jsonl.items()):
        if fmt == "openai":
            write("pipeline", f"jsonl_{name}", bytes([4 | (len(name) & 3)]) + data)


if __name__ == "__main__":
    main()
