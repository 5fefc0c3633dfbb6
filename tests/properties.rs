//! Property tests: generated sessions with parallel tool calls, images and
//! reasoning, compacted in every mode; every promise of `verify` must hold,
//! and the output must not depend on the thread count.

use compactor::formats::Format;
use compactor::formats::openai::decode_session;
use compactor::io::{Container, Payload, RawRecord};
use compactor::model::{Session, Source};
use compactor::pipeline::{Engine, Handover, Item, Job, Output, Processed};
use compactor::policy::summary::is_summary;
use compactor::policy::{Mode, Policy, compact, verify::verify};
use compactor::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS, Meter};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::LazyLock;

static METER: LazyLock<Meter> =
    LazyLock::new(|| Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS));

/// One step of a generated session.
#[derive(Clone, Debug)]
enum Op {
    User(usize),
    Text(usize),
    /// Parallel calls with these output sizes, and whether the call message reasons.
    Tools(Vec<usize>, bool),
    Image,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1usize..400).prop_map(Op::User),
        2 => (1usize..3_000).prop_map(Op::Text),
        5 => (prop::collection::vec(0usize..12_000, 1..4), any::<bool>()).prop_map(|(v, r)| Op::Tools(v, r)),
        1 => Just(Op::Image),
    ]
}

/// Deterministic text of `n` chars with paths, errors and ids in it.
fn text(seed: usize, n: usize) -> String {
    let words = [
        "src/app/main.rs",
        "ok",
        "fix/login-bug",
        "ValueError: bad",
        "#42",
        "a1b2c3d4",
        "the",
        "日本語",
        "test",
    ];
    let mut s = String::new();
    let mut k = seed;
    while s.chars().count() < n {
        s.push_str(words[k % words.len()]);
        s.push(if k.is_multiple_of(7) { '\n' } else { ' ' });
        k = k.wrapping_mul(31).wrapping_add(7);
    }
    s.chars().take(n).collect()
}

fn build(ops: &[Op]) -> Value {
    let mut msgs = vec![json!({"role": "system", "content": "You are a test agent."})];
    let mut call = 0;
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::User(n) => msgs.push(json!({"role": "user", "content": text(i, *n)})),
            Op::Text(n) => msgs.push(json!({"role": "assistant", "content": text(i + 1, *n)})),
            Op::Image => msgs.push(json!({"role": "user", "content": [
                {"type": "text", "text": "look at this"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]})),
            Op::Tools(sizes, reasoning) => {
                let ids: Vec<String> = sizes.iter().map(|_| { call += 1; format!("call_{call}") }).collect();
                let calls: Vec<Value> = ids.iter().enumerate().map(|(k, id)| {
                    let name = ["Bash", "Read", "Grep", "Edit", "mcp__x__y"][(i + k) % 5];
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": json!({"command": text(i + k, 30), "file_path": "src/a.rs"}).to_string()}})
                }).collect();
                let mut m = json!({"role": "assistant", "content": null, "tool_calls": calls});
                if *reasoning {
                    m["reasoning_content"] = Value::String(text(i + 3, 500));
                }
                msgs.push(m);
                for (k, (id, n)) in ids.iter().zip(sizes).enumerate() {
                    let content = if (i + k) % 9 == 0 {
                        json!([{"type": "text", "text": text(i + k, *n)}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}])
                    } else {
                        Value::String(text(i + k, *n))
                    };
                    msgs.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
                }
            }
        }
    }
    json!({"messages": msgs})
}

