//! Carried fields: what a record dialect (OpenAI, Anthropic, ShareGPT) writes
//! into its records for what its own shape cannot express, and reads back and
//! removes, so that a conversion between them loses nothing (`openai ->
//! anthropic -> openai` gives back the same JSON values).
//!
//! The field names are shared: a session read from one record dialect and
//! written to another carries the same `openai_*` / `compactor_*` keys. The
//! top level of a record is read and written here too, the same way for every
//! record dialect: the messages and tool schemas taken out with a
//! [slot](super::slots) left at their key, the carried session fields (a bare
//! array, records after the last message, a `system` field that is not the
//! prompt) read back, and the compaction object written last.

use super::record_id;
use super::slots::{is_slot, slot};
use crate::model::{Envelope, Message, Session, Source};
use serde_json::{Map, Value};

/// Message key carrying [`Message::attached`] records when a dialect with
/// non-chat records is converted to a record dialect (conversions are total).
pub(crate) const ATTACHED: &str = "compactor_attached";
/// Session key carrying [`Session::trailing`] records, likewise.
pub(crate) const TRAILING: &str = "compactor_trailing";
/// The prefix of a dialect's private layout keys (see [`carry`]).
pub(crate) const PRIVATE_KEY: &str = "\u{fdd0}compactor:";
/// Message key: the real role of a message the dialect has no role for.
pub(crate) const OPENAI_ROLE: &str = "openai_role";
/// Message key: the OpenAI content form (`string`, `null`, `absent`, `parts`)
/// when the dialect's content alone would read back as another.
pub(crate) const OPENAI_CONTENT: &str = "openai_content";
/// Call key: how the OpenAI arguments were written (a JSON style, `text`, `value`).
pub(crate) const OPENAI_ARGUMENTS: &str = "openai_arguments";
/// Top-level key: the OpenAI session's layout, when it was a bare array.
pub(crate) const OPENAI_LAYOUT: &str = "openai_layout";
/// [`OPENAI_LAYOUT`]'s value for a bare array of messages.
pub(crate) const BARE_ARRAY: &str = "bare_array";
/// Top-level key: another dialect's top-level `system` field that is not the
/// system prompt.
pub(crate) const OPENAI_SYSTEM: &str = "openai_system";

/// A non-chat record as carried into another dialect: a dialect's private
/// layout marker (a key starting with a noncharacter) gets a plain key, and an
/// unfilled slot inside it becomes `null`, so the output holds no private text.
pub(crate) fn carry(record: &Value) -> Value {
    match record {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = match k.strip_prefix(PRIVATE_KEY) {
                        Some(rest) => format!("compactor_{rest}"),
                        None => k.clone(),
                    };
                    (key, carry(v))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(carry).collect()),
        v if is_slot(v) => Value::Null,
        v => v.clone(),
    }
}

/// Adds the attached records of `m` under the carrier key.
pub(crate) fn put_attached(map: &mut Map<String, Value>, m: &Message) {
    if !m.attached.is_empty() {
        map.insert(ATTACHED.into(), Value::Array(m.attached.iter().map(carry).collect()));
    }
}

/// The top level of a record, read: the messages, system prompt and tool
/// schemas taken out, the carried session fields read back, and every other
/// key kept in order in `extra` (with a slot at `messages` and `tools`).
pub(crate) struct Top {
    pub extra: Map<String, Value>,
    /// The dialect's raw messages.
    pub messages: Vec<Value>,
    /// The top-level system prompt, and its key index.
    pub system: Option<(Value, usize)>,
    pub tools: Option<Value>,
    pub layout: Envelope,
    pub trailing: Vec<Value>,
}

impl Top {
    /// Reads a record's keys. `messages_key`: where the dialect keeps its
    /// messages (an array); `is_prompt`: whether a `system` value is the
    /// dialect's system prompt (else it is kept as any other key).
    pub(crate) fn read(
        record: Map<String, Value>,
        messages_key: &str,
        is_prompt: fn(&Value) -> bool,
    ) -> Top {
        let mut top = Top {
            extra: Map::new(),
            messages: Vec::new(),
            system: None,
            tools: None,
            layout: Envelope::Object,
            trailing: Vec::new(),
        };
        for (i, (k, v)) in record.into_iter().enumerate() {
            match (k.as_str(), v) {
                (key, Value::Array(items)) if key == messages_key => {
                    top.messages = items;
                    top.extra.insert("messages".into(), slot());
                }
                ("system", v) if is_prompt(&v) => top.system = Some((v, i)),
                ("tools", v) if !v.is_null() => {
                    top.tools = Some(v);
                    top.extra.insert(k, slot());
                }
                (OPENAI_LAYOUT, Value::String(s)) if s == BARE_ARRAY => {
                    top.layout = Envelope::BareArray;
                }
                (TRAILING, Value::Array(items)) => top.trailing = items,
                (OPENAI_SYSTEM, v) => {
                    top.extra.insert("system".into(), v);
                }
                (_, v) => {
                    top.extra.insert(k, v);
                }
            }
        }
        top
    }

    /// The session of these keys and `messages` (read from [`Top::messages`]
    /// and [`Top::system`]). Its id is the record's own, else its source.
    pub(crate) fn session(self, source: Source, messages: Vec<Message>) -> Session {
        let id = record_id(&self.extra).unwrap_or_else(|| source.to_string());
        let mut extra = self.extra;
        if self.layout == Envelope::BareArray {
            extra.clear();
        }
        Session {
            id,
            source,
            layout: self.layout,
            messages,
            tools: self.tools,
            extra: extra.into(),
            trailing: self.trailing,
            ..Session::default()
        }
    }
}

/// Writes a session's top level back in the order it was read: the keys of
/// its `extra` in order, with `messages` (the dialect's keys for them, in
/// order) at the `messages` key, the tool schemas at a `tools` slot, other
/// unfilled slots left out, and a `system` field that is not the prompt
/// (`not_prompt(value)`) as [`OPENAI_SYSTEM`]. What
/// found no key goes last: the messages, then the tools.
pub(crate) fn write_top(
    session: &Session,
    messages: Vec<(&str, Value)>,
    not_prompt: impl Fn(&Value) -> bool,
) -> Map<String, Value> {
    let mut out = Map::new();
    let mut messages = Some(messages);
    let mut tools = session.tools.clone();
    for (k, v) in session.extra.iter() {
        match k.as_str() {
            "messages" => {
                for (key, m) in messages.take().into_iter().flatten() {
                    out.insert(key.into(), m);
                }
            }
            "tools" if is_slot(v) => {
                if let Some(t) = tools.take() {
                    out.insert("tools".into(), t);
                }
            }
            "system" if not_prompt(v) => {
                out.insert(OPENAI_SYSTEM.into(), v.clone());
            }
            _ if is_slot(v) => {}
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    for (key, m) in messages.into_iter().flatten() {
        out.insert(key.into(), m);
    }
    if let Some(t) = tools {
        out.insert("tools".into(), t);
    }
    out
}

/// Adds the carried session fields after a record's own keys: the bare array
/// layout, the records after the last message, then the compaction object.
pub(crate) fn carry_session(
    out: &mut Map<String, Value>,
    session: &Session,
    compaction: Option<&Value>,
) {
    if session.layout == Envelope::BareArray {
        out.insert(OPENAI_LAYOUT.into(), Value::String(BARE_ARRAY.into()));
    }
    if !session.trailing.is_empty() {
        out.insert(TRAILING.into(), Value::Array(session.trailing.iter().map(carry).collect()));
    }
    if let Some(c) = compaction {
        out.insert("compaction".into(), c.clone());
    }
}
