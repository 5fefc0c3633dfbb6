//! What a report measured: its input files (name, size, content hash) and the
//! options that decide its figures, recorded in `summary.json` so that
//! `compactor check` can tell a regression from a comparison of two different
//! things (another corpus, another window).
//!
//! The hash is xxh3-64 of the file's bytes as stored (compressed files are
//! hashed compressed): a fingerprint, not a security check. A file is named as
//! the run named it (its `source` prefix), so two runs compare when they were
//! given the same paths; standard input has no name or hash to compare and is
//! recorded as `-` with no hash.

use crate::io::Input;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;

/// Bytes read per call while hashing a file.
const HASH_CHUNK_BYTES: usize = 1 << 20;

/// One input file of a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct InputFile {
    /// The file as the run named it (`-` for standard input).
    pub source: String,
    pub bytes: u64,
    /// xxh3-64 of its bytes, 16 hex digits; `None` for standard input.
    pub xxh3: Option<String>,
}

/// Every input file of a run, in reading order.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Inputs {
    pub files: Vec<InputFile>,
}

/// Fingerprints `inputs` (standard input is named, not read).
pub fn fingerprint(inputs: &[Input]) -> anyhow::Result<Inputs> {
    let mut files = Vec::with_capacity(inputs.len());
    for input in inputs {
        let Some(path) = &input.path else {
            files.push(InputFile { source: input.display.clone(), bytes: 0, xxh3: None });
            continue;
        };
        let fail = |e: std::io::Error| anyhow::anyhow!("{}: cannot read: {e}", path.display());
        let mut file = std::fs::File::open(path).map_err(fail)?;
        let mut hasher = crate::hash::Digest::new();
        let mut buf = vec![0u8; HASH_CHUNK_BYTES];
        let mut bytes = 0u64;
        loop {
            let n = file.read(&mut buf).map_err(fail)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            bytes += n as u64;
        }
        files.push(InputFile {
            source: input.display.clone(),
            bytes,
            xxh3: Some(format!("{:016x}", hasher.finish64())),
        });
    }
    Ok(Inputs { files })
}

/// How two fingerprints differ, one line per difference (at most `limit`
/// lines, then a count); empty when they are the same inputs.
pub fn differences(baseline: &Inputs, current: &Inputs, limit: usize) -> Vec<String> {
    let index = |i: &Inputs| -> BTreeMap<String, InputFile> {
        i.files.iter().map(|f| (f.source.clone(), f.clone())).collect()
    };
    let (a, b) = (index(baseline), index(current));
    let mut out = Vec::new();
    for (name, fa) in &a {
        match b.get(name) {
            None => out.push(format!("{name}: only in the baseline")),
            Some(fb) if fa.xxh3.is_none() || fb.xxh3.is_none() => {
                out.push(format!("{name}: standard input, cannot be compared"))
            }
            Some(fb) if fa != fb => out.push(format!(
                "{name}: different content ({} bytes, xxh3 {} in the baseline; {} bytes, xxh3 {} now)",
                fa.bytes,
                fa.xxh3.as_deref().unwrap_or("-"),
                fb.bytes,
                fb.xxh3.as_deref().unwrap_or("-"),
            )),
            Some(_) => {}
        }
    }
    out.extend(
        b.keys()
            .filter(|k| !a.contains_key(*k))
            .map(|k| format!("{k}: only in the current report")),
    );
    if out.len() > limit {
        let more = out.len() - limit;
        out.truncate(limit);
        out.push(format!("... and {more} more"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn input(path: &std::path::Path) -> Input {
        Input {
            path: Some(path.to_path_buf()),
            display: path.file_name().unwrap_or_default().to_string_lossy().into_owned(),
            relative: PathBuf::from("x"),
        }
    }

    #[test]
    fn same_bytes_same_fingerprint_and_a_changed_byte_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (p, q) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
        std::fs::write(&p, "{\"messages\":[]}\n").unwrap();
        std::fs::write(&q, "{\"messages\":[]}\n").unwrap();
        let one = fingerprint(&[input(&p), input(&q)]).unwrap();
        assert_eq!(one, fingerprint(&[input(&p), input(&q)]).unwrap());
        assert_eq!(one.files[0].bytes, 16);
        assert_eq!(one.files[0].xxh3, one.files[1].xxh3, "same bytes, same hash");
        assert!(differences(&one, &one, 10).is_empty());

        std::fs::write(&q, "{\"messages\":[1]}\n").unwrap();
        let two = fingerprint(&[input(&p), input(&q)]).unwrap();
        let d = differences(&one, &two, 10);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].starts_with("b.jsonl: different content (16 bytes"), "{d:?}");
    }

    #[test]
    fn missing_and_added_files_are_named_and_long_lists_cut() {
        let f = |s: &str| InputFile { source: s.into(), bytes: 1, xxh3: Some("00".into()) };
        let a = Inputs { files: vec![f("x"), f("y")] };
        let b = Inputs { files: vec![f("y"), f("z")] };
        assert_eq!(
            differences(&a, &b, 10),
            ["x: only in the baseline", "z: only in the current report"]
        );
        let many = Inputs { files: (0..30).map(|i| f(&format!("f{i:02}"))).collect() };
        let d = differences(&many, &Inputs::default(), 5);
        assert_eq!(d.len(), 6);
        assert_eq!(d[5], "... and 25 more");
    }
}
