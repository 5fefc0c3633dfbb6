#!/usr/bin/env python3
"""Checks that a directory of compactor's Parquet output is a training dataset.

    python3 scripts/check_parquet.py DIR [--readme README.md] [--require-datasets]

Written apart from the Rust writer (no shared code): it only uses what any
consumer has, the Parquet files and the documented schema. It

1. finds DIR/**/*.parquet and asserts every file has the same Arrow schema
   (field names, types, nesting), naming the first file that differs;
2. loads DIR as ONE table in pyarrow.dataset, DuckDB
   (`read_parquet('DIR/**/*.parquet')`), Polars (`scan_parquet`) and Hugging
   Face `datasets` (`load_dataset("parquet", data_files=...)`; SKIPPED, with
   the reason, when it cannot be imported, unless --require-datasets), and
   asserts they agree on rows, messages, tool calls and tool messages;
3. asserts, per row, that tool calls and tool messages agree: as many `tool`
   messages as calls, each answering a call of that row (`tool_call_id`);
4. renders every row with two chat templates written here (jinja2):
   CHATML, the plain ChatML of many Hugging Face models, and TOOLS, a
   Qwen2.5 / Hermes style tool-calling template (calls as
   `<tool_call>{...}</tool_call>`, results as `<tool_response>` in a user
   turn). It fails on an empty user or assistant turn: one whose rendered body
   is blank. An assistant message with calls and no text is not empty under
   TOOLS, which renders its calls (checked: one `<tool_call>` per call); plain
   ChatML does not render calls, so such a turn is counted there
   ("call-only turns") but is not an error;
5. with --readme, runs the Python snippets of README.md's "Loading the
   Parquet output" section with `out/` replaced by DIR, so the README's
   copy-paste snippets are the calls checked here;
6. says, per file, whether its JSON fields are typed JSON (the Arrow
   `arrow.json` extension type of schema 3: `datasets` gives objects) or
   plain strings (schema 2, or a file rewritten by Spark / Ray, which drop
   field metadata: the check then decodes arguments itself, as a user must);
7. with `datasets` and `transformers`, renders every row with the published
   chat templates vendored in fixtures/templates/ through transformers'
   `apply_chat_template` (the tokenizer is built here with `tokenizers`,
   nothing comes from a model hub): Qwen2.5 straight from
   `datasets.load_dataset("parquet", ...)`, Llama 3.1 and Mistral through the
   Python package's helper `for_template` (python/compactor/templates.py,
   loaded by path: pure Python, no Rust), and counts per template: rows
   rendered, rows a template cannot take (named, with the reason), template
   exceptions (a failed row), double-encoded arguments (a call whose
   arguments are a JSON string, or render as a quoted string), dropped
   messages (a message whose text is not in the rendering), empty turns,
   calls to a tool `tools` does not declare, and calls whose arguments do not
   validate against their tool's `parameters` (jsonschema).

Prints one line per check and the totals; exits 1 on any failure, 2 on bad
usage or when pyarrow, duckdb, polars or jinja2 is missing.
"""

import glob
import importlib.util
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE_DIR = os.path.join(HERE, "..", "fixtures", "templates")
TEMPLATE_FILES = {
    "qwen2.5": "Qwen-Qwen2.5-7B-Instruct.jinja",
    "llama3.1": "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "mistral": "mistralai-Mistral-Nemo-Instruct-2407.jinja",
}
# A turn with nothing in it, per template.
EMPTY_BY_TEMPLATE = {
    "qwen2.5": re.compile(r"<\|im_start\|>(user|assistant)\n\s*<\|im_end\|>"),
    "llama3.1": re.compile(r"<\|start_header_id\|>(user|assistant)<\|end_header_id\|>\n\n\s*<\|eot_id\|>"),
    "mistral": re.compile(r"\[INST\]\s*\[/INST\]|\[/INST\]\s*</s>"),
}

# Plain ChatML, as in many Hugging Face chat templates (e.g. the default of
# Qwen2.5 without tools). Text of multimodal messages is in `content`; their
# images are rendered as `<image>` placeholders from `parts`.
CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{% if message['parts'] %}{% for part in message['parts'] %}"
    "{% if part['type'] == 'image_url' %}<image>{% endif %}{% endfor %}{% endif %}"
    "{{ message['content'] or '' }}"
    "{{ '<|im_end|>\\n' }}"
    "{% endfor %}"
)

