//! Reading a ShareGPT record: its entries parsed (calls in `<tool_call>`
//! tags, results in `<tool_response>` tags), call ids assigned, and every
//! parsed entry written again and compared with its `value`: an entry that
//! would not come back identical is read as plain text.

use super::encode::{
    answered_names, observation_value, plan, plan_ids, render_calls, render_results,
};
use super::ids::{Assigned, IdTurn, assign};
use super::{
    CALL_CLOSE, CALL_OPEN, CONTENT_PARTS, LAYOUT, OPENAI_CALL, RESP_CLOSE, RESP_OPEN, Seg,
    default_label, is_synthetic, parts_from_carrier, role_of, set_layout, split_tags, split_ws,
};
use crate::formats::carried::{ATTACHED, OPENAI_ARGUMENTS, OPENAI_CONTENT, OPENAI_ROLE, Top};
use crate::formats::json_style::{JSON_STYLES, JsonStyle, parse_object};
use crate::formats::openai::decode_message;
use crate::formats::slots::insert_after;
use crate::formats::{DecodeError, kind_of};
use crate::model::{Message, Role, Session, Source};
use serde_json::{Map, Value};

/// Reads one ShareGPT session record.
pub fn decode_session(record: Value, source: Source) -> Result<Session, DecodeError> {
    let Value::Object(map) = record else {
        return Err(DecodeError::new(format!(
            "not a ShareGPT session: expected an object, found {}",
            kind_of(&record)
        )));
    };
    if !map.get("conversations").is_some_and(Value::is_array) {
        return Err(DecodeError::new(
            "not a ShareGPT session: expected an object with a `conversations` array",
        ));
    }
    if map.contains_key("messages") {
        return Err(DecodeError::new(
            "a ShareGPT record with both `conversations` and `messages` is not supported",
        ));
    }
    let mut top = Top::read(map, "conversations", Value::is_string);
    let entries = std::mem::take(&mut top.messages);
    let mut entry_maps = Vec::with_capacity(entries.len());
    for (i, e) in entries.into_iter().enumerate() {
        let blame = |msg: String| DecodeError::new(format!("conversation entry {i}: {msg}"));
        let Value::Object(e) = e else {
            return Err(blame(format!("expected an object, found {}", kind_of(&e))));
        };
        match e.get("from") {
            Some(Value::String(_)) => {}
            Some(other) => return Err(blame(format!("`from` is {}", kind_of(other)))),
            None => return Err(blame("missing `from`".into())),
        }
        match e.get("value") {
            Some(Value::String(_)) | None => {}
            Some(other) => {
                return Err(blame(format!("`value` is {}, expected a string", kind_of(other))));
            }
        }
        entry_maps.push(e);
    }
    let mut messages = Vec::new();
    if let Some((s, at)) = top.system.take() {
        let mut j = Map::new();
        j.insert("role".into(), Value::String("system".into()));
        j.insert("content".into(), s);
        let mut l = Map::new();
        l.insert("top".into(), Value::from(at));
        j.insert(LAYOUT.into(), Value::Object(l));
        messages.push(decode_message(Value::Object(j)).map_err(DecodeError::new)?);
    }
    messages.extend(decode_entries(&entry_maps).map_err(DecodeError::new)?);
    Ok(top.session(source, messages))
}

/// A tool call read from its JSON text.
#[derive(Clone, Debug)]
struct ParsedCall {
    name: String,
    explicit_id: Option<String>,
    /// The OpenAI `function` object (`name`, `arguments`, other keys in order).
    function: Map<String, Value>,
    /// Other keys of the OpenAI call object (`openai_call`), if carried.
    call_extra: Option<Map<String, Value>>,
    /// The call's `sharegpt_layout` entry (empty: defaults).
    layout: Map<String, Value>,
}

