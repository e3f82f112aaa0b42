//! The checked-in specs load without errors and declare what we expect.

use std::path::PathBuf;

use aggforge_codegen::model::{Function, InputMode, Phase, StateTemplate};

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
    assert_eq!(specs.types.len(), 15);
    assert_eq!(specs.templates.len(), 8);
    assert_eq!(specs.entries.len(), 12);
    let specializations = specs.specializations();
    assert_eq!(specializations.len(), 140);
    let count = |f: Function, input: InputMode| {
        specializations
            .iter()
            .filter(|s| s.function == f && s.entry.input == input)
            .count()
    };
    for input in [InputMode::InsertOnly, InputMode::Retracting] {
        assert_eq!(count(Function::Min, input), 15);
        assert_eq!(count(Function::Max, input), 15);
        assert_eq!(count(Function::CountStar, input), 1);
        assert_eq!(count(Function::Count, input), 15);
        assert_eq!(count(Function::Sum, input), 8);
        assert_eq!(count(Function::Sum0, input), 8);
        assert_eq!(count(Function::Avg, input), 8);
    }
    assert!(specs
        .entries
        .iter()
        .filter(|e| e.functions == [Function::Sum])
        .all(|e| (e.state == StateTemplate::SumRetract) == (e.input == InputMode::Retracting)));
    // Files in name order: avg, count, extreme, sum.
    assert_eq!(specs.entries[0].state, StateTemplate::Avg);
    assert!(specs.entries[0].location.file.ends_with("avg.toml"));
    assert_eq!(specs.entries[0].location.line, 9);
    let extreme = specs
        .entries
        .iter()
        .find(|e| e.state == StateTemplate::RunningExtreme)
        .unwrap();
    assert_eq!(extreme.location.line, 24);
    assert_eq!(extreme.phases, Phase::ALL.to_vec());
    let decimal = specs.type_row("DECIMAL_18").unwrap();
    assert_eq!(decimal.precision, Some((1, 18)));
    assert_eq!(decimal.location.line, 90);
}
