//! Typed option values: what `--from`, `--to`, `--anchor-budget`, `--model`,
//! `report --policies`, `--prices` and `compact --report` may be, parsed once
//! by clap (a bad value is a usage error naming the option, before anything is
//! read) and matched on as types, never compared as strings.
//!
//! Each prints back (`Display`) as the canonical text it is parsed from: the
//! `--resume` manifest hashes these texts, so a run's options hash is what it
//! was when they were strings.

use compactor::formats::{Format, Unit};
use compactor::io::output::{SessionWriter, TextLayout};
use compactor::policy::anchors::AnchorBudget;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// [`Named`] and `Display` for a format option's enum `$ty`: its
/// `Dialect(Format)` variant is spelled as the dialect's name, its other
/// values as in `$names` (`(text, value)` pairs).
macro_rules! named {
    ($ty:ident, $names:expr) => {
        impl Named for $ty {
            const NAMES: &'static [(&'static str, Self)] = &$names;

            fn as_dialect(self) -> Option<Format> {
                match self {
                    $ty::Dialect(d) => Some(d),
                    _ => None,
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(name(*self))
            }
        }
    };
}

/// `--from`: detect each file's dialect, one dialect, or an Arrow IPC stream
/// (`compact` only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Auto,
    Dialect(Format),
    ArrowIpc,
}

// `--from`'s values besides the dialects' names.
named!(InputFormat, [("auto", InputFormat::Auto), ("arrow-ipc", InputFormat::ArrowIpc)]);

impl FromStr for InputFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s, |f| Ok(InputFormat::Dialect(f)))
    }
}

impl InputFormat {
    /// The dialect every input is read as; `None` detects each file's. An
    /// Arrow IPC stream is read by `compact`'s own route, which asks first.
    pub fn dialect(self) -> anyhow::Result<Option<Format>> {
        match self {
            InputFormat::Auto => Ok(None),
            InputFormat::Dialect(d) => Ok(Some(d)),
            InputFormat::ArrowIpc => {
                anyhow::bail!(
                    "--from arrow-ipc: only `compact --to arrow-ipc` reads an Arrow IPC stream"
                )
            }
        }
    }
}

/// `--to`: each input's own dialect, a record dialect, a Parquet table of
/// OpenAI-shaped rows, or an Arrow IPC stream (`compact` only). A dialect
/// whose session is a whole file is refused here: it cannot hold many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Same,
    Dialect(Format),
    Parquet,
    ArrowIpc,
}

// `--to`'s values besides the dialects' names.
named!(
    OutputFormat,
    [
        ("same", OutputFormat::Same),
        ("parquet", OutputFormat::Parquet),
        ("arrow-ipc", OutputFormat::ArrowIpc)
    ]
);

impl FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s, |f| match f.unit() {
            Unit::Record => Ok(OutputFormat::Dialect(f)),
            Unit::File => Err(format!(
                "{s} holds one session per file; convert to openai, anthropic, sharegpt or parquet"
            )),
        })
    }
}

impl OutputFormat {
    /// The dialect written (`None`: each input's own) and whether the
    /// container is Parquet (OpenAI-shaped rows). An Arrow IPC stream is
    /// written by `compact`'s own route, which asks first.
    pub fn dialect(self) -> anyhow::Result<(Option<Format>, bool)> {
        match self {
            OutputFormat::Same => Ok((None, false)),
            OutputFormat::Dialect(d) => Ok((Some(d), false)),
            OutputFormat::Parquet => Ok((Some(Format::OpenAi), true)),
            OutputFormat::ArrowIpc => {
                anyhow::bail!(
                    "--to arrow-ipc: only `compact --from arrow-ipc` writes an Arrow IPC stream"
                )
            }
        }
    }
}

/// A format option's value: a dialect, spelled as the dialect's name, or one
/// of the option's own values, spelled as its entry in `NAMES`. `parse` and
/// `name` read both spellings from here, so they cannot disagree.
trait Named: Copy + PartialEq + 'static {
    /// The option's values besides the dialects' names.
    const NAMES: &'static [(&'static str, Self)];

    /// The dialect this value is, if it is one.
    fn as_dialect(self) -> Option<Format>;
}

