//! Figures: how a number is shown, and totals that add up.
//!
//! A leaf: every layer prints counts (`report`'s pages, the summary, the CLI's
//! messages) and sums them (a run's totals over sessions, shards and inputs);
//! neither belongs to one of them.

pub(crate) mod tally;

/// `100 × part / whole`, two decimals; `None` (n/a, not 100%) for 0 of 0.
pub fn pct(part: u64, whole: u64) -> Option<f64> {
    if whole == 0 {
        return None;
    }
    Some(((part as f64 * 10_000.0 / whole as f64).round()) / 100.0)
}

/// Formats `n` with thousands separators (`12,345`).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        let cases = [(0, "0"), (999, "999"), (1_000, "1,000"), (1_234_567, "1,234,567")];
        for (n, text) in cases {
            assert_eq!(thousands(n), text);
        }
    }
}
