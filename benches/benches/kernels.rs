//! The per-specialization kernel suite: for every entry of
//! `registry::all()`, the accumulator's `update` given group ids (and, for
//! specializations with a global phase, `merge` of local partials), on
//! 4096-row bundles over 64 keys and over 1,000,000 keys (group ids drawn
//! uniformly from 1M groups, state for all of them). Retracting
//! specializations get bundles where every fourth row is a -U of the row
//! before it. For the insert-only FIRST_VALUE, LAST_VALUE and LISTAGG
//! specializations the general boxed path (`general.rs`) runs on the same
//! bundles (op `general`). With `--features datafusion-compare`,
//! DataFusion's own accumulator runs on the same bundles for MIN, MAX, SUM,
//! COUNT and AVG, and for FIRST_VALUE, LAST_VALUE (`first_value(x) IGNORE
//! NULLS`, `last_value(x) IGNORE NULLS`) and LISTAGG (`string_agg(x, ',')`)
//! over insert-only input (op `datafusion`, or `datafusion_adapter` where
//! DataFusion runs its row accumulator per group).
//!
//! Bench ids are `<FUNCTION>/<specialization>/<op>/<keys>`, e.g.
//! `MIN/MIN<INT>/insert_only/update/64keys`, so `-- MIN` filters by
//! function and `-- '<DATE>'` by type. One iteration is one bundle;
//! throughput is in rows.

use std::time::Duration;

use aggforge_benches::data::{type_for_row, BATCH_ROWS, FEW_KEYS, MANY_KEYS};
use aggforge_benches::general::{Call, Function, GeneralByGroupId};
use aggforge_benches::kernel_input::{bundles, fresh, partials_of, Bundle};
use aggforge_runtime::registry::{self, Admission};
#[cfg(feature = "datafusion-compare")]
use aggforge_runtime::types::SqlType;
use aggforge_runtime::types::{InputMode, Phase};
#[cfg(feature = "datafusion-compare")]
use arrow_array::ArrayRef;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};

/// One key setting: label, number of keys, bundles to cycle through.
const KEY_SETTINGS: [(&str, usize, usize); 2] =
    [("64keys", FEW_KEYS, 4), ("1Mkeys", MANY_KEYS, 64)];

fn bench_admission<M: criterion::measurement::Measurement>(
    group: &mut BenchmarkGroup<'_, M>,
    admission: &Admission,
    skipped: &mut Vec<String>,
) {
    let arg = match admission.type_row {
        None => None,
        Some(row) => match type_for_row(row) {
            Some(ty) => Some(ty),
            None => {
                skipped.push(format!("{}: no bench type for row {row}", admission.name));
                return;
            }
        },
    };
    for (keys_label, num_keys, count) in KEY_SETTINGS {
        let inputs = match bundles(admission, arg, num_keys, count) {
            Ok(inputs) => inputs,
            Err(e) => {
                skipped.push(format!("{} {keys_label}: data: {e}", admission.name));
                continue;
            }
        };
        let runs_raw_rows =
            admission.phases.contains(&Phase::Single) || admission.phases.contains(&Phase::Local);
        if runs_raw_rows {
            let phase = if admission.phases.contains(&Phase::Single) {
                Phase::Single
            } else {
                Phase::Local
            };
            match fresh(admission, arg.as_ref(), phase, num_keys).and_then(|mut acc| {
                acc.update(&inputs[0].update()).map_err(|e| e.to_string())?;
                Ok(acc)
            }) {
                Ok(mut acc) => {
                    group.bench_function(format!("{}/update/{keys_label}", admission.name), |b| {
                        let mut next = 0;
                        b.iter(|| {
                            acc.update(&inputs[next].update()).expect("update");
                            next = (next + 1) % inputs.len();
                        })
                    });
                }
                Err(e) => skipped.push(format!("{} update {keys_label}: {e}", admission.name)),
            }
        }
        if admission.phases.contains(&Phase::Global) {
            let prepared = partials_of(admission, arg.as_ref(), &inputs).and_then(|partials| {
                let mut acc = fresh(admission, arg.as_ref(), Phase::Global, num_keys)?;
                acc.merge(&partials[0], &inputs[0].group_ids)
                    .map_err(|e| e.to_string())?;
                Ok((acc, partials))
            });
            match prepared {
                Ok((mut acc, partials)) => {
                    group.bench_function(format!("{}/merge/{keys_label}", admission.name), |b| {
                        let mut next = 0;
                        b.iter(|| {
                            acc.merge(&partials[next], &inputs[next].group_ids)
                                .expect("merge");
                            next = (next + 1) % inputs.len();
                        })
                    });
                }
                Err(e) => skipped.push(format!("{} merge {keys_label}: {e}", admission.name)),
            }
        }
        general_side(group, admission, keys_label, &inputs, skipped);
        #[cfg(feature = "datafusion-compare")]
        datafusion_side(
            group, admission, arg, keys_label, num_keys, &inputs, skipped,
        );
    }
}

