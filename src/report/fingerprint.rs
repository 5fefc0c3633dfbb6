//! What a report measured: its input files (name, size, content hash) and the
//! options that decide its figures, recorded in `summary.json` so that
//! `compactor check` can tell a regression from a comparison of two different
//! things (another corpus, another window).
//!
//! The hash is xxh3-64 of the file's bytes as stored (compressed files are
//! hashed compressed): a fingerprint, not a security check. A file is named as
//! the run named it (its `source` prefix); [`pair`] matches two runs' files by
//! content first (size and hash), by name second, so the same bytes under
//! another root or on another machine compare. Standard input has no hash and
//! is recorded as `-`: it pairs by name only, and never as the same input.

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

/// How the files of two fingerprints were paired: by content (same size and
/// hash, whatever their names) first, then by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pairing {
    /// Files paired by content.
    pub by_content: usize,
    /// Of those, the ones named differently: (baseline name, current name),
    /// in baseline order.
    pub renamed: Vec<(String, String)>,
    /// What keeps the two from being the same inputs, one line per difference
    /// (at most `limit` lines, then a count); empty when they are the same inputs.
    pub differences: Vec<String>,
}

/// The content key of a file: its size and hash (`None` for standard input,
/// which has neither and pairs by name only).
fn content(f: &InputFile) -> Option<(u64, &str)> {
    f.xxh3.as_deref().map(|h| (f.bytes, h))
}

