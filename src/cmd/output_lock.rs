//! The lock a run holds on its output (`compactor::io::lock`), taken before
//! anything is written there, with the refusal a second run prints.

use compactor::io::lock::{LockError, OutputLock, dir_lock_path, file_lock_path};
use compactor::io::output::Target;

/// Locks the output `target` (shown as `shown` in messages) for this run:
/// `None` for standard output and special files (`-o /dev/null`), which
/// nothing can mix. A held lock is an error naming its holder (exit 2).
pub fn lock(target: &Target, shown: &str) -> anyhow::Result<Option<OutputLock>> {
    let path = match target {
        Target::Stdout => return Ok(None),
        Target::Dir(dir) => dir_lock_path(dir),
        Target::File(file) => {
            let special = std::fs::metadata(file).is_ok_and(|m| !m.is_file() && !m.is_dir());
            if special {
                return Ok(None);
            }
            file_lock_path(file)
        }
    };
    match OutputLock::acquire(&path, &command_line()) {
        Ok(lock) => Ok(Some(lock)),
        Err(LockError::Held(Some(holder))) => {
            anyhow::bail!("{shown} is being written by another compactor run ({holder})")
        }
        Err(LockError::Held(None)) => anyhow::bail!(
            "{shown} is being written by another compactor run (it holds {})",
            path.display()
        ),
        // A file system without locks (some network mounts): run unguarded, saying so.
        Err(LockError::Io { error, .. }) if error.kind() == std::io::ErrorKind::Unsupported => {
            eprintln!(
                "compactor: warning: {}: this file system cannot lock files; nothing keeps a \
                 second run from writing {shown} at the same time",
                path.display()
            );
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// This run's command line, for the lock file: the program's name, then its
/// arguments (quoted where they hold a space), masked like anything else
/// written (a key pasted into `--summarizer-cmd` stays out of it).
fn command_line() -> String {
    let mut args = std::env::args_os();
    let program = args
        .next()
        .map(|p| {
            std::path::Path::new(&p).file_name().map_or_else(
                || p.to_string_lossy().into_owned(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .unwrap_or_else(|| "compactor".into());
    let mut words = vec![program];
    for arg in args {
        let arg = arg.to_string_lossy().into_owned();
        words.push(if arg.is_empty() || arg.contains(char::is_whitespace) {
            format!("'{arg}'")
        } else {
            arg
        });
    }
    let line = words.join(" ");
    compactor::redact::redact(&line, &mut compactor::redact::Masked::new()).into_owned()
}
