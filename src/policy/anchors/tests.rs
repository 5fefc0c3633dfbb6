//! Behaviour tests of the anchor extractor.

use super::*;

fn extract(text: &str) -> Vec<(Category, String)> {
    let mut s = AnchorSet::new();
    s.extract(text, 0, true);
    s.iter().map(|a| (a.category, a.value)).collect()
}

/// Pieces extracted together, the first time and from the memo, give
/// the set their one-by-one extraction gives (counts, last ordinals,
/// secrets dropped); texts that differ only late are told apart.
#[test]
fn pieces_extract_as_each_piece_would() {
    let scans = Scans::new(crate::memo::budgets::Reach::Run);
    let pieces_of = |t: &str| -> Vec<String> { t.split('|').map(str::to_string).collect() };
    let texts = [
        "see src/main.rs and https://example.com/a|then src/main.rs again|ERR: E0432".to_string(),
        format!(
            "{}|tests/a_test.py failed|https://api.example.com/v1?access_token=abcdef123456",
            "pad ".repeat(20)
        ),
        format!(
            "{}|tests/a_test.py failed|https://api.example.com/v1?access_token=abcdef123456 src/b.rs",
            "pad ".repeat(20)
        ),
        "short|see a/x.rs".to_string(),
    ];
    for _ in 0..2 {
        for (i, text) in texts.iter().enumerate() {
            let mut together = AnchorSet::new();
            let mut each = AnchorSet::new();
            for ordinal in [3, 1 + i as u64] {
                together.extract_pieces(&scans, text, ordinal, |t| {
                    pieces_of(t).into_iter().map(Cow::Owned).collect()
                });
                pieces_of(text).iter().for_each(|p| each.extract(p, ordinal, false));
            }
            assert_eq!(together.maps, each.maps, "{text}");
            assert_eq!(together.secrets_dropped, each.secrets_dropped, "{text}");
            assert!(!together.is_empty(), "{text}");
            assert_eq!(together.secrets_dropped > 0, text.contains("token="), "{text}");
        }
    }
    let last = |t: &String| {
        let mut set = AnchorSet::new();
        set.extract_pieces(&scans, t, 0, |t| pieces_of(t).into_iter().map(Cow::Owned).collect());
        set.len()
    };
    assert_ne!(last(&texts[1]), last(&texts[2]));
}

fn of(cat: Category, text: &str) -> Vec<String> {
    extract(text).into_iter().filter(|(c, _)| *c == cat).map(|(_, v)| v).collect()
}

/// Asserts that none of `texts` gives an anchor of `cat`.
fn none_of(cat: Category, texts: &[&str]) {
    for text in texts {
        assert_eq!(of(cat, text), Vec::<String>::new(), "{cat}: {text}");
    }
}

