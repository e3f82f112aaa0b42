//! The coverage matrix over the real specs and small in-memory ones.

mod common;

use std::path::PathBuf;

use aggforge_codegen::coverage::{coverage, render_table, CoverageRow, Filter, Status};
use aggforge_codegen::load_dir;
use aggforge_codegen::model::{Function, InputMode, Phase};
use common::*;

#[test]
fn real_matrix() {
    let specs = load_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../specs"),
        &templates_dir(),
    )
    .unwrap();
    // Counts follow from the type table: MIN, MAX, COUNT, FIRST_VALUE and
    // LAST_VALUE take every ordered row, SUM, SUM0 and AVG the numeric
    // ones, LISTAGG the character strings; ARRAY (no order) is a COUNT,
    // FIRST_VALUE and LAST_VALUE argument only.
    let RowCounts {
        ordered: types,
        arrays,
        numeric,
        strings,
    } = RowCounts::of(&specs);
    assert_eq!(arrays, 1);
    let all_types = types + arrays;
    let rows = coverage(&specs);
    assert_eq!(rows.len(), (10 * all_types + 1) * 3 * 2 * 2);
    // Insert-only specializations in 3 phases, retracting COUNT, COUNT(*),
    // SUM, SUM0, AVG in 3 phases, retracting MIN/MAX in 3 phases too.
    let insert_only = 3 * types + 1 + 3 * numeric;
    let retracting = types + 1 + 3 * numeric;
    // DISTINCT: every function but COUNT(*), both inputs. Over insert-only
    // input in every phase (the order-sensitive folds in Java's HashMap
    // order); over retracting input in the local and global phases only
    // where the result cannot depend on that order: COUNT, MIN/MAX (a
    // multiset in Java order), SUM/SUM0/AVG but over FLOAT, DOUBLE and
    // DECIMAL(19..38).
    let ordered_sums = 3;
    let sums = |ordered: usize| 3 * (3 * (numeric - ordered) + ordered);
    let distinct_insert_only = 3 * types + 2 * 3 * types + 3 * 3 * numeric;
    let distinct_retracting = 3 * types + 2 * 3 * types + sums(ordered_sums);
    // LISTAGG(DISTINCT): insert-only in every phase (its global fold in
    // Java's HashMap order of strings), retracting in the single phase.
    let distinct = distinct_insert_only + distinct_retracting + 3 * strings + strings;
    // FIRST_VALUE and LAST_VALUE: every row, both inputs, single phase.
    let first_last = 2 * 2 * types;
    // LISTAGG: both inputs, every phase.
    let listagg = 2 * 3 * strings;
    // SINGLE_VALUE: every row, both inputs, every phase.
    let single_value = 2 * types * 3;
    assert_eq!(
        rows.iter().filter(|r| r.status.is_specialized()).count(),
        insert_only * 3
            + retracting * 3
            + 2 * types * 3
            + distinct
            + first_last
            + listagg
            + single_value
            // ARRAY: COUNT (2 inputs x 3 phases), FIRST/LAST_VALUE (2 x 2
            // inputs, single phase).
            + arrays * (6 + 4)
    );
    let avg_int_global = rows
        .iter()
        .find(|r| {
            r.function == Function::Avg
                && r.type_name() == "INT"
                && r.phase == Phase::Global
                && r.input == InputMode::InsertOnly
                && !r.distinct
        })
        .unwrap();
    match &avg_int_global.status {
        Status::Specialized(at) => {
            assert!(at.file.ends_with("avg.toml"));
            assert_eq!(at.line, 9);
        }
        other => panic!("{other}"),
    }
    let distinct_rows = || rows.iter().filter(|r| r.distinct);
    assert_eq!(
        distinct_rows()
            .filter(|r| r.status.is_specialized())
            .count(),
        distinct
    );
    // Two-phase DISTINCT over retracting input never runs an order-sensitive
    // fold (runtime/src/operator/view_order.rs models insert-only input).
    // MIN/MAX over retracting input keep a multiset in Java order: the
    // extreme does not depend on the fold order.
    let order_sensitive = |r: &&CoverageRow| {
        let float = matches!(r.type_name(), "FLOAT" | "DOUBLE");
        match r.function {
            Function::Min | Function::Max => float && r.input == InputMode::InsertOnly,
            Function::Sum | Function::Sum0 | Function::Avg => {
                float || r.type_name() == "DECIMAL_38"
            }
            _ => false,
        }
    };
    assert!(distinct_rows()
        .filter(|r| r.status.is_specialized() && r.phase != Phase::Single)
        .filter(|r| r.input == InputMode::Retracting)
        .all(|r| !order_sensitive(&r)));
    assert!(distinct_rows()
        .filter(|r| r.input == InputMode::InsertOnly && r.phase == Phase::Global)
        .any(|r| r.status.is_specialized() && order_sensitive(&r)));
    assert!(distinct_rows()
        .filter(|r| r.function == Function::CountStar)
        .all(|r| r.status == Status::NoEntry));
    // Over retracting input: COUNT, SUM, SUM0, AVG and MIN/MAX in every
    // phase.
    let retracting = |f: Function| {
        rows.iter()
            .filter(|r| r.input == InputMode::Retracting && !r.distinct && r.function == f)
            .filter(|r| r.status.is_specialized())
            .count()
    };
    assert_eq!(retracting(Function::Min), types * 3);
    assert_eq!(retracting(Function::Max), types * 3);
    assert_eq!(retracting(Function::CountStar), 3);
    assert_eq!(retracting(Function::Count), all_types * 3);
    assert_eq!(retracting(Function::Sum), numeric * 3);
    assert_eq!(retracting(Function::Avg), numeric * 3);
    assert!(!rows.iter().any(|r| r.function == Function::Sum
        && r.type_name() == "DATE"
        && r.status.is_specialized()));
}

#[test]
fn phase_not_listed_names_the_entry() {
    let text = with_line(EXTREME, 5, "phases = [\"single\"]");
    let specs = load(&[("specs/types.toml", TYPES), ("specs/extreme.toml", &text)]).unwrap();
    let filter = Filter {
        function: Some(Function::Max),
        ty: Some("DOUBLE".into()),
        phase: Some(Phase::Local),
        input: Some(InputMode::InsertOnly),
    };
    let rows: Vec<_> = coverage(&specs)
        .into_iter()
        .filter(|r| filter.matches(r))
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0].status.to_string(),
        "not specialized: phase not listed in specs/extreme.toml:1"
    );
    assert_eq!(rows[1].status, Status::NoEntry);
    let table = render_table(&rows);
    assert!(table.contains("MAX       DOUBLE  local  insert_only  no        not specialized  phase not listed in specs/extreme.toml:1"), "{table}");
}
