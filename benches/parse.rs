//! JSON parsing: `serde_json` against `simd-json` on what `compactor` reads
//! (issue #5, item 3: "use simd-json where it wins, measure it on the corpus").
//!
//! Two inputs, each parsed line by line:
//! - `corpus`: every JSON Lines record of `../shared/corpus` (Claude Code and
//!   Codex events, mostly small records); skipped with a printed reason when
//!   the corpus is absent;
//! - `sessions`: seeded synthetic OpenAI sessions (one ~1 MB line each, the
//!   shape of the benchmark corpus of `scripts/bench.sh`).
//!
//! For each: `serde_json` into the `serde_json::Value` the adapters read;
//! `simd-json` into that same `Value` (its serde front end: what switching
//! would mean without rewriting every adapter); and `simd-json` into its own
//! owned and borrowed trees (the ceiling of a rewrite). simd-json parses in
//! place, so its runs get a fresh copy of each line outside the timing (the
//! pipeline owns its line buffers and could do the same).
//!
//! A third group, `measure/sessions`, times what `compact` does with a session
//! it leaves alone: decoding it and counting its request (`--counter hermes`)
//! against the skim that counts it without decoding (`formats::openai::skim_line`).
//!
//! Run: `cargo bench --bench parse`. Results and the decision are in
//! `benches/RESULTS.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use compactor::synth::{SynthConfig, session};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;
use std::hint::black_box;
use std::path::Path;

/// Every line of every `.jsonl` file under `dir`, in path order.
fn jsonl_lines(dir: &Path, out: &mut Vec<Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            jsonl_lines(&p, out);
        } else if p.extension().is_some_and(|e| e == "jsonl")
            && let Ok(text) = std::fs::read(&p)
        {
            out.extend(
                text.split(|&b| b == b'\n')
                    .filter(|l| serde_json::from_slice::<Value>(l).is_ok())
                    .map(<[u8]>::to_vec),
            );
        }
    }
}

fn inputs() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let mut out = Vec::new();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut lines = Vec::new();
    jsonl_lines(&corpus, &mut lines);
    if lines.is_empty() {
        eprintln!("parse bench: no JSON Lines under {}: corpus input skipped", corpus.display());
    } else {
        out.push(("corpus", lines));
    }
    let sessions = (0..4u64)
        .map(|seed| {
            let config = SynthConfig { seed, target_tokens: 200_000, ..SynthConfig::default() };
            session(config).to_string().into_bytes()
        })
        .collect();
    out.push(("sessions", sessions));
    out
}

/// One simd-json run over one line, parsed in place.
type ParseInPlace = fn(&mut [u8]);

fn parse(c: &mut Criterion) {
    for (name, lines) in inputs() {
        let bytes: usize = lines.iter().map(Vec::len).sum();
        // Speed only counts for equal results: report the lines where simd-json's
        // `Value` differs from serde_json's (or where only one of them parses).
        let differ = lines
            .iter()
            .filter(|l| {
                let mut copy = l.to_vec();
                let simd = simd_json::serde::from_slice::<Value>(&mut copy).ok();
                simd != serde_json::from_slice::<Value>(l).ok()
            })
            .count();
        eprintln!("parse/{name}: {} lines, {bytes} bytes, {differ} parse differently", lines.len());
        let mut g = c.benchmark_group(format!("parse/{name}"));
        g.throughput(Throughput::Bytes(bytes as u64));
        g.sample_size(10);
        g.bench_function("serde_json::Value", |b| {
            b.iter(|| {
                for l in &lines {
                    black_box(serde_json::from_slice::<Value>(l).unwrap());
                }
            })
        });
        // simd-json parses in place: each run gets fresh copies, made outside the timing.
        let simd: [(&str, ParseInPlace); 3] = [
            ("simd_json -> serde_json::Value", |l| {
                black_box(simd_json::serde::from_slice::<Value>(l).unwrap());
            }),
            ("simd_json OwnedValue", |l| {
                black_box(simd_json::to_owned_value(l).unwrap());
            }),
            ("simd_json BorrowedValue", |l| {
                black_box(simd_json::to_borrowed_value(l).unwrap());
            }),
        ];
        for (label, parse_line) in simd {
            g.bench_function(label, |b| {
                b.iter_batched(
                    || lines.clone(),
                    |mut copy| copy.iter_mut().for_each(|l| parse_line(l)),
                    BatchSize::LargeInput,
                )
            });
        }
        g.finish();
    }
}

/// Decoding and counting an untouched session against skimming it.
fn measure(c: &mut Criterion) {
    use compactor::formats::openai;
    use compactor::model::Source;
    use compactor::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS, Meter};
    let Some((_, lines)) = inputs().into_iter().find(|(name, _)| *name == "sessions") else {
        return;
    };
    let meter = Meter::new(CounterKind::Hermes, DEFAULT_IMAGE_TOKENS);
    let decode = |l: &[u8]| {
        let value: Value = serde_json::from_slice(l).unwrap();
        meter.request(&openai::decode_session(value, Source::default()).unwrap())
    };
    for l in &lines {
        let skimmed = openai::skim_line(l, &meter, u64::MAX).expect("a synthetic session skims");
        assert_eq!(skimmed.tokens, decode(l), "the skim counts what decoding counts");
    }
    let bytes: usize = lines.iter().map(Vec::len).sum();
    let mut g = c.benchmark_group("measure/sessions");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10);
    g.bench_function("decode + count", |b| b.iter(|| lines.iter().map(|l| decode(l)).sum::<u64>()));
    g.bench_function("skim", |b| {
        b.iter(|| {
            lines
                .iter()
                .map(|l| openai::skim_line(l, &meter, u64::MAX).unwrap().tokens)
                .sum::<u64>()
        })
    });
    g.finish();
}

criterion_group!(benches, parse, measure);
criterion_main!(benches);
