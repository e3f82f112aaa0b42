//! DataFusion's own group accumulators, built as DataFusion's planner
//! builds them: the real MIN/MAX/SUM/COUNT/AVG, FIRST_VALUE/LAST_VALUE and
//! STRING_AGG UDAFs of `datafusion-functions-aggregate`, their
//! `GroupsAccumulator` where the UDAF supports one for the call, and
//! otherwise DataFusion's `GroupsAccumulatorAdapter` over the row
//! accumulator (as its aggregate operator falls back, e.g. for MIN/MAX over
//! BOOLEAN, and for FIRST_VALUE/LAST_VALUE without ORDER BY).
//!
//! Flink's LISTAGG(x) is run as `string_agg(x, ',')`: StringAgg reads its
//! delimiter from the call's second expression, which must be a
//! [`Literal`], at accumulator creation, and ignores the second argument
//! column after that.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, FieldRef, Schema};
use datafusion_common::{Result, ScalarValue};
use datafusion_expr_common::groups_accumulator::{EmitTo, GroupsAccumulator};
use datafusion_functions_aggregate::{average, count, first_last, min_max, string_agg, sum};
use datafusion_functions_aggregate_common::accumulator::AccumulatorArgs;
use datafusion_physical_expr::expressions::{Column, Literal};
use datafusion_physical_expr::{GroupsAccumulatorAdapter, PhysicalExpr};

use crate::general::{Function, LISTAGG_SEPARATOR};

/// Everything an `AccumulatorArgs` borrows, owned.
struct CallShape {
    udaf: Arc<datafusion_expr::AggregateUDF>,
    schema: Schema,
    exprs: Vec<Arc<dyn PhysicalExpr>>,
    fields: Vec<FieldRef>,
    return_field: FieldRef,
    distinct: bool,
    ignore_nulls: bool,
}

impl CallShape {
    fn new(function: Function, input: &DataType, distinct: bool) -> Result<CallShape> {
        let udaf = match function {
            Function::Min => min_max::min_udaf(),
            Function::Max => min_max::max_udaf(),
            Function::Sum => sum::sum_udaf(),
            Function::Count => count::count_udaf(),
            Function::Avg => average::avg_udaf(),
            Function::FirstValue => first_last::first_value_udaf(),
            Function::LastValue => first_last::last_value_udaf(),
            Function::ListAgg => string_agg::string_agg_udaf(),
        };
        let field: FieldRef = Arc::new(Field::new("v", input.clone(), true));
        let mut fields = vec![field.clone()];
        let mut exprs: Vec<Arc<dyn PhysicalExpr>> = vec![Arc::new(Column::new("v", 0))];
        if function == Function::ListAgg {
            // string_agg(v, ','): StringAgg downcasts its second expression
            // to a Literal to read the delimiter.
            let delimiter = ScalarValue::Utf8(Some(LISTAGG_SEPARATOR.to_string()));
            exprs.push(Arc::new(Literal::new(delimiter)));
            fields.push(Arc::new(Field::new("delimiter", DataType::Utf8, false)));
        }
        let return_field = udaf.return_field(&fields)?;
        Ok(CallShape {
            udaf,
            schema: Schema::new(vec![field]),
            exprs,
            fields,
            return_field,
            distinct,
            // DataFusion's first_value/last_value without ORDER BY keep the
            // first/last row seen, NULL or not (`ignore_nulls` is false
            // unless the SQL says IGNORE NULLS). Flink's FIRST_VALUE and
            // LAST_VALUE skip NULLs, so these calls are built as
            // `first_value(v) IGNORE NULLS` / `last_value(v) IGNORE NULLS`.
            // Every other function keeps DataFusion's default.
            ignore_nulls: matches!(function, Function::FirstValue | Function::LastValue),
        })
    }

    fn args(&self) -> AccumulatorArgs<'_> {
        AccumulatorArgs {
            return_field: self.return_field.clone(),
            schema: &self.schema,
            ignore_nulls: self.ignore_nulls,
            order_bys: &[],
            is_reversed: false,
            name: self.udaf.name(),
            is_distinct: self.distinct,
            exprs: &self.exprs,
            expr_fields: &self.fields,
        }
    }
}

