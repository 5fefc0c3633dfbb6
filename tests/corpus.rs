//! The real corpus (`../shared/corpus`, not in the repository): every session
//! there is read in its own format and compacted in every mode, and every
//! promise is checked. Skipped, with the reason printed, when the corpus is absent.

use compactor::io::expand_inputs;
use compactor::model::{History, Session};
use compactor::pipeline::{Item, JobReader, decode_job};
use compactor::policy::{Mode, Policy, compact, verify::verify};
use compactor::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS, Meter};
use std::path::PathBuf;

/// Why a corpus test run on purpose (`--ignored`) fails where the corpus is absent.
pub const ABSENT: &str =
    "../shared/corpus is not present: corpus tests need the real transcripts beside the clone";

/// The corpus directory, or `None` (with a printed reason) when it is absent.
pub fn corpus() -> Option<PathBuf> {
    let p = crate::util::root().join("../shared/corpus");
    if p.is_dir() {
        Some(p)
    } else {
        println!("skipped: ../shared/corpus is not present");
        None
    }
}

/// Every session under `dir` with its format name; panics on any unreadable record.
pub fn sessions(dir: &std::path::Path) -> Vec<(String, Session)> {
    read_sessions(dir, true)
}

/// Every session under `dir`, with its format's name. `strict`: a record or
/// file that cannot be read fails the test; otherwise it is skipped (fixtures
/// include deliberately bad records).
fn read_sessions(dir: &std::path::Path, strict: bool) -> Vec<(String, Session)> {
    let inputs = expand_inputs(&[dir.display().to_string()]).unwrap();
    let mut reader = JobReader::new(&inputs, None);
    let mut out = Vec::new();
    while let Some(item) = reader.next_item() {
        match item {
            Item::Job(job) => {
                let format = job.format.name().to_string();
                let (ss, errors) = decode_job(job);
                assert!(!strict || errors.is_empty(), "{errors:?}");
                out.extend(ss.into_iter().map(|s| (format.clone(), s)));
            }
            Item::Failed { error, .. } if strict => {
                panic!("{}: {}", error.source, error.message)
            }
            Item::Failed { .. } | Item::Start { .. } | Item::End { .. } => {}
        }
    }
    out
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn openai_shaped_corpus_sessions_compact_and_keep_their_promises() {
    let Some(dir) = corpus() else { panic!("{}", crate::corpus::ABSENT) };
    let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
    let mut compacted = 0;
    for (format, session) in sessions(&dir.join("agent-trajectory-json")) {
        assert_eq!(format, "openai");
        for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
            let out = compact(&session, &Policy::new(mode, 200_000), &meter);
            let problems = verify(&session, &out, &meter);
            assert!(problems.is_empty(), "{} {mode}: {problems:?}", session.source);
            let again = compact(&session, &Policy::new(mode, 200_000), &meter);
            assert_eq!(out.session, again.session, "deterministic");
            let c = &out.compaction;
            if c.tokens_before >= 150_000 {
                assert!(c.compacted, "{} {mode}", session.source);
                assert!(
                    c.tokens_after < c.tokens_before / 2,
                    "{} {mode}: {} -> {}",
                    session.source,
                    c.tokens_before,
                    c.tokens_after
                );
                compacted += 1;
            }
            let (found, kept) =
                c.anchors.retention.values().fold((0, 0), |a, (f, r)| (a.0 + f, a.1 + r));
            println!(
                "{} {mode}: {} -> {} tokens, anchors {kept}/{found}",
                session.source, c.tokens_before, c.tokens_after
            );
        }
    }
    assert!(compacted >= 9, "{compacted}");
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn every_corpus_file_reads_in_its_format_and_compacts_validly() {
    let Some(dir) = corpus() else { panic!("{}", crate::corpus::ABSENT) };
    let all = sessions(&dir);
    let mut per_format = std::collections::BTreeMap::new();
    for (f, _) in &all {
        *per_format.entry(f.as_str()).or_insert(0) += 1;
    }
    let expected: std::collections::BTreeMap<&str, usize> =
        [("claude-code", 4), ("codex", 3), ("openai", 5), ("swe-agent", 22), ("toolbench", 15)]
            .into_iter()
            .collect();
    assert_eq!(per_format, expected);
    let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
    let mut p = Policy::new(Mode::Lean, 200_000);
    p.force = true;
    for (format, session) in &all {
        let out = compact(session, &p, &meter);
        let problems = verify(session, &out, &meter);
        assert!(problems.is_empty(), "{format} {}: {problems:?}", session.source);
        // What we write reads back in the same format, with the same size.
        let adapter =
            compactor::formats::Format::ALL.iter().find(|f| f.name() == format).unwrap().adapter();
        let records: Vec<compactor::formats::Record> = adapter
            .encode(&out.session, None)
            .into_iter()
            .map(|value| compactor::formats::Record { source: session.source.clone(), value })
            .collect();
        let back = adapter.decode(records, History::Full).unwrap();
        let c = &out.compaction;
        // Known miss (README, "Long turns"): a Codex summary merged into an
        // assistant message with calls reads back as two messages.
        let split = format == "codex"
            && c.summary_merged
            && out
                .session
                .messages
                .get(c.sections.head_messages)
                .is_some_and(|m| m.has_tool_calls());
        if split {
            let grown = meter.request(&back).saturating_sub(c.tokens_after);
            assert!(grown <= 8, "{format} {}: {grown} more tokens", session.source);
        } else {
            assert_eq!(meter.request(&back), c.tokens_after, "{format} {}", session.source);
        }
    }
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn the_cli_reports_every_corpus_session() {
    let Some(dir) = corpus() else { panic!("{}", crate::corpus::ABSENT) };
    let tmp = crate::util::TestDir::new();
    let report = tmp.join("r.jsonl");
    crate::util::run_ok(
        crate::util::compactor()
            .args(["compact", "-q", "--force", "-o"])
            .arg(tmp.join("out/"))
            .arg("--report")
            .arg(&report)
            .arg(&dir),
    );
    let rows = crate::util::json_lines(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(rows.len(), 49);
    for row in &rows {
        assert!(row["tokens_after"].as_u64() <= row["tokens_before"].as_u64(), "{row}");
    }
    let formats: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["format"].as_str().unwrap()).collect();
    assert_eq!(formats.len(), 5);
}

/// Both BPE vocabularies.
const BOTH: &[CounterKind] = &[CounterKind::O200k, CounterKind::Cl100k];

/// The sessions token counts are checked on, each set with its vocabularies:
/// every fixture under both, the corpus (when present) under `corpus_kinds`.
fn counted_sets(
    corpus_kinds: &'static [CounterKind],
) -> Vec<(Vec<Session>, &'static [CounterKind])> {
    let mut sets: Vec<(PathBuf, &'static [CounterKind])> =
        vec![(crate::util::root().join("fixtures"), BOTH)];
    if let Some(dir) = corpus() {
        sets.push((dir, corpus_kinds));
    }
    sets.into_iter()
        .map(|(dir, kinds)| {
            let all: Vec<Session> =
                read_sessions(&dir, false).into_iter().map(|(_, s)| s).collect();
            assert!(!all.is_empty(), "{}: no sessions", dir.display());
            (all, kinds)
        })
        .collect()
}

/// The fast tokenizer (`bpe-openai`'s vocabularies, our split and merge)
/// gives exactly the reference's (`tiktoken-rs`) counts on every message and
/// tool schema of the fixtures and of the corpus, in both vocabularies.
#[test]
fn fast_tokenizer_counts_equal_tiktoken_on_fixtures_and_corpus() {
    use compactor::tokens::Tokenizer;
    let mut compared = 0usize;
    for (all, kinds) in counted_sets(BOTH) {
        for &kind in kinds {
            let fast = Meter::with_tokenizer(kind, Tokenizer::BpeOpenai, DEFAULT_IMAGE_TOKENS);
            let reference = Meter::with_tokenizer(kind, Tokenizer::Tiktoken, DEFAULT_IMAGE_TOKENS);
            for s in &all {
                assert_eq!(
                    fast.tools(s.tools.as_ref()),
                    reference.tools(s.tools.as_ref()),
                    "{kind:?} {}: tool schemas",
                    s.source
                );
                for (i, m) in s.messages.iter().enumerate() {
                    assert_eq!(
                        fast.message(m),
                        reference.message(m),
                        "{kind:?} {} message {i}",
                        s.source
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 1_000, "only {compared} messages compared");
}

/// A text the cache has not seen is counted line by line, each line through
/// the cache (`tokens::lines`): the sum must be the whole text's count. Checked
/// on every message of the fixtures (both vocabularies) and of the corpus
/// (`o200k_base`), and on what forced compactions make of them (summaries are
/// the texts most often counted that way).
#[test]
fn counts_by_line_equal_whole_counts_on_fixtures_corpus_and_summaries() {
    let mut compared = 0usize;
    let mut summaries = 0usize;
    for (all, kinds) in counted_sets(&[CounterKind::O200k]) {
        for &kind in kinds {
            let lined = Meter::new(kind, DEFAULT_IMAGE_TOKENS);
            let whole = Meter::new(kind, DEFAULT_IMAGE_TOKENS).without_cache();
            for s in &all {
                let mut check = |m: &compactor::model::Message, what: &str| {
                    assert_eq!(lined.message(m), whole.message(m), "{kind:?} {}: {what}", s.source);
                    compared += 1;
                };
                for m in &s.messages {
                    check(m, "input");
                }
                for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
                    let policy = Policy { force: true, ..Policy::new(mode, 32_000) };
                    let out = compact(s, &policy, &lined);
                    summaries += usize::from(out.compaction.sections.summary_tokens > 0);
                    for m in &out.session.messages {
                        check(m, mode.name());
                    }
                }
            }
        }
    }
    assert!(compared > 5_000, "only {compared} messages compared");
    assert!(summaries > 100, "only {summaries} summaries made");
}

/// The least tail SPEC 5 allows: the last 8 messages, moved back so no tool
/// group is split (H), and back to the newest real user message when that
/// message is over the autonomous-turn limit of 1,400 chars (the reference's
/// rule keeps it and its turn in the tail).
fn floor(msgs: &[compactor::model::Message]) -> &[compactor::model::Message] {
    use compactor::policy::boundaries::{
        AUTONOMOUS_OPENING_MAX_CHARS, MIN_TAIL_MESSAGES, align_backward, last_real_user,
    };
    let mut from = align_backward(msgs, msgs.len().saturating_sub(MIN_TAIL_MESSAGES));
    if let Some(u) = last_real_user(msgs, 0)
        && u < from
        && compactor::policy::summary::real_user_text(&msgs[u])
            .is_some_and(|t| t.chars().count() > AUTONOMOUS_OPENING_MAX_CHARS)
    {
        from = align_backward(msgs, u);
    }
    &msgs[from..]
}

/// Issue 26 (SPEC 5, the autonomous-turn and nothing-to-fold rules): on every
/// corpus session at 32K, 64K and 200K windows, the compacted request is at or
/// under the trigger whenever the head, the summary and the 8-message floor of
/// the tail ([`floor`]) fit in it; a compacted lean session holds exactly one
/// summary, and `over_trigger` says when the request is still over.
#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn compacted_corpus_sessions_end_under_the_trigger_when_they_can() {
    let Some(dir) = corpus() else { panic!("{}", crate::corpus::ABSENT) };
    let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
    let all = sessions(&dir);
    let mut failures = Vec::new();
    for window in [32_000u64, 64_000, 200_000] {
        let policy = Policy::new(Mode::Lean, window);
        let (mut compacted, mut over) = (0, 0);
        for (_, session) in &all {
            let out = compact(session, &policy, &meter);
            let c = &out.compaction;
            if !c.compacted {
                continue;
            }
            compacted += 1;
            let o = &out.session.messages;
            let summaries = o.iter().filter(|m| compactor::policy::summary::is_summary(m)).count();
            assert_eq!(summaries, 1, "{} at {window}", session.source);
            assert_eq!(c.over_trigger, c.tokens_after > policy.threshold, "{}", session.source);
            over += usize::from(c.over_trigger);
            let floor: u64 = floor(&session.messages).iter().map(|m| meter.message(m)).sum();
            let fixed = meter.tools(session.tools.as_ref()) + meter.request_overhead();
            let least = fixed + c.sections.head_tokens + c.sections.summary_tokens + floor;
            if least <= policy.threshold && c.tokens_after > policy.threshold {
                failures.push(format!(
                    "{} at {window}: {} -> {} (head {}, summary {}, floor {floor}, tail {})",
                    session.source,
                    c.tokens_before,
                    c.tokens_after,
                    c.sections.head_tokens,
                    c.sections.summary_tokens,
                    c.sections.tail_tokens
                ));
            }
        }
        println!("window {window}: {compacted} compacted, {over} still over the trigger");
    }
    // Known, not fixed: at 32K this Codex session ends 289 tokens over (27,489
    // against 27,200). The soft-ceiling walk stops inside a four-call parallel
    // group of 14K tokens before the newest ask, and the group alignment (H)
    // only ever grows the tail, so the whole group stays. Listed exactly, so the
    // test fails when it changes either way.
    let known = ["DepotCycle-Device-Lifecycle-Marketplace/sessions/develop-1.jsonl:1 at 32000:"];
    let unexpected: Vec<&String> =
        failures.iter().filter(|f| !known.iter().any(|k| f.contains(k))).collect();
    assert!(unexpected.is_empty(), "over the trigger though they fit:\n{unexpected:#?}");
    for k in known {
        assert!(failures.iter().any(|f| f.contains(k)), "{k} is under the trigger now: update");
    }
}

/// The calls before which a replay's `calls.jsonl` rows show a compaction:
/// ours (`compactions` grows) and the agent's own (its context, `tokens_agent`,
/// drops by more than 20,000 tokens).
fn compaction_calls(rows: &[serde_json::Value]) -> (Vec<u64>, Vec<u64>) {
    let (mut ours, mut agent) = (Vec::new(), Vec::new());
    for w in rows.windows(2) {
        let call = w[1]["call"].as_u64().unwrap();
        if w[1]["compactions"] != w[0]["compactions"] {
            ours.push(call);
        }
        let context = |r: &serde_json::Value| r["tokens_agent"].as_u64().unwrap();
        if context(&w[1]) + 20_000 < context(&w[0]) {
            agent.push(call);
        }
    }
    (ours, agent)
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn the_codex_policy_compacts_where_codex_did_on_the_corpus_rollout() {
    let Some(dir) = corpus() else { panic!("{}", crate::corpus::ABSENT) };
    let rollout = dir.join("codex-rollout-jsonl/switch247__fleet-release");
    let tmp = crate::util::TestDir::new();
    let calls = tmp.join("calls.jsonl");
    crate::util::run_ok(
        crate::util::compactor()
            .args(["replay", "-q", "--history", "full", "--window", "272000"])
            .args(["--policy", "codex", "--calls"])
            .arg(&calls)
            .arg(&rollout),
    );
    let rows = crate::util::json_lines(&std::fs::read_to_string(&calls).unwrap());
    assert_eq!(rows.len(), 618);
    let (ours, agent) = compaction_calls(&rows);
    // Codex's own compactions, as the rollout records them.
    assert_eq!(agent, [265, 464]);
    // Measured (Codex's measure, `Measure::LastTotal`): 265 and 454. The
    // second is 10 calls early because our stand-in summary is ~17,000 tokens
    // larger than Codex's encrypted one (docs/policies.md). The prompt
    // measure put them at 295 and 479.
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert!(ours[0].abs_diff(265) <= 2, "{ours:?}");
    assert!(ours[1].abs_diff(464) <= 12, "{ours:?}");
    // What fired: Codex's measure at or over 90% of 272,000, one call before
    // under it.
    let measure = |c: u64| rows[c as usize]["measure"].as_u64().unwrap();
    for &c in &ours {
        assert!(measure(c) >= 244_800 && measure(c - 1) < 244_800, "{c}");
    }
}
