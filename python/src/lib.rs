//! `compactor._native`: the Python package's extension module (PyO3, abi3).
//!
//! Every function takes the CLI's own arguments (`argv`, which the Python layer
//! builds from keyword options: `window=32000` → `--window 32000`) and resolves
//! them with the CLI's own code: the `cli` module of the binary is compiled
//! here from the same files (`#[path]`), so `Cli::try_parse_from` checks the
//! values and `config::Compact::from_args` builds the engine exactly as
//! `compactor compact -` does. Records cross the boundary as JSON text (the
//! Python layer calls `json.dumps` / `json.loads`), so `compact(record)` is the
//! CLI's output line for that record, parsed.
//!
//! The work runs with the GIL released (`Python::detach`), in parallel on the
//! configuration's own thread pool (`-j`, `threads=`).

#[allow(dead_code, unused_imports)]
#[path = "../../src/cli/mod.rs"]
mod cli;

use clap::Parser;
use cli::args::{Cli, Command};
use cli::config::{self, Compact, Route};
use compactor::formats::{DETECT_RECORDS, Format, Unit};
use compactor::io::{Container, Input, Payload, RawRecord};
use compactor::model::Source;
use compactor::pipeline::{Engine, Job, JobReader, Output, Processed, decode_job};
use compactor::policy::session_anchors_line;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

create_exception!(
    _native,
    CompactorError,
    PyValueError,
    "A record or an option compactor refuses: the message names the row, field or option."
);

fn error(e: impl std::fmt::Display) -> PyErr {
    CompactorError::new_err(e.to_string())
}

/// The CLI's arguments for `command` reading standard input, parsed by its clap
/// definitions (a bad option value fails here, naming the option).
fn parse(command: &str, argv: &[String]) -> PyResult<Command> {
    let mut full = vec!["compactor".to_string(), command.to_string(), "-".to_string()];
    full.extend(argv.iter().cloned());
    Cli::try_parse_from(full)
        .map(|c| c.command)
        .map_err(|e| error(e.render().to_string().trim_end()))
}

/// `compact`'s high-level configuration, as the CLI resolves it.
fn compact_config(argv: &[String]) -> PyResult<Compact> {
    match parse("compact", argv)? {
        Command::Compact(args) => Compact::from_args(&args).map_err(|e| error(format!("{e:#}"))),
        _ => Err(error("not a compact command")),
    }
}

/// `--from` of a files configuration (`None`: detect).
fn forced_format(cfg: &Compact) -> Option<Format> {
    match &cfg.route {
        Route::Files(f) => f.from,
        Route::Arrow(_) => Some(Format::OpenAi),
    }
}

/// The dialect of `lines`, as the CLI decides a file's: forced, else detected
/// from the first records, else OpenAI.
fn dialect(cfg: &Compact, lines: &[String]) -> PyResult<Format> {
    if let Some(f) = forced_format(cfg) {
        return Ok(f);
    }
    let mut first = Vec::new();
    for (i, l) in lines.iter().take(DETECT_RECORDS).enumerate() {
        let v: Value =
            serde_json::from_str(l).map_err(|e| error(format!("row {i}: invalid JSON: {e}")))?;
        first.push(v);
    }
    Ok(Format::detect(&first).unwrap_or(Format::OpenAi))
}

/// One output record's JSON text.
fn output_text(output: Output) -> Vec<String> {
    match output {
        Output::Raw(lines) => {
            lines.into_iter().map(|l| String::from_utf8_lossy(&l).into_owned()).collect()
        }
        Output::Values(values) => {
            values.iter().map(|v| serde_json::to_string(v).unwrap_or_default()).collect()
        }
        // Only a per-input run (`-o DIR/`) lays documents out pretty; these
        // functions write lines, but a laid-out record reads back as its line.
        Output::Pretty(records) => records
            .iter()
            .map(|r| {
                serde_json::from_slice::<Value>(r.as_bytes())
                    .map(|v| v.to_string())
                    .unwrap_or_else(|_| String::from_utf8_lossy(r.as_bytes()).into_owned())
            })
            .collect(),
    }
}

/// Compacts each of `lines` (one session record each: a row) as the CLI does
/// a line alone on standard input (source `-:1`), in parallel, in order.
/// Returns each row's output record as JSON text.
fn compact_rows(
    engine: &Engine<'_>,
    format: Format,
    history: compactor::model::History,
    lines: &[String],
) -> Result<Vec<String>, String> {
    if format.unit() == Unit::File {
        return Err(format!(
            "{} logs are one session per file, not one per row: use compact_json on the file's text",
            format.name()
        ));
    }
    let done: Vec<Result<String, String>> = lines
        .par_iter()
        .enumerate()
        .map(|(i, line)| {
            // Each row stands alone, as one line on standard input would
            // (`compact_batch` row i equals `compact` of that row).
            let source = Source { path: "-".into(), line: Some(1), index: None };
            let records =
                vec![RawRecord { source, payload: Payload::Line(line.as_bytes().to_vec()) }];
            let mut out = Vec::new();
            for p in engine.process(Job {
                input: 0,
                container: Container::Jsonl,
                format,
                history,
                records,
            }) {
                match p {
                    Processed::Session(done) => out.extend(output_text(done.output)),
                    Processed::Rejected { source, reason, .. } => {
                        return Err(format!("row {i} ({source}): {reason}"));
                    }
                    Processed::Item(_) | Processed::Unreadable { .. } => {}
                }
            }
            match <[String; 1]>::try_from(out) {
                Ok([one]) => Ok(one),
                Err(out) => Err(format!("row {i}: {} sessions (a row holds one)", out.len())),
            }
        })
        .collect();
    done.into_iter().collect()
}

