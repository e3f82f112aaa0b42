//! Operator behaviour beyond the changelog: the memory budget, bad input,
//! snapshot/restore and restoring a subset of key groups (rescaling).

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::common::*;
use aggforge_runtime::error::AggError;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, DistinctView, Emission};
use aggforge_runtime::types::{InputMode, Phase, SqlType};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};

fn string() -> SqlType {
    SqlType::of("STRING")
}

fn kv(keys: Vec<i32>, values: Vec<i64>) -> RecordBatch {
    batch(vec![
        Arc::new(Int32Array::from(keys)) as ArrayRef,
        Arc::new(Int64Array::from(values)) as ArrayRef,
    ])
}

fn sum_max(emission: Emission) -> AggPlan {
    plan(
        SqlType::of("INT"),
        vec![
            call("SUM", Some((1, SqlType::of("BIGINT")))),
            call("MAX", Some((1, SqlType::of("BIGINT")))),
        ],
        emission,
    )
}

fn batches() -> Vec<RecordBatch> {
    (0..8)
        .map(|b| {
            let keys: Vec<i32> = (0..200).map(|i| (i * 7 + b * 13) % 150).collect();
            let values: Vec<i64> = (0..200).map(|i| (i as i64 * 31 + b as i64) % 97).collect();
            kv(keys, values)
        })
        .collect()
}

#[test]
fn memory_budget_error_leaves_state_intact() {
    for emission in [Emission::Immediate, Emission::MiniBatch] {
        let mut p = sum_max(emission);
        p.memory_budget_bytes = 6_000;
        let mut op = GroupAggOperator::new(p.clone()).unwrap();
        let mut reference = GroupAggOperator::new(sum_max(emission)).unwrap();
        let small = kv(vec![1, 2, 1], vec![5, 6, 7]);
        let mut got = opt_rows(op.process(&small).unwrap());
        let mut want = opt_rows(reference.process(&small).unwrap());
        got.extend(opt_rows(op.flush().unwrap()));
        want.extend(opt_rows(reference.flush().unwrap()));
        let used = op.memory_used();
        let groups = op.num_groups();

        // 5000 new keys cannot fit in 6000 bytes.
        let big = kv((100..5100).collect(), vec![1; 5000]);
        let err = op.process(&big).unwrap_err();
        assert!(matches!(err, AggError::MemoryBudget { .. }), "{err}");
        assert_eq!(op.num_groups(), groups);
        assert!(
            op.memory_used() <= used + 64 * 1024,
            "table capacity may stay"
        );
        assert_eq!(op.flush().unwrap().map(|b| b.num_rows()).unwrap_or(0), 0);

        // The operator goes on exactly as if the failed batch never came.
        let next = kv(vec![1, 3], vec![9, 1]);
        got.extend(opt_rows(op.process(&next).unwrap()));
        want.extend(opt_rows(reference.process(&next).unwrap()));
        got.extend(opt_rows(op.flush().unwrap()));
        want.extend(opt_rows(reference.flush().unwrap()));
        assert_eq!(got, want);
        assert_eq!(op.snapshot().unwrap(), reference.snapshot().unwrap());
    }
}

#[test]
fn distinct_views_are_charged_and_a_refused_batch_changes_nothing() {
    let mut p = sum_max(Emission::Immediate);
    p.calls[0].distinct = true;
    p.memory_budget_bytes = 60_000;
    let mut op = GroupAggOperator::new(p.clone()).unwrap();
    p.memory_budget_bytes = 1 << 30;
    let mut reference = GroupAggOperator::new(p).unwrap();
    let first = kv(vec![1; 100], (0..100).collect());
    assert_eq!(
        opt_rows(op.process(&first).unwrap()),
        opt_rows(reference.process(&first).unwrap())
    );
    let used = op.memory_used();
    assert!(
        used > 100 * 16,
        "the view's 100 values are charged ({used} bytes)"
    );
    // One group, 20,000 new values: their view entries do not fit.
    let big = kv(vec![1; 20_000], (1000..21_000).collect());
    let err = op.process(&big).unwrap_err();
    assert!(matches!(err, AggError::MemoryBudget { .. }), "{err}");
    assert_eq!(op.memory_used(), used);
    assert_eq!(op.snapshot().unwrap(), reference.snapshot().unwrap());
    // It goes on as if the refused batch never came: 5 is seen, 500 new.
    let next = kv(vec![1, 1], vec![5, 500]);
    assert_eq!(
        opt_rows(op.process(&next).unwrap()),
        opt_rows(reference.process(&next).unwrap())
    );
}

