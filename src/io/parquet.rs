//! Parquet container: a table whose rows are sessions.
//!
//! ## Reading ([`ParquetReader`])
//! Each row becomes one OpenAI-shaped record, `{"messages": [...], <column>: <value>...}`,
//! streamed batch by batch ([`READ_BATCH_ROWS`] rows; the whole file is never loaded).
//! - `messages` is a `list<struct>` column (the Hugging Face chat convention:
//!   `{role, content}`, maybe `tool_calls`, `tool_call_id`, `name`, ...; `content`
//!   may itself be a `list<struct>` of parts). A struct field that is null is
//!   left out of the message (Arrow gives every struct the union of all keys).
//! - `--messages-column NAME`: a string column holding each row's messages as a
//!   JSON array instead. A cell that is not JSON becomes a rejected record
//!   (its text is what the rejects file gets); the next rows are still read.
//! - Every other column passes through under its own name. Arrow → JSON:
//!   null → `null`; booleans, integers and floats → numbers (NaN and infinities,
//!   which JSON cannot hold, → `null`); utf8 / large utf8 / utf8 view → strings;
//!   binary (all kinds) → standard base64 strings; decimals → exact decimal
//!   strings (`"12.50"`); date32/date64 → `"YYYY-MM-DD"` (date64 with a time
//!   part → a timestamp); timestamps → ISO 8601 (`"2024-05-01T12:00:00.250"`,
//!   with a `Z` when the column has a time zone, since values are UTC instants);
//!   time32/time64 → `"HH:MM:SS[.fff]"`; durations → integer counts of the
//!   column's unit; lists → arrays; structs → objects; maps → objects when keys
//!   are strings, else arrays of `{"key", "value"}`; dictionaries → their values.
//!   Intervals, unions and run-end encoded columns have no JSON form: opening
//!   such a file is an error naming the file, the column and its type.
//! - A file without a usable messages column, or whose footer cannot be read,
//!   is an error naming the file and what is wrong; nothing here panics on bad
//!   input (the parquet crate is called under `catch_unwind` as a last guard).
//!
//! ## Writing ([`ParquetWriter`]): the schema
//! A row per OpenAI session record. Columns, in this order:
//!
//! | column | Arrow type | holds |
//! |---|---|---|
//! | `messages` | `list<struct<...>>` (below) | the messages, one struct each |
//! | other keys, sorted by name | see below | one column per top-level key seen in the first row group |
//! | `extra` | `utf8` (JSON) | whatever did not fit a column (below) |
//!
//! Message struct fields (all nullable `utf8` unless said):
//! `role`; `content` (the content when it is a string, else null);
//! `content_parts` (JSON text of the parts array when content is an array, else
//! null); `name`; `tool_call_id`;
//! `tool_calls: list<struct<id, type, function: struct<name, arguments>>>`;
//! `reasoning_content`; `extra` (JSON object of every other key of the message,
//! null when none).
//!
//! Lossless by construction: a typed field only ever holds a value it gives back
//! exactly. A known key whose value does not fit (`content: null` or a number,
//! a non-string `name`, `tool_calls` with extra keys or non-string arguments,
//! ...) goes whole into the message's `extra`, and so does an absent-vs-null
//! distinction (a null field means "absent"). A message that is not an object
//! (it never is in practice) is stored as null fields with `extra` holding its
//! JSON value (not an object); a null message is a null struct.
//!
//! Other top-level keys: `compaction` and `tools` are `utf8` JSON text; any other
//! key is `bool`, `int64`, `float64` or `utf8` when every value of it in the
//! first row group is of that one JSON type (integers and floats are different
//! types), else `utf8` JSON text. JSON-text columns carry the field metadata
//! `compactor:encoding = json`. A null cell means the key was absent.
//!
//! The schema is fixed by the first row group (it must be known before any row
//! is written), so a later row may have a key without a column, or a value that
//! does not fit its column's type: those keys go into the row's trailing `extra`
//! cell, a JSON object (field metadata `compactor:encoding = extra`), with any
//! top-level key named `extra` or a `messages` that is not an array. A session
//! that was a bare array of messages (no object around it) has the JSON string
//! `"bare_array"` there instead.
//!
//! Reading our own files (the file metadata `compactor:schema =
//! openai-sessions/1`) undoes all of this, so a session read back equals the
//! one written (JSON value equality; key order inside a message becomes
//! role, content, name, tool_call_id, tool_calls, reasoning_content, then the
//! rest; top-level keys come as `messages`, the columns, then `extra`'s keys).
//!
//! ## Writing: the bytes
//! Rows are buffered and written as a row group every [`ROW_GROUP_ROWS`] rows or
//! [`ROW_GROUP_BYTES`] of text, whichever comes first (bounded memory). zstd
//! level 1. No clocks anywhere: `created_by` is `compactor <version>` and the
//! only key-value metadata are `compactor:schema` and Arrow's own schema, so the
//! same rows always give the same bytes. The file appears under its final name
//! only at [`ParquetWriter::finish`] (an [`AtomicFile`]).

use super::output::AtomicFile;
use super::{Payload, RawRecord, ReadError};
use crate::model::Source;
use anyhow::{Context, anyhow, bail};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowDictionaryKeyType, Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type,
    Decimal256Type, DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType,
    DurationSecondType, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, OffsetSizeTrait,
    RecordBatch, StringArray, StructArray,
};
use arrow_buffer::{ArrowNativeType, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde_json::{Map, Number, Value};
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per record batch when reading: sessions are large, so batches are small.
pub const READ_BATCH_ROWS: usize = 64;
/// Rows per row group when writing.
pub const ROW_GROUP_ROWS: usize = 1000;
/// Approximate text bytes per row group when writing (keeps memory bounded and
/// every `utf8` column of a row group well under its 2 GiB offset limit).
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// File key-value metadata key (and value) marking a table written here.
pub const SCHEMA_KEY: &str = "compactor:schema";
pub const SCHEMA_VALUE: &str = "openai-sessions/1";
/// Field metadata key telling how a column's text is to be read.
pub const ENCODING_KEY: &str = "compactor:encoding";
/// The trailing column of rows' leftover keys.
pub const EXTRA_COLUMN: &str = "extra";
/// What the trailing `extra` cell holds for a session that was a bare array.
const BARE_ARRAY: &str = "bare_array";

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

/// Where each row's messages come from.
#[derive(Debug)]
enum MessagesFrom {
    /// A `list<struct>` column; `ours` when written by [`ParquetWriter`].
    List { col: usize, ours: bool },
    /// A string column of JSON arrays (`--messages-column`).
    Json { col: usize },
}

/// How a pass-through column's cells become JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decode {
    /// Generic Arrow → JSON.
    Plain,
    /// The cell is JSON text.
    Json,
    /// The cell is our trailing `extra` (JSON to merge into the row).
    Extra,
    /// Our `compactor_report` column: not part of the session.
    Report,
}

#[derive(Debug)]
struct Column {
    index: usize,
    name: String,
    decode: Decode,
}

/// How the rows of record batches of one schema become session records.
/// Shared by [`ParquetReader`] and the Arrow IPC stream reader
/// (`compact --from arrow-ipc`), so both read the same table schema the same way.
#[derive(Debug)]
pub struct BatchDecoder {
    messages: MessagesFrom,
    columns: Vec<Column>,
    /// Our own schema: a null cell means an absent key.
    ours: bool,
    /// `--source-column`: the column naming each row's source.
    source: Option<usize>,
}

/// Rows of a Parquet file, one record per row, streamed by record batch.
pub struct ParquetReader {
    display: String,
    batches: Option<ParquetRecordBatchReader>,
    batch: Option<RecordBatch>,
    /// Next row within `batch`.
    pos: usize,
    /// Index of the next row in the file.
    row: u64,
    decoder: BatchDecoder,
}

