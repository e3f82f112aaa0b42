//! LISTAGG over insert-only input, as Flink's declarative ListAggFunction
//! keeps it: per group the concatenation so far (`concatAcc`, NULL until a
//! non-NULL value arrives) and the latest separator (`accDelimiter`,
//! initially `,`).
//!
//! Accumulating a row sets the separator to the row's (even when the value
//! is NULL) and appends `separator value` to a non-NULL concatenation, or
//! starts it with the value. Merging a partial does the same with the
//! partial's separator and concatenation. SQL `CONCAT` is NULL when an
//! operand is, so a NULL separator makes the concatenation NULL (Flink's
//! parser only admits a character literal, so this is for completeness).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StringArray};
use arrow_schema::DataType;

use super::rows::Rows;
use super::GroupIds;
use crate::accumulator::BatchUpdate;
use crate::error::{AggError, Result};

/// Flink's separator when a call names none.
pub const DEFAULT_SEPARATOR: &[u8] = b",";

/// The distinct separators one call has seen, each stored once; groups
/// hold an index. Index 0 is [`DEFAULT_SEPARATOR`].
#[derive(Debug, Clone)]
pub struct Delimiters {
    seen: Vec<Option<Box<[u8]>>>,
    /// The index the last lookup found (a literal separator: every row).
    last: u32,
}

impl Default for Delimiters {
    fn default() -> Self {
        Delimiters {
            seen: vec![Some(DEFAULT_SEPARATOR.into())],
            last: 0,
        }
    }
}

impl Delimiters {
    /// The index of `separator`, adding it when new.
    #[inline]
    pub fn intern(&mut self, separator: Option<&[u8]>) -> u32 {
        if self.seen[self.last as usize].as_deref() == separator {
            return self.last;
        }
        let index = match self.seen.iter().position(|s| s.as_deref() == separator) {
            Some(i) => i,
            None => {
                self.seen.push(separator.map(Into::into));
                self.seen.len() - 1
            }
        };
        self.last = index as u32;
        self.last
    }

    /// The separator at `index` (NULL as `None`).
    #[inline]
    pub fn get(&self, index: u32) -> Option<&[u8]> {
        self.seen[index as usize].as_deref()
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.seen.capacity() * 16 + self.seen.iter().flatten().map(|s| s.len()).sum::<usize>()
    }

    /// A Utf8 column of the separators at `indexes`.
    pub fn column(&self, indexes: impl Iterator<Item = u32>) -> Result<ArrayRef> {
        let values = indexes
            .map(|d| self.get(d).map(utf8).transpose())
            .collect::<Result<Vec<Option<&str>>>>()?;
        Ok(Arc::new(StringArray::from(values)))
    }
}

/// Bytes as `&str`; state only ever holds what Utf8 columns gave it.
pub(crate) fn utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes)
        .map_err(|e| AggError::Input(format!("string state is not UTF-8: {e}")))
}

/// A call's separator per row: its second argument column, or `,`.
#[derive(Debug, Clone, Copy)]
pub enum Separators<'a> {
    /// LISTAGG(x): always `,`.
    Default,
    /// LISTAGG(x, separator).
    Column(&'a StringArray),
}

impl<'a> Separators<'a> {
    /// The separators of `batch` (argument 1 if present, checked).
    pub fn of(batch: &BatchUpdate<'a>, name: &str) -> Result<Separators<'a>> {
        match batch.args.len() {
            1 => Ok(Separators::Default),
            2 => {
                let column = super::argument(batch, 1, &DataType::Utf8, name)?;
                let strings = column
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .ok_or_else(|| AggError::Input(format!("{name}: the separator is not Utf8")))?;
                Ok(Separators::Column(strings))
            }
            n => Err(AggError::Input(format!(
                "{name}: expected the value and an optional separator, got {n} argument columns"
            ))),
        }
    }

    /// Row `i`'s separator.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        match self {
            Separators::Default => Some(DEFAULT_SEPARATOR),
            Separators::Column(c) => c.is_valid(i).then(|| c.value(i).as_bytes()),
        }
    }
}

/// Columnar LISTAGG concatenations.
#[derive(Debug, Default)]
pub struct Concat {
    acc: Vec<Option<Vec<u8>>>,
    delim: Vec<u32>,
    delimiters: Delimiters,
    /// Heap bytes of the concatenations.
    payload: usize,
}

impl Concat {
    /// Number of groups held.
    pub fn len(&self) -> usize {
        self.acc.len()
    }

    /// True when no group is held.
    pub fn is_empty(&self) -> bool {
        self.acc.is_empty()
    }

    /// Inline bytes per group.
    pub fn bytes_per_group() -> usize {
        std::mem::size_of::<Option<Vec<u8>>>() + 4
    }

    /// Grows (or shrinks) to `n` groups; new groups are fresh.
    pub fn resize(&mut self, n: usize) {
        for old in self.acc.iter().skip(n).flatten() {
            self.payload -= old.capacity();
        }
        self.acc.resize(n, None);
        self.delim.resize(n, 0);
    }

    /// Drops every group.
    pub fn reset(&mut self) {
        *self = Concat::default();
    }