/// A tool result read from a `<tool_response>` (or an observation).
#[derive(Clone, Debug)]
struct ParsedResult {
    /// The OpenAI message object, without an inferred `tool_call_id`.
    json: Map<String, Value>,
    explicit_id: Option<String>,
    /// The tool name written in the result, and its key index.
    name: Option<(String, usize)>,
    /// Index where a derived name would be written.
    name_slot: usize,
}

/// One entry, read.
enum Parsed {
    Plain(Map<String, Value>),
    Calls { json: Map<String, Value>, calls: Vec<ParsedCall> },
    Results(Vec<ParsedResult>),
}

/// Reads the entries, falling back to plain text for any entry whose tool
/// calls or results would not be written back exactly.
fn decode_entries(entries: &[Map<String, Value>]) -> Result<Vec<Message>, String> {
    let mut plain = vec![false; entries.len()];
    loop {
        let parsed: Vec<Parsed> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| parse_entry(e, plain[i]))
            .collect::<Result<_, _>>()?;
        let turns: Vec<IdTurn> = parsed.iter().map(id_turn).collect();
        let ids = assign(&turns);
        let mut out = Vec::new();
        let mut failed = false;
        let mut prev_results = false;
        for (t, p) in parsed.into_iter().enumerate() {
            let (mut msgs, kind) =
                build_entry(p, t, &ids).map_err(|e| format!("conversation entry {t}: {e}"))?;
            let value = entries[t].get("value").and_then(Value::as_str);
            if !matches!(kind, EntryKind::Plain) {
                let again = render_entry(&msgs, &kind, &turns, &ids, t);
                if again.as_deref() != value && !plain[t] {
                    plain[t] = true;
                    failed = true;
                }
            }
            let results = matches!(kind, EntryKind::Results);
            if results
                && prev_results
                && let Some(Value::Object(l)) = msgs.first_mut().map(|m| {
                    m.extra_mut().entry(LAYOUT).or_insert_with(|| Value::Object(Map::new()))
                })
            {
                l.insert("new_turn".into(), Value::Bool(true));
            }
            prev_results = results;
            out.extend(msgs);
        }
        if !failed {
            drop_redundant_ids(&mut out);
            return Ok(out);
        }
    }
}

/// Forgets the explicit call ids of decoded messages when writing would put
/// exactly the same ids in the same places on its own (so that a session
/// converted to ShareGPT and back carries no marker for them).
fn drop_redundant_ids(msgs: &mut [Message]) {
    let mut stripped = msgs.to_vec();
    let mut any = false;
    for m in &mut stripped {
        if !m.extra.contains_key(LAYOUT) {
            continue;
        }
        let Some(Value::Object(l)) = m.extra_mut().get_mut(LAYOUT) else { continue };
        if l.get("id") == Some(&Value::Bool(true)) {
            l.shift_remove("id");
            any = true;
        }
        if let Some(Value::Array(calls)) = l.get_mut("calls") {
            for c in calls.iter_mut() {
                if let Value::Object(o) = c
                    && o.get("id") == Some(&Value::Bool(true))
                {
                    o.shift_remove("id");
                    any = true;
                    if o.is_empty() {
                        *c = Value::Null;
                    }
                }
            }
            if calls.iter().all(Value::is_null) {
                l.shift_remove("calls");
            }
        }
        if l.is_empty() {
            m.extra_mut().shift_remove(LAYOUT);
        }
    }
    // Same plan (which call and result ids get written) with and without the
    // marks: the marks are redundant.
    let ids = |m: &[Message]| plan_ids(m, &plan(m), &answered_names(m));
    if any && ids(&stripped) == ids(msgs) {
        msgs.clone_from_slice(&stripped);
    }
}

/// What [`build_entry`] made, for the exactness check.
enum EntryKind {
    Plain,
    Calls,
    FunctionCall,
    Results,
    Observation,
}

fn id_turn(p: &Parsed) -> IdTurn {
    match p {
        Parsed::Plain(_) => IdTurn::Other,
        Parsed::Calls { calls, .. } => {
            IdTurn::Calls(calls.iter().map(|c| (c.name.clone(), c.explicit_id.clone())).collect())
        }
        Parsed::Results(rs) => IdTurn::Results(
            rs.iter()
                .map(|r| (r.explicit_id.clone(), r.name.as_ref().map(|n| n.0.clone())))
                .collect(),
        ),
    }
}

