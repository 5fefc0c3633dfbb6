//! Issue #2: on a synthetic ~500K-token session at a 1M window, the reference's
//! lean-tail evaluation reported legacy keeping ~162K tokens and lean ~49K.

use compactor::formats::openai::decode_session;
use compactor::model::Source;
use compactor::policy::anchors::AnchorBudget;
use compactor::policy::{Mode, Policy, compact};
use compactor::synth::{SynthConfig, session};
use compactor::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS, Meter};

#[test]
fn legacy_and_lean_after_figures_at_a_1m_window() {
    let meter = Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS);
    let v = session(SynthConfig { seed: 42, target_tokens: 450_000, ..SynthConfig::default() });
    let s = decode_session(v, Source::default()).unwrap();
    let before = meter.request(&s);
    assert!((480_000..560_000).contains(&before), "synthetic session is {before} tokens");
    let run = |mode, budget| {
        let mut p = Policy::new(mode, 1_000_000);
        p.force = true;
        p.anchor_budget = budget;
        compact(&s, &p, &meter).compaction
    };
    let legacy = run(Mode::Legacy, AnchorBudget::Auto);
    let lean_ref = run(Mode::Lean, AnchorBudget::Chars(7_000));
    let lean = run(Mode::Lean, AnchorBudget::Auto);
    println!(
        "before {before}: legacy {} (tail {}), lean@7000 {} (tail {}, summary {}), lean@auto {} (summary {})",
        legacy.tokens_after,
        legacy.sections.tail_tokens,
        lean_ref.tokens_after,
        lean_ref.sections.tail_tokens,
        lean_ref.sections.summary_tokens,
        lean.tokens_after,
        lean.sections.summary_tokens
    );
    assert!((130_000..=190_000).contains(&legacy.tokens_after), "legacy {}", legacy.tokens_after);
    assert!((35_000..=65_000).contains(&lean_ref.tokens_after), "lean {}", lean_ref.tokens_after);
    // The auto anchor budget spends more on anchors, never on the tail.
    assert_eq!(lean.sections.tail_tokens, lean_ref.sections.tail_tokens);
    assert!(lean.sections.summary_tokens >= lean_ref.sections.summary_tokens);
    let kept =
        |c: &compactor::Compaction| c.anchors.retention.values().map(|(_, r)| r).sum::<usize>();
    assert!(kept(&lean) > kept(&lean_ref));
    assert!(lean.tokens_after < legacy.tokens_after / 2);
}
