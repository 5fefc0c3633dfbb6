//! Part alignment: which event of a changed assistant message each of its
//! current parts and calls goes back to, by kind, in order (a longest common
//! subsequence of the remembered and the current block kinds, greedy past
//! [`MAX_ALIGN_CELLS`]).

use super::*;
use crate::formats::openai::encode_part;
use crate::model::{Message, ToolCall};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// A layout entry read back from [`EVENTS_KEY`].
pub(super) struct Layout<'a> {
    pub(super) blocks: Vec<Desc>,
    pub(super) results_before: usize,
    pub(super) records_before: usize,
    pub(super) envelope: &'a Map<String, Value>,
}

/// The layout of an assistant message, or `None` when it has none (or a broken one).
pub(super) fn layout_of(m: &Message) -> Option<Vec<Layout<'_>>> {
    let entries = m.extra.get(EVENTS_KEY)?.as_array()?;
    if entries.is_empty() {
        return None;
    }
    entries
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let e = e.as_object()?;
            let blocks = e
                .get("blocks")?
                .as_array()?
                .iter()
                .map(Desc::from_value)
                .collect::<Option<Vec<_>>>()?;
            let count = |key: &str| {
                e.get(key)
                    .and_then(Value::as_u64)
                    .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
            };
            let envelope = if k == 0 { &m.extra } else { e.get("event")?.as_object()? };
            Some(Layout {
                blocks,
                results_before: count("resultsBefore"),
                records_before: count("recordsBefore"),
                envelope,
            })
        })
        .collect()
}

/// Matches `b` (current part kinds) to `a` (remembered kinds) in order, keeping
/// as many as possible; on ties a current part is left unmatched (it is then an
/// addition, such as a prepended summary). Returns, per `b`, the matched `a` index.
pub(super) fn align(a: &[&str], b: &[&str]) -> Vec<Option<usize>> {
    let (n, m) = (a.len(), b.len());
    let mut out = vec![None; m];
    if n.saturating_mul(m) > MAX_ALIGN_CELLS {
        let mut i = 0;
        for (j, kind) in b.iter().enumerate() {
            if let Some(k) = a[i.min(n)..].iter().position(|x| x == kind) {
                out[j] = Some(i + k);
                i += k + 1;
            }
        }
        return out;
    }
    // lcs[i * (m + 1) + j] = LCS length of a[i..] and b[j..].
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if a[i] == b[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        let here = lcs[i * w + j];
        if lcs[i * w + j + 1] == here {
            j += 1;
        } else if a[i] == b[j] && lcs[(i + 1) * w + j + 1] + 1 == here {
            out[j] = Some(i);
            i += 1;
            j += 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Distributes an assistant message's current parts and calls over its events.
pub(super) fn assign(layout: &[Layout<'_>], m: &Message) -> Vec<Vec<Value>> {
    let n = layout.len();
    let mut out: Vec<Vec<Value>> = vec![Vec::new(); n];
    if n == 0 {
        return out;
    }
    let parts = &m.content.parts;
    let calls = &m.tool_calls;
    // Remembered part kinds, with their event, in order.
    let remembered: Vec<(usize, &str)> = layout
        .iter()
        .enumerate()
        .flat_map(|(e, l)| {
            l.blocks.iter().filter_map(move |d| match d {
                Desc::Part(kind) => Some((e, kind.as_str())),
                Desc::Call(_) => None,
            })
        })
        .collect();
    let kinds: Vec<&str> = parts.iter().map(part_kind).collect();
    let wanted: Vec<&str> = remembered.iter().map(|r| r.1).collect();
    let matched = align(&wanted, &kinds);
    // Each part's event: its match's, else the next matched part's, else the
    // previous one's, else the first event that held parts.
    let fallback = remembered.first().map_or(0, |r| r.0);
    let mut event_of = vec![None; parts.len()];
    let mut next = None;
    for j in (0..parts.len()).rev() {
        if let Some(k) = matched[j] {
            next = Some(remembered[k].0);
        }
        event_of[j] = next;
    }
    let mut prev = None;
    for j in 0..parts.len() {
        if let Some(k) = matched[j] {
            prev = Some(remembered[k].0);
        }
        event_of[j] = event_of[j].or(prev);
    }
    let event_of: Vec<usize> = event_of.into_iter().map(|e| e.unwrap_or(fallback)).collect();
    // Each call's event by id; unknown ids go to the last event that held calls.
    let mut call_event: HashMap<&str, usize> = HashMap::new();
    for (e, l) in layout.iter().enumerate() {
        for d in &l.blocks {
            if let Desc::Call(id) = d {
                call_event.entry(id.as_str()).or_insert(e);
            }
        }
    }
    let last_call_event = call_event.values().copied().max().unwrap_or(n - 1);
    let calls_of: Vec<usize> = calls
        .iter()
        .map(|c| call_event.get(c.id.as_str()).copied().unwrap_or(last_call_event))
        .collect();
    // Parts and calls per event, in current order.
    let mut parts_in: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, &e) in event_of.iter().enumerate() {
        parts_in[e].push(j);
    }
    let mut calls_in: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (c, &e) in calls_of.iter().enumerate() {
        calls_in[e].push(c);
    }
    let mut part_done = vec![false; parts.len()];
    let mut call_done = vec![false; calls.len()];
    let mut by_remembered = vec![None; remembered.len()];
    for (j, k) in matched.iter().enumerate() {
        if let Some(k) = k {
            by_remembered[*k] = Some(j);
        }
    }
    let mut k = 0;
    for (e, l) in layout.iter().enumerate() {
        // This event's parts in current order; `cursor` walks them.
        let mine = &parts_in[e];
        let mut cursor = 0;
        for d in &l.blocks {
            match d {
                Desc::Part(_) => {
                    if let Some(j) = by_remembered.get(k).copied().flatten() {
                        while cursor < mine.len() && mine[cursor] <= j {
                            let p = mine[cursor];
                            if !part_done[p] {
                                out[e].push(encode_part(&parts[p]));
                                part_done[p] = true;
                            }
                            cursor += 1;
                        }
                    }
                    k += 1;
                }
                Desc::Call(id) => {
                    let found =
                        calls_in[e].iter().copied().find(|&c| !call_done[c] && calls[c].id == *id);
                    if let Some(c) = found {
                        out[e].push(tool_use_block(&calls[c]));
                        call_done[c] = true;
                    }
                }
            }
        }
        for &p in mine {
            if !part_done[p] {
                out[e].push(encode_part(&parts[p]));
                part_done[p] = true;
            }
        }
        for &c in &calls_in[e] {
            if !call_done[c] {
                out[e].push(tool_use_block(&calls[c]));
                call_done[c] = true;
            }
        }
    }
    out
}

/// A `tool_use` block for a call.
pub(super) fn tool_use_block(c: &ToolCall) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), Value::String("tool_use".into()));
    b.insert("id".into(), Value::String(c.id.clone()));
    b.insert("name".into(), Value::String(c.name.clone()));
    let input = if c.arguments.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.clone()))
    };
    b.insert("input".into(), input);
    for (k, v) in &c.extra {
        if !b.contains_key(k) {
            b.insert(k.clone(), v.clone());
        }
    }
    Value::Object(b)
}