/// Rewrites an entry's keys as an OpenAI message (`from` -> `role`, `value` ->
/// `content`), reading the content carriers. Returns the map and the label.
fn entry_json(e: &Map<String, Value>, content_text: &str) -> (Map<String, Value>, String) {
    let label = e.get("from").and_then(Value::as_str).unwrap_or_default().to_string();
    let role = role_of(&label);
    let parts = match e.get(CONTENT_PARTS) {
        Some(Value::Array(c)) => parts_from_carrier(content_text, c),
        _ => None,
    };
    let form = match e.get(OPENAI_CONTENT).and_then(Value::as_str) {
        Some(f @ ("null" | "absent")) if content_text.is_empty() && parts.is_none() => Some(f),
        Some("string") if parts.is_none() => Some("string"),
        _ => None,
    };
    let mut j = Map::new();
    let mut has_value = false;
    for (k, v) in e {
        match k.as_str() {
            "from" => {
                j.insert("role".into(), Value::String(role.as_str().to_string()));
            }
            "value" => {
                has_value = true;
                match (&parts, form) {
                    (Some(p), _) => {
                        j.insert("content".into(), Value::Array(p.clone()));
                    }
                    (None, Some("null")) => {
                        j.insert("content".into(), Value::Null);
                    }
                    (None, Some("absent")) => {}
                    _ => {
                        j.insert("content".into(), Value::String(content_text.to_string()));
                    }
                }
            }
            CONTENT_PARTS if parts.is_some() => {}
            OPENAI_CONTENT if form.is_some() => {}
            LAYOUT => {}
            OPENAI_ROLE => {
                j.insert("role".into(), v.clone());
            }
            "openai_from" | "openai_value" => {
                j.insert(k["openai_".len()..].to_string(), v.clone());
            }
            _ => {
                j.insert(k.clone(), v.clone());
            }
        }
    }
    if !has_value {
        // No `value` key at all: an absent content, written back without one.
        j.shift_remove("content");
        j.insert(
            LAYOUT.into(),
            Value::Object(Map::from_iter([("novalue".into(), Value::Bool(true))])),
        );
    }
    (j, label)
}

/// Reads one entry (not yet knowing ids).
fn parse_entry(e: &Map<String, Value>, plain: bool) -> Result<Parsed, String> {
    let label = e.get("from").and_then(Value::as_str).unwrap_or_default();
    let value = e.get("value").and_then(Value::as_str).unwrap_or_default();
    if plain || !e.contains_key("value") {
        if e.contains_key("value") && role_of(label) == Role::Tool && label != "observation" {
            return Ok(bare_result(e, value));
        }
        let (mut j, label) = entry_json(e, value);
        note_label(&mut j, &label);
        return Ok(Parsed::Plain(j));
    }
    match label {
        "function_call" => {
            let (pre, body, post) = split_ws(value);
            match parse_call(body, pre, post, "", "") {
                Some(call) => {
                    let (mut j, label) = entry_json(e, "");
                    if !j.contains_key(OPENAI_CONTENT)
                        && j.get("content") == Some(&Value::String(String::new()))
                    {
                        j.insert("content".into(), Value::Null);
                    }
                    note_label(&mut j, &label);
                    Ok(Parsed::Calls { json: j, calls: vec![call] })
                }
                None => parse_entry(e, true),
            }
        }
        "observation" => {
            let (mut j, label) = entry_json(e, value);
            note_label(&mut j, &label);
            let explicit_id = j.get("tool_call_id").and_then(Value::as_str).map(str::to_string);
            let name = j.get("name").and_then(Value::as_str).map(|n| (n.to_string(), usize::MAX));
            Ok(Parsed::Results(vec![ParsedResult { json: j, explicit_id, name, name_slot: 0 }]))
        }
        _ if role_of(label) == Role::Assistant => parse_calls_entry(e, value),
        _ if role_of(label) == Role::Tool => Ok(parse_results_entry(e, value)),
        _ => parse_entry(e, true),
    }
}

