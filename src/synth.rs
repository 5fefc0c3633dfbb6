//! Seeded synthetic sessions, shaped like the coding-agent transcripts of the
//! corpus: a system prompt, user asks, rounds of (parallel) tool calls with
//! shell / read / edit / search outputs, errors, commits and paths, the odd
//! image and reasoning. Used by tests, benchmarks and `scripts/bench.sh`
//! (through `compactor synth`); never by compaction itself.
//!
//! The generator is a pure function of its [`SynthConfig`]: the same seed gives
//! the same bytes on every machine (a splitmix64 stream, no global RNG).

use serde_json::{Value, json};

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct SynthConfig {
    pub seed: u64,
    /// Approximate size of the session, in tokens (≈ chars / 4).
    pub target_tokens: u64,
    /// Add inline images to some user messages and screenshots to some results.
    pub images: bool,
    /// Add `reasoning_content` to some assistant messages.
    pub reasoning: bool,
    /// Stop at about this many messages instead of at `target_tokens`
    /// (whole turns only, so the count can run over by one turn).
    pub target_messages: Option<usize>,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            seed: 1,
            target_tokens: 20_000,
            images: true,
            reasoning: true,
            target_messages: None,
        }
    }
}

/// splitmix64: small, fast, and identical everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const MODULES: &[&str] =
    &["auth", "billing", "orders", "search", "storage", "api", "cli", "config", "metrics", "sync"];
const FILES: &[&str] = &[
    "mod.rs",
    "handler.rs",
    "service.ts",
    "models.py",
    "routes.go",
    "client.ts",
    "utils.py",
    "schema.sql",
];
const VERBS: &[&str] =
    &["fix", "refactor", "add tests for", "document", "speed up", "debug", "review"];
const ERRORS: &[&str] = &[
    "error[E0308]: mismatched types",
    "TypeError: Cannot read properties of undefined (reading 'id')",
    "AssertionError: expected 200, got 500",
    "FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'",
    "panic: runtime error: index out of range [3] with length 3",
    "ECONNREFUSED 127.0.0.1:5432",
];
/// 1×1 PNG, base64: repeated to make an image payload of realistic size.
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

struct Gen {
    rng: Rng,
    cfg: SynthConfig,
    messages: Vec<Value>,
    chars: u64,
    call: u64,
    day: u64,
    minute: u64,
}

impl Gen {
    fn path(&mut self) -> String {
        format!("src/{}/{}", self.rng.pick(MODULES), self.rng.pick(FILES))
    }

    fn sha(&mut self) -> String {
        format!("{:07x}{:x}", self.rng.next() & 0xfff_ffff | 0x100_0000, self.rng.below(16))
    }

    fn stamp(&mut self) -> String {
        self.minute += 1 + self.rng.below(3);
        let (h, m) = ((self.minute / 60) % 24, self.minute % 60);
        if self.minute.is_multiple_of(1440) {
            self.day += 1;
        }
        format!("2026-03-{:02}T{h:02}:{m:02}:00Z", 1 + (self.day % 28))
    }

    fn push(&mut self, mut m: Value) {
        let ts = self.stamp();
        if let Some(o) = m.as_object_mut() {
            o.insert("timestamp".into(), Value::String(ts));
        }
        self.chars += m.to_string().len() as u64;
        self.messages.push(m);
    }

    fn lines(&mut self, n: u64, f: &mut dyn FnMut(&mut Rng, u64) -> String) -> String {
        (0..n).map(|i| f(&mut self.rng, i)).collect::<Vec<_>>().join("\n")
    }

