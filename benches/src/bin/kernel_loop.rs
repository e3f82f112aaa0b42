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

use aggforge_benches::data::{type_for_row, FEW_KEYS};
use aggforge_benches::kernel_input::{bundles, fresh, partials_of};
use aggforge_runtime::registry;
use aggforge_runtime::types::Phase;

/// Bundles the loop cycles through (the kernel suite's 64-key setting).
const BUNDLES: usize = 4;

fn run(name: &str, op: &str, count: usize) -> Result<(), String> {
    let admission = registry::all()
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| format!("no specialization {name}; see --list"))?;
    let arg = match admission.type_row {
        Some(row) => Some(type_for_row(row).ok_or_else(|| format!("no bench type for {row}"))?),
        None => None,
    };
    let inputs = bundles(admission, arg, FEW_KEYS, BUNDLES)?;
    let phase = match op {
        "merge" => Phase::Global,
        _ if admission.phases.contains(&Phase::Single) => Phase::Single,
        _ => Phase::Local,
    };
    let mut acc = fresh(admission, arg.as_ref(), phase, FEW_KEYS)?;
    match op {
        "update" => {
            for n in 0..count {
                acc.update(&inputs[n % BUNDLES].update())
                    .map_err(|e| e.to_string())?;
            }
        }
        "merge" => {
            let partials = partials_of(admission, arg.as_ref(), &inputs)?;
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
