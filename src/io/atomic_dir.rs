//! A directory replaced as one unit: its new content is written into a
//! temporary directory beside it, synced, and swapped in by one rename.
//!
//! What: [`replace_dir`] gives `target` exactly the files `fill` writes; no
//! file of the previous content stays (a baseline's old `report.md` beside
//! new figures was the bug this fixes, issue 41).
//!
//! Why one rename: a reader of `target` (a CI job, `check`) sees the old
//! directory or the new one, never a mix. POSIX `rename` cannot replace a
//! non-empty directory, so on Linux and macOS the swap is `renameat2`'s
//! `RENAME_EXCHANGE` (`renamex_np`'s `RENAME_SWAP`), which exchanges the two
//! names atomically; the old content, now under the temporary name, is then
//! deleted. Where the exchange is not available (another system, or a file
//! system that refuses it) the old directory is first renamed aside and the
//! new one renamed in: between the two renames `target` is absent, and a
//! failure there leaves both directories, named in the error.
//!
//! Example: `replace_dir(Path::new(".ci/baseline"), |d| write(d.join("summary.json"), ..))`.
//!
//! Invariants: `fill` writes into an empty directory on the same file system
//! as `target`; on any error before the swap, `target` is untouched and the
//! temporary directory is removed; the new files and the directory entries
//! are fsynced before and after the swap. A leaf: files, not sessions.

use super::atomic::{sync_dir, temp_place};
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Replaces the directory `target` (created if absent) by what `fill` writes
/// into the empty directory it is given.
pub fn replace_dir(
    target: &Path,
    fill: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    // A symbolic link is followed: the directory it names is replaced.
    let target = match std::fs::canonicalize(target) {
        Ok(real) => real,
        Err(_) => target.to_path_buf(),
    };
    if target.exists() && !target.is_dir() {
        anyhow::bail!("{}: not a directory; cannot replace it by one", target.display());
    }
    let (parent, prefix) = temp_place(&target)?;
    let temp =
        tempfile::Builder::new().prefix(&prefix).suffix(".new").tempdir_in(&parent).with_context(
            || format!("{}: cannot create a temporary directory", parent.display()),
        )?;
    fill(temp.path())?;
    sync_files(temp.path())?;
    set_mode_like(temp.path(), &target);
    sync_dir(temp.path());
    if !target.exists() {
        let path = temp.keep();
        std::fs::rename(&path, &target).with_context(|| {
            format!("{}: cannot rename {} into place", target.display(), path.display())
        })?;
        sync_dir(&parent);
        return Ok(());
    }
    let path = temp.keep();
    match exchange(&path, &target) {
        // `path` now names the old content.
        Ok(()) => {}
        Err(_) => swap_by_two_renames(&path, &target)?,
    }
    sync_dir(&parent);
    std::fs::remove_dir_all(&path).with_context(|| {
        format!(
            "{}: replaced; the previous content is left in {}",
            target.display(),
            path.display()
        )
    })?;
    sync_dir(&parent);
    Ok(())
}

/// Fsyncs every file directly in `dir`.
fn sync_files(dir: &Path) -> anyhow::Result<()> {
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot read", dir.display()))?
    {
        let path = entry?.path();
        if path.is_file() {
            std::fs::File::open(&path)
                .and_then(|f| f.sync_all())
                .with_context(|| format!("{}: fsync failed", path.display()))?;
        }
    }
    Ok(())
}

/// Gives the new directory the old one's permissions (temporary directories
/// are private), or an ordinary directory's when there is no old one.
fn set_mode_like(new: &Path, old: &Path) {
    let perms = std::fs::metadata(old).map(|m| m.permissions());
    #[cfg(unix)]
    let perms = perms.or_else(|_| {
        use std::os::unix::fs::PermissionsExt;
        Ok::<_, std::io::Error>(std::fs::Permissions::from_mode(0o755))
    });
    if let Ok(p) = perms {
        let _ = std::fs::set_permissions(new, p);
    }
}

/// Exchanges the names `a` and `b` in one step.
#[cfg(any(target_os = "linux", target_os = "macos"))]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(std::io::Error::from)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// The fallback swap: `target` aside to `new`'s name plus `.old`, `new` in,
/// then the old content under `new`'s name (as an exchange leaves it).
fn swap_by_two_renames(new: &Path, target: &Path) -> anyhow::Result<()> {
    let mut aside = new.as_os_str().to_os_string();
    aside.push(".old");
    let aside = PathBuf::from(aside);
    std::fs::rename(target, &aside).with_context(|| {
        format!("{}: cannot move aside (the new content is in {})", target.display(), new.display())
    })?;
    if let Err(e) = std::fs::rename(new, target) {
        let back = std::fs::rename(&aside, target);
        return Err(anyhow::anyhow!(
            "{}: cannot rename {} into place: {e}{}",
            target.display(),
            new.display(),
            match back {
                Ok(()) => String::new(),
                Err(_) => format!("; the previous content is in {}", aside.display()),
            }
        ));
    }
    std::fs::rename(&aside, new).with_context(|| {
        format!(
            "{}: replaced; the previous content is left in {}",
            target.display(),
            aside.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                let text =
                    if p.is_file() { std::fs::read_to_string(&p).unwrap() } else { "/".into() };
                (name, text)
            })
            .collect();
        v.sort();
        v
    }

    fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    #[test]
    fn the_whole_directory_is_replaced_and_nothing_stale_or_temporary_stays() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("baseline");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("summary.json"), "old").unwrap();
        std::fs::write(target.join("report.md"), "stale").unwrap();
        replace_dir(&target, |d| {
            std::fs::write(d.join("summary.json"), "new")?;
            std::fs::write(d.join("sessions.jsonl"), "rows")?;
            Ok(())
        })
        .unwrap();
        assert_eq!(listing(&target), [pair("sessions.jsonl", "rows"), pair("summary.json", "new")]);
        assert_eq!(listing(root.path()), [pair("baseline", "/")], "no temporary left beside it");
    }

    #[test]
    fn an_absent_directory_is_created_and_a_failed_fill_changes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("a/b");
        replace_dir(&target, |d| Ok(std::fs::write(d.join("x"), "1")?)).unwrap();
        assert_eq!(listing(&target), [pair("x", "1")]);
        let err = replace_dir(&target, |d| {
            std::fs::write(d.join("y"), "2")?;
            anyhow::bail!("disk full")
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(listing(&target), [pair("x", "1")], "untouched");
        assert_eq!(listing(&root.path().join("a")), [pair("b", "/")], "temporary removed");
    }

    #[test]
    fn the_fallback_swap_leaves_the_same_result() {
        let root = tempfile::tempdir().unwrap();
        let (target, new) = (root.path().join("t"), root.path().join(".t.1.new"));
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("old"), "o").unwrap();
        std::fs::create_dir(&new).unwrap();
        std::fs::write(new.join("fresh"), "f").unwrap();
        swap_by_two_renames(&new, &target).unwrap();
        assert_eq!(listing(&target), [pair("fresh", "f")]);
        assert_eq!(listing(&new), [pair("old", "o")], "the old content under the temporary name");
    }

    #[test]
    fn a_file_is_not_replaced_by_a_directory() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("summary.json");
        std::fs::write(&file, "{}").unwrap();
        let err = replace_dir(&file, |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{}");
    }
}
