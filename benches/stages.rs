//! Criterion micro-benchmarks: each stage, token counting, and `compact` as a
//! whole, on a seeded synthetic session (~200K tokens) shaped like the corpus.
//!
//! Run: `cargo bench --bench stages`. Machines here are noisy: compare medians
//! from one run, and ratios rather than absolute times.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use compactor::formats::openai::decode_session;
use compactor::model::{Session, Source};
use compactor::policy::anchors::AnchorSet;
use compactor::policy::tool_families::ToolFamilies;
use compactor::policy::{
    Mode, Policy, compact, dedup, micro_compact, session_anchors, strip_media, truncate,
};
use compactor::synth::{SynthConfig, session};
use compactor::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS, Meter};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn fixture() -> (Session, usize) {
    let v = session(SynthConfig { seed: 11, target_tokens: 200_000, ..SynthConfig::default() });
    let bytes = v.to_string().len();
    (decode_session(v, Source::default()).unwrap(), bytes)
}

fn stages(c: &mut Criterion) {
    let (s, bytes) = fixture();
    let n = s.messages.len();
    let families = ToolFamilies::default();
    let caches = compactor::policy::Caches::default();
    let mut g = c.benchmark_group("stage");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("dedup", |b| {
        b.iter_batched(
            || s.messages.clone(),
            |mut m| dedup::dedup_tool_results(&mut m, 0..n),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("micro_compact", |b| {
        b.iter_batched(
            || s.messages.clone(),
            |mut m| micro_compact::micro_compact(&mut m, 0..n, &families, &caches),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("truncate", |b| {
        b.iter_batched(
            || s.messages.clone(),
            |mut m| truncate::truncate_messages(&mut m, 0..n),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("strip_media", |b| {
        b.iter_batched(
            || s.messages.clone(),
            |mut m| strip_media::strip_media(&mut m, 0..n),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("anchors", |b| {
        b.iter(|| black_box::<AnchorSet>(session_anchors(&s.messages, &families, &caches)))
    });
    g.finish();
}

fn counting(c: &mut Criterion) {
    let (s, bytes) = fixture();
    let mut g = c.benchmark_group("tokens");
    g.throughput(Throughput::Bytes(bytes as u64));
    for kind in [CounterKind::O200k, CounterKind::Hermes] {
        g.bench_function(kind.name(), |b| {
            // A fresh meter per iteration: measures counting, not the cache.
            b.iter_batched(
                || Meter::new(kind, DEFAULT_IMAGE_TOKENS),
                |m| m.request(&s),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn whole(c: &mut Criterion) {
    let (s, bytes) = fixture();
    let mut g = c.benchmark_group("compact");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(20);
    for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
        let mut p = Policy::new(mode, 128_000);
        p.force = true;
        g.bench_function(mode.name(), |b| {
            b.iter_batched(
                || Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS),
                |m| compact(&s, &p, &m),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, stages, counting, whole);
criterion_main!(benches);
