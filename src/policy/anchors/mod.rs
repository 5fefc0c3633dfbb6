//! Anchors: exact identifiers (PRs, commits, branches, paths, error lines,
//! handles, URLs) extracted verbatim from the compacted region (SPEC 7).
//!
//! ## What it does
//! Finds every anchor of seven categories in a set of texts, counts each
//! distinct value, ranks by count then recency, and renders the best of them
//! within a character budget as the summary's `## Anchor Index`. The same
//! extractor measures retention: which anchors of the input still appear
//! verbatim somewhere in the output.
//!
//! ## Why
//! A summary paraphrases; a path, a SHA or an error line must survive exactly
//! or it is useless. Anchors are the cheapest continuity there is.
//!
//! ## Our fixes to the reference patterns
//! - Terminal colour codes are removed before anything is matched.
//! - A commit is 7–40 hex chars with at least one letter *and* one digit (so
//!   numbers and words like `deadbeef` are not SHAs), not glued to a `-`, a
//!   path or a brace, and not an id the log labels as another kind
//!   (`context::commit_is_other`).
//! - `PR 123` and `pull/123` / `issues/123` count (inside a URL too); a `#12`
//!   only in a PR context (`context::pr_hash_in_context`): BuildKit steps,
//!   CSS colours and `booking #1298` are not PRs.
//! - A branch needs a branch-like prefix (`feat/`, `fix/`, …) or a branch
//!   context (`git checkout -b`, `branch`, `origin/`, `On branch`).
//! - Paths need a separator (`/`, or `\` in Windows and relative Windows
//!   paths) and an extension or a dotfile name; a path inside a URL is the URL's.
//! - Error lines cover Python, Rust, Go, JS, TypeScript, test runners, shells,
//!   databases, API error envelopes and errno names, and are not taken from
//!   file reads or call arguments (code that *mentions* an exception is not an
//!   error that happened).
//! - Handles skip decorators and annotations, path segments, emails and
//!   package scopes (`context::handle_is_code`); a URL needs a host.
//! - Precision and recall per category are measured on a hand-labelled set of
//!   real lines (`fixtures/anchors/`, test `labelled`).
//!
//! ## Invariants
//! - Values are substrings of the source text, never rewritten.
//! - Ranking and rendering are deterministic (ties broken by value).

mod context;

use crate::hash::text_key;
use crate::memo::{Memo, budgets};
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::Regex;
use regex_automata::{Anchored, Input, meta};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::LazyLock;
use std::sync::OnceLock;

/// The reference's fixed anchor-index budget in chars (H).
pub const REFERENCE_ANCHOR_BUDGET_CHARS: usize = 7_000;
/// With `--anchor-budget auto`, the budget is at least this share of the
/// compacted region's chars.
pub const AUTO_ANCHOR_BUDGET_RATIO: f64 = 0.04;
/// Error lines are cut to this many chars (a verbatim prefix of the line).
const MAX_ERROR_LINE_CHARS: usize = 200;
/// URLs longer than this are data, not references.
const MAX_URL_CHARS: usize = 300;

/// A table of the bytes `c` for which `$class` holds, indexed by byte: one
/// load per byte read instead of a chain of range tests.
macro_rules! byte_table {
    (|$c:ident| $class:expr) => {{
        let mut out = [false; 256];
        let mut i = 0;
        while i < 256 {
            let $c = i as u8;
            out[i] = $class;
            i += 1;
        }
        out
    }};
}

/// An anchor category, in rendering order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    Prs,
    Commits,
    Branches,
    Paths,
    Errors,
    Handles,
    Urls,
}

crate::model::names::named!(Category {
    Prs => "prs",
    Commits => "commits",
    Branches => "branches",
    Paths => "paths",
    Errors => "errors",
    Handles => "handles",
    Urls => "urls",
});

/// One distinct anchor with its count and last position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    pub category: Category,
    pub value: String,
    pub count: u32,
    /// Ordinal of the text it was last seen in (higher is more recent).
    pub last_seen: u64,
}

/// The anchors of a set of texts.
#[derive(Clone, Debug, Default)]
pub struct AnchorSet {
    /// Per category (indexed by `Category as usize`, the order of `Category::ALL`):
    /// value -> (count, last ordinal). Looked up by `&str`, so a value seen
    /// again costs no allocation.
    maps: [BTreeMap<String, (u32, u64)>; Category::ALL.len()],
    /// Candidates dropped because they look like secrets.
    secrets_dropped: u64,
    /// The search for every value, built by the first `retention` after the
    /// last `extract` (one input's anchors are searched for in several outputs).
    automaton: OnceLock<Option<AhoCorasick>>,
}

/// How budget is set for the anchor index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchorBudget {
    /// max(7,000, 4% of the compacted region's chars).
    Auto,
    Chars(usize),
}

impl AnchorBudget {
    pub fn resolve(self, region_chars: usize) -> usize {
        match self {
            AnchorBudget::Auto => REFERENCE_ANCHOR_BUDGET_CHARS
                .max((region_chars as f64 * AUTO_ANCHOR_BUDGET_RATIO) as usize),
            AnchorBudget::Chars(n) => n,
        }
    }
}

/// The patterns. Word boundaries are ASCII (`(?-u:\b)`): a Unicode `\b`
/// makes the regex engine leave its DFA for a much slower one on any text that
/// is not pure ASCII, and every anchor these boundaries delimit is ASCII.
struct Patterns {
    url: Guarded,
    /// PR references; a `#NNN` one counts only after the start of the text,
    /// white space or an opening punctuation mark ([`pr_refs`]). Only ever
    /// tried anchored at a candidate, hence the lower-level engine.
    pr: meta::Regex,
    branch: Guarded,
    /// Searched in the stretches around a separator ([`path_matches`]).
    path: Stepwise,
    /// The error-line pattern ([`ERROR_PARTS`]).
    error: AnyOf<3>,
    /// Necessary for an `error` match: a line without it is not an error
    /// line, so only the lines around its matches are tried (see [`error_lines`]).
    error_hint: Regex,
    handle: Guarded,
}

