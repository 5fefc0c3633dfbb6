//! Diagnostics on stderr, one style: `compactor: message`, `file:line: why`;
//! and how a count is written in any line a person reads: with thousands
//! separators (`6,481,228`) and the noun agreeing with it (`1 compaction`,
//! `2 compactions`).

/// Prints an error about one record or input; the run goes on.
macro_rules! err_message {
    ($($tt:tt)*) => {
        eprintln!("compactor: {}", format_args!($($tt)*))
    };
}

pub(crate) use err_message;

/// `6,481,228`.
pub(crate) fn n(v: u64) -> String {
    compactor::figures::thousands(v)
}

/// `1 session`, `2 sessions`, `1,204 sessions`.
pub(crate) fn counted(v: u64, one: &str, many: &str) -> String {
    if v == 1 { format!("1 {one}") } else { format!("{} {many}", n(v)) }
}
