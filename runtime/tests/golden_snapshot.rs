//! Golden operator snapshots: state written by a released build must
//! restore into every later build and continue to the same changelog.
//!
//! Files in `tests/data/golden/operators/` (their own folder, because every
//! `.bin` directly in `tests/data/golden` is a single key-group payload
//! checked by `snapshot_format.rs`). Each `.bin` is the list of an
//! operator's key-group payloads, each as `u16 key group LE, u32 payload
//! length LE, payload` (the payload in the `snapshot` module's format,
//! version 1):
//!
//! - `v1_single_minmax_sum.bin`: the first golden, a single-phase operator
//!   (key string(); MIN(INT), MAX(INT), SUM(BIGINT)) after
//!   [`input_before_snapshot`], checked by [`restores_the_golden_snapshot`].
//! - `v1_<case>.bin` and `v1_<case>.expected.txt` for every entry of
//!   [`CASES`]: the snapshot of the case's operator after its `before`
//!   input, and the changelog its `after` input causes once restored, one
//!   row per line as Flink prints rows (`-U[key, v1, v2]`).
//!
//! For every case [`every_golden_case_restores_and_continues`] restores the
//! file into a freshly built operator, feeds `after` and compares the
//! changelog with the expected file byte for byte, and checks that an
//! uninterrupted run over `before` + `after` ends with the same changelog
//! (so the expected file is a real run, not a recording) and, while this
//! build writes format version 1, that the state round-trips byte for byte.
//! [`golden_cases_restore_rescaled`] restores each file split over 2, 3 and
//! 16 subtasks by key-group range (Flink's rescaling; the max parallelism
//! itself cannot change, and a restore at another one is refused).
//! [`golden_cases_cover_every_state_template`] keeps the table covering
//! every state template of `specs/*.toml` in every operator mode the specs
//! admit it in, over at least two argument types each.
//!
//! # Adding a case
//!
//! 1. Append a [`Case`] to [`CASES`] with a new `name`. Input cells are
//!    text (syntax in `common/golden.rs`); single-phase rows are the key
//!    columns then `args`, global-phase rows the key columns then the
//!    partial columns of each call in Flink's accumulator layout (see the
//!    comments on the global cases).
//! 2. Run the writer, which writes only missing files and first checks
//!    that restoring its snapshot continues exactly like an uninterrupted
//!    run:
//!
//!    ```text
//!    cargo test -p aggforge-runtime --test golden_snapshot -- --ignored write_golden_snapshots
//!    ```
//!
//! 3. Review the new `.expected.txt` against Flink's semantics and commit
//!    both files.
//!
//! Never regenerate or edit an existing file of a released format: a
//! change that breaks one of these tests breaks users' savepoints. If an
//! intended change alters a changelog, that is a behaviour change to
//! decide on, not a file to rewrite.

mod common;
#[path = "common/golden.rs"]
mod golden;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use aggforge_codegen::model::{Phase as SpecPhase, StateTemplate};
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::registry;
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use common::*;
use golden::{changelog_text, decode_container, encode_container, Case, Mode};

use InputMode::{InsertOnly, Retracting};
use Mode::{Global, Immediate, MiniBatch};

fn string() -> SqlType {
    SqlType::of("STRING")
}

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden/operators/v1_single_minmax_sum.bin")
}

