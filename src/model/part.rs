//! Message content: parts, images and tool calls.
//!
//! A part keeps the JSON object it was read from (`raw`) and exposes typed
//! accessors over it. That is how unknown keys (`cache_control`, provider
//! annotations, a part `type` we do not model) survive a round trip without a
//! field for each of them.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// How a message's `content` was written in the source, so it is written back alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContentForm {
    /// `"content": "text"`.
    #[default]
    String,
    /// `"content": [ {part}, ... ]`.
    Parts,
    /// `"content": null`.
    Null,
    /// No `content` key at all.
    Absent,
}

/// The text of a message's JSON `content` as Chat Completions writes it: the
/// string, or its parts' texts joined by `separator`; empty when it is missing or null, and
/// `None` when it is anything else (a number, an object).
pub fn content_text(content: Option<&Value>, separator: &str) -> Option<String> {
    match content {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(separator),
        ),
        Some(Value::Null) | None => Some(String::new()),
        Some(_) => None,
    }
}

/// What an image part is, measured without decoding it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageInfo {
    pub media_type: Option<String>,
    /// Length of the inline payload in bytes (base64 text), 0 for a URL.
    pub byte_len: u64,
    /// The URL when the image is not inline.
    pub url: Option<String>,
}

/// One piece of message content.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    /// A part with a string `text` field (`text`, `input_text`, `output_text`, ...).
    Text(Map<String, Value>),
    /// An image, inline or by URL. The cost model charges a fixed amount per image.
    Image { raw: Map<String, Value>, info: ImageInfo },
    /// Reasoning or thinking kept inside content (Anthropic `thinking` blocks).
    Reasoning(Map<String, Value>),
    /// Anything else, kept as it was.
    Other(Value),
}

/// The keys a reasoning part may hold its text under, first present first.
pub(crate) const REASONING_TEXT_KEYS: [&str; 3] = ["thinking", "text", "data"];

impl Part {
    /// Builds a `{"type": "text", "text": ...}` part.
    pub fn text(text: impl Into<String>) -> Part {
        let mut raw = Map::new();
        raw.insert("type".into(), Value::String("text".into()));
        raw.insert("text".into(), Value::String(text.into()));
        Part::Text(raw)
    }

    /// The text of a text part.
    pub fn text_str(&self) -> Option<&str> {
        match self {
            Part::Text(raw) => raw.get("text").and_then(Value::as_str),
            _ => None,
        }
    }

    /// Replaces the text of a text part. Other parts are left alone.
    pub fn set_text(&mut self, text: String) {
        if let Part::Text(raw) = self {
            raw.insert("text".into(), Value::String(text));
        }
    }

    /// The reasoning text of a reasoning part: the first of
    /// `REASONING_TEXT_KEYS` it has, if that is a string.
    pub fn reasoning_text(&self) -> Option<&str> {
        match self {
            Part::Reasoning(raw) => {
                REASONING_TEXT_KEYS.iter().find_map(|k| raw.get(*k)).and_then(Value::as_str)
            }
            _ => None,
        }
    }

    pub fn is_image(&self) -> bool {
        matches!(self, Part::Image { .. })
    }
}

/// The content of a message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Content {
    /// Shared (copy on write, [`Content::parts_mut`]): compaction and replay
    /// copy the messages they keep, and the parts hold the chat text itself.
    pub parts: Arc<Vec<Part>>,
    pub form: ContentForm,
}

impl Content {
    /// Plain string content.
    pub fn from_text(text: impl Into<String>) -> Content {
        Content { parts: Arc::new(vec![Part::text(text)]), form: ContentForm::String }
    }

    /// The parts, to change: copied first if another message still shares them.
    pub fn parts_mut(&mut self) -> &mut Vec<Part> {
        Arc::make_mut(&mut self.parts)
    }

