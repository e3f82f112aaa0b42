//! Helpers shared by the operator tests: building plans and batches and
//! printing changelog rows as Flink prints them (`+I[k, v]`).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggCall, AggPlan, DistinctView, Emission};
use aggforge_runtime::types::{InputMode, Phase, RowKind, SqlType, ROW_KIND_COLUMN};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};

/// `function(arg column)` with the argument's SQL type.
pub fn call(function: &str, arg: Option<(usize, SqlType)>) -> AggCall {
    AggCall {
        function: function.into(),
        args: arg.iter().map(|a| a.0).collect(),
        arg_types: arg.iter().map(|a| a.1).collect(),
        distinct: false,
        filter: None,
        result_type: None,
        retracts: true,
    }
}

/// A single-phase insert-only plan keyed on column 0.
pub fn plan(key: SqlType, calls: Vec<AggCall>, emission: Emission) -> AggPlan {
    AggPlan {
        key_columns: vec![0],
        key_types: vec![key],
        calls,
        phase: Phase::Single,
        input: InputMode::InsertOnly,
        emission,
        generate_update_before: true,
        state_ttl_ms: 0,
        memory_budget_bytes: 64 << 20,
        max_parallelism: 128,
        count_star_column: None,
        views: Vec::new(),
        final_key: None,
        window: None,
        jit: Default::default(),
    }
}

