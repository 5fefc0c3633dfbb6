//! The passthrough fields some reader looks up, beside a dialect's decoder.
//!
//! ## What
//! A session's and a message's `extra` maps and their carried records
//! (`attached`, `trailing`) hold what the decoder did not take. A few readers
//! still look into them: `discover::facts` (a log's model, project and day,
//! which `--model auto` takes the window from), the policy (a recorded
//! `compaction`, a result's `is_error`) and the model's own accessors (a
//! result's `name`). They read only through [`Session::read`],
//! [`Message::read`] and [`RecordType::is`], with the keys named here.
//!
//! ## Why
//! The OpenAI fast paths (`formats::openai::fast`) keep what nothing reads as
//! JSON text: a reader of a key held as text would read nothing there and get
//! another answer than from a whole parse (another model, so another window).
//! The kept path leaves every key of these enums parsed, and every carried
//! record naming a [`RecordType`]: reading a new key is adding it here, and the
//! kept path follows by construction.
//!
//! ## Example
//! `facts::model` reads `message.read(MessageKey::Envelope)` (Claude Code's
//! `message` object, for its `model`), so a kept line holds `message` parsed.
//!
//! ## Invariants
//! - No reader outside a dialect looks up a key of `extra` by its string.
//! - A record is of a [`RecordType`] by its `type` (or, for a record a dialect
//!   wrapped, a key of that name: `formats::codex`'s marker): the kept path
//!   parses any record whose text names the type as a JSON string.

use super::names::named;
use super::{Message, Session};
use serde_json::Value;

/// A key of a session's `extra` map that some reader looks up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionKey {
    /// The model of OpenAI-style records (`facts::model`).
    Model,
    /// The project folder (`facts::project`).
    Cwd,
    /// The `compaction` object an earlier run of ours wrote (`policy::driver`).
    Compaction,
}

named!(SessionKey { Model => "model", Cwd => "cwd", Compaction => "compaction" });

/// A key of a message's `extra` map that some reader looks up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKey {
    /// Claude Code's `message` envelope, for its `model` (`facts::model`).
    Envelope,
    /// A message's own `model` (`facts::model`).
    Model,
    /// Claude Code's `cwd` on every event (`facts::project`).
    Cwd,
    /// A timestamp the decoder did not take (`facts::day`).
    Timestamp,
    /// The tool name on a tool result ([`Message::result_name`]).
    Name,
    /// A tool result flagged an error (`policy::summary`).
    IsError,
}

named!(MessageKey {
    Envelope => "message",
    Model => "model",
    Cwd => "cwd",
    Timestamp => "timestamp",
    Name => "name",
    IsError => "is_error",
});

/// The `type` of a carried record some reader looks into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordType {
    /// Codex's per-turn context: `payload.model`, `payload.cwd` (`facts`).
    TurnContext,
    /// Codex's session header: `payload.cwd` (`facts::project`).
    SessionMeta,
}

named!(RecordType { TurnContext => "turn_context", SessionMeta => "session_meta" });

impl RecordType {
    /// Returns true if and only if `record`'s `type` is this one.
    pub fn is(self, record: &Value) -> bool {
        record.get("type").and_then(Value::as_str) == Some(self.name())
    }
}

impl Session {
    /// The value at `key` in the session's passthrough fields.
    pub fn read(&self, key: SessionKey) -> Option<&Value> {
        self.extra.get(key.name())
    }
}

impl Message {
    /// The value at `key` in the message's passthrough fields.
    pub fn read(&self, key: MessageKey) -> Option<&Value> {
        self.extra.get(key.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_read_the_extra_maps() {
        let mut m = Message::text(super::super::Role::Tool, "x");
        m.extra_mut().insert("is_error".into(), json!(true));
        assert_eq!(m.read(MessageKey::IsError), Some(&json!(true)));
        assert_eq!(m.read(MessageKey::Name), None);
        let mut s = Session::default();
        std::sync::Arc::make_mut(&mut s.extra).insert("cwd".into(), json!("/p"));
        assert_eq!(s.read(SessionKey::Cwd), Some(&json!("/p")));
        assert!(RecordType::TurnContext.is(&json!({"type": "turn_context"})));
        assert!(!RecordType::SessionMeta.is(&json!({"type": "turn_context"})));
    }
}