# Tool calling in the Qwen2.5 / Hermes style: the tools in the system turn,
# each call as <tool_call>{"name", "arguments"}</tool_call> in the assistant
# turn, consecutive tool results as <tool_response> blocks of one user turn.
TOOLS = (
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] or '' }}{{- '\\n\\n' }}{%- endif %}"
    "{{- '# Tools\\n\\n<tools>' }}"
    "{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and"
    " arguments within <tool_call></tool_call> XML tags.<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message['role'] == 'system' and tools and loop.first %}"
    "{%- elif message['role'] == 'tool' %}"
    "{%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' }}{{- message['content'] or '' }}{{- '\\n</tool_response>' }}"
    "{%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- else %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['reasoning_content'] %}{{- '<think>\\n' + message['reasoning_content'] + '\\n</think>\\n' }}{%- endif %}"
    "{%- if message['parts'] %}{%- for part in message['parts'] %}"
    "{%- if part['type'] == 'image_url' %}{{- '<image>' }}{%- endif %}{%- endfor %}{%- endif %}"
    "{{- message['content'] or '' }}"
    "{%- for call in message['tool_calls'] or [] %}"
    "{{- '\\n<tool_call>\\n{\"name\": \"' }}{{- call['function']['name'] }}{{- '\", \"arguments\": ' }}"
    "{{- call['function']['arguments'] }}{{- '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
)

EMPTY_TURN = re.compile(r"<\|im_start\|>(user|assistant)\n\s*<\|im_end\|>")


class Failures:
    def __init__(self):
        self.items = []

    def fail(self, what):
        self.items.append(what)
        print(f"FAIL {what}")


def files_of(root):
    return sorted(glob.glob(os.path.join(root, "**", "*.parquet"), recursive=True))


def check_schemas(files, failures):
    """Every file's Arrow schema equals the first one's (names, types, nesting)."""
    import pyarrow.parquet as pq

    first = pq.read_schema(files[0])
    for f in files[1:]:
        s = pq.read_schema(f)
        if not s.equals(first, check_metadata=False):
            failures.fail(f"schema of {f} differs from {files[0]}:\n  {s}\n  vs\n  {first}")
            return first
    print(f"schemas: {len(files)} files, one schema: {', '.join(first.names)}")
    return first


def tool_calls_of(m):
    return m.get("tool_calls") or []


def check_row(row, templates, failures, totals):
    """Checks one row (a dict, as pyarrow / datasets give it) and adds to totals."""
    where = f"row {row.get('id')!r} ({row.get('source')})"
    messages = row.get("messages") or []
    call_ids = set()
    calls = 0
    tool_messages = 0
    for i, m in enumerate(messages):
        if m is None:
            failures.fail(f"{where}: message {i} is null")
            continue
        cs = tool_calls_of(m)
        calls += len(cs)
        for c in cs:
            if not (c.get("function") or {}).get("name"):
                failures.fail(f"{where}: message {i}: a tool call without a function name")
            call_ids.add(c.get("id"))
        if m.get("role") == "tool":
            tool_messages += 1
            if m.get("tool_call_id") not in call_ids:
                failures.fail(f"{where}: message {i}: tool result {m.get('tool_call_id')!r} answers no call before it")
    # Every call is answered by a tool message, except the calls of a last
    # assistant message still in flight when the log ends (nothing after it
    # but results of its own calls).
    answered = {m.get("tool_call_id") for m in messages if m and m.get("role") == "tool"}
    last = max((i for i, m in enumerate(messages) if m and m.get("role") != "tool"), default=-1)
    for i, m in enumerate(messages):
        for c in tool_calls_of(m or {}):
            if c.get("id") in answered:
                continue
            if i == last:
                totals["in_flight_calls"] += 1
            else:
                failures.fail(f"{where}: message {i}: call {c.get('id')!r} has no tool message")
    totals["rows"] += 1
    totals["messages"] += len(messages)
    totals["calls"] += calls
    totals["tool_messages"] += tool_messages
    tools = json.loads(row["tools"]) if row.get("tools") else None
    for name, template in templates.items():
        text = template.render(messages=messages, tools=tools)
        if not text:
            failures.fail(f"{where}: {name} renders nothing")
        if name == "TOOLS" and text.count("<tool_call>") < calls:
            failures.fail(f"{where}: TOOLS renders {text.count('<tool_call>')} of {calls} calls")
        # Turn by turn: an empty user or assistant turn is an error, except a
        # call-only assistant turn under a template that does not render calls.
        for i, m in enumerate(messages):
            if m is None or m.get("role") not in ("user", "assistant"):
                continue
            one = template.render(messages=[m], tools=None)
            if EMPTY_TURN.search(one):
                if name == "CHATML" and tool_calls_of(m):
                    totals["call_only_turns"] += 1
                else:
                    totals["empty_turns"] += 1
                    failures.fail(f"{where}: message {i} ({m.get('role')}) is an empty turn under {name}")


