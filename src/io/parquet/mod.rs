//! Parquet container: a table whose rows are sessions.
//!
//! ## Reading ([`ParquetReader`], in `read.rs`)
//! Each row becomes one OpenAI-shaped record, `{"messages": [...], <column>: <value>...}`,
//! streamed batch by batch ([`READ_BATCH_ROWS`] rows; the whole file is never loaded).
//! - `messages` is a `list<struct>` column (the Hugging Face chat convention:
//!   `{role, content}`, maybe `tool_calls`, `tool_call_id`, `name`, ...; `content`
//!   may itself be a `list<struct>` of parts). A struct field that is null is
//!   left out of the message (Arrow gives every struct the union of all keys).
//! - `--messages-column NAME`: a string column holding each row's messages as a
//!   JSON array instead. A cell that is not JSON becomes a rejected record
//!   (its text is what the rejects file gets); the next rows are still read.
//! - Every other column passes through under its own name, converted to JSON
//!   as `arrow_json.rs` says (null → `null`, numbers, strings, base64 binary,
//!   exact decimal strings, ISO 8601 dates and times, lists, structs, maps).
//!   Intervals, unions and run-end encoded columns have no JSON form: opening
//!   such a file is an error naming the file, the column and its type.
//! - A file without a usable messages column, or whose footer cannot be read,
//!   is an error naming the file and what is wrong; nothing here panics on bad
//!   input (the parquet crate is called under `catch_unwind` as a last guard).
//!
//! ## Writing: one fixed schema
//! The schema's fields are in `schema.rs` ([`schema()`]); how a session
//! record becomes a row of it is the dialect side's (`formats::parquet`,
//! handed to [`ParquetWriter`] as a [`TableRows`]); this folder writes the
//! file (`write.rs`). Every file `--to parquet` writes has the same schema, whatever its sessions
//! (so a directory of outputs is one table for `datasets`, Polars, DuckDB and
//! `pyarrow.dataset`). A row per session record; columns, in this order (every
//! field nullable, every text `utf8`):
//!
//! | column | Arrow type | holds |
//! |---|---|---|
//! | `id` | `utf8` | the session's id, as the report has it: the record's own id (`id`, Claude Code's `sessionId`, Codex's session id, ...) when it has one, else its source `path:line` |
//! | `source` | `utf8` | where the record was read: `path:line` (`path[row]` for a Parquet input, `path` for a file-per-session dialect's first record) |
//! | `messages` | `list<struct<...>>` (below) | the messages, one struct each |
//! | `tools` | `utf8`, JSON | the request's `tools` array, when it has one |
//! | `compaction` | `utf8`, JSON | the `compaction` object, on compacted sessions only |
//! | `metadata` | `utf8`, JSON | every other top-level key, as one JSON object (only `--keep-source-fields` output has any) |
//!
//! `compaction` is JSON text rather than a struct: its fields grow with the
//! policy, and a struct would make the schema change with them (SQL reads it
//! as `json_extract(compaction, '$.tokens_after')`, Polars with
//! `str.json_path_match`).
//!
//! Message struct fields: `role`; `content` (the text: the string content, or
//! the `text` of every part that has one joined with `"\n"` when content is an
//! array, so text is never only inside parts); `parts:
//! list<struct<type, text, image_url: struct<url, detail>>>` (only on
//! multimodal messages: content an array with an image part, every part of
//! that shape; else null); `name`; `tool_call_id`; `tool_calls:
//! list<struct<id, type, function: struct<name, arguments>, extra>>`;
//! `reasoning_content`; `extra`. A call's `extra` is a JSON object of that
//! call's keys the typed fields cannot hold exactly (current Claude Code's
//! `caller`, an `arguments` that is not a string, ...): every call stays a
//! call, with its name and arguments typed (arguments as JSON text when not a
//! string). A message's `extra` is a JSON object of the message's keys the
//! typed fields cannot hold exactly: keys outside the struct, a content array
//! that `parts` cannot hold, a non-string role; and `"$no_content": true`
//! for a message without a `content` key (a null `content` field is
//! `content: null`, which every call-only assistant message has; any other
//! null field is an absent key). Clean output (without
//! `--keep-source-fields`) has no message `extra` at all. A message that is not an object is null fields
//! with `extra` holding its JSON value; a null message is a null struct.
//!
//! Column and field metadata mark the encodings (`compactor:encoding`: `json`
//! on `tools` and `compaction`, `extra` on `metadata`, `source` on `source`,
//! `messages` on `messages`), and the file metadata says `compactor:schema =
//! openai-sessions/2`.
//!
//! ## What a round trip keeps
//! Reading our own files (`openai-sessions/2`, and `openai-sessions/1` files
//! of earlier versions; a file of the fixed schema is known by its shape too,
//! since Spark's and Ray's writers drop the metadata) undoes the encoding (the
//! columns here, the messages by the [`Restore`] the reader is handed, the dialect
//! side's `formats::parquet::RESTORE`): each record read back equals the
//! one written as a JSON value, with two documented exceptions: a record that
//! had no `id` key gains one (the `id` column), and the `source` column is not
//! a key of the record (it names where the row came from; `--source-column
//! source` reads it as the session's source). Typed fields win first, then a
//! call's or message's `extra` keys override them, so every value comes back
//! exactly (`content` from `parts` when set). Key order may change: `messages`,
//! `id`, `tools`, `compaction`, then `metadata`'s keys; inside a message
//! role, content, name, tool_call_id, tool_calls, reasoning_content, then the
//! rest. A session that was a bare array of messages has the JSON string
//! `"bare_array"` in `metadata` and is read back as a bare array.
//!
//! ## Writing: the bytes
//! Rows are buffered and written as a row group every [`ROW_GROUP_ROWS`] rows or
//! [`ROW_GROUP_BYTES`] of text, whichever comes first (bounded memory). zstd
//! level 1. No clocks anywhere: `created_by` is `compactor <version>` and the
//! only key-value metadata are `compactor:schema` and Arrow's own schema, so the
//! same rows always give the same bytes. The file appears under its final name
//! only at [`ParquetWriter::finish`] (an [`AtomicFile`](super::atomic::AtomicFile)).

