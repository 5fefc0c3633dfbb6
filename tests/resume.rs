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

/// A small deterministic generator for the kill points (no `rand` needed).
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Inputs of the kill tests: enough work for many output batches (a batch is
/// committed every `BATCH_FILES` files or 100 ms, `io/sync_batch.rs`), so a
/// run records its progress several times before it ends.
const KILL_INPUTS: usize = 96;

fn kill_seed() -> u64 {
    let seed =
        std::env::var("RESUME_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x9e37_79b9);
    eprintln!("kill points from RESUME_SEED={seed}");
    seed
}

/// Every file under a final name is complete: it equals the reference.
fn assert_complete(out: &Path, expected: &BTreeMap<String, Vec<u8>>, when: &str) {
    for (name, body) in outputs(out) {
        assert_eq!(&body, &expected[&name], "{name} incomplete after a kill {when}");
    }
}

/// Resumes `out` once more to the end; checks it skipped exactly what the
/// manifest held and gives the reference bytes. Returns how many it skipped.
fn finish(input: &Path, out: &Path, expected: &BTreeMap<String, Vec<u8>>, what: &str) -> usize {
    let recorded = manifest_lines(out).min(KILL_INPUTS);
    let last = run_ok(&mut compact(input, out, &["--resume"]));
    let skipped = skipped(&last.stderr);
    // Every input the manifest recorded is skipped; the rest is done now.
    assert_eq!(skipped, recorded, "{what}");
    assert_eq!(&outputs(out), expected, "{what}: resumed output differs");
    assert_eq!(manifest_lines(out), KILL_INPUTS);
    skipped
}

/// Kills real runs with SIGKILL once they have recorded progress, several
/// times over, resuming after each kill; then checks both promises: only
/// complete files under final names at every stop, and the resumed result
/// byte-identical to a run that was never interrupted.
///
/// The kill waits on what the run did, not on the clock: it polls the
/// manifest and kills once it holds more lines than the run started with (a
/// seeded threshold within the first half of the work left) and fewer than
/// all, so the kill lands mid-run on a fast machine and a loaded one alike.
/// `RESUME_SEED` picks other thresholds.
#[cfg(unix)]
#[test]
fn a_killed_run_is_finished_by_resume_with_identical_bytes() {
    let dir = TestDir::new();
    let input = synth_inputs(&dir, KILL_INPUTS, 60_000);
    let reference = dir.join("reference");
    run_ok(&mut compact(&input, &reference, &["-q"]));
    let expected = outputs(&reference);
    assert_eq!(expected.len(), KILL_INPUTS);

    let mut state = kill_seed();
    let mut mid_run_kills = 0;
    for round in 0..3 {
        let out = dir.join(&format!("out{round}"));
        // Kill up to three times, each run resuming the one before.
        for kill in 0..3 {
            let start = manifest_lines(&out);
            if start >= KILL_INPUTS {
                break;
            }
            let half_left = ((KILL_INPUTS - start) / 2).max(1) as u64;
            let threshold = start + 1 + (next(&mut state) % half_left) as usize;
            let mut child = compact(&input, &out, &["-q", "--resume"])
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let seen = loop {
                if child.try_wait().unwrap().is_some() {
                    break None; // finished on its own before the threshold was seen
                }
                let lines = manifest_lines(&out);
                if lines >= threshold && lines < KILL_INPUTS {
                    let _ = child.kill(); // SIGKILL
                    break Some(lines);
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            };
            child.wait().unwrap();
            let when = format!("in round {round}, kill {kill}, at {seen:?} of {KILL_INPUTS}");
            assert_complete(&out, &expected, &when);
            if let Some(lines) = seen {
                // The run was stopped between its first and last record.
                assert!(manifest_lines(&out) >= lines, "{when}: the manifest lost lines");
                mid_run_kills += 1;
            }
        }
        let skipped = finish(&input, &out, &expected, &format!("round {round}"));
        assert!(skipped > 0, "round {round}: the resume skipped nothing");
    }
    assert!(mid_run_kills >= 3, "only {mid_run_kills} of 9 kills landed mid-run");
}

/// The timed variant, an extra beside the test above: kills at pseudo-random
/// moments over the length of an uninterrupted run. Whether a kill lands
/// mid-run depends on the machine's speed, so only the two promises are
/// asserted (complete files at every stop, identical bytes after resuming).
#[cfg(unix)]
#[test]
fn a_run_killed_at_random_moments_resumes_to_identical_bytes() {
    let dir = TestDir::new();
    let input = synth_inputs(&dir, KILL_INPUTS, 60_000);
    let reference = dir.join("reference");
    let started = std::time::Instant::now();
    run_ok(&mut compact(&input, &reference, &["-q"]));
    let run_ms = (started.elapsed().as_millis() as u64).max(50);
    let expected = outputs(&reference);

    let mut state = kill_seed();
    for round in 0..2 {
        let out = dir.join(&format!("out{round}"));
        for _ in 0..3 {
            let delay = (5 + next(&mut state) % 95) * run_ms / 100;
            let mut child = compact(&input, &out, &["-q", "--resume"])
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(delay));
            let _ = child.kill(); // SIGKILL
            child.wait().unwrap();
            assert_complete(&out, &expected, &format!("at {delay} ms"));
        }
        finish(&input, &out, &expected, &format!("round {round}"));
    }
}

/// Issue 36 point 8: `--resume` knows an option file by its contents. After
/// the `--tool-families` file is edited in place (same path), a resumed run
/// redoes every input, whose outputs now follow the edit (equal to a fresh
/// run with the edited file); a copy of the file under another name changes
/// nothing. On the binary before, which hashed the path, the edited run
/// skipped all inputs and kept outputs made with the old families.
#[test]
fn resume_redoes_inputs_after_an_option_file_is_edited() {
    let dir = TestDir::new();
    let input = synth_inputs(&dir, 3, 60_000);
    let out = dir.join("out");
    let families = dir.join("families.json");
    let with = |path: &Path| ["--tool-families".to_string(), path.display().to_string()];
    std::fs::write(&families, r#"{"tools": {}}"#).unwrap();
    let args = with(&families);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_ok(&mut compact(&input, &out, &args));
    let before = outputs(&out);
    assert_eq!(
        skipped(&run_ok(&mut compact(&input, &out, &[&["--resume"], &args[..]].concat())).stderr),
        3
    );

    // Edited in place: Bash outputs are now one-liners of the `read` family.
    std::fs::write(&families, r#"{"tools": {"Bash": "read"}}"#).unwrap();
    let resumed = run_ok(&mut compact(&input, &out, &[&["--resume"], &args[..]].concat()));
    assert_eq!(skipped(&resumed.stderr), 0, "every input is redone");
    let fresh = dir.join("fresh");
    run_ok(&mut compact(&input, &fresh, &args));
    assert_eq!(outputs(&out), outputs(&fresh), "the resumed outputs follow the edited file");

    // The same contents under another name: still finished.
    let copy = dir.join("copy.json");
    std::fs::copy(&families, &copy).unwrap();
    let moved = with(&copy);
    let moved: Vec<&str> = moved.iter().map(String::as_str).collect();
    let again = run_ok(&mut compact(&input, &out, &[&["--resume"], &moved[..]].concat()));
    assert_eq!(skipped(&again.stderr), 3);
    assert_ne!(outputs(&out), before, "the edit changes the outputs");
}

/// A fatal error (an output that cannot be created) stops the run after the
/// inputs before the failing one, and exactly those: their finished files are
/// committed and recorded whatever batch they waited in (before, a file still
/// waiting for its batch was deleted, so what was kept depended on timing).
/// `--resume` then finishes the rest to the bytes of an uninterrupted run.
#[test]
fn a_fatal_error_keeps_exactly_the_inputs_before_it() {
    let dir = TestDir::new();
    let input = synth_inputs(&dir, 6, 20_000);
    // The fourth input one folder down, so that a file can block its output's folder.
    std::fs::create_dir(input.join("s03")).unwrap();
    std::fs::rename(input.join("s03.jsonl"), input.join("s03/s03.jsonl")).unwrap();
    let tree = |root: &Path| -> BTreeMap<String, Vec<u8>> {
        files_under(root, "")
            .into_iter()
            .map(|p| (p.strip_prefix(root).unwrap().to_string_lossy().into_owned(), p))
            .filter(|(name, _)| !name.starts_with('.'))
            .map(|(name, p)| (name, std::fs::read(p).unwrap()))
            .collect()
    };
    let reference = dir.join("reference");
    run_ok(&mut compact(&input, &reference, &[]));
    let expected = tree(&reference);
    assert_eq!(expected.len(), 6);
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("s03"), "in the way").unwrap();
    for threads in ["-j1", "-j2"] {
        let mut cmd = compactor();
        cmd.args(["compact", threads, "--window", "32000"])
            .arg(&input)
            .arg("-o")
            .arg(format!("{}/", out.display()));
        let failed = run_code(&mut cmd, 2);
        let err = String::from_utf8_lossy(&failed.stderr);
        assert!(err.contains("3 of 6 output files are complete and kept"), "{threads}: {err}");
        assert!(err.contains("s03"), "the error names the output it could not create: {err}");
        let mut kept = tree(&out);
        assert_eq!(kept.remove("s03").as_deref(), Some(b"in the way".as_slice()));
        let names: Vec<&str> = kept.keys().map(String::as_str).collect();
        assert_eq!(names, ["s00.jsonl", "s01.jsonl", "s02.jsonl"], "{threads}");
        for (name, body) in &kept {
            assert!(body == &expected[name], "{threads}: {name} differs from an uninterrupted run");
        }
        assert_eq!(manifest_lines(&out), 3, "{threads}: the kept files are in the manifest");
    }
    std::fs::remove_file(out.join("s03")).unwrap();
    let last = run_ok(&mut compact(&input, &out, &["--resume"]));
    assert_eq!(skipped(&last.stderr), 3);
    let got = tree(&out);
    assert_eq!(got.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
    for (name, body) in &expected {
        assert!(&got[name] == body, "{name} after --resume differs from an uninterrupted run");
    }
    assert_eq!(manifest_lines(&out), 6);
}
