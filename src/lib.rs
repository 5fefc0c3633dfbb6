//! `compactor`: an offline, deterministic batch compactor for LLM-agent transcripts.
//!
//! The library holds all logic; the `compactor` binary is a thin shell over it.
//! Layout, from the data outwards:
//! - [`model`]: the dialect-free session, message and part types;
//! - [`formats`]: dialect adapters (JSON record <-> session);
//! - [`io`]: containers (files, lines, compression, atomic outputs);
//! - [`json_text`]: a value's JSON text, by the path that cannot fail;
//! - [`figures`]: numbers shown with thousands separators, and totals that add up;
//! - [`tokens`]: exact token counting with a shared cache;
//! - [`catalog`]: what a model's name says: its context window (with the
//!   triggers and budgets derived from it) and its token prices;
//! - [`policy`]: the compaction stages and `compact`, a pure function;
//! - [`request`]: converted sessions as the requests their APIs accept;
//! - [`pipeline`]: the parallel, order-preserving driver;
//! - [`replay`]: call-by-call replay with compaction and a prompt-cache model;
//! - [`report`]: report rows and their wire format, and archive statistics;
//! - [`discover`]: the agents' own log folders, and what a log says of its
//!   session (model, project, day: [`discover::facts`]);
//! - `synth` (with the `bench-tools` feature): seeded synthetic sessions for
//!   tests and benchmarks;
//! - [`training`]: clean records made training rows (loss flags, one system
//!   message, declared tools) for `--to parquet`.
//!
//! The core computes and never prints: printing is the binary's job.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod catalog;
pub mod discover;
pub mod exec;
pub mod figures;
pub mod formats;
/// Fuzz harnesses (`fuzz/`, `tests/fuzz_seeds.rs`); not an API, and only
/// compiled with the `test-support` feature (the crate's own tests and the
/// fuzz targets turn it on).
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub mod fuzzing;
mod hash;
pub mod io;
pub mod json_text;
mod memo;
pub mod model;
pub mod pipeline;
pub mod policy;
pub mod redact;
pub mod replay;
pub mod report;
pub mod request;
pub mod summarizer;
#[cfg(any(test, feature = "bench-tools"))]
pub mod synth;
pub mod tokens;
pub mod training;

pub use policy::{Compaction, Mode, Outcome, Policy, compact};
