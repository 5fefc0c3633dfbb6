//! The optional summarizer model (SPEC 6): a [`SummaryWriter`] that asks an
//! OpenAI-compatible endpoint ([`http`]) or a command ([`command`]) for the
//! summary body, through a content-addressed cache ([`cache`]).
//!
//! ## What it does
//! Serializes the middle ([`prompt`]), splits it into chunks when it does not
//! fit the summarizer's window (each chunk updates the summary of the ones
//! before it, as a later compaction updates an earlier summary), and sends one
//! request per chunk, at most `concurrency` at a time over the whole run. Each
//! answer is looked up in and written to the cache by the request's hash.
//!
//! ## Why
//! The policy stays pure: it holds this as a trait object and gets back a
//! body or a [`Fallback`]; the frame, the appendices and the budget check are
//! the policy's. Temperature 0 and the cache make a run repeatable.
//!
//! ## Invariants
//! - A failed chunk fails the whole body: the policy falls back.
//! - The tokens reported are the summarizer's own (the response's `usage`,
//!   else our count), cached answers included, so reruns report the same.

pub mod cache;
pub mod command;
pub mod http;
pub mod prompt;

use crate::policy::summary_writer::{Body, BodyRequest, Failure, Fallback, Spent, SummaryWriter};
use crate::tokens::Meter;
use cache::{Cache, Entry};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Requests in flight at once by default, over the whole run.
pub const DEFAULT_CONCURRENCY: usize = 2;
/// The summarizer's context window by default, in tokens.
pub const DEFAULT_WINDOW_TOKENS: u64 = 32_768;
/// Seconds a request (or a command) may take by default.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// Tokens kept free in each request for the chat template and the server's count.
const WINDOW_MARGIN_TOKENS: u64 = 512;
/// A middle that needs more chunks than this falls back (`too_large`).
pub const MAX_CHUNKS: usize = 16;

/// What answers a request.
#[derive(Debug)]
pub enum Backend {
    Http(http::Client),
    Command(command::Runner),
}

/// A summarizer, resolved once per run from the command line.
#[derive(Debug)]
pub struct Summarizer {
    pub backend: Backend,
    pub model: String,
    /// Its context window, in tokens: a prompt over it is sent in chunks.
    pub window: u64,
    pub temperature: f64,
    pub cache: Option<Cache>,
    /// Never call out: a cache miss falls back.
    pub cache_only: bool,
    pub slots: Slots,
}

/// A model's answer: the body and, when the response says, its usage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// A counting semaphore: at most `max` requests in flight.
#[derive(Debug)]
pub struct Slots {
    max: usize,
    used: Mutex<usize>,
    freed: Condvar,
}

/// One slot, given back when dropped.
pub struct Slot<'a>(&'a Slots);

impl Slots {
    pub fn new(max: usize) -> Slots {
        Slots { max: max.max(1), used: Mutex::new(0), freed: Condvar::new() }
    }

    /// Waits for a free slot.
    pub fn acquire(&self) -> Slot<'_> {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        while *used >= self.max {
            used = self.freed.wait(used).unwrap_or_else(PoisonError::into_inner);
        }
        *used += 1;
        Slot(self)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut used = self.0.used.lock().unwrap_or_else(PoisonError::into_inner);
        *used = used.saturating_sub(1);
        self.0.freed.notify_one();
    }
}

impl Summarizer {
    /// What the cache key names besides the request: the kind of endpoint,
    /// or the command line (the base URL and the key are not part of it).
    fn identity(&self) -> String {
        match &self.backend {
            Backend::Http(_) => "chat-completions".to_string(),
            Backend::Command(r) => format!("command:{}", r.command()),
        }
    }

    /// The answer to one request body: from the cache, or asked and cached.
    fn answer(&self, body: &[u8], user: &str, meter: &Meter) -> Result<(Entry, bool), Fallback> {
        let key = self.cache.as_ref().map(|_| Cache::key(&self.identity(), body));
        if let (Some(cache), Some(key)) = (&self.cache, &key)
            && let Some(entry) = cache.get(key)
        {
            return Ok((entry, true));
        }
        if self.cache_only {
            return Err(Fallback::CacheMiss);
        }
        let answer = match &self.backend {
            Backend::Http(client) => client.send(body, &self.slots)?,
            Backend::Command(runner) => runner.send(body, &self.slots)?,
        };
        let body_text = crate::policy::summary_writer::clean_body(&answer.text);
        let entry = Entry {
            prompt_tokens: answer
                .prompt_tokens
                .unwrap_or_else(|| meter.text(prompt::SYSTEM_PROMPT) + meter.text(user)),
            completion_tokens: answer.completion_tokens.unwrap_or_else(|| meter.text(&answer.text)),
            body: body_text,
        };
        if let (Some(cache), Some(key)) = (&self.cache, &key)
            && !entry.body.is_empty()
        {
            // A cache that cannot be written costs a request next time, nothing more.
            let _ = cache.put(key, &entry);
        }
        Ok((entry, false))
    }

