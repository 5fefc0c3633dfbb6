//! A session of any dialect, made the request an API accepts as it is (SPEC 3).
//!
//! ## What it does
//! [`normalize`] rewrites a decoded [`Session`] into the request shape that
//! both the Chat Completions and the Messages writers need, on the canonical
//! model, before compaction (so every token count is of the request as
//! written):
//! - **roles**: `system`, `developer`, `user`, `assistant`, `tool`; any other
//!   role becomes `user` ([`Repair::RolesMapped`]).
//! - **content**: text parts only, as `{type: "text", text}` (the text of
//!   `input_text`, `output_text`, `tool_output`, ... parts), and image parts
//!   where the API takes them as `{type: "image_url", image_url: {url}}` (a
//!   data URL for inline images). Images elsewhere, parts with a name and no
//!   text (`tool_reference`), become text; other parts are dropped.
//! - **images for the API, last**: [`fit_images`] makes an image the API
//!   takes none in (a tool-result screenshot in a Chat Completions request)
//!   its text. [`normalize`] ends with it; a compaction instead normalizes for
//!   [`Api::Messages`] (which takes tool-result images), counts and compacts
//!   (stage 4 strips old screenshots), and fits what survives at the end.
//! - **reasoning**: readable text (`thinking`, Codex `summary` and `content`
//!   texts, `reasoning_content`) becomes the message's `reasoning_content`;
//!   encrypted or redacted reasoning is dropped.
//! - **steps**: consecutive assistant messages, and assistant messages logged
//!   while the step is still waiting (Codex writes reasoning and commentary
//!   after its `function_call` items; streamed Claude events and converted
//!   trajectories write one call per message), are joined into one message:
//!   its text, its reasoning, all of its calls. Its results follow it at once,
//!   one per call, in call order. A step waits until its first result, and
//!   after it only while a result still to come answers one of its calls: an
//!   assistant message after some results, when the step's other calls are
//!   never answered, is the agent's next step (it has seen those results), and
//!   the unanswered calls are dropped.
//! - **calls**: ids present and unique in the session, names in
//!   `[A-Za-z0-9_-]{1,64}`, arguments a JSON object text (free-form input is
//!   `{"input": TEXT}`), `type: "function"`.
//! - **instructions** (system, developer) logged between a call and its
//!   result, as Codex logs context updates, are written after the step's
//!   results ([`Repair::Reordered`]).
//! - **pairing**: a result whose call is not in the open step, or a second
//!   result for a call, is dropped; a call no result answers is dropped,
//!   except the calls of a last step that no result follows (the agent's
//!   in-flight action). A message left with nothing says `(tool call
//!   removed)` or `(empty)`.
//! - **fields**: with `keep_source_fields` false, the source dialect's fields
//!   (message envelopes, non-chat records, session metadata) are not carried.
//!
//! Every change is counted by kind in the returned [`Repairs`].
//!
//! ## Invariants
//! - The output satisfies [`check`] (whatever the input), and normalizing it
//!   again changes nothing and counts nothing.
//! - Text is never rewritten: only moved, joined (with a newline) or, for an
//!   empty turn, given a fixed placeholder.

use super::repairs::{Repair, Repairs};
use crate::model::{
    ArgsForm, Content, ContentForm, ImageInfo, Message, Part, Reasoning, Role, Session, ToolCall,
};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The text of a user or assistant message that had nothing in it.
pub const EMPTY_TEXT: &str = "(empty)";
/// The text of an assistant message whose every call was dropped (H); stage 8
/// (`policy::sanitize`) leaves the same text.
pub const CALL_REMOVED_TEXT: &str = "(tool call removed)";
/// The message field readable reasoning is written to.
pub const REASONING_FIELD: &str = "reasoning_content";
/// The longest tool name the APIs take, in chars.
pub const MAX_TOOL_NAME_CHARS: usize = 64;

/// The API a request is made for: they differ in where images may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// OpenAI Chat Completions: images in user messages only.
    ChatCompletions,
    /// Anthropic Messages: images in user messages and in tool results.
    Messages,
}

