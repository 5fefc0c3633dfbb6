//! `stats --by day|project|model`: the sessions grouped by what their logs
//! say (`compactor::discover::facts`), one table row per group.
//!
//! `sessions` counts the agents' own sessions, `subagents` the subagents'
//! logs among them apart (Claude Code `subagents/agent-*.jsonl`).
//!
//! Groups are in key order (byte order: days oldest first), with sessions
//! whose log does not say last, under [`UNKNOWN`]; a TOTAL row closes the table.

use crate::cli::args::GroupBy;
use compactor::model::Session;
use compactor::report::stats::Stats;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;

/// The group of sessions whose log does not name the field.
pub const UNKNOWN: &str = "(unknown)";

/// The group of `session`; `None` stands for [`UNKNOWN`].
pub fn key(by: GroupBy, session: &Session) -> Option<String> {
    match by {
        GroupBy::Day => compactor::discover::facts::day(session),
        GroupBy::Project => compactor::discover::facts::project(session),
        GroupBy::Model => compactor::discover::facts::model(session),
    }
}

/// The groups, in table order: known keys sorted, then the unknown one.
fn ordered(groups: &BTreeMap<Option<String>, Stats>) -> Vec<(&str, &Stats)> {
    let known = groups.iter().filter_map(|(k, st)| Some((k.as_deref()?, st)));
    let unknown = groups.get(&None).map(|st| (UNKNOWN, st));
    known.chain(unknown).collect()
}

fn n(v: u64) -> String {
    compactor::figures::thousands(v)
}

/// The table: one row per group, then TOTAL.
pub fn print(
    out: &mut impl Write,
    by: GroupBy,
    groups: &BTreeMap<Option<String>, Stats>,
    total: &Stats,
) -> std::io::Result<()> {
    const COLUMNS: [&str; 7] = [
        "sessions",
        "subagents",
        "messages",
        "tokens",
        "tool calls",
        "provider calls",
        "provider tokens",
    ];
    let figures = |st: &Stats| {
        [
            st.sessions - st.subagent_sessions,
            st.subagent_sessions,
            st.messages,
            st.tokens,
            st.tool_calls,
            st.usage.calls,
            st.usage.provider_tokens,
        ]
        .map(n)
    };
    let mut rows: Vec<(String, [String; 7])> =
        ordered(groups).into_iter().map(|(k, st)| (k.to_string(), figures(st))).collect();
    rows.push(("TOTAL".to_string(), figures(total)));
    let key_width =
        rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0).max(by.name().len());
    let widths: Vec<usize> = (0..COLUMNS.len())
        .map(|c| rows.iter().map(|(_, f)| f[c].len()).max().unwrap_or(0).max(COLUMNS[c].len()))
        .collect();
    let line = |key: &str, cells: &[&str]| {
        let mut s = format!("{key}{}", " ".repeat(key_width - key.chars().count()));
        for (c, cell) in cells.iter().enumerate() {
            s.push_str(&format!("  {cell:>w$}", w = widths[c]));
        }
        s
    };
    writeln!(out, "{}", line(by.name(), &COLUMNS))?;
    for (k, f) in &rows {
        let cells: Vec<&str> = f.iter().map(String::as_str).collect();
        writeln!(out, "{}", line(k, &cells))?;
    }
    Ok(())
}

/// The JSON document: `{"counter", "by", "groups": [{"key", "stats"}], "total"}`
/// (`key` is `"(unknown)"` for sessions whose log does not say).
pub fn json(
    counter: &str,
    by: GroupBy,
    groups: &BTreeMap<Option<String>, Stats>,
    total: &Stats,
) -> Value {
    let groups: Vec<Value> =
        ordered(groups).into_iter().map(|(k, st)| json!({"key": k, "stats": st})).collect();
    json!({"counter": counter, "by": by.name(), "groups": groups, "total": total})
}
