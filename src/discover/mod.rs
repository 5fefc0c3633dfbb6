//! Where the agents keep their own logs, for commands run without an INPUT.
//!
//! ## Folders
//! - Claude Code: `projects/` under each entry of `$CLAUDE_CONFIG_DIR` (Claude
//!   Code reads it as a comma-separated list of configuration folders); when it
//!   is unset, `~/.config/claude/projects` and `~/.claude/projects` (the newer
//!   and the older default). Sessions are `projects/<encoded cwd>/<uuid>.jsonl`:
//!   the `.jsonl` files one folder down are read. Deeper files (newer versions'
//!   `<uuid>/subagents/agent-*.jsonl`) are not: a run without INPUT reads the
//!   sessions a person started. Named as an INPUT (the file or its folder), a
//!   sub-agent log reads as a session of its own, its sidechain its
//!   conversation (README, Subagents).
//! - Codex: `$CODEX_HOME/sessions`, else `~/.codex/sessions`. Sessions are
//!   `sessions/YYYY/MM/DD/rollout-*.jsonl`: only `rollout-*.jsonl` files are read.
//!
//! A folder that does not exist is skipped; the caller decides what to say when
//! none does. Files come in path order (byte order of their names, folder by
//! folder), so a run over the same folders reads them in the same order.
//!
//! The environment is given as an [`Env`], so that the rules are testable; the
//! binary builds it from the process's environment once per run.
//!
//! [`facts`]: what a log says of its session (model, project, day).

pub mod facts;

use crate::io::Input;
use std::path::{Path, PathBuf};

/// What discovery reads from the environment.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `$CLAUDE_CONFIG_DIR`, as set (possibly a comma-separated list).
    pub claude_config_dir: Option<String>,
    /// `$CODEX_HOME`.
    pub codex_home: Option<String>,
    /// The home folder (`$HOME`, else `%USERPROFILE%`).
    pub home: Option<PathBuf>,
}

/// Whose logs a folder holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
}

impl Agent {
    /// How messages name it.
    pub fn label(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
        }
    }

    /// The folder its files go under in `relative` names (`replay --write-final DIR`).
    fn prefix(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
        }
    }

    /// Returns true if and only if a file of this name, `depth` folders below
    /// the agent's folder, is one of its session logs.
    fn is_log(self, name: &str, depth: usize) -> bool {
        match self {
            Agent::ClaudeCode => depth == 1 && name.ends_with(".jsonl"),
            Agent::Codex => name.starts_with("rollout-") && name.ends_with(".jsonl"),
        }
    }
}

/// A folder where an agent keeps its logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folder {
    pub agent: Agent,
    pub path: PathBuf,
}

/// The folders to look in, in order: Claude Code's, then Codex's. Duplicates
/// (the same path named twice) are listed once.
pub fn folders(env: &Env) -> Vec<Folder> {
    let mut out: Vec<Folder> = Vec::new();
    let mut push = |agent, path: PathBuf| {
        if !out.iter().any(|f| f.path == path) {
            out.push(Folder { agent, path });
        }
    };
    let claude_dirs: Vec<&str> = env
        .claude_config_dir
        .as_deref()
        .map(|v| v.split(',').map(str::trim).filter(|d| !d.is_empty()).collect())
        .unwrap_or_default();
    if claude_dirs.is_empty() {
        if let Some(home) = &env.home {
            push(Agent::ClaudeCode, home.join(".config").join("claude").join("projects"));
            push(Agent::ClaudeCode, home.join(".claude").join("projects"));
        }
    } else {
        for d in claude_dirs {
            push(Agent::ClaudeCode, Path::new(d).join("projects"));
        }
    }
    match env.codex_home.as_deref().filter(|d| !d.is_empty()) {
        Some(d) => push(Agent::Codex, Path::new(d).join("sessions")),
        None => {
            if let Some(home) = &env.home {
                push(Agent::Codex, home.join(".codex").join("sessions"));
            }
        }
    }
    out
}

