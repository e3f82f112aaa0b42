//! State bound to Flink's layout: the change batches a write-back takes
//! (only the groups written since the last one, upserts and deletes) and
//! the loading of state rows read back from Flink's backend, which must
//! continue exactly as the operator that wrote them.

use std::sync::Arc;

use crate::common::*;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType, ROW_KIND_COLUMN};
use arrow_array::{Array, Int8Array, RecordBatch};

pub(crate) const I: i8 = 0;
pub(crate) const D: i8 = 3;

/// SUM and AVG over retracting input: Flink's accumulators are SUM's
/// (sum, count), AVG's (sum, count), then the record counter.
fn sum_avg_plan(emission: Emission) -> AggPlan {
    let mut p = plan(
        SqlType::of("INT"),
        vec![
            call("SUM", Some((1, SqlType::of("BIGINT")))),
            call("AVG", Some((1, SqlType::of("BIGINT")))),
        ],
        emission,
    );
    p.input = InputMode::Retracting;
    p
}

fn flink_acc_types() -> Vec<SqlType> {
    vec![SqlType::of("BIGINT"); 5]
}

fn bound(emission: Emission) -> GroupAggOperator {
    let mut op = GroupAggOperator::new(sum_avg_plan(emission)).unwrap();
    op.bind_flink_state(&flink_acc_types()).unwrap();
    assert!(op.has_flink_state());
    op
}

/// The change batch's keys as `+I[key]` (written) or `-D[key]` (deleted),
/// sorted.
fn changed_keys(changes: &RecordBatch) -> Vec<String> {
    let kind = changes.schema().index_of(ROW_KIND_COLUMN).unwrap();
    let mut out = rows(&changes.project(&[0, kind]).unwrap());
    out.sort();
    out
}

#[test]
fn write_back_takes_only_the_groups_changed_since_the_last_one() {
    let mut op = bound(Emission::Immediate);
    assert!(op.state_changes().unwrap().is_none(), "nothing written yet");
    op.process(&kind_rows(
        &[(I, 1, Some(5)), (I, 2, Some(7)), (I, 3, Some(1))],
        true,
    ))
    .unwrap();
    let first = op.state_changes().unwrap().unwrap();
    assert_eq!(changed_keys(&first), strs(&["+I[1]", "+I[2]", "+I[3]"]));
    // A failed write-back (the caller does not confirm) keeps them marked.
    assert_eq!(op.state_changes().unwrap().unwrap().num_rows(), 3);
    op.state_changes_written();
    assert!(op.state_changes().unwrap().is_none());

    // Key 2 changes, key 3's only record is retracted: an upsert and a delete.
    op.process(&kind_rows(&[(I, 2, Some(1)), (D, 3, Some(1))], true))
        .unwrap();
    let second = op.state_changes().unwrap().unwrap();
    assert_eq!(changed_keys(&second), strs(&["+I[2]", "-D[3]"]));
    // Flink's accumulator row of key 2: SUM (8, 2), AVG (8, 2), 2 records.
    let key2 = rows(&second.project(&[0, 1, 2, 3, 4, 5, 6]).unwrap())
        .into_iter()
        .find(|r| r.starts_with("+I[2,"))
        .unwrap();
    assert_eq!(key2, "+I[2, 8, 2, 8, 2, 2]");
}

