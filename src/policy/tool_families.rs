//! Tool families: which tool is a shell, a file read, a search..., and the
//! one-line description of a call and its result that replaces an old output.
//!
//! ## Why data
//! Every agent names its tools differently (Hermes `terminal`, Claude Code
//! `Bash`, Codex `exec_command`, SWE-agent `str_replace_editor` with a
//! `command` argument). The map from name to family is therefore data
//! (`tool_families.json`, compiled in), and `--tool-families FILE` adds or
//! overrides entries without a rebuild.
//!
//! ## Formats (SPEC 6.2, reference wording)
//! - shell: ``[terminal] ran `CMD` -> exit CODE, N lines output``
//! - read: `[read_file] read PATH from line OFFSET (N,NNN chars)`
//! - write: `[write_file] wrote to PATH (N lines)`
//! - search: `[search_files] content search for 'PATTERN' in PATH -> N matches`
//! - edit: `[patch] MODE in PATH (N,NNN chars result)`
//! - web: `[web_extract] URL (+K more) (N,NNN chars)`; browser: `[NAME] URL (N,NNN chars)`
//! - delegate: `[delegate_task] 'GOAL' (N,NNN chars result)`
//! - other: `[NAME] key=VALUE (N,NNN chars result)`

use super::{more_chars_than, newlines};
use crate::figures::thousands;
use crate::hash::{self, text_key, texts_hash};
use crate::memo::call_args::CallArgs;
use crate::memo::{Memo, budgets};
use crate::model::ToolCall;
use regex::Regex;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

const BUILTIN: &str = include_str!("tool_families.json");

/// Descriptions by the map's texts, the output's hash and length and the
/// call's texts ([`describe_key`]: all a description depends on), a value of
/// [`crate::policy::Caches`]. Stage 2 describes every long result of a
/// session's middle, and `report` compacts it under three summarizing modes
/// and `replay` again at every trigger: each result is described once (its
/// characters and lines counted, its exit code searched). Its budget is in
/// bytes ([`budgets::DESCRIBED`]).
pub(crate) struct Described(Memo<DescribeKey, String>);

impl Described {
    /// An empty memo sized for `reach`.
    pub(crate) fn new(reach: budgets::Reach) -> Described {
        Described(Memo::with_budget(budgets::DESCRIBED.within(reach)))
    }
}

/// (the map's texts, the output's hash and length, the call's name,
/// arguments and fallback name with whether there is a call).
type DescribeKey = (u128, u128, usize, u128);

/// The key of a description of `output` by `families` for `call` under
/// `fallback_name`.
fn describe_key(
    families: &ToolFamilies,
    call: Option<&ToolCall>,
    fallback_name: &str,
    output: &str,
) -> DescribeKey {
    let (hash, len) = text_key(output);
    let texts = [call.map_or("", |c| &c.name), call.map_or("", |c| &c.arguments), fallback_name];
    (families.read_from, hash, len, texts_hash(texts, &[u8::from(call.is_some())]))
}

/// What a tool does, as far as describing it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Shell,
    Read,
    Write,
    Search,
    Edit,
    Web,
    Browser,
    Delegate,
    Other,
}

