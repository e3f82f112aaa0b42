//! Helpers for validation tests: small in-memory spec sets whose line
//! numbers are easy to read off.
#![allow(dead_code)]

use aggforge_codegen::model::SpecSet;
use aggforge_codegen::{load_str, SpecError, SpecErrors};

/// The `[[family]]` tables of the workspace's types.toml.
pub const FAMILIES: &str = r#"
[[family]]
name = "TINYINT"
internal = "byte"
spellings = ["TINYINT"]
params = "none"

[[family]]
name = "SMALLINT"
internal = "short"
spellings = ["SMALLINT"]
params = "none"

[[family]]
name = "INT"
internal = "int"
spellings = ["INT", "INTEGER"]
params = "none"

[[family]]
name = "BIGINT"
internal = "long"
spellings = ["BIGINT"]
params = "none"

[[family]]
name = "FLOAT"
internal = "float"
spellings = ["FLOAT", "REAL"]
params = "none"

[[family]]
name = "DOUBLE"
internal = "double"
spellings = ["DOUBLE", "DOUBLE PRECISION"]
params = "none"

[[family]]
name = "DECIMAL"
internal = "decimal"
spellings = ["DECIMAL", "NUMERIC", "DEC"]
params = "decimal"
default = 10
max = 38

[[family]]
name = "DATE"
internal = "int"
spellings = ["DATE"]
params = "none"

[[family]]
name = "TIME"
internal = "int"
spellings = ["TIME", "TIME WITHOUT TIME ZONE"]
params = "precision"
default = 0
max = 9

[[family]]
name = "TIMESTAMP"
internal = "timestamp"
spellings = ["TIMESTAMP", "TIMESTAMP WITHOUT TIME ZONE"]
params = "precision"
default = 6
max = 9

[[family]]
name = "BOOLEAN"
internal = "boolean"
spellings = ["BOOLEAN"]
params = "none"

[[family]]
name = "CHAR"
internal = "string"
spellings = ["CHAR", "CHARACTER"]
params = "length"
default = 1
max = 2147483647

[[family]]
name = "VARCHAR"
internal = "string"
spellings = ["VARCHAR", "CHARACTER VARYING"]
params = "length"
default = 1
max = 2147483647
aliases = { STRING = 2147483647 }
"#;

/// Loads in-memory spec files like `load_str`, with [`FAMILIES`] appended
/// to a types.toml that declares no family (after its rows, so row line
/// numbers stay as written).
pub fn load_specs(files: &[(&str, &str)]) -> Result<SpecSet, SpecErrors> {
    let files: Vec<(&str, String)> = files
        .iter()
        .map(|(name, text)| {
            if name.ends_with("types.toml") && !text.contains("[[family]]") {
                (*name, format!("{text}{FAMILIES}"))
            } else {
                (*name, text.to_string())
            }
        })
        .collect();
    load_str(&files)
}

/// A valid types.toml with INT (line 1), BIGINT (11), DOUBLE (21),
/// DECIMAL_18 (31), DECIMAL_38 (42), DATE (53).
pub const TYPES: &str = r#"[[type]]
name = "INT"
sql = "INT"
arrow = "Int32"
carrier = "i32"
access = "primitive"
order = "signed"
equality = "exact"
numeric = "integer"

[[type]]
name = "BIGINT"
sql = "BIGINT"
arrow = "Int64"
carrier = "i64"
access = "primitive"
order = "signed"
equality = "exact"
numeric = "integer"

[[type]]
name = "DOUBLE"
sql = "DOUBLE"
arrow = "Float64"
carrier = "f64"
access = "primitive"
order = "primitive"
equality = "primitive"
numeric = "float"

[[type]]
name = "DECIMAL_18"
sql = "DECIMAL"
precision = [1, 18]
arrow = "Decimal128"
carrier = "i64"
access = "decimal"
order = "signed"
equality = "exact"
numeric = "decimal"

[[type]]
name = "DECIMAL_38"
sql = "DECIMAL"
precision = [19, 38]
arrow = "Decimal128"
carrier = "i128"
access = "decimal"
order = "signed"
equality = "exact"
numeric = "decimal"

[[type]]
name = "DATE"
sql = "DATE"
arrow = "Date32"
carrier = "i32"
access = "primitive"
order = "signed"
equality = "exact"
numeric = "none"
"#;

