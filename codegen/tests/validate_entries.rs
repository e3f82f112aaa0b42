//! One test per entry rule: file, exact line and a key phrase.

mod common;

use common::*;

const F: &str = "specs/family.toml";

#[test]
fn base_entries_are_valid() {
    for text in [EXTREME, SUM, AVG, COUNT_STAR] {
        let loaded = load_specs(&[("specs/types.toml", TYPES), (F, text)]);
        assert!(loaded.is_ok(), "{text}\n{}", loaded.unwrap_err());
    }
}

#[test]
fn toml_syntax_error() {
    assert_entry_error(
        &with_line(EXTREME, 7, "types = [\"INT\", \"DOUBLE\""),
        8,
        &["TOML syntax error"],
    );
}

#[test]
fn unknown_field() {
    let text = with_line(EXTREME, 4, "distinct = false\nfilter = true");
    assert_entry_error(&text, 5, &["unknown field `filter`", "remove or rename"]);
}

#[test]
fn unknown_field_in_params() {
    assert_entry_error(
        &with_line(SUM, 10, "params = { overflow = \"wrap\", saturate = true }"),
        10,
        &["unknown field `saturate`"],
    );
}

#[test]
fn missing_field() {
    assert_entry_error(
        &with_line(EXTREME, 5, ""),
        1,
        &["missing field `state`", "add it"],
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
    let text = with_line(EXTREME, 7, "types = [\n  \"INT\",\n  \"DUOBLE\",\n]");
    assert_entry_error(
        &text,
        9,
        &["unknown type row `DUOBLE`", "did you mean `DOUBLE`?"],
    );
}

#[test]
fn unknown_state_template() {
    assert_entry_error(
        &with_line(EXTREME, 5, "state = \"running_extrem\""),
        5,
        &[
            "unknown state template `running_extrem`",
            "did you mean `running_extreme`?",
        ],
    );
}

#[test]
fn unknown_phase() {
    assert_entry_error(
        &with_line(EXTREME, 6, "phases = [\"single\", \"globl\"]"),
        6,
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
        &with_line(COUNT_STAR, 7, "types = [\"INT\"]"),
        7,
        &["COUNT_STAR takes no argument, so `types` must be `[]`"],
    );
}

#[test]
fn argument_function_needs_types() {
    assert_entry_error(
        &with_line(SUM, 7, "types = []"),
        7,
        &["SUM takes an argument, so `types` must list at least one type row"],
    );
}

#[test]
fn function_does_not_fit_template() {
    let text = with_line(SUM, 2, "functions = [\"SUM\", \"SUM0\"]");
    assert_entry_error(
        &text,
        2,
        &[
            "function SUM0 cannot use state template `sum`",
            "state = \"sum0\"",
        ],
    );
}

#[test]
fn retracting_input_names_the_missing_template() {
    assert_entry_error(
        &with_line(EXTREME, 3, "input = \"retracting\""),
        3,
        &[
            "state template `running_extreme` only accepts insert-only input",
            "multiset",
        ],
    );
}

#[test]
fn distinct_needs_another_template() {
    assert_entry_error(
        &with_line(SUM, 4, "distinct = true"),
        4,
        &[
            "state template `sum` cannot deduplicate values",
            "DISTINCT needs a template",
        ],
    );
}

#[test]
fn template_cannot_take_a_type() {
    let text = with_line(SUM, 7, "types = [\"INT\",\n  \"DATE\"]");
    assert_entry_error(
        &text,
        8,
        &[
            "type DATE has numeric = \"none\"",
            "state template `sum` needs",
        ],
    );
}

#[test]
fn distributed_phase_without_partial() {
    let text = with_line(EXTREME, 8, "partial = []");
    assert_entry_error(
        &with_line(&text, 6, "phases = [\"single\",\n\"local\"]"),
        7,
        &["phase local exchanges the partial layout, but `partial` is empty"],
    );
}

#[test]
fn single_phase_needs_no_partial() {
    let text = with_line(&with_line(EXTREME, 8, ""), 6, "phases = [\"single\"]");
    let specs = load_specs(&[("specs/types.toml", TYPES), (F, &text)]).unwrap();
    assert!(specs.entries[0].partial.is_empty());
}

#[test]
fn partial_field_count_must_fit_template() {
    assert_entry_error(&with_line(AVG, 8, "partial = [{ name = \"sum\", type = \"DECIMAL(38, s)\" }]"), 8, &[
        "state template `avg` keeps two fields, the sum and a BIGINT count, but `partial` lists 1",
    ]);
}

#[test]
fn partial_field_type_must_fit_template() {
    let text = with_line(AVG, 8, "partial = [\n{ name = \"sum\", type = \"DECIMAL(38, s)\" },\n{ name = \"count\", type = \"INT\" },\n]");
    assert_entry_error(
        &text,
        10,
        &["partial field `count` has type `INT`", "type = \"BIGINT\""],
    );
}

#[test]
fn extreme_partial_is_the_argument() {
    assert_entry_error(
        &with_line(
            EXTREME,
            8,
            "partial = [{ name = \"value\", type = \"BIGINT\" }]",
        ),
        8,
        &["partial field `value` has type `BIGINT`", "type = \"arg\""],
    );
}

#[test]
fn partial_field_names_are_identifiers() {
    assert_entry_error(
        &with_line(
            EXTREME,
            8,
            "partial = [{ name = \"Value!\", type = \"arg\" }]",
        ),
        8,
        &["partial field name `Value!`"],
    );
}

#[test]
fn missing_overflow() {
    assert_entry_error(
        &with_line(SUM, 10, ""),
        1,
        &["state template `sum` needs params.overflow"],
    );
}

#[test]
fn unknown_overflow() {
    assert_entry_error(
        &with_line(SUM, 10, "params = { overflow = \"saturate\" }"),
        10,
        &["unknown overflow `saturate`", "wrap, ieee, null"],
    );
}

#[test]
fn overflow_must_fit_numeric_class() {
    let text = with_line(SUM, 7, "types = [\"INT\", \"DOUBLE\"]");
    assert_entry_error(
        &text,
        10,
        &["overflow = \"wrap\" does not fit type DOUBLE (float, needs \"ieee\")"],
    );
}

#[test]
fn missing_division() {
    assert_entry_error(
        &with_line(AVG, 10, "params = {}"),
        10,
        &["state template `avg` needs params.division"],
    );
}

#[test]
fn division_must_fit_numeric_class() {
    assert_entry_error(&with_line(AVG, 10, "params = { division = \"truncate\" }"), 10, &[
        "division = \"truncate\" does not fit type DECIMAL_18 (decimal, needs \"half_up\"), type DECIMAL_38",
    ]);
}

#[test]
fn params_on_a_template_without_them() {
    let text = format!("{EXTREME}params = {{ overflow = \"wrap\" }}\n");
    assert_entry_error(
        &text,
        10,
        &["`overflow` is a parameter of the sum and sum0 templates, not `running_extreme`"],
    );
}

#[test]
fn division_on_sum() {
    assert_entry_error(
        &with_line(
            SUM,
            10,
            "params = { overflow = \"wrap\", division = \"float\" }",
        ),
        10,
        &["`division` is a parameter of the avg template"],
    );
}

#[test]
fn type_expression_syntax() {
    assert_entry_error(
        &with_line(AVG, 9, "result = \"DECIMAL(38 max(6, s))\""),
        9,
        &[
            "cannot read type expression `DECIMAL(38 max(6, s))`",
            "DECIMAL(p, max(n, s))",
        ],
    );
}

#[test]
fn decimal_precision_out_of_range() {
    assert_entry_error(
        &with_line(AVG, 9, "result = \"DECIMAL(40, s)\""),
        9,
        &["precision 40", "1 to 38"],
    );
}

#[test]
fn decimal_expression_with_non_decimal_argument() {
    let text = with_line(SUM, 9, "result = \"DECIMAL(38, s)\"");
    assert_entry_error(
        &text,
        9,
        &[
            "`DECIMAL(38, s)` is only for DECIMAL arguments",
            "INT, BIGINT",
        ],
    );
}

#[test]
fn named_type_in_expression_must_exist() {
    assert_entry_error(
        &with_line(COUNT_STAR, 9, "result = \"BIGINTT\""),
        9,
        &["unknown type row `BIGINTT`", "did you mean `BIGINT`?"],
    );
}

#[test]
fn arg_without_argument() {
    assert_entry_error(
        &with_line(COUNT_STAR, 9, "result = \"arg\""),
        9,
        &["COUNT_STAR has no argument"],
    );
}

#[test]
fn result_must_fit_template() {
    assert_entry_error(
        &with_line(EXTREME, 9, "result = \"BIGINT\""),
        9,
        &["state template `running_extreme` returns `arg`, not `BIGINT`"],
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
    // Second entry starts on line 11; its types are on line 17; each
    // duplicated type is reported.
    let errors = errors(&[("specs/types.toml", TYPES), (F, &text)]);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_error(
        &errors,
        F,
        17,
        &["MAX<INT>/insert_only is already declared at specs/family.toml:7"],
    );
    assert_error(
        &errors,
        F,
        17,
        &["MAX<DOUBLE>/insert_only is already declared at specs/family.toml:7"],
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
    // The retracting copy fails for its template, not as a duplicate.
    let second = with_line(EXTREME, 3, "input = \"retracting\"");
    let errors = errors(&[
        ("specs/types.toml", TYPES),
        (F, &format!("{EXTREME}\n{second}")),
    ]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_error(&errors, F, 13, &["only accepts insert-only input"]);
}

#[test]
fn errors_from_several_files_are_all_collected() {
    let errors = errors(&[
        ("specs/types.toml", &with_line(TYPES, 5, "carrier = \"i3\"")),
        ("specs/avg.toml", &with_line(AVG, 5, "state = \"average\"")),
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
    assert!(
        shown[1].contains("unknown state template `average`"),
        "{shown:#?}"
    );
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
    let errors = aggforge_codegen::load_dir(std::path::Path::new("/nonexistent/aggforge-specs"))
        .unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(
        errors.0[0]
            .message
            .contains("cannot read the spec directory"),
        "{errors}"
    );
}
