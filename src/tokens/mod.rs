//! Token counting: exact BPE counts by default, the reference estimate on request.
//!
//! Counting is the runtime floor of the whole tool (its measures are in
//! `benches/RESULTS.md`), so this module does two things beyond
//! counting: it builds each tokenizer once per process, and it remembers the
//! counts of long texts by a 128-bit content hash so that a text seen twice
//! (before and after a stage, a system prompt shared by a thousand sessions) is
//! tokenized once; a long text it has not seen is counted line by line through
//! the same cache, cut only where the tokenizer cuts anyway (`tokens::lines`), since
//! new texts are often made of old lines. Counts are pure functions of the
//! text, so the cache can never change a result, only its cost.
//!
//! No policy decisions live here; `policy` asks, this module answers.

mod cache;
mod hermes;
#[cfg(test)]
mod joined;
mod lines;
mod piece;
mod ranks;
mod split;

use crate::model::{Message, Part, Session};
use cache::TokenCache;
use serde_json::Value;
use std::str::FromStr;

/// Tokens charged for one image, however large its payload (SPEC 4, reference value).
pub const DEFAULT_IMAGE_TOKENS: u64 = 1_500;

/// Framing tokens per message for BPE counters (role, separators), as in
/// OpenAI's published chat accounting.
pub const BPE_MESSAGE_OVERHEAD_TOKENS: u64 = 4;

/// Framing tokens per message under the reference estimate (its `+10`).
pub const HERMES_MESSAGE_OVERHEAD_TOKENS: u64 = 10;

/// Framing tokens per tool call (the `id`/`type`/`function` envelope) for BPE counters.
pub const BPE_TOOL_CALL_OVERHEAD_TOKENS: u64 = 8;

/// Characters of the Python repr envelope the reference estimate charges per
/// tool call: `{'id': '', 'type': 'function', 'function': {'name': '', 'arguments': ''}}`.
pub const HERMES_TOOL_CALL_ENVELOPE_CHARS: u64 = 71;

/// Tokens that prime the reply, charged once per request by BPE counters.
pub const BPE_REQUEST_OVERHEAD_TOKENS: u64 = 3;

/// Texts at least this long are counted line by line on a cache miss
/// ([`lines`]). Shorter ones seldom hold two lines worth a lookup each; on the
/// bench corpus 64 bytes did the same work and 1,024 more (benches/RESULTS.md,
/// 2026-12-05).
const LINED_MIN_BYTES: usize = 256;

/// Which counter to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterKind {
    /// `o200k_base` (GPT-4o and later): the default.
    O200k,
    /// `cl100k_base` (GPT-4, GPT-3.5).
    Cl100k,
    /// The reference agent's estimate, for comparison with its numbers.
    Hermes,
}

impl CounterKind {
    pub fn name(self) -> &'static str {
        match self {
            CounterKind::O200k => "o200k",
            CounterKind::Cl100k => "cl100k",
            CounterKind::Hermes => "hermes",
        }
    }
}

impl FromStr for CounterKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "o200k" | "o200k_base" => Ok(CounterKind::O200k),
            "cl100k" | "cl100k_base" => Ok(CounterKind::Cl100k),
            "hermes" => Ok(CounterKind::Hermes),
            other => Err(format!("unknown counter `{other}` (expected o200k, cl100k or hermes)")),
        }
    }
}

/// Which implementation counts BPE tokens. Both give identical counts (a test
/// proves it on the fixtures and the corpus); they differ only in speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokenizer {
    /// `bpe-openai`'s vocabularies, cut and counted by `split` and `piece`:
    /// faster than `tiktoken-rs` (see `benches/RESULTS.md`).
    BpeOpenai,
    /// `tiktoken-rs`, the port of OpenAI's own `tiktoken`: the reference.
    Tiktoken,
}

impl FromStr for Tokenizer {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "bpe-openai" => Ok(Tokenizer::BpeOpenai),
            "tiktoken" | "tiktoken-rs" => Ok(Tokenizer::Tiktoken),
            other => Err(format!("unknown tokenizer `{other}` (expected bpe-openai or tiktoken)")),
        }
    }
}

