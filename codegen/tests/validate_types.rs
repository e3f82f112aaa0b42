//! One test per types.toml rule: file, exact line and a key phrase.

mod common;

use common::*;

#[test]
fn base_rows_are_valid() {
    let specs = load(&[("specs/types.toml", TYPES)]).unwrap();
    assert_eq!(specs.types.len(), 6);
    assert_eq!(specs.types[4].name, "DECIMAL_38");
    assert_eq!(specs.types[4].location.line, 42);
    assert!(load(&[("specs/types.toml", INT_ROW)]).is_ok());
    assert!(load(&[("specs/types.toml", DECIMAL_ROW)]).is_ok());
}

#[test]
fn toml_syntax_error_has_its_line() {
    let text = with_line(INT_ROW, 5, "carrier = \"i32");
    assert_row_error(&text, 5, &["TOML syntax error"]);
}

#[test]
fn unknown_field() {
    let text = with_line(INT_ROW, 8, "colour = \"red\"\nequality = \"exact\"");
    assert_row_error(&text, 8, &["unknown field `colour`", "remove or rename"]);
}

#[test]
fn missing_field() {
    let text = with_line(INT_ROW, 9, "");
    assert_row_error(&text, 1, &["missing field `numeric`", "add it"]);
}

#[test]
fn wrong_value_type() {
    let text = with_line(INT_ROW, 6, "access = 3");
    assert_row_error(&text, 6, &["wrong value type", "expected a string"]);
}

#[test]
fn unknown_top_level_key() {
    let text = format!("version = 2\n{INT_ROW}");
    assert_row_error(&text, 1, &["unknown top-level key `version`"]);
}

#[test]
fn type_written_as_a_single_table() {
    let text = INT_ROW.replace("[[type]]", "[type]");
    assert_row_error(&text, 1, &["must be an array of tables", "[[type]]"]);
}

#[test]
fn unknown_carrier_suggests() {
    let text = with_line(INT_ROW, 5, "carrier = \"i33\"");
    assert_row_error(&text, 5, &["unknown carrier `i33`", "did you mean `i32`?"]);
}

#[test]
fn unknown_access() {
    let text = with_line(INT_ROW, 6, "access = \"primitiv\"");
    assert_row_error(
        &text,
        6,
        &["unknown access `primitiv`", "did you mean `primitive`?"],
    );
}

#[test]
fn unknown_order() {
    let text = with_line(INT_ROW, 7, "order = \"lexical\"");
    assert_row_error(
        &text,
        7,
        &["unknown order `lexical`", "known: primitive, signed"],
    );
}

#[test]
fn unknown_equality() {
    let text = with_line(INT_ROW, 8, "equality = \"exakt\"");
    assert_row_error(
        &text,
        8,
        &["unknown equality `exakt`", "did you mean `exact`?"],
    );
}

#[test]
fn unknown_numeric() {
    let text = with_line(INT_ROW, 9, "numeric = \"int\"");
    assert_row_error(
        &text,
        9,
        &[
            "unknown numeric `int`",
            "known: integer, float, decimal, none",
        ],
    );
}

#[test]
fn unknown_sql_family() {
    let text = with_line(INT_ROW, 3, "sql = \"INTEGR\"");
    assert_row_error(
        &text,
        3,
        &["unknown SQL family `INTEGR`", "did you mean `INT`?"],
    );
}

#[test]
fn unknown_arrow_spelling() {
    let text = with_line(INT_ROW, 4, "arrow = \"Int32Array\"");
    assert_row_error(
        &text,
        4,
        &["unknown Arrow type `Int32Array`", "Time32(Millisecond)"],
    );
}

#[test]
fn bad_row_name() {
    let text = with_line(INT_ROW, 2, "name = \"int-32\"");
    assert_row_error(&text, 2, &["type row name `int-32` must be upper-case"]);
}

#[test]
fn duplicated_row_name_names_the_first() {
    let text = format!("{INT_ROW}\n{}", with_line(INT_ROW, 3, "sql = \"BIGINT\""));
    // Second row: header on line 11, name on line 12. Its arrow/carrier do
    // not fit BIGINT either; only the duplicate is asserted here.
    let errors = errors(&[("specs/types.toml", &text)]);
    assert_error(
        &errors,
        "specs/types.toml",
        12,
        &["type row `INT` is already declared at specs/types.toml:2"],
    );
}

#[test]
fn precision_min_above_max() {
    let text = with_line(DECIMAL_ROW, 4, "precision = [18, 1]");
    assert_row_error(&text, 4, &["min > max", "[1, 18]"]);
}

