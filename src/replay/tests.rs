//! Tests of the replay: trigger points, carried-forward summaries, anti-thrash,
//! the cache model on hand-computed figures, and the provider-usage trigger.

use super::*;
use crate::model::{Role, ToolCall, Usage};
use crate::policy::Mode;
use crate::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS};

fn hermes() -> Meter {
    Meter::new(CounterKind::Hermes, DEFAULT_IMAGE_TOKENS)
}

fn text(role: Role, chars: usize, fill: char) -> Message {
    Message::text(role, fill.to_string().repeat(chars))
}

/// An assistant message calling `tool` (no arguments) under the call id `id`.
fn calling(id: &str, tool: &str) -> Message {
    let mut m = Message::text(Role::Assistant, format!("calling {id}"));
    m.tool_calls_mut().push(ToolCall {
        id: id.into(),
        name: tool.into(),
        arguments: "{}".into(),
        ..Default::default()
    });
    m
}

/// A coding session: system, a first ask, then `rounds` of (call, result),
/// with a user message every 10 rounds. Results are ~1,000 tokens each.
fn work_session(rounds: usize) -> Session {
    let mut msgs = vec![
        Message::text(Role::System, "You are a coding agent."),
        Message::text(Role::User, "Please fix the failing build in src/app/main.rs."),
        Message::text(Role::Assistant, "I will start by running the tests."),
        Message::text(Role::User, "Go ahead."),
    ];
    for r in 0..rounds {
        if r > 0 && r % 10 == 0 {
            msgs.push(Message::text(Role::User, format!("Status check {r}: keep going.")));
        }
        let mut call = Message::text(Role::Assistant, format!("Step {r}."));
        call.tool_calls_mut().push(ToolCall {
            id: format!("c{r}"),
            name: "Bash".into(),
            arguments: format!(r#"{{"command":"make step-{r}"}}"#),
            ..Default::default()
        });
        let mut result = Message::text(Role::Tool, format!("line {r}\n").repeat(500));
        result.tool_call_id = Some(format!("c{r}"));
        msgs.extend([call, result]);
    }
    msgs.push(Message::text(Role::Assistant, "All done."));
    Session { messages: msgs, ..Session::default() }
}

fn policy(mode: Mode, window: u64) -> Policy {
    Policy::new(mode, window)
}

/// The window of most replays here, in tokens.
const WINDOW: u64 = 64_000;

/// `work_session(rounds)` replayed under `mode` with a [`WINDOW`]-token window
/// and the threshold trigger: the session, its policy and the replay.
fn replayed(rounds: usize, mode: Mode) -> (Session, Policy, Replay) {
    let s = work_session(rounds);
    let p = policy(mode, WINDOW);
    let r = replay(&s, &p, &hermes(), Trigger::Threshold);
    (s, p, r)
}

#[test]
fn the_trigger_fires_exactly_twice_and_the_summary_carries_forward() {
    // Compactions land before calls 54 and 91; a third would come at 125.
    let (s, p, r) = replayed(110, Mode::Lean);
    assert_eq!(r.compactions.len(), 2, "{:?}", r.compactions);
    assert_eq!(r.compactions.iter().map(|c| c.before_call).collect::<Vec<_>>(), [54, 91]);
    assert!(!r.thrash_stopped);
    for c in &r.compactions {
        let at = c.before_call;
        assert!(at > 0);
        // The call before did not reach the trigger; this one would have.
        assert!(r.calls[at - 1].tokens_live < p.threshold, "{:?}", r.calls[at - 1]);
        assert!(c.tokens_before >= p.threshold);
        assert!(c.tokens_after < p.threshold / 2, "{c:?}");
        assert_eq!(r.calls[at].tokens_live, c.tokens_after);
        assert_eq!(
            r.calls[at].compactions as usize,
            1 + r.compactions.iter().position(|x| x == c).unwrap()
        );
    }
    // Without compaction the request only grows.
    assert!(r.calls.windows(2).all(|w| w[1].tokens_original > w[0].tokens_original));
    assert_eq!(r.totals.peak_original, r.calls.last().unwrap().tokens_original);
    assert!(r.totals.peak_live < p.threshold + 2_000);
    assert!(
        r.totals.billed_live * 10 < r.totals.billed_original * 7,
        "{} vs {}",
        r.totals.billed_live,
        r.totals.billed_original
    );

    // The second summary updated the first: the actions of both folds, numbered 1..N.
    let last = r.final_session(&s);
    let summaries: Vec<&Message> =
        last.messages.iter().filter(|x| policy::summary::is_summary(x)).collect();
    assert_eq!(summaries.len(), 1, "updated, not nested");
    let text = summaries[0].text_content();
    assert!(text.contains("1. Ran `make step-0`"), "{text}");
    let kept: std::collections::HashSet<&str> =
        last.messages.iter().flat_map(|x| x.tool_calls.iter()).map(|c| c.id.as_str()).collect();
    let folded = s
        .messages
        .iter()
        .flat_map(|x| x.tool_calls.iter())
        .filter(|c| !kept.contains(c.id.as_str()))
        .count();
    assert!(
        text.contains(&format!("\n{folded}. Ran `make step-{}`", folded - 1)),
        "{folded}\n{text}"
    );
    assert!(!text.contains(&format!("\n{}. ", folded + 1)));

    // The final history is the last compaction's output (its last message is
    // the original message just before call 91) and every original message since.
    let at = r.calls[91].message;
    let since = s.messages.len() - at;
    assert_eq!(last.messages[last.messages.len() - since..], s.messages[at..]);
    assert!(last.messages.len() < s.messages.len());
    // Without compaction, it is the session itself.
    let none = replay(&s, &policy(Mode::None, WINDOW), &hermes(), Trigger::Threshold);
    assert!(none.compactions.is_empty());
    assert_eq!(none.final_session(&s), s);
}

#[test]
fn one_huge_message_stops_compaction_after_two_tries() {
    let m = hermes();
    let mut s = work_session(20);
    // The newest user message is always kept, and alone it is over the threshold.
    s.messages.push(text(Role::User, 4 * 60_000, 'h'));
    for k in 0..6 {
        s.messages.push(Message::text(Role::Assistant, format!("reply {k}")));
        s.messages.push(Message::text(Role::User, format!("more {k}")));
    }
    let p = policy(Mode::Lean, WINDOW);
    let r = replay(&s, &p, &m, Trigger::Threshold);
    assert_eq!(r.compactions.len(), 2, "{:?}", r.compactions);
    assert!(r.compactions.iter().all(|c| c.ineffective));
    assert!(r.thrash_stopped);
    // Later calls are over the threshold and no longer compacted.
    let last = r.calls.last().unwrap();
    assert!(last.tokens_live >= p.threshold);
    assert_eq!(last.compactions, 2);
}

#[test]
fn cache_reads_on_a_hand_computed_example() {
    // Hermes counter: ASCII costs chars/4 tokens + 10 per message; no schemas, no framing.
    let m = hermes();
    let s = Session {
        messages: vec![
            text(Role::System, 40, 's'),    // 20 tokens
            text(Role::User, 400, 'u'),     // 110
            text(Role::Assistant, 80, 'a'), // 30   call 1: request [s, u] = 130
            text(Role::User, 200, 'v'),     // 60
            text(Role::Assistant, 40, 'b'), // 20   call 2: request 130 + 30 + 60 = 220
            text(Role::User, 40, 'w'),      // 20
            text(Role::Assistant, 40, 'c'), // 20   call 3: 220 + 20 + 20 = 260
            text(Role::User, 40, 'x'),      // 20
            text(Role::Assistant, 40, 'd'), // 20   call 4: 260 + 20 + 20 = 300
        ],
        ..Session::default()
    };
    let r = replay(&s, &policy(Mode::Lean, 200_000), &m, Trigger::Threshold);
    let sizes: Vec<u64> = r.calls.iter().map(|c| c.tokens_original).collect();
    assert_eq!(sizes, [130, 220, 260, 300]);
    // Each request extends the previous one: it reads all of it, writes the rest.
    let reads: Vec<u64> = r.calls.iter().map(|c| c.cache_read_original).collect();
    let writes: Vec<u64> = r.calls.iter().map(|c| c.cache_write_original).collect();
    assert_eq!(reads, [0, 130, 220, 260]);
    assert_eq!(writes, [130, 90, 40, 40]);
    assert_eq!(r.totals.cache_read_original, 610);
    assert_eq!(r.totals.billed_original, 910);
    // Nothing was compacted: the live run is the same.
    assert_eq!(r.totals.cache_read_live, 610);
}

#[test]
fn breakpoints_limit_what_a_diverging_request_reads() {
    // Previous request: system + 5 messages, ends after each message below.
    let prev = Request {
        keys: vec![1, 2, 3, 4, 5, 6],
        ends: vec![100, 150, 200, 260, 330, 400],
        base: 0,
        system: 1,
    };
    let mut next = prev.clone();
    next.keys[3] = 99; // diverges at message 3: shares 3 messages
    // Breakpoints: end of system (1) and ends of the last three (4, 5, 6): the best at or before 3 is 1.
    assert_eq!(next.cache_read(&prev.snapshot(), 3, CacheRule::Anthropic), 100);
    // Sharing 5 messages reaches the breakpoint after message 5.
    assert_eq!(next.cache_read(&prev.snapshot(), 5, CacheRule::Anthropic), 330);
    // Without a system prompt nothing before the last three can be read.
    let no_sys = Request { system: 0, ..prev.clone() };
    assert_eq!(next.cache_read(&no_sys.snapshot(), 3, CacheRule::Anthropic), 0);
    assert_eq!(shared_prefix(&next.keys, &prev.keys), 3);
}

#[test]
fn a_compaction_invalidates_the_cache_once() {
    let (_, _, r) = replayed(60, Mode::Lean);
    let at = r.compactions[0].before_call;
    // The system prompt gains a note when compacting, so the first compacted request reads nothing.
    assert_eq!(r.calls[at].cache_read_live, 0);
    assert_eq!(r.calls[at].cache_write_live, r.calls[at].tokens_live);
    // The next one reads all of it again.
    assert_eq!(r.calls[at + 1].cache_read_live, r.calls[at].tokens_live);
}

#[test]
fn a_compaction_that_keeps_the_system_prompt_reads_it_from_cache() {
    // Tiered mode's cheap tiers add no note: the compacted request keeps the
    // system prompt, so it reads up to the system breakpoint. Pins that a kept
    // message keys the same as the original it was read from.
    let m = hermes();
    let (s, _, r) = replayed(60, Mode::Tiered);
    let at = r.compactions[0].before_call;
    let system = m.tools(None) + m.request_overhead() + m.message(&s.messages[0]);
    assert_eq!(r.calls[at].cache_read_live, system);
    assert_eq!(r.calls[at - 1].cache_read_live, r.calls[at - 1].cache_read_original);
}

#[test]
fn recorded_provider_usage_drives_the_trigger() {
    let m = hermes();
    let mut s = work_session(8);
    // Our count stays far under the threshold, but the provider saw a large prompt
    // (a system prompt and schemas the log does not hold).
    let calls: Vec<usize> =
        (0..s.messages.len()).filter(|&i| s.messages[i].role == Role::Assistant).collect();
    for &i in &calls {
        s.messages[i].meta.usage = Some(Usage { input_tokens: Some(60_000), ..Default::default() });
    }
    let p = policy(Mode::Lean, WINDOW);
    let ours = replay(
        &Session {
            messages: s
                .messages
                .iter()
                .cloned()
                .map(|mut x| {
                    x.meta.usage = None;
                    x
                })
                .collect(),
            ..s.clone()
        },
        &p,
        &m,
        Trigger::Threshold,
    );
    assert!(ours.compactions.is_empty());
    let r = replay(&s, &p, &m, Trigger::Threshold);
    assert!(!r.compactions.is_empty());
    assert_eq!(r.calls[0].provider_tokens, Some(60_000));
    // What the report charts (`Call::trigger_tokens`) is what the trigger compared:
    // the provider's size, corrected, not our count; our count where none is recorded.
    let at = r.compactions[0].before_call;
    assert!(r.compactions[0].tokens_before >= p.threshold);
    assert_eq!(r.calls[at].trigger_tokens(), r.compactions[0].tokens_after);
    assert!(r.calls[at].trigger_tokens() > r.calls[at].tokens_live + 30_000);
    assert!(ours.calls.iter().all(|c| c.trigger_tokens() == c.tokens_live));
}

#[test]
fn the_gateway_trigger_waits_for_85_percent() {
    let (s, p, main) = replayed(150, Mode::Lean);
    let gateway = replay(&s, &p, &hermes(), Trigger::Gateway);
    assert!(!gateway.compactions.is_empty());
    assert!(gateway.compactions[0].tokens_before >= (WINDOW as f64 * 0.85) as u64);
    assert!(gateway.compactions[0].before_call >= main.compactions[0].before_call);
}

#[test]
fn costs_follow_the_prices() {
    let (_, _, r) = replayed(60, Mode::Lean);
    let prices = Prices { input: 3.0, cache_read: 0.3, cache_write: 3.75, output: 15.0 };
    let (without, with) = r.cost(&prices);
    let expect = |read: u64, write: u64| {
        (read as f64 * 0.3 + write as f64 * 3.75 + r.output_tokens as f64 * 15.0) / 1e6
    };
    assert!((without - expect(r.totals.cache_read_original, r.cache_write_original)).abs() < 1e-9);
    assert!((with - expect(r.totals.cache_read_live, r.cache_write_live)).abs() < 1e-9);
    assert!(with < without);
}

/// Replay is linear in the session length: each call takes a constant-size
/// snapshot of the request, never a copy of the history (a copy per call made
/// replay time grow with the square of the length; the 20,000 / 2,000-message
/// ratio is in benches/RESULTS.md). Pinned here by what a snapshot holds.
#[test]
fn a_snapshot_holds_only_the_breakpoints() {
    let mut r = Request { base: 7, ..Request::default() };
    for i in 0..10_000u64 {
        r.push(u128::from(i), 10, i == 0);
    }
    let s = r.snapshot();
    assert_eq!(s.len, 10_000);
    assert_eq!(s.breakpoints.len(), 4, "the system prompt's end and the last three messages");
    assert!(s.breakpoints.contains(&(1, 17)));
    assert!(s.breakpoints.contains(&(10_000, 7 + 100_000)));
}

#[test]
fn a_prepared_input_replays_as_its_session() {
    // `report` compacts and replays each session under every mode from one
    // `Prepared`: its shared counts must not change a figure or the history.
    let m = hermes();
    let s = work_session(110);
    let caches = crate::policy::Caches::default();
    let prepared = Prepared::new(&s, &caches);
    for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered, Mode::None] {
        let p = policy(mode, WINDOW);
        let _ = policy::compact_prepared(&prepared, &p, &m);
        let shared = replay_prepared(&prepared, &p, &m, Trigger::Threshold);
        let alone = replay(&s, &p, &m, Trigger::Threshold);
        assert_eq!(mode == Mode::None, alone.compactions.is_empty(), "{mode:?}");
        let json = |r: &Replay| serde_json::to_string(r).unwrap();
        assert_eq!(json(&shared), json(&alone), "{mode:?}");
        assert_eq!(shared.final_session(&s), alone.final_session(&s), "{mode:?}");
    }
}