#[derive(Clone, Copy)]
enum Bpe {
    Fast(&'static split::Splitter),
    Reference(&'static tiktoken_rs::CoreBPE),
}

impl Bpe {
    fn count(self, text: &str) -> u64 {
        match self {
            Bpe::Fast(t) => t.count(text),
            Bpe::Reference(t) => t.count_ordinary(text) as u64,
        }
    }
}

/// Measures texts, messages and whole requests. One per process; cheap to share.
pub struct Meter {
    kind: CounterKind,
    bpe: Option<Bpe>,
    cache: TokenCache,
    /// `false` counts every text afresh (the benchmark floor, `compactor tokenize`).
    use_cache: bool,
    image_tokens: u64,
}

impl std::fmt::Debug for Meter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meter").field("kind", &self.kind).finish_non_exhaustive()
    }
}

/// The meter most tests count with: o200k, images at the default size.
#[cfg(test)]
pub(crate) fn o200k_meter() -> Meter {
    Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS)
}

impl Meter {
    /// Builds a meter on the fast tokenizer. The BPE vocabularies are embedded
    /// in the binary, so this never touches the network; building a vocabulary
    /// costs enough to do it once per process (benches/RESULTS.md, 2026-12-05).
    pub fn new(kind: CounterKind, image_tokens: u64) -> Meter {
        Meter::with_tokenizer(kind, Tokenizer::BpeOpenai, image_tokens)
    }

    /// Builds a meter on a chosen BPE implementation (ignored by `hermes`).
    pub fn with_tokenizer(kind: CounterKind, tokenizer: Tokenizer, image_tokens: u64) -> Meter {
        let bpe = match (kind, tokenizer) {
            (CounterKind::O200k, Tokenizer::BpeOpenai) => Some(Bpe::Fast(split::o200k())),
            (CounterKind::Cl100k, Tokenizer::BpeOpenai) => Some(Bpe::Fast(split::cl100k())),
            (CounterKind::O200k, Tokenizer::Tiktoken) => {
                Some(Bpe::Reference(tiktoken_rs::o200k_base_singleton()))
            }
            (CounterKind::Cl100k, Tokenizer::Tiktoken) => {
                Some(Bpe::Reference(tiktoken_rs::cl100k_base_singleton()))
            }
            (CounterKind::Hermes, _) => None,
        };
        Meter { kind, bpe, cache: TokenCache::new(), use_cache: true, image_tokens }
    }

    /// The same meter without its count cache: every text is tokenized each
    /// time it is measured. For measuring the tokenizer floor, and for a meter
    /// that lives in a static (the fuzz harnesses'), which must hold nothing
    /// computed from an input.
    pub fn without_cache(mut self) -> Meter {
        self.use_cache = false;
        self
    }

    /// Tokens of one text, counted now, without the cache.
    pub fn count_uncached(&self, text: &str) -> u64 {
        match self.bpe {
            None => hermes::estimate(text),
            Some(bpe) => bpe.count(text),
        }
    }

    pub fn kind(&self) -> CounterKind {
        self.kind
    }

    pub fn image_tokens(&self) -> u64 {
        self.image_tokens
    }

    /// Tokens of one text.
    pub fn text(&self, text: &str) -> u64 {
        match self.bpe {
            None => hermes::estimate(text),
            Some(bpe) => {
                if !self.use_cache {
                    return bpe.count(text);
                }
                if text.len() < LINED_MIN_BYTES {
                    return self.cached(bpe, text);
                }
                // A miss is counted line by line, each line through the cache:
                // the lines of a new text are often old (see `lines`).
                self.cache.get_or_insert(text, || {
                    lines::cut(text, cache::MIN_CACHED_BYTES)
                        .map(|piece| self.cached(bpe, piece))
                        .sum()
                })
            }
        }
    }

    /// Tokens of `text` through the cache, or counted directly when it is too
    /// short to be worth a lookup.
    fn cached(&self, bpe: Bpe, text: &str) -> u64 {
        if text.len() < cache::MIN_CACHED_BYTES {
            return bpe.count(text);
        }
        self.cache.get_or_insert(text, || bpe.count(text))
    }