/// The type DataFusion's planner casts an argument of `input` to before
/// `function` sees it (its type coercion): AVG over integers and FLOAT runs
/// on Float64, SUM over narrower signed integers on Int64 and over FLOAT on
/// Float64; everything else keeps its type.
pub fn coerced_type(function: Function, input: &DataType) -> DataType {
    match (function, input) {
        (Function::Avg, t) if t.is_integer() => DataType::Float64,
        (Function::Avg | Function::Sum, DataType::Float32) => DataType::Float64,
        (Function::Sum, DataType::Int8 | DataType::Int16 | DataType::Int32) => DataType::Int64,
        _ => input.clone(),
    }
}

/// The argument arrays DataFusion's aggregate operator hands `function`'s
/// accumulator: the columns cast as its planner would (see
/// [`coerced_type`]), and for LISTAGG the delimiter literal evaluated to a
/// column of the batch's length; benches do this once, outside the timing.
pub fn coerce(function: Function, columns: &[ArrayRef]) -> Result<Vec<ArrayRef>> {
    let mut arrays = columns
        .iter()
        .map(|c| {
            let target = coerced_type(function, c.data_type());
            if &target == c.data_type() {
                Ok(c.clone())
            } else {
                Ok(datafusion_common::arrow::compute::cast(c, &target)?)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    if function == Function::ListAgg {
        let rows = columns.first().map_or(0, |c| c.len());
        let delimiter = ScalarValue::Utf8(Some(LISTAGG_SEPARATOR.to_string()));
        arrays.push(delimiter.to_array_of_size(rows)?);
    }
    Ok(arrays)
}

/// DataFusion's group accumulator for `function` over a column of
/// `input` (after [`coerced_type`]), and whether it is the native `GroupsAccumulator` (`true`) or
/// the adapter over row accumulators (`false`).
pub fn groups_accumulator(
    function: Function,
    input: &DataType,
) -> Result<(Box<dyn GroupsAccumulator>, bool)> {
    accumulator_of(function, input, false)
}

/// DataFusion's group accumulator for `function(DISTINCT x)` over a column
/// of `input` (after [`coerced_type`]); the flag as for [`groups_accumulator`].
pub fn distinct_groups_accumulator(
    function: Function,
    input: &DataType,
) -> Result<(Box<dyn GroupsAccumulator>, bool)> {
    accumulator_of(function, input, true)
}

fn accumulator_of(
    function: Function,
    input: &DataType,
    distinct: bool,
) -> Result<(Box<dyn GroupsAccumulator>, bool)> {
    let shape = CallShape::new(function, &coerced_type(function, input), distinct)?;
    if shape.udaf.groups_accumulator_supported(shape.args()) {
        let accumulator = shape.udaf.create_groups_accumulator(shape.args())?;
        return Ok((accumulator, true));
    }
    let adapter = GroupsAccumulatorAdapter::new(move || shape.udaf.accumulator(shape.args()));
    Ok((Box::new(adapter), false))
}

/// Folds one batch into a DataFusion group accumulator.
pub fn update(
    accumulator: &mut dyn GroupsAccumulator,
    values: &[ArrayRef],
    group_indices: &[usize],
    total_num_groups: usize,
) -> Result<()> {
    accumulator.update_batch(values, group_indices, None, total_num_groups)
}

/// Folds the rows of one batch that pass `filter` into a DataFusion group
/// accumulator (its `opt_filter`: a FILTER clause).
pub fn update_filtered(
    accumulator: &mut dyn GroupsAccumulator,
    values: &[ArrayRef],
    group_indices: &[usize],
    filter: Option<&arrow_array::BooleanArray>,
    total_num_groups: usize,
) -> Result<()> {
    accumulator.update_batch(values, group_indices, filter, total_num_groups)
}

/// Evaluates and drains every group (DataFusion's end-of-input emission).
pub fn evaluate_all(accumulator: &mut dyn GroupsAccumulator) -> Result<ArrayRef> {
    accumulator.evaluate(EmitTo::All)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{arrow_type, Stream, FEW_KEYS};
    use crate::general::{Call, GeneralByGroupId, Scalar};
    use aggforge_runtime::types::SqlType;
    use arrow_array::Array;

    #[test]
    fn datafusion_min_max_agree_with_the_general_path() {
        for ty in [
            SqlType::of("INT"),
            SqlType::of("DATE"),
            SqlType::of("TIME(3)"),
            SqlType::of("BOOLEAN"),
            SqlType::of("BIGINT"),
        ] {
            let stream = Stream::new(&[ty], FEW_KEYS, 3, 17);
            for function in [Function::Min, Function::Max] {
                let (mut df, native) = groups_accumulator(function, &arrow_type(&ty)).unwrap();
                assert_eq!(native, ty != SqlType::of("BOOLEAN"), "{ty}");
                let mut general = GeneralByGroupId::new(vec![Call { function, arg: 0 }]);
                for (g, cols) in stream.groupings.iter().zip(&stream.columns) {
                    update(df.as_mut(), cols, &g.group_indices, FEW_KEYS).unwrap();
                    general.update(&g.group_ids, cols).unwrap();
                }
                let result = evaluate_all(df.as_mut()).unwrap();
                assert_eq!(result.len(), FEW_KEYS);
                for group in 0..FEW_KEYS {
                    let ours = Scalar::from_array(&result, group).unwrap();
                    let theirs = general.results(group as u32).unwrap().unwrap().remove(0);
                    assert_eq!(ours, theirs, "{ty} {function:?} group {group}");
                }
            }
        }
    }

    #[test]
    fn datafusion_first_last_string_agg_agree_with_the_general_path() {
        let cases = [
            (Function::FirstValue, "BIGINT", false),
            (Function::LastValue, "BIGINT", false),
            (Function::FirstValue, "VARCHAR", false),
            (Function::LastValue, "VARCHAR", false),
            (Function::ListAgg, "VARCHAR", true),
        ];
        for (function, ty, want_native) in cases {
            let ty = SqlType::of(ty);
            let stream = Stream::new(&[ty], FEW_KEYS, 3, 29);
            let (mut df, native) = groups_accumulator(function, &arrow_type(&ty)).unwrap();
            assert_eq!(native, want_native, "{ty} {function:?}");
            let mut general = GeneralByGroupId::new(vec![Call { function, arg: 0 }]);
            for (g, cols) in stream.groupings.iter().zip(&stream.columns) {
                let input = coerce(function, cols).unwrap();
                update(df.as_mut(), &input, &g.group_indices, FEW_KEYS).unwrap();
                general.update(&g.group_ids, cols).unwrap();
            }
            let result = evaluate_all(df.as_mut()).unwrap();
            // string_agg returns LargeUtf8; the general path reads Utf8.
            let result =
                datafusion_common::arrow::compute::cast(&result, &arrow_type(&ty)).unwrap();
            assert_eq!(result.len(), FEW_KEYS);
            let mut non_null = 0;
            for group in 0..FEW_KEYS {
                let theirs = Scalar::from_array(&result, group).unwrap();
                let ours = general.results(group as u32).unwrap().unwrap().remove(0);
                non_null += usize::from(!ours.is_null());
                assert_eq!(theirs, ours, "{ty} {function:?} group {group}");
            }
            assert!(non_null > FEW_KEYS / 2, "{ty} {function:?}: mostly NULL");
        }
    }

    #[test]
    fn coerced_inputs_build_for_every_numeric_type() {
        for ty in crate::data::bench_types() {
            let input = arrow_type(&ty);
            if !(input.is_numeric()) {
                continue;
            }
            for function in [Function::Sum, Function::Avg] {
                let built = groups_accumulator(function, &input);
                assert!(built.is_ok(), "{ty} {function:?}: {:?}", built.err());
            }
        }
    }

    #[test]
    fn datafusion_sum_count_avg_build_for_bigint_and_decimal() {
        for ty in [SqlType::of("BIGINT"), SqlType::of("DECIMAL(20, 3)")] {
            let stream = Stream::new(&[ty], FEW_KEYS, 1, 8);
            let (g, cols) = (&stream.groupings[0], &stream.columns[0]);
            for function in [Function::Sum, Function::Count, Function::Avg] {
                let (mut acc, native) = groups_accumulator(function, &arrow_type(&ty)).unwrap();
                assert!(native, "{ty} {function:?}");
                let input = coerce(function, cols).unwrap();
                update(acc.as_mut(), &input, &g.group_indices, FEW_KEYS).unwrap();
                let result = evaluate_all(acc.as_mut()).unwrap();
                assert_eq!(result.len(), FEW_KEYS);
                let mut general = GeneralByGroupId::new(vec![Call { function, arg: 0 }]);
                general.update(&g.group_ids, cols).unwrap();
                if function == Function::Count {
                    for group in 0..FEW_KEYS {
                        let ours = Scalar::from_array(&result, group).unwrap();
                        let theirs = general.results(group as u32).unwrap().unwrap().remove(0);
                        assert_eq!(ours, theirs, "{ty} COUNT group {group}");
                    }
                }
            }
        }
    }
}
