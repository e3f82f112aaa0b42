//! The headline figures: MIN+MAX over INT, DATE, TIME(3) and BOOLEAN at
//! 4096-row bundles over 64 BIGINT keys, 1/8 NULL:
//! (a) aggforge's accumulators given group ids, (b) the whole local-phase
//! bundle update (group table, then MIN and MAX; with and without the
//! emission of partials; and the runtime's local operator), (c) the general boxed
//! path, (d) DataFusion's own accumulators (feature `datafusion-compare`);
//! then SUM, COUNT and AVG over BIGINT and DECIMAL(20, 3).
//!
//! Bench ids are `<group>/<path>/<TYPE>`, so `-- minmax` or `-- INT`
//! filters. Every iteration folds one 4096-row bundle (cycling through 8
//! seeded bundles); throughput is in rows.

use std::hint::black_box;
use std::time::Duration;

use aggforge_benches::data::{Stream, BATCH_ROWS, FEW_KEYS};
use aggforge_benches::general::{Call, Function, GeneralAggregator, GeneralByGroupId};
use aggforge_benches::ours::{self, LocalOperator, LocalPhase, TableOnly};
use aggforge_runtime::types::{Phase, SqlType};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};

/// Distinct bundles each bench cycles through.
const BUNDLES: usize = 8;
const SEED: u64 = 0xA66F_0A6E;

fn type_label(ty: &SqlType) -> String {
    // Labels predate the runtime's printing (no space after the comma,
    // TIME with its precision); kept so saved baselines still compare.
    match (ty.family(), ty.precision(), ty.scale()) {
        ("DECIMAL", Some(precision), Some(scale)) => format!("DECIMAL({precision},{scale})"),
        ("TIME", Some(precision), _) => format!("TIME({precision})"),
        _ => ty.to_string(),
    }
}

fn configure<M: criterion::measurement::Measurement>(group: &mut BenchmarkGroup<'_, M>) {
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .throughput(Throughput::Elements(BATCH_ROWS as u64));
}

/// Runs `step` on bundle 0, 1, ..., BUNDLES-1, 0, ... one per iteration.
fn cycle(mut step: impl FnMut(usize)) -> impl FnMut() {
    let mut next = 0usize;
    move || {
        step(next);
        next = (next + 1) % BUNDLES;
    }
}

