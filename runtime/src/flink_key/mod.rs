//! Flink's keyed-state partitioning, reproduced bit for bit: the
//! `BinaryRowData` bytes and `hashCode()` of a grouping key, the key group
//! and owning subtask of a key, and the iteration order of the
//! `java.util.HashMap` that Flink's mini-batch operators buffer a bundle in.
//!
//! Bundle map type (checked in Flink 2.2.0's source): the mini-batch group
//! aggregates run as `KeyedMapBundleOperator` (global and single phase,
//! functions `MiniBatchGroupAggFunction` and `MiniBatchGlobalGroupAggFunction`)
//! and `MapBundleOperator` (local phase, `MiniBatchLocalGroupAggFunction`),
//! both `AbstractMapBundleOperator`s whose bundle is a plain
//! `java.util.HashMap` created once in `open()` and `clear()`ed after each
//! `finishBundle`. The functions iterate `buffer.entrySet()`, so results
//! come out in HashMap order (not insertion order), and the table keeps the
//! capacity of the largest bundle so far; [`JavaHashMapOrder`] models both.
//! The bundle key is the key selector's `BinaryRowData` (keyed operators use
//! `getCurrentKey()`, the local one `keySelector.getKey(input)`), so its
//! hashCode is [`key_hashes`]'s value.

mod binary_array;
mod binary_row;
mod java_hash_map;
mod key_group;

pub use binary_row::{fmix32, hash_bytes, hash_bytes_by_words, key_hashes, KeyRowEncoder};
pub use java_hash_map::{java_compute_if_absent_order, java_hash_map_order, JavaHashMapOrder};
pub use key_group::{
    default_max_parallelism, key_group_for_hash, key_group_range_for_operator,
    key_groups_for_hashes, murmur_hash_int, operator_index_for_key_group, KeyGroupRange,
    DEFAULT_MAX_PARALLELISM, UPPER_BOUND_MAX_PARALLELISM,
};