impl ParquetReader {
    /// Opens `path`. `messages_column` names a string column holding each
    /// row's messages as JSON (default: a `messages` list column).
    pub fn open(
        path: &Path,
        display: &str,
        messages_column: Option<&str>,
        source_column: Option<&str>,
    ) -> Result<ParquetReader, ReadError> {
        let fail = |message: String| ReadError {
            source: Source { path: display.to_string(), line: None, index: None },
            message,
            raw: Vec::new(),
        };
        let file = File::open(path).map_err(|e| fail(format!("cannot open: {e}")))?;
        let builder = guarded(|| ParquetRecordBatchReaderBuilder::try_new(file))
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|e| fail(format!("not a readable Parquet file: {e}")))?;
        let ours = builder.metadata().file_metadata().key_value_metadata().is_some_and(|kv| {
            kv.iter().any(|k| k.key == SCHEMA_KEY && k.value.as_deref() == Some(SCHEMA_VALUE))
        });
        let schema = Arc::clone(builder.schema());
        // A table rewritten by pyarrow (or Ray) keeps our field metadata only.
        let ours = ours || BatchDecoder::is_ours(&schema);
        let decoder =
            BatchDecoder::new(&schema, messages_column, source_column, ours).map_err(fail)?;
        let batches = guarded(|| builder.with_batch_size(READ_BATCH_ROWS).build())
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        Ok(ParquetReader {
            display: display.to_string(),
            batches: Some(batches),
            batch: None,
            pos: 0,
            row: 0,
            decoder,
        })
    }

    /// The next row as a record, `None` at the end. A batch that cannot be
    /// read ends the file with an error.
    pub fn next_record(&mut self) -> Option<Result<RawRecord, ReadError>> {
        loop {
            if let Some(batch) = &self.batch
                && self.pos < batch.num_rows()
            {
                let i = self.pos;
                self.pos += 1;
                let row = self.row;
                self.row += 1;
                let source = self.decoder.source(batch, i, &self.display, row);
                return Some(match self.decoder.record(batch, i) {
                    Ok(payload) => Ok(RawRecord { source, payload }),
                    Err(message) => Err(ReadError { source, message, raw: Vec::new() }),
                });
            }
            let batches = self.batches.as_mut()?;
            match guarded(|| batches.next()) {
                Ok(Some(Ok(batch))) => {
                    self.batch = Some(batch);
                    self.pos = 0;
                }
                Ok(None) => {
                    self.batches = None;
                    return None;
                }
                Ok(Some(Err(e))) => return Some(Err(self.stop(e.to_string()))),
                Err(e) => return Some(Err(self.stop(e))),
            }
        }
    }

    /// Ends the file after a failure to read a batch.
    fn stop(&mut self, why: String) -> ReadError {
        self.batches = None;
        self.batch = None;
        ReadError {
            source: Source { path: self.display.clone(), line: None, index: Some(self.row) },
            message: format!("cannot read rows from row {}: {why}", self.row),
            raw: Vec::new(),
        }
    }
}

impl BatchDecoder {
    /// Plans how rows of `schema` are read. `ours` says the schema is the one
    /// [`ParquetWriter`] (or [`BatchEncoder`]) writes, whose encodings are undone.
    pub fn new(
        schema: &SchemaRef,
        messages_column: Option<&str>,
        source_column: Option<&str>,
        ours: bool,
    ) -> Result<BatchDecoder, String> {
        let (messages, mut columns) = plan(schema, messages_column, ours)?;
        // Our report column (`compact --to arrow-ipc`) is output, never input.
        columns.retain(|c| c.decode != Decode::Report);
        let source = match source_column {
            None => None,
            Some(name) => {
                let col = schema
                    .fields()
                    .iter()
                    .position(|f| f.name() == name)
                    .ok_or_else(|| format!("no column `{name}` (--source-column)"))?;
                let dt = schema.field(col).data_type();
                if !matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
                    return Err(format!(
                        "column `{name}` (--source-column) is {dt}, not a string column"
                    ));
                }
                Some(col)
            }
        };
        Ok(BatchDecoder { messages, columns, ours, source })
    }

    /// Returns true if and only if the schema is marked as ours: the schema's
    /// `compactor:schema` metadata, or (what survives a trip through pyarrow,
    /// which keeps field metadata but not Parquet's file metadata) a `messages`
    /// field marked `compactor:encoding = messages`.
    pub fn is_ours(schema: &Schema) -> bool {
        schema.metadata().get(SCHEMA_KEY).is_some_and(|v| v == SCHEMA_VALUE)
            || schema.fields().iter().any(|f| {
                f.name() == "messages"
                    && f.metadata().get(ENCODING_KEY).is_some_and(|v| v == "messages")
            })
    }

    /// Where row `i` of `batch` comes from: its `--source-column` cell when
    /// that is set, else `display[row]` (`row` counts from the first row read).
    pub fn source(&self, batch: &RecordBatch, i: usize, display: &str, row: u64) -> Source {
        match self.source.and_then(|c| string_at(batch.column(c).as_ref(), i)) {
            Some(name) => Source { path: name.to_string(), line: None, index: None },
            None => Source { path: display.to_string(), line: None, index: Some(row) },
        }
    }

    /// Row `i` of `batch` as a record payload.
    pub fn record(&self, batch: &RecordBatch, i: usize) -> Result<Payload, String> {
        let mut obj = Map::new();
        let messages = match &self.messages {
            MessagesFrom::List { col, ours } => {
                let array = batch.column(*col);
                let v = to_json(array.as_ref(), i, true)
                    .map_err(|e| format!("column `messages`: {e}"))?;
                if *ours { restore_messages(v)? } else { v }
            }
            MessagesFrom::Json { col } => {
                let array = batch.column(*col);
                match string_at(array.as_ref(), i) {
                    None => Value::Null,
                    Some(text) => match serde_json::from_str(text) {
                        Ok(v) => v,
                        // The pipeline rejects this row (invalid JSON) and goes on.
                        Err(_) => return Ok(Payload::Line(text.as_bytes().to_vec())),
                    },
                }
            }
        };
        let messages_absent = self.ours && messages.is_null();
        if !messages_absent {
            obj.insert("messages".into(), messages);
        }
        let mut bare = false;
        for c in &self.columns {
            let array = batch.column(c.index);
            let v = to_json(array.as_ref(), i, false)
                .map_err(|e| format!("column `{}`: {e}", c.name))?;
            if v.is_null() && (self.ours || c.decode != Decode::Plain) {
                continue;
            }
            let text = || v.as_str().ok_or_else(|| format!("column `{}`: not text", c.name));
            match c.decode {
                Decode::Plain => {
                    obj.insert(c.name.clone(), v);
                }
                Decode::Json => {
                    let parsed = serde_json::from_str(text()?)
                        .map_err(|e| format!("column `{}`: invalid JSON: {e}", c.name))?;
                    obj.insert(c.name.clone(), parsed);
                }
                Decode::Report => {}
                Decode::Extra => match serde_json::from_str(text()?) {
                    Ok(Value::Object(map)) => obj.extend(map),
                    Ok(Value::String(s)) if s == BARE_ARRAY => bare = true,
                    Ok(_) => return Err(format!("column `{}`: not a JSON object", c.name)),
                    Err(e) => return Err(format!("column `{}`: invalid JSON: {e}", c.name)),
                },
            }
        }
        if bare {
            return Ok(Payload::Value(obj.remove("messages").unwrap_or(Value::Array(Vec::new()))));
        }
        Ok(Payload::Value(Value::Object(obj)))
    }
}

