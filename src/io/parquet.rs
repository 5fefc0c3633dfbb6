//! Parquet container: a table whose rows are sessions (not implemented yet).
//!
//! Reading yields one record per row: an OpenAI-shaped session object
//! (`{"messages": [...], <other columns>...}`), the `messages` column being a
//! `list<struct>` (Hugging Face chat convention) or a JSON string column
//! named by `--messages-column`. Writing takes OpenAI session records.

use super::{RawRecord, ReadError};
use crate::model::Source;
use serde_json::Value;
use std::path::Path;

/// Rows of a Parquet file, one record per row, streamed by row group.
pub struct ParquetReader {
    display: String,
}

impl ParquetReader {
    /// Opens `path`. `messages_column` names a string column holding each
    /// row's messages as JSON (default: a `messages` list column).
    pub fn open(
        path: &Path,
        display: &str,
        messages_column: Option<&str>,
    ) -> Result<ParquetReader, ReadError> {
        let _ = (path, messages_column);
        Err(ReadError {
            source: Source { path: display.to_string(), line: None, index: None },
            message: "Parquet input is not supported yet".into(),
            raw: Vec::new(),
        })
    }

    /// The next row as a record, `None` at the end.
    pub fn next_record(&mut self) -> Option<Result<RawRecord, ReadError>> {
        let _ = &self.display;
        None
    }
}

/// Writes OpenAI session records as Parquet rows.
pub struct ParquetWriter {}

impl ParquetWriter {
    pub fn create(path: &Path) -> anyhow::Result<ParquetWriter> {
        anyhow::bail!("{}: Parquet output is not supported yet", path.display())
    }

    pub fn write(&mut self, _session: &Value) -> anyhow::Result<()> {
        Ok(())
    }

    pub fn finish(self) -> anyhow::Result<()> {
        Ok(())
    }
}
