//! The two-phase layout of MIN/MAX over retracting input, and its merge.
//!
//! Flink's local phase emits Min/MaxWithRetractAccumulator as one
//! STRUCTURED field, `(min | max, mapSize BIGINT, map RAW(MapView<T,
//! BIGINT>))`. Here that is one Arrow struct column of the same fields, the
//! map as the list of `{key, value}` entries a DISTINCT view column uses
//! (the Java side reads and writes the MapView's bytes as it does for those
//! views). The global phase merges each partial as Flink's `merge` does,
//! one partial per call (its generated code hands `merge` a one-element
//! iterator): the partial's extreme is taken when the group holds no
//! positive count or it beats the current one; each count is added (Java
//! `long`), an entry that reaches zero removed; `mapSize` follows the keys
//! whose count turns positive or stops being so; and when such a key was
//! the extreme it is recomputed over every key after the partial.
//!
//! In Flink's state layout (single and global phases) the same struct is a
//! group's accumulator field, its map Flink's `agg<i>$map` map state: a
//! write-back carries only the entries that changed since the last one
//! (the log, [`CountedExtremes::changed_partials`]), a count of 0 for an
//! entry that left the map (Flink never stores 0); groups read back from
//! the backend are set as they are ([`CountedExtremes::load`]), unlogged.

use hashbrown::hash_map::Entry;
use hashbrown::HashSet;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, ListArray, StructArray};
use arrow_schema::{DataType, Field, Fields};

use super::bind::Binding;
use super::multiset::{
    beats, logged, read_counted_list, CountedExtremes, JavaOrd, MultisetRule, Owned,
};
use crate::error::{AggError, Result};

/// The fields of a partial's map entry: the view column's `{key, value}`.
fn entry_fields(value_type: &DataType) -> Fields {
    Fields::from(vec![
        Field::new("key", value_type.clone(), true),
        Field::new("value", DataType::Int64, false),
    ])
}

/// The partial's map: a list of `{key, value}` entries.
fn entry_field(value_type: &DataType) -> Arc<Field> {
    Arc::new(Field::new(
        "item",
        DataType::Struct(entry_fields(value_type)),
        false,
    ))
}

