//! Sessions as rows of the one fixed Parquet schema (the dialect side of
//! `--to parquet` and `--to arrow-ipc`; the file mechanics and the schema's
//! fields are in [`crate::io::parquet`], whose module doc tells the encoding).
//!
//! - `rows.rs`: a session record (an OpenAI `{"messages": [...], ...}` or a
//!   bare array of messages) split into a row: typed message, part and call
//!   fields, and JSON text for what they cannot hold exactly.
//! - `batch.rs`: rows as Arrow record batches: [`SessionRows`] (the
//!   [`TableRows`](crate::io::parquet::TableRows) of a Parquet output) and
//!   [`BatchEncoder`] (`compact --to arrow-ipc`, with the report column).
//! - `restore.rs`: the way back, a row's messages as they were written
//!   ([`RESTORE`], handed to the readers of `io` in their `ReadOptions`).

mod batch;
mod restore;
mod rows;
#[cfg(test)]
mod tests;

pub use batch::{BatchEncoder, SessionRows};
pub use restore::RESTORE;

use crate::io::parquet::ParquetWriter;
use std::path::Path;

/// A Parquet file of session records at `path` (see [`ParquetWriter::create`]).
pub fn writer(path: &Path) -> anyhow::Result<ParquetWriter> {
    ParquetWriter::create(path, Box::new(SessionRows::new()))
}
