//! Window aggregates (TUMBLE, HOP, CUMULATE, SESSION; event time) against
//! Flink's own operator tests and against each other: single phase, local +
//! global phase, and a snapshot/restore in the middle all give the same
//! windows; SESSION windows also against a row-at-a-time model.

use std::sync::Arc;

use crate::common::{batch, call, two_phase_plans};
use aggforge_runtime::plan::{AggCall, AggPlan, Emission};
use aggforge_runtime::time_zone::ZoneRules;
use aggforge_runtime::types::{Phase, SqlType};
use aggforge_runtime::window_agg::{WindowAggOperator, WindowKind, WindowPlan, WindowProperty};
use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMillisecondType;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType;

fn window(kind: WindowKind, size_ms: i64, step_ms: i64, time_column: usize) -> WindowPlan {
    WindowPlan {
        kind,
        size_ms,
        step_ms,
        offset_ms: 0,
        gap_ms: if kind == WindowKind::Session {
            size_ms
        } else {
            0
        },
        time_column,
        properties: vec![WindowProperty::WindowStart, WindowProperty::WindowEnd],
        zone: None,
        processing_time: false,
        attached: false,
    }
}

/// `SELECT k, COUNT(*), SUM(v), MAX(v), window_start, window_end ... GROUP BY k, window`
/// over rows `(k STRING, v BIGINT, ts TIMESTAMP(3))`.
fn single(kind: WindowKind, size_ms: i64, step_ms: i64) -> AggPlan {
    let bigint = SqlType::of("BIGINT");
    let mut plan = crate::common::plan(
        SqlType::of("STRING"),
        vec![
            call("COUNT_STAR", None),
            call("SUM", Some((1, bigint))),
            call("MAX", Some((1, bigint))),
        ],
        Emission::MiniBatch,
    );
    plan.window = Some(window(kind, size_ms, step_ms, 2));
    plan
}

/// The local and global phase of a single-phase window plan.
fn two_phase(single: &AggPlan) -> (AggPlan, AggPlan) {
    let (mut local, mut global) = two_phase_plans(single);
    let mut w = single.window.clone().unwrap();
    w.properties.clear();
    local.window = Some(w.clone());
    // The global phase reads keys, partials, DISTINCT views, then `$slice_end`.
    let partials: usize = global.calls.iter().map(|c| c.args.len()).sum();
    w.time_column = 1 + partials + global.views.len();
    w.properties = single.window.as_ref().unwrap().properties.clone();
    global.window = Some(w);
    (local, global)
}

fn rows(keys: &[&str], values: &[i64], times: &[i64]) -> RecordBatch {
    batch(vec![
        Arc::new(StringArray::from(keys.to_vec())) as ArrayRef,
        Arc::new(Int64Array::from(values.to_vec())),
        Arc::new(TimestampMillisecondArray::from(times.to_vec())),
    ])
}