impl<R: MultisetRule> CountedExtremes<R>
where
    Owned<R>: JavaOrd,
{
    /// The fields of the partial struct, in Flink's order and with its
    /// names (`min` or `max`, `mapSize`, `map`).
    fn partial_fields(value_type: &DataType) -> Fields {
        Fields::from(vec![
            Field::new(if R::MIN { "min" } else { "max" }, value_type.clone(), true),
            Field::new("mapSize", DataType::Int64, true),
            Field::new("map", DataType::List(entry_field(value_type)), true),
        ])
    }

    /// The Arrow types of the partial: one struct column.
    pub fn partial_types(value_type: &DataType) -> Vec<DataType> {
        vec![DataType::Struct(Self::partial_fields(value_type))]
    }

    /// Starts logging the map entries that change (state in Flink's
    /// layout).
    pub fn start_log(&mut self) {
        self.log.get_or_insert_with(HashSet::new);
    }

    /// Forgets the logged entries: they were written back.
    pub fn clear_log(&mut self) {
        if let Some(log) = &mut self.log {
            log.clear();
        }
    }

    /// The partial column of the listed groups with, in each map, only the
    /// entries logged since [`clear_log`](Self::clear_log), each with its
    /// count now (0: it left the map); `None` without a log.
    pub fn changed_partials(
        &self,
        groups: &[u32],
        value_type: &DataType,
        name: &str,
    ) -> Result<Option<Vec<ArrayRef>>> {
        let Some(log) = &self.log else {
            return Ok(None);
        };
        let mut order: Vec<&(u32, _)> = log.iter().collect();
        order.sort_unstable_by_key(|entry| entry.0);
        let mut extremes = Vec::with_capacity(groups.len());
        let mut extreme_valid = Vec::with_capacity(groups.len());
        let mut sizes = Vec::with_capacity(groups.len());
        let mut offsets = vec![0i32];
        let mut keys = Vec::new();
        let mut counts = Vec::new();
        for &g in groups {
            let group = &self.groups[super::group_index(g, self.groups.len(), name)?];
            extreme_valid.push(group.extreme.is_some());
            extremes.push(
                group
                    .extreme
                    .as_ref()
                    .map(<Owned<R> as JavaOrd>::from_key)
                    .unwrap_or_default(),
            );
            sizes.push(group.map_size);
            let start = order.partition_point(|entry| entry.0 < g);
            let end = order.partition_point(|entry| entry.0 <= g);
            for (_, key) in &order[start..end] {
                keys.push(<Owned<R> as JavaOrd>::from_key(key));
                counts.push(group.map.get(key).copied().unwrap_or(0));
            }
            offsets.push(keys.len() as i32);
        }
        let entries = keys.len();
        let key_column = R::Val::build(keys, vec![true; entries], value_type)?;
        Ok(Some(Self::partial_column(
            value_type,
            R::Val::build(extremes, extreme_valid, value_type)?,
            Arc::new(Int64Array::from(sizes)),
            &offsets,
            key_column,
            &Int64Array::from(counts),
        )?))
    }

    /// Sets fresh groups from partials read back from Flink's state
    /// backend: a merge into empty groups is Flink's accumulator as it is
    /// (its extreme, its counts, `mapSize` the positive ones), not logged.
    pub fn load(&mut self, partial: &ArrayRef, group_ids: &[u32], name: &str) -> Result<()> {
        let log = self.log.take();
        let loaded = self.merge(partial, group_ids, name);
        self.log = log;
        loaded
    }

    /// One partial struct column of its fields, the map's entries given by
    /// `offsets` into `keys` and `counts`.
    fn partial_column(
        value_type: &DataType,
        extremes: ArrayRef,
        sizes: ArrayRef,
        offsets: &[i32],
        keys: ArrayRef,
        counts: &Int64Array,
    ) -> Result<Vec<ArrayRef>> {
        let entries = StructArray::try_new(
            entry_fields(value_type),
            vec![keys, Arc::new(counts.clone())],
            None,
        )?;
        let list = ListArray::try_new(
            entry_field(value_type),
            arrow_buffer::OffsetBuffer::new(offsets.to_vec().into()),
            Arc::new(entries),
            None,
        )?;
        let partial = StructArray::try_new(
            Self::partial_fields(value_type),
            vec![extremes, sizes, Arc::new(list)],
            None,
        )?;
        Ok(vec![Arc::new(partial)])
    }

    /// The partial column of the listed groups (local phase output).
    pub fn partials(
        &self,
        groups: &[u32],
        value_type: &DataType,
        name: &str,
    ) -> Result<Vec<ArrayRef>> {
        let [extremes, sizes, map] =
            <[ArrayRef; 3]>::try_from(self.columns(groups, value_type, name, false)?)
                .map_err(|_| AggError::Input(format!("{name}: a snapshot of three columns")))?;
        // The snapshot's `{key, count}` list, re-labelled as the partial's.
        let (offsets, keys, counts) = read_counted_list(&map, name)?;
        Self::partial_column(value_type, extremes, sizes, offsets, keys.clone(), counts)
    }

    /// Merges partial `i` into group `group_ids[i]`, in row order. A NULL
    /// partial, `mapSize` or map entry key is an error before any group
    /// changes.
    pub fn merge(&mut self, partial: &ArrayRef, group_ids: &[u32], name: &str) -> Result<()> {
        let bad = |what: &str| AggError::Input(format!("{name}: the partial {what}"));
        let partial = partial
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| bad("is not a struct"))?;
        let [extremes, sizes, map] = partial.columns() else {
            return Err(bad("has not the three fields (extreme, mapSize, map)"));
        };
        let extremes_column = R::Val::prepare(extremes)?;
        let extremes = R::Val::bind(&extremes_column, name)?;
        let extreme_valid = partial.column(0).logical_nulls();
        let sizes = sizes
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| bad("mapSize is not Int64"))?;
        let (offsets, key_column, counts) = read_counted_list(map, name)?;
        if partial.null_count() > 0 || sizes.null_count() > 0 || map.null_count() > 0 {
            return Err(bad("is NULL or has a NULL mapSize or map"));
        }
        if key_column.null_count() > 0 {
            return Err(bad("map has a NULL key"));
        }
        for &g in group_ids {
            super::group_index(g, self.groups.len(), name)?;
        }
        let keys_column = R::Val::prepare(key_column)?;
        let keys = R::Val::bind(&keys_column, name)?;
        let key_at = |e: usize| {
            let mut value = Owned::<R>::default();
            R::Val::store(&mut value, R::Val::get(&keys, e));
            value.into_key()
        };
        for (i, &g) in group_ids.iter().enumerate() {
            let group = &mut self.groups[g as usize];
            let theirs = extreme_valid
                .as_ref()
                .is_none_or(|valid| valid.is_valid(i))
                .then(|| {
                    let mut value = Owned::<R>::default();
                    R::Val::store(&mut value, R::Val::get(&extremes, i));
                    value.into_key()
                });
            let better = |a: &_| {
                group
                    .extreme
                    .as_ref()
                    .is_none_or(|cur| beats(R::MIN, a, cur))
            };
            if group.map_size == 0 || (sizes.value(i) > 0 && theirs.as_ref().is_some_and(better)) {
                group.extreme = theirs;
            }
            let mut recompute = false;
            for e in offsets[i] as usize..offsets[i + 1] as usize {
                let other = counts.value(e);
                let key = logged(&mut self.log, g, key_at(e));
                match group.map.entry(key) {
                    Entry::Vacant(slot) => {
                        if other > 0 {
                            group.map_size += 1;
                        }
                        if other != 0 {
                            group.candidates.push(slot.key(), Self::better);
                            slot.insert(other);
                        }
                    }
                    Entry::Occupied(mut slot) => {
                        let mine = *slot.get();
                        let merged = mine.wrapping_add(other);
                        if mine > 0 && merged <= 0 {
                            group.map_size -= 1;
                            recompute |= group.extreme.as_ref() == Some(slot.key());
                        } else if mine <= 0 && merged > 0 {
                            group.map_size += 1;
                        }
                        if merged == 0 {
                            slot.remove();
                        } else {
                            *slot.get_mut() = merged;
                        }
                    }
                }
            }
            if recompute {
                Self::recompute_extreme(group);
            }
            Self::compact(group);
        }
        Ok(())
    }
}