/// `s` as one of `T::NAMES`, else as a dialect's name made a value by
/// `dialect`. An unknown name is refused naming the option's own values: its
/// `NAMES`, then the dialects `dialect` takes.
fn parse<T: Named>(s: &str, dialect: impl Fn(Format) -> Result<T, String>) -> Result<T, String> {
    if let Some((_, v)) = T::NAMES.iter().find(|(n, _)| *n == s) {
        return Ok(*v);
    }
    match Format::from_name(s) {
        Some(f) => dialect(f),
        None => {
            let own = T::NAMES.iter().map(|(n, _)| *n);
            let dialects = Format::ALL.iter().filter(|f| dialect(**f).is_ok()).map(|f| f.name());
            Err(compactor::formats::unknown_format(s, own.chain(dialects)))
        }
    }
}

/// The name `value` is parsed from: its dialect's, or its entry's in `T::NAMES`.
fn name<T: Named>(value: T) -> &'static str {
    match value.as_dialect() {
        Some(d) => d.name(),
        None => T::NAMES.iter().find(|(_, v)| *v == value).map_or("", |(n, _)| n),
    }
}

/// `--anchor-budget`: `auto` or a number of chars.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AnchorBudgetArg(pub AnchorBudget);

impl FromStr for AnchorBudgetArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(AnchorBudgetArg(AnchorBudget::Auto)),
            n => n
                .parse()
                .map(|n| AnchorBudgetArg(AnchorBudget::Chars(n)))
                .map_err(|_| format!("expected `auto` or a number, got `{n}`")),
        }
    }
}

impl fmt::Display for AnchorBudgetArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            AnchorBudget::Auto => f.write_str("auto"),
            AnchorBudget::Chars(n) => write!(f, "{n}"),
        }
    }
}

/// `Debug` as the quoted `Display` text, which is how the `String`s these
/// types replaced printed: `BudgetArgs`' `Debug` goes into the `--resume`
/// options hash, so it must not change.
macro_rules! debug_as_quoted_text {
    ($($ty:ty),+) => {$(
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:?}", self.to_string())
            }
        }
    )+};
}

debug_as_quoted_text!(AnchorBudgetArg, ModelArg);

/// An option value that is one reserved word or anything else, taken as
/// written: `word_or!(Type { "word" => Reserved, _ => Other(Inner) })` makes
/// the enum and its `FromStr` (`Inner: From<&str>`). Attributes before the
/// type (docs, derives) go on the enum.
macro_rules! word_or {
    ($(#[$attr:meta])* $ty:ident { $word:literal => $reserved:ident, _ => $other:ident($inner:ty) }) => {
        $(#[$attr])*
        #[derive(Clone, PartialEq, Eq)]
        pub enum $ty {
            $reserved,
            $other($inner),
        }

        impl $ty {
            /// The reserved word, as it is written on the command line.
            pub const WORD: &'static str = $word;
        }

        impl FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Ok(if s == $ty::WORD { $ty::$reserved } else { $ty::$other(<$inner>::from(s)) })
            }
        }
    };
}

word_or!(
    /// `--model`: `auto` (each session's own model, as its log names it) or
    /// one model's name. The one place `auto` is spelt.
    ModelArg { "auto" => Auto, _ => Named(String) }
);

impl ModelArg {
    /// The model named, unless `auto`.
    pub fn named(&self) -> Option<&str> {
        match self {
            ModelArg::Auto => None,
            ModelArg::Named(m) => Some(m),
        }
    }
}

impl fmt::Display for ModelArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.named().unwrap_or(ModelArg::WORD))
    }
}

word_or!(
    /// One `report --policies` item: `all` (every built-in policy) or one
    /// policy, by a built-in name or a file.
    #[derive(Debug)]
    PolicyArg { "all" => All, _ => One(String) }
);

word_or!(
    /// `--prices[=FILE]`: the built-in table, or it extended by a file. Given
    /// without a value, clap hands the parser an empty text.
    #[derive(Debug)]
    PricesArg { "" => BuiltIn, _ => File(PathBuf) }
);

word_or!(
    /// A JSON-lines report (`compact --report`, `replay --report` and
    /// `--calls`): standard output (`-`) or a file.
    #[derive(Debug)]
    ReportDest { "-" => Stdout, _ => File(PathBuf) }
);

