//! Test helpers: a temporary directory per test, a command runner, and the
//! file listing, readers and counts the format tests share.

use compactor::formats::Record;
use compactor::model::{Role, Session, Source};
use compactor::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS, Meter};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture path, relative to `fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    root().join("fixtures").join(rel)
}

/// A unique temporary directory, removed when dropped.
pub struct TestDir {
    dir: tempfile::TempDir,
}

impl TestDir {
    pub fn new() -> TestDir {
        TestDir { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, contents).unwrap();
        p
    }
}

/// A `compactor` command.
pub fn compactor() -> Command {
    Command::new(env!("CARGO_BIN_EXE_compactor"))
}

/// Runs `cmd` with `stdin` and returns its output.
pub fn run_with_stdin(mut cmd: Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || pipe.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

/// Runs `cmd`, asserting it exits with `code`.
pub fn run_code(cmd: &mut Command, code: i32) -> Output {
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{cmd:?}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `cmd`, asserting success.
pub fn run_ok(cmd: &mut Command) -> Output {
    run_code(cmd, 0)
}

/// Parses JSON lines.
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `files` input files of two synthetic sessions of about `tokens` tokens each
/// (big enough to compact), as `DIR/in/s00.jsonl`, `s01.jsonl`, ...; returns `DIR/in`.
pub fn synth_inputs(dir: &TestDir, files: usize, tokens: u64) -> PathBuf {
    let (sessions, tokens) = ((2 * files).to_string(), tokens.to_string());
    let synth = run_ok(compactor().args(["synth", "--sessions", &sessions, "--tokens", &tokens]));
    let text = String::from_utf8(synth.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 * files);
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for (k, pair) in lines.chunks(2).enumerate() {
        std::fs::write(input.join(format!("s{k:02}.jsonl")), pair.join("\n") + "\n").unwrap();
    }
    input
}

/// Every file under `dir`, at any depth, whose name ends with `suffix` (`""`
/// matches every file), sorted by path. Panics if `dir` cannot be read.
pub fn files_under(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(suffix)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A JSON file, parsed as one document.
pub fn read_document(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The lines of a JSONL file as records, numbered like the reader numbers them:
/// blank lines are skipped, and each record's `Source` holds the 1-based number
/// of its physical line.
pub fn line_records(path: &Path) -> Vec<Record> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| Record {
            source: Source {
                path: path.display().to_string(),
                line: Some(i as u64 + 1),
                index: None,
            },
            value: serde_json::from_str(l).unwrap(),
        })
        .collect()
}

/// A session's messages, tool calls, and tool results that answer a call (a
/// `tool` message with a `tool_call_id`).
pub fn session_counts(s: &Session) -> (usize, usize, usize) {
    let calls = s.messages.iter().map(|m| m.tool_calls.len()).sum();
    let results =
        s.messages.iter().filter(|m| m.role == Role::Tool && m.tool_call_id.is_some()).count();
    (s.messages.len(), calls, results)
}

/// The token meter the tests compact with: o200k, default image cost.
pub fn o200k_meter() -> Meter {
    Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS)
}

/// `got` against the golden file `want`; with `UPDATE_GOLDEN` set, `got`
/// becomes the golden file instead (review the diff).
pub fn assert_golden(want: &Path, got: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(want, got).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(want)
        .unwrap_or_else(|_| panic!("{} is missing: run with UPDATE_GOLDEN=1", want.display()));
    eqnice!(expected, got);
}