def engine_counts_pyarrow(root):
    import pyarrow.compute as pc
    import pyarrow.dataset as pads

    table = pads.dataset(root, format="parquet").to_table(columns=["messages"])
    msgs = pc.list_flatten(table.column("messages"))
    roles = pc.struct_field(msgs, "role")
    calls = pc.list_value_length(pc.struct_field(msgs, "tool_calls"))
    return {
        "rows": table.num_rows,
        "messages": len(msgs),
        "calls": pc.sum(calls).as_py() or 0,
        "tool_messages": pc.sum(pc.equal(roles, "tool").cast("int64")).as_py() or 0,
    }


def engine_counts_duckdb(root):
    import duckdb

    src = f"read_parquet('{os.path.join(root, '**', '*.parquet')}')"
    con = duckdb.connect()
    rows = con.execute(f"SELECT count(*) FROM {src}").fetchone()[0]
    m, c, t = con.execute(
        f"SELECT count(*), coalesce(sum(len(m.tool_calls)), 0), count(*) FILTER (WHERE m.role = 'tool') "
        f"FROM (SELECT unnest(messages) AS m FROM {src})"
    ).fetchone()
    return {"rows": rows, "messages": m, "calls": c, "tool_messages": t}


def engine_counts_polars(root):
    import polars as pl

    lf = pl.scan_parquet(os.path.join(root, "**", "*.parquet"))
    rows = lf.select(pl.len()).collect().item()
    msgs = lf.select(pl.col("messages").explode().alias("m")).drop_nulls()
    out = msgs.select(
        pl.len().alias("messages"),
        pl.col("m").struct.field("tool_calls").list.len().fill_null(0).sum().alias("calls"),
        (pl.col("m").struct.field("role") == "tool").sum().alias("tool_messages"),
    ).collect()
    return {"rows": rows, **{k: out[k][0] for k in out.columns}}


def load_datasets(root):
    import datasets
    from datasets import load_dataset

    datasets.disable_progress_bars()
    return load_dataset("parquet", data_files=os.path.join(root, "**", "*.parquet"), split="train")


def engine_counts_datasets(ds):
    totals = {"rows": ds.num_rows, "messages": 0, "calls": 0, "tool_messages": 0}
    for batch in ds.iter(batch_size=256):
        for messages in batch["messages"]:
            for m in messages or []:
                totals["messages"] += 1
                totals["calls"] += len(tool_calls_of(m))
                totals["tool_messages"] += m.get("role") == "tool"
    return totals