impl Api {
    fn takes_image(self, role: &Role) -> bool {
        match self {
            Api::ChatCompletions => *role == Role::User,
            Api::Messages => matches!(role, Role::User | Role::Tool),
        }
    }
}

/// `session` as a valid request for `api`, and what was repaired.
pub fn normalize(session: &Session, keep_source_fields: bool, api: Api) -> (Session, Repairs) {
    let mut repairs = Repairs::default();
    let cleaned: Vec<Message> = session
        .messages
        .iter()
        .map(|m| clean_message(m, keep_source_fields, &mut repairs))
        .collect();
    let mut messages = Steps::new(&mut repairs).run(cleaned);
    make_call_ids_unique(&mut messages, &mut repairs);
    for m in &mut messages {
        fill_empty(m, &mut repairs);
        fit_message_images(m, api, &mut repairs);
    }
    if messages.is_empty() {
        // A request holds at least one message (a ToolBench answer can have none).
        repairs.add(Repair::EmptyFilled, 1);
        messages.push(Message::made(Role::User, EMPTY_TEXT));
    }
    let mut out = session.with_messages(messages);
    out.tools = session.tools.as_ref().and_then(|t| clean_tools(t, &mut repairs));
    if !keep_source_fields {
        let mut extra = Map::new();
        extra.insert("id".into(), Value::String(session.id.clone()));
        out.extra = Arc::new(extra);
        out.trailing.clear();
        out.layout = crate::model::Envelope::Object;
    }
    (out, repairs)
}

/// Makes every image of `session` that `api` takes none in its text (a
/// tool-result screenshot in a Chat Completions request: a `tool` message's
/// content is text), and what that repaired ([`Repair::ImagesToText`]).
/// Nothing else changes: a session normalized for [`Api::Messages`], then
/// compacted, becomes a valid request for `api`. The session is copied only
/// when something changes.
pub fn fit_images(session: &mut Cow<'_, Session>, api: Api) -> Repairs {
    let mut repairs = Repairs::default();
    if !session.messages.iter().any(|m| needs_fit(m, api)) {
        return repairs;
    }
    for m in &mut session.to_mut().messages {
        fit_message_images(m, api, &mut repairs);
    }
    repairs
}

/// Whether [`fit_message_images`] changes `m`: a message of a role `api`
/// takes no image in, with content parts.
fn needs_fit(m: &Message, api: Api) -> bool {
    !api.takes_image(&m.role) && m.content.form == ContentForm::Parts
}

/// [`fit_images`] of one message: a message of a role `api` takes no image
/// in has its images as text, and its content as a string when that leaves
/// only text.
fn fit_message_images(m: &mut Message, api: Api, repairs: &mut Repairs) {
    if !needs_fit(m, api) {
        return;
    }
    let content = &mut m.content;
    for p in content.parts_mut() {
        if let Part::Image { info, .. } = p {
            repairs.add(Repair::ImagesToText, 1);
            *p = Part::text(image_text(info));
        }
    }
    if content.parts.iter().all(|p| matches!(p, Part::Text(_))) {
        content.form = ContentForm::String;
    }
}

