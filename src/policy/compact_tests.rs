//! Tests of `compact` as a whole: triggers, modes, tiers, idempotence and the
//! output invariants, on seeded synthetic sessions.

use super::*;
use crate::formats::openai::{decode_session, encode_session};
use crate::model::{Message, Role, Source};
use crate::report::wire::CompactionObject;
use crate::synth::{SynthConfig, session as synth};
use crate::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS, Meter, o200k_meter as meter};
use anchors::Category;
use std::sync::Arc;
use summary_writer::{BodyRequest, SummaryWriter};
use test_msgs::{call, calls, result};

fn synth_session(seed: u64, tokens: u64) -> Session {
    let v = synth(SynthConfig { seed, target_tokens: tokens, ..SynthConfig::default() });
    decode_session(v, Source::default()).expect("synthetic sessions decode")
}

/// [`synth_session`], with the caches to prepare it with and the meter to count it.
fn synth_to_prepare(seed: u64, tokens: u64) -> (Session, Caches, Meter) {
    (synth_session(seed, tokens), Caches::default(), meter())
}

fn forced(mode: Mode, window: u64) -> Policy {
    let mut p = Policy::new(mode, window);
    p.force = true;
    p
}

/// Asserts that `out` passes [`verify::verify`] against `input`, naming
/// `what` (the mode, the case) and the problems if it does not.
fn assert_verified(input: &Session, out: &Outcome, meter: &Meter, what: impl std::fmt::Display) {
    let problems = verify::verify(input, out, meter);
    assert!(problems.is_empty(), "{what}: {problems:?}");
}

/// The invariants every compacted output must hold.
fn check_invariants(input: &Session, out: &Outcome, meter: &Meter) {
    assert_verified(input, out, meter, "verify");
    let o = &out.session.messages;
    let c = &out.compaction;
    // Roles alternate around a standalone summary.
    if c.sections.summary_messages == 1 {
        let s = c.sections.head_messages;
        if s > 0 && matches!(o[s - 1].role, Role::User | Role::Assistant) {
            assert_ne!(o[s - 1].role, o[s].role);
        }
        if s + 1 < o.len() && matches!(o[s + 1].role, Role::User | Role::Assistant) {
            assert_ne!(o[s + 1].role, o[s].role);
        }
    }
}

#[test]
fn under_the_trigger_nothing_changes() {
    let s = synth_session(1, 5_000);
    let out = compact(&s, &Policy::new(Mode::Lean, 200_000), &meter());
    assert_eq!(out.compaction.reason, Reason::UnderTrigger);
    assert!(!out.compaction.compacted);
    assert_eq!(*out.session, s);
    // Borrowed, not copied: most sessions of an archive end here.
    assert!(matches!(out.session, std::borrow::Cow::Borrowed(b) if std::ptr::eq(b, &s)));
}

#[test]
fn mode_none_changes_nothing_even_when_forced() {
    let s = synth_session(2, 30_000);
    let out = compact(&s, &forced(Mode::None, 8_000), &meter());
    assert_eq!(out.compaction.reason, Reason::ModeNone);
    assert_eq!(*out.session, s);
    assert!(matches!(out.session, std::borrow::Cow::Borrowed(b) if std::ptr::eq(b, &s)));
}

#[test]
fn lean_and_legacy_hold_the_invariants() {
    let m = meter();
    for seed in 1..6 {
        let s = synth_session(seed, 40_000);
        for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
            let out = compact(&s, &forced(mode, 64_000), &m);
            assert!(out.compaction.compacted, "seed {seed} {mode}: {:?}", out.compaction.reason);
            check_invariants(&s, &out, &m);
        }
    }
}

#[test]
fn over_the_trigger_compacts_without_force() {
    let s = synth_session(9, 60_000);
    let m = meter();
    let out = compact(&s, &Policy::new(Mode::Lean, 64_000), &m);
    assert!(out.compaction.tokens_before >= 54_400);
    assert_eq!(out.compaction.reason, Reason::Compacted);
    assert_eq!(out.compaction.tier, Tier::Summary);
    assert!(out.compaction.tokens_after < out.compaction.tokens_before / 2);
    let summary = &out.session.messages[out.compaction.sections.head_messages];
    assert!(summary.text_content().starts_with(summary::SUMMARY_PREFIX));
    assert_eq!(out.session.messages[0].text_content().matches(summary::SYSTEM_NOTE).count(), 1);
}

#[test]
fn compacting_a_compacted_session_again_changes_nothing() {
    let m = meter();
    let s = synth_session(4, 60_000);
    for policy in
        [Policy::new(Mode::Lean, 64_000), forced(Mode::Lean, 64_000), forced(Mode::Legacy, 64_000)]
    {
        let first = compact(&s, &policy, &m);
        assert!(first.compaction.compacted);
        // Written with its compaction record, read back, compacted again.
        let object =
            serde_json::to_value(CompactionObject::new(&s.source, &first.compaction, "o200k"))
                .unwrap();
        let written = encode_session(&first.session, Some(&object));
        let reread = decode_session(written, Source::default()).unwrap();
        let second = compact(&reread, &policy, &m);
        assert!(!second.compaction.compacted, "{:?}", second.compaction.reason);
        assert_eq!(*second.session, reread);
    }
}

