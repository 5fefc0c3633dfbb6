//! Writing a Claude Code log: each message back into the events it was read
//! from (its parts re-assigned to them by [`align`](super::align) when it
//! changed), new messages given derived uuids and their neighbour's envelope,
//! and the parent chain re-linked where events were left out.

use super::align::{assign, layout_of, tool_use_block};
use super::*;
use crate::formats::openai::{encode_content, encode_part};
use crate::model::{Message, Role, Session};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Puts `content` back into a `message` object where Claude Code writes it.
fn insert_content(msg: &mut Map<String, Value>, content: Option<Value>) {
    let Some(content) = content else { return };
    let position = |k: &str| msg.keys().position(|x| x == k);
    let at = position("context_management")
        .or_else(|| position("role").map(|p| p + 1))
        .unwrap_or(msg.len());
    msg.shift_insert(at, "content".into(), content);
}

/// A `tool_result` block for a tool message.
fn tool_result_block(t: &Message) -> Value {
    let mut b = match t.extra.get(BLOCK_KEY) {
        Some(Value::Object(b)) => b.clone(),
        _ => {
            let mut b = Map::new();
            b.insert("type".into(), Value::String("tool_result".into()));
            b
        }
    };
    let id = Value::String(t.tool_call_id.clone().unwrap_or_default());
    if b.contains_key("tool_use_id") {
        b.insert("tool_use_id".into(), id);
    } else {
        let at = b.keys().position(|k| k == "type").map_or(0, |p| p + 1);
        b.shift_insert(at, "tool_use_id".into(), id);
    }
    if let Some(content) = encode_content(&t.content) {
        // Claude Code writes `type, content, tool_use_id` for a string result and
        // `type, tool_use_id, content` for a block list.
        let ty = b.keys().position(|k| k == "type");
        let after_id = content.is_array();
        let at = match ty {
            Some(p) if after_id && b.keys().nth(p + 1).is_some_and(|k| k == "tool_use_id") => p + 2,
            Some(p) => p + 1,
            None => b.len(),
        };
        b.shift_insert(at, "content".into(), content);
    }
    Value::Object(b)
}

/// Reasoning kept beside a message (other dialects) as a leading thinking block.
fn reasoning_block(m: &Message) -> Option<Value> {
    let r = m.reasoning.as_ref()?;
    let mut b = Map::new();
    b.insert("type".into(), Value::String("thinking".into()));
    b.insert("thinking".into(), Value::String(r.text.clone()));
    Some(Value::Object(b))
}

/// Every block of an assistant message without a layout: parts, then calls.
fn assistant_blocks(m: &Message) -> Vec<Value> {
    reasoning_block(m)
        .into_iter()
        .chain(m.content.parts.iter().map(encode_part))
        .chain(m.tool_calls.iter().map(tool_use_block))
        .collect()
}

/// The content of a single-event assistant message, in the form it was read.
fn assistant_content(m: &Message) -> Option<Value> {
    if m.tool_calls.is_empty() && m.reasoning.is_none() {
        encode_content(&m.content)
    } else {
        Some(Value::Array(assistant_blocks(m)))
    }
}

/// A user event made of tool results (and the other blocks of the same event).
struct ResultEvent<'a> {
    tools: Vec<&'a Message>,
    user: Option<&'a Message>,
}

/// Returns true if and only if `m` was read as the first message of an event
/// that repeats the previous event's `uuid` ([`NEW_EVENT_KEY`]).
fn starts_event(m: &Message) -> bool {
    m.extra.get(NEW_EVENT_KEY) == Some(&Value::Bool(true))
}

/// Groups the tool messages `msgs[start..end]` into the events they came from,
/// absorbing a following user message of the same event. Returns the events and
/// the index after them.
fn result_events(msgs: &[Message], start: usize, end: usize) -> (Vec<ResultEvent<'_>>, usize) {
    let mut events: Vec<ResultEvent<'_>> = Vec::new();
    for m in &msgs[start..end] {
        match events.last_mut() {
            Some(last) if same_event(last.tools[0], m) && !starts_event(m) => last.tools.push(m),
            _ => events.push(ResultEvent { tools: vec![m], user: None }),
        }
    }
    let mut next = end;
    if let (Some(last), Some(u)) = (events.last_mut(), msgs.get(end))
        && u.role == Role::User
        && same_event(last.tools[0], u)
        && !starts_event(u)
    {
        last.user = Some(u);
        next = end + 1;
    }
    (events, next)
}