#[test]
fn category_all_is_in_discriminant_and_rendering_order() {
    // `AnchorSet` indexes its maps by `category as usize` and walks them in
    // `Category::ALL` order, which must be the order of `(Category, value)`.
    for (i, c) in Category::ALL.iter().enumerate() {
        assert_eq!(*c as usize, i, "{c}");
    }
    assert!(Category::ALL.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn retention_searches_for_anchors_added_after_an_earlier_search() {
    let mut s = AnchorSet::new();
    s.extract("edit src/a.rs", 0, true);
    let out = "kept src/a.rs and src/b.rs";
    assert_eq!(s.retention(out)[&Category::Paths], (1, 1));
    s.extract("then src/b.rs and src/c.rs", 1, true);
    assert_eq!(s.retention(out)[&Category::Paths], (3, 2), "the search must be rebuilt");
    assert_eq!(s.retention("nothing")[&Category::Paths], (3, 0));
}

#[test]
fn a_value_seen_again_is_counted_with_its_latest_position() {
    let mut s = AnchorSet::new();
    s.extract("see src/main.rs and PR #12", 3, true);
    s.extract("src/main.rs again", 9, true);
    s.extract("src/main.rs once more", 5, true);
    let paths = s.ranked(Category::Paths);
    assert_eq!(paths.len(), 1);
    assert_eq!(
        (paths[0].value.as_str(), paths[0].count, paths[0].last_seen),
        ("src/main.rs", 3, 9)
    );
    assert_eq!(s.len(), 2);
    let all: Vec<(Category, String)> = s.iter().map(|a| (a.category, a.value)).collect();
    assert_eq!(
        all,
        [(Category::Prs, "PR #12".to_string()), (Category::Paths, "src/main.rs".to_string())]
    );
    assert_eq!(
        s.counts().into_iter().collect::<Vec<_>>(),
        [(Category::Prs, 1), (Category::Paths, 1)]
    );
}

#[test]
fn prs_and_issues() {
    assert_eq!(of(Category::Prs, "fixes #12, closes (#3456)"), ["#12", "#3456"]);
    assert_eq!(of(Category::Prs, "see PR 123 and PR #77"), ["PR #77", "PR 123"]);
    assert_eq!(of(Category::Prs, "merged https://github.com/o/r/pull/99 today"), ["pull/99"]);
    assert_eq!(of(Category::Prs, "see pull/99 and issues/7"), ["issues/7", "pull/99"]);
    none_of(Category::Prs, &["color: #333; background:#123456", "page#12"]);
}

#[test]
fn commits_need_a_letter_and_a_digit() {
    assert_eq!(of(Category::Commits, "at a1b2c3d and 1234567 and deadbeef"), ["a1b2c3d"]);
    none_of(Category::Commits, &["id 550e8400-e29b-41d4-a716-446655440000"]);
    let full = "0123456789abcdef0123456789abcdef01234567";
    assert_eq!(of(Category::Commits, &format!("commit {full}")), [full]);
    // 64 hex chars is a sha256, not a commit.
    none_of(Category::Commits, &[&"ab12".repeat(16)]);
}

#[test]
fn branches_are_not_paths() {
    assert_eq!(of(Category::Branches, "on fix/login-redirect now."), ["fix/login-redirect"]);
    none_of(Category::Branches, &["read src/fix/mod.rs and docs/README.md"]);
}

#[test]
fn paths_need_a_separator_and_extension() {
    assert_eq!(
        of(Category::Paths, "edit src/main.rs, ./a/b.test.tsx and /etc/hosts; also v1/2.5"),
        ["./a/b.test.tsx", "src/main.rs"]
    );
    none_of(Category::Paths, &["see https://x.test/a/b.html"]);
    assert_eq!(of(Category::Paths, r"C:\Users\me\proj\app.py"), [r"C:\Users\me\proj\app.py"]);
}

/// Pieces that make (or nearly make) error lines and PR references, for
/// texts that put them at every position of a line.
const PIECES: &[&str] = &[
    "Error",
    "error",
    "Error: ",
    "ValueError",
    "Exception",
    "Traceback (most recent call last)",
    "panic: ",
    "panicked at",
    "fatal error:",
    "FAIL",
    "FAILED",
    "--- FAIL:",
    "npm ERR!",
    "Uncaught ",
    "ENOENT",
    "EPERM: ",
    "ERROR",
    "EXYZ: ",
    "SIGSEGV",
    "command not found",
    "No such file or directory",
    "Permission denied",
    "Segmentation fault",
    "E ",
    "[ERROR] ",
    "PR",
    "PR #12",
    "pull/7",
    "issues/42",
    "#123",
    ":#fff",
    "x",
    "ok",
    "a.b.",
    "_",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\u{3000}",
    "\u{85}",
    "é",
    ":",
    "(",
    "at ",
    "failed",
    " 3 failed",
    "x  ",
    "×",
    "ERROR:",
    "{\"error\": \"",
    "Access denied",
    "no such file or directory",
    ": failed to ",
    "is not a function",
    "OOM killed",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// The hinted search finds exactly the lines a try of every line finds.
    #[test]
    fn error_lines_are_those_of_a_line_by_line_search(
        picks in proptest::collection::vec(0..PIECES.len(), 0..40),
    ) {
        let text: String = picks.iter().map(|&i| PIECES[i]).collect();
        let p = PATTERNS.as_ref().unwrap();
        let every_line: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && l.len() < 4_000 && p.error.is_match(l))
            .collect();
        proptest::prop_assert_eq!(error_lines(p, &text).collect::<Vec<_>>(), every_line);
    }

    /// The PR, commit and path scans find what the plain patterns find.
    #[test]
    fn the_fast_scans_find_what_the_patterns_find(
        picks in proptest::collection::vec(0..PIECES.len() + SCAN_PIECES.len(), 0..40),
    ) {
        let text = picked(&picks, &[]);
        let p = PATTERNS.as_ref().unwrap();
        let spans = |r: &Regex| r.find_iter(&text).map(|m| (m.start(), m.end())).collect::<Vec<_>>();
        proptest::prop_assert_eq!(commit_runs(&text).collect::<Vec<_>>(), spans(&COMMIT));
        let plain_paths: Vec<_> = p.path.re.find_iter(&text).map(|m| (m.start(), m.end())).collect();
        proptest::prop_assert_eq!(path_matches(p, &text, false).collect::<Vec<_>>(), plain_paths);
        let paths = |only| {
            path_matches(p, &text, only).filter_map(|(s, e)| as_path(&text, s, e)).collect::<Vec<_>>()
        };
        proptest::prop_assert_eq!(paths(true), paths(false));
        let prs: Vec<(usize, usize)> = PR
            .captures_iter(&text)
            .filter_map(|c| c.get(1).or_else(|| c.get(0)))
            .map(|m| (m.start(), m.end()))
            .collect();
        proptest::prop_assert_eq!(pr_refs(p, &text).collect::<Vec<_>>(), prs);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// A `Guarded` pattern skips texts without its byte: every match of the
    /// pattern, searched without the guard, holds that byte, and the guarded
    /// search finds what the plain one finds.
    #[test]
    fn every_match_of_a_guarded_pattern_holds_its_byte(
        picks in proptest::collection::vec(0..PIECES.len() + SCAN_PIECES.len() + 12, 0..40),
        drop_slash in proptest::bool::ANY,
    ) {
        const MORE: [&str; 12] = [
            "https://x.io/a", "http://", "https:", "feat/x-y", "fix/ab", "release", " @alice ",
            "@bob-2", "(@c1", "@", "/", "`",
        ];
        let text = picked(&picks, &MORE);
        // Half the texts lose their slashes: the guard then skips the search.
        let text = if drop_slash { text.replace('/', "") } else { text };
        let p = PATTERNS.as_ref().unwrap();
        for g in [&p.url, &p.branch, &p.handle] {
            let plain: Vec<_> = g.re.find_iter(&text).map(|m| m.range()).collect();
            let needs = char::from(g.needs);
            proptest::prop_assert!(plain.iter().all(|r| text[r.clone()].contains(needs)), "{:?}", plain);
            let guarded: Vec<_> = g.find_iter(&text).map(|m| m.range()).collect();
            proptest::prop_assert_eq!(&guarded, &plain);
            let captured: Vec<_> = g.captures_iter(&text).filter_map(|c| c.get(0)).map(|m| m.range()).collect();
            proptest::prop_assert_eq!(&captured, &plain);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// The error pattern compiled in parts ([`AnyOf`]) matches a line, and
    /// a whole text, exactly when the alternation of its parts does.
    #[test]
    fn the_error_parts_match_what_their_alternation_matches(
        picks in proptest::collection::vec(0..PIECES.len() + SCAN_PIECES.len() + 10, 0..40),
    ) {
        const MORE: [&str; 10] = [
            "observation: ", "{\"error\": \"\", \"response\": \"", "Not Found", "'status': 404",
            "{'message': 'x'}\"}", "Build failed", "error TS2322:", "a.error: ", "Tests failing:",
            "Foo.BarError: x",
        ];
        let text = picked(&picks, &MORE);
        let p = PATTERNS.as_ref().unwrap();
        for line in text.lines().map(str::trim).chain([text.as_str()]) {
            proptest::prop_assert_eq!(p.error.is_match(line), ERROR.is_match(line), "{:?}", line);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// Anchored tries at each position find the matches a plain search finds,
    /// in texts where matches start late (more than `MAX_ANCHORED_TRIES`
    /// positions on) and inside URLs.
    #[test]
    fn stepwise_finds_what_a_plain_search_finds(
        picks in proptest::collection::vec(0..PIECES.len() + SCAN_PIECES.len() + 10, 0..40),
    ) {
        const MORE: [&str; 10] = [
            "abcdefghijklmnopqrstuvwxyz", ":", "/", "\\", "https://x.io/a.md", "C:", ".rs", "é",
            "~/", "../",
        ];
        let text = picked(&picks, &MORE);
        let p = PATTERNS.as_ref().unwrap();
        let plain: Vec<_> = p.path.re.find_iter(&text).map(|m| (m.start(), m.end())).collect();
        proptest::prop_assert_eq!(p.path.find_iter(&text).collect::<Vec<_>>(), plain);
    }
}

/// The error pattern as one regex: the alternation of its parts.
static ERROR: LazyLock<Regex> = LazyLock::new(|| Regex::new(&ERROR_PARTS.join("|")).unwrap());

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
    /// No anchor holds a newline: retention searches an output text by
    /// text instead of joined (`Prepared::retention`).
    #[test]
    fn no_anchor_holds_a_newline(
        picks in proptest::collection::vec(0..PIECES.len() + SCAN_PIECES.len() + 8, 0..40),
    ) {
        const MORE: [&str; 8] =
            ["https://x.io/a", "feat/x-y", " @alice ", "src/a.rs", r"C:\a\b.rs", "Error: x", "/", "."];
        let text = picked(&picks, &MORE);
        let hits = scan(&text, true).hits;
        proptest::prop_assert!(hits.iter().all(|(_, v)| !v.contains('\n')), "{:?}", hits);
    }
}

/// The patterns the fast scans replace, as they were.
static COMMIT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)[0-9a-f]{7,40}(?-u:\b)").unwrap());
static PR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?-u:\b)PR ?#?\d{1,6}(?-u:\b)|(?-u:\b)(?:pull|issues)/\d{1,6}(?-u:\b)|#\d{1,6}(?-u:\b)",
    )
    .unwrap()
});

