//! Group keys: the group table interning a 4,096-row batch of key
//! columns, per key type, (a) into a table that already holds every key
//! (lookup only) and (b) into an empty table where every row is a new
//! key (insert, plus the Flink key hash of each new key's BinaryRowData,
//! which for ARRAY keys writes the BinaryArrayData bytes).
//!
//! Bench ids are `keys/<lookup_64|insert_4096>/<TYPE>`; throughput is in
//! rows.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use aggforge_runtime::group_table::GroupTable;
use aggforge_runtime::types::SqlType;
use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int64Array, StringArray};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const ROWS: usize = 4096;

/// A key column of `ty` whose row `i` is key `i % distinct` (1 in 16 keys
/// NULL, or holding a NULL element for arrays).
fn column(ty: &str, distinct: usize) -> ArrayRef {
    let key = |row: usize| row % distinct;
    match ty {
        "BIGINT" => Arc::new(Int64Array::from_iter(
            (0..ROWS).map(|r| (key(r) % 16 != 3).then_some(key(r) as i64 * 7919)),
        )),
        "VARCHAR" => {
            Arc::new(StringArray::from_iter((0..ROWS).map(|r| {
                (key(r) % 16 != 3).then(|| format!("key-{:06}", key(r)))
            })))
        }
        "ARRAY<BIGINT>" => {
            let mut lists = ListBuilder::new(Int64Builder::new());
            for r in 0..ROWS {
                let k = key(r);
                for e in 0..(k % 4) {
                    let value = (k % 16 != 3 || e != 0).then_some((k * 31 + e) as i64);
                    lists.values().append_option(value);
                }
                lists.append(true);
            }
            Arc::new(lists.finish())
        }
        "ARRAY<VARCHAR>" => {
            let mut lists = ListBuilder::new(StringBuilder::new());
            for r in 0..ROWS {
                let k = key(r);
                for e in 0..(k % 3 + 1) {
                    let value = (k % 16 != 3 || e != 0).then(|| format!("v{k}-{e}-long-ish"));
                    lists.values().append_option(value);
                }
                lists.append(true);
            }
            Arc::new(lists.finish())
        }
        other => panic!("no key column for {other}"),
    }
}

fn keys(c: &mut Criterion) {
    let mut group = c.benchmark_group("keys");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .throughput(Throughput::Elements(ROWS as u64));
    for ty in ["BIGINT", "VARCHAR", "ARRAY<BIGINT>", "ARRAY<VARCHAR>"] {
        let types = [SqlType::of(ty)];
        let few = [column(ty, 64)];
        let mut ids = Vec::new();
        let mut table = GroupTable::new(&types).unwrap();
        table.intern(&few, ROWS, &mut ids).unwrap();
        group.bench_function(format!("lookup_64/{ty}"), |b| {
            b.iter(|| {
                table.intern(black_box(&few), ROWS, &mut ids).unwrap();
                black_box(ids.len())
            })
        });
        let all = [column(ty, ROWS)];
        group.bench_function(format!("insert_4096/{ty}"), |b| {
            b.iter(|| {
                let mut fresh = GroupTable::new(&types).unwrap();
                fresh.intern(black_box(&all), ROWS, &mut ids).unwrap();
                black_box(fresh.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, keys);
criterion_main!(benches);
