//! Issue #7 (beyond one machine): the Arrow IPC worker mode, `--shard K/N`,
//! and `report --merge`, through the binary.

use crate::util::*;
use arrow_array::{Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use compactor::io::Payload;
use compactor::io::parquet::BatchDecoder;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Valid fixtures of several shapes: some compact at a 32K window, some not.
const INPUTS: &[&str] = &[
    "openai",
    "edge/images.jsonl",
    "edge/parallel_calls.jsonl",
    "edge/huge_output.jsonl",
    "edge/cjk.jsonl",
];

fn inputs() -> Vec<PathBuf> {
    INPUTS.iter().map(|i| fixture(i)).collect()
}

/// The fixtures as a Parquet table written by compactor, then read back as
/// record batches of `rows` rows, each row's `source` cell naming it as a lake would.
fn batches(dir: &TestDir, rows: usize) -> (Arc<Schema>, Vec<RecordBatch>) {
    let table = dir.join("in.parquet");
    run_ok(compactor().args(["compact", "-q", "--mode", "none", "-o"]).arg(&table).args(inputs()));
    let file = std::fs::File::open(&table).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .with_batch_size(rows)
        .build()
        .unwrap();
    let mut out = Vec::new();
    let mut schema = None;
    let mut n = 0;
    for b in reader {
        let b = b.unwrap();
        let s = b.schema();
        let at = s.index_of("source").unwrap();
        let names: Vec<String> =
            (n..n + b.num_rows()).map(|i| format!("lake/part-0.parquet#{i}")).collect();
        n += b.num_rows();
        let mut cols = b.columns().to_vec();
        cols[at] = Arc::new(StringArray::from(names));
        out.push(RecordBatch::try_new(Arc::clone(&s), cols).unwrap());
        schema = Some(s);
    }
    (schema.unwrap(), out)
}

fn stream(schema: &Arc<Schema>, batches: &[RecordBatch]) -> Vec<u8> {
    let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), schema).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    w.into_inner().unwrap()
}

fn read_stream(bytes: &[u8]) -> (Arc<Schema>, Vec<RecordBatch>) {
    let r = arrow_ipc::reader::StreamReader::try_new(bytes, None).unwrap();
    let schema = r.schema();
    (schema, r.map(|b| b.unwrap()).collect())
}

/// The same rows as a Parquet file (with the `source` column), for the plain run.
fn parquet_file(dir: &TestDir, schema: &Arc<Schema>, batches: &[RecordBatch]) -> PathBuf {
    let p = dir.join("lake.parquet");
    let f = std::fs::File::create(&p).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(f, Arc::clone(schema), None).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
    p
}

/// Session records and report lines of an output stream.
fn rows_of(schema: &Arc<Schema>, batches: &[RecordBatch]) -> (Vec<Value>, Vec<String>) {
    let ours = BatchDecoder::is_ours(schema);
    let decoder =
        BatchDecoder::new(schema, None, None, ours, compactor::formats::parquet::RESTORE).unwrap();
    let report = schema.index_of("compactor_report").unwrap();
    let mut records = Vec::new();
    let mut lines = Vec::new();
    for b in batches {
        let col = b.column(report).as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..b.num_rows() {
            match decoder.record(b, i).unwrap() {
                Payload::Value(v) => records.push(v),
                Payload::Line(_)
                | Payload::Parsed { .. }
                | Payload::Document { .. }
                | Payload::Oversized(_) => {
                    panic!("row {i} is not a record")
                }
            }
            lines.push(col.value(i).to_string());
        }
    }
    (records, lines)
}

fn compact_stream(input: &[u8], extra: &[&str]) -> std::process::Output {
    let mut cmd = compactor();
    cmd.args(["compact", "-", "--from", "arrow-ipc", "--to", "arrow-ipc", "--keep-source-fields"])
        .args(["--window", "32000"])
        .args(["--source-column", "source", "-q"])
        .args(extra);
    run_with_stdin(cmd, input)
}

