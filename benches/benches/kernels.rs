//! The per-specialization kernel suite: for every entry of
//! `registry::all()`, the accumulator's `update` given group ids (and, for
//! specializations with a global phase, `merge` of local partials), on
//! 4096-row bundles over 64 keys and over 1,000,000 keys (group ids drawn
//! uniformly from 1M groups, state for all of them). Retracting
//! specializations get bundles where every fourth row is a -U of the row
//! before it. With `--features datafusion-compare`, DataFusion's own
//! accumulator runs on the same bundles for MIN, MAX, SUM, COUNT and AVG.
//!
//! Bench ids are `<FUNCTION>/<specialization>/<op>/<keys>`, e.g.
//! `MIN/MIN<INT>/insert_only/update/64keys`, so `-- MIN` filters by
//! function and `-- '<DATE>'` by type. One iteration is one bundle;
//! throughput is in rows.

use std::time::Duration;

use aggforge_benches::data::{type_for_row, BATCH_ROWS, FEW_KEYS, MANY_KEYS};
#[cfg(feature = "datafusion-compare")]
use aggforge_benches::kernel_input::Bundle;
use aggforge_benches::kernel_input::{bundles, fresh, partials_of};
use aggforge_runtime::registry::{self, Admission};
use aggforge_runtime::types::Phase;
#[cfg(feature = "datafusion-compare")]
use aggforge_runtime::types::{InputMode, SqlType};
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
            match fresh(admission, arg.as_ref(), num_keys).and_then(|mut acc| {
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
                let mut acc = fresh(admission, arg.as_ref(), num_keys)?;
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
        #[cfg(feature = "datafusion-compare")]
        datafusion_side(
            group, admission, arg, keys_label, num_keys, &inputs, skipped,
        );
    }
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
    use aggforge_benches::general::Function;
    if admission.input != InputMode::InsertOnly || admission.distinct {
        return;
    }
    let function = match admission.function {
        "MIN" => Function::Min,
        "MAX" => Function::Max,
        "SUM" => Function::Sum,
        "COUNT" => Function::Count,
        "AVG" => Function::Avg,
        _ => return,
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
