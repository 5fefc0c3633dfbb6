//! Our deterministic summary laid out under another agent's headings.
//!
//! ## What it does
//! `relayout` reads the sections of a summary we built (`## Goal`, `## Active
//! Task`, ...) and writes them again under the headings of the agent whose
//! summary it stands in for, following that agent's section map
//! ([`Headings::map`]); a heading with no extractive source says `None.`. The
//! first line (our prefix and framing) and the end marker stay, so the result
//! is still recognised as a summary, and a line says it is our stand-in.
//! Within `max_tokens` (the agent's own summary budget) when given: the
//! longest section loses its last lines first.
//!
//! ## Why
//! The agents' summaries are written by their own model (Codex's remote one
//! is even encrypted): we cannot reproduce them. What a replay can compare is
//! the shape and the budget: the same extract, under their sections.
//!
//! ## Invariants
//! - [`Headings::Ours`] leaves the text as it is (lean, legacy, tiered).
//! - Every line of a mapped section appears once, under the first heading
//!   that maps it; sections the map leaves out are dropped.

use super::SummarySpec;
use crate::policy::summary::{SUMMARY_END_MARKER, Summary, heading as h};
use crate::policy::summary_writer::SummarizerUse;
use crate::tokens::Meter;
use serde::{Deserialize, Serialize};

/// Whose section layout a summary uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Headings {
    /// Ours (docs/rules.md 6).
    Ours,
    /// Claude Code's nine sections (`src/services/compact/prompt.ts`, 2.1.88, extracted source).
    ClaudeCode,
    /// Codex's four points (`codex-rs/core/templates/compact/prompt.md`, rust-v0.98.0).
    Codex,
    /// OpenHands' condenser sections (`summarizing_prompt.j2`, SDK v1.43.1; V0 0.62.0 the same).
    Openhands,
    /// Gemini CLI's `<state_snapshot>` (`packages/core/src/prompts/snippets.ts`, v0.56.0).
    GeminiCli,
}

/// Claude Code: heading → our sections.
const CLAUDE_CODE: &[(&str, &[&str])] = &[
    ("1. Primary Request and Intent", &[h::GOAL, h::ACTIVE_TASK]),
    ("2. Key Technical Concepts", &[h::DECISIONS, h::CONSTRAINTS]),
    ("3. Files and Code Sections", &[h::FILES, h::ANCHORS]),
    ("4. Errors and fixes", &[h::BLOCKED, h::RESOLVED]),
    ("5. Problem Solving", &[h::COMPLETED]),
    ("6. All user messages", &[h::USER_MESSAGES]),
    ("7. Pending Tasks", &[h::PENDING, h::REMAINING]),
    ("8. Current Work", &[h::ACTIVE_STATE]),
    ("9. Optional Next Step", &[]),
];

/// Codex (its user messages are kept beside the summary, not in it).
const CODEX: &[(&str, &[&str])] = &[
    ("Current progress and key decisions made", &[h::COMPLETED, h::DECISIONS, h::ACTIVE_STATE]),
    (
        "Important context, constraints, or user preferences",
        &[h::GOAL, h::ACTIVE_TASK, h::CONSTRAINTS],
    ),
    ("What remains to be done (clear next steps)", &[h::PENDING, h::REMAINING, h::BLOCKED]),
    (
        "Any critical data, examples, or references needed to continue",
        &[h::FILES, h::ANCHORS, h::RESOLVED],
    ),
];

/// OpenHands.
const OPENHANDS: &[(&str, &[&str])] = &[
    ("USER_CONTEXT", &[h::GOAL, h::CONSTRAINTS, h::USER_MESSAGES]),
    ("TASK_TRACKING", &[h::ACTIVE_TASK]),
    ("COMPLETED", &[h::COMPLETED, h::RESOLVED]),
    ("PENDING", &[h::PENDING, h::REMAINING, h::BLOCKED]),
    ("CURRENT_STATE", &[h::ACTIVE_STATE, h::DECISIONS]),
    ("CODE_STATE", &[h::FILES, h::ANCHORS]),
    ("TESTS", &[]),
    ("CHANGES", &[]),
    ("DEPS", &[]),
    ("VERSION_CONTROL_STATUS", &[]),
];

/// Gemini CLI.
const GEMINI_CLI: &[(&str, &[&str])] = &[
    ("overall_goal", &[h::GOAL, h::ACTIVE_TASK, h::USER_MESSAGES]),
    ("active_constraints", &[h::CONSTRAINTS]),
    ("key_knowledge", &[h::DECISIONS, h::RESOLVED, h::ANCHORS]),
    ("artifact_trail", &[h::COMPLETED]),
    ("file_system_state", &[h::FILES]),
    ("recent_actions", &[h::ACTIVE_STATE]),
    ("task_state", &[h::PENDING, h::REMAINING, h::BLOCKED]),
];

impl Headings {
    /// The section map: each heading of the agent and the sections of ours it
    /// takes, in order; empty for [`Headings::Ours`].
    pub fn map(self) -> &'static [(&'static str, &'static [&'static str])] {
        match self {
            Headings::Ours => &[],
            Headings::ClaudeCode => CLAUDE_CODE,
            Headings::Codex => CODEX,
            Headings::Openhands => OPENHANDS,
            Headings::GeminiCli => GEMINI_CLI,
        }
    }

    /// The agent named in the stand-in line.
    fn agent(self) -> &'static str {
        match self {
            Headings::Ours => "compactor",
            Headings::ClaudeCode => "Claude Code",
            Headings::Codex => "Codex",
            Headings::Openhands => "OpenHands",
            Headings::GeminiCli => "Gemini CLI",
        }
    }
}

