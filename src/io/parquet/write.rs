//! Writing session records as Parquet rows in the one fixed schema (see the
//! module doc of [`super`]), and the same rows as Arrow record batches for
//! `compact --to arrow-ipc` ([`BatchEncoder`]).

use super::{
    BARE_ARRAY, ENCODING_KEY, METADATA_COLUMN, NO_CONTENT, ROW_GROUP_BYTES, ROW_GROUP_ROWS,
    SCHEMA_KEY, SCHEMA_VALUE, TOOLS_INFERRED_COLUMN, TRAIN_FIELD,
};
use crate::io::atomic::AtomicFile;
use anyhow::{Context, anyhow};
use arrow_array::{ArrayRef, BooleanArray, ListArray, RecordBatch, StringArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::extension::Json;
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The trailing column of `compact --to arrow-ipc` output: each row's `--report` line.
pub const REPORT_COLUMN: &str = "compactor_report";
/// What joins the texts of a content array's parts in the `content` field.
const PART_SEPARATOR: &str = "\n";

/// The two optional strings of a [`Pair`].
type PairStrings = (Option<String>, Option<String>);
/// A `{name, arguments}` or `{url, detail}` pair of optional strings.
type Pair = Option<PairStrings>;

/// One content part of a multimodal message.
#[derive(Debug, Default, PartialEq)]
struct PartRow {
    kind: Option<String>,
    text: Option<String>,
    image_url: Pair,
}

/// One tool call: the typed fields, and the JSON object of what they cannot hold.
#[derive(Debug, Default, PartialEq)]
struct CallRow {
    id: Option<String>,
    kind: Option<String>,
    function: Pair,
    extra: Option<String>,
}

/// One message, split into the struct's fields.
#[derive(Debug, Default, PartialEq)]
struct MsgRow {
    role: Option<String>,
    content: Option<String>,
    parts: Option<Vec<PartRow>>,
    name: Option<String>,
    tool_call_id: Option<String>,
    tool_calls: Option<Vec<CallRow>>,
    reasoning_content: Option<String>,
    /// The loss flag of a training row (`train`).
    train: Option<bool>,
    extra: Option<String>,
}

/// One session, ready for the columns.
#[derive(Debug)]
struct Row {
    id: String,
    source: String,
    /// `None`: the record had no `messages` array (the key, if any, is in `metadata`).
    messages: Option<Vec<Option<MsgRow>>>,
    tools: Option<String>,
    tools_inferred: Option<bool>,
    compaction: Option<String>,
    metadata: Option<String>,
}

/// Writes OpenAI session records as Parquet rows.
pub struct ParquetWriter {
    path: PathBuf,
    writer: ArrowWriter<AtomicFile>,
    schema: SchemaRef,
    rows: Vec<Row>,
    bytes: usize,
    written: u64,
}

impl ParquetWriter {
    /// Starts `path` (under a temporary name until [`ParquetWriter::finish`]).
    pub fn create(path: &Path) -> anyhow::Result<ParquetWriter> {
        let file = AtomicFile::create(path)?;
        let schema = schema();
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
            .with_context(|| format!("{}: cannot start the Parquet file", path.display()))?;
        Ok(ParquetWriter {
            path: path.to_path_buf(),
            writer,
            schema,
            rows: Vec::new(),
            bytes: 0,
            written: 0,
        })
    }

    /// Adds one session record (`{"messages": [...], ...}` or a bare array of
    /// messages), with its session id and its source (`path:line`).
    pub fn write(&mut self, session: &Value, id: &str, source: &str) -> anyhow::Result<()> {
        let (row, bytes) = to_row(session, id, source).map_err(|e| {
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
        if rows.is_empty() {
            return Ok(());
        }
        let batch = build_batch(&self.schema, &rows)
            .map_err(|e| anyhow!("{}: {e}", self.path.display()))?;
        self.writer
            .write(&batch)
            .and_then(|()| self.writer.flush())
            .with_context(|| format!("{}: cannot write a row group", self.path.display()))?;
        self.written += rows.len() as u64;
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

/// Builds record batches of session records in the Parquet schema ([`schema`])
/// plus a trailing [`REPORT_COLUMN`] (each row's `--report` line): what
/// `compact --to arrow-ipc` writes, whatever its input's columns, so every
/// worker of a Spark or Ray job writes the same schema, and the same as the
/// Parquet files of a local run.
#[derive(Debug)]
pub struct BatchEncoder {
    /// The schema without the report column.
    data: SchemaRef,
    /// The full output schema.
    schema: SchemaRef,
}

impl Default for BatchEncoder {
    fn default() -> BatchEncoder {
        BatchEncoder::new()
    }
}

impl BatchEncoder {
    pub fn new() -> BatchEncoder {
        let data = schema();
        let mut fields: Vec<FieldRef> = data.fields().iter().cloned().collect();
        fields.push(Arc::new(
            Field::new(REPORT_COLUMN, DataType::Utf8, true).with_metadata(encoding("report")),
        ));
        let schema = Arc::new(Schema::new_with_metadata(fields, data.metadata().clone()));
        BatchEncoder { data, schema }
    }

    /// The output schema (marked `compactor:schema = openai-sessions/3`).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// One batch of `records` (OpenAI session records), each with its
    /// session id and source (as for [`ParquetWriter::write`]) and its report line.
    pub fn encode(
        &self,
        records: &[(Value, String, String)],
        reports: &[String],
    ) -> Result<RecordBatch, String> {
        let rows = records
            .iter()
            .enumerate()
            .map(|(i, (v, id, source))| {
                to_row(v, id, source).map(|r| r.0).map_err(|e| format!("row {i}: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let data = build_batch(&self.data, &rows)?;
        let mut arrays: Vec<ArrayRef> = data.columns().to_vec();
        arrays.push(utf8(reports.iter().map(|r| Some(r.as_str())))?);
        RecordBatch::try_new(Arc::clone(&self.schema), arrays).map_err(|e| e.to_string())
    }
}

/// Splits a session record into a row, with its approximate text size.
fn to_row(v: &Value, id: &str, source: &str) -> Result<(Row, usize), String> {
    let mut bytes = id.len() + source.len();
    let mut row = Row {
        id: id.to_string(),
        source: source.to_string(),
        messages: None,
        tools: None,
        tools_inferred: None,
        compaction: None,
        metadata: None,
    };
    match v {
        Value::Array(items) => {
            row.messages = Some(items.iter().map(|m| message_row(m, &mut bytes)).collect());
            row.metadata = Some(to_json_text(&Value::String(BARE_ARRAY.into())));
        }
        Value::Object(map) => {
            let mut metadata = Map::new();
            for (k, val) in map {
                match (k.as_str(), val) {
                    ("messages", Value::Array(items)) => {
                        row.messages =
                            Some(items.iter().map(|m| message_row(m, &mut bytes)).collect());
                        continue;
                    }
                    // The `id` column gives it back.
                    ("id", Value::String(s)) if s == id => continue,
                    ("tools", v) if !v.is_null() => row.tools = Some(to_json_text(v)),
                    (TOOLS_INFERRED_COLUMN, Value::Bool(b)) => row.tools_inferred = Some(*b),
                    ("compaction", v) if !v.is_null() => row.compaction = Some(to_json_text(v)),
                    _ => {
                        metadata.insert(k.clone(), val.clone());
                    }
                }
                bytes += json_size(val) + k.len();
            }
            if !metadata.is_empty() {
                row.metadata = Some(to_json_text(&Value::Object(metadata)));
            }
        }
        other => {
            return Err(format!(
                "a Parquet row holds an OpenAI session (an object or an array of messages), not {}",
                match other {
                    Value::Null => "null",
                    Value::Bool(_) => "a boolean",
                    Value::Number(_) => "a number",
                    _ => "a string",
                }
            ));
        }
    }
    Ok((row, bytes))
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

/// A JSON object's text, `None` when it is empty.
fn object_text(map: Map<String, Value>) -> Option<String> {
    (!map.is_empty()).then(|| to_json_text(&Value::Object(map)))
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
    let mut extra = untyped(map, |k, v| {
        *bytes += k.len() + json_size(v);
        match (k, v) {
            ("role", Value::String(s)) => set(&mut row.role, s),
            ("content", Value::String(s)) => set(&mut row.content, s),
            // A null field reads back as `content: null` (see `NO_CONTENT`).
            ("content", Value::Null) => true,
            ("content", Value::Array(parts)) => {
                // The text is always in `content`; the array itself is typed
                // only when it is multimodal and of the typed shape.
                let texts: Vec<&str> =
                    parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
                if !texts.is_empty() {
                    row.content = Some(texts.join(PART_SEPARATOR));
                }
                let image = parts.iter().any(|p| p.get("type") == Some(&Value::from("image_url")));
                row.parts = if image {
                    parts.iter().map(part_row).collect::<Option<Vec<_>>>()
                } else {
                    None
                };
                row.parts.is_some()
            }
            ("name", Value::String(s)) => set(&mut row.name, s),
            ("tool_call_id", Value::String(s)) => set(&mut row.tool_call_id, s),
            ("reasoning_content", Value::String(s)) => set(&mut row.reasoning_content, s),
            (TRAIN_FIELD, Value::Bool(b)) => {
                row.train = Some(*b);
                true
            }
            ("tool_calls", Value::Array(calls)) => {
                row.tool_calls = Some(calls.iter().map(call_row).collect());
                true
            }
            _ => false,
        }
    });
    if !map.contains_key("content") {
        extra.insert(NO_CONTENT.into(), Value::Bool(true));
    }
    row.extra = object_text(extra);
    Some(row)
}

/// The entries of `map` that `typed` does not take (it returns false for
/// them), for the row's `extra` object.
fn untyped(
    map: &Map<String, Value>,
    mut typed: impl FnMut(&str, &Value) -> bool,
) -> Map<String, Value> {
    let mut extra = Map::new();
    for (k, v) in map {
        if !typed(k, v) {
            extra.insert(k.clone(), v.clone());
        }
    }
    extra
}

fn set(slot: &mut Option<String>, s: &str) -> bool {
    *slot = Some(s.to_string());
    true
}

/// A part of the typed shape (`{type, text?, image_url?: {url?, detail?}}`,
/// strings only), or `None` when it has anything else.
fn part_row(v: &Value) -> Option<PartRow> {
    let mut part = PartRow::default();
    for (k, v) in v.as_object()? {
        match (k.as_str(), v) {
            ("type", Value::String(s)) => part.kind = Some(s.clone()),
            ("text", Value::String(s)) => part.text = Some(s.clone()),
            ("image_url", Value::Object(u)) => {
                let (mut url, mut detail) = (None, None);
                for (uk, uv) in u {
                    match (uk.as_str(), uv) {
                        ("url", Value::String(s)) => url = Some(s.clone()),
                        ("detail", Value::String(s)) => detail = Some(s.clone()),
                        _ => return None,
                    }
                }
                part.image_url = Some((url, detail));
            }
            _ => return None,
        }
    }
    Some(part)
}

/// A tool call in the typed struct. Whatever the typed fields cannot give
/// back exactly goes into the call's own `extra` (a JSON object merged over
/// them on reading), and the name and arguments are typed all the same
/// (arguments that are not a string as their JSON text), so every call reads
/// as a call.
fn call_row(v: &Value) -> CallRow {
    let Some(map) = v.as_object() else {
        return CallRow { extra: Some(to_json_text(v)), ..CallRow::default() };
    };
    let mut call = CallRow::default();
    let extra = untyped(map, |k, v| match (k, v) {
        ("id", Value::String(s)) => set(&mut call.id, s),
        ("type", Value::String(s)) => set(&mut call.kind, s),
        ("function", Value::Object(f)) => {
            let (mut name, mut arguments, mut exact) = (None, None, true);
            for (fk, fv) in f {
                match (fk.as_str(), fv) {
                    ("name", Value::String(s)) => name = Some(s.clone()),
                    // The column is JSON (`arrow.json`): text that is not JSON
                    // (free-form input kept by --keep-source-fields) rides in `extra`.
                    ("arguments", Value::String(s)) if is_json(s) => arguments = Some(s.clone()),
                    ("arguments", other) if !other.is_null() && !other.is_string() => {
                        arguments = Some(to_json_text(other));
                        exact = false;
                    }
                    _ => exact = false,
                }
            }
            call.function = Some((name, arguments));
            exact
        }
        _ => false,
    });
    call.extra = object_text(extra);
    call
}

/// Returns true if and only if `s` is one JSON text (what an `arrow.json` cell holds).
fn is_json(s: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok()
}

fn encoding(value: &str) -> HashMap<String, String> {
    HashMap::from([(ENCODING_KEY.to_string(), value.to_string())])
}

fn utf8_field(name: &str) -> FieldRef {
    Arc::new(Field::new(name, DataType::Utf8, true))
}

/// A nullable utf8 field of the Arrow canonical JSON extension type
/// (`arrow.json`; Parquet's JSON logical type): `datasets` decodes its cells
/// to Python objects, DuckDB reads them as `JSON`.
fn json_field(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true).with_extension_type(Json::default())
}

fn pair_fields(a: &str, b: &str) -> Fields {
    Fields::from(vec![utf8_field(a), utf8_field(b)])
}

/// The `function` struct of a call: `name`, and `arguments` as JSON.
fn function_fields() -> Fields {
    Fields::from(vec![utf8_field("name"), Arc::new(json_field("arguments"))])
}

/// The (nullable) item field of a list of structs of `fields`.
fn struct_item(fields: Fields) -> FieldRef {
    Arc::new(Field::new("item", DataType::Struct(fields), true))
}

/// A nullable field `name` of lists of structs of `fields`.
fn list_field(name: &str, fields: Fields) -> FieldRef {
    Arc::new(Field::new(name, DataType::List(struct_item(fields)), true))
}

/// One child of the item struct of a message's list (parts, tool calls):
/// its field, and where an item holds its value.
enum Child<T> {
    /// A utf8 field.
    Text(&'static str, fn(&T) -> Option<&str>),
    /// A utf8 field of JSON text (`arrow.json`).
    JsonText(&'static str, fn(&T) -> Option<&str>),
    /// A struct field (its name, then its two utf8 fields' names).
    Pair(&'static str, [&'static str; 2], fn(&T) -> Option<&PairStrings>),
    /// The `function` struct of a call: `name`, `arguments` (JSON).
    Function(fn(&T) -> Option<&PairStrings>),
}

fn part_children() -> [Child<PartRow>; 3] {
    [
        Child::Text("type", |p| p.kind.as_deref()),
        Child::Text("text", |p| p.text.as_deref()),
        Child::Pair("image_url", ["url", "detail"], |p| p.image_url.as_ref()),
    ]
}

fn tool_call_children() -> [Child<CallRow>; 4] {
    [
        Child::Text("id", |c| c.id.as_deref()),
        Child::Text("type", |c| c.kind.as_deref()),
        Child::Function(|c| c.function.as_ref()),
        Child::JsonText("extra", |c| c.extra.as_deref()),
    ]
}

/// The fields of a struct of `children`.
fn child_fields<T>(children: &[Child<T>]) -> Fields {
    let field = |child: &Child<T>| match child {
        Child::Text(name, _) => utf8_field(name),
        Child::JsonText(name, _) => Arc::new(json_field(name)),
        Child::Pair(name, [a, b], _) => {
            Arc::new(Field::new(*name, DataType::Struct(pair_fields(a, b)), true))
        }
        Child::Function(_) => {
            Arc::new(Field::new("function", DataType::Struct(function_fields()), true))
        }
    };
    children.iter().map(field).collect()
}

fn message_fields() -> Fields {
    Fields::from(vec![
        utf8_field("role"),
        utf8_field("content"),
        list_field("parts", child_fields(&part_children())),
        utf8_field("name"),
        utf8_field("tool_call_id"),
        list_field("tool_calls", child_fields(&tool_call_children())),
        utf8_field("reasoning_content"),
        Arc::new(Field::new(TRAIN_FIELD, DataType::Boolean, true)),
        Arc::new(json_field("extra")),
    ])
}

/// A JSON column marked with our encoding too (the extension's metadata and ours).
fn json_column(name: &str, ours: &str) -> Field {
    let field = json_field(name);
    let mut metadata = field.metadata().clone();
    metadata.extend(encoding(ours));
    field.with_metadata(metadata)
}

/// The one schema of every Parquet file written here (see the module doc),
/// marked `compactor:schema = openai-sessions/3`.
pub fn schema() -> SchemaRef {
    let fields = vec![
        Field::new("id", DataType::Utf8, true),
        Field::new("source", DataType::Utf8, true).with_metadata(encoding("source")),
        Field::new("messages", DataType::List(struct_item(message_fields())), true)
            .with_metadata(encoding("messages")),
        json_column("tools", "json"),
        Field::new(TOOLS_INFERRED_COLUMN, DataType::Boolean, true),
        json_column("compaction", "json"),
        json_column(METADATA_COLUMN, "extra"),
    ];
    let metadata = HashMap::from([(SCHEMA_KEY.to_string(), SCHEMA_VALUE.to_string())]);
    Arc::new(Schema::new_with_metadata(fields, metadata))
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

/// A struct array of `fields` whose children are `columns` (null where `nulls` says).
fn struct_array(
    fields: Fields,
    columns: Vec<ArrayRef>,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef, String> {
    let array = StructArray::try_new(fields, columns, nulls).map_err(|e| e.to_string())?;
    Ok(Arc::new(array))
}

/// A struct array of optional string pairs.
fn pair_array(fields: Fields, pairs: &[Option<&PairStrings>]) -> Result<ArrayRef, String> {
    struct_array(
        fields,
        vec![
            utf8(pairs.iter().map(|p| p.and_then(|p| p.0.as_deref())))?,
            utf8(pairs.iter().map(|p| p.and_then(|p| p.1.as_deref())))?,
        ],
        nulls(pairs.iter().map(Option::is_some).collect()),
    )
}

/// A list array of `item` over `lists` (a null list for `None`), whose items are `values`.
fn list_array<T>(
    item: FieldRef,
    lists: &[Option<&Vec<T>>],
    values: ArrayRef,
) -> Result<ArrayRef, String> {
    let list = ListArray::try_new(
        item,
        offsets(lists.iter().map(|l| l.map_or(0, Vec::len)))?,
        values,
        nulls(lists.iter().map(Option::is_some).collect()),
    )
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(list))
}

/// A list column of one list per message (null for a missing message or
/// list): `list` picks a message's items, whose struct is of `children`.
fn message_lists<T>(
    msgs: &[Option<&MsgRow>],
    list: fn(&MsgRow) -> Option<&Vec<T>>,
    children: &[Child<T>],
) -> Result<ArrayRef, String> {
    let lists: Vec<Option<&Vec<T>>> = msgs.iter().map(|m| m.and_then(list)).collect();
    let items: Vec<&T> = lists.iter().flatten().flat_map(|l| l.iter()).collect();
    let column = |child: &Child<T>| match child {
        Child::Text(_, get) | Child::JsonText(_, get) => utf8(items.iter().map(|item| get(item))),
        Child::Pair(_, [a, b], get) => {
            let pairs: Vec<_> = items.iter().map(|item| get(item)).collect();
            pair_array(pair_fields(a, b), &pairs)
        }
        Child::Function(get) => {
            let pairs: Vec<_> = items.iter().map(|item| get(item)).collect();
            pair_array(function_fields(), &pairs)
        }
    };
    let columns = children.iter().map(column).collect::<Result<Vec<_>, _>>()?;
    let fields = child_fields(children);
    let values = struct_array(fields.clone(), columns, None)?;
    list_array(struct_item(fields), &lists, values)
}

fn messages_array(rows: &[Row]) -> Result<ArrayRef, String> {
    let msgs: Vec<Option<&MsgRow>> =
        rows.iter().flat_map(|r| r.messages.iter().flatten()).map(Option::as_ref).collect();
    let field = |f: fn(&MsgRow) -> Option<&str>| utf8(msgs.iter().map(|m| m.and_then(f)));
    let structs = struct_array(
        message_fields(),
        vec![
            field(|m| m.role.as_deref())?,
            field(|m| m.content.as_deref())?,
            message_lists(&msgs, |m| m.parts.as_ref(), &part_children())?,
            field(|m| m.name.as_deref())?,
            field(|m| m.tool_call_id.as_deref())?,
            message_lists(&msgs, |m| m.tool_calls.as_ref(), &tool_call_children())?,
            field(|m| m.reasoning_content.as_deref())?,
            Arc::new(BooleanArray::from(
                msgs.iter().map(|m| m.and_then(|m| m.train)).collect::<Vec<_>>(),
            )),
            field(|m| m.extra.as_deref())?,
        ],
        nulls(msgs.iter().map(Option::is_some).collect()),
    )?;
    let lists: Vec<Option<&Vec<Option<MsgRow>>>> =
        rows.iter().map(|r| r.messages.as_ref()).collect();
    list_array(struct_item(message_fields()), &lists, structs)
}

fn build_batch(schema: &SchemaRef, rows: &[Row]) -> Result<RecordBatch, String> {
    let arrays = vec![
        utf8(rows.iter().map(|r| Some(r.id.as_str())))?,
        utf8(rows.iter().map(|r| Some(r.source.as_str())))?,
        messages_array(rows)?,
        utf8(rows.iter().map(|r| r.tools.as_deref()))?,
        Arc::new(BooleanArray::from(rows.iter().map(|r| r.tools_inferred).collect::<Vec<_>>())),
        utf8(rows.iter().map(|r| r.compaction.as_deref()))?,
        utf8(rows.iter().map(|r| r.metadata.as_deref()))?,
    ];
    RecordBatch::try_new(Arc::clone(schema), arrays).map_err(|e| e.to_string())
}
