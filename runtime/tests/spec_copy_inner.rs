//! The inner half of `spec_copy.rs`: run by that test in a nested cargo
//! build whose runtime was compiled from an edited copy of `specs/`
//! (`AGGFORGE_SPECS_DIR`), where the copy adds the family
//! `INTERVAL_YEAR_MONTH`, its type row `INTERVAL_YM` (Int32 layout) and the
//! row to the insert-only MIN/MAX and COUNT entries. It checks that the new
//! specialization is admitted and that MIN, MAX and COUNT over it compute
//! what a plain fold over the input rows computes. In the normal build the
//! row does not exist, so this test is ignored there and fails if run
//! without the override.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::registry;
use aggforge_runtime::types::{InputMode, Phase, RowKind, SqlType};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, Int32Array, RecordBatch};
use arrow_schema::DataType;
use common::*;

/// The spec-directory override `spec_copy.rs` builds this test with.
const SPECS_DIR_VAR: &str = "AGGFORGE_SPECS_DIR";

/// The type row the copied specs add.
const ROW: &str = "INTERVAL_YM";

/// Per key: MIN, MAX, COUNT of the value column.
type Table = BTreeMap<i32, (Option<i32>, Option<i32>, i64)>;

#[test]
#[ignore = "run by spec_copy::new_type_row_is_a_spec_edit against a copied spec directory"]
fn interval_year_month_from_copied_specs() {
    let dir = std::env::var(SPECS_DIR_VAR).unwrap_or_default();
    assert!(
        !dir.is_empty(),
        "{SPECS_DIR_VAR} is not set: this test only means something in the nested build \
         runtime/tests/spec_copy.rs starts (cargo test -p aggforge-runtime --test integration spec_copy::)"
    );

    // The family parses every spelling, parameters ignored, and maps to the
    // new row on the existing Int32 layout.
    let ty: SqlType = "INTERVAL YEAR(2) TO MONTH".parse().unwrap_or_else(|e| {
        panic!("the runtime was not built from the copied specs in {dir}: {e}")
    });
    assert_eq!(ty.family(), "INTERVAL_YEAR_MONTH");
    assert_eq!(registry::type_row_of(&ty), Some(ROW));
    assert_eq!(ty.data_type(), Some(DataType::Int32));
    for spelling in [
        "INTERVAL YEAR",
        "INTERVAL MONTH",
        "interval year(4) to month",
    ] {
        assert_eq!(SqlType::of(spelling), ty, "{spelling}");
    }
    assert_eq!(ty.to_string().parse::<SqlType>().unwrap(), ty);
    let json = interval_plan(ty, Emission::Immediate).to_json();
    assert_eq!(
        AggPlan::from_json(&json).unwrap(),
        interval_plan(ty, Emission::Immediate)
    );

    // Admitted in every phase the entries list; nothing else gains the row.
    for function in ["MIN", "MAX", "COUNT"] {
        for phase in Phase::ALL {
            let admission =
                registry::lookup(function, Some(&ty), phase, InputMode::InsertOnly, false)
                    .unwrap_or_else(|e| panic!("{function} {}: {e}", phase.as_str()));
            assert_eq!(admission.type_row, Some(ROW), "{}", admission.name);
        }
    }
    let reason = registry::lookup(
        "MIN",
        Some(&ty),
        Phase::Single,
        InputMode::Retracting,
        false,
    )
    .unwrap_err()
    .reason;
    assert!(reason.contains("no retracting specialization"), "{reason}");
    assert!(registry::lookup(
        "SUM",
        Some(&ty),
        Phase::Single,
        InputMode::InsertOnly,
        false
    )
    .is_err());

    let input = batches();
    let want = fold(&input);
    assert!(want
        .values()
        .any(|(min, _, count)| min.is_none() && *count == 0));
    for emission in [Emission::Immediate, Emission::MiniBatch] {
        let mut op = GroupAggOperator::new(interval_plan(ty, emission)).unwrap();
        assert_eq!(
            op.specializations(),
            [
                format!("MIN<{ROW}>/insert_only"),
                format!("MAX<{ROW}>/insert_only"),
                format!("COUNT<{ROW}>/insert_only"),
            ],
        );
        let mut changelog = Vec::new();
        for (i, b) in input.iter().enumerate() {
            changelog.extend(op.process(b).unwrap());
            if emission == Emission::MiniBatch && i % 2 == 1 {
                changelog.extend(op.flush().unwrap());
            }
        }
        changelog.extend(op.flush().unwrap());
        assert_eq!(final_table(&changelog), want, "{}", emission.as_str());
    }
}

/// `SELECT k, MIN(v), MAX(v), COUNT(v) ... GROUP BY k`, `v` of type `ty`.
fn interval_plan(ty: SqlType, emission: Emission) -> AggPlan {
    plan(
        SqlType::of("INT"),
        vec![
            call("MIN", Some((1, ty))),
            call("MAX", Some((1, ty))),
            call("COUNT", Some((1, ty))),
        ],
        emission,
    )
}

/// Four batches of 250 rows over 40 keys: about one value in six NULL, key
/// 39 only NULLs, values over the whole i32 range including its ends.
fn batches() -> Vec<RecordBatch> {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    (0..4)
        .map(|_| {
            let mut keys = Vec::new();
            let mut values = Vec::new();
            for _ in 0..250 {
                let key = (next() % 40) as i32;
                let pick = next();
                let value = match pick % 12 {
                    _ if key == 39 => None,
                    0 | 1 => None,
                    2 => Some(if pick % 24 < 12 { i32::MIN } else { i32::MAX }),
                    3..=6 => Some((next() % 2_000) as i32 - 1_000),
                    _ => Some(next() as i32),
                };
                keys.push(key);
                values.push(value);
            }
            batch(vec![
                Arc::new(Int32Array::from(keys)) as ArrayRef,
                Arc::new(Int32Array::from(values)) as ArrayRef,
            ])
        })
        .collect()
}

/// The expected result: a fold over the input rows.
fn fold(input: &[RecordBatch]) -> Table {
    let mut table = Table::new();
    for b in input {
        let keys = b.column(0).as_primitive::<Int32Type>();
        let values = b.column(1).as_primitive::<Int32Type>();
        for row in 0..b.num_rows() {
            let entry = table.entry(keys.value(row)).or_insert((None, None, 0));
            if values.is_valid(row) {
                let v = values.value(row);
                entry.0 = Some(entry.0.map_or(v, |m| m.min(v)));
                entry.1 = Some(entry.1.map_or(v, |m| m.max(v)));
                entry.2 += 1;
            }
        }
    }
    table
}

/// The table a changelog leaves: +I/+U set a key's row, -D removes it.
fn final_table(changelog: &[RecordBatch]) -> Table {
    let mut table = Table::new();
    for b in changelog {
        let keys = b.column(0).as_primitive::<Int32Type>();
        let min = b.column(1).as_primitive::<Int32Type>();
        let max = b.column(2).as_primitive::<Int32Type>();
        let count = b.column(3).as_primitive::<Int64Type>();
        let kinds = b.column(4).as_primitive::<Int8Type>();
        let opt = |a: &arrow_array::Int32Array, r: usize| a.is_valid(r).then(|| a.value(r));
        for r in 0..b.num_rows() {
            let key = keys.value(r);
            match RowKind::from_i8(kinds.value(r)).unwrap() {
                RowKind::Insert | RowKind::UpdateAfter => {
                    table.insert(key, (opt(min, r), opt(max, r), count.value(r)));
                }
                RowKind::Delete => {
                    table.remove(&key);
                }
                RowKind::UpdateBefore => {}
            }
        }
    }
    table
}
