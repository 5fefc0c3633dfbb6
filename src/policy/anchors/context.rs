//! Precision rules: when a candidate that matches an anchor's shape is, by
//! its context, something else (docs/rules.md section 7).
//!
//! ## What it does
//! Decides from the line around a candidate: a hex run the log labels as
//! another kind of id (`agentId: …`, `<task-id>…`, `KEY: …`, a build hash
//! after a version, a blob id in a diff's `index` line, a Docker layer or
//! container id, a machine address) is not a commit; a `#N` is a PR only in a
//! PR context (`PR`, `pull request`, `fixes`, `owner/repo#N`, …); a slash
//! word is a branch only in a branch context (`git checkout`, `branch`,
//! `origin/`, `On branch`) or with a branch-like prefix; an `@name` that is
//! code or a package scope is not a handle.
//!
//! ## Why
//! Anchors gate CI through the retention figures: on real logs, BuildKit step
//! numbers, agent ids and decorators made a hundred false anchors in five
//! sessions. The rules hold for any log, not for a list of examples; they are
//! measured on `fixtures/anchors/labelled.jsonl`.

use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// A regular expression compiled on first use. One that does not compile (a
/// bug the tests catch) matches nothing: a pattern never panics.
struct Pattern {
    source: &'static str,
    compiled: OnceLock<Option<Regex>>,
}

impl Pattern {
    const fn new(source: &'static str) -> Pattern {
        Pattern { source, compiled: OnceLock::new() }
    }

    fn regex(&self) -> Option<&Regex> {
        self.compiled.get_or_init(|| Regex::new(self.source).ok()).as_ref()
    }

    fn is_match(&self, text: &str) -> bool {
        self.regex().is_some_and(|r| r.is_match(text))
    }
}

