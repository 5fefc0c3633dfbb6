//! Token prices, for replay costs: dollars per million tokens of input,
//! cache reads, cache writes and output.
//!
//! The built-in table holds list prices published on the providers' pricing
//! pages (Anthropic, OpenAI, Google, DeepSeek) in 2025; prices change, so a
//! JSON file (`{"fragment": {"input": 3.0, "cache_read": 0.3, "cache_write":
//! 3.75, "output": 15.0}}`) overrides or extends them. Lookup is by the
//! longest fragment contained in the model name, as for windows. Where a
//! provider has no cache-write surcharge, cache writes cost the input price.

use super::fragments::FragmentTable;
use serde::Serialize;
use std::collections::BTreeMap;

/// Prices in dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Prices {
    pub input: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub output: f64,
}

/// A cache write with a 1-hour lifetime costs this many times the input
/// price (Anthropic's prompt-caching price list, which Claude Code's 1-hour
/// writes follow: `usage.cache_creation.ephemeral_1h_input_tokens`); the
/// `cache_write` price is the 5-minute one (1.25x).
pub const CACHE_WRITE_1H_INPUT_MULTIPLIER: f64 = 2.0;

impl Prices {
    /// Dollars per million tokens of a 1-hour cache write.
    pub fn cache_write_1h(&self) -> f64 {
        self.input * CACHE_WRITE_1H_INPUT_MULTIPLIER
    }
}

const TABLE: &[(&str, Prices)] = &[
    ("claude-3-5-haiku", Prices { input: 0.8, cache_read: 0.08, cache_write: 1.0, output: 4.0 }),
    ("claude-3-5-sonnet", Prices { input: 3.0, cache_read: 0.3, cache_write: 3.75, output: 15.0 }),
    ("claude-3-7-sonnet", Prices { input: 3.0, cache_read: 0.3, cache_write: 3.75, output: 15.0 }),
    ("claude-sonnet-4", Prices { input: 3.0, cache_read: 0.3, cache_write: 3.75, output: 15.0 }),
    ("claude-opus-4", Prices { input: 15.0, cache_read: 1.5, cache_write: 18.75, output: 75.0 }),
    ("claude-opus-4-5", Prices { input: 5.0, cache_read: 0.5, cache_write: 6.25, output: 25.0 }),
    ("claude-opus-4-6", Prices { input: 5.0, cache_read: 0.5, cache_write: 6.25, output: 25.0 }),
    ("claude-haiku-4", Prices { input: 1.0, cache_read: 0.1, cache_write: 1.25, output: 5.0 }),
    ("gpt-4o", Prices { input: 2.5, cache_read: 1.25, cache_write: 2.5, output: 10.0 }),
    ("gpt-4o-mini", Prices { input: 0.15, cache_read: 0.075, cache_write: 0.15, output: 0.6 }),
    ("gpt-4.1", Prices { input: 2.0, cache_read: 0.5, cache_write: 2.0, output: 8.0 }),
    ("gpt-4.1-mini", Prices { input: 0.4, cache_read: 0.1, cache_write: 0.4, output: 1.6 }),
    ("gpt-5", Prices { input: 1.25, cache_read: 0.125, cache_write: 1.25, output: 10.0 }),
    ("gpt-5-mini", Prices { input: 0.25, cache_read: 0.025, cache_write: 0.25, output: 2.0 }),
    ("o3", Prices { input: 2.0, cache_read: 0.5, cache_write: 2.0, output: 8.0 }),
    ("o4-mini", Prices { input: 1.1, cache_read: 0.275, cache_write: 1.1, output: 4.4 }),
    ("gemini-2.5-pro", Prices { input: 1.25, cache_read: 0.31, cache_write: 1.25, output: 10.0 }),
    ("gemini-2.5-flash", Prices { input: 0.3, cache_read: 0.075, cache_write: 0.3, output: 2.5 }),
    ("deepseek", Prices { input: 0.27, cache_read: 0.07, cache_write: 0.27, output: 1.1 }),
];

/// The price table, built in and extended by the user.
#[derive(Clone, Debug)]
pub struct PriceTable {
    entries: FragmentTable<Prices>,
}

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable { entries: FragmentTable::new(TABLE.iter().copied()) }
    }
}

impl PriceTable {
    /// Adds the entries of a JSON file's text.
    pub fn extend_from_json(&mut self, text: &str) -> Result<(), String> {
        #[derive(serde::Deserialize)]
        struct Entry {
            input: f64,
            cache_read: Option<f64>,
            cache_write: Option<f64>,
            output: f64,
        }
        let map: BTreeMap<String, Entry> = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for (k, e) in map {
            let p = Prices {
                input: e.input,
                cache_read: e.cache_read.unwrap_or(e.input),
                cache_write: e.cache_write.unwrap_or(e.input),
                output: e.output,
            };
            self.entries.extend([(k, p)]);
        }
        Ok(())
    }

    /// The prices of `model`: the entry with the longest fragment it contains.
    pub fn lookup(&self, model: &str) -> Option<Prices> {
        self.entries.lookup(model).copied()
    }
}

/// Which prices each session is billed at.
#[derive(Clone, Debug)]
pub enum PriceBook {
    /// `--model NAME`: every session at that model's prices.
    Fixed(Prices),
    /// `--model auto` (or `--window N` alone): each session at the prices of
    /// the model its log names, and at none when the log names no model or
    /// the table does not know it (the session's cost is then left out).
    PerModel(PriceTable),
}

impl PriceBook {
    /// The prices of a session whose log names `model`.
    pub fn for_model(&self, model: Option<&str>) -> Option<Prices> {
        match self {
            PriceBook::Fixed(p) => Some(*p),
            PriceBook::PerModel(table) => table.lookup(model?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_and_override() {
        let mut t = PriceTable::default();
        assert_eq!(t.lookup("claude-sonnet-4-5-20250929").unwrap().input, 3.0);
        assert_eq!(t.lookup("gpt-4o-mini").unwrap().output, 0.6);
        assert!(t.lookup("unknown").is_none());
        t.extend_from_json(r#"{"my-model": {"input": 1.0, "output": 2.0}}"#).unwrap();
        let p = t.lookup("acme/my-model").unwrap();
        assert_eq!((p.cache_read, p.cache_write), (1.0, 1.0));
        assert!(t.extend_from_json("[]").is_err());
    }

    #[test]
    fn a_book_prices_each_model_or_all_at_one() {
        let book = PriceBook::PerModel(PriceTable::default());
        assert_eq!(book.for_model(Some("claude-opus-4-6")).unwrap().input, 5.0);
        assert_eq!(book.for_model(Some("gpt-5.3-codex")).unwrap().input, 1.25);
        assert!(book.for_model(Some("llama-3")).is_none());
        assert!(book.for_model(None).is_none());
        let one = PriceBook::Fixed(PriceTable::default().lookup("gpt-4o").unwrap());
        assert_eq!(one.for_model(None).unwrap().output, 10.0);
        assert_eq!(one.for_model(Some("claude-opus-4-6")).unwrap().output, 10.0);
    }
}