/// `compact(record)` / `compact_batch(rows)`: each row's output record (JSON text).
#[pyfunction]
fn compact_rows_json(
    py: Python<'_>,
    lines: Vec<String>,
    argv: Vec<String>,
) -> PyResult<Vec<String>> {
    let cfg = compact_config(&argv)?;
    let format = dialect(&cfg, &lines)?;
    let engine = cfg.engine();
    py.detach(|| cfg.pool.install(|| compact_rows(&engine, format, cfg.history, &lines)))
        .map_err(error)
}

/// `compact_json(text)`: what `compactor compact - OPTIONS` writes for `text` on
/// standard input, byte for byte (its records read as the CLI reads a file:
/// JSON Lines or one document, the dialect detected from the first records).
#[pyfunction]
fn compact_text(py: Python<'_>, text: String, argv: Vec<String>) -> PyResult<String> {
    let cfg = compact_config(&argv)?;
    let file = tempfile::NamedTempFile::new().map_err(error)?;
    std::fs::write(file.path(), text.as_bytes()).map_err(error)?;
    let inputs = [Input {
        path: Some(file.path().to_path_buf()),
        display: "-".into(),
        relative: PathBuf::from("stdin.jsonl"),
        walked: false,
    }];
    let from = forced_format(&cfg);
    let engine = cfg.engine();
    let run = || -> Result<String, String> {
        let mut reader = JobReader::new(&inputs, from).with_options(cfg.read.clone());
        let mut items = Vec::new();
        while let Some(item) = reader.next_item() {
            items.push(item);
        }
        let processed: Vec<Vec<Processed>> =
            cfg.pool.install(|| items.into_par_iter().map(|i| engine.process_item(i)).collect());
        let mut out = String::new();
        let mut rejected = Vec::new();
        for p in processed.into_iter().flatten() {
            match p {
                Processed::Session(done) => {
                    for line in output_text(done.output) {
                        out.push_str(&line);
                        out.push('\n');
                    }
                }
                Processed::Rejected { source, reason, .. } => {
                    rejected.push(format!("{source}: {reason}"))
                }
                // The engine gives an unreadable file as its `Rejected`.
                Processed::Item(_) | Processed::Unreadable { .. } => {}
            }
        }
        if rejected.is_empty() { Ok(out) } else { Err(rejected.join("\n")) }
    };
    py.detach(run).map_err(error)
}

/// The session a record (JSON text) decodes to, in its detected (or forced) dialect.
fn session_of(
    line: &str,
    from: Option<Format>,
    history: compactor::model::History,
) -> Result<compactor::model::Session, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    let format =
        from.or_else(|| Format::detect(std::slice::from_ref(&value))).unwrap_or(Format::OpenAi);
    let source = Source { path: "-".into(), line: Some(1), index: None };
    let job = Job {
        input: 0,
        container: Container::Jsonl,
        format,
        history,
        records: vec![RawRecord { source, payload: Payload::Value(value) }],
    };
    let (mut sessions, errors) = decode_job(job);
    if let Some(e) = errors.first() {
        return Err(e.to_string());
    }
    sessions.pop().ok_or_else(|| "no session in this record".to_string())
}

/// `count_tokens`: the tokens of a text, or of a record's whole request
/// (tool schemas and every message, as `tokens_before` counts it).
#[pyfunction]
fn count_tokens_json(
    text: Option<String>,
    record: Option<String>,
    argv: Vec<String>,
) -> PyResult<u64> {
    let cfg = compact_config(&argv)?;
    match (text, record) {
        (Some(t), _) => Ok(cfg.meter.text(&t)),
        (None, Some(r)) => {
            let session = session_of(&r, forced_format(&cfg), cfg.history).map_err(error)?;
            Ok(cfg.meter.request(&session))
        }
        (None, None) => Err(error("count_tokens needs a text or a record")),
    }
}

/// `anchors`: `compactor anchors`' line for one record (JSON text).
#[pyfunction]
fn anchors_json(record: String, argv: Vec<String>) -> PyResult<String> {
    let Command::Anchors(args) = parse("anchors", &argv)? else {
        return Err(error("not an anchors command"));
    };
    let policy = config::policy(compactor::Mode::Lean, &args.window, true, None).map_err(error)?;
    let meter = config::meter(&args.window);
    let from = args.input.from.dialect().map_err(error)?;
    let session = session_of(&record, from, args.input.history.resolve()).map_err(error)?;
    let middle = args.region == cli::args::Region::Middle;
    let caches = compactor::policy::Caches::default();
    let line = session_anchors_line(&session, middle, args.budget, &policy, &meter, &caches);
    serde_json::to_string(&line).map_err(error)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CompactorError", m.py().get_type::<CompactorError>())?;
    m.add_function(wrap_pyfunction!(compact_rows_json, m)?)?;
    m.add_function(wrap_pyfunction!(compact_text, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens_json, m)?)?;
    m.add_function(wrap_pyfunction!(anchors_json, m)?)?;
    Ok(())
}
