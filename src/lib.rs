//! `compactor`: an offline, deterministic batch compactor for LLM-agent transcripts.
//!
//! The library holds all logic; the `compactor` binary is a thin shell over it.
//! Layout, from the data outwards:
//! - [`model`]: the dialect-free session, message and part types;
//! - [`formats`]: dialect adapters (JSON record <-> session);
//! - [`io`]: containers (files, lines, compression, atomic outputs);
//! - [`tokens`]: exact token counting with a shared cache;
//! - [`window`]: context windows, triggers and budgets;
//! - [`policy`]: the compaction stages and `compact`, a pure function;
//! - [`request`]: converted sessions as the requests their APIs accept;
//! - [`pipeline`]: the parallel, order-preserving driver;
//! - [`replay`]: call-by-call replay with compaction and a prompt-cache model;
//! - [`report`]: report rows and their wire format;
//! - [`stats`]: archive statistics;
//! - [`discover`], [`facts`]: the agents' own log folders, and what a log says
//!   of its session (model, project, day);
//! - [`synth`]: seeded synthetic sessions for tests and benchmarks.
//!
//! The core computes and never prints: printing is the binary's job.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod discover;
pub mod exec;
pub mod facts;
pub mod formats;
/// Fuzz harnesses (`fuzz/`, `tests/fuzz_seeds.rs`); not an API.
#[doc(hidden)]
pub mod fuzzing;
pub mod io;
mod memo;
pub mod model;
pub mod pipeline;
pub mod policy;
pub mod prices;
pub mod redact;
pub mod replay;
pub mod report;
pub mod request;
pub mod shard;
pub mod stats;
pub mod summarizer;
pub mod synth;
pub mod tokens;
pub mod window;

pub use policy::{Compaction, Mode, Outcome, Policy, compact};
