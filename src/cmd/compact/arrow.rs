//! `compactor compact --from arrow-ipc --to arrow-ipc`: the worker contract of
//! the Spark and Ray jobs (`scripts/spark_compact.py`, `scripts/ray_compact.py`).
//!
//! One Arrow IPC stream of session rows in (standard input or a file), one out
//! (standard output or a file), batch by batch: each input batch is one item of
//! [`compactor::exec::run_ordered`], so at most one input batch per worker is
//! in flight, its rows are compacted in parallel, and its output batch is
//! built on the worker and written in input order. Memory is bounded by a few
//! batches, whatever the length of the stream.
//!
//! The output schema is the one fixed Parquet schema ([`BatchEncoder::new`],
//! `compactor::formats::parquet`; its fields are `compactor::io::parquet::schema`)
//! plus the report column, whatever the input's columns: an engine declares it
//! up front, and every worker of a job writes the same one (input columns
//! other than the session's pass through in `metadata`). Each output row
//! carries its session's `--report` line in the trailing `compactor_report`
//! column, so the rows and their report travel together through any engine
//! and are split only where the job writes them. Nothing else is written to
//! standard output; the summary line goes to standard error.

use super::ledger::{Ledger, print_summary};
use crate::cli::config::{Arrow, Compact};
use crate::cmd::ExitStatus;
use anyhow::anyhow;
use arrow_array::RecordBatch;
use compactor::formats::Format;
use compactor::formats::parquet::BatchEncoder;
use compactor::io::arrow_ipc::{IpcReader, IpcWriter};
use compactor::io::parquet::BatchDecoder;
use compactor::io::record_limit::Raw;
use compactor::io::{RawRecord, ReadError};
use compactor::model::Source;
use compactor::pipeline::{Engine, Job, Output, Processed};
use compactor::policy::Compaction;
use compactor::report::RejectKind;
use compactor::report::wire::SessionRow;
use rayon::prelude::*;
use serde_json::Value;

/// What one input batch became.
struct BatchOut {
    /// The output rows (empty when every row was rejected or in another shard).
    batch: RecordBatch,
    /// Report row and figures of each session, in row order.
    sessions: Vec<(SessionRow, Compaction)>,
    /// Rows that could not be read as sessions: where, why, their bytes.
    rejected: Vec<(Source, RejectKind, String, Raw)>,
}

pub fn run(cfg: &Compact, stream: &Arrow) -> anyhow::Result<ExitStatus> {
    let _lock = match &stream.output {
        Some(path) => crate::cmd::output_lock::lock(
            &compactor::io::output::Target::File(path.clone()),
            &path.display().to_string(),
        )?,
        None => None,
    };
    let input = &stream.input;
    let mut reader =
        IpcReader::open(input).map_err(|e| anyhow!("{}: {}", input.display, e.message))?;
    let ours = BatchDecoder::is_ours(reader.schema());
    let messages = cfg.read.messages_column.as_deref();
    let source_column = cfg.read.source_column.as_deref();
    let decoder =
        BatchDecoder::new(reader.schema(), messages, source_column, ours, cfg.read.restore)
            .map_err(|e| anyhow!("{}: {e}", input.display))?;
    let encoder = BatchEncoder::new();
    let mut writer = IpcWriter::create(stream.output.as_deref(), encoder.schema())?;
    let mut ledger = Ledger::create(cfg)?;
    ledger.summary.inputs = 1;
    let engine = cfg.engine();
    let display = input.display.as_str();

    compactor::exec::run_ordered(
        &cfg.pool,
        cfg.pool.current_num_threads(),
        crate::cmd::interrupt_flag(),
        || reader.next_batch(),
        |item: Result<(u64, RecordBatch), ReadError>| {
            item.map(|(first, batch)| {
                compact_batch(&engine, &decoder, &encoder, display, first, &batch)
            })
        },
        |out| {
            let out = out
                .map_err(|e| anyhow!("{display}: {}", e.message))?
                .map_err(|e| anyhow!("{display}: {e}"))?;
            // Only this shard's (the engine's, and the rows above).
            for (source, kind, reason, raw) in out.rejected {
                ledger.reject(kind, &source.to_string(), &reason, raw)?;
            }
            if out.batch.num_rows() > 0 {
                writer.write(&out.batch)?;
            }
            for (row, compaction) in out.sessions {
                ledger.session(&row, None, &compaction, &Default::default())?;
            }
            Ok(())
        },
    )?;
    if crate::cmd::interrupted() {
        drop(writer);
        let summary = ledger.abandon();
        eprintln!(
            "compactor: interrupted after {} sessions; the output stream is incomplete",
            summary.sessions
        );
        return Ok(ExitStatus::Interrupted);
    }
    writer.finish()?;
    let summary = ledger.finish()?;
    if !cfg.quiet {
        print_summary(&summary);
    }
    Ok(if summary.rejected > 0 { ExitStatus::Rejected } else { ExitStatus::Success })
}

