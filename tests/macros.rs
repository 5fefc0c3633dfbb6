/// Asserts two strings are equal; on failure prints the first differing line
/// of each, between rulers, instead of both whole texts.
macro_rules! eqnice {
    ($expected:expr, $got:expr) => {{
        let expected: &str = &$expected;
        let got: &str = &$got;
        if expected != got {
            let (n, (e, g)) = expected
                .lines()
                .chain(std::iter::repeat("<end>"))
                .zip(got.lines().chain(std::iter::repeat("<end>")))
                .enumerate()
                .find(|(_, (e, g))| e != g)
                .unwrap_or((0, ("", "")));
            let clip = |s: &str| s.chars().take(2_000).collect::<String>();
            panic!(
                "\n\nfirst difference at line {}:\nexpected:\n{}\n{}\n{}\ngot:\n{}\n{}\n{}\n",
                n + 1,
                "~".repeat(60),
                clip(e),
                "~".repeat(60),
                "~".repeat(60),
                clip(g),
                "~".repeat(60)
            );
        }
    }};
}