#[test]
fn loaded_state_continues_exactly_as_the_operator_that_wrote_it() {
    for emission in [Emission::Immediate, Emission::MiniBatch] {
        let first_half = kind_rows(
            &[
                (I, 1, Some(5)),
                (I, 2, Some(7)),
                (I, 1, Some(3)),
                (I, 4, None),
            ],
            true,
        );
        let second_half = kind_rows(
            &[
                (D, 1, Some(5)),
                (I, 2, Some(1)),
                (D, 4, None),
                (I, 5, Some(9)),
            ],
            true,
        );
        let run = |op: &mut GroupAggOperator, batch: &RecordBatch| match emission {
            Emission::MiniBatch => {
                op.process(batch).unwrap();
                opt_rows(op.flush().unwrap())
            }
            _ => opt_rows(op.process(batch).unwrap()),
        };
        let mut written = bound(emission);
        run(&mut written, &first_half);
        let state = written.state_changes().unwrap().unwrap();
        let expected = run(&mut written, &second_half);

        let mut restored = bound(emission);
        restored.load_state(&state).unwrap();
        assert!(
            restored.state_changes().unwrap().is_none(),
            "loaded state is not a change"
        );
        assert_eq!(run(&mut restored, &second_half), expected, "{emission:?}");
        assert_eq!(
            changed_keys(&restored.state_changes().unwrap().unwrap()),
            strs(&["+I[1]", "+I[2]", "+I[5]", "-D[4]"])
        );
    }
}

#[test]
fn bad_state_rows_are_refused_and_nothing_is_loaded() {
    let mut op = bound(Emission::Immediate);
    op.process(&kind_rows(&[(I, 1, Some(5))], true)).unwrap();
    let state = op.state_changes().unwrap().unwrap();
    let mut fresh = bound(Emission::Immediate);
    fresh.load_state(&state).unwrap();
    let err = fresh.load_state(&state).unwrap_err().to_string();
    assert!(err.contains("already holds"), "{err}");
    let narrow = state.project(&[0, 1]).unwrap();
    let err = bound(Emission::Immediate)
        .load_state(&narrow)
        .unwrap_err()
        .to_string();
    assert!(err.contains("accState needs"), "{err}");
}