def readme_snippets(readme):
    """The ```python blocks of README.md's "Loading the Parquet output" section."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^#+ Loading the Parquet output\n(.*?)(?=^#+ )", text, re.S | re.M)
    if not m:
        return []
    return re.findall(r"```python\n(.*?)```", m.group(1), re.S)


def run_snippets(readme, root, failures):
    snippets = readme_snippets(readme)
    if not snippets:
        failures.fail(f"{readme}: no ```python snippets under 'Loading the Parquet output'")
    for i, code in enumerate(snippets):
        first = code.strip().splitlines()[0]
        if "datasets" in code:
            try:
                import datasets  # noqa: F401
            except ImportError as e:
                print(f"README snippet {i + 1} ({first}): SKIPPED ({e})")
                continue
        code = code.replace('"out/', f'"{root.rstrip("/")}/').replace("'out/", f"'{root.rstrip('/')}/")
        try:
            exec(compile(code, f"README snippet {i + 1}", "exec"), {"__name__": "readme"})
            print(f"README snippet {i + 1} ({first}): ran")
        except Exception as e:  # a snippet that fails is a finding, not a crash
            failures.fail(f"README snippet {i + 1} ({first}): {type(e).__name__}: {e}")


def check(root, readme=None, require_datasets=False, out=print, chat_templates=True):
    """Runs every check on directory `root`; returns (failures, totals).

    `chat_templates=False` leaves out the published templates (step 7)."""
    import jinja2
    import pyarrow.dataset as pads

    failures = Failures()
    files = files_of(root)
    if not files:
        failures.fail(f"no *.parquet under {root}")
        return failures, {}
    check_schemas(files, failures)
    if failures.items:
        return failures, {}
    env = jinja2.Environment(undefined=jinja2.ChainableUndefined)
    templates = {"CHATML": env.from_string(CHATML), "TOOLS": env.from_string(TOOLS)}
    totals = dict(rows=0, messages=0, calls=0, tool_messages=0, in_flight_calls=0, empty_turns=0,
                  call_only_turns=0)
    dataset = pads.dataset(root, format="parquet")
    for batch in dataset.to_batches(batch_size=64):
        for row in batch.to_pylist():
            check_row(row, templates, failures, totals)
    want = {k: totals[k] for k in ("rows", "messages", "calls", "tool_messages")}
    out(f"pyarrow rows: {json.dumps(totals)} ({len(files)} files)")
    engines = [
        ("pyarrow.dataset", lambda: engine_counts_pyarrow(root)),
        ("duckdb", lambda: engine_counts_duckdb(root)),
        ("polars", lambda: engine_counts_polars(root)),
    ]
    try:
        import datasets  # noqa: F401

        engines.append(("datasets", lambda: engine_counts_datasets(load_datasets(root))))
    except ImportError as e:
        if require_datasets:
            failures.fail(f"datasets: cannot import ({e})")
        else:
            out(f"datasets: SKIPPED (cannot import: {e})")
    for name, count in engines:
        try:
            got = count()
        except Exception as e:  # an engine that cannot load the directory is a finding
            failures.fail(f"{name}: cannot load {root} as one table: {type(e).__name__}: {e}")
            continue
        got = {k: int(v) for k, v in got.items()}
        if got != want:
            failures.fail(f"{name}: {got} != {want}")
        else:
            out(f"{name}: one table, {got['rows']} rows, {got['messages']} messages, "
                f"{got['calls']} tool calls, {got['tool_messages']} tool messages")
    kinds = json_fields_by_file(files)
    for kind in sorted(set(kinds.values())):
        named = [os.path.relpath(f, root) for f, k in kinds.items() if k == kind]
        out(f"JSON fields as {kind}: {len(named)} files ({', '.join(named[:5])}{', ...' if len(named) > 5 else ''})")
    try:
        import datasets  # noqa: F401
        import jsonschema  # noqa: F401
        import transformers  # noqa: F401
        if not chat_templates:
            raise ImportError("not asked for")
    except ImportError as e:
        if require_datasets:
            failures.fail(f"templates: cannot import ({e})")
        else:
            out(f"templates: SKIPPED (cannot import: {e})")
    else:
        plain = any(k != "arrow.json" for k in kinds.values())
        totals["templates"] = check_templates(load_datasets(root), plain, failures, out)
    if readme:
        run_snippets(readme, root, failures)
    return failures, totals


def json_fields_by_file(files):
    """Per file: whether `arguments` is typed JSON (`arrow.json`) or a plain string."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = {}
    for f in files:
        s = pq.read_schema(f)
        kind = "plain strings"
        try:
            call = s.field("messages").type.value_type.field("tool_calls").type.value_type
            args = call.field("function").type.field("arguments").type
            if getattr(args, "extension_name", None) == "arrow.json":
                kind = "arrow.json"
        except (KeyError, AttributeError):
            kind = "no arguments field"
        out[f] = kind
    return out


