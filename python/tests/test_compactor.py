"""Tests of the Python package against the CLI (`pytest python/tests`).

The CLI binary is `$COMPACTOR_BIN` (default: target/release/compactor of this
repository); the fixtures are the repository's. `.ci/run` builds the wheel,
installs it in a fresh venv and runs these.
"""

import glob
import json
import os
import subprocess

import pytest

import compactor

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("COMPACTOR_BIN", os.path.join(ROOT, "target", "release", "compactor"))
TEMPLATES = os.path.join(ROOT, "fixtures", "templates")


def fixture(*parts):
    return os.path.join(ROOT, "fixtures", *parts)


def cli(text, *args):
    """What the CLI writes on stdout for `text` on stdin (exit 0 asserted)."""
    done = subprocess.run([BIN, "compact", "-", "-q", *args], input=text.encode(), capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# Record fixtures (one session per line) and file fixtures (one session per file).
RECORD_FILES = sorted(glob.glob(fixture("openai", "*.jsonl"))) + [
    fixture("edge", n) for n in ("images.jsonl", "parallel_calls.jsonl", "cjk.jsonl", "huge_output.jsonl")
] + sorted(glob.glob(fixture("anthropic", "*.jsonl"))) + sorted(glob.glob(fixture("sharegpt", "*.jsonl")))
LOG_FILES = sorted(glob.glob(fixture("claude_code", "*.jsonl"))) + sorted(glob.glob(fixture("codex", "*.jsonl")))
OPTIONS = [{}, {"window": 32000, "force": True}, {"to": "openai", "mode": "tiered", "window": 32000}]


@pytest.mark.parametrize("options", OPTIONS, ids=["default", "lean-force", "tiered-openai"])
@pytest.mark.parametrize("path", RECORD_FILES + LOG_FILES, ids=os.path.basename)
def test_compact_json_gives_the_cli_bytes(path, options):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    argv = []
    for k, v in options.items():
        argv += [f"--{k}"] if v is True else [f"--{k}", str(v)]
    assert compactor.compact_json(text, **options) == cli(text, *argv)


@pytest.mark.parametrize("path", RECORD_FILES, ids=os.path.basename)
def test_compact_of_a_dict_is_the_cli_line_parsed(path):
    with open(path, encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    for line in lines:
        want = json.loads(cli(line + "\n", "--window", "32000", "--force"))
        assert compactor.compact(json.loads(line), window=32000, force=True) == want


def test_compact_batch_under_datasets_map_equals_compact_row_by_row():
    datasets = pytest.importorskip("datasets")
    rows = records(fixture("openai", "codex_w1t9.jsonl")) + records(fixture("openai", "claude_code_task54.jsonl"))
    rows += records(fixture("edge", "parallel_calls.jsonl"))
    # Columns as datasets holds them: one schema for every row.
    table = [{"id": r.get("id", f"row{i}"), "messages": json.dumps(r["messages"])} for i, r in enumerate(rows)]
    ds = datasets.Dataset.from_list(table)

    def batch(b):
        out = compactor.compact_batch(
            {"id": b["id"], "messages": [json.loads(m) for m in b["messages"]]}, window=32000, force=True)
        return {"out": [json.dumps(r) for r in _rows(out)]}

    mapped = ds.map(batch, batched=True, batch_size=2, remove_columns=ds.column_names)
    for i, got in enumerate(mapped["out"]):
        one = compactor.compact({"id": table[i]["id"], "messages": json.loads(table[i]["messages"])},
                                window=32000, force=True)
        want = {k: one.get(k) for k in json.loads(got)}
        assert json.loads(got) == want, f"row {i}"


def _rows(columns):
    n = len(columns["messages"])
    return [{k: v[i] for k, v in columns.items()} for i in range(n)]


def test_errors_are_exceptions_naming_the_option_or_the_field():
    rec = records(fixture("openai", "codex_w1t9.jsonl"))[0]
    with pytest.raises(compactor.CompactorError, match="--window"):
        compactor.compact(rec, window="lots")
    with pytest.raises(compactor.CompactorError, match="messages"):
        compactor.compact({"messages": 5})
    with pytest.raises(compactor.CompactorError, match="--mode"):
        compactor.compact(rec, mode="sideways")
    with pytest.raises(TypeError, match="writes no files"):
        compactor.compact(rec, output="x.jsonl")
    with pytest.raises(compactor.CompactorError, match="column 'id' has 1 rows"):
        compactor.compact_batch({"messages": [rec["messages"], rec["messages"]], "id": ["a"]})


def test_count_tokens_and_anchors_match_the_cli():
    rec = records(fixture("openai", "codex_w1t9.jsonl"))[0]
    report = subprocess.run([BIN, "compact", "-", "-q", "--mode", "none", "--report", "-", "-o", "/dev/null"],
                            input=(json.dumps(rec) + "\n").encode(), capture_output=True, check=True)
    assert compactor.count_tokens(rec) == json.loads(report.stdout)["tokens_before"]
    assert compactor.count_tokens("hello world") == 2
    assert compactor.count_tokens("hello world", counter="hermes") == 3
    line = subprocess.run([BIN, "anchors", "-"], input=(json.dumps(rec) + "\n").encode(),
                          capture_output=True, check=True).stdout
    assert compactor.anchors(rec) == json.loads(line)


def test_train_flags_follow_the_rule():
    """Every assistant message we made or changed is `train: false`, every one
    we left as read `true`, other roles have no flag. Judged from outside: an
    assistant message is untouched when the uncompacted row has the same
    message (role, text, calls, reasoning)."""
    checked = synthetic = 0
    for path in RECORD_FILES:
        for rec in records(path):
            before = compactor.compact(rec, to="parquet", mode="none")
            after = compactor.compact(rec, to="parquet", window=32000, force=True)
            key = lambda m: json.dumps([m.get("role"), m.get("content"), m.get("tool_calls"),  # noqa: E731
                                        m.get("reasoning_content")], sort_keys=True)
            originals = {key(m) for m in before["messages"]}
            for m in after["messages"]:
                if m.get("role") != "assistant":
                    assert "train" not in m, m
                    continue
                untouched = key(m) in originals
                assert m["train"] is untouched, (path, m)
                checked += 1
                text = m.get("content") or ""
                if text.startswith("[CONTEXT COMPACTION") or text == "(tool call removed)":
                    assert m["train"] is False
                    synthetic += 1
    assert checked > 50, checked


def for_template_renders(template, row):
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    name = {"qwen2.5": "Qwen-Qwen2.5-7B-Instruct.jinja", "llama3.1": "meta-llama-Llama-3.1-8B-Instruct.jinja",
            "mistral": "mistralai-Mistral-Nemo-Instruct-2407.jinja"}[template]
    with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
        fast.chat_template = f.read()
    fixed = compactor.for_template(row, template)
    return fast.apply_chat_template(fixed["messages"], tools=fixed.get("tools"), tokenize=False)


def test_for_template_gives_llama_one_call_per_message_and_mistral_its_ids():
    rec = records(fixture("edge", "parallel_calls.jsonl"))[0]
    row = compactor.compact(rec, to="parquet", mode="none")
    # As datasets gives a struct column: every key on every message, null or not.
    keys = {k for m in row["messages"] for k in m}
    row["messages"] = [{k: m.get(k) for k in keys} for m in row["messages"]]
    llama = for_template_renders("llama3.1", row)
    calls = sum(len(m.get("tool_calls") or []) for m in row["messages"])
    assert llama.count('<|start_header_id|>assistant<|end_header_id|>\n\n{"name": "') == calls >= 2
    # Mistral renders only the calls of a message with text and calls: refused, saying so.
    with pytest.raises(compactor.TemplateRefusal, match="text and calls"):
        for_template_renders("mistral", row)
    for m in row["messages"]:
        if m.get("tool_calls"):
            m["content"] = None
    mistral = for_template_renders("mistral", row)
    assert '"id": "000000001"' in mistral and '"call_id": "000000001"' in mistral
    qwen = for_template_renders("qwen2.5", row)
    assert qwen.count('<tool_call>\n{"name": "') == calls


def test_for_template_names_what_a_template_cannot_take():
    row = {"messages": [{"role": "system", "content": "S"}, {"role": "assistant", "content": "hi"}]}
    with pytest.raises(compactor.TemplateRefusal, match="user turn first"):
        compactor.for_template(row, "mistral")
    with pytest.raises(ValueError, match="one of"):
        compactor.for_template(row, "gpt")


def test_whitespace_beside_calls_is_no_llama_turn():
    """Hermes tags leave "\\n\\n" as the text of a call message
    (fixtures/sharegpt's sharegpt-edge-hermes-v1): no empty Llama turn of its own."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}
    row = {"messages": [{"role": "user", "content": "go"},
                        {"role": "assistant", "content": "\n\n", "tool_calls": [call], "train": True},
                        {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}
    fixed = compactor.for_template(row, "llama3.1")
    assert [m["role"] for m in fixed["messages"]] == ["user", "assistant", "tool"]
    text = for_template_renders("llama3.1", row)
    assert "<|start_header_id|>assistant<|end_header_id|>\n\n<|eot_id|>" not in text