    /// The turns split into chunks that each fit the window with the previous
    /// summary, or `None` when one turn alone does not.
    fn chunks<'b>(
        &self,
        blocks: &'b [String],
        previous: Option<&str>,
        budget: u64,
        meter: &Meter,
    ) -> Option<Vec<&'b [String]>> {
        // Each chunk's request holds the instructions, the summary so far (the
        // previous one, then the last chunk's, at most `budget`), the turns
        // and room for the answer.
        let previous_tokens = previous.map_or(0, |p| meter.text(p)).max(budget);
        let fixed = meter.text(prompt::SYSTEM_PROMPT)
            + meter.text(&prompt::user_message(None, &[], budget))
            + previous_tokens
            + budget
            + WINDOW_MARGIN_TOKENS;
        let room = self.window.checked_sub(fixed).filter(|r| *r > 0)?;
        // A token is at least one byte (under every counter): turns whose
        // bytes fit need no count.
        let bytes: u64 = blocks.iter().map(|b| b.len() as u64 + 1).sum();
        if bytes <= room {
            return Some(vec![blocks]);
        }
        let mut out = Vec::new();
        let (mut start, mut used) = (0usize, 0u64);
        for (i, b) in blocks.iter().enumerate() {
            // A block costs its tokens and the blank line that joins it.
            let t = meter.text(b) + 1;
            if t > room {
                return None;
            }
            if used + t > room {
                out.push(&blocks[start..i]);
                (start, used) = (i, 0);
            }
            used += t;
        }
        if start < blocks.len() || out.is_empty() {
            out.push(&blocks[start..]);
        }
        Some(out)
    }
}

impl SummaryWriter for Summarizer {
    fn write(&self, request: &BodyRequest<'_>, meter: &Meter) -> Result<Body, Failure> {
        let serialized = prompt::serialize(request.middle);
        let budget = request.budget_tokens;
        let chunks = self
            .chunks(&serialized.blocks, serialized.previous.as_deref(), budget, meter)
            .filter(|c| c.len() <= MAX_CHUNKS)
            .ok_or(Fallback::TooLarge)?;
        let mut spent = Spent::default();
        let mut cached = true;
        let mut summary = serialized.previous;
        for turns in chunks {
            let user = prompt::user_message(summary.as_deref(), turns, budget);
            let body = prompt::request_body(&self.model, &user, budget, self.temperature);
            let (entry, hit) =
                self.answer(&body, &user, meter).map_err(|reason| Failure { reason, spent })?;
            spent.calls += u64::from(!hit);
            spent.prompt_tokens += entry.prompt_tokens;
            spent.completion_tokens += entry.completion_tokens;
            cached &= hit;
            if entry.body.is_empty() {
                return Err(Failure { reason: Fallback::Empty, spent });
            }
            summary = Some(entry.body);
        }
        // `chunks` gives at least one chunk, so a summary was written; were
        // there none, that is an empty answer, not an empty summary.
        let Some(text) = summary else { return Err(Failure { reason: Fallback::Empty, spent }) };
        Ok(Body { text, cached, spent })
    }
}

/// How long a request may take.
pub fn timeout(secs: u64) -> Duration {
    Duration::from_secs(secs.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn summarizer(window: u64) -> Summarizer {
        Summarizer {
            backend: Backend::Command(command::Runner::new("cat".into(), timeout(1))),
            model: "m".into(),
            window,
            temperature: 0.0,
            cache: None,
            cache_only: false,
            slots: Slots::new(1),
        }
    }

    #[test]
    fn turns_are_chunked_to_fit_the_window_in_order() {
        let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
        let blocks: Vec<String> =
            (0..40).map(|i| format!("[{i}] user\n{}", "word ".repeat(200))).collect();
        let one = summarizer(1_000_000).chunks(&blocks, None, 500, &meter).unwrap();
        assert_eq!(one, vec![&blocks[..]]);
        let window = 8_000;
        let many = summarizer(window).chunks(&blocks, None, 500, &meter).unwrap();
        assert!(many.len() > 1);
        assert_eq!(many.concat(), blocks, "every turn once, in order");
        let fixed =
            meter.text(prompt::SYSTEM_PROMPT) + meter.text(&prompt::user_message(None, &[], 500));
        for c in &many {
            let turns: u64 = c.iter().map(|b| meter.text(b) + 1).sum();
            assert!(fixed + 500 + 500 + WINDOW_MARGIN_TOKENS + turns <= window, "{turns}");
        }
        // One turn bigger than a chunk can hold: no plan.
        let big = vec!["word ".repeat(20_000)];
        assert_eq!(summarizer(window).chunks(&big, None, 500, &meter), None);
        assert_eq!(summarizer(100).chunks(&blocks, None, 500, &meter), None, "no room at all");
    }

    #[test]
    fn slots_bound_the_holders() {
        let slots = Arc::new(Slots::new(2));
        let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let workers: Vec<_> = (0..6)
            .map(|_| {
                let (slots, now, peak) = (slots.clone(), now.clone(), peak.clone());
                std::thread::spawn(move || {
                    let _slot = slots.acquire();
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(n, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    now.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        workers.into_iter().for_each(|w| w.join().unwrap());
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }
}