/// A pattern every match of which holds one byte (`/` in a URL or a
/// branch, `@` in a handle): a text without that byte is not searched. Most
/// texts scanned are short call arguments, where setting up a search costs
/// more than reading the text (`benches/RESULTS.md`, issue 38 point 7). Every search goes
/// through the guard; that every match holds its byte is pinned by the test
/// `every_match_of_a_guarded_pattern_holds_its_byte`.
struct Guarded {
    re: Regex,
    needs: u8,
}

impl Guarded {
    fn new(pattern: &str, needs: u8) -> Option<Guarded> {
        Some(Guarded { re: Regex::new(pattern).ok()?, needs })
    }

    fn may_match(&self, text: &str) -> bool {
        memchr::memchr(self.needs, text.as_bytes()).is_some()
    }

    fn find_iter<'r, 't>(
        &'r self,
        text: &'t str,
    ) -> impl Iterator<Item = regex::Match<'t>> + use<'r, 't> {
        self.may_match(text).then(|| self.re.find_iter(text)).into_iter().flatten()
    }

    fn captures_iter<'r, 't>(
        &'r self,
        text: &'t str,
    ) -> impl Iterator<Item = regex::Captures<'t>> + use<'r, 't> {
        self.may_match(text).then(|| self.re.captures_iter(text)).into_iter().flatten()
    }
}