/// A fixed seed, so that CI is reproducible: a failure found once fails every
/// run until fixed. Explore with another seed: `PROPTEST_RNG_SEED=N cargo test`.
fn config(cases: u32) -> ProptestConfig {
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.parse().ok());
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed.unwrap_or(20_261_129)),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn session(ops: &[Op]) -> Session {
    decode_session(build(ops), Source::default()).expect("generated sessions decode")
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn every_mode_keeps_every_promise(ops in prop::collection::vec(op(), 4..50), window in prop::sample::select(vec![8_000u64, 16_000, 64_000])) {
        let s = session(&ops);
        for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
            let mut p = Policy::new(mode, window);
            p.force = true;
            let out = compact(&s, &p, &METER);
            // verify: the head keeps its message count, roles and system/user/
            // assistant text (its tool results may be one-liners or dedup
            // markers, its images placeholders); the protected tail is verbatim
            // but for stripped images; tokens never grow.
            let problems = verify(&s, &out, &METER);
            prop_assert!(problems.is_empty(), "{mode}: {problems:?}");
            let c = &out.compaction;
            prop_assert!(c.tokens_after <= c.tokens_before, "{mode}: tokens grew");
            if c.compacted && mode != Mode::Tiered {
                let summaries = out.session.messages.iter().filter(|m| is_summary(m)).count();
                prop_assert_eq!(summaries, 1, "{}: a compacted session holds one summary", mode);
                prop_assert_eq!(c.reason.name(), "compacted");
            }
            if c.compacted && c.tier.name() == "summary" {
                prop_assert!(c.summarized_range.is_some(), "{mode}: summary tier, no summary");
            }
            // Only the newest image-bearing user message keeps images, in head
            // and tail too (tiered mode may stop at a tier before stage 4).
            if c.compacted && (mode != Mode::Tiered || ["strip_media", "summary"].contains(&c.tier.name())) {
                let with_images = out.session.messages.iter()
                    .filter(|m| m.content.parts.iter().any(|p| p.is_image())).count();
                prop_assert!(with_images <= 1, "{mode}: {with_images} messages keep images");
            }
        }
    }

    #[test]
    fn thread_count_never_changes_the_output(batch in prop::collection::vec(prop::collection::vec(op(), 4..30), 1..6)) {
        let mut p = Policy::new(Mode::Lean, 8_000);
        p.force = true;
        let engine = Engine {
            policy: &p,
            auto: None,
            meter: &METER,
            caches: compactor::policy::Caches::default(),
            to: None,
            redact: false,
            handover: Handover::Values,
            shard: None,
            keep_source_fields: false,
            training: false,
        };
        let records = || -> Vec<Item> {
            batch.iter().enumerate().map(|(i, ops)| Item::Job(Job {
                input: 0,
                container: Container::Jsonl,
                format: Format::OpenAi,
                history: compactor::model::History::Full,
                records: vec![RawRecord {
                    source: Source { path: "gen".into(), line: Some(i as u64 + 1), index: None },
                    payload: Payload::Line(build(ops).to_string().into_bytes()),
                }],
            })).collect()
        };
        let render = |items: Vec<Processed>| -> Vec<String> {
            items.into_iter().map(|p| match p {
                Processed::Session(d) => match d.output {
                    Output::Raw(b) => b.into_iter().map(|l| String::from_utf8(l).unwrap()).collect(),
                    Output::Values(v) => v.iter().map(Value::to_string).collect(),
                    Output::Pretty(p) => p.into_iter().map(|r| String::from_utf8(r.into_bytes()).unwrap()).collect(),
                },
                Processed::Rejected { reason, .. } => reason,
                Processed::Item(_) | Processed::Unreadable { .. } => String::new(),
            }).collect()
        };
        // The production path: `run_ordered` over `process_item`, as `compact` runs it.
        let run = |threads: usize| -> Vec<String> {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let stop = std::sync::atomic::AtomicBool::new(false);
            let mut items = records().into_iter();
            let mut out = Vec::new();
            compactor::exec::run_ordered(
                &pool,
                2 * threads,
                &stop,
                || items.next(),
                |item| engine.process_item(item),
                |processed| {
                    out.extend(render(processed));
                    Ok(())
                },
            )
            .unwrap();
            out
        };
        let (a, b) = (run(1), run(4));
        prop_assert_eq!(a.len(), batch.len());
        prop_assert_eq!(a, b);
    }
}
