//! Arrow IPC streams of session rows: what a Spark or Ray worker pipes through
//! `compactor compact --from arrow-ipc --to arrow-ipc`.
//!
//! The rows use the Parquet table schema ([`super::parquet`]): reading decodes
//! them with [`BatchDecoder`], writing encodes them with [`BatchEncoder`], so
//! there is one schema and one implementation of it. This module only moves
//! batches: [`IpcReader`] yields the record batches of a stream one at a time
//! (the whole stream is never loaded), [`IpcWriter`] writes them (to standard
//! output, or to a file that appears under its name only when complete).
//!
//! A stream that is not Arrow IPC, is cut short, or holds a corrupt batch is an
//! error naming the input and the batch (and the row it starts at), never a
//! panic: the arrow crate is called under `catch_unwind` as a last guard.
//!
//! [`BatchDecoder`]: super::parquet::BatchDecoder
//! [`BatchEncoder`]: crate::formats::parquet::BatchEncoder

use super::atomic::AtomicFile;
use super::{Input, ReadError};
use crate::model::Source;
use anyhow::Context;
use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::SchemaRef;
use std::io::{BufReader, BufWriter, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// Runs `f`, turning a panic inside the arrow crate into an error.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|_| "the Arrow IPC decoder failed on this stream (corrupt data?)".to_string())
}

/// The record batches of one Arrow IPC stream, in order.
pub struct IpcReader {
    display: String,
    reader: Option<StreamReader<BufReader<Box<dyn Read + Send>>>>,
    schema: SchemaRef,
    /// Batches read so far.
    batches: u64,
    /// Rows read so far (the row index of the next batch's first row).
    rows: u64,
}

impl IpcReader {
    /// Opens `input` (a file, or standard input) and reads the stream's schema.
    pub fn open(input: &Input) -> Result<IpcReader, ReadError> {
        let fail = |message: String| ReadError {
            source: Source { path: input.display.clone(), line: None, index: None },
            message,
            raw: Vec::new(),
        };
        let raw: Box<dyn Read + Send> = match &input.path {
            Some(p) => {
                Box::new(std::fs::File::open(p).map_err(|e| fail(format!("cannot open: {e}")))?)
            }
            None => Box::new(std::io::stdin()),
        };
        let buffered = BufReader::with_capacity(1 << 16, raw);
        let reader = guarded(|| StreamReader::try_new(buffered, None))
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|e| fail(format!("not an Arrow IPC stream: {e}")))?;
        let schema = reader.schema();
        Ok(IpcReader {
            display: input.display.clone(),
            reader: Some(reader),
            schema,
            batches: 0,
            rows: 0,
        })
    }

    /// The stream's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The next batch with the index of its first row in the stream; `None`
    /// at the end. A batch that cannot be read ends the stream with an error.
    pub fn next_batch(&mut self) -> Option<Result<(u64, RecordBatch), ReadError>> {
        let reader = self.reader.as_mut()?;
        let why = match guarded(|| reader.next()) {
            Ok(None) => {
                self.reader = None;
                return None;
            }
            Ok(Some(Ok(batch))) => {
                let first = self.rows;
                self.batches += 1;
                self.rows += batch.num_rows() as u64;
                return Some(Ok((first, batch)));
            }
            Ok(Some(Err(e))) => e.to_string(),
            Err(e) => e,
        };
        self.reader = None;
        Some(Err(ReadError {
            source: Source { path: self.display.clone(), line: None, index: Some(self.rows) },
            message: format!(
                "cannot read Arrow IPC batch {} (from row {}): {why}",
                self.batches, self.rows
            ),
            raw: Vec::new(),
        }))
    }
}

/// Where an [`IpcWriter`] writes.
enum Sink {
    Stdout(BufWriter<std::io::Stdout>),
    File(BufWriter<AtomicFile>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Stdout(w) => w.write(buf),
            Sink::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Stdout(w) => w.flush(),
            Sink::File(f) => f.flush(),
        }
    }
}

/// Writes an Arrow IPC stream: the schema at once, then batch by batch.
pub struct IpcWriter {
    name: String,
    writer: StreamWriter<Sink>,
}

impl IpcWriter {
    /// Starts a stream of `schema` on standard output (`path` `None`) or in a
    /// file (under a temporary name until [`IpcWriter::finish`]).
    pub fn create(path: Option<&Path>, schema: &SchemaRef) -> anyhow::Result<IpcWriter> {
        let (name, sink) = match path {
            None => {
                ("standard output".to_string(), Sink::Stdout(BufWriter::new(std::io::stdout())))
            }
            Some(p) => (
                p.display().to_string(),
                Sink::File(BufWriter::with_capacity(1 << 16, AtomicFile::create(p)?)),
            ),
        };
        let writer = StreamWriter::try_new(sink, schema)
            .with_context(|| format!("{name}: cannot start the Arrow IPC stream"))?;
        Ok(IpcWriter { name, writer })
    }

    /// Writes one batch and flushes it, so a reader at the other end of a
    /// pipe gets it now (an engine's worker feeds and reads the pipe in turn).
    pub fn write(&mut self, batch: &RecordBatch) -> anyhow::Result<()> {
        self.writer
            .write(batch)
            .and_then(|()| self.writer.flush())
            .with_context(|| format!("{}: cannot write an Arrow IPC batch", self.name))
    }

    /// Writes the end-of-stream marker; a file moves into place.
    pub fn finish(mut self) -> anyhow::Result<()> {
        self.writer
            .finish()
            .with_context(|| format!("{}: cannot finish the Arrow IPC stream", self.name))?;
        let sink = self
            .writer
            .into_inner()
            .with_context(|| format!("{}: cannot finish the Arrow IPC stream", self.name))?;
        match sink {
            Sink::Stdout(mut w) => Ok(w.flush()?),
            Sink::File(w) => w
                .into_inner()
                .map_err(|e| anyhow::anyhow!("{}: write failed: {}", self.name, e.error()))?
                .commit(),
        }
    }
}