/// Formats 128 bits as a UUID string (version 8, RFC 9562 variant).
pub(super) fn format_uuid(x: u128) -> String {
    let x = (x & !(0xF << 76)) | (0x8 << 76);
    let x = (x & !(0x3 << 62)) | (0x2 << 62);
    let h = format!("{x:032x}");
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

/// The uuid of a new event: a hash of [`UUID_NAMESPACE`], its parent, its type and
/// its text, re-salted in the (unlikely) case it is already taken.
fn derive_uuid(parent: Option<&str>, kind: &str, text: &str, taken: &HashSet<String>) -> String {
    let mut salt: u32 = 0;
    loop {
        let input = format!("{UUID_NAMESPACE}\n{}\n{kind}\n{salt}\n{text}", parent.unwrap_or(""));
        let uuid = format_uuid(crate::hash::of128(input.as_bytes()));
        if !taken.contains(&uuid) || salt == u32::MAX {
            return uuid;
        }
        salt += 1;
    }
}

/// Builds the output events in order, re-linking parents where needed.
struct Writer {
    out: Vec<Value>,
    /// Re-link every main-chain parent that is not an earlier written event.
    relink: bool,
    written: HashSet<String>,
    /// Uuids of source events this encoder left out (their children are re-linked).
    dropped: HashSet<String>,
    /// The uuid of the last written main-chain message event.
    last_message: Option<String>,
    /// Per-session fields and timestamp for new events (from the last message event).
    neighbour: Map<String, Value>,
}

impl Writer {
    fn remember(&mut self, ev: &Map<String, Value>) {
        for k in COPIED_FIELDS.iter().chain(&["timestamp"]) {
            if let Some(v) = ev.get(*k) {
                self.neighbour.insert((*k).to_string(), v.clone());
            }
        }
    }

    fn push(&mut self, mut v: Value) {
        if let Value::Object(map) = &mut v {
            let main = !is_sidechain(map);
            if main && map.contains_key("parentUuid") {
                let keep = match map.get("parentUuid") {
                    Some(Value::String(p)) => {
                        !self.dropped.contains(p) && (!self.relink || self.written.contains(p))
                    }
                    Some(Value::Null) => true,
                    _ => !self.relink,
                };
                if !keep {
                    let parent = self.last_message.clone().map_or(Value::Null, Value::String);
                    map.insert("parentUuid".into(), parent);
                }
            }
            if let Some(Value::String(u)) = map.get("uuid") {
                self.written.insert(u.clone());
                if main && matches!(type_of(map), Some("user" | "assistant")) {
                    self.last_message = Some(u.clone());
                    self.remember(map);
                } else if is_boundary(map) {
                    // A boundary restarts the chain: what follows hangs from it,
                    // as Claude Code's own compact summary does.
                    self.last_message = Some(u.clone());
                }
            }
        }
        self.out.push(v);
    }

    fn records(&mut self, records: &[Value]) {
        for r in records {
            self.push(r.clone());
        }
    }

    /// A new event of `kind` holding `message`, linked after the last message event.
    fn new_event(
        &self,
        kind: &str,
        message: Map<String, Value>,
        m: &Message,
    ) -> Map<String, Value> {
        let mut text = m.text_content().into_owned();
        for c in m.tool_calls.iter() {
            text.push('\n');
            text.push_str(&c.id);
        }
        if let Some(id) = &m.tool_call_id {
            text.push('\n');
            text.push_str(id);
        }
        let uuid = derive_uuid(self.last_message.as_deref(), kind, &text, &self.written);
        let mut ev = Map::new();
        ev.insert(
            "parentUuid".into(),
            self.last_message.clone().map_or(Value::Null, Value::String),
        );
        ev.insert("isSidechain".into(), Value::Bool(false));
        ev.insert("type".into(), Value::String(kind.to_string()));
        ev.insert("message".into(), Value::Object(message));
        ev.insert("uuid".into(), Value::String(uuid));
        if let Some(ts) = self.neighbour.get("timestamp") {
            ev.insert("timestamp".into(), ts.clone());
        }
        for k in COPIED_FIELDS {
            if let Some(v) = self.neighbour.get(*k) {
                ev.insert((*k).to_string(), v.clone());
            }
        }
        // Fields a message from another dialect carried (its own timestamp, ...).
        for (k, v) in m.extra.iter() {
            if !matches!(k.as_str(), "parentUuid" | "isSidechain" | "type" | "message" | "uuid") {
                ev.insert(k.clone(), v.clone());
            }
        }
        ev
    }

    /// The event of a message read from the log, with `content` put back.
    fn from_envelope(envelope: &Map<String, Value>, role: &str, content: Option<Value>) -> Value {
        let mut ev = envelope.clone();
        ev.shift_remove(EVENTS_KEY);
        ev.shift_remove(BLOCK_KEY);
        ev.shift_remove(NEW_EVENT_KEY);
        let mut msg = match ev.get("message") {
            Some(Value::Object(m)) => m.clone(),
            _ => {
                let mut m = Map::new();
                m.insert("role".into(), Value::String(role.to_string()));
                m
            }
        };
        insert_content(&mut msg, content);
        ev.insert("message".into(), Value::Object(msg));
        Value::Object(ev)
    }

    fn user(&mut self, m: &Message) {
        self.records(&m.attached);
        let content = encode_content(&m.content);
        if has_envelope(m) {
            self.push(Writer::from_envelope(&m.extra, "user", content));
        } else {
            let mut msg = Map::new();
            msg.insert("role".into(), Value::String("user".into()));
            insert_content(&mut msg, content);
            let ev = self.new_event("user", msg, m);
            self.push(Value::Object(ev));
        }
    }

    fn result_event(&mut self, r: &ResultEvent<'_>) {
        for m in r.tools.iter().chain(r.user.iter()) {
            self.records(&m.attached);
        }
        let mut blocks: Vec<Value> = r.tools.iter().map(|t| tool_result_block(t)).collect();
        if let Some(u) = r.user {
            blocks.extend(u.content.parts.iter().map(encode_part));
        }
        let content = Some(Value::Array(blocks));
        match r.tools.first() {
            Some(first) if has_envelope(first) => {
                self.push(Writer::from_envelope(&first.extra, "user", content));
            }
            Some(first) => {
                let mut msg = Map::new();
                msg.insert("role".into(), Value::String("user".into()));
                insert_content(&mut msg, content);
                let ev = self.new_event("user", msg, first);
                self.push(Value::Object(ev));
            }
            None => {}
        }
    }

    fn assistant(&mut self, m: &Message, results: &[ResultEvent<'_>]) {
        if !has_envelope(m) {
            self.records(&m.attached);
            let mut msg = Map::new();
            msg.insert("model".into(), Value::String("<synthetic>".into()));
            msg.insert("type".into(), Value::String("message".into()));
            msg.insert("role".into(), Value::String("assistant".into()));
            msg.insert("content".into(), Value::Array(assistant_blocks(m)));
            let mut ev = self.new_event("assistant", msg, m);
            // The API message id of a synthetic reply: its own uuid, as Claude Code does.
            if let (Some(uuid), Some(Value::Object(msg))) =
                (ev.get("uuid").cloned(), ev.get_mut("message"))
            {
                msg.shift_insert(0, "id".into(), uuid);
            }
            self.push(Value::Object(ev));
            for r in results {
                self.result_event(r);
            }
            return;
        }
        let Some(layout) = layout_of(m) else {
            self.records(&m.attached);
            self.push(Writer::from_envelope(&m.extra, "assistant", assistant_content(m)));
            for r in results {
                self.result_event(r);
            }
            return;
        };
        let blocks = assign(&layout, m);
        let later: usize = layout.iter().skip(1).map(|l| l.records_before).sum();
        let mut at = m.attached.len().saturating_sub(later);
        self.records(&m.attached[..at]);
        let anything = blocks.iter().any(|b| !b.is_empty());
        let mut done = 0;
        for (k, (l, b)) in layout.iter().zip(blocks).enumerate() {
            if k > 0 {
                while done < l.results_before.min(results.len()) {
                    self.result_event(&results[done]);
                    done += 1;
                }
                let take = l.records_before.min(m.attached.len() - at);
                self.records(&m.attached[at..at + take]);
                at += take;
            }
            if b.is_empty() && (anything || k > 0) {
                if let Some(u) = l.envelope.get("uuid").and_then(Value::as_str) {
                    self.dropped.insert(u.to_string());
                }
                continue;
            }
            self.push(Writer::from_envelope(l.envelope, "assistant", Some(Value::Array(b))));
        }
        self.records(&m.attached[at..]);
        for r in &results[done..] {
            self.result_event(r);
        }
    }
}

/// The envelope new events copy per-session fields from before any message is written.
fn first_neighbour(session: &Session) -> Map<String, Value> {
    let has = |v: &Map<String, Value>| v.contains_key("sessionId");
    let found = session.messages.iter().map(|m| &*m.extra).find(|e| has(e)).or_else(|| {
        session
            .messages
            .iter()
            .flat_map(|m| m.attached.iter())
            .chain(&session.trailing)
            .filter_map(Value::as_object)
            .find(|e| has(e))
    });
    let mut out = Map::new();
    if let Some(e) = found {
        for k in COPIED_FIELDS.iter().chain(&["timestamp"]) {
            if let Some(v) = e.get(*k) {
                out.insert((*k).to_string(), v.clone());
            }
        }
    }
    out
}

/// Writes a session back as Claude Code events. `compacted` says the session was
/// compacted (the chain is then re-linked wherever it is broken).
pub fn encode_events(session: &Session, compacted: bool) -> Vec<Value> {
    let msgs = &session.messages;
    // Not "a message carries our summary": a file compacted earlier and read
    // back unchanged is written back as it was (fuzz finding
    // `claude_code_dangling_parent`).
    let relink = compacted || msgs.iter().any(|m| !has_envelope(m));
    let mut w = Writer {
        out: Vec::new(),
        relink,
        written: HashSet::new(),
        dropped: HashSet::new(),
        last_message: None,
        neighbour: first_neighbour(session),
    };
    let run_end = |from: usize| {
        (from..msgs.len()).find(|&j| msgs[j].role != Role::Tool).unwrap_or(msgs.len())
    };
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        match m.role {
            Role::Assistant => {
                let (results, next) = result_events(msgs, i + 1, run_end(i + 1));
                w.assistant(m, &results);
                i = next;
            }
            Role::Tool => {
                let (results, next) = result_events(msgs, i, run_end(i));
                for r in &results {
                    w.result_event(r);
                }
                i = next;
            }
            Role::User | Role::System | Role::Developer | Role::Other(_) => {
                w.user(m);
                i += 1;
            }
        }
    }
    w.records(&session.trailing);
    w.out
}
