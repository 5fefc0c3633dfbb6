//! Containers: paths, bytes and records. No schema knowledge lives here.
//!
//! - [`expand_inputs`] turns the command line's inputs into a sorted list of
//!   files (directories are walked recursively; `-` is standard input).
//! - [`RecordReader`] reads one input as a stream of JSON records: one per
//!   line (JSONL), or the elements of one JSON document (a `.json` file holding
//!   a session or an array of them). Compressed input (`.gz`) is recognised by
//!   its magic bytes, not its name.
//!   A record longer than `--max-record-bytes` is streamed past, not held
//!   ([`record_limit`]).
//! - [`output`] writes results atomically (temp file, fsync, rename);
//!   [`pretty`] lays out a JSON text pretty without building its tree.
//! - [`manifest`] records which inputs of a directory output are finished (`--resume`).
//! - [`lock`] keeps a second run from writing an output a run is writing.

pub mod arrow_ipc;
pub mod atomic;
pub mod atomic_dir;
pub mod lock;
pub mod manifest;
pub mod output;
pub mod parquet;
pub mod pretty;
pub mod record_limit;
pub mod sync_batch;

use crate::model::Source;
use record_limit::{Line, Oversized, RecordLimit};
use serde_json::Value;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// File name extensions (after any compression suffix) read from directories.
const DATA_EXTENSIONS: &[&str] = &["jsonl", "json", "ndjson"];
/// Compression suffixes recognised in directory walks.
const COMPRESSED_SUFFIXES: &[&str] = &["gz", "zst"];
/// Extensions read from directories besides the JSON ones.
const OTHER_EXTENSIONS: &[&str] = &["traj", "parquet"];

/// Options that change how inputs are read.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// How our own Parquet tables' messages are read back
    /// (`formats::parquet::RESTORE`).
    pub restore: parquet::Restore,
    /// A Parquet string column holding each row's messages as JSON.
    pub messages_column: Option<String>,
    /// A Parquet string column naming each row's source (`--source-column`).
    pub source_column: Option<String>,
    /// `--max-record-bytes`, and where records over it are kept.
    pub limit: RecordLimit,
}

impl ReadOptions {
    /// Every input read as it is: no messages or source column, the
    /// default record size limit; our tables' messages read back by `restore`.
    pub fn new(restore: parquet::Restore) -> ReadOptions {
        ReadOptions {
            restore,
            messages_column: None,
            source_column: None,
            limit: RecordLimit::default(),
        }
    }
}

/// One input to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// `None` for standard input.
    pub path: Option<PathBuf>,
    /// How it is named in messages and `source` fields.
    pub display: String,
    /// Its name relative to the argument it came from, for `-o DIR/` outputs.
    pub relative: PathBuf,
    /// Found by walking a directory (or the agents' log folders), not named
    /// on the command line: when it is no transcript it is skipped with a
    /// note rather than failed (`pipeline::JobReader`).
    pub walked: bool,
}

impl Input {
    pub fn stdin() -> Input {
        Input {
            path: None,
            display: "-".into(),
            relative: PathBuf::from("stdin.jsonl"),
            walked: false,
        }
    }

    /// Its size on disk (a compressed file's, below what it holds); `None`
    /// for standard input or a file that cannot be looked at.
    pub fn size_on_disk(&self) -> Option<u64> {
        self.path.as_deref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len())
    }
}

/// Returns true if and only if a directory entry named `name` holds transcripts.
fn is_data_file(name: &str) -> bool {
    let mut stem = name;
    for suffix in COMPRESSED_SUFFIXES {
        if let Some(s) = stem.strip_suffix(&format!(".{suffix}")) {
            stem = s;
        }
    }
    stem.rsplit_once('.')
        .is_some_and(|(_, ext)| DATA_EXTENSIONS.contains(&ext) || OTHER_EXTENSIONS.contains(&ext))
}

