//! Snapshot format tests: round trips, rejection of bad input without
//! panics, and golden payloads that every later build must still decode.
//!
//! Golden files: each `tests/data/golden/NAME.bin` is a key-group payload
//! of a released format version; `NAME.expected.txt` beside it is its
//! decoded content rendered by [`render`]. A new golden file is added by
//! writing the `.bin` and running the tests once with
//! `AGGFORGE_BLESS=1`, which writes a missing `.expected.txt`; review and
//! commit both. Existing expectations are never rewritten.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aggforge_runtime::snapshot::{
    decode_key_group, encode_key_group, ColumnRole, DecodedKeyGroup, SnapshotMeta, SNAPSHOT_MAGIC,
    SNAPSHOT_VERSION,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, Time32MillisecondType, TimestampMillisecondType, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array,
    Int64Array, RecordBatch, StringArray, StructArray, UInt64Array,
};
use arrow_schema::{DataType, Field, TimeUnit};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

/// Every golden payload: (file stem, bytes), sorted by name.
fn golden_files() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(golden_dir())
        .expect("tests/data/golden exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// A stable text rendering of a decoded payload, independent of Arrow's
/// Debug output.
fn render(decoded: &DecodedKeyGroup) -> String {
    let mut s = String::new();
    writeln!(s, "version: {}", decoded.version).unwrap();
    writeln!(s, "key_group: {}", decoded.key_group).unwrap();
    writeln!(s, "max_parallelism: {}", decoded.meta.max_parallelism).unwrap();
    writeln!(s, "plan_fingerprint: {}", decoded.meta.plan_fingerprint).unwrap();
    writeln!(s, "rows: {}", decoded.batch.num_rows()).unwrap();
    let schema = decoded.batch.schema();
    for (i, field) in schema.fields().iter().enumerate() {
        writeln!(
            s,
            "column {i} {:?} {} {} nullable={}",
            decoded.meta.roles[i],
            field.name(),
            render_type(field.data_type()),
            field.is_nullable()
        )
        .unwrap();
        let column = decoded.batch.column(i);
        for row in 0..column.len() {
            writeln!(s, "  {}", render_value(column, row)).unwrap();
        }
    }
    s
}

/// Type names spelled here, not by Arrow's Display, so an Arrow upgrade
/// cannot change the expectations.
fn render_type(data_type: &DataType) -> String {
    match data_type {
        DataType::Int8 => "Int8".into(),
        DataType::Int16 => "Int16".into(),
        DataType::Int32 => "Int32".into(),
        DataType::Int64 => "Int64".into(),
        DataType::UInt32 => "UInt32".into(),
        DataType::UInt64 => "UInt64".into(),
        DataType::Float32 => "Float32".into(),
        DataType::Float64 => "Float64".into(),
        DataType::Boolean => "Boolean".into(),
        DataType::Utf8 => "Utf8".into(),
        DataType::Date32 => "Date32".into(),
        DataType::Decimal128(p, s) => format!("Decimal128({p}, {s})"),
        DataType::Time32(TimeUnit::Millisecond) => "Time32(ms)".into(),
        DataType::Timestamp(TimeUnit::Millisecond, None) => "Timestamp(ms)".into(),
        DataType::Struct(fields) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.name(), render_type(f.data_type())))
                .collect();
            format!("Struct<{}>", parts.join(", "))
        }
        other => format!("{other}"),
    }
}