#[test]
fn arrow_ipc_mode_gives_the_plain_runs_rows_and_report_batch_by_batch() {
    let dir = TestDir::new();
    let (schema, input) = batches(&dir, 3);
    let bytes = stream(&schema, &input);
    let out = compact_stream(&bytes, &["-j", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "quiet: nothing on stderr");
    for threads in ["1", "4"] {
        let again = compact_stream(&bytes, &["-j", threads]);
        assert!(again.stdout == out.stdout, "output differs with -j {threads}");
    }
    let (out_schema, out_batches) = read_stream(&out.stdout);
    assert_eq!(
        out_batches.iter().map(RecordBatch::num_rows).collect::<Vec<_>>(),
        input.iter().map(RecordBatch::num_rows).collect::<Vec<_>>(),
        "one output batch per input batch, row for row"
    );
    assert_eq!(out_schema.fields().last().unwrap().name(), "compactor_report");
    let (records, lines) = rows_of(&out_schema, &out_batches);

    // The plain binary over the same rows, as a Parquet file.
    let table = parquet_file(&dir, &schema, &input);
    let report = dir.join("plain.report.jsonl");
    let plain = dir.join("plain.jsonl");
    run_ok(
        compactor()
            .args([
                "compact",
                "-q",
                "--window",
                "32000",
                "--source-column",
                "source",
                "--to",
                "openai",
                "--keep-source-fields",
            ])
            .arg(&table)
            .arg("-o")
            .arg(&plain)
            .arg("--report")
            .arg(&report),
    );
    let want_lines: Vec<String> =
        std::fs::read_to_string(&report).unwrap().lines().map(str::to_string).collect();
    eqnice!(want_lines.join("\n"), lines.join("\n"));
    let want = json_lines(&std::fs::read_to_string(&plain).unwrap());
    assert_eq!(records.len(), want.len());
    for (i, (got, want)) in records.iter().zip(&want).enumerate() {
        assert!(got == want, "row {i} differs");
    }
    assert!(records.iter().any(|r| r.get("compaction").is_some()), "some sessions compact");
    assert!(lines[0].contains("\"source\":\"lake/part-0.parquet#0\""), "{}", lines[0]);
}

#[test]
fn arrow_ipc_output_schema_follows_from_the_input_schema_alone() {
    let dir = TestDir::new();
    let (schema, input) = batches(&dir, 4);
    let empty = compact_stream(&stream(&schema, &[]), &[]);
    assert_eq!(empty.status.code(), Some(0), "{}", String::from_utf8_lossy(&empty.stderr));
    let full = compact_stream(&stream(&schema, &input), &[]);
    let (a, none) = read_stream(&empty.stdout);
    let (b, _) = read_stream(&full.stdout);
    assert!(none.is_empty());
    assert_eq!(a, b, "a stream without batches gives the schema every batch has");
    // Reading our output again ignores the report column: compacting twice is idempotent.
    let twice = compact_stream(&full.stdout, &[]);
    assert_eq!(twice.status.code(), Some(0), "{}", String::from_utf8_lossy(&twice.stderr));
    let (s1, b1) = read_stream(&full.stdout);
    let (s2, b2) = read_stream(&twice.stdout);
    assert_eq!(rows_of(&s1, &b1).0, rows_of(&s2, &b2).0);
}

#[test]
fn a_truncated_or_garbage_stream_is_a_clear_error() {
    let dir = TestDir::new();
    let (schema, input) = batches(&dir, 3);
    let bytes = stream(&schema, &input);
    let cut = &bytes[..bytes.len() * 2 / 3];
    let out = compact_stream(cut, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("-: cannot read Arrow IPC batch "), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    for garbage in [&b"{\"messages\": []}\n"[..], &[0xff; 64][..], &[][..], &bytes[..7]] {
        let out = compact_stream(garbage, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.starts_with("compactor: -: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }

    // A table that is not sessions is refused up front, naming the problem.
    let s = Arc::new(Schema::new(vec![Field::new("text", arrow_schema::DataType::Utf8, true)]));
    let out = compact_stream(&stream(&s, &[]), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no `messages` column"), "{err}");
}

#[test]
fn arrow_ipc_mode_refuses_what_it_cannot_do() {
    for (args, why) in [
        (&["--from", "arrow-ipc", "-"][..], "go together"),
        (&["--from", "arrow-ipc", "--to", "arrow-ipc", "a", "b"][..], "one input"),
        (
            &["--from", "arrow-ipc", "--to", "arrow-ipc", "-", "--report", "-"][..],
            "standard output",
        ),
    ] {
        let out = run_code(compactor().arg("compact").args(args), 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{args:?}: {err}");
    }
}

/// Report lines by source, and the output lines, of one `compact` run.
fn compact_files(
    dir: &TestDir,
    name: &str,
    extra: &[&str],
) -> (BTreeMap<String, String>, Vec<String>) {
    let out = dir.join(&format!("{name}.jsonl"));
    let report = dir.join(&format!("{name}.report.jsonl"));
    run_ok(
        compactor()
            .args(["compact", "-q", "--window", "32000", "-o"])
            .arg(&out)
            .arg("--report")
            .arg(&report)
            .args(extra)
            .args(inputs()),
    );
    let mut rows = BTreeMap::new();
    for line in std::fs::read_to_string(&report).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let old = rows.insert(v["source"].as_str().unwrap().to_string(), line.to_string());
        assert!(old.is_none(), "a session twice in one run");
    }
    (rows, std::fs::read_to_string(&out).unwrap().lines().map(str::to_string).collect())
}

#[test]
fn the_union_of_four_shards_is_the_unsharded_run_with_no_session_twice() {
    let dir = TestDir::new();
    let (all, all_lines) = compact_files(&dir, "all", &[]);
    let mut union = BTreeMap::new();
    let mut lines = Vec::new();
    let mut sizes = Vec::new();
    for k in 0..4 {
        let (rows, out) = compact_files(&dir, &format!("part{k}"), &["--shard", &format!("{k}/4")]);
        sizes.push(rows.len());
        for (source, row) in rows {
            assert!(union.insert(source.clone(), row).is_none(), "{source} in two shards");
        }
        lines.extend(out);
    }
    assert_eq!(union, all, "the shards' report rows are the unsharded run's");
    let (mut a, mut b) = (all_lines, lines);
    a.sort();
    b.sort();
    assert!(a == b, "the shards' sessions are the unsharded run's");
    assert!(sizes.iter().filter(|n| **n > 0).count() >= 2, "the sessions spread: {sizes:?}");

    // The Arrow mode shards the same way.
    let (schema, input) = batches(&dir, 5);
    let bytes = stream(&schema, &input);
    let whole = rows_of_output(&compact_stream(&bytes, &[]));
    let mut parts = Vec::new();
    for k in 0..4 {
        parts.extend(rows_of_output(&compact_stream(&bytes, &["--shard", &format!("{k}/4")])));
    }
    parts.sort();
    let mut whole = whole;
    whole.sort();
    assert!(parts == whole);

    let out = run_code(compactor().args(["compact", "--shard", "4/4", "-"]), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 <= K < N"));
}

/// A file that cannot be read has no session id: its source picks the one
/// shard that rejects it (the engine's rule, as for a bad record).
#[test]
fn an_unreadable_file_is_rejected_by_exactly_one_shard() {
    let dir = TestDir::new();
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, b"\x00\x01\x02\xff\xfe binary").unwrap();
    let mut rejecting = Vec::new();
    for k in 0..4 {
        let rejects = dir.join(&format!("rejects{k}.jsonl"));
        let out = compactor()
            .args(["compact", "-q", "--shard", &format!("{k}/4"), "-o"])
            .arg(dir.join(&format!("out{k}.jsonl")))
            .arg("--rejects")
            .arg(&rejects)
            .arg(&bad)
            .args(inputs())
            .output()
            .unwrap();
        let sources = std::fs::read_to_string(dir.join(&format!("rejects{k}.sources.jsonl")))
            .unwrap_or_default();
        let unreadable = sources.lines().filter(|l| l.contains("\"unreadable\"")).count();
        assert_eq!(out.status.code(), Some(if unreadable > 0 { 3 } else { 0 }), "shard {k}");
        rejecting.extend(std::iter::repeat_n(k, unreadable));
    }
    assert_eq!(rejecting.len(), 1, "rejected by shards {rejecting:?}");
}

fn rows_of_output(out: &std::process::Output) -> Vec<String> {
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let (s, b) = read_stream(&out.stdout);
    rows_of(&s, &b).1
}

fn report_dir(dir: &TestDir, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    run_ok(
        compactor()
            .args(["report", "-q", "--window", "32000", "--parquet", "-o"])
            .arg(&out)
            .args(extra)
            .args(inputs()),
    );
    out
}

const REPORT_FILES: &[&str] = &[
    "sessions.jsonl",
    "sessions.csv",
    "summary.json",
    "report.md",
    "report.html",
    "sessions.parquet",
];

#[test]
fn the_merged_report_of_four_shards_is_the_unsharded_report_byte_for_byte() {
    let dir = TestDir::new();
    let whole = report_dir(&dir, "whole", &[]);
    let shards: Vec<PathBuf> = (0..4)
        .map(|k| report_dir(&dir, &format!("s{k}"), &["--shard", &format!("{k}/4")]))
        .collect();
    assert!(shards.iter().all(|s| s.join("shard.json").exists()));
    assert!(!whole.join("shard.json").exists());
    let merged = dir.join("merged");
    // Any argument order.
    run_ok(
        compactor()
            .args(["report", "-q", "--parquet", "--merge"])
            .args(shards.iter().rev())
            .arg("-o")
            .arg(&merged),
    );
    for f in REPORT_FILES {
        let (a, b) =
            (std::fs::read(whole.join(f)).unwrap(), std::fs::read(merged.join(f)).unwrap());
        if a != b {
            eqnice!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
            panic!("{f} differs");
        }
    }
}

#[test]
fn merge_refuses_missing_repeated_or_foreign_shards() {
    let dir = TestDir::new();
    let s: Vec<PathBuf> = (0..2)
        .map(|k| report_dir(&dir, &format!("s{k}"), &["--shard", &format!("{k}/2")]))
        .collect();
    let whole = report_dir(&dir, "whole", &[]);
    let merge = |dirs: &[&Path]| {
        let out = run_code(
            compactor().args(["report", "--merge"]).args(dirs).arg("-o").arg(dir.join("m")),
            2,
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(merge(&[&s[0]]).contains("shards missing: 1/2"));
    assert!(merge(&[&s[0], &s[0], &s[1]]).contains("given twice"));
    assert!(merge(&[&s[0], &whole]).contains("not a shard report"));
    assert!(!dir.join("m").exists(), "nothing is written on refusal");
}