/// A local phase keeps its MIN/MAX multisets' allocations from one bundle
/// to the next: a group that reuses one must fold exactly like a new one
/// (a retraction of an unseen value, the extreme retracted, more groups
/// than before), and the kept allocations count as memory in use.
#[test]
fn local_multisets_reused_across_bundles_fold_like_new_ones() {
    let mut single = plan(
        SqlType::of("INT"),
        vec![
            call("MAX", Some((1, SqlType::of("BIGINT")))),
            call("MIN", Some((1, SqlType::of("BIGINT")))),
        ],
        Emission::MiniBatch,
    );
    single.input = InputMode::Retracting;
    let (local_plan, global_plan) = two_phase_plans(&single);
    let bundle = |local: &mut GroupAggOperator, rows: &[(i8, i32, Option<i64>)]| {
        assert!(local.process(&kind_rows(rows, true)).unwrap().is_none());
        local.flush().unwrap().unwrap()
    };
    let first: Vec<(i8, i32, Option<i64>)> = (0..100i32)
        .map(|v| (0, 1 + v % 2, Some(i64::from(v))))
        .collect();
    let second = [
        (0, 7, Some(5)),
        (3, 7, Some(40)),
        (0, 7, Some(9)),
        (1, 7, Some(9)),
        (0, 8, Some(-3)),
        (0, 9, None),
        (0, 8, Some(12)),
        (3, 8, Some(12)),
        (0, 1, Some(2)),
    ];
    let mut reused = GroupAggOperator::new(local_plan.clone()).unwrap();
    bundle(&mut reused, &first);
    let from_reused = bundle(&mut reused, &second);
    let mut fresh = GroupAggOperator::new(local_plan).unwrap();
    let from_fresh = bundle(&mut fresh, &second);
    assert!(
        reused.memory_used() > fresh.memory_used(),
        "the first bundle's multisets are kept and counted ({} <= {})",
        reused.memory_used(),
        fresh.memory_used()
    );
    // The partials' maps list entries in hash order, which depends on a
    // map's capacity: compare their contents, and what a global phase
    // makes of them.
    assert_eq!(
        rows_sorted_lists(&from_reused),
        rows_sorted_lists(&from_fresh)
    );
    assert!(
        rows_sorted_lists(&from_fresh)[0].contains("{40, -1}"),
        "the partials are spelled out: {:?}",
        rows_sorted_lists(&from_fresh)
    );
    let mut global_reused = GroupAggOperator::new(global_plan.clone()).unwrap();
    let mut global_fresh = GroupAggOperator::new(global_plan).unwrap();
    global_reused.process(&from_reused).unwrap();
    global_fresh.process(&from_fresh).unwrap();
    assert_eq!(
        opt_rows(global_reused.flush().unwrap()),
        opt_rows(global_fresh.flush().unwrap())
    );
    assert_eq!(
        global_reused.snapshot().unwrap(),
        global_fresh.snapshot().unwrap()
    );
}