/// Every way `messages` is not a valid request (empty when it is one): the
/// promises [`normalize`] keeps, checked on their own for `verify`. Images
/// are allowed where either API takes them.
pub fn check(messages: &[Message]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut step_at = 0;
    let mut ids = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        if !matches!(
            m.role,
            Role::System | Role::Developer | Role::User | Role::Assistant | Role::Tool
        ) {
            problems.push(format!("message {i}: role `{}`", m.role.as_str()));
        }
        for p in m.content.parts.iter() {
            let ok = match p {
                Part::Text(raw) => raw.len() == 2 && raw.get("type") == Some(&"text".into()),
                Part::Image { .. } => Api::Messages.takes_image(&m.role),
                _ => false,
            };
            if !ok {
                problems.push(format!("message {i}: a part the API does not take"));
            }
        }
        if matches!(m.role, Role::User | Role::Assistant)
            && !m.has_visible_text()
            && m.tool_calls.is_empty()
            && !m.content.parts.iter().any(Part::is_image)
        {
            problems.push(format!("message {i}: an empty {} turn", m.role.as_str()));
        }
        if m.role == Role::Tool {
            match m.tool_call_id.as_deref().and_then(|id| pending.iter().position(|p| *p == id)) {
                Some(k) => {
                    pending.remove(k);
                }
                None => problems.push(format!("message {i}: a result no open call asked for")),
            }
            continue;
        }
        if !pending.is_empty() {
            problems.push(format!("message {step_at}: calls not answered before message {i}"));
            pending.clear();
        }
        for c in m.tool_calls.iter() {
            if c.id.is_empty() || !ids.insert(c.id.as_str()) {
                problems.push(format!("message {i}: call id `{}` empty or reused", c.id));
            }
            if !valid_name(&c.name) {
                problems.push(format!("message {i}: tool name `{}`", c.name));
            }
            if c.args_object().is_none() {
                problems.push(format!("message {i}: arguments of `{}` not a JSON object", c.name));
            }
            pending.push(&c.id);
        }
        step_at = i;
    }
    // Calls of the last message may be in flight.
    if !pending.is_empty() && step_at + 1 != messages.len() {
        problems.push(format!("message {step_at}: calls not answered"));
    }
    problems
}

/// A message with its roles, parts, reasoning and calls in request form
/// (pairing is [`Steps`]'s), its images where [`Api::Messages`] takes them
/// ([`fit_images`] is last).
fn clean_message(m: &Message, keep: bool, repairs: &mut Repairs) -> Message {
    let role = match &m.role {
        Role::Other(_) => {
            repairs.add(Repair::RolesMapped, 1);
            Role::User
        }
        r => r.clone(),
    };
    let mut parts = Vec::new();
    let mut reasoning: Vec<String> = Vec::new();
    let mut calls: Vec<ToolCall> = m.tool_calls.iter().cloned().collect();
    let had_calls = !calls.is_empty();
    for p in m.content.parts.iter() {
        match p {
            Part::Text(raw) => {
                let text = p.text_str().unwrap_or_default();
                if raw.len() != 2 || raw.get("type").and_then(Value::as_str) != Some("text") {
                    repairs.add(Repair::PartsRetyped, 1);
                }
                if !text.is_empty() {
                    parts.push(Part::text(text));
                }
            }
            Part::Image { raw, info } => match image_url(raw, info) {
                Some(url) if Api::Messages.takes_image(&role) => parts.push(image_part(url, info)),
                _ => {
                    repairs.add(Repair::ImagesToText, 1);
                    parts.push(Part::text(image_text(info)));
                }
            },
            Part::Reasoning(raw) => match readable_reasoning(raw) {
                Some(t) => reasoning.push(t),
                None => repairs.add(Repair::OpaqueReasoningDropped, 1),
            },
            Part::Other(v) => match other_part(v) {
                OtherPart::Call(call) if !had_calls => {
                    repairs.add(Repair::CallsFromParts, 1);
                    calls.push(*call);
                }
                OtherPart::Call(_) => repairs.add(Repair::CallPartsDropped, 1),
                OtherPart::Text(t) => {
                    repairs.add(Repair::PartsToText, 1);
                    parts.push(Part::text(t));
                }
                OtherPart::Nothing => repairs.add(Repair::PartsDropped, 1),
            },
        }
    }
    if let Some(r) = &m.reasoning {
        if r.text.trim().is_empty() {
            repairs.add(Repair::OpaqueReasoningDropped, 1);
        } else {
            reasoning.insert(0, r.text.clone());
        }
    }
    if role != Role::Assistant && !reasoning.is_empty() {
        // Only an assistant step has reasoning; a user's "thinking" is text.
        repairs.add(Repair::PartsRetyped, reasoning.len() as u64);
        parts.extend(reasoning.drain(..).map(Part::text));
    }
    for c in &mut calls {
        clean_call(c, repairs);
    }
    let form = if parts.is_empty() && role == Role::Assistant && !calls.is_empty() {
        ContentForm::Null
    } else if parts.iter().any(Part::is_image) {
        ContentForm::Parts
    } else {
        ContentForm::String
    };
    Message {
        role,
        content: Content { parts: Arc::new(parts), form },
        tool_calls: Arc::new(if m.role == Role::Tool { Vec::new() } else { calls }),
        tool_call_id: m.tool_call_id.clone().filter(|_| m.role == Role::Tool),
        reasoning: (!reasoning.is_empty())
            .then(|| Reasoning { field: REASONING_FIELD.into(), text: reasoning.join("\n") }),
        meta: m.meta.clone(),
        extra: if keep { m.extra.clone() } else { Arc::default() },
        attached: if keep { m.attached.clone() } else { Arc::default() },
    }
}

