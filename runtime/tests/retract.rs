//! Retracting input (-U/-D rows): expected changelogs derived from Flink
//! 2.2's GroupAggFunction, MiniBatchGroupAggFunction and the two-phase
//! functions with their RecordCounter (COUNT(*), or the one the planner
//! inserts), leading-retraction dropping, -D when the record count reaches
//! zero, and MiniBatchGroupAggFunction's early `return`.

use std::sync::Arc;

use crate::common::*;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggCall, AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};

const I: i8 = 0;
const UB: i8 = 1;
const UA: i8 = 2;
const D: i8 = 3;

/// (kind, key INT, value BIGINT) rows.
fn rows_of(rows: &[(i8, i32, Option<i64>)]) -> RecordBatch {
    kind_rows(rows, true)
}

fn retracting(calls: Vec<AggCall>, emission: Emission) -> AggPlan {
    let mut p = plan(SqlType::of("INT"), calls, emission);
    p.input = InputMode::Retracting;
    p
}

fn sum_avg(emission: Emission) -> AggPlan {
    retracting(
        vec![
            call("SUM", Some((1, SqlType::of("BIGINT")))),
            call("AVG", Some((1, SqlType::of("BIGINT")))),
        ],
        emission,
    )
}

#[test]
fn immediate_counts_records_and_deletes_at_zero() {
    let mut op = GroupAggOperator::new(sum_avg(Emission::Immediate)).unwrap();
    assert_eq!(
        op.specializations(),
        ["SUM<BIGINT>/retracting", "AVG<BIGINT>/retracting"]
    );
    let out = run_immediate(
        &mut op,
        &[
            rows_of(&[(I, 1, Some(5)), (I, 1, Some(3)), (UB, 1, Some(5))]),
            rows_of(&[
                (D, 2, Some(7)), // no state for key 2: dropped
                (UA, 1, None),   // a NULL value still counts as a record
                (D, 1, Some(3)),
                (D, 1, None), // the record count reaches zero: -D
                (I, 1, Some(4)),
                (UB, 2, Some(1)),
                (I, 2, Some(1)),
            ]),
        ],
    );
    assert_eq!(
        out,
        strs(&[
            "+I[1, 5, 5]",
            "-U[1, 5, 5]",
            "+U[1, 8, 4]",
            "-U[1, 8, 4]",
            "+U[1, 3, 3]",
            // (+U 1 NULL): SUM and AVG unchanged, suppressed
            "-U[1, 3, 3]",
            "+U[1, NULL, NULL]",
            "-D[1, NULL, NULL]",
            "+I[1, 4, 4]",
            "+I[2, 1, 1]",
        ])
    );
}

#[test]
fn a_count_star_call_is_the_record_counter() {
    let p = retracting(
        vec![
            call("COUNT_STAR", None),
            call("SUM0", Some((1, SqlType::of("BIGINT")))),
        ],
        Emission::Immediate,
    );
    let mut op = GroupAggOperator::new(p).unwrap();
    assert_eq!(op.output_schema().fields().len(), 4);
    let out = run_immediate(
        &mut op,
        &[rows_of(&[
            (I, 7, Some(2)),
            (UB, 7, Some(2)),
            (UA, 7, Some(9)),
            (D, 7, Some(9)),
        ])],
    );
    // Each retraction empties the group (-D); the next row starts it over.
    assert_eq!(
        out,
        strs(&["+I[7, 1, 2]", "-D[7, 1, 2]", "+I[7, 1, 9]", "-D[7, 1, 9]"])
    );
}