#[test]
fn precision_above_38() {
    let text = with_line(DECIMAL_ROW, 4, "precision = [1, 40]")
        .replace("carrier = \"i64\"", "carrier = \"i128\"");
    assert_row_error(&text, 4, &["precision [1, 40]", "1 to 38"]);
}

#[test]
fn precision_not_two_values() {
    let text = with_line(DECIMAL_ROW, 4, "precision = [18]");
    assert_row_error(&text, 4, &["two integers [min, max]"]);
}

#[test]
fn precision_on_a_family_without_one() {
    let text = with_line(INT_ROW, 3, "sql = \"INT\"\nprecision = [1, 10]");
    assert_row_error(
        &text,
        4,
        &["SQL INT has no precision parameter", "remove `precision`"],
    );
}

#[test]
fn decimal_row_needs_precision() {
    let text = with_line(DECIMAL_ROW, 4, "");
    assert_row_error(&text, 1, &["needs a precision range"]);
}

#[test]
fn decimal_precision_too_wide_for_i64() {
    let text = with_line(DECIMAL_ROW, 4, "precision = [1, 19]");
    assert_row_error(
        &text,
        4,
        &["carrier `i64` holds at most 18 decimal digits", "i128"],
    );
}

#[test]
fn millisecond_arrow_limits_precision() {
    let row = r#"[[type]]
name = "TIME"
sql = "TIME"
precision = [0, 6]
arrow = "Time32(Millisecond)"
carrier = "i32"
access = "primitive"
order = "signed"
equality = "exact"
numeric = "none"
"#;
    assert_row_error(row, 4, &["holds at most 3 fractional digits"]);
}

#[test]
fn overlapping_precision_ranges() {
    let wide = with_line(DECIMAL_ROW, 2, "name = \"DECIMAL_38\"")
        .replace("[1, 18]", "[10, 38]")
        .replace("\"i64\"", "\"i128\"");
    let text = format!("{DECIMAL_ROW}\n{wide}");
    // Second row: blank line 11, header on 12, precision on 15.
    assert_row_error(
        &text,
        15,
        &["row `DECIMAL_38` covers precisions [10, 38] of SQL DECIMAL, which overlaps row `DECIMAL_18` (specs/types.toml:4) covering precisions [1, 18]"],
    );
}

#[test]
fn rows_without_precision_overlap_everything() {
    let second = with_line(INT_ROW, 2, "name = \"INT_TOO\"");
    let text = format!("{INT_ROW}\n{second}");
    assert_row_error(
        &text,
        12,
        &["overlaps row `INT`", "make the ranges disjoint"],
    );
}

#[test]
fn access_does_not_fit_arrow() {
    let text = with_line(INT_ROW, 6, "access = \"utf8\"");
    assert_row_error(
        &text,
        6,
        &[
            "access `utf8` cannot read an Arrow Int32 column",
            "access = \"primitive\"",
        ],
    );
}

#[test]
fn carrier_does_not_fit_arrow() {
    let text = with_line(INT_ROW, 5, "carrier = \"i64\"");
    assert_row_error(
        &text,
        5,
        &[
            "carrier `i64` cannot hold Arrow Int32 values",
            "carrier = \"i32\"",
        ],
    );
}

#[test]
fn arrow_does_not_fit_family() {
    let text = with_line(INT_ROW, 4, "arrow = \"Int64\"").replace("\"i32\"", "\"i64\"");
    assert_row_error(
        &text,
        4,
        &[
            "Arrow Int64 carries Flink `long` values, but SQL INT is held as `int`",
            "arrow = \"Int32\" or \"Date32\"",
        ],
    );
}

#[test]
fn primitive_order_on_an_integer_carrier() {
    let text = with_line(INT_ROW, 7, "order = \"primitive\"");
    assert_row_error(
        &text,
        7,
        &[
            "order `primitive` does not fit carrier `i32`",
            "order = \"signed\"",
        ],
    );
}

#[test]
fn signed_order_on_a_float_carrier() {
    let double = r#"[[type]]
name = "DOUBLE"
sql = "DOUBLE"
arrow = "Float64"
carrier = "f64"
access = "primitive"
order = "signed"
equality = "primitive"
numeric = "float"
"#;
    assert_row_error(
        double,
        7,
        &[
            "order `signed` does not fit carrier `f64`",
            "order = \"primitive\"",
        ],
    );
}

#[test]
fn primitive_equality_on_an_integer_carrier() {
    let text = with_line(INT_ROW, 8, "equality = \"primitive\"");
    assert_row_error(&text, 8, &["equality `primitive`", "equality = \"exact\""]);
}

