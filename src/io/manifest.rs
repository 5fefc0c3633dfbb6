//! The resume manifest of a directory output: which inputs are finished.
//!
//! A run that writes one output file per input (`-o DIR/`) appends one line to
//! `DIR/.compactor-manifest.jsonl` each time an output file is complete (after
//! its rename), and fsyncs it. A line records the input (its name relative to
//! the argument it came from, its size and modification time), a hash of every
//! option that changes output bytes, the output file (name and size) and the
//! input's totals. `compact --resume` skips an input when a line matches all of
//! that and the output file is still there with the recorded size, so a run
//! killed after hours is finished, not restarted.
//!
//! Why this shape: appending a line is the only write that cannot leave an
//! earlier entry broken, so a kill at any moment loses at most the line being
//! written (a torn last line is ignored when loading), and an output whose line
//! was lost is simply written again. The manifest starts with a dot so that a
//! later run reading `DIR` as input does not take it for a transcript.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The manifest's file name inside the output directory.
pub const MANIFEST_NAME: &str = ".compactor-manifest.jsonl";

/// What identifies an input's content without reading it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The input's name relative to its argument (as the output is named).
    pub input: String,
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch (u64, not u128:
    /// serde cannot read a u128 through `#[serde(flatten)]`).
    pub mtime_ns: u64,
}

impl Fingerprint {
    /// Reads the size and modification time of `path`.
    pub fn of(path: &Path, relative: &Path) -> std::io::Result<Fingerprint> {
        let meta = std::fs::metadata(path)?;
        let mtime_ns = meta
            .modified()?
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or_default();
        Ok(Fingerprint {
            input: relative.to_string_lossy().into_owned(),
            size: meta.len(),
            mtime_ns,
        })
    }
}

/// One finished input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    #[serde(flatten)]
    pub fingerprint: Fingerprint,
    /// Hash of the options that change output bytes ([`options_hash`]).
    pub options: String,
    /// The output file, relative to the output directory.
    pub output: String,
    pub output_size: u64,
    pub sessions: usize,
    pub compacted: usize,
    /// Compacted sessions still over the trigger (absent in older manifests).
    #[serde(default)]
    pub over_trigger: usize,
    pub rejected: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// A stable hash (xxh3-128, hex) of a description of every option that
/// changes output bytes, with the tool's version (another version may compact
/// differently). The caller decides what goes in; thread counts, progress and
/// report paths must not.
pub fn options_hash(description: &str) -> String {
    let text = format!("compactor {}\n{description}", env!("CARGO_PKG_VERSION"));
    format!("{:032x}", crate::hash::of128(text.as_bytes()))
}

/// How a file-valued option (`--tool-families FILE`, `--models-file FILE`)
/// enters [`options_hash`]'s description: by a hash of its contents, never its
/// path, so that editing the file redoes the inputs it may change and moving
/// it redoes none.
pub fn option_file(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    Ok(format!("{:032x}", crate::hash::of128(&bytes)))
}

/// Reads a manifest; a missing file is an empty one, and lines that do not
/// parse (a torn last line from a killed run) are ignored.
pub fn load(dir: &Path) -> anyhow::Result<Vec<Entry>> {
    let path = dir.join(MANIFEST_NAME);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot read", path.display())),
    };
    let mut entries = Vec::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line.with_context(|| format!("{}: cannot read", path.display()))?;
        if let Ok(entry) = serde_json::from_slice::<Entry>(&line) {
            entries.push(entry);
        }
    }
    Ok(entries)
}

/// The entry that lets `fingerprint` be skipped: same input, size, mtime and
/// options, and an output file still present with its recorded size.
pub fn finished<'a>(
    entries: &'a [Entry],
    dir: &Path,
    fingerprint: &Fingerprint,
    options: &str,
) -> Option<&'a Entry> {
    entries.iter().rev().find(|e| {
        e.fingerprint == *fingerprint
            && e.options == options
            && std::fs::metadata(dir.join(&e.output))
                .is_ok_and(|m| m.is_file() && m.len() == e.output_size)
    })
}

/// An open manifest, appended to as outputs are finished.
pub struct Manifest {
    path: PathBuf,
    file: File,
}

