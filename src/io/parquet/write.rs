//! Writing a table of rows as a Parquet file: the file mechanics only
//! (properties, row groups, the atomic rename). What a row holds is the
//! [`TableRows`] the caller hands in (the session mapping lives on the
//! dialect side, `formats::parquet`).

use super::{ROW_GROUP_BYTES, ROW_GROUP_ROWS};
use crate::io::atomic::AtomicFile;
use anyhow::{Context, anyhow};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows of one table, buffered until they are written as a row group: how
/// records become the columns of [`TableRows::schema`].
pub trait TableRows: Send {
    /// The table's schema; its metadata is also written as the file's
    /// key-value metadata.
    fn schema(&self) -> SchemaRef;
    /// Adds the row of one record, with its id and its source (`path:line`);
    /// returns its approximate size in bytes of text. An error says why the
    /// record has no row (the writer names the file and the row).
    fn push(&mut self, record: &Value, id: &str, source: &str) -> Result<usize, String>;
    /// The number of rows buffered.
    fn len(&self) -> usize;
    /// Returns true if and only if no row is buffered.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The buffered rows as one record batch of [`TableRows::schema`],
    /// leaving the buffer empty.
    fn take_batch(&mut self) -> Result<RecordBatch, String>;
}

/// Writes records as Parquet rows through a [`TableRows`].
pub struct ParquetWriter {
    path: PathBuf,
    writer: ArrowWriter<AtomicFile>,
    rows: Box<dyn TableRows>,
    bytes: usize,
    written: u64,
}

impl ParquetWriter {
    /// Starts `path` (under a temporary name until [`ParquetWriter::finish`])
    /// for the rows of `rows`.
    pub fn create(path: &Path, rows: Box<dyn TableRows>) -> anyhow::Result<ParquetWriter> {
        let file = AtomicFile::create(path)?;
        let schema = rows.schema();
        let mut metadata: Vec<(&String, &String)> = schema.metadata().iter().collect();
        metadata.sort();
        let metadata =
            metadata.into_iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())).collect();
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
            .set_created_by(format!("compactor {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(metadata))
            .set_max_row_group_row_count(None)
            .build();
        let writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(props))
            .with_context(|| format!("{}: cannot start the Parquet file", path.display()))?;
        Ok(ParquetWriter { path: path.to_path_buf(), writer, rows, bytes: 0, written: 0 })
    }

    /// Adds one record, with its id and its source (`path:line`).
    pub fn write(&mut self, record: &Value, id: &str, source: &str) -> anyhow::Result<()> {
        let row = self.written + self.rows.len() as u64;
        let bytes = self
            .rows
            .push(record, id, source)
            .map_err(|e| anyhow!("{}: row {row}: {e}", self.path.display()))?;
        self.bytes += bytes;
        if self.rows.len() >= ROW_GROUP_ROWS || self.bytes >= ROW_GROUP_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> anyhow::Result<()> {
        self.bytes = 0;
        let rows = self.rows.len();
        if rows == 0 {
            return Ok(());
        }
        let batch = self.rows.take_batch().map_err(|e| anyhow!("{}: {e}", self.path.display()))?;
        self.writer
            .write(&batch)
            .and_then(|()| self.writer.flush())
            .with_context(|| format!("{}: cannot write a row group", self.path.display()))?;
        self.written += rows as u64;
        Ok(())
    }

    /// Writes the last row group and the footer, and moves the file into place.
    pub fn finish(self) -> anyhow::Result<()> {
        self.finish_unsynced()?.commit()
    }

    /// Writes the last row group and the footer, and returns the file still
    /// under its temporary name.
    pub fn finish_unsynced(mut self) -> anyhow::Result<AtomicFile> {
        self.flush()?;
        self.writer
            .into_inner()
            .with_context(|| format!("{}: cannot finish the Parquet file", self.path.display()))
    }
}
