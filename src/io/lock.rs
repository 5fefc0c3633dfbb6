//! The output lock: one run at a time writes an output.
//!
//! Two `compact ... -o DIR/` runs into one directory would both exit 0 and
//! leave a directory of files of both runs under one run's manifest (issue
//! 36). So a run takes an advisory lock ([`File::try_lock`], `flock` on Unix)
//! on a lock file of its output for its whole length: `DIR/.compactor-lock`
//! for a directory, `.NAME.compactor-lock` beside a file `NAME`. A second run
//! finds it held and is refused, naming the holder, whose pid and command
//! line the lock file holds.
//!
//! The lock belongs to the open file, not to the file's existence: the
//! operating system releases it when its process ends, however it ends, so a
//! run after a killed one (whose lock file is left behind) takes the lock
//! and goes on. A run that ends normally removes its lock file while still
//! holding the lock; a run that opened the file just before that finds, once
//! it holds the lock, that the name no longer leads to its file, and starts
//! again with a fresh one.
//!
//! A lock that had to make its output directory removes it again when it is
//! dropped with the directory still empty: a run refused or failed before it
//! wrote anything leaves nothing behind.
//!
//! The lock files start with a dot, like the manifest: a later run reading
//! the output directory as input skips them, and `--resume` never sees them.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside a directory output.
pub const DIR_LOCK_NAME: &str = ".compactor-lock";

/// The suffix of a single-file output's lock file: `.NAME.compactor-lock`.
const FILE_LOCK_SUFFIX: &str = ".compactor-lock";

/// Times a run starts over when the lock file it locked was removed under it.
const RETRIES: usize = 8;

/// How long a refused run waits, in all, for the holder to have written its
/// name into a lock file it has only just taken.
const HOLDER_WAIT_MS: u64 = 200;

/// Who holds a lock: what the lock file says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    /// The holder's command line, as its caller described it.
    pub command: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {}: {}", self.pid, self.command)
    }
}

/// Why a lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it (`None`: it has not yet written who it is).
    #[error("held by another process")]
    Held(Option<Holder>),
    /// `path` could not be made, opened or locked (`what`).
    #[error("{}: {what}: {error}", path.display())]
    Io { path: PathBuf, what: &'static str, error: io::Error },
}

/// The lock file of a directory output.
pub fn dir_lock_path(dir: &Path) -> PathBuf {
    dir.join(DIR_LOCK_NAME)
}

/// The lock file of a single-file output: `.NAME.compactor-lock` beside it,
/// never the output itself.
pub fn file_lock_path(file: &Path) -> PathBuf {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    file.with_file_name(format!(".{name}{FILE_LOCK_SUFFIX}"))
}

/// A held output lock; released (and its file removed) when dropped.
#[derive(Debug)]
pub struct OutputLock {
    path: PathBuf,
    /// The directories made for the lock file, outermost first: removed
    /// again on drop while they are empty.
    made: Vec<PathBuf>,
    /// The open lock file, whose lock this is: closed, so unlocked, on drop.
    _file: File,
}

impl OutputLock {
    /// Takes the lock at `path` (creating the file and its directory), and
    /// writes this process's id and `command` into it for a refused run to name.
    pub fn acquire(path: &Path, command: &str) -> Result<OutputLock, LockError> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        // The directories this lock makes, outermost first.
        let mut made: Vec<PathBuf> = dir
            .into_iter()
            .flat_map(Path::ancestors)
            .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
            .map(Path::to_path_buf)
            .collect();
        made.reverse();
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir).map_err(|error| LockError::Io {
                path: dir.to_path_buf(),
                what: "cannot create directory",
                error,
            })?;
        }
        match OutputLock::take(path, command) {
            Ok(file) => Ok(OutputLock { path: path.to_path_buf(), made, _file: file }),
            Err(e) => {
                remove_empty(&made);
                Err(e)
            }
        }
    }

    /// Opens, locks and writes the lock file at `path`, whose directory is there.
    fn take(path: &Path, command: &str) -> Result<File, LockError> {
        let io_err = |what| move |error| LockError::Io { path: path.to_path_buf(), what, error };
        for _ in 0..RETRIES {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(io_err("cannot create the lock file"))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Err(LockError::Held(holder(&mut file))),
                Err(TryLockError::Error(e)) => return Err(io_err("cannot lock")(e)),
            }
            if !still_named(path, &file) {
                continue; // removed by the run that held it: start again
            }
            let holder = Holder { pid: std::process::id(), command: command.to_string() };
            let text = serde_json::to_vec(&holder).map_err(|e| io_err("cannot write")(e.into()))?;
            file.set_len(0).and_then(|()| file.write_all(&text)).map_err(io_err("cannot write"))?;
            return Ok(file);
        }
        Err(io_err("cannot lock")(io::Error::other("the lock file keeps being replaced")))
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still held (the file closes after this), so that a run
        // waiting on the old file sees it gone; best effort.
        let _ = std::fs::remove_file(&self.path);
        remove_empty(&self.made);
    }
}

