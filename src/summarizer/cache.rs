//! `--summary-cache DIR`: answers kept by the request that asked for them.
//!
//! ## What it does
//! Each answer is a small JSON file, `DIR/KK/KEY.json`, where KEY is the
//! 128-bit XXH3 hash (hex) of the request: the summarizer's identity (the
//! endpoint kind, or the command line) and the request body's bytes, which
//! hold the model, the prompt and every parameter. The API key is not part of
//! the request body and never reaches the cache. Files are written atomically
//! (`io::atomic::write_atomic`): a run stopped midway leaves whole entries.
//!
//! ## Why
//! A rerun, a replay or `report` over the same data asks nothing twice and
//! gets the same bytes back; `--summary-cache-only` replays a run offline.
//!
//! ## Invariants
//! - An unreadable or malformed entry is a miss, never an error.

use crate::io::atomic::write_atomic;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Bumped when the entry shape or the key's recipe changes.
const VERSION: &str = "compactor-summary-cache-v1";

/// One cached answer.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    pub body: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// A cache directory.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: &Path) -> Cache {
        Cache { dir: dir.to_path_buf() }
    }

    /// The key of a request sent to `identity`.
    pub fn key(identity: &str, body: &[u8]) -> String {
        let mut h = crate::hash::Digest::new();
        for piece in [VERSION.as_bytes(), b"\0", identity.as_bytes(), b"\0", body] {
            h.update(piece);
        }
        format!("{:032x}", h.finish128())
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(key.get(..2).unwrap_or("00")).join(format!("{key}.json"))
    }

    /// The entry under `key`, if there is a readable one.
    pub fn get(&self, key: &str) -> Option<Entry> {
        let text = std::fs::read(self.path(key)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Stores `entry` under `key`.
    pub fn put(&self, key: &str, entry: &Entry) -> anyhow::Result<()> {
        let path = self.path(key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut bytes = serde_json::to_vec_pretty(entry)?;
        bytes.push(b'\n');
        write_atomic(&path, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_keys_follow_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let k = Cache::key("http", b"{\"model\":\"m\"}");
        assert_eq!(k.len(), 32);
        assert_ne!(k, Cache::key("http", b"{\"model\":\"n\"}"));
        assert_ne!(k, Cache::key("cmd:cat", b"{\"model\":\"m\"}"));
        assert_eq!(cache.get(&k), None);
        let e = Entry { body: "## Goal\nx".into(), prompt_tokens: 5, completion_tokens: 2 };
        cache.put(&k, &e).unwrap();
        assert_eq!(cache.get(&k), Some(e));
        std::fs::write(cache.path(&k), b"{broken").unwrap();
        assert_eq!(cache.get(&k), None, "a malformed entry is a miss");
    }
}