/// Adds the label to the layout marker when it is not the role's default.
fn note_label(j: &mut Map<String, Value>, label: &str) {
    let role = role_of(label);
    if default_label(&role) != label {
        let l = j.entry(LAYOUT).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(l) = l {
            l.insert("from".into(), Value::String(label.to_string()));
        }
    }
}

/// Reads a call's JSON text (`pre` / `post`: the whitespace around it inside
/// the tags; `dpre` / `dpost`: the defaults for this kind of turn).
fn parse_call(body: &str, pre: &str, post: &str, dpre: &str, dpost: &str) -> Option<ParsedCall> {
    let (obj, style) = parse_object(body)?;
    let name = obj.get("name")?.as_str()?.to_string();
    let mut layout = Map::new();
    let value_form = obj.get(OPENAI_ARGUMENTS).and_then(Value::as_str) == Some("value");
    let call_extra = obj.get(OPENAI_CALL).and_then(Value::as_object).cloned();
    let mut explicit_id = None;
    let mut function = Map::new();
    let args = obj.get("arguments");
    let carried = |k: &str| {
        (k == OPENAI_ARGUMENTS && value_form) || (k == OPENAI_CALL && call_extra.is_some())
    };
    let last_plain = obj.keys().rposition(|k| !carried(k));
    let json_style = style.filter(|s| *s != JsonStyle::Python).unwrap_or(JsonStyle::Spaced);
    // The style the writer picks on its own for these arguments.
    let mut writer_style = JsonStyle::Spaced;
    for (i, (k, v)) in obj.iter().enumerate() {
        match k.as_str() {
            "name" => {
                function.insert("name".into(), v.clone());
            }
            "arguments" => {
                let a = match v {
                    _ if value_form => v.clone(),
                    Value::String(s) => {
                        if let Ok(parsed) = serde_json::from_str::<Value>(s)
                            && JsonStyle::detect(&parsed, s, JSON_STYLES).is_some()
                        {
                            layout.insert("args_string".into(), Value::Bool(true));
                        }
                        v.clone()
                    }
                    other => {
                        let text = json_style.render(other);
                        writer_style = JsonStyle::detect(other, &text, JSON_STYLES)
                            .unwrap_or(JsonStyle::Spaced);
                        Value::String(text)
                    }
                };
                function.insert("arguments".into(), a);
            }
            "id" if v.is_string() => {
                explicit_id = v.as_str().map(str::to_string);
                let at = if last_plain == Some(i) { Value::Bool(true) } else { Value::from(i) };
                layout.insert("id".into(), at);
            }
            OPENAI_ARGUMENTS if value_form => {}
            OPENAI_CALL if call_extra.is_some() => {}
            _ => {
                function.insert(k.clone(), v.clone());
            }
        }
    }
    if args.is_none() {
        layout.insert("raw".into(), Value::String(body.to_string()));
    }
    match style {
        Some(s) if s != writer_style => {
            layout.insert("fmt".into(), Value::String(s.name().into()));
        }
        Some(_) => {}
        None => {
            layout.insert("raw".into(), Value::String(body.to_string()));
        }
    }
    if pre != dpre {
        layout.insert("pre".into(), Value::String(pre.into()));
    }
    if post != dpost {
        layout.insert("post".into(), Value::String(post.into()));
    }
    Some(ParsedCall { name, explicit_id, function, call_extra, layout })
}