impl Manifest {
    /// Starts the manifest of `dir` afresh, holding `keep` (the entries of
    /// inputs this run skips). Replaced atomically: a kill during this leaves
    /// the old manifest.
    pub fn create(dir: &Path, keep: &[Entry]) -> anyhow::Result<Manifest> {
        let path = dir.join(MANIFEST_NAME);
        let mut text = Vec::new();
        for e in keep {
            serde_json::to_writer(&mut text, e)?;
            text.push(b'\n');
        }
        super::atomic::write_atomic(&path, &text)?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .with_context(|| format!("{}: cannot open for appending", path.display()))?;
        Ok(Manifest { path, file })
    }

    /// Records finished outputs (after their renames are durable), with one
    /// write and one sync; durable when this returns.
    pub fn append(&mut self, entries: &[Entry]) -> anyhow::Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut lines = Vec::new();
        for e in entries {
            serde_json::to_writer(&mut lines, e)?;
            lines.push(b'\n');
        }
        self.file
            .write_all(&lines)
            .and_then(|()| self.file.sync_data())
            .with_context(|| format!("{}: cannot append", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(dir: &Path, name: &str, body: &[u8]) -> Entry {
        std::fs::write(dir.join(name), body).unwrap_or_default();
        Entry {
            fingerprint: Fingerprint { input: name.into(), size: 10, mtime_ns: 7 },
            options: options_hash("mode=lean"),
            output: name.into(),
            output_size: body.len() as u64,
            sessions: 2,
            compacted: 1,
            over_trigger: 0,
            rejected: 0,
            tokens_before: 100,
            tokens_after: 40,
        }
    }

    #[test]
    fn entries_round_trip_and_a_torn_line_is_ignored() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let a = entry(dir.path(), "a.jsonl", b"{}\n");
        let b = entry(dir.path(), "b.jsonl", b"{}\n{}\n");
        let mut m = Manifest::create(dir.path(), std::slice::from_ref(&a))?;
        m.append(std::slice::from_ref(&b))?;
        drop(m);
        // A kill in the middle of an append leaves half a line.
        let mut f = OpenOptions::new().append(true).open(dir.path().join(MANIFEST_NAME))?;
        f.write_all(br#"{"input":"c.jsonl","si"#)?;
        assert_eq!(load(dir.path())?, vec![a, b]);
        Ok(())
    }

    #[test]
    fn an_input_is_finished_only_when_everything_matches() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let e = entry(dir.path(), "a.jsonl", b"{}\n");
        let fp = e.fingerprint.clone();
        let opts = e.options.clone();
        let entries = vec![e];
        assert!(finished(&entries, dir.path(), &fp, &opts).is_some());
        // The input changed (size or mtime), or the options did.
        let bigger = Fingerprint { size: 11, ..fp.clone() };
        assert!(finished(&entries, dir.path(), &bigger, &opts).is_none());
        let touched = Fingerprint { mtime_ns: 8, ..fp.clone() };
        assert!(finished(&entries, dir.path(), &touched, &opts).is_none());
        assert!(finished(&entries, dir.path(), &fp, &options_hash("mode=legacy")).is_none());
        // The output was truncated, then removed.
        std::fs::write(dir.path().join("a.jsonl"), b"{")?;
        assert!(finished(&entries, dir.path(), &fp, &opts).is_none());
        std::fs::remove_file(dir.path().join("a.jsonl"))?;
        assert!(finished(&entries, dir.path(), &fp, &opts).is_none());
        Ok(())
    }

    #[test]
    fn an_option_file_is_known_by_its_contents_not_its_path() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::fs::write(&a, br#"{"x": 1}"#)?;
        std::fs::write(&b, br#"{"x": 1}"#)?;
        assert_eq!(option_file(&a)?, option_file(&b)?);
        std::fs::write(&b, br#"{"x": 2}"#)?;
        assert_ne!(option_file(&a)?, option_file(&b)?);
        let missing = option_file(&dir.path().join("gone.json")).unwrap_err();
        assert!(format!("{missing:#}").contains("gone.json: cannot read"), "{missing:#}");
        Ok(())
    }

    #[test]
    fn a_missing_manifest_is_empty_and_options_hash_is_stable() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        assert!(load(dir.path())?.is_empty());
        assert_eq!(options_hash("x"), options_hash("x"));
        assert_ne!(options_hash("x"), options_hash("y"));
        assert_eq!(options_hash("x").len(), 32);
        Ok(())
    }
}
