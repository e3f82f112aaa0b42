//! The checked-in specs load without errors and declare what we expect.

mod common;

use std::path::PathBuf;

use aggforge_codegen::model::{Function, InputMode, Phase, StateTemplate};
use common::RowCounts;

fn specs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../specs")
}

#[test]
fn real_specs_load() {
    let templates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../runtime/src/templates");
    let specs = match aggforge_codegen::load_dir(&specs_dir(), &templates) {
        Ok(specs) => specs,
        Err(errors) => panic!("specs do not load:\n{errors}"),
    };
    // Counts follow from the type table, so adding a type row is a spec
    // edit only: MIN, MAX and COUNT take every row, SUM, SUM0 and AVG the
    // numeric ones.
    // ARRAY (no order) is a COUNT, FIRST_VALUE and LAST_VALUE argument
    // only; `rows` are the ordered rows.
    let RowCounts {
        ordered: rows,
        arrays,
        numeric,
        strings,
    } = RowCounts::of(&specs);
    assert_eq!(arrays, 1);
    assert!(rows >= 15 && numeric == 8, "{rows} rows, {numeric} numeric");
    assert_eq!(specs.templates.len(), 13);
    // 18 plain entries (two each for FIRST_VALUE/LAST_VALUE, LISTAGG and
    // SINGLE_VALUE)
    // and 15 DISTINCT ones (specs/distinct.toml: over retracting input the
    // order-sensitive folds have their own single-phase entries).
    assert_eq!(specs.entries.len(), 33);
    let all = specs.specializations();
    // Each input mode: every function plain, and every one but COUNT(*),
    // FIRST_VALUE, LAST_VALUE and SINGLE_VALUE DISTINCT.
    assert_eq!(
        all.len(),
        2 * (6 * rows + 1 + 3 * numeric + strings)
            + 2 * (3 * rows + 3 * numeric + strings)
            + 2 * 3 * arrays
    );
    // Two-phase DISTINCT over FLOAT/DOUBLE and retracting input: COUNT, and
    // MIN/MAX (a multiset in Java order), only.
    assert!(all
        .iter()
        .filter(|s| s.entry.distinct && s.entry.phases.contains(&Phase::Global))
        .filter(|s| s.entry.input == InputMode::Retracting)
        .filter(|s| s
            .ty
            .is_some_and(|t| t.name == "FLOAT" || t.name == "DOUBLE"))
        .all(|s| matches!(s.function, Function::Count | Function::Min | Function::Max)));
    let specializations: Vec<_> = all.iter().filter(|s| !s.entry.distinct).collect();
    let count = |f: Function, input: InputMode| {
        specializations
            .iter()
            .filter(|s| s.function == f && s.entry.input == input)
            .count()
    };
    for input in [InputMode::InsertOnly, InputMode::Retracting] {
        assert_eq!(count(Function::Min, input), rows);
        assert_eq!(count(Function::Max, input), rows);
        assert_eq!(count(Function::CountStar, input), 1);
        assert_eq!(count(Function::Count, input), rows + arrays);
        assert_eq!(count(Function::Sum, input), numeric);
        assert_eq!(count(Function::Sum0, input), numeric);
        assert_eq!(count(Function::Avg, input), numeric);
        assert_eq!(count(Function::FirstValue, input), rows + arrays);
        assert_eq!(count(Function::LastValue, input), rows + arrays);
        assert_eq!(count(Function::ListAgg, input), strings);
        assert_eq!(count(Function::SingleValue, input), rows);
    }
    assert!(specs
        .entries
        .iter()
        .filter(|e| e.functions == [Function::Sum])
        .all(|e| (e.state == StateTemplate::SumRetract) == (e.input == InputMode::Retracting)));
    // Files in name order: avg, count, distinct, extreme, first_last, sum.
    assert_eq!(specs.entries[0].state, StateTemplate::Avg);
    assert!(specs.entries[0].location.file.ends_with("avg.toml"));
    assert_eq!(specs.entries[0].location.line, 9);
    let extreme = specs
        .entries
        .iter()
        .find(|e| e.state == StateTemplate::RunningExtreme && !e.distinct)
        .unwrap();
    assert_eq!(extreme.location.line, 24);
    assert_eq!(extreme.phases, Phase::ALL.to_vec());
    let decimal = specs.type_row("DECIMAL_18").unwrap();
    assert_eq!(decimal.precision, Some((1, 18)));
    let types_text = std::fs::read_to_string(specs_dir().join("types.toml")).unwrap();
    let name_line = types_text
        .lines()
        .position(|l| l == "name = \"DECIMAL_18\"")
        .unwrap();
    assert_eq!(decimal.location.line, name_line, "the row's [[type]] line");
}