/// One INT row, a field per line (name on line 2 ... numeric on line 9).
pub const INT_ROW: &str = r#"[[type]]
name = "INT"
sql = "INT"
arrow = "Int32"
carrier = "i32"
access = "primitive"
order = "signed"
equality = "exact"
numeric = "integer"
"#;

/// One DECIMAL_18 row (precision on line 4, carrier on line 6).
pub const DECIMAL_ROW: &str = r#"[[type]]
name = "DECIMAL_18"
sql = "DECIMAL"
precision = [1, 18]
arrow = "Decimal128"
carrier = "i64"
access = "decimal"
order = "signed"
equality = "exact"
numeric = "decimal"
"#;

/// MIN/MAX over INT and DOUBLE; a field per line (functions on line 2).
pub const EXTREME: &str = r#"[[entry]]
functions = ["MIN", "MAX"]
input = "insert_only"
distinct = false
state = "running_extreme"
phases = ["single", "local", "global"]
types = ["INT", "DOUBLE"]
partial = [{ name = "value", type = "arg" }]
result = "arg"
"#;

/// SUM over INT and BIGINT (params on line 10).
pub const SUM: &str = r#"[[entry]]
functions = ["SUM"]
input = "insert_only"
distinct = false
state = "sum"
phases = ["single", "local", "global"]
types = ["INT", "BIGINT"]
partial = [{ name = "sum", type = "arg" }]
result = "arg"
params = { overflow = "wrap" }
"#;

/// AVG over the decimals (partial on line 8, result on 9, params on 10).
pub const AVG: &str = r#"[[entry]]
functions = ["AVG"]
input = "insert_only"
distinct = false
state = "avg"
phases = ["single", "local", "global"]
types = ["DECIMAL_18", "DECIMAL_38"]
partial = [{ name = "sum", type = "DECIMAL(38, s)" }, { name = "count", type = "BIGINT" }]
result = "DECIMAL(38, max(6, s))"
params = { division = "half_up" }
"#;

/// COUNT(*) (types on line 7).
pub const COUNT_STAR: &str = r#"[[entry]]
functions = ["COUNT_STAR"]
input = "insert_only"
distinct = false
state = "count_star"
phases = ["single", "local", "global"]
types = []
partial = [{ name = "count1", type = "BIGINT" }]
result = "BIGINT"
"#;

/// `text` with its 1-based line `line` replaced by `replacement` (which
/// may be empty to drop the line's content but keep numbering).
pub fn with_line(text: &str, line: usize, replacement: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    assert!(line >= 1 && line <= lines.len(), "line {line} out of range");
    lines[line - 1] = replacement;
    lines.join("\n") + "\n"
}

/// Errors of loading `files`; panics if they load.
pub fn errors(files: &[(&str, &str)]) -> Vec<SpecError> {
    match load_specs(files) {
        Ok(_) => panic!("expected spec errors, but the specs loaded"),
        Err(errors) => errors.0,
    }
}

/// Asserts that loading `files` gives exactly one error, at `file:line`,
/// containing every phrase.
pub fn assert_only_error(files: &[(&str, &str)], file: &str, line: usize, phrases: &[&str]) {
    let errors = errors(files);
    let listing = errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(errors.len(), 1, "expected one error, got:\n{listing}");
    assert_error(&errors, file, line, phrases);
}

/// Asserts that `errors` holds one at `file:line` containing every phrase.
pub fn assert_error(errors: &[SpecError], file: &str, line: usize, phrases: &[&str]) {
    let listing = errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let found = errors.iter().any(|e| {
        e.location.file.to_str() == Some(file)
            && e.location.line == line
            && phrases.iter().all(|p| e.message.contains(p))
    });
    assert!(
        found,
        "no error at {file}:{line} containing {phrases:?}; got:\n{listing}"
    );
}

/// Asserts the types row given loads alone with exactly one error.
pub fn assert_row_error(row: &str, line: usize, phrases: &[&str]) {
    assert_only_error(
        &[("specs/types.toml", row)],
        "specs/types.toml",
        line,
        phrases,
    );
}

/// Asserts that a family file `family.toml` holding `text`, with [`TYPES`],
/// gives exactly one error, at `specs/family.toml:line`.
pub fn assert_entry_error(text: &str, line: usize, phrases: &[&str]) {
    assert_only_error(
        &[("specs/types.toml", TYPES), ("specs/family.toml", text)],
        "specs/family.toml",
        line,
        phrases,
    );
}