#[test]
fn batch_boundaries_do_not_change_the_changelog() {
    // Rows that empty and refill groups, cut into batches of every size.
    let all = [
        (I, 1, Some(5)),
        (I, 2, Some(1)),
        (UB, 1, Some(5)),
        (UA, 1, Some(6)),
        (D, 2, Some(1)),
        (D, 3, Some(1)),
        (I, 2, Some(8)),
        (D, 1, Some(6)),
        (I, 1, None),
        (UB, 2, Some(8)),
        (UA, 2, Some(-8)),
    ];
    let mut whole = GroupAggOperator::new(sum_avg(Emission::Immediate)).unwrap();
    let expected = run_immediate(&mut whole, &[rows_of(&all)]);
    for size in 1..all.len() {
        let batches: Vec<RecordBatch> = all.chunks(size).map(rows_of).collect();
        let mut op = GroupAggOperator::new(sum_avg(Emission::Immediate)).unwrap();
        assert_eq!(
            run_immediate(&mut op, &batches),
            expected,
            "batches of {size}"
        );
    }
    assert_eq!(expected.iter().filter(|r| r.starts_with("-D")).count(), 4);
    assert_eq!(expected.iter().filter(|r| r.starts_with("+I")).count(), 6);
}

#[test]
fn mini_batch_drops_leading_retractions_and_deletes_at_zero() {
    let mut op = GroupAggOperator::new(sum_avg(Emission::MiniBatch)).unwrap();
    let out = run_bundles(
        &mut op,
        &[
            vec![rows_of(&[(I, 1, Some(5)), (I, 1, Some(3))])],
            // key 1: count 2 -> 0 -> 1 inside the bundle: one +U, no -D.
            vec![rows_of(&[
                (UB, 1, Some(5)),
                (D, 1, Some(3)),
                (I, 1, Some(10)),
            ])],
            vec![rows_of(&[(D, 1, Some(10))])],
            // key 1 has no state: its leading retraction is dropped, the
            // rest is applied; +I then -U/+U are folded into one +I.
            vec![rows_of(&[
                (UB, 1, Some(4)),
                (I, 1, Some(2)),
                (D, 1, Some(2)),
                (I, 1, Some(6)),
            ])],
        ],
    );
    assert_eq!(
        out,
        strs(&[
            "+I[1, 8, 4]",
            "-U[1, 8, 4]",
            "+U[1, 10, 10]",
            "-D[1, 10, 10]",
            "+I[1, 6, 6]",
        ])
    );
}

