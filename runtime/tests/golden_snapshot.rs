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
//! 1. Append a [`Case`] to [`CASES`] (`common/golden_cases.rs`) with a new `name`. Input cells are
//!    text (syntax in `common/golden.rs`); single-phase rows are the key
//!    columns then `args`, global-phase rows the key columns then the
//!    partial columns of each call in Flink's accumulator layout (see the
//!    comments on the global cases).
//! 2. Run the writer, which writes only missing files and first checks
//!    that restoring its snapshot continues exactly like an uninterrupted
//!    run:
//!
//!    ```text
//!    cargo test -p aggforge-runtime --test integration -- --ignored golden_snapshot::write_golden_snapshots
//!    ```
//!
//! 3. Review the new `.expected.txt` against Flink's semantics and commit
//!    both files.
//!
//! Never regenerate or edit an existing file of a released format: a
//! change that breaks one of these tests breaks users' savepoints. If an
//! intended change alters a changelog, that is a behaviour change to
//! decide on, not a file to rewrite.

#[path = "common/golden.rs"]
mod golden;
#[path = "common/golden_accumulators.rs"]
mod golden_accumulators;
#[path = "common/golden_cases.rs"]
mod golden_cases;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use crate::common::*;
use aggforge_codegen::model::{Phase as SpecPhase, StateTemplate};
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::registry;
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use golden::{changelog_text, decode_container, encode_container, Case, Mode};
use golden_cases::CASES;

use InputMode::Retracting;
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
