//! The OpenAI fast paths: a line's text kept unparsed where nothing reads it.
//!
//! ## What
//! - `skim.rs`: a line measured (id, messages, tokens) without being decoded
//!   ([`skim_line`]), for a session compaction leaves as it is.
//! - `kept.rs`: a line read with the fields nothing reads kept as JSON text
//!   ([`KeptRecord::parse`]).
//! - `lines.rs`: a record written straight to JSON text (compact, or laid
//!   out pretty for a document), and the one writer
//!   of a [`KeptSession`] ([`KeptSession::line`]).
//!
//! Code outside sees only the re-exports of `formats::openai`; the children
//! use only what this file declares or imports (`super::`), never each other.
//!
//! ## Why
//! In archives converted from Claude Code most of a line's bytes sit in
//! fields nothing reads; building their trees and writing them again was most
//! of a `--counter hermes` run.
//!
//! ## Which keys stay parsed
//! Every key the decoder takes, and every key of [`crate::model::reads`]
//! (what readers outside a dialect look up: `discover::facts`, the policy),
//! and every carried record naming one of its [`RecordType`]s. Those readers
//! read only through those keys, so a reader of a new key adds it there, and
//! the kept path leaves it parsed by construction: a kept session reads as
//! the whole parse's session (the property test in `discover::facts` pins
//! its facts and its session). [`FastPath::may_run`] is the one rule of
//! which path a run may take.
//!
//! ## Kept fields
//! A line read by [`KeptRecord::parse`] holds the fields nothing reads as
//! their JSON text, and only the lines writer may write what it becomes: the
//! invariant is the types' ([`KeptRecord`] -> [`KeptSession`] -> [`KeptSession::line`]),
//! whose constructors are private to this module. No `Session` can be taken
//! out of a [`KeptSession`] (it lends one for reading), and a session made
//! from it by a compaction is one again ([`KeptSession::map`]). (The `&Session`
//! it lends could still be handed to another writer: what the types rule out
//! is owning one, or writing a kept session any other way.)
//!
//! The text itself must still sit in the session's `extra` maps, as a string
//! marker (`kept_marker`): it has to cross `policy::compact`, which drops,
//! moves and rewrites messages and would lose any table beside them. So the
//! marker is made in one function and read in one (`kept_marker`,
//! `kept_text`, both here), the reader called only when writing a
//! [`KeptSession`]; a session decoded from a whole parse is written with any
//! marker-like string in it as the string it is.

mod kept;
mod lines;
mod skim;

pub(super) use lines::{session_line, session_pretty};
pub use skim::{Skimmed, skim_line};

// What the children take from the dialect.
#[cfg(test)]
use super::slot;
use super::{
    ATTACHED, ContentShape, DECODED_MESSAGE_KEYS, DECODED_SESSION_KEYS, PRIVATE_KEY, PartKind,
    REASONING_FIELDS, TRAILING, arguments_value, call_fields, carry, content_shape, decode_part,
    decode_session, encode_session, is_slot, part_kind,
};
use crate::formats::DecodeError;
use crate::model::{MessageKey, RecordType, Session, SessionKey, Source};
use serde_json::Value;
use std::borrow::Cow;

/// What a run reads of each session besides what compaction reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Compaction's reads only.
    Compaction,
    /// Also the facts of its log (`discover::facts`: `--model auto` takes the
    /// window from the model).
    Facts,
}

/// A fast path a run may take instead of decoding a line whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastPath {
    /// [`skim_line`]: counts only.
    Skim,
    /// [`KeptRecord`]: every key a reader looks up parsed.
    Kept,
}

impl FastPath {
    /// Whether a run that `reads` this of each session may take this path:
    /// the one rule, for the engine and for `report`. A skim reads no facts
    /// (no model, so no window under `--model auto`); a kept line holds every
    /// key of [`crate::model::reads`] parsed, so it reads as a whole parse
    /// whatever the run reads.
    pub fn may_run(self, reads: Reads) -> bool {
        match self {
            FastPath::Skim => reads == Reads::Compaction,
            FastPath::Kept => true,
        }
    }
}

/// An OpenAI session line parsed with the fields nothing reads kept as JSON
/// text (`kept.rs`). Made only by [`KeptRecord::parse`], read only by
/// [`KeptRecord::decode`].
#[derive(Debug)]
pub struct KeptRecord(Value);

impl KeptRecord {
    /// Decodes the record as [`decode_session`] decodes a whole parse of its
    /// line, with the same errors.
    pub fn decode(self, source: Source) -> Result<KeptSession<'static>, DecodeError> {
        decode_session(self.0, source).map(|s| KeptSession(Cow::Owned(s)))
    }
}

/// A session holding kept fields ([`KeptRecord`]), or one made from such a
/// session. Only [`KeptSession::line`] writes it.
#[derive(Debug)]
pub struct KeptSession<'a>(Cow<'a, Session>);

impl KeptSession<'_> {
    /// The session, for reading: a field nothing reads holds a marker.
    pub fn session(&self) -> &Session {
        &self.0
    }

    /// What `f` (a compaction) makes of the session, with what else it gives:
    /// it holds this session's kept fields, so it is a kept session too.
    pub fn map<'s, T>(
        &'s self,
        f: impl FnOnce(&'s Session) -> (Cow<'s, Session>, T),
    ) -> (KeptSession<'s>, T) {
        let (session, other) = f(&self.0);
        (KeptSession(session), other)
    }

    /// The session's record as one line of JSON (no newline), each kept
    /// field written as the text it was read as: the bytes a whole parse of
    /// the line, decoded, would be written as.
    pub fn line(&self, compaction: Option<&Value>) -> Vec<u8> {
        lines::kept_line(self, compaction)
    }

    /// The session with every kept field parsed back, and how many there were
    /// (tests compare it with the session of a whole parse).
    #[cfg(test)]
    pub(crate) fn expanded(self) -> (Session, usize) {
        let mut s = self.0.into_owned();
        let mut kept = 0;
        let mut each = |v: &mut Value| {
            if let Some(text) = kept_text(v) {
                *v = serde_json::from_str(text).expect("kept texts are JSON");
                kept += 1;
            }
        };
        std::sync::Arc::make_mut(&mut s.extra).values_mut().for_each(&mut each);
        s.trailing.iter_mut().for_each(&mut each);
        for m in &mut s.messages {
            m.extra_mut().values_mut().for_each(&mut each);
            m.attached_mut().iter_mut().for_each(&mut each);
        }
        (s, kept)
    }
}

/// Prefix of a kept text in a [`KeptSession`]'s maps. A Unicode noncharacter
/// starts it, and lines holding one are never kept.
const KEPT: &str = "\u{fdd0}compactor:kept:";

/// The marker holding a kept JSON text: written only by `kept.rs`, of a text
/// it proved serde_json writes back as read.
fn kept_marker(text: &str) -> Value {
    Value::String(format!("{KEPT}{text}"))
}

/// The JSON text a kept marker holds: read only by `lines.rs`, writing a
/// [`KeptSession`].
fn kept_text(v: &Value) -> Option<&str> {
    v.as_str().and_then(|s| s.strip_prefix(KEPT))
}