/// The error-line pattern (`(?x)`), its top-level alternatives in three
/// parts, each compiled alone ([`AnyOf`]): a line anchored by its start, the
/// unanchored phrases, an API error envelope (`{"error": …}`).
///
/// One regex of all of them cost more than all the other anchor searches of a
/// compaction: its lazy DFA tracks every alternative at once, so its states are
/// combinations of the parts' states, and with Unicode classes (`\w`, `\s`)
/// building them was a large cost per process (benches/RESULTS.md, 2026-12-05,
/// session 5). The first part is anchored and the third starts with a literal,
/// so their searches of a line end after a few bytes; the second reads the line
/// as the whole pattern did.
const ERROR_PARTS: [&str; 3] = [
    r#"(?x)
            ^(?:\#\d+\s+(?:\d+\.\d+\s+)?)?
             (?:[\w.\-]+\s+\|\s+)?
             (?:\[[\d:.]+\]\s+)?
             (?:[-+→]\s+)?
             (?:E\d*\s+|\[?ERROR\]?:?\s+)?
            (?: (?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)(?::|\s*$|\s+at\s)
              | Error:\s
              | error(?:\[E\d{4}\])?:\s*$
              | error\s[^:]*:$
              | Traceback\ \(most\ recent\ call\ last\)
              | panic:\s
              | fatal(?:\ error)?:
              | FAIL(?:ED)?(?-u:\b)
              | ---\ FAIL:
              | npm\ (?:ERR!|error)\s+\S
              | Uncaught\ 
              | E[A-Z]{3,}:\ 
              | failed\ to\ 
              | [✕×✗✘]\s
              | x\x20{2,}\d+\s )"#,
    r#"(?x)
              (?:^|[\s(\[:`])(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception):\s+\S
            | [A-Za-z_]\w*\.error:\s
            | (?-u:\b)error(?:\[E\d{4}\])?:\s+[^\s'"`]
            | (?-u:\b)error\s+TS\d+:
            | :\s+failed\ to\ 
            | (?-u:\b)[Bb]uild\ failed
            | (?-u:\b)[1-9]\d*\ failed(?:$|[,)|]|\s+[(|])
            | [Tt]ests?\ failing:
            | panicked\ at
            | (?-u:\b)FAILED(?-u:\b)
            | (?-u:\b)(?:ENOENT|EACCES|EPERM|EEXIST|ENOSPC|ECONNREFUSED|ECONNRESET|EADDRINUSE|ETIMEDOUT|EPIPE|EISDIR|ENOTDIR|ENOTEMPTY|EMFILE|EAGAIN|EINVAL|ENOMEM|SIGKILL|SIGSEGV)(?-u:\b)
            | command\ not\ found | [Nn]o\ such\ file\ or\ directory | Permission\ denied | Access\ (?:is\ )?denied
            | Segmentation\ fault | is\ not\ a\ function | internal\ error | (?-u:\b)OOM(?:[-\ ]?[Kk]illed)
            | (?:^|[\s\[\]|>])ERROR(?:$|[\]:]|\s+[\w(\[])"#,
    r#"(?x)
              (?:^|observation:\s)\{"error":\s*"[^"]
            | (?:^|observation:\s)\{"error":\s*"",\s*"response":\s*".*(?:Bad\ Request|Forbidden|Unauthorized|Not\ Found|does\ not\ exist|doesn't\ exist|Authentication\ required|'status':\s*[45]\d\d|status\\?":\s*\\?"?[45]\d\d)
            | (?:^|observation:\s)\{"error":\s*"",\s*"response":\s*"\{'message':\s*(?:'[^']*'|\\"[^"]*\\")\}"\}\s*$"#,
];

/// A pattern of top-level alternatives compiled as one regex per part: it
/// matches a text if and only if the alternation of the parts does, since a
/// text matches `A|B` exactly when it matches `A` or `B`. Only `is_match` is
/// offered: where and which match is found would be the alternation's
/// leftmost-first choice, which separate searches do not make. Pinned against
/// the joined pattern by the proptest
/// `the_error_parts_match_what_their_alternation_matches`.
struct AnyOf<const N: usize>([Regex; N]);

impl<const N: usize> AnyOf<N> {
    fn new(parts: &[&str; N]) -> Option<AnyOf<N>> {
        let mut out = Vec::with_capacity(N);
        for part in parts {
            out.push(Regex::new(part).ok()?);
        }
        Some(AnyOf(out.try_into().ok()?))
    }

    fn is_match(&self, text: &str) -> bool {
        self.0.iter().any(|re| re.is_match(text))
    }
}

/// Failed anchored tries after which a [`Stepwise`] search goes on as a
/// plain one: a text where matches start late costs at most this many short
/// tries more per match. Our estimate; most `path` stretches match at their
/// first byte, and a URL's (`https://host/a.md`) after seven.
const MAX_ANCHORED_TRIES: usize = 16;

/// A pattern whose matches are found by trying it anchored at each position
/// in turn. The leftmost-first match at or after `from` is the one anchored at
/// the first position that has one, so [`Stepwise::find_iter`] gives the
/// matches of a plain `find_iter`, without the backward scan a plain search
/// makes over each match to learn where it starts (most of the cost of the
/// `path` pattern, whose stretches mostly start with their match). The plain
/// search takes over after [`MAX_ANCHORED_TRIES`] failed tries, or at an empty
/// match (whose rules of iteration are the plain search's). Pinned against
/// the plain search by the proptest `stepwise_finds_what_a_plain_search_finds`.
struct Stepwise {
    re: meta::Regex,
}

/// Where a [`Stepwise`] search goes on.
enum Step {
    /// The next match, as (start, end).
    Found(usize, usize),
    /// No non-empty match was found by anchored tries before this position:
    /// the plain search goes on from there.
    Plain(usize),
}

impl Stepwise {
    fn new(pattern: &str) -> Option<Stepwise> {
        Some(Stepwise { re: meta::Regex::new(pattern).ok()? })
    }

    /// The spans of the matches in `hay`, as a plain `find_iter` gives them.
    fn find_iter<'r, 'h>(
        &'r self,
        hay: &'h str,
    ) -> impl Iterator<Item = (usize, usize)> + use<'r, 'h> {
        let mut from = 0;
        let mut plain: Option<meta::FindMatches<'r, 'h>> = None;
        std::iter::from_fn(move || {
            loop {
                if let Some(rest) = plain.as_mut() {
                    return rest.next().map(|m| (m.start(), m.end()));
                }
                match self.step(hay, from) {
                    Step::Found(start, end) => {
                        from = end;
                        return Some((start, end));
                    }
                    Step::Plain(at) => plain = Some(self.re.find_iter(Input::new(hay).range(at..))),
                }
            }
        })
    }

    /// The first non-empty match anchored at `from` or after, within
    /// [`MAX_ANCHORED_TRIES`] failed tries.
    fn step(&self, hay: &str, from: usize) -> Step {
        for (tried, at) in (from..hay.len()).enumerate() {
            if tried == MAX_ANCHORED_TRIES {
                return Step::Plain(at);
            }
            match self.re.search(&Input::new(hay).range(at..).anchored(Anchored::Yes)) {
                Some(m) if !m.is_empty() => return Step::Found(m.start(), m.end()),
                Some(_) => return Step::Plain(at),
                None => {}
            }
        }
        Step::Plain(hay.len())
    }
}

static PATTERNS: LazyLock<Option<Patterns>> = LazyLock::new(|| {
    Some(Patterns {
        url: Guarded::new(r#"https?://[^\s<>"'`)\]}]+"#, b'/')?,
        // Every alternative starts with a literal: [`pr_refs`] finds them and
        // tries the pattern there; what may precede a `#` is checked after.
        pr: meta::Regex::new(
            r"(?-u:\b)PR ?#?\d{1,6}(?-u:\b)|(?-u:\b)(?:pull|issues)/\d{1,6}(?-u:\b)|#\d{1,6}(?-u:\b)",
        )
        .ok()?,
        branch: Guarded::new(
            r"(?-u:\b)(?:feat|feature|fix|bugfix|hotfix|release|refactor|chore)/[A-Za-z0-9._/\-]{2,80}",
            b'/',
        )?,
        path: Stepwise::new(
            r"(?:[A-Za-z]:[\\/](?:[\w@.+\-~]+[\\/])*[\w@.+\-~]+)|(?:[\w@.+\-~*]+(?:\\[\w@.+\-~*]+)+)|(?:(?:~|\.{1,2})?/?[\w@.+\-*]+(?:/[\w@.+\-*]+)+)",
        )?,
        error: AnyOf::new(&ERROR_PARTS)?,
        // A literal of every `error` alternative but `E[A-Z]{3,}: ` (see
        // [`error_lines`]); all literals, so the search runs at memchr speed.
        error_hint: Regex::new(
            r"Error|Exception|error|Traceback|panic|fatal|FAIL|npm ERR!|Uncaught |ERROR|ENOENT|EACCES|EPERM|EEXIST|ENOSPC|ECONNREFUSED|ECONNRESET|EADDRINUSE|ETIMEDOUT|EPIPE|EISDIR|ENOTDIR|ENOTEMPTY|EMFILE|EAGAIN|EINVAL|ENOMEM|SIGKILL|SIGSEGV|command not found|o such file or directory|denied|Segmentation fault|failed|failing:|is not a function|OOM|x  |✕|×|✗|✘",
        )
        .ok()?,
        handle: Guarded::new(r"(?:^|[^\w.@/\\\-`])@([A-Za-z][A-Za-z0-9\-]{1,38})(?-u:\b)", b'@')?,
    })
});

/// Annotation and at-rule names that look like handles but are code.
const NOT_HANDLES: &[&str] = &[
    "param",
    "returns",
    "return",
    "type",
    "typedef",
    "throws",
    "override",
    "deprecated",
    "see",
    "example",
    "since",
    "author",
    "version",
    "property",
    "template",
    "link",
    "inheritdoc",
    "media",
    "import",
    "apply",
    "tailwind",
    "keyframes",
    "supports",
    "layer",
    "container",
    "charset",
    "namespace",
    "page",
    "font-face",
    "click",
    "submit",
    "input",
    "change",
    "app",
    "types",
    // pragmas, Prisma attributes, Angular control flow, placeholders
    "ts-ignore",
    "ts-expect-error",
    "ts-nocheck",
    "id",
    "default",
    "map",
    "unique",
    "relation",
    "updatedat",
    "if",
    "else",
    "for",
    "switch",
    "case",
    "defer",
    "empty",
    "username",
    "user",
    "handle",
];

fn trim_punct(s: &str) -> &str {
    s.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '"', ')', '*'])
}

fn has_extension(segment: &str) -> bool {
    match segment.rsplit_once('.') {
        Some((stem, ext)) => {
            // A dotfile (`.gitkeep`) is a file name too.
            (!stem.is_empty() || ext.len() >= 2)
                && (1..=10).contains(&ext.len())
                && ext.starts_with(|c: char| c.is_ascii_alphabetic())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

impl AnchorSet {
    pub fn new() -> AnchorSet {
        AnchorSet::default()
    }

    /// Extracts the anchors of `text`, seen at position `ordinal`. Error lines
    /// are taken only when `errors` is true.
    pub fn extract(&mut self, text: &str, ordinal: u64, errors: bool) {
        self.add_scan(&scan(text, errors), ordinal);
    }

    /// [`extract`](Self::extract), the scan remembered in `scans`.
    pub(crate) fn extract_in(&mut self, scans: &Scans, text: &str, ordinal: u64, errors: bool) {
        self.add_scan(&scans.scan(text, errors), ordinal);
    }

    /// Extracts the anchors of the texts `pieces` makes of `text` (the strings
    /// a call's arguments hold), in order and without error lines, as
    /// [`AnchorSet::extract`] of each would. What they hold is remembered by
    /// `text`: `pieces` (a parse of the arguments) runs once per distinct text.
    /// The pieces are scanned into one [`Scan`] as they come, each piece's
    /// hits after the last's: a scan depends on its text alone, and a piece
    /// recurs in another call's arguments far less often than whole arguments
    /// recur, which this memo catches (a memo per piece cost a hash of each
    /// and a copy of its hits, and mostly missed).
    pub(crate) fn extract_pieces<'t>(
        &mut self,
        scans: &Scans,
        text: &'t str,
        ordinal: u64,
        pieces: impl FnOnce(&'t str) -> Vec<Cow<'t, str>>,
    ) {
        let scan_all = || {
            let mut all = Scan::default();
            for piece in pieces(text) {
                scan_into(&mut all, &piece, false);
            }
            Arc::new(all)
        };
        let scan = if text.len() < MIN_CACHED_SCAN_BYTES {
            scan_all()
        } else {
            let (hash, len) = text_key(text);
            scans.pieces.get_or_insert_with(hash, (hash, len), scan_all, |s| s.bytes())
        };
        self.add_scan(&scan, ordinal);
    }

    fn add_scan(&mut self, scan: &Scan, ordinal: u64) {
        self.secrets_dropped += scan.secrets;
        if !scan.hits.is_empty() {
            self.automaton.take();
        }
        for (category, value) in &scan.hits {
            let map = &mut self.maps[*category as usize];
            match map.get_mut(&**value) {
                Some(e) => {
                    e.0 += 1;
                    e.1 = e.1.max(ordinal);
                }
                None => {
                    map.insert(value.to_string(), (1, ordinal));
                }
            }
        }
    }

    /// Candidates dropped because they look like secrets.
    pub fn secrets_dropped(&self) -> u64 {
        self.secrets_dropped
    }

    /// Number of distinct anchors.
    pub fn len(&self) -> usize {
        self.maps.iter().map(BTreeMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.maps.iter().all(BTreeMap::is_empty)
    }

    /// Distinct anchors per category.
    pub fn counts(&self) -> BTreeMap<Category, usize> {
        let mut out = BTreeMap::new();
        for (cat, map) in Category::ALL.iter().zip(&self.maps) {
            if !map.is_empty() {
                out.insert(*cat, map.len());
            }
        }
        out
    }

    /// Anchors of one category, best first: count, then recency, then value.
    pub fn ranked(&self, category: Category) -> Vec<Anchor> {
        let mut out: Vec<Anchor> = self.maps[category as usize]
            .iter()
            .map(|(v, (count, last))| Anchor {
                category,
                value: v.clone(),
                count: *count,
                last_seen: *last,
            })
            .collect();
        out.sort_by(|a, b| {
            b.count.cmp(&a.count).then(b.last_seen.cmp(&a.last_seen)).then(a.value.cmp(&b.value))
        });
        out
    }

    /// All anchors, by category then value.
    pub fn iter(&self) -> impl Iterator<Item = Anchor> + '_ {
        self.entries().map(|(c, v, (count, last))| Anchor {
            category: c,
            value: v.clone(),
            count: *count,
            last_seen: *last,
        })
    }

    /// Every anchor with its (count, last ordinal), by category then value.
    fn entries(&self) -> impl Iterator<Item = (Category, &String, &(u32, u64))> + '_ {
        Category::ALL.iter().zip(&self.maps).flat_map(|(c, m)| m.iter().map(|(v, e)| (*c, v, e)))
    }

    /// Per category: (distinct anchors, how many appear verbatim in `output`).
    pub fn retention(&self, output: &str) -> BTreeMap<Category, (usize, usize)> {
        let mut found = vec![false; self.len()];
        for i in self.occurring(output) {
            found[i as usize] = true;
        }
        self.retention_of(&found)
    }

    /// The anchors that occur verbatim in `text`, as positions in the order of
    /// [`AnchorSet::iter`], ascending and each once. No anchor holds a `'\n'`
    /// (every pattern stops at whitespace or at the end of a line), so the
    /// anchors in texts joined by newlines are those in each text: an output
    /// can be searched text by text, and a text kept by several outputs once.
    pub fn occurring(&self, text: &str) -> Vec<u32> {
        // A few searches over one text each: a contiguous NFA builds far faster
        // than the DFA `AhoCorasick::new` picks for small sets, and searches nearly as fast.
        let ac = self.automaton.get_or_init(|| {
            AhoCorasick::builder()
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .build(self.entries().map(|(_, v, _)| v.as_str()))
                .ok()
        });
        let Some(ac) = ac else { return Vec::new() };
        // Anchors are taken with colour codes removed; so is the text searched.
        let text = context::strip_ansi(text);
        let mut found: Vec<u32> =
            ac.find_overlapping_iter(&*text).map(|m| m.pattern().as_u32()).collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Per category: (distinct anchors, how many of them are marked in
    /// `found`, indexed in the order of [`AnchorSet::iter`]).
    pub fn retention_of(&self, found: &[bool]) -> BTreeMap<Category, (usize, usize)> {
        let mut out: BTreeMap<Category, (usize, usize)> = BTreeMap::new();
        for (i, (cat, _, _)) in self.entries().enumerate() {
            let e = out.entry(cat).or_insert((0, 0));
            e.0 += 1;
            e.1 += usize::from(found.get(i).copied().unwrap_or(false));
        }
        out
    }
}

/// The anchors found in one text: what [`AnchorSet::extract`] adds.
#[derive(Debug, Default)]
struct Scan {
    hits: Vec<(Category, Box<str>)>,
    /// Candidates dropped because they look like secrets.
    secrets: u64,
}

impl Scan {
    fn add(&mut self, category: Category, value: &str) {
        if value.is_empty() {
            return;
        }
        // An anchor index must never quote a credential (a URL with a token, an error line with a key).
        if crate::redact::contains_secret(value) {
            self.secrets += 1;
            return;
        }
        self.hits.push((category, value.into()));
    }

    fn bytes(&self) -> usize {
        64 + self.hits.iter().map(|(_, v)| v.len() + 24).sum::<usize>()
    }
}

/// Texts shorter than this are scanned every time (cheaper than a lookup).
const MIN_CACHED_SCAN_BYTES: usize = 64;

/// The memos of anchor scans, a value of [`crate::policy::Caches`].
pub(crate) struct Scans {
    /// Scans by text hash and length, and whether error lines were taken
    /// (all a scan depends on). A compaction scans its region for the summary
    /// and the whole session for the retention figures, and `replay` /
    /// `report` compact the same growing history again and again: each text
    /// is scanned once. Its budget is in bytes of scan results
    /// ([`budgets::ANCHOR_SCANS`]).
    whole: Memo<(u128, usize, bool), Arc<Scan>>,
    /// The scans of the pieces of a text ([`AnchorSet::extract_pieces`]), by
    /// the text's hash and length: a call's arguments are parsed for their
    /// strings once, not at every compaction that reads them. Its budget is in
    /// bytes of scan results ([`budgets::ANCHOR_PIECES`]).
    pieces: Memo<(u128, usize), Arc<Scan>>,
}

impl Scans {
    /// Empty memos sized for `reach`.
    pub(crate) fn new(reach: budgets::Reach) -> Scans {
        Scans {
            whole: Memo::with_budget(budgets::ANCHOR_SCANS.within(reach)),
            pieces: Memo::with_budget(budgets::ANCHOR_PIECES.within(reach)),
        }
    }
}

impl Scans {
    /// The scan of `text`, remembered (short texts are scanned every time).
    fn scan(&self, text: &str, errors: bool) -> Arc<Scan> {
        if text.len() < MIN_CACHED_SCAN_BYTES {
            return Arc::new(scan(text, errors));
        }
        let (hash, len) = text_key(text);
        self.whole.get_or_insert_with(
            hash,
            (hash, len, errors),
            || Arc::new(scan(text, errors)),
            |s| s.bytes(),
        )
    }
}

/// Every anchor occurrence of `text`, in the order found. Error lines are
/// taken only when `errors` is true.
fn scan(text: &str, errors: bool) -> Scan {
    let mut out = Scan::default();
    scan_into(&mut out, text, errors);
    out
}

/// [`scan`] of `text`, its hits added after those `out` holds.
fn scan_into(out: &mut Scan, text: &str, errors: bool) {
    let Some(p) = PATTERNS.as_ref() else { return };
    let stripped = context::strip_ansi(text);
    let text: &str = &stripped;
    let mut url_spans = Vec::new();
    for m in p.url.find_iter(text) {
        url_spans.push(m.range());
        let url = trim_punct(m.as_str());
        if url.len() <= MAX_URL_CHARS && context::url_has_host(url) {
            out.add(Category::Urls, url);
        }
    }
    let in_url = |start: usize| url_spans.iter().any(|r| r.contains(&start));
    for (start, end) in pr_refs(p, text) {
        let value = &text[start..end];
        let keep = if value.starts_with('#') {
            !in_url(start)
                && !is_css_color(text, start, value)
                && context::pr_hash_in_context(text, start)
        } else {
            // `pull/N` and `issues/N` count inside a URL too; `PR N` is prose.
            !value.starts_with("PR") || !in_url(start)
        };
        if keep {
            out.add(Category::Prs, value);
        }
    }
    let mut commits: Vec<&str> = Vec::new();
    let mut other_ids: Vec<&str> = Vec::new();
    for (start, end) in commit_runs(text) {
        let v = &text[start..end];
        let mut labelled = false;
        if v.bytes().any(|b| b.is_ascii_digit())
            && v.bytes().any(|b| b.is_ascii_lowercase())
            && !in_url(start)
            && !context::commit_is_other(text, start, end, &mut labelled)
        {
            commits.push(v);
        } else if labelled {
            other_ids.push(v);
        }
    }
    // An id the log labels as another kind anywhere in the text is that kind everywhere in it.
    for v in commits {
        if !other_ids.contains(&v) {
            out.add(Category::Commits, v);
        }
    }
    let is_branch = |start: usize, v: &str| {
        let last = v.rsplit('/').next().unwrap_or(v);
        !v.is_empty() && !has_extension(last) && !in_url(start)
    };
    let mut branch_starts = Vec::new();
    for (start, end) in context::branch_spans(text) {
        let v = trim_punct(&text[start..end]).trim_end_matches('/');
        if is_branch(start, v) {
            branch_starts.push(start);
            out.add(Category::Branches, v);
        }
    }
    for m in p.branch.find_iter(text) {
        let before = text[..m.start()].chars().next_back();
        let v = trim_punct(m.as_str()).trim_end_matches('/');
        if !matches!(before, Some('/' | '.' | '\\'))
            && is_branch(m.start(), v)
            && !branch_starts.contains(&m.start())
        {
            out.add(Category::Branches, v);
        }
    }
    for (start, end) in path_matches(p, text, true) {
        if let Some(v) = as_path(text, start, end)
            && !in_url(start)
        {
            out.add(Category::Paths, v);
        }
    }
    if errors {
        for line in error_lines(p, text) {
            let cut = line.char_indices().nth(MAX_ERROR_LINE_CHARS).map_or(line.len(), |(i, _)| i);
            out.add(Category::Errors, &line[..cut]);
        }
    }
    for c in p.handle.captures_iter(text) {
        let Some(name) = c.get(1) else { continue };
        let at = name.start() - 1;
        if context::handle_is_code(text, at, name.end()) {
            continue;
        }
        if NOT_HANDLES.contains(&name.as_str().to_ascii_lowercase().as_str()) {
            continue;
        }
        out.add(Category::Handles, &text[at..name.end()]);
    }
}

/// The nearest of `N` kinds of candidate position in a text, each kind found
/// lazily: `find(kind, from)` gives the first of that kind at or after `from`
/// (`usize::MAX` when none is left), and is asked again only once the scan
/// has passed the one it gave. Merges the literal searches of [`pr_refs`] and
/// [`error_lines`].
struct Nearest<F, const N: usize> {
    next: [usize; N],
    find: F,
}

impl<F: Fn(usize, usize) -> usize, const N: usize> Nearest<F, N> {
    fn new(find: F) -> Self {
        Nearest { next: std::array::from_fn(|kind| find(kind, 0)), find }
    }

    /// The nearest candidate at or after `from`, if any is left.
    fn at_or_after(&mut self, from: usize) -> Option<usize> {
        for (kind, at) in self.next.iter_mut().enumerate() {
            if *at < from {
                *at = (self.find)(kind, from);
            }
        }
        self.next.iter().copied().min().filter(|&at| at != usize::MAX)
    }
}

/// The searchers of [`pr_refs`]' word prefixes, built once (building one
/// cost about as much as searching a short text with it).
static PR_PREFIXES: LazyLock<[memchr::memmem::Finder<'static>; 3]> =
    LazyLock::new(|| [b"PR".as_slice(), b"pull/", b"issues/"].map(memchr::memmem::Finder::new));

/// The searcher of [`error_lines`]' second hint, `": "`, built once: it is
/// asked again at every candidate the scan passes.
static COLON_SPACE: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b": "));

/// The spans of PR reference candidates in `text`: the `pr` pattern's
/// matches, as its `find_iter` gives them (pinned by a proptest). Which are
/// PRs is decided by the caller ([`scan`]): a `#NNN` only in a PR context.
///
/// Every match starts at a `#`, `PR`, `pull/` or `issues/`. The regex
/// engine's own search for that set of prefixes flags every `i`, `p`, `P` and
/// `#` (it keeps one byte of each), which made it the slowest of the anchor
/// scans (benches/RESULTS.md, 2026-12-01, evening again); here each prefix has
/// its own memchr / memmem finder, and the pattern is tried anchored at the
/// nearest candidate (its `\b` looks at the bytes before).
/// No match can start inside another (the digits and separators of one hold
/// none of those prefixes but the `#` of `PR #1`, which a search resumed after
/// the match skips, as `find_iter` does).
fn pr_refs<'t>(p: &'t Patterns, text: &'t str) -> impl Iterator<Item = (usize, usize)> + 't {
    let b = text.as_bytes();
    // The next candidate of each prefix at or after `from`; `usize::MAX` when none is left.
    let next = |prefix: usize, from: usize| -> usize {
        let hay = &b[from.min(b.len())..];
        let at = match prefix {
            // A `#` needs a digit next: an ASCII one or a non-ASCII char (`\d` is Unicode).
            0 => memchr::memchr_iter(b'#', hay)
                .find(|&i| hay.get(i + 1).is_some_and(|&c| c.is_ascii_digit() || c >= 0x80)),
            1 => PR_PREFIXES[0].find(hay),
            2 => PR_PREFIXES[1].find(hay),
            _ => PR_PREFIXES[2].find(hay),
        };
        at.map_or(usize::MAX, |i| from + i)
    };
    let mut nearest = Nearest::<_, 4>::new(next);
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let at = nearest.at_or_after(from)?;
            let input = Input::new(text).range(at..).anchored(Anchored::Yes);
            let Some(m) = p.pr.search(&input) else {
                from = at + 1;
                continue;
            };
            from = m.end();
            return Some((at, m.end()));
        }
    })
}

/// The spans of commit-hash candidates in `text`: what `\b[0-9a-f]{7,40}\b`
/// (ASCII word boundaries) finds, that is, every maximal run of ASCII word
/// bytes (`[0-9A-Za-z_]`) made only of `[0-9a-f]`, 7 to 40 long.
///
/// Such a run covers 7 consecutive bytes, so it holds a byte at any offset
/// congruent to 6 modulo 7 counted from where the last run ended: only those
/// bytes are looked at until one is a hex digit, then the stretch of hex
/// digits around it is. That stretch is a run when word bytes bound it on
/// neither side; otherwise its word holds a byte that is not a hex digit (in
/// prose, most words that hold an `a`–`f` do, and are left after a byte or
/// two instead of being read whole). Either way no run starts before the
/// stretch's end, where the probing starts again. Three times the regex
/// engine's speed here; pinned against it by a proptest.
fn commit_runs(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = text.as_bytes();
    let word = |i: usize| WORD_BYTES[usize::from(b[i])];
    let hex = |i: usize| HEX_DIGITS[usize::from(b[i])];
    let mut probe = 6;
    std::iter::from_fn(move || {
        while probe < b.len() {
            if !hex(probe) {
                probe += 7;
                continue;
            }
            let mut start = probe;
            while start > 0 && hex(start - 1) {
                start -= 1;
            }
            let mut end = probe + 1;
            while end < b.len() && hex(end) {
                end += 1;
            }
            probe = end + 7;
            let bounded = (start == 0 || !word(start - 1)) && (end == b.len() || !word(end));
            if bounded && (7..=40).contains(&(end - start)) {
                return Some((start, end));
            }
        }
        None
    })
}

/// ASCII word bytes, `[0-9A-Za-z_]` (what `(?-u:\b)` looks at).
const WORD_BYTES: [bool; 256] = byte_table!(|c| c.is_ascii_alphanumeric() || c == b'_');

/// The bytes of a commit hash, `[0-9a-f]`.
const HEX_DIGITS: [bool; 256] = byte_table!(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));

/// The bytes no `path` match holds: ASCII bytes other than `\w` and
/// `@ . + - / ~ \ : *` (a non-ASCII byte may be part of a `\w` char: kept in).
const PATH_STOPS: [bool; 256] = byte_table!(|c| c.is_ascii()
    && !(c.is_ascii_alphanumeric()
        || matches!(c, b'_' | b'@' | b'.' | b'+' | b'-' | b'/' | b'~' | b'\\' | b':' | b'*')));

/// A `path` match at `start..end` of `text` as a path anchor: trimmed of
/// trailing punctuation, holding a separator, its last segment with an
/// extension, and not after a `:` (a URL's `//host/...`, a `key:a/b.c`).
fn as_path(text: &str, start: usize, end: usize) -> Option<&str> {
    // A match followed by a separator is a directory (`node_modules/.bin/`).
    if text[end..].starts_with(['/', '\\']) {
        return None;
    }
    let v = trim_punct(text[start..end].trim_start_matches('*'));
    let v = without_line_suffix(v);
    let last = v.rsplit(['/', '\\']).next().unwrap_or(v);
    let sep = v.contains('/') || v.contains('\\');
    (sep && has_extension(last) && !text[..start].ends_with(':')).then_some(v)
}

/// `v` without the `-NN-` of a grep context line (`src/a.ts-69-  code`).
fn without_line_suffix(v: &str) -> &str {
    let Some(head) = v.strip_suffix('-') else { return v };
    let digits = head.trim_end_matches(|c: char| c.is_ascii_digit());
    match digits.strip_suffix('-') {
        Some(path) if digits.len() < head.len() => path,
        _ => v,
    }
}

/// The spans of the `path` pattern's matches in `text`, found by running it
/// only over the stretches around a `/` or `\`. A match is made of `\w` and
/// `@ . + - / \ : ~` and holds a `/` or a `\`, and the pattern looks at
/// nothing around it, so the stretches between ASCII bytes outside that set
/// that hold a separator give every match, and the same ones. Pinned against
/// a search of the whole text by a proptest.
///
/// With `paths_only`, a stretch with no `.` after its first separator is not
/// searched: its matches can hold no extension after a separator, so none is
/// a path ([`as_path`]). Two stretches in three of the bench corpus's texts
/// are such (`a/b`, `2024/01/02`, `and/or`). Pinned by the same proptest.
fn path_matches<'t>(
    p: &'t Patterns,
    text: &'t str,
    paths_only: bool,
) -> impl Iterator<Item = (usize, usize)> + 't {
    let b = text.as_bytes();
    let stop = |c: u8| PATH_STOPS[usize::from(c)];
    // The stretches, in order: each around the next separator after the last.
    let mut from = 0;
    let stretches = std::iter::from_fn(move || {
        let at = from + memchr::memchr2(b'/', b'\\', b.get(from..)?)?;
        let mut start = at;
        while start > from && !stop(b[start - 1]) {
            start -= 1;
        }
        let mut end = at + 1;
        while end < b.len() && !stop(b[end]) {
            end += 1;
        }
        from = end;
        // No separator lies before `at` in the stretch: an extension of a
        // path in it follows `at`.
        let dotted = !paths_only || memchr::memchr(b'.', &b[at..end]).is_some();
        Some(dotted.then_some((start, end)))
    });
    stretches.flatten().flat_map(move |(start, end)| {
        p.path.find_iter(&text[start..end]).map(move |(s, e)| (start + s, start + e))
    })
}

/// The error lines of `text`, trimmed, in order: the lines of `text.lines()`
/// that are not empty, shorter than 4,000 bytes and match `error` once trimmed.
/// Only the lines holding an `error_hint` match are tried: trying every line
/// cost more than all the other anchor patterns together.
///
/// A line `E[A-Z]{3,}: ` matches holds an upper-case letter then `": "`, the
/// second hint: a pattern of 26 prefixes would turn the literal search of the
/// first into an automaton walk.
fn error_lines<'t>(p: &'t Patterns, text: &'t str) -> impl Iterator<Item = &'t str> + 't {
    // The next candidate of each hint at or after `from`; `usize::MAX` when none is left.
    let hint = |from: usize| p.error_hint.find_at(text, from).map_or(usize::MAX, |m| m.start());
    let colon = |from: usize| {
        COLON_SPACE
            .find_iter(&text.as_bytes()[from..])
            .map(|i| from + i)
            .find(|&i| i > from && text.as_bytes()[i - 1].is_ascii_uppercase())
            .map_or(usize::MAX, |i| i - 1)
    };
    let mut nearest =
        Nearest::<_, 2>::new(move |kind, from| if kind == 0 { hint(from) } else { colon(from) });
    let mut from = 0;
    std::iter::from_fn(move || {
        while from <= text.len() {
            let at = nearest.at_or_after(from)?;
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
            from = end + 1;
            let line = text[start..end].trim();
            if !line.is_empty() && line.len() < 4_000 && p.error.is_match(line) {
                return Some(line);
            }
        }
        None
    })
}

/// Returns true if and only if `line` (trimmed) reads like an error report:
/// an exception line, a compiler or test-runner failure, a panic, an errno name.
/// Code that merely names an error type (`raise ValueError(...)`) does not.
pub fn is_error_line(line: &str) -> bool {
    PATTERNS.as_ref().is_some_and(|p| p.error.is_match(context::strip_ansi(line).trim()))
}

/// Returns true if and only if a `#NNN` right after a `:` is a 3- or 6-digit CSS color.
fn is_css_color(text: &str, start: usize, value: &str) -> bool {
    let digits = value.len() - 1;
    (digits == 3 || digits == 6) && text[..start].trim_end().ends_with(':')
}

/// The rendered `## Anchor Index` section and what did not fit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnchorIndex {
    /// The section body (without its heading), empty when there is nothing.
    pub body: String,
    pub included: usize,
    pub dropped: BTreeMap<Category, usize>,
}

