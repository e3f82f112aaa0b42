//! The fused JIT loop against the static kernels: random plans (call
//! lists over every fixed-width type, with string and DECIMAL(38) calls
//! mixed in that stay static, shared argument and FILTER columns), random
//! rows (NULLs, NaN, -0.0, integer extremes, NULL filters; batches over
//! several 64-row chunks, sliced so bitmaps start mid-byte), random bundle
//! splits, in the local phase and the mini-batch single phase, over
//! insert-only input and over retracting input (random row kinds; calls
//! Flink planned without retraction mixed in). The output with `jit = on`
//! must be the output with `jit = off`, row for row, and the plan must
//! really have been fused. The static kernels themselves are checked
//! against the reference model (`reference_model.rs`).

use std::sync::Arc;

use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{arrow_type, AggCall, Emission};
use aggforge_runtime::types::{InputMode, JitMode, Phase, SqlType};
use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int16Array,
    Int32Array, Int64Array, Int8Array, RecordBatch, StringArray,
};
use proptest::prelude::*;

use crate::common::{batch, batch_with_kinds, opt_rows};

/// Argument types; each has its own input column (1 + index).
const TYPES: [&str; 10] = [
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "DATE",
    "DECIMAL(10, 2)",
    "DECIMAL(30, 2)",
    "VARCHAR",
];
/// Whether `TYPES[i]` is a number SUM and AVG take.
const NUMERIC: [bool; 10] = [true, true, true, true, true, true, false, true, true, false];
const FUNCTIONS: [&str; 7] = ["MIN", "MAX", "SUM", "SUM0", "COUNT", "COUNT_STAR", "AVG"];
const FILTERS: usize = 2;
const KEYS: i32 = 6;

#[derive(Debug, Clone)]
struct CallSpec {
    function: &'static str,
    ty: usize,
    filter: Option<usize>,
    /// Over retracting input: whether Flink planned the call with
    /// retraction (else it skips -U/-D rows).
    retracts: bool,
}

/// One input row: key, one value per type column, the FILTER columns, the
/// row kind (read over retracting input).
type Row = (i32, Vec<Option<i64>>, Vec<Option<bool>>, i8);

fn call_spec() -> impl Strategy<Value = CallSpec> {
    (
        0..FUNCTIONS.len(),
        0..TYPES.len(),
        prop::option::of(0..FILTERS),
        prop::bool::weighted(0.8),
    )
        .prop_map(|(f, ty, filter, retracts)| {
            let function = match FUNCTIONS[f] {
                "SUM" | "SUM0" | "AVG" if !NUMERIC[ty] => "MIN",
                other => other,
            };
            CallSpec {
                function,
                ty,
                filter,
                retracts,
            }
        })
}

fn value() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        1 => Just(None),
        1 => prop::sample::select(vec![0, 1, -1, 7, 8, 9, i64::MIN, i64::MAX, 127, -128, 32767]).prop_map(Some),
        3 => (-50i64..50).prop_map(Some),
        1 => any::<i64>().prop_map(Some),
    ]
}

fn row() -> impl Strategy<Value = Row> {
    (
        0..KEYS,
        prop::collection::vec(value(), TYPES.len()),
        prop::collection::vec(prop::option::of(any::<bool>()), FILTERS),
        prop_oneof![3 => Just(0i8), 1 => Just(1i8), 1 => Just(2i8), 1 => Just(3i8)],
    )
}