#[test]
fn tiered_stops_at_the_first_tier_that_reaches_the_target() {
    let m = meter();
    let s = synth_session(5, 60_000);
    let mut p = forced(Mode::Tiered, 1_000_000);
    // A generous target: micro-compaction alone gets there.
    p.target_tokens = Some(m.request(&s) * 3 / 4);
    let out = compact(&s, &p, &m);
    assert!(out.compaction.tier <= Tier::MicroCompact, "{:?}", out.compaction.tier);
    assert!(out.compaction.tokens_after <= p.target_tokens.unwrap());
    assert_eq!(out.compaction.sections.summary_messages, 0);
    check_invariants(&s, &out, &m);
    // An impossible target: it goes all the way to the summary.
    p.target_tokens = Some(1_000);
    let out = compact(&s, &p, &m);
    assert_eq!(out.compaction.tier, Tier::Summary);
    check_invariants(&s, &out, &m);
}

#[test]
fn tiered_dedup_alone_can_be_enough() {
    let m = meter();
    let mut s = synth_session(6, 3_000);
    // Many copies of one big output: dedup is the cheapest sufficient tier.
    let big = "same output line\n".repeat(500);
    let mut extra = Vec::new();
    for k in 0..20 {
        let mut a = crate::model::Message::text(Role::Assistant, "");
        a.tool_calls_mut().push(crate::model::ToolCall {
            id: format!("d{k}"),
            name: "Bash".into(),
            arguments: "{}".into(),
            ..Default::default()
        });
        let mut t = crate::model::Message::text(Role::Tool, big.clone());
        t.tool_call_id = Some(format!("d{k}"));
        extra.extend([a, t]);
    }
    s.messages.extend(extra);
    s.messages.push(crate::model::Message::text(Role::User, "next task please"));
    s.messages.push(crate::model::Message::text(Role::Assistant, "on it"));
    let mut p = forced(Mode::Tiered, 64_000);
    p.target_tokens = Some(m.request(&s) / 2);
    let out = compact(&s, &p, &m);
    assert_eq!(out.compaction.tier, Tier::Dedup, "{:?}", out.compaction);
    assert!(out.compaction.effects.duplicates_marked >= 10, "{:?}", out.compaction.effects);
}

/// A system prompt and fourteen turns of `ok`: a forced compaction of it
/// would grow the request.
fn short_turns() -> Session {
    let mut s = Session::default();
    s.messages.push(Message::text(Role::System, "sys"));
    for k in 0..14 {
        let role = if k % 2 == 0 { Role::User } else { Role::Assistant };
        s.messages.push(Message::text(role, "ok"));
    }
    s
}

#[test]
fn a_forced_compaction_that_would_grow_the_request_is_refused() {
    let m = meter();
    let s = short_turns();
    let out = compact(&s, &forced(Mode::Lean, 200_000), &m);
    assert_eq!(out.compaction.reason, Reason::NoGain);
    assert_eq!(*out.session, s);
}

/// `s` compacted by force in lean and in legacy mode, for `window`.
fn lean_and_legacy<'a>(s: &'a Session, window: u64, m: &Meter) -> (Outcome<'a>, Outcome<'a>) {
    (compact(s, &forced(Mode::Lean, window), m), compact(s, &forced(Mode::Legacy, window), m))
}

#[test]
fn legacy_keeps_a_larger_tail_than_lean() {
    let m = meter();
    let s = synth_session(8, 150_000);
    let (lean, legacy) = lean_and_legacy(&s, 1_000_000, &m);
    assert!(legacy.compaction.sections.tail_tokens > 2 * lean.compaction.sections.tail_tokens);
    assert!(
        lean.compaction.sections.tail_tokens >= 25_000
            && lean.compaction.sections.tail_tokens <= 37_500 + 5_000,
        "{}",
        lean.compaction.sections.tail_tokens
    );
}

#[test]
fn anchors_are_retained_by_the_lean_index() {
    let m = meter();
    let s = synth_session(10, 60_000);
    let (lean, legacy) = lean_and_legacy(&s, 64_000, &m);
    let kept = |o: &Outcome| o.compaction.anchors.retention.values().map(|(_, r)| r).sum::<usize>();
    let found: usize = lean.compaction.anchors.retention.values().map(|(f, _)| f).sum();
    assert!(found > 50);
    assert!(kept(&lean) > kept(&legacy), "lean {} legacy {}", kept(&lean), kept(&legacy));
}

#[test]
fn retention_can_be_left_unmeasured_without_changing_the_compaction() {
    let m = meter();
    let s = synth_session(10, 60_000);
    for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
        let measured = compact(&s, &forced(mode, 64_000), &m);
        let mut p = forced(mode, 64_000);
        p.measure_retention = false;
        let bare = compact(&s, &p, &m);
        assert!(!measured.compaction.anchors.retention.is_empty(), "{mode}");
        assert!(bare.compaction.anchors.retention.is_empty(), "{mode}");
        assert_eq!(bare.session, measured.session, "{mode}");
        let mut record = bare.compaction.clone();
        record.anchors.retention = measured.compaction.anchors.retention.clone();
        assert_eq!(record, measured.compaction, "{mode}");
    }
}