/// A global phase merging MIN/MAX accumulators over retractions reserves
/// for every map entry of the partials: a partial whose map does not fit is
/// refused and changes nothing.
#[test]
fn merged_multiset_entries_are_charged() {
    let mut single = plan(
        SqlType::of("INT"),
        vec![call("MAX", Some((1, SqlType::of("BIGINT"))))],
        Emission::MiniBatch,
    );
    single.input = InputMode::Retracting;
    let (local_plan, mut global_plan) = two_phase_plans(&single);
    let mut local = GroupAggOperator::new(local_plan).unwrap();
    let reference_plan = global_plan.clone();
    global_plan.memory_budget_bytes = 60_000;
    let mut global = GroupAggOperator::new(global_plan).unwrap();
    let mut reference = GroupAggOperator::new(reference_plan).unwrap();
    let partial = |local: &mut GroupAggOperator, values: std::ops::Range<i64>| {
        let rows: Vec<(i8, i32, Option<i64>)> = values.map(|v| (0, 1, Some(v))).collect();
        assert!(local.process(&kind_rows(&rows, true)).unwrap().is_none());
        local.flush().unwrap().unwrap()
    };
    let small = partial(&mut local, 0..100);
    global.process(&small).unwrap();
    reference.process(&small).unwrap();
    assert_eq!(
        opt_rows(global.flush().unwrap()),
        opt_rows(reference.flush().unwrap())
    );
    let used = global.memory_used();
    // One key, 20,000 new values in one partial's map: they do not fit.
    let big = partial(&mut local, 1000..21_000);
    let err = global.process(&big).unwrap_err();
    assert!(matches!(err, AggError::MemoryBudget { .. }), "{err}");
    // Refused, the operator frees the multisets the last bundle's reset
    // kept for reuse before it gives up: less in use, never more.
    assert!(
        global.memory_used() < used,
        "{} >= {used}",
        global.memory_used()
    );
    assert_eq!(global.snapshot().unwrap(), reference.snapshot().unwrap());
    let next = partial(&mut local, 200..201);
    global.process(&next).unwrap();
    reference.process(&next).unwrap();
    assert_eq!(
        opt_rows(global.flush().unwrap()),
        opt_rows(reference.flush().unwrap())
    );
}

#[test]
fn string_keys_are_charged_for_their_bytes() {
    let mut p = plan(
        string(),
        vec![call("COUNT_STAR", None)],
        Emission::Immediate,
    );
    p.memory_budget_bytes = 200_000;
    let mut op = GroupAggOperator::new(p).unwrap();
    let long = "x".repeat(1000);
    let keys: Vec<String> = (0..150).map(|i| format!("{long}{i}")).collect();
    let b = batch(vec![Arc::new(StringArray::from(keys)) as ArrayRef]);
    let err = op.process(&b).unwrap_err();
    assert!(matches!(err, AggError::MemoryBudget { .. }), "{err}");
    assert_eq!(op.num_groups(), 0);
    let ok = batch(vec![Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef]);
    assert_eq!(
        opt_rows(op.process(&ok).unwrap()),
        strs(&["+I[a, 1]", "+I[b, 1]"])
    );
}

#[test]
fn bad_input_is_an_error_and_changes_nothing() {
    let mut op = GroupAggOperator::new(sum_max(Emission::Immediate)).unwrap();
    op.process(&kv(vec![1], vec![5])).unwrap();
    let before = op.snapshot().unwrap();

    // Wrong argument type.
    let wrong = batch(vec![
        Arc::new(Int32Array::from(vec![1])) as ArrayRef,
        Arc::new(Float64Array::from(vec![1.0])) as ArrayRef,
    ]);
    let err = op.process(&wrong).unwrap_err().to_string();
    assert!(err.contains("Float64") && err.contains("Int64"), "{err}");

    // Wrong key type.
    let wrong = batch(vec![
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
    ]);
    assert!(matches!(op.process(&wrong), Err(AggError::Input(_))));

    // Too few columns.
    let short = batch(vec![Arc::new(Int32Array::from(vec![2])) as ArrayRef]);
    let err = op.process(&short).unwrap_err().to_string();
    assert!(err.contains("only 1 columns"), "{err}");

    // A retraction in an insert-only plan, and a NULL row kind.
    let retract = batch_with_kinds(
        vec![
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
        ],
        vec![0, 3],
    );
    let err = op.process(&retract).unwrap_err().to_string();
    assert!(err.contains("-D"), "{err}");
    let mut kinds = retract.columns().to_vec();
    kinds[2] = Arc::new(arrow_array::Int8Array::from(vec![Some(0), None]));
    let null_kind = RecordBatch::try_new(retract.schema(), kinds);
    if let Ok(null_kind) = null_kind {
        let err = op.process(&null_kind).unwrap_err().to_string();
        assert!(err.contains("NULL"), "{err}");
    }

    assert_eq!(op.snapshot().unwrap(), before);
    // +I and +U rows are accumulated.
    let upserts = batch_with_kinds(
        vec![
            Arc::new(Int32Array::from(vec![1, 1])) as ArrayRef,
            Arc::new(Int64Array::from(vec![1, 10])) as ArrayRef,
        ],
        vec![0, 2],
    );
    assert_eq!(
        opt_rows(op.process(&upserts).unwrap()),
        strs(&["-U[1, 5, 5]", "+U[1, 6, 5]", "-U[1, 6, 5]", "+U[1, 16, 10]"])
    );
}

