//! Flat rows (JSON objects) as a Parquet table, for `report --parquet`.
//!
//! Columns come from the first row's flattened keys (`anchors.prs.found`);
//! a column is Int64, Float64, Boolean or Utf8 when every row's value fits,
//! else Utf8 holding JSON. Written zstd-compressed through an atomic file.

use crate::io::atomic::AtomicFile;
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::Arc;

fn flatten(prefix: &str, v: &Value, out: &mut Map<String, Value>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, x, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// Writes `rows` to `path` as Parquet.
pub fn write_rows(path: &Path, rows: &[Value]) -> anyhow::Result<()> {
    let flat: Vec<Map<String, Value>> = rows
        .iter()
        .map(|r| {
            let mut m = Map::new();
            flatten("", r, &mut m);
            m
        })
        .collect();
    let keys: Vec<String> = flat.first().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for k in &keys {
        let vals: Vec<Option<&Value>> =
            flat.iter().map(|m| m.get(k).filter(|v| !v.is_null())).collect();
        let all = |f: fn(&Value) -> bool| vals.iter().all(|v| v.is_none_or(f));
        let (ty, col): (DataType, ArrayRef) = if all(|v| v.is_i64() || v.is_u64()) {
            (
                DataType::Int64,
                Arc::new(Int64Array::from(
                    vals.iter().map(|v| v.and_then(Value::as_i64)).collect::<Vec<_>>(),
                )),
            )
        } else if all(Value::is_number) {
            (
                DataType::Float64,
                Arc::new(Float64Array::from(
                    vals.iter().map(|v| v.and_then(Value::as_f64)).collect::<Vec<_>>(),
                )),
            )
        } else if all(Value::is_boolean) {
            (
                DataType::Boolean,
                Arc::new(BooleanArray::from(
                    vals.iter().map(|v| v.and_then(Value::as_bool)).collect::<Vec<_>>(),
                )),
            )
        } else {
            let strings: Vec<Option<String>> = vals
                .iter()
                .map(|v| {
                    v.map(|x| match x {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                })
                .collect();
            (DataType::Utf8, Arc::new(StringArray::from(strings)))
        };
        fields.push(Field::new(k, ty, true));
        columns.push(col);
    }
    let schema = Arc::new(Schema::new(fields));
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
        .build();
    let mut file = AtomicFile::create(path)?;
    {
        let mut w = ArrowWriter::try_new(file.file(), schema.clone(), Some(props))?;
        if !columns.is_empty() {
            w.write(&RecordBatch::try_new(schema, columns)?)?;
        }
        w.close()?;
    }
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use serde_json::json;

    #[test]
    fn rows_round_trip_with_types() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.parquet");
        let rows = vec![
            json!({"a": 1, "b": 1.5, "c": true, "d": "x", "e": {"f": 2}, "g": [1]}),
            json!({"a": 2, "b": 2, "c": false, "d": null, "e": {"f": 3}, "g": []}),
        ];
        write_rows(&p, &rows).unwrap();
        let reader =
            ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&p).unwrap()).unwrap();
        let schema = reader.schema().clone();
        let types: Vec<(String, DataType)> =
            schema.fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect();
        assert_eq!(
            types,
            [
                ("a".to_string(), DataType::Int64),
                ("b".to_string(), DataType::Float64),
                ("c".to_string(), DataType::Boolean),
                ("d".to_string(), DataType::Utf8),
                ("e.f".to_string(), DataType::Int64),
                ("g".to_string(), DataType::Utf8)
            ]
        );
        let batches: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
        assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 2);
    }
}