#[test]
fn a_compacted_session_shares_the_inputs_top_level_fields() {
    let m = meter();
    let mut s = synth_session(11, 60_000);
    std::sync::Arc::make_mut(&mut s.extra).insert("trajectory".into(), "x".repeat(10_000).into());
    for mode in [Mode::Lean, Mode::Tiered] {
        let out = compact(&s, &forced(mode, 64_000), &m);
        assert!(out.compaction.compacted, "{mode}");
        assert!(std::sync::Arc::ptr_eq(&out.session.extra, &s.extra), "{mode}: copied");
    }
}

#[test]
fn kept_messages_share_their_keys_parts_and_calls_with_the_input() {
    use std::sync::Arc;
    let m = meter();
    let mut s = synth_session(13, 60_000);
    for msg in &mut s.messages {
        msg.extra_mut().insert("toolUseResult".into(), "y".repeat(2_000).into());
        msg.attached_mut().push(serde_json::json!({"type": "snapshot"}));
    }
    for mode in [Mode::Lean, Mode::Tiered] {
        let out = compact(&s, &forced(mode, 64_000), &m);
        assert!(out.compaction.compacted, "{mode}");
        // The system prompt keeps its keys (its text gains a note).
        assert!(Arc::ptr_eq(&out.session.messages[0].extra, &s.messages[0].extra), "{mode}");
        // The verbatim tail is the input's own messages: nothing of them is copied.
        let n = out.compaction.sections.verbatim_tail_messages;
        assert!(n > 2, "{mode}: tail of {n}");
        let (inp, outp) = (&s.messages[s.messages.len() - n..], &out.session.messages);
        let tail = &outp[outp.len() - n..];
        assert!(tail.iter().any(|t| !t.tool_calls.is_empty()), "{mode}: no calls in the tail");
        for (i, (a, b)) in inp.iter().zip(tail).enumerate() {
            // Stage 4 strips the tail's stale images too (SPEC 6.4): only those change.
            if a.content.parts.iter().any(crate::model::Part::is_image) && a != b {
                assert!(!b.content.parts.iter().any(crate::model::Part::is_image), "{mode}: {i}");
                continue;
            }
            assert_eq!(a, b, "{mode}: tail message {i}");
            assert!(Arc::ptr_eq(&a.extra, &b.extra), "{mode}: keys of tail message {i} copied");
            assert!(Arc::ptr_eq(&a.content.parts, &b.content.parts), "{mode}: parts of {i} copied");
            assert!(Arc::ptr_eq(&a.tool_calls, &b.tool_calls), "{mode}: calls of {i} copied");
        }
    }
    // Changing a copy leaves the original alone (copy on write).
    let mut copy = s.messages[0].clone();
    copy.extra_mut().insert("added".into(), true.into());
    copy.content.parts_mut().clear();
    copy.tool_calls_mut().push(Default::default());
    assert!(!s.messages[0].extra.contains_key("added") && copy.extra.contains_key("added"));
    assert!(!s.messages[0].content.parts.is_empty() && copy.content.parts.is_empty());
    assert!(s.messages[0].tool_calls.is_empty() && copy.tool_calls.len() == 1);
}

