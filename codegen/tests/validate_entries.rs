//! One test per entry rule: file, exact line and a key phrase. Entries are
//! checked against the real state template declarations unless a test
//! changes them.

mod common;

use aggforge_codegen::model::{Numeric, StateTemplate};
use common::*;

const F: &str = "specs/family.toml";

#[test]
fn base_entries_are_valid() {
    for text in [EXTREME, SUM, AVG, COUNT_STAR] {
        let loaded = load(&[("specs/types.toml", TYPES), (F, text)]);
        assert!(loaded.is_ok(), "{text}\n{}", loaded.unwrap_err());
    }
}

#[test]
fn toml_syntax_error() {
    assert_entry_error(
        &with_line(EXTREME, 5, "phases = [\"single\", \"local\""),
        6,
        &["TOML syntax error"],
    );
}

#[test]
fn unknown_field() {
    let text = with_line(EXTREME, 4, "distinct = false\nfilter = true");
    assert_entry_error(&text, 5, &["unknown field `filter`", "remove or rename"]);
}

#[test]
fn missing_field() {
    assert_entry_error(
        &with_line(EXTREME, 5, ""),
        1,
        &["missing field `phases`", "add it"],
    );
}

#[test]
fn wrong_value_type() {
    assert_entry_error(
        &with_line(EXTREME, 4, "distinct = \"no\""),
        4,
        &["wrong value type", "boolean"],
    );
}

#[test]
fn unknown_function_suggests() {
    assert_entry_error(
        &with_line(EXTREME, 2, "functions = [\"MIN\", \"MXA\"]"),
        2,
        &["unknown function `MXA`", "did you mean `MAX`?"],
    );
}

#[test]
fn unknown_type_row_suggests() {
    let text = with_line(EXTREME, 6, "types = [\n  \"INT\",\n  \"DUOBLE\",\n]");
    assert_entry_error(
        &text,
        8,
        &["unknown type row `DUOBLE`", "did you mean `DOUBLE`?"],
    );
}

#[test]
fn unknown_phase() {
    assert_entry_error(
        &with_line(EXTREME, 5, "phases = [\"single\", \"globl\"]"),
        5,
        &["unknown phase `globl`", "did you mean `global`?"],
    );
}

#[test]
fn unknown_input_mode() {
    assert_entry_error(
        &with_line(EXTREME, 3, "input = \"append_only\""),
        3,
        &[
            "unknown input mode `append_only`",
            "insert_only, retracting",
        ],
    );
}

#[test]
fn count_star_needs_empty_types() {
    assert_entry_error(
        &with_line(COUNT_STAR, 6, "types = [\"INT\"]"),
        6,
        &["COUNT_STAR takes no argument, so `types` must be `[]`"],
    );
}

#[test]
fn argument_function_needs_types() {
    assert_entry_error(
        &with_line(SUM, 6, "types = []"),
        6,
        &["SUM takes an argument, so `types` must list at least one type row"],
    );
}

#[test]
fn the_template_follows_from_function_and_input() {
    let retracting = with_line(SUM, 3, "input = \"retracting\"");
    let text = format!("{SUM}\n{retracting}");
    let specs = load(&[("specs/types.toml", TYPES), (F, &text)]).unwrap();
    let states: Vec<StateTemplate> = specs.entries.iter().map(|e| e.state).collect();
    assert_eq!(states, [StateTemplate::Sum, StateTemplate::SumRetract]);
}

#[test]
fn one_entry_spans_numeric_classes_with_their_own_layouts() {
    let specs = load(&[("specs/types.toml", TYPES), (F, AVG)]).unwrap();
    let all = specs.specializations();
    let shape = |row: &str| {
        let spec = all.iter().find(|s| s.ty.unwrap().name == row).unwrap();
        let shape = spec.shape().unwrap();
        let partial: Vec<String> = shape
            .partial
            .iter()
            .map(|f| {
                format!(
                    "{}: {}",
                    f.name,
                    aggforge_codegen::validate::type_expr_text(&f.ty)
                )
            })
            .collect();
        (
            partial.join(", "),
            aggforge_codegen::validate::type_expr_text(&shape.result),
            shape.params.division,
        )
    };
    use aggforge_codegen::model::Division::*;
    assert_eq!(
        shape("INT"),
        (
            "sum: BIGINT, count: BIGINT".into(),
            "arg".into(),
            Some(Truncate)
        )
    );
    assert_eq!(
        shape("DOUBLE"),
        (
            "sum: DOUBLE, count: BIGINT".into(),
            "arg".into(),
            Some(Float)
        )
    );
    assert_eq!(
        shape("DECIMAL_38"),
        (
            "sum: DECIMAL(38, s), count: BIGINT".into(),
            "DECIMAL(38, max(6, s))".into(),
            Some(HalfUp)
        )
    );
}