/// The session logs under `folder`, in path order; `None` when it is not a directory.
pub fn session_files(folder: &Folder) -> std::io::Result<Option<Vec<Input>>> {
    if !folder.path.is_dir() {
        return Ok(None);
    }
    let mut out = Vec::new();
    walk(folder, &folder.path, 0, &mut out)?;
    Ok(Some(out))
}

fn walk(folder: &Folder, dir: &Path, depth: usize, out: &mut Vec<Input>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        // `metadata` follows symbolic links, as the INPUT walk does.
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() {
            walk(folder, &path, depth + 1, out)?;
        } else if meta.is_file() && folder.agent.is_log(&e.file_name().to_string_lossy(), depth) {
            let below = path.strip_prefix(&folder.path).unwrap_or(&path);
            out.push(Input {
                display: path.display().to_string(),
                relative: Path::new(folder.agent.prefix()).join(below),
                path: Some(path),
                walked: true,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(claude: Option<&str>, codex: Option<&str>, home: Option<&str>) -> Env {
        Env {
            claude_config_dir: claude.map(str::to_string),
            codex_home: codex.map(str::to_string),
            home: home.map(PathBuf::from),
        }
    }

    fn paths(f: &[Folder]) -> Vec<String> {
        f.iter().map(|f| f.path.display().to_string()).collect()
    }

    /// Makes the empty `files` under `root` and lists, by relative name, the
    /// session files `agent`'s folder there holds.
    fn relative_session_files(
        agent: Agent,
        root: &Path,
        files: &[&str],
    ) -> std::io::Result<Vec<String>> {
        for p in files {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap_or(root))?;
            std::fs::write(p, "")?;
        }
        let folder = Folder { agent, path: root.to_path_buf() };
        let found = session_files(&folder)?.unwrap_or_default();
        Ok(found.iter().map(|i| i.relative.display().to_string()).collect())
    }

    #[test]
    fn home_defaults() {
        let f = folders(&env(None, None, Some("/h")));
        assert_eq!(
            paths(&f),
            ["/h/.config/claude/projects", "/h/.claude/projects", "/h/.codex/sessions"]
        );
        assert_eq!(f[2].agent, Agent::Codex);
    }

    #[test]
    fn claude_config_dir_is_a_comma_separated_list_replacing_the_defaults() {
        let f = folders(&env(Some("/a, /b,,/a"), Some("/c"), Some("/h")));
        assert_eq!(paths(&f), ["/a/projects", "/b/projects", "/c/sessions"]);
    }

    #[test]
    fn no_home_and_no_variables_is_no_folder() {
        assert!(folders(&env(None, None, None)).is_empty());
        assert!(folders(&env(Some(""), Some(""), None)).is_empty());
    }

    #[test]
    fn codex_reads_only_rollout_files_in_path_order() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().join("sessions");
        let files =
            ["2026/03/28/rollout-b.jsonl", "2026/03/27/rollout-a.jsonl", "2026/03/27/x.jsonl"];
        let rel = relative_session_files(Agent::Codex, &root, &files)?;
        assert_eq!(rel, ["codex/2026/03/27/rollout-a.jsonl", "codex/2026/03/28/rollout-b.jsonl"]);
        let missing = Folder { agent: Agent::Codex, path: dir.path().join("nope") };
        assert!(session_files(&missing)?.is_none());
        Ok(())
    }

    #[test]
    fn claude_code_reads_the_project_folders_not_sub_agent_logs() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().join("projects");
        let files =
            ["-p-a/u1.jsonl", "-p-a/u1/subagents/agent-1.jsonl", "top.jsonl", "-p-b/u2.jsonl"];
        let rel = relative_session_files(Agent::ClaudeCode, &root, &files)?;
        assert_eq!(rel, ["claude-code/-p-a/u1.jsonl", "claude-code/-p-b/u2.jsonl"]);
        Ok(())
    }
}