#[test]
fn compactions_of_one_prepared_input_equal_compactions_of_the_session() {
    let (s, caches, m) = synth_to_prepare(14, 150_000);
    let prepared = Prepared::new(&s, &caches);
    let mut custom = forced(Mode::Lean, 64_000);
    // `Bash` read as a file read: its error lines are no longer anchors.
    custom.families.extend_from_json(r#"{"tools": {"Bash": "read"}}"#).unwrap();
    // Three modes share the prepared input's anchors; a policy with other tool
    // families must not be given anchors read with the first policy's.
    let lean = compact(&s, &forced(Mode::Lean, 64_000), &m).compaction.anchors.retention;
    let other = compact(&s, &custom, &m).compaction.anchors.retention;
    assert_ne!(lean.get(&Category::Errors), other.get(&Category::Errors), "families matter here");
    for p in [
        forced(Mode::Legacy, 64_000),
        forced(Mode::Lean, 64_000),
        custom,
        forced(Mode::Tiered, 64_000),
    ] {
        let shared = compact_prepared(&prepared, &p, &m);
        let alone = compact(&s, &p, &m);
        assert!(shared.compaction.compacted, "{}", p.mode);
        assert!(!shared.compaction.anchors.retention.is_empty(), "{}", p.mode);
        assert_eq!(shared.compaction, alone.compaction, "{}", p.mode);
        assert_eq!(shared.session, alone.session, "{}", p.mode);
    }
    // Nor counts made by another counter or image cost.
    let s = synth_session(15, 150_000);
    let prepared = Prepared::new(&s, &caches);
    let p = forced(Mode::Lean, 64_000);
    let mut seen = Vec::new();
    for m in [
        meter(),
        Meter::new(CounterKind::Hermes, DEFAULT_IMAGE_TOKENS),
        Meter::new(CounterKind::O200k, 5 * DEFAULT_IMAGE_TOKENS),
    ] {
        let shared = compact_prepared(&prepared, &p, &m).compaction;
        assert_eq!(shared, compact(&s, &p, &m).compaction, "{:?}", m.kind());
        assert!(!seen.contains(&shared.tokens_before), "the meters count differently here");
        seen.push(shared.tokens_before);
    }
}

#[test]
fn the_summary_tier_takes_the_tiers_pruning_as_if_it_had_pruned_again() {
    let (s, caches, m) = synth_to_prepare(12, 150_000);
    let p = forced(Mode::Tiered, 64_000);
    let tiered = compact(&s, &p, &m);
    assert_eq!(tiered.compaction.tier, Tier::Summary, "the tiers alone must not suffice here");
    // What the summary tier did before it took the tiers' result: prune afresh.
    let tokens = m.messages(&s.messages);
    let fixed = m.tools(s.tools.as_ref()) + m.request_overhead();
    let before = fixed + tokens.iter().sum::<u64>();
    let prepared = Prepared::new(&s, &caches);
    let measured = driver::Measured { input: &prepared, tokens: &tokens, fixed, before };
    let fresh = driver::summarize(
        &measured,
        &p,
        &m,
        Mode::Tiered,
        driver::Pruning::Run { truncate: true },
        None,
    );
    assert_eq!(tiered.session, fresh.session);
    assert_eq!(tiered.compaction, fresh.compaction);
    assert!(tiered.compaction.effects.tool_results_cleared > 0);
}

#[test]
fn more_chars_than_counts_chars_not_bytes() {
    for text in ["", "abc", "ééé", "日本語", "🙂🙂", "aé日🙂"] {
        for n in 0..12 {
            assert_eq!(more_chars_than(text, n), text.chars().count() > n, "{text:?} {n}");
        }
    }
    // 201 three-byte chars: 603 bytes, over 200 chars; 200 of them: not.
    assert!(more_chars_than(&"日".repeat(201), 200));
    assert!(!more_chars_than(&"日".repeat(200), 200));
}

#[test]
fn retention_text_by_text_is_a_search_of_the_joined_output() {
    let (s, caches, meter) = synth_to_prepare(21, 40_000);
    let input = Prepared::new(&s, &caches);
    let families = ToolFamilies::default();
    let set = input.anchors(&families).into_owned();
    assert!(set.len() > 20, "{} anchors", set.len());
    // Each output keeps texts an earlier one was searched for.
    let mut outputs: Vec<Vec<Message>> = [Mode::Legacy, Mode::Lean, Mode::Tiered]
        .iter()
        .map(|m| compact_prepared(&input, &forced(*m, 8_000), &meter).session.messages.clone())
        .collect();
    outputs.push(s.messages.clone());
    outputs.push(s.messages[s.messages.len() / 2..].to_vec());
    outputs.push(Vec::new());
    for out in &outputs {
        assert_eq!(input.retention(&families, out), set.retention(&session_text(out)));
    }
    let cut = input.retention(&families, &outputs[4]);
    assert!(cut.values().any(|(all, kept)| kept < all), "{cut:?}");
}

#[test]
fn retention_reads_the_strings_of_arguments_and_keeps_texts_apart_from_arguments() {
    let caches = Caches::default();
    // `C:\src\app.rs` is in the arguments only as the JSON string `C:\\src\\app.rs`.
    let args = r#"{"path": "C:\\src\\app.rs", "pad": "0123456789012345678901234567890123456789"}"#;
    let s = Session {
        messages: vec![Message::text(Role::User, r"fix C:\src\app.rs"), call("c1", "edit", args)],
        ..Session::default()
    };
    let input = Prepared::new(&s, &caches);
    let families = ToolFamilies::default();
    let paths = |out: &[Message]| input.retention(&families, out)[&Category::Paths];
    assert_eq!(paths(&[call("c1", "edit", args)]), (1, 1), "the decoded string holds it");
    // The same text as a text part holds only the escaped form: searched, not taken from the call.
    assert_eq!(paths(&[Message::text(Role::User, args)]), (1, 0));
    assert_eq!(paths(&[call("c1", "edit", args)]), (1, 1));
}

/// Error lines are taken from every message's text, the user's and the
/// assistant's as much as a tool's, with colour codes removed; a call's
/// arguments (code the agent writes) give none.
#[test]
fn error_lines_come_from_every_speaker_with_colour_codes_removed() {
    let messages = vec![
        Message::text(Role::User, "it fails with\nModuleNotFoundError: No module named 'x'"),
        Message::text(Role::Assistant, "Still:\nTraceback (most recent call last):"),
        Message::text(Role::Tool, "\x1b[31mTypeError\x1b[39m: y is not a function"),
        call("c1", "edit", r#"{"code": "raise ValueError: no\nSyntaxError: quoted in code"}"#),
    ];
    let set = session_anchors(&messages, &ToolFamilies::default(), &Caches::default());
    let errors: Vec<String> = set.ranked(Category::Errors).into_iter().map(|a| a.value).collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    for e in [
        "ModuleNotFoundError: No module named 'x'",
        "Traceback (most recent call last):",
        "TypeError: y is not a function",
    ] {
        assert!(errors.contains(&e.to_string()), "{e}: {errors:?}");
    }
}

proptest::proptest! {
    /// The block count is the plain one, over every length around a block's
    /// edge and texts of only newlines (a block's sum at its largest).
    #[test]
    fn newlines_are_counted_as_matches_counts_them(
        text in "[a\\n\u{e9}\u{1f600}]{0,600}",
        only in 0usize..400,
    ) {
        proptest::prop_assert_eq!(newlines(&text), text.matches('\n').count());
        let all = "\n".repeat(only);
        proptest::prop_assert_eq!(newlines(&all), only);
    }
}

// ---- issue 26: the rules of SPEC 5 the reference's current code has ----

fn msg(role: Role, text: &str) -> Message {
    Message::text(role, text)
}

fn with_msgs(msgs: Vec<Message>) -> Session {
    Session { messages: msgs, ..Session::default() }
}

/// Tool output of about `words` tokens, different for each `seed`.
fn output(seed: usize, words: usize) -> String {
    (0..words).map(|k| format!("line{seed}x{k} ok\n")).collect()
}

fn summaries(out: &Outcome) -> usize {
    out.session.messages.iter().filter(|m| summary::is_summary(m)).count()
}

/// SPEC 5 "autonomous turn" (H, #80449), the issue's Claude Code shape: one
/// ask (at most 1,400 chars), then a hundred tool calls in the same turn, the
/// turn far bigger than the soft ceiling. The cut falls inside the turn, the
/// compacted request ends under the trigger, and the ask rides verbatim in the
/// summary's `## Active Task`.
#[test]
fn an_autonomous_turn_is_cut_inside_and_its_ask_rides_in_the_summary() {
    let m = meter();
    let ask = format!("Port the billing service to the new queue. {}", "Keep the API. ".repeat(90));
    assert!(ask.chars().count() <= boundaries::AUTONOMOUS_OPENING_MAX_CHARS);
    let mut msgs = vec![
        msg(Role::System, "You are a coding agent."),
        msg(Role::User, "hello"),
        msg(Role::Assistant, "Hi, what shall I do?"),
        msg(Role::User, &ask),
    ];
    for k in 0..120 {
        let id = format!("c{k}");
        msgs.push(calls(&[&id]));
        msgs.push(result(&id, &output(k, 300)));
    }
    let s = with_msgs(msgs);
    let p = Policy::new(Mode::Lean, 64_000);
    let out = compact(&s, &p, &m);
    let c = &out.compaction;
    assert!(c.tokens_before > p.threshold, "{}", c.tokens_before);
    assert_eq!(c.reason, Reason::Compacted);
    assert!(c.tokens_after <= p.threshold, "{} > {}", c.tokens_after, p.threshold);
    assert!(!c.over_trigger);
    // The head is the system prompt and `hello, Hi, ask`: the ask is in the head here.
    // Put it after the head instead, as a session with an earlier exchange has it.
    let mut msgs = s.messages.to_vec();
    msgs.insert(3, msg(Role::User, "first, read the repo"));
    msgs.insert(4, msg(Role::Assistant, "Read it."));
    let s = with_msgs(msgs);
    let out = compact(&s, &p, &m);
    let text = summary_folding_the_ask_at_5(&out, &p);
    assert!(text.contains(&format!("{}\n{}", summary::heading::ACTIVE_TASK, ask.trim())));
    assert_verified(&s, &out, &m, Mode::Lean);
}

/// The summary text of `out`, checking first that it compacted to under
/// `p`'s threshold and folded the ask at message 5.
fn summary_folding_the_ask_at_5(out: &Outcome, p: &Policy) -> String {
    let c = &out.compaction;
    assert_eq!(c.reason, Reason::Compacted);
    assert!(c.tokens_after <= p.threshold, "{} > {}", c.tokens_after, p.threshold);
    let (from, to) = c.summarized_range.expect("a summary");
    assert!(from <= 5 && to > 5, "the ask at 5 is folded: {from}..{to}");
    let summary = out.session.messages.iter().find(|m| summary::is_summary(m)).unwrap();
    summary.text_content().into_owned()
}

/// An ask of exactly `tokens` tokens as a user message under `m` (sentences
/// of the same few words, then single words to the exact count).
fn ask_of(tokens: u64, m: &Meter) -> String {
    let mut ask = String::from("Port the billing service to the new queue.");
    while m.message(&msg(Role::User, &format!("{ask} Keep the public API stable."))) <= tokens {
        ask.push_str(" Keep the public API stable.");
    }
    while m.message(&msg(Role::User, &format!("{ask} ok"))) <= tokens {
        ask.push_str(" ok");
    }
    assert_eq!(m.message(&msg(Role::User, &ask)), tokens, "the ask is built to the token");
    ask
}

/// `sys, hello, Hi, first, Read it., ask, (call, result) x 120`: the ask at
/// 5 is after the head and opens a turn far bigger than the tail.
fn one_ask_then_calls(ask: &str) -> Session {
    let mut msgs = vec![
        msg(Role::System, "You are a coding agent."),
        msg(Role::User, "hello"),
        msg(Role::Assistant, "Hi, what shall I do?"),
        msg(Role::User, "first, read the repo"),
        msg(Role::Assistant, "Read it."),
        msg(Role::User, ask),
    ];
    for k in 0..120 {
        let id = format!("c{k}");
        msgs.push(calls(&[&id]));
        msgs.push(result(&id, &output(k, 300)));
    }
    with_msgs(msgs)
}

/// Issue 36 point 3, our departure from the reference (docs/rules.md 6.5): at
/// a 32K window half the summary cap is 2,400 tokens. An opening ask of
/// exactly that (about 9,000 chars, far over the reference's 1,400) still
/// opens an autonomous turn in lean mode: the cut falls inside the turn, the
/// request ends under the trigger and the summary quotes the ask whole (stage
/// 3 would cut it at 6,000 chars). One token more and the reference's rule
/// holds: the ask stays in the tail, the request stays over the trigger.
/// Legacy keeps the reference's rule at any size.
#[test]
fn a_long_opening_ask_within_half_the_summary_cap_is_folded_whole() {
    let m = meter();
    let window = 32_000;
    let limit = summary::whole_ask_max_tokens(window);
    assert_eq!(limit, 2_400);
    let p = Policy::new(Mode::Lean, window);

    let ask = ask_of(limit, &m);
    assert!(ask.chars().count() > crate::policy::truncate::TRUNCATE_OVER_CHARS);
    let s = one_ask_then_calls(&ask);
    let out = compact(&s, &p, &m);
    let c = &out.compaction;
    assert!(c.tokens_before > p.threshold, "{}", c.tokens_before);
    let text = summary_folding_the_ask_at_5(&out, &p);
    assert!(text.contains(&format!("{}\n{}", summary::heading::ACTIVE_TASK, ask)), "whole");
    assert!(c.sections.summary_tokens <= summary::summary_max_tokens(window));
    assert_verified(&s, &out, &m, Mode::Lean);

    let over = ask_of(limit + 1, &m);
    let s = one_ask_then_calls(&over);
    let out = compact(&s, &p, &m);
    let c = &out.compaction;
    assert!(c.tokens_after > p.threshold, "the ask and its whole turn stay: {}", c.tokens_after);
    assert!(out.session.messages.iter().any(|x| x.text_content() == over), "kept verbatim");
    assert_verified(&s, &out, &m, Mode::Lean);

    let s = one_ask_then_calls(&ask);
    let legacy = compact(&s, &Policy::new(Mode::Legacy, window), &m);
    let after = legacy.compaction.tokens_after;
    assert!(after > p.threshold, "legacy: the reference's 1,400-char rule ({after})");
    assert!(legacy.session.messages.iter().any(|x| x.text_content() == ask));
}

/// SPEC 5 "nothing to fold" (H): a head that absorbs a six-call parallel
/// group, then a short exchange that fits: the aligned cut would land on the
/// head's end; it moves past the first message after the head, which is
/// folded. The head's six outputs become one-liners (head pruning, SPEC 5/6).
#[test]
fn a_forced_compaction_folds_the_first_group_and_prunes_the_head() {
    let m = meter();
    let ids = ["a", "b", "c", "d", "e", "f"];
    let mut msgs = vec![msg(Role::System, "sys"), msg(Role::User, "check everything")];
    msgs.push(calls(&ids));
    for (k, id) in ids.iter().enumerate() {
        msgs.push(result(id, &output(k, 400)));
    }
    msgs.extend([
        msg(Role::User, "now fix the failing one"),
        msg(Role::Assistant, "Fixed."),
        msg(Role::User, "thanks, ship it"),
        msg(Role::Assistant, "Shipped."),
    ]);
    let s = with_msgs(msgs);
    for mode in [Mode::Lean, Mode::Legacy] {
        let out = compact(&s, &forced(mode, 64_000), &m);
        let c = &out.compaction;
        assert_eq!(c.reason, Reason::Compacted, "{mode}");
        assert_eq!(c.tier, Tier::Summary, "{mode}");
        assert_eq!(c.sections.head_messages, 9, "{mode}: the head absorbs the group");
        assert_eq!(c.summarized_range, Some((9, 10)), "{mode}: the first message folded");
        assert_eq!(summaries(&out), 1, "{mode}");
        let o = &out.session.messages;
        assert_eq!(o[1].text_content(), "check everything");
        assert_eq!(o[2].tool_calls.len(), 6);
        for (k, r) in o.iter().enumerate().take(9).skip(3) {
            let t = r.text_content();
            assert!(t.starts_with("[terminal] ran"), "{mode}: head result {k}: {t}");
        }
        assert!(c.effects.tool_results_cleared >= 6);
        assert_verified(&s, &out, &m, mode);
    }
}

/// A session with nothing after the head but one message, or whose only
/// group after the head reaches its end, passes through: `too_short`, not a
/// `compacted` session without a summary.
#[test]
fn nothing_to_fold_passes_through_as_too_short() {
    let m = meter();
    let short = with_msgs(vec![
        msg(Role::System, "s"),
        msg(Role::User, &output(1, 2_000)),
        msg(Role::Assistant, "a"),
        msg(Role::User, "u"),
        msg(Role::Assistant, "b"),
    ]);
    let mut one_group = short.messages[..4].to_vec();
    one_group.push(calls(&["x"]));
    one_group.push(result("x", &output(2, 2_000)));
    for s in [short, with_msgs(one_group)] {
        for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
            let mut p = forced(mode, 8_000);
            p.target_tokens = Some(10);
            let out = compact(&s, &p, &m);
            let c = &out.compaction;
            if mode != Mode::Tiered {
                assert_eq!(c.reason, Reason::TooShort, "{mode}");
                assert!(!c.compacted && c.tier == Tier::None, "{mode}");
            }
            assert!(!c.compacted || summaries(&out) == 1 || c.tier < Tier::Summary, "{mode}");
            assert_verified(&s, &out, &m, mode);
        }
    }
}

/// SPEC 6.4 (H): the images of the head and the protected tail go too, but
/// for the newest image-bearing user message's; tail screenshots become the
/// screenshot placeholder; the tail is otherwise verbatim.
#[test]
fn images_in_the_head_and_tail_are_stripped_but_the_newest_users() {
    use crate::model::{ContentForm, Part};
    let m = meter();
    let image = || Part::Image { raw: serde_json::Map::new(), info: Default::default() };
    let with_image = |role: Role, text: &str| {
        let mut x = Message::text(role, text);
        x.content.parts_mut().push(image());
        x.content.form = ContentForm::Parts;
        x
    };
    let mut msgs = vec![msg(Role::System, "s"), with_image(Role::User, "head image")];
    msgs.push(msg(Role::Assistant, "seen"));
    for k in 0..30 {
        msgs.push(msg(Role::User, &format!("step {k} {}", output(k, 300))));
        msgs.push(msg(Role::Assistant, "ok"));
    }
    msgs.push(with_image(Role::User, "newest image"));
    msgs.push(calls(&["shot"]));
    let mut shot = with_image(Role::Tool, "screen");
    shot.tool_call_id = Some("shot".into());
    msgs.push(shot);
    msgs.push(with_image(Role::User, "older? no: newest now"));
    msgs.push(msg(Role::Assistant, "done"));
    let s = with_msgs(msgs);
    let out = compact(&s, &forced(Mode::Lean, 16_000), &m);
    let o = &out.session.messages;
    assert_eq!(out.compaction.reason, Reason::Compacted);
    let images = |x: &Message| x.content.parts.iter().filter(|p| p.is_image()).count();
    assert_eq!(o[1].content.parts[1].text_str(), Some(strip_media::IMAGE_PLACEHOLDER));
    let n = o.len();
    assert_eq!(o[n - 5].content.parts[1].text_str(), Some(strip_media::IMAGE_PLACEHOLDER));
    assert_eq!(o[n - 3].content.parts[1].text_str(), Some(strip_media::SCREENSHOT_PLACEHOLDER));
    assert_eq!(images(&o[n - 2]), 1, "the newest image-bearing user message keeps its image");
    assert_eq!(o.iter().map(images).sum::<usize>(), 1);
    assert_verified(&s, &out, &m, Mode::Lean);
}

/// SPEC 6.6: the whole summary message, lean's appendices included, within
/// 15% of the window; the appendices shrink, the body keeps its budget.
#[test]
fn the_lean_summary_stays_within_fifteen_percent_of_the_window() {
    let m = meter();
    for window in [32_000u64, 64_000] {
        let s = synth_session(21, 300_000);
        let out = compact(&s, &forced(Mode::Lean, window), &m);
        let c = &out.compaction;
        assert!(c.sections.summary_tokens > 0);
        assert!(
            c.sections.summary_tokens <= summary::summary_max_tokens(window),
            "{window}: {} tokens",
            c.sections.summary_tokens
        );
        assert_eq!(summary::summary_max_tokens(window), window * 15 / 100);
    }
}

/// SPEC 5: a compacted request still over the trigger (here a system prompt
/// bigger than the trigger) is flagged, and only then.
#[test]
fn a_compacted_request_still_over_the_trigger_is_flagged() {
    let m = meter();
    let mut msgs = vec![msg(Role::System, &output(0, 12_000))];
    for k in 0..40 {
        msgs.push(msg(Role::User, &format!("q{k} {}", output(k, 200))));
        msgs.push(msg(Role::Assistant, &output(k + 100, 200)));
    }
    let s = with_msgs(msgs);
    let p = Policy::new(Mode::Lean, 32_000);
    let out = compact(&s, &p, &m);
    assert!(out.compaction.compacted);
    assert!(out.compaction.tokens_after > p.threshold);
    assert!(out.compaction.over_trigger);
    let row =
        crate::report::wire::SessionRow::new(&s.source, "x", "openai", &out.compaction, "o200k");
    assert!(row.over_trigger);
    let mut run = crate::report::RunSummary::default();
    run.add(&out.compaction);
    assert_eq!(run.over_trigger, 1);
    let small = synth_session(9, 60_000);
    let fine = compact(&small, &Policy::new(Mode::Lean, 64_000), &m);
    assert!(fine.compaction.compacted && !fine.compaction.over_trigger);
}

/// Bad input (issue 26): a turn with no user message at all, a session that
/// is one giant tool result, a head made only of tool results: each folds or
/// passes through as the rules say, never a panic.
#[test]
fn bad_input_folds_or_passes_through() {
    let m = meter();
    // No user message at all: the calls fold, `## Active Task` says None.
    let mut no_user = vec![msg(Role::System, "s")];
    for k in 0..40 {
        let id = format!("n{k}");
        no_user.push(calls(&[&id]));
        no_user.push(result(&id, &output(k, 400)));
    }
    let s = with_msgs(no_user);
    for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
        let out = compact(&s, &forced(mode, 16_000), &m);
        assert_eq!(out.compaction.reason, Reason::Compacted, "{mode}");
        if out.compaction.tier == Tier::Summary {
            assert_eq!(summaries(&out), 1, "{mode}");
        }
        assert_verified(&s, &out, &m, mode);
    }
    // One giant tool result (no call, nothing else): nothing to fold.
    let giant = with_msgs(vec![result("g", &output(1, 60_000))]);
    // The same after an ask and its call: the group is the head.
    let asked =
        with_msgs(vec![msg(Role::User, "run it"), calls(&["g"]), result("g", &output(1, 60_000))]);
    for s in [giant, asked] {
        for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
            let out = compact(&s, &Policy::new(mode, 32_000), &m);
            let c = &out.compaction;
            assert!(!c.compacted || c.tier < Tier::Summary, "{mode}: {:?}", c.reason);
            if mode != Mode::Tiered {
                assert_eq!(c.reason, Reason::TooShort, "{mode}");
            }
            assert_verified(&s, &out, &m, mode);
        }
    }
    // A head made only of tool results (answering nothing): pruned and dropped, the rest folds.
    let mut head_results: Vec<Message> =
        (0..3).map(|k| result(&format!("o{k}"), &output(k, 500))).collect();
    for k in 0..30 {
        head_results.push(msg(Role::User, &format!("u{k} {}", output(k, 200))));
        head_results.push(msg(Role::Assistant, &output(k + 50, 200)));
    }
    let s = with_msgs(head_results);
    for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
        let out = compact(&s, &forced(mode, 16_000), &m);
        assert_eq!(out.compaction.reason, Reason::Compacted, "{mode}");
        assert_verified(&s, &out, &m, mode);
    }
}