    /// A tool call and its output.
    fn tool(&mut self) -> (Value, String) {
        self.call += 1;
        let id = format!("call_{:06}", self.call);
        let kind = self.rng.below(10);
        let (name, args, out) = match kind {
            0..=3 => {
                let module = self.rng.pick(MODULES);
                let fail = self.rng.chance(30);
                let long = self.rng.chance(10);
                let n = 5 + self.rng.below(if long { 2_000 } else { 120 });
                let mut body = self.lines(n, &mut |r, i| {
                    format!(
                        "test {}::case_{i} ... {}",
                        r.pick(MODULES),
                        if r.chance(3) { "FAILED" } else { "ok" }
                    )
                });
                if fail {
                    let e = self.rng.pick(ERRORS);
                    let p = self.path();
                    body.push_str(&format!("\n{e}\n  --> {p}:{}:5\n", 1 + self.rng.below(400)));
                }
                let code = if fail { 101 } else { 0 };
                (
                    "Bash",
                    json!({"command": format!("cargo test -p {module} 2>&1 | tail -n 200")}),
                    format!("{body}\nExit code: {code}"),
                )
            }
            4..=5 => {
                let path = self.path();
                let n = 20 + self.rng.below(400);
                let body = self.lines(n, &mut |r, i| {
                    format!(
                        "{:>5}\tlet value_{i} = compute(\"{}\", {});",
                        i + 1,
                        r.pick(MODULES),
                        r.below(1000)
                    )
                });
                ("Read", json!({"file_path": path}), body)
            }
            6 => {
                let path = self.path();
                let old = "let x = compute(a);".repeat(1 + self.rng.below(40) as usize);
                (
                    "Edit",
                    json!({"file_path": path, "old_string": old, "new_string": "let x = compute_checked(a)?;"}),
                    format!("The file {path} has been updated."),
                )
            }
            7 => {
                let pat = format!("fn {}_handler", self.rng.pick(MODULES));
                let n = 1 + self.rng.below(60);
                let body = self.lines(n, &mut |r, i| {
                    format!(
                        "src/{}/{}:{}: {pat_}",
                        r.pick(MODULES),
                        r.pick(FILES),
                        i * 7 + 1,
                        pat_ = "pub fn handler()"
                    )
                });
                ("Grep", json!({"pattern": pat, "path": "src"}), body)
            }
            8 => {
                let n = 3 + self.rng.below(30);
                let body = self.lines(n, &mut |r, i| {
                    format!(
                        "{:07x}{:x} feat/{}-{i}: update {} (#{})",
                        r.next() & 0xfff_ffff | 0x100_0000,
                        r.below(16),
                        r.pick(MODULES),
                        r.pick(FILES),
                        100 + r.below(900)
                    )
                });
                (
                    "Bash",
                    json!({"command": "git log --oneline -30"}),
                    format!("{body}\nExit code: 0"),
                )
            }
            _ => {
                let url = format!(
                    "https://docs.example.com/{}/{}",
                    self.rng.pick(MODULES),
                    self.rng.below(100)
                );
                let n = 10 + self.rng.below(200);
                let body = self.lines(n, &mut |r, _| {
                    format!(
                        "The {} API accepts a `{}` parameter.",
                        r.pick(MODULES),
                        r.pick(MODULES)
                    )
                });
                ("WebFetch", json!({"url": url, "prompt": "summarize the parameters"}), body)
            }
        };
        let call = json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}});
        (call, out)
    }

    fn user_turn(&mut self) {
        let path = self.path();
        let verb = self.rng.pick(VERBS);
        let mut text = format!("Please {verb} {path}.");
        if self.rng.chance(30) {
            text.push_str(" Do not change the public API, and keep the tests green.");
        }
        if self.rng.chance(20) {
            text.push_str(&format!(" Why does commit {} break the build?", self.sha()));
        }
        if self.rng.chance(15) {
            text.push_str(&format!(
                " See #{} and https://github.com/acme/app/pull/{}.",
                self.rng.below(500),
                self.rng.below(900)
            ));
        }
        if self.cfg.images && self.rng.chance(8) {
            let img = PNG_1X1.repeat(1 + self.rng.below(400) as usize);
            self.push(json!({"role": "user", "content": [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{img}")}}
            ]}));
        } else {
            self.push(json!({"role": "user", "content": text}));
        }
    }

    fn work_rounds(&mut self) {
        let rounds = 1 + self.rng.below(6);
        for _ in 0..rounds {
            let parallel = if self.rng.chance(25) { 2 + self.rng.below(2) } else { 1 };
            let mut calls = Vec::new();
            let mut outs = Vec::new();
            for _ in 0..parallel {
                let (c, o) = self.tool();
                calls.push(c);
                outs.push(o);
            }
            let mut msg = json!({"role": "assistant", "content": null, "tool_calls": calls});
            if self.rng.chance(40) {
                msg["content"] = Value::String(format!("Let me look at {}.", self.path()));
            }
            if self.cfg.reasoning && self.rng.chance(30) {
                msg["reasoning_content"] = Value::String(
                    "The failure points at the handler; checking the call sites first. "
                        .repeat(1 + self.rng.below(20) as usize),
                );
            }
            self.push(msg);
            for (c, out) in calls.iter().zip(outs) {
                let id = c["id"].clone();
                if self.cfg.images && self.rng.chance(3) {
                    let shot = PNG_1X1.repeat(50);
                    self.push(json!({"role": "tool", "tool_call_id": id, "content": [
                        {"type": "text", "text": out},
                        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{shot}")}}
                    ]}));
                } else {
                    self.push(json!({"role": "tool", "tool_call_id": id, "content": out}));
                }
            }
        }
        let path = self.path();
        let close = match self.rng.below(3) {
            0 => format!("Fixed {path}: the handler now validates input instead of panicking."),
            1 => format!(
                "I decided to use a typed error rather than a string in {path}; tests pass."
            ),
            _ => format!("Updated {path} and ran the suite; commit {} is ready.", self.sha()),
        };
        self.push(json!({"role": "assistant", "content": close}));
    }
}

