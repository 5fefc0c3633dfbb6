//! The real corpus (`../shared/corpus`, not in the repository): every
//! OpenAI-shaped session there is compacted, and every promise is checked.
//! Skipped, with the reason printed, when the corpus is absent.

use compactor::formats::Format;
use compactor::io::{Input, RecordReader, parse_payload};
use compactor::policy::{Mode, Policy, compact, verify::verify};
use compactor::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS, Meter};
use std::path::PathBuf;

fn corpus() -> Option<PathBuf> {
    let p = crate::util::root().join("../shared/corpus/agent-trajectory-json");
    p.is_dir().then_some(p)
}

#[test]
fn corpus_sessions_compact_and_keep_their_promises() {
    let Some(dir) = corpus() else {
        println!("skipped: ../shared/corpus/agent-trajectory-json is not present");
        return;
    };
    let inputs = compactor::io::expand_inputs(&[dir.display().to_string()]).unwrap();
    assert!(inputs.len() >= 4);
    let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
    let mut compacted = 0;
    for input in &inputs {
        let input = Input { ..input.clone() };
        let mut reader = RecordReader::open(&input).unwrap();
        while let Some(rec) = reader.next_record() {
            let rec = rec.unwrap();
            let value = parse_payload(rec.payload).unwrap();
            let format = Format::detect(&value).expect("OpenAI-shaped");
            let session = format.adapter().decode(value, rec.source).unwrap();
            for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
                let out = compact(&session, &Policy::new(mode, 200_000), &meter);
                let problems = verify(&session, &out, &meter);
                assert!(problems.is_empty(), "{} {mode}: {problems:?}", input.display);
                let again = compact(&session, &Policy::new(mode, 200_000), &meter);
                assert_eq!(out.session, again.session, "deterministic");
                let c = &out.compaction;
                if c.tokens_before >= 150_000 {
                    assert!(c.compacted, "{} {mode}", input.display);
                    assert!(
                        c.tokens_after < c.tokens_before / 2,
                        "{} {mode}: {} -> {}",
                        input.display,
                        c.tokens_before,
                        c.tokens_after
                    );
                    compacted += 1;
                }
                let (found, kept) =
                    c.anchors.retention.values().fold((0, 0), |a, (f, r)| (a.0 + f, a.1 + r));
                println!(
                    "{} {mode}: {} -> {} tokens, anchors {kept}/{found}",
                    input.display, c.tokens_before, c.tokens_after
                );
            }
        }
    }
    assert!(compacted >= 9, "{compacted}");
}