/// Honest labels (issue 26): a tier is the stage that changed something, and
/// `summary` only when there is one. A forced tiered pass over a session
/// already at its target that no stage changes is not `compacted`.
#[test]
fn tier_and_reason_say_what_happened() {
    let m = meter();
    let mut msgs = vec![msg(Role::System, "s")];
    for k in 0..12 {
        msgs.push(msg(Role::User, &format!("q{k}")));
        msgs.push(msg(Role::Assistant, &format!("a{k}")));
    }
    let s = with_msgs(msgs);
    let mut p = forced(Mode::Tiered, 64_000);
    p.target_tokens = Some(1_000_000);
    let out = compact(&s, &p, &m);
    assert_eq!((out.compaction.tier, out.compaction.reason), (Tier::None, Reason::NoGain));
    assert!(!out.compaction.compacted);
    let long = synth_session(3, 60_000);
    for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
        let out = compact(&long, &forced(mode, 64_000), &m);
        let c = &out.compaction;
        assert_eq!(c.tier == Tier::Summary, c.summarized_range.is_some(), "{mode}");
        assert_eq!(c.tier == Tier::Summary, summaries(&out) == 1, "{mode}");
    }
}

/// A summarizer that answers the same thing every time.
#[derive(Debug)]
struct Fixed(Result<String, summary_writer::Fallback>);