/// Chars one anchor costs in the index: the value, its `(xN)` and a separator.
fn cost(a: &Anchor) -> usize {
    let suffix = if a.count > 1 { format!(" (x{})", a.count).len() } else { 0 };
    a.value.chars().count() + suffix + 2
}

/// Builds the index: categories take turns by rank, so each gets its best
/// anchors before any gets its tenth; an anchor that does not fit is dropped
/// and smaller ones may still fill the budget.
pub fn build_index(set: &AnchorSet, budget_chars: usize) -> AnchorIndex {
    let ranked: Vec<(Category, Vec<Anchor>)> =
        Category::ALL.iter().map(|&c| (c, set.ranked(c))).filter(|(_, v)| !v.is_empty()).collect();
    let mut chosen: Vec<Vec<&Anchor>> = vec![Vec::new(); ranked.len()];
    let mut dropped: BTreeMap<Category, usize> = BTreeMap::new();
    let mut used = 0usize;
    let deepest = ranked.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    for rank in 0..deepest {
        for (k, (cat, list)) in ranked.iter().enumerate() {
            let Some(a) = list.get(rank) else { continue };
            let c = cost(a) + if chosen[k].is_empty() { cat.name().len() + 4 } else { 0 };
            if used + c <= budget_chars {
                used += c;
                chosen[k].push(a);
            } else {
                *dropped.entry(*cat).or_insert(0) += 1;
            }
        }
    }
    let mut body = String::new();
    let mut included = 0;
    for (k, (cat, _)) in ranked.iter().enumerate() {
        if chosen[k].is_empty() {
            continue;
        }
        included += chosen[k].len();
        let render = |a: &Anchor| {
            if a.count > 1 { format!("{} (x{})", a.value, a.count) } else { a.value.clone() }
        };
        if *cat == Category::Errors {
            body.push_str("- errors:\n");
            for a in &chosen[k] {
                body.push_str("  - ");
                body.push_str(&render(a));
                body.push('\n');
            }
        } else {
            let items: Vec<String> = chosen[k].iter().map(|a| render(a)).collect();
            body.push_str(&format!("- {}: {}\n", cat.name(), items.join(", ")));
        }
    }
    AnchorIndex { body, included, dropped }
}

#[cfg(test)]
mod labelled;
#[cfg(test)]
mod tests;