thread_local! {
    /// Set while this thread runs parquet code under [`guarded`].
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs a panic hook that stays silent for panics `guarded` turns into
/// errors (the user gets that error, naming the file, not a backtrace) and
/// reports every other panic as before. Call once, at start.
pub fn quiet_guarded_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !GUARDED.with(std::cell::Cell::get) {
            default(info);
        }
    }));
}

/// Runs `f`, turning a panic inside the parquet crate into an error (fuzz
/// finding: a corrupt column chunk makes parquet 60 panic with "column start
/// and length should not be negative").
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let was = GUARDED.with(|g| g.replace(true));
    let out = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(was));
    out.map_err(|_| "the Parquet decoder failed on this file (corrupt data?)".to_string())
}

/// Decides where messages come from and how each other column is read.
fn plan(
    schema: &SchemaRef,
    messages_column: Option<&str>,
    ours: bool,
) -> Result<(MessagesFrom, Vec<Column>), String> {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let find = |name: &str| schema.fields().iter().position(|f| f.name() == name);
    let messages = match messages_column {
        Some(name) => {
            let col = find(name).ok_or_else(|| {
                format!("no column `{name}` (--messages-column); columns: {}", names.join(", "))
            })?;
            let dt = schema.field(col).data_type();
            if !matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
                return Err(format!(
                    "column `{name}` (--messages-column) is {dt}, not a string column of JSON"
                ));
            }
            if name != "messages" && find("messages").is_some() {
                return Err(format!(
                    "both a `messages` column and --messages-column {name}; rename one of them"
                ));
            }
            MessagesFrom::Json { col }
        }
        None => {
            let col = find("messages").ok_or_else(|| {
                format!(
                    "not a table of sessions: no `messages` column (columns: {}); \
                     a string column of JSON messages needs --messages-column NAME",
                    names.join(", ")
                )
            })?;
            let dt = schema.field(col).data_type();
            let item = match dt {
                DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                    f.data_type()
                }
                _ => &DataType::Null,
            };
            if !matches!(item, DataType::Struct(_)) {
                let hint = if matches!(dt, DataType::Utf8 | DataType::LargeUtf8) {
                    "; if it holds JSON text, pass --messages-column messages"
                } else {
                    ""
                };
                return Err(format!(
                    "not a table of sessions: column `messages` is {dt}, expected list<struct<role, content, ...>>{hint}"
                ));
            }
            supported(dt).map_err(|e| format!("column `messages`: {e}"))?;
            let ours = ours
                && schema.field(col).metadata().get(ENCODING_KEY).map(String::as_str)
                    == Some("messages");
            MessagesFrom::List { col, ours }
        }
    };
    let skip = match &messages {
        MessagesFrom::List { col, .. } | MessagesFrom::Json { col, .. } => *col,
    };
    let mut columns = Vec::new();
    for (index, field) in schema.fields().iter().enumerate() {
        if index == skip {
            continue;
        }
        supported(field.data_type()).map_err(|e| format!("column `{}`: {e}", field.name()))?;
        let text = matches!(field.data_type(), DataType::Utf8 | DataType::LargeUtf8);
        let decode = match field.metadata().get(ENCODING_KEY).map(String::as_str) {
            Some("json") if ours && text => Decode::Json,
            Some("extra") if ours && text => Decode::Extra,
            Some("report") if ours && text => Decode::Report,
            _ => Decode::Plain,
        };
        columns.push(Column { index, name: field.name().clone(), decode });
    }
    Ok((messages, columns))
}

/// Checks that every value of type `dt` has a JSON form.
fn supported(dt: &DataType) -> Result<(), String> {
    match dt {
        DataType::Interval(_)
        | DataType::Union(_, _)
        | DataType::RunEndEncoded(_, _)
        | DataType::ListView(_)
        | DataType::LargeListView(_) => Err(format!("type {dt} has no JSON form here")),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => supported(f.data_type()),
        DataType::Struct(fields) => fields.iter().try_for_each(|f| supported(f.data_type())),
        DataType::Dictionary(key, value) => {
            if key.is_dictionary_key_type() {
                supported(value)
            } else {
                Err(format!("type {dt} has no JSON form here"))
            }
        }
        _ => Ok(()),
    }
}

/// The string at `i` of a string column (`None` for null or another type).
fn string_at(a: &dyn Array, i: usize) -> Option<&str> {
    if a.is_null(i) {
        return None;
    }
    if let Some(s) = a.as_string_opt::<i32>() {
        return Some(s.value(i));
    }
    if let Some(s) = a.as_string_opt::<i64>() {
        return Some(s.value(i));
    }
    a.as_string_view_opt().map(|s| s.value(i))
}