/// A types.toml of one family (line 1) and one row of it (line 9).
const LTZ: &str = r#"[[family]]
name = "TIMESTAMP_LTZ"
internal = "timestamp"
spellings = ["TIMESTAMP_LTZ", "TIMESTAMP WITH LOCAL TIME ZONE"]
params = "precision"
default = 6
max = 9

[[type]]
name = "TIMESTAMP_LTZ_3"
sql = "TIMESTAMP_LTZ"
precision = [0, 3]
arrow = "Timestamp(Millisecond)"
carrier = "i64"
access = "primitive"
order = "signed"
equality = "exact"
numeric = "none"
"#;

#[test]
fn a_family_and_its_row_load() {
    let specs = load(&[("specs/types.toml", LTZ)]).unwrap();
    assert_eq!(specs.families.len(), 1);
    assert_eq!(
        specs.families[0].spellings[1],
        "TIMESTAMP WITH LOCAL TIME ZONE"
    );
    assert_eq!(specs.types[0].sql, "TIMESTAMP_LTZ");
}

#[test]
fn unknown_internal_value_class() {
    let text = with_line(LTZ, 3, "internal = \"timestamps\"");
    assert_row_error(
        &text,
        3,
        &[
            "unknown internal value class `timestamps`",
            "did you mean `timestamp`?",
        ],
    );
}

#[test]
fn spelling_with_parameters() {
    let text = with_line(
        LTZ,
        4,
        "spellings = [\"TIMESTAMP(3) WITH LOCAL TIME ZONE\"]",
    );
    assert_row_error(
        &text,
        4,
        &["must be upper-case words", "without parameters"],
    );
}

#[test]
fn spelling_of_another_family() {
    let text = format!("{LTZ}{FAMILIES}").replacen(
        "\"TIMESTAMP_LTZ\", \"TIMESTAMP WITH",
        "\"TIMESTAMP\", \"TIMESTAMP WITH",
        1,
    );
    let errors = errors(&[("specs/types.toml", &text)]);
    assert!(
        errors.iter().any(|e| e.message.contains(
            "spelling `TIMESTAMP` already names family TIMESTAMP_LTZ (specs/types.toml:4)"
        )),
        "{errors:?}"
    );
}

#[test]
fn precision_family_needs_its_bounds() {
    let text = with_line(&with_line(LTZ, 6, ""), 7, "");
    assert_row_error(&text, 1, &["needs `default` and `max`", "add both"]);
}

#[test]
fn default_outside_the_bounds() {
    let text = with_line(LTZ, 6, "default = 12");
    assert_row_error(&text, 6, &["default = 12 is outside 0 to max = 9"]);
}

#[test]
fn aliases_only_for_lengths() {
    let text = with_line(LTZ, 7, "max = 9\naliases = { LTZ = 3 }");
    assert_row_error(&text, 8, &["`aliases` fix a length", "remove it"]);
}

#[test]
fn row_precision_beyond_its_family() {
    let text = with_line(&with_line(LTZ, 7, "max = 2"), 6, "default = 1");
    assert_row_error(
        &text,
        12,
        &["precision [0, 3] is outside SQL TIMESTAMP_LTZ's precisions 0 to 2"],
    );
}

#[test]
fn empty_types_file() {
    assert_row_error("# nothing yet\n", 1, &["declares no [[type]] rows"]);
}

#[test]
fn several_errors_are_all_reported_in_line_order() {
    let text = with_line(
        &with_line(INT_ROW, 9, "numeric = \"nope\""),
        5,
        "carrier = \"x\"",
    );
    let errors = errors(&[("specs/types.toml", &text)]);
    let lines: Vec<usize> = errors.iter().map(|e| e.location.line).collect();
    assert_eq!(lines, vec![5, 9]);
    let shown = aggforge_codegen::SpecErrors(errors).to_string();
    assert!(
        shown.starts_with("specs/types.toml:5: unknown carrier `x`"),
        "{shown}"
    );
    assert!(
        shown.contains("\nspecs/types.toml:9: unknown numeric `nope`"),
        "{shown}"
    );
}

#[test]
fn overlap_with_a_row_without_range_says_so() {
    let second = with_line(INT_ROW, 2, "name = \"INT_TOO\"");
    let text = format!("{INT_ROW}\n{second}");
    let errors = errors(&[("specs/types.toml", &text)]);
    assert_error(&errors, "specs/types.toml", 12, &[
        "row `INT_TOO` covers every precision of SQL INT, which overlaps row `INT` (specs/types.toml:2) covering every precision",
    ]);
}
