//! A fast hash of short byte strings: the slot of a token in a vocabulary's
//! rank table (`tokens::ranks`).
//!
//! Why not XXH3: the table is probed once or more for every piece of every
//! counted text (millions per run), with strings of 1 to 20 bytes, where
//! XXH3-64, made for any length, took more instructions a call than this
//! multiply-fold (`benches/RESULTS.md`, 2026-12-04 and 2026-12-05). Nothing
//! here needs more than a spread of slots: the table compares the bytes of
//! every candidate, so a collision costs a probe, never a wrong answer. Lives
//! in the process only.

/// rustc's `FxHasher` multiplier, as [`super::KeyHasher`].
const K: u64 = 0xf135_7aea_2e62_a9c5;

#[inline]
fn fold(h: u64, word: u64) -> u64 {
    (h.rotate_left(26) ^ word).wrapping_mul(K)
}

#[inline]
fn word8(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline]
fn word4(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u64::from(u32::from_le_bytes(w))
}

/// A 64-bit hash of `bytes`, its length mixed in; the low bits as well spread
/// as the high ones. Every byte counts (strings of 4 to 8 bytes are read as two
/// overlapping words, longer ones word by word and the last 8 bytes).
#[inline]
pub(crate) fn short64(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let len = n as u64;
    let h = match n {
        0 => K,
        1..=3 => fold(
            len,
            u64::from(bytes[0]) | u64::from(bytes[n / 2]) << 8 | u64::from(bytes[n - 1]) << 16,
        ),
        4..=8 => fold(len, word4(bytes, 0) << 32 | word4(bytes, n - 4)),
        _ => {
            let mut h = len;
            let mut at = 0;
            while at + 8 < n {
                h = fold(h, word8(bytes, at));
                at += 8;
            }
            fold(h, word8(bytes, n - 8))
        }
    };
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Strings that differ in one byte anywhere, or only in length, hash
    /// apart, and the low bits (a table's slot) spread.
    #[test]
    fn every_byte_and_the_length_count() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        let mut seen = HashSet::new();
        for n in 0..=base.len() {
            assert!(seen.insert(short64(&base[..n])), "length {n}");
            for at in 0..n {
                let mut other = base[..n].to_vec();
                other[at] ^= 1;
                assert!(seen.insert(short64(&other)), "byte {at} of {n}");
            }
        }
        assert_eq!(short64(b"abc"), short64(b"abc"));
        let slots: HashSet<u64> = (0..4096u32).map(|i| short64(&i.to_le_bytes()) & 1023).collect();
        assert!(slots.len() > 900, "{} of 1024 slots", slots.len());
    }
}
