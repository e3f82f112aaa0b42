//! Golden operator snapshot: a released snapshot must stay restorable.
//!
//! `tests/data/golden/operators/v1_single_minmax_sum.bin` holds the snapshot of a
//! single-phase operator (key STRING; MIN(INT), MAX(INT), SUM(BIGINT)) after
//! [`input_before_snapshot`]. The file is the list of key-group payloads,
//! each as `u16 key group LE, u32 payload length LE, payload` (the payload
//! in the `snapshot` module's format, version 1). It lives in its own
//! folder because every `.bin` directly in `tests/data/golden` is a single
//! key-group payload checked by `snapshot_format.rs`. It was written once by
//!
//! ```text
//! cargo test -p aggforge-runtime --test golden_snapshot -- --ignored write_golden_snapshot
//! ```
//!
//! and must never be regenerated for a released format: a change that
//! breaks `restores_the_golden_snapshot` breaks users' savepoints.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::SqlType;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use common::*;

const STRING: SqlType = SqlType::Varchar {
    length: u32::MAX >> 1,
};

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden/operators/v1_single_minmax_sum.bin")
}

fn golden_plan() -> AggPlan {
    plan(
        STRING,
        vec![
            call("MIN", Some((1, SqlType::Int))),
            call("MAX", Some((1, SqlType::Int))),
            call("SUM", Some((2, SqlType::BigInt))),
        ],
        Emission::Immediate,
    )
}

fn rows_batch(rows: &[(Option<&str>, Option<i32>, Option<i64>)]) -> RecordBatch {
    batch(vec![
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        )) as ArrayRef,
        Arc::new(Int32Array::from(
            rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        )) as ArrayRef,
        Arc::new(Int64Array::from(
            rows.iter().map(|r| r.2).collect::<Vec<_>>(),
        )) as ArrayRef,
    ])
}

fn input_before_snapshot() -> Vec<RecordBatch> {
    vec![
        rows_batch(&[
            (Some("a"), Some(5), Some(10)),
            (Some("b"), Some(-3), None),
            (None, Some(7), Some(1)),
            (Some("a"), Some(9), Some(-4)),
        ]),
        rows_batch(&[
            (Some("a-key-longer-than-seven-bytes"), None, Some(i64::MAX)),
            (Some("b"), Some(-8), Some(2)),
            (Some("a"), Some(1), None),
        ]),
    ]
}

fn encode(payloads: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (kg, bytes) in payloads {
        out.extend_from_slice(&kg.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

fn decode(mut bytes: &[u8]) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let kg = u16::from_le_bytes([bytes[0], bytes[1]]);
        let len = u32::from_le_bytes([bytes[2], bytes[3], bytes[4], bytes[5]]) as usize;
        out.push((kg, bytes[6..6 + len].to_vec()));
        bytes = &bytes[6 + len..];
    }
    out
}

/// Writes the golden file. Run once per new format version only.
#[test]
#[ignore]
fn write_golden_snapshot() {
    let mut op = GroupAggOperator::new(golden_plan()).unwrap();
    run_immediate(&mut op, &input_before_snapshot());
    let payloads = op.snapshot().unwrap();
    std::fs::create_dir_all(golden_path().parent().unwrap()).unwrap();
    std::fs::write(golden_path(), encode(&payloads)).unwrap();
}

#[test]
fn restores_the_golden_snapshot() {
    let bytes = std::fs::read(golden_path()).expect("golden snapshot file");
    let payloads = decode(&bytes);
    assert!(!payloads.is_empty());
    let mut op = GroupAggOperator::new(golden_plan()).unwrap();
    op.restore(&payloads).unwrap();
    assert_eq!(op.num_groups(), 4);

    // One more row per key: each -U shows the restored result, each +U
    // the result after continuing. SUM(BIGINT) wraps as Java does.
    let next = rows_batch(&[
        (Some("a"), Some(0), Some(1)),
        (Some("b"), Some(-1), Some(1)),
        (None, Some(100), Some(1)),
        (Some("a-key-longer-than-seven-bytes"), Some(4), Some(1)),
        (Some("new"), Some(2), Some(3)),
    ]);
    let out = opt_rows(op.process(&next).unwrap());
    assert_eq!(
        out,
        strs(&[
            "-U[a, 1, 9, 6]",
            "+U[a, 0, 9, 7]",
            "-U[b, -8, -3, 2]",
            "+U[b, -8, -1, 3]",
            "-U[NULL, 7, 7, 1]",
            "+U[NULL, 7, 100, 2]",
            "-U[a-key-longer-than-seven-bytes, NULL, NULL, 9223372036854775807]",
            "+U[a-key-longer-than-seven-bytes, 4, 4, -9223372036854775808]",
            "+I[new, 2, 2, 3]",
        ])
    );

    // The restored operator snapshots to the same bytes as an operator
    // that ran the original input (the format is deterministic).
    let mut fresh = GroupAggOperator::new(golden_plan()).unwrap();
    run_immediate(&mut fresh, &input_before_snapshot());
    assert_eq!(fresh.snapshot().unwrap(), payloads);
}
