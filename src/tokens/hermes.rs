//! The reference agent's token estimate, reproduced so that numbers compare.
//!
//! Dense scripts (CJK ideographs, Hangul, Kana, full-width forms) cost one token
//! per code point; everything else costs ceil(UTF-8 bytes / 4). For ASCII that
//! is ceil(chars / 4). The ranges are the reference's own.

/// Returns true if and only if `c` is in one of the reference's dense ranges.
fn is_dense(c: char) -> bool {
    matches!(c,
        '\u{1100}'..='\u{11ff}'
        | '\u{2e80}'..='\u{9fff}'
        | '\u{a960}'..='\u{a97f}'
        | '\u{ac00}'..='\u{d7af}'
        | '\u{f900}'..='\u{faff}'
        | '\u{ff00}'..='\u{ffef}')
}

/// Estimated tokens of `text`.
pub(crate) fn estimate(text: &str) -> u64 {
    if text.is_ascii() {
        return (text.len() as u64).div_ceil(4);
    }
    let mut dense = 0u64;
    let mut rest_bytes = 0u64;
    for c in text.chars() {
        if is_dense(c) {
            dense += 1;
        } else {
            rest_bytes += c.len_utf8() as u64;
        }
    }
    dense + rest_bytes.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::estimate;

    #[test]
    fn ascii_is_chars_over_four_rounded_up() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("a"), 1);
        assert_eq!(estimate("abcd"), 1);
        assert_eq!(estimate("abcde"), 2);
    }

    #[test]
    fn cjk_counts_one_per_code_point() {
        assert_eq!(estimate("你好世界"), 4);
        assert_eq!(estimate("안녕"), 2);
        assert_eq!(estimate("カタカナ"), 4);
        // 4 dense + "ab" (2 bytes -> 1 token)
        assert_eq!(estimate("ab你好世界"), 5);
    }

    #[test]
    fn other_scripts_count_utf8_bytes() {
        // "é" is 2 bytes, 4 of them are 8 bytes -> 2 tokens.
        assert_eq!(estimate("éééé"), 2);
        // An emoji is 4 bytes -> 1 token.
        assert_eq!(estimate("🙂"), 1);
    }
}