/// Output rows as `k|count|sum|max|start|end` (times in ms), sorted.
fn show(batch: Option<RecordBatch>) -> Vec<String> {
    let Some(batch) = batch else {
        return Vec::new();
    };
    let options = FormatOptions::default().with_null("NULL");
    let n = batch.num_columns() - 1;
    let mut out: Vec<String> = (0..batch.num_rows())
        .map(|r| {
            (0..n)
                .map(|c| {
                    let column = batch.column(c);
                    if let DataType::Timestamp(..) = column.data_type() {
                        column
                            .as_primitive::<TimestampMillisecondType>()
                            .value(r)
                            .to_string()
                    } else {
                        ArrayFormatter::try_new(column.as_ref(), &options)
                            .unwrap()
                            .value(r)
                            .to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect();
    out.sort();
    out
}

fn advance(op: &mut WindowAggOperator, watermark: i64) -> Vec<String> {
    op.advance(watermark);
    show(op.flush().unwrap())
}

#[test]
fn hop_follows_flinks_operator_test() {
    // SlicingWindowAggOperatorTest.testEventTimeHoppingWindows: HOP(3 s, 1 s).
    let mut op = WindowAggOperator::new(single(WindowKind::Hop, 3000, 1000)).unwrap();
    op.process(&rows(
        &[
            "key2", "key2", "key1", "key1", "key1", "key2", "key2", "key2",
        ],
        &[1, 1, 1, 1, 1, 1, 1, 1],
        &[3999, 3000, 20, 0, 999, 1998, 1999, 1000],
    ))
    .unwrap();
    assert_eq!(advance(&mut op, 999), ["key1|3|3|1|-2000|1000"]);
    assert_eq!(
        advance(&mut op, 1999),
        ["key1|3|3|1|-1000|2000", "key2|3|3|1|-1000|2000"]
    );
    assert_eq!(
        advance(&mut op, 2999),
        ["key1|3|3|1|0|3000", "key2|3|3|1|0|3000"]
    );
    // Snapshot and restore into a fresh operator.
    let payloads = op.snapshot().unwrap();
    let mut op = WindowAggOperator::new(single(WindowKind::Hop, 3000, 1000)).unwrap();
    op.restore(&payloads).unwrap();
    op.advance(2999);
    assert_eq!(advance(&mut op, 3999), ["key2|5|5|1|1000|4000"]);
    // Late for slice 4000, which still counts in [2000, 5000) and [3000, 6000).
    op.process(&rows(&["key2"], &[1], &[3500])).unwrap();
    assert_eq!(advance(&mut op, 4999), ["key2|3|3|1|2000|5000"]);
    // Every window of slice 3000 has fired: dropped.
    op.process(&rows(&["key1"], &[1], &[2999])).unwrap();
    assert_eq!(op.late_dropped(), 1);
    assert_eq!(advance(&mut op, 5999), ["key2|3|3|1|3000|6000"]);
    assert_eq!(advance(&mut op, i64::MAX), Vec::<String>::new());
    assert_eq!(op.sizes().1, 0, "every slice is cleared");
    assert_eq!(op.sizes().2, 0, "no window is pending");
}

#[test]
fn tumble_drops_late_rows_and_fires_at_end_of_input() {
    let mut op = WindowAggOperator::new(single(WindowKind::Tumble, 5000, 0)).unwrap();
    op.process(&rows(
        &["a", "a", "b", "a"],
        &[1, 5, 7, 2],
        &[1000, 4999, 6000, -1],
    ))
    .unwrap();
    assert_eq!(
        advance(&mut op, 4998),
        ["a|1|2|2|-5000|0"],
        "[-5000, 0) fires at -1"
    );
    assert_eq!(advance(&mut op, 4999), ["a|2|6|5|0|5000"]);
    op.process(&rows(&["a", "b"], &[9, 1], &[4000, 9999]))
        .unwrap();
    assert_eq!(op.late_dropped(), 1);
    assert_eq!(advance(&mut op, 4000), Vec::<String>::new(), "no advance");
    assert_eq!(advance(&mut op, i64::MAX), ["b|2|8|7|5000|10000"]);
}

#[test]
fn shifted_windows_are_cut_in_local_time_and_fire_at_their_instant() {
    // TUMBLE(1 h) in a +05:30 zone, one phase and two: local hours start at
    // :30 UTC, the window columns are local, the window fires at the
    // instant of its local end - 1.
    const H: i64 = 3_600_000;
    let mut plan = single(WindowKind::Tumble, H, 0);
    let w = plan.window.as_mut().unwrap();
    w.zone = Some(ZoneRules::fixed("Asia/Kolkata", 19_800));
    w.properties.push(WindowProperty::WindowTime);
    let (local, global) = two_phase(&plan);
    let input = rows(&["a", "a", "a"], &[1, 2, 4], &[0, H / 2 - 1, H / 2]);
    // Instants 0 and 29:59.999 are local 05:30 and 05:59:59.999: [05:00, 06:00).
    let first = format!("a|2|3|2|{}|{}|{}", 5 * H, 6 * H, H / 2 - 1);
    let mut op = WindowAggOperator::new(plan).unwrap();
    op.process(&input).unwrap();
    assert_eq!(advance(&mut op, H / 2 - 2), Vec::<String>::new());
    assert_eq!(advance(&mut op, H / 2 - 1), std::slice::from_ref(&first));
    // Late against the fired local window [05:00, 06:00).
    op.process(&rows(&["a"], &[8], &[H / 2 - 10])).unwrap();
    assert_eq!(op.late_dropped(), 1);
    let second = format!("a|1|4|4|{}|{}|{}", 6 * H, 7 * H, 3 * H / 2 - 1);
    assert_eq!(advance(&mut op, i64::MAX), std::slice::from_ref(&second));

    let mut local = WindowAggOperator::new(local).unwrap();
    let mut global = WindowAggOperator::new(global).unwrap();
    local.process(&input).unwrap();
    global.process(&local.flush().unwrap().unwrap()).unwrap();
    assert_eq!(advance(&mut global, H / 2 - 1), [first]);
    assert_eq!(advance(&mut global, i64::MAX), [second]);
}

#[test]
fn processing_time_windows_take_the_clock_and_never_drop_rows() {
    // HOP(4 s, 2 s) over the processing time: the rows' time column is
    // ignored (here it says 0), each batch takes the clock set before it.
    let mut plan = single(WindowKind::Hop, 4000, 2000);
    plan.window.as_mut().unwrap().processing_time = true;
    let mut op = WindowAggOperator::new(plan).unwrap();
    assert_eq!(op.next_fire_time(), None);
    op.set_time(1500);
    op.process(&rows(&["a", "b"], &[1, 2], &[0, 0])).unwrap();
    assert_eq!(
        op.next_fire_time(),
        Some(1999),
        "slice [0, 2000) fires at 1999"
    );
    assert_eq!(
        advance(&mut op, 1999),
        ["a|1|1|1|-2000|2000", "b|1|2|2|-2000|2000"]
    );
    op.set_time(2500);
    op.process(&rows(&["a"], &[4], &[0])).unwrap();
    assert_eq!(advance(&mut op, 3999), ["a|2|5|4|0|4000", "b|1|2|2|0|4000"]);
    op.set_time(4500);
    op.process(&rows(&["a"], &[8], &[0])).unwrap();
    assert_eq!(op.late_dropped(), 0);
    assert_eq!(op.next_fire_time(), Some(5999));
    assert_eq!(advance(&mut op, 5998), Vec::<String>::new());
    assert_eq!(advance(&mut op, 5999), ["a|2|12|8|2000|6000"]);
    // A processing-time plan is single phase only.
    let mut local = two_phase(&single(WindowKind::Hop, 4000, 2000)).0;
    local.window.as_mut().unwrap().processing_time = true;
    let err = WindowAggOperator::new(local).unwrap_err().to_string();
    assert!(err.contains("one phase only"), "{err}");
}

#[test]
fn cumulate_emits_every_step_after_the_first_row() {
    // CUMULATE(step 5 s, max 15 s): b's row at 16 s is in step [15, 20) and
    // shows in [15, 25) and [15, 30) too; steps before it are not emitted.
    let mut op = WindowAggOperator::new(single(WindowKind::Cumulate, 15000, 5000)).unwrap();
    op.process(&rows(&["a", "a", "b"], &[1, 2, 3], &[1000, 7000, 16000]))
        .unwrap();
    assert_eq!(advance(&mut op, 4999), ["a|1|1|1|0|5000"]);
    // Late for [0, 5), kept for the later steps of its period.
    op.process(&rows(&["a"], &[10], &[2000])).unwrap();
    assert_eq!(advance(&mut op, 9999), ["a|3|13|10|0|10000"]);
    assert_eq!(
        advance(&mut op, i64::MAX),
        [
            "a|3|13|10|0|15000",
            "b|1|3|3|15000|20000",
            "b|1|3|3|15000|25000",
            "b|1|3|3|15000|30000"
        ]
    );
    assert_eq!(op.sizes().1, 0);
}

/// Runs `chunks` (rows, then a watermark) through the single phase and
/// through local + global, with a snapshot/restore of the global phase
/// after every chunk; both give the same windows.
fn single_equals_two_phase(plan: AggPlan) {
    let (local_plan, global_plan) = two_phase(&plan);
    let mut one = WindowAggOperator::new(plan).unwrap();
    let mut local = WindowAggOperator::new(local_plan).unwrap();
    let mut global = WindowAggOperator::new(global_plan.clone()).unwrap();
    let mut state = 1u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as i64
    };
    let keys = ["a", "b", "c", "d", "e"];
    let mut watermark = -20_000i64;
    let (mut from_one, mut from_two) = (Vec::new(), Vec::new());
    for _ in 0..40 {
        let n = 1 + (next() % 50) as usize;
        let k: Vec<&str> = (0..n).map(|_| keys[(next() % 5) as usize]).collect();
        let v: Vec<i64> = (0..n).map(|_| next() % 1000 - 500).collect();
        // Out of order by up to 8 s, some of it late.
        let t: Vec<i64> = (0..n).map(|_| watermark + next() % 12000 - 8000).collect();
        let input = rows(&k, &v, &t);
        one.process(&input).unwrap();
        local.process(&input).unwrap();
        watermark += next() % 4000;
        if let Some(partials) = local.flush().unwrap() {
            global.process(&partials).unwrap();
        }
        from_one.push(advance(&mut one, watermark));
        from_two.push(advance(&mut global, watermark));
        let payloads = global.snapshot().unwrap();
        global = WindowAggOperator::new(global_plan.clone()).unwrap();
        global.restore(&payloads).unwrap();
        global.advance(watermark);
    }
    from_one.push(advance(&mut one, i64::MAX));
    from_two.push(advance(&mut global, i64::MAX));
    assert_eq!(from_one, from_two);
    assert!(from_one.iter().map(Vec::len).sum::<usize>() > 20);
    assert!(one.late_dropped() > 0, "the data has late rows");
}

#[test]
fn tumble_single_phase_equals_two_phase() {
    single_equals_two_phase(single(WindowKind::Tumble, 5000, 0));
}

#[test]
fn hop_single_phase_equals_two_phase() {
    single_equals_two_phase(single(WindowKind::Hop, 6000, 2000));
}

#[test]
fn cumulate_single_phase_equals_two_phase() {
    single_equals_two_phase(single(WindowKind::Cumulate, 6000, 2000));
}

/// `COUNT(*), COUNT(DISTINCT v), SUM(DISTINCT v), MAX(v)` per key and window.
fn distinct(kind: WindowKind, size_ms: i64, step_ms: i64) -> AggPlan {
    let bigint = SqlType::of("BIGINT");
    let mut plan = single(kind, size_ms, step_ms);
    let of = |function: &str| AggCall {
        distinct: true,
        ..call(function, Some((1, bigint)))
    };
    plan.calls = vec![
        call("COUNT_STAR", None),
        of("COUNT"),
        of("SUM"),
        call("MAX", Some((1, bigint))),
    ];
    plan
}

#[test]
fn distinct_single_phase_equals_two_phase() {
    single_equals_two_phase(distinct(WindowKind::Tumble, 5000, 0));
    single_equals_two_phase(distinct(WindowKind::Hop, 6000, 2000));
    single_equals_two_phase(distinct(WindowKind::Cumulate, 6000, 2000));
}

/// A window aggregate over rows that carry their window: the time column
/// holds each row's `window_end` (cascaded window aggregates).
fn attached(kind: WindowKind, size_ms: i64, step_ms: i64) -> AggPlan {
    let mut plan = single(kind, size_ms, step_ms);
    plan.window.as_mut().unwrap().attached = true;
    plan
}

#[test]
fn attached_windows_are_one_slice_each_and_start_as_their_kind() {
    // HOP(3 s, 1 s): rows of the windows ending at 3 s and 4 s are not
    // merged into each other's windows as sliced HOP rows would be.
    let mut op = WindowAggOperator::new(attached(WindowKind::Hop, 3000, 1000)).unwrap();
    op.process(&rows(&["a", "a", "a"], &[1, 2, 4], &[3000, 3000, 4000]))
        .unwrap();
    assert_eq!(advance(&mut op, 2999), ["a|2|3|2|0|3000"]);
    // Late: its window has fired.
    op.process(&rows(&["a"], &[100], &[3000])).unwrap();
    assert_eq!(op.late_dropped(), 1);
    assert_eq!(advance(&mut op, i64::MAX), ["a|1|4|4|1000|4000"]);
    // CUMULATE(step 1 s, max 3 s): a window starts at its period's start.
    let mut op = WindowAggOperator::new(attached(WindowKind::Cumulate, 3000, 1000)).unwrap();
    op.process(&rows(&["a", "b"], &[1, 2], &[2000, 5000]))
        .unwrap();
    assert_eq!(
        advance(&mut op, i64::MAX),
        ["a|1|1|1|0|2000", "b|1|2|2|3000|5000"]
    );
}

#[test]
fn attached_single_phase_equals_two_phase() {
    single_equals_two_phase(attached(WindowKind::Hop, 6000, 2000));
    single_equals_two_phase(attached(WindowKind::Cumulate, 6000, 2000));
}

#[test]
fn a_null_rowtime_fails_and_changes_nothing() {
    let mut op = WindowAggOperator::new(single(WindowKind::Tumble, 5000, 0)).unwrap();
    let bad = batch(vec![
        Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
        Arc::new(Int64Array::from(vec![1, 2])),
        Arc::new(TimestampMillisecondArray::from(vec![Some(1), None])),
    ]);
    let err = op.process(&bad).unwrap_err().to_string();
    assert!(err.contains("RowTime field should not be null"), "{err}");
    assert_eq!(op.sizes(), (0, 0, 0));
}

#[test]
fn the_local_phase_emits_partials_with_slice_ends() {
    let (local, _) = two_phase(&single(WindowKind::Hop, 3000, 1000));
    assert_eq!(local.phase, Phase::Local);
    let mut op = WindowAggOperator::new(local).unwrap();
    op.process(&rows(&["a", "a", "b"], &[1, 2, 3], &[10, 20, 1500]))
        .unwrap();
    let out = op.flush().unwrap().unwrap();
    let schema = out.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names[names.len() - 2], "$slice_end");
    assert_eq!(show(Some(out)), ["a|2|3|2|1000", "b|1|3|3|2000"]);
    assert_eq!(op.flush().unwrap(), None, "a flush empties the local phase");
}

#[test]
fn a_shut_local_gate_lets_rows_wait_past_a_watermark() {
    let (local, _) = two_phase(&single(WindowKind::Tumble, 1000, 0));
    let mut eager = WindowAggOperator::new(local.clone()).unwrap();
    let mut waiting = WindowAggOperator::new(local).unwrap();
    let first = rows(&["a", "b"], &[1, 2], &[100, 300]);
    let second = rows(&["a", "c"], &[3, 4], &[200, 1200]);
    // The first watermark opens the gate (its next trigger is 999).
    assert!(!waiting.advance_if_gate_shut(50));
    for op in [&mut eager, &mut waiting] {
        op.process(&first).unwrap();
        assert!(!op.advance(50));
        op.process(&second).unwrap();
    }
    // Below the next trigger watermark the gate is shut whatever is pending.
    assert!(!eager.advance(700));
    assert!(waiting.advance_if_gate_shut(700));
    let late = rows(&["b"], &[5], &[10]);
    eager.process(&late).unwrap();
    // At 999 the gate opens: the waiting rows go first, then the watermark.
    assert!(!waiting.advance_if_gate_shut(999));
    waiting.process(&late).unwrap();
    assert!(eager.advance(999));
    assert!(waiting.advance(999));
    let (a, b) = (show(eager.flush().unwrap()), show(waiting.flush().unwrap()));
    assert_eq!(a, b);
    assert_eq!(a, ["a|2|4|3|1000", "b|2|7|5|1000", "c|1|4|4|2000"]);
    // Other phases never advance here.
    let mut single_phase = WindowAggOperator::new(single(WindowKind::Tumble, 1000, 0)).unwrap();
    assert!(!single_phase.advance_if_gate_shut(5));
}

#[test]
fn groups_leave_the_table_once_their_windows_fired() {
    // Every second 2,000 new keys; the table holds about the live ones.
    let mut op = WindowAggOperator::new(single(WindowKind::Tumble, 1000, 0)).unwrap();
    let mut emitted = 0;
    for second in 0..20i64 {
        let keys: Vec<String> = (0..2000).map(|i| format!("k{second}-{i}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let times = vec![second * 1000 + 500; keys.len()];
        op.process(&rows(&keys, &vec![1; keys.len()], &times))
            .unwrap();
        op.advance(second * 1000 + 999);
        let out = show(op.flush().unwrap());
        assert_eq!(out.len(), 2000);
        assert!(out[0].starts_with(&format!("k{second}-")), "{}", out[0]);
        emitted += out.len();
        assert!(
            op.sizes().0 <= 4000,
            "groups {} after {second} s",
            op.sizes().0
        );
    }
    assert_eq!(emitted, 40_000);
    assert_eq!((op.sizes().1, op.sizes().2), (0, 0));
}

/// `single(Session, gap)`: SESSION windows with a gap of `gap_ms`.
fn session(gap_ms: i64) -> WindowAggOperator {
    WindowAggOperator::new(single(WindowKind::Session, gap_ms, 0)).unwrap()
}

#[test]
fn session_follows_flinks_restore_test() {
    // WindowAggregateTestPrograms' SESSION case (gap 5 s, watermark 1 s
    // behind), one row at a time with a snapshot/restore where Flink takes
    // its savepoint; times in seconds.
    let input = [
        (1, 1, "a"),
        (2, 2, "a"),
        (3, 2, "a"),
        (4, 5, "a"),
        (7, 3, "b"),
        (6, 6, "b"),
        (8, 3, "a"),
        (4, 5, "a"),
        (16, 4, "b"),
        (34, 1, "b"),
    ];
    let after = [(40, 10, "a"), (42, 11, "d"), (43, 12, "c"), (44, 13, "d")];
    let mut op = session(5000);
    let mut out = Vec::new();
    let mut max = i64::MIN;
    let mut feed =
        |op: &mut WindowAggOperator, rows_in: &[(i64, i64, &str)], out: &mut Vec<String>| {
            for &(ts, v, k) in rows_in {
                op.process(&rows(&[k], &[v], &[ts * 1000])).unwrap();
                max = max.max(ts * 1000);
                out.extend(advance(op, max - 1000));
            }
        };
    feed(&mut op, &input, &mut out);
    assert_eq!(
        op.late_dropped(),
        0,
        "the late a-row at 4 s joins a live session"
    );
    let payloads = op.snapshot().unwrap();
    let mut op = session(5000);
    op.restore(&payloads).unwrap();
    op.advance(33_000);
    feed(&mut op, &after, &mut out);
    out.extend(advance(&mut op, i64::MAX));
    assert_eq!(
        out,
        [
            // Both fire at watermark 15 s (each flush's rows are sorted).
            "a|6|18|5|1000|13000",
            "b|2|9|6|6000|12000",
            "b|1|4|4|16000|21000",
            "b|1|1|1|34000|39000",
            "a|1|10|10|40000|45000",
            "c|1|12|12|43000|48000",
            "d|2|24|13|42000|49000",
        ]
    );
}

#[test]
fn touching_sessions_merge_and_a_row_bridges_two() {
    let mut op = session(5000);
    // Touching: a's [0, 5000) and [5000, 10000) are one session; b's
    // [0, 5000) and [5001, 10001) are two.
    op.process(&rows(
        &["a", "a", "b", "b"],
        &[1, 2, 3, 4],
        &[0, 5000, 0, 5001],
    ))
    .unwrap();
    assert_eq!(
        advance(&mut op, i64::MAX),
        ["a|2|3|2|0|10000", "b|1|3|3|0|5000", "b|1|4|4|5001|10001"]
    );
    // Two sessions [0, 5000) and [8000, 13000), then a row at 4000 whose
    // window [4000, 9000) intersects both: one session [0, 13000).
    let mut op = session(5000);
    op.process(&rows(&["a", "a"], &[1, 2], &[0, 8000])).unwrap();
    op.process(&rows(&["a", "a"], &[4, 8], &[4000, 12000]))
        .unwrap();
    assert_eq!(op.sizes().1, 1, "one session left");
    assert_eq!(advance(&mut op, 16_998), Vec::<String>::new());
    assert_eq!(advance(&mut op, 16_999), ["a|4|15|8|0|17000"]);
}

#[test]
fn a_late_row_is_dropped_alone_and_taken_when_it_joins_a_session() {
    let mut op = session(5000);
    op.process(&rows(&["a"], &[1], &[16_000])).unwrap();
    assert_eq!(advance(&mut op, 20_000), Vec::<String>::new());
    // b's window [10000, 15000) fired already; a's [14000, 19000) joins
    // the live [16000, 21000) and moves its start.
    op.process(&rows(&["b", "a"], &[5, 7], &[10_000, 14_000]))
        .unwrap();
    assert_eq!(op.late_dropped(), 1);
    assert_eq!(advance(&mut op, 20_999), ["a|2|8|7|14000|21000"]);
    // A fired session is forgotten: a row in its range opens a new one.
    op.process(&rows(&["a"], &[3], &[17_000])).unwrap();
    assert_eq!(op.late_dropped(), 1);
    assert_eq!(advance(&mut op, 21_999), ["a|1|3|3|17000|22000"]);
}

/// A row-at-a-time model of Flink's session merging: per key, sessions
/// `(start, end, count, sum, max)`.
#[derive(Default)]
struct SessionModel {
    sessions: Vec<(String, i64, i64, i64, i64, i64)>,
    watermark: i64,
    late: u64,
}

impl SessionModel {
    fn row(&mut self, k: &str, v: i64, ts: i64, gap: i64) {
        let (mut start, mut end) = (ts, ts + gap);
        let (mut count, mut sum, mut max) = (1, v, v);
        let mut merged = false;
        self.sessions.retain(|s| {
            let hit = s.0 == k && s.1 <= end && s.2 >= start;
            if hit {
                (start, end) = (start.min(s.1), end.max(s.2));
                (count, sum, max) = (count + s.3, sum + s.4, max.max(s.5));
                merged = true;
            }
            !hit
        });
        if !merged && end - 1 <= self.watermark {
            self.late += 1;
            return;
        }
        self.sessions
            .push((k.to_string(), start, end, count, sum, max));
    }

    fn advance(&mut self, watermark: i64) -> Vec<String> {
        self.watermark = self.watermark.max(watermark);
        let mut fired = Vec::new();
        let wm = self.watermark;
        self.sessions.retain(|s| {
            let due = s.2 - 1 <= wm;
            if due {
                fired.push(format!("{}|{}|{}|{}|{}|{}", s.0, s.3, s.4, s.5, s.1, s.2));
            }
            !due
        });
        fired.sort();
        fired
    }
}

#[test]
fn sessions_match_a_row_at_a_time_model_across_batches_and_restores() {
    let gap = 3000;
    let mut batched = session(gap);
    let mut single_rows = session(gap);
    let mut model = SessionModel {
        watermark: i64::MIN,
        ..SessionModel::default()
    };
    let mut state = 7u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as i64
    };
    let keys = ["a", "b", "c", "d", "e", "f", "g"];
    let mut watermark = 0i64;
    let (mut got, mut one_by_one, mut want) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..60 {
        let n = 1 + (next() % 40) as usize;
        let k: Vec<&str> = (0..n).map(|_| keys[(next() % 7) as usize]).collect();
        let v: Vec<i64> = (0..n).map(|_| next() % 1000 - 500).collect();
        // Sparse enough for gaps, out of order by up to 6 s (some late).
        let t: Vec<i64> = (0..n).map(|_| watermark + next() % 9000 - 6000).collect();
        batched.process(&rows(&k, &v, &t)).unwrap();
        for i in 0..n {
            single_rows
                .process(&rows(&k[i..=i], &v[i..=i], &t[i..=i]))
                .unwrap();
            model.row(k[i], v[i], t[i], gap);
        }
        watermark += next() % 2500;
        got.push(advance(&mut batched, watermark));
        one_by_one.push(advance(&mut single_rows, watermark));
        want.push(model.advance(watermark));
        let payloads = batched.snapshot().unwrap();
        batched = session(gap);
        batched.restore(&payloads).unwrap();
        batched.advance(watermark);
    }
    got.push(advance(&mut batched, i64::MAX));
    one_by_one.push(advance(&mut single_rows, i64::MAX));
    want.push(model.advance(i64::MAX));
    assert_eq!(got, want);
    assert_eq!(one_by_one, want);
    assert!(want.iter().map(Vec::len).sum::<usize>() > 50);
    assert!(model.late > 0, "the data has late rows");
    assert_eq!(single_rows.late_dropped(), model.late);
}
