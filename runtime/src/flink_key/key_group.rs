//! Flink's key groups: which key group a key hash falls in, which subtask
//! owns a key group, and the key-group range of each subtask
//! (`KeyGroupRangeAssignment`).

use crate::error::{AggError, Result};

use super::binary_row::fmix32;

/// Flink's lower bound for a computed max parallelism
/// (`KeyGroupRangeAssignment.DEFAULT_LOWER_BOUND_MAX_PARALLELISM`): the max
/// parallelism of keyed state when none is configured
/// (`pipeline.max-parallelism` defaults to -1 and the scheduler then calls
/// `computeDefaultMaxParallelism`) and the operator's parallelism is at
/// most 85 (see [`default_max_parallelism`]).
pub const DEFAULT_MAX_PARALLELISM: u32 = 128;

/// Flink's upper bound for parallelism and max parallelism (`1 << 15`).
pub const UPPER_BOUND_MAX_PARALLELISM: u32 = 1 << 15;

/// Flink's `MathUtils.murmurHash(int)`: one Murmur3 round over the key's
/// hashCode, made non-negative.
pub fn murmur_hash_int(code: i32) -> i32 {
    let k = code
        .wrapping_mul(0xcc9e2d51_u32 as i32)
        .rotate_left(15)
        .wrapping_mul(0x1b873593);
    let h = k
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe6546b64_u32 as i32);
    let h = fmix32(h ^ 4);
    if h >= 0 {
        h
    } else if h != i32::MIN {
        -h
    } else {
        0
    }
}

/// The key group of a key whose `hashCode()` is `hash`
/// (`KeyGroupRangeAssignment.computeKeyGroupForKeyHash`).
/// `max_parallelism` must be in `1..=32768`; 0 is treated as 1.
#[inline]
pub fn key_group_for_hash(hash: i32, max_parallelism: u32) -> u16 {
    let max = max_parallelism.clamp(1, UPPER_BOUND_MAX_PARALLELISM);
    (murmur_hash_int(hash) as u32 % max) as u16
}

/// Key groups of many hashes at once, replacing the contents of `out`.
pub fn key_groups_for_hashes(hashes: &[i32], max_parallelism: u32, out: &mut Vec<u16>) {
    out.clear();
    out.extend(
        hashes
            .iter()
            .map(|h| key_group_for_hash(*h, max_parallelism)),
    );
}

/// The subtask index that owns `key_group`
/// (`KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup`).
#[inline]
pub fn operator_index_for_key_group(max_parallelism: u32, parallelism: u32, key_group: u16) -> u32 {
    let max = max_parallelism.max(1) as u64;
    (key_group as u64 * parallelism as u64 / max) as u32
}

/// An inclusive range of key groups, as Flink's `KeyGroupRange`; empty when
/// `end < start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyGroupRange {
    /// First key group.
    pub start: u16,
    /// Last key group, inclusive.
    pub end: u16,
}

impl KeyGroupRange {
    /// Number of key groups in the range.
    pub fn len(&self) -> usize {
        if self.end < self.start {
            0
        } else {
            (self.end - self.start) as usize + 1
        }
    }

    /// True when the range holds no key group.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when `key_group` is in the range.
    pub fn contains(&self, key_group: u16) -> bool {
        self.start <= key_group && key_group <= self.end
    }

    /// The key groups of the range, in order.
    pub fn iter(&self) -> impl Iterator<Item = u16> {
        let (start, end) = (self.start as u32, self.end as u32);
        (start..end + 1).map(|g| g as u16)
    }
}

fn check_parallelism(what: &str, value: u32) -> Result<()> {
    if value == 0 || value > UPPER_BOUND_MAX_PARALLELISM {
        return Err(AggError::Plan(format!(
            "{what} {value} is not within 1..={UPPER_BOUND_MAX_PARALLELISM}"
        )));
    }
    Ok(())
}

/// The key groups subtask `operator_index` owns at `parallelism`
/// (`KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex`); used
/// to pick the snapshot payloads a subtask restores after rescaling.
pub fn key_group_range_for_operator(
    max_parallelism: u32,
    parallelism: u32,
    operator_index: u32,
) -> Result<KeyGroupRange> {
    check_parallelism("parallelism", parallelism)?;
    check_parallelism("max parallelism", max_parallelism)?;
    if max_parallelism < parallelism {
        return Err(AggError::Plan(format!(
            "max parallelism {max_parallelism} is smaller than parallelism {parallelism}"
        )));
    }
    if operator_index >= parallelism {
        return Err(AggError::Plan(format!(
            "operator index {operator_index} is not below parallelism {parallelism}"
        )));
    }
    let (max, par, idx) = (
        max_parallelism as u64,
        parallelism as u64,
        operator_index as u64,
    );
    let start = (idx * max).div_ceil(par);
    let end = ((idx + 1) * max - 1) / par;
    Ok(KeyGroupRange {
        start: start as u16,
        end: end as u16,
    })
}

/// The max parallelism Flink picks when none is configured
/// (`KeyGroupRangeAssignment.computeDefaultMaxParallelism`):
/// `min(max(roundUpToPowerOfTwo(p + p / 2), 128), 32768)`.
pub fn default_max_parallelism(parallelism: u32) -> Result<u32> {
    check_parallelism("parallelism", parallelism)?;
    let wanted = (parallelism + parallelism / 2).next_power_of_two();
    Ok(wanted.clamp(DEFAULT_MAX_PARALLELISM, UPPER_BOUND_MAX_PARALLELISM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_partition_all_key_groups_and_agree_with_operator_index() {
        for &(max, par) in &[
            (128u32, 1u32),
            (128, 3),
            (128, 128),
            (4096, 7),
            (32768, 100),
        ] {
            let mut next = 0u32;
            for idx in 0..par {
                let range = key_group_range_for_operator(max, par, idx).unwrap();
                assert_eq!(range.start as u32, next, "max {max} par {par} idx {idx}");
                for g in range.iter() {
                    assert_eq!(operator_index_for_key_group(max, par, g), idx);
                }
                next = range.end as u32 + 1;
            }
            assert_eq!(next, max);
        }
    }

    #[test]
    fn rejects_bad_parallelism() {
        assert!(key_group_range_for_operator(64, 128, 0).is_err());
        assert!(key_group_range_for_operator(128, 0, 0).is_err());
        assert!(key_group_range_for_operator(128, 4, 4).is_err());
        assert!(default_max_parallelism(0).is_err());
    }

    #[test]
    fn default_max_parallelism_matches_flink_formula() {
        assert_eq!(default_max_parallelism(1).unwrap(), 128);
        assert_eq!(default_max_parallelism(85).unwrap(), 128);
        assert_eq!(default_max_parallelism(86).unwrap(), 256);
        assert_eq!(default_max_parallelism(30000).unwrap(), 32768);
    }

    #[test]
    fn murmur_is_non_negative() {
        for code in [0, 1, -1, i32::MIN, i32::MAX, 42, 0x5bd1e995] {
            assert!(murmur_hash_int(code) >= 0);
            assert!(key_group_for_hash(code, 128) < 128);
        }
    }
}
