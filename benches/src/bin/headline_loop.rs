//! A plain driver for profilers (perf, callgrind): runs the headline
//! local-phase bundle update (BIGINT key, group table, MIN and MAX over one
//! argument, 4096-row bundles, 64 keys) a given number of times.
//!
//! Usage: `headline_loop [TYPE] [BUNDLES] [PATH]` where TYPE is INT, DATE,
//! TIME or BOOLEAN (default INT), BUNDLES defaults to 200000 and PATH is
//! `local` (table + MIN + MAX, default), `ids` (MIN + MAX given ids),
//! `table` (group table alone) or `operator` (the runtime's local
//! operator, process + flush).

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use aggforge_benches::data::{Stream, BATCH_ROWS, FEW_KEYS};
use aggforge_benches::ours::{self, LocalOperator, LocalPhase, TableOnly};
use aggforge_runtime::error::Result;
use aggforge_runtime::types::{Phase, SqlType};

const BUNDLES: usize = 8;

fn run(ty: SqlType, bundles: usize, path: &str) -> Result<()> {
    let stream = Stream::new(&[ty], FEW_KEYS, BUNDLES, 0xA66F_0A6E);
    let (g, cols) = (&stream.groupings, &stream.columns);
    let start = Instant::now();
    match path {
        "ids" => {
            let mut min = ours::accumulator("MIN", Some(&ty), Phase::Local)?;
            let mut max = ours::accumulator("MAX", Some(&ty), Phase::Local)?;
            for n in 0..bundles {
                let i = n % BUNDLES;
                ours::update(min.as_mut(), &cols[i], &g[i].group_ids, FEW_KEYS)?;
                ours::update(max.as_mut(), &cols[i], &g[i].group_ids, FEW_KEYS)?;
            }
        }
        "operator" => {
            let mut op = LocalOperator::new(SqlType::of("BIGINT"), &[("MIN", ty), ("MAX", ty)])?;
            let batches = (0..BUNDLES)
                .map(|i| op.batch(&g[i].keys, &[cols[i][0].clone(), cols[i][0].clone()]))
                .collect::<Result<Vec<_>>>()?;
            for n in 0..bundles {
                black_box(op.bundle(&batches[n % BUNDLES])?);
            }
        }
        "table" => {
            let mut table = TableOnly::new(SqlType::of("BIGINT"))?;
            for n in 0..bundles {
                black_box(table.bundle(&g[n % BUNDLES].keys)?);
            }
        }
        _ => {
            let mut local =
                LocalPhase::new(SqlType::of("BIGINT"), &[("MIN", ty, 0), ("MAX", ty, 0)])?;
            for n in 0..bundles {
                let i = n % BUNDLES;
                black_box(local.bundle(&g[i].keys, &cols[i])?);
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let rows = (bundles * BATCH_ROWS) as f64;
    println!(
        "{ty} {path}: {bundles} bundles, {:.1} M rows/s, {:.2} ns/row",
        rows / seconds / 1e6,
        seconds * 1e9 / rows
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let ty = match args.get(1).map(String::as_str).unwrap_or("INT") {
        "INT" => SqlType::of("INT"),
        "DATE" => SqlType::of("DATE"),
        "TIME" => SqlType::of("TIME(3)"),
        "BOOLEAN" => SqlType::of("BOOLEAN"),
        other => {
            eprintln!("unknown type {other}: use INT, DATE, TIME or BOOLEAN");
            return ExitCode::FAILURE;
        }
    };
    let bundles = match args.get(2).map(|s| s.parse::<usize>()) {
        None => 200_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("bad bundle count: {e}");
            return ExitCode::FAILURE;
        }
    };
    let path = args.get(3).map(String::as_str).unwrap_or("local");
    match run(ty, bundles, path) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