    /// Returns true if and only if `text` is at most `budget` tokens. Every
    /// counter charges at most one token per byte (a BPE token spans at least
    /// one byte; the estimate charges a quarter per byte and one per
    /// three-byte dense character), so a text of at most `budget` bytes fits
    /// without being counted: summaries are checked against their budget at
    /// every compaction and are new text each time.
    ///
    /// A longer text on a BPE counter is counted piece by piece (`tokens::lines`),
    /// last piece first, and found over budget as soon as the pieces counted
    /// are: a summary's core is rendered with its oldest actions first and
    /// re-rendered without them when it is over, so they are mostly not
    /// counted. Only a text found within budget (counted whole) has its count
    /// remembered whole, as [`Meter::text`] would.
    pub fn fits(&self, text: &str, budget: u64) -> bool {
        if text.len() as u64 <= budget {
            return true;
        }
        match self.bpe {
            Some(bpe) if self.use_cache && text.len() >= LINED_MIN_BYTES => {
                self.lined_fits(bpe, text, budget)
            }
            _ => self.text(text) <= budget,
        }
    }

    /// [`Meter::fits`] of a long text on a BPE counter, its pieces counted from
    /// the last (see there). Exact: a count is the sum of its pieces' counts,
    /// none negative, so a part of them over budget is the whole over budget.
    fn lined_fits(&self, bpe: Bpe, text: &str, budget: u64) -> bool {
        let pieces: Vec<&str> = lines::cut(text, cache::MIN_CACHED_BYTES).collect();
        let mut sum = 0u64;
        for piece in pieces.iter().rev() {
            sum += self.cached(bpe, piece);
            if sum > budget {
                return false;
            }
        }
        self.cache.get_or_insert(text, || sum) <= budget
    }

    pub(crate) fn message_overhead(&self) -> u64 {
        match self.kind {
            CounterKind::Hermes => HERMES_MESSAGE_OVERHEAD_TOKENS,
            CounterKind::O200k | CounterKind::Cl100k => BPE_MESSAGE_OVERHEAD_TOKENS,
        }
    }

    /// Tokens of one content part.
    pub fn part(&self, part: &Part) -> u64 {
        match part {
            Part::Text(_) => part.text_str().map_or(0, |t| self.text(t)),
            Part::Image { .. } => self.image_tokens,
            Part::Reasoning(_) => part.reasoning_text().map_or(0, |t| self.text(t)),
            Part::Other(value) => self.json(value),
        }
    }

    /// Tokens of a message as sent: framing, content, reasoning, tool calls and
    /// the id a tool result answers.
    pub fn message(&self, m: &Message) -> u64 {
        let mut total = self.message_overhead();
        total += m.content.parts.iter().map(|p| self.part(p)).sum::<u64>();
        if let Some(r) = &m.reasoning {
            total += self.text(&r.text);
        }
        for call in m.tool_calls.iter() {
            total += self.call(&call.id, &call.name, &call.arguments);
        }
        if let Some(id) = &m.tool_call_id {
            total += self.text(id);
        }
        total
    }

    /// Tokens of one tool call: its id, name and arguments in their envelope.
    pub(crate) fn call(&self, id: &str, name: &str, arguments: &str) -> u64 {
        match self.kind {
            CounterKind::Hermes => {
                let chars = id.len() + name.len() + arguments.len();
                (chars as u64 + HERMES_TOOL_CALL_ENVELOPE_CHARS).div_ceil(4)
            }
            CounterKind::O200k | CounterKind::Cl100k => {
                self.text(id)
                    + self.text(name)
                    + self.text(arguments)
                    + BPE_TOOL_CALL_OVERHEAD_TOKENS
            }
        }
    }

    /// Per-message tokens of a list of messages.
    pub fn messages(&self, messages: &[Message]) -> Vec<u64> {
        messages.iter().map(|m| self.message(m)).collect()
    }

    /// Tokens of the tool schemas, serialized as JSON.
    pub fn tools(&self, tools: Option<&Value>) -> u64 {
        tools.map_or(0, |t| self.json(t))
    }

    fn json(&self, value: &Value) -> u64 {
        match value {
            Value::Null => 0,
            Value::String(s) => self.text(s),
            other => match self.bpe {
                Some(_) if self.use_cache => {
                    // Tool schemas are measured at every compaction of every
                    // replay: find them by a hash of the tree, serializing
                    // only the first time.
                    let mut h = crate::hash::Digest::new();
                    let mut len = 0usize;
                    hash_json(other, &mut h, &mut len);
                    let key = (h.finish128(), len);
                    self.cache.get_or_insert_key(key, || self.count_uncached(&other.to_string()))
                }
                Some(_) => self.text(&other.to_string()),
                None => hermes::estimate_json(other),
            },
        }
    }