impl Family {
    /// Past-tense verb used in summaries ("Ran `ls`", "Read src/a.rs").
    pub fn verb(self) -> &'static str {
        match self {
            Family::Shell => "Ran",
            Family::Read => "Read",
            Family::Write => "Wrote",
            Family::Search => "Searched",
            Family::Edit => "Edited",
            Family::Web => "Fetched",
            Family::Browser => "Browsed",
            Family::Delegate => "Delegated",
            Family::Other => "Called",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
enum Entry {
    Family(Family),
    Detailed {
        family: Family,
        #[serde(default)]
        target: Option<String>,
        #[serde(default)]
        mode: Option<String>,
    },
    ByArgument {
        by_argument: String,
        values: BTreeMap<String, Family>,
    },
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
struct FamilyFile {
    #[serde(default)]
    tools: BTreeMap<String, Entry>,
    #[serde(default)]
    prefixes: BTreeMap<String, Family>,
}

/// The resolved family of one call, with the options its entry carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub family: Family,
    /// `content` or `files` for searches.
    pub target: Option<String>,
    /// Edit mode label, when the entry names one.
    pub mode: Option<String>,
}

/// The name → family map.
#[derive(Clone, Debug)]
pub struct ToolFamilies {
    file: FamilyFile,
    /// A hash of the JSON texts the map was read from, in order: the key its
    /// descriptions are remembered under (see [`Described`]). Equal maps read
    /// from different texts only share fewer of them.
    read_from: u128,
}

/// Two maps are equal when their entries are, whatever texts they came from.
impl PartialEq for ToolFamilies {
    fn eq(&self, other: &ToolFamilies) -> bool {
        self.file == other.file
    }
}

impl Default for ToolFamilies {
    fn default() -> Self {
        // The built-in table is compiled in and checked by a test; an error here
        // would be a build defect, so fall back to an empty map rather than panic.
        ToolFamilies {
            file: serde_json::from_str(BUILTIN).unwrap_or_default(),
            read_from: hash::of128(BUILTIN.as_bytes()),
        }
    }
}

impl ToolFamilies {
    /// Adds the entries of a user file (same shape as the built-in one) over the built-in map.
    pub fn extend_from_json(&mut self, text: &str) -> Result<(), String> {
        let extra: FamilyFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        self.file.tools.extend(extra.tools);
        self.file.prefixes.extend(extra.prefixes);
        let mut h = hash::Digest::new();
        h.update(&self.read_from.to_le_bytes());
        h.update(text.as_bytes());
        self.read_from = h.finish128();
        Ok(())
    }

    /// A hash of the JSON texts the map was read from: a key for what is
    /// remembered of results computed with it.
    pub(crate) fn read_from(&self) -> u128 {
        self.read_from
    }

    /// The family of a call to `name` with `args`.
    pub fn resolve(&self, name: &str, args: Option<&Map<String, Value>>) -> Resolved {
        let plain = |family| Resolved { family, target: None, mode: None };
        match self.file.tools.get(name) {
            Some(Entry::Family(f)) => return plain(*f),
            Some(Entry::Detailed { family, target, mode }) => {
                return Resolved { family: *family, target: target.clone(), mode: mode.clone() };
            }
            Some(Entry::ByArgument { by_argument, values }) => {
                let value =
                    args.and_then(|a| a.get(by_argument)).and_then(Value::as_str).unwrap_or("");
                let family = values.get(value).copied().unwrap_or(Family::Other);
                let mode = (family == Family::Edit).then(|| value.to_string());
                return Resolved { family, target: None, mode };
            }
            None => {}
        }
        self.file
            .prefixes
            .iter()
            .filter(|(p, _)| name.starts_with(p.as_str()))
            .max_by_key(|(p, _)| p.len())
            .map_or(plain(Family::Other), |(_, f)| plain(*f))
    }

    /// [`resolve`](Self::resolve) for a call, parsing its arguments only when
    /// its family depends on one of them: anchor extraction resolves the call
    /// of every tool result of a session, and most names need no arguments.
    pub(crate) fn resolve_call(&self, args: &CallArgs, call: &ToolCall) -> Resolved {
        match self.file.tools.get(&call.name) {
            Some(Entry::ByArgument { .. }) => {
                self.resolve(&call.name, args.parsed(&call.arguments).as_deref())
            }
            _ => self.resolve(&call.name, None),
        }
    }

    /// The one-line description of a call and its (long) result, remembered
    /// in `memo` (`args`: where the call's arguments are parsed).
    pub(crate) fn describe(
        &self,
        memo: &Described,
        args: &CallArgs,
        call: Option<&ToolCall>,
        fallback_name: &str,
        output: &str,
    ) -> String {
        let key = describe_key(self, call, fallback_name, output);
        let cost = |line: &String| line.len() + 96;
        memo.0.get_or_insert_with(
            key.1,
            key,
            || self.described(args, call, fallback_name, output),
            cost,
        )
    }

    /// [`ToolFamilies::describe`], computed.
    fn described(
        &self,
        args: &CallArgs,
        call: Option<&ToolCall>,
        fallback_name: &str,
        output: &str,
    ) -> String {
        let name = call.map_or(fallback_name, |c| c.name.as_str());
        let name = if name.is_empty() { "tool" } else { name };
        let args = call.and_then(|c| args.parsed(&c.arguments)).unwrap_or_default();
        let raw_args = call.map_or("", |c| c.arguments.as_str());
        let resolved = self.resolve(name, Some(&args));
        let chars = thousands(output.chars().count() as u64);
        let lines = line_count(output);
        match resolved.family {
            Family::Shell => {
                let command = shell_text(&args).unwrap_or_default();
                let cmd =
                    cut(&one_line_head(&command, SHELL_SHOWN_CHARS + 1), SHELL_SHOWN_CHARS, 77);
                let code = exit_code(output).unwrap_or_else(|| "?".into());
                format!("[terminal] ran `{cmd}` -> exit {code}, {lines} lines output")
            }
            Family::Read => {
                let path = first_str(&args, PATH_KEYS).unwrap_or_else(|| "?".into());
                let offset = first_scalar(&args, OFFSET_KEYS).unwrap_or_else(|| "1".into());
                format!("[read_file] read {path} from line {offset} ({chars} chars)")
            }
            Family::Write => {
                let path = first_str(&args, PATH_KEYS).unwrap_or_else(|| "?".into());
                let written = first_str(&args, CONTENT_KEYS)
                    .map_or_else(|| "?".into(), |c| (newlines(&c) + 1).to_string());
                format!("[write_file] wrote to {path} ({written} lines)")
            }
            Family::Search => {
                let pattern = first_str(&args, PATTERN_KEYS).unwrap_or_else(|| "?".into());
                let path = first_str(&args, PATH_KEYS).unwrap_or_else(|| ".".into());
                let target = resolved.target.as_deref().unwrap_or("content");
                let count = match_count(output);
                format!(
                    "[search_files] {target} search for '{pattern}' in {path} -> {count} matches"
                )
            }
            Family::Edit => {
                let (mode, path) = edit_target(&args, raw_args, resolved.mode);
                format!("[patch] {mode} in {path} ({chars} chars result)")
            }
            Family::Web => {
                let urls = urls_of(&args);
                match urls.first() {
                    Some(first) if urls.len() > 1 => {
                        format!("[web_extract] {first} (+{} more) ({chars} chars)", urls.len() - 1)
                    }
                    Some(first) => format!("[web_extract] {first} ({chars} chars)"),
                    None => {
                        let query = first_str(&args, &["query", "q"]).unwrap_or_else(|| "?".into());
                        format!("[web_search] query='{query}' ({chars} chars result)")
                    }
                }
            }
            Family::Browser => {
                let detail =
                    match (first_str(&args, &["url"]), first_str(&args, &["ref", "element"])) {
                        (Some(url), _) => format!(" {url}"),
                        (None, Some(r)) => format!(" ref={r}"),
                        (None, None) => String::new(),
                    };
                format!("[{name}]{detail} ({chars} chars)")
            }
            Family::Delegate => {
                let goal = cut(
                    &first_str(&args, &["goal", "description", "prompt", "task"])
                        .unwrap_or_default(),
                    60,
                    57,
                );
                format!("[delegate_task] '{goal}' ({chars} chars result)")
            }
            Family::Other => {
                let target = TARGET_KEYS.iter().find_map(|k| {
                    let v = args.get(*k)?;
                    let s = match v {
                        Value::String(s) => Cow::Borrowed(s.as_str()),
                        Value::Number(_) | Value::Bool(_) => Cow::Owned(v.to_string()),
                        _ => return None,
                    };
                    let shown = one_line_head(&s, TARGET_SHOWN_CHARS + 1);
                    Some(format!(" {k}={}", cut(&shown, TARGET_SHOWN_CHARS, TARGET_SHOWN_CHARS)))
                });
                format!("[{name}]{} ({chars} chars result)", target.unwrap_or_default())
            }
        }
    }
}

/// Argument keys that name a file or directory, in order of preference.
pub const PATH_KEYS: &[&str] = &[
    "path",
    "file_path",
    "filePath",
    "file",
    "filename",
    "notebook_path",
    "target_file",
    "dir_path",
];
const OFFSET_KEYS: &[&str] = &["offset", "line", "start_line", "view_range"];
const CONTENT_KEYS: &[&str] = &["content", "file_text", "contents", "text"];
const PATTERN_KEYS: &[&str] = &["pattern", "query", "regex", "search_term", "glob", "file_name"];
const TARGET_KEYS: &[&str] =
    &["path", "file_path", "file", "url", "query", "pattern", "command", "name", "id", "target"];

/// Returns true if and only if `text` is a one-liner this module produced (or
/// the reference's own), so that describing it again would lose information.
pub fn is_description(text: &str) -> bool {
    static RE: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^\[[A-Za-z0-9_.:*\-]+\] [^\n]*$").ok());
    text.len() < 1_000 && RE.as_ref().is_some_and(|re| re.is_match(text))
}

/// Lines of an output: newlines + 1, or 0 for a blank output (reference rule).
fn line_count(text: &str) -> usize {
    if text.trim().is_empty() { 0 } else { newlines(text) + 1 }
}

/// Cuts `s` to `keep` chars + `...` when it has more than `limit` chars.
fn cut(s: &str, limit: usize, keep: usize) -> String {
    if more_chars_than(s, limit) {
        let mut out: String = s.chars().take(keep).collect();
        out.push_str("...");
        out
    } else {
        s.to_string()
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A shell command is shown up to this many chars (collapsed) in its one-liner.
const SHELL_SHOWN_CHARS: usize = 80;
/// An unclassified call's target is shown up to this many chars (collapsed).
const TARGET_SHOWN_CHARS: usize = 40;

/// The start of [`one_line`]`(s)`: its first words, up to the first that
/// reaches `chars` chars, or all of them. So it is a prefix of `one_line(s)`
/// and either the whole of it or at least `chars` chars long, and
/// `cut(&one_line_head(s, limit + 1), limit, keep)` is
/// `cut(&one_line(s), limit, keep)` for any `keep <= limit` (a proptest pins
/// it): a one-liner shows a few dozen chars of a value that may be a whole
/// file or script, which is neither copied nor collapsed whole.
pub(crate) fn one_line_head(s: &str, chars: usize) -> String {
    let mut out = String::new();
    let mut n = 0usize;
    for word in s.split_whitespace() {
        if n >= chars {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
            n += 1;
        }
        out.push_str(word);
        n += word.chars().count();
    }
    out
}

/// The first string argument among `keys` (non-strings are rendered as JSON).
pub fn first_str(args: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| match args.get(*k)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Array(items) => items.first().and_then(Value::as_str).map(str::to_string),
        _ => None,
    })
}

fn first_scalar(args: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| match args.get(*k)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(items) => items.first().map(|v| v.to_string()),
        _ => None,
    })
}

