//! Rows of session records ([`super::rows`]) as Arrow record batches of the
//! one fixed schema: [`SessionRows`] for `--to parquet` (the
//! [`TableRows`] a [`ParquetWriter`](crate::io::parquet::ParquetWriter)
//! writes) and [`BatchEncoder`] for `compact --to arrow-ipc`.

use super::rows::{CallRow, MsgRow, PairStrings, PartRow, Row, to_row};
use crate::io::parquet::schema::{
    encoding, function_fields, message_fields, pair_fields, part_fields, schema, struct_item,
    tool_call_fields,
};
use crate::io::parquet::{REPORT_COLUMN, TableRows};
use arrow_array::{ArrayRef, BooleanArray, ListArray, RecordBatch, StringArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use serde_json::Value;
use std::sync::Arc;

/// Session records buffered as rows of the one fixed schema: what
/// `--to parquet` hands its [`ParquetWriter`](crate::io::parquet::ParquetWriter).
#[derive(Debug)]
pub struct SessionRows {
    schema: SchemaRef,
    rows: Vec<Row>,
}

impl Default for SessionRows {
    fn default() -> SessionRows {
        SessionRows::new()
    }
}

impl SessionRows {
    pub fn new() -> SessionRows {
        SessionRows { schema: schema(), rows: Vec::new() }
    }
}

impl TableRows for SessionRows {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// Adds one session record (`{"messages": [...], ...}` or a bare array
    /// of messages).
    fn push(&mut self, record: &Value, id: &str, source: &str) -> Result<usize, String> {
        let (row, bytes) = to_row(record, id, source)?;
        self.rows.push(row);
        Ok(bytes)
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn take_batch(&mut self) -> Result<RecordBatch, String> {
        let rows = std::mem::take(&mut self.rows);
        build_batch(&self.schema, &rows)
    }
}

/// Builds record batches of session records in the Parquet schema ([`schema`](crate::io::parquet::schema::schema))
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
    /// session id and source (as for [`SessionRows`]) and its report line.
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

/// One child of the item struct of a message's list (parts, tool calls):
/// where an item holds its value, in the order of the struct's fields.
enum Child<T> {
    /// A utf8 field (plain or JSON text).
    Text(fn(&T) -> Option<&str>),
    /// A struct field of two utf8 fields (whose fields are given).
    Pair(fn() -> Fields, fn(&T) -> Option<&PairStrings>),
}

/// The children of [`part_fields`], in its order.
fn part_children() -> [Child<PartRow>; 3] {
    [
        Child::Text(|p| p.kind.as_deref()),
        Child::Text(|p| p.text.as_deref()),
        Child::Pair(|| pair_fields("url", "detail"), |p| p.image_url.as_ref()),
    ]
}

/// The children of [`tool_call_fields`], in its order.
fn tool_call_children() -> [Child<CallRow>; 4] {
    [
        Child::Text(|c| c.id.as_deref()),
        Child::Text(|c| c.kind.as_deref()),
        Child::Pair(function_fields, |c| c.function.as_ref()),
        Child::Text(|c| c.extra.as_deref()),
    ]
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
/// list): `list` picks a message's items, whose struct is `fields`, filled
/// by `children` (one per field, in order).
fn message_lists<T>(
    msgs: &[Option<&MsgRow>],
    list: fn(&MsgRow) -> Option<&Vec<T>>,
    fields: Fields,
    children: &[Child<T>],
) -> Result<ArrayRef, String> {
    let lists: Vec<Option<&Vec<T>>> = msgs.iter().map(|m| m.and_then(list)).collect();
    let items: Vec<&T> = lists.iter().flatten().flat_map(|l| l.iter()).collect();
    let column = |child: &Child<T>| match child {
        Child::Text(get) => utf8(items.iter().map(|item| get(item))),
        Child::Pair(pair, get) => {
            let pairs: Vec<_> = items.iter().map(|item| get(item)).collect();
            pair_array(pair(), &pairs)
        }
    };
    let columns = children.iter().map(column).collect::<Result<Vec<_>, _>>()?;
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
            message_lists(&msgs, |m| m.parts.as_ref(), part_fields(), &part_children())?,
            field(|m| m.name.as_deref())?,
            field(|m| m.tool_call_id.as_deref())?,
            message_lists(
                &msgs,
                |m| m.tool_calls.as_ref(),
                tool_call_fields(),
                &tool_call_children(),
            )?,
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
