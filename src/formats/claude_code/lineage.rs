//! Our compaction written as Claude Code writes its own, appended to the log
//! it compacts.
//!
//! What: the events that follow the input's last event: a `compact_boundary`
//! (`parentUuid: null`, `logicalParentUuid` = the last event's uuid,
//! `compactMetadata: {trigger, preTokens, preservedSegment}`), then our
//! compacted context re-linked after it: the head, the message holding our
//! summary marked `isCompactSummary` (and `isVisibleInTranscriptOnly`, as
//! Claude Code marks its own), the kept tail.
//!
//! Why: Claude Code goes on from a compaction in the same file, with the same
//! session id (research.md B.1: `createCompactBoundaryMessage`,
//! src/utils/messages.ts, and `annotateBoundaryWithPreservedSegment`,
//! src/services/compact/compact.ts, Claude Code 2.1.88 as extracted at
//! Jayleonc/claude-code-source-code@83fba929f14a, read 2026-12-04). Written
//! the same way, every input event stays, the agent resumes from our
//! compaction, and our reader finds it as a recorded compaction.
//!
//! Example: a log `u1 a1 r1 a2` compacted to head `u1`, summary `S`, tail
//! `a2` gets `B(logicalParent a2) u1' S' a2'`, each copy with a fresh uuid
//! whose parent is the event before it (a tool result's, its call's copy),
//! and `preservedSegment {headUuid: a2', anchorUuid: S', tailUuid: a2'}`.
//!
//! Invariants: the copies' uuids are derived from the boundary's and their
//! source's (no clock, no randomness); every copy's parent is an earlier
//! event of the appended chain, so Claude Code's walk from the last event
//! reaches the boundary and its `preservedSegment` relink (tail back to
//! head) never breaks; a copy keeps its `message.id` and `requestId`, so a
//! tool that counts provider calls once per id (ccusage) counts none twice.
//! A segment is written only when messages follow what its anchor is:
//! after the summary (the suffix Claude Code's reactive compaction keeps),
//! or, with no summary, the whole context after the boundary (the prefix its
//! partial compaction keeps, anchored at the boundary).

use super::encode::{encode_events, format_uuid};
use super::*;
use crate::model::{Continuation, Message, Session};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Hashed with the last input event's uuid and the continuation id into the
/// boundary's uuid, and with the boundary's and a source uuid into a copy's.
const LINEAGE_NAMESPACE: &str = "compactor/claude-code/lineage/v1";
/// The `content` Claude Code gives its boundary.
const BOUNDARY_CONTENT: &str = "Conversation compacted";
/// Keys a copy of a message does not carry: the UI's full copy of a tool
/// result (still in the input's event) and the marks of an agent's summary.
const NOT_COPIED: &[&str] = &["toolUseResult", "isCompactSummary", "isVisibleInTranscriptOnly"];

/// The events that record compaction `c` of `original` after the log it was
/// read from.
pub fn lineage_events(original: &Session, c: &Continuation<'_>) -> Vec<Value> {
    let last = last_event(original);
    let last_uuid = last.and_then(|e| e.get("uuid")).and_then(Value::as_str);
    let boundary_uuid = uuid_of_text(&format!("{}\n{}", last_uuid.unwrap_or(""), c.id));
    let part = |msgs: &[Message]| {
        let copies: Vec<Message> = msgs.iter().map(copy).collect();
        let mut mini = c.compacted.with_messages(copies);
        mini.trailing.clear();
        encode_events(&mini, true)
    };
    let head = part(c.head());
    let summary = c.summary().map(|m| part(std::slice::from_ref(m))).unwrap_or_default();
    let tail = part(c.tail());
    let (n_head, n_summary) = (head.len(), summary.len());
    let mut events: Vec<Value> = head.into_iter().chain(summary).chain(tail).collect();
    relink(&mut events, &boundary_uuid);
    // A new event (our summary) has no envelope of its own: the log's.
    for ev in &mut events {
        if let (Value::Object(map), Some(last)) = (ev, last) {
            for k in COPIED_FIELDS.iter().chain(&["timestamp"]) {
                if let (false, Some(v)) = (map.contains_key(*k), last.get(*k)) {
                    map.insert((*k).to_string(), v.clone());
                }
            }
        }
    }
    for ev in &mut events[n_head..n_head + n_summary] {
        if let Value::Object(map) = ev {
            map.insert("isVisibleInTranscriptOnly".into(), Value::Bool(true));
            map.insert("isCompactSummary".into(), Value::Bool(true));
        }
    }
    let uuid_at = |i: usize| events.get(i).and_then(|e| e.get("uuid")).and_then(Value::as_str);
    let segment = match (c.summary_at, events.len()) {
        (Some(_), n) if n > n_head + n_summary && n_summary > 0 => {
            Some((uuid_at(n_head + n_summary), uuid_at(n_head + n_summary - 1), uuid_at(n - 1)))
        }
        (None, n) if n > 0 => Some((uuid_at(0), Some(boundary_uuid.as_str()), uuid_at(n - 1))),
        _ => None,
    };
    let mut metadata = Map::new();
    metadata.insert("trigger".into(), Value::from(c.trigger.name()));
    metadata.insert("preTokens".into(), Value::from(c.pre_tokens));
    if let Some((Some(head), Some(anchor), Some(tail))) = segment {
        let mut s = Map::new();
        s.insert("headUuid".into(), Value::from(head));
        s.insert("anchorUuid".into(), Value::from(anchor));
        s.insert("tailUuid".into(), Value::from(tail));
        metadata.insert("preservedSegment".into(), Value::Object(s));
    }
    let mut boundary = Map::new();
    boundary.insert("parentUuid".into(), Value::Null);
    boundary.insert("logicalParentUuid".into(), last_uuid.map_or(Value::Null, Value::from));
    // A subagent's boundary stays on its chain, as its events are.
    boundary.insert("isSidechain".into(), Value::Bool(original.parent.is_some()));
    if original.parent.is_some()
        && let Some(agent) = last.and_then(|e| e.get("agentId"))
    {
        boundary.insert("agentId".into(), agent.clone());
    }
    for k in COPIED_FIELDS {
        if let Some(v) = last.and_then(|e| e.get(*k)) {
            boundary.insert((*k).to_string(), v.clone());
        }
    }
    boundary.insert("type".into(), Value::from("system"));
    boundary.insert("subtype".into(), Value::from("compact_boundary"));
    boundary.insert("content".into(), Value::from(BOUNDARY_CONTENT));
    boundary.insert("isMeta".into(), Value::Bool(false));
    if let Some(ts) = last.and_then(|e| e.get("timestamp")) {
        boundary.insert("timestamp".into(), ts.clone());
    }
    boundary.insert("uuid".into(), Value::from(boundary_uuid));
    boundary.insert("level".into(), Value::from("info"));
    boundary.insert("compactMetadata".into(), Value::Object(metadata));
    std::iter::once(Value::Object(boundary)).chain(events).collect()
}

