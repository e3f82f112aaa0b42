//! A plain driver for callgrind: runs one specialization's `update` (or
//! the global phase's `merge` of local partials) over the kernel suite's
//! bundles (4096 rows, 64 keys, 1/8 NULL; retracting specializations get
//! every fourth row a -U of the row before) a given number of times.
//! Instructions per row are (Ir of N bundles - Ir of 0 bundles) / (N x 4096),
//! which holds on a loaded machine where wall-clock timings do not.
//!
//! Usage: `kernel_loop SPECIALIZATION [update|merge] [BUNDLES]`, e.g.
//! `kernel_loop 'MIN<INT>/insert_only' update 200`; `kernel_loop --list`
//! prints every specialization name.

use std::hint::black_box;
use std::process::ExitCode;

use aggforge_benches::data::{type_for_row, with_retractions, Stream, BATCH_ROWS, FEW_KEYS};
use aggforge_runtime::accumulator::{BatchUpdate, GroupAccumulator};
use aggforge_runtime::registry::{self, Admission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::ArrayRef;

const SEED: u64 = 0x6B65_726E;
const BUNDLES: usize = 4;

/// One prepared bundle: argument columns, group ids, row kinds.
struct Bundle {
    columns: Vec<ArrayRef>,
    group_ids: Vec<u32>,
    row_kinds: Option<Vec<i8>>,
}

impl Bundle {
    fn update(&self) -> BatchUpdate<'_> {
        BatchUpdate {
            args: &self.columns,
            group_ids: &self.group_ids,
            filter: None,
            row_kinds: self.row_kinds.as_deref(),
        }
    }
}

fn bundles(admission: &Admission, arg: Option<SqlType>) -> Result<Vec<Bundle>, String> {
    let types: Vec<SqlType> = arg.into_iter().collect();
    let stream = Stream::new(&types, FEW_KEYS, BUNDLES, SEED);
    stream
        .groupings
        .iter()
        .zip(stream.columns)
        .map(|(grouping, columns)| match admission.input {
            InputMode::InsertOnly => Ok(Bundle {
                columns,
                group_ids: grouping.group_ids.clone(),
                row_kinds: None,
            }),
            InputMode::Retracting => {
                let r =
                    with_retractions(&columns, &grouping.group_ids).map_err(|e| e.to_string())?;
                Ok(Bundle {
                    columns: r.columns,
                    group_ids: r.group_ids,
                    row_kinds: Some(r.row_kinds),
                })
            }
        })
        .collect()
}

fn fresh(
    admission: &Admission,
    arg: Option<&SqlType>,
) -> Result<Box<dyn GroupAccumulator>, String> {
    let mut acc = admission.create(arg).map_err(|e| e.to_string())?;
    acc.resize(FEW_KEYS);
    Ok(acc)
}

fn run(name: &str, op: &str, count: usize) -> Result<(), String> {
    let admission = registry::all()
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| format!("no specialization {name}; see --list"))?;
    let arg = match admission.type_row {
        Some(row) => Some(type_for_row(row).ok_or_else(|| format!("no bench type for {row}"))?),
        None => None,
    };
    let inputs = bundles(admission, arg)?;
    let mut acc = fresh(admission, arg.as_ref())?;
    match op {
        "update" => {
            for n in 0..count {
                acc.update(&inputs[n % BUNDLES].update())
                    .map_err(|e| e.to_string())?;
            }
        }
        "merge" => {
            let identity: Vec<u32> = (0..BATCH_ROWS as u32).collect();
            let partials = inputs
                .iter()
                .map(|b| {
                    let mut local = admission.create(arg.as_ref()).map_err(|e| e.to_string())?;
                    local.resize(BATCH_ROWS);
                    local
                        .update(&BatchUpdate {
                            group_ids: &identity,
                            ..b.update()
                        })
                        .map_err(|e| e.to_string())?;
                    local.partials(&identity).map_err(|e| e.to_string())
                })
                .collect::<Result<Vec<_>, String>>()?;
            for n in 0..count {
                let i = n % BUNDLES;
                acc.merge(&partials[i], &inputs[i].group_ids)
                    .map_err(|e| e.to_string())?;
            }
        }
        other => return Err(format!("unknown op {other}; use update or merge")),
    }
    black_box(acc.memory_bytes());
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--list") {
        for admission in registry::all() {
            println!("{}", admission.name);
        }
        return ExitCode::SUCCESS;
    }
    let Some(name) = args.first() else {
        eprintln!("usage: kernel_loop SPECIALIZATION [update|merge] [BUNDLES] | --list");
        return ExitCode::from(2);
    };
    let op = args.get(1).map_or("update", String::as_str);
    let count = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(200);
    match run(name, op, count) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kernel_loop: {e}");
            ExitCode::FAILURE
        }
    }
}