/// Pieces around which the commit, path and PR scans decide: hex runs of
/// every length near the bounds, word and separator bytes, Unicode
/// letters and spaces, Windows paths.
/// The text of generated `picks`: indices into [`PIECES`], then
/// [`SCAN_PIECES`], then a test's own `more` pieces.
fn picked(picks: &[usize], more: &[&str]) -> String {
    let piece = |i: usize| match i.checked_sub(PIECES.len()) {
        None => PIECES[i],
        Some(j) => SCAN_PIECES.get(j).copied().unwrap_or_else(|| more[j - SCAN_PIECES.len()]),
    };
    picks.iter().map(|&i| piece(i)).collect()
}

const SCAN_PIECES: &[&str] = &[
    "abc1234",
    "deadbeef0",
    "0123456789abcdef0123456789abcdef01234567",
    "0123456789abcdef0123456789abcdef012345678",
    "abc123",
    "ABC1234",
    "x",
    "_",
    "-",
    "9",
    "f",
    " ",
    "\n",
    "\u{3000}",
    "é",
    "日本",
    "/",
    "\\",
    "C:\\",
    "./",
    "../",
    "~/",
    "src/main.rs",
    "a.b",
    "@",
    "+",
    ":",
    "(",
    "'",
    "\"",
    ",",
    "#",
    "#7",
    "#123456",
    "#1234567",
    "PR",
    "PR 5",
    "pull/",
    "issues/9",
    "https://x.io/a/b.rs",
    // `\d` is Unicode: Arabic-Indic and fullwidth digits are digits too.
    "\u{663}",
    "\u{ff17}",
    "PR #",
    "PR#4",
    "pull/12",
    "P",
    "i",
];

