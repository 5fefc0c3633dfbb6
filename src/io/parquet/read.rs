//! Reading Parquet tables of sessions (see the module doc of [`super`]).

use super::arrow_json::{string_at, supported, to_json};
use super::{
    BARE_ARRAY, ENCODING_KEY, READ_BATCH_ROWS, REPORT_COLUMN, Restore, SCHEMA_KEY, SCHEMA_VALUE,
    SCHEMA_VALUE_V1, SCHEMA_VALUE_V2, TOOLS_INFERRED_COLUMN, TRAIN_FIELD,
};
use crate::io::{Payload, RawRecord, ReadError};
use crate::model::Source;
use arrow_array::RecordBatch;
use arrow_schema::{DataType, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use serde_json::{Map, Value};
use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;

/// Where each row's messages come from.
#[derive(Debug)]
enum MessagesFrom {
    /// A `list<struct>` column; `ours` when of our schema (written by `formats::parquet`),
    /// `fixed` when in the one schema of `openai-sessions/3` (or `/2`).
    List { col: usize, ours: bool, fixed: bool },
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
    /// Our `source` column: where the row came from, not part of the session.
    Source,
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
    /// How our tables' messages are read back (the dialect side's).
    restore: Restore,
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
        restore: Restore,
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
            kv.iter().any(|k| k.key == SCHEMA_KEY && k.value.as_deref().is_some_and(is_our_schema))
        });
        let schema = Arc::clone(builder.schema());
        // A table rewritten by pyarrow (or Ray) keeps our field metadata only.
        let ours = ours || BatchDecoder::is_ours(&schema);
        let decoder = BatchDecoder::new(&schema, messages_column, source_column, ours, restore)
            .map_err(fail)?;
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
    /// our writers write (`--to parquet`, `--to arrow-ipc`: the rows of
    /// `formats::parquet`), whose encodings are undone (the messages' by `restore`).
    pub fn new(
        schema: &SchemaRef,
        messages_column: Option<&str>,
        source_column: Option<&str>,
        ours: bool,
        restore: Restore,
    ) -> Result<BatchDecoder, String> {
        let (messages, mut columns) = plan(schema, messages_column, ours)?;
        // Our report column (`compact --to arrow-ipc`) is output, never input,
        // and our `source` column is provenance, not a key of the session.
        columns.retain(|c| c.decode != Decode::Report && c.decode != Decode::Source);
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
        Ok(BatchDecoder { messages, columns, ours, restore, source })
    }

    /// Returns true if and only if the schema is ours: marked by the schema's
    /// `compactor:schema` metadata, or (what survives a trip through pyarrow,
    /// which keeps field metadata but not Parquet's file metadata) a `messages`
    /// field marked `compactor:encoding = messages`, or the one fixed schema
    /// by its shape (what survives Spark's and Ray's writers, which keep
    /// neither field metadata nor the names of list items).
    pub fn is_ours(schema: &Schema) -> bool {
        schema.metadata().get(SCHEMA_KEY).is_some_and(|v| is_our_schema(v))
            || schema.fields().iter().any(|f| {
                f.name() == "messages"
                    && f.metadata().get(ENCODING_KEY).is_some_and(|v| v == "messages")
            })
            || is_fixed_schema(schema)
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
            MessagesFrom::List { col, ours, fixed } => {
                let array = batch.column(*col);
                let v = to_json(array.as_ref(), i, true)
                    .map_err(|e| format!("column `messages`: {e}"))?;
                if *ours { (self.restore.0)(v, *fixed)? } else { v }
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
                Decode::Report | Decode::Source => {}
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

/// Returns true if and only if `schema` is the one schema the writer writes
/// ([`super::schema`]) or wrote before training rows (`openai-sessions/2`:
/// the same without `train` and `tools_inferred`), perhaps with our report
/// column, whatever its field metadata, list item names and string flavours:
/// a table of ours after Spark's or Ray's Parquet writer, which drop field
/// metadata, so that its columns are decoded by name.
pub(super) fn is_fixed_schema(schema: &Schema) -> bool {
    let now = super::schema();
    has_shape(schema, &now) || has_shape(schema, &without_training(&now))
}

/// `schema` without the fields training rows added (`openai-sessions/2`).
fn without_training(schema: &Schema) -> Schema {
    let keep = |f: &&arrow_schema::FieldRef| f.name() != TOOLS_INFERRED_COLUMN;
    let fields: Vec<arrow_schema::FieldRef> = schema
        .fields()
        .iter()
        .filter(keep)
        .map(|f| match f.data_type() {
            DataType::List(item) if f.name() == "messages" => {
                let DataType::Struct(children) = item.data_type() else { return Arc::clone(f) };
                let children: arrow_schema::Fields =
                    children.iter().filter(|c| c.name() != TRAIN_FIELD).cloned().collect();
                let item = item.as_ref().clone().with_data_type(DataType::Struct(children));
                Arc::new(f.as_ref().clone().with_data_type(DataType::List(Arc::new(item))))
            }
            _ => Arc::clone(f),
        })
        .collect();
    Schema::new(fields)
}

/// Returns true if and only if `schema`'s fields are those of `ours` (by
/// name and [`same_shape`]), the report column aside.
fn has_shape(schema: &Schema, ours: &Schema) -> bool {
    let mut found = 0;
    for f in schema.fields() {
        if f.name() == REPORT_COLUMN {
            continue;
        }
        match ours.field_with_name(f.name()) {
            Ok(o) if same_shape(f.data_type(), o.data_type()) => found += 1,
            _ => return false,
        }
    }
    found == ours.fields().len()
}

/// Returns true if and only if `a` has the shape of `b` (one of ours):
/// the same struct field names, any list item name, any string flavour.
fn same_shape(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View, DataType::Utf8) => true,
        (DataType::List(x) | DataType::LargeList(x), DataType::List(y)) => {
            same_shape(x.data_type(), y.data_type())
        }
        (DataType::Struct(x), DataType::Struct(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(p, q)| p.name() == q.name() && same_shape(p.data_type(), q.data_type()))
        }
        _ => a == b,
    }
}

