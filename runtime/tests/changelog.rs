//! Hand-written expected changelogs, derived from Flink 2.2's
//! GroupAggFunction, MiniBatchGroupAggFunction,
//! MiniBatchLocalGroupAggFunction and MiniBatchGlobalGroupAggFunction.

use std::sync::Arc;

use crate::common::*;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::SqlType;
use arrow_array::{ArrayRef, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch};

fn ints(v: &[Option<i32>]) -> ArrayRef {
    Arc::new(Int32Array::from(v.to_vec()))
}

fn longs(v: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}

/// (key INT, value BIGINT) rows.
fn kv(rows: &[(i32, Option<i64>)]) -> RecordBatch {
    batch(vec![
        ints(&rows.iter().map(|r| Some(r.0)).collect::<Vec<_>>()),
        longs(&rows.iter().map(|r| r.1).collect::<Vec<_>>()),
    ])
}

fn max_plan(emission: Emission) -> AggPlan {
    plan(
        SqlType::of("INT"),
        vec![call("MAX", Some((1, SqlType::of("BIGINT"))))],
        emission,
    )
}

#[test]
fn immediate_with_update_before() {
    let mut op = GroupAggOperator::new(max_plan(Emission::Immediate)).unwrap();
    let out = run_immediate(
        &mut op,
        &[
            kv(&[(1, Some(5)), (2, Some(3)), (1, Some(7)), (1, Some(2))]),
            kv(&[(2, Some(3)), (1, Some(9))]),
        ],
    );
    assert_eq!(
        out,
        strs(&[
            "+I[1, 5]", "+I[2, 3]", "-U[1, 5]", "+U[1, 7]", // (1, 2): MAX unchanged
            "-U[1, 7]", "+U[1, 9]",
        ])
    );
}

#[test]
fn immediate_without_update_before() {
    let mut p = max_plan(Emission::Immediate);
    p.generate_update_before = false;
    let mut op = GroupAggOperator::new(p).unwrap();
    let out = run_immediate(
        &mut op,
        &[kv(&[
            (1, Some(5)),
            (1, Some(7)),
            (1, Some(2)),
            (1, Some(8)),
        ])],
    );
    assert_eq!(out, strs(&["+I[1, 5]", "+U[1, 7]", "+U[1, 8]"]));
}

#[test]
fn unchanged_results_are_suppressed_only_without_ttl() {
    let input = [kv(&[(1, Some(5)), (1, Some(4))]), kv(&[(1, Some(5))])];
    let mut op = GroupAggOperator::new(max_plan(Emission::Immediate)).unwrap();
    assert_eq!(run_immediate(&mut op, &input), strs(&["+I[1, 5]"]));

    let mut p = max_plan(Emission::Immediate);
    p.state_ttl_ms = 60_000;
    let mut op = GroupAggOperator::new(p).unwrap();
    assert_eq!(
        run_immediate(&mut op, &input),
        strs(&["+I[1, 5]", "-U[1, 5]", "+U[1, 5]", "-U[1, 5]", "+U[1, 5]"])
    );
}

#[test]
fn null_only_groups_and_the_null_key_group() {
    let p = plan(
        SqlType::of("INT"),
        vec![
            call("MAX", Some((1, SqlType::of("BIGINT")))),
            call("COUNT", Some((1, SqlType::of("BIGINT")))),
            call("SUM", Some((1, SqlType::of("BIGINT")))),
        ],
        Emission::Immediate,
    );
    let mut op = GroupAggOperator::new(p).unwrap();
    let b = batch(vec![
        ints(&[Some(1), None, Some(1), None, Some(1)]),
        longs(&[None, Some(4), None, None, Some(6)]),
    ]);
    assert_eq!(
        run_immediate(&mut op, &[b]),
        strs(&[
            "+I[1, NULL, 0, NULL]",
            "+I[NULL, 4, 1, 4]",
            // (1, NULL) again: MAX NULL == NULL, COUNT 0, SUM NULL: unchanged.
            // (NULL, NULL): COUNT stays 1, nothing changes.
            "-U[1, NULL, 0, NULL]",
            "+U[1, 6, 1, 6]",
        ])
    );
}

#[test]
fn one_changed_aggregate_re_emits_the_whole_row() {
    let p = plan(
        SqlType::of("INT"),
        vec![
            call("MAX", Some((1, SqlType::of("BIGINT")))),
            call("SUM", Some((1, SqlType::of("BIGINT")))),
            call("COUNT_STAR", None),
        ],
        Emission::Immediate,
    );
    let mut op = GroupAggOperator::new(p).unwrap();
    let out = run_immediate(&mut op, &[kv(&[(1, Some(7)), (1, Some(2)), (1, Some(0))])]);
    assert_eq!(
        out,
        strs(&[
            "+I[1, 7, 7, 1]",
            "-U[1, 7, 7, 1]",
            "+U[1, 7, 9, 2]",
            // SUM and MAX unchanged, COUNT(*) changes.
            "-U[1, 7, 9, 2]",
            "+U[1, 7, 9, 3]",
        ])
    );
}

