//! The fused JIT loop against the static per-call kernels (and, with
//! `--features datafusion-compare`, DataFusion's group accumulators), on
//! the same bundles in one run: the call lists of
//! `aggforge_benches::call_lists` (1, 2, 4, 8 calls over one BIGINT
//! column, 1/8 NULL, and Nexmark q17's list with three FILTERed counts),
//! at 64, 1,024, 16,384 and 1,000,000 keys (state from a few KiB in L1
//! past the core's 2 MiB L2), given group ids and as the whole local phase
//! (key lookup, folds, partials emitted: `process` then `flush` of the
//! runtime's operator); then the compile time of each list's loop; then
//! retracting input (every fourth row -U) at 64 and 1,024 keys, given ids
//! and as the local phase, for the list of calls that fold retractions
//! (COUNT(*), COUNT, SUM, AVG) and q17's (MIN and MAX keep their static
//! multisets there).
//!
//! Bench ids: `jit_<keys>/<path>/<list>`, paths `static_given_ids`,
//! `jit_given_ids`, `datafusion_given_ids`, `static_local_phase`,
//! `jit_local_phase`; `jit_compile/<list>`; `jit_retracting_<keys>/<path>/
//! <list>`. One iteration is one 4096-row bundle; throughput is in rows.

use std::time::Duration;

use aggforge_benches::call_lists::{
    agg_calls, arg_type, bundles, lists, plan, retracting_lists, row_kinds, with_row_kinds,
    ListBundle, ListCall, PRICE,
};
use aggforge_benches::data::{BATCH_ROWS, FEW_KEYS, MANY_KEYS};
use aggforge_benches::ours;
use aggforge_runtime::accumulator::{BatchUpdate, GroupAccumulator};
use aggforge_runtime::jit::{compile_uncached, Fused};
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::types::{InputMode, JitMode, Phase, SqlType};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};

const SEED: u64 = 0x0017_F05E;

/// The registry's local-phase accumulators for `list` over `input`, sized
/// to `groups`.
fn accumulators(
    list: &[ListCall],
    input: InputMode,
    groups: usize,
) -> Vec<Box<dyn GroupAccumulator>> {
    let bigint = SqlType::of("BIGINT");
    list.iter()
        .map(|c| {
            let arg = (c.function != "COUNT_STAR").then_some(&bigint);
            let mut acc =
                ours::accumulator_over(c.function, arg, Phase::Local, input).expect("admitted");
            acc.resize(groups);
            acc
        })
        .collect()
}

/// Per bundle, per call of `list`: its argument columns and FILTER.
type CallInputs = (Vec<Vec<Vec<ArrayRef>>>, Vec<Vec<Option<BooleanArray>>>);

fn call_inputs(input: &[ListBundle], list: &[ListCall]) -> CallInputs {
    let args = input
        .iter()
        .map(|b| {
            list.iter()
                .map(|c| match c.function {
                    "COUNT_STAR" => vec![],
                    _ => vec![b.column(PRICE).clone()],
                })
                .collect()
        })
        .collect();
    let filters = input
        .iter()
        .map(|b| {
            list.iter()
                .map(|c| c.filter.map(|f| as_filter(b.column(f))))
                .collect()
        })
        .collect();
    (args, filters)
}

/// `static_given_ids/<name>` and `jit_given_ids/<name>`: the per-call
/// kernels and the fused loop over the same bundles and group ids, over
/// `input` (with `kinds` as every bundle's row kinds when retracting).
fn given_ids(
    group: &mut BenchmarkGroup<'_, WallTime>,
    (name, list): (&str, &[ListCall]),
    (bundles, keys): (&[ListBundle], usize),
    input: InputMode,
    kinds: Option<&[i8]>,
) {
    let (args, filters) = call_inputs(bundles, list);
    let mut accs = accumulators(list, input, keys);
    // Call `c`'s static kernel over bundle `n`.
    let kernel = |acc: &mut Box<dyn GroupAccumulator>, n: usize, c: usize| {
        acc.update(&BatchUpdate {
            args: &args[n][c],
            group_ids: &bundles[n].grouping.group_ids,
            filter: filters[n][c].as_ref(),
            row_kinds: kinds,
            distinct: None,
        })
        .expect("update");
    };
    let mut next = 0;
    group.bench_function(format!("static_given_ids/{name}"), |b| {
        b.iter(|| {
            for (c, acc) in accs.iter_mut().enumerate() {
                kernel(acc, next, c);
            }
            next = (next + 1) % bundles.len();
        })
    });

    let calls = agg_calls(list);
    let arg_types: Vec<_> = calls
        .iter()
        .map(|c| c.args.iter().map(|_| arg_type()).collect())
        .collect();
    let mut accs = accumulators(list, input, keys);
    let retracting = input == InputMode::Retracting;
    let planned = Fused::plan(JitMode::On, &calls, &accs, &arg_types, retracting);
    let mut fused = planned.fused.expect("the list fuses");
    // Calls the loop does not cover (MIN/MAX over retracting input) run
    // their static kernels in the same iteration, as in the operator.
    let uncovered: Vec<usize> = (0..list.len()).filter(|&c| !fused.covered()[c]).collect();
    group.bench_function(format!("jit_given_ids/{name}"), |b| {
        b.iter(|| {
            let ids = &bundles[next].grouping.group_ids;
            fused
                .update(&mut accs, (&args[next], &filters[next]), kinds, ids)
                .expect("fused update");
            for &c in &uncovered {
                kernel(&mut accs[c], next, c);
            }
            next = (next + 1) % bundles.len();
        })
    });
}