/// Sections of a summary text, by heading, in order; and its first line.
fn sections(text: &str) -> (&str, Vec<(&str, Vec<&str>)>) {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in lines {
        if line.starts_with(SUMMARY_END_MARKER) {
            break;
        }
        if line.starts_with("## ") {
            out.push((line.trim_end(), Vec::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push(line);
        }
    }
    for (_, body) in &mut out {
        while body.last().is_some_and(|l| l.trim().is_empty()) {
            body.pop();
        }
    }
    (first, out)
}

/// `text` (one of our summaries) under `headings`, within `max_tokens` when given.
fn relayout(text: &str, headings: Headings, max_tokens: Option<u64>, meter: &Meter) -> String {
    if headings == Headings::Ours {
        return text.to_string();
    }
    let (first, ours) = sections(text);
    let mut bodies: Vec<(&str, Vec<&str>)> = headings
        .map()
        .iter()
        .map(|(title, from)| {
            let mut body: Vec<&str> = Vec::new();
            for f in from.iter() {
                if let Some((_, lines)) = ours.iter().find(|(t, _)| t == f) {
                    let real: Vec<&str> =
                        lines.iter().copied().filter(|l| l.trim() != "None.").collect();
                    if !real.iter().all(|l| l.trim().is_empty()) {
                        body.extend(real);
                    }
                }
            }
            (*title, body)
        })
        .collect();
    let render = |bodies: &[(&str, Vec<&str>)]| {
        let mut out = String::from(first);
        out.push_str(&format!(
            "\n(our deterministic stand-in for {}'s summary, laid out under its sections)\n\n",
            headings.agent()
        ));
        for (title, body) in bodies {
            out.push_str("## ");
            out.push_str(title);
            out.push('\n');
            if body.is_empty() {
                out.push_str("None.");
            } else {
                out.push_str(&body.join("\n"));
            }
            out.push_str("\n\n");
        }
        out.push_str(SUMMARY_END_MARKER);
        out
    };
    let mut out = render(&bodies);
    let Some(max) = max_tokens else { return out };
    // The longest section loses half its lines until the text fits.
    for _ in 0..64 {
        if meter.fits(&out, max) {
            break;
        }
        let Some(longest) = bodies
            .iter_mut()
            .filter(|(_, b)| !b.is_empty())
            .max_by_key(|(_, b)| b.iter().map(|l| l.len()).sum::<usize>())
        else {
            break;
        };
        let keep = longest.1.len() / 2;
        longest.1.truncate(keep);
        out = render(&bodies);
    }
    out
}

/// `built` laid out under `summary`'s headings and budget, unless a model
/// wrote its body (it is not in our sections).
pub(crate) fn laid_out(
    summary: SummarySpec,
    built: Summary,
    used: Option<&SummarizerUse>,
    meter: &Meter,
) -> Summary {
    let SummarySpec::Ours { headings, max_tokens } = summary else { return built };
    if headings == Headings::Ours || used.is_some_and(|u| u.used) {
        return built;
    }
    Summary { text: relayout(&built.text, headings, max_tokens, meter), ..built }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::summary::SUMMARY_PREFIX;
    use crate::tokens::{CounterKind, Meter};

    fn ours() -> String {
        format!(
            "{SUMMARY_PREFIX} framing\n\n{}\nship the fix\n\n{}\n1. ran tests\n2. fixed a.rs\n\n{}\nNone.\n\n{}\n- \"please fix a.rs\"\n\n{SUMMARY_END_MARKER}",
            h::GOAL,
            h::COMPLETED,
            h::BLOCKED,
            h::USER_MESSAGES
        )
    }

    #[test]
    fn claude_code_takes_its_nine_sections_with_none_where_nothing_maps() {
        let meter = Meter::new(CounterKind::Hermes, 0);
        let out = relayout(&ours(), Headings::ClaudeCode, None, &meter);
        assert!(out.starts_with(SUMMARY_PREFIX));
        assert!(out.ends_with(SUMMARY_END_MARKER));
        assert!(out.contains("stand-in for Claude Code's summary"));
        for (title, _) in CLAUDE_CODE {
            assert!(out.contains(&format!("## {title}\n")), "{title}");
        }
        assert!(out.contains("## 1. Primary Request and Intent\nship the fix\n"));
        assert!(out.contains("## 5. Problem Solving\n1. ran tests\n2. fixed a.rs\n"));
        assert!(out.contains("## 4. Errors and fixes\nNone.\n"));
        assert!(out.contains("## 6. All user messages\n- \"please fix a.rs\"\n"));
        assert!(out.contains("## 9. Optional Next Step\nNone.\n"));
    }

    #[test]
    fn ours_is_left_alone_and_a_budget_cuts_the_longest_section() {
        let meter = Meter::new(CounterKind::Hermes, 0);
        assert_eq!(relayout(&ours(), Headings::Ours, Some(1), &meter), ours());
        let long = ours().replace("1. ran tests", &"1. ran tests again\n".repeat(200));
        let whole = relayout(&long, Headings::Codex, None, &meter);
        let cut = relayout(&long, Headings::Codex, Some(200), &meter);
        assert!(meter.text(&whole) > 200);
        assert!(meter.text(&cut) <= 200, "{}", meter.text(&cut));
        assert!(cut.contains("## Current progress and key decisions made\n1. ran tests again"));
    }
}
