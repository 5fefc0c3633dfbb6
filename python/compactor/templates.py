"""Rows made acceptable to the stricter chat templates (Llama 3.1, Mistral).

Our training rows (``--to parquet``, loaded with ``datasets``) render as they
are through Qwen2.5's tool-calling template. Llama 3.1's and Mistral's
published templates refuse more: Llama renders one call per assistant message
and tests ``'tool_calls' in message`` (a struct column gives every message the
key, null or not); Mistral wants call ids of 9 alphanumeric characters and
user/assistant turns that alternate after one optional system message.
:func:`for_template` rewrites a row for one of them, or raises
:class:`TemplateRefusal` saying why it cannot: never a silent skip.
"""

import copy
import json

TEMPLATES = ("qwen2.5", "llama3.1", "mistral")


class TemplateRefusal(ValueError):
    """A row the template cannot take, and why (``.reason``)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def _without_nulls(value):
    """``value`` with every ``None`` entry of every dict left out (as a JSON
    record would have the key absent), arguments parsed to objects."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _arguments(call):
    fn = call.get("function") or {}
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            fn["arguments"] = json.loads(args)
        except ValueError:
            raise TemplateRefusal(f"call {call.get('id')!r}: arguments are not JSON") from None
    return call


def _leading_system(messages):
    """One system message first: later system and developer texts folded into it."""
    texts, rest = [], []
    for i, m in enumerate(messages):
        if m.get("role") == "developer" or (m.get("role") == "system"):
            if m.get("content"):
                texts.append(m["content"])
        else:
            rest.append(m)
    return ([{"role": "system", "content": "\n\n".join(texts)}] if texts else []) + rest


def _one_call_per_message(messages):
    """Each assistant message with calls becomes its text (if any), then one
    message per call, each followed by the results that answer it."""
    out, i = [], 0
    while i < len(messages):
        m = messages[i]
        calls = m.get("tool_calls") or []
        if m.get("role") != "assistant" or not calls:
            out.append(m)
            i += 1
            continue
        j = i + 1
        results = []
        while j < len(messages) and messages[j].get("role") == "tool":
            results.append(messages[j])
            j += 1
        flag = {"train": m["train"]} if "train" in m else {}
        # Whitespace between calls (Hermes tags) is no turn of its own.
        if (m.get("content") or "").strip():
            out.append({"role": "assistant", "content": m["content"], **flag})
        for c in calls:
            out.append({"role": "assistant", "tool_calls": [c], **flag})
            out.extend(r for r in results if r.get("tool_call_id") == c.get("id"))
        known = {c.get("id") for c in calls}
        out.extend(r for r in results if r.get("tool_call_id") not in known)
        i = j
    return out


def _mistral_ids(messages):
    """Call ids renumbered as 9 digits, in order of call; results follow their call."""
    ids = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            ids.setdefault(c.get("id"), f"{len(ids) + 1:09d}")
            c["id"] = ids[c.get("id")]
    for m in messages:
        if m.get("role") == "tool":
            if m.get("tool_call_id") not in ids:
                raise TemplateRefusal(f"tool result {m.get('tool_call_id')!r} answers no call")
            m["tool_call_id"] = ids[m["tool_call_id"]]
    return messages


def _alternating(messages):
    """Consecutive user (or assistant text) turns merged, as Mistral's
    alternation check counts only turns that are neither tools nor calls."""
    out = []
    for m in messages:
        role = m.get("role")
        is_turn = role in ("user", "assistant") and not m.get("tool_calls")
        prev = next((p for p in reversed(out) if p.get("role") in ("user", "assistant")
                     and not p.get("tool_calls")), None)
        last = out[-1] if out else None
        if is_turn and last is prev and prev is not None and prev.get("role") == role:
            prev["content"] = (prev.get("content") or "") + "\n\n" + (m.get("content") or "")
            if "train" in prev or "train" in m:
                prev["train"] = bool(prev.get("train")) and bool(m.get("train"))
            continue
        out.append(m)
    turns = [m["role"] for m in out if m.get("role") in ("user", "assistant") and not m.get("tool_calls")]
    if turns and turns[0] != "user":
        raise TemplateRefusal("the first turn after the system message is the assistant's (Mistral needs a user turn first)")
    for a, b in zip(turns, turns[1:]):
        if a == b:
            raise TemplateRefusal(f"two {a} turns in a row around tool calls")
    return out


def _mistral_system(messages):
    """Mistral's template shows the system prompt only inside the last user
    turn, and only when that turn ends the conversation (at inference); for a
    training row, where an assistant turn ends it, the prompt is put where
    Mistral puts it, before the last user message's text."""
    if not messages or messages[0].get("role") != "system":
        return messages
    system, rest = messages[0], messages[1:]
    users = [i for i, m in enumerate(rest) if m.get("role") == "user"]
    if not users:
        raise TemplateRefusal("a system message but no user turn to carry it (Mistral)")
    last = dict(rest[users[-1]])
    last["content"] = (system.get("content") or "") + "\n\n" + (last.get("content") or "")
    rest[users[-1]] = last
    return rest


def _mistral_calls_alone(messages):
    for m in messages:
        if m.get("role") == "assistant" and m.get("tool_calls") and (m.get("content") or "").strip():
            raise TemplateRefusal(
                "an assistant message with text and calls (Mistral's template renders only the calls, "
                "and a text turn of its own would break its user/assistant alternation)")
    return messages


def for_template(row, template):
    """``row`` (a dict with ``messages`` and maybe ``tools``, as ``datasets``
    gives a training row) made acceptable to ``template``: ``"qwen2.5"``
    (unchanged but for null keys), ``"llama3.1"`` or ``"mistral"``.

    Returns a new dict (the input is not changed) whose ``messages`` and
    ``tools`` go to ``tokenizer.apply_chat_template(messages, tools=tools)``;
    every ``train`` flag stays on its message (a split message's parts keep it,
    merged turns train only if all did). Raises :class:`TemplateRefusal` with
    the reason when the row cannot be rendered by that template.
    """
    if template not in TEMPLATES:
        raise ValueError(f"template {template!r}: one of {', '.join(TEMPLATES)}")
    row = _without_nulls(copy.deepcopy(dict(row)))
    messages = row.get("messages") or []
    if not messages:
        raise TemplateRefusal("no messages")
    for m in messages:
        for c in m.get("tool_calls") or []:
            _arguments(c)
        if m.get("role") not in ("system", "developer", "user", "assistant", "tool"):
            raise TemplateRefusal(f"role {m.get('role')!r} has no place in {template}")
    if template != "qwen2.5":
        messages = _leading_system(messages)
    if template == "llama3.1":
        messages = _one_call_per_message(messages)
        if not any(m.get("role") != "system" for m in messages):
            raise TemplateRefusal("only a system message (Llama 3.1 puts the tools in the first user turn)")
    if template == "mistral":
        messages = _mistral_system(_alternating(_mistral_ids(_mistral_calls_alone(messages))))
    row["messages"] = messages
    return row
