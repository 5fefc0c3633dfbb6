//! Names of the closed sets a user picks from or reads in output (`--mode`,
//! `--from`/`--to`, anchor categories, tiers): one macro writes an enum's
//! name table, its lookup by name and its `Display`, so that every such enum
//! spells each name once and shows it the same way.
//!
//! It imports nothing of the crate; it sits in `model`, below every module
//! whose enums it names (`formats`, `policy`), like the roles of a message.

/// `named!(Mode { Lean => "lean", ... })` writes `Mode::ALL` (every value,
/// in the order given), `Mode::name`, `Mode::from_name` and `Display` (the
/// name). `named!(Format)` writes the last two only, for a type that already
/// has `ALL` and `name`.
///
/// `FromStr` stays with each type: its error message is its own.
macro_rules! named {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in the order of its names.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// The name on the command line and in output.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        $crate::model::names::named!($ty);
    };
    ($ty:ident) => {
        impl $ty {
            /// The value with this name, if any (in `ALL` order).
            pub fn from_name(name: &str) -> Option<$ty> {
                $ty::ALL.iter().copied().find(|v| v.name() == name)
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

pub(crate) use named;

#[cfg(test)]
mod tests {
    use crate::formats::Format;
    use crate::policy::anchors::Category;
    use crate::policy::{Mode, Tier};
    use std::str::FromStr;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Colour {
        Red,
        DarkBlue,
    }

    named!(Colour { Red => "red", DarkBlue => "dark-blue" });

    #[test]
    fn names_are_listed_found_and_shown() {
        assert_eq!(Colour::ALL, [Colour::Red, Colour::DarkBlue]);
        assert_eq!(Colour::DarkBlue.name(), "dark-blue");
        assert_eq!(Colour::from_name("dark-blue"), Some(Colour::DarkBlue));
        assert_eq!(Colour::from_name("Red"), None, "names are exact");
        assert_eq!(Colour::from_name("DarkBlue"), None, "not the variant's name");
        assert_eq!(format!("[{}]", Colour::Red), "[red]");
    }

    #[test]
    fn every_name_reads_back_as_its_value() {
        for m in Mode::ALL {
            assert_eq!(Mode::from_str(&m.to_string()), Ok(m));
        }
        for f in Format::ALL {
            assert_eq!(Format::from_str(&f.to_string()), Ok(*f));
        }
        for c in Category::ALL {
            assert_eq!(Category::from_name(c.name()), Some(c));
        }
        for t in Tier::ALL {
            assert_eq!(Tier::from_name(&t.to_string()), Some(t));
        }
        let names = |all: &[&str]| all.join(" ");
        assert_eq!(names(&Mode::ALL.map(Mode::name)), "lean legacy tiered none");
        assert_eq!(
            names(&Tier::ALL.map(Tier::name)),
            "none dedup micro_compact truncate strip_media summary"
        );
        assert_eq!(
            names(&Category::ALL.map(Category::name)),
            "prs commits branches paths errors handles urls"
        );
    }

    /// The messages a bad `--mode` or `--from`/`--to` gets (user-visible).
    #[test]
    fn a_bad_name_is_refused_with_the_choices() {
        assert_eq!(
            Mode::from_str("Lean"),
            Err("unknown mode `Lean` (expected lean, legacy, tiered or none)".to_string())
        );
        assert_eq!(
            Format::from_str("json"),
            Err("unknown format `json` (expected one of claude-code, codex, swe-agent, \
                 toolbench, sharegpt, anthropic, openai)"
                .to_string())
        );
    }
}