/// The general-path function the kernel suite compares `admission` with:
/// insert-only, non-DISTINCT FIRST_VALUE, LAST_VALUE and LISTAGG.
fn order_sensitive_function(admission: &Admission) -> Option<Function> {
    if admission.input != InputMode::InsertOnly || admission.distinct {
        return None;
    }
    match admission.function {
        "FIRST_VALUE" => Some(Function::FirstValue),
        "LAST_VALUE" => Some(Function::LastValue),
        "LISTAGG" => Some(Function::ListAgg),
        _ => None,
    }
}

/// The general boxed path on the same bundles: per row a boxed scalar read
/// from Arrow and a dynamically dispatched update of the group's box.
fn general_side<M: criterion::measurement::Measurement>(
    group: &mut BenchmarkGroup<'_, M>,
    admission: &Admission,
    keys_label: &str,
    inputs: &[Bundle],
    skipped: &mut Vec<String>,
) {
    let Some(function) = order_sensitive_function(admission) else {
        return;
    };
    let mut general = GeneralByGroupId::new(vec![Call { function, arg: 0 }]);
    if let Err(e) = general.update(&inputs[0].group_ids, &inputs[0].columns) {
        skipped.push(format!("{} general {keys_label}: {e}", admission.name));
        return;
    }
    group.bench_function(format!("{}/general/{keys_label}", admission.name), |b| {
        let mut next = 0;
        b.iter(|| {
            let input = &inputs[next];
            general
                .update(&input.group_ids, &input.columns)
                .expect("general update");
            next = (next + 1) % inputs.len();
        })
    });
}

#[cfg(feature = "datafusion-compare")]
fn datafusion_side<M: criterion::measurement::Measurement>(
    group: &mut BenchmarkGroup<'_, M>,
    admission: &Admission,
    arg: Option<SqlType>,
    keys_label: &str,
    num_keys: usize,
    inputs: &[Bundle],
    skipped: &mut Vec<String>,
) {
    use aggforge_benches::data::arrow_type;
    use aggforge_benches::datafusion_compare as df;
    if admission.input != InputMode::InsertOnly || admission.distinct {
        return;
    }
    let function = match admission.function {
        "MIN" => Function::Min,
        "MAX" => Function::Max,
        "SUM" => Function::Sum,
        "COUNT" => Function::Count,
        "AVG" => Function::Avg,
        _ => match order_sensitive_function(admission) {
            Some(function) => function,
            None => return,
        },
    };
    let Some(ty) = arg else { return };
    match df::groups_accumulator(function, &arrow_type(&ty)) {
        Ok((mut acc, native)) => {
            let coerced: Vec<Vec<ArrayRef>> = match inputs
                .iter()
                .map(|b| df::coerce(function, &b.columns))
                .collect()
            {
                Ok(c) => c,
                Err(e) => {
                    skipped.push(format!("{} datafusion: {e}", admission.name));
                    return;
                }
            };
            let how = if native {
                "datafusion"
            } else {
                "datafusion_adapter"
            };
            group.bench_function(format!("{}/{how}/{keys_label}", admission.name), |b| {
                let mut next = 0;
                b.iter(|| {
                    let input = &inputs[next];
                    df::update(acc.as_mut(), &coerced[next], &input.group_indices, num_keys)
                        .expect("datafusion update");
                    next = (next + 1) % inputs.len();
                })
            });
        }
        Err(e) => skipped.push(format!("{} datafusion: {e}", admission.name)),
    }
}

fn kernels(c: &mut Criterion) {
    let mut functions: Vec<&'static str> = Vec::new();
    for admission in registry::all() {
        if !functions.contains(&admission.function) {
            functions.push(admission.function);
        }
    }
    let mut skipped = Vec::new();
    for function in functions {
        let mut group = c.benchmark_group(function);
        group
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(700))
            .sample_size(10)
            .throughput(Throughput::Elements(BATCH_ROWS as u64));
        for admission in registry::all().iter().filter(|a| a.function == function) {
            bench_admission(&mut group, admission, &mut skipped);
        }
        group.finish();
    }
    for line in &skipped {
        eprintln!("skipped: {line}");
    }
}

criterion_group!(benches, kernels);
criterion_main!(benches);