/// One synthetic session in OpenAI format (`{"id", "messages", "tools"}`).
pub fn session(cfg: SynthConfig) -> Value {
    let mut g =
        Gen { rng: Rng(cfg.seed), cfg, messages: Vec::new(), chars: 0, call: 0, day: 0, minute: 0 };
    let system = "You are a careful coding agent working in a Rust/TypeScript/Python monorepo. \
        Use the tools to read, search, edit and test. Explain decisions briefly. "
        .repeat(8);
    g.push(json!({"role": "system", "content": system}));
    let target_chars = cfg.target_tokens.saturating_mul(4);
    let more = |g: &Gen| match cfg.target_messages {
        Some(n) => g.messages.len() < n,
        None => g.chars < target_chars,
    };
    while more(&g) {
        g.user_turn();
        g.work_rounds();
    }
    let tools: Vec<Value> = ["Bash", "Read", "Edit", "Grep", "WebFetch"]
        .iter()
        .map(|n| json!({"type": "function", "function": {"name": n, "description": format!("The {n} tool."), "parameters": {"type": "object"}}}))
        .collect();
    json!({"id": format!("synth-{}", cfg.seed), "messages": g.messages, "tools": tools})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bytes() {
        let a = session(SynthConfig { seed: 7, ..Default::default() }).to_string();
        let b = session(SynthConfig { seed: 7, ..Default::default() }).to_string();
        let c = session(SynthConfig { seed: 8, ..Default::default() }).to_string();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn size_tracks_the_target_and_pairs_are_whole() {
        let v = session(SynthConfig { seed: 3, target_tokens: 50_000, ..Default::default() });
        let chars = v.to_string().len() as u64;
        assert!((200_000..400_000).contains(&chars), "{chars}");
        let msgs = v["messages"].as_array().unwrap();
        let mut open = std::collections::HashSet::new();
        for m in msgs {
            for c in m["tool_calls"].as_array().into_iter().flatten() {
                open.insert(c["id"].as_str().unwrap().to_string());
            }
            if m["role"] == "tool" {
                assert!(open.remove(m["tool_call_id"].as_str().unwrap()));
            }
        }
        assert!(open.is_empty());
    }
}