/// Issue 39: a masked policy, by hand. [S, U, A1→c1, T1, A2→c2, T2, A3]
/// under "mask every result but the newest, before every request": calls at
/// A1, A2, A3; only before A3 is there an older result (T1) to mask.
mod spec_policies {
    use super::*;
    use crate::policy::spec::{self, Count, Masking, PolicySpec, ToolResults};
    use spec::Trigger as When;
    use std::borrow::Cow;
    use std::sync::Arc;

    fn session() -> Session {
        let mut t1 = text(Role::Tool, 8_000, 'a');
        t1.tool_call_id = Some("c1".into());
        let mut t2 = text(Role::Tool, 8_000, 'b');
        t2.tool_call_id = Some("c2".into());
        let msgs = vec![
            Message::text(Role::System, "You are an agent."),
            Message::text(Role::User, "Fix it."),
            calling("c1", "Bash"),
            t1,
            calling("c2", "Bash"),
            t2,
            Message::text(Role::Assistant, "Done."),
        ];
        Session { messages: msgs, ..Session::default() }
    }

    fn masking(cache: CacheRule) -> Policy {
        let spec = PolicySpec {
            name: Cow::Borrowed("mask-test"),
            trigger: When::EveryRequest,
            tool_results: ToolResults::Masked(Masking {
                keep_newest: 1,
                count: Count::Results,
                placeholder: Cow::Borrowed("[masked]"),
                clear_at_least: 0,
                stop_under_tokens: None,
                exclude_tools: Cow::Borrowed(&[]),
                only_tools: Cow::Borrowed(&[]),
                before_trigger: 0,
            }),
            cache,
            ..spec::builtin::NONE
        };
        Policy::from_spec(Arc::new(spec), 1_000_000)
    }