/// The command line of a shell call on one line: [`shell_text`] with its
/// white space collapsed.
pub fn shell_command(args: &Map<String, Value>) -> Option<String> {
    shell_text(args).map(|c| one_line(&c))
}

/// The command line of a shell call as written: `command`/`cmd` as a string,
/// or an argv array (Codex `["bash", "-lc", "cmd"]` gives `cmd`). A caller that
/// clips it to a few words need not collapse a whole script first.
pub fn shell_text(args: &Map<String, Value>) -> Option<Cow<'_, str>> {
    for key in ["command", "cmd", "commands", "script", "input"] {
        match args.get(key) {
            Some(Value::String(s)) => return Some(Cow::Borrowed(s)),
            Some(Value::Array(items)) => {
                let argv: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                if argv.len() >= 3 && matches!(argv[1], "-lc" | "-c" | "/c" | "-Command") {
                    return Some(Cow::Borrowed(argv[argv.len() - 1]));
                }
                return Some(Cow::Owned(argv.join(" ")));
            }
            _ => {}
        }
    }
    None
}

/// The spellings [`exit_code`] reads, in order of preference. Each one
/// matches only text holding `exit` in some ASCII case ([`mentions_exit`]).
const EXIT_CODE_PATTERNS: [&str; 4] = [
    r#""exit_code"\s*:\s*(-?\d+)"#,
    r"(?m)^Exit code:?\s*(-?\d+)",
    r"Process exited with code (-?\d+)",
    r"(?i)exit(?:ed with)? (?:code|status):? ?(-?\d+)",
];