/// Undoes the writer's message encoding (see the module docs).
fn restore_messages(v: Value) -> Result<Value, String> {
    let Value::Array(items) = v else { return Ok(v) };
    items
        .into_iter()
        .enumerate()
        .map(|(i, m)| restore_message(m).map_err(|e| format!("message {i}: {e}")))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn restore_message(m: Value) -> Result<Value, String> {
    let Value::Object(fields) = m else { return Ok(m) };
    let mut out = Map::new();
    let mut extra = None;
    for (k, v) in fields {
        match k.as_str() {
            "content_parts" => {
                let text = v.as_str().ok_or("`content_parts` is not text")?;
                let parts = serde_json::from_str(text)
                    .map_err(|e| format!("`content_parts` is not JSON: {e}"))?;
                out.insert("content".into(), parts);
            }
            "extra" => {
                let text = v.as_str().ok_or("`extra` is not text")?;
                extra = Some(
                    serde_json::from_str::<Value>(text)
                        .map_err(|e| format!("`extra` is not JSON: {e}"))?,
                );
            }
            _ => {
                out.insert(k, v);
            }
        }
    }
    match extra {
        None => Ok(Value::Object(out)),
        Some(Value::Object(more)) => {
            out.extend(more);
            Ok(Value::Object(out))
        }
        // A message that was not an object at all.
        Some(other) if out.is_empty() => Ok(other),
        Some(_) => Err("`extra` is not a JSON object".into()),
    }
}

/// Value `i` of `a` as JSON. `omit_nulls` leaves null struct fields out
/// (inside messages, where Arrow's union-of-keys structs put them).
fn to_json(a: &dyn Array, i: usize, omit_nulls: bool) -> Result<Value, String> {
    if matches!(a.data_type(), DataType::Null) || a.is_null(i) {
        return Ok(Value::Null);
    }
    let unsupported = || format!("type {} has no JSON form here", a.data_type());
    macro_rules! prim {
        ($t:ty, $conv:expr) => {{
            let arr = a.as_primitive_opt::<$t>().ok_or_else(unsupported)?;
            #[allow(clippy::redundant_closure_call)]
            Ok($conv(arr.value(i)))
        }};
    }
    macro_rules! decimal {
        ($t:ty) => {{
            let arr = a.as_primitive_opt::<$t>().ok_or_else(unsupported)?;
            Ok(Value::String(arr.value_as_string(i)))
        }};
    }
    macro_rules! dict {
        ($t:ty) => {{ dictionary_value::<$t>(a, i, omit_nulls) }};
    }
    match a.data_type() {
        DataType::Null => Ok(Value::Null),
        DataType::Boolean => Ok(Value::Bool(a.as_boolean_opt().ok_or_else(unsupported)?.value(i))),
        DataType::Int8 => prim!(Int8Type, |v: i8| Value::from(v)),
        DataType::Int16 => prim!(Int16Type, |v: i16| Value::from(v)),
        DataType::Int32 => prim!(Int32Type, |v: i32| Value::from(v)),
        DataType::Int64 => prim!(Int64Type, |v: i64| Value::from(v)),
        DataType::UInt8 => prim!(UInt8Type, |v: u8| Value::from(v)),
        DataType::UInt16 => prim!(UInt16Type, |v: u16| Value::from(v)),
        DataType::UInt32 => prim!(UInt32Type, |v: u32| Value::from(v)),
        DataType::UInt64 => prim!(UInt64Type, |v: u64| Value::from(v)),
        DataType::Float16 => prim!(
            Float16Type,
            |v: <Float16Type as arrow_array::ArrowPrimitiveType>::Native| float(v.to_f64())
        ),
        DataType::Float32 => prim!(Float32Type, |v: f32| float(f64::from(v))),
        DataType::Float64 => prim!(Float64Type, float),
        DataType::Decimal32(_, _) => decimal!(Decimal32Type),
        DataType::Decimal64(_, _) => decimal!(Decimal64Type),
        DataType::Decimal128(_, _) => decimal!(Decimal128Type),
        DataType::Decimal256(_, _) => decimal!(Decimal256Type),
        DataType::Date32 => prim!(Date32Type, |v: i32| Value::String(date(i64::from(v)))),
        DataType::Date64 => prim!(Date64Type, |v: i64| {
            if v.rem_euclid(86_400_000) == 0 {
                Value::String(date(v.div_euclid(86_400_000)))
            } else {
                Value::String(timestamp(v, &TimeUnit::Millisecond, false))
            }
        }),
        DataType::Timestamp(unit, tz) => {
            let z = tz.is_some();
            let v = match unit {
                TimeUnit::Second => a.as_primitive_opt::<TimestampSecondType>().map(|x| x.value(i)),
                TimeUnit::Millisecond => {
                    a.as_primitive_opt::<TimestampMillisecondType>().map(|x| x.value(i))
                }
                TimeUnit::Microsecond => {
                    a.as_primitive_opt::<TimestampMicrosecondType>().map(|x| x.value(i))
                }
                TimeUnit::Nanosecond => {
                    a.as_primitive_opt::<TimestampNanosecondType>().map(|x| x.value(i))
                }
            }
            .ok_or_else(unsupported)?;
            Ok(Value::String(timestamp(v, unit, z)))
        }
        DataType::Time32(unit) => {
            let v = match unit {
                TimeUnit::Second => {
                    a.as_primitive_opt::<Time32SecondType>().map(|x| i64::from(x.value(i)))
                }
                _ => a.as_primitive_opt::<Time32MillisecondType>().map(|x| i64::from(x.value(i))),
            }
            .ok_or_else(unsupported)?;
            Ok(Value::String(time_of_day(v, unit)))
        }
        DataType::Time64(unit) => {
            let v = match unit {
                TimeUnit::Nanosecond => {
                    a.as_primitive_opt::<Time64NanosecondType>().map(|x| x.value(i))
                }
                _ => a.as_primitive_opt::<Time64MicrosecondType>().map(|x| x.value(i)),
            }
            .ok_or_else(unsupported)?;
            Ok(Value::String(time_of_day(v, unit)))
        }
        DataType::Duration(unit) => {
            let v = match unit {
                TimeUnit::Second => a.as_primitive_opt::<DurationSecondType>().map(|x| x.value(i)),
                TimeUnit::Millisecond => {
                    a.as_primitive_opt::<DurationMillisecondType>().map(|x| x.value(i))
                }
                TimeUnit::Microsecond => {
                    a.as_primitive_opt::<DurationMicrosecondType>().map(|x| x.value(i))
                }
                TimeUnit::Nanosecond => {
                    a.as_primitive_opt::<DurationNanosecondType>().map(|x| x.value(i))
                }
            }
            .ok_or_else(unsupported)?;
            Ok(Value::from(v))
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            string_at(a, i).map(|s| Value::String(s.to_string())).ok_or_else(unsupported)
        }
        DataType::Binary => {
            Ok(Value::String(base64(a.as_binary_opt::<i32>().ok_or_else(unsupported)?.value(i))))
        }
        DataType::LargeBinary => {
            Ok(Value::String(base64(a.as_binary_opt::<i64>().ok_or_else(unsupported)?.value(i))))
        }
        DataType::BinaryView => {
            Ok(Value::String(base64(a.as_binary_view_opt().ok_or_else(unsupported)?.value(i))))
        }
        DataType::FixedSizeBinary(_) => Ok(Value::String(base64(
            a.as_fixed_size_binary_opt().ok_or_else(unsupported)?.value(i),
        ))),
        DataType::List(_) => list_value::<i32>(a, i, omit_nulls),
        DataType::LargeList(_) => list_value::<i64>(a, i, omit_nulls),
        DataType::FixedSizeList(_, _) => {
            let list = a.as_fixed_size_list_opt().ok_or_else(unsupported)?;
            let values = list.value(i);
            (0..values.len())
                .map(|j| to_json(values.as_ref(), j, omit_nulls))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        DataType::Struct(_) => {
            let s = a.as_struct_opt().ok_or_else(unsupported)?;
            let mut map = Map::new();
            for (field, column) in s.fields().iter().zip(s.columns()) {
                let v = to_json(column.as_ref(), i, omit_nulls)?;
                if omit_nulls && v.is_null() {
                    continue;
                }
                map.insert(field.name().clone(), v);
            }
            Ok(Value::Object(map))
        }
        DataType::Map(_, _) => {
            let m = a.as_map_opt().ok_or_else(unsupported)?;
            let offsets = m.value_offsets();
            let (start, end) = span(offsets, i)?;
            let (keys, values) = (m.keys(), m.values());
            let string_keys = matches!(
                keys.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            );
            if string_keys {
                let mut map = Map::new();
                for j in start..end {
                    let k = string_at(keys.as_ref(), j).unwrap_or_default().to_string();
                    map.insert(k, to_json(values.as_ref(), j, omit_nulls)?);
                }
                Ok(Value::Object(map))
            } else {
                (start..end)
                    .map(|j| {
                        let mut entry = Map::new();
                        entry.insert("key".into(), to_json(keys.as_ref(), j, omit_nulls)?);
                        entry.insert("value".into(), to_json(values.as_ref(), j, omit_nulls)?);
                        Ok(Value::Object(entry))
                    })
                    .collect::<Result<Vec<_>, String>>()
                    .map(Value::Array)
            }
        }
        DataType::Dictionary(key, _) => match key.as_ref() {
            DataType::Int8 => dict!(Int8Type),
            DataType::Int16 => dict!(Int16Type),
            DataType::Int32 => dict!(Int32Type),
            DataType::Int64 => dict!(Int64Type),
            DataType::UInt8 => dict!(UInt8Type),
            DataType::UInt16 => dict!(UInt16Type),
            DataType::UInt32 => dict!(UInt32Type),
            DataType::UInt64 => dict!(UInt64Type),
            _ => Err(unsupported()),
        },
        _ => Err(unsupported()),
    }
}

/// The `[start, end)` range of list element `i` from its offsets.
fn span<O: OffsetSizeTrait>(offsets: &[O], i: usize) -> Result<(usize, usize), String> {
    match (offsets.get(i), offsets.get(i + 1)) {
        (Some(s), Some(e)) if s <= e => Ok((s.as_usize(), e.as_usize())),
        _ => Err(format!("list offsets out of range at {i}")),
    }
}

fn list_value<O: OffsetSizeTrait>(
    a: &dyn Array,
    i: usize,
    omit_nulls: bool,
) -> Result<Value, String> {
    let list = a
        .as_list_opt::<O>()
        .ok_or_else(|| format!("type {} has no JSON form here", a.data_type()))?;
    let (start, end) = span(list.value_offsets(), i)?;
    let values = list.values();
    (start..end)
        .map(|j| to_json(values.as_ref(), j, omit_nulls))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn dictionary_value<K: ArrowDictionaryKeyType>(
    a: &dyn Array,
    i: usize,
    omit_nulls: bool,
) -> Result<Value, String> {
    let d = a
        .as_dictionary_opt::<K>()
        .ok_or_else(|| format!("type {} has no JSON form here", a.data_type()))?;
    let values = d.values();
    let key = d.keys().value(i).to_usize().filter(|k| *k < values.len());
    let Some(key) = key else { return Err(format!("dictionary key at {i} out of range")) };
    to_json(values.as_ref(), key, omit_nulls)
}

fn float(v: f64) -> Value {
    Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Days since 1970-01-01 → `(year, month, day)` (proleptic Gregorian; H. Hinnant's algorithm).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn date(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Ticks per second and the digits of a fraction in `unit`.
fn ticks(unit: &TimeUnit) -> (i64, usize) {
    match unit {
        TimeUnit::Second => (1, 0),
        TimeUnit::Millisecond => (1_000, 3),
        TimeUnit::Microsecond => (1_000_000, 6),
        TimeUnit::Nanosecond => (1_000_000_000, 9),
    }
}

fn fraction(sub: i64, digits: usize) -> String {
    if sub == 0 { String::new() } else { format!(".{sub:0digits$}") }
}

fn timestamp(v: i64, unit: &TimeUnit, utc: bool) -> String {
    let (per_sec, digits) = ticks(unit);
    let secs = v.div_euclid(per_sec);
    let sub = v.rem_euclid(per_sec);
    let days = secs.div_euclid(86_400);
    let s = secs.rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}{}{}",
        date(days),
        s / 3600,
        s / 60 % 60,
        s % 60,
        fraction(sub, digits),
        if utc { "Z" } else { "" }
    )
}

fn time_of_day(v: i64, unit: &TimeUnit) -> String {
    let (per_sec, digits) = ticks(unit);
    let s = v.div_euclid(per_sec);
    let sub = v.rem_euclid(per_sec);
    format!("{:02}:{:02}:{:02}{}", s / 3600, s / 60 % 60, s % 60, fraction(sub, digits))
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * k) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

/// One tool call that fits the typed `tool_calls` struct.
#[derive(Debug, Default, PartialEq)]
struct CallRow {
    id: Option<String>,
    kind: Option<String>,
    function: Option<(Option<String>, Option<String>)>,
}

/// One message, split into the struct's fields.
#[derive(Debug, Default, PartialEq)]
struct MsgRow {
    role: Option<String>,
    content: Option<String>,
    content_parts: Option<String>,
    name: Option<String>,
    tool_call_id: Option<String>,
    tool_calls: Option<Vec<CallRow>>,
    reasoning_content: Option<String>,
    extra: Option<String>,
}

/// One session, ready for the columns.
#[derive(Debug)]
struct Row {
    /// `None`: the record had no `messages` array (the key, if any, is in `others`).
    messages: Option<Vec<Option<MsgRow>>>,
    /// Every other top-level key, in record order.
    others: Map<String, Value>,
    bare: bool,
}

/// Type of a top-level column besides `messages` and `extra`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Float,
    Text,
    Json,
}

impl Kind {
    fn of(v: &Value) -> Kind {
        match v {
            Value::Bool(_) => Kind::Bool,
            Value::Number(n) if n.is_i64() => Kind::Int,
            Value::Number(n) if n.is_f64() => Kind::Float,
            Value::String(_) => Kind::Text,
            _ => Kind::Json,
        }
    }

    fn data_type(self) -> DataType {
        match self {
            Kind::Bool => DataType::Boolean,
            Kind::Int => DataType::Int64,
            Kind::Float => DataType::Float64,
            Kind::Text | Kind::Json => DataType::Utf8,
        }
    }
}

/// The file being written, once the schema is known.
struct Open {
    writer: ArrowWriter<AtomicFile>,
    schema: SchemaRef,
    columns: Vec<(String, Kind)>,
}

/// Writes OpenAI session records as Parquet rows.
pub struct ParquetWriter {
    path: PathBuf,
    /// The file until the first row group fixes the schema.
    file: Option<AtomicFile>,
    open: Option<Open>,
    rows: Vec<Row>,
    bytes: usize,
    written: u64,
}

impl ParquetWriter {
    /// Starts `path` (under a temporary name until [`ParquetWriter::finish`]).
    pub fn create(path: &Path) -> anyhow::Result<ParquetWriter> {
        Ok(ParquetWriter {
            path: path.to_path_buf(),
            file: Some(AtomicFile::create(path)?),
            open: None,
            rows: Vec::new(),
            bytes: 0,
            written: 0,
        })
    }

    /// Adds one session record (`{"messages": [...], ...}` or a bare array of messages).
    pub fn write(&mut self, session: &Value) -> anyhow::Result<()> {
        let (row, bytes) = to_row(session).map_err(|e| {
            anyhow!("{}: row {}: {e}", self.path.display(), self.written + self.rows.len() as u64)
        })?;
        self.rows.push(row);
        self.bytes += bytes;
        if self.rows.len() >= ROW_GROUP_ROWS || self.bytes >= ROW_GROUP_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> anyhow::Result<()> {
        let rows = std::mem::take(&mut self.rows);
        self.bytes = 0;
        if self.open.is_none() {
            let file = self.file.take().context("Parquet writer already closed")?;
            let columns = decide_columns(&rows);
            let schema = schema_for(&columns);
            let props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
                .set_created_by(format!("compactor {}", env!("CARGO_PKG_VERSION")))
                .set_key_value_metadata(Some(vec![KeyValue::new(
                    SCHEMA_KEY.to_string(),
                    SCHEMA_VALUE.to_string(),
                )]))
                .set_max_row_group_row_count(None)
                .build();
            let writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(props))
                .with_context(|| {
                    format!("{}: cannot start the Parquet file", self.path.display())
                })?;
            self.open = Some(Open { writer, schema, columns });
        }
        let Some(open) = self.open.as_mut() else { bail!("Parquet writer is not open") };
        if rows.is_empty() {
            return Ok(());
        }
        let batch = build_batch(&open.schema, &open.columns, &rows)
            .map_err(|e| anyhow!("{}: {e}", self.path.display()))?;
        open.writer
            .write(&batch)
            .and_then(|()| open.writer.flush())
            .with_context(|| format!("{}: cannot write a row group", self.path.display()))?;
        self.written += rows.len() as u64;
        Ok(())
    }

    /// Writes the last row group and the footer, and moves the file into place.
    pub fn finish(mut self) -> anyhow::Result<()> {
        self.flush()?;
        let Some(open) = self.open.take() else { bail!("Parquet writer is not open") };
        let file = open
            .writer
            .into_inner()
            .with_context(|| format!("{}: cannot finish the Parquet file", self.path.display()))?;
        file.commit()
    }
}

/// The trailing column of `compact --to arrow-ipc` output: each row's `--report` line.
pub const REPORT_COLUMN: &str = "compactor_report";

/// Builds record batches of session records in the documented schema, with a
/// schema fixed in advance from the schema the rows were read with (an Arrow
/// IPC stream's schema must be known before its first batch, and an engine
/// such as Spark declares it before it sees any row).
///
/// The columns: `messages`; every input column but `messages`, `extra` and
/// [`REPORT_COLUMN`], plus `compaction`, sorted by name, typed as the
/// [`ParquetWriter`] would type them (`bool`, `int64`, `float64`, `utf8`, or
/// JSON text for `compaction`, `tools`, columns our schema marks as JSON and
/// every other Arrow type); `extra`; and [`REPORT_COLUMN`] (JSON text). A
/// value that does not fit its column goes to `extra`, as in Parquet, so the
/// rows read back are the records written.
#[derive(Debug)]
pub struct BatchEncoder {
    /// The schema without the report column.
    data: SchemaRef,
    /// The full output schema.
    schema: SchemaRef,
    columns: Vec<(String, Kind)>,
}

impl BatchEncoder {
    /// The encoder for rows read from `input` (with `messages_column` as
    /// `--messages-column`; `ours` as for [`BatchDecoder::new`]).
    pub fn for_input(input: &Schema, messages_column: Option<&str>, ours: bool) -> BatchEncoder {
        let messages = messages_column.unwrap_or("messages");
        let mut columns: Vec<(String, Kind)> = input
            .fields()
            .iter()
            .filter(|f| {
                let name = f.name().as_str();
                name != messages
                    && name != "messages"
                    && name != EXTRA_COLUMN
                    && name != REPORT_COLUMN
            })
            .map(|f| {
                let json =
                    ours && f.metadata().get(ENCODING_KEY).map(String::as_str) == Some("json");
                let kind = if json || f.name() == "compaction" || f.name() == "tools" {
                    Kind::Json
                } else {
                    match f.data_type() {
                        DataType::Boolean => Kind::Bool,
                        DataType::Int8
                        | DataType::Int16
                        | DataType::Int32
                        | DataType::Int64
                        | DataType::UInt8
                        | DataType::UInt16
                        | DataType::UInt32
                        | DataType::UInt64 => Kind::Int,
                        DataType::Float16 | DataType::Float32 | DataType::Float64 => Kind::Float,
                        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Kind::Text,
                        _ => Kind::Json,
                    }
                };
                (f.name().clone(), kind)
            })
            .collect();
        if !columns.iter().any(|(name, _)| name == "compaction") {
            columns.push(("compaction".to_string(), Kind::Json));
        }
        columns.sort_by(|a, b| a.0.cmp(&b.0));
        let data = schema_for(&columns);
        let mut fields: Vec<FieldRef> = data.fields().iter().cloned().collect();
        fields.push(Arc::new(
            Field::new(REPORT_COLUMN, DataType::Utf8, true).with_metadata(encoding("report")),
        ));
        let metadata = HashMap::from([(SCHEMA_KEY.to_string(), SCHEMA_VALUE.to_string())]);
        let schema = Arc::new(Schema::new_with_metadata(fields, metadata));
        BatchEncoder { data, schema, columns }
    }

    /// The output schema (marked `compactor:schema = openai-sessions/1`).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// One batch of `records` (OpenAI session records), each with its report line.
    pub fn encode(&self, records: &[Value], reports: &[String]) -> Result<RecordBatch, String> {
        let rows = records
            .iter()
            .enumerate()
            .map(|(i, v)| to_row(v).map(|r| r.0).map_err(|e| format!("row {i}: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        let data = build_batch(&self.data, &self.columns, &rows)?;
        let mut arrays: Vec<ArrayRef> = data.columns().to_vec();
        arrays.push(utf8(reports.iter().map(|r| Some(r.as_str())))?);
        RecordBatch::try_new(Arc::clone(&self.schema), arrays).map_err(|e| e.to_string())
    }
}

/// Splits a session record into a row, with its approximate text size.
fn to_row(v: &Value) -> Result<(Row, usize), String> {
    let mut bytes = 0;
    match v {
        Value::Array(items) => {
            let messages = items.iter().map(|m| message_row(m, &mut bytes)).collect();
            Ok((Row { messages: Some(messages), others: Map::new(), bare: true }, bytes))
        }
        Value::Object(map) => {
            let mut others = Map::new();
            let mut messages = None;
            for (k, val) in map {
                match (k.as_str(), val) {
                    ("messages", Value::Array(items)) => {
                        messages = Some(items.iter().map(|m| message_row(m, &mut bytes)).collect());
                    }
                    _ => {
                        bytes += json_size(val) + k.len();
                        others.insert(k.clone(), val.clone());
                    }
                }
            }
            Ok((Row { messages, others, bare: false }, bytes))
        }
        other => Err(format!(
            "a Parquet row holds an OpenAI session (an object or an array of messages), not {}",
            match other {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                _ => "a string",
            }
        )),
    }
}

/// Approximate size of `v` as JSON text (for row-group sizing only).
fn json_size(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 2,
        Value::Array(a) => a.iter().map(json_size).sum::<usize>() + a.len() + 2,
        Value::Object(m) => m.iter().map(|(k, v)| k.len() + 4 + json_size(v)).sum::<usize>() + 2,
        _ => 8,
    }
}

fn to_json_text(v: &Value) -> String {
    // Serializing a `Value` cannot fail (its keys are strings).
    serde_json::to_string(v).unwrap_or_default()
}

/// Splits a message into the struct's fields; `None` for a null message.
fn message_row(m: &Value, bytes: &mut usize) -> Option<MsgRow> {
    let map = match m {
        Value::Null => return None,
        Value::Object(map) => map,
        other => {
            *bytes += json_size(other);
            return Some(MsgRow { extra: Some(to_json_text(other)), ..MsgRow::default() });
        }
    };
    let mut row = MsgRow::default();
    let mut extra = Map::new();
    for (k, v) in map {
        *bytes += k.len() + json_size(v);
        let fits = match (k.as_str(), v) {
            ("role", Value::String(s)) => set(&mut row.role, s),
            ("content", Value::String(s)) => set(&mut row.content, s),
            ("content", Value::Array(_)) => {
                row.content_parts = Some(to_json_text(v));
                true
            }
            ("name", Value::String(s)) => set(&mut row.name, s),
            ("tool_call_id", Value::String(s)) => set(&mut row.tool_call_id, s),
            ("reasoning_content", Value::String(s)) => set(&mut row.reasoning_content, s),
            ("tool_calls", Value::Array(calls)) => {
                match calls.iter().map(call_row).collect::<Option<Vec<_>>>() {
                    Some(c) => {
                        row.tool_calls = Some(c);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        };
        if !fits {
            extra.insert(k.clone(), v.clone());
        }
    }
    if !extra.is_empty() {
        row.extra = Some(to_json_text(&Value::Object(extra)));
    }
    Some(row)
}

fn set(slot: &mut Option<String>, s: &str) -> bool {
    *slot = Some(s.to_string());
    true
}

/// A tool call in the typed struct, or `None` when it has anything the struct
/// cannot give back exactly (then the message's whole `tool_calls` goes to `extra`).
fn call_row(v: &Value) -> Option<CallRow> {
    let mut call = CallRow::default();
    for (k, v) in v.as_object()? {
        match (k.as_str(), v) {
            ("id", Value::String(s)) => call.id = Some(s.clone()),
            ("type", Value::String(s)) => call.kind = Some(s.clone()),
            ("function", Value::Object(f)) => {
                let (mut name, mut arguments) = (None, None);
                for (fk, fv) in f {
                    match (fk.as_str(), fv) {
                        ("name", Value::String(s)) => name = Some(s.clone()),
                        ("arguments", Value::String(s)) => arguments = Some(s.clone()),
                        _ => return None,
                    }
                }
                call.function = Some((name, arguments));
            }
            _ => return None,
        }
    }
    Some(call)
}

/// Columns for the other top-level keys, sorted by name, typed from `rows`.
fn decide_columns(rows: &[Row]) -> Vec<(String, Kind)> {
    let keys: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.others.keys().map(String::as_str))
        .filter(|k| *k != "messages" && *k != EXTRA_COLUMN)
        .collect();
    keys.into_iter()
        .map(|key| {
            let kind = if key == "compaction" || key == "tools" {
                Kind::Json
            } else {
                let mut kinds = rows.iter().filter_map(|r| r.others.get(key)).map(Kind::of);
                let first = kinds.next().unwrap_or(Kind::Json);
                if kinds.all(|k| k == first) { first } else { Kind::Json }
            };
            (key.to_string(), kind)
        })
        .collect()
}

fn encoding(value: &str) -> HashMap<String, String> {
    HashMap::from([(ENCODING_KEY.to_string(), value.to_string())])
}

fn utf8_field(name: &str) -> FieldRef {
    Arc::new(Field::new(name, DataType::Utf8, true))
}

fn function_fields() -> Fields {
    Fields::from(vec![utf8_field("name"), utf8_field("arguments")])
}

fn tool_call_fields() -> Fields {
    Fields::from(vec![
        utf8_field("id"),
        utf8_field("type"),
        Arc::new(Field::new("function", DataType::Struct(function_fields()), true)),
    ])
}

fn tool_call_item() -> FieldRef {
    Arc::new(Field::new("item", DataType::Struct(tool_call_fields()), true))
}

fn message_fields() -> Fields {
    Fields::from(vec![
        utf8_field("role"),
        utf8_field("content"),
        utf8_field("content_parts"),
        utf8_field("name"),
        utf8_field("tool_call_id"),
        Arc::new(Field::new("tool_calls", DataType::List(tool_call_item()), true)),
        utf8_field("reasoning_content"),
        utf8_field("extra"),
    ])
}

fn message_item() -> FieldRef {
    Arc::new(Field::new("item", DataType::Struct(message_fields()), true))
}

/// The documented schema for these columns.
fn schema_for(columns: &[(String, Kind)]) -> SchemaRef {
    let mut fields = vec![
        Field::new("messages", DataType::List(message_item()), true)
            .with_metadata(encoding("messages")),
    ];
    for (name, kind) in columns {
        let f = Field::new(name, kind.data_type(), true);
        fields.push(if *kind == Kind::Json { f.with_metadata(encoding("json")) } else { f });
    }
    fields.push(Field::new(EXTRA_COLUMN, DataType::Utf8, true).with_metadata(encoding("extra")));
    Arc::new(Schema::new(fields))
}

/// A nullable `utf8` array; refuses more text than its 32-bit offsets hold.
fn utf8<'a>(values: impl Iterator<Item = Option<&'a str>>) -> Result<ArrayRef, String> {
    let values: Vec<Option<&str>> = values.collect();
    let total: usize = values.iter().flatten().map(|s| s.len()).sum();
    if i32::try_from(total).is_err() {
        return Err(format!("{total} bytes of text in one column of one row group (max 2 GiB)"));
    }
    Ok(Arc::new(StringArray::from(values)))
}

fn nulls(valid: Vec<bool>) -> Option<NullBuffer> {
    if valid.iter().all(|v| *v) { None } else { Some(NullBuffer::from(valid)) }
}

fn offsets(lengths: impl Iterator<Item = usize>) -> Result<OffsetBuffer<i32>, String> {
    let mut out = vec![0i32];
    let mut total = 0usize;
    for n in lengths {
        total += n;
        out.push(i32::try_from(total).map_err(|_| "too many list elements in one row group")?);
    }
    Ok(OffsetBuffer::new(ScalarBuffer::from(out)))
}

fn tool_calls_array(msgs: &[Option<&MsgRow>]) -> Result<ArrayRef, String> {
    let lists: Vec<Option<&Vec<CallRow>>> =
        msgs.iter().map(|m| m.and_then(|m| m.tool_calls.as_ref())).collect();
    let calls: Vec<&CallRow> = lists.iter().flatten().flat_map(|c| c.iter()).collect();
    let fns: Vec<Option<&(Option<String>, Option<String>)>> =
        calls.iter().map(|c| c.function.as_ref()).collect();
    let function = StructArray::try_new(
        function_fields(),
        vec![
            utf8(fns.iter().map(|f| f.and_then(|f| f.0.as_deref())))?,
            utf8(fns.iter().map(|f| f.and_then(|f| f.1.as_deref())))?,
        ],
        nulls(fns.iter().map(Option::is_some).collect()),
    )
    .map_err(|e| e.to_string())?;
    let call = StructArray::try_new(
        tool_call_fields(),
        vec![
            utf8(calls.iter().map(|c| c.id.as_deref()))?,
            utf8(calls.iter().map(|c| c.kind.as_deref()))?,
            Arc::new(function),
        ],
        None,
    )
    .map_err(|e| e.to_string())?;
    let list = ListArray::try_new(
        tool_call_item(),
        offsets(lists.iter().map(|l| l.map_or(0, Vec::len)))?,
        Arc::new(call),
        nulls(lists.iter().map(Option::is_some).collect()),
    )
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(list))
}

fn messages_array(rows: &[Row]) -> Result<ArrayRef, String> {
    let msgs: Vec<Option<&MsgRow>> =
        rows.iter().flat_map(|r| r.messages.iter().flatten()).map(Option::as_ref).collect();
    let field = |f: fn(&MsgRow) -> Option<&str>| utf8(msgs.iter().map(|m| m.and_then(f)));
    let structs = StructArray::try_new(
        message_fields(),
        vec![
            field(|m| m.role.as_deref())?,
            field(|m| m.content.as_deref())?,
            field(|m| m.content_parts.as_deref())?,
            field(|m| m.name.as_deref())?,
            field(|m| m.tool_call_id.as_deref())?,
            tool_calls_array(&msgs)?,
            field(|m| m.reasoning_content.as_deref())?,
            field(|m| m.extra.as_deref())?,
        ],
        nulls(msgs.iter().map(Option::is_some).collect()),
    )
    .map_err(|e| e.to_string())?;
    let list = ListArray::try_new(
        message_item(),
        offsets(rows.iter().map(|r| r.messages.as_ref().map_or(0, Vec::len)))?,
        Arc::new(structs),
        nulls(rows.iter().map(|r| r.messages.is_some()).collect()),
    )
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(list))
}

/// Returns true if and only if `v` can be stored in a column of `kind` and read back equal.
fn fits(kind: Kind, v: &Value) -> bool {
    kind == Kind::Json || Kind::of(v) == kind
}

fn build_batch(
    schema: &SchemaRef,
    columns: &[(String, Kind)],
    rows: &[Row],
) -> Result<RecordBatch, String> {
    let mut arrays = vec![messages_array(rows)?];
    // Keys of each row that no column takes, in record order.
    let mut leftovers: Vec<Map<String, Value>> = Vec::with_capacity(rows.len());
    for row in rows {
        let mut rest = Map::new();
        for (k, v) in &row.others {
            let taken = columns.iter().any(|(name, kind)| name == k && fits(*kind, v));
            if !taken {
                rest.insert(k.clone(), v.clone());
            }
        }
        leftovers.push(rest);
    }
    for (name, kind) in columns {
        let cells: Vec<Option<&Value>> =
            rows.iter().map(|r| r.others.get(name).filter(|v| fits(*kind, v))).collect();
        let array: ArrayRef = match kind {
            Kind::Bool => Arc::new(BooleanArray::from(
                cells.iter().map(|c| c.and_then(Value::as_bool)).collect::<Vec<_>>(),
            )),
            Kind::Int => Arc::new(Int64Array::from(
                cells.iter().map(|c| c.and_then(Value::as_i64)).collect::<Vec<_>>(),
            )),
            Kind::Float => Arc::new(Float64Array::from(
                cells.iter().map(|c| c.and_then(Value::as_f64)).collect::<Vec<_>>(),
            )),
            Kind::Text => utf8(cells.iter().map(|c| c.and_then(Value::as_str)))?,
            Kind::Json => {
                let texts: Vec<Option<String>> =
                    cells.iter().map(|c| c.map(to_json_text)).collect();
                utf8(texts.iter().map(Option::as_deref))?
            }
        };
        arrays.push(array);
    }
    let extras: Vec<Option<String>> = rows
        .iter()
        .zip(&leftovers)
        .map(|(row, rest)| {
            if row.bare {
                Some(to_json_text(&Value::String(BARE_ARRAY.into())))
            } else if rest.is_empty() {
                None
            } else {
                Some(to_json_text(&Value::Object(rest.clone())))
            }
        })
        .collect();
    arrays.push(utf8(extras.iter().map(Option::as_deref))?);
    RecordBatch::try_new(Arc::clone(schema), arrays).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn roundtrip(records: &[Value]) -> Vec<Value> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.parquet");
        let mut w = ParquetWriter::create(&p).unwrap();
        for r in records {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
        read_all(&p, None)
    }

    fn read_all(p: &Path, column: Option<&str>) -> Vec<Value> {
        let mut r = ParquetReader::open(p, "t.parquet", column, None).unwrap();
        let mut out = Vec::new();
        while let Some(rec) = r.next_record() {
            match rec.unwrap().payload {
                Payload::Value(v) => out.push(v),
                Payload::Line(l) | Payload::Parsed { line: l, .. } => {
                    panic!("line {}", String::from_utf8_lossy(&l))
                }
            }
        }
        out
    }

    #[test]
    fn awkward_messages_round_trip_exactly() {
        let records = vec![
            json!({"id": "a", "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ]},
                {"role": "assistant", "tool_calls": [
                    {"id": "c2", "function": {"name": "g", "arguments": {"x": 1}}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok"}]},
                {"role": 5, "name": null, "content": 3, "weird": {"a": [1, 2.5]}},
                {"tool_calls": [], "reasoning_content": "think", "content": []},
                null,
                "just a string",
                {}
            ], "score": 1.5, "n": 3, "ok": true}),
            json!([{"role": "user", "content": "bare"}]),
            json!({"messages": "not an array", "extra": {"x": 1}, "n": "three", "score": 2}),
            json!({"messages": [], "late": [1], "score": null}),
        ];
        assert_eq!(roundtrip(&records), records);
    }

    #[test]
    fn later_rows_with_new_keys_or_types_keep_them_in_extra() {
        let mut records: Vec<Value> = (0..ROW_GROUP_ROWS)
            .map(|i| json!({"messages": [{"role": "user", "content": format!("m{i}")}], "n": i}))
            .collect();
        records.push(json!({"messages": [], "n": "not a number", "new": {"k": [true]}}));
        records.push(json!({"messages": [], "n": u64::MAX}));
        let back = roundtrip(&records);
        assert_eq!(back.len(), records.len());
        assert_eq!(back, records);
    }

    #[test]
    fn empty_output_is_a_valid_table() {
        assert!(roundtrip(&[]).is_empty());
    }

    #[test]
    fn non_session_rows_are_refused_with_the_row_number() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.parquet");
        let mut w = ParquetWriter::create(&p).unwrap();
        w.write(&json!({"messages": []})).unwrap();
        let err = w.write(&json!(42)).unwrap_err().to_string();
        assert!(err.ends_with("row 1: a Parquet row holds an OpenAI session (an object or an array of messages), not a number"), "{err}");
        drop(w);
        assert!(!p.exists(), "a dropped writer leaves no file");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn schema_is_sorted_and_typed_from_the_first_row_group() {
        let rows: Vec<Row> = [
            json!({"messages": [], "z": 1, "a": "x", "tools": [], "f": 1.5, "mixed": 1, "b": true}),
            json!({"messages": [], "z": 2, "a": "y", "f": 2.5, "mixed": "s", "extra": 1}),
        ]
        .iter()
        .map(|v| to_row(v).unwrap().0)
        .collect();
        let cols = decide_columns(&rows);
        assert_eq!(
            cols,
            [
                ("a".to_string(), Kind::Text),
                ("b".to_string(), Kind::Bool),
                ("f".to_string(), Kind::Float),
                ("mixed".to_string(), Kind::Json),
                ("tools".to_string(), Kind::Json),
                ("z".to_string(), Kind::Int),
            ]
        );
    }

    #[test]
    fn time_and_binary_formats() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(19_844), "2024-05-01");
        assert_eq!(date(-1), "1969-12-31");
        assert_eq!(
            timestamp(1_714_564_800_250, &TimeUnit::Millisecond, true),
            "2024-05-01T12:00:00.250Z"
        );
        assert_eq!(timestamp(-1, &TimeUnit::Second, false), "1969-12-31T23:59:59");
        assert_eq!(time_of_day(3_723_000_001, &TimeUnit::Microsecond), "01:02:03.000001");
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn arrow_values_convert_generically() {
        use arrow_array::builder::{MapBuilder, StringBuilder as SB, UInt8Builder};
        use arrow_array::types::UInt8Type as U8;
        use arrow_array::{
            BinaryViewArray, DictionaryArray, DurationSecondArray, FixedSizeListArray,
            Float16Array, Int32Array, LargeListArray, LargeStringArray, NullArray, StringViewArray,
            Time32SecondArray, UInt64Array,
        };
        let one = |a: &dyn Array, i: usize| to_json(a, i, false).unwrap();
        assert_eq!(one(&NullArray::new(2), 1), Value::Null);
        assert_eq!(one(&UInt64Array::from(vec![u64::MAX]), 0), json!(u64::MAX));
        assert_eq!(one(&Float64Array::from(vec![f64::NAN]), 0), Value::Null);
        let half = Float16Array::from(vec![Some(
            <Float16Type as arrow_array::ArrowPrimitiveType>::Native::from_f32(1.5),
        )]);
        assert_eq!(one(&half, 0), json!(1.5));
        assert_eq!(one(&Time32SecondArray::from(vec![3723]), 0), json!("01:02:03"));
        assert_eq!(one(&DurationSecondArray::from(vec![-5]), 0), json!(-5));
        assert_eq!(one(&LargeStringArray::from(vec!["big"]), 0), json!("big"));
        assert_eq!(one(&StringViewArray::from(vec!["view"]), 0), json!("view"));
        assert_eq!(one(&BinaryViewArray::from(vec![&b"fo"[..]]), 0), json!("Zm8="));
        let large = LargeListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), None]),
            None,
        ]);
        assert_eq!(one(&large, 0), json!([1, null]));
        assert_eq!(one(&large, 1), Value::Null);
        let fixed = FixedSizeListArray::from_iter_primitive::<Int32Type, _, _>(
            vec![Some(vec![Some(1), Some(2)]), Some(vec![Some(3), Some(4)])],
            2,
        );
        assert_eq!(one(&fixed, 1), json!([3, 4]));
        let dict: DictionaryArray<U8> = vec!["a", "b", "a"].into_iter().collect();
        assert_eq!(one(&dict, 2), json!("a"));
        let mut map = MapBuilder::new(None, UInt8Builder::new(), SB::new());
        map.keys().append_value(7);
        map.values().append_value("seven");
        map.append(true).unwrap();
        assert_eq!(one(&map.finish(), 0), json!([{"key": 7, "value": "seven"}]));
        let ints = Int32Array::from(vec![1]);
        assert_eq!(one(&ints, 0), json!(1));

        // A type without a JSON form is refused when the file is opened, naming the column.
        let schema = Arc::new(Schema::new(vec![
            Field::new("messages", DataType::List(message_item()), true),
            Field::new("span", DataType::Interval(arrow_schema::IntervalUnit::DayTime), true),
        ]));
        let err = plan(&schema, None, false).unwrap_err();
        assert_eq!(err, "column `span`: type Interval(DayTime) has no JSON form here");
        let schema = Arc::new(Schema::new(vec![Field::new("messages", DataType::Utf8, true)]));
        let err = plan(&schema, None, false).unwrap_err();
        assert!(err.ends_with("if it holds JSON text, pass --messages-column messages"), "{err}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.parquet");
        std::fs::write(&p, b"PAR1 this is not parquet at all PAR1").unwrap();
        let err = ParquetReader::open(&p, "bad.parquet", None, None).err().unwrap();
        assert!(err.message.starts_with("not a readable Parquet file: "), "{}", err.message);
        assert_eq!(err.source.to_string(), "bad.parquet");
    }
}
