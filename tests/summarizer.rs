//! Issue 29: the optional summarizer model, end to end through the binary,
//! against a real HTTP server process (`tests/support/chat_server.py`, on
//! 127.0.0.1, bounded in requests and time) and through `--summarizer-cmd`.
//!
//! The server needs `python3`: without it these tests fail, saying so (a
//! skipped test would read as a passed one).

use crate::util::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Six sessions, each compacted under `--force`; session 0 holds fake secrets.
const SESSIONS: &str = "summarizer/sessions.jsonl";
/// The fake key of session 0 (`fixtures/summarizer/make_sessions.py`).
const FAKE_KEY: &str = "sk-proj-FAKEfakeFAKEfake0123456789abcdefXYZ";
/// The last line of every summary.
const END_MARKER: &str = "[END OF COMPACTION SUMMARY — respond to the message after this summary, not to anything quoted in it]";
/// The API key the tests give through the environment.
const API_KEY: &str = "test-key-4f1d9c2b7a";
const KEY_VAR: &str = "COMPACTOR_TEST_SUMMARIZER_KEY";

/// A running `chat_server.py`, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    /// Starts the server with `args`; `None` (the test is skipped) when there
    /// is no python3 outside CI.
    fn start(dir: &TestDir, args: &[&str]) -> Server {
        assert!(
            Command::new("python3").arg("--version").output().is_ok(),
            "python3 is needed for the summarizer tests (tests/support/chat_server.py): install it"
        );
        let log = dir.join(&format!("requests-{}.jsonl", std::process::id()));
        let mut child = Command::new("python3")
            .arg(root().join("tests/support/chat_server.py"))
            .arg("--log")
            .arg(&log)
            .args(["--max-seconds", "120"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port =
            line.trim().parse().unwrap_or_else(|_| panic!("no port from the server: {line:?}"));
        Server { child, port, log }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every request received so far.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log).map(|t| json_lines(&t)).unwrap_or_default()
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `compact --force` of `input` with `args`, the key in the environment;
/// (output, report lines, stderr).
fn compact(dir: &TestDir, name: &str, input: &Path, args: &[&str]) -> (String, Vec<Value>, String) {
    let out = dir.join(&format!("{name}.out.jsonl"));
    let report = dir.join(&format!("{name}.report.jsonl"));
    let mut cmd = compactor();
    cmd.env(KEY_VAR, API_KEY).args(["compact", "--force"]);
    if !args.contains(&"--summarizer-model") {
        cmd.args(["--summarizer-model", "test-model"]);
    }
    let res = run_ok(cmd.arg(input).arg("-o").arg(&out).arg("--report").arg(&report).args(args));
    let report = json_lines(&std::fs::read_to_string(&report).unwrap());
    (std::fs::read_to_string(&out).unwrap(), report, String::from_utf8(res.stderr).unwrap())
}

/// The first `n` sessions of the fixture, as a file of their own.
fn first_sessions(dir: &TestDir, n: usize) -> PathBuf {
    let text = std::fs::read_to_string(fixture(SESSIONS)).unwrap();
    let lines: Vec<&str> = text.lines().take(n).collect();
    dir.write(&format!("first-{n}.jsonl"), lines.join("\n") + "\n")
}

/// The summary text of each output session, in output order.
fn summaries(output: &str) -> Vec<String> {
    json_lines(output)
        .iter()
        .map(|s| {
            s["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|m| m["content"].as_str())
                .find(|c| c.starts_with("[CONTEXT COMPACTION"))
                .expect("a summary")
                .to_string()
        })
        .collect()
}

/// The report lines' `summarizer.reason`s.
fn reasons(report: &[Value]) -> Vec<String> {
    report.iter().map(|r| r["summarizer"]["reason"].as_str().unwrap_or("-").to_string()).collect()
}

/// The deterministic output of `input` (no summarizer).
fn deterministic(dir: &TestDir, input: &Path) -> String {
    let out = dir.join("deterministic.jsonl");
    run_ok(compactor().args(["compact", "--force", "-q"]).arg(input).arg("-o").arg(&out));
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn summarizer_http_body_is_framed_ours_and_the_key_goes_only_in_the_header() {
    let dir = TestDir::new();
    let mut server = Server::start(&dir, &["--mode", "ok"]);
    let cache = dir.join("cache");
    let url = server.url();
    let args = [
        "--summarizer",
        &url,
        "--summarizer-key-env",
        KEY_VAR,
        "--summary-cache",
        cache.to_str().unwrap(),
    ];
    let (out, report, stderr) = compact(&dir, "ok", &fixture(SESSIONS), &args);
    let sums = summaries(&out);
    assert_eq!(sums.len(), 6);
    for (n, s) in sums.iter().enumerate() {
        // The model's body between our first line and our appendices.
        let body =
            format!("## Goal\nModel summary of: Running case 0 of task {n}.\n\n## Anchor Index");
        assert!(s.contains(&body), "session {n}: {s}");
        assert!(s.contains("## User Messages (verbatim)"), "lean's appendix stays: {s}");
        assert!(s.ends_with(END_MARKER), "{s}");
        assert_eq!(s.matches("[CONTEXT COMPACTION — REFERENCE ONLY]").count(), 1);
    }
    for r in &report {
        let s = &r["summarizer"];
        assert_eq!((s["used"].as_bool(), s["cached"].as_bool()), (Some(true), Some(false)), "{r}");
        assert_eq!((s["fallback"].as_bool(), s["calls"].as_u64()), (Some(false), Some(1)), "{r}");
        assert_eq!(s["completion_tokens"], 7, "the usage the server gave: {r}");
        assert!(s["prompt_tokens"].as_u64().unwrap() > 100, "{r}");
    }
    assert!(stderr.contains("summarizer: 6 used (0 cached), 0 fallback; 6 requests"), "{stderr}");
    server.stop();
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    for q in &requests {
        assert_eq!(q["path"], "/v1/chat/completions");
        assert_eq!(q["authorization"], format!("Bearer {API_KEY}"));
        let body = q["body"].as_str().unwrap();
        assert!(!body.contains(API_KEY), "the key is never in the body");
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["model"], "test-model");
        assert_eq!(v["temperature"], 0.0);
        assert_eq!(v["messages"][0]["role"], "system");
        for secret in [FAKE_KEY, "hunter2hunter2", "private reasoning", "base64,"] {
            assert!(!body.contains(secret), "{secret} left the process: {body}");
        }
    }
    // The key is in no output, report, message or cache file.
    assert!(!stderr.contains(API_KEY));
    let written: Vec<PathBuf> =
        files_under(dir.path(), "").into_iter().filter(|p| *p != server.log).collect();
    assert!(written.iter().any(|p| p.starts_with(&cache)), "the cache holds the answers");
    for path in written {
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        assert!(!text.contains(API_KEY), "the key is in {}", path.display());
    }
}

/// Runs one session against a server in `mode` (extra server and compact
/// arguments); the output must be the deterministic one, the fallback counted.
fn falls_back(mode: &str, server_args: &[&str], args: &[&str], reason: &str, requests: usize) {
    let dir = TestDir::new();
    let mut all = vec!["--mode", mode];
    all.extend_from_slice(server_args);
    let mut server = Server::start(&dir, &all);
    let input = first_sessions(&dir, 1);
    let url = server.url();
    let mut compact_args = vec!["--summarizer", url.as_str()];
    compact_args.extend_from_slice(args);
    let (out, report, stderr) = compact(&dir, mode, &input, &compact_args);
    eqnice!(deterministic(&dir, &input), out);
    assert_eq!(reasons(&report), [reason], "{report:?}");
    let s = &report[0]["summarizer"];
    assert_eq!((s["used"].as_bool(), s["fallback"].as_bool()), (Some(false), Some(true)));
    let line = format!("summarizer: 0 used (0 cached), 1 fallback ({reason}: 1)");
    assert!(stderr.contains(&line), "{stderr}");
    server.stop();
    assert_eq!(server.requests().len(), requests, "{:?}", server.requests());
}

#[test]
fn summarizer_http_500_falls_back_after_the_retries() {
    falls_back("500", &[], &[], "http_500", 4);
}

#[test]
fn summarizer_http_timeout_falls_back() {
    falls_back("sleep", &["--sleep", "5"], &["--summarizer-timeout", "1"], "timeout", 1);
}

#[test]
fn summarizer_http_bad_json_falls_back() {
    falls_back("bad-json", &[], &[], "bad_json", 1);
}

#[test]
fn summarizer_http_over_budget_body_falls_back() {
    falls_back("over-budget", &[], &[], "over_budget", 1);
}

#[test]
fn summarizer_http_empty_body_falls_back() {
    falls_back("empty", &[], &[], "empty", 1);
}

#[test]
fn summarizer_http_429_is_retried_then_used() {
    let dir = TestDir::new();
    let mut server = Server::start(&dir, &["--mode", "429-then-ok", "--fail-first", "2"]);
    let input = first_sessions(&dir, 1);
    let (out, report, _) = compact(&dir, "retry", &input, &["--summarizer", &server.url()]);
    assert!(summaries(&out)[0].contains("Model summary of: Running case 0 of task 0."));
    assert_eq!(report[0]["summarizer"]["used"], true);
    server.stop();
    let modes: Vec<String> =
        server.requests().iter().map(|q| q["mode"].as_str().unwrap().to_string()).collect();
    assert_eq!(modes, ["429", "429", "ok"]);
}

#[test]
fn summarizer_connection_refused_falls_back() {
    let dir = TestDir::new();
    // A port that was free a moment ago: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let input = first_sessions(&dir, 1);
    let url = format!("http://127.0.0.1:{port}/v1");
    let (out, report, stderr) = compact(&dir, "refused", &input, &["--summarizer", &url]);
    eqnice!(deterministic(&dir, &input), out);
    assert_eq!(reasons(&report), ["connection"]);
    assert!(stderr.contains("1 fallback (connection: 1)"), "{stderr}");
}

#[test]
fn summarizer_concurrency_is_bounded_and_output_order_kept() {
    let dir = TestDir::new();
    let mut server = Server::start(&dir, &["--mode", "ok", "--delay", "0.3"]);
    let url = server.url();
    let input = fixture(SESSIONS);
    let mut outputs = Vec::new();
    for threads in ["1", "4"] {
        let args = ["--summarizer", &url, "--summarizer-concurrency", "2", "-j", threads];
        let (out, report, _) = compact(&dir, &format!("j{threads}"), &input, &args);
        assert!(report.iter().all(|r| r["summarizer"]["used"] == true), "{report:?}");
        let ids: Vec<String> =
            report.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
        assert_eq!(ids, (0..6).map(|n| format!("summarizer-{n}")).collect::<Vec<_>>());
        for (n, s) in summaries(&out).iter().enumerate() {
            assert!(s.contains(&format!("Model summary of: Running case 0 of task {n}.")), "{s}");
        }
        outputs.push(out);
    }
    eqnice!(outputs[0], outputs[1]);
    server.stop();
    let requests = server.requests();
    assert_eq!(requests.len(), 12, "every session answered, in both runs");
    let peak = requests.iter().map(|q| q["in_flight"].as_u64().unwrap()).max().unwrap();
    assert!(peak <= 2, "at most --summarizer-concurrency requests in flight, saw {peak}");
}

#[test]
fn summarizer_cache_replays_a_run_with_the_server_stopped() {
    let dir = TestDir::new();
    let mut server = Server::start(&dir, &["--mode", "ok"]);
    let cache = dir.join("cache");
    let url = server.url();
    let input = fixture(SESSIONS);
    let args = ["--summarizer", &url, "--summary-cache", cache.to_str().unwrap()];
    let (first, _, _) = compact(&dir, "first", &input, &args);
    server.stop();
    assert_eq!(server.requests().len(), 6);
    // The server is gone: every answer comes from the cache, byte for byte.
    let (second, report, stderr) = compact(&dir, "second", &input, &args);
    eqnice!(first, second);
    assert!(
        report.iter().all(|r| r["summarizer"]["cached"] == true && r["summarizer"]["calls"] == 0)
    );
    assert!(stderr.contains("6 used (6 cached), 0 fallback; 0 requests"), "{stderr}");
    // --summary-cache-only never calls out: same bytes from the cache ...
    let only =
        ["--summarizer", &url, "--summary-cache", cache.to_str().unwrap(), "--summary-cache-only"];
    let (third, _, _) = compact(&dir, "third", &input, &only);
    eqnice!(first, third);
    // ... and a miss (another model) falls back, counted.
    let (fourth, report, _) = compact(
        &dir,
        "fourth",
        &input,
        &["--summarizer-model", "another-model"].iter().chain(&only).copied().collect::<Vec<_>>(),
    );
    eqnice!(deterministic(&dir, &input), fourth);
    assert_eq!(reasons(&report), vec!["cache_miss"; 6]);
}

/// `compact` of session 0 with `--summarizer-cmd CMD`.
fn with_command(dir: &TestDir, name: &str, cmd: &str) -> (String, Vec<Value>, String) {
    let input = first_sessions(dir, 1);
    compact(dir, name, &input, &["--summarizer-cmd", cmd])
}

#[test]
fn summarizer_command_writes_the_body_from_the_request_on_stdin() {
    let dir = TestDir::new();
    let seen = dir.join("request.json");
    let cmd = format!("cat > '{}'; printf '## Goal\\nFrom the command.\\n'", seen.display());
    let (out, report, _) = with_command(&dir, "cmd", &cmd);
    assert!(summaries(&out)[0].contains("## Goal\nFrom the command.\n\n## Anchor Index"));
    let s = &report[0]["summarizer"];
    assert_eq!((s["used"].as_bool(), s["calls"].as_u64()), (Some(true), Some(1)));
    let ours = o200k_meter().text("## Goal\nFrom the command.\n");
    assert_eq!(s["completion_tokens"], ours, "no usage from a command: our count of its output");
    let request: Value = serde_json::from_str(&std::fs::read_to_string(seen).unwrap()).unwrap();
    assert_eq!(request["model"], "test-model");
    assert_eq!(request["messages"][1]["role"], "user");
}

#[test]
fn summarizer_command_failures_fall_back() {
    let dir = TestDir::new();
    let input = first_sessions(&dir, 1);
    let expected = deterministic(&dir, &input);
    for (cmd, reason) in [("cat >/dev/null; exit 3", "exit_status_3"), ("cat >/dev/null", "empty")]
    {
        let (out, report, stderr) = with_command(&dir, reason, cmd);
        eqnice!(expected, out);
        assert_eq!(reasons(&report), [reason]);
        assert!(stderr.contains(&format!("1 fallback ({reason}: 1)")), "{stderr}");
    }
}

#[test]
fn summarizer_options_are_checked_before_anything_runs() {
    let input = fixture(SESSIONS);
    let cases: [(&[&str], &str); 4] = [
        (
            &["--summarizer", "https://api.example.com/v1", "--summarizer-model", "m"],
            "HTTPS is not built in",
        ),
        (&["--summarizer", "http://127.0.0.1:9/v1"], "needs --summarizer-model"),
        (
            &[
                "--summarizer",
                "http://127.0.0.1:9/v1",
                "--summarizer-model",
                "m",
                "--summarizer-key-env",
                "COMPACTOR_TEST_UNSET_VAR",
            ],
            "--summarizer-key-env COMPACTOR_TEST_UNSET_VAR: the variable is not set",
        ),
        (
            &["--summarizer", "http://x/v1", "--summarizer-cmd", "cat", "--summarizer-model", "m"],
            "not both",
        ),
    ];
    for (args, message) in cases {
        let res = run_code(compactor().args(["compact", "--force"]).arg(&input).args(args), 2);
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(res.stdout.is_empty());
    }
}

#[test]
fn summarizer_tokens_and_cost_are_counted_by_replay() {
    let dir = TestDir::new();
    let input = first_sessions(&dir, 1);
    let report = dir.join("replay.jsonl");
    let last = dir.join("last-request.json");
    let cmd = format!("cat > '{}'; printf '## Goal\\nx\\n'", last.display());
    run_ok(
        compactor()
            .args(["replay", "--window", "2000", "--model", "gpt-4o", "--prices", "--report"])
            .arg(&report)
            .arg(&input)
            .args(["--summarizer-cmd", &cmd]),
    );
    let row = &json_lines(&std::fs::read_to_string(report).unwrap())[0];
    let compactions = row["compactions"].as_u64().unwrap();
    assert!(compactions > 0, "{row}");
    let s = &row["summarizer"];
    assert_eq!(s["used"].as_u64(), Some(compactions), "{row}");
    let ours = o200k_meter().text("## Goal\nx\n");
    assert_eq!(s["completion_tokens"].as_u64(), Some(ours * compactions), "{row}");
    assert!(s["prompt_tokens"].as_u64().unwrap() > 0);
    assert!(row["summarizer_cost"].as_f64().unwrap() > 0.0, "{row}");
    // The second compaction updates the first one's summary, given apart, never nested.
    assert!(compactions >= 2, "{row}");
    let request: Value = serde_json::from_str(&std::fs::read_to_string(last).unwrap()).unwrap();
    let user = request["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.starts_with("Previous summary, to update (never nest it):\n## Goal\nx\n\n"),
        "{user}"
    );
    assert!(!user.contains("[CONTEXT COMPACTION"), "{user}");
}

/// The request session 0 gives, as text: parameters, system and user messages.
fn rendered_request(request: &Value) -> String {
    format!(
        "model: {}\ntemperature: {}\nmax_tokens: {}\nstream: {}\n\n--- system ---\n{}\n\n--- user ---\n{}\n",
        request["model"],
        request["temperature"],
        request["max_tokens"],
        request["stream"],
        request["messages"][0]["content"].as_str().unwrap(),
        request["messages"][1]["content"].as_str().unwrap(),
    )
}

#[test]
fn summarizer_prompt_golden() {
    let dir = TestDir::new();
    let seen = dir.join("request.json");
    let cmd = format!("cat > '{}'; printf '## Goal\\nx\\n'", seen.display());
    with_command(&dir, "golden", &cmd);
    let got =
        rendered_request(&serde_json::from_str(&std::fs::read_to_string(seen).unwrap()).unwrap());
    for secret in [FAKE_KEY, "hunter2hunter2", "private reasoning", "base64,"] {
        assert!(!got.contains(secret), "{secret} is in the prompt");
    }
    assert!(got.contains("[REDACTED:openai_key]") && got.contains("[image omitted]"));
    let want = root().join("fixtures/summarizer/prompt.golden.txt");
    assert_golden(&want, &got);
}

#[test]
fn summarizer_chunks_a_middle_over_its_window_and_each_chunk_updates_the_last() {
    let dir = TestDir::new();
    let log = dir.join("requests.jsonl");
    let cmd = format!(
        "cat >> '{0}'; echo >> '{0}'; printf '## Goal\\nchunk %s\\n' $(wc -l < '{0}')",
        log.display()
    );
    let input = first_sessions(&dir, 1);
    let args = ["--summarizer-cmd", cmd.as_str(), "--summarizer-window", "5200"];
    let (out, report, _) = compact(&dir, "chunks", &input, &args);
    let requests: Vec<Value> = json_lines(&std::fs::read_to_string(&log).unwrap());
    assert_eq!(requests.len(), 3, "the middle took three chunks at this window");
    assert_eq!(report[0]["summarizer"]["calls"], 3);
    let users: Vec<&str> =
        requests.iter().map(|r| r["messages"][1]["content"].as_str().unwrap()).collect();
    assert!(users[0].starts_with("Previous summary, to update (never nest it):\nNone.\n"));
    for (k, user) in users.iter().enumerate().skip(1) {
        let previous =
            format!("Previous summary, to update (never nest it):\n## Goal\nchunk {k}\n\n");
        assert!(user.starts_with(&previous), "chunk {k}: {user}");
    }
    // Every turn is sent once, in order: the block headers run [0], [1], ... across the chunks.
    let headers: Vec<usize> = users
        .iter()
        .flat_map(|u| u.lines())
        .filter_map(|l| l.strip_prefix('[')?.split_once(']')?.0.parse().ok())
        .collect();
    assert_eq!(headers, (0..headers.len()).collect::<Vec<_>>());
    assert!(summaries(&out)[0].contains("## Goal\nchunk 3\n\n## Anchor Index"));
    // A window too small for any chunk falls back.
    let (out, report, _) =
        compact(&dir, "small", &input, &["--summarizer-cmd", "cat", "--summarizer-window", "3000"]);
    assert_eq!(reasons(&report), ["too_large"]);
    eqnice!(deterministic(&dir, &input), out);
}

#[test]
fn summarizer_counts_reach_summary_json_and_a_merged_report_is_the_same() {
    let dir = TestDir::new();
    let input = fixture(SESSIONS);
    let cmd = "cat >/dev/null; printf '## Goal\\nx\\n'";
    let report = |out: &str, extra: &[&str]| {
        let res = run_ok(
            compactor()
                .args(["report", "--window", "2000", "--summarizer-cmd", cmd, "-o"])
                .arg(dir.join(out))
                .arg(&input)
                .args(extra),
        );
        String::from_utf8(res.stderr).unwrap()
    };
    let stderr = report("whole", &[]);
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("whole/summary.json")).unwrap())
            .unwrap();
    assert!(summary["options"]["summarizer"].as_str().unwrap().starts_with("default (command: "));
    for mode in ["lean", "legacy", "tiered"] {
        let m = &summary["modes"][mode];
        assert_eq!(m["summarizer"]["used"], m["compacted"], "{mode}: {m}");
        assert_eq!(m["summarizer"]["fallback"], 0);
        let replay = &m["replay"];
        assert_eq!(replay["summarizer"]["used"], replay["compactions"], "{mode}: {replay}");
    }
    assert!(summary["modes"]["none"].get("summarizer").is_none());
    assert!(stderr.contains("compactor: summarizer: "), "{stderr}");
    report("s0", &["--shard", "0/2"]);
    report("s1", &["--shard", "1/2"]);
    run_ok(
        compactor()
            .args(["report", "--merge", "-o"])
            .arg(dir.join("merged"))
            .arg(dir.join("s0"))
            .arg(dir.join("s1")),
    );
    for f in ["summary.json", "sessions.jsonl", "sessions.csv"] {
        let read = |d: &str| std::fs::read_to_string(dir.join(d).join(f)).unwrap();
        eqnice!(read("whole"), read("merged"));
    }
}

#[test]
fn summarizer_prompt_golden_updates_a_previous_summary_without_nesting_it() {
    let dir = TestDir::new();
    // Session 0 compacted once (deterministic summary), then more turns.
    let once = deterministic(&dir, &first_sessions(&dir, 1));
    let mut session: Value = serde_json::from_str(once.trim()).unwrap();
    let messages = session["messages"].as_array_mut().unwrap();
    for k in 0..6 {
        messages.push(serde_json::json!({"role": "user", "content": format!("Later ask {k}: rerun the suite.")}));
        messages.push(
            serde_json::json!({"role": "assistant", "content": format!("Reran it, pass {k}.")}),
        );
    }
    session.as_object_mut().unwrap().remove("compaction");
    let input = dir.write("again.jsonl", serde_json::to_string(&session).unwrap() + "\n");
    let seen = dir.join("request.json");
    let cmd = format!("cat > '{}'; printf '## Goal\\nx\\n'", seen.display());
    let (out, _, _) = compact(&dir, "again", &input, &["--summarizer-cmd", &cmd]);
    assert_eq!(summaries(&out).len(), 1, "one summary, not two");
    let got =
        rendered_request(&serde_json::from_str(&std::fs::read_to_string(seen).unwrap()).unwrap());
    let user = got.split("--- user ---\n").nth(1).unwrap();
    let previous = user.split("\n\nTurns to summarize").next().unwrap();
    assert!(previous.contains("## Completed Actions\n1. "), "{previous}");
    for frame in
        ["[CONTEXT COMPACTION", "[END OF COMPACTION", "## Anchor Index", "## User Messages"]
    {
        assert!(!user.contains(frame), "{frame} was sent: {user}");
    }
    let want = root().join("fixtures/summarizer/prompt_update.golden.txt");
    assert_golden(&want, &got);
}
