"""Typing stubs of the compactor package (see compactor/__init__.py)."""

from typing import Any, Dict, List, Literal, Mapping, Union

JSON = Any
Record = Union[Dict[str, JSON], List[JSON]]
Options = Union[str, int, float, bool, None]

class CompactorError(ValueError):
    """A record or an option compactor refuses; the message names the row, field or option."""

class TemplateRefusal(ValueError):
    """A row a chat template cannot take; ``reason`` says why."""

    reason: str

def compact(record: Record, **options: Options) -> Record:
    """One session record compacted: ``json.loads`` of the CLI's output line for it."""

def compact_batch(batch: Mapping[str, List[JSON]], **options: Options) -> Dict[str, List[JSON]]:
    """Columns in, columns out (``messages``, ``tools``, ``compaction``, ...), rows in parallel."""

def compact_json(text: Union[str, bytes], **options: Options) -> str:
    """What ``compactor compact - OPTIONS`` writes for ``text`` on standard input, byte for byte."""

def count_tokens(text_or_record: Union[str, Record], **options: Options) -> int:
    """Tokens of a text, or of a record's whole request."""

def anchors(record: Record, **options: Options) -> Dict[str, JSON]:
    """``compactor anchors``' line for one record."""

def for_template(
    row: Mapping[str, JSON], template: Literal["qwen2.5", "llama3.1", "mistral"]
) -> Dict[str, JSON]:
    """``row`` made acceptable to a stricter chat template; raises TemplateRefusal."""