    /// Resets the listed groups.
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            let g = g as usize;
            if g < self.acc.len() {
                self.set(g, None);
                self.delim[g] = 0;
            }
        }
    }

    /// Bytes held, concatenations included.
    pub fn memory_bytes(&self) -> usize {
        self.acc.capacity() * std::mem::size_of::<Option<Vec<u8>>>()
            + self.delim.capacity() * 4
            + self.payload
            + self.delimiters.memory_bytes()
    }

    fn set(&mut self, g: usize, value: Option<Vec<u8>>) {
        let new = value.as_ref().map_or(0, Vec::capacity);
        let old = std::mem::replace(&mut self.acc[g], value);
        self.payload = self.payload + new - old.map_or(0, |v| v.capacity());
    }

    /// Sets group `g`'s separator and appends `value` (NULL leaves the
    /// concatenation as it is): accumulate and merge alike.
    #[inline]
    fn fold(&mut self, g: usize, separator: Option<&[u8]>, value: Option<&[u8]>) {
        let d = self.delimiters.intern(separator);
        self.delim[g] = d;
        let Some(value) = value else { return };
        let slot = &mut self.acc[g];
        let before = slot.as_ref().map_or(0, Vec::capacity);
        *slot = match (slot.take(), self.delimiters.get(d)) {
            (None, _) => Some(value.to_vec()),
            (Some(mut acc), Some(separator)) => {
                acc.extend_from_slice(separator);
                acc.extend_from_slice(value);
                Some(acc)
            }
            (Some(_), None) => None,
        };
        let after = slot.as_ref().map_or(0, Vec::capacity);
        // `payload` includes `before`, so this never underflows.
        self.payload = self.payload + after - before;
    }

    /// Folds the rows `rows` selects (FILTER only: a NULL value still
    /// sets the separator).
    pub fn update(
        &mut self,
        values: &StringArray,
        separators: Separators<'_>,
        rows: &Rows,
        groups: &GroupIds<'_>,
    ) {
        let ids = groups.ids();
        rows.for_each(|i| {
            let value = values.is_valid(i).then(|| values.value(i).as_bytes());
            self.fold(ids[i] as usize, separators.get(i), value);
        });
    }

    /// Folds like [`Concat::update`] and returns each row's result right
    /// after it, setting `changed` where it differs from before.
    pub fn update_traced(
        &mut self,
        values: &StringArray,
        separators: Separators<'_>,
        rows: &Rows,
        groups: &GroupIds<'_>,
        changed: &mut [bool],
        name: &str,
    ) -> Result<ArrayRef> {
        super::trace_rows::<super::Utf8>(
            rows,
            groups.ids(),
            changed,
            name,
            &DataType::Utf8,
            |a, b| a == b,
            |i, g, selected| {
                let before = self.acc[g].clone();
                if selected {
                    let value = values.is_valid(i).then(|| values.value(i).as_bytes());
                    self.fold(g, separators.get(i), value);
                }
                (before, self.acc[g].clone())
            },
        )
    }

    /// Merges partial columns `(accDelimiter, concatAcc)`, in row order.
    pub fn merge(
        &mut self,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
        name: &str,
    ) -> Result<()> {
        let (separators, values) = partial_columns(partials, name)?;
        for (j, &g) in groups.ids().iter().enumerate() {
            let separator = separators
                .is_valid(j)
                .then(|| separators.value(j).as_bytes());
            let value = values.is_valid(j).then(|| values.value(j).as_bytes());
            self.fold(g as usize, separator, value);
        }
        Ok(())
    }

    /// The concatenations of the listed groups.
    pub fn evaluate(&self, groups: &[u32], name: &str) -> Result<ArrayRef> {
        let values = groups
            .iter()
            .map(|&g| {
                let g = super::group_index(g, self.acc.len(), name)?;
                self.acc[g].as_deref().map(utf8).transpose()
            })
            .collect::<Result<Vec<Option<&str>>>>()?;
        Ok(Arc::new(StringArray::from(values)))
    }

    /// The partial columns `(accDelimiter, concatAcc)` of the listed groups.
    pub fn partials(&self, groups: &[u32], name: &str) -> Result<Vec<ArrayRef>> {
        for &g in groups {
            super::group_index(g, self.acc.len(), name)?;
        }
        let separators = self
            .delimiters
            .column(groups.iter().map(|&g| self.delim[g as usize]))?;
        Ok(vec![separators, self.evaluate(groups, name)?])
    }

    /// Sets the listed groups from partial columns (checked first).
    pub fn restore(&mut self, state: &[ArrayRef], groups: &[u32], name: &str) -> Result<()> {
        let (separators, values) = partial_columns(state, name)?;
        for &g in groups {
            super::group_index(g, self.acc.len(), name)?;
        }
        for (j, &g) in groups.iter().enumerate() {
            let g = g as usize;
            let separator = separators
                .is_valid(j)
                .then(|| separators.value(j).as_bytes());
            self.delim[g] = self.delimiters.intern(separator);
            let value = values
                .is_valid(j)
                .then(|| values.value(j).as_bytes().to_vec());
            self.set(g, value);
        }
        Ok(())
    }
}

/// The two Utf8 columns of a LISTAGG partial.
fn partial_columns<'a>(
    columns: &'a [ArrayRef],
    name: &str,
) -> Result<(&'a StringArray, &'a StringArray)> {
    let strings = |c: &'a ArrayRef| {
        c.as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| AggError::Input(format!("{name}: a LISTAGG partial column is not Utf8")))
    };
    match columns {
        [separators, values] => Ok((strings(separators)?, strings(values)?)),
        _ => Err(AggError::Input(format!(
            "{name}: expected the partial columns (accDelimiter, concatAcc), got {}",
            columns.len()
        ))),
    }
}
