//! Atomic outputs: write to a temporary file beside the target, fsync, rename.
//!
//! A reader of the final name sees either nothing (or the previous file) or a
//! complete new file, never a partial one: an interrupted run leaves only a
//! temporary file, which `tempfile` deletes when it is dropped.
//!
//! A leaf: it knows files, not sessions, and every output of the crate
//! (sessions, Parquet, Arrow IPC, reports, rejects) goes through it.

use anyhow::Context;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file written under a temporary name and renamed into place by [`AtomicFile::commit`].
///
/// A target that already exists and is not a regular file (`/dev/null`, a FIFO,
/// `/dev/stdout`) is written straight through instead: renaming over it would
/// replace the device with a plain file, which for `/dev/null` breaks every
/// other program on the machine.
pub struct AtomicFile {
    target: PathBuf,
    inner: Inner,
}

enum Inner {
    Temp(tempfile::NamedTempFile),
    Special(File),
}

/// Whether `path` exists and is something other than a regular file or a
/// directory (a character device, a FIFO, a socket), following symlinks.
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).map(|m| !m.is_file() && !m.is_dir()).unwrap_or(false)
}

/// Where a temporary stand-in for `target` goes: `target`'s directory
/// (created if absent; `.` for a bare name) and the stand-in's name prefix,
/// `.NAME.`, so that it is hidden and says what it replaces.
pub(super) fn temp_place(target: &Path) -> anyhow::Result<(PathBuf, String)> {
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("{}: cannot create directory", dir.display()))?;
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok((dir, format!(".{name}.")))
}

impl AtomicFile {
    pub fn create(target: &Path) -> anyhow::Result<AtomicFile> {
        if is_special(target) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(target)
                .with_context(|| format!("{}: cannot open for writing", target.display()))?;
            return Ok(AtomicFile { target: target.to_path_buf(), inner: Inner::Special(file) });
        }
        let (dir, prefix) = temp_place(target)?;
        let temp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .tempfile_in(&dir)
            .with_context(|| format!("{}: cannot create a temporary file", dir.display()))?;
        Ok(AtomicFile { target: target.to_path_buf(), inner: Inner::Temp(temp) })
    }

    pub fn file(&mut self) -> &mut File {
        match &mut self.inner {
            Inner::Temp(t) => t.as_file_mut(),
            Inner::Special(f) => f,
        }
    }

    /// Flushes to disk and moves the file to its final name.
    pub fn commit(self) -> anyhow::Result<()> {
        self.sync()?;
        let dir = self.rename()?;
        sync_dir(&dir);
        Ok(())
    }

    /// The final name.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes the file's content to disk, still under its temporary name
    /// (the first half of [`AtomicFile::commit`]).
    pub fn sync(&self) -> anyhow::Result<()> {
        let temp = match &self.inner {
            Inner::Temp(t) => t,
            Inner::Special(f) => {
                return (&*f)
                    .flush()
                    .with_context(|| format!("{}: write failed", self.target.display()));
            }
        };
        // Temporary files are created private (0600); a finished output is an
        // ordinary file, readable like any other the user writes.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = temp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644));
        }
        temp.as_file()
            .sync_all()
            .with_context(|| format!("{}: fsync failed", self.target.display()))
    }

    /// Moves the file to its final name (after [`AtomicFile::sync`]) and
    /// returns the directory whose entry changed, which must be synced for
    /// the rename to be durable.
    pub fn rename(self) -> anyhow::Result<PathBuf> {
        let dir = match self.target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if let Inner::Temp(temp) = self.inner {
            temp.persist(&self.target).map_err(|e| {
                anyhow::anyhow!("{}: cannot rename into place: {}", self.target.display(), e.error)
            })?;
        }
        Ok(dir)
    }
}

/// Makes the renames inside `dir` durable. Best effort: some file systems
/// refuse to open or sync a directory.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.file().write_all(bytes).with_context(|| format!("{}: write failed", path.display()))?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_appears_whole_at_commit_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub").join("o.txt");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"one ").unwrap();
        f.write_all(b"two").unwrap();
        assert!(!p.exists(), "nothing under the final name before commit");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o644);
        }
        assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn a_dropped_file_leaves_the_previous_one_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("o.txt");
        write_atomic(&p, b"old").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"new, never committed").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_atomic(&p, b"replaced").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"replaced");
    }
}