    /// [`session`] replayed under [`masking`] with `cache`, and what its
    /// tests count with.
    struct Masked {
        s: Session,
        m: Meter,
        r: Replay,
        /// Each message's tokens.
        t: Vec<u64>,
        /// What every request carries besides the messages.
        base: u64,
    }

    fn masked(cache: CacheRule) -> Masked {
        let s = session();
        let m = hermes();
        let r = replay(&s, &masking(cache), &m, Trigger::Threshold);
        let t = s.messages.iter().map(|x| m.message(x)).collect();
        let base = m.tools(None) + m.request_overhead();
        Masked { s, m, r, t, base }
    }

    #[test]
    fn a_masked_result_breaks_the_cache_from_itself_on_and_the_call_writes_from_there() {
        let Masked { s, m, r, t, base } = masked(CacheRule::Anthropic);
        let mut masked = s.messages[3].clone();
        masked.content.replace_with_text("[masked]");
        let t1_masked = m.message(&masked);
        assert_eq!(r.calls.len(), 3);
        assert_eq!(r.compactions.len(), 1, "only before A3 is there a result to mask");
        assert_eq!(r.compactions[0].before_call, 2);
        // Calls 1 and 2: nothing masked; each reads what the one before wrote
        // up to its last breakpoint (the whole previous request here).
        assert_eq!(r.calls[1].cache_read_live, base + t[0] + t[1]);
        // Call 3: the request is S U A1 T1' A2 T2. The cache written at call 2
        // (S U A1 T1, breakpoints after S, U, A1 and T1) is read up to A1, the
        // last breakpoint before the first changed message; the rest is written.
        let c = &r.calls[2];
        assert_eq!(c.tokens_live, base + t[0] + t[1] + t[2] + t1_masked + t[4] + t[5]);
        assert_eq!(c.cache_read_live, base + t[0] + t[1] + t[2]);
        assert_eq!(c.cache_write_live, t1_masked + t[4] + t[5]);
        // Without the edit it would have read T1 too, and written A2 T2 only.
        assert_eq!(c.cache_read_original, base + t[0] + t[1] + t[2] + t[3]);
        assert_eq!(c.cache_write_original, t[4] + t[5]);
        // The next call's history keeps the mask.
        assert_eq!(r.final_session(&s).messages[3].text_content(), "[masked]");
    }