fn minmax(c: &mut Criterion) {
    let types = [
        SqlType::of("INT"),
        SqlType::of("DATE"),
        SqlType::of("TIME(3)"),
        SqlType::of("BOOLEAN"),
    ];
    let mut group = c.benchmark_group("minmax_64keys");
    configure(&mut group);
    for ty in types {
        let label = type_label(&ty);
        let stream = Stream::new(&[ty], FEW_KEYS, BUNDLES, SEED);
        let (g, cols) = (&stream.groupings, &stream.columns);

        // (a) the generated accumulators alone, given group ids.
        let mut min = ours::accumulator("MIN", Some(&ty), Phase::Local).expect("MIN admitted");
        let mut max = ours::accumulator("MAX", Some(&ty), Phase::Local).expect("MAX admitted");
        group.bench_function(format!("ours_update_given_ids/{label}"), |b| {
            b.iter(cycle(|i| {
                ours::update(min.as_mut(), &cols[i], &g[i].group_ids, FEW_KEYS).expect("MIN");
                ours::update(max.as_mut(), &cols[i], &g[i].group_ids, FEW_KEYS).expect("MAX");
            }))
        });

        // (b) the local-phase bundle update: group table, then MIN, MAX.
        let mut local = LocalPhase::new(SqlType::of("BIGINT"), &[("MIN", ty, 0), ("MAX", ty, 0)])
            .expect("local phase");
        group.bench_function(format!("ours_local_phase/{label}"), |b| {
            b.iter(cycle(|i| {
                black_box(local.bundle(&g[i].keys, &cols[i]).expect("bundle"));
            }))
        });
        // The same, with the local phase's emission of keys and partials.
        group.bench_function(format!("ours_local_phase_emit/{label}"), |b| {
            b.iter(cycle(|i| {
                local.bundle(&g[i].keys, &cols[i]).expect("bundle");
                black_box(local.partials().expect("partials"));
            }))
        });

        // The runtime's local-phase operator: process + flush per bundle
        // (input checks, table, MIN, MAX, memory accounting, emission).
        let mut operator = LocalOperator::new(SqlType::of("BIGINT"), &[("MIN", ty), ("MAX", ty)])
            .expect("operator");
        let batches: Vec<_> = (0..BUNDLES)
            .map(|i| {
                operator
                    .batch(&g[i].keys, &[cols[i][0].clone(), cols[i][0].clone()])
                    .expect("batch")
            })
            .collect();
        group.bench_function(format!("ours_local_operator/{label}"), |b| {
            b.iter(cycle(|i| {
                black_box(operator.bundle(&batches[i]).expect("operator bundle"));
            }))
        });

        // (c) the general path: boxed scalars, boxed accumulators.
        let calls = vec![
            Call {
                function: Function::Min,
                arg: 0,
            },
            Call {
                function: Function::Max,
                arg: 0,
            },
        ];
        let mut general_ids = GeneralByGroupId::new(calls.clone());
        group.bench_function(format!("general_given_ids/{label}"), |b| {
            b.iter(cycle(|i| {
                general_ids
                    .update(&g[i].group_ids, &cols[i])
                    .expect("general");
            }))
        });
        let mut general_keys = GeneralAggregator::new(calls);
        group.bench_function(format!("general_local_phase/{label}"), |b| {
            b.iter(cycle(|i| {
                general_keys.clear();
                general_keys.update(&g[i].keys, &cols[i]).expect("general");
                black_box(general_keys.len());
            }))
        });

        // (d) DataFusion's MIN and MAX group accumulators.
        #[cfg(feature = "datafusion-compare")]
        {
            use aggforge_benches::data::arrow_type;
            use aggforge_benches::datafusion_compare as df;
            let (mut dmin, _) =
                df::groups_accumulator(Function::Min, &arrow_type(&ty)).expect("df");
            let (mut dmax, _) =
                df::groups_accumulator(Function::Max, &arrow_type(&ty)).expect("df");
            group.bench_function(format!("datafusion_given_ids/{label}"), |b| {
                b.iter(cycle(|i| {
                    df::update(dmin.as_mut(), &cols[i], &g[i].group_indices, FEW_KEYS).expect("df");
                    df::update(dmax.as_mut(), &cols[i], &g[i].group_indices, FEW_KEYS).expect("df");
                }))
            });
        }
    }
    // The group table alone, for the split of (b).
    let stream = Stream::new(&[], FEW_KEYS, BUNDLES, SEED);
    let mut table = TableOnly::new(SqlType::of("BIGINT")).expect("table");
    group.bench_function("table_only/BIGINT_KEY", |b| {
        b.iter(cycle(|i| {
            black_box(table.bundle(&stream.groupings[i].keys).expect("intern"));
        }))
    });
    group.finish();
}

fn sum_count_avg(c: &mut Criterion) {
    let types = [SqlType::of("BIGINT"), SqlType::of("DECIMAL(20, 3)")];
    let mut group = c.benchmark_group("sum_count_avg_64keys");
    configure(&mut group);
    for ty in types {
        let label = type_label(&ty);
        let stream = Stream::new(&[ty], FEW_KEYS, BUNDLES, SEED);
        let (g, cols) = (&stream.groupings, &stream.columns);
        for (name, function) in [
            ("SUM", Function::Sum),
            ("COUNT", Function::Count),
            ("AVG", Function::Avg),
        ] {
            let mut acc = ours::accumulator(name, Some(&ty), Phase::Local).expect("admitted");
            group.bench_function(format!("ours_update_given_ids/{name}/{label}"), |b| {
                b.iter(cycle(|i| {
                    ours::update(acc.as_mut(), &cols[i], &g[i].group_ids, FEW_KEYS).expect(name);
                }))
            });
            let mut general = GeneralByGroupId::new(vec![Call { function, arg: 0 }]);
            group.bench_function(format!("general_given_ids/{name}/{label}"), |b| {
                b.iter(cycle(|i| {
                    general.update(&g[i].group_ids, &cols[i]).expect("general");
                }))
            });
            #[cfg(feature = "datafusion-compare")]
            {
                use aggforge_benches::data::arrow_type;
                use aggforge_benches::datafusion_compare as df;
                let (mut dacc, _) = df::groups_accumulator(function, &arrow_type(&ty)).expect("df");
                // AVG over BIGINT: DataFusion's planner casts to DOUBLE first;
                // the cast is done here, outside the timing.
                let dcols: Vec<_> = cols
                    .iter()
                    .map(|c| df::coerce(function, c).expect("coerce"))
                    .collect();
                group.bench_function(format!("datafusion_given_ids/{name}/{label}"), |b| {
                    b.iter(cycle(|i| {
                        df::update(dacc.as_mut(), &dcols[i], &g[i].group_indices, FEW_KEYS)
                            .expect("df");
                    }))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, minmax, sum_count_avg);
criterion_main!(benches);