impl SummaryWriter for Fixed {
    fn write(
        &self,
        _: &BodyRequest<'_>,
        _: &Meter,
    ) -> Result<summary_writer::Body, summary_writer::Failure> {
        match &self.0 {
            Ok(text) => Ok(summary_writer::Body { text: text.clone(), ..Default::default() }),
            Err(reason) => Err((*reason).into()),
        }
    }
}

fn summary_text(out: &Outcome) -> String {
    out.session
        .messages
        .iter()
        .map(|m| m.text_content().into_owned())
        .find(|t| t.starts_with(summary::SUMMARY_PREFIX))
        .expect("a summary")
}

#[test]
fn a_summarizers_body_goes_inside_our_frame_with_our_appendices() {
    let m = meter();
    let s = synth_session(7, 40_000);
    let mut p = forced(Mode::Lean, 64_000);
    p.summarizer = Some(Arc::new(Fixed(Ok("```\n## Goal\nShip it.\n```".into()))));
    let out = compact(&s, &p, &m);
    check_invariants(&s, &out, &m);
    let text = summary_text(&out);
    assert!(text.contains("\n\n## Goal\nShip it.\n\n## Anchor Index\n"), "{text}");
    assert!(text.ends_with(summary::SUMMARY_END_MARKER));
    assert!(!text.contains("## Completed Actions"), "the model's body replaces the core");
    let used = out.compaction.summarizer.expect("recorded");
    assert!(used.used && used.fallback.is_none());
}