#[test]
fn error_lines_across_languages() {
    let text = "ok\nTraceback (most recent call last):\n  ValueError: bad value\nerror[E0382]: borrow of moved value: `x`\nthread 'main' panicked at src/main.rs:3:5\npanic: runtime error: index out of range\nTypeError: x is not a function\nopen: ENOENT: no such file\nall good";
    let errs = of(Category::Errors, text);
    assert_eq!(errs.len(), 7, "{errs:?}");
    assert!(errs.contains(&"ValueError: bad value".to_string()));
    assert!(errs.contains(&"error[E0382]: borrow of moved value: `x`".to_string()));
    let mut s = AnchorSet::new();
    s.extract(text, 0, false);
    assert!(s.ranked(Category::Errors).is_empty(), "errors off for file reads");
}

#[test]
fn code_that_names_errors_is_not_an_error_line() {
    for code in [
        "raise ValueError(\"bad\")",
        "except Exception as e:",
        "return fmt.Errorf(\"x: %w\", err)",
        "throw new TypeError('x')",
        "var ErrNotFound = errors.New(\"not found\")",
        "class MyError(Exception):",
        "if err != nil { return err }",
    ] {
        assert!(!is_error_line(code), "{code}");
    }
    for report in [
        "E       AssertionError: assert 1 == 2",
        "FAILED tests/test_a.py::test_x - KeyError: 'k'",
        "--- FAIL: TestLogin (0.00s)",
        "Error: Cannot find module 'x'",
        "npm ERR! code ELIFECYCLE",
        "bash: foo: command not found",
        "2026-03-24 12:00:01 ERROR db connection refused",
    ] {
        assert!(is_error_line(report), "{report}");
    }
}