fn render_value(array: &ArrayRef, row: usize) -> String {
    if array.is_null(row) {
        return "NULL".into();
    }
    match array.data_type() {
        DataType::Int8 => array.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => array.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::UInt32 => array.as_primitive::<UInt32Type>().value(row).to_string(),
        DataType::UInt64 => array.as_primitive::<UInt64Type>().value(row).to_string(),
        DataType::Float32 => {
            let v = array.as_primitive::<Float32Type>().value(row);
            format!("{v:?} (bits {:08x})", v.to_bits())
        }
        DataType::Float64 => {
            let v = array.as_primitive::<Float64Type>().value(row);
            format!("{v:?} (bits {:016x})", v.to_bits())
        }
        DataType::Boolean => array.as_boolean().value(row).to_string(),
        DataType::Utf8 => format!("{:?}", array.as_string::<i32>().value(row)),
        DataType::Decimal128(_, scale) => format!(
            "unscaled {} scale {scale}",
            array.as_primitive::<Decimal128Type>().value(row)
        ),
        DataType::Date32 => format!("day {}", array.as_primitive::<Date32Type>().value(row)),
        DataType::Time32(TimeUnit::Millisecond) => format!(
            "ms {}",
            array.as_primitive::<Time32MillisecondType>().value(row)
        ),
        DataType::Timestamp(TimeUnit::Millisecond, _) => format!(
            "epoch ms {}",
            array.as_primitive::<TimestampMillisecondType>().value(row)
        ),
        DataType::Struct(fields) => {
            let st = array.as_struct();
            let parts: Vec<String> = fields
                .iter()
                .zip(st.columns())
                .map(|(f, c)| format!("{}: {}", f.name(), render_value(c, row)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => format!("<{other} value, no renderer>"),
    }
}

/// The sample payload committed as `golden/keygroup_v1_sample.bin`: every
/// Arrow encoding of specs/types.toml used as keys and state, with NULLs.
fn sample_payload() -> (SnapshotMeta, u16, RecordBatch) {
    let ts = StructArray::new(
        vec![
            Arc::new(Field::new("millisecond", DataType::Int64, true)),
            Arc::new(Field::new("nano_of_millisecond", DataType::Int32, true)),
        ]
        .into(),
        vec![
            Arc::new(Int64Array::from(vec![1_700_000_000_123, 0, -1])) as ArrayRef,
            Arc::new(Int32Array::from(vec![456_000, 0, 999_999])) as ArrayRef,
        ],
        Some(vec![true, false, true].into()),
    );
    let batch = RecordBatch::try_from_iter(vec![
        (
            "key_name",
            Arc::new(StringArray::from(vec![
                Some("alpha"),
                None,
                Some("a longer key string"),
            ])) as ArrayRef,
        ),
        (
            "key_day",
            Arc::new(Date32Array::from(vec![Some(19_000), Some(-1), None])) as ArrayRef,
        ),
        (
            "max_amount",
            Arc::new(
                Decimal128Array::from(vec![Some(-12_345), Some(i128::from(i64::MAX) * 1000), None])
                    .with_precision_and_scale(38, 4)
                    .unwrap(),
            ) as ArrayRef,
        ),
        ("max_ts", Arc::new(ts) as ArrayRef),
        (
            "avg_sum",
            Arc::new(Float64Array::from(vec![
                Some(1.5),
                Some(-0.0),
                Some(f64::NAN),
            ])) as ArrayRef,
        ),
        (
            "avg_count",
            Arc::new(Int64Array::from(vec![2, 1, 0])) as ArrayRef,
        ),
        (
            "seen",
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])) as ArrayRef,
        ),
        (
            "record_count",
            Arc::new(UInt64Array::from(vec![3, 1, 7])) as ArrayRef,
        ),
    ])
    .unwrap();
    let meta = SnapshotMeta {
        plan_fingerprint: "sample-plan v1: GROUP BY name, day; MAX(amount), MAX(ts), AVG(x), BOOL"
            .into(),
        max_parallelism: 128,
        roles: vec![
            ColumnRole::Key,
            ColumnRole::Key,
            ColumnRole::State { call: 0 },
            ColumnRole::State { call: 1 },
            ColumnRole::State { call: 2 },
            ColumnRole::State { call: 2 },
            ColumnRole::State { call: 3 },
            ColumnRole::Operator,
        ],
    };
    (meta, 77, batch)
}

#[test]
fn golden_payloads_still_decode() {
    let files = golden_files();
    assert!(
        !files.is_empty(),
        "no golden payloads in {:?}",
        golden_dir()
    );
    let bless = std::env::var("AGGFORGE_BLESS").is_ok_and(|v| v == "1");
    for (name, bytes) in files {
        let decoded = decode_key_group(&bytes)
            .unwrap_or_else(|e| panic!("golden {name} no longer decodes: {e}"));
        let rendered = render(&decoded);
        let expected_path = golden_dir().join(format!("{name}.expected.txt"));
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) => assert_eq!(rendered, expected, "golden {name} decodes differently"),
            Err(_) if bless => std::fs::write(&expected_path, rendered).unwrap(),
            Err(_) => panic!(
                "golden {name} has no {name}.expected.txt; run with AGGFORGE_BLESS=1 to write it"
            ),
        }
    }
}

#[test]
fn sample_golden_matches_its_source_batch() {
    let bytes = std::fs::read(golden_dir().join("keygroup_v1_sample.bin")).unwrap();
    let decoded = decode_key_group(&bytes).unwrap();
    let (meta, key_group, batch) = sample_payload();
    assert_eq!(decoded.version, 1);
    assert_eq!(decoded.key_group, key_group);
    assert_eq!(decoded.meta, meta);
    assert_eq!(decoded.batch.schema(), batch.schema());
    // NaN != NaN, so compare the float column by bits and the rest directly.
    for i in 0..batch.num_columns() {
        if matches!(batch.column(i).data_type(), DataType::Float64) {
            let a = batch.column(i).as_primitive::<Float64Type>();
            let b = decoded.batch.column(i).as_primitive::<Float64Type>();
            let bits = |x: &arrow_array::Float64Array| -> Vec<u64> {
                x.values().iter().map(|v| v.to_bits()).collect()
            };
            assert_eq!(bits(a), bits(b));
        } else {
            assert_eq!(batch.column(i), decoded.batch.column(i), "column {i}");
        }
    }
}

