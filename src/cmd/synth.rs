//! `compactor synth` (hidden): seeded synthetic sessions for benchmarks.

use crate::cli::args::SynthArgs;
use crate::cmd::ExitStatus;
use compactor::io::output::{SessionWriter, Target, TextLayout};
use compactor::synth::{SynthConfig, session};

pub fn run(args: &SynthArgs) -> anyhow::Result<ExitStatus> {
    let mut w = match Target::parse(&args.output) {
        Target::Stdout => SessionWriter::stdout(),
        Target::File(p) | Target::Dir(p) => SessionWriter::file(&p, TextLayout::Jsonl)?,
    };
    for k in 0..args.sessions {
        let cfg = SynthConfig {
            seed: args.seed + k,
            target_tokens: args.tokens,
            target_messages: args.messages,
            ..SynthConfig::default()
        };
        w.write(&session(cfg))?;
    }
    w.finish()?;
    Ok(ExitStatus::Success)
}