#[test]
fn a_layout_that_differs_from_flinks_is_refused() {
    let mut op = GroupAggOperator::new(sum_avg_plan(Emission::Immediate)).unwrap();
    let err = op
        .bind_flink_state(&[SqlType::of("BIGINT"), SqlType::of("DOUBLE")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("Flink's state layout"), "{err}");
    assert!(!op.has_flink_state());
    let local = {
        let (local, _) = two_phase_plans(&sum_avg_plan(Emission::MiniBatch));
        local
    };
    let err = GroupAggOperator::new(local)
        .unwrap()
        .bind_flink_state(&flink_acc_types())
        .unwrap_err()
        .to_string();
    assert!(err.contains("keeps no state"), "{err}");
}

#[test]
fn deletes_survive_a_table_rebuild() {
    // Many groups come and go between two write-backs, so the table is
    // rebuilt; every deleted key that was written must still be deleted.
    let mut op = bound(Emission::Immediate);
    let keys: Vec<(i8, i32, Option<i64>)> = (0..5_000).map(|k| (I, k, Some(1))).collect();
    op.process(&kind_rows(&keys, true)).unwrap();
    op.state_changes_written();
    let gone: Vec<(i8, i32, Option<i64>)> = (0..5_000).map(|k| (D, k, Some(1))).collect();
    op.process(&kind_rows(&gone, true)).unwrap();
    for round in 0..4 {
        let fresh: Vec<(i8, i32, Option<i64>)> = (0..5_000)
            .map(|k| (I, 10_000 * (round + 1) + k, Some(1)))
            .collect();
        op.process(&kind_rows(&fresh, true)).unwrap();
        let retract: Vec<(i8, i32, Option<i64>)> = fresh.iter().map(|r| (D, r.1, r.2)).collect();
        op.process(&kind_rows(&retract, true)).unwrap();
    }
    let changes = op.state_changes().unwrap().unwrap();
    let kinds = changes
        .column_by_name(ROW_KIND_COLUMN)
        .unwrap()
        .as_any()
        .downcast_ref::<Int8Array>()
        .unwrap();
    let deletes = (0..changes.num_rows())
        .filter(|&i| kinds.value(i) == D)
        .count();
    assert!(
        deletes >= 5_000,
        "{deletes} deletes of the 5,000 written keys"
    );
    let keys = Arc::new(changes.column(0).clone());
    assert_eq!(keys.null_count(), 0);
}

/// The state backend of the cache tests: each key's accumulator row (a
/// one-row change batch), written back and read as the Flink operator does.
#[derive(Default)]
struct Backend {
    rows: std::collections::HashMap<i32, RecordBatch>,
}

/// A model of Flink's state backend the cache tests write change batches
/// to and read state rows from.
pub(crate) trait ModelBackend {
    /// Applies a change batch.
    fn write(&mut self, changes: Option<RecordBatch>);
    /// The state rows of those of `keys` the backend holds.
    fn read(&self, keys: &RecordBatch) -> Option<RecordBatch>;
}

impl ModelBackend for Backend {
    fn write(&mut self, changes: Option<RecordBatch>) {
        let Some(changes) = changes else { return };
        let kind = changes.schema().index_of(ROW_KIND_COLUMN).unwrap();
        let keys = changes
            .column(0)
            .as_any()
            .downcast_ref::<arrow_array::Int32Array>()
            .unwrap()
            .clone();
        let kinds = changes
            .column(kind)
            .as_any()
            .downcast_ref::<Int8Array>()
            .unwrap()
            .clone();
        for i in 0..changes.num_rows() {
            if kinds.value(i) == D {
                self.rows.remove(&keys.value(i));
            } else {
                self.rows.insert(keys.value(i), changes.slice(i, 1));
            }
        }
    }

    fn read(&self, keys: &RecordBatch) -> Option<RecordBatch> {
        let keys = keys
            .column(0)
            .as_any()
            .downcast_ref::<arrow_array::Int32Array>()
            .unwrap();
        let found: Vec<RecordBatch> = keys
            .iter()
            .filter_map(|k| self.rows.get(&k.unwrap()).cloned())
            .collect();
        let schema = found.first()?.schema();
        Some(arrow_select::concat::concat_batches(&schema, &found).unwrap())
    }
}

/// One batch through a cached operator: probe, load what the backend
/// holds, fold; then empty the cache into the backend when it is nearly
/// full (immediate emission: after every batch; mini-batch: after a flush).
pub(crate) fn cached_step(
    op: &mut GroupAggOperator,
    backend: &mut impl ModelBackend,
    batch: &RecordBatch,
    flush: bool,
) -> Vec<String> {
    if let Some(keys) = op.probe(batch.clone()).unwrap() {
        if let Some(rows) = backend.read(&keys) {
            op.load_state(&rows).unwrap();
        }
    }
    let mut out = opt_rows(op.process_pending().unwrap());
    if flush {
        out.extend(opt_rows(op.flush().unwrap()));
    }
    if op.should_evict(batch.num_rows()) {
        let before = op.num_groups();
        backend.write(op.evict_all().unwrap());
        assert!(
            op.num_groups() <= before / 2,
            "an eviction keeps at most half the groups: {} of {before}",
            op.num_groups()
        );
    }
    out
}

#[test]
fn a_cache_emptied_into_the_backend_gives_the_changelog_of_unbounded_state() {
    for emission in [Emission::Immediate, Emission::MiniBatch] {
        let mut next = xorshift(42);
        let batches: Vec<RecordBatch> = (0..60)
            .map(|_| {
                let rows: Vec<(i8, i32, Option<i64>)> = (0..200)
                    .map(|_| {
                        let r = next();
                        // Mostly inserts over 3,000 keys, some retractions.
                        let kind = if r.is_multiple_of(7) { D } else { I };
                        (kind, (r >> 8) as i32 % 3_000, Some((r >> 20) as i64 % 100))
                    })
                    .collect();
                kind_rows(&rows, true)
            })
            .collect();
        let mut unbounded = bound(emission);
        let mut cached = {
            let mut p = sum_avg_plan(emission);
            // Room for a few hundred groups: the cache is emptied often.
            p.memory_budget_bytes = 256 * 1024;
            let mut op = GroupAggOperator::new(p).unwrap();
            op.bind_flink_state(&flink_acc_types()).unwrap();
            op
        };
        let mut backend = Backend::default();
        let flush = emission == Emission::MiniBatch;
        for batch in &batches {
            let mut expected = opt_rows(unbounded.process(batch).unwrap());
            if flush {
                expected.extend(opt_rows(unbounded.flush().unwrap()));
            }
            assert_eq!(
                cached_step(&mut cached, &mut backend, batch, flush),
                expected
            );
            assert!(
                cached.memory_used() <= 256 * 1024,
                "{}",
                cached.memory_used()
            );
        }
        assert!(cached.evictions() >= 3, "{} evictions", cached.evictions());
        // What the backend and cache hold together is the unbounded state.
        backend.write(cached.state_changes().unwrap());
        let mut all = Backend::default();
        all.write(unbounded.state_changes().unwrap());
        let table = |b: &Backend| {
            let mut rows: Vec<String> = b
                .rows
                .values()
                .flat_map(|r| rows(&r.project(&[0, 1, 2, 3, 4, 5, 6]).unwrap()))
                .collect();
            rows.sort();
            rows
        };
        assert_eq!(table(&backend), table(&all), "{emission:?}");
    }
}

#[test]
fn probe_names_only_the_groups_the_operator_does_not_hold() {
    let mut op = bound(Emission::Immediate);
    // Restored groups may be anywhere in the backend.
    op.backend_restored();
    op.process(&kind_rows(&[(I, 1, Some(5))], true)).unwrap();
    let keys = op
        .probe(kind_rows(
            &[
                (I, 1, Some(1)),
                (I, 2, Some(1)),
                (I, 2, Some(3)),
                (I, 3, None),
            ],
            true,
        ))
        .unwrap()
        .unwrap();
    assert_eq!(keys.num_columns(), 2, "the key and $row_kind");
    let keys = keys
        .column(0)
        .as_any()
        .downcast_ref::<arrow_array::Int32Array>()
        .unwrap();
    assert_eq!(keys.values().to_vec(), vec![2, 3]);
    assert_eq!(op.num_groups(), 1, "probing adds no group");
    assert_eq!(
        opt_rows(op.process_pending().unwrap()),
        strs(&[
            "-U[1, 5, 5]",
            "+U[1, 6, 3]",
            "+I[2, 1, 1]",
            "-U[2, 1, 1]",
            "+U[2, 4, 2]",
            "+I[3, NULL, NULL]"
        ])
    );
    assert!(
        op.process_pending().is_err(),
        "the pending batch was consumed"
    );
}

/// The keys a probe names (an Int32 key).
fn probed(op: &mut GroupAggOperator, keys: std::ops::Range<i32>) -> Vec<i32> {
    let rows: Vec<(i8, i32, Option<i64>)> = keys.map(|k| (I, k, Some(1))).collect();
    let named = op.probe(kind_rows(&rows, true)).unwrap();
    let named = named.map_or(Vec::new(), |b| {
        b.column(0)
            .as_any()
            .downcast_ref::<arrow_array::Int32Array>()
            .unwrap()
            .values()
            .to_vec()
    });
    op.process_pending().unwrap();
    named
}

#[test]
fn only_groups_written_to_the_backend_or_restored_are_read() {
    let mut op = bound(Emission::Immediate);
    assert!(
        probed(&mut op, 0..1_000).is_empty(),
        "nothing restored, nothing evicted: the backend holds nothing"
    );
    let mut backend = Backend::default();
    backend.write(op.evict_all().unwrap());
    // 500 keys written at the eviction, 500 never written.
    let named = probed(&mut op, 500..1_500);
    assert!(
        (500..1_000).all(|k| named.contains(&k)),
        "every written key is read"
    );
    let never_written = named.iter().filter(|&&k| k >= 1_000).count();
    assert!(
        never_written < 25,
        "{never_written} of 500 never-written keys read"
    );
    // Written at a checkpoint, then evicted: read again.
    backend.write(op.state_changes().unwrap());
    op.state_changes_written();
    backend.write(op.evict_all().unwrap());
    let named = probed(&mut op, 1_200..1_300);
    assert_eq!(named, (1_200..1_300).collect::<Vec<_>>());

    let mut restored = bound(Emission::Immediate);
    restored.backend_restored();
    assert_eq!(probed(&mut restored, 0..10), (0..10).collect::<Vec<_>>());
}

#[test]
fn an_eviction_keeps_the_groups_changed_most_often() {
    let mut op = bound(Emission::Immediate);
    // Keys 0..10 ten times each, keys 100..1,100 once.
    for _ in 0..10 {
        let hot: Vec<(i8, i32, Option<i64>)> = (0..10).map(|k| (I, k, Some(1))).collect();
        op.process(&kind_rows(&hot, true)).unwrap();
    }
    let cold: Vec<(i8, i32, Option<i64>)> = (100..1_100).map(|k| (I, k, Some(1))).collect();
    op.process(&kind_rows(&cold, true)).unwrap();
    let mut backend = Backend::default();
    backend.write(op.evict_all().unwrap());
    assert_eq!(op.num_groups(), 10, "the ten hot groups stay cached");
    assert_eq!(backend.rows.len(), 1_010, "every group was written back");
    // The hot groups are not read again, and continue where they were.
    assert_eq!(probed(&mut op, 0..10), Vec::<i32>::new());
    assert!(
        op.state_changes().unwrap().is_some(),
        "the fold changed the kept groups"
    );
    let mut unbounded = bound(Emission::Immediate);
    for _ in 0..11 {
        let hot: Vec<(i8, i32, Option<i64>)> = (0..10).map(|k| (I, k, Some(1))).collect();
        unbounded.process(&kind_rows(&hot, true)).unwrap();
    }
    let table = |changes: RecordBatch| {
        let mut rows = rows(&changes);
        rows.sort();
        rows
    };
    assert_eq!(
        table(op.state_changes().unwrap().unwrap()),
        table(unbounded.state_changes().unwrap().unwrap())
    );
    // Their count halves at each eviction: once they stop changing, they go.
    let mut evictions = 0;
    while evictions == 0 || op.num_groups() > 0 {
        cached_step(&mut op, &mut backend, &kind_rows(&cold, true), false);
        backend.write(op.evict_all().unwrap());
        evictions += 1;
        assert!(evictions <= 4, "{} groups still kept", op.num_groups());
    }
    assert_eq!(evictions, 3, "6 touches: kept at 6 and 3, evicted at 1");
}

#[test]
fn write_times_travel_with_the_state_so_ttl_expires_as_in_flink() {
    let plan = || {
        let mut p = sum_avg_plan(Emission::Immediate);
        p.state_ttl_ms = 1_000;
        p
    };
    let mut op = GroupAggOperator::new(plan()).unwrap();
    op.bind_flink_state(&flink_acc_types()).unwrap();
    op.set_time(0).unwrap();
    op.process(&kind_rows(&[(I, 1, Some(5))], true)).unwrap();
    op.set_time(600).unwrap();
    op.process(&kind_rows(&[(I, 2, Some(7))], true)).unwrap();
    // Evicted at 700: the backend gets each group's write time.
    op.set_time(700).unwrap();
    let mut backend = Backend::default();
    let changes = op.evict_all().unwrap().unwrap();
    assert!(changes.schema().index_of("$written").is_ok());
    backend.write(Some(changes));
    // At 1,200 key 1 (written at 0) has expired, key 2 (written at 600) has not.
    op.set_time(1_200).unwrap();
    let batch = kind_rows(&[(I, 1, Some(1)), (I, 2, Some(1))], true);
    if let Some(keys) = op.probe(batch).unwrap() {
        op.load_state(&backend.read(&keys).unwrap()).unwrap();
    }
    assert_eq!(
        opt_rows(op.process_pending().unwrap()),
        strs(&["+I[1, 1, 1]", "-U[2, 7, 7]", "+U[2, 8, 4]"])
    );
}
