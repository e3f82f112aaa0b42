//! Reproduces, from `tests/data/flink_key_vectors.tsv` (written by real
//! Flink 2.2 through tools/flink-vectors), every key row's bytes, hashCode
//! and key groups, and every `java.util.HashMap` iteration order.

use std::collections::BTreeMap;
use std::sync::Arc;

use aggforge_runtime::flink_key::{
    java_hash_map_order, key_group_for_hash, key_hashes, JavaHashMapOrder, KeyRowEncoder,
};
use aggforge_runtime::types::{Layout, SqlType};
use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder, Float64Builder, Int16Builder,
    Int32Builder, Int64Builder, Int8Builder, StringBuilder, Time32MillisecondBuilder,
    TimestampMillisecondBuilder,
};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, ListArray, StructArray};
use arrow_buffer::NullBuffer;
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field};

const VECTORS: &str = include_str!("data/flink_key_vectors.tsv");

#[derive(Default)]
struct KeySet {
    types: Vec<SqlType>,
    values: Vec<Vec<Option<String>>>,
    bytes: Vec<String>,
    hashes: Vec<i32>,
    kg128: Vec<u16>,
    kg4096: Vec<u16>,
    order: Vec<u32>,
}

struct MapBundle {
    scenario: String,
    bundle: usize,
    hashes: Vec<i32>,
    order: Vec<u32>,
}

fn parse_list<T: std::str::FromStr>(text: &str) -> Vec<T>
where
    T::Err: std::fmt::Debug,
{
    if text.is_empty() {
        return Vec::new();
    }
    text.split(',').map(|v| v.parse().unwrap()).collect()
}

fn parse() -> (Vec<(String, KeySet)>, Vec<MapBundle>) {
    let mut sets: Vec<(String, KeySet)> = Vec::new();
    let mut maps = Vec::new();
    for line in VECTORS.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        match f[0] {
            "set" => {
                let types = f[2].split(';').map(|t| t.parse().unwrap()).collect();
                sets.push((
                    f[1].to_string(),
                    KeySet {
                        types,
                        ..Default::default()
                    },
                ));
            }
            "key" => {
                let (name, set) = sets.last_mut().unwrap();
                assert_eq!(name, f[1]);
                assert_eq!(f[2].parse::<usize>().unwrap(), set.values.len());
                set.values.push(
                    f[3].split(';')
                        .map(|v| (v != "N").then(|| v.to_string()))
                        .collect(),
                );
                set.bytes.push(f[4].to_string());
                set.hashes.push(f[5].parse().unwrap());
                set.kg128.push(f[6].parse().unwrap());
                set.kg4096.push(f[7].parse().unwrap());
            }
            "order" => {
                let (name, set) = sets.last_mut().unwrap();
                assert_eq!(name, f[1]);
                set.order = parse_list(f[2]);
            }
            "hashmap" => maps.push(MapBundle {
                scenario: f[1].to_string(),
                bundle: f[2].parse().unwrap(),
                hashes: parse_list(f[3]),
                order: parse_list(f[4]),
            }),
            other => panic!("unknown vector line kind {other}"),
        }
    }
    (sets, maps)
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn hex_to_string(text: &str) -> String {
    String::from_utf8(unhex(text.strip_prefix("s:").unwrap())).unwrap()
}