/// The exit code an output reports, in any of the common spellings. An output
/// that never says `exit` is not searched: the summary and the one-liners ask
/// this of every tool result, and most never mention an exit.
pub fn exit_code(output: &str) -> Option<String> {
    if !mentions_exit(output) {
        return None;
    }
    exit_code_searched(output)
}

/// [`exit_code`] by its patterns alone, in order.
fn exit_code_searched(output: &str) -> Option<String> {
    static RES: LazyLock<Vec<Regex>> =
        LazyLock::new(|| EXIT_CODE_PATTERNS.iter().filter_map(|p| Regex::new(p).ok()).collect());
    RES.iter().find_map(|re| re.captures(output).map(|c| c[1].to_string()))
}

/// Returns true if and only if `text` holds `exit` in any mix of ASCII cases.
/// The one case-insensitive pattern (`(?i)exit`) folds no other character to
/// these four letters (a test checks every `char`), so every match of
/// [`EXIT_CODE_PATTERNS`] holds one.
fn mentions_exit(text: &str) -> bool {
    let b = text.as_bytes();
    let is = |i: usize, lower: u8| b.get(i).is_some_and(|c| c | 0x20 == lower);
    memchr::memchr2_iter(b'x', b'X', b)
        .any(|i| i > 0 && is(i - 1, b'e') && is(i + 1, b'i') && is(i + 2, b't'))
}

