//! The map hasher of keys that are already content hashes.
//!
//! Every memo key starts with a 128-bit hash of the text it stands for (plus
//! the text's length, see [`crate::memo`]). The hash is already uniform, so
//! the maps hash it again only with a multiply ([`KeyHasher`]).

use std::hash::Hasher;

/// The map's hasher. Every key here starts with a 128-bit hash of its text,
/// already uniform, so std's SipHash (keyed against flooding by hostile keys,
/// which a content hash is not) would hash a hash again, a cost seen in a
/// `report` profile. This folds each word in with a multiply (the `FxHasher` of rustc).
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl KeyHasher {
    const K: u64 = 0xf135_7aea_2e62_a9c5;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(Self::K);
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in chunks.by_ref() {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.add(u64::from_le_bytes(word));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_u128(&mut self, n: u128) {
        self.add(n as u64 ^ (n >> 64) as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    /// The hasher spreads keys that differ in any word, over the bits the
    /// map uses (its low bits pick a bucket, its top seven a tag).
    #[test]
    fn key_hashes_differ_in_low_and_high_bits() {
        let hash = |k: &(u128, usize)| {
            let mut h = KeyHasher::default();
            k.hash(&mut h);
            h.finish()
        };
        let keys: Vec<(u128, usize)> = (0..4096u128)
            .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835), 10))
            .chain((0..64).map(|len| (7, len)))
            .collect();
        let low: std::collections::HashSet<u64> = keys.iter().map(|k| hash(k) & 0xfff).collect();
        let top: std::collections::HashSet<u64> = keys.iter().map(|k| hash(k) >> 57).collect();
        assert!(low.len() > 2500, "{} of 4096 low-bit buckets", low.len());
        assert_eq!(top.len(), 128);
        assert_ne!(hash(&(7, 1)), hash(&(7, 2)));
    }
}
