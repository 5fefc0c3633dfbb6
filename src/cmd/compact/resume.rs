//! `compact --resume` and the manifest behind it: with `-o DIR/`, every
//! finished output file is recorded in `DIR/.compactor-manifest.jsonl` with
//! its input's size and mtime and the options hash; a later run with the same
//! options skips the inputs recorded there.

use crate::cli::config::Files;
use compactor::io::Input;
use compactor::io::manifest::{self, Fingerprint, Manifest};
use compactor::io::output::Target;
use compactor::report::RunSummary;
use std::path::{Path, PathBuf};

/// The inputs a run has to do, and the manifest it keeps (directory outputs only).
pub struct Resume {
    /// Inputs to read, in order (the caller takes them).
    pub todo: Vec<Input>,
    /// Their fingerprints (`None` for standard input, which is never skipped).
    fingerprints: Vec<Option<Fingerprint>>,
    /// Entries of the inputs skipped as finished.
    pub skipped: Vec<manifest::Entry>,
    options: String,
    manifest: Option<Manifest>,
}

impl Resume {
    /// Decides which inputs to skip (`--resume`) and starts the manifest.
    pub fn start(files: &Files) -> anyhow::Result<Resume> {
        let options = manifest::options_hash(&files.options);
        let inputs = files.inputs.clone();
        let Target::Dir(dir) = &files.target else {
            let fingerprints = vec![None; inputs.len()];
            return Ok(Resume {
                todo: inputs,
                fingerprints,
                skipped: Vec::new(),
                options,
                manifest: None,
            });
        };
        let old = if files.resume { manifest::load(dir)? } else { Vec::new() };
        let (mut todo, mut fingerprints, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
        for input in inputs {
            let fp = input.path.as_deref().and_then(|p| Fingerprint::of(p, &input.relative).ok());
            match fp.as_ref().and_then(|fp| manifest::finished(&old, dir, fp, &options)) {
                Some(entry) => skipped.push(entry.clone()),
                None => {
                    todo.push(input);
                    fingerprints.push(fp);
                }
            }
        }
        let manifest = Some(Manifest::create(dir, &skipped)?);
        Ok(Resume { todo, fingerprints, skipped, options, manifest })
    }

    /// Appends finished outputs (after their renames are durable) of the
    /// inputs to do, each `(input, output, totals)`, to the manifest, synced once.
    pub fn record(
        &mut self,
        dir: &Path,
        finished: &[(usize, PathBuf, RunSummary)],
    ) -> anyhow::Result<()> {
        let Some(m) = self.manifest.as_mut() else { return Ok(()) };
        let mut entries = Vec::with_capacity(finished.len());
        for (input, output, totals) in finished {
            let Some(fingerprint) = self.fingerprints[*input].clone() else { continue };
            let output_size = std::fs::metadata(output)?.len();
            let output = output.strip_prefix(dir).unwrap_or(output).to_string_lossy().into_owned();
            entries.push(manifest::Entry {
                fingerprint,
                options: self.options.clone(),
                output,
                output_size,
                sessions: totals.sessions,
                compacted: totals.compacted,
                over_trigger: totals.over_trigger,
                rejected: totals.rejected,
                tokens_before: totals.tokens_before,
                tokens_after: totals.tokens_after,
            });
        }
        m.append(&entries)
    }
}
