//! Generated accumulators through DataFusion's `GroupsAccumulator`.

use std::sync::Arc;

use aggforge_runtime::datafusion::DataFusionAccumulator;
use aggforge_runtime::generated::{new_avg_int, new_min_int, new_sum_decimal18};
use aggforge_runtime::registry::lookup;
use aggforge_runtime::types::{InputMode, Phase, SqlType};
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, BooleanArray, Decimal128Array, Int32Array};
use datafusion_expr_common::groups_accumulator::{EmitTo, GroupsAccumulator};

fn ints(values: &[Option<i32>]) -> ArrayRef {
    Arc::new(Int32Array::from(values.to_vec()))
}

#[test]
fn min_through_groups_accumulator_with_emit_first() {
    let int: SqlType = "INT".parse().unwrap();
    let mut acc = new_min_int(Some(&int)).unwrap();
    acc.update_batch(
        &[ints(&[Some(5), Some(3), None, Some(9), Some(-1)])],
        &[0, 1, 2, 1, 3],
        None,
        4,
    )
    .unwrap();
    let filter = BooleanArray::from(vec![true, false]);
    acc.update_batch(&[ints(&[Some(1), Some(-7)])], &[0, 3], Some(&filter), 4)
        .unwrap();
    let first = acc.evaluate(EmitTo::First(2)).unwrap();
    let first = first.as_primitive::<Int32Type>();
    assert_eq!(first.values().as_ref(), &[1, 3]);
    // The remaining groups 2 and 3 shifted down to 0 and 1.
    acc.update_batch(&[ints(&[Some(4)])], &[0], None, 2)
        .unwrap();
    let rest = acc.evaluate(EmitTo::All).unwrap();
    let rest = rest.as_primitive::<Int32Type>();
    assert_eq!(rest.len(), 2);
    assert_eq!(rest.value(0), 4);
    assert_eq!(rest.value(1), -1);
    assert!(acc.size() > 0 || rest.len() == 2);
}

#[test]
fn sum_state_merge_and_convert_to_state() {
    let dec: SqlType = "DECIMAL(10, 2)".parse().unwrap();
    let values: ArrayRef = Arc::new(
        Decimal128Array::from(vec![Some(150), None, Some(250), Some(-100)])
            .with_precision_and_scale(10, 2)
            .unwrap(),
    );
    let mut local = new_sum_decimal18(Some(&dec)).unwrap();
    local
        .update_batch(std::slice::from_ref(&values), &[0, 0, 1, 1], None, 2)
        .unwrap();
    let state = local.state(EmitTo::First(1)).unwrap();
    assert_eq!(state[0].as_primitive::<Decimal128Type>().value(0), 150);
    let rest = local.state(EmitTo::All).unwrap();
    assert_eq!(rest[0].as_primitive::<Decimal128Type>().value(0), 150);

    let mut global = new_sum_decimal18(Some(&dec)).unwrap();
    global.merge_batch(&state, &[0], 1).unwrap();
    global.merge_batch(&rest, &[0], 1).unwrap();
    let out = global.evaluate(EmitTo::All).unwrap();
    assert_eq!(out.data_type(), &arrow_schema::DataType::Decimal128(38, 2));
    assert_eq!(out.as_primitive::<Decimal128Type>().value(0), 300);

    // convert_to_state: each row its own group.
    let converted = global.convert_to_state(&[values], None).unwrap();
    let converted = converted[0].as_primitive::<Decimal128Type>();
    assert_eq!(converted.len(), 4);
    assert!(converted.is_null(1));
    assert_eq!(converted.value(3), -100);
}

#[test]
fn avg_through_the_registry_adapter() {
    let int: SqlType = "INT".parse().unwrap();
    let admission = lookup(
        "AVG",
        Some(&int),
        Phase::Local,
        InputMode::InsertOnly,
        false,
    )
    .unwrap();
    let mut local = DataFusionAccumulator::new(admission, Some(int)).unwrap();
    local
        .update_batch(
            &[ints(&[Some(1), Some(2), Some(-7), None])],
            &[0, 0, 1, 1],
            None,
            2,
        )
        .unwrap();
    let state = local.state(EmitTo::All).unwrap();
    assert_eq!(
        state[1].as_primitive::<Int64Type>().values().as_ref(),
        &[2, 1]
    );

    let mut global = new_avg_int(Some(&int)).unwrap();
    global.merge_batch(&state, &[1, 0], 2).unwrap();
    global
        .update_batch(&[ints(&[Some(-4)])], &[0], None, 2)
        .unwrap();
    let out = global.evaluate(EmitTo::First(1)).unwrap();
    // group 0: (-7 + -4) / 2 = -5 (truncated toward zero)
    assert_eq!(out.as_primitive::<Int32Type>().value(0), -5);
    let out = global.evaluate(EmitTo::All).unwrap();
    // group 1 (shifted to 0): 3 / 2 = 1
    assert_eq!(out.as_primitive::<Int32Type>().values().as_ref(), &[1]);
}