/// A uuid derived from `text` under [`LINEAGE_NAMESPACE`].
fn uuid_of_text(text: &str) -> String {
    format_uuid(crate::hash::of128(format!("{LINEAGE_NAMESPACE}\n{text}").as_bytes()))
}

/// A message to write again after the boundary: nothing attached (those
/// records are in the input's part of the file) and none of [`NOT_COPIED`].
fn copy(m: &Message) -> Message {
    let mut m = m.clone();
    m.attached = Default::default();
    if NOT_COPIED.iter().any(|k| m.extra.contains_key(*k)) {
        m.extra_mut().retain(|k, _| !NOT_COPIED.contains(&k.as_str()));
    }
    m
}

/// Gives each copied event a fresh uuid and hangs it after the event before
/// it (a tool result after its call's copy, where that was written), the
/// first after the boundary.
fn relink(events: &mut [Value], boundary: &str) {
    let mut renamed: HashMap<String, String> = HashMap::new();
    let mut previous = boundary.to_string();
    for ev in events.iter_mut() {
        let Value::Object(map) = ev else { continue };
        let old = map.get("uuid").and_then(Value::as_str).map(str::to_string);
        let parent = match map.get("parentUuid").and_then(Value::as_str) {
            Some(p) => renamed.get(p).cloned().unwrap_or_else(|| previous.clone()),
            None => previous.clone(),
        };
        map.insert("parentUuid".into(), Value::String(parent));
        if let Some(Value::String(s)) = map.get_mut("sourceToolAssistantUUID")
            && let Some(new) = renamed.get(s.as_str())
        {
            *s = new.clone();
        }
        let Some(old) = old else { continue };
        let new = uuid_of_text(&format!("{boundary}\n{old}"));
        map.insert("uuid".into(), Value::String(new.clone()));
        renamed.insert(old, new.clone());
        previous = new;
    }
}

/// The last main-chain event of the log `session` was read from that has a
/// uuid (what `logicalParentUuid` names, as Claude Code names the last event
/// before its own boundary).
fn last_event(session: &Session) -> Option<&Map<String, Value>> {
    let chained = |v: &&Map<String, Value>| v.get("uuid").is_some_and(Value::is_string);
    // A subagent's own log is all sidechain: its chain.
    let subagent = session.parent.is_some();
    let main = |v: &&Map<String, Value>| subagent || !is_sidechain(v);
    if let Some(e) = last_record(&session.trailing, subagent) {
        return Some(e);
    }
    for m in session.messages.iter().rev() {
        let later = m
            .extra
            .get(EVENTS_KEY)
            .and_then(Value::as_array)
            .and_then(|entries| entries.iter().rev().find_map(|e| e.get("event")?.as_object()));
        if let Some(e) = later.filter(chained) {
            return Some(e);
        }
        if chained(&&*m.extra) && main(&&*m.extra) {
            return Some(&m.extra);
        }
        if let Some(e) = last_record(&m.attached, subagent) {
            return Some(e);
        }
    }
    None
}

/// The last record of `records` on the chain (the main one, or a subagent
/// log's) that has a uuid.
fn last_record(records: &[Value], subagent: bool) -> Option<&Map<String, Value>> {
    records
        .iter()
        .rev()
        .filter_map(Value::as_object)
        .find(|v| v.get("uuid").is_some_and(Value::is_string) && (subagent || !is_sidechain(v)))
}
