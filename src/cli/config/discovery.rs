//! The inputs of a command run without INPUT: the session logs in the
//! agents' own folders ([`compactor::discover`]), found from this process's
//! environment once, and named on stderr (unless `-q`) with how many files
//! each holds.

use anyhow::bail;
use compactor::discover::{Env, folders, session_files};
use compactor::io::Input;
use std::path::PathBuf;

/// The environment discovery reads: `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, and
/// the home folder (`HOME`, else `USERPROFILE`).
fn env() -> Env {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    Env {
        claude_config_dir: var("CLAUDE_CONFIG_DIR"),
        codex_home: var("CODEX_HOME"),
        home: var("HOME").or_else(|| var("USERPROFILE")).map(PathBuf::from),
    }
}

/// What discovery found: every session log, and the folders that held them.
pub struct Found {
    pub inputs: Vec<Input>,
    pub folders: Vec<PathBuf>,
}

/// Every session log of the folders that exist, Claude Code's first; an
/// error (exit 2) when no folder exists or none holds a log. `quiet` keeps
/// the folders read off stderr.
pub fn inputs(quiet: bool) -> anyhow::Result<Found> {
    let candidates = folders(&env());
    if candidates.is_empty() {
        bail!(
            "no INPUT given, and no folder to look in: HOME, CLAUDE_CONFIG_DIR and CODEX_HOME are unset\nhint: give the files or directories to read"
        );
    }
    let mut lines = Vec::new();
    let mut inputs = Vec::new();
    let mut read = Vec::new();
    for folder in &candidates {
        let Some(files) =
            session_files(folder).map_err(|e| anyhow::anyhow!("{}: {e}", folder.path.display()))?
        else {
            continue;
        };
        let plural = if files.len() == 1 { "" } else { "s" };
        lines.push(format!(
            "  {}: {} {} session file{plural}",
            folder.path.display(),
            compactor::figures::thousands(files.len() as u64),
            folder.agent.label()
        ));
        inputs.extend(files);
        read.push(folder.path.clone());
    }
    let looked: Vec<String> = candidates.iter().map(|f| f.path.display().to_string()).collect();
    if lines.is_empty() {
        bail!(
            "no INPUT given, and none of the agents' log folders exists (looked for {})\nhint: give the files or directories to read, or set CLAUDE_CONFIG_DIR / CODEX_HOME",
            looked.join(", ")
        );
    }
    if inputs.is_empty() {
        bail!(
            "no INPUT given, and the agents' log folders hold no session file:\n{}",
            lines.join("\n")
        );
    }
    if !quiet {
        eprintln!(
            "compactor: no INPUT given; reading the agents' own log folders:\n{}",
            lines.join("\n")
        );
    }
    Ok(Found { inputs, folders: read })
}
