//! Columnar changelog output: which rows to emit (row kind, key row and
//! the source of each result value), gathered at the end with `take` and
//! `interleave`, never row by row through scalars.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int8Array, RecordBatch, UInt32Array};
use arrow_schema::SchemaRef;
use arrow_select::interleave::interleave;
use arrow_select::take::take;

use crate::error::Result;
use crate::types::RowKind;

/// Source of result values taken before an update.
pub(crate) const BEFORE: usize = 0;
/// Source of result values taken after an update.
pub(crate) const AFTER: usize = 1;

/// The rows of one output batch, as indexes into column sources.
#[derive(Debug, Default)]
pub(crate) struct Changelog {
    kinds: Vec<i8>,
    key_rows: Vec<u32>,
    values: Vec<(usize, usize)>,
}

impl Changelog {
    pub(crate) fn push(&mut self, kind: RowKind, key_row: u32, source: usize, index: usize) {
        self.kinds.push(kind as i8);
        self.key_rows.push(key_row);
        self.values.push((source, index));
    }

    /// Builds the batch: keys from `key_source` rows, each call's values
    /// from its `[before, after]` columns.
    pub(crate) fn finish(
        self,
        schema: &SchemaRef,
        key_source: &[ArrayRef],
        values: &[[ArrayRef; 2]],
    ) -> Result<RecordBatch> {
        let mut columns = Vec::with_capacity(schema.fields().len());
        let rows = UInt32Array::from(self.key_rows);
        for key in key_source {
            columns.push(take(key.as_ref(), &rows, None)?);
        }
        for [before, after] in values {
            columns.push(interleave(
                &[before.as_ref(), after.as_ref()],
                &self.values,
            )?);
        }
        columns.push(Arc::new(Int8Array::from(self.kinds)) as ArrayRef);
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}