#[test]
fn float_nan_results_are_re_emitted_and_signed_zero_is_not() {
    // SUM(FLOAT): NaN != NaN under Java ==, so a NaN sum re-emits on every
    // row; -0.0 == 0.0, so -0.0 -> 0.0 is suppressed.
    let p = plan(
        SqlType::of("INT"),
        vec![call("SUM", Some((1, SqlType::of("FLOAT"))))],
        Emission::Immediate,
    );
    let mut op = GroupAggOperator::new(p).unwrap();
    let b = batch(vec![
        ints(&[Some(1), Some(1), Some(1), Some(2), Some(2)]),
        Arc::new(Float32Array::from(vec![1.0, f32::NAN, 2.0, -0.0, 0.0])),
    ]);
    assert_eq!(
        run_immediate(&mut op, &[b]),
        strs(&[
            "+I[1, 1.0]",
            "-U[1, 1.0]",
            "+U[1, NaN]",
            "-U[1, NaN]",
            "+U[1, NaN]",
            "+I[2, -0.0]",
        ])
    );

    // MAX(DOUBLE): NaN is never replaced (Java `>` is false), yet every row
    // re-emits because the NaN result never equals itself.
    let p = plan(
        SqlType::of("INT"),
        vec![call("MAX", Some((1, SqlType::of("DOUBLE"))))],
        Emission::Immediate,
    );
    let mut op = GroupAggOperator::new(p).unwrap();
    let b = batch(vec![
        ints(&[Some(1), Some(1), Some(2), Some(2)]),
        Arc::new(Float64Array::from(vec![f64::NAN, 5.0, 1.0, f64::NAN])),
    ]);
    assert_eq!(
        run_immediate(&mut op, &[b]),
        strs(&["+I[1, NaN]", "-U[1, NaN]", "+U[1, NaN]", "+I[2, 1.0]"])
    );
}

#[test]
fn mini_batch_emits_once_per_group_in_hash_map_order() {
    // INT keys 1,2,3,17,100,1,42,5,6,7 in one bundle: Flink 2.2 emits them
    // in java.util.HashMap order 3,100,7,2,17,5,1,42,6 (seen on Flink).
    let mut op = GroupAggOperator::new(max_plan(Emission::MiniBatch)).unwrap();
    let keys = [1, 2, 3, 17, 100, 1, 42, 5, 6, 7];
    let first: Vec<(i32, Option<i64>)> = keys[..4].iter().map(|&k| (k, Some(k as i64))).collect();
    let second: Vec<(i32, Option<i64>)> = keys[4..]
        .iter()
        .map(|&k| (k, Some(k as i64 * 10)))
        .collect();
    let out = run_bundles(&mut op, &[vec![kv(&first), kv(&second)]]);
    assert_eq!(
        out,
        strs(&[
            "+I[3, 3]",
            "+I[100, 1000]",
            "+I[7, 70]",
            "+I[2, 2]",
            "+I[17, 17]",
            "+I[5, 50]",
            "+I[1, 10]",
            "+I[42, 420]",
            "+I[6, 60]",
        ])
    );
}

#[test]
fn mini_batch_compares_against_the_result_before_the_bundle() {
    let p = plan(
        SqlType::of("INT"),
        vec![
            call("SUM", Some((1, SqlType::of("BIGINT")))),
            call("MAX", Some((1, SqlType::of("BIGINT")))),
        ],
        Emission::MiniBatch,
    );
    let mut op = GroupAggOperator::new(p.clone()).unwrap();
    let out = run_bundles(
        &mut op,
        &[
            vec![kv(&[(1, Some(10)), (2, Some(1))]), kv(&[(1, Some(2))])],
            // Key 1: +5 then -5 in one bundle: SUM and MAX end unchanged,
            // so nothing is emitted (immediate mode would emit twice).
            // Key 2: changes across two batches: one -U/+U pair.
            vec![
                kv(&[(1, Some(5)), (2, Some(4))]),
                kv(&[(1, Some(-5)), (2, Some(6))]),
            ],
            vec![],
        ],
    );
    assert_eq!(
        out,
        // INT 2 precedes INT 1 in the bundle HashMap (see the test above).
        strs(&[
            "+I[2, 1, 1]",
            "+I[1, 12, 10]",
            "-U[2, 1, 1]",
            "+U[2, 11, 6]"
        ])
    );

    // With TTL the unchanged key 1 is re-emitted.
    let mut ttl = p;
    ttl.state_ttl_ms = 1;
    ttl.generate_update_before = false;
    let mut op = GroupAggOperator::new(ttl).unwrap();
    let out = run_bundles(
        &mut op,
        &[
            vec![kv(&[(1, Some(10))])],
            vec![kv(&[(1, Some(5))]), kv(&[(1, Some(-5))])],
        ],
    );
    assert_eq!(out, strs(&["+I[1, 10, 10]", "+U[1, 10, 10]"]));
}

