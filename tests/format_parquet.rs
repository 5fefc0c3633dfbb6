//! Integration tests of the Parquet container (src/io/parquet/): OpenAI
//! sessions to Parquet and back through the binary, the written schema as the
//! parquet crate's own reader sees it, tables written by other tools
//! (Hugging Face style, built here with Arrow builders or by pyarrow in
//! fixtures/parquet/), `--messages-column`, bad files, and byte determinism.

use crate::util::{
    TestDir, compactor, files_under, fixture, json_lines, read_document, run_code, run_ok,
};
use arrow_array::builder::{Float64Builder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Every OpenAI fixture that is a valid session file (bad_lines.jsonl is not).
fn openai_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["openai", "edge"] {
        let files = files_under(&fixture(dir), ".jsonl");
        out.extend(files.into_iter().filter(|p| !p.ends_with("bad_lines.jsonl")));
    }
    assert_eq!(out.len(), 9, "{out:?}");
    out
}

fn read_jsonl(p: &Path) -> Vec<Value> {
    json_lines(&std::fs::read_to_string(p).unwrap())
}

/// `compactor compact INPUT --mode none --to openai -o OUT.jsonl`, parsed.
fn back_to_openai(input: &Path, dir: &TestDir, name: &str) -> Vec<Value> {
    let out = dir.join(name);
    run_ok(
        compactor()
            .args([
                "compact",
                "--mode",
                "none",
                "--to",
                "openai",
                "--keep-source-fields",
                "-q",
                "-o",
            ])
            .arg(&out)
            .arg(input),
    );
    read_jsonl(&out)
}

fn to_parquet(inputs: &[PathBuf], out: &Path, extra: &[&str]) {
    run_ok(
        compactor()
            .args(["compact", "--mode", "none", "--to", "parquet", "--keep-source-fields", "-q"])
            .args(extra)
            .arg("-o")
            .arg(out)
            .args(inputs),
    );
}

/// `got` (read back from Parquet) against `want` (the input): equal, but a
/// record without an `id` key gains one, its source `path:line`.
fn assert_same_sessions(got: &[Value], want: &[Value], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let mut g = g.clone();
        if let (Some(obj), false) = (g.as_object_mut(), w.get("id").is_some()) {
            let id = obj.remove("id");
            let id = id.as_ref().and_then(Value::as_str).unwrap_or_default();
            assert!(id.contains(".jsonl:") || id.contains(".parquet["), "{what} {i}: id {id}");
        }
        assert!(&g == w, "{what}: session {i} differs after Parquet");
    }
}

fn stem(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().split('.').next().unwrap().to_string()
}

#[test]
fn every_fixture_round_trips_through_parquet_per_file_and_as_one_file() {
    let dir = TestDir::new();
    let inputs = openai_fixtures();
    // -o DIR/: one Parquet file per input, named after it.
    let out_dir = dir.join("pq");
    to_parquet(&inputs, Path::new(&format!("{}/", out_dir.display())), &[]);
    let mut all = Vec::new();
    for input in &inputs {
        let want = read_jsonl(input);
        let pq = out_dir.join(format!("{}.parquet", stem(input)));
        assert!(pq.is_file(), "{} was not written", pq.display());
        let got = back_to_openai(&pq, &dir, &format!("{}.back.jsonl", stem(input)));
        assert_same_sessions(&got, &want, &input.display().to_string());
        all.extend(want);
    }
    // -o out.parquet: every session of every input, in input order.
    let one = dir.join("all.parquet");
    to_parquet(&inputs, &one, &[]);
    let got = back_to_openai(&one, &dir, "all.back.jsonl");
    assert_same_sessions(&got, &all, "all.parquet");
    // Parquet to Parquet (`--to same` keeps the container) is lossless too.
    let again = dir.join("again.parquet");
    run_ok(
        compactor()
            .args(["compact", "--mode", "none", "--keep-source-fields", "-q", "-o"])
            .arg(&again)
            .arg(&one),
    );
    assert_same_sessions(&back_to_openai(&again, &dir, "again.jsonl"), &all, "again.parquet");
}

