//! Tests of the summary builder: framing, section order, extraction, budget,
//! and updating (not nesting) an earlier summary.

use super::*;
use crate::policy::test_msgs::{asst, call, result, user};
use crate::tokens::o200k_meter as meter;

fn build(middle: &[Message], lean: bool, budget: u64) -> Summary {
    let families = ToolFamilies::default();
    let input = SummaryInput {
        all: middle,
        middle,
        middle_start: 0,
        families: &families,
        caches: &Caches::default(),
        lean,
        budget_tokens: budget,
        anchor_budget_chars: 7_000,
        max_tokens: u64::MAX,
        whole_ask_tokens: 0,
        pruned: &[],
    };
    build_summary(&input, &meter())
}

fn session() -> Vec<Message> {
    let mut ts = user("Fix the login bug in src/auth/login.rs. Do not change the public API.");
    ts.meta.timestamp = Some("2026-07-02T10:00:00Z".into());
    let mut c = call("c1", "Bash", r#"{"command":"cargo test -p auth"}"#);
    c.meta.timestamp = Some("2026-07-02T10:01:00Z".into());
    vec![
        ts,
        c,
        result(
            "c1",
            "running 3 tests\nerror[E0308]: mismatched types\n  --> src/auth/login.rs:12:5\nExit code: 101",
        ),
        call(
            "c2",
            "Edit",
            r#"{"file_path":"src/auth/login.rs","old_string":"a","new_string":"b"}"#,
        ),
        result("c2", "The file src/auth/login.rs has been updated."),
        call("c3", "Bash", r#"{"command":"cargo test -p auth"}"#),
        result("c3", "test result: ok. 3 passed\nExit code: 0"),
        asst("I decided to return a typed error instead of a string. Tests pass."),
        user("Does it also cover the logout path?"),
        asst("Yes, logout uses the same check."),
        call(
            "c4",
            "TodoWrite",
            r#"{"todos":[{"content":"Add a regression test","status":"pending"},{"content":"Fix login","status":"completed"}]}"#,
        ),
        result("c4", "ok"),
    ]
}

#[test]
fn framing_and_section_order() {
    let s = build(&session(), true, 2_000);
    assert!(s.text.starts_with(SUMMARY_PREFIX));
    assert!(s.text.lines().next().unwrap().contains("do not act on requests"));
    assert!(s.text.trim_end().ends_with(SUMMARY_END_MARKER));
    let order = [
        heading::ACTIVE_TASK,
        heading::GOAL,
        heading::CONSTRAINTS,
        heading::COMPLETED,
        heading::ACTIVE_STATE,
        heading::BLOCKED,
        heading::DECISIONS,
        heading::RESOLVED,
        heading::PENDING,
        heading::FILES,
        heading::REMAINING,
        heading::ANCHORS,
        heading::USER_MESSAGES,
    ];
    let positions: Vec<usize> =
        order.iter().map(|h| s.text.find(&format!("{h}\n")).unwrap_or(usize::MAX)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}\n{}", s.text);
}

#[test]
fn sections_are_extracted_not_invented() {
    let s = build(&session(), true, 2_000);
    let t = &s.text;
    assert!(t.contains("## Active Task\nDoes it also cover the logout path?"), "{t}");
    assert!(t.contains("Do not change the public API."), "constraint quoted");
    assert!(t.contains("1. Ran `cargo test -p auth` on 2026-07-02 — failed: error[E0308]: mismatched types [tool: Bash]"), "{t}");
    assert!(t.contains("3. Ran `cargo test -p auth` — exit 0, 2 lines output [tool: Bash]"), "{t}");
    assert!(t.contains("I decided to return a typed error instead of a string."), "decision");
    assert!(t.contains("Does it also cover the logout path? — answered"), "resolved question");
    assert!(t.contains("- src/auth/login.rs (modified)"), "{t}");
    assert!(t.contains("- [pending] Add a regression test"));
    assert!(!t.contains("Fix login"), "completed todo items are not remaining work");
    // The error was fixed by a later successful run of the same command: not blocked.
    let blocked = t.split("## Blocked\n").nth(1).unwrap().split("\n\n").next().unwrap();
    assert_eq!(blocked, "None.");
    assert_eq!(s.user_messages, 2);
    assert_eq!(s.user_messages_whole, 2);
}

#[test]
fn empty_sections_say_none() {
    let s = build(&[asst("hello there")], false, 2_000);
    for h in [
        heading::ACTIVE_TASK,
        heading::CONSTRAINTS,
        heading::COMPLETED,
        heading::BLOCKED,
        heading::PENDING,
    ] {
        assert!(s.text.contains(&format!("{h}\nNone.")), "{h}: {}", s.text);
    }
    assert!(!s.text.contains(heading::ANCHORS), "legacy has no anchor index");
}

#[test]
fn unresolved_errors_are_blocked() {
    let msgs = vec![
        user("run the tests please"),
        call("c1", "Bash", r#"{"command":"pytest"}"#),
        result("c1", "E   AssertionError: expected 200, got 500\nExit code: 1"),
    ];
    let s = build(&msgs, false, 2_000);
    assert!(
        s.text.contains(
            "## Blocked\n- [tool: Bash] `pytest`: E AssertionError: expected 200, got 500"
        ),
        "{}",
        s.text
    );
}

#[test]
fn core_sections_fit_the_budget() {
    let mut msgs = vec![user("do a lot of work")];
    for i in 0..400 {
        msgs.push(call(
            &format!("c{i}"),
            "Read",
            &format!(r#"{{"file_path":"src/module_{i}/very/long/path/file_{i}.rs"}}"#),
        ));
        msgs.push(result(&format!("c{i}"), &"x".repeat(500)));
    }
    let s = build(&msgs, false, 2_000);
    assert!(meter().text(&s.text) <= 2_200, "{}", meter().text(&s.text));
    assert!(s.text.contains("earlier actions omitted; numbering continues"));
    assert!(s.text.contains("400. Read src/module_399"), "newest action kept");
}

#[test]
fn an_earlier_summary_is_updated_not_nested() {
    let first = build(&session(), true, 2_000);
    let mut second = vec![user(&first.text)];
    second.extend([
        user("Now add the regression test."),
        call("d1", "Write", r#"{"file_path":"tests/login_test.rs","content":"a\nb"}"#),
        result("d1", "ok"),
    ]);
    let s = build(&second, true, 2_000);
    assert_eq!(s.text.matches(SUMMARY_PREFIX).count(), 1, "not nested");
    assert_eq!(s.text.matches(SUMMARY_END_MARKER).count(), 1);
    // Old actions carried with their numbers, the new one continues the numbering.
    assert!(s.text.contains("1. Ran `cargo test -p auth` on 2026-07-02"), "{}", s.text);
    assert!(s.text.contains("5. Wrote tests/login_test.rs — done [tool: Write]"), "{}", s.text);
    assert!(s.text.contains("Do not change the public API."), "constraints carried");
    assert!(s.text.contains("## Active Task\nNow add the regression test."));
    // The old verbatim user messages are carried after the new ones.
    let users = s.text.split(heading::USER_MESSAGES).nth(1).unwrap();
    let new = users.find("> Now add the regression test.").unwrap();
    let old = users.find("> Fix the login bug").unwrap();
    assert!(new < old);
}

#[test]
fn long_user_messages_are_truncated_in_the_verbatim_section() {
    let long = format!("{}THE ASK AT THE END", "context ".repeat(1_000));
    let s = build(&[user(&long), asst("ok")], true, 2_000);
    assert_eq!(s.user_messages, 1);
    assert_eq!(s.user_messages_whole, 0);
    assert!(s.text.contains("THE ASK AT THE END"), "the end of the ask is kept");
}

#[test]
fn reasoning_never_enters_the_summary() {
    let mut a = asst("visible answer");
    a.reasoning = Some(crate::model::Reasoning {
        field: "reasoning_content".into(),
        text: "SECRET-THOUGHT".into(),
    });
    let s = build(&[user("q?"), a], true, 2_000);
    assert!(!s.text.contains("SECRET-THOUGHT"));
}

#[test]
fn summaries_never_quote_a_secret() {
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    let msgs = [
        user(&format!("use OPENAI_API_KEY={key} for the client")),
        call(
            "c1",
            "Bash",
            &format!(
                r#"{{"command":"curl -H 'Authorization: Bearer {key}' https://api.example.com"}}"#
            ),
        ),
        result("c1", "ok"),
    ];
    let s = build(&msgs, true, 2_000);
    assert!(!s.text.contains(key), "{}", s.text);
    assert!(s.text.contains("[REDACTED:openai_key]"));
    assert!(s.secrets_masked >= 2);
}

#[test]
fn synthetic_user_messages_are_not_real() {
    assert!(real_user_text(&user("<turn_aborted>\nx\n</turn_aborted>")).is_none());
    assert!(real_user_text(&user("   ")).is_none());
    assert!(real_user_text(&asst("hi")).is_none());
    let merged = user(&format!("{SUMMARY_PREFIX} body\n{SUMMARY_END_MARKER}\n\nreal words"));
    assert_eq!(real_user_text(&merged).as_deref(), Some("real words"));
    assert!(is_summary(&merged));
}

/// `json_strings` gives what walking a parsed `Value` gives (duplicate keys
/// aside: it keeps both values), and fails where parsing fails.
#[test]
fn json_strings_match_a_parsed_walk() {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(map) => map.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let deep = format!("{}\"x\"{}", "[".repeat(200), "]".repeat(200));
    for text in [
        r#"{"path": "src/a.rs", "n": 3, "ok": true, "z": null, "list": ["x", {"k": "y\nz"}], "f": -1.5e3}"#,
        r#""just a string""#,
        r#"{"esc": "tab\there \u00e9 \"q\"", "big": 123456789012345678901234567890}"#,
        "[]",
        "  {}  ",
        r#"{"a": "b"} trailing"#,
        r#"{"a": "b""#,
        "not json",
        "",
        r#""\ud800""#,
        &deep,
    ] {
        let parsed = serde_json::from_str::<serde_json::Value>(text).ok().map(|v| {
            let mut out = Vec::new();
            walk(&v, &mut out);
            out
        });
        let streamed = json_strings(text).map(|v| v.into_iter().map(|s| s.into_owned()).collect());
        assert_eq!(streamed, parsed, "{text}");
    }
    let dup = json_strings(r#"{"a": "first", "a": "second"}"#).unwrap();
    assert_eq!(dup, ["first", "second"]);
    // Unescaped strings are borrowed, not copied.
    assert!(matches!(json_strings(r#"["plain"]"#).unwrap()[0], Cow::Borrowed("plain")));
}

mod clipping {
    use super::super::clip;
    use proptest::prelude::*;

    /// The definition `clip` implements without collapsing all of its input.
    fn collapse_then_cut(text: &str, max: usize) -> String {
        let one = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if one.chars().count() <= max {
            one
        } else {
            one.chars().take(max.saturating_sub(3)).chain("...".chars()).collect()
        }
    }

    /// The fast path's white space is `split_whitespace`'s, for every char.
    #[test]
    fn collapsed_knows_every_white_space() {
        for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
            let text = format!("a{c}b");
            let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(super::super::is_collapsed(&text), collapsed == text, "{:#x}", c as u32);
        }
    }

    #[test]
    fn clips_at_the_limit() {
        assert_eq!(clip("  a \n b  ", 3), "a b");
        assert_eq!(clip("ab cd", 4), "a...");
        assert_eq!(clip("ab cd", 5), "ab cd");
        assert_eq!(clip("", 5), "");
        assert_eq!(clip("héllo wörld", 8), "héllo...");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn clip_is_collapse_then_cut(
            parts in proptest::collection::vec(
                proptest::sample::select(&[
                    "a", "word", "é", "日本", " ", "  ", "\n", "\t", "\r", "\x0B", "\x0C",
                    "\x1C", "\u{85}", "\u{a0}", "🙂",
                ][..]),
                0..40,
            ),
            max in 0usize..30,
        ) {
            let text = parts.concat();
            prop_assert_eq!(clip(&text, max), collapse_then_cut(&text, max));
            // So a shell command is clipped as written (`shell_text`) to what
            // clipping it collapsed (`shell_command`) gives.
            let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            prop_assert_eq!(clip(&text, max), clip(&one_line, max));
        }
    }
}

/// A remembered act is the one computed afresh and never another's: another
/// tool map, call, result text, error flag, or no result at all.
#[test]
fn acts_are_remembered_only_for_what_they_describe() {
    let builtin = ToolFamilies::default();
    let mut own = ToolFamilies::default();
    own.extend_from_json(r#"{"tools": {"run_it": "shell"}}"#).unwrap();
    let long = "x".repeat(80);
    let calls = [
        call("a", "run_it", &format!(r#"{{"command":"make a {long}"}}"#)),
        call("a", "run_it", &format!(r#"{{"command":"make b {long}"}}"#)),
    ];
    let out = format!("{long}\nerror: it broke\nExit code: 2");
    let good = format!("{long}\nall good");
    let flagged = {
        let mut r = result("a", &good);
        r.extra_mut().insert("is_error".into(), Value::Bool(true));
        r
    };
    let results = [
        Some(result("a", &out)),
        Some(result("a", &good)),
        Some(flagged),
        Some(result("a", &format!("{long}\nExit code: 0"))),
        None,
    ];
    let mut seen = std::collections::BTreeSet::new();
    let memo = SummaryMemos::new(crate::memo::budgets::Reach::Run);
    for _ in 0..2 {
        for f in [&builtin, &own] {
            for c in &calls {
                let tc = &c.tool_calls[0];
                let args = tc.args_object().unwrap_or_default();
                for r in &results {
                    let got = act(&memo, tc, &args, r.as_ref(), f);
                    let text = r.as_ref().map(Message::text_content);
                    assert_eq!(*got, act_afresh(tc, &args, r.as_ref(), text.as_deref(), f));
                    seen.insert(format!("{:?} {} {}", got.family, got.target, got.phrase));
                }
            }
        }
    }
    // Two maps x two targets x five results that each read apart.
    assert_eq!(seen.len(), 2 * 2 * 5, "{seen:#?}");
}

/// Notes are remembered per text and per speaker: the same text is a user's
/// constraint and question, or an assistant's decision.
#[test]
fn notes_are_remembered_per_text_and_speaker() {
    let texts = [
        "You must never push to main. Why did the build fail? We decided to use serde instead of a hand parser.",
        "You must never push to main. Why did the build fail? We decided to use serde instead of a hand parser!",
        "short one?",
    ];
    let memo = SummaryMemos::new(crate::memo::budgets::Reach::Run);
    for _ in 0..2 {
        for text in texts {
            for said in [Said::User, Said::Assistant] {
                assert_eq!(*noted(&memo, text, said), notes_afresh(text, said), "{text} {said:?}");
            }
        }
    }
    let user = noted(&memo, texts[0], Said::User);
    let assistant = noted(&memo, texts[0], Said::Assistant);
    assert_eq!(user.picked, ["You must never push to main."]);
    assert_eq!(user.questions, ["Why did the build fail?"]);
    assert_eq!(assistant.picked, ["We decided to use serde instead of a hand parser."]);
    assert!(assistant.questions.is_empty());
}

/// Clipping only what the first rendering shows renders, at every limit of
/// the budget loop, what clipping every item renders.
#[test]
fn clipping_the_shown_items_renders_as_clipping_all() {
    let long = |tag: &str, i: usize| format!("{tag}{i} {}", "word ".repeat(100 + i));
    let list = |tag: &str, n: usize| (0..n).map(|i| long(tag, i)).collect::<Vec<_>>();
    let draft = || Draft {
        constraints: list("c", 20),
        blocked: list("b", 13),
        decisions: list("d", 3),
        resolved: list("r", 30),
        pending: list("p", 12),
        files: list("f", 50),
        remaining: list("m", 40),
        actions: (0..450).map(|i| Action { number: i as u64, text: long("a", i) }).collect(),
        ..Draft::default()
    };
    let mut shown = draft();
    shown.clip_shown();
    let mut all = draft();
    all.actions.iter_mut().for_each(|a| a.text = clip(&a.text, 400));
    for (list, width) in [
        (&mut all.constraints, 300),
        (&mut all.blocked, 300),
        (&mut all.decisions, 300),
        (&mut all.resolved, 260),
        (&mut all.pending, 300),
        (&mut all.files, 200),
        (&mut all.remaining, 220),
    ] {
        list.iter_mut().for_each(|item| *item = clip(item, width));
    }
    let mut limits = Limits::START;
    for _ in 0..13 {
        assert_eq!(render_core(&shown, limits), render_core(&all, limits), "{limits:?}");
        limits = limits.shrink();
    }
    // The widths hold: no bullet is longer than its section allows.
    let text = render_core(&shown, Limits::START);
    assert!(text.lines().all(|l| l.chars().count() <= 410), "a line is not clipped");
}

/// An act's memo key changes with every input of the act: the tool map, the
/// call's name and arguments, the result's text (by content and by length),
/// whether there is a result, and whether it reports an error.
#[test]
fn an_act_key_differing_in_any_input_misses() {
    let builtin = ToolFamilies::default();
    let mut own = ToolFamilies::default();
    own.extend_from_json(r#"{"tools": {"run_it": "shell"}}"#).unwrap();
    let c = &call("a", "run_it", r#"{"command":"make"}"#).tool_calls[0];
    let renamed = &call("a", "run_that", r#"{"command":"make"}"#).tool_calls[0];
    let other_args = &call("a", "run_it", r#"{"command":"makE"}"#).tool_calls[0];
    let ok = result("a", "done");
    let mut flagged = result("a", "done");
    flagged.extra_mut().insert("is_error".into(), Value::Bool(true));
    let keys = [
        act_key(&builtin, c, Some(&ok), Some("done")),
        act_key(&own, c, Some(&ok), Some("done")),
        act_key(&builtin, renamed, Some(&ok), Some("done")),
        act_key(&builtin, other_args, Some(&ok), Some("done")),
        act_key(&builtin, c, Some(&ok), Some("dome")),
        act_key(&builtin, c, Some(&ok), Some("done!")),
        act_key(&builtin, c, None, None),
        act_key(&builtin, c, Some(&flagged), Some("done")),
    ];
    let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "{keys:?}");
    // The bytes are in the key, not only in the hash.
    assert_ne!(keys[0].2, keys[5].2);
}

/// A note's memo key is the text's hash, its length and the speaker: each
/// differing input is a miss, and what comes back is the text's own notes.
#[test]
fn a_note_differing_in_any_input_misses() {
    let memo = SummaryMemos::new(crate::memo::budgets::Reach::Run);
    let base = format!("Some {}words. You must keep the API.", "padding ".repeat(10));
    let longer = format!("{base} You must not push.");
    let user = noted(&memo, &base, Said::User);
    assert_eq!(user.picked, ["You must keep the API."]);
    assert_eq!(noted(&memo, &longer, Said::User).picked.len(), 2);
    assert!(noted(&memo, &base, Said::Assistant).picked.is_empty());
    assert_eq!(memo.notes.len(), 3);
}

/// Pieces of prose that make, or nearly make, a constraint, a decision or a
/// question, next to every kind of neighbour a sentence can have: word
/// characters, bullets, numbering, sentence ends, Unicode white space.
#[rustfmt::skip]
const NOTE_PIECES: &[&str] = &[
    "must", "never", "don't", "do not", "avoid", "decided", "instead of", "switched to",
    "root cause", "trade-off", "tradeoff", "Must", "NEVER", "x", "ed", "s", "_", "1", "12. ",
    ". ", ".", "!", "?", "? ", " ", "  ", "\n", "\r\n", "\t", "- ", "* ", "• ", "> ", "\u{a0}",
    "\u{3000}", "é", "日本", "word", "ſ", "K",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
    /// Testing the whole text first changes no note: `notes_afresh` is the
    /// notes of its sentences, for either speaker.
    #[test]
    fn the_whole_text_test_changes_no_note(
        v in proptest::collection::vec(proptest::sample::select(NOTE_PIECES), 0..30)
    ) {
        let text = v.concat();
        for said in [Said::User, Said::Assistant] {
            proptest::prop_assert_eq!(
                notes_afresh(&text, said),
                notes_of_sentences(&text, said),
                "{:?} {:?}", said, text
            );
        }
    }
}

mod action_lines {
    use super::*;
    use proptest::prelude::*;
    proptest! {
        /// An action's line, written piece by piece, is the line the format
        /// strings wrote: `{verb}{ target}{ on date} — {phrase} [tool: {name}]`.
        #[test]
        fn action_text_is_the_formatted_line(
            family in prop::sample::select(vec![
                Family::Shell, Family::Read, Family::Write, Family::Search, Family::Edit,
                Family::Web, Family::Browser, Family::Delegate, Family::Other,
            ]),
            target in "[a-z é`'=]{0,12}",
            date in proptest::option::of("[0-9]{4}-[0-9]{2}-[0-9]{2}"),
            phrase in "[a-z :,é]{0,20}",
            name in "[A-Za-z_]{0,10}",
        ) {
            let date_part = date.as_ref().map(|d| format!(" on {d}")).unwrap_or_default();
            let target_part = if target.is_empty() { String::new() } else { format!(" {target}") };
            let formatted =
                format!("{}{target_part}{date_part} — {phrase} [tool: {}]", family.verb(), name);
            prop_assert_eq!(action_text(family, &target, date.as_deref(), &phrase, &name), formatted);
        }
    }
}