/// An assistant entry: tool calls in `<tool_call>` tags, text around them.
fn parse_calls_entry(e: &Map<String, Value>, value: &str) -> Result<Parsed, String> {
    let segs = split_tags(value, CALL_OPEN, CALL_CLOSE);
    // Texts between the calls (unparsable tags stay text), and the calls.
    let mut texts = vec![String::new()];
    let mut calls = Vec::new();
    for seg in segs {
        match seg {
            Seg::Text(t) => {
                if let Some(last) = texts.last_mut() {
                    last.push_str(t);
                }
            }
            Seg::Tag(inner) => {
                let (pre, body, post) = split_ws(inner);
                match parse_call(body, pre, post, "\n", "\n") {
                    Some(c) => {
                        calls.push(c);
                        texts.push(String::new());
                    }
                    None => {
                        if let Some(last) = texts.last_mut() {
                            last.push_str(CALL_OPEN);
                            last.push_str(inner);
                            last.push_str(CALL_CLOSE);
                        }
                    }
                }
            }
        }
    }
    if calls.is_empty() {
        return parse_entry(e, true);
    }
    // The default layout: the text, a newline, then the calls one per line.
    let default_text = match texts.as_slice() {
        [first, between @ .., last] if last.is_empty() && between.iter().all(|t| t == "\n") => {
            if first.is_empty() {
                Some(String::new())
            } else {
                first.strip_suffix('\n').filter(|t| !t.is_empty()).map(str::to_string)
            }
        }
        _ => None,
    };
    let mut at = Vec::new();
    let text = match default_text {
        Some(t) => t,
        None => {
            let mut joined = String::new();
            for (i, t) in texts.iter().enumerate() {
                if i > 0 {
                    at.push(Value::from(joined.len()));
                }
                joined.push_str(t);
            }
            joined
        }
    };
    let (mut j, label) = entry_json(e, &text);
    note_label(&mut j, &label);
    if j.get("content") == Some(&Value::String(String::new())) && !e.contains_key(OPENAI_CONTENT) {
        j.insert("content".into(), Value::Null);
    }
    if !at.is_empty() {
        let l = j.entry(LAYOUT).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(l) = l {
            l.insert("at".into(), Value::Array(at));
            l.insert("len".into(), Value::from(text.len()));
        }
    }
    Ok(Parsed::Calls { json: j, calls })
}

/// A tool entry read as one result whose text is the whole value.
fn bare_result(e: &Map<String, Value>, value: &str) -> Parsed {
    let (mut j, label) = entry_json(e, value);
    note_label(&mut j, &label);
    set_layout(&mut j, "bare", Value::Bool(true));
    let explicit_id = j.get("tool_call_id").and_then(Value::as_str).map(str::to_string);
    Parsed::Results(vec![ParsedResult { json: j, explicit_id, name: None, name_slot: 0 }])
}

/// A tool entry: one result per `<tool_response>` (or the whole value).
fn parse_results_entry(e: &Map<String, Value>, value: &str) -> Parsed {
    let segs = split_tags(value, RESP_OPEN, RESP_CLOSE);
    let (base, _) = entry_json(e, "");
    if segs.len() == 1 {
        return bare_result(e, value);
    }
    let mut results = Vec::new();
    let mut gap = String::new();
    let n_tags = segs.len() / 2;
    for seg in segs {
        match seg {
            Seg::Text(t) => gap = t.to_string(),
            Seg::Tag(inner) => {
                let default_gap = if results.is_empty() { "" } else { "\n" };
                let mut r = parse_result(inner);
                if gap != default_gap {
                    set_layout(&mut r.json, "before", Value::String(std::mem::take(&mut gap)));
                }
                if results.is_empty() {
                    // Entry keys (other than `from` / `value`) are kept on the
                    // first result, and the marker says they belong to the entry.
                    let mut keys = Vec::new();
                    for (k, v) in &base {
                        if !matches!(k.as_str(), "role" | "content" | LAYOUT)
                            && !r.json.contains_key(k)
                        {
                            r.json.insert(k.clone(), v.clone());
                            keys.push(Value::String(k.clone()));
                        }
                    }
                    if !keys.is_empty() {
                        set_layout(&mut r.json, "entry", Value::Array(keys));
                    }
                }
                results.push(r);
            }
        }
    }
    if !gap.is_empty()
        && let Some(last) = results.last_mut()
    {
        set_layout(&mut last.json, "after", Value::String(gap));
    }
    if results.len() != n_tags {
        return bare_result(e, value);
    }
    Parsed::Results(results)
}

