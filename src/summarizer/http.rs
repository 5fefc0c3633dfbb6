//! `--summarizer URL`: one Chat Completions request over plain HTTP.
//!
//! ## What it does
//! POSTs the request body to `URL/chat/completions` (the key, when given, as
//! `Authorization: Bearer`), within a timeout, retrying a 429 or a 5xx up to
//! [`RETRIES`] times with a doubling backoff (a server's `Retry-After` when it
//! asks for at most [`MAX_RETRY_AFTER_SECS`]), and reads
//! `choices[0].message.content` and `usage` from the answer.
//!
//! ## Why
//! vLLM, the llama.cpp server, Ollama and LM Studio all serve this endpoint on
//! localhost, where plain HTTP is what they speak: no TLS stack is built in.
//! Every failure maps to one [`Fallback`] reason, so the run counts it.
//!
//! ## Invariants
//! - The key is sent only in the `Authorization` header; no error, reason or
//!   `Debug` output holds it ([`Key`]).

use super::{Answer, Slots};
use crate::model::part::content_text;
use crate::policy::summary_writer::Fallback;
use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// Retries of a request answered 429 or 5xx.
pub const RETRIES: u32 = 3;
/// The first backoff; each retry doubles it.
const BACKOFF_START_MS: u64 = 250;
/// A `Retry-After` of at most this many seconds is honoured; a longer one
/// gives the usual backoff (a batch run does not wait minutes per session).
pub const MAX_RETRY_AFTER_SECS: u64 = 10;
/// The path appended to the base URL.
const ENDPOINT: &str = "/chat/completions";

/// An API key: kept out of every `Debug` and message.
#[derive(Clone)]
pub struct Key(String);

impl Key {
    pub fn new(key: String) -> Key {
        Key(key)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(***)")
    }
}

/// A Chat Completions endpoint.
pub struct Client {
    agent: ureq::Agent,
    url: String,
    key: Option<Key>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client").field("url", &self.url).field("key", &self.key).finish()
    }
}

impl Client {
    /// A client of the base URL `base` (`http://HOST:PORT/v1`).
    pub fn new(base: &str, key: Option<Key>, timeout: Duration) -> Client {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(concat!("compactor/", env!("CARGO_PKG_VERSION")))
            .build();
        let url = format!("{}{ENDPOINT}", base.trim_end_matches('/'));
        Client { agent: config.into(), url, key }
    }

    /// Sends `body`, retrying as the module says; one slot of `slots` is held
    /// during each attempt, none while waiting to retry.
    pub fn send(&self, body: &[u8], slots: &Slots) -> Result<Answer, Fallback> {
        let mut backoff = Duration::from_millis(BACKOFF_START_MS);
        let mut attempt = 0;
        loop {
            let (status, retry_after, text) = {
                let _slot = slots.acquire();
                self.attempt(body)?
            };
            if status == 200 {
                return parse_answer(&text);
            }
            let retryable = status == 429 || (500..600).contains(&status);
            if !retryable || attempt >= RETRIES {
                return Err(Fallback::Http(status));
            }
            attempt += 1;
            let wait = retry_after.filter(|s| *s <= MAX_RETRY_AFTER_SECS).map(Duration::from_secs);
            std::thread::sleep(wait.unwrap_or(backoff));
            backoff *= 2;
        }
    }

    /// One POST: the status, the `Retry-After` seconds, the body.
    fn attempt(&self, body: &[u8]) -> Result<(u16, Option<u64>, String), Fallback> {
        let mut request = self.agent.post(&self.url).header("Content-Type", "application/json");
        if let Some(Key(key)) = &self.key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request.send(body).map_err(reason)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let text = response.body_mut().read_to_string().map_err(reason)?;
        Ok((status, retry_after, text))
    }
}

/// The fallback reason of a transport error.
fn reason(e: ureq::Error) -> Fallback {
    match e {
        ureq::Error::Timeout(_) => Fallback::Timeout,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => Fallback::Timeout,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => Fallback::Timeout,
        ureq::Error::StatusCode(status) => Fallback::Http(status),
        ureq::Error::Protocol(_) | ureq::Error::BodyExceedsLimit(_) => Fallback::BadJson,
        _ => Fallback::Connection,
    }
}

/// The content and usage of a Chat Completions answer.
fn parse_answer(text: &str) -> Result<Answer, Fallback> {
    let v: Value = serde_json::from_str(text).map_err(|_| Fallback::BadJson)?;
    let message = v.pointer("/choices/0/message").ok_or(Fallback::BadJson)?;
    // Content as parts: their texts, joined.
    let content = content_text(message.get("content"), "").ok_or(Fallback::BadJson)?;
    let usage = v.get("usage");
    let count = |k: &str| usage.and_then(|u| u.get(k)).and_then(Value::as_u64);
    Ok(Answer {
        text: content,
        prompt_tokens: count("prompt_tokens"),
        completion_tokens: count("completion_tokens"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_or_refused_with_a_reason() {
        let ok = r###"{"choices":[{"message":{"role":"assistant","content":"## Goal\nx"}}],
                     "usage":{"prompt_tokens":12,"completion_tokens":3}}"###;
        let a = parse_answer(ok).unwrap();
        assert_eq!(
            (a.text.as_str(), a.prompt_tokens, a.completion_tokens),
            ("## Goal\nx", Some(12), Some(3))
        );
        let parts =
            r#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"text":"b"}]}}]}"#;
        assert_eq!(parse_answer(parts).unwrap().text, "ab");
        assert_eq!(parse_answer("not json").unwrap_err(), Fallback::BadJson);
        assert_eq!(parse_answer(r#"{"choices":[]}"#).unwrap_err(), Fallback::BadJson);
        assert_eq!(
            parse_answer(r#"{"choices":[{"message":{"content":5}}]}"#).unwrap_err(),
            Fallback::BadJson
        );
    }

    #[test]
    fn the_key_never_shows_in_debug() {
        let c = Client::new(
            "http://127.0.0.1:1/v1/",
            Some(Key::new("sk-secret".into())),
            Duration::from_secs(1),
        );
        let shown = format!("{c:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("http://127.0.0.1:1/v1/chat/completions"), "{shown}");
    }
}
