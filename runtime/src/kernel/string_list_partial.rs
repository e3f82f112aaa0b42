//! Two-phase LISTAGG over retracting input: Flink's accumulator as the
//! partial, one struct column in Flink's field order and names:
//! ListAggWithRetractAccumulator `(list, retractList)` and, with a
//! separator, ListAggWsWithRetractAccumulator `(list, retractList,
//! delimiter)`; each list a `List<Utf8>` (a `RAW(ListView<STRING>)` on
//! Flink's side).
//!
//! The merge is Flink's `merge`, one partial at a time (what
//! MiniBatchGlobalGroupAggFunction hands it): a partial whose two lists
//! are empty is skipped; else the separator becomes the partial's, the
//! lists are concatenated (ours first), then each retracted value of both
//! removes the first equal value of the concatenation or stays retracted.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields};

use super::string_list::StringLists;
use crate::error::{AggError, Result};

/// Flink's accumulator field names.
const LIST: &str = "list";
const RETRACT_LIST: &str = "retractList";
const DELIMITER: &str = "delimiter";

impl StringLists {
    fn partial_fields(with_delimiter: bool) -> Fields {
        let list = || DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
        let mut fields = vec![
            Field::new(LIST, list(), true),
            Field::new(RETRACT_LIST, list(), true),
        ];
        if with_delimiter {
            fields.push(Field::new(DELIMITER, DataType::Utf8, true));
        }
        fields.into()
    }

    /// The partial column types: one struct, with the `delimiter` field
    /// for LISTAGG with a separator.
    pub fn partial_types(with_delimiter: bool) -> Vec<DataType> {
        vec![DataType::Struct(Self::partial_fields(with_delimiter))]
    }

    /// Whether partial types (as [`StringLists::partial_types`] gives
    /// them) carry the separator.
    pub fn partial_has_delimiter(types: &[DataType]) -> bool {
        matches!(types, [DataType::Struct(fields)] if fields.len() == 3)
    }

    /// The partials of the listed groups: their lists, `retractList`s and
    /// (with a separator) separators.
    pub fn partials(
        &self,
        groups: &[u32],
        with_delimiter: bool,
        name: &str,
    ) -> Result<Vec<ArrayRef>> {
        let [lists, separators, retracts] = <[ArrayRef; 3]>::try_from(self.snapshot(groups, name)?)
            .map_err(|_| {
                AggError::Plan(format!(
                    "{name}: partials of LISTAGG over retracting input need the local or \
                     global phase's state"
                ))
            })?;
        let item = Arc::new(Field::new("item", DataType::Utf8, true));
        let relabel = |column: ArrayRef| -> Result<ArrayRef> {
            let list = column.as_list::<i32>().clone();
            let (_, offsets, values, nulls) = list.into_parts();
            Ok(Arc::new(arrow_array::ListArray::try_new(
                item.clone(),
                offsets,
                values,
                nulls,
            )?))
        };
        let mut children = vec![relabel(lists)?, relabel(retracts)?];
        if with_delimiter {
            children.push(separators);
        }
        let partial = StructArray::try_new(Self::partial_fields(with_delimiter), children, None)?;
        Ok(vec![Arc::new(partial)])
    }

    /// Merges one partial per row into group `groups[row]`, in row order.
    /// A NULL partial, list or value is an error before any group changes.
    pub fn merge(&mut self, partial: &ArrayRef, groups: &[u32], name: &str) -> Result<()> {
        self.fold_partials(partial, groups, name, false)
    }

    /// Sets fresh groups from partials read back from Flink's state
    /// backend (its list states), as they are: a merge would cancel the
    /// values a `retractList` shares with its `list` (Flink adds a value
    /// to the list without looking at the retractList).
    pub fn load(&mut self, partial: &ArrayRef, groups: &[u32], name: &str) -> Result<()> {
        self.fold_partials(partial, groups, name, true)
    }

    /// [`merge`](Self::merge) or, when `exact`, [`load`](Self::load).
    fn fold_partials(
        &mut self,
        partial: &ArrayRef,
        groups: &[u32],
        name: &str,
        exact: bool,
    ) -> Result<()> {
        let partial = partial
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| AggError::Input(format!("{name}: the partial is not a struct")))?;
        if partial.null_count() > 0 {
            return Err(AggError::Input(format!("{name}: a NULL partial")));
        }
        let field = |field: &str| {
            partial
                .column_by_name(field)
                .ok_or_else(|| AggError::Input(format!("{name}: the partial has no {field}")))
        };
        let lists = Self::read_lists(field(LIST)?, "a partial's list", name)?;
        let retracts = Self::read_lists(field(RETRACT_LIST)?, "a partial's retractList", name)?;
        let delimiters = partial
            .column_by_name(DELIMITER)
            .map(|c| {
                c.as_any().downcast_ref::<StringArray>().ok_or_else(|| {
                    AggError::Input(format!("{name}: the partial's delimiter is not Utf8"))
                })
            })
            .transpose()?;
        if groups.len() != partial.len() {
            return Err(AggError::Input(format!(
                "{name}: {} partials for {} group ids",
                partial.len(),
                groups.len()
            )));
        }
        for &g in groups {
            super::group_index(g, self.items.len(), name)?;
        }
        for (row, (list, retracted)) in lists.into_iter().zip(retracts).enumerate() {
            if list.is_empty() && retracted.is_empty() {
                continue;
            }
            let g = groups[row] as usize;
            if let Some(delimiters) = delimiters {
                let separator = delimiters
                    .is_valid(row)
                    .then(|| delimiters.value(row).as_bytes());
                self.delim[g] = self.delimiters.intern(separator);
            }
            if exact {
                self.set_lists(g, list, retracted);
            } else {
                self.merge_lists(g, list, retracted);
            }
        }
        Ok(())
    }

    /// Sets group `g`'s lists.
    fn set_lists(&mut self, g: usize, list: Vec<Box<[u8]>>, retracted: Vec<Box<[u8]>>) {
        self.payload -=
            Self::heap(&self.items[g]) + self.retracts.get(g).map_or(0, |r| Self::heap(r));
        self.payload += Self::heap(&list) + Self::heap(&retracted);
        self.items[g] = list;
        if let Some(retracts) = self.retracts.get_mut(g) {
            *retracts = retracted;
        }
    }

    /// Flink's list merge for group `g`.
    fn merge_lists(&mut self, g: usize, list: Vec<Box<[u8]>>, retracted: Vec<Box<[u8]>>) {
        let mut buffer = std::mem::take(&mut self.items[g]);
        let mut pending = std::mem::take(&mut self.retracts[g]);
        self.payload -= Self::heap(&buffer) + Self::heap(&pending);
        buffer.extend(list);
        pending.extend(retracted);
        let mut still_retracted = Vec::new();
        for value in pending {
            match buffer.iter().position(|v| *v == value) {
                Some(at) => {
                    buffer.remove(at);
                }
                None => still_retracted.push(value),
            }
        }
        self.payload += Self::heap(&buffer) + Self::heap(&still_retracted);
        self.items[g] = buffer;
        self.retracts[g] = still_retracted;
    }
}