/// The outputs listed by the compactor manifest in `dir`, if it holds one:
/// such a directory is one of our `-o DIR/` outputs, and only these files of
/// it are sessions (a `--report` or `--rejects` written there is not).
fn listed_outputs(dir: &Path) -> io::Result<Option<std::collections::BTreeSet<PathBuf>>> {
    if !dir.join(manifest::MANIFEST_NAME).is_file() {
        return Ok(None);
    }
    let entries = manifest::load(dir).map_err(|e| io::Error::other(format!("{e:#}")))?;
    Ok(Some(entries.into_iter().map(|e| PathBuf::from(e.output)).collect()))
}

/// Walks `dir` (under the argument `root`), adding its data files to `out`
/// and the files an output manifest does not list to `skipped`. `ours` is the
/// nearest enclosing output directory and the outputs its manifest lists.
fn walk(
    dir: &Path,
    root: &Path,
    ours: Option<&(PathBuf, std::collections::BTreeSet<PathBuf>)>,
    out: &mut Vec<Input>,
    skipped: &mut Vec<PathBuf>,
) -> io::Result<()> {
    let here = listed_outputs(dir)?.map(|listed| (dir.to_path_buf(), listed));
    let ours = here.as_ref().or(ours);
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // Symlinked directories are not followed: no cycles, no escaping the tree.
        let ty = entry.file_type()?;
        if ty.is_dir() {
            walk(&path, root, ours, out, skipped)?;
        } else if is_data_file(&name) && !is_agent_sidecar(dir, &name) {
            if let Some((base, listed)) = ours {
                let inside = path.strip_prefix(base).unwrap_or(&path);
                if !listed.contains(inside) {
                    skipped.push(path);
                    continue;
                }
            }
            let relative = path
                .strip_prefix(root)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| PathBuf::from(&*name));
            out.push(Input {
                display: path.display().to_string(),
                path: Some(path),
                relative,
                walked: true,
            });
        }
    }
    Ok(())
}

/// Returns true if and only if `name` in `dir` is Claude Code's sidecar of a
/// subagent's log (`<session>/subagents/agent-<id>.meta.json`: the agent's
/// type and description, no transcript), which a walk leaves out quietly.
fn is_agent_sidecar(dir: &Path, name: &str) -> bool {
    dir.file_name().is_some_and(|d| d == "subagents")
        && name.starts_with("agent-")
        && name.ends_with(".meta.json")
}

/// Expands command-line inputs: files as given, directories walked
/// recursively in sorted order, `-` as standard input.
pub fn expand_inputs(args: &[String]) -> anyhow::Result<Vec<Input>> {
    Ok(expand_inputs_noting(args)?.0)
}

/// [`expand_inputs`], and the files it left out of a directory because that
/// directory is one of our `-o DIR/` outputs whose manifest does not list
/// them (our own `report.jsonl`, rejects, anything else put there).
pub fn expand_inputs_noting(args: &[String]) -> anyhow::Result<(Vec<Input>, Vec<PathBuf>)> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for arg in args {
        if arg == "-" {
            out.push(Input::stdin());
            continue;
        }
        let path = PathBuf::from(arg);
        let meta = std::fs::metadata(&path).map_err(|e| anyhow::anyhow!("{arg}: {e}"))?;
        if meta.is_dir() {
            let before = out.len();
            walk(&path, &path, None, &mut out, &mut skipped)
                .map_err(|e| anyhow::anyhow!("{arg}: {e}"))?;
            if out.len() == before {
                anyhow::bail!("{arg}: no .jsonl or .json files in this directory");
            }
        } else {
            let relative = PathBuf::from(path.file_name().unwrap_or(path.as_os_str()));
            out.push(Input { display: arg.clone(), path: Some(path), relative, walked: false });
        }
    }
    Ok((out, skipped))
}

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
const PARQUET_MAGIC: &[u8] = b"PAR1";