/// The order Flink's bundle HashMap visits INT keys 1..=n (observed from
/// insert-only emission).
fn hash_map_order(n: i32) -> Vec<i32> {
    let mut op = GroupAggOperator::new(plan(
        SqlType::of("INT"),
        vec![call("COUNT_STAR", None)],
        Emission::MiniBatch,
    ))
    .unwrap();
    let keys: ArrayRef = Arc::new(Int32Array::from((1..=n).collect::<Vec<_>>()));
    let values: ArrayRef = Arc::new(Int64Array::from(vec![0i64; n as usize]));
    let out = run_bundles(&mut op, &[vec![batch(vec![keys, values])]]);
    out.iter()
        .map(|r| r[3..].split(',').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn a_key_of_only_leading_retractions_ends_the_bundle() {
    let order = hash_map_order(4);
    // The key visited second has no state and only a retraction.
    let stopper = order[1];
    let mut op = GroupAggOperator::new(sum_avg(Emission::MiniBatch)).unwrap();
    // Bundle 1: every key but the stopper gets state.
    let setup: Vec<(i8, i32, Option<i64>)> = order
        .iter()
        .filter(|&&k| k != stopper)
        .map(|&k| (I, k, Some(i64::from(k) * 10)))
        .collect();
    let first = run_bundles(&mut op, &[vec![rows_of(&setup)]]);
    assert_eq!(first.len(), 3);
    // Bundle 2: every key is touched; Flink stops at the stopper, so only
    // the first key emits and the keys after it lose their rows.
    let bundle: Vec<(i8, i32, Option<i64>)> = order
        .iter()
        .map(|&k| {
            if k == stopper {
                (D, k, Some(1))
            } else {
                (I, k, Some(1))
            }
        })
        .collect();
    let second = run_bundles(&mut op, &[vec![rows_of(&bundle)]]);
    let first_key = order[0];
    assert_eq!(
        second,
        vec![
            format!("-U[{first_key}, {}, {}]", first_key * 10, first_key * 10),
            format!(
                "+U[{first_key}, {}, {}]",
                first_key * 10 + 1,
                (first_key * 10 + 1) / 2
            ),
        ]
    );
    // Bundle 3: the later keys still hold their pre-bundle-2 state.
    let later = order[2];
    let third = run_bundles(&mut op, &[vec![rows_of(&[(I, later, Some(0))])]]);
    assert_eq!(
        third,
        vec![
            format!("-U[{later}, {}, {}]", later * 10, later * 10),
            format!("+U[{later}, {}, {}]", later * 10, later * 5),
        ]
    );
}

#[test]
fn local_and_global_count_records_across_the_exchange() {
    let (local_plan, global_plan) = two_phase_plans(&sum_avg(Emission::MiniBatch));
    let mut local = GroupAggOperator::new(local_plan).unwrap();
    // keys, SUM (sum, count), AVG (sum, count), inserted COUNT(*), kind
    assert_eq!(local.output_schema().fields().len(), 7);
    let mut global = GroupAggOperator::new(global_plan).unwrap();
    assert_eq!(global.output_schema().fields().len(), 4);
    let bundles = [
        vec![rows_of(&[
            (I, 1, Some(5)),
            (I, 2, Some(3)),
            (I, 1, Some(1)),
        ])],
        vec![rows_of(&[
            (UB, 1, Some(5)),
            (UA, 1, Some(7)),
            (D, 2, Some(3)),
        ])],
        // Key 3 only retracts. The local phase drops nothing, so its
        // partial holds record count -1; Flink's global phase merges that
        // into a fresh accumulator, finds the count non-zero and emits +I
        // of SUM = 0 - 4 and AVG = -4 / -1.
        vec![rows_of(&[
            (D, 3, Some(4)),
            (D, 1, Some(7)),
            (D, 1, Some(1)),
        ])],
    ];
    let mut out = Vec::new();
    for bundle in &bundles {
        for b in bundle {
            assert!(local.process(b).unwrap().is_none());
        }
        if let Some(partials) = local.flush().unwrap() {
            global.process(&partials).unwrap();
        }
        out.extend(opt_rows(global.flush().unwrap()));
    }
    let key = |row: &String| row[3..].split(',').next().unwrap().to_string();
    let for_key =
        |k: &str| -> Vec<String> { out.iter().filter(|r| key(r) == k).cloned().collect() };
    assert_eq!(
        for_key("1"),
        strs(&["+I[1, 6, 3]", "-U[1, 6, 3]", "+U[1, 8, 4]", "-D[1, 8, 4]"])
    );
    assert_eq!(for_key("2"), strs(&["+I[2, 3, 3]", "-D[2, 3, 3]"]));
    assert_eq!(for_key("3"), strs(&["+I[3, -4, 4]"]));
    assert_eq!(global.num_groups(), 1);
}

#[test]
fn snapshot_keeps_the_record_count() {
    let rows = [(I, 1, Some(5)), (I, 1, Some(3)), (D, 1, Some(3))];
    let mut op = GroupAggOperator::new(sum_avg(Emission::Immediate)).unwrap();
    run_immediate(&mut op, &[rows_of(&rows)]);
    let snapshot = op.snapshot().unwrap();
    let mut restored = GroupAggOperator::new(sum_avg(Emission::Immediate)).unwrap();
    restored.restore(&snapshot).unwrap();
    // One record left: its retraction deletes the group.
    let out = run_immediate(&mut restored, &[rows_of(&[(D, 1, Some(5))])]);
    assert_eq!(out, strs(&["-D[1, 5, 5]"]));
    assert_eq!(restored.num_groups(), 0);
}

#[test]
fn insert_only_plans_still_refuse_retractions() {
    let mut p = sum_avg(Emission::Immediate);
    p.input = InputMode::InsertOnly;
    let mut op = GroupAggOperator::new(p).unwrap();
    let err = op.process(&rows_of(&[(D, 1, Some(5))])).unwrap_err();
    assert!(err.to_string().contains("insert-only"), "{err}");
}

#[test]
fn min_max_over_retractions_find_the_next_extreme() {
    let p = retracting(
        vec![
            call("MIN", Some((1, SqlType::of("BIGINT")))),
            call("MAX", Some((1, SqlType::of("BIGINT")))),
        ],
        Emission::Immediate,
    );
    let mut op = GroupAggOperator::new(p).unwrap();
    assert_eq!(
        op.specializations(),
        ["MIN<BIGINT>/retracting", "MAX<BIGINT>/retracting"]
    );
    let out = run_immediate(
        &mut op,
        &[rows_of(&[
            (I, 1, Some(5)),
            (I, 1, Some(9)),
            (I, 1, Some(9)),
            (UB, 1, Some(9)), // one 9 left: MAX stays, suppressed
            (D, 1, Some(9)),  // MAX falls back to 5
            (I, 1, Some(2)),
            (D, 1, Some(2)),
            (D, 1, Some(5)), // empty: -D
        ])],
    );
    assert_eq!(
        out,
        strs(&[
            "+I[1, 5, 5]",
            "-U[1, 5, 5]",
            "+U[1, 5, 9]",
            "-U[1, 5, 9]",
            "+U[1, 5, 5]",
            "-U[1, 5, 5]",
            "+U[1, 2, 5]",
            "-U[1, 2, 5]",
            "+U[1, 5, 5]",
            "-D[1, 5, 5]",
        ])
    );
}

/// Two-phase MIN/MAX over retractions: the local phase sends Flink's
/// accumulator (extreme, mapSize, the map of counts, negative ones too)
/// and the global phase merges it as MinWithRetractAggFunction.merge does;
/// a restored global phase goes on identically.
#[test]
fn min_max_over_retractions_merge_across_the_exchange() {
    let single = retracting(
        vec![
            call("MIN", Some((1, SqlType::of("BIGINT")))),
            call("MAX", Some((1, SqlType::of("BIGINT")))),
        ],
        Emission::MiniBatch,
    );
    let (local_plan, global_plan) = two_phase_plans(&single);
    let mut local = GroupAggOperator::new(local_plan).unwrap();
    // key, MIN accumulator, MAX accumulator, inserted COUNT(*), kind
    assert_eq!(local.output_schema().fields().len(), 5);
    let mut global = GroupAggOperator::new(global_plan.clone()).unwrap();
    let bundles = [
        rows_of(&[(I, 1, Some(5)), (I, 1, Some(9)), (I, 2, Some(3))]),
        // Key 1's local accumulator holds {9: -1, 7: 1}: the global MAX
        // loses 9 and finds 7 over its map; key 2 empties and is deleted.
        rows_of(&[(UB, 1, Some(9)), (UA, 1, Some(7)), (D, 2, Some(3))]),
        // Key 3 only retracts: a fresh global accumulator keeps the count
        // -1 and no extreme, record count -1 emits +I of NULLs (Flink).
        rows_of(&[(D, 3, Some(4)), (D, 1, Some(5)), (D, 1, Some(7))]),
    ];
    let mut out = Vec::new();
    let mut snapshot = None;
    let mut partials = Vec::new();
    for (i, bundle) in bundles.iter().enumerate() {
        assert!(local.process(bundle).unwrap().is_none());
        let partial = local.flush().unwrap().unwrap();
        global.process(&partial).unwrap();
        partials.push(partial);
        out.extend(opt_rows(global.flush().unwrap()));
        if i == 1 {
            snapshot = Some(global.snapshot().unwrap());
        }
    }
    let key = |row: &String| row[3..].split(',').next().unwrap().to_string();
    let for_key =
        |k: &str| -> Vec<String> { out.iter().filter(|r| key(r) == k).cloned().collect() };
    assert_eq!(
        for_key("1"),
        strs(&["+I[1, 5, 9]", "-U[1, 5, 9]", "+U[1, 5, 7]", "-D[1, 5, 7]"])
    );
    assert_eq!(for_key("2"), strs(&["+I[2, 3, 3]", "-D[2, 3, 3]"]));
    assert_eq!(for_key("3"), strs(&["+I[3, NULL, NULL]"]));
    assert_eq!(global.num_groups(), 1);

    let mut restored = GroupAggOperator::new(global_plan).unwrap();
    restored.restore(&snapshot.unwrap()).unwrap();
    restored.process(&partials[2]).unwrap();
    let tail = opt_rows(restored.flush().unwrap());
    let mut want: Vec<String> = out[out.len() - tail.len()..].to_vec();
    let mut got = tail;
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(got.len(), 2);
}

/// A call Flink plans without retraction (a MAX over a column its planner
/// knows only grows) runs its insert-only function: -U/-D rows leave it
/// as it is, while COUNT(*) and SUM retract as usual.
#[test]
fn a_call_planned_without_retraction_skips_retractions() {
    let mut max = call("MAX", Some((1, SqlType::of("BIGINT"))));
    max.retracts = false;
    let calls = vec![
        call("COUNT_STAR", None),
        max,
        call("SUM", Some((1, SqlType::of("BIGINT")))),
    ];
    let input = [
        (I, 1, Some(5)),
        (I, 1, Some(7)),
        (UB, 1, Some(7)),
        (UA, 1, Some(6)),
    ];
    let mut op = GroupAggOperator::new(retracting(calls.clone(), Emission::Immediate)).unwrap();
    assert_eq!(
        run_immediate(&mut op, &[rows_of(&input)]),
        strs(&[
            "+I[1, 1, 5, 5]",
            "-U[1, 1, 5, 5]",
            "+U[1, 2, 7, 12]",
            "-U[1, 2, 7, 12]",
            "+U[1, 1, 7, 5]",
            "-U[1, 1, 7, 5]",
            "+U[1, 2, 7, 11]",
        ])
    );
    assert!(op.specializations()[1].contains("insert_only"));
    let mut op = GroupAggOperator::new(retracting(calls, Emission::MiniBatch)).unwrap();
    assert_eq!(
        run_bundles(&mut op, &[vec![rows_of(&input)]]),
        strs(&["+I[1, 2, 7, 11]"])
    );
}

/// Speed of MIN/MAX over retracting input where every retraction removes
/// the current MIN (round-robin updates of increasing values, as
/// `MIN(last_seen)` over per-key latest values sees them) against random
/// updates; run with `cargo test --release -p aggforge-runtime --test
/// retract -- --ignored --nocapture extreme_retraction_speed`.
#[test]
#[ignore]
fn extreme_retraction_speed() {
    for values_per_group in [1_024i64, 16_384] {
        for (label, round_robin) in [("round-robin (MIN retracted)", true), ("random", false)] {
            let p = retracting(
                vec![
                    call("MIN", Some((1, SqlType::of("BIGINT")))),
                    call("MAX", Some((1, SqlType::of("BIGINT")))),
                ],
                Emission::MiniBatch,
            );
            let mut op = GroupAggOperator::new(p).unwrap();
            let mut current: Vec<i64> = (0..values_per_group).collect();
            let inserts: Vec<(i8, i32, Option<i64>)> =
                current.iter().map(|&v| (I, 1, Some(v))).collect();
            op.process(&rows_of(&inserts)).unwrap();
            op.flush().unwrap();
            let mut seed = 0x2545_F491_4F6C_DD1Du64;
            let mut rows = 0usize;
            let start = std::time::Instant::now();
            for round in 0..64 {
                let mut batch = Vec::with_capacity(4096);
                for i in 0..2048 {
                    let slot = if round_robin {
                        (round * 2048 + i) % values_per_group as usize
                    } else {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        (seed % values_per_group as u64) as usize
                    };
                    let old = current[slot];
                    let new = old + values_per_group;
                    current[slot] = new;
                    batch.push((UB, 1, Some(old)));
                    batch.push((UA, 1, Some(new)));
                }
                rows += batch.len();
                op.process(&rows_of(&batch)).unwrap();
                op.flush().unwrap();
            }
            let secs = start.elapsed().as_secs_f64();
            println!(
                "{values_per_group} values per group, {label}: {:.2} M rows/s",
                rows as f64 / secs / 1e6
            );
        }
    }
}
