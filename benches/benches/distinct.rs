//! COUNT(DISTINCT x) over BIGINT given group ids: the typed DISTINCT view
//! (`COUNT DISTINCT<BIGINT>/insert_only`) against the scalar-keyed general
//! path (each value read into a boxed `Scalar` and counted in one
//! `HashMap<Scalar, i64>` per group, as a generic engine keeps a distinct
//! set), at 4 and at 4,096 distinct values per group. 64 groups, 4,096-row
//! batches; the views are filled first, so the measured batches probe
//! values already held (the steady state of a long-running group).
//!
//! Bench ids are `COUNT DISTINCT<BIGINT>/<path>/<values>values`; one
//! iteration is one batch, throughput is in rows. With `--features
//! datafusion-compare`, `datafusion/...` runs DataFusion's own
//! `COUNT(DISTINCT x)` (the `count` UDAF with `is_distinct`, through the
//! group accumulator DataFusion's aggregate operator would use) on the same
//! batches.
//!
//! `COUNT DISTINCT<BIGINT> x4 FILTER` is Nexmark q15's shape: four
//! COUNT(DISTINCT x) calls over one column, one unfiltered and three with
//! FILTERs that split the rows in three, either sharing one view (as
//! Flink's DistinctInfo, one probe per row) or each on its own view.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use aggforge_benches::general::Scalar;
use aggforge_runtime::accumulator::{BatchUpdate, GroupAccumulator};
use aggforge_runtime::registry;
use aggforge_runtime::types::{InputMode, Phase, SqlType};
use arrow_array::{ArrayRef, BooleanArray, Int64Array};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};

const GROUPS: usize = 64;
const ROWS: usize = 4096;
const BATCHES: usize = 16;

/// `BATCHES` batches of (group ids, values): value `v` of group `g` drawn
/// from `values` per group by a fixed xorshift stream.
fn batches(values: u64) -> Vec<(Vec<u32>, ArrayRef)> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..BATCHES)
        .map(|_| {
            let mut groups = Vec::with_capacity(ROWS);
            let mut column = Vec::with_capacity(ROWS);
            for _ in 0..ROWS {
                let r = next();
                groups.push((r % GROUPS as u64) as u32);
                column.push(((r >> 16) % values) as i64 * 7919);
            }
            (groups, Arc::new(Int64Array::from(column)) as ArrayRef)
        })
        .collect()
}

/// Every value of every group, so that later batches only probe.
fn filling(values: u64) -> Vec<(Vec<u32>, ArrayRef)> {
    let all: Vec<(u32, i64)> = (0..GROUPS as u32)
        .flat_map(|g| (0..values).map(move |v| (g, v as i64 * 7919)))
        .collect();
    all.chunks(ROWS)
        .map(|chunk| {
            (
                chunk.iter().map(|c| c.0).collect(),
                Arc::new(Int64Array::from(
                    chunk.iter().map(|c| c.1).collect::<Vec<_>>(),
                )) as ArrayRef,
            )
        })
        .collect()
}

fn ours() -> Box<dyn GroupAccumulator> {
    let ty = SqlType::of("BIGINT");
    let admission = registry::lookup(
        "COUNT",
        Some(&ty),
        Phase::Single,
        InputMode::InsertOnly,
        true,
    )
    .expect("COUNT DISTINCT<BIGINT> is specialized");
    let mut acc = admission.create(Some(&ty)).expect("create");
    acc.resize(GROUPS);
    acc
}

fn update(acc: &mut dyn GroupAccumulator, (groups, values): &(Vec<u32>, ArrayRef)) {
    let args = [values.clone()];
    acc.update(&BatchUpdate {
        args: &args,
        group_ids: groups,
        filter: None,
        row_kinds: None,
        distinct: None,
    })
    .expect("update");
}

/// The general path: boxed scalars in one map per group, and a count.
struct General {
    sets: Vec<HashMap<Scalar, i64>>,
    counts: Vec<i64>,
}

impl General {
    fn new() -> General {
        General {
            sets: (0..GROUPS).map(|_| HashMap::new()).collect(),
            counts: vec![0; GROUPS],
        }
    }

    fn update(&mut self, (groups, values): &(Vec<u32>, ArrayRef)) {
        for (row, &g) in groups.iter().enumerate() {
            let value = Scalar::from_array(values, row).expect("scalar");
            if value.is_null() {
                continue;
            }
            let seen = self.sets[g as usize].entry(value).or_insert(0);
            *seen += 1;
            if *seen == 1 {
                self.counts[g as usize] += 1;
            }
        }
    }
}

/// Rows per iteration as throughput; short runs, as both groups use.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .throughput(Throughput::Elements(ROWS as u64))
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
}

fn distinct(c: &mut Criterion) {
    let mut group = c.benchmark_group("COUNT DISTINCT<BIGINT>");
    configure(&mut group);
    for values in [4u64, 4096] {
        let input = batches(values);
        let mut acc = ours();
        let mut general = General::new();
        for batch in filling(values).iter().chain(&input) {
            update(acc.as_mut(), batch);
            general.update(batch);
        }
        let mut next = 0;
        group.bench_function(format!("typed_view/{values}values"), |b| {
            b.iter(|| {
                update(acc.as_mut(), &input[next]);
                next = (next + 1) % input.len();
            })
        });
        let mut next = 0;
        group.bench_function(format!("scalar_general/{values}values"), |b| {
            b.iter(|| {
                general.update(&input[next]);
                next = (next + 1) % input.len();
            })
        });
        #[cfg(feature = "datafusion-compare")]
        datafusion_count_distinct(&mut group, values, &input, &general.counts);
        // Both paths saw the same rows: the same counts.
        let all: Vec<u32> = (0..GROUPS as u32).collect();
        let ours_counts = acc.evaluate(&all).expect("evaluate");
        let ours_counts = ours_counts
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("COUNT is BIGINT");
        assert_eq!(ours_counts.values().to_vec(), general.counts);
    }
    group.finish();
}