#[test]
fn handles_skip_code() {
    assert_eq!(of(Category::Handles, "thanks @alice-b and @bob"), ["@alice-b", "@bob"]);
    none_of(
        Category::Handles,
        &["@dataclass\nclass A: pass\n * @param x\nmail a@b.com", "npm i @types/node"],
    );
}

#[test]
fn urls_are_trimmed() {
    assert_eq!(
        of(Category::Urls, "(see https://example.com/docs/a?b=1)."),
        ["https://example.com/docs/a?b=1"]
    );
}

#[test]
fn ranking_is_count_then_recency() {
    let mut s = AnchorSet::new();
    s.extract("a/one.rs", 1, false);
    s.extract("a/two.rs a/two.rs", 2, false);
    s.extract("a/three.rs", 3, false);
    let r: Vec<String> = s.ranked(Category::Paths).into_iter().map(|a| a.value).collect();
    assert_eq!(r, ["a/two.rs", "a/three.rs", "a/one.rs"]);
}

#[test]
fn index_respects_budget_and_shares_it() {
    let mut s = AnchorSet::new();
    for i in 0..100 {
        s.extract(&format!("src/file{i}.rs https://e.test/{i}/page"), i, false);
    }
    let idx = build_index(&s, 400);
    assert!(idx.body.chars().count() <= 400 + 16, "{}", idx.body.len());
    assert!(idx.body.contains("- paths: "));
    assert!(idx.body.contains("- urls: "));
    let dropped: usize = idx.dropped.values().sum();
    assert_eq!(idx.included + dropped, 200);
    assert!(dropped > 0);
}

#[test]
fn retention_is_verbatim_presence() {
    let mut s = AnchorSet::new();
    s.extract("fix in src/a.rs and src/b.rs at a1b2c3d4", 0, true);
    let r = s.retention("kept src/a.rs only");
    assert_eq!(r[&Category::Paths], (2, 1));
    assert_eq!(r[&Category::Commits], (1, 0));
}

#[test]
fn anchors_that_look_like_secrets_are_dropped() {
    let mut s = AnchorSet::new();
    s.extract("see https://api.example.com/v1?access_token=abcdef123456 and src/a.rs\nError: bad key sk-proj-abcdefghijklmnopqrstuvwxyz012345", 0, true);
    assert_eq!(s.ranked(Category::Urls), Vec::<Anchor>::new());
    assert!(s.ranked(Category::Errors).is_empty());
    assert_eq!(s.ranked(Category::Paths).len(), 1);
    assert_eq!(s.secrets_dropped(), 2);
}

#[test]
fn budget_auto_is_at_least_the_reference() {
    assert_eq!(AnchorBudget::Auto.resolve(1_000), 7_000);
    assert_eq!(AnchorBudget::Auto.resolve(1_000_000), 40_000);
    assert_eq!(AnchorBudget::Chars(7_000).resolve(1_000_000), 7_000);
}

// Precision rules (issue 26, item 4): each with a positive and a hard negative.

#[test]
fn colour_codes_are_removed_before_matching() {
    let text =
        "\x1b[31m\x1b[1mTypeError\x1b[22m: x is not a function\x1b[39m\n\x1b[96msrc/a.ts\x1b[0m:3";
    assert_eq!(of(Category::Errors, text), ["TypeError: x is not a function"]);
    assert_eq!(of(Category::Paths, text), ["src/a.ts"]);
    let mut s = AnchorSet::new();
    s.extract(text, 0, true);
    // Retention searches an output with its colour codes removed too.
    assert_eq!(s.retention(text)[&Category::Errors], (1, 1));
}