/// The URL of an image part: its own, or a data URL of its inline payload.
fn image_url(raw: &Map<String, Value>, info: &ImageInfo) -> Option<String> {
    if let Some(u) = &info.url {
        return Some(u.clone());
    }
    let url = match raw.get("image_url") {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Object(o)) => o.get("url").and_then(Value::as_str),
        _ => raw.get("url").and_then(Value::as_str),
    };
    if let Some(u) = url {
        return Some(u.to_string());
    }
    let source = raw.get("source")?.as_object()?;
    let data = source.get("data")?.as_str()?;
    let media = info.media_type.as_deref().unwrap_or("image/png");
    Some(format!("data:{media};base64,{data}"))
}

fn image_part(url: String, info: &ImageInfo) -> Part {
    let mut inner = Map::new();
    inner.insert("url".into(), Value::String(url));
    let mut raw = Map::new();
    raw.insert("type".into(), Value::String("image_url".into()));
    raw.insert("image_url".into(), Value::Object(inner));
    Part::Image { raw, info: info.clone() }
}

/// What an image the API takes no image in becomes.
fn image_text(info: &ImageInfo) -> String {
    match &info.media_type {
        Some(t) => format!("[image: {t}, {} bytes]", info.byte_len),
        None => "[image]".to_string(),
    }
}