#[test]
fn state_is_no_longer_written() {
    assert_entry_error(
        &with_line(EXTREME, 4, "distinct = false\nstate = \"running_extreme\""),
        5,
        &[
            "entries no longer write `state`",
            "the state template follows from `functions` and `input` (here `running_extreme`, declared at templates/running_extreme.rs:",
            "remove `state` from the entry",
        ],
    );
}

#[test]
fn partial_is_no_longer_written() {
    let text = format!("{AVG}partial = [{{ name = \"sum\", type = \"BIGINT\" }}]\n");
    assert_entry_error(
        &text,
        7,
        &[
            "entries no longer write `partial`",
            "the state template declares its partial layout per numeric class (here `avg`",
            "remove `partial`",
        ],
    );
}

#[test]
fn result_and_params_are_no_longer_written() {
    let text = format!("{SUM}result = \"arg\"\nparams = {{ overflow = \"wrap\" }}\n");
    let errors = errors(&[("specs/types.toml", TYPES), (F, &text)]);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_error(
        &errors,
        F,
        7,
        &["entries no longer write `result`", "remove `result`"],
    );
    assert_error(
        &errors,
        F,
        8,
        &[
            "entries no longer write `params`",
            "its template parameters per numeric class (here `sum`, declared at templates/sum.rs:",
        ],
    );
}

#[test]
fn old_fields_are_refused_even_when_the_template_is_unknown() {
    let text = with_line(EXTREME, 4, "distinct = false\nstate = \"running_extreme\"");
    let text = with_line(&text, 2, "functions = [\"MEDIAN\"]");
    let errors = errors(&[("specs/types.toml", TYPES), (F, &text)]);
    assert_error(&errors, F, 2, &["unknown function `MEDIAN`"]);
    assert_error(
        &errors,
        F,
        5,
        &["entries no longer write `state`", "remove `state`"],
    );
}

#[test]
fn functions_needing_different_templates() {
    let text = with_line(SUM, 2, "functions = [\"SUM\", \"SUM0\"]");
    assert_entry_error(
        &text,
        2,
        &[
            "function SUM0 is served by state template `sum0` (templates/sum0.rs:",
            "but SUM by `sum`",
            "put SUM0 in its own entry",
        ],
    );
}

#[test]
fn single_phase_templates_refuse_the_other_phases() {
    let retracting = with_line(EXTREME, 3, "input = \"retracting\"");
    let text = with_line(
        &retracting,
        2,
        "functions = [\"FIRST_VALUE\", \"LAST_VALUE\"]",
    );
    let errors = errors(&[("specs/types.toml", TYPES), (F, &text)]);
    assert_eq!(errors.len(), 2, "{errors:?}");
    for phase in ["local", "global"] {
        assert_error(
            &errors,
            F,
            5,
            &[
                "state template `first_last_retract` runs in the single phase only",
                &format!("remove phase {phase}"),
            ],
        );
    }
    // Retracting MIN/MAX exchange Flink's accumulator as one partial field.
    let specs = load(&[("specs/types.toml", TYPES), (F, &retracting)]).unwrap();
    assert_eq!(specs.entries[0].state, StateTemplate::CountedExtreme);
    let shape = specs.specializations()[0].shape().unwrap().clone();
    assert_eq!(shape.partial.len(), 1);
    assert_eq!(
        shape.partial[0].ty,
        aggforge_codegen::model::TypeExpr::Accumulator
    );
}

#[test]
fn input_mode_without_template_gives_the_declared_reason() {
    let text = with_line(
        &with_line(EXTREME, 3, "input = \"retracting\""),
        5,
        "phases = [\"single\"]",
    );
    assert_only_error_with(
        &[("specs/types.toml", TYPES), (F, &text)],
        &templates_without("counted_extreme"),
        F,
        3,
        &[
            "no state template serves MIN over retracting input",
            "state template `running_extreme` (templates/running_extreme.rs:",
            "only accepts insert_only input (over retracting input MIN/MAX keep a counted multiset",
            "write input = \"insert_only\"",
        ],
    );
}

#[test]
fn distinct_runs_under_the_view_in_every_phase_its_template_takes() {
    // SUM's entry lists single, local and global; DISTINCT keeps them (the
    // view's partial follows the template's).
    let text = with_line(SUM, 4, "distinct = true");
    let loaded = load(&[("specs/types.toml", TYPES), (F, &text)]);
    assert!(loaded.is_ok(), "{text}\n{}", loaded.unwrap_err());
}

#[test]
fn template_cannot_take_a_type() {
    let text = with_line(SUM, 6, "types = [\"INT\",\n  \"DATE\"]");
    assert_entry_error(
        &text,
        7,
        &[
            "type DATE has numeric = \"none\"",
            "state template `sum` needs an integer, float or decimal type row (templates/sum.rs:",
            "remove it from `types`",
        ],
    );
}