/// The value of type `TYPES[ty]` drawn from `v`: wrapped to the integer
/// width; for floats 7 is NaN, 8 is -0.0 and 9 infinity; DECIMAL(10, 2)
/// kept within its ten digits.
fn column(ty: usize, rows: &[Row]) -> ArrayRef {
    let vals = rows.iter().map(|r| r.1[ty]);
    let float = |v: i64| match v {
        7 => f64::NAN,
        8 => -0.0,
        9 => f64::INFINITY,
        v => v as f64 / 4.0,
    };
    match TYPES[ty] {
        "TINYINT" => Arc::new(Int8Array::from_iter(vals.map(|v| v.map(|v| v as i8)))),
        "SMALLINT" => Arc::new(Int16Array::from_iter(vals.map(|v| v.map(|v| v as i16)))),
        "INT" => Arc::new(Int32Array::from_iter(vals.map(|v| v.map(|v| v as i32)))),
        "BIGINT" => Arc::new(Int64Array::from_iter(vals)),
        "FLOAT" => Arc::new(Float32Array::from_iter(
            vals.map(|v| v.map(|v| float(v) as f32)),
        )),
        "DOUBLE" => Arc::new(Float64Array::from_iter(vals.map(|v| v.map(float)))),
        "DATE" => Arc::new(Date32Array::from_iter(
            vals.map(|v| v.map(|v| (v % 100_000) as i32)),
        )),
        "DECIMAL(10, 2)" => Arc::new(
            Decimal128Array::from_iter(vals.map(|v| v.map(|v| i128::from(v % 1_000_000_000))))
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ),
        "DECIMAL(30, 2)" => Arc::new(
            Decimal128Array::from_iter(vals.map(|v| v.map(i128::from)))
                .with_precision_and_scale(30, 2)
                .unwrap(),
        ),
        _ => Arc::new(StringArray::from_iter(
            vals.map(|v| v.map(|v| format!("s{v}"))),
        )),
    }
}

/// The batch of `rows`, with their row kinds over retracting input.
fn input(rows: &[Row], retracting: bool) -> RecordBatch {
    let mut columns: Vec<ArrayRef> = vec![Arc::new(Int32Array::from_iter_values(
        rows.iter().map(|r| r.0),
    ))];
    columns.extend((0..TYPES.len()).map(|ty| column(ty, rows)));
    for f in 0..FILTERS {
        columns.push(Arc::new(BooleanArray::from_iter(
            rows.iter().map(|r| r.2[f]),
        )));
    }
    match retracting {
        true => batch_with_kinds(columns, rows.iter().map(|r| r.3).collect()),
        false => batch(columns),
    }
}

fn sql(ty: usize) -> SqlType {
    TYPES[ty].parse().unwrap()
}

fn plan_call(spec: &CallSpec) -> AggCall {
    let arg = (spec.function != "COUNT_STAR").then(|| (1 + spec.ty, sql(spec.ty)));
    let mut call = crate::common::call(spec.function, arg);
    call.filter = spec.filter.map(|f| 1 + TYPES.len() + f);
    call.retracts = spec.retracts;
    call
}

/// Whether the JIT has a lowering for the call (fixed-width carriers the
/// Arrow column holds as such: not DECIMAL, not strings; any COUNT), with
/// a retraction over retracting input (not MIN/MAX's multisets).
fn fusable(spec: &CallSpec, retracting: bool) -> bool {
    let fixed = matches!(spec.function, "COUNT" | "COUNT_STAR")
        || !TYPES[spec.ty].starts_with("DECIMAL") && TYPES[spec.ty] != "VARCHAR";
    let extreme = matches!(spec.function, "MIN" | "MAX");
    fixed && !(retracting && spec.retracts && extreme)
}

/// The local phase over insert-only input.
const LOCAL: (Phase, InputMode) = (Phase::Local, InputMode::InsertOnly);

