//! `compact --resume`: a killed run is finished, not restarted, and gives the
//! same bytes as a run that was never interrupted.

use crate::util::*;
use std::collections::BTreeMap;
use std::path::Path;

const MANIFEST: &str = ".compactor-manifest.jsonl";

/// The files of a directory output (dot-files, i.e. the manifest and
/// temporary files, left out), by name.
fn outputs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return BTreeMap::new() };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .map(|p| {
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
        })
        .collect()
}

/// Complete manifest lines (a kill may leave a torn last line, which does not count).
fn manifest_lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join(MANIFEST)).map_or(0, |t| {
        t.lines().filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()).count()
    })
}

fn compact(input: &Path, out: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = compactor();
    cmd.args(["compact", "-j2", "--window", "32000"])
        .args(extra)
        .arg(input)
        .arg("-o")
        .arg(format!("{}/", out.display()));
    cmd
}

/// How many inputs a `--resume` run said it skipped.
fn skipped(stderr: &[u8]) -> usize {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .find_map(|l| l.strip_prefix("compactor: resumed: "))
        .and_then(|rest| rest.split_whitespace().next())
        .map_or(0, |n| n.parse().unwrap())
}

#[test]
fn resume_skips_finished_inputs_and_redoes_changed_ones() {
    let dir = TestDir::new();
    let input = synth_inputs(&dir, 4, 60_000);
    let out = dir.join("out");
    let first = run_ok(&mut compact(&input, &out, &[]));
    assert_eq!(manifest_lines(&out), 4, "one manifest line per finished output");
    let before = outputs(&out);
    assert_eq!(before.len(), 4);
    let summary = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .find(|l| l.contains(" sessions from "))
            .unwrap()
            .to_string()
    };

    // Nothing changed: everything is skipped, and the totals still cover the whole run.
    let again = run_ok(&mut compact(&input, &out, &["--resume"]));
    assert_eq!(skipped(&again.stderr), 4);
    assert_eq!(summary(&again), summary(&first));
    assert_eq!(outputs(&out), before);

    // One input rewritten (a new size): only it is done again.
    let s1 = input.join("s01.jsonl");
    let text = std::fs::read_to_string(&s1).unwrap();
    let one_session = text.lines().next().unwrap().to_string() + "\n";
    std::fs::write(&s1, &one_session).unwrap();
    let partly = run_ok(&mut compact(&input, &out, &["--resume"]));
    assert_eq!(skipped(&partly.stderr), 3);
    let after = outputs(&out);
    assert_eq!(after["s01.jsonl"].iter().filter(|&&b| b == b'\n').count(), 1);
    for name in ["s00.jsonl", "s02.jsonl", "s03.jsonl"] {
        assert_eq!(after[name], before[name], "{name} is untouched");
    }

    // A finished output that was deleted is written again.
    std::fs::remove_file(out.join("s02.jsonl")).unwrap();
    let redo = run_ok(&mut compact(&input, &out, &["--resume"]));
    assert_eq!(skipped(&redo.stderr), 3);
    assert_eq!(outputs(&out)["s02.jsonl"], before["s02.jsonl"]);

    // Other options that change the bytes: nothing is skipped.
    let legacy = run_ok(&mut compact(&input, &out, &["--resume", "--mode", "legacy"]));
    assert_eq!(skipped(&legacy.stderr), 0);
    // Thread count and progress do not count as options.
    let mut one_thread = compactor();
    one_thread
        .args(["compact", "-j1", "--window", "32000", "--resume", "--mode", "legacy"])
        .arg(&input)
        .arg("-o")
        .arg(format!("{}/", out.display()));
    assert_eq!(skipped(&run_ok(&mut one_thread).stderr), 4);
    // Without --resume, everything is done again and the manifest starts afresh.
    run_ok(&mut compact(&input, &out, &[]));
    assert_eq!(manifest_lines(&out), 4);
}

#[test]
fn resume_needs_a_directory_output() {
    let dir = TestDir::new();
    let out = run_code(
        compactor()
            .args(["compact", "--resume", "-o"])
            .arg(dir.join("one.jsonl"))
            .arg(fixture("edge/cjk.jsonl")),
        2,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--resume needs a directory output"), "{err}");
}

/// Rounds of kills at most; the test stops after 4 once a kill landed mid-run.
const MAX_ROUNDS: usize = 10;

/// A small deterministic generator for the kill times (no `rand` needed).
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Kills real runs with SIGKILL at pseudo-random moments, several times over,
/// resuming after each kill; then checks both promises: only complete files
/// under final names at every stop, and the resumed result byte-identical to a
/// run that was never interrupted. `RESUME_SEED` picks other moments.
#[cfg(unix)]
#[test]
fn a_killed_run_is_finished_by_resume_with_identical_bytes() {
    let dir = TestDir::new();
    let input = synth_inputs(&dir, 24, 60_000);
    let reference = dir.join("reference");
    // Kill moments are drawn over the length of an uninterrupted run, so that
    // they land mid-run on a fast machine and on a loaded one alike.
    let started = std::time::Instant::now();
    run_ok(&mut compact(&input, &reference, &["-q"]));
    let run_ms = (started.elapsed().as_millis() as u64).max(50);
    let expected = outputs(&reference);
    assert_eq!(expected.len(), 24);

    let mut state: u64 =
        std::env::var("RESUME_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x9e37_79b9);
    eprintln!("kill moments from RESUME_SEED={state}");
    let mut resumed_partway = false;
    // How far into a run kills land, relative to an uninterrupted one: halved
    // when a round ended with every input done, doubled when with none, so the
    // kills find the middle however loaded the machine is.
    let mut scale = 1.0f64;
    for round in 0..MAX_ROUNDS {
        if round >= 4 && resumed_partway {
            break;
        }
        let out = dir.join(&format!("out{round}"));
        let mut done_before_last_kill = 0;
        // Kill up to three times, each run resuming the one before.
        for _ in 0..3 {
            // A share of the work left, drawn in [5%, 100%).
            let share = (5 + next(&mut state) % 95) as f64 / 100.0;
            let left = (24 - manifest_lines(&out).min(24)) as f64 / 24.0;
            let delay = (scale * share * left * run_ms as f64) as u64 + 5;
            let mut child = compact(&input, &out, &["-q", "--resume"])
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(delay));
            let _ = child.kill(); // SIGKILL
            child.wait().unwrap();
            // Every file under a final name is complete: it equals the reference.
            for (name, body) in outputs(&out) {
                assert_eq!(body, expected[&name], "{name} incomplete after a kill at {delay} ms");
            }
            done_before_last_kill = manifest_lines(&out);
        }
        let last = run_ok(&mut compact(&input, &out, &["--resume"]));
        let skipped = skipped(&last.stderr);
        // Every input the manifest recorded is skipped; the rest is done now.
        assert_eq!(skipped, done_before_last_kill.min(24), "round {round}");
        resumed_partway |= skipped > 0 && skipped < 24;
        assert_eq!(outputs(&out), expected, "round {round}: resumed output differs");
        assert_eq!(manifest_lines(&out), 24);
        match skipped {
            0 => scale *= 2.0,
            24 => scale /= 2.0,
            _ => {}
        }
    }
    assert!(resumed_partway, "no kill landed in the middle of a run; try another RESUME_SEED");
}