/// Opens an input, transparently decompressing gzip and zstd (by magic bytes).
pub fn open(input: &Input) -> io::Result<Box<dyn BufRead + Send>> {
    let raw: Box<dyn Read + Send> = match &input.path {
        Some(p) => Box::new(File::open(p)?),
        None => Box::new(io::stdin()),
    };
    let mut buf = BufReader::with_capacity(1 << 16, raw);
    let magic = buf.fill_buf()?;
    if magic.starts_with(GZIP_MAGIC) {
        return Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            flate2::bufread::MultiGzDecoder::new(buf),
        )));
    }
    if magic.starts_with(ZSTD_MAGIC) {
        return Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            zstd::stream::read::Decoder::with_buffer(buf)?,
        )));
    }
    Ok(Box::new(buf))
}

/// Returns true if and only if the file at `path` starts with Parquet's magic bytes.
fn is_parquet(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && magic == PARQUET_MAGIC
}

/// The bytes of one record, not yet parsed (parsing happens on the worker threads).
#[derive(Debug)]
pub enum Payload {
    /// One JSONL line.
    Line(Vec<u8>),
    /// An element of a JSON document, already parsed.
    Value(Value),
    /// A whole JSON document that is one record, already parsed, with the
    /// text it was parsed from (for its rejection, see [`DocumentText`]).
    Document { value: Value, text: DocumentText },
    /// A JSONL line parsed on the reader thread for dialect detection: kept with
    /// its value so that the worker does not parse it again.
    Parsed { line: Vec<u8>, value: Value },
    /// A record longer than `--max-record-bytes`, not held (see [`record_limit`]).
    Oversized(Oversized),
}

/// The text a whole JSON document was parsed from, kept with its value so that
/// a rejection can write the value's compact text without every document that
/// is not rejected paying for it. Only [`RecordReader`] makes one, from the
/// very bytes it parsed the record's value from; with serde_json's
/// `float_roundtrip` a parse of the same bytes gives the same value, so
/// [`DocumentText::line`] is that value's compact text (pinned by the test
/// `a_document_text_line_is_its_value_line`).
#[derive(Clone, Debug)]
pub struct DocumentText(std::sync::Arc<Vec<u8>>);

impl DocumentText {
    /// The compact JSON text of the value parsed from this text.
    pub fn line(&self) -> Vec<u8> {
        // The bytes parsed once already; a failure cannot happen.
        serde_json::from_slice::<Value>(&self.0)
            .map_or_else(|_| Vec::new(), |v| crate::json_text::line(&v))
    }
}

/// One record and where it came from.
#[derive(Debug)]
pub struct RawRecord {
    pub source: Source,
    pub payload: Payload,
}

/// How an input file is laid out, so its output can be laid out alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    /// One record per line.
    Jsonl,
    /// One JSON document holding one record.
    Document,
    /// One JSON document holding an array of records.
    DocumentArray,
    /// A Parquet table, one record per row.
    Parquet,
}

/// A failure to read a record at all (not JSON, I/O error mid-file).
#[derive(Debug)]
pub struct ReadError {
    pub source: Source,
    pub message: String,
    /// The record's bytes, for the rejects file.
    pub raw: Vec<u8>,
}

/// `file:line: reason`, as every command reports it.
impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.source, self.message)
    }
}

/// Reads the records of one input.
pub struct RecordReader {
    display: String,
    inner: Box<dyn BufRead + Send>,
    container: Container,
    line: u64,
    /// Records of a document input, drained in order.
    pending: std::vec::IntoIter<RawRecord>,
    /// The first record, read while sniffing, still to be returned.
    first: Option<RawRecord>,
    done: bool,
    parquet: Option<parquet::ParquetReader>,
    /// The line buffer, reused from line to line.
    scratch: Vec<u8>,
    limit: RecordLimit,
}

/// A line buffer grown past this is moved out with its line rather than kept
/// for the next one.
const MAX_KEPT_SCRATCH: usize = 64 << 20;