mod arrow_json;
mod read;
pub mod schema;
mod write;

pub use read::{BatchDecoder, ParquetReader, quiet_guarded_panics};

/// How the messages of our own tables are read back: the dialect side's inverse
/// of its row mapping (`formats::parquet::RESTORE`, the one there is), given one
/// row's `messages` cell as Arrow's JSON and whether the file is of the one fixed
/// schema. Readers here are handed it (in [`ReadOptions`](crate::io::ReadOptions))
/// rather than importing it, so that `io` imports nothing from `formats`; a reader
/// cannot be opened without one.
#[derive(Clone, Copy)]
pub struct Restore(pub fn(serde_json::Value, bool) -> Result<serde_json::Value, String>);

impl std::fmt::Debug for Restore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Restore")
    }
}
pub use schema::schema;
pub use write::{ParquetWriter, TableRows};

/// The trailing column of `compact --to arrow-ipc` output: each row's `--report` line.
pub const REPORT_COLUMN: &str = "compactor_report";

/// Rows per record batch when reading: sessions are large, so batches are small.
pub const READ_BATCH_ROWS: usize = 64;
/// Rows per row group when writing.
pub const ROW_GROUP_ROWS: usize = 1000;
/// Approximate text bytes per row group when writing (keeps memory bounded and
/// every `utf8` column of a row group well under its 2 GiB offset limit).
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// File key-value metadata key (and value) marking a table written here.
pub const SCHEMA_KEY: &str = "compactor:schema";
pub const SCHEMA_VALUE: &str = "openai-sessions/3";
/// The fixed schema before training rows (no `train`, no `tools_inferred`,
/// JSON as plain `utf8`), still read.
pub const SCHEMA_VALUE_V2: &str = "openai-sessions/2";
/// The schema of earlier versions (columns decided by the first row group),
/// still read.
pub const SCHEMA_VALUE_V1: &str = "openai-sessions/1";
/// A message's loss flag (a `boolean` field of the message struct).
pub const TRAIN_FIELD: &str = crate::training::TRAIN_KEY;
/// The `boolean` column saying whether `tools` holds an inferred schema.
pub const TOOLS_INFERRED_COLUMN: &str = crate::training::TOOLS_INFERRED_KEY;
/// Field metadata key telling how a column's text is to be read.
pub const ENCODING_KEY: &str = "compactor:encoding";
/// The column of each row's other top-level keys (v1 files: `extra`).
pub const METADATA_COLUMN: &str = "metadata";
/// What the `metadata` cell holds for a session that was a bare array.
pub const BARE_ARRAY: &str = "bare_array";
/// The key of a message's `extra` saying the message had no `content` key
/// (a null `content` field is `content: null`, which Chat Completions has on
/// every assistant message that only calls tools).
pub const NO_CONTENT: &str = "$no_content";

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Spark and Ray name list items `element`, not `item`: still our schema.
    #[test]
    fn the_fixed_schema_is_known_by_its_shape() {
        use arrow_schema::{DataType, Field, Schema};
        fn renamed(dt: &DataType) -> DataType {
            match dt {
                DataType::List(f) => {
                    DataType::List(Arc::new(Field::new("element", renamed(f.data_type()), true)))
                }
                DataType::Struct(fields) => DataType::Struct(
                    fields
                        .iter()
                        .map(|f| Field::new(f.name(), renamed(f.data_type()), true))
                        .collect(),
                ),
                other => other.clone(),
            }
        }
        let fields: Vec<Field> = schema()
            .fields()
            .iter()
            .map(|f| Field::new(f.name(), renamed(f.data_type()), true))
            .collect();
        let engine = Schema::new(fields.clone());
        assert!(read::is_fixed_schema(&engine));
        assert!(BatchDecoder::is_ours(&engine));
        let mut more = fields.clone();
        more.push(Field::new(REPORT_COLUMN, DataType::Utf8, true));
        assert!(read::is_fixed_schema(&Schema::new(more)), "our report column is allowed");
        let mut other = fields.clone();
        other.push(Field::new("score", DataType::Float64, true));
        assert!(!read::is_fixed_schema(&Schema::new(other)), "another column is not ours");
        assert!(!read::is_fixed_schema(&Schema::new(fields[..5].to_vec())), "a column missing");
        let mut wrong = fields;
        wrong[0] = Field::new("id", DataType::Int64, true);
        assert!(!read::is_fixed_schema(&Schema::new(wrong)), "another type");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.parquet");
        std::fs::write(&p, b"PAR1 this is not parquet at all PAR1").unwrap();
        let restore = Restore(|v, _| Ok(v));
        let err = ParquetReader::open(&p, "bad.parquet", None, None, restore).err().unwrap();
        assert!(err.message.starts_with("not a readable Parquet file: "), "{}", err.message);
        assert_eq!(err.source.to_string(), "bad.parquet");
    }
}