#[test]
fn an_id_labelled_as_another_kind_is_not_a_commit() {
    assert_eq!(of(Category::Commits, "HEAD is now at 9e36363 Fix tests"), ["9e36363"]);
    assert_eq!(of(Category::Commits, "commit id 9e36363"), ["9e36363"]);
    none_of(
        Category::Commits,
        &[
            "agentId: aec0bb7a4b487bfff (use SendMessage with to: 'aec0bb7a4b487bfff')",
            "<task-id>a50ef8c736a356431</task-id>",
            "request_id=9f3c2a1b7d",
            "APP_ENCRYPTION_KEY: 0123456789abcdef0123456789abcdef",
            "writing image sha256:95491acd4233e23539a275be4a6937f2c04a0ff504c879d8665afaa4f83d6e1c done",
            "Docker version 29.3.1, build c2be9cc",
            "cargo 1.94.1 (29ea6fb6a 2026-03-24)",
            "index 20edef5..5857437 100755",
            "d7f6aca05b78: Already exists",
            "9da197c0b7a1   postgres:16   \"docker-entrypoint.s…\"   Up 14 minutes",
            "tasks\\a50ef8c736a356431.output",
            "flag{d316759c281bf925d600be698a4973d5}",
            ".text:00400663   e8a8feffff   CALL   sprintf",
        ],
    );
    // A commit range is commits, not blob ids.
    assert_eq!(of(Category::Commits, "Updating 1a2b3c4..5d6e7f8"), ["1a2b3c4", "5d6e7f8"]);
}

#[test]
fn a_hash_number_is_a_pr_only_in_a_pr_context() {
    assert_eq!(of(Category::Prs, "Fixes #42"), ["#42"]);
    assert_eq!(of(Category::Prs, "see rust-lang/rust#1234"), ["#1234"]);
    assert_eq!(of(Category::Prs, "the pull request #7 is merged"), ["#7"]);
    none_of(
        Category::Prs,
        &[
            "#14 113.3 (19/29) Installing xz-libs",
            "#5 [2/7] RUN npm ci",
            "#1 DONE 0.0s",
            "  color: #164267;",
            "'Reservation #2239 awaiting sync'",
            "(retry #1) (10.4s)",
            "attachment #1: screenshot",
            "see https://x.test/doc#123",
        ],
    );
}

#[test]
fn a_branch_needs_a_branch_context_or_prefix() {
    assert_eq!(of(Category::Branches, "git checkout -b dev/anchors"), ["dev/anchors"]);
    assert_eq!(
        of(Category::Branches, "Your branch is up to date with 'origin/main'."),
        ["origin/main"]
    );
    assert_eq!(of(Category::Branches, "pushed feature/login"), ["feature/login"]);
    none_of(
        Category::Branches,
        &[
            "full test/build runs",
            "the docs/quality gate",
            "docs/trajectory and repo/frontend",
            "git checkout src/main.rs",
        ],
    );
}

#[test]
fn decorators_scopes_and_emails_are_not_handles() {
    assert_eq!(of(Category::Handles, "reviewed by @octocat today"), ["@octocat"]);
    none_of(
        Category::Handles,
        &[
            "1387:    @staticmethod",
            "37\t@dataclass",
            "x = 1 @app.route('/a')",
            "see @pytest.fixture usage",
            "// @ts-ignore",
            "use @ts-ignore here",
            "`RegisterRequest.java`: @NotBlank username, @Size(min=8) password",
            "  id  String  @id @default(uuid())",
            "fullstack\\node_modules\\@nodelib\\fs.scandir\\README.md",
            "custom registries (like @magicui)",
            "mail sloria1@gmail.com",
            "placeholder=\"use @username for mention\"",
            "the entity uses @Column and @Valid",
            "<Card @appeal=\"onAppeal\" />",
            "paths: { '@api': ['src/api'] }",
        ],
    );
}

#[test]
fn a_url_needs_a_host() {
    assert_eq!(of(Category::Urls, "open **https://localhost:3443**"), ["https://localhost:3443"]);
    none_of(
        Category::Urls,
        &["Do not use URIs like https:// here", "url=\"https://...\"", "https://<host>/x"],
    );
}