/// Whether an input whose first line is not a JSON value on its own is one
/// (pretty-printed) JSON document rather than JSON Lines with a bad first
/// record. The name decides when it can (`.jsonl` / `.ndjson` are lines,
/// `.json` is a document, under any compression suffix); otherwise the line
/// does: a document's first line opens something (`{`, `[`, `"key": [`),
/// while a broken record rarely ends on an opener. Getting this right matters:
/// taking a 4 GB JSONL file with a cut first line for a document would read it
/// all into memory, then reject it whole.
fn document_expected(path: Option<&Path>, first: &[u8]) -> bool {
    match named_container(path) {
        Some(Named::Lines) => false,
        Some(Named::Document) => true,
        None => matches!(first.trim_ascii().last(), Some(b'{' | b'[' | b',' | b':')),
    }
}

/// What a file's name says it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Named {
    /// `.jsonl`, `.ndjson`.
    Lines,
    /// `.json`.
    Document,
}

/// What `path`'s name says it holds, under any compression suffix; `None`
/// when it says neither (no name, another extension).
fn named_container(path: Option<&Path>) -> Option<Named> {
    let name = path?.file_name()?.to_string_lossy().into_owned();
    let mut stem = name.as_str();
    for suffix in COMPRESSED_SUFFIXES {
        stem = stem.strip_suffix(&format!(".{suffix}")).unwrap_or(stem);
    }
    if stem.ends_with(".jsonl") || stem.ends_with(".ndjson") {
        Some(Named::Lines)
    } else if stem.ends_with(".json") {
        Some(Named::Document)
    } else {
        None
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Returns true if and only if nothing but white space is left to read; the
/// white space read counts in `reader`'s line number.
fn rest_is_blank(reader: &mut RecordReader) -> io::Result<bool> {
    loop {
        let buf = reader.inner.fill_buf()?;
        if buf.is_empty() {
            return Ok(true);
        }
        let blank = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        reader.line += buf[..blank].iter().filter(|&&b| b == b'\n').count() as u64;
        let done = blank < buf.len();
        reader.inner.consume(blank);
        if done {
            return Ok(false);
        }
    }
}

/// Returns true if and only if `items` are session objects (not messages):
/// a document of them is read, and a line of them decoded, as one session
/// per element.
pub fn is_session_array(items: &[Value]) -> bool {
    !items.is_empty()
        && items.iter().all(|v| v.as_object().is_some_and(|o| o.contains_key("messages")))
}

impl RecordReader {
    /// Opens `input` and decides its container: if its first non-blank line is
    /// a JSON value on its own it is JSONL, otherwise one JSON document.
    pub fn open(input: &Input, options: &ReadOptions) -> Result<RecordReader, ReadError> {
        let display = input.display.clone();
        if let Some(path) = input.path.as_deref().filter(|p| is_parquet(p)) {
            let rows = parquet::ParquetReader::open(
                path,
                &display,
                options.messages_column.as_deref(),
                options.source_column.as_deref(),
                options.restore,
            )?;
            return Ok(RecordReader {
                display,
                inner: Box::new(io::empty()),
                container: Container::Parquet,
                line: 0,
                pending: Vec::new().into_iter(),
                first: None,
                done: false,
                parquet: Some(rows),
                scratch: Vec::new(),
                limit: options.limit.clone(),
            });
        }
        let whole = Source { path: display.clone(), line: None, index: None };
        let err = |message: String| ReadError { source: whole.clone(), message, raw: Vec::new() };
        let mut inner = open(input).map_err(|e| err(e.to_string()))?;
        let mut line_no = 0u64;
        let mut first = Vec::new();
        let mut oversized = None;
        loop {
            first.clear();
            let n = match record_limit::read_line(&mut inner, &mut first, &options.limit) {
                Ok(Line::End) => 0,
                Ok(Line::Held(n)) => n,
                Ok(Line::Over(n, o)) => {
                    oversized = Some(o);
                    n
                }
                Err(e) => return Err(err(e.to_string())),
            };
            if n == 0 {
                break;
            }
            line_no += 1;
            if oversized.is_some() || !is_blank(&first) {
                break;
            }
        }
        let mut reader = RecordReader {
            display,
            inner,
            container: Container::Jsonl,
            line: line_no,
            pending: Vec::new().into_iter(),
            first: None,
            done: false,
            parquet: None,
            scratch: Vec::new(),
            limit: options.limit.clone(),
        };
        if let Some(o) = oversized {
            // Too long to look at: one rejected record of JSON Lines, and the
            // lines after it still count.
            reader.first = Some(reader.record(Payload::Oversized(o), line_no));
            return Ok(reader);
        }
        if first.is_empty() || is_blank(&first) {
            reader.done = true;
            return Ok(reader);
        }
        // The first line is parsed once: into a tree only where it may be an
        // array of sessions, else only checked to be JSON.
        let may_be_array = named_container(input.path.as_deref()) != Some(Named::Lines)
            && first.trim_ascii_start().first() == Some(&b'[');
        let first_is_json = if may_be_array {
            match serde_json::from_slice::<Value>(&first) {
                Ok(Value::Array(items))
                    if is_session_array(&items)
                        && rest_is_blank(&mut reader).map_err(|e| err(e.to_string()))? =>
                {
                    // An array of sessions written on one line: a document all the same.
                    reader.container = Container::DocumentArray;
                    reader.pending = reader.elements(items).into_iter();
                    reader.done = true;
                    return Ok(reader);
                }
                parsed => parsed.is_ok(),
            }
        } else {
            serde_json::from_slice::<serde::de::IgnoredAny>(&first).is_ok()
        };
        if first_is_json || !document_expected(input.path.as_deref(), &first) {
            // JSONL: a first line that is not JSON is one rejected record, and
            // the lines after it still count.
            reader.first = Some(reader.line_record(first, line_no));
            return Ok(reader);
        }
        // Not a value on one line: read the whole input as one document.
        let mut all = first;
        let size = input.size_on_disk();
        let over = record_limit::read_document(&mut reader.inner, &mut all, &options.limit, size)
            .map_err(|e| err(e.to_string()))?;
        reader.done = true;
        if let Some(o) = over {
            // The whole document is one record, rejected without being held.
            reader.container = Container::Document;
            let whole = RawRecord { source: whole, payload: Payload::Oversized(o) };
            reader.pending = vec![whole].into_iter();
            return Ok(reader);
        }
        let value: Value = match serde_json::from_slice(&all) {
            Ok(v) => v,
            Err(e) => {
                return Err(ReadError {
                    source: Source {
                        path: reader.display.clone(),
                        line: Some(e.line() as u64),
                        index: None,
                    },
                    message: format!("invalid JSON: {e}"),
                    raw: all,
                });
            }
        };
        match value {
            Value::Array(items) if is_session_array(&items) => {
                reader.container = Container::DocumentArray;
                reader.pending = reader.elements(items).into_iter();
            }
            value => {
                reader.container = Container::Document;
                let text = DocumentText(std::sync::Arc::new(all));
                let source = Source { path: reader.display.clone(), line: None, index: None };
                let whole = RawRecord { source, payload: Payload::Document { value, text } };
                reader.pending = vec![whole].into_iter();
            }
        }
        Ok(reader)
    }

    pub fn container(&self) -> Container {
        self.container
    }

    /// The elements of a document that is an array of sessions, one record each.
    fn elements(&self, items: Vec<Value>) -> Vec<RawRecord> {
        let source =
            |i: usize| Source { path: self.display.clone(), line: None, index: Some(i as u64) };
        items
            .into_iter()
            .enumerate()
            .map(|(i, v)| RawRecord { source: source(i), payload: Payload::Value(v) })
            .collect()
    }

    /// The next record, `None` at the end. A read failure ends the input.
    pub fn next_record(&mut self) -> Option<Result<RawRecord, ReadError>> {
        if let Some(rows) = self.parquet.as_mut() {
            return rows.next_record();
        }
        if let Some(r) = self.pending.next() {
            return Some(Ok(r));
        }
        if let Some(first) = self.first.take() {
            return Some(Ok(first));
        }
        loop {
            if self.done {
                return None;
            }
            // Read into a buffer kept across lines, then copy out once at the
            // exact size: growing a fresh buffer by doubling costs several
            // copies and page faults for every multi-megabyte line. A buffer
            // too big to keep is moved out instead (no second copy of a huge
            // line; it is at most the record limit).
            self.scratch.clear();
            let read = record_limit::read_line(&mut self.inner, &mut self.scratch, &self.limit);
            let buf = if self.scratch.capacity() > MAX_KEPT_SCRATCH {
                std::mem::take(&mut self.scratch)
            } else {
                self.scratch.as_slice().to_vec()
            };
            match read {
                Ok(Line::End) => {
                    self.done = true;
                    return None;
                }
                Ok(Line::Over(_, o)) => {
                    self.line += 1;
                    return Some(Ok(self.record(Payload::Oversized(o), self.line)));
                }
                Ok(Line::Held(_)) => {
                    self.line += 1;
                    if is_blank(&buf) {
                        continue;
                    }
                    return Some(Ok(self.line_record(buf, self.line)));
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(ReadError {
                        source: Source {
                            path: self.display.clone(),
                            line: Some(self.line + 1),
                            index: None,
                        },
                        message: format!("read error: {e}"),
                        raw: buf,
                    }));
                }
            }
        }
    }

    fn line_record(&self, mut bytes: Vec<u8>, line: u64) -> RawRecord {
        while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            bytes.pop();
        }
        self.record(Payload::Line(bytes), line)
    }

    fn record(&self, payload: Payload, line: u64) -> RawRecord {
        RawRecord {
            source: Source { path: self.display.clone(), line: Some(line), index: None },
            payload,
        }
    }
}

