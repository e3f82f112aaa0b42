//! The columnar exchange's native work per batch: routing a 1,024-row
//! batch (`table.exec.aggforge.batch-size`) of an INT key and a DATE value
//! to 1, 2 and 4 channels by Flink key group, and encoding and decoding
//! one message of it (Arrow IPC). 64 keys and 1,024 distinct keys. Also
//! what a routing local phase does with its partials: hold 16 bundles of
//! 64 rows, then route them to 2 channels as one batch.
//!
//! Bench ids are `exchange/<route_N|encode|decode|hold16_route_2>/<keys>`;
//! throughput is in rows.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use aggforge_runtime::exchange::{decode, encode, ExchangeRouter};
use aggforge_runtime::plan::AggPlan;
use arrow_array::{Date32Array, Int32Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const ROWS: usize = 1024;

const PLAN: &str = r#"{"version":1,"key_columns":[0],"key_types":["INT"],"calls":[{"function":"MIN","args":[1],"arg_types":["DATE"],"distinct":false,"filter":null}],"phase":"single","input":"insert_only","emission":"immediate","generate_update_before":true,"state_ttl_ms":0,"memory_budget_bytes":1048576,"max_parallelism":128}"#;

/// Row `i` has key `i % keys` and a DATE, 1 in 8 NULL.
fn batch(keys: usize) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("k", DataType::Int32, true),
        Field::new("v", DataType::Date32, true),
    ]);
    let k = Int32Array::from_iter((0..ROWS).map(|i| Some((i % keys) as i32 * 7919)));
    let v = Date32Array::from_iter((0..ROWS).map(|i| (i % 8 != 5).then_some(i as i32 * 3)));
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(k), Arc::new(v)]).unwrap()
}

fn exchange(c: &mut Criterion) {
    let plan = AggPlan::from_json(PLAN).unwrap();
    let mut group = c.benchmark_group("exchange");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .throughput(Throughput::Elements(ROWS as u64));
    for keys in [64, ROWS] {
        let input = batch(keys);
        for channels in [1, 2, 4] {
            let mut router = ExchangeRouter::new(&plan, channels, 128).unwrap();
            group.bench_function(format!("route_{channels}/{keys}"), |b| {
                b.iter(|| black_box(router.route(black_box(&input)).unwrap().len()))
            });
        }
        group.bench_function(format!("encode/{keys}"), |b| {
            b.iter(|| black_box(encode(0, black_box(&input), &[]).unwrap().len()))
        });
        let bundles: Vec<RecordBatch> = (0..ROWS / 64).map(|i| input.slice(i * 64, 64)).collect();
        let mut holder = ExchangeRouter::new(&plan, 2, 128).unwrap();
        group.bench_function(format!("hold16_route_2/{keys}"), |b| {
            b.iter(|| {
                for bundle in &bundles {
                    holder.hold(bundle.clone()).unwrap();
                }
                black_box(holder.route_held().unwrap().len())
            })
        });
        let message = encode(0, &input, &[]).unwrap();
        group.bench_function(format!("decode/{keys}"), |b| {
            b.iter(|| black_box(decode(black_box(&message)).unwrap().num_rows()))
        });
    }
    group.finish();
}

criterion_group!(benches, exchange);
criterion_main!(benches);