#[test]
fn compacted_sessions_keep_their_compaction_object_in_parquet() {
    let dir = TestDir::new();
    let jsonl = dir.join("c.jsonl");
    let pq = dir.join("c.parquet");
    let args = ["compact", "--window", "32000", "--keep-source-fields", "-q", "-o"];
    run_ok(compactor().args(args).arg(&jsonl).arg(fixture("openai")));
    run_ok(compactor().args(args).arg(&pq).arg(fixture("openai")));
    let want = read_jsonl(&jsonl);
    let compacted = want.iter().filter(|v| v.get("compaction").is_some()).count();
    assert_eq!(compacted, 3, "three of the four fixture sessions are over a 32K window's trigger");
    let got = back_to_openai(&pq, &dir, "c.back.jsonl");
    assert_same_sessions(&got, &want, "compacted");
    let columns: Vec<String> = schema_of(&pq).fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(
        columns,
        ["id", "source", "messages", "tools", "tools_inferred", "compaction", "metadata"]
    );
}

fn schema_of(p: &Path) -> Arc<Schema> {
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(p).unwrap()).unwrap();
    Arc::clone(b.schema())
}

fn utf8(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true)
}

/// The one schema of every file `--to parquet` writes, field by field.
fn documented_schema() -> Vec<(String, DataType, Option<String>, Option<String>)> {
    let pair = |a: &str, b: &str| DataType::Struct(Fields::from(vec![utf8(a), utf8(b)]));
    // JSON text: the Arrow canonical extension type `arrow.json` (schema 3).
    let json =
        |name: &str| utf8(name).with_extension_type(arrow_schema::extension::Json::default());
    let boolean = |name: &str| Field::new(name, DataType::Boolean, true);
    let item = |t: DataType| Arc::new(Field::new("item", t, true));
    let part = DataType::Struct(Fields::from(vec![
        utf8("type"),
        utf8("text"),
        Field::new("image_url", pair("url", "detail"), true),
    ]));
    let call = DataType::Struct(Fields::from(vec![
        utf8("id"),
        utf8("type"),
        Field::new(
            "function",
            DataType::Struct(Fields::from(vec![utf8("name"), json("arguments")])),
            true,
        ),
        json("extra"),
    ]));
    let message = DataType::Struct(Fields::from(vec![
        utf8("role"),
        utf8("content"),
        Field::new("parts", DataType::List(item(part)), true),
        utf8("name"),
        utf8("tool_call_id"),
        Field::new("tool_calls", DataType::List(item(call)), true),
        utf8("reasoning_content"),
        boolean("train"),
        json("extra"),
    ]));
    let enc = |e: &str| Some(e.to_string());
    let ext = Some("arrow.json".to_string());
    vec![
        ("id".into(), DataType::Utf8, None, None),
        ("source".into(), DataType::Utf8, enc("source"), None),
        ("messages".into(), DataType::List(item(message)), enc("messages"), None),
        ("tools".into(), DataType::Utf8, enc("json"), ext.clone()),
        ("tools_inferred".into(), DataType::Boolean, None, None),
        ("compaction".into(), DataType::Utf8, enc("json"), ext.clone()),
        ("metadata".into(), DataType::Utf8, enc("extra"), ext),
    ]
}