#[test]
fn distinct_sums_each_value_once_and_emits_only_changes() {
    let mut p = sum_max(Emission::Immediate);
    p.calls[0].distinct = true;
    let mut op = GroupAggOperator::new(p).unwrap();
    let rows = opt_rows(
        op.process(&kv(vec![1, 1, 1, 2, 1], vec![5, 5, 7, 5, 7]))
            .unwrap(),
    );
    // A repeated value changes neither SUM(DISTINCT) nor MAX: no row.
    assert_eq!(
        rows,
        strs(&["+I[1, 5, 5]", "-U[1, 5, 5]", "+U[1, 12, 7]", "+I[2, 5, 5]"])
    );
    // The DISTINCT views are state: they survive a snapshot and restore.
    let snapshot = op.snapshot().unwrap();
    let mut restored = GroupAggOperator::new(op.plan().clone()).unwrap();
    restored.restore(&snapshot).unwrap();
    let next = kv(vec![1, 1], vec![7, 9]);
    assert_eq!(
        opt_rows(restored.process(&next).unwrap()),
        strs(&["-U[1, 12, 7]", "+U[1, 21, 9]"])
    );
}

#[test]
fn a_filter_column_selects_the_rows_a_call_folds() {
    let mut p = sum_max(Emission::Immediate);
    p.calls[0].filter = Some(2);
    let mut op = GroupAggOperator::new(p.clone()).unwrap();
    let filtered = batch(vec![
        Arc::new(Int32Array::from(vec![1, 1, 1])) as ArrayRef,
        Arc::new(Int64Array::from(vec![5, 7, 9])) as ArrayRef,
        Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])) as ArrayRef,
    ]);
    // SUM(v) FILTER (...) folds the first row only (NULL counts as false);
    // MAX(v) every row.
    assert_eq!(
        opt_rows(op.process(&filtered).unwrap()),
        strs(&[
            "+I[1, 5, 5]",
            "-U[1, 5, 5]",
            "+U[1, 5, 7]",
            "-U[1, 5, 7]",
            "+U[1, 5, 9]"
        ])
    );
    let mut op = GroupAggOperator::new(p).unwrap();
    let err = op.process(&kv(vec![1], vec![5])).unwrap_err().to_string();
    assert!(err.contains("the FILTER of call 0 is column 2"), "{err}");
    let not_boolean = batch(vec![
        Arc::new(Int32Array::from(vec![1])) as ArrayRef,
        Arc::new(Int64Array::from(vec![5])) as ArrayRef,
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
    ]);
    let err = op.process(&not_boolean).unwrap_err().to_string();
    assert!(
        err.contains("the FILTER of call 0 (column 2) has type Int64, expected Boolean"),
        "{err}"
    );
    assert_eq!(op.num_groups(), 0, "a bad batch changes nothing");
}

