//! Every default a help text states by hand is the default the run resolves
//! (issue 41, point 7: `compact --help` said `--model [default: auto]` while
//! `compact` gave every session 200,000).
//!
//! clap writes `[default: X]` itself for options declared with a default
//! value, and those cannot disagree. The defaults written into help texts
//! (`[default: all cores]`, `lean (default)`, ...) can: this test finds every
//! one in every command's help and checks it against what `config` resolves
//! for a command line without the option. A new hand-written default without
//! a check here fails the test, naming it.

use super::args::{Cli, Command};
use super::config;
use clap::{CommandFactory, Parser};
use compactor::Mode;
use compactor::catalog::window::DEFAULT_WINDOW_TOKENS;

/// `compactor ARGS`, parsed.
fn parse(args: &[&str]) -> Command {
    let mut argv = vec!["compactor"];
    argv.extend_from_slice(args);
    Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}")).command
}

/// The `[...]` segments of `help` that state a default, and the values named
/// `X (default...)` in running text.
fn stated(help: &str) -> (Vec<String>, Vec<String>) {
    let mut bracketed = Vec::new();
    let mut rest = help;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else { break };
        let inner = &rest[open + 1..open + close];
        // `[default: FILE[row]]` holds a bracket of its own.
        let (inner, end) = if inner.contains('[') {
            let end =
                rest[open + close + 1..].find(']').map_or(open + close, |e| open + close + 1 + e);
            (&rest[open + 1..end], end)
        } else {
            (inner, open + close)
        };
        if inner.contains("default") {
            bracketed.push(inner.to_string());
        }
        rest = &rest[end + 1..];
    }
    // `lean (default), legacy`, `o200k (exact, default)`, `auto (default: ...)`.
    let mut inline = Vec::new();
    for (at, _) in help.match_indices('(') {
        let inner = help[at + 1..].split(')').next().unwrap_or_default();
        if inner.starts_with("default") || inner.contains(", default") {
            let word = help[..at].trim_end().rsplit([' ', '\n']).next().unwrap_or_default();
            inline.push(word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-').to_string());
        }
    }
    (bracketed, inline)
}

/// The window every session gets when `cmd` (with an input) resolves its
/// options, or `None` when each session gets its own model's (`auto`).
fn window_of(cmd: &str, input: &str) -> Option<u64> {
    let out = format!("{input}.out/");
    let args: Vec<&str> = match cmd {
        "compact" | "report" => vec![cmd, input, "-o", &out],
        _ => vec![cmd, input],
    };
    match parse(&args) {
        Command::Compact(a) => {
            let c = config::Compact::from_args(&a).unwrap();
            if c.policies.is_some() { None } else { Some(c.policy.window) }
        }
        Command::Replay(a) => {
            let p = config::policies(a.mode, &a.budget, false, None, None).unwrap();
            if p.is_auto() { None } else { Some(p.base().window) }
        }
        Command::Report(a) => {
            let p = config::policies(Mode::Lean, &a.budget, false, None, None).unwrap();
            if p.is_auto() { None } else { Some(p.base().window) }
        }
        Command::Anchors(a) => {
            Some(config::policy(Mode::Lean, &a.window, true, None).unwrap().window)
        }
        Command::Tokenize(a) => {
            Some(config::policy(Mode::Lean, &a.budget, true, None).unwrap().window)
        }
        other => panic!("{cmd} has no window: {other:?}"),
    }
}

/// The number in a stated default (`else 200000`), if any.
fn number(text: &str) -> Option<u64> {
    text.split(|c: char| !c.is_ascii_digit()).filter(|w| w.len() >= 3).find_map(|w| w.parse().ok())
}