fn fields_of(schema: &Schema) -> Vec<(String, DataType, Option<String>, Option<String>)> {
    schema
        .fields()
        .iter()
        .map(|f| {
            (
                f.name().clone(),
                f.data_type().clone(),
                f.metadata().get("compactor:encoding").cloned(),
                f.extension_type_name().map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn written_schema_is_the_documented_one() {
    let dir = TestDir::new();
    let out = dir.join("s.parquet");
    let input = fixture("edge/parallel_calls.jsonl");
    to_parquet(&[input.clone(), fixture("edge/unknown_roles.jsonl")], &out, &[]);
    let file = std::fs::File::open(&out).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let meta = builder.metadata().file_metadata().clone();
    assert_eq!(meta.created_by(), Some(concat!("compactor ", env!("CARGO_PKG_VERSION"))));
    let kv: Vec<(String, Option<String>)> = meta
        .key_value_metadata()
        .unwrap()
        .iter()
        .map(|k| (k.key.clone(), k.value.clone()))
        .filter(|(k, _)| k != "ARROW:schema")
        .collect();
    assert_eq!(kv, [("compactor:schema".to_string(), Some("openai-sessions/3".to_string()))]);
    assert_eq!(meta.num_rows(), 3, "2 sessions + 1 bare array");
    assert_eq!(fields_of(builder.schema()), documented_schema());

    // The cells, as any Parquet reader sees them.
    let batch = builder.build().unwrap().next().unwrap().unwrap();
    assert_eq!(batch.num_rows(), 3);
    let col = |name: &str| batch.column_by_name(name).unwrap().clone();
    let strings = |a: ArrayRef| {
        let s = a.as_any().downcast_ref::<StringArray>().unwrap().clone();
        (0..s.len()).map(|i| s.is_valid(i).then(|| s.value(i).to_string())).collect::<Vec<_>>()
    };
    let want = read_jsonl(&input);
    let ids = strings(col("id"));
    assert_eq!(ids[0].as_deref(), want[0]["id"].as_str());
    assert!(ids[1].as_deref().unwrap().ends_with("unknown_roles.jsonl:1"), "{ids:?}");
    assert_eq!(ids[2].as_deref(), Some("edge-unknown-roles"));
    let sources = strings(col("source"));
    assert!(sources[0].as_deref().unwrap().ends_with("parallel_calls.jsonl:1"), "{sources:?}");
    let metadata = strings(col("metadata"));
    assert_eq!(metadata[1].as_deref(), Some("\"bare_array\""));
    let meta2: Value = serde_json::from_str(metadata[2].as_deref().unwrap()).unwrap();
    assert_eq!(meta2["x_trailer"], json!([1, 2, 3]));
    let tools: Value = serde_json::from_str(strings(col("tools"))[0].as_deref().unwrap()).unwrap();
    assert_eq!(tools, want[0]["tools"]);
    let messages = col("messages");
    let list = messages.as_any().downcast_ref::<arrow_array::ListArray>().unwrap();
    assert_eq!(list.value_length(0) as usize, want[0]["messages"].as_array().unwrap().len());
    let first = list.value(0);
    let structs = first.as_any().downcast_ref::<arrow_array::StructArray>().unwrap();
    let roles = strings(structs.column_by_name("role").unwrap().clone());
    assert_eq!(roles[0].as_deref(), want[0]["messages"][0]["role"].as_str());
    let calls = structs.column_by_name("tool_calls").unwrap();
    assert!(calls.null_count() < calls.len(), "tool calls are typed, not JSON text");
}

/// Calls, messages with text and tool messages of a written file, as a
/// consumer counts them from the typed fields alone.
fn typed_counts(p: &Path) -> (usize, usize, usize, usize) {
    use arrow_array::cast::AsArray;
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(p).unwrap()).unwrap();
    let (mut calls, mut tool_messages, mut texts, mut empty) = (0, 0, 0, 0);
    for batch in b.build().unwrap() {
        let batch = batch.unwrap();
        let lists = batch.column_by_name("messages").unwrap().as_list::<i32>();
        for r in 0..lists.len() {
            let msgs = lists.value(r);
            let msgs = msgs.as_struct();
            let role = msgs.column_by_name("role").unwrap().as_string::<i32>();
            let content = msgs.column_by_name("content").unwrap().as_string::<i32>();
            let tc = msgs.column_by_name("tool_calls").unwrap().as_list::<i32>();
            for m in 0..msgs.len() {
                let n = if tc.is_null(m) { 0 } else { tc.value(m).len() };
                calls += n;
                tool_messages += usize::from(role.value(m) == "tool");
                let text = content.is_valid(m) && !content.value(m).is_empty();
                texts += usize::from(text);
                let turn = role.value(m) == "user" || role.value(m) == "assistant";
                empty += usize::from(turn && !text && n == 0);
            }
        }
    }
    (calls, tool_messages, texts, empty)
}

/// Files from different inputs (Claude Code with its `caller` call field,
/// a compacted and an untouched OpenAI file, Codex) have one schema, text in
/// `content`, and as many typed calls as tool messages.
#[test]
fn every_output_file_has_the_one_schema_whatever_its_sessions() {
    let dir = TestDir::new();
    let out = dir.join("pq");
    let inputs = [
        fixture("claude_code/task43_parallel.jsonl"),
        fixture("openai/claude_code_task54.jsonl"),
        fixture("codex/w1t9_head.jsonl"),
        fixture("edge/images.jsonl"),
    ];
    assert!(std::fs::read_to_string(&inputs[0]).unwrap().contains("\"caller\""));
    for (mode, extra) in [("clean", &[][..]), ("kept", &["--keep-source-fields"][..])] {
        let target = format!("{}/{mode}/", out.display());
        run_ok(
            compactor()
                .args(["compact", "--window", "32000", "--force", "--to", "parquet", "-q", "-o"])
                .arg(&target)
                .args(extra)
                .args(&inputs),
        );
        let files = files_under(&out.join(mode), ".parquet");
        assert_eq!(files.len(), inputs.len(), "{files:?}");
        let mut compacted = 0;
        for f in &files {
            assert_eq!(fields_of(&schema_of(f)), documented_schema(), "{} ({mode})", f.display());
            let (calls, tool_messages, texts, empty) = typed_counts(f);
            assert_eq!(calls, tool_messages, "{} ({mode}): calls vs tool messages", f.display());
            assert!(texts > 0, "{}", f.display());
            assert_eq!(
                empty,
                0,
                "{} ({mode}): user/assistant turns with neither text nor calls",
                f.display()
            );
            let back = back_to_openai(f, &dir, "b.jsonl");
            compacted += back.iter().filter(|v| v.get("compaction").is_some()).count();
        }
        assert!(compacted > 0, "{mode}: some files hold compacted sessions, some not");
    }
    // Under --keep-source-fields, Claude Code's per-call `caller` stays with its call.
    let f = out.join("kept/task43_parallel.parquet");
    let back = back_to_openai(&f, &dir, "k.jsonl");
    let with_caller = back[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m.get("tool_calls").and_then(Value::as_array).cloned().unwrap_or_default())
        .filter(|c| c.get("caller").is_some() && c["function"]["name"].is_string())
        .count();
    assert!(with_caller > 0, "no call kept its `caller`");
}

/// `(id, score, [(role, content)])`.
type HfRow<'a> = (&'a str, Option<f64>, &'a [(&'a str, Option<&'a str>)]);

/// A Hugging Face chat table: `messages: list<struct<role, content>>`, `id`, `score`.
fn write_hf_table(path: &Path) {
    let fields = Fields::from(vec![utf8("role"), utf8("content")]);
    let mut messages = ListBuilder::new(StructBuilder::from_fields(fields.clone(), 0))
        .with_field(Arc::new(Field::new("item", DataType::Struct(fields), true)));
    let mut ids = StringBuilder::new();
    let mut scores = Float64Builder::new();
    let rows: [HfRow; 3] = [
        ("hf-a", Some(0.25), &[("user", Some("Name a prime.")), ("assistant", Some("7"))]),
        (
            "hf-b",
            None,
            &[("system", Some("Terse.")), ("user", Some("日本語?")), ("assistant", None)],
        ),
        ("hf-c", Some(1.0), &[]),
    ];
    for (id, score, msgs) in rows {
        for (role, content) in msgs {
            let s = messages.values();
            s.field_builder::<StringBuilder>(0).unwrap().append_value(role);
            s.field_builder::<StringBuilder>(1).unwrap().append_option(*content);
            s.append(true);
        }
        messages.append(true);
        ids.append_value(id);
        scores.append_option(score);
    }
    let columns: Vec<ArrayRef> =
        vec![Arc::new(messages.finish()), Arc::new(ids.finish()), Arc::new(scores.finish())];
    let batch =
        RecordBatch::try_from_iter(["messages", "id", "score"].into_iter().zip(columns)).unwrap();
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn a_hugging_face_table_reads_as_sessions() {
    let dir = TestDir::new();
    let table = dir.join("hf.parquet");
    write_hf_table(&table);
    let want = [
        json!({"messages": [{"role": "user", "content": "Name a prime."},
                            {"role": "assistant", "content": "7"}], "id": "hf-a", "score": 0.25}),
        json!({"messages": [{"role": "system", "content": "Terse."},
                            {"role": "user", "content": "日本語?"},
                            {"role": "assistant"}], "id": "hf-b", "score": null}),
        json!({"messages": [], "id": "hf-c", "score": 1.0}),
    ];
    let out = run_ok(
        compactor()
            .args([
                "compact",
                "--mode",
                "none",
                "--to",
                "openai",
                "--keep-source-fields",
                "-o",
                "-",
            ])
            .arg(&table),
    );
    let got = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(got, want);
    // Without --to the records are still OpenAI-shaped sessions on standard output.
    let out = run_ok(compactor().args(["compact", "--mode", "none", "-q"]).arg(&table));
    assert_eq!(json_lines(&String::from_utf8(out.stdout).unwrap()), want);
    let stderr =
        run_ok(compactor().args(["compact", "--mode", "none", "-o", "/dev/null"]).arg(&table))
            .stderr;
    assert!(String::from_utf8_lossy(&stderr).starts_with("compactor: 3 sessions from 1 input,"));
    // The report names each row.
    let out = run_ok(
        compactor()
            .args(["compact", "--mode", "none", "-q", "-o", "/dev/null", "--report", "-"])
            .arg(&table),
    );
    let rows = json_lines(&String::from_utf8(out.stdout).unwrap());
    let sources: Vec<&str> = rows.iter().map(|r| r["source"].as_str().unwrap()).collect();
    let t = table.display().to_string();
    assert_eq!(sources, [format!("{t}[0]"), format!("{t}[1]"), format!("{t}[2]")]);
    assert_eq!(rows[0]["id"], "hf-a");
}

#[test]
fn tables_written_by_pyarrow_convert_every_column_type() {
    let out = run_ok(
        compactor()
            .args(["compact", "--mode", "none", "--to", "openai", "--keep-source-fields", "-q"])
            .arg(fixture("parquet/hf_chat.parquet")),
    );
    let got = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(
        got[0],
        json!({"messages": [{"role": "user", "content": "What is 2+2?"},
                            {"role": "assistant", "content": "4"}],
               "id": "hf-0", "score": 0.5, "turns": 2, "created": "2024-05-01T12:00:00.250Z",
               "day": "2024-05-01", "blob": "Zm9vYmFy", "tags": ["math"], "attrs": {"k": 1},
               "split": "train", "price": "12.50"})
    );
    assert_eq!(got[1]["score"], Value::Null);
    assert_eq!(got[1]["day"], "2000-02-29");
    assert_eq!(got[1]["price"], "-0.01");
    assert_eq!(got[2]["created"], "1969-12-31T23:59:59Z");
    assert_eq!(got[2]["attrs"], json!({"a": 2, "b": 3}));
    assert_eq!(got[2]["messages"][1], json!({"role": "assistant"}), "null fields are left out");

    let out = run_ok(
        compactor()
            .args(["compact", "--mode", "none", "--to", "openai", "--keep-source-fields", "-q"])
            .arg(fixture("parquet/hf_tools.parquet")),
    );
    let got = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(got.len(), 1);
    let m = &got[0]["messages"];
    assert_eq!(m[1]["tool_calls"][1]["function"]["name"], "get_time");
    assert_eq!(m[1].get("content"), None);
    assert_eq!(
        m[2],
        json!({"role": "tool", "content": "18C, cloudy", "tool_call_id": "call_1", "name": "get_weather"})
    );
    assert_eq!(m.as_array().unwrap().len(), 5);
}

#[test]
fn messages_column_reads_json_text_and_rejects_rows_that_are_not_json() {
    let dir = TestDir::new();
    let rejects = dir.join("rejects.txt");
    let input = fixture("parquet/messages_json.parquet");
    let out = run_code(
        compactor()
            .args([
                "compact",
                "--mode",
                "none",
                "--to",
                "openai",
                "--messages-column",
                "conversation",
            ])
            .arg("--rejects")
            .arg(&rejects)
            .arg(&input),
        3,
    );
    let got = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(
        got,
        [
            json!({"messages": [{"role": "user", "content": "one"}, {"role": "assistant", "content": "1"}], "id": "j-0"}),
            json!({"messages": [{"role": "user", "content": "three"}], "id": "j-2"}),
        ]
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains(&format!("{}[1]: invalid JSON: ", input.display())), "{stderr}");
    assert_eq!(std::fs::read_to_string(&rejects).unwrap(), "[{\"role\": \"user\", \"content\": \n");

    // A --messages-column that is missing, or not text, is an error naming the file.
    let out = run_code(compactor().args(["compact", "--messages-column", "nope"]).arg(&input), 3);
    let stderr = String::from_utf8(out.stderr).unwrap();
    let why = "no column `nope` (--messages-column); columns: id, conversation";
    assert!(stderr.contains(&format!("{}: {why}", input.display())), "{stderr}");
    let hf = dir.join("hf.parquet");
    write_hf_table(&hf);
    let out = run_code(compactor().args(["compact", "--messages-column", "score"]).arg(&hf), 3);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr
            .contains("column `score` (--messages-column) is Float64, not a string column of JSON"),
        "{stderr}"
    );
}

#[test]
fn bad_files_are_errors_naming_the_file_never_panics() {
    let dir = TestDir::new();
    let good = dir.join("good.parquet");
    to_parquet(&[fixture("edge/cjk.jsonl")], &good, &[]);
    let bytes = std::fs::read(&good).unwrap();
    // A corrupt footer: the metadata length (the 4 bytes before the final PAR1) is garbage.
    let mut corrupt = bytes.clone();
    let n = corrupt.len();
    corrupt[n - 8..n - 4].copy_from_slice(&[0xff, 0xff, 0xff, 0x7f]);
    let footer = dir.write("footer.parquet", &corrupt);
    // Truncated: the start of a file (its magic) without the rest.
    let truncated = dir.write("truncated.parquet", &bytes[..bytes.len() / 2]);
    for p in [&footer, &truncated] {
        let out = run_code(compactor().args(["compact", "--mode", "none"]).arg(p), 3);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr
                .starts_with(&format!("compactor: {}: not a readable Parquet file: ", p.display())),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
    let none = fixture("parquet/no_messages.parquet");
    let out = run_code(compactor().args(["compact", "--mode", "none"]).arg(&none), 3);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!(
            "compactor: {}: not a table of sessions: no `messages` column (columns: text, label)",
            none.display()
        )),
        "{stderr}"
    );
    // --strict stops there, exit 2, nothing written.
    let o = dir.join("o.jsonl");
    run_code(compactor().args(["compact", "--strict", "-o"]).arg(&o).arg(&none), 2);
    assert!(!o.exists());
}

#[test]
fn parquet_bytes_are_deterministic_for_any_thread_count() {
    let dir = TestDir::new();
    let inputs = openai_fixtures();
    let mut files = Vec::new();
    for (name, threads) in [("a.parquet", "1"), ("b.parquet", "1"), ("c.parquet", "2")] {
        let out = dir.join(name);
        to_parquet(&inputs, &out, &["-j", threads]);
        files.push(std::fs::read(&out).unwrap());
    }
    assert!(files[0].starts_with(b"PAR1") && files[0].ends_with(b"PAR1"));
    assert!(files[0] == files[1], "same input twice, different bytes");
    assert!(files[0] == files[2], "-j1 and -j2 differ");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn converted_corpus_round_trips_through_parquet() {
    let Some(corpus) = crate::corpus::corpus() else { panic!("{}", crate::corpus::ABSENT) };
    let src = corpus.join("agent-trajectory-json");
    let dir = TestDir::new();
    let pq = dir.join("pq");
    run_ok(
        compactor()
            .args([
                "compact",
                "--mode",
                "none",
                "--to",
                "parquet",
                "--keep-source-fields",
                "-q",
                "-o",
            ])
            .arg(format!("{}/", pq.display()))
            .arg(&src),
    );
    let docs = files_under(&src, ".json");
    assert_eq!(docs.len(), 5);
    let (mut messages, mut calls, mut bytes) = (0, 0, 0);
    for doc in &docs {
        let want = read_document(doc);
        let rel = doc.strip_prefix(&src).unwrap().with_extension("parquet");
        let table = pq.join(&rel);
        bytes += std::fs::metadata(&table).unwrap().len();
        let got = back_to_openai(&table, &dir, "back.jsonl");
        assert_eq!(got.len(), 1, "{}", doc.display());
        let mut got = got[0].clone();
        if want.get("id").is_none() {
            got.as_object_mut().unwrap().remove("id");
        }
        assert!(got == want, "{} differs after Parquet", doc.display());
        let msgs = want["messages"].as_array().unwrap();
        messages += msgs.len();
        calls += msgs
            .iter()
            .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
            .map(Vec::len)
            .sum::<usize>();
    }
    println!(
        "parquet corpus: {} sessions, {messages} messages, {calls} tool calls round-trip identical ({bytes} Parquet bytes)",
        docs.len()
    );
    assert!(messages > 1000 && calls > 500, "{messages} messages, {calls} calls");
}

/// A file of the schema before training rows (`openai-sessions/2`,
/// fixtures/parquet/ours_v2.parquet, written by the binary of 08cd990 from
/// `fixtures/openai/codex_w1t9.jsonl` and `fixtures/edge/images.jsonl`,
/// `--mode lean --force --window 32000`) reads back as the records that binary
/// wrote `--to openai` (`ours_v2.records.jsonl`), and so does the same file
/// after a Spark-like rewrite that drops every field's metadata.
#[test]
fn files_of_schema_2_still_read_back() {
    let dir = TestDir::new();
    let v2 = fixture("parquet/ours_v2.parquet");
    let want = read_jsonl(&fixture("parquet/ours_v2.records.jsonl"));
    let mut got = back_to_openai(&v2, &dir, "v2.jsonl");
    assert_eq!(got.len(), 2);
    for g in &mut got {
        // Our files carry the `id` column; the JSON Lines records have their own.
        if g.get("id").is_some() && want.iter().all(|w| w.get("id") != g.get("id")) {
            g.as_object_mut().unwrap().remove("id");
        }
    }
    assert_eq!(got, want);
    // The v2 shape without any metadata (Spark's writer) is still ours, by shape.
    let file = std::fs::File::open(&v2).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let bare = Arc::new(Schema::new(
        reader
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_metadata(std::collections::HashMap::new()))
            .collect::<Vec<_>>(),
    ));
    let batches: Vec<_> = reader.build().unwrap().map(|b| b.unwrap()).collect();
    let stripped = dir.join("stripped.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&stripped).unwrap(),
        Arc::clone(&bare),
        None,
    )
    .unwrap();
    for b in batches {
        w.write(
            &arrow_array::RecordBatch::try_new(Arc::clone(&bare), b.columns().to_vec()).unwrap(),
        )
        .unwrap();
    }
    w.close().unwrap();
    let mut again = back_to_openai(&stripped, &dir, "v2-stripped.jsonl");
    for g in &mut again {
        if g.get("id").is_some() && want.iter().all(|w| w.get("id") != g.get("id")) {
            g.as_object_mut().unwrap().remove("id");
        }
    }
    assert_eq!(again, want);
}

/// A file of our earlier schema (`openai-sessions/1`, fixtures/parquet/ours_v1.parquet,
/// written by pyarrow) still reads back as the records it stood for.
#[test]
fn files_of_the_earlier_schema_still_read_back() {
    let dir = TestDir::new();
    let got = back_to_openai(&fixture("parquet/ours_v1.parquet"), &dir, "v1.jsonl");
    assert_eq!(
        got,
        [
            json!({"messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"}],
             "compaction": {"compacted": true}, "id": "v1-0", "n": 1}),
            json!([{"role": "user", "content": "bare"}]),
        ]
    );
}
