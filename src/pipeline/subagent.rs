//! Which call of its parent started a Claude Code subagent.
//!
//! What: a subagent's own log (`<project>/<session>/subagents/agent-<id>.jsonl`)
//! is read as a session of its own whose [`Parent`] names the parent
//! session (the `sessionId` its events carry); [`link`] adds the parent's
//! `Agent`/`Task` call that started it, from the parent's log beside the
//! folder (`<project>/<session>.jsonl`): the tool result whose
//! `toolUseResult.agentId` is the subagent's id answers that call.
//!
//! Why here: the answer is in another file, and adapters see one file's JSON
//! values only; the pipeline reads files.
//!
//! Invariants: a parent log that is missing, unreadable or silent leaves the
//! call unknown (`None`), never an error: the subagent's own log is whole
//! without it. Only lines holding the agent's id are parsed.

use crate::formats::claude_code::SUBAGENT_ID_PREFIX;
use crate::model::{Parent, Session};
use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The folder Claude Code keeps a session's subagent logs in.
const SUBAGENTS_DIR: &str = "subagents";

/// Fills in the parent's call of a subagent's session when its parent's log says.
pub(super) fn link(session: &mut Session) {
    let Some(parent) = session.parent.as_mut() else { return };
    if parent.call_id.is_some() {
        return;
    }
    let Some(agent) = session.id.strip_prefix(SUBAGENT_ID_PREFIX) else { return };
    let Some(log) = parent_log(Path::new(&session.source.path), parent) else { return };
    parent.call_id = starting_call(&log, agent);
}

/// The parent's log of a subagent log at `path`: `<project>/<session>.jsonl`
/// beside the `<session>/subagents/` folder it sits in (at any depth below it).
fn parent_log(path: &Path, parent: &Parent) -> Option<PathBuf> {
    let subagents = path.ancestors().find(|a| a.file_name().is_some_and(|n| n == SUBAGENTS_DIR))?;
    let session_dir = subagents.parent()?;
    let log = session_dir.parent()?.join(format!("{}.jsonl", parent.session_id));
    log.is_file().then_some(log)
}

/// The id of the call whose tool result names `agent` as its subagent.
fn starting_call(log: &Path, agent: &str) -> Option<String> {
    let file = std::fs::File::open(log).ok()?;
    for line in std::io::BufReader::new(file).split(b'\n') {
        let line = line.ok()?;
        if !contains(&line, agent.as_bytes()) {
            continue;
        }
        let Ok(event) = serde_json::from_slice::<Value>(&line) else { continue };
        if event.pointer("/toolUseResult/agentId").and_then(Value::as_str) != Some(agent) {
            continue;
        }
        let blocks = event.pointer("/message/content").and_then(Value::as_array)?;
        return blocks.iter().find_map(|b| {
            (b.get("type")?.as_str()? == "tool_result")
                .then(|| b.get("tool_use_id")?.as_str().map(str::to_string))?
        });
    }
    None
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_log_sits_beside_the_session_folder() {
        let parent = Parent { session_id: "S".into(), call_id: None };
        let dir = std::env::temp_dir().join(format!("compactor-subagent-{}", std::process::id()));
        let sub = dir.join("proj/S/subagents/deep");
        std::fs::create_dir_all(&sub).unwrap();
        let log = dir.join("proj/S.jsonl");
        let result = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_9"}]},"toolUseResult":{"agentId":"a0123456789abcdef"}}"#;
        std::fs::write(&log, format!("{{\"x\":1}}\n{result}\n")).unwrap();
        let found = parent_log(&sub.join("agent-a0123456789abcdef.jsonl"), &parent);
        assert_eq!(found.as_deref(), Some(log.as_path()));
        assert_eq!(starting_call(&log, "a0123456789abcdef").as_deref(), Some("toolu_9"));
        assert_eq!(starting_call(&log, "a0000000000000000"), None, "another agent");
        assert_eq!(parent_log(&dir.join("proj/x.jsonl"), &parent), None, "not in subagents/");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