/// A batch of the given columns named c0, c1, ...
pub fn batch(columns: Vec<ArrayRef>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// A batch with a `$row_kind` column appended.
pub fn batch_with_kinds(columns: Vec<ArrayRef>, kinds: Vec<i8>) -> RecordBatch {
    let mut fields: Vec<Field> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
        .collect();
    fields.push(Field::new(ROW_KIND_COLUMN, DataType::Int8, false));
    let mut columns = columns;
    columns.push(Arc::new(arrow_array::Int8Array::from(kinds)));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

fn value(column: &ArrayRef, row: usize) -> String {
    render(column, row, false)
}

/// A cell as text; with `sorted_lists`, structs and lists too, each list's
/// items sorted (hash maps list their entries in an order of their own).
fn render(column: &ArrayRef, row: usize, sorted_lists: bool) -> String {
    if column.is_null(row) {
        return "NULL".into();
    }
    match column.data_type() {
        DataType::Struct(_) if sorted_lists => {
            let fields: Vec<String> = column
                .as_struct()
                .columns()
                .iter()
                .map(|c| render(c, row, true))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        DataType::List(_) if sorted_lists => {
            let items = column.as_list::<i32>().value(row);
            let mut items: Vec<String> =
                (0..items.len()).map(|i| render(&items, i, true)).collect();
            items.sort();
            format!("[{}]", items.join(", "))
        }
        DataType::Int8 => column.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => column.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => column.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => column.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Date32 => column.as_primitive::<Date32Type>().value(row).to_string(),
        DataType::Float32 => format!("{:?}", column.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => format!("{:?}", column.as_primitive::<Float64Type>().value(row)),
        DataType::Decimal128(_, _) => column.as_primitive::<Decimal128Type>().value_as_string(row),
        DataType::Utf8 => column.as_string::<i32>().value(row).to_string(),
        DataType::Boolean => column.as_boolean().value(row).to_string(),
        other => format!("<{other}>"),
    }
}

/// Rows of an output batch as `+I[k, v1, v2]`.
pub fn rows(batch: &RecordBatch) -> Vec<String> {
    let n = batch.num_columns() - 1;
    let kinds = batch.column(n).as_primitive::<Int8Type>();
    (0..batch.num_rows())
        .map(|r| {
            let kind = RowKind::from_i8(kinds.value(r)).unwrap().short_string();
            let fields: Vec<String> = (0..n).map(|c| value(batch.column(c), r)).collect();
            format!("{kind}[{}]", fields.join(", "))
        })
        .collect()
}

/// Rows of an output batch with structs and lists spelled out, each
/// list's items sorted: partials of hash-map state compare by content.
pub fn rows_sorted_lists(batch: &RecordBatch) -> Vec<String> {
    let n = batch.num_columns() - 1;
    (0..batch.num_rows())
        .map(|r| {
            let fields: Vec<String> = (0..n).map(|c| render(batch.column(c), r, true)).collect();
            format!("[{}]", fields.join(", "))
        })
        .collect()
}

/// Rows of an optional output batch.
pub fn opt_rows(batch: Option<RecordBatch>) -> Vec<String> {
    batch.map(|b| rows(&b)).unwrap_or_default()
}

/// Processes each batch (immediate mode) and collects the changelog.
pub fn run_immediate(op: &mut GroupAggOperator, batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        out.extend(opt_rows(op.process(b).unwrap()));
    }
    out
}

/// Processes bundles (lists of batches), flushing after each one.
pub fn run_bundles(op: &mut GroupAggOperator, bundles: &[Vec<RecordBatch>]) -> Vec<String> {
    let mut out = Vec::new();
    for bundle in bundles {
        for b in bundle {
            assert!(op.process(b).unwrap().is_none());
        }
        out.extend(opt_rows(op.flush().unwrap()));
    }
    out
}

/// Shorthand for a list of expected rows.
pub fn strs(rows: &[&str]) -> Vec<String> {
    rows.iter().map(|s| s.to_string()).collect()
}

/// Partial column count of a call in Flink's accumulator layout.
fn partial_width(function: &str, input: InputMode) -> usize {
    match function {
        // LISTAGG over retracting input: its accumulator, one struct.
        "LISTAGG" if input == InputMode::Retracting => 1,
        // AVG keeps a sum and a count, LISTAGG (accDelimiter, concatAcc),
        // SINGLE_VALUE (value, count).
        "AVG" | "LISTAGG" | "SINGLE_VALUE" => 2,
        // SumWithRetractAggFunction keeps the sum and a count.
        "SUM" if input == InputMode::Retracting => 2,
        _ => 1,
    }
}

/// The local and global plans of a single-phase plan: the global phase
/// reads each call's partial columns after the keys, and over
/// retracting input without a COUNT(*) call the COUNT(*) partial Flink's
/// planner inserts, last.
pub fn two_phase_plans(single: &AggPlan) -> (AggPlan, AggPlan) {
    let mut local = single.clone();
    local.phase = Phase::Local;
    local.emission = Emission::MiniBatch;
    let mut global = local.clone();
    global.phase = Phase::Global;
    // The local phase's output: the keys, then the partials.
    let keys = single.key_columns.len();
    global.key_columns = (0..keys).collect();
    let mut next = keys;
    global.calls = single
        .calls
        .iter()
        .map(|c| {
            let width = partial_width(&c.function, single.input);
            // FILTER applies in the local phase only.
            let call = AggCall {
                args: (next..next + width).collect(),
                filter: None,
                ..c.clone()
            };
            next += width;
            call
        })
        .collect();
    if single.input == InputMode::Retracting && single.record_counter().is_none() {
        global.count_star_column = Some(next);
        next += 1;
    }
    // DISTINCT calls over one argument share a view (Flink's DistinctInfo),
    // in order of first use, after every call's partials.
    let mut views: Vec<(Vec<usize>, DistinctView)> = Vec::new();
    for (c, call) in single.calls.iter().enumerate() {
        if !call.distinct {
            continue;
        }
        match views.iter_mut().find(|(args, _)| *args == call.args) {
            Some((_, view)) => view.calls.push(c),
            None => views.push((
                call.args.clone(),
                DistinctView {
                    calls: vec![c],
                    column: None,
                },
            )),
        }
    }
    local.views = views.iter().map(|(_, v)| v.clone()).collect();
    global.views = views
        .into_iter()
        .enumerate()
        .map(|(i, (_, v))| DistinctView {
            column: Some(next + i),
            ..v
        })
        .collect();
    (local, global)
}

/// The table a changelog leaves: each key's last +I/+U row, without the
/// keys whose last row is -D.
pub fn final_table(changelog: &[String]) -> BTreeMap<String, String> {
    let mut table = BTreeMap::new();
    for row in changelog {
        let body = &row[3..row.len() - 1];
        let (key, rest) = body.split_once(", ").unwrap();
        match &row[..2] {
            "+I" | "+U" => {
                table.insert(key.to_string(), rest.to_string());
            }
            "-D" => {
                table.remove(key);
            }
            _ => {}
        }
    }
    table
}

/// A batch of (kind, key INT, value BIGINT) rows, with the `$row_kind`
/// column when `with_kinds` (else the kinds are left out: insert-only).
pub fn kind_rows(rows: &[(i8, i32, Option<i64>)], with_kinds: bool) -> RecordBatch {
    let keys: ArrayRef = Arc::new(arrow_array::Int32Array::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    let values: ArrayRef = Arc::new(arrow_array::Int64Array::from(
        rows.iter().map(|r| r.2).collect::<Vec<_>>(),
    ));
    if with_kinds {
        batch_with_kinds(vec![keys, values], rows.iter().map(|r| r.0).collect())
    } else {
        batch(vec![keys, values])
    }
}

/// A xorshift stream, so every run sees the same rows.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
