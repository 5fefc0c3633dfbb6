//! The driver: inputs → jobs → decode, compact, encode in parallel → results in
//! input order.
//!
//! [`JobReader`] (`read.rs`) walks the inputs, decides each file's dialect from
//! its first records, and yields [`Item`]s: file boundaries and jobs (one
//! record, or all records of a file for file dialects). The caller runs them
//! through [`crate::exec::run_ordered`]: workers call
//! [`Engine::process_item`] (`engine.rs`: decode, compact, encode one job), and
//! the caller's writer receives the results in input order, so output bytes
//! never depend on the thread count. Memory is bounded by the items in flight
//! (and, for file dialects, the largest file). Commands that only read
//! sessions (`decode.rs`) call [`decode_job`] instead of the engine.
//!
//! Every record is handled on its own: a bad one becomes a
//! [`Processed::Rejected`] (or a [`Rejection`]) beside the good ones.
//!
//! [`shard`]: which sessions one of N workers processes (`--shard K/N`), the
//! engine's filter.

mod decode;
mod engine;
mod policies;
mod read;
pub mod shard;
pub mod sniff;
mod subagent;
#[cfg(test)]
mod tests;

pub use decode::{ReadSession, Rejection, decode_job, decode_job_with};
pub use engine::{Done, Engine, Handover, Output, Processed};
pub use policies::Policies;
pub use read::JobReader;

use crate::formats::{Format, Unit};
use crate::io::output::Layout;
use crate::io::{Container, RawRecord, ReadError};
use crate::model::History;

/// Work for one session (or, for record dialects, one record that may hold several).
#[derive(Debug)]
pub struct Job {
    pub input: usize,
    /// How its file is laid out (which decides its output's layout under
    /// `-o DIR/`: [`layout_for`]).
    pub container: Container,
    pub format: Format,
    /// Which part of an agent log becomes messages ([`History`]).
    pub history: History,
    pub records: Vec<RawRecord>,
}

/// What the reader yields, in input order.
#[derive(Debug)]
pub enum Item {
    /// A file starts; its records are in `format`, laid out as `container`.
    Start {
        input: usize,
        container: Container,
        format: Format,
    },
    Job(Job),
    /// A file (or the rest of it) could not be read; nothing more comes from it.
    Failed {
        input: usize,
        error: ReadError,
    },
    /// A file ends.
    End {
        input: usize,
    },
}

/// The layout of an input's own output (`-o DIR/`): the input's, unless a
/// conversion turns one session per file into one session per line, or asks
/// for Parquet.
pub fn layout_for(container: Container, from: Format, to: Option<Format>, parquet: bool) -> Layout {
    if parquet || (container == Container::Parquet && to.is_none()) {
        return Layout::Parquet;
    }
    let to = to.unwrap_or(from);
    if from.unit() == Unit::File && to.unit() == Unit::Record {
        return Layout::Jsonl;
    }
    match container {
        Container::Jsonl | Container::Parquet => Layout::Jsonl,
        Container::Document => Layout::Document,
        Container::DocumentArray => Layout::Array,
    }
}