def load_helper():
    """The Python package's `for_template` helper, loaded by path (pure Python)."""
    path = os.path.join(HERE, "..", "python", "compactor", "templates.py")
    spec = importlib.util.spec_from_file_location("compactor_templates", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def local_tokenizer(template_text):
    """A tiny tokenizer built here (nothing from a hub) carrying `template_text`."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "<s>": 1, "</s>": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="[UNK]")
    fast.chat_template = template_text
    return fast


QWEN_CALL = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.S)


def _snippet_rendered(text, rendered):
    """Whether a message's text shows in a rendering (raw, or JSON-escaped as
    Llama's template prints tool results)."""
    snippet = text.strip()[:40].strip()
    if not snippet:
        return True
    return any(v in rendered for v in (snippet, json.dumps(snippet)[1:-1],
                                       json.dumps(snippet, ensure_ascii=False)[1:-1]))


def check_templates(ds, plain, failures, out=print):
    """Renders every row of `ds` with the vendored templates (see the module doc).

    `plain`: the files hold JSON as plain strings (decoded here first)."""
    import jsonschema

    helper = load_helper()
    toks = {}
    for name, fname in TEMPLATE_FILES.items():
        with open(os.path.join(TEMPLATE_DIR, fname), encoding="utf-8") as f:
            toks[name] = local_tokenizer(f.read())
    stats = {name: dict(rendered=0, refused=0, failed=0, double_encoded=0, dropped=0, empty_turns=0)
             for name in TEMPLATE_FILES}
    calls = undeclared = invalid = 0
    refusals = {}
    for row in ds:
        where = f"row {row.get('id')!r}"
        if plain:
            row = dict(row)
            row["tools"] = json.loads(row["tools"]) if row.get("tools") else None
            for m in row["messages"] or []:
                for c in m.get("tool_calls") or []:
                    if isinstance(c["function"].get("arguments"), str):
                        c["function"]["arguments"] = json.loads(c["function"]["arguments"])
        tools = row.get("tools") or []
        schemas = {(t.get("function") or {}).get("name"): (t.get("function") or {}).get("parameters")
                   for t in tools}
        for m in row["messages"] or []:
            for c in m.get("tool_calls") or []:
                calls += 1
                fn = c.get("function") or {}
                if fn.get("name") not in schemas:
                    undeclared += 1
                    failures.fail(f"{where}: call {c.get('id')!r} to {fn.get('name')!r}, which `tools` does not declare")
                elif schemas[fn.get("name")] is not None:
                    try:
                        jsonschema.validate(fn.get("arguments"), schemas[fn.get("name")])
                    except jsonschema.ValidationError as e:
                        invalid += 1
                        failures.fail(f"{where}: call {c.get('id')!r} does not validate: {e.message}")
        for name, tok in toks.items():
            st = stats[name]
            if name == "qwen2.5":
                messages, row_tools = row["messages"], row.get("tools")
            else:
                try:
                    fixed = helper.for_template(row, name)
                except helper.TemplateRefusal as e:
                    st["refused"] += 1
                    refusals.setdefault(name, []).append(f"{where}: {e.reason}")
                    continue
                messages, row_tools = fixed["messages"], fixed.get("tools")
            try:
                text = tok.apply_chat_template(messages, tools=row_tools or None, tokenize=False)
            except Exception as e:  # a template exception is a failed row
                st["failed"] += 1
                failures.fail(f"{where}: {name} raises {type(e).__name__}: {e}")
                continue
            st["rendered"] += 1
            for m in messages:
                for c in m.get("tool_calls") or []:
                    if isinstance((c.get("function") or {}).get("arguments"), str):
                        st["double_encoded"] += 1
                        failures.fail(f"{where}: {name}: call {c.get('id')!r} has arguments as a JSON string")
                content = m.get("content")
                if isinstance(content, str) and not _snippet_rendered(content, text):
                    st["dropped"] += 1
                    failures.fail(f"{where}: {name} drops a {m.get('role')} message ({content[:40]!r})")
            # Qwen prints each call as a JSON object: its arguments must be an object there.
            for block in QWEN_CALL.findall(text) if name == "qwen2.5" else ():
                try:
                    args = json.loads(block).get("arguments")
                except (ValueError, AttributeError):
                    continue  # text that only looks like a call (a log quoting one)
                if isinstance(args, str):
                    st["double_encoded"] += 1
                    failures.fail(f"{where}: {name} renders arguments as a quoted JSON string")
            for _ in EMPTY_BY_TEMPLATE[name].finditer(text):
                st["empty_turns"] += 1
                failures.fail(f"{where}: {name} renders an empty turn")
    for name, st in stats.items():
        out(f"template {name}: {json.dumps(st)}")
        for r in refusals.get(name, []):
            out(f"  {name} cannot take {r}")
    out(f"tools: {calls} calls, {undeclared} to undeclared tools, {invalid} not valid against their schema")
    return stats


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    readme = None
    if "--readme" in argv:
        readme = argv[argv.index("--readme") + 1]
        args.remove(readme)
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import duckdb  # noqa: F401
        import jinja2  # noqa: F401
        import polars  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as e:
        print(f"check_parquet: {e}: pip install pyarrow duckdb polars jinja2", file=sys.stderr)
        return 2
    failures, totals = check(args[0], readme, "--require-datasets" in argv)
    if failures.items:
        print(f"check_parquet: {len(failures.items)} failures")
        return 1
    print(f"check_parquet: OK: {totals['rows']} rows, {totals['messages']} messages, "
          f"{totals['calls']} tool calls = {totals['tool_messages']} tool messages + "
          f"{totals['in_flight_calls']} calls in flight at the end, "
          f"{totals['empty_turns']} empty turns ({totals['call_only_turns']} call-only turns under plain ChatML)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