#[test]
fn a_failed_or_unfit_body_gives_the_deterministic_summary_and_says_why() {
    let m = meter();
    let s = synth_session(8, 40_000);
    let plain = compact(&s, &forced(Mode::Lean, 64_000), &m);
    let huge = "## Goal\n".to_string() + &"many words here ".repeat(5_000);
    for (answer, reason) in [
        (Err(summary_writer::Fallback::Timeout), summary_writer::Fallback::Timeout),
        (Ok(huge), summary_writer::Fallback::OverBudget),
        (Ok("  \n```\n```".into()), summary_writer::Fallback::Empty),
    ] {
        let mut p = forced(Mode::Lean, 64_000);
        p.summarizer = Some(Arc::new(Fixed(answer)));
        let out = compact(&s, &p, &m);
        assert_eq!(out.session, plain.session, "{reason:?}");
        let used = out.compaction.summarizer.expect("recorded");
        assert_eq!((used.used, used.fallback), (false, Some(reason)));
    }
    assert_eq!(plain.compaction.summarizer, None, "no summarizer, no record");
}

#[test]
fn a_summarizer_asked_for_a_compaction_then_refused_for_no_gain_is_still_counted() {
    let m = meter();
    let s = short_turns();
    let mut p = forced(Mode::Lean, 200_000);
    let plain = compact(&s, &p, &m);
    assert_eq!(plain.compaction.reason, Reason::NoGain);
    p.summarizer = Some(Arc::new(Fixed(Ok("## Goal\nx".into()))));
    let out = compact(&s, &p, &m);
    assert_eq!(out.compaction.reason, Reason::NoGain);
    assert!(out.compaction.summarizer.is_some_and(|u| u.used), "the request it cost is counted");
}