/// Pairs the files of two runs: every baseline file with a current file of
/// the same content (the one of the same name when there are several), then
/// the rest by name; what is left is only on one side. Reports made on two
/// machines or under two roots name the same bytes differently, and compare.
pub fn pair(baseline: &Inputs, current: &Inputs, limit: usize) -> Pairing {
    let mut taken = vec![false; current.files.len()];
    let mut partner: Vec<Option<usize>> = vec![None; baseline.files.len()];
    let mut by_key: BTreeMap<(u64, &str), Vec<usize>> = BTreeMap::new();
    for (j, f) in current.files.iter().enumerate() {
        if let Some(k) = content(f) {
            by_key.entry(k).or_default().push(j);
        }
    }
    let mut out = Pairing::default();
    // Same name first, so that identical files keep their own partners.
    for same_name_only in [true, false] {
        for (i, f) in baseline.files.iter().enumerate() {
            let Some(k) = content(f).filter(|_| partner[i].is_none()) else { continue };
            let candidates = by_key.get(&k).map(Vec::as_slice).unwrap_or_default();
            let found = candidates
                .iter()
                .copied()
                .find(|&j| !taken[j] && (!same_name_only || current.files[j].source == f.source));
            if let Some(j) = found {
                taken[j] = true;
                partner[i] = Some(j);
            }
        }
    }
    for (i, f) in baseline.files.iter().enumerate() {
        if let Some(j) = partner[i] {
            out.by_content += 1;
            if current.files[j].source != f.source {
                out.renamed.push((f.source.clone(), current.files[j].source.clone()));
            }
        }
    }
    // The rest by name: a file whose content changed, or standard input.
    let unpaired_current: BTreeMap<&str, usize> = current
        .files
        .iter()
        .enumerate()
        .filter(|(j, _)| !taken[*j])
        .map(|(j, f)| (f.source.as_str(), j))
        .collect();
    let mut lines: Vec<(String, String)> = Vec::new();
    for (i, fa) in baseline.files.iter().enumerate() {
        if partner[i].is_some() {
            continue;
        }
        let name = fa.source.clone();
        match unpaired_current.get(fa.source.as_str()) {
            None => lines.push((name.clone(), format!("{name}: only in the baseline"))),
            Some(&j) => {
                taken[j] = true;
                let fb = &current.files[j];
                let line = if fa.xxh3.is_none() || fb.xxh3.is_none() {
                    format!("{name}: standard input, cannot be compared")
                } else {
                    format!(
                        "{name}: different content ({} bytes, xxh3 {} in the baseline; {} bytes, xxh3 {} now)",
                        fa.bytes,
                        fa.xxh3.as_deref().unwrap_or("-"),
                        fb.bytes,
                        fb.xxh3.as_deref().unwrap_or("-"),
                    )
                };
                lines.push((name, line));
            }
        }
    }
    lines.sort();
    let mut only_current: Vec<String> = current
        .files
        .iter()
        .enumerate()
        .filter(|(j, _)| !taken[*j])
        .map(|(_, f)| format!("{}: only in the current report", f.source))
        .collect();
    only_current.sort();
    out.differences = lines.into_iter().map(|(_, l)| l).chain(only_current).collect();
    if out.differences.len() > limit {
        let more = out.differences.len() - limit;
        out.differences.truncate(limit);
        out.differences.push(format!("... and {more} more"));
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
            walked: false,
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
        let same = pair(&one, &one, 10);
        assert!(same.differences.is_empty() && same.renamed.is_empty());
        assert_eq!(same.by_content, 2);

        std::fs::write(&q, "{\"messages\":[1]}\n").unwrap();
        let two = fingerprint(&[input(&p), input(&q)]).unwrap();
        let d = pair(&one, &two, 10).differences;
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].starts_with("b.jsonl: different content (16 bytes"), "{d:?}");
    }

    /// The same files under two roots pair by content, each with its own
    /// partner even where two files hold the same bytes; a changed file under
    /// the same name is named as changed, and standard input never pairs.
    #[test]
    fn content_pairs_first_then_names() {
        let f = |s: &str, h: &str| InputFile { source: s.into(), bytes: 7, xxh3: Some(h.into()) };
        let a = Inputs { files: vec![f("a/x", "01"), f("a/dup1", "09"), f("a/dup2", "09")] };
        let b = Inputs { files: vec![f("b/dup1", "09"), f("b/dup2", "09"), f("b/x", "01")] };
        let p = pair(&a, &b, 10);
        assert_eq!((p.by_content, p.differences.len()), (3, 0), "{p:?}");
        assert_eq!(p.renamed.len(), 3);
        // Identical bytes under the same names keep their own partners.
        let c = Inputs { files: vec![f("dup2", "09"), f("dup1", "09")] };
        let d = Inputs { files: vec![f("dup1", "09"), f("dup2", "09")] };
        assert!(pair(&c, &d, 10).renamed.is_empty());
        // A changed file keeps its name and is said to differ.
        let e = Inputs { files: vec![f("a/x", "02")] };
        let q = pair(&Inputs { files: vec![f("a/x", "01")] }, &e, 10);
        assert_eq!(q.by_content, 0);
        assert!(q.differences[0].starts_with("a/x: different content (7 bytes"), "{q:?}");
        let stdin = Inputs { files: vec![InputFile { source: "-".into(), bytes: 0, xxh3: None }] };
        let s = pair(&stdin, &stdin, 10);
        assert_eq!(s.differences, ["-: standard input, cannot be compared"]);
    }

    #[test]
    fn missing_and_added_files_are_named_and_long_lists_cut() {
        let f = |s: &str| InputFile { source: s.into(), bytes: 1, xxh3: Some("00".into()) };
        let a = Inputs { files: vec![f("x"), f("y")] };
        let b = Inputs { files: vec![f("y"), f("z")] };
        // Same content under another name pairs: x (baseline) is z (current).
        let p = pair(&a, &b, 10);
        assert!(p.differences.is_empty(), "{p:?}");
        assert_eq!(p.renamed, [("x".to_string(), "z".to_string())]);
        let g = |s: &str, h: &str| InputFile { source: s.into(), bytes: 1, xxh3: Some(h.into()) };
        let a = Inputs { files: vec![g("x", "01"), g("y", "02")] };
        let b = Inputs { files: vec![g("y", "02"), g("z", "03")] };
        assert_eq!(
            pair(&a, &b, 10).differences,
            ["x: only in the baseline", "z: only in the current report"]
        );
        let many =
            Inputs { files: (0..30).map(|i| g(&format!("f{i:02}"), &format!("{i:02}"))).collect() };
        let d = pair(&many, &Inputs::default(), 5).differences;
        assert_eq!(d.len(), 6);
        assert_eq!(d[5], "... and 25 more");
    }
}