fn golden_plan() -> AggPlan {
    plan(
        string(),
        vec![
            call("MIN", Some((1, SqlType::of("INT")))),
            call("MAX", Some((1, SqlType::of("INT")))),
            call("SUM", Some((2, SqlType::of("BIGINT")))),
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

/// Writes the first golden file if it is missing.
fn write_golden_snapshot() {
    let mut op = GroupAggOperator::new(golden_plan()).unwrap();
    run_immediate(&mut op, &input_before_snapshot());
    let payloads = op.snapshot().unwrap();
    write_missing(&golden_path(), &encode_container(&payloads));
}

#[test]
fn restores_the_golden_snapshot() {
    let bytes = std::fs::read(golden_path()).expect("golden snapshot file");
    let payloads = decode_container(&bytes).unwrap();
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

/// The golden cases. Each pins one operator mode over a set of calls; the
/// comments say which state templates and carriers it exercises.
const CASES: &[Case] = &[
    // running_extreme, immediate: i128 (DECIMAL(38, 4)), TIMESTAMP(9),
    // bytes (string(), UTF-8 byte order), f64 (NaN never replaces and is
    // never replaced; -0.0 and 0.0 tie, the first is kept).
    Case {
        name: "single_immediate_extremes",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["DECIMAL(38, 4)", "TIMESTAMP(9)", "STRING", "DOUBLE"],
        calls: "MIN(0), MAX(0), MIN(1), MAX(1), MIN(2), MAX(2), MIN(3), MAX(3)",
        before: &[
            &["a, 1234567890123456789012345678901234.5678, 2024-02-29 12:34:56.123456789, pear, 1.5;
               b, -9999999999999999999999999999999999.9999, 1969-12-31 23:59:59.999999999, '', -0.0;
               NULL, 0.0001, 1970-01-01 00:00:00.000000001, NULL, NaN;
               a-key-longer-than-seven-bytes, NULL, NULL, NULL, NULL"],
            &[
                "a, -1.0000, 2024-02-29 12:34:56.123456788, apple, NaN;
                 b, 0.0000, 1969-12-31 23:59:59.999999998, Äpfel, 0.0",
                "a, 7, 2024-02-29 12:34:56.12345679, zebra, 2.5",
            ],
        ],
        after: &[
            &[
                "b, 5, 1900-01-01 00:00:00, zz, -1.0e300;
                 NULL, -0.0001, 1970-01-01 00:00:00, '', 1.0;
                 a-key-longer-than-seven-bytes, 42.4242, 2262-04-11 23:47:16.854775807, long, inf;
                 a, 1234567890123456789012345678901234.5679, 2024-02-29 12:34:56.123456789, pear, -inf;
                 new, NULL, 2000-01-01 00:00:00.5, x, NaN",
                "a-key-longer-than-seven-bytes, -42, NULL, NULL, -inf",
            ],
        ],
    },
    // running_extreme, mini-batch: f32, bool, DATE (i32), i64
    // (DECIMAL(18, 2)); key INT.
    Case {
        name: "single_minibatch_extremes",
        mode: MiniBatch,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["FLOAT", "BOOLEAN", "DATE", "DECIMAL(18, 2)"],
        calls: "MIN(0), MAX(0), MIN(1), MAX(1), MIN(2), MAX(2), MIN(3), MAX(3)",
        before: &[
            &[
                "1, 1.5, true, 2024-02-29, 9999999999999999.99;
                 2, NaN, false, 1970-01-01, -0.01;
                 NULL, -0.0, NULL, 1969-12-31, NULL",
                "1, -2.5, false, 2000-01-01, -9999999999999999.99;
                 2, 3.0, true, 0001-01-01, 0.00",
            ],
            &["3, NULL, NULL, NULL, NULL;
               1, 0.0, true, 2024-03-01, 5.55;
               NULL, 0.0, true, 1969-12-30, 1.00"],
        ],
        after: &[
            &[
                "2, -1.0, true, 2100-12-31, 1.23; 3, 4.25, false, 2024-01-01, 0.50",
                "3, -4.25, true, 2023-12-31, -0.50; 4, 1.0, NULL, NULL, 3.33",
            ],
            &["1, 1.5, true, 2024-02-29, 9999999999999999.99; NULL, 1.0, false, 1969-12-31, 1.00"],
        ],
    },
    // running_extreme, global: i32, i128 (DECIMAL(38, 0)), bytes, f64;
    // key TIMESTAMP(9). Partial row: key, MIN(INT), MAX(INT),
    // MAX(DECIMAL), MIN(string()), MAX(DOUBLE).
    Case {
        name: "global_extremes",
        mode: Global,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["TIMESTAMP(9)"],
        args: &["INT", "DECIMAL(38, 0)", "STRING", "DOUBLE"],
        calls: "MIN(0), MAX(0), MAX(1), MIN(2), MAX(3)",
        before: &[
            &["2024-02-29 12:34:56.123456789, 5, 5, 99999999999999999999999999999999999999, b, 1.0;
               NULL, NULL, NULL, NULL, NULL, NULL;
               1969-12-31 23:59:59.999999999, -7, 3, -1, a-long-string-value, -0.0"],
            &[
                "2024-02-29 12:34:56.123456789, -3, 2, 0, aa, NaN",
                "1970-01-01 00:00:00.000000001, 1, 1, 1, one, 1.0;
                 1969-12-31 23:59:59.999999999, -8, 9, 5, a, 0.0",
            ],
        ],
        after: &[
            &[
                "NULL, 4, 4, 4, d, 4.0;
                 2024-02-29 12:34:56.123456789, -4, 6, -99999999999999999999999999999999999999, '', inf",
                "1969-12-31 23:59:59.999999999, NULL, NULL, NULL, NULL, NULL;
                 2024-02-29 12:34:56.123456788, 0, 0, 0, new, -0.0",
            ],
            &["1970-01-01 00:00:00.000000001, 2, 0, 2, zero, NaN"],
        ],
    },
    // count_star, count (string()), sum (i32 wrapping, i128 overflowing to
    // NULL, f64 with NaN and -0.0), sum0 (i32, f64), avg (i128, i64),
    // immediate; key BIGINT.
    Case {
        name: "single_immediate_sums",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["BIGINT"],
        args: &["STRING", "INT", "DECIMAL(38, 2)", "DOUBLE", "BIGINT"],
        calls: "COUNT_STAR, COUNT(0), SUM(1), SUM0(1), SUM(2), AVG(2), SUM(3), SUM0(3), AVG(4)",
        before: &[
            &["1, x, 2147483647, 999999999999999999999999999999999999.99, 1.5, 9223372036854775807;
               1, NULL, 1, 999999999999999999999999999999999999.99, -0.0, 1;
               -1, y, NULL, NULL, NULL, NULL;
               NULL, z, -5, 0.01, NaN, -3"],
            &["9223372036854775807, long-string-value, 7, -0.50, -0.0, 4;
               1, w, 3, 1.00, 2.5, -10;
               -1, NULL, NULL, NULL, -0.0, NULL"],
        ],
        after: &[
            &[
                "1, v, 1, 5.00, 1.0, 1; -1, u, 1, 1.11, 0.0, 1",
                "NULL, NULL, NULL, NULL, 1.0, NULL;
                 2, t, -2147483648, -999999999999999999999999999999999999.99, -0.0, -9223372036854775808",
                "2, s, -1, -0.01, -0.0, -1",
            ],
        ],
    },
    // count_star, count (TIMESTAMP(9)), sum (f32 up to inf, i16), sum0
    // (f32, i64 as DECIMAL(18, 3)), avg (DECIMAL(18, 3), f64, i32),
    // mini-batch; composite key (INT, string()).
    Case {
        name: "single_minibatch_sums",
        mode: MiniBatch,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["INT", "STRING"],
        args: &["TIMESTAMP(9)", "FLOAT", "DECIMAL(18, 3)", "DOUBLE", "INT", "SMALLINT"],
        calls: "COUNT_STAR, COUNT(0), SUM(1), SUM0(1), SUM0(2), AVG(2), AVG(3), AVG(4), SUM(5)",
        before: &[
            &[
                "1, a, 2024-02-29 12:34:56.123456789, 0.1, 999999999999999.999, 1.0, 2147483647, 32767;
                 1, a, NULL, 0.2, 0.001, NaN, 1, 1;
                 1, NULL, 1969-12-31 23:59:59.999999999, -0.0, NULL, -0.0, -7, -32768",
                "NULL, a-key-longer-than-seven-bytes, 1970-01-01 00:00:00, NULL, -1.005, NULL, NULL, NULL;
                 2, b, NULL, 3.4028235e38, 1.000, 2.0, 3, 100",
            ],
            &["2, b, 2000-01-01 00:00:00.000000001, 3.4028235e38, 2.000, 3.0, 4, 200;
               1, NULL, NULL, -0.0, 0.000, 0.0, -8, -1"],
        ],
        after: &[
            &[
                "1, a, 2024-02-29 12:34:56.123456789, 0.3, 0.001, -1.0, 2, 2",
                "2, b, NULL, NULL, NULL, NULL, NULL, NULL;
                 3, c, 2024-01-01 00:00:00.5, 1.5, 1.500, 1.5, 1, 1",
            ],
            &["NULL, a-key-longer-than-seven-bytes, NULL, 1.0, 1.005, 1.0, 1, 1;
               1, NULL, 1970-01-01 00:00:00, -0.0, -0.000, -0.0, 0, 0"],
        ],
    },
    // count_star, count (DATE), sum (i64, f64), sum0 (i128), avg
    // (DECIMAL(18, 2), f32), global; key string(). Partial row: key,
    // COUNT(*), COUNT, SUM(BIGINT), SUM0(DECIMAL(38, 2)), AVG sum
    // DECIMAL(38, 2) and count, AVG sum DOUBLE and count, SUM(DOUBLE).
    Case {
        name: "global_sums",
        mode: Global,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["DATE", "BIGINT", "DECIMAL(38, 2)", "DECIMAL(18, 2)", "FLOAT", "DOUBLE"],
        calls: "COUNT_STAR, COUNT(0), SUM(1), SUM0(2), AVG(3), AVG(4), SUM(5)",
        before: &[
            &["a, 2, 1, 9223372036854775807, 999999999999999999999999999999999999.99, 10.25, 2, 3.0, 2, NaN;
               NULL, 1, 0, NULL, 0.00, 0.00, 0, 0.0, 0, NULL;
               a-key-longer-than-seven-bytes, 3, 3, -5, -0.01, -1.11, 3, -0.0, 1, -0.0"],
            &[
                "a, 1, 1, 1, 0.01, 0.01, 1, 1.0, 1, 1.0",
                "b, 1, 1, 7, 7.00, 7.77, 1, 7.5, 1, 7.5",
            ],
        ],
        after: &[
            &[
                "a, 1, 0, NULL, NULL, NULL, 0, 0.0, 0, NULL;
                 NULL, 2, 2, 3, 3.00, 3.33, 2, 1.0, 2, 1.0",
                "c, 1, 1, 1, 1.00, 1.00, 1, 1.0, 1, 1.0",
            ],
            &["a-key-longer-than-seven-bytes, 1, 1, 5, 0.01, 1.11, 1, 0.0, 1, 0.0;
               b, 0, 0, NULL, 0.00, 0.00, 0, 0.0, 0, NULL"],
        ],
    },
    // Retracting, immediate, COUNT(*) counting records: sum_retract (i32,
    // i128 overflowing to NULL), counted_extreme (i32, f64, bytes,
    // TIMESTAMP(9); retractions of unseen values keep negative counts),
    // sum0 (f64), avg (i64), count (string()); key string().
    Case {
        name: "single_immediate_retract",
        mode: Immediate,
        input: Retracting,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["INT", "DECIMAL(38, 2)", "DOUBLE", "BIGINT", "STRING", "TIMESTAMP(9)"],
        calls: "COUNT_STAR, SUM(0), MIN(0), MAX(0), SUM(1), SUM0(2), MAX(2), AVG(3), COUNT(4), MIN(4), MAX(5)",
        before: &[
            &["+I a, 5, 1.50, 1.0, 10, pear, 2024-02-29 12:34:56.123456789;
               +I a, 7, 2.50, NaN, 20, apple, 2024-02-29 12:34:56.123456788;
               +I b, NULL, NULL, -0.0, NULL, NULL, NULL;
               -D zz, 1, 1.00, 1.0, 1, z, 2000-01-01 00:00:00;
               +I a-key-longer-than-seven-bytes, 1, 99999999999999999999999999999999999.99, 0.0, 1, x, 1969-12-31 23:59:59.999999999;
               +I NULL, 3, 0.01, -1.5, -1, Äpfel, 1970-01-01 00:00:00"],
            &[
                "-U a, 42, 9.99, 3.0, 5, kiwi, 2000-01-01 00:00:00;
                 +U a, 6, 1.00, -0.0, 6, fig, 2024-02-29 12:34:56.12345679;
                 +I b, 2, 2.00, 0.0, 2, b, 2000-01-01 00:00:00;
                 -D b, 2, 2.00, 0.0, 2, b, 2000-01-01 00:00:00",
                "+I a-key-longer-than-seven-bytes, 2, 99999999999999999999999999999999999.99, 1.0, 2, y, 1969-12-31 23:59:59.999999998;
                 +I a-key-longer-than-seven-bytes, 3, 999999999999999999999999999999999999.99, 2.0, 3, w, 1969-12-31 23:59:59.999999997",
            ],
        ],
        after: &[
            &[
                "-D a, 5, 1.50, 1.0, 10, pear, 2024-02-29 12:34:56.123456789;
                 +I a, 42, 9.99, 3.0, 5, kiwi, 2000-01-01 00:00:00;
                 -D b, NULL, NULL, -0.0, NULL, NULL, NULL;
                 +I new, 1, 1.00, NaN, 1, n, 2024-01-01 00:00:00",
                "-U a-key-longer-than-seven-bytes, 3, 999999999999999999999999999999999999.99, 2.0, 3, w, 1969-12-31 23:59:59.999999997;
                 +U NULL, 4, 0.02, NaN, -2, ä, 1970-01-01 00:00:00.000000001;
                 -D NULL, 3, 0.01, -1.5, -1, Äpfel, 1970-01-01 00:00:00;
                 -D a, 42, 9.99, 3.0, 5, kiwi, 2000-01-01 00:00:00",
            ],
        ],
    },
    // Retracting, mini-batch, the record counter inserted: sum_retract
    // (f64, i64 as DECIMAL(18, 2)), avg (f64, i128), sum0 (i32), count
    // (DECIMAL(38, 3)), counted_extreme (i128, bool, bytes, DATE); key DATE.
    Case {
        name: "single_minibatch_retract",
        mode: MiniBatch,
        input: Retracting,
        max_parallelism: 128,
        keys: &["DATE"],
        args: &[
            "DOUBLE",
            "DECIMAL(18, 2)",
            "INT",
            "DECIMAL(38, 3)",
            "BOOLEAN",
            "STRING",
            "DATE",
        ],
        calls: "SUM(0), AVG(0), SUM(1), SUM0(2), AVG(3), COUNT(3), MIN(3), MAX(4), MIN(5), MAX(6)",
        before: &[
            &[
                "+I 2024-02-29, 1.5, 1.25, 2147483647, 12345678901234567890123456789012345.678, true, pear, 2024-02-29;
                 +I 2024-02-29, -0.0, -0.25, 1, -0.001, false, apple, 1970-01-01;
                 +I NULL, NaN, NULL, NULL, NULL, NULL, NULL, NULL;
                 +I 1969-12-31, 2.0, 9999999999999999.99, -1, 1.000, true, a-long-string-value, 0001-01-01",
                "-U 2024-02-29, 1.5, 1.25, 2147483647, 12345678901234567890123456789012345.678, true, pear, 2024-02-29;
                 +U 2024-02-29, 3.5, 0.75, 5, 0.500, true, banana, 2000-01-01",
            ],
            &["+I 1969-12-31, -2.0, -9999999999999999.99, 1, 2.000, false, b, 1999-12-31;
               -U 1969-12-31, 7.0, 1.00, 1, 9.999, false, never-seen, 2100-01-01;
               +U 1969-12-31, 7.0, 1.00, 1, 9.999, false, seen, 2100-01-01;
               +I NULL, 1.0, 1.00, 1, 1.000, false, n, 1970-01-02"],
        ],
        after: &[
            &[
                "-D NULL, NaN, NULL, NULL, NULL, NULL, NULL, NULL;
                 -D NULL, 1.0, 1.00, 1, 1.000, false, n, 1970-01-02",
                "-U 1969-12-31, 2.0, 9999999999999999.99, -1, 1.000, true, a-long-string-value, 0001-01-01;
                 +I 2030-01-01, 0.5, 0.50, 0, 0.000, true, z, 2030-01-01",
            ],
            &["+I 1969-12-31, 7.0, 1.00, 1, 9.999, false, never-seen, 2100-01-01;
               -D 2024-02-29, -0.0, -0.25, 1, -0.001, false, apple, 1970-01-01",
                "-D 1969-12-31, -2.0, -9999999999999999.99, 1, 2.000, false, b, 1999-12-31"],
        ],
    },
    // Retracting, global, the record counter's partial last: sum_retract
    // (i64, i128), sum0 (f32), avg (f64), count (string()), count_star;
    // key INT; max parallelism 32768. Partial row: key, SUM(BIGINT) sum
    // and count, SUM(DECIMAL(38, 2)) sum and count, SUM0(FLOAT), AVG sum
    // and count, COUNT, COUNT(*).
    Case {
        name: "global_retract",
        mode: Global,
        input: Retracting,
        max_parallelism: 32768,
        keys: &["INT"],
        args: &["BIGINT", "DECIMAL(38, 2)", "FLOAT", "DOUBLE", "STRING"],
        calls: "SUM(0), SUM(1), SUM0(2), AVG(3), COUNT(4)",
        before: &[
            &["1, 9223372036854775807, 1, 1.50, 1, 1.5, 2.0, 1, 1, 1;
               2, NULL, 0, NULL, 0, -0.0, -0.0, 1, 0, 1;
               NULL, -5, 2, -0.01, 1, NaN, 3.0, 2, 2, 2"],
            &[
                "1, 1, 1, 0.50, 1, 0.5, 1.0, 1, 1, 1",
                "3, 7, 1, 7.00, 1, 7.0, 7.0, 1, 1, 1; 2, 4, 1, 4.00, 1, 4.0, 4.0, 1, 1, 1",
            ],
        ],
        after: &[
            &["1, -1, -1, -0.50, -1, -0.5, -1.0, -1, -1, -1;
               3, -7, -1, -7.00, -1, -7.0, -7.0, -1, -1, -1"],
            &[
                "2, -4, -1, -4.00, -1, -4.0, -4.0, -1, -1, -1; 4, 1, 1, 1.00, 1, 1.0, 1.0, 1, 0, 1",
                "NULL, 5, -2, 0.01, -1, 0.0, -3.0, -2, -2, -1",
            ],
        ],
    },
    // Retracting, global, COUNT(*) counting records: sum0 (i128 to
    // overflow), avg (i32), sum_retract (i8 wrapping); key string() with an
    // empty key; max parallelism 7. Partial row: key, COUNT(*), SUM0, AVG
    // sum and count, SUM sum and count.
    Case {
        name: "global_retract_count_star",
        mode: Global,
        input: Retracting,
        max_parallelism: 7,
        keys: &["STRING"],
        args: &["DECIMAL(38, 0)", "INT", "TINYINT"],
        calls: "COUNT_STAR, SUM0(0), AVG(1), SUM(2)",
        before: &[
            &["a, 2, 99999999999999999999999999999999999999, 10, 2, 127, 1;
               a-key-longer-than-seven-bytes, 1, -1, -3, 1, -128, 1;
               '', 1, 0, 0, 0, NULL, 0"],
            &["a, 1, 0, 1, 1, 1, 1"],
        ],
        after: &[
            &[
                "a, -1, 1, -1, -1, -1, -1; '', -1, 0, 0, 0, NULL, 0",
                "b, 1, 5, 5, 1, 5, 1",
            ],
            &["a-key-longer-than-seven-bytes, 1, 1, 3, 1, 127, 1"],
        ],
    },
    // No GROUP BY: the one group of the empty key; count_star, sum (i64),
    // running_extreme (bytes, TIMESTAMP(9), bool), immediate.
    Case {
        name: "single_immediate_no_key",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &[],
        args: &["BIGINT", "STRING", "TIMESTAMP(9)", "BOOLEAN"],
        calls: "COUNT_STAR, SUM(0), MAX(1), MIN(2), MAX(3)",
        before: &[&[
            "1, a, 2024-02-29 12:34:56.123456789, false; NULL, NULL, NULL, NULL",
            "5, zz, 1969-12-31 23:59:59.999999999, true",
        ]],
        after: &[
            &["-6, zzz, 1970-01-01 00:00:00, false"],
            &["0, a, 1969-12-31 23:59:59.999999998, true"],
        ],
    },
    // first_last, immediate: bytes (string()), f64 (NaN and -0.0 are
    // values like any other), bool, TIMESTAMP(9); NULLs never taken; key
    // STRING.
    Case {
        name: "single_immediate_first_last",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["STRING", "DOUBLE", "BOOLEAN", "TIMESTAMP(9)"],
        calls: "FIRST_VALUE(0), LAST_VALUE(0), FIRST_VALUE(1), LAST_VALUE(1), \
                FIRST_VALUE(2), LAST_VALUE(2), FIRST_VALUE(3), LAST_VALUE(3)",
        before: &[
            &["a, pear, NaN, true, 2024-02-29 12:34:56.123456789;
               b, NULL, NULL, NULL, NULL;
               NULL, '', -0.0, false, 1969-12-31 23:59:59.999999999;
               a, apple, 1.5, false, NULL"],
            &["b, x, 0.0, true, 1970-01-01 00:00:00.000000001;
               a, NULL, NULL, NULL, 2000-01-01 00:00:00"],
        ],
        after: &[&[
            "a, zebra, -0.0, true, NULL; b, NULL, NaN, NULL, NULL",
            "NULL, y, 2.5, true, 2262-04-11 23:47:16.854775807; new, n, NULL, false, NULL",
        ]],
    },
    // first_last, mini-batch: i128 (DECIMAL(38, 4)), DATE (i32), f32,
    // i64; the bundle folds rows in arrival order; key INT.
    Case {
        name: "single_minibatch_first_last",
        mode: MiniBatch,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["DECIMAL(38, 4)", "DATE", "FLOAT", "BIGINT"],
        calls: "FIRST_VALUE(0), LAST_VALUE(0), FIRST_VALUE(1), LAST_VALUE(1), \
                FIRST_VALUE(2), LAST_VALUE(2), FIRST_VALUE(3), LAST_VALUE(3)",
        before: &[
            &[
                "1, 1.0001, 2024-02-29, 1.5, 9223372036854775807;
                 2, NULL, NULL, NULL, NULL;
                 1, -2.0000, 1970-01-01, NaN, -1",
                "2, 3.0000, 0001-01-01, -0.0, 0; NULL, 5.5000, 1969-12-31, 2.5, 7",
            ],
            &["1, NULL, NULL, NULL, NULL; 3, 9.9999, 2100-12-31, 0.0, -9223372036854775808"],
        ],
        after: &[
            &[
                "1, 4.0000, 2024-03-01, 4.25, 4; 2, NULL, 2000-01-01, NULL, NULL",
                "2, -3.0000, NULL, 1.0, 2; 4, NULL, NULL, NULL, NULL",
            ],
            &["3, 9.9999, 2100-12-31, 0.0, -9223372036854775808"],
        ],
    },
    // first_last_retract, immediate, COUNT(*) counting records: bytes
    // (string()), f64 (-0.0 and 0.0 are two values, NaN one), TIMESTAMP(9);
    // a retraction removes the earliest live arrival of an equal value, one
    // never seen changes nothing; key INT.
    Case {
        name: "single_immediate_first_last_retract",
        mode: Immediate,
        input: Retracting,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["STRING", "DOUBLE", "TIMESTAMP(9)"],
        calls: "COUNT_STAR, FIRST_VALUE(0), LAST_VALUE(0), FIRST_VALUE(1), LAST_VALUE(1), \
                FIRST_VALUE(2), LAST_VALUE(2)",
        before: &[
            &["+I 1, pear, 0.0, 2024-02-29 12:34:56.123456789;
               +I 1, apple, -0.0, NULL;
               +I 1, pear, NaN, 1969-12-31 23:59:59.999999999;
               -D 9, ghost, 1.0, 2000-01-01 00:00:00;
               +I 2, NULL, NULL, NULL;
               +I NULL, x, 1.5, 1970-01-01 00:00:00"],
            &[
                "-U 1, pear, 0.0, 2024-02-29 12:34:56.123456789;
                 +U 1, fig, NaN, 2000-01-01 00:00:00",
                "+I 2, kiwi, 2.5, 2000-01-01 00:00:00; -D 1, plum, 7.0, NULL",
            ],
        ],
        after: &[&[
            "-U 1, apple, -0.0, NULL; +U 1, pear, 0.0, 2024-02-29 12:34:56.123456789",
            "-D 1, pear, NaN, 1969-12-31 23:59:59.999999999; -D 2, NULL, NULL, NULL; \
             +I 3, z, NULL, NULL",
        ]],
    },
    // first_last_retract, mini-batch, the record counter inserted: i128
    // (DECIMAL(38, 4)), bool, DATE; key STRING.
    Case {
        name: "single_minibatch_first_last_retract",
        mode: MiniBatch,
        input: Retracting,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["DECIMAL(38, 4)", "BOOLEAN", "DATE"],
        calls: "FIRST_VALUE(0), LAST_VALUE(0), FIRST_VALUE(1), LAST_VALUE(1), \
                FIRST_VALUE(2), LAST_VALUE(2)",
        before: &[
            &[
                "+I a, 1.0000, true, 2024-02-29; +I a, 2.0000, false, 1970-01-01;
                 +I b, NULL, NULL, NULL",
                "+I a, 1.0000, false, 2000-01-01; -D a, 1.0000, true, 2024-02-29",
            ],
            &["+I c, -9.9999, true, 0001-01-01; +I a, 3.0000, true, 2100-12-31"],
        ],
        after: &[
            &[
                "-D a, 3.0000, true, 2100-12-31; -D b, NULL, NULL, NULL",
                "+I c, 5.5000, false, 1999-12-31; -D c, -9.9999, true, 0001-01-01",
            ],
            &["-D a, 2.0000, false, 1970-01-01; +I d, 0.0001, NULL, 2024-01-01"],
        ],
    },
];

/// Writes the missing golden files of [`CASES`] (and the first golden),
/// never overwriting one. Before writing an expected changelog it checks
/// that restoring the snapshot file continues exactly like an
/// uninterrupted run.
#[test]
#[ignore]
fn write_golden_snapshots() {
    write_golden_snapshot();
    for case in CASES {
        let (payloads, whole) = case.uninterrupted();
        assert!(!payloads.is_empty(), "{}: no state to snapshot", case.name);
        write_missing(&case.bin_path(), &encode_container(&payloads));
        let bytes = std::fs::read(case.bin_path()).unwrap();
        let mut op = case.operator();
        op.restore(&decode_container(&bytes).unwrap()).unwrap();
        let restored = case.run(&mut op, case.after, None);
        assert_eq!(
            changelog_text(&restored),
            changelog_text(&whole),
            "{}: the restored run differs from the uninterrupted run",
            case.name
        );
        write_missing(&case.expected_path(), changelog_text(&restored).as_bytes());
    }
}

fn write_missing(path: &std::path::Path, bytes: &[u8]) {
    if path.exists() {
        return;
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
    eprintln!("wrote {} ({} bytes)", path.display(), bytes.len());
}

/// Runs `check` over every case and reports every failing one.
fn check_all(check: impl Fn(&Case) -> Result<(), String>) {
    let failures: Vec<String> = CASES.iter().filter_map(|c| check(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} golden cases fail:\n\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_golden_case_restores_and_continues() {
    check_all(Case::check);
}

#[test]
fn golden_cases_restore_rescaled() {
    check_all(|case| {
        let mut most = 0;
        for parallelism in [2, 3, 16] {
            if parallelism <= case.max_parallelism {
                most = most.max(case.check_rescaled(parallelism)?);
            }
        }
        // The state really was split, unless it is one key group.
        let key_groups = decode_container(&std::fs::read(case.bin_path()).unwrap())?.len();
        if most < 2 && key_groups > 1 {
            return Err(format!("{}: no parallelism split the state", case.name));
        }
        Ok(())
    });
}

#[test]
fn every_golden_file_belongs_to_a_case() {
    let mut names = BTreeSet::new();
    for case in CASES {
        assert!(names.insert(case.name), "duplicate case name {}", case.name);
    }
    let mut expected: Vec<String> = CASES
        .iter()
        .map(|c| format!("v{}_{}.bin", golden::GOLDEN_VERSION, c.name))
        .chain(["v1_single_minmax_sum.bin".to_string()])
        .collect();
    expected.sort();
    assert_eq!(golden::golden_bin_files(), expected);
}

#[test]
fn the_local_phase_keeps_no_snapshot_state() {
    // Were the local phase to keep state, it would need golden cases too.
    let mut checked = 0;
    for case in CASES.iter().filter(|c| c.mode != Global) {
        let (local, _) = two_phase_plans(&case.single_plan());
        // MIN/MAX over retractions have no two-phase plan.
        let Ok(mut op) = GroupAggOperator::new(local) else {
            continue;
        };
        for bundle in case.before {
            for text in *bundle {
                op.process(&case.batch(text)).unwrap();
            }
            assert!(op.flush().unwrap().is_some());
            assert!(op.snapshot().unwrap().is_empty(), "{}", case.name);
        }
        let golden = decode_container(&std::fs::read(case.bin_path()).unwrap()).unwrap();
        assert!(op.restore(&golden).is_err(), "{}", case.name);
        checked += 1;
    }
    assert!(checked >= 4);
}

/// Which state template serves each call of a case, per the specs, with
/// the argument's type row: the record counter the operator inserts over
/// retracting input without COUNT(*) included.
fn templates_of(case: &Case) -> Vec<(StateTemplate, Option<String>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../specs");
    let templates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/templates");
    let specs = aggforge_codegen::load_dir(&dir, &templates).expect("specs load");
    let declared = specs.specializations();
    let plan = case.plan();
    let mut names = case.operator().specializations().to_vec();
    if case.input == Retracting && plan.record_counter().is_none() {
        let counter = registry::lookup("COUNT_STAR", None, plan.phase, case.input, false).unwrap();
        names.push(counter.name.to_string());
    }
    names
        .into_iter()
        .map(|name| {
            let spec = declared.iter().find(|d| d.display_name() == name).unwrap();
            (spec.entry.state, spec.ty.map(|t| t.name.clone()))
        })
        .collect()
}

#[test]
fn golden_cases_cover_every_state_template() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../specs");
    let templates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/templates");
    let specs = aggforge_codegen::load_dir(&dir, &templates).expect("specs load");
    let mut rows: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut modes: BTreeMap<&str, BTreeSet<Mode>> = BTreeMap::new();
    let mut inputs: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for case in CASES {
        for (template, row) in templates_of(case) {
            rows.entry(template.as_str())
                .or_default()
                .insert(row.unwrap_or_else(|| case.input.as_str().to_string()));
            modes
                .entry(template.as_str())
                .or_default()
                .insert(case.mode);
            inputs
                .entry(template.as_str())
                .or_default()
                .insert(case.input.as_str());
        }
    }
    for template in StateTemplate::ALL {
        let name = template.as_str();
        let entries: Vec<_> = specs
            .entries
            .iter()
            .filter(|e| e.state == template)
            .collect();
        let global = entries
            .iter()
            .any(|e| e.phases.contains(&SpecPhase::Global));
        let want: BTreeSet<Mode> = [Immediate, MiniBatch]
            .into_iter()
            .chain(global.then_some(Global))
            .collect();
        assert_eq!(modes.get(name), Some(&want), "{name}: operator modes");
        let spec_inputs: BTreeSet<&str> = entries.iter().map(|e| e.input.as_str()).collect();
        assert_eq!(inputs.get(name), Some(&spec_inputs), "{name}: input modes");
        // Two carriers each (COUNT(*) has no argument: both input modes).
        assert!(rows[name].len() >= 2, "{name}: types {:?}", rows[name]);
    }
    let all_rows: BTreeSet<&String> = rows.values().flatten().collect();
    for row in [
        "DECIMAL_38",
        "DECIMAL_18",
        "TIMESTAMP_9",
        "VARCHAR",
        "FLOAT",
        "DOUBLE",
        "BOOLEAN",
        "DATE",
    ] {
        assert!(all_rows.contains(&row.to_string()), "no case over {row}");
    }
}