    /// Fixed tokens per request (reply priming).
    pub fn request_overhead(&self) -> u64 {
        match self.kind {
            CounterKind::Hermes => 0,
            CounterKind::O200k | CounterKind::Cl100k => BPE_REQUEST_OVERHEAD_TOKENS,
        }
    }

    /// The size of the whole request: tool schemas + every message (the system
    /// prompt is the first message) + request framing.
    pub fn request(&self, session: &Session) -> u64 {
        self.tools(session.tools.as_ref())
            + session.messages.iter().map(|m| self.message(m)).sum::<u64>()
            + self.request_overhead()
    }
}

/// Feeds a JSON tree to `h`, with a tag per node so that different trees
/// (`["ab"]` and `["a","b"]`) hash differently; `len` counts the bytes fed.
fn hash_json(v: &Value, h: &mut crate::hash::Digest, len: &mut usize) {
    fn feed(bytes: &[u8], h: &mut crate::hash::Digest, len: &mut usize) {
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
        *len += bytes.len() + 8;
    }
    match v {
        Value::Null => feed(b"n", h, len),
        Value::Bool(b) => feed(if *b { b"t" } else { b"f" }, h, len),
        Value::Number(n) => {
            feed(b"#", h, len);
            feed(n.to_string().as_bytes(), h, len);
        }
        Value::String(s) => {
            feed(b"s", h, len);
            feed(s.as_bytes(), h, len);
        }
        Value::Array(items) => {
            feed(b"[", h, len);
            for x in items {
                hash_json(x, h, len);
            }
            feed(b"]", h, len);
        }
        Value::Object(map) => {
            feed(b"{", h, len);
            for (k, x) in map {
                feed(k.as_bytes(), h, len);
                hash_json(x, h, len);
            }
            feed(b"}", h, len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, Role, ToolCall};

    #[test]
    fn no_counter_charges_more_tokens_than_bytes() {
        // What `fits` relies on, on every fixture text and some worst cases.
        let mut texts: Vec<String> = vec![
            "a".into(),
            "\u{0}\u{1}\u{7f}".into(),
            "你好世界".into(),
            "🙂🙂🙂".into(),
            "é".repeat(50),
            " \n\t".repeat(40),
            (0..300u32).filter_map(char::from_u32).collect(),
        ];
        for dir in ["fixtures/openai", "fixtures/edge", "fixtures/anthropic"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            for e in std::fs::read_dir(&path).into_iter().flatten().flatten() {
                if let Ok(t) = std::fs::read_to_string(e.path()) {
                    texts.extend(t.lines().map(str::to_string));
                }
            }
        }
        assert!(texts.len() > 50, "fixtures not found");
        for kind in [CounterKind::O200k, CounterKind::Cl100k, CounterKind::Hermes] {
            let m = Meter::new(kind, DEFAULT_IMAGE_TOKENS);
            for t in &texts {
                assert!(m.text(t) <= t.len() as u64, "{}: {t:?}", kind.name());
                let exact = m.text(t);
                assert!(m.fits(t, exact) && (exact == 0 || !m.fits(t, exact - 1)), "{t:?}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        /// `fits` on a fresh meter (pieces counted last first, stopping over
        /// budget) answers as the plain count does, and a text it found over
        /// budget is then counted as it would have been.
        #[test]
        fn fits_is_the_plain_count_within_budget(
            lines in proptest::collection::vec("[a-z é/#]{0,40}", 1..40),
            budget_share in 0u64..130,
        ) {
            let text = lines.join("\n");
            let plain = o200k_meter().without_cache().text(&text);
            let budget = plain * budget_share / 100;
            for budget in [budget, plain, plain.saturating_sub(1)] {
                let m = o200k_meter();
                proptest::prop_assert_eq!(m.fits(&text, budget), plain <= budget);
                proptest::prop_assert_eq!(m.text(&text), plain);
                proptest::prop_assert_eq!(m.fits(&text, budget), plain <= budget);
            }
        }
    }

    #[test]
    fn o200k_counts_exact_tokens() {
        let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
        assert_eq!(meter.text("hello world"), 2);
        assert_eq!(meter.text(""), 0);
        // Special-token text is counted as ordinary text, never rejected.
        assert!(meter.text("<|endoftext|>") > 1);
    }

    /// The fast tokenizer counts exactly what the reference counts. (The
    /// integration tests repeat this on every fixture and corpus text.)
    #[test]
    fn fast_and_reference_tokenizers_agree() {
        let texts = [
            "hello world".to_string(),
            "fn main() { println!(\"héllo, 世界\"); }\n".repeat(20),
            "   leading and trailing   \n\n\t".to_string(),
            "<|endoftext|> and <|im_start|>".to_string(),
            "Ünïcödé ÀÉÎ 😀👍🏽 ".repeat(30),
            "{\"a\":[1,2,3],\"b\":\"x y\"}\r\n".repeat(40),
        ];
        for kind in [CounterKind::O200k, CounterKind::Cl100k] {
            let fast = Meter::with_tokenizer(kind, Tokenizer::BpeOpenai, DEFAULT_IMAGE_TOKENS);
            let reference = Meter::with_tokenizer(kind, Tokenizer::Tiktoken, DEFAULT_IMAGE_TOKENS);
            for t in &texts {
                assert_eq!(fast.count_uncached(t), reference.count_uncached(t), "{kind:?}: {t:?}");
            }
        }
    }

    #[test]
    fn cl100k_and_o200k_differ_on_code() {
        let a = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
        let b = Meter::new(CounterKind::Cl100k, DEFAULT_IMAGE_TOKENS);
        let text = "fn main() { println!(\"héllo, 世界\"); }\n".repeat(20);
        assert_ne!(a.text(&text), b.text(&text));
    }

    #[test]
    fn cached_counts_equal_uncached() {
        let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
        let long = "The quick brown fox jumps over the lazy dog. ".repeat(50);
        let direct = tiktoken_rs::o200k_base_singleton().count_ordinary(&long) as u64;
        assert_eq!(meter.text(&long), direct);
        assert_eq!(meter.text(&long), direct, "second lookup comes from the cache");
    }

    #[test]
    fn schemas_found_by_tree_hash_count_like_their_text() {
        let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
        let a = serde_json::json!([{"type": "function", "function": {"name": "read", "parameters": {"a": 1}}}]);
        let b = serde_json::json!([{"type": "function", "function": {"name": "read", "parameters": {"a": 2}}}]);
        for v in [&a, &b, &a] {
            assert_eq!(meter.tools(Some(v)), meter.count_uncached(&v.to_string()));
        }
        let split = serde_json::json!(["a", "b"]);
        let joined = serde_json::json!(["ab"]);
        assert_eq!(meter.tools(Some(&split)), meter.count_uncached(&split.to_string()));
        assert_eq!(meter.tools(Some(&joined)), meter.count_uncached(&joined.to_string()));
    }

    #[test]
    fn images_cost_a_fixed_amount() {
        let meter = Meter::new(CounterKind::O200k, 1_500);
        let mut raw = serde_json::Map::new();
        raw.insert("type".into(), "image_url".into());
        let small = Part::Image { raw: raw.clone(), info: Default::default() };
        let big = Part::Image {
            raw,
            info: crate::model::ImageInfo { byte_len: 5_000_000, ..Default::default() },
        };
        assert_eq!(meter.part(&small), 1_500);
        assert_eq!(meter.part(&big), 1_500);
    }

    #[test]
    fn tool_calls_and_schemas_count() {
        let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
        let plain = Message::text(Role::Assistant, "ok");
        let mut calling = plain.clone();
        calling.tool_calls_mut().push(ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"src/main.rs"}"#.into(),
            ..Default::default()
        });
        assert!(meter.message(&calling) > meter.message(&plain) + BPE_TOOL_CALL_OVERHEAD_TOKENS);
        let mut session = Session { messages: vec![plain], ..Default::default() };
        let without = meter.request(&session);
        session.tools =
            Some(serde_json::json!([{"type":"function","function":{"name":"read_file"}}]));
        assert!(meter.request(&session) > without);
    }

    #[test]
    fn hermes_message_overhead_is_ten() {
        let meter = Meter::new(CounterKind::Hermes, DEFAULT_IMAGE_TOKENS);
        let m = Message::text(Role::User, "abcd");
        assert_eq!(meter.message(&m), 1 + HERMES_MESSAGE_OVERHEAD_TOKENS);
    }
}
