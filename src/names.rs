//! Names of the closed sets a user picks from or reads in output (`--mode`,
//! `--from`/`--to`, anchor categories, tiers): one macro writes an enum's
//! name table, its lookup by name and its `Display`, so that every such enum
//! spells each name once and shows it the same way.
//!
//! A leaf: it imports nothing of the crate, so any module may use it.

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

        $crate::names::named!($ty);
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