#[test]
fn a_type_row_the_declaration_names_must_exist() {
    // COUNT(*) keeps a BIGINT count; this type table has no BIGINT.
    assert_only_error(
        &[("specs/types.toml", INT_ROW), (F, COUNT_STAR)],
        F,
        2,
        &[
            "state template `count_star` names type row BIGINT (at templates/count_star.rs:",
            "add that row to types.toml",
        ],
    );
    // AVG over DOUBLE sums in DOUBLE, over INT in BIGINT: only the classes
    // the entry uses count.
    let text = with_line(AVG, 6, "types = [\"INT\"]");
    assert_only_error(
        &[("specs/types.toml", INT_ROW), (F, &text)],
        F,
        6,
        &["state template `avg` names type row BIGINT"],
    );
}

#[test]
fn function_listed_twice() {
    assert_entry_error(
        &with_line(EXTREME, 2, "functions = [\"MIN\", \"MAX\", \"min\"]"),
        2,
        &["function MIN is listed twice"],
    );
}

#[test]
fn duplicate_within_a_file_names_the_first() {
    let second = with_line(EXTREME, 2, "functions = [\"MAX\"]");
    let text = format!("{EXTREME}\n{second}");
    // Second entry starts on line 8; its types are on line 13; each
    // duplicated type is reported.
    let errors = errors(&[("specs/types.toml", TYPES), (F, &text)]);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_error(
        &errors,
        F,
        13,
        &["MAX<INT>/insert_only is already declared at specs/family.toml:6"],
    );
    assert_error(
        &errors,
        F,
        13,
        &["MAX<DOUBLE>/insert_only is already declared at specs/family.toml:6"],
    );
}

#[test]
fn duplicate_across_files_names_the_first() {
    let errors = errors(&[
        ("specs/types.toml", TYPES),
        ("specs/b_more.toml", COUNT_STAR),
        ("specs/a_count.toml", COUNT_STAR),
    ]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_error(
        &errors,
        "specs/b_more.toml",
        2,
        &["COUNT_STAR<*>/insert_only is already declared at specs/a_count.toml:2"],
    );
}

#[test]
fn differing_input_mode_is_not_a_duplicate_key() {
    let second = with_line(
        &with_line(EXTREME, 3, "input = \"retracting\""),
        5,
        "phases = [\"single\"]",
    );
    let text = format!("{EXTREME}\n{second}");
    let specs = load(&[("specs/types.toml", TYPES), (F, &text)]).unwrap();
    assert_eq!(specs.specializations().len(), 8);
}

#[test]
fn rows_keep_their_numeric_class_shape_across_one_entry() {
    let text = with_line(SUM, 6, "types = [\"INT\", \"DOUBLE\", \"DECIMAL_18\"]");
    let specs = load(&[("specs/types.toml", TYPES), (F, &text)]).unwrap();
    let overflow: Vec<_> = specs
        .specializations()
        .iter()
        .map(|s| {
            (
                s.ty.unwrap().numeric,
                s.shape().unwrap().params.overflow.unwrap(),
            )
        })
        .collect();
    use aggforge_codegen::model::Overflow::*;
    assert_eq!(
        overflow,
        [
            (Numeric::Integer, Wrap),
            (Numeric::Float, Ieee),
            (Numeric::Decimal, Null)
        ]
    );
}

#[test]
fn errors_from_several_files_are_all_collected() {
    let errors = errors(&[
        ("specs/types.toml", &with_line(TYPES, 5, "carrier = \"i3\"")),
        (
            "specs/avg.toml",
            &with_line(AVG, 5, "phases = [\"single\", \"lokal\"]"),
        ),
        ("specs/sum.toml", &with_line(SUM, 3, "input = \"inserts\"")),
    ]);
    let shown: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(shown.len(), 3, "{shown:#?}");
    // types.toml first, then the family files in name order.
    let prefixes: Vec<&str> = shown
        .iter()
        .map(|e| e.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        prefixes,
        ["specs/types.toml:5", "specs/avg.toml:5", "specs/sum.toml:3"]
    );
    assert!(shown[0].contains("unknown carrier `i3`"), "{shown:#?}");
    assert!(shown[1].contains("unknown phase `lokal`"), "{shown:#?}");
    assert!(
        shown[2].contains("unknown input mode `inserts`"),
        "{shown:#?}"
    );
}

#[test]
fn missing_types_file() {
    let errors = errors(&[("specs/extreme.toml", EXTREME)]);
    assert_error(
        &errors,
        "specs/types.toml",
        1,
        &["no types.toml among the spec files"],
    );
}

#[test]
fn load_dir_reports_a_missing_directory() {
    let errors = aggforge_codegen::load_dir(
        std::path::Path::new("/nonexistent/aggforge-specs"),
        &templates_dir(),
    )
    .unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(
        errors.0[0]
            .message
            .contains("cannot read the spec directory"),
        "{errors}"
    );
}