fn run(
    specs: &[CallSpec],
    (phase, input): (Phase, InputMode),
    bundles: &[Vec<RecordBatch>],
    jit: JitMode,
) -> (Vec<String>, String) {
    let calls = specs.iter().map(plan_call).collect();
    let mut plan = crate::common::plan("INT".parse().unwrap(), calls, Emission::MiniBatch);
    plan.phase = phase;
    plan.input = input;
    plan.jit = jit;
    let mut op = GroupAggOperator::new(plan).unwrap();
    let mut out = Vec::new();
    for bundle in bundles {
        for b in bundle {
            assert!(op.process(b).unwrap().is_none());
        }
        out.extend(opt_rows(op.flush().unwrap()));
    }
    (out, op.jit_status().to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn fused_loop_matches_static_kernels(
        specs in prop::collection::vec(call_spec(), 1..9),
        batches in prop::collection::vec(prop::collection::vec(row(), 0..160), 1..5),
        offset in 0usize..20,
        split in 0usize..5,
        local in any::<bool>(),
        retracting in any::<bool>(),
    ) {
        // Batches past 64 rows take several of the loop's 64-row chunks;
        // a slice (non-zero offset) makes its bitmaps start mid-byte.
        let batches: Vec<RecordBatch> = batches
            .iter()
            .map(|rows| {
                let batch = input(rows, retracting);
                let from = offset.min(batch.num_rows());
                batch.slice(from, batch.num_rows() - from)
            })
            .collect();
        let split = split.min(batches.len());
        let bundles = vec![batches[..split].to_vec(), batches[split..].to_vec()];
        let phase = if local { Phase::Local } else { Phase::Single };
        let input = if retracting { InputMode::Retracting } else { InputMode::InsertOnly };
        let (fused, status) = run(&specs, (phase, input), &bundles, JitMode::On);
        let (expected, static_status) = run(&specs, (phase, input), &bundles, JitMode::Off);
        prop_assert_eq!(fused, expected, "{}", status);
        prop_assert!(static_status.starts_with("static:"), "{}", static_status);
        // Over retracting input the hidden record-counting COUNT(*) fuses.
        if retracting || specs.iter().any(|s| fusable(s, retracting)) {
            prop_assert!(status.starts_with("fused"), "{}", status);
        }
    }
}

/// The arrow types the test builds are the plan's: a DECIMAL(10, 2) column
/// is Decimal128, which the loop refuses (16-byte values, 8-byte carrier).
#[test]
fn decimal_columns_are_left_to_the_static_kernels() {
    assert_eq!(
        arrow_type(&sql(7)),
        arrow_schema::DataType::Decimal128(10, 2)
    );
    let min = CallSpec {
        function: "MIN",
        ty: 7,
        filter: None,
        retracts: true,
    };
    let specs = [min.clone(), min];
    let (_, status) = run(&specs, LOCAL, &[], JitMode::On);
    assert_eq!(status, "static: no call has a fixed-width lowering");
}

/// `auto` leaves a single call on its static kernel and fuses two.
#[test]
fn auto_fuses_from_two_calls() {
    let min = CallSpec {
        function: "MIN",
        ty: 2,
        filter: None,
        retracts: true,
    };
    let (_, one) = run(std::slice::from_ref(&min), LOCAL, &[], JitMode::Auto);
    assert!(one.starts_with("static: auto"), "{one}");
    let max = CallSpec {
        function: "MAX",
        ..min.clone()
    };
    let (_, two) = run(&[min, max], LOCAL, &[], JitMode::Auto);
    assert!(two.starts_with("fused 2 of 2 calls"), "{two}");
}

/// `auto` runs the fused loop while the fused state is small (it loses
/// once the state outgrows the cache) and `on` always does.
#[test]
fn auto_leaves_large_state_to_the_static_kernels() {
    use aggforge_runtime::jit::fused::AUTO_MAX_STATE_BYTES;
    use aggforge_runtime::jit::Fused;
    use aggforge_runtime::registry;
    let int = sql(2);
    let calls: Vec<AggCall> = ["MIN", "MAX"]
        .iter()
        .map(|f| crate::common::call(f, Some((1, int))))
        .collect();
    let accs: Vec<_> = calls
        .iter()
        .map(|c| {
            registry::lookup(
                &c.function,
                Some(&int),
                Phase::Local,
                InputMode::InsertOnly,
                false,
            )
            .unwrap()
            .create_call(&c.arg_types, Phase::Local)
            .unwrap()
        })
        .collect();
    let types = vec![vec![arrow_type(&int)]; 2];
    // MIN and MAX over INT: a value and a validity byte each, 10 bytes a group.
    let per_group = 10;
    let auto = Fused::plan(JitMode::Auto, &calls, &accs, &types, false)
        .fused
        .unwrap();
    assert!(auto.takes(AUTO_MAX_STATE_BYTES / per_group));
    assert!(!auto.takes(AUTO_MAX_STATE_BYTES / per_group + 1));
    let on = Fused::plan(JitMode::On, &calls, &accs, &types, false)
        .fused
        .unwrap();
    assert!(on.takes(1 << 30));
}