    #[test]
    fn openai_prefix_caching_reads_the_shared_prefix_in_steps_of_128() {
        let Masked { r, t, base, .. } = masked(CacheRule::OpenaiPrefix);
        let step = |v: u64| v / OPENAI_CACHE_STEP_TOKENS * OPENAI_CACHE_STEP_TOKENS;
        // Call 2 (S U A1 T1, over 1,024 tokens) after call 1 (S U, under): nothing.
        assert!(r.calls[0].tokens_live < OPENAI_MIN_CACHED_TOKENS);
        assert_eq!(r.calls[1].cache_read_live, 0);
        // Call 3: the prefix shared with call 2 ends at A1: read in steps of 128.
        assert_eq!(r.calls[2].cache_read_live, step(base + t[0] + t[1] + t[2]));
        assert_eq!(r.calls[2].cache_read_original, step(base + t[0] + t[1] + t[2] + t[3]));
    }

    /// The kept history of a spec that only masks ([`MaskedHistory`]) against
    /// the whole recomputation: the same spec with a tool list that excludes
    /// nothing is not kept, so it compacts the whole live history at every
    /// call; every call's figures, the compactions and the final history match.
    #[test]
    fn a_kept_masking_history_replays_as_the_whole_recomputation() {
        let mut s = work_session(160);
        for (k, msg) in s.messages.iter_mut().enumerate() {
            if msg.role == Role::Assistant && k % 3 == 0 {
                msg.reasoning = Some(crate::model::Reasoning {
                    field: "reasoning".into(),
                    text: "hmm ".repeat(50),
                });
            }
        }
        let m = hermes();
        for name in ["openhands-masking", "anthropic-context-editing"] {
            let spec = spec::builtin::find(name).unwrap().clone();
            let mut whole = spec.clone();
            let ToolResults::Masked(masking) = &mut whole.tool_results else { unreachable!() };
            masking.exclude_tools = Cow::Owned(vec![Cow::Borrowed("no-such-tool")]);
            assert!(MaskedHistory::for_spec(&spec, &m).is_some(), "{name}");
            assert!(MaskedHistory::for_spec(&whole, &m).is_none(), "{name}");
            let kept =
                replay(&s, &Policy::from_spec(Arc::new(spec), 200_000), &m, Trigger::Threshold);
            let all =
                replay(&s, &Policy::from_spec(Arc::new(whole), 200_000), &m, Trigger::Threshold);
            assert!(kept.compactions.len() > 10, "{name}: {:?}", kept.compactions.len());
            assert_eq!(kept.calls, all.calls, "{name}");
            assert_eq!(kept.compactions, all.compactions, "{name}");
            assert_eq!(kept.totals, all.totals, "{name}");
            assert_eq!(kept.final_session(&s), all.final_session(&s), "{name}");
        }
    }

