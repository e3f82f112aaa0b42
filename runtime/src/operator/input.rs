//! Reading an input batch against the plan: key columns, argument (or
//! partial) columns and the optional `$row_kind` column, with every check
//! done before any state changes.

use arrow_array::{Array, ArrayRef, BooleanArray, Int8Array, RecordBatch};
use arrow_schema::DataType;

use crate::accumulator::BatchUpdate;
use crate::error::{AggError, Result};
use crate::types::{InputMode, RowKind, ROW_KIND_COLUMN};

/// The columns of one input batch, checked against the plan.
pub(crate) struct Input<'a> {
    pub keys: Vec<ArrayRef>,
    /// Argument columns (partial columns for the global phase) per call.
    pub args: Vec<Vec<ArrayRef>>,
    /// Each call's FILTER (WHERE ...) column, if it has one.
    pub filters: Vec<Option<BooleanArray>>,
    /// Row kinds, when the batch has a `$row_kind` column.
    pub row_kinds: Option<&'a [i8]>,
    pub num_rows: usize,
    /// Global phase: the DISTINCT view columns, in the plan's view order.
    pub views: Vec<ArrayRef>,
}

fn same_type(actual: &DataType, expected: &DataType) -> bool {
    actual == expected || actual.equals_datatype(expected)
}

fn column(batch: &RecordBatch, index: usize, what: &str) -> Result<ArrayRef> {
    if index >= batch.num_columns() {
        return Err(AggError::Input(format!(
            "{what} is column {index} but the batch has only {} columns",
            batch.num_columns()
        )));
    }
    Ok(batch.column(index).clone())
}

/// The rows a call folds: its FILTER column (a NULL counts as false),
/// ANDed with the rows the operator accepts (`accepted`), if either is set.
pub(crate) fn call_rows(
    filter: Option<&BooleanArray>,
    accepted: Option<&BooleanArray>,
) -> Option<BooleanArray> {
    let mask = |a: &BooleanArray| match a.nulls() {
        Some(nulls) => a.values() & nulls.inner(),
        None => a.values().clone(),
    };
    match (filter, accepted) {
        (None, None) => None,
        (Some(f), None) => Some(BooleanArray::new(mask(f), None)),
        (None, Some(a)) => Some(BooleanArray::new(mask(a), None)),
        (Some(f), Some(a)) => Some(BooleanArray::new(&mask(f) & &mask(a), None)),
    }
}

/// Checks `batch` and picks its columns. `arg_types[c]` are the Arrow
/// types call `c`'s columns must have; `filter_columns[c]` is its FILTER
/// column, if any.
pub(crate) fn read<'a>(
    batch: &'a RecordBatch,
    key_columns: &[usize],
    key_types: &[DataType],
    (arg_columns, filter_columns): (&[Vec<usize>], &[Option<usize>]),
    arg_types: &[Vec<DataType>],
    input: InputMode,
) -> Result<Input<'a>> {
    let mut keys = Vec::with_capacity(key_columns.len());
    for (i, (&index, expected)) in key_columns.iter().zip(key_types).enumerate() {
        let col = column(batch, index, &format!("key {i}"))?;
        if !same_type(col.data_type(), expected) {
            return Err(AggError::Input(format!(
                "key {i} (column {index}) has type {}, the plan promised {expected}",
                col.data_type()
            )));
        }
        keys.push(col);
    }
    let mut args = Vec::with_capacity(arg_columns.len());
    for (c, (indexes, types)) in arg_columns.iter().zip(arg_types).enumerate() {
        if indexes.len() != types.len() {
            return Err(AggError::Input(format!(
                "call {c} needs {} input columns, the plan gives {}",
                types.len(),
                indexes.len()
            )));
        }
        let mut cols = Vec::with_capacity(indexes.len());
        for (&index, expected) in indexes.iter().zip(types) {
            let col = column(batch, index, &format!("an input of call {c}"))?;
            if !same_type(col.data_type(), expected) {
                return Err(AggError::Input(format!(
                    "call {c} reads column {index} of type {}, the plan promised {expected}",
                    col.data_type()
                )));
            }
            cols.push(col);
        }
        args.push(cols);
    }
    let mut filters = Vec::with_capacity(filter_columns.len());
    for (c, filter) in filter_columns.iter().enumerate() {
        let Some(index) = *filter else {
            filters.push(None);
            continue;
        };
        let col = column(batch, index, &format!("the FILTER of call {c}"))?;
        let mask = col.as_any().downcast_ref::<BooleanArray>().ok_or_else(|| {
            AggError::Input(format!(
                "the FILTER of call {c} (column {index}) has type {}, expected Boolean",
                col.data_type()
            ))
        })?;
        filters.push(Some(mask.clone()));
    }
    let row_kinds = match batch.schema().index_of(ROW_KIND_COLUMN) {
        Err(_) => None,
        Ok(index) => {
            let kinds = batch
                .column(index)
                .as_any()
                .downcast_ref::<Int8Array>()
                .ok_or_else(|| {
                    AggError::Input(format!(
                        "{ROW_KIND_COLUMN} has type {}, expected Int8",
                        batch.column(index).data_type()
                    ))
                })?;
            if kinds.null_count() > 0 {
                return Err(AggError::Input(format!(
                    "{ROW_KIND_COLUMN} holds NULL; every row needs a row kind"
                )));
            }
            let values: &'a [i8] = kinds.values();
            if let Some(bad) = values.iter().find(|&&k| RowKind::from_i8(k).is_none()) {
                return Err(AggError::Input(format!(
                    "{ROW_KIND_COLUMN} holds {bad}; row kinds are 0 (+I), 1 (-U), 2 (+U), 3 (-D)"
                )));
            }
            if input == InputMode::InsertOnly {
                if let Some(&k) = values
                    .iter()
                    .find(|&&k| RowKind::from_i8(k).is_some_and(|k| !k.is_accumulate()))
                {
                    let kind = RowKind::from_i8(k).map(|k| k.short_string()).unwrap_or("?");
                    return Err(AggError::Input(format!(
                        "a {kind} row reached an insert-only aggregate"
                    )));
                }
            }
            Some(values)
        }
    };
    Ok(Input {
        keys,
        args,
        filters,
        row_kinds,
        num_rows: batch.num_rows(),
        views: Vec::new(),
    })
}

/// One update per call over `input` at group ids `ids`, with the rows each
/// call counts (`rows`, from [`call_rows`]).
pub(crate) fn updates<'a>(
    input: &'a Input<'_>,
    rows: &'a [Option<BooleanArray>],
    ids: &'a [u32],
) -> Vec<BatchUpdate<'a>> {
    input
        .args
        .iter()
        .zip(rows)
        .map(|(args, rows)| BatchUpdate {
            args,
            group_ids: ids,
            filter: rows.as_ref(),
            row_kinds: input.row_kinds,
            distinct: None,
        })
        .collect()
}
