//! The determinism proof: the same sessions and options give byte-identical
//! outputs and reports whatever the thread count, the order files were created
//! in, whether they come from a file or standard input, and whether they are
//! stored as JSON Lines or Parquet.

use crate::util::{TestDir, compactor, files_under, fixture, json_lines, run_ok, run_with_stdin};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Fixtures of several dialects, copied into a directory in the given order.
const FILES: &[&str] = &[
    "openai/claude_code_task54.jsonl",
    "openai/codex_w1t9.jsonl",
    "openai/trajectory_richh.jsonl",
    "claude_code/task43_parallel.jsonl",
    "claude_code/task128_mid.jsonl",
    "codex/depot_tail.jsonl",
    "codex/fleet_compacted.jsonl",
    "edge/parallel_calls.jsonl",
    "edge/images.jsonl",
    "edge/cjk.jsonl",
];

fn existing_files() -> Vec<&'static str> {
    for f in FILES {
        assert!(fixture(f).is_file(), "fixture {f} is missing");
    }
    FILES.to_vec()
}

fn populate(dir: &Path, files: &[&str]) {
    for f in files {
        let to = dir.join(f.replace('/', "__"));
        std::fs::copy(fixture(f), to).unwrap();
    }
}

/// Files of a directory: (relative name, bytes), sorted by name.
type Tree = Vec<(String, Vec<u8>)>;

/// Every file under `dir`, relative name -> bytes, sorted.
fn tree(dir: &Path) -> Tree {
    let mut out: Tree = files_under(dir, "")
        .into_iter()
        // The manifest is bookkeeping, not output: it records the inputs' mtimes.
        .filter(|p| !p.ends_with(".compactor-manifest.jsonl"))
        .map(|p| (p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

fn compact_dir(input: &Path, out: &Path, report: &Path, threads: &str) {
    run_ok(
        compactor()
            .args(["compact", "--window", "32000", "-q", "-j", threads])
            .arg(input)
            .arg("-o")
            .arg(format!("{}/", out.display()))
            .arg("--report")
            .arg(report),
    );
}

#[test]
fn thread_count_and_creation_order_change_no_byte() {
    let files = existing_files();
    let dir = TestDir::new();
    let forward = dir.join("in-forward");
    let backward = dir.join("in-backward");
    std::fs::create_dir_all(&forward).unwrap();
    std::fs::create_dir_all(&backward).unwrap();
    populate(&forward, &files);
    let mut reversed = files.clone();
    reversed.reverse();
    populate(&backward, &reversed);

    let mut runs: Vec<(String, Tree, Vec<u8>)> = Vec::new();
    for (input, label) in [(&forward, "forward"), (&backward, "backward")] {
        for j in ["1", "2", "8"] {
            let out = dir.join(&format!("out-{label}-{j}"));
            let report = dir.join(&format!("report-{label}-{j}.jsonl"));
            compact_dir(input, &out, &report, j);
            // Outputs and reports name their input (`compaction.source`); the two
            // input directories differ only in that name.
            let name = input.display().to_string();
            let unname = |bytes: Vec<u8>| {
                String::from_utf8(bytes).unwrap().replace(&name, "IN").into_bytes()
            };
            let outputs = tree(&out).into_iter().map(|(n, b)| (n, unname(b))).collect();
            runs.push((format!("{label} -j{j}"), outputs, unname(std::fs::read(&report).unwrap())));
        }
    }
    let (first_label, first_tree, first_report) = &runs[0];
    assert_eq!(first_tree.len(), files.len(), "one output per input");
    assert!(first_report.len() > 100);
    for (label, t, r) in &runs[1..] {
        assert!(t == first_tree, "outputs of {label} differ from {first_label}");
        assert!(r == first_report, "report of {label} differs from {first_label}");
    }
}

#[test]
fn report_files_are_identical_for_any_thread_count() {
    let dir = TestDir::new();
    let mut trees = Vec::new();
    for j in ["1", "2", "8"] {
        let out = dir.join(&format!("rep-{j}"));
        let mut cmd = compactor();
        cmd.args(["report", "--window", "32000", "--force", "-q", "-j", j, "-o"]).arg(&out);
        for f in existing_files() {
            cmd.arg(fixture(f));
        }
        run_ok(&mut cmd);
        trees.push(tree(&out));
    }
    assert!(trees[0].iter().any(|(n, _)| n == "summary.json"));
    assert!(trees[0] == trees[1], "report differs between -j1 and -j2");
    assert!(trees[0] == trees[2], "report differs between -j1 and -j8");
}

/// Sessions of a JSONL output with each `compaction.source` (which names the
/// input: a path, `-`, or a Parquet row) taken out.
fn sessions_without_source(text: &str) -> Vec<Value> {
    json_lines(text)
        .into_iter()
        .map(|mut v| {
            if let Some(c) = v.get_mut("compaction").and_then(Value::as_object_mut) {
                c.remove("source");
            }
            v
        })
        .collect()
}

#[test]
fn stdin_and_file_give_the_same_sessions() {
    let dir = TestDir::new();
    let input = fixture("openai/claude_code_task54.jsonl");
    let from_file = dir.join("file.jsonl");
    run_ok(
        compactor()
            .args(["compact", "--window", "32000", "-q"])
            .arg(&input)
            .arg("-o")
            .arg(&from_file),
    );
    let mut cmd = compactor();
    cmd.args(["compact", "--window", "32000", "-q", "-"]);
    let piped = run_with_stdin(cmd, &std::fs::read(&input).unwrap());
    assert!(piped.status.success());
    let file_text = std::fs::read_to_string(&from_file).unwrap();
    let a = sessions_without_source(&file_text);
    let b = sessions_without_source(&String::from_utf8(piped.stdout).unwrap());
    assert!(!a.is_empty());
    assert!(a.iter().any(|s| s.get("compaction").is_some()), "something was compacted");
    assert_eq!(a, b);
}

#[test]
fn jsonl_and_parquet_inputs_give_the_same_sessions() {
    let dir = TestDir::new();
    let input: PathBuf = fixture("openai");
    let table = dir.join("sessions.parquet");
    run_ok(
        compactor()
            .args(["compact", "--mode", "none", "--to", "parquet", "--keep-source-fields", "-q"])
            .arg(&input)
            .arg("-o")
            .arg(&table),
    );
    let from_jsonl = dir.join("from-jsonl.jsonl");
    let from_parquet = dir.join("from-parquet.jsonl");
    for (src, out) in [(&input, &from_jsonl), (&table, &from_parquet)] {
        run_ok(
            compactor()
                .args([
                    "compact",
                    "--window",
                    "32000",
                    "--to",
                    "openai",
                    "--keep-source-fields",
                    "-q",
                ])
                .arg(src)
                .arg("-o")
                .arg(out),
        );
    }
    let a = sessions_without_source(&std::fs::read_to_string(&from_jsonl).unwrap());
    let b = sessions_without_source(&std::fs::read_to_string(&from_parquet).unwrap());
    assert!(a.len() >= 3);
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "session {i} differs between JSONL and Parquet input");
    }
}