/// The readable text of a reasoning part, if it has any.
fn readable_reasoning(raw: &Map<String, Value>) -> Option<String> {
    for key in crate::model::part::REASONING_TEXT_KEYS {
        if key == "data" {
            continue; // `redacted_thinking` data is opaque.
        }
        if let Some(t) = raw.get(key).and_then(Value::as_str)
            && !t.trim().is_empty()
        {
            return Some(t.to_string());
        }
    }
    // Codex: `summary` and `content` hold lists of `{type, text}`.
    let texts: Vec<&str> = ["summary", "content"]
        .iter()
        .filter_map(|k| raw.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(|item| item.get("text").and_then(Value::as_str))
        .filter(|t| !t.trim().is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

enum OtherPart {
    Call(Box<ToolCall>),
    Text(String),
    Nothing,
}

/// A content part with no text: a call logged as a part, a named reference, or nothing.
fn other_part(v: &Value) -> OtherPart {
    let Some(o) = v.as_object() else { return OtherPart::Nothing };
    let ty = o.get("type").and_then(Value::as_str).unwrap_or("");
    let s = |k: &str| o.get(k).and_then(Value::as_str);
    if matches!(ty, "tool_call" | "function_call" | "tool_use")
        && let Some(name) = s("name")
    {
        let id = s("tool_call_id").or(s("call_id")).or(s("id")).unwrap_or("");
        let arguments = match o.get("arguments").or(o.get("input")) {
            Some(Value::String(a)) => a.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        return OtherPart::Call(Box::new(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            ..ToolCall::default()
        }));
    }
    match s("tool_name").or(s("name")) {
        Some(name) if !ty.is_empty() => OtherPart::Text(format!("[{ty}: {name}]")),
        _ => OtherPart::Nothing,
    }
}

/// Returns true if and only if the APIs take `name` as a tool name.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_CHARS
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn clean_call(c: &mut ToolCall, repairs: &mut Repairs) {
    if !valid_name(&c.name) {
        repairs.add(Repair::NamesSanitized, 1);
        let mut name: String = c
            .name
            .chars()
            .map(|ch| if ch.is_ascii_alphanumeric() || ch == '-' { ch } else { '_' })
            .take(MAX_TOOL_NAME_CHARS)
            .collect();
        if name.is_empty() {
            name = "tool".into();
        }
        c.name = name;
    }
    if c.args_object().is_none() {
        let trimmed = c.arguments.trim();
        if trimmed.is_empty() {
            c.arguments = "{}".into();
        } else {
            repairs.add(Repair::ArgumentsWrapped, 1);
            let input = match serde_json::from_str::<Value>(trimmed) {
                Ok(v) if c.args_form == ArgsForm::Value => v,
                _ => Value::String(c.arguments.clone()),
            };
            let mut o = Map::new();
            o.insert("input".into(), input);
            c.arguments = Value::Object(o).to_string();
        }
    }
    c.args_form = ArgsForm::String;
    let mut extra = Map::new();
    extra.insert("id".into(), crate::formats::slots::slot());
    extra.insert("type".into(), Value::String("function".into()));
    extra.insert("function".into(), crate::formats::slots::slot());
    c.extra = extra;
    c.function_extra = Map::new();
}

/// The open assistant step: its message, and the results that came for it.
struct Step {
    msg: Message,
    results: HashMap<String, Message>,
    /// The ids of `results`, in the order they came.
    arrived: Vec<String>,
    /// A message was joined after some results: their order changed.
    joined_after_results: bool,
}

impl Step {
    fn pending(&self) -> usize {
        self.msg.tool_calls.iter().filter(|c| !self.results.contains_key(&c.id)).count()
    }
}

/// Joins steps and pairs results (see the module doc).
struct Steps<'r> {
    out: Vec<Message>,
    step: Option<Step>,
    /// Ids answered by a step already closed (a second result is a duplicate).
    answered: HashSet<String>,
    /// Instructions logged inside the open step, written after it.
    deferred: Vec<Message>,
    /// Tool messages not read yet, by the call id they answer.
    results_to_come: HashMap<String, usize>,
    repairs: &'r mut Repairs,
}

impl<'r> Steps<'r> {
    fn new(repairs: &'r mut Repairs) -> Steps<'r> {
        Steps {
            out: Vec::new(),
            step: None,
            answered: HashSet::new(),
            deferred: Vec::new(),
            results_to_come: HashMap::new(),
            repairs,
        }
    }

    fn run(mut self, messages: Vec<Message>) -> Vec<Message> {
        for m in messages.iter().filter(|m| m.role == Role::Tool) {
            *self.results_to_come.entry(result_id(m)).or_default() += 1;
        }
        for m in messages {
            match m.role {
                Role::Assistant => self.assistant(m),
                Role::Tool => self.result(m),
                // Codex logs context (developer) messages between a call and
                // its output: they wait until the step's results are written.
                Role::System | Role::Developer
                    if self.step.as_ref().is_some_and(|s| s.pending() > 0 && self.open(s)) =>
                {
                    self.deferred.push(m);
                }
                _ => {
                    self.close(false);
                    self.out.push(m);
                }
            }
        }
        self.close(true);
        self.out
    }

    fn assistant(&mut self, m: Message) {
        let joins = self.step.as_ref().is_some_and(|s| self.open(s));
        if !joins {
            self.close(false);
            self.step = Some(Step {
                msg: m,
                results: HashMap::new(),
                arrived: Vec::new(),
                joined_after_results: false,
            });
            return;
        }
        let Some(s) = self.step.as_mut() else { return };
        self.repairs.add(Repair::StepsJoined, 1);
        s.joined_after_results |= !s.results.is_empty();
        join_into(&mut s.msg, m);
    }

    /// Returns true if the step `s` is still open: none of its results has
    /// come yet, or a result still to come answers one of its unanswered
    /// calls. Once its results began and no more will come for it, what the
    /// assistant writes next is its next step.
    fn open(&self, s: &Step) -> bool {
        s.results.is_empty()
            || s.msg.tool_calls.iter().any(|c| {
                !s.results.contains_key(&c.id)
                    && self.results_to_come.get(&c.id).is_some_and(|n| *n > 0)
            })
    }

    fn result(&mut self, m: Message) {
        let id = result_id(&m);
        if let Some(n) = self.results_to_come.get_mut(&id) {
            *n = n.saturating_sub(1);
        }
        let Some(s) = self.step.as_mut() else {
            self.repairs.add(dropped_result(&self.answered, &id), 1);
            return;
        };
        let calls = &s.msg.tool_calls;
        match calls.iter().position(|c| c.id == id) {
            Some(_) if s.results.contains_key(&id) => {
                self.repairs.add(Repair::DuplicateResultsDropped, 1)
            }
            Some(_) => {
                s.arrived.push(id.clone());
                s.results.insert(id, m);
            }
            None => self.repairs.add(dropped_result(&self.answered, &id), 1),
        }
    }

    /// Writes the open step and its results. At the end of the session
    /// (`last`), a step no result followed keeps its calls (in flight).
    fn close(&mut self, last: bool) {
        let Some(mut s) = self.step.take() else { return };
        let in_flight = last && s.results.is_empty();
        if !in_flight {
            let before = s.msg.tool_calls.len();
            let results = &s.results;
            s.msg.tool_calls_mut().retain(|c| results.contains_key(&c.id));
            let dropped = before - s.msg.tool_calls.len();
            self.repairs.add(Repair::UnansweredCallsDropped, dropped as u64);
            // A training output's loss flag: a step without its calls is ours.
            s.msg.meta.made |= dropped > 0;
            if dropped > 0 && s.msg.tool_calls.is_empty() && !s.msg.has_visible_text() {
                s.msg.content = Content::from_text(CALL_REMOVED_TEXT);
                self.repairs.add(Repair::EmptyFilled, 1);
            }
        }
        let mut seen = HashSet::new();
        let ids: Vec<String> = s
            .msg
            .tool_calls
            .iter()
            .filter(|c| seen.insert(c.id.as_str()))
            .map(|c| c.id.clone())
            .collect();
        // The results are written in call order: moved when they came in
        // another (calls dropped for want of a result do not count).
        let out_of_order = !in_flight && s.arrived != ids;
        if out_of_order || s.joined_after_results || !self.deferred.is_empty() {
            self.repairs.add(Repair::Reordered, 1);
        }
        if in_flight {
            // The in-flight call stays the request's last message.
            self.out.append(&mut self.deferred);
        }
        self.out.push(s.msg);
        for id in ids {
            if let Some(r) = s.results.remove(&id) {
                self.out.push(r);
                self.answered.insert(id);
            }
        }
        self.out.append(&mut self.deferred);
    }
}

/// The call id a tool message answers (empty when it names none).
fn result_id(m: &Message) -> String {
    m.tool_call_id.clone().unwrap_or_default()
}

/// Why a result outside the open step is dropped: its call was answered
/// already (a duplicate), or never made in a step still open (an orphan).
fn dropped_result(answered: &HashSet<String>, id: &str) -> Repair {
    if answered.contains(id) {
        Repair::DuplicateResultsDropped
    } else {
        Repair::OrphanResultsDropped
    }
}

/// Appends `m`'s text, reasoning and calls to the step message `into`.
fn join_into(into: &mut Message, m: Message) {
    let parts = Arc::unwrap_or_clone(m.content.parts);
    if !parts.is_empty() {
        into.content.parts_mut().extend(parts);
        if into.content.parts.iter().any(Part::is_image) {
            into.content.form = ContentForm::Parts;
        } else {
            into.content.form = ContentForm::String;
        }
    }
    if let Some(r) = m.reasoning {
        match &mut into.reasoning {
            Some(mine) => {
                mine.text.push('\n');
                mine.text.push_str(&r.text);
            }
            None => into.reasoning = Some(r),
        }
    }
    let calls = Arc::unwrap_or_clone(m.tool_calls);
    into.tool_calls_mut().extend(calls);
    if into.meta.timestamp.is_none() {
        into.meta.timestamp = m.meta.timestamp;
    }
    if into.meta.usage.is_none() {
        into.meta.usage = m.meta.usage;
    }
}

/// Gives every call a non-empty id used nowhere else in the session, and its
/// result the same id (a result follows its step at once, so the first
/// result after a step with that id is the one).
fn make_call_ids_unique(messages: &mut [Message], repairs: &mut Repairs) {
    let mut seen: HashSet<String> = HashSet::new();
    let mut renamed: HashMap<String, String> = HashMap::new();
    for (i, m) in messages.iter_mut().enumerate() {
        if m.role == Role::Tool {
            if let Some(id) = m.tool_call_id.as_mut()
                && let Some(new) = renamed.remove(id.as_str())
            {
                *id = new;
            }
            continue;
        }
        if m.tool_calls.is_empty() {
            continue;
        }
        renamed.clear();
        let calls_needing = m.tool_calls.iter().any(|c| c.id.is_empty() || seen.contains(&c.id));
        if !calls_needing {
            seen.extend(m.tool_calls.iter().map(|c| c.id.clone()));
            continue;
        }
        for (k, c) in m.tool_calls_mut().iter_mut().enumerate() {
            if !c.id.is_empty() && !seen.contains(&c.id) {
                seen.insert(c.id.clone());
                continue;
            }
            repairs.add(Repair::CallIdsAssigned, 1);
            let base = if c.id.is_empty() { format!("call_{i}_{k}") } else { c.id.clone() };
            let mut new = base.clone();
            let mut n = 2;
            while seen.contains(&new) {
                new = format!("{base}_{n}");
                n += 1;
            }
            if !c.id.is_empty() {
                renamed.insert(c.id.clone(), new.clone());
            }
            seen.insert(new.clone());
            c.id = new;
        }
    }
}

/// Gives a user or assistant turn with nothing in it the text `(empty)`.
fn fill_empty(m: &mut Message, repairs: &mut Repairs) {
    let empty = matches!(m.role, Role::User | Role::Assistant)
        && !m.has_visible_text()
        && m.tool_calls.is_empty()
        && !m.content.parts.iter().any(Part::is_image);
    if empty {
        repairs.add(Repair::EmptyFilled, 1);
        m.content = Content::from_text(EMPTY_TEXT);
        m.meta.made = true;
    }
}

/// Tool schemas in the Chat Completions form (`{type: "function", function:
/// {name, description, parameters}}`), from it or from Anthropic's
/// (`{name, description, input_schema}`); `None` when none is left.
fn clean_tools(tools: &Value, repairs: &mut Repairs) -> Option<Value> {
    let Value::Array(items) = tools else {
        repairs.add(Repair::ToolSchemasDropped, 1);
        return None;
    };
    let mut out = Vec::new();
    for t in items {
        let f = t.get("function").and_then(Value::as_object).or_else(|| t.as_object());
        let name = f.and_then(|f| f.get("name")).and_then(Value::as_str);
        let (Some(f), Some(name)) = (f, name) else {
            repairs.add(Repair::ToolSchemasDropped, 1);
            continue;
        };
        let mut function = Map::new();
        let mut name = name.to_string();
        if !valid_name(&name) {
            let mut c = ToolCall { name, arguments: "{}".into(), ..ToolCall::default() };
            clean_call(&mut c, repairs);
            name = c.name;
        }
        function.insert("name".into(), Value::String(name));
        if let Some(d) = f.get("description").filter(|d| d.is_string()) {
            function.insert("description".into(), d.clone());
        }
        if let Some(p) = f.get("parameters").or(f.get("input_schema")).filter(|p| p.is_object()) {
            function.insert("parameters".into(), p.clone());
        }
        let mut tool = Map::new();
        tool.insert("type".into(), Value::String("function".into()));
        tool.insert("function".into(), Value::Object(function));
        out.push(Value::Object(tool));
    }
    (!out.is_empty()).then_some(Value::Array(out))
}