/// Reads the inside of one `<tool_response>` tag.
fn parse_result(inner: &str) -> ParsedResult {
    let (pre, body, post) = split_ws(inner);
    let mut j = Map::new();
    j.insert("role".into(), Value::String("tool".into()));
    if pre != "\n" {
        set_layout(&mut j, "pre", Value::String(pre.into()));
    }
    if post != "\n" {
        set_layout(&mut j, "post", Value::String(post.into()));
    }
    let structured = parse_object(body).and_then(|(obj, style)| {
        let style = style?;
        (obj.contains_key("content") || obj.get("tool_call_id").is_some_and(Value::is_string))
            .then_some((obj, style))
    });
    let Some((obj, style)) = structured else {
        j.insert("content".into(), Value::String(body.to_string()));
        set_layout(&mut j, "raw", Value::Bool(true));
        return ParsedResult { json: j, explicit_id: None, name: None, name_slot: 0 };
    };
    if style != JsonStyle::Spaced {
        set_layout(&mut j, "fmt", Value::String(style.name().into()));
    }
    let explicit_id = obj.get("tool_call_id").and_then(Value::as_str).map(str::to_string);
    let name_slot = usize::from(obj.keys().next().map(String::as_str) == Some("tool_call_id"));
    let mut name = None;
    let carrier = obj.get(CONTENT_PARTS).and_then(Value::as_array);
    let mut used_carrier = false;
    for (i, (k, v)) in obj.iter().enumerate() {
        match (k.as_str(), v) {
            ("name", Value::String(n)) => {
                name = Some((n.clone(), i));
                j.insert(k.clone(), v.clone());
            }
            ("content", Value::String(s)) => match carrier.and_then(|c| parts_from_carrier(s, c)) {
                Some(parts) => {
                    used_carrier = true;
                    j.insert("content".into(), Value::Array(parts));
                }
                None => {
                    j.insert("content".into(), v.clone());
                }
            },
            ("content", Value::Null) => {
                j.insert("content".into(), Value::Null);
            }
            ("content", other) => {
                let text = if style == JsonStyle::Python {
                    JsonStyle::Spaced.render(other)
                } else {
                    style.render(other)
                };
                j.insert("content".into(), Value::String(text));
                set_layout(&mut j, "content_json", Value::Bool(true));
            }
            (CONTENT_PARTS, _) if used_carrier => {}
            _ => {
                j.insert(k.clone(), v.clone());
            }
        }
    }
    if used_carrier {
        j.shift_remove(CONTENT_PARTS);
    }
    ParsedResult { json: j, explicit_id, name, name_slot }
}