/// Removes the directories `made` (outermost first) that are empty, deepest
/// first, stopping at the first that is not.
fn remove_empty(made: &[PathBuf]) {
    for dir in made.iter().rev() {
        if std::fs::remove_dir(dir).is_err() {
            return;
        }
    }
}

/// Returns true if and only if `path` still names `file` (it was not removed
/// or replaced between opening and locking).
fn still_named(path: &Path, file: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(path), file.metadata()) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.exists()
    }
}

/// Who holds the lock on `file`, as it says; a holder that has only just
/// taken it is given a moment to write its name.
fn holder(file: &mut File) -> Option<Holder> {
    let step = std::time::Duration::from_millis(10);
    for _ in 0..HOLDER_WAIT_MS / 10 {
        let mut text = Vec::new();
        if file.rewind().and_then(|()| file.read_to_end(&mut text)).is_ok()
            && let Ok(h) = serde_json::from_slice::<Holder>(&text)
        {
            return Some(h);
        }
        std::thread::sleep(step);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir_lock_path(&dir.path().join("out"));
        let first = OutputLock::acquire(&path, "compactor compact a -o out/").unwrap();
        match OutputLock::acquire(&path, "compactor compact b -o out/") {
            Err(LockError::Held(Some(h))) => {
                assert_eq!(h.pid, std::process::id());
                assert_eq!(h.to_string(), format!("pid {}: compactor compact a -o out/", h.pid));
            }
            other => panic!("not refused: {other:?}"),
        }
        drop(first);
        assert!(!path.exists(), "a finished run leaves no lock file");
        let again = OutputLock::acquire(&path, "compactor compact b -o out/").unwrap();
        assert!(path.exists());
        drop(again);
    }

    #[test]
    fn a_directory_made_for_the_lock_goes_with_it_while_empty() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a/b/out");
        drop(OutputLock::acquire(&dir_lock_path(&out), "run").unwrap());
        assert!(!dir.path().join("a").exists(), "nothing is left of a run that wrote nothing");
        let lock = OutputLock::acquire(&dir_lock_path(&out), "run").unwrap();
        std::fs::write(out.join("s.jsonl"), "{}\n").unwrap();
        drop(lock);
        assert!(out.join("s.jsonl").exists(), "a directory with outputs stays");
        assert!(!dir_lock_path(&out).exists());
    }

    #[test]
    fn a_lock_file_left_behind_unlocked_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".x.compactor-lock");
        std::fs::write(&path, r#"{"pid":1,"command":"a killed run"}"#).unwrap();
        let lock = OutputLock::acquire(&path, "now").unwrap();
        let text = std::fs::read_to_string(lock.path()).unwrap();
        assert_eq!(
            serde_json::from_str::<Holder>(&text).unwrap(),
            Holder { pid: std::process::id(), command: "now".into() }
        );
    }

    #[test]
    fn lock_files_are_dot_files_beside_or_inside_the_output() {
        assert_eq!(
            file_lock_path(Path::new("d/out.jsonl")),
            Path::new("d/.out.jsonl.compactor-lock")
        );
        assert_eq!(file_lock_path(Path::new("out.jsonl")), Path::new(".out.jsonl.compactor-lock"));
        assert_eq!(dir_lock_path(Path::new("d/")), Path::new("d/.compactor-lock"));
    }
}
