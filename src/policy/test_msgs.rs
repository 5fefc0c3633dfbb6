//! Message builders shared by the tests of the policy stages: chat turns,
//! assistant messages that only call tools, and tool results.

use crate::model::{Message, Role, ToolCall};

/// A user message of `text`.
pub(super) fn user(text: &str) -> Message {
    Message::text(Role::User, text)
}

/// An assistant message of `text`.
pub(super) fn asst(text: &str) -> Message {
    Message::text(Role::Assistant, text)
}

/// An assistant message with no content that calls `name` with the JSON
/// arguments `args`, as call `id`.
pub(super) fn call(id: &str, name: &str, args: &str) -> Message {
    calling([tool_call(id, name, args)])
}

/// An assistant message with no content that makes one `Bash` call per id
/// (a parallel group), each running `cargo test --package <id>`.
pub(super) fn calls(ids: &[&str]) -> Message {
    calling(
        ids.iter().map(|id| {
            tool_call(id, "Bash", &format!(r#"{{"command":"cargo test --package {id}"}}"#))
        }),
    )
}

/// The tool message answering call `id` with `text`.
pub(super) fn result(id: &str, text: &str) -> Message {
    let mut m = Message::text(Role::Tool, text);
    m.tool_call_id = Some(id.into());
    m
}

fn calling(calls: impl IntoIterator<Item = ToolCall>) -> Message {
    let mut m = Message::text(Role::Assistant, "");
    m.content.parts_mut().clear();
    m.tool_calls_mut().extend(calls);
    m
}

fn tool_call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: args.into(), ..Default::default() }
}