/// The number of matches a search output reports, else its non-blank lines.
fn match_count(output: &str) -> String {
    static RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r#"(?:"total_count"\s*:\s*(\d+))|(?:Found (\d+) (?:files?|matches?|results?))"#)
            .ok()
    });
    if let Some(c) = RE.as_ref().and_then(|re| re.captures(output))
        && let Some(m) = c.get(1).or_else(|| c.get(2))
    {
        return m.as_str().to_string();
    }
    output.lines().filter(|l| !l.trim().is_empty()).count().to_string()
}

/// The mode and path of an edit, from its arguments or from a patch body.
fn edit_target(args: &Map<String, Value>, raw: &str, mode: Option<String>) -> (String, String) {
    static PATCH: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\*\*\* (Update|Add|Delete) File: ([^\n]+)").ok());
    let patch_body = first_str(args, &["input", "patch"]).unwrap_or_else(|| raw.to_string());
    if let Some(c) = PATCH.as_ref().and_then(|re| re.captures(&patch_body)) {
        let files = PATCH.as_ref().map_or(1, |re| re.captures_iter(&patch_body).count());
        let path = c[2].trim().to_string();
        let path = if files > 1 { format!("{path} (+{} more)", files - 1) } else { path };
        return (c[1].to_lowercase(), path);
    }
    let mode = first_str(args, &["mode"]).or(mode).unwrap_or_else(|| "replace".into());
    (mode, first_str(args, PATH_KEYS).unwrap_or_else(|| "?".into()))
}