#[test]
fn windows_relative_and_dotfile_paths() {
    assert_eq!(
        of(Category::Paths, r"rg: src\pages\CheckoutPage.vue:12"),
        [r"src\pages\CheckoutPage.vue"]
    );
    assert_eq!(of(Category::Paths, "C:/Users/me/app/main.ts"), ["C:/Users/me/app/main.ts"]);
    assert_eq!(of(Category::Paths, "touch repo/API_tests/.gitkeep"), ["repo/API_tests/.gitkeep"]);
    assert_eq!(of(Category::Paths, "src/a.ts-69-  const x"), ["src/a.ts"]);
    assert_eq!(of(Category::Paths, "globs tests/e2e_*_test.go"), ["tests/e2e_*_test.go"]);
    none_of(Category::Paths, &["ls: node_modules/.bin/: No such file"]);
}

#[test]
fn error_lines_of_test_runners_compilers_and_apis() {
    for report in [
        "src/app.ts(513,31): error TS1005: ',' expected.",
        "internal/handler/audit.go:237:2: syntax error: non-declaration statement outside function body",
        "psql: error: connection to server at \"localhost\" failed",
        "Tests:       7 failed, 13 passed, 20 total",
        " ❯ src/a.test.tsx  (6 tests | 1 failed) 1720ms",
        "  4 failed",
        "    ✕ 204 — deletes itinerary (10 ms)",
        "  x  27 [chromium] › tests\\a.spec.ts:12:7 › displays gauge",
        "#13 ERROR: process \"/bin/sh -c npx prisma generate\" did not complete successfully",
        "api-1  | Error: P3009",
        "+ CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordException",
        "target frontend: failed to solve: process did not complete",
        "npm error workspace frontend@0.1.0",
        "Warning: _curses.error: setupterm: could not find terminfo database",
        "{\"error\": \"No such function name: login\", \"response\": \"\"}",
        "{\"error\": \"\", \"response\": \"{'title': 'Bad Request', 'status': 400}\"}",
        "{\"error\": \"\", \"response\": \"{'message': 'unknown service all'}\"}",
        "The container crashed (exit 137 = OOM killed).",
        "error during build:",
    ] {
        assert!(is_error_line(report), "{report}");
    }
    for benign in [
        "Logs must include context (levels: INFO, WARN, ERROR) and support troubleshooting.",
        "- **Logging strategy** (Winston, INFO/WARN/ERROR, PII scrubbing rules)",
        "      error: 'RATE_LIMITED',",
        "const p = await r.json().catch(() => ({ error: `request failed: ${r.status}` }));",
        "    ✓ 423 — after 10 failed attempts (locked) (5082 ms)",
        "it seems the attempt for cocktail ID 6 failed. Since",
        "but I get the following error:",
        "npm error",
        "{\"error\": \"\", \"response\": \"{'id': 1, 'name': 'Mike Vogel'}\"}",
        "\treturn c.JSON(403, map[string]string{\"error\": \"forbidden\"})",
        "Tests  0 failed | 4 passed (12)",
    ] {
        assert!(!is_error_line(benign), "{benign}");
    }
}

/// A scan's memo key is the text's hash and length and whether error lines
/// are taken: each differing input is a miss, with the text's own scan.
#[test]
fn a_scan_differing_in_any_input_misses() {
    let scans = Scans::new(crate::memo::budgets::Reach::Run);
    let text = format!("{}\nError: it broke in src/a.rs", "pad ".repeat(20));
    let longer = format!("{text} and src/b.rs");
    let with_errors = scans.scan(&text, true);
    let without = scans.scan(&text, false);
    assert_ne!(with_errors.hits.len(), without.hits.len());
    assert_eq!(scans.scan(&longer, true).hits.len(), with_errors.hits.len() + 1);
    assert_eq!(scans.whole.len(), 3);
    // Hits: the memo answers with the first scans.
    assert_eq!(scans.scan(&text, true).hits, with_errors.hits);
    assert_eq!(scans.whole.len(), 3);
}

/// The byte tables hold exactly the bytes of the classes they stand for.
#[test]
fn the_byte_tables_are_their_classes() {
    for c in 0..=u8::MAX {
        let i = usize::from(c);
        assert_eq!(WORD_BYTES[i], c.is_ascii_alphanumeric() || c == b'_', "{c}");
        assert_eq!(HEX_DIGITS[i], matches!(c, b'0'..=b'9' | b'a'..=b'f'), "{c}");
        let in_path = !c.is_ascii() || c.is_ascii_alphanumeric() || b"_@.+-/~\\:*".contains(&c);
        assert_eq!(PATH_STOPS[i], !in_path, "{c}");
    }
}