#[test]
fn plans_that_are_not_admitted_are_refused() {
    let mut p = sum_max(Emission::Immediate);
    p.calls[0].function = "MEDIAN".into();
    let err = GroupAggOperator::new(p).unwrap_err().to_string();
    assert!(err.contains("no spec entry for function MEDIAN"), "{err}");
    let mut p = sum_max(Emission::Immediate);
    p.calls[0].distinct = true;
    p.calls[0].arg_types[0] = SqlType::of("DOUBLE");
    p.emission = Emission::MiniBatch;
    p.phase = Phase::Local;
    p.views = vec![DistinctView {
        calls: vec![0],
        column: None,
    }];
    // Over retracting input the DOUBLE DISTINCT sum is single-phase only.
    p.input = InputMode::Retracting;
    let err = GroupAggOperator::new(p).unwrap_err().to_string();
    assert!(
        err.contains("phase local not listed for SUM DISTINCT<DOUBLE>/retracting"),
        "{err}"
    );
    let mut p = sum_max(Emission::Immediate);
    p.phase = Phase::Global;
    assert!(GroupAggOperator::new(p).is_err());
}

fn run_to_end(op: &mut GroupAggOperator, batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        out.extend(opt_rows(op.process(b).unwrap()));
        out.extend(opt_rows(op.flush().unwrap()));
    }
    out
}

#[test]
fn snapshot_restore_continues_like_an_uninterrupted_run() {
    for emission in [Emission::Immediate, Emission::MiniBatch] {
        let input = batches();
        let mut whole = GroupAggOperator::new(sum_max(emission)).unwrap();
        let expected = run_to_end(&mut whole, &input);

        let mut first = GroupAggOperator::new(sum_max(emission)).unwrap();
        let mut got = run_to_end(&mut first, &input[..4]);
        let snapshot = first.snapshot().unwrap();
        let kgs: Vec<u16> = snapshot.iter().map(|p| p.0).collect();
        assert!(kgs.windows(2).all(|w| w[0] < w[1]), "ascending key groups");
        assert!(kgs.iter().all(|&kg| kg < 128));

        let mut second = GroupAggOperator::new(sum_max(emission)).unwrap();
        second.restore(&snapshot).unwrap();
        assert_eq!(second.num_groups(), first.num_groups());
        assert_eq!(second.snapshot().unwrap(), snapshot);
        got.extend(run_to_end(&mut second, &input[4..]));
        assert_eq!(got, expected);
        // Restoring the same payloads twice is refused, and changes nothing.
        assert!(second.restore(&snapshot).is_err());
    }
}

#[test]
fn restoring_a_subset_of_key_groups_keeps_exactly_those_groups() {
    let input = batches();
    let mut op = GroupAggOperator::new(sum_max(Emission::Immediate)).unwrap();
    run_to_end(&mut op, &input);
    let snapshot = op.snapshot().unwrap();
    assert!(snapshot.len() > 10);

    // Two subtasks after rescaling: key groups 0..64 and 64..128.
    let mut all_keys = BTreeSet::new();
    let mut total = 0;
    for range in [0u16..64, 64..128] {
        let mine: Vec<(u16, Vec<u8>)> = snapshot
            .iter()
            .filter(|(kg, _)| range.contains(kg))
            .cloned()
            .collect();
        let mut part = GroupAggOperator::new(sum_max(Emission::Immediate)).unwrap();
        part.restore(&mine).unwrap();
        let restored = part.num_groups();
        total += restored;
        assert_eq!(part.snapshot().unwrap(), mine);
        // One more row per key shows which keys this subtask holds.
        let keys: Vec<i32> = (0..150).collect();
        let out = opt_rows(part.process(&kv(keys, vec![1000; 150])).unwrap());
        let held: BTreeSet<String> = out
            .iter()
            .filter(|r| r.starts_with("+U"))
            .map(|r| r[3..].split(',').next().unwrap().to_string())
            .collect();
        assert_eq!(held.len(), restored);
        assert_eq!(
            out.iter().filter(|r| r.starts_with("+I")).count(),
            150 - restored
        );
        assert!(held.is_disjoint(&all_keys));
        all_keys.extend(held);
    }
    assert_eq!(total, op.num_groups());
    assert_eq!(all_keys.len(), 150);

    // A payload restored under the wrong key group is refused.
    let (kg, bytes) = snapshot[0].clone();
    let mut op = GroupAggOperator::new(sum_max(Emission::Immediate)).unwrap();
    assert!(op.restore(&[(kg + 1, bytes)]).is_err());
    assert_eq!(op.num_groups(), 0);
}