/// `static_local_phase/<name>` and `jit_local_phase/<name>`: the runtime's
/// local-phase operator over `batches` (key lookup, folds, partials).
fn local_phase(
    group: &mut BenchmarkGroup<'_, WallTime>,
    (name, list): (&str, &[ListCall]),
    batches: &[RecordBatch],
    input: InputMode,
) {
    let mut next = 0;
    for (path, jit) in [
        ("static_local_phase", JitMode::Off),
        ("jit_local_phase", JitMode::On),
    ] {
        let mut agg_plan = plan(list, Phase::Local, jit);
        agg_plan.input = input;
        let mut op = GroupAggOperator::new(agg_plan).expect("plan");
        group.bench_function(format!("{path}/{name}"), |b| {
            b.iter(|| {
                op.process(&batches[next]).expect("process");
                let out = op.flush().expect("flush").expect("partials");
                assert!(out.num_rows() > 0);
                next = (next + 1) % batches.len();
            })
        });
    }
}

fn as_filter(column: &ArrayRef) -> BooleanArray {
    column
        .as_any()
        .downcast_ref::<BooleanArray>()
        .expect("FILTER columns are Boolean")
        .clone()
}

fn bench(c: &mut Criterion) {
    for (label, keys, count) in [
        ("64keys", FEW_KEYS, 8),
        ("1Kkeys", 1_024, 8),
        ("16Kkeys", 16_384, 8),
        ("1Mkeys", MANY_KEYS, 32),
    ] {
        let input = bundles(keys, count, SEED);
        let mut group = c.benchmark_group(format!("jit_{label}"));
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(20)
            .throughput(Throughput::Elements(BATCH_ROWS as u64));
        let batches: Vec<RecordBatch> = input.iter().map(|b| b.batch.clone()).collect();
        for (name, list) in lists() {
            let insert_only = InputMode::InsertOnly;
            given_ids(&mut group, (name, &list), (&input, keys), insert_only, None);

            #[cfg(feature = "datafusion-compare")]
            {
                use aggforge_benches::datafusion_compare as df;
                use aggforge_benches::general::Function;
                let (_, filters) = call_inputs(&input, &list);
                let mut next = 0;
                let function = |f: &str| match f {
                    "MIN" => Function::Min,
                    "MAX" => Function::Max,
                    "SUM" | "SUM0" => Function::Sum,
                    "AVG" => Function::Avg,
                    _ => Function::Count,
                };
                let mut dfs: Vec<_> = list
                    .iter()
                    .map(|c| {
                        df::groups_accumulator(function(c.function), &arg_type())
                            .expect("df")
                            .0
                    })
                    .collect();
                // COUNT(*) counts the non-NULL key column; AVG's argument is
                // cast to DataFusion's input type once, outside the loop.
                let df_args: Vec<Vec<Vec<ArrayRef>>> = input
                    .iter()
                    .map(|b| {
                        list.iter()
                            .map(|c| {
                                let column = match c.function {
                                    "COUNT_STAR" => b.column(0).clone(),
                                    _ => b.column(PRICE).clone(),
                                };
                                df::coerce(function(c.function), &[column]).expect("coerce")
                            })
                            .collect()
                    })
                    .collect();
                group.bench_function(format!("datafusion_given_ids/{name}"), |b| {
                    b.iter(|| {
                        let ids = &input[next].grouping.group_indices;
                        for (c, acc) in dfs.iter_mut().enumerate() {
                            df::update_filtered(
                                acc.as_mut(),
                                &df_args[next][c],
                                ids,
                                filters[next][c].as_ref(),
                                keys,
                            )
                            .expect("df");
                        }
                        next = (next + 1) % input.len();
                    })
                });
            }

            local_phase(&mut group, (name, &list), &batches, insert_only);
        }
        group.finish();
    }

    let mut group = c.benchmark_group("jit_compile");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(2));
    for (name, list) in lists() {
        let calls = agg_calls(&list);
        let arg_types: Vec<_> = calls
            .iter()
            .map(|c| c.args.iter().map(|_| arg_type()).collect())
            .collect();
        let accs = accumulators(&list, InputMode::InsertOnly, 1);
        let fused = Fused::plan(JitMode::On, &calls, &accs, &arg_types, false)
            .fused
            .expect("the list fuses");
        group.bench_function(name, |b| {
            b.iter(|| {
                compile_uncached(fused.shape())
                    .expect("compiles")
                    .code_bytes
            })
        });
    }
    group.finish();
}

/// Retracting input: the fused loop reads each row's kind and applies the
/// fold or the retraction; the static kernels take their signed paths.
fn retracting(c: &mut Criterion) {
    for (label, keys) in [("64keys", FEW_KEYS), ("1Kkeys", 1_024)] {
        let input = bundles(keys, 8, SEED);
        let kinds = row_kinds(BATCH_ROWS);
        let batches: Vec<RecordBatch> = input
            .iter()
            .map(|b| with_row_kinds(&b.batch, &kinds))
            .collect();
        let mut group = c.benchmark_group(format!("jit_retracting_{label}"));
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(20)
            .throughput(Throughput::Elements(BATCH_ROWS as u64));
        let retracting = InputMode::Retracting;
        for (name, list) in retracting_lists() {
            let list = (name, &list[..]);
            given_ids(&mut group, list, (&input, keys), retracting, Some(&kinds));
            local_phase(&mut group, list, &batches, retracting);
        }
        group.finish();
    }
}

criterion_group!(benches, bench, retracting);
criterion_main!(benches);