/// Makes the canonical messages of one entry, with ids.
fn build_entry(p: Parsed, t: usize, ids: &Assigned) -> Result<(Vec<Message>, EntryKind), String> {
    match p {
        Parsed::Plain(j) => {
            let mut m = decode_message(Value::Object(j))?;
            take_attached(&mut m);
            Ok((vec![m], EntryKind::Plain))
        }
        Parsed::Calls { mut json, calls } => {
            let function_call =
                json.get(LAYOUT).and_then(|l| l.get("from")).and_then(Value::as_str)
                    == Some("function_call");
            let mut call_layouts = Vec::new();
            let mut items = Vec::new();
            for (k, c) in calls.into_iter().enumerate() {
                let id = ids.calls.get(t).and_then(|c| c.get(k)).cloned().unwrap_or_default();
                let mut cj = Map::new();
                cj.insert("id".into(), Value::String(id));
                match c.call_extra {
                    Some(extra) => {
                        for (k, v) in extra {
                            cj.insert(k, v);
                        }
                    }
                    None => {
                        cj.insert("type".into(), Value::String("function".into()));
                    }
                }
                cj.insert("function".into(), Value::Object(c.function));
                items.push(Value::Object(cj));
                call_layouts.push(if c.layout.is_empty() {
                    Value::Null
                } else {
                    Value::Object(c.layout)
                });
            }
            if call_layouts.iter().any(|l| !l.is_null()) {
                set_layout(&mut json, "calls", Value::Array(call_layouts));
            }
            let j = insert_after(json, "content", "tool_calls", Value::Array(items));
            let mut m = decode_message(Value::Object(j))?;
            take_attached(&mut m);
            let kind = if function_call { EntryKind::FunctionCall } else { EntryKind::Calls };
            Ok((vec![m], kind))
        }
        Parsed::Results(rs) => {
            let observation = rs.len() == 1
                && rs[0].json.get(LAYOUT).and_then(|l| l.get("from")).and_then(Value::as_str)
                    == Some("observation");
            let mut out = Vec::new();
            for (r, res) in rs.into_iter().enumerate() {
                let mut j = res.json;
                let answered = ids.answered_name.get(t).and_then(|a| a.get(r)).cloned().flatten();
                // A written name that is the answered call's, where it is
                // written by default, is not kept: the writer puts it back.
                if let Some((n, i)) = &res.name
                    && *i == res.name_slot
                    && answered.as_deref() == Some(n.as_str())
                    && !observation
                {
                    j.shift_remove("name");
                }
                let unstructured = j
                    .get(LAYOUT)
                    .is_some_and(|l| l.get("raw").is_some() || l.get("bare").is_some());
                if res.name.is_none() && answered.is_some() && !observation && !unstructured {
                    set_layout(&mut j, "noname", Value::Bool(true));
                }
                let inferred = ids.results.get(t).and_then(|x| x.get(r)).cloned().flatten();
                if res.explicit_id.as_deref().is_some_and(is_synthetic) {
                    // A synthetic id is written only where the source had it.
                    set_layout(&mut j, "id", Value::Bool(true));
                }
                if res.explicit_id.is_none()
                    && !j.contains_key("tool_call_id")
                    && inferred.as_deref().is_some_and(|id| !is_synthetic(id))
                {
                    // A real id that reading inferred: writing must not add it.
                    set_layout(&mut j, "noid", Value::Bool(true));
                }
                let mut m = decode_message(Value::Object(j))?;
                if res.explicit_id.is_none() && m.tool_call_id.is_none() {
                    m.tool_call_id = inferred;
                }
                take_attached(&mut m);
                out.push(m);
            }
            Ok((out, if observation { EntryKind::Observation } else { EntryKind::Results }))
        }
    }
}

/// Moves the `compactor_attached` carrier into `attached`.
fn take_attached(m: &mut Message) {
    if let Some(Value::Array(items)) = m.extra.get(ATTACHED) {
        m.attached = items.clone().into();
        m.extra_mut().shift_remove(ATTACHED);
    }
}

/// Writes one decoded entry's `value` again (for the exactness check).
fn render_entry(
    msgs: &[Message],
    kind: &EntryKind,
    turns: &[IdTurn],
    ids: &Assigned,
    t: usize,
) -> Option<String> {
    match kind {
        EntryKind::Plain => None,
        EntryKind::Calls | EntryKind::FunctionCall => {
            let m = msgs.first()?;
            let written: Vec<bool> = match turns.get(t)? {
                IdTurn::Calls(c) => c.iter().map(|(_, id)| id.is_some()).collect(),
                _ => return None,
            };
            let fc = matches!(kind, EntryKind::FunctionCall);
            Some(render_calls(m, &written, fc).0)
        }
        EntryKind::Results | EntryKind::Observation => {
            let names: Vec<Option<String>> = ids.answered_name.get(t)?.clone();
            let written: Vec<bool> =
                msgs.iter().map(|m| m.extra.contains_key("tool_call_id")).collect();
            if matches!(kind, EntryKind::Observation) {
                return Some(observation_value(msgs.first()?));
            }
            Some(render_results(msgs, &written, &names).0)
        }
    }
}
