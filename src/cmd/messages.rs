//! Diagnostics on stderr, one style: `compactor: message`, `file:line: why`.

/// Prints an error about one record or input; the run goes on.
macro_rules! err_message {
    ($($tt:tt)*) => {
        eprintln!("compactor: {}", format_args!($($tt)*))
    };
}

pub(crate) use err_message;