impl ReportDest {
    /// The file, unless standard output.
    pub fn file(&self) -> Option<&Path> {
        match self {
            ReportDest::Stdout => None,
            ReportDest::File(p) => Some(p),
        }
    }

    /// A writer of JSON lines to standard output or to the file (written atomically).
    pub fn open(&self) -> anyhow::Result<SessionWriter> {
        match self {
            ReportDest::Stdout => Ok(SessionWriter::stdout()),
            ReportDest::File(p) => SessionWriter::file(p, TextLayout::Jsonl),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Debug` is the quoted text, as the `String`s these types replaced
    /// printed: it goes into the `--resume` options hash, so a change here
    /// would make every earlier run's manifest refuse to resume.
    #[test]
    fn debug_is_the_quoted_text_the_resume_hash_was_made_of() {
        for text in ["auto", "claude-sonnet-4"] {
            assert_eq!(format!("{:?}", text.parse::<ModelArg>().unwrap()), format!("{text:?}"));
        }
        for text in ["auto", "2000"] {
            let v: AnchorBudgetArg = text.parse().unwrap();
            assert_eq!(format!("{v:?}"), format!("{text:?}"));
        }
    }

    /// Every value prints back as the text it was parsed from (the manifest
    /// hashes these texts), and a bad one is refused naming what is allowed.
    #[test]
    fn values_print_back_as_parsed() {
        let mut from = vec!["auto".to_string(), "arrow-ipc".to_string()];
        from.extend(Format::ALL.iter().map(|f| f.name().to_string()));
        for text in &from {
            assert_eq!(&text.parse::<InputFormat>().unwrap().to_string(), text);
        }
        let mut to = vec!["same".to_string(), "parquet".to_string(), "arrow-ipc".to_string()];
        to.extend(Format::ALL.iter().filter(|f| f.unit() == Unit::Record).map(|f| f.name().into()));
        for text in &to {
            assert_eq!(&text.parse::<OutputFormat>().unwrap().to_string(), text);
        }
        for text in ["auto", "7000", "0"] {
            let budget = text.parse::<AnchorBudgetArg>().unwrap();
            assert_eq!(budget.to_string(), text);
            assert_eq!(format!("{budget:?}"), format!("{text:?}"), "as the String printed");
        }
        let from = "xml".parse::<InputFormat>().unwrap_err();
        assert!(from.contains("unknown format `xml` (expected one of auto, arrow-ipc, "), "{from}");
        assert!(from.contains("claude-code") && from.contains("openai"), "{from}");
        let to = "x".parse::<OutputFormat>().unwrap_err();
        assert!(to.contains("(expected one of same, parquet, arrow-ipc, "), "{to}");
        assert!(to.contains("openai") && !to.contains("claude-code"), "its own values only: {to}");
        let file = "claude-code".parse::<OutputFormat>().unwrap_err();
        assert!(file.contains("holds one session per file"), "{file}");
        assert!("lots".parse::<AnchorBudgetArg>().unwrap_err().contains("`auto` or a number"));
        for text in ["auto", "gpt-4o", "Auto", ""] {
            let model = text.parse::<ModelArg>().unwrap();
            assert_eq!(model.to_string(), text);
            assert_eq!(format!("{model:?}"), format!("{text:?}"), "as the String printed");
        }
    }

    /// `auto`, `all`, `-` and an empty `--prices` are the only words with a
    /// meaning; anything else is a name or a path, as written.
    #[test]
    fn the_reserved_words_are_typed_and_nothing_else_is() {
        assert_eq!("auto".parse::<ModelArg>().unwrap().named(), None);
        assert_eq!("Auto".parse::<ModelArg>().unwrap().named(), Some("Auto"));
        assert_eq!("all".parse(), Ok(PolicyArg::All));
        assert_eq!("all.toml".parse(), Ok(PolicyArg::One("all.toml".into())));
        assert_eq!("".parse(), Ok(PricesArg::BuiltIn));
        assert_eq!("p.json".parse(), Ok(PricesArg::File("p.json".into())));
        assert_eq!("-".parse(), Ok(ReportDest::Stdout));
        assert_eq!("./-".parse::<ReportDest>().unwrap().file(), Some(Path::new("./-")));
    }
}
