//! Writing a ShareGPT record: messages grouped into entries (a tool turn
//! holds consecutive results), the ids reading would not find on its own
//! written, and each entry's `value` rendered as the layout marker says.

use super::ids::{IdTurn, assign};
use super::{
    CALL_CLOSE, CALL_OPEN, CONTENT_PARTS, LAYOUT, OPENAI_CALL, RESP_CLOSE, RESP_OPEN,
    default_label, insert_at, is_synthetic, layout_flag, layout_of, layout_str, novalue,
    parts_carrier, role_of,
};
use crate::formats::carried::{
    OPENAI_ARGUMENTS, OPENAI_CONTENT, OPENAI_ROLE, carry_session, put_attached, write_top,
};
use crate::formats::json_style::{JSON_STYLES, JsonStyle, parse_object};
use crate::formats::openai::encode_message;
use crate::model::{ArgsForm, Message, Part, Role, Session, ToolCall};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The OpenAI JSON of a message as an object.
fn message_json(m: &Message) -> Map<String, Value> {
    match encode_message(m) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Text of a content value for a `value`, and the carriers it needs.
struct TextOf {
    text: String,
    /// `content_parts`, for list content.
    parts: Option<Vec<Value>>,
    /// The content form: `string`, `null`, `absent` or `parts`.
    form: &'static str,
}

fn text_of(content: Option<&Value>) -> TextOf {
    match content {
        Some(Value::String(s)) => TextOf { text: s.clone(), parts: None, form: "string" },
        Some(Value::Array(items)) => {
            let (text, carrier) = parts_carrier(items);
            TextOf { text, parts: Some(carrier), form: "parts" }
        }
        Some(_) => TextOf { text: String::new(), parts: None, form: "null" },
        None => TextOf { text: String::new(), parts: None, form: "absent" },
    }
}

/// The `value` of an assistant message with tool calls, and its carriers.
/// `written[k]`: write call `k`'s id. `function_call`: the old style.
pub(super) fn render_calls(
    m: &Message,
    written: &[bool],
    function_call: bool,
) -> (String, Map<String, Value>) {
    let j = message_json(m);
    let layout = layout_of(m);
    let calls_layout: Vec<Option<&Map<String, Value>>> = layout
        .and_then(|l| l.get("calls"))
        .and_then(Value::as_array)
        .map(|a| a.iter().map(Value::as_object).collect())
        .unwrap_or_default();
    let cjs: Vec<Map<String, Value>> = match j.get("tool_calls") {
        Some(Value::Array(items)) => {
            items.iter().map(|v| v.as_object().cloned().unwrap_or_default()).collect()
        }
        _ => Vec::new(),
    };
    let t = text_of(j.get("content"));
    let mut carriers = Map::new();
    let derived = if t.text.is_empty() { "null" } else { "string" };
    match &t.parts {
        Some(p) => {
            carriers.insert(CONTENT_PARTS.into(), Value::Array(p.clone()));
        }
        None if t.form != derived => {
            carriers.insert(OPENAI_CONTENT.into(), Value::String(t.form.into()));
        }
        None => {}
    }
    let (dws, close_open) = if function_call { ("", false) } else { ("\n", true) };
    let blocks: Vec<String> = m
        .tool_calls
        .iter()
        .enumerate()
        .map(|(k, call)| {
            let cl = calls_layout.get(k).copied().flatten();
            let cj = cjs.get(k).cloned().unwrap_or_default();
            let inner = render_call(call, &cj, cl, written.get(k).copied().unwrap_or(false), dws);
            if close_open { format!("{CALL_OPEN}{inner}{CALL_CLOSE}") } else { inner }
        })
        .collect();
    if function_call {
        return (blocks.concat(), carriers);
    }
    (place_calls(&t.text, &blocks, layout), carriers)
}

/// Puts the call blocks into the text: at the recorded offsets when they still
/// fit, else after the text, one per line.
fn place_calls(text: &str, blocks: &[String], layout: Option<&Map<String, Value>>) -> String {
    let at: Option<Vec<usize>> = layout
        .and_then(|l| l.get("at"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_u64().map(|n| n as usize)).collect());
    let len = layout.and_then(|l| l.get("len")).and_then(Value::as_u64);
    if let Some(at) = at
        && at.len() == blocks.len()
        && len == Some(text.len() as u64)
        && at.windows(2).all(|w| w[0] <= w[1])
        && at.iter().all(|&o| text.is_char_boundary(o))
    {
        let mut out = String::new();
        let mut pos = 0;
        for (o, b) in at.iter().zip(blocks) {
            out.push_str(&text[pos..*o]);
            out.push_str(b);
            pos = *o;
        }
        out.push_str(&text[pos..]);
        return out;
    }
    let calls = blocks.join("\n");
    if text.is_empty() { calls } else { format!("{text}\n{calls}") }
}

/// The JSON text of one call inside its tags (with the whitespace around it).
fn render_call(
    call: &ToolCall,
    cj: &Map<String, Value>,
    layout: Option<&Map<String, Value>>,
    write_id: bool,
    default_ws: &str,
) -> String {
    let pre = layout_str(layout, "pre").unwrap_or(default_ws);
    let post = layout_str(layout, "post").unwrap_or(default_ws);
    let parsed = serde_json::from_str::<Value>(&call.arguments).ok();
    let (args, value_form, writer_style) = match call.args_form {
        ArgsForm::Value => {
            (parsed.unwrap_or_else(|| Value::String(call.arguments.clone())), true, None)
        }
        ArgsForm::String if layout_flag(layout, "args_string") => {
            (Value::String(call.arguments.clone()), false, None)
        }
        ArgsForm::String => {
            match parsed
                .and_then(|v| JsonStyle::detect(&v, &call.arguments, JSON_STYLES).map(|s| (v, s)))
            {
                Some((v, s)) => (v, false, Some(s)),
                None => (Value::String(call.arguments.clone()), false, None),
            }
        }
    };
    let mut obj = Map::new();
    let function = cj.get("function").and_then(Value::as_object).cloned().unwrap_or_default();
    for (k, v) in &function {
        match k.as_str() {
            "name" => {
                obj.insert(k.clone(), Value::String(call.name.clone()));
            }
            "arguments" => {
                obj.insert(k.clone(), args.clone());
            }
            _ => {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    if !obj.contains_key("name") {
        let mut with = Map::new();
        with.insert("name".into(), Value::String(call.name.clone()));
        with.extend(obj);
        obj = with;
    }
    if !obj.contains_key("arguments") {
        obj.insert("arguments".into(), args);
    }
    if write_id {
        let at = layout.and_then(|l| l.get("id")).and_then(Value::as_u64).map(|n| n as usize);
        obj = insert_at(obj, "id", Value::String(call.id.clone()), at);
    }
    let mut call_extra = cj.clone();
    call_extra.shift_remove("id");
    call_extra.shift_remove("function");
    let default_extra =
        call_extra.len() == 1 && call_extra.get("type").and_then(Value::as_str) == Some("function");
    if !default_extra {
        obj.insert(OPENAI_CALL.into(), Value::Object(call_extra));
    }
    if value_form {
        obj.insert(OPENAI_ARGUMENTS.into(), Value::String("value".into()));
    }
    if let Some(raw) = layout_str(layout, "raw")
        && let Some((robj, _)) = parse_object(raw)
        && strip_for_compare(&robj) == strip_for_compare(&obj)
    {
        return format!("{pre}{raw}{post}");
    }
    let obj = Value::Object(obj);
    let style = layout_str(layout, "fmt")
        .and_then(JsonStyle::from_name)
        .or(writer_style)
        .unwrap_or(JsonStyle::Spaced);
    format!("{pre}{}{post}", style.render(&obj))
}

/// A call object as compared with a recorded raw text: empty arguments (`""`
/// or `{}`, what a call written without `arguments` reads back as) left out.
fn strip_for_compare(o: &Map<String, Value>) -> Map<String, Value> {
    let mut o = o.clone();
    let empty = match o.get("arguments") {
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Object(m)) => m.is_empty(),
        _ => false,
    };
    if empty {
        o.shift_remove("arguments");
    }
    o
}

/// The `value` of a tool turn holding `msgs`, and the carriers of its entry.
/// `written[r]`: write the result's `tool_call_id`; `names[r]`: the answered
/// call's name.
pub(super) fn render_results(
    msgs: &[Message],
    written: &[bool],
    names: &[Option<String>],
) -> (String, Map<String, Value>) {
    let mut entry_extra = Map::new();
    if let [m] = msgs
        && layout_flag(layout_of(m), "bare")
        && let Some(Value::String(s)) = message_json(m).get("content")
    {
        let write_id = written.first().copied().unwrap_or(false);
        for (k, v) in message_json(m) {
            match k.as_str() {
                "role" | "content" | LAYOUT => {}
                "tool_call_id" if !write_id => {}
                _ => {
                    entry_extra.insert(k, v);
                }
            }
        }
        return (s.clone(), entry_extra);
    }
    let mut out = String::new();
    for (r, m) in msgs.iter().enumerate() {
        let layout = layout_of(m);
        let default_gap = if r == 0 { "" } else { "\n" };
        out.push_str(layout_str(layout, "before").unwrap_or(default_gap));
        out.push_str(RESP_OPEN);
        out.push_str(&render_result(
            m,
            written.get(r).copied().unwrap_or(false),
            names.get(r).cloned().flatten(),
            r == 0,
            &mut entry_extra,
        ));
        out.push_str(RESP_CLOSE);
        if r + 1 == msgs.len() {
            out.push_str(layout_str(layout, "after").unwrap_or(""));
        }
    }
    (out, entry_extra)
}

/// The inside of one `<tool_response>` tag. Keys a raw result cannot hold go
/// to the entry (`entry_extra`) for the first result of a turn.
fn render_result(
    m: &Message,
    write_id: bool,
    derived_name: Option<String>,
    first: bool,
    entry_extra: &mut Map<String, Value>,
) -> String {
    let layout = layout_of(m);
    let pre = layout_str(layout, "pre").unwrap_or("\n");
    let post = layout_str(layout, "post").unwrap_or("\n");
    let mut j = message_json(m);
    let fmt = layout_str(layout, "fmt").and_then(JsonStyle::from_name).unwrap_or(JsonStyle::Spaced);
    if first && let Some(Value::Array(keys)) = layout.and_then(|l| l.get("entry")) {
        for k in keys.iter().filter_map(Value::as_str) {
            if let Some(v) = j.shift_remove(k) {
                entry_extra.insert(k.to_string(), v);
            }
        }
    }
    let others = j
        .keys()
        .filter(|k| !matches!(k.as_str(), "role" | "content" | "tool_call_id" | LAYOUT))
        .count();
    if layout_flag(layout, "raw")
        && let Some(Value::String(s)) = j.get("content")
        && !write_id
        && m.attached.is_empty()
        && others == 0
    {
        return format!("{pre}{s}{post}");
    }
    let mut obj = Map::new();
    let mut explicit_name_moved = None;
    for (k, v) in &j {
        match k.as_str() {
            "role" | LAYOUT => {}
            "tool_call_id" => {
                if write_id {
                    obj.insert(k.clone(), v.clone());
                }
            }
            "content" => match v {
                Value::String(s) if layout_flag(layout, "content_json") => {
                    let style = if fmt == JsonStyle::Python { JsonStyle::Spaced } else { fmt };
                    match serde_json::from_str::<Value>(s) {
                        Ok(parsed) if style.render(&parsed) == *s => {
                            obj.insert(k.clone(), parsed);
                        }
                        _ => {
                            obj.insert(k.clone(), v.clone());
                        }
                    }
                }
                Value::Array(items) => {
                    let (text, carrier) = parts_carrier(items);
                    obj.insert(k.clone(), Value::String(text));
                    obj.insert(CONTENT_PARTS.into(), Value::Array(carrier));
                }
                _ => {
                    obj.insert(k.clone(), v.clone());
                }
            },
            _ => {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    if write_id
        && !obj.contains_key("tool_call_id")
        && let Some(id) = &m.tool_call_id
    {
        obj = insert_at(obj, "tool_call_id", Value::String(id.clone()), Some(0));
    }
    if write_id && !m.extra.contains_key("tool_call_id") {
        // A demanded id goes first, where Hermes writes it.
        if let Some(v) = obj.shift_remove("tool_call_id") {
            obj = insert_at(obj, "tool_call_id", v, Some(0));
        }
    }
    let slot_index = usize::from(obj.keys().next().map(String::as_str) == Some("tool_call_id"));
    match (obj.get("name").and_then(Value::as_str), &derived_name) {
        (Some(n), Some(d)) if n == d => {
            let index = obj.keys().position(|k| k == "name");
            if index == Some(slot_index) {
                // Explicit but where a derived name would be: move it last so
                // that reading keeps it.
                explicit_name_moved = obj.shift_remove("name");
            }
        }
        (None, Some(d)) if !layout_flag(layout, "noname") => {
            obj = insert_at(obj, "name", Value::String(d.clone()), Some(slot_index));
        }
        _ => {}
    }
    if let Some(n) = explicit_name_moved {
        obj.insert("name".into(), n);
    }
    put_attached(&mut obj, m);
    format!("{pre}{}{post}", fmt.render(&Value::Object(obj)))
}

/// The `value` of an observation entry.
pub(super) fn observation_value(m: &Message) -> String {
    text_of(message_json(m).get("content")).text
}

/// How messages are grouped into entries when writing.
pub(super) enum Plan {
    Plain(usize),
    Calls(usize, bool),
    Results(Vec<usize>),
    Observation(usize),
}

fn is_observation(m: &Message) -> bool {
    layout_str(layout_of(m), "from") == Some("observation")
}

/// Groups canonical messages into entries.
pub(super) fn plan(msgs: &[Message]) -> Vec<Plan> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        // A tool entry without `value` was read as a plain entry (no result
        // to parse) and is written back as one (fuzz finding
        // `sharegpt_tool_entry_without_value`).
        if m.role == Role::Tool && !novalue(m) {
            if is_observation(m) {
                out.push(Plan::Observation(i));
                i += 1;
                continue;
            }
            let mut group = vec![i];
            i += 1;
            while i < msgs.len()
                && msgs[i].role == Role::Tool
                && !is_observation(&msgs[i])
                && !novalue(&msgs[i])
                && !layout_flag(layout_of(&msgs[i]), "new_turn")
                && layout_str(layout_of(&msgs[i]), "from").is_none()
            {
                group.push(i);
                i += 1;
            }
            out.push(Plan::Results(group));
            continue;
        }
        if m.role == Role::Assistant && !m.tool_calls.is_empty() {
            let fc = layout_str(layout_of(m), "from") == Some("function_call")
                && m.tool_calls.len() == 1
                && text_of(message_json(m).get("content")).text.is_empty()
                && !m.content.parts.iter().any(|p| !matches!(p, Part::Text(_)));
            out.push(Plan::Calls(i, fc));
        } else {
            out.push(Plan::Plain(i));
        }
        i += 1;
    }
    out
}

/// Decides which ids must be written so that reading pairs and names every
/// call and result as the session does.
/// `answered`: [`answered_names`] of `msgs`.
pub(super) fn plan_ids(
    msgs: &[Message],
    plans: &[Plan],
    answered: &HashMap<usize, &str>,
) -> (Vec<Vec<bool>>, Vec<Vec<bool>>) {
    let mut call_w: Vec<Vec<bool>> = plans
        .iter()
        .map(|p| match p {
            Plan::Calls(i, _) => {
                let cl: Vec<Option<&Map<String, Value>>> = layout_of(&msgs[*i])
                    .and_then(|l| l.get("calls"))
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(Value::as_object).collect())
                    .unwrap_or_default();
                (0..msgs[*i].tool_calls.len())
                    .map(|k| cl.get(k).copied().flatten().is_some_and(|l| l.contains_key("id")))
                    .collect()
            }
            _ => Vec::new(),
        })
        .collect();
    let members = |p: &Plan| -> Vec<usize> {
        match p {
            Plan::Results(g) => g.clone(),
            Plan::Observation(i) => vec![*i],
            _ => Vec::new(),
        }
    };
    // A result writes its `tool_call_id` when the id is a real one (not
    // synthetic) that reading did not infer, or a synthetic one the source
    // wrote; anything else only when reading would otherwise pair differently.
    let mut res_w: Vec<Vec<bool>> = plans
        .iter()
        .map(|p| {
            members(p)
                .iter()
                .map(|&i| {
                    let m = &msgs[i];
                    let l = layout_of(m);
                    m.tool_call_id.as_deref().is_some_and(|id| {
                        layout_flag(l, "id") || (!is_synthetic(id) && !layout_flag(l, "noid"))
                    })
                })
                .collect()
        })
        .collect();
    let max_rounds =
        call_w.iter().map(Vec::len).sum::<usize>() + res_w.iter().map(Vec::len).sum::<usize>() + 1;
    for round in 0..max_rounds {
        // One fix per round (a fixed call often fixes the others); past 64
        // rounds, every mismatch at once.
        let one_at_a_time = round < 64;
        let turns: Vec<IdTurn> = plans
            .iter()
            .enumerate()
            .map(|(t, p)| match p {
                Plan::Calls(i, _) => IdTurn::Calls(
                    msgs[*i]
                        .tool_calls
                        .iter()
                        .enumerate()
                        .map(|(k, c)| (c.name.clone(), call_w[t][k].then(|| c.id.clone())))
                        .collect(),
                ),
                Plan::Results(_) | Plan::Observation(_) => IdTurn::Results(
                    members(p)
                        .iter()
                        .enumerate()
                        .map(|(r, &i)| {
                            let m = &msgs[i];
                            let explicit = m.extra.get("name").and_then(Value::as_str);
                            let raw = (layout_flag(layout_of(m), "raw") && !res_w[t][r])
                                || layout_flag(layout_of(m), "noname")
                                || layout_flag(layout_of(m), "bare");
                            let obs = matches!(p, Plan::Observation(_));
                            let name = match explicit {
                                Some(n) => Some(n.to_string()),
                                None if obs || raw => None,
                                None => answered.get(&i).map(|n| n.to_string()),
                            };
                            (res_w[t][r].then(|| m.tool_call_id.clone()).flatten(), name)
                        })
                        .collect(),
                ),
                Plan::Plain(_) => IdTurn::Other,
            })
            .collect();
        let got = assign(&turns);
        let mut rename: HashMap<String, String> = HashMap::new();
        let mut changed = false;
        // How reading renumbers synthetic ids (they follow positions).
        for (t, p) in plans.iter().enumerate() {
            if let Plan::Calls(i, _) = p {
                for (k, c) in msgs[*i].tool_calls.iter().enumerate() {
                    let y = got.calls[t].get(k).cloned().unwrap_or_default();
                    if is_synthetic(&c.id) && is_synthetic(&y) {
                        rename.entry(c.id.clone()).or_insert(y);
                    }
                }
            }
        }
        // Results first: an id on a result is Hermes' own format.
        for (t, p) in plans.iter().enumerate() {
            for (r, &i) in members(p).iter().enumerate() {
                let m = &msgs[i];
                let expected = m.tool_call_id.as_ref().map(|x| {
                    if is_synthetic(x) { rename.get(x).unwrap_or(x).clone() } else { x.clone() }
                });
                let y = got.results[t].get(r).cloned().flatten();
                let fixable = m.tool_call_id.is_some() && !res_w[t][r];
                if y == expected || !fixable || (changed && one_at_a_time) {
                    continue;
                }
                res_w[t][r] = true;
                changed = true;
            }
        }
        for (t, p) in plans.iter().enumerate() {
            if let Plan::Calls(i, _) = p {
                for (k, c) in msgs[*i].tool_calls.iter().enumerate() {
                    let y = got.calls[t].get(k).cloned().unwrap_or_default();
                    let ok = y == c.id || rename.get(&c.id) == Some(&y);
                    if ok || call_w[t][k] || (changed && one_at_a_time) {
                        continue;
                    }
                    call_w[t][k] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    (call_w, res_w)
}

/// Writes one ShareGPT session record.
pub fn encode_session(session: &Session, compaction: Option<&Value>) -> Value {
    let msgs = session.messages.as_slice();
    let top = msgs.first().filter(|m| {
        m.role == Role::System
            && layout_of(m).and_then(|l| l.get("top")).is_some_and(Value::is_u64)
            && m.attached.is_empty()
            && matches!(message_json(m).get("content"), Some(Value::String(_)))
            && message_json(m).keys().all(|k| matches!(k.as_str(), "role" | "content" | LAYOUT))
    });
    let rest = if top.is_some() { &msgs[1..] } else { msgs };
    let system = top.and_then(|m| message_json(m).get("content").cloned());
    let conversations = vec![("conversations", Value::Array(encode_entries(rest)))];
    let mut out = write_top(session, conversations, |v| top.is_some() || v.is_string());
    if let Some(s) = system {
        let at = top
            .and_then(layout_of)
            .and_then(|l| l.get("top"))
            .and_then(Value::as_u64)
            .map(|n| n as usize);
        out = insert_at(out, "system", s, at);
    }
    carry_session(&mut out, session, compaction);
    Value::Object(out)
}

/// The name of the call each result (by message index) answers, as reading
/// pairs them: a result takes the oldest call with its id that no earlier
/// result took, so a second result of one call answers none and keeps its own
/// `name` (fuzz finding `sharegpt_call_pairing`). Tool messages read from
/// entries without `value` are plain entries, no results.
pub(super) fn answered_names(msgs: &[Message]) -> HashMap<usize, &str> {
    let mut pending: Vec<(&str, &str)> = Vec::new();
    let mut answered = HashMap::new();
    for (i, m) in msgs.iter().enumerate() {
        pending.extend(m.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str())));
        if m.role == Role::Tool
            && !novalue(m)
            && let Some(id) = m.tool_call_id.as_deref()
            && let Some(at) = pending.iter().position(|(p, _)| *p == id)
        {
            answered.insert(i, pending.remove(at).1);
        }
    }
    answered
}

/// Writes the messages as `conversations` entries.
fn encode_entries(msgs: &[Message]) -> Vec<Value> {
    let plans = plan(msgs);
    let answered = answered_names(msgs);
    let (call_w, res_w) = plan_ids(msgs, &plans, &answered);
    plans
        .iter()
        .enumerate()
        .map(|(t, p)| match p {
            Plan::Plain(i) => {
                let m = &msgs[*i];
                let text = text_of(message_json(m).get("content"));
                let mut carriers = Map::new();
                let without_value = novalue(m);
                match (&text.parts, text.form) {
                    (Some(p), _) => {
                        carriers.insert(CONTENT_PARTS.into(), Value::Array(p.clone()));
                    }
                    (None, "absent") if without_value => {}
                    (None, "null" | "absent") => {
                        carriers.insert(OPENAI_CONTENT.into(), Value::String(text.form.into()));
                    }
                    _ => {}
                }
                let omit_value = text.form == "absent" && without_value;
                entry(m, (!omit_value).then_some(text.text), carriers, None)
            }
            Plan::Calls(i, fc) => {
                let m = &msgs[*i];
                let (value, carriers) = render_calls(m, &call_w[t], *fc);
                let label = if *fc { Some("function_call") } else { None };
                entry(m, Some(value), carriers, label)
            }
            Plan::Observation(i) => {
                let m = &msgs[*i];
                let text = text_of(message_json(m).get("content"));
                let mut carriers = Map::new();
                match (&text.parts, text.form) {
                    (Some(p), _) => {
                        carriers.insert(CONTENT_PARTS.into(), Value::Array(p.clone()));
                    }
                    (None, "null" | "absent") => {
                        carriers.insert(OPENAI_CONTENT.into(), Value::String(text.form.into()));
                    }
                    _ => {}
                }
                let mut e = entry(m, Some(text.text), carriers, None);
                if let Value::Object(map) = &mut e
                    && !res_w[t].first().copied().unwrap_or(false)
                {
                    map.shift_remove("tool_call_id");
                }
                e
            }
            Plan::Results(group) => {
                let members: Vec<Message> = group.iter().map(|&i| msgs[i].clone()).collect();
                let names: Vec<Option<String>> =
                    group.iter().map(|i| answered.get(i).map(|n| n.to_string())).collect();
                let (value, entry_extra) = render_results(&members, &res_w[t], &names);
                let first = &msgs[group[0]];
                let mut e = Map::new();
                let label = layout_str(layout_of(first), "from").unwrap_or("tool");
                e.insert("from".into(), Value::String(label.to_string()));
                e.insert("value".into(), Value::String(value));
                for (k, v) in entry_extra {
                    e.entry(k).or_insert(v);
                }
                Value::Object(e)
            }
        })
        .collect()
}

/// An entry for one message: its OpenAI keys with `role` -> `from` and
/// `content` -> `value`, other keys as they are, then the carriers.
pub(super) fn entry(
    m: &Message,
    value: Option<String>,
    carriers: Map<String, Value>,
    label: Option<&str>,
) -> Value {
    let j = message_json(m);
    let label = label
        .map(str::to_string)
        .or_else(|| {
            layout_str(layout_of(m), "from")
                .filter(|l| role_of(l) == m.role || *l == "observation")
                .map(str::to_string)
        })
        .unwrap_or_else(|| default_label(&m.role).to_string());
    let mut e = Map::new();
    let mut value = value;
    for (k, v) in j {
        match k.as_str() {
            "role" => {
                e.insert("from".into(), Value::String(label.clone()));
                if m.role == Role::Developer && role_of(&label) != Role::Developer {
                    e.insert(OPENAI_ROLE.into(), Value::String("developer".into()));
                }
            }
            "content" => {
                if let Some(v) = value.take() {
                    e.insert("value".into(), Value::String(v));
                }
            }
            "tool_calls" if m.role == Role::Assistant && !m.tool_calls.is_empty() => {}
            LAYOUT => {}
            "from" | "value" => {
                e.insert(format!("openai_{k}"), v);
            }
            _ => {
                e.insert(k, v);
            }
        }
    }
    if let Some(v) = value {
        e = insert_at(e, "value", Value::String(v), Some(1));
    }
    for (k, v) in carriers {
        e.insert(k, v);
    }
    put_attached(&mut e, m);
    Value::Object(e)
}