    #[test]
    fn a_server_side_edit_leaves_the_clients_history_whole() {
        let s = session();
        let m = hermes();
        let mut p = masking(CacheRule::Anthropic);
        let mut spec = (*p.spec).clone();
        spec.applies = spec::Applies::Request;
        p.spec = Arc::new(spec);
        let r = replay(&s, &p, &m, Trigger::Threshold);
        assert_eq!(r.compactions.len(), 1);
        assert!(r.calls[2].tokens_live < r.calls[2].tokens_original);
        assert_eq!(r.final_session(&s), s, "the client keeps every result");
    }
}

/// Codex's measure (`Measure::LastTotal`, `usage.rs`) by hand:
/// [S, U1, A1(reasoning)→c1, T1, A2, U2, A3→c3, T3, A4], calls at A1..A4.
mod codex_measure {
    use super::*;
    use crate::model::Part;
    use crate::policy::spec::{self, Measure, PolicySpec};
    use serde_json::{Map, Value};
    use std::sync::Arc;

    /// A `shell` call with the usage the provider recorded for it.
    fn calling(id: &str, usage: Option<(u64, u64)>) -> Message {
        let mut m = super::calling(id, "shell");
        m.meta.usage = usage.map(|(input, output)| Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
            ..Default::default()
        });
        m
    }

    fn output(id: &str) -> Message {
        let mut m = Message::text(Role::Tool, "x".repeat(4_000));
        m.tool_call_id = Some(id.into());
        m
    }

    /// The session; `encrypted`: A1's reasoning is Codex's (4,000 bytes of
    /// `encrypted_content`), else thinking text (another dialect's);
    /// `recorded`: the calls' usage is in the log.
    fn session(encrypted: bool, recorded: bool) -> Session {
        let u = |input, output| recorded.then_some((input, output));
        let mut a1 = calling("c1", u(1_000, 100));
        let mut raw = Map::new();
        let (key, len) = if encrypted { ("encrypted_content", 4_000) } else { ("thinking", 400) };
        raw.insert(key.into(), Value::from("g".repeat(len)));
        Arc::make_mut(&mut a1.content.parts).insert(0, Part::Reasoning(raw));
        let mut a2 = Message::text(Role::Assistant, "done");
        a2.meta.usage = u(1_200, 50).map(|(i, o)| Usage {
            input_tokens: Some(i),
            output_tokens: Some(o),
            ..Default::default()
        });
        let mut a4 = calling("c4", u(1_600, 10));
        a4.tool_calls_mut().clear();
        let msgs = vec![
            Message::text(Role::System, "You are Codex."),
            Message::text(Role::User, "fix it"),
            a1,
            output("c1"),
            a2,
            Message::text(Role::User, "and the docs"),
            calling("c3", u(1_400, 100)),
            output("c3"),
            a4,
        ];
        Session { messages: msgs, ..Session::default() }
    }

    fn codex(measure: Measure, trigger: u64) -> Policy {
        let spec = PolicySpec {
            trigger: spec::Trigger::Tokens(trigger),
            measure,
            ..spec::builtin::find("codex").unwrap().clone()
        };
        Policy::from_spec(Arc::new(spec), 272_000)
    }

    #[test]
    fn last_total_plus_reasoning_before_the_last_user_plus_appended_outputs() {
        let s = session(true, true);
        let r = replay(&s, &codex(Measure::LastTotal, 3_000), &hermes(), Trigger::Threshold);
        let measures: Vec<_> = r.calls.iter().map(|c| c.measure).collect();
        // A1: no response yet (0). A2: 1,000 + 100 + T1 (4,000 chars for c1:
        // 54 + 2 + 4,002 bytes of JSON, 1,015 tokens rounded up); A1's
        // reasoning is after the last user message. A3: 1,200 + 50, checked
        // before U2 is recorded. A4: 1,400 + 100 + A1's reasoning, now before
        // U2 ((4,000 * 3 / 4 − 650) / 4 = 588, rounded up) + T3 (1,015).
        assert_eq!(measures, [Some(0), Some(2_115), Some(1_250), Some(1_500 + 588 + 1_015)]);
        // 3,103 ≥ 3,000: compacted before A4, whose prompt (1,600) is under it.
        assert_eq!(r.compactions.len(), 1);
        assert_eq!(r.compactions[0].before_call, 3);
        assert_eq!(r.compactions[0].tokens_before, 3_103);
        assert_eq!(r.calls[3].trigger_tokens(), 3_103);
        // The prompt measure (every other policy's) does not fire, and writes no measure.
        let prompt = replay(&s, &codex(Measure::Prompt, 3_000), &hermes(), Trigger::Threshold);
        assert!(prompt.compactions.is_empty());
        assert!(prompt.calls.iter().all(|c| c.measure.is_none()));
    }

    #[test]
    fn without_usage_or_encrypted_reasoning_it_falls_back_to_our_counts() {
        let meter = hermes();
        let s = session(false, false);
        let r = replay(&s, &codex(Measure::LastTotal, u64::MAX), &meter, Trigger::Threshold);
        let c = &r.calls;
        // The previous request (our count) + our count of its reply + the
        // appended output; no reasoning estimate (thinking text is not Codex's).
        assert_eq!(c[2].output_tokens, meter.message(&s.messages[6]));
        assert_eq!(
            c[3].measure,
            Some(c[2].tokens_live + c[2].output_tokens + usage::appended_tokens(&s.messages[7]))
        );
        assert_eq!(c[1].measure, Some(c[0].tokens_live + meter.message(&s.messages[2]) + 1_015));
    }
}