    /// All text parts joined by newlines: borrowed when there is a single text
    /// part (most messages), so that looking at a long tool output copies nothing.
    pub fn joined_text(&self) -> Cow<'_, str> {
        let mut texts = self.parts.iter().filter_map(Part::text_str);
        let first = texts.next().unwrap_or("");
        let Some(second) = texts.next() else { return Cow::Borrowed(first) };
        let mut out = String::from(first);
        for t in std::iter::once(second).chain(texts) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(t);
        }
        Cow::Owned(out)
    }

    /// Returns true if and only if [`Content::joined_text`] is `s`, without
    /// joining when the text parts are too long to be it (most are).
    pub fn text_is(&self, s: &str) -> bool {
        let mut bytes = 0usize;
        for t in self.parts.iter().filter_map(Part::text_str) {
            bytes += t.len();
            if bytes > s.len() {
                return false;
            }
        }
        self.joined_text() == s
    }

    /// Total characters (Unicode scalar values) of the text parts.
    pub fn text_chars(&self) -> usize {
        self.parts.iter().filter_map(Part::text_str).map(|t| t.chars().count()).sum()
    }

    /// Returns true if and only if there is no part at all.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Replaces the whole content with one string, keeping the string form
    /// where the source used it and a one-part array otherwise.
    pub fn replace_with_text(&mut self, text: impl Into<String>) {
        let form = match self.form {
            ContentForm::Parts => ContentForm::Parts,
            ContentForm::String | ContentForm::Null | ContentForm::Absent => ContentForm::String,
        };
        self.parts = Arc::new(vec![Part::text(text)]);
        self.form = form;
    }

    /// Puts `text` before the existing content, as a separate paragraph.
    pub fn prepend_text(&mut self, text: &str) {
        match self.form {
            ContentForm::String if self.parts.len() == 1 => {
                let old = self.parts[0].text_str().unwrap_or_default().to_string();
                self.parts_mut()[0].set_text(format!("{text}\n\n{old}"));
            }
            ContentForm::Parts => self.parts_mut().insert(0, Part::text(text)),
            _ => {
                self.parts_mut().insert(0, Part::text(text));
                self.form = ContentForm::String;
            }
        }
    }

    /// Appends `text` after the existing content, as a separate paragraph.
    pub fn append_text(&mut self, text: &str) {
        match self.form {
            ContentForm::String if self.parts.len() == 1 => {
                let old = self.parts[0].text_str().unwrap_or_default().to_string();
                let joined =
                    if old.is_empty() { text.to_string() } else { format!("{old}\n\n{text}") };
                self.parts_mut()[0].set_text(joined);
            }
            ContentForm::Parts => self.parts_mut().push(Part::text(text)),
            _ => {
                self.parts_mut().push(Part::text(text));
                self.form = ContentForm::String;
            }
        }
    }
}

/// How the arguments of a tool call were written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArgsForm {
    /// A JSON-encoded string (OpenAI `function.arguments`).
    #[default]
    String,
    /// A JSON value inline (Anthropic `input`, some providers' `arguments`).
    Value,
}

/// A tool call made by an assistant message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as JSON text, whichever form they were written in.
    pub arguments: String,
    pub args_form: ArgsForm,
    /// Other keys of the call object (`type`, `index`, ...).
    pub extra: Map<String, Value>,
    /// Other keys of the nested `function` object.
    pub function_extra: Map<String, Value>,
}

impl ToolCall {
    /// The arguments parsed as a JSON object, if they are one. Parsed each
    /// time: compaction reads them through its memo (`policy::Caches`).
    pub fn args_object(&self) -> Option<Arc<Map<String, Value>>> {
        crate::memo::call_args::parse(&self.arguments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The training fold (joined by newlines) and the summarizer's answer
    /// (joined by nothing) read content alike; what has no text is `None`.
    #[test]
    fn content_text_reads_a_string_or_the_parts_texts() {
        let parts = serde_json::json!([{"type": "text", "text": "a"}, {"type": "image_url"}, {"text": "b"}]);
        assert_eq!(content_text(Some(&parts), "\n").as_deref(), Some("a\nb"));
        assert_eq!(content_text(Some(&parts), "").as_deref(), Some("ab"));
        assert_eq!(content_text(Some(&Value::from("s")), "\n").as_deref(), Some("s"));
        assert_eq!(content_text(Some(&Value::Null), "").as_deref(), Some(""));
        assert_eq!(content_text(None, "").as_deref(), Some(""));
        assert_eq!(content_text(Some(&Value::from(5)), ""), None);
        assert_eq!(content_text(Some(&serde_json::json!({"text": "x"})), ""), None);
    }

    #[test]
    fn joined_text_joins_text_parts_and_borrows_a_single_one() {
        let image = Part::Other(serde_json::json!({"type": "input_image"}));
        for (parts, joined, borrowed) in [
            (vec![], "", true),
            (vec![Part::text("one")], "one", true),
            (vec![image.clone(), Part::text("one"), image.clone()], "one", true),
            (vec![Part::text("one"), image, Part::text("two")], "one\ntwo", false),
            // No separator before the first non-empty text (as before).
            (vec![Part::text(""), Part::text("b")], "b", false),
        ] {
            let c = Content { parts: Arc::new(parts), ..Content::from_text("") };
            let text = c.joined_text();
            assert_eq!(text, joined);
            assert_eq!(matches!(text, Cow::Borrowed(_)), borrowed, "{joined:?}");
            // `text_is` is `joined_text() ==`, for the text and its neighbours.
            for probe in
                [joined.to_string(), format!("{joined}x"), format!("\n{joined}"), "on".into()]
            {
                assert_eq!(c.text_is(&probe), c.joined_text() == probe.as_str(), "{probe:?}");
            }
        }
    }
}
