//! The one fixed Arrow schema of the session tables written here (see the
//! module doc of [`super`]): its fields only. The reader needs it to know
//! our tables by their shape; the mapping of sessions to rows of it lives on
//! the dialect side (`formats::parquet`).

use super::{
    ENCODING_KEY, METADATA_COLUMN, SCHEMA_KEY, SCHEMA_VALUE, TOOLS_INFERRED_COLUMN, TRAIN_FIELD,
};
use arrow_schema::extension::Json;
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::Arc;

/// Field metadata marking a column's encoding (`compactor:encoding = value`).
pub fn encoding(value: &str) -> HashMap<String, String> {
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

/// A struct of two utf8 fields `a` and `b`.
pub fn pair_fields(a: &str, b: &str) -> Fields {
    Fields::from(vec![utf8_field(a), utf8_field(b)])
}

/// The `function` struct of a call: `name`, and `arguments` as JSON.
pub fn function_fields() -> Fields {
    Fields::from(vec![utf8_field("name"), Arc::new(json_field("arguments"))])
}

/// The (nullable) item field of a list of structs of `fields`.
pub fn struct_item(fields: Fields) -> FieldRef {
    Arc::new(Field::new("item", DataType::Struct(fields), true))
}

/// A nullable field `name` of lists of structs of `fields`.
fn list_field(name: &str, fields: Fields) -> FieldRef {
    Arc::new(Field::new(name, DataType::List(struct_item(fields)), true))
}

/// The struct of a content part: `type`, `text`, `image_url: {url, detail}`.
pub fn part_fields() -> Fields {
    Fields::from(vec![
        utf8_field("type"),
        utf8_field("text"),
        Arc::new(Field::new("image_url", DataType::Struct(pair_fields("url", "detail")), true)),
    ])
}

/// The struct of a tool call: `id`, `type`, `function`, `extra` (JSON).
pub fn tool_call_fields() -> Fields {
    Fields::from(vec![
        utf8_field("id"),
        utf8_field("type"),
        Arc::new(Field::new("function", DataType::Struct(function_fields()), true)),
        Arc::new(json_field("extra")),
    ])
}

/// The struct of a message (see the module doc of [`super`]).
pub fn message_fields() -> Fields {
    Fields::from(vec![
        utf8_field("role"),
        utf8_field("content"),
        list_field("parts", part_fields()),
        utf8_field("name"),
        utf8_field("tool_call_id"),
        list_field("tool_calls", tool_call_fields()),
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