/// Checks one hand-written `[... default ...]` of `cmd --id` against the
/// resolved configuration; `input` is a file the command may read.
fn check(cmd: &str, id: &str, stated: &str, input: &str) {
    let here = format!("`{cmd} --{id}` states [{stated}]");
    match id {
        "model" | "window" => {
            let resolved = window_of(cmd, input);
            if stated.ends_with("[default: auto]")
                || stated == "default: auto"
                || stated.contains("(auto)")
            {
                assert_eq!(resolved, None, "{here}, but every session gets one window");
            } else {
                assert!(
                    stated.contains("default: none: one window") || stated.contains("else"),
                    "{here}"
                );
                let w = resolved
                    .unwrap_or_else(|| panic!("{here}, but sessions get their own windows"));
                if let Some(n) = number(stated) {
                    assert_eq!(n, w, "{here}, but the window is {w}");
                }
                assert_eq!(w, DEFAULT_WINDOW_TOKENS, "{here}");
            }
        }
        "threads" => {
            assert!(stated.contains("all cores"), "{here}");
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            assert_eq!(config::thread_pool(None).unwrap().current_num_threads(), cores, "{here}");
        }
        "source_column" => {
            let Command::Stats(a) = parse(&["stats", input]) else { unreachable!() };
            assert_eq!(config::read_options(&a.input).source_column, None, "{here}");
            assert!(stated.contains("FILE[row]"), "{here}");
        }
        "target_tokens" => {
            let Command::Compact(a) = parse(&["compact", input]) else { unreachable!() };
            let p = config::policy(Mode::Tiered, &a.budget, false, a.target_tokens).unwrap();
            assert!(stated.contains("half the trigger threshold"), "{here}");
            assert_eq!(p.tiered_target(), p.threshold / 2, "{here}");
        }
        "summarizer_model" => {
            assert!(stated.ends_with(&format!("default: {}", config::COMMAND_MODEL)), "{here}");
        }
        "report" if cmd == "replay" => {
            let Command::Replay(a) = parse(&["replay", input]) else { unreachable!() };
            assert!(a.report.is_none() && stated.contains("on stdout"), "{here}");
        }
        "inputs" => {
            // Not required: without INPUT the run reads the agents' folders.
            let args: &[&str] = match cmd {
                "compact" => &[cmd, "-o", "x/"],
                "report" => &[cmd, "-o", "x"],
                _ => &[cmd],
            };
            let inputs = match parse(args) {
                Command::Compact(a) => a.input.inputs,
                Command::Stats(a) => a.input.inputs,
                Command::Replay(a) => a.input.inputs,
                Command::Report(a) => a.input.inputs,
                other => panic!("{here}: {other:?}"),
            };
            assert!(inputs.is_empty(), "{here}");
            let env = compactor::discover::Env {
                claude_config_dir: None,
                codex_home: None,
                home: Some("/h".into()),
            };
            let folders: Vec<String> = compactor::discover::folders(&env)
                .iter()
                .map(|f| f.path.display().to_string().replacen("/h", "~", 1))
                .collect();
            for f in &folders {
                assert!(stated.contains(f.as_str()), "{here}, but the folders are {folders:?}");
            }
        }
        _ => panic!("{here}: no check compares it with the resolved configuration; add one"),
    }
}

#[test]
fn every_default_a_help_text_states_is_the_resolved_one() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("s.jsonl");
    std::fs::write(&input, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n").unwrap();
    let input = input.to_string_lossy().into_owned();
    let cli = Cli::command();
    let mut checked = Vec::new();
    for sub in cli.get_subcommands() {
        let cmd = sub.get_name();
        for arg in sub.get_arguments() {
            let id = arg.get_id().as_str();
            let help =
                arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
            let (bracketed, inline) = stated(&help);
            for s in bracketed {
                check(cmd, id, &s, &input);
                checked.push(format!("{cmd} --{id}"));
            }
            for word in inline {
                let declared: Vec<String> = arg
                    .get_default_values()
                    .iter()
                    .map(|v| v.to_string_lossy().into_owned())
                    .collect();
                assert_eq!(
                    declared,
                    std::slice::from_ref(&word),
                    "`{cmd} --{id}` says `{word} (default)`"
                );
                checked.push(format!("{cmd} --{id}"));
            }
        }
    }
    // The defaults of issue 41 are among those checked.
    for must in [
        "compact --model",
        "compact --window",
        "replay --model",
        "report --model",
        "anchors --model",
        "compact --mode",
    ] {
        assert!(checked.iter().any(|c| c == must), "{must} not checked: {checked:?}");
    }
}

#[test]
fn stated_defaults_are_found() {
    let (b, i) = stated(
        "Worker threads [default: all cores]; lean (default), legacy; o200k (exact, default)",
    );
    assert_eq!(b, ["default: all cores"]);
    assert_eq!(i, ["lean", "o200k"]);
    let (b, _) = stated("a column [default: FILE[row]] and [not one]");
    assert_eq!(b, ["default: FILE[row]"]);
}