/// Returns true if and only if `v` names a schema our writer writes or wrote.
fn is_our_schema(v: &str) -> bool {
    v == SCHEMA_VALUE || v == SCHEMA_VALUE_V2 || v == SCHEMA_VALUE_V1
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
    let fixed = is_fixed_schema(schema);
    let ours = ours || fixed;
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
            let marked = schema.field(col).metadata().get(ENCODING_KEY).map(String::as_str)
                == Some("messages");
            let ours = fixed || (ours && marked);
            MessagesFrom::List { col, ours, fixed }
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
        // The fixed schema is decoded by name: its field metadata may be gone.
        let by_name = match field.name().as_str() {
            "tools" | "compaction" => Some("json"),
            "metadata" => Some("extra"),
            "source" => Some("source"),
            REPORT_COLUMN => Some("report"),
            _ => None,
        };
        let marked = field.metadata().get(ENCODING_KEY).map(String::as_str);
        let decode = match if fixed { by_name } else { marked } {
            Some("json") if ours && text => Decode::Json,
            Some("extra") if ours && text => Decode::Extra,
            Some("report") if ours && text => Decode::Report,
            Some("source") if ours && text => Decode::Source,
            _ => Decode::Plain,
        };
        columns.push(Column { index, name: field.name().clone(), decode });
    }
    Ok((messages, columns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::Field;

    #[test]
    fn columns_without_a_json_form_are_refused_naming_them() {
        let item = Field::new(
            "item",
            DataType::Struct(vec![Field::new("role", DataType::Utf8, true)].into()),
            true,
        );
        let message_item = || Arc::new(item.clone());
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
}
