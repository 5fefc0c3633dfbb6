//! The session mapping's behaviour through a Parquet file: every record
//! written reads back as itself (the reader is `io::parquet`'s).

use super::writer;
use crate::io::Payload;
use crate::io::parquet::{ParquetReader, ROW_GROUP_ROWS, SCHEMA_KEY, schema};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

fn write_all(p: &Path, records: &[Value]) {
    let mut w = writer(p).unwrap();
    for (i, r) in records.iter().enumerate() {
        w.write(r, &format!("s{i}"), &format!("in.jsonl:{}", i + 1)).unwrap();
    }
    w.finish().unwrap();
}

fn roundtrip(records: &[Value]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.parquet");
    write_all(&p, records);
    read_all(&p, None)
}

fn read_all(p: &Path, column: Option<&str>) -> Vec<Value> {
    let mut r = ParquetReader::open(p, "t.parquet", column, None, super::RESTORE).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_record() {
        match rec.unwrap().payload {
            Payload::Value(v) | Payload::Document { value: v, .. } => out.push(v),
            Payload::Line(l) | Payload::Parsed { line: l, .. } => {
                panic!("line {}", String::from_utf8_lossy(&l))
            }
            Payload::Oversized(o) => panic!("{}", o.reason()),
        }
    }
    out
}

#[test]
fn awkward_messages_round_trip_exactly() {
    let records = vec![
        json!({"id": "s0", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"},
                 "caller": {"type": "direct"}}
            ]},
            {"role": "assistant", "tool_calls": [
                {"id": "c2", "function": {"name": "g", "arguments": {"x": 1}}},
                "not a call",
                {"id": 7, "function": {"name": "h", "arguments": "{}", "more": 1}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": [{"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:x", "detail": "low"}}]},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}, "x": 1}]},
            {"role": 5, "name": null, "content": 3, "weird": {"a": [1, 2.5]}},
            {"tool_calls": [], "reasoning_content": "think", "content": []},
            null,
            "just a string",
            {}
        ], "score": 1.5, "tools": [{"type": "function"}], "compaction": {"compacted": true}}),
        json!([{"role": "user", "content": "bare"}]),
        json!({"messages": "not an array", "extra": {"x": 1}, "metadata": 2, "id": 9}),
        json!({"messages": [], "late": [1], "score": null, "tools": null}),
        json!({"messages": [], "id": "own"}),
    ];
    let mut want = records.clone();
    // A record without an `id` key gains its id column (the only addition).
    want[3]["id"] = json!("s3");
    assert_eq!(roundtrip(&records), want);
}

#[test]
fn rows_of_many_row_groups_round_trip() {
    let records: Vec<Value> = (0..ROW_GROUP_ROWS + 2)
        .map(|i| json!({"id": format!("s{i}"), "messages": [{"role": "user", "content": format!("m{i}")}]}))
        .collect();
    assert_eq!(roundtrip(&records), records);
}

#[test]
fn empty_output_is_a_valid_table() {
    assert!(roundtrip(&[]).is_empty());
}

#[test]
fn non_session_rows_are_refused_with_the_row_number() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.parquet");
    let mut w = writer(&p).unwrap();
    w.write(&json!({"messages": []}), "a", "in:1").unwrap();
    let err = w.write(&json!(42), "b", "in:2").unwrap_err().to_string();
    assert!(err.ends_with("row 1: a Parquet row holds an OpenAI session (an object or an array of messages), not a number"), "{err}");
    drop(w);
    assert!(!p.exists(), "a dropped writer leaves no file");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// The typed fields hold what a consumer needs, whatever else the record has:
/// text in `content`, every call a call, unknown call keys in that call's `extra`.
#[test]
fn typed_fields_hold_text_and_calls() {
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.parquet");
    write_all(
        &p,
        &[json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}, "caller": {"type": "direct"}}]}
        ]})],
    );
    let file = std::fs::File::open(&p).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    assert_eq!(builder.schema().as_ref(), schema().as_ref());
    let batch = builder.build().unwrap().next().unwrap().unwrap();
    assert_eq!(batch.column(0).as_string::<i32>().value(0), "s0");
    assert_eq!(batch.column(1).as_string::<i32>().value(0), "in.jsonl:1");
    let messages = batch.column(2).as_list::<i32>().value(0);
    let messages = messages.as_struct();
    let content = messages.column_by_name("content").unwrap().as_string::<i32>();
    assert_eq!(content.value(0), "a\nb");
    let calls = messages.column_by_name("tool_calls").unwrap().as_list::<i32>().value(1);
    let calls = calls.as_struct();
    let function = calls.column_by_name("function").unwrap().as_struct();
    assert_eq!(function.column_by_name("name").unwrap().as_string::<i32>().value(0), "f");
    let extra = calls.column_by_name("extra").unwrap().as_string::<i32>();
    assert_eq!(extra.value(0), r#"{"caller":{"type":"direct"}}"#);
    let msg_extra = messages.column_by_name("extra").unwrap().as_string::<i32>();
    // A call-only assistant message (`content: null`) needs no `extra`.
    assert!(msg_extra.is_null(1));
    // The text-only array is kept exactly, beside its joined text.
    assert_eq!(
        msg_extra.value(0),
        r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#
    );
}

/// Spark's and Ray's writers keep neither field metadata nor list item
/// names (nor, for Spark, the file's key-value metadata): a table of ours
/// rewritten so still reads back as the records written.
#[test]
fn our_schema_without_its_metadata_still_reads_back_exactly() {
    use arrow_schema::{Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let records = vec![
        json!({"id": "s0", "messages": [
            {"role": "user", "content": [{"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": "u"}}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",
                "function": {"name": "f", "arguments": "{}"}, "caller": {"type": "direct"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "ok"}],
         "compaction": {"compacted": true}, "tools": [], "x": 1}),
        json!([{"role": "user", "content": "bare"}]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours.parquet");
    write_all(&ours, &records);
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&ours).unwrap()).unwrap();
    let bare: Vec<Field> = builder
        .schema()
        .fields()
        .iter()
        .map(|f| Field::new(f.name(), f.data_type().clone(), true))
        .collect();
    let bare = Arc::new(Schema::new(bare));
    let engine = dir.path().join("engine.parquet");
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(&engine).unwrap(), bare.clone(), None).unwrap();
    for batch in builder.build().unwrap() {
        let batch = batch.unwrap();
        let cast =
            arrow_array::RecordBatch::try_new(bare.clone(), batch.columns().to_vec()).unwrap();
        w.write(&cast).unwrap();
    }
    w.close().unwrap();
    let engine_schema =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&engine).unwrap())
            .unwrap()
            .schema()
            .clone();
    assert!(engine_schema.fields().iter().all(|f| f.metadata().is_empty()));
    assert!(!engine_schema.metadata().contains_key(SCHEMA_KEY));
    assert_eq!(read_all(&engine, None), read_all(&ours, None));
    assert_eq!(read_all(&engine, None), records);
}
