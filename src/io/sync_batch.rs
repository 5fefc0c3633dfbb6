//! Many finished output files made durable together.
//!
//! ## What it does
//! Holds output files that are written in full but still under their
//! temporary names until the batch is due ([`BATCH_FILES`] files, or the
//! oldest has waited [`MAX_WAIT`]). [`SyncBatch::commit`] flushes them all to disk (their
//! `fsync`s run in parallel), renames each into place in the order they were
//! pushed, and syncs each directory whose entries changed once.
//!
//! ## Why
//! One output per input (`-o DIR/`) over thousands of small sessions spent its
//! time waiting on the disk: a file `fsync`, a directory `fsync` and a manifest
//! `fsync` per file, one after the other on the writer thread (many small
//! files took many times as long as the same sessions in one file:
//! benches/RESULTS.md, 2026-12-03). On a journalling file system, `fsync`s
//! that wait at the same time share one journal commit: many from several
//! threads finish far sooner than the same one after the other. The caller appends the batch's manifest lines after the commit and
//! syncs the manifest once.
//!
//! ## Invariants
//! - A file appears under its final name only after its content is on disk,
//!   as with [`AtomicFile::commit`]: a reader, a `--resume` and a killed run
//!   see a complete file or none.
//! - A batch that is dropped without [`SyncBatch::commit`] (an interrupted
//!   run) leaves no file: the temporary files are deleted.
//! - Renames happen in push order, on the calling thread.
//! - A file waits at most about [`MAX_WAIT`] (checked as the caller writes),
//!   so a run of large files still records its progress as it goes, and a
//!   run killed later resumes after it.

use super::atomic::{AtomicFile, sync_dir};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Files a batch holds before it asks to be committed.
pub const BATCH_FILES: usize = 128;
/// How long the oldest file may wait before the batch is due: a commit costs
/// about three `fsync` latencies (files in parallel, directory, manifest),
/// a few milliseconds, so this bounds the overhead on large files near 5%.
pub const MAX_WAIT: Duration = Duration::from_millis(100);
/// Threads that wait on `fsync`s at once.
const SYNC_THREADS: usize = 16;

/// Finished files waiting to be made durable and renamed into place.
#[derive(Default)]
pub struct SyncBatch {
    files: Vec<AtomicFile>,
    /// When the oldest waiting file was pushed.
    since: Option<Instant>,
}

impl SyncBatch {
    /// Adds a finished file.
    pub fn push(&mut self, file: AtomicFile) {
        self.since.get_or_insert_with(Instant::now);
        self.files.push(file);
    }

    /// Returns true if and only if the batch should be committed now: it
    /// holds [`BATCH_FILES`] files, or its oldest has waited [`MAX_WAIT`].
    pub fn is_due(&self) -> bool {
        self.files.len() >= BATCH_FILES || self.since.is_some_and(|t| t.elapsed() >= MAX_WAIT)
    }

    /// Returns true if and only if no file waits.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Syncs every file, renames each into place and syncs their directories;
    /// returns the final names, in push order. On an error, no file of the
    /// batch is renamed.
    pub fn commit(&mut self) -> anyhow::Result<Vec<PathBuf>> {
        let files = std::mem::take(&mut self.files);
        self.since = None;
        let chunk = files.len().div_ceil(SYNC_THREADS).max(1);
        std::thread::scope(|scope| {
            let workers: Vec<_> = files
                .chunks(chunk)
                .map(|part| scope.spawn(move || part.iter().try_for_each(AtomicFile::sync)))
                .collect();
            workers.into_iter().try_for_each(|w| {
                w.join().map_err(|_| anyhow::anyhow!("an fsync thread panicked"))?
            })
        })?;
        let mut names = Vec::with_capacity(files.len());
        let mut dirs: Vec<PathBuf> = Vec::new();
        for file in files {
            names.push(file.target().to_path_buf());
            let dir = file.rename()?;
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs.iter().for_each(|d| sync_dir(d));
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn written(path: &std::path::Path, body: &str) -> AtomicFile {
        let mut f = AtomicFile::create(path).unwrap();
        f.file().write_all(body.as_bytes()).unwrap();
        f
    }

    #[test]
    fn files_appear_only_at_commit_in_push_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut batch = SyncBatch::default();
        let names: Vec<PathBuf> =
            (0..40).map(|k| dir.path().join(format!("sub{}/f{k}.jsonl", k % 3))).collect();
        for (k, n) in names.iter().enumerate() {
            batch.push(written(n, &format!("{k}\n")));
        }
        assert!(names.iter().all(|n| !n.exists()), "nothing under a final name before commit");
        assert_eq!(batch.commit().unwrap(), names);
        for (k, n) in names.iter().enumerate() {
            assert_eq!(std::fs::read_to_string(n).unwrap(), format!("{k}\n"));
        }
        assert!(batch.is_empty());
        for sub in 0..3 {
            let entries = std::fs::read_dir(dir.path().join(format!("sub{sub}"))).unwrap();
            assert!(
                entries
                    .map(|e| e.unwrap().file_name())
                    .all(|n| !n.to_string_lossy().ends_with(".tmp"))
            );
        }
    }

    #[test]
    fn a_batch_is_due_when_full_or_old_and_a_dropped_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut batch = SyncBatch::default();
        assert!(!batch.is_due());
        let due = (0..BATCH_FILES)
            .map(|k| {
                batch.push(written(&dir.path().join(format!("{k}")), "x"));
                batch.is_due()
            })
            .collect::<Vec<bool>>();
        assert!(due[BATCH_FILES - 1], "due when full");
        drop(batch);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mut batch = SyncBatch::default();
        batch.push(written(&dir.path().join("one"), "x"));
        std::thread::sleep(MAX_WAIT);
        assert!(batch.is_due(), "due when its oldest file has waited MAX_WAIT");
        batch.commit().unwrap();
        assert!(!batch.is_due());
        drop(batch);
        std::fs::remove_file(dir.path().join("one")).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