/// `text` with terminal colour codes (`ESC [ digits and ; m`) removed;
/// borrowed when it holds none.
pub(super) fn strip_ansi(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    if memchr::memchr(0x1b, b).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let (mut from, mut i) = (0, 0);
    while let Some(k) = memchr::memchr(0x1b, &b[i..]) {
        let at = i + k;
        i = at + 1;
        if b.get(at + 1) == Some(&b'[') {
            let mut j = at + 2;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b';') {
                j += 1;
            }
            if b.get(j) == Some(&b'm') {
                out.push_str(&text[from..at]);
                from = j + 1;
                i = from;
            }
        }
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// The line of `text` that holds byte `at`, as (start, end).
pub(super) fn line_of(text: &str, at: usize) -> (usize, usize) {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    (start, end)
}

/// Label words that name an id of another kind than a commit when they end
/// the text before a hex run (`agentId:`, `<task-id>`, `request_id=`,
/// `APP_KEY:`, `sha256:`): compared with the label's lower-cased tail.
const OTHER_ID_LABELS: &[&str] = &[
    "id", "ids", "key", "token", "secret", "hash", "digest", "checksum", "nonce", "salt", "uuid",
    "sha256", "sha1", "sha512", "md5", "flag",
];

/// Words before a labelled id that make it a commit's after all (`commit id`,
/// `git hash`).
const COMMIT_WORDS: &[&str] = &["commit", "git", "revision", "rev"];

/// Docker's statuses after a layer id (`d7f6aca05b78: Already exists`).
static DOCKER_LAYER: Pattern = Pattern::new(
    r"^:?\s+(?:Pulling|Waiting|Downloading|Verifying|Download complete|Pull complete|Already exists|Extracting|Pushed|Pushing|Preparing|Layer already exists|Mounted)",
);

/// A version then `, build ` or ` (`: what precedes a tool's build hash
/// (`Docker version 29.3.1, build c2be9cc`, `cargo 1.94.1 (29ea6fb6a …)`).
static VERSION_BEFORE: Pattern = Pattern::new(r"\d+\.\d+(?:\.\d+)?[\w.+\-]*,?\s+(?:build\s+|\()$");

/// A line of disassembly (`.text:00400663   e8a8feffff   CALL …`).
static MACHINE_LINE: Pattern = Pattern::new(r"^\s*\.?\w+:[0-9A-Fa-f]{8,16}\s");

/// A diff's blob line (`index 20edef5..5857437 100755`).
static BLOB_LINE: Pattern = Pattern::new(r"^index [0-9a-f]{7,40}\.\.[0-9a-f]{7,40}");

/// Returns true if and only if the hex run `start..end` of `text` is, by its
/// context, not a commit but another kind of id (see the module header).
/// `labelled` is set when the log names it as another kind of id, which
/// disqualifies every occurrence of the same value in the text.
pub(super) fn commit_is_other(text: &str, start: usize, end: usize, labelled: &mut bool) -> bool {
    let b = text.as_bytes();
    let run = &text[start..end];
    let before = b[..start].last().copied();
    let after = b.get(end).copied();
    // Glued to a uuid, a path, a brace, a scheme-like prefix or a file extension.
    // (`a.b1c2d3e`, but not the `..` of a commit range `1a2b3c4..5d6e7f8`).
    let dot_before = before == Some(b'.') && (start < 2 || b[start - 2] != b'.');
    if matches!(before, Some(b'-' | b'/' | b'\\' | b'{' | b':' | b'#'))
        || dot_before
        || matches!(after, Some(b'-' | b'/' | b'\\' | b'}'))
        || (after == Some(b'.') && b.get(end + 1).is_some_and(u8::is_ascii_alphabetic))
    {
        return true;
    }
    let (line_start, line_end) = line_of(text, start);
    let lead = &text[line_start..start];
    let rest = &text[end..line_end];
    if other_id_label(lead) {
        *labelled = true;
        return true;
    }
    // A build hash, a blob id, machine code.
    if VERSION_BEFORE.is_match(lead) || BLOB_LINE.is_match(&text[line_start..line_end]) {
        return true;
    }
    if MACHINE_LINE.is_match(&text[line_start..line_end]) {
        return true;
    }
    // A Docker layer or container id: 12 hex chars opening a line, then a
    // layer status or the columns of `docker ps`.
    if run.len() == 12
        && lead.trim().is_empty()
        && (DOCKER_LAYER.is_match(rest) || rest.starts_with("   "))
    {
        return true;
    }
    // A zero-padded address (`@ 0040154c`): a SHA starts with `00` once in 256.
    (run.len() == 8 || run.len() == 16) && run.starts_with("00")
}

/// Returns true if and only if `lead` (the line before a hex run) ends with a
/// label naming another kind of id, separators (`: = < > ' "` and spaces) aside.
fn other_id_label(lead: &str) -> bool {
    let t = lead.trim_end_matches(|c: char| c.is_whitespace() || ":=<>'\"`(".contains(c));
    let label_start =
        t.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-').len();
    let label = t[label_start..].to_ascii_lowercase();
    if label.is_empty() {
        return false;
    }
    let named = OTHER_ID_LABELS.iter().any(|w| {
        label.strip_suffix(w).is_some_and(|head| {
            // `agentid`, `task-id`, `request_id`, `app_encryption_key`, `id`; not `paid`.
            head.is_empty() || head.ends_with(['_', '-']) || lead_camel(&t[label_start..], w.len())
        })
    });
    if !named {
        return false;
    }
    // `commit id abc1234`, `git hash abc1234`: a commit's own label.
    let head = t[..label_start].trim_end();
    let prev = head.rsplit(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or("");
    let own = label.len() <= 4 && label.chars().all(|c| c.is_ascii_alphabetic());
    !(own && COMMIT_WORDS.contains(&prev.to_ascii_lowercase().as_str()))
}

/// Returns true if and only if the last `n` chars of `label` start a camel-case
/// word (`agentId`, `requestID`).
fn lead_camel(label: &str, n: usize) -> bool {
    let cut = label.len() - n;
    label[cut..].starts_with(|c: char| c.is_ascii_uppercase())
        && label[..cut].ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// What may precede a `#N` that refers to a PR or an issue, at the end of the
/// line before it: a PR word or a closing keyword, then optional `:`.
static PR_CONTEXT: Pattern = Pattern::new(
    r"(?i)(?:\bPRs?|\bpull\s+requests?|\bmerge\s+requests?|\bMRs?|\bissues?|\bbugs?|\btickets?|\bfix(?:es|ed)?|\bclose[sd]?|\bresolve[sd]?|\brefs?|\breferences?)\s*:?\s*\(?$",
);

/// An `owner/repo` right before a `#N` (`rust-lang/rust#1234`).
static REPO_BEFORE: Pattern = Pattern::new(r"(?:^|[\s(\[])[\w.\-]+/[\w.\-]+$");

/// Returns true if and only if the `#N` at `at` of `text` is in a PR context:
/// after a PR word or closing keyword on its line, or glued to `owner/repo`.
/// A BuildKit step (`#14 [2/7] …`), a CSS colour, `booking #1298` or
/// `retry #1` is not.
pub(super) fn pr_hash_in_context(text: &str, at: usize) -> bool {
    let (line_start, _) = line_of(text, at);
    let lead = &text[line_start..at];
    REPO_BEFORE.is_match(lead)
        || (lead.ends_with(|c: char| c.is_whitespace() || "([{,;:'\"".contains(c))
            || lead.is_empty())
            && PR_CONTEXT.is_match(lead)
}

/// Slash names in a branch context: a remote's (`origin/main`), or after
/// `git checkout [-b]`, `git switch`, `git push origin`, `On branch`, `branch`.
/// The name is group 1 or 2. Every alternative starts with a literal, so the
/// search skips from one to the next at memchr speed (it runs on every text).
static BRANCH_CONTEXT: Pattern = Pattern::new(
    r"(?:(?-u:\b)git\s+(?:checkout|switch|merge|rebase|push|pull|branch)(?:\s+-{1,2}[\w\-]+)*(?:\s+(?:origin|upstream))?|(?-u:\b)[Bb]ranch(?:es)?)\s+['`]?([A-Za-z0-9._\-]+/[A-Za-z0-9._/\-]*[A-Za-z0-9_\-])|(?-u:\b)((?:origin|upstream)/[A-Za-z0-9._/\-]*[A-Za-z0-9_\-])",
);

/// The spans of branch names in a branch context (see [`BRANCH_CONTEXT`]).
pub(super) fn branch_spans(text: &str) -> Vec<(usize, usize)> {
    let Some(re) = BRANCH_CONTEXT.regex() else { return Vec::new() };
    if !text.contains('/') {
        return Vec::new();
    }
    re.captures_iter(text)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
        .map(|m| (m.start(), m.end()))
        .collect()
}

/// Words on a line that make an `@name` on it a package scope (`npm i
/// @types/node`, `registries (like @magicui)`).
static PACKAGE_CONTEXT: Pattern = Pattern::new(
    r"(?i)\b(?:npm|npx|yarn|pnpm|bun|install(?:ed|s)?|registr(?:y|ies)|packages?|dependenc(?:y|ies)|import|require)\b",
);

/// Returns true if and only if the `@name` at `at..end` of `text` is code or
/// a package, not a person: a decorator or annotation (first on its line, a
/// line number aside; dotted `@app.route`; called `@Size(`; capitalised
/// `@NotBlank`), a binding (`@click="…"`) or quoted alias (`'@api'`), a path
/// segment (`node_modules\@babel\…`), or a scope on a line about packages.
pub(super) fn handle_is_code(text: &str, at: usize, end: usize) -> bool {
    let (line_start, line_end) = line_of(text, at);
    let lead = text[line_start..at].trim();
    let name = &text[at + 1..end];
    let rest = &text[end..line_end];
    let numbered = lead.trim_end_matches([':', '|', '→']).bytes().all(|c| c.is_ascii_digit());
    let first = lead.is_empty() || lead == "*" || lead == "//" || numbered;
    let dotted = rest.starts_with('.') && rest[1..].starts_with(|c: char| c.is_ascii_alphabetic());
    // Annotations are capitalised (`@Column`, `@NotBlank`, `@Slf4j`).
    let annotation = name.starts_with(|c: char| c.is_ascii_uppercase());
    // A binding (`@click="…"`) or a quoted alias (`'@api'`).
    let bound = rest.starts_with('=') || text[..at].ends_with(['\'', '"']);
    let in_path = text[..at].ends_with('\\') || rest.starts_with(['/', '\\', '(']);
    first
        || dotted
        || annotation
        || bound
        || in_path
        || PACKAGE_CONTEXT.is_match(&text[line_start..line_end])
}

/// Returns true if and only if `url` (a match of the URL pattern, trimmed) has
/// a host: a bare scheme (`https://`) or one before a placeholder is no URL.
pub(super) fn url_has_host(url: &str) -> bool {
    url.split_once("://")
        .is_some_and(|(_, rest)| rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '['))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        for p in [
            &DOCKER_LAYER,
            &VERSION_BEFORE,
            &MACHINE_LINE,
            &BLOB_LINE,
            &PR_CONTEXT,
            &REPO_BEFORE,
            &BRANCH_CONTEXT,
            &PACKAGE_CONTEXT,
        ] {
            assert!(p.regex().is_some(), "{}", p.source);
        }
    }
}