/// DataFusion's COUNT(DISTINCT x) over the same batches (filled first, as
/// ours), checked against the general path's counts after the run.
#[cfg(feature = "datafusion-compare")]
fn datafusion_count_distinct(
    group: &mut BenchmarkGroup<'_, WallTime>,
    values: u64,
    input: &[(Vec<u32>, ArrayRef)],
    counts: &[i64],
) {
    use aggforge_benches::datafusion_compare as df;
    use aggforge_benches::general::Function;
    use arrow_schema::DataType;
    let (mut acc, native) = df::distinct_groups_accumulator(Function::Count, &DataType::Int64)
        .expect("DataFusion COUNT(DISTINCT)");
    let indices = |groups: &[u32]| groups.iter().map(|&g| g as usize).collect::<Vec<_>>();
    let input: Vec<(Vec<usize>, ArrayRef)> =
        input.iter().map(|(g, v)| (indices(g), v.clone())).collect();
    for (groups, values) in filling(values).iter() {
        df::update(
            acc.as_mut(),
            std::slice::from_ref(values),
            &indices(groups),
            GROUPS,
        )
        .expect("update");
    }
    for (groups, values) in &input {
        df::update(acc.as_mut(), std::slice::from_ref(values), groups, GROUPS).expect("update");
    }
    let path = if native {
        "datafusion"
    } else {
        "datafusion_adapter"
    };
    let mut next = 0;
    group.bench_function(format!("{path}/{values}values"), |b| {
        b.iter(|| {
            let (groups, values) = &input[next];
            df::update(acc.as_mut(), std::slice::from_ref(values), groups, GROUPS).expect("update");
            next = (next + 1) % input.len();
        })
    });
    let result = df::evaluate_all(acc.as_mut()).expect("evaluate");
    let result = result
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("COUNT is BIGINT");
    assert_eq!(result.values().to_vec(), counts);
}

/// Four calls over `values`' column: one without FILTER, three with the
/// FILTERs `rank` of `ranks` (row `i` in rank `i % 3`).
struct FilteredCalls {
    accs: Vec<Box<dyn GroupAccumulator>>,
    ranks: Vec<BooleanArray>,
    shared: bool,
}

impl FilteredCalls {
    fn new(shared: bool) -> FilteredCalls {
        let mut accs: Vec<Box<dyn GroupAccumulator>> = (0..4).map(|_| ours()).collect();
        if shared {
            let view = accs[0].new_distinct_view(4).expect("a DISTINCT view");
            for (c, acc) in accs.iter_mut().enumerate() {
                assert!(acc.join_distinct_view(&view, c), "call {c} joins");
            }
        }
        let ranks = (0..3)
            .map(|r| (0..ROWS).map(|i| Some(i % 3 == r)).collect())
            .collect();
        FilteredCalls {
            accs,
            ranks,
            shared,
        }
    }

    fn update(&mut self, (groups, values): &(Vec<u32>, ArrayRef)) {
        let args = [values.clone()];
        let ranks: Vec<BooleanArray> = self
            .ranks
            .iter()
            .map(|r| r.slice(0, groups.len()))
            .collect();
        let updates: Vec<BatchUpdate<'_>> = (0..4)
            .map(|c| BatchUpdate {
                args: &args,
                group_ids: groups,
                filter: (c > 0).then(|| &ranks[c - 1]),
                row_kinds: None,
                distinct: None,
            })
            .collect();
        let rows = if self.shared {
            Some(self.accs[0].distinct_pass(&updates).expect("view pass"))
        } else {
            None
        };
        for (c, acc) in self.accs.iter_mut().enumerate() {
            let update = BatchUpdate {
                distinct: rows.as_ref().map(|r| &r[c]),
                ..updates[c]
            };
            acc.update(&update).expect("update");
        }
    }

    fn counts(&self) -> Vec<Vec<i64>> {
        let all: Vec<u32> = (0..GROUPS as u32).collect();
        self.accs
            .iter()
            .map(|acc| {
                let counts = acc.evaluate(&all).expect("evaluate");
                let counts = counts
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .expect("BIGINT");
                counts.values().to_vec()
            })
            .collect()
    }
}

fn shared_view(c: &mut Criterion) {
    let mut group = c.benchmark_group("COUNT DISTINCT<BIGINT> x4 FILTER");
    configure(&mut group);
    for values in [4u64, 4096] {
        let input = batches(values);
        let mut shared = FilteredCalls::new(true);
        let mut separate = FilteredCalls::new(false);
        for batch in filling(values).iter().chain(&input) {
            shared.update(batch);
            separate.update(batch);
        }
        for (path, calls) in [
            ("shared_view", &mut shared),
            ("separate_views", &mut separate),
        ] {
            let mut next = 0;
            group.bench_function(format!("{path}/{values}values"), |b| {
                b.iter(|| {
                    calls.update(&input[next]);
                    next = (next + 1) % input.len();
                })
            });
        }
        assert_eq!(shared.counts(), separate.counts());
    }
    group.finish();
}

criterion_group!(benches, distinct, shared_view);
criterion_main!(benches);
