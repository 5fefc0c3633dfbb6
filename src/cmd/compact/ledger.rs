//! What a `compact` run records beside its sessions, whatever their
//! container: the `--report` rows, the `--rejects` file, the run's totals, and
//! the summary line that tells them on standard error.

use crate::cli::config::Compact;
use crate::cli::values::ReportDest;
use crate::cmd::messages::err_message;
use anyhow::bail;
use compactor::catalog::window::Chosen;
use compactor::figures::thousands;
use compactor::io::atomic::AtomicFile;
use compactor::io::output::SessionWriter;
use compactor::io::record_limit::Raw;
use compactor::policy::Compaction;
use compactor::report::wire::SessionRow;
use compactor::report::{RejectKind, RunSummary};
use compactor::request::Repairs;
use std::io::Write;

/// `--rejects FILE`: the rejected records, byte for byte, one per line (fix
/// them and feed the file back), and beside it `FILE`'s sources file: one
/// JSON line per rejection with its source, kind and reason, and the line of
/// `FILE` that holds its record (`null` when there was no record to keep: an
/// input that could not be read at all).
struct Rejects {
    records: AtomicFile,
    sources: AtomicFile,
    /// Lines written to `records` so far.
    lines: u64,
}

/// The report, the rejects file and the totals of one run.
pub struct Ledger {
    report: Option<SessionWriter>,
    rejects: Option<Rejects>,
    pub summary: RunSummary,
    redact: bool,
    strict: bool,
}

impl Ledger {
    /// Opens `--report` (`-`: standard output) and `--rejects`.
    pub fn create(cfg: &Compact) -> anyhow::Result<Ledger> {
        let report = cfg.report.as_ref().map(ReportDest::open).transpose()?;
        let rejects = match cfg.rejects.as_deref() {
            Some(p) => Some(Rejects {
                records: AtomicFile::create(p)?,
                sources: AtomicFile::create(&crate::cli::config::rejects_sources(p))?,
                lines: 0,
            }),
            None => None,
        };
        Ok(Ledger {
            report,
            rejects,
            summary: RunSummary::default(),
            redact: cfg.redact,
            strict: cfg.strict,
        })
    }

    /// Records a written session: its report row and its figures.
    pub fn session(
        &mut self,
        row: &SessionRow,
        window: Option<&(u64, Chosen)>,
        compaction: &Compaction,
        repairs: &Repairs,
    ) -> anyhow::Result<()> {
        if let Some(r) = self.report.as_mut() {
            let mut value = serde_json::to_value(row)?;
            // `--model auto`: the row says which window the session got and why.
            if let (Some((w, chosen)), Some(obj)) = (window, value.as_object_mut()) {
                obj.insert("window".into(), (*w).into());
                obj.insert("model".into(), chosen.model.clone().into());
                obj.insert("window_from".into(), chosen.window_from.clone().into());
            }
            r.write(&value)?;
        }
        self.summary.add(compaction);
        self.summary.repairs.merge(repairs);
        Ok(())
    }

    /// Reports a rejected record on standard error, counts it, and writes it
    /// unchanged (masked under `--redact`) on its own line of the rejects
    /// file, with its source in the sources file; an unreadable input (no
    /// record: `raw` empty) gets a sources line only. A record over
    /// `--max-record-bytes` is copied from its spill, never held. Under
    /// `--strict` the run stops here.
    pub fn reject(
        &mut self,
        kind: RejectKind,
        source: &str,
        reason: &str,
        raw: Raw,
    ) -> anyhow::Result<()> {
        err_message!("{source}: {reason}");
        self.summary.reject(kind);
        if let Some(r) = self.rejects.as_mut() {
            let line = if raw.is_empty() {
                None
            } else {
                let mut masked = compactor::redact::Masked::new();
                let file = r.records.file();
                match raw {
                    Raw::Held(raw) if self.redact => {
                        let text = String::from_utf8_lossy(&raw);
                        file.write_all(compactor::redact::redact(&text, &mut masked).as_bytes())?;
                    }
                    Raw::Held(raw) => file.write_all(&raw)?,
                    Raw::Spilled(mut spill) => {
                        let mut from = spill.reader()?;
                        let mut to = std::io::BufWriter::with_capacity(1 << 20, &mut *file);
                        if self.redact {
                            compactor::redact::redact_stream(&mut from, &mut to, &mut masked)?;
                        } else {
                            std::io::copy(&mut from, &mut to)?;
                        }
                        to.flush()?;
                    }
                }
                file.write_all(b"\n")?;
                r.lines += 1;
                Some(r.lines)
            };
            let reason = if self.redact {
                compactor::redact::redact(reason, &mut compactor::redact::Masked::new())
                    .into_owned()
            } else {
                reason.to_string()
            };
            let entry = serde_json::json!({
                "line": line,
                "source": source,
                "kind": kind.name(),
                "reason": reason,
            });
            let mut text = serde_json::to_string(&entry)?;
            text.push('\n');
            r.sources.file().write_all(text.as_bytes())?;
        }
        if self.strict {
            bail!("stopped at the first rejected record (--strict); no output was written");
        }
        Ok(())
    }

    /// Renames the report and the rejects file into place; the totals.
    pub fn finish(self) -> anyhow::Result<RunSummary> {
        if let Some(r) = self.report {
            r.finish()?;
        }
        if let Some(r) = self.rejects {
            r.records.commit()?;
            r.sources.commit()?;
        }
        Ok(self.summary)
    }

    /// Drops the report and the rejects file unfinished (their temporary
    /// files are deleted); the totals so far.
    pub fn abandon(self) -> RunSummary {
        self.summary
    }
}

/// The summary line on standard error.
pub fn print_summary(s: &RunSummary) {
    let rejected = if s.rejected > 0 {
        let kinds: Vec<String> = s
            .rejected_by_kind
            .iter()
            .map(|(k, n)| format!("{} {k}", thousands(*n as u64)))
            .collect();
        let kinds =
            if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join(", ")) };
        format!("; {}{kinds}", plural(s.rejected as u64, "record rejected", "records rejected"))
    } else {
        String::new()
    };
    let repairs = if s.repairs.is_empty() {
        String::new()
    } else {
        let kinds: Vec<String> =
            s.repairs.by_name().iter().map(|(k, n)| format!("{} {k}", thousands(*n))).collect();
        let n = plural(s.repairs.total(), "repair", "repairs");
        format!("; {n} to make valid requests ({})", kinds.join(", "))
    };
    eprintln!(
        "compactor: {} from {}, {} compacted ({} still over the trigger): {} -> {} tokens ({:.1}% saved){repairs}{rejected}",
        plural(s.sessions as u64, "session", "sessions"),
        plural(s.inputs as u64, "input", "inputs"),
        thousands(s.compacted as u64),
        thousands(s.over_trigger as u64),
        thousands(s.tokens_before),
        thousands(s.tokens_after),
        s.saved_pct()
    );
    if let Some(line) = crate::cmd::summarizer_line(&s.summarizer) {
        eprintln!("{line}");
    }
}

/// `1 session`, `2 sessions`, `1,204 sessions`.
fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{} {many}", thousands(n)) }
}