/// Compacts the rows of one input batch (in parallel, in row order) and builds
/// the output batch. `first` is the stream index of the batch's first row.
fn compact_batch(
    engine: &Engine<'_>,
    decoder: &BatchDecoder,
    encoder: &BatchEncoder,
    display: &str,
    first: u64,
    batch: &RecordBatch,
) -> Result<BatchOut, String> {
    let processed: Vec<Vec<Processed>> = (0..batch.num_rows())
        .into_par_iter()
        .map(|i| {
            let source = decoder.source(batch, i, display, first + i as u64);
            match decoder.record(batch, i) {
                Ok(payload) => engine.process(Job {
                    input: 0,
                    container: compactor::io::Container::Parquet,
                    format: Format::OpenAi,
                    history: compactor::model::History::default(),
                    records: vec![RawRecord { source, payload }],
                }),
                Err(reason) => engine
                    .reject_unkeyed(0, source, RejectKind::Malformed, reason, Raw::default())
                    .into_iter()
                    .collect(),
            }
        })
        .collect();
    let mut records: Vec<(Value, String, String)> = Vec::new();
    let mut reports: Vec<String> = Vec::new();
    let mut out = BatchOut {
        batch: RecordBatch::new_empty(encoder.schema().clone()),
        sessions: Vec::new(),
        rejected: Vec::new(),
    };
    for p in processed.into_iter().flatten() {
        match p {
            Processed::Session(done) => {
                let done = *done;
                let values = match done.output {
                    Output::Values(values) => values,
                    // `--redact` hands back masked JSON text (and no
                    // document is laid out pretty here: `Handover::Values`).
                    Output::Raw(lines) => lines
                        .iter()
                        .map(|l| serde_json::from_slice(l))
                        .collect::<Result<Vec<Value>, _>>()
                        .map_err(|e| {
                            format!("{}: cannot re-read an encoded session: {e}", done.source)
                        })?,
                    Output::Pretty(records) => records
                        .iter()
                        .map(|r| serde_json::from_slice(r.as_bytes()))
                        .collect::<Result<Vec<Value>, _>>()
                        .map_err(|e| {
                            format!("{}: cannot re-read an encoded session: {e}", done.source)
                        })?,
                };
                let line = serde_json::to_value(&done.row)
                    .and_then(|v| serde_json::to_string(&v))
                    .map_err(|e| format!("{}: {e}", done.source))?;
                let source = done.source.to_string();
                for v in values {
                    records.push((v, done.id.clone(), source.clone()));
                    reports.push(line.clone());
                }
                out.sessions.push((done.row, done.compaction));
            }
            Processed::Rejected { source, kind, reason, raw, .. } => {
                out.rejected.push((source, kind, reason, raw));
            }
            Processed::Item(_) | Processed::Unreadable { .. } => {}
        }
    }
    if !records.is_empty() {
        out.batch = encoder
            .encode(&records, &reports)
            .map_err(|e| format!("batch from row {first}: {e}"))?;
    }
    Ok(out)
}
