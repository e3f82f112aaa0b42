//! Which groups the operator may have written to Flink's state backend: a
//! blocked Bloom filter over the groups' Flink key hashes. A group that is
//! not cached and was never written (and no restore put groups in the
//! backend) cannot be in the backend, so a batch skips reading it; stock
//! Flink reads every such key (`cache.rs`).
//!
//! The filter has a fixed size, set from the memory budget when the cache
//! is first emptied: its accuracy falls as the state outgrows the budget,
//! and when too many of its bits are set to save reads it is dropped
//! (every uncached group is read again, as before). It is never wrong in
//! the direction that matters: a group written is always reported as
//! possibly written.
//!
//! Hand-written rather than a crate's: the keys arrive as the 32-bit hashes
//! the group table already holds, which the Bloom filter crates would hash
//! again through `Hash`.

/// Bits set per key, all within one 512-bit block.
const BITS_PER_KEY: u32 = 6;
/// `u64` words per block (one cache line).
const WORDS_PER_BLOCK: usize = 8;
/// The fraction of bits set (in 1/1024) beyond which the filter reports
/// most absent keys as possibly written (about 0.8^6 = 26 %) and is no
/// longer worth its memory.
const MAX_FILL_PER_1024: u64 = 820;

/// Keys possibly written to the state backend.
#[derive(Debug)]
pub(super) struct WrittenKeys {
    words: Vec<u64>,
    blocks: u64,
    set_bits: u64,
}

impl WrittenKeys {
    /// A filter of at most `bytes` (at least one block).
    pub(super) fn with_bytes(bytes: usize) -> Self {
        let blocks = (bytes / (WORDS_PER_BLOCK * 8)).max(1);
        Self {
            words: vec![0; blocks * WORDS_PER_BLOCK],
            blocks: blocks as u64,
            set_bits: 0,
        }
    }

    /// Records the key with Flink hash `hash` as possibly written.
    pub(super) fn insert(&mut self, hash: i32) {
        let (block, bits) = self.place(hash);
        for bit in bits {
            let word = &mut self.words[block + (bit / 64) as usize];
            let mask = 1u64 << (bit % 64);
            self.set_bits += u64::from(*word & mask == 0);
            *word |= mask;
        }
    }

    /// False when the key with Flink hash `hash` was certainly never
    /// inserted.
    pub(super) fn may_contain(&self, hash: i32) -> bool {
        let (block, bits) = self.place(hash);
        bits.into_iter()
            .all(|bit| self.words[block + (bit / 64) as usize] & (1u64 << (bit % 64)) != 0)
    }

    /// Whether so many bits are set that most absent keys pass.
    pub(super) fn saturated(&self) -> bool {
        self.set_bits * 1024 > self.words.len() as u64 * 64 * MAX_FILL_PER_1024
    }

    /// Bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    /// The first word of the key's block and its bits within the block.
    fn place(&self, hash: i32) -> (usize, [u32; BITS_PER_KEY as usize]) {
        let mixed = mix(hash as u32 as u64);
        let block = (((mixed >> 32) * self.blocks) >> 32) as usize * WORDS_PER_BLOCK;
        let mut rest = mix(mixed);
        let mut bits = [0u32; BITS_PER_KEY as usize];
        for bit in &mut bits {
            *bit = (rest & 511) as u32;
            rest >>= 9;
        }
        (block, bits)
    }
}

/// splitmix64's finalizer: spreads the 32 hash bits over 64.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_inserted_key_is_reported_and_most_others_are_not() {
        // 1 MiB for 1M keys: 8 bits per key.
        let mut keys = WrittenKeys::with_bytes(1 << 20);
        for k in 0..1_000_000i32 {
            keys.insert(k.wrapping_mul(0x5bd1_e995));
        }
        assert!((0..1_000_000i32).all(|k| keys.may_contain(k.wrapping_mul(0x5bd1_e995))));
        let false_positives = (1_000_000..2_000_000i32)
            .filter(|k| keys.may_contain(k.wrapping_mul(0x5bd1_e995)))
            .count();
        assert!(
            false_positives < 60_000,
            "{false_positives} of 1M absent keys passed"
        );
        assert!(!keys.saturated());
    }

    #[test]
    fn a_filter_far_too_small_for_its_keys_says_so() {
        let mut keys = WrittenKeys::with_bytes(1024);
        for k in 0..100_000 {
            keys.insert(k);
        }
        assert!(keys.saturated());
        assert!(keys.may_contain(7));
    }
}