/// URLs a web call names (`urls` array of strings or `{url}` objects, or `url`).
fn urls_of(args: &Map<String, Value>) -> Vec<String> {
    match args.get("urls") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => o
                    .get("url")
                    .or_else(|| o.get("href"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
                _ => None,
            })
            .collect(),
        _ => first_str(args, &["url"]).into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &str) -> ToolCall {
        ToolCall { id: "c".into(), name: name.into(), arguments: args.into(), ..Default::default() }
    }

    fn describe(name: &str, args: &str, output: &str) -> String {
        let (memo, parsed) = (
            Described::new(crate::memo::budgets::Reach::Run),
            CallArgs::new(crate::memo::budgets::Reach::Run),
        );
        ToolFamilies::default().describe(&memo, &parsed, Some(&call(name, args)), name, output)
    }

    #[test]
    fn builtin_table_parses() {
        let parsed: FamilyFile =
            serde_json::from_str(BUILTIN).expect("tool_families.json is valid");
        assert!(parsed.tools.len() > 50);
    }

    #[test]
    fn shell_one_liner() {
        let out = "{\"output\": \"a\\nb\", \"exit_code\": 2}\nline2\nline3";
        assert_eq!(
            describe("terminal", r#"{"command":"git log --oneline -20"}"#, out),
            "[terminal] ran `git log --oneline -20` -> exit 2, 3 lines output"
        );
        // Claude Code / Codex names map to the same family; no exit code gives `?`.
        assert_eq!(
            describe("Bash", r#"{"command":"ls"}"#, "a\nb"),
            "[terminal] ran `ls` -> exit ?, 2 lines output"
        );
        assert_eq!(
            describe(
                "shell",
                r#"{"command":["bash","-lc","cargo test"]}"#,
                "Exit code: 101\nWall time: 1s"
            ),
            "[terminal] ran `cargo test` -> exit 101, 2 lines output"
        );
    }

    #[test]
    fn shell_command_is_cut_at_80_chars() {
        let long = "x".repeat(81);
        let line = describe("exec_command", &format!(r#"{{"cmd":"{long}"}}"#), "");
        assert_eq!(
            line,
            format!("[terminal] ran `{}...` -> exit ?, 0 lines output", "x".repeat(77))
        );
        let exact = "y".repeat(80);
        assert!(describe("bash", &format!(r#"{{"command":"{exact}"}}"#), "").contains(&exact));
    }

    #[test]
    fn read_one_liner() {
        let out = "x".repeat(15_200);
        assert_eq!(
            describe("read_file", r#"{"path":"/project/src/main.py"}"#, &out),
            "[read_file] read /project/src/main.py from line 1 (15,200 chars)"
        );
        assert_eq!(
            describe("Read", r#"{"file_path":"a.rs","offset":40}"#, "abc"),
            "[read_file] read a.rs from line 40 (3 chars)"
        );
    }

    #[test]
    fn write_one_liner() {
        assert_eq!(
            describe("Write", r#"{"file_path":"b.rs","content":"a\nb\nc"}"#, "ok"),
            "[write_file] wrote to b.rs (3 lines)"
        );
        assert_eq!(
            describe("write_file", r#"{"path":"b.rs"}"#, "ok"),
            "[write_file] wrote to b.rs (? lines)"
        );
    }

    #[test]
    fn search_one_liner() {
        assert_eq!(
            describe(
                "search_files",
                r#"{"pattern":"compress","path":"agent/"}"#,
                r#"{"total_count": 12}"#
            ),
            "[search_files] content search for 'compress' in agent/ -> 12 matches"
        );
        assert_eq!(
            describe("Grep", r#"{"pattern":"fn main"}"#, "a.rs:1\nb.rs:3\n\n"),
            "[search_files] content search for 'fn main' in . -> 2 matches"
        );
        assert_eq!(
            describe("Glob", r#"{"pattern":"**/*.rs"}"#, "Found 4 files\na\nb"),
            "[search_files] files search for '**/*.rs' in . -> 4 matches"
        );
    }

    #[test]
    fn edit_one_liner() {
        assert_eq!(
            describe("patch", r#"{"path":"c.py","mode":"replace"}"#, &"z".repeat(1_234)),
            "[patch] replace in c.py (1,234 chars result)"
        );
        assert_eq!(
            describe("Edit", r#"{"file_path":"c.py"}"#, "ok"),
            "[patch] replace in c.py (2 chars result)"
        );
        let patch =
            r#"{"input":"*** Begin Patch\n*** Update File: src/x.rs\n@@\n*** Add File: y.rs\n"}"#;
        assert_eq!(
            describe("apply_patch", patch, "ok"),
            "[patch] update in src/x.rs (+1 more) (2 chars result)"
        );
        assert_eq!(
            describe("str_replace_editor", r#"{"command":"str_replace","path":"/r/m.py"}"#, "ok"),
            "[patch] str_replace in /r/m.py (2 chars result)"
        );
        assert_eq!(
            describe("str_replace_editor", r#"{"command":"view","path":"/r/m.py"}"#, "abc"),
            "[read_file] read /r/m.py from line 1 (3 chars)"
        );
    }

    #[test]
    fn web_browser_delegate_one_liners() {
        assert_eq!(
            describe(
                "web_extract",
                r#"{"urls":["https://a.test/docs","https://b.test"]}"#,
                &"w".repeat(8_400)
            ),
            "[web_extract] https://a.test/docs (+1 more) (8,400 chars)"
        );
        assert_eq!(
            describe("WebFetch", r#"{"url":"https://a.test/x","prompt":"p"}"#, "abc"),
            "[web_extract] https://a.test/x (3 chars)"
        );
        assert_eq!(
            describe("browser_navigate", r#"{"url":"https://a.test"}"#, "abcd"),
            "[browser_navigate] https://a.test (4 chars)"
        );
        let goal = "g".repeat(70);
        assert_eq!(
            describe("Task", &format!(r#"{{"description":"{goal}"}}"#), "r"),
            format!("[delegate_task] '{}...' (1 chars result)", "g".repeat(57))
        );
    }

    #[test]
    fn other_one_liner_names_its_target() {
        assert_eq!(
            describe(
                "mcp__context7__get_docs",
                r#"{"libraryId":"x","query":"hooks"}"#,
                &"q".repeat(2_000)
            ),
            "[mcp__context7__get_docs] query=hooks (2,000 chars result)"
        );
        assert_eq!(describe("TodoWrite", r#"{"todos":[]}"#, "ok"), "[TodoWrite] (2 chars result)");
        // A result without its call still gets a line.
        assert_eq!(
            ToolFamilies::default().describe(
                &Described::new(crate::memo::budgets::Reach::Run),
                &CallArgs::new(crate::memo::budgets::Reach::Run),
                None,
                "lost",
                "abc"
            ),
            "[lost] (3 chars result)"
        );
    }

    #[test]
    fn user_file_extends_the_map() {
        let mut f = ToolFamilies::default();
        f.extend_from_json(r#"{"tools": {"run_it": "shell"}, "prefixes": {"pw_": "browser"}}"#)
            .unwrap();
        assert_eq!(f.resolve("run_it", None).family, Family::Shell);
        assert_eq!(f.resolve("pw_click", None).family, Family::Browser);
        assert!(f.extend_from_json("{not json").is_err());
    }

    /// A remembered description is the one computed afresh, and is never
    /// another's: a map extended by a user file, another call, the same call
    /// without its arguments or under a fallback name, another output.
    #[test]
    fn descriptions_are_remembered_only_for_what_they_describe() {
        let mut own = ToolFamilies::default();
        own.extend_from_json(r#"{"tools": {"run_it": "read"}}"#).unwrap();
        assert_eq!(own, own.clone());
        let builtin = ToolFamilies::default();
        let out = "line\n".repeat(60);
        let other_out = format!("{out}x");
        let calls = [
            call("run_it", r#"{"path":"a.rs"}"#),
            call("run_it", r#"{"path":"b.rs"}"#),
            // Hashed as `None` would be but for the flag that says there is a call.
            call("", ""),
        ];
        let mut seen = std::collections::BTreeSet::new();
        let (memo, args) = (
            Described::new(crate::memo::budgets::Reach::Run),
            CallArgs::new(crate::memo::budgets::Reach::Run),
        );
        for _ in 0..2 {
            for f in [&builtin, &own] {
                for output in [&out, &other_out] {
                    for c in calls.iter().map(Some).chain([None]) {
                        for fallback in ["run_it", "other"] {
                            let line = f.describe(&memo, &args, c, fallback, output);
                            assert_eq!(line, f.described(&args, c, fallback, output));
                            seen.insert(line);
                        }
                    }
                }
            }
        }
        // Both maps, both outputs, both paths and both fallback names tell.
        assert!(seen.len() >= 12, "{seen:#?}");
    }

    /// The memo's key changes with every input of a description: the map,
    /// the output (its text and its length), the call's name and arguments,
    /// whether there is a call, and the fallback name.
    #[test]
    fn a_description_key_differing_in_any_input_misses() {
        let builtin = ToolFamilies::default();
        let mut own = ToolFamilies::default();
        own.extend_from_json(r#"{"tools": {"run_it": "read"}}"#).unwrap();
        let (a, b) = (call("run_it", "{}"), call("run_it", r#"{"x":1}"#));
        let renamed = call("run_that", "{}");
        let keys = [
            describe_key(&builtin, Some(&a), "f", "out"),
            describe_key(&own, Some(&a), "f", "out"),
            describe_key(&builtin, Some(&a), "f", "our"),
            describe_key(&builtin, Some(&a), "f", "output"),
            describe_key(&builtin, Some(&b), "f", "out"),
            describe_key(&builtin, Some(&renamed), "f", "out"),
            describe_key(&builtin, None, "f", "out"),
            describe_key(&builtin, Some(&a), "g", "out"),
        ];
        let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
        assert_eq!(distinct.len(), keys.len(), "{keys:?}");
        let memo = Described::new(crate::memo::budgets::Reach::Run);
        let args = CallArgs::new(crate::memo::budgets::Reach::Run);
        let first = builtin.describe(&memo, &args, Some(&a), "f", &"x\n".repeat(40));
        let second = own.describe(&memo, &args, Some(&a), "f", &"x\n".repeat(40));
        assert_ne!(first, second, "a hit under another map would repeat the first line");
    }

    #[test]
    fn resolving_a_call_reads_its_arguments_only_where_they_decide() {
        let f = ToolFamilies::default();
        let call = |name: &str, args: &str| ToolCall {
            name: name.into(),
            arguments: args.into(),
            ..ToolCall::default()
        };
        for (name, args, family) in [
            ("str_replace_editor", r#"{"command": "view", "path": "a.rs"}"#, Family::Read),
            ("str_replace_editor", r#"{"command": "str_replace"}"#, Family::Edit),
            ("str_replace_editor", "not json", Family::Other),
            ("Read", r#"{"file_path": "a.rs"}"#, Family::Read),
            ("browser_click", "{}", Family::Browser),
            ("unheard_of", r#"{"command": "view"}"#, Family::Other),
        ] {
            let c = call(name, args);
            let lazy = f.resolve_call(&CallArgs::new(crate::memo::budgets::Reach::Run), &c);
            assert_eq!(lazy, f.resolve(name, c.args_object().as_deref()), "{name} {args}");
            assert_eq!(lazy.family, family, "{name} {args}");
        }
    }

    #[test]
    fn descriptions_are_recognised() {
        assert!(is_description("[terminal] ran `ls` -> exit 0, 2 lines output"));
        assert!(is_description("[mcp__x__y] query=a (2,000 chars result)"));
        assert!(!is_description("[\"a\", \"b\"] json array output"));
        assert!(!is_description("[terminal] two\nlines"));
    }

    /// `(?i)` folds no character but the ASCII ones to a letter of `exit`,
    /// so [`mentions_exit`] can skip every output without one.
    #[test]
    fn only_ascii_folds_to_the_letters_of_exit() {
        let re = Regex::new("(?i)^[exit]$").unwrap();
        let folded: String = (0..=char::MAX as u32)
            .filter_map(char::from_u32)
            .filter(|c| re.is_match(&c.to_string()))
            .collect();
        assert_eq!(folded, "EITXeitx");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// The head of a one-liner cuts as the whole one-liner does.
        #[test]
        fn one_line_head_cuts_as_one_line(
            text in "([a-cé😀]{0,9}[ \t\n\u{a0}\u{3000}]{0,3}){0,40}",
            limit in 0usize..90,
            keep_off in 0usize..5,
        ) {
            let keep = limit.saturating_sub(keep_off);
            let head = one_line_head(&text, limit + 1);
            let whole = one_line(&text);
            proptest::prop_assert!(whole.starts_with(&head));
            proptest::prop_assert_eq!(cut(&head, limit, keep), cut(&whole, limit, keep));
        }

        /// The prefilter never changes an answer: `exit_code` with it is
        /// `exit_code` by the patterns alone, on texts made of pieces that
        /// make or nearly make each spelling in any case, and of characters
        /// Unicode folds to other ASCII letters.
        #[test]
        fn the_exit_prefilter_changes_no_answer(
            text in "(exit|EXIT|Exit|eXiT|ex|it|EXIT CODE 1|Exit status: 2|eXiTeD wItH cOdE 3|Exit code|exit_code|\"exit_code\"|Process exited with code |exited with status|ed with|code|CODE|status|[xXeEiItT_:\" \n0-9-]|ſ|K|İ|ı|é|日本){0,24}"
        ) {
            proptest::prop_assert_eq!(exit_code(&text), exit_code_searched(&text), "{:?}", text);
        }
    }

    #[test]
    fn shell_text_is_the_command_before_it_is_collapsed() {
        let args = |json: &str| serde_json::from_str::<Map<String, Value>>(json).unwrap();
        let script = args(r#"{"command": "cat <<EOF\n  a   b\nEOF"}"#);
        assert_eq!(shell_text(&script).as_deref(), Some("cat <<EOF\n  a   b\nEOF"));
        assert_eq!(shell_command(&script).as_deref(), Some("cat <<EOF a b EOF"));
        let argv = args(r#"{"command": ["bash", "-lc", "ls  -la"]}"#);
        assert_eq!(shell_text(&argv).as_deref(), Some("ls  -la"));
        let plain = args(r#"{"cmd": ["git", "status"]}"#);
        assert_eq!(shell_text(&plain).as_deref(), Some("git status"));
        assert_eq!(shell_text(&args("{}")), None);
    }
}