/// Writes the sample golden payload. Run once per new format version:
/// `cargo test -p aggforge-runtime --test integration snapshot_format:: -- --ignored`.
#[test]
#[ignore]
fn write_sample_golden() {
    let (meta, key_group, batch) = sample_payload();
    let bytes = encode_key_group(&meta, key_group, &batch).unwrap();
    let name = format!("keygroup_v{SNAPSHOT_VERSION}_sample.bin");
    let path = golden_dir().join(name);
    assert!(
        !path.exists(),
        "{path:?} exists; golden files are never rewritten"
    );
    std::fs::create_dir_all(golden_dir()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn every_truncation_is_an_error() {
    let (meta, key_group, batch) = sample_payload();
    let bytes = encode_key_group(&meta, key_group, &batch).unwrap();
    for len in 0..bytes.len() {
        let err = decode_key_group(&bytes[..len]).expect_err("truncated payload decoded");
        assert!(
            matches!(err, aggforge_runtime::error::AggError::Snapshot(_)),
            "len {len}: {err}"
        );
    }
}

#[test]
fn every_flipped_byte_is_an_error() {
    let (meta, key_group, batch) = sample_payload();
    let bytes = encode_key_group(&meta, key_group, &batch).unwrap();
    let mut copy = bytes.clone();
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            copy[i] ^= mask;
            let result = decode_key_group(&copy);
            assert!(result.is_err(), "flip {mask:#x} at byte {i} was accepted");
            copy[i] ^= mask;
        }
    }
    assert!(decode_key_group(&copy).is_ok());
}

#[test]
fn garbage_is_an_error() {
    let mut state = 0x1234_5678_u32;
    for len in [0usize, 1, 5, 16, 64, 300, 4096] {
        let mut bytes: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state as u8
            })
            .collect();
        assert!(decode_key_group(&bytes).is_err());
        // Valid magic and version but garbage after.
        if len >= 6 {
            bytes[..4].copy_from_slice(&SNAPSHOT_MAGIC);
            bytes[4..6].copy_from_slice(&1u16.to_le_bytes());
            assert!(decode_key_group(&bytes).is_err());
        }
    }
}

#[test]
fn wrong_magic_and_unknown_version_have_clear_messages() {
    let (meta, key_group, batch) = sample_payload();
    let bytes = encode_key_group(&meta, key_group, &batch).unwrap();
    let mut wrong = bytes.clone();
    wrong[0] = b'X';
    let err = decode_key_group(&wrong).unwrap_err().to_string();
    assert!(err.contains("not an aggforge key-group snapshot"), "{err}");
    let mut newer = bytes.clone();
    newer[4..6].copy_from_slice(&(SNAPSHOT_VERSION + 1).to_le_bytes());
    let err = decode_key_group(&newer).unwrap_err().to_string();
    assert!(err.contains("newer"), "{err}");
    let mut zero = bytes;
    zero[4..6].copy_from_slice(&0u16.to_le_bytes());
    let err = decode_key_group(&zero).unwrap_err().to_string();
    assert!(err.contains("unknown snapshot format version 0"), "{err}");
}

#[test]
fn empty_group_round_trips() {
    let (meta, _, batch) = sample_payload();
    let empty = batch.slice(0, 0);
    let bytes = encode_key_group(&meta, 0, &empty).unwrap();
    let decoded = decode_key_group(&bytes).unwrap();
    assert_eq!(decoded.batch.num_rows(), 0);
    assert_eq!(decoded.batch.schema(), batch.schema());
}

#[test]
fn peek_key_group_reads_the_header_only() {
    use aggforge_runtime::snapshot::{decode_key_group, peek_key_group};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("golden dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "bin") {
            let bytes = std::fs::read(&path).expect("golden payload");
            let decoded = decode_key_group(&bytes).expect("decodes");
            assert_eq!(peek_key_group(&bytes).expect("peek"), decoded.key_group);
            seen += 1;
        }
    }
    assert!(seen > 0, "no golden payloads in {}", dir.display());
    assert!(peek_key_group(b"AGK").is_err());
    assert!(peek_key_group(b"XXXX\x01\x00\x00\x00\x05\x00").is_err());
    assert!(peek_key_group(b"AGKG\x09\x00\x00\x00\x05\x00").is_err());
}