/// A JSON syntax error of one record line: serde's message, with its
/// position said as a column of that line (a record is one line, so serde's
/// "line 1" is the record's own line, not the file's).
pub fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let what = text.strip_suffix(&suffix).unwrap_or(&text);
    if e.line() <= 1 {
        format!("invalid JSON: {what} (column {})", e.column())
    } else {
        format!("invalid JSON: {what} (line {} of the record, column {})", e.line(), e.column())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_name_then_the_first_line_decides_document_or_lines() {
        let cut = br#"{"messages":[{"role":"user","content":"cut"#;
        let p = |s: &str| Some(PathBuf::from(s));
        assert!(!document_expected(p("a.jsonl").as_deref(), b"{"));
        assert!(!document_expected(p("a.ndjson.gz").as_deref(), b"["));
        assert!(document_expected(p("a.json").as_deref(), cut));
        assert!(document_expected(p("a.json.zst").as_deref(), cut));
        // No telling name (standard input, `.traj`): the line decides.
        for opener in [&b"{"[..], b"[\n", b"  {\"messages\": [", b"{\"id\": 1,", b"\"a\":"] {
            assert!(document_expected(None, opener), "{}", String::from_utf8_lossy(opener));
        }
        assert!(!document_expected(None, cut));
        assert!(!document_expected(p("run.traj").as_deref(), cut));
    }

    fn input(path: &Path) -> Input {
        Input {
            path: Some(path.to_path_buf()),
            display: path.display().to_string(),
            relative: PathBuf::from("x"),
            walked: false,
        }
    }

    /// Containers only: no test here reads a table of ours.
    fn no_restore() -> parquet::Restore {
        parquet::Restore(|v, _| Ok(v))
    }

    fn records(path: &Path) -> (Container, Vec<Source>) {
        let mut r = RecordReader::open(&input(path), &ReadOptions::new(no_restore())).unwrap();
        let mut out = Vec::new();
        while let Some(rec) = r.next_record() {
            out.push(rec.unwrap().source);
        }
        (r.container(), out)
    }

    #[test]
    fn jsonl_lines_keep_their_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        std::fs::write(&p, "\n{\"messages\":[]}\n\n{\"messages\":[]}\r\n").unwrap();
        let (c, srcs) = records(&p);
        assert_eq!(c, Container::Jsonl);
        assert_eq!(srcs.iter().map(|s| s.line.unwrap()).collect::<Vec<_>>(), [2, 4]);
    }

    #[test]
    fn pretty_documents_and_arrays() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        std::fs::write(&p, "{\n  \"messages\": []\n}\n").unwrap();
        assert_eq!(records(&p).0, Container::Document);
        std::fs::write(&p, "[\n {\"messages\": []},\n {\"messages\": []}\n]").unwrap();
        let (c, srcs) = records(&p);
        assert_eq!(c, Container::DocumentArray);
        assert_eq!(srcs[1].to_string(), format!("{}[1]", p.display()));
    }

    /// An array of sessions on one line is the document it would be pretty
    /// printed (each element `file[i]`, blank lines after it or not); under a
    /// JSON Lines name, or with more lines after it, it stays a line, and the
    /// lines after it keep their numbers.
    #[test]
    fn a_one_line_array_of_sessions_is_a_document() {
        let dir = tempfile::tempdir().unwrap();
        let array = r#"[{"messages":[]},{"messages":[]}]"#;
        let one = dir.path().join("one.json");
        std::fs::write(&one, format!("\n{array}\n\n")).unwrap();
        let (c, srcs) = records(&one);
        assert_eq!(c, Container::DocumentArray);
        let shown: Vec<String> = srcs.iter().map(ToString::to_string).collect();
        assert_eq!(shown, [format!("{}[0]", one.display()), format!("{}[1]", one.display())]);
        let lines = dir.path().join("one.jsonl");
        std::fs::write(&lines, format!("{array}\n")).unwrap();
        assert_eq!(records(&lines).0, Container::Jsonl);
        let more = dir.path().join("more.json");
        std::fs::write(&more, format!("{array}\n\n\n{{\"messages\":[]}}\n")).unwrap();
        let (c, srcs) = records(&more);
        assert_eq!(c, Container::Jsonl);
        assert_eq!(srcs.iter().map(|s| s.line).collect::<Vec<_>>(), [Some(1), Some(4)]);
        // An array of messages (not sessions) on one line is not split.
        let messages = dir.path().join("messages.json");
        std::fs::write(&messages, r#"[{"role":"user","content":"hi"}]"#).unwrap();
        assert_eq!(records(&messages).0, Container::Jsonl);
    }

    #[test]
    fn gzip_is_detected_by_magic_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("noext");
        let mut gz =
            flate2::write::GzEncoder::new(File::create(&p).unwrap(), flate2::Compression::fast());
        gz.write_all(b"{\"messages\":[]}\n{\"messages\":[]}\n").unwrap();
        gz.finish().unwrap();
        assert_eq!(records(&p).1.len(), 2);
    }

    #[test]
    fn zstd_is_detected_by_magic_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl.zst");
        let bytes =
            zstd::encode_all(&b"{\"messages\":[]}\n{\"messages\":[]}\n{\"messages\":[]}\n"[..], 3)
                .unwrap();
        std::fs::write(&p, bytes).unwrap();
        assert_eq!(records(&p).1.len(), 3);
    }

    #[test]
    fn empty_input_has_no_records() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e.jsonl");
        std::fs::write(&p, "\n\n").unwrap();
        assert!(records(&p).1.is_empty());
    }

    #[test]
    fn directories_are_walked_sorted_skipping_hidden_and_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("b/c")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        for f in [
            "z.jsonl",
            "a.json",
            "b/c/d.jsonl.gz",
            "notes.txt",
            ".hidden/x.jsonl",
            "b/y.ndjson",
            "b/r.jsonl.zst",
        ] {
            std::fs::write(root.join(f), "").unwrap();
        }
        let got = expand_inputs(&[root.display().to_string()]).unwrap();
        let rel: Vec<String> = got.iter().map(|i| i.relative.display().to_string()).collect();
        assert_eq!(rel, ["a.json", "b/c/d.jsonl.gz", "b/r.jsonl.zst", "b/y.ndjson", "z.jsonl"]);
    }

    #[test]
    fn missing_inputs_are_errors_naming_the_path() {
        let err = expand_inputs(&["/definitely/not/here.jsonl".into()]).unwrap_err();
        assert!(err.to_string().starts_with("/definitely/not/here.jsonl: "));
    }
}