/// The last emitted row per key (the final result table).
#[test]
fn local_then_global_equals_single_phase() {
    let single = plan(
        SqlType::of("INT"),
        vec![
            call("SUM", Some((1, SqlType::of("BIGINT")))),
            call("MIN", Some((1, SqlType::of("BIGINT")))),
            call("MAX", Some((1, SqlType::of("BIGINT")))),
            call("COUNT", Some((1, SqlType::of("BIGINT")))),
            call("COUNT_STAR", None),
            call("AVG", Some((1, SqlType::of("BIGINT")))),
        ],
        Emission::Immediate,
    );
    let (local_plan, global_plan) = two_phase_plans(&single);
    let mut next = xorshift(0x9E37_79B9);
    let batches: Vec<RecordBatch> = (0..12)
        .map(|_| {
            let rows: Vec<(i32, Option<i64>)> = (0..300)
                .map(|_| {
                    let k = (next() % 40) as i32;
                    let v = next() % 1000;
                    (k, (!v.is_multiple_of(9)).then_some(v as i64 - 500))
                })
                .collect();
            kv(&rows)
        })
        .collect();

    let mut op = GroupAggOperator::new(single).unwrap();
    let expected = final_table(&run_immediate(&mut op, &batches));

    let mut local = GroupAggOperator::new(local_plan).unwrap();
    let mut global = GroupAggOperator::new(global_plan).unwrap();
    let mut changelog = Vec::new();
    for bundle in batches.chunks(3) {
        let mut partials = Vec::new();
        for b in bundle {
            local.process(b).unwrap();
            // Local bundles are smaller than global ones.
            partials.push(local.flush().unwrap().unwrap());
        }
        for p in &partials {
            assert!(rows(p).iter().all(|r| r.starts_with("+I")));
            global.process(p).unwrap();
        }
        changelog.extend(opt_rows(global.flush().unwrap()));
    }
    assert_eq!(final_table(&changelog), expected);
    assert_eq!(expected.len(), 40);
}

#[test]
fn global_merges_a_bundle_before_merging_into_state() {
    // Flink merges a bundle's partials per key first (localAgg.merge into a
    // fresh bundle accumulator), then merges that into the state at
    // finishBundle. FLOAT: (1e8 + 4) + 4 == 1e8 but 1e8 + (4 + 4) == 1e8 + 8.
    let single = plan(
        SqlType::of("INT"),
        vec![call("SUM", Some((1, SqlType::of("FLOAT"))))],
        Emission::MiniBatch,
    );
    let (_, global_plan) = two_phase_plans(&single);
    let mut global = GroupAggOperator::new(global_plan).unwrap();
    let partials = |v: Vec<f32>| {
        batch(vec![
            ints(&vec![Some(1); v.len()]),
            Arc::new(Float32Array::from(v)) as ArrayRef,
        ])
    };
    let out = run_bundles(
        &mut global,
        &[
            vec![partials(vec![1e8])],
            vec![partials(vec![4.0]), partials(vec![4.0])],
        ],
    );
    assert_eq!((1e8f32 + 4.0) + 4.0, 1e8f32, "the trap is real");
    let merged = 1e8f32 + (4.0 + 4.0);
    assert_ne!(merged, 1e8f32);
    assert_eq!(
        out,
        vec![
            "+I[1, 100000000.0]".to_string(),
            "-U[1, 100000000.0]".to_string(),
            format!("+U[1, {merged:?}]"),
        ]
    );
}

#[test]
fn local_emits_partials_as_inserts_and_resets() {
    let single = plan(
        SqlType::of("INT"),
        vec![
            call("AVG", Some((1, SqlType::of("BIGINT")))),
            call("MAX", Some((1, SqlType::of("BIGINT")))),
        ],
        Emission::MiniBatch,
    );
    let (local_plan, _) = two_phase_plans(&single);
    let mut local = GroupAggOperator::new(local_plan).unwrap();
    let out = run_bundles(
        &mut local,
        &[
            vec![kv(&[(1, Some(4)), (1, None)]), kv(&[(1, Some(6))])],
            vec![kv(&[(1, Some(1))])],
        ],
    );
    // AVG's partial is (sum, count); MAX's the value. Each bundle starts
    // from fresh accumulators.
    assert_eq!(out, strs(&["+I[1, 10, 2, 6]", "+I[1, 1, 1, 1]"]));
}
