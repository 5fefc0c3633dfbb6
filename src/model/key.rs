//! A message's key: a 128-bit hash of what a prompt cache compares.
//!
//! Replay's shared-prefix test (SPEC 8) asks whether a request starts with the
//! messages of the one before; equal keys stand for equal messages. The key
//! lives here, below both `policy` (whose `Prepared` computes an input's keys
//! once) and `replay` (which keys the messages a compaction writes).

use crate::model::{Message, Part};

/// A message's identity for the shared-prefix test: equal messages, equal keys.
pub(crate) fn message_key(m: &Message) -> u128 {
    let mut h = crate::hash::Digest::new();
    h.update(m.role.as_str().as_bytes());
    for p in m.content.parts.iter() {
        h.update(&[0xff]);
        if let Some(t) = p.text_str() {
            h.update(t.as_bytes());
        } else if let Part::Image { info, .. } = p {
            h.update(&info.byte_len.to_le_bytes());
        }
    }
    for c in m.tool_calls.iter() {
        h.update(c.id.as_bytes());
        h.update(c.arguments.as_bytes());
    }
    if let Some(id) = &m.tool_call_id {
        h.update(id.as_bytes());
    }
    h.finish128()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, ToolCall};
    use std::sync::Arc;

    #[test]
    fn equal_messages_have_equal_keys_and_each_field_tells_them_apart() {
        let base = Message::text(Role::Assistant, "run the tests");
        assert_eq!(message_key(&base), message_key(&base.clone()));
        let other_role = Message::text(Role::User, "run the tests");
        let other_text = Message::text(Role::Assistant, "run the test");
        let mut with_call = base.clone();
        with_call.tool_calls = Arc::new(vec![ToolCall {
            id: "c1".into(),
            arguments: "{}".into(),
            ..ToolCall::default()
        }]);
        let mut other_call = with_call.clone();
        other_call.tool_calls_mut()[0].arguments = "{\"a\":1}".into();
        let mut result = Message::text(Role::Tool, "ok");
        result.tool_call_id = Some("c1".into());
        let mut other_result = result.clone();
        other_result.tool_call_id = Some("c2".into());
        let keys =
            [&base, &other_role, &other_text, &with_call, &other_call, &result, &other_result]
                .map(message_key);
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
