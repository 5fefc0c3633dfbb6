"""compactor from Python: compact agent transcripts, make training rows, count tokens.

Every function takes the options of ``compactor compact`` as keyword arguments,
named as on the command line with ``_`` for ``-`` (``window=32000``,
``mode="lean"``, ``force=True``, ``to="openai"``, ``counter="cl100k"``;
``from_="codex"`` for ``--from``), and resolves them with the CLI's own code,
so a value the CLI refuses raises :class:`CompactorError` naming the option.

- :func:`compact` — one record (a dict) → the compacted record, as
  ``json.loads`` of the line ``compactor compact -`` writes for it;
- :func:`compact_batch` — columns in, columns out, for
  ``datasets.Dataset.map(compact_batch, batched=True)``: rows compacted in
  parallel with the GIL released;
- :func:`compact_json` — JSON text in (JSON Lines, or a log file's text),
  the CLI's exact output bytes out;
- :func:`count_tokens`, :func:`anchors`;
- :func:`for_template` — a row made acceptable to the stricter chat templates
  (Llama 3.1, Mistral), or the reason it cannot be.
"""

import json

from . import _native
from ._native import CompactorError
from .templates import TemplateRefusal, for_template

__all__ = [
    "CompactorError",
    "TemplateRefusal",
    "anchors",
    "compact",
    "compact_batch",
    "compact_json",
    "count_tokens",
    "for_template",
]

# Options that name files or the terminal: the package returns what it makes.
_REFUSED = {"output", "o", "report", "rejects", "resume", "quiet", "q", "verbose", "v", "strict"}


def _argv(options):
    """The CLI's arguments for keyword ``options`` (``None`` and ``False`` omitted)."""
    argv = []
    for key, value in options.items():
        name = "from" if key == "from_" else key
        if name in _REFUSED:
            raise TypeError(f"option {key!r}: the Python package writes no files; use the CLI for it")
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        else:
            argv.extend([flag, str(value)])
    return argv


def _dumps(record):
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise CompactorError(f"record is not JSON: {e}") from None


def compact(record, **options):
    """Compacts one session record (a dict, or a list of messages).

    Returns the record as ``compactor compact -`` writes it (with its
    ``compaction`` object when it was compacted), parsed: ``compact(r)`` equals
    ``json.loads`` of the CLI's output line for ``r``. With ``to="parquet"``
    it returns the training row the Parquet output holds (``train`` flags,
    one leading system message, declared tools).
    """
    (out,) = _native.compact_rows_json([_dumps(record)], _argv(options))
    return json.loads(out)


def compact_batch(batch, **options):
    """Compacts a batch of rows given as columns (``{"messages": [...], "id": [...]}``).

    For ``datasets.Dataset.map(compact_batch, batched=True, fn_kwargs=...)``:
    the rows are compacted in parallel (``threads=N``, default every core)
    with the GIL released. Returns columns: ``messages``, ``tools`` and
    ``compaction`` (``None`` where a row has none), then every other key the
    output records have, each column as long as the batch. A ``None`` cell is
    an absent key. Row ``i`` of the result equals ``compact(row_i)``.
    """
    if not isinstance(batch, dict):
        raise TypeError("compact_batch takes columns: a dict of equally long lists")
    names = list(batch)
    rows = len(batch[names[0]]) if names else 0
    for name in names:
        if len(batch[name]) != rows:
            raise CompactorError(f"column {name!r} has {len(batch[name])} rows, not {rows}")
    # A null cell is an absent key (a column holds every row's keys).
    lines = [_dumps({n: batch[n][i] for n in names if batch[n][i] is not None}) for i in range(rows)]
    records = [json.loads(r) for r in _native.compact_rows_json(lines, _argv(options))]
    columns = {"messages": [], "tools": [], "compaction": []}
    for r in records:
        for k in r if isinstance(r, dict) else ():
            columns.setdefault(k, [])
    for r in records:
        r = r if isinstance(r, dict) else {"messages": r}
        for k, col in columns.items():
            col.append(r.get(k))
    return columns


def compact_json(text, **options):
    """What ``compactor compact - OPTIONS`` writes for ``text`` on standard input.

    ``text`` is JSON Lines or one document, in any dialect the CLI reads (a
    Claude Code or Codex log's whole text is one session). Returns the output
    text, byte for byte the CLI's; raises :class:`CompactorError` listing the
    records the CLI would reject.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return _native.compact_text(text, _argv(options))


def count_tokens(text_or_record, **options):
    """Tokens of a text, or of a record's whole request (tools and messages),
    as ``tokens_before`` counts it (``counter="o200k"`` by default)."""
    if isinstance(text_or_record, str):
        return _native.count_tokens_json(text_or_record, None, _argv(options))
    return _native.count_tokens_json(None, _dumps(text_or_record), _argv(options))


def anchors(record, **options):
    """``compactor anchors``' line for one record: ``{"source", "id", "anchors":
    {category: [{"value", "count"}, ...]}}`` (``region="middle"``, ``budget=CHARS``)."""
    return json.loads(_native.anchors_json(_dumps(record), _argv(options)))