/// Builds the Arrow column of `specs/types.toml` for one key column.
fn column(sql: SqlType, values: &[Option<&str>]) -> ArrayRef {
    macro_rules! prim {
        ($builder:ty, $parse:expr) => {{
            let mut b = <$builder>::new();
            for v in values {
                b.append_option(v.map($parse));
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    match sql.layout().expect("a types.toml row") {
        Layout::Int8 => prim!(Int8Builder, |v: &str| v.parse().unwrap()),
        Layout::Int16 => prim!(Int16Builder, |v: &str| v.parse().unwrap()),
        Layout::Int32 => prim!(Int32Builder, |v: &str| v.parse().unwrap()),
        Layout::Int64 => prim!(Int64Builder, |v: &str| v.parse().unwrap()),
        Layout::Date32 => prim!(Date32Builder, |v: &str| v.parse().unwrap()),
        Layout::Time32Millisecond => prim!(Time32MillisecondBuilder, |v: &str| v.parse().unwrap()),
        Layout::Float32 => prim!(Float32Builder, |v: &str| f32::from_bits(
            u32::from_str_radix(&v[2..], 16).unwrap()
        )),
        Layout::Float64 => prim!(Float64Builder, |v: &str| f64::from_bits(
            u64::from_str_radix(&v[2..], 16).unwrap()
        )),
        Layout::Boolean => prim!(BooleanBuilder, |v: &str| v == "true"),
        Layout::Utf8 => {
            let mut b = StringBuilder::new();
            for v in values {
                b.append_option(v.map(hex_to_string));
            }
            Arc::new(b.finish())
        }
        Layout::Decimal128 => {
            let mut b = Decimal128Builder::new();
            for v in values {
                b.append_option(v.map(|v| v.parse::<i128>().unwrap()));
            }
            Arc::new(
                b.finish()
                    .with_precision_and_scale(sql.precision().unwrap(), sql.scale().unwrap())
                    .unwrap(),
            )
        }
        Layout::TimestampMillisecond => {
            prim!(TimestampMillisecondBuilder, |v: &str| v.parse().unwrap())
        }
        Layout::List => {
            // `[v|v|...]` in the element's encoding; the item field named
            // as Java's Arrow names it.
            let element = sql.element().expect("an ARRAY type");
            let mut offsets = vec![0i32];
            let mut items: Vec<Option<&str>> = Vec::new();
            for value in values {
                if let Some(value) = value {
                    let inner = &value[1..value.len() - 1];
                    if !inner.is_empty() {
                        items.extend(inner.split('|').map(|item| (item != "N").then_some(item)));
                    }
                }
                offsets.push(items.len() as i32);
            }
            let items = column(element, &items);
            let nulls = NullBuffer::from(values.iter().map(|v| v.is_some()).collect::<Vec<_>>());
            Arc::new(ListArray::new(
                Arc::new(Field::new("$data$", items.data_type().clone(), true)),
                OffsetBuffer::new(offsets.into()),
                items,
                Some(nulls),
            ))
        }
        Layout::StructTimestamp => {
            let split = |v: &str| {
                let (m, n) = v.split_once(':').unwrap();
                (m.parse::<i64>().unwrap(), n.parse::<i32>().unwrap())
            };
            let millis: Int64Array = values.iter().map(|v| v.map(|v| split(v).0)).collect();
            let nanos: Int32Array = values.iter().map(|v| v.map(|v| split(v).1)).collect();
            let nulls = NullBuffer::from(values.iter().map(|v| v.is_some()).collect::<Vec<_>>());
            Arc::new(StructArray::new(
                vec![
                    Arc::new(Field::new("millisecond", DataType::Int64, true)),
                    Arc::new(Field::new("nano_of_millisecond", DataType::Int32, true)),
                ]
                .into(),
                vec![Arc::new(millis), Arc::new(nanos)],
                Some(nulls),
            ))
        }
    }
}

fn columns(set: &KeySet) -> Vec<ArrayRef> {
    (0..set.types.len())
        .map(|c| {
            let values: Vec<Option<&str>> =
                set.values.iter().map(|row| row[c].as_deref()).collect();
            column(set.types[c], &values)
        })
        .collect()
}

#[test]
fn key_rows_hashes_key_groups_and_orders_match_flink() {
    let (sets, _) = parse();
    assert!(sets.len() >= 25, "only {} key sets", sets.len());
    let mut keys = 0;
    let mut families = std::collections::BTreeSet::new();
    for (name, set) in &sets {
        let cols = columns(set);
        let encoder = KeyRowEncoder::new(&cols, &set.types).unwrap();
        let mut bytes = Vec::new();
        for (row, expected) in set.bytes.iter().enumerate() {
            encoder.write_row(row, &mut bytes);
            assert_eq!(
                bytes,
                unhex(expected),
                "set {name} row {row} ({:?}): key row bytes differ from Flink's",
                set.values[row]
            );
        }
        let mut hashes = Vec::new();
        key_hashes(&cols, &set.types, &mut hashes).unwrap();
        assert_eq!(hashes, set.hashes, "set {name}: hashCodes");
        for (row, &h) in hashes.iter().enumerate() {
            assert_eq!(
                key_group_for_hash(h, 128),
                set.kg128[row],
                "{name} row {row} @128"
            );
            assert_eq!(
                key_group_for_hash(h, 4096),
                set.kg4096[row],
                "{name} row {row} @4096"
            );
        }
        assert_eq!(
            java_hash_map_order(&hashes),
            set.order,
            "set {name}: HashMap order"
        );
        keys += hashes.len();
        families.extend(set.types.iter().map(|t| t.family()));
    }
    for family in [
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL",
        "DATE",
        "TIME",
        "TIMESTAMP",
        "BOOLEAN",
        "CHAR",
        "VARCHAR",
        "ARRAY",
    ] {
        assert!(families.contains(family), "no vectors for {family}");
    }
    assert!(keys > 5000, "only {keys} keys");
}

#[test]
fn hash_map_orders_match_java() {
    let (_, maps) = parse();
    let mut by_scenario: BTreeMap<&str, Vec<&MapBundle>> = BTreeMap::new();
    for m in &maps {
        by_scenario.entry(&m.scenario).or_default().push(m);
    }
    assert!(by_scenario.len() >= 8);
    for (scenario, bundles) in by_scenario {
        let mut map = JavaHashMapOrder::new();
        let mut out = Vec::new();
        for (i, b) in bundles.iter().enumerate() {
            assert_eq!(b.bundle, i);
            map.iteration_order(&b.hashes, &mut out);
            assert_eq!(out, b.order, "scenario {scenario} bundle {i}");
        }
    }
}

#[test]
fn hashes_are_independent_of_batch_slicing() {
    let (sets, _) = parse();
    let (_, set) = sets
        .iter()
        .find(|(n, _)| n == "random_bigint_varchar")
        .unwrap();
    let cols = columns(set);
    let sliced: Vec<ArrayRef> = cols.iter().map(|c| c.slice(100, 50)).collect();
    let mut hashes = Vec::new();
    key_hashes(&sliced, &set.types, &mut hashes).unwrap();
    assert_eq!(hashes, set.hashes[100..150]);
    assert_eq!(sliced[0].len(), 50);
}

/// Rough throughput of `key_hashes`; run with
/// `cargo test --release -p aggforge-runtime --test integration keygroup:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn key_hash_throughput() {
    let n = 1 << 20;
    let ints: ArrayRef = Arc::new(Int32Array::from_iter_values((0..n).map(|i| i * 7)));
    let longs: ArrayRef = Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| i * 13)));
    let strings: ArrayRef = Arc::new(arrow_array::StringArray::from_iter_values(
        (0..n).map(|i| format!("key-{i}")),
    ));
    let cases: Vec<(&str, Vec<ArrayRef>, Vec<SqlType>)> = vec![
        ("INT", vec![ints], vec![SqlType::of("INT")]),
        (
            "BIGINT, VARCHAR",
            vec![longs, strings],
            vec![SqlType::of("BIGINT"), SqlType::of("VARCHAR(100)")],
        ),
    ];
    let mut out = Vec::new();
    for (name, cols, types) in cases {
        key_hashes(&cols, &types, &mut out).unwrap();
        let start = std::time::Instant::now();
        for _ in 0..5 {
            key_hashes(&cols, &types, &mut out).unwrap();
        }
        let ns = start.elapsed().as_nanos() as f64 / (5 * n) as f64;
        println!("key_hashes {name}: {ns:.1} ns/row");
        assert_eq!(out.len(), n as usize);
    }
}
