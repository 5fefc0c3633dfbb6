//! Golden cases: `fixtures/golden/<case>.case` names an input and arguments;
//! `<case>.expected.jsonl` and `<case>.report.jsonl` hold the output and report
//! it must produce, byte for byte. After a deliberate change, regenerate with
//! `UPDATE_GOLDEN=1 cargo test golden` and review the diff.

use crate::util::*;
use std::path::Path;

struct Case {
    name: String,
    input: String,
    args: Vec<String>,
}

fn cases() -> Vec<Case> {
    let dir = root().join("fixtures/golden");
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries.into_iter().filter(|p| p.extension().is_some_and(|e| e == "case")) {
        let text = std::fs::read_to_string(&p).unwrap();
        let mut input = None;
        let mut args = Vec::new();
        for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let (k, v) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("{}: bad line `{line}`", p.display()));
            match k.trim() {
                "input" => input = Some(v.trim().to_string()),
                "args" => args = v.split_whitespace().map(str::to_string).collect(),
                other => panic!("{}: unknown key `{other}`", p.display()),
            }
        }
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        out.push(Case { name, input: input.expect("input"), args });
    }
    out
}

#[test]
fn golden_cases() {
    let cases = cases();
    assert!(cases.len() >= 4, "golden cases are missing");
    let dir = TestDir::new();
    for case in cases {
        let out = dir.join(&format!("{}.out.jsonl", case.name));
        let report = dir.join(&format!("{}.report.jsonl", case.name));
        let mut cmd = compactor();
        cmd.current_dir(root())
            .args(["compact", "-q"])
            .args(&case.args)
            .arg("-o")
            .arg(&out)
            .arg("--report")
            .arg(&report)
            .arg(&case.input);
        let res = cmd.output().unwrap();
        assert!(
            matches!(res.status.code(), Some(0 | 3)),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&res.stderr)
        );
        let golden = root().join("fixtures/golden");
        for (got, suffix) in [(&out, "expected.jsonl"), (&report, "report.jsonl")] {
            let want: &Path = &golden.join(format!("{}.{suffix}", case.name));
            assert_golden(want, &std::fs::read_to_string(got).unwrap());
        }
    }
}