#[test]
fn snapshot_with_an_open_bundle_is_refused() {
    let mut op = GroupAggOperator::new(sum_max(Emission::MiniBatch)).unwrap();
    op.process(&kv(vec![1], vec![1])).unwrap();
    assert!(op.snapshot().is_err());
    op.flush().unwrap();
    assert_eq!(op.snapshot().unwrap().len(), 1);
}

/// Whole local-phase update speed: key lookup + MIN + MAX over DATE,
/// 4096-row batches, 64 keys, one bundle per batch. Run with
/// `cargo test --release -p aggforge-runtime --test integration --
/// --ignored --nocapture operators::local_min_max_speed`.
#[test]
#[ignore]
fn local_min_max_speed() {
    use aggforge_runtime::plan::AggCall;
    use arrow_array::Date32Array;
    let rows = 4096;
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let input: Vec<RecordBatch> = (0..16)
        .map(|_| {
            let keys: Vec<i32> = (0..rows).map(|_| 19_000 + (next() % 64) as i32).collect();
            let values: Vec<Option<i32>> = (0..rows)
                .map(|_| {
                    let v = next();
                    (!v.is_multiple_of(8)).then_some((v >> 8) as i32 % 20_000)
                })
                .collect();
            batch(vec![
                Arc::new(Date32Array::from(keys)) as ArrayRef,
                Arc::new(Date32Array::from(values)) as ArrayRef,
            ])
        })
        .collect();
    let calls: Vec<AggCall> = ["MIN", "MAX"]
        .iter()
        .map(|f| call(f, Some((1, SqlType::of("DATE")))))
        .collect();
    let mut p = plan(SqlType::of("DATE"), calls, Emission::MiniBatch);
    p.phase = Phase::Local;
    let mut op = GroupAggOperator::new(p).unwrap();
    for (label, flush_every) in [("process only", usize::MAX), ("process + flush", 1)] {
        let rounds = 2000;
        let start = std::time::Instant::now();
        for r in 0..rounds {
            op.process(&input[r % input.len()]).unwrap();
            if (r + 1) % flush_every.min(rounds) == 0 {
                std::hint::black_box(op.flush().unwrap());
            }
        }
        let ns = start.elapsed().as_nanos() as f64 / (rounds * rows) as f64;
        println!("local MIN+MAX(DATE), 64 keys, {label}: {ns:.2} ns/row");
        op.flush().unwrap();
    }
}

#[test]
fn a_plan_without_keys_has_one_group() {
    let mut p = plan(
        SqlType::of("INT"),
        vec![call("MAX", Some((0, SqlType::of("BIGINT"))))],
        Emission::Immediate,
    );
    p.key_columns.clear();
    p.key_types.clear();
    let mut op = GroupAggOperator::new(p).unwrap();
    let b = batch(vec![Arc::new(Int64Array::from(vec![5, 3, 7])) as ArrayRef]);
    assert_eq!(
        opt_rows(op.process(&b).unwrap()),
        strs(&["+I[5]", "-U[5]", "+U[7]"])
    );
    let snapshot = op.snapshot().unwrap();
    assert_eq!(snapshot.len(), 1);
    let mut restored = GroupAggOperator::new(op.plan().clone()).unwrap();
    restored.restore(&snapshot).unwrap();
    assert_eq!(restored.num_groups(), 1);
}
