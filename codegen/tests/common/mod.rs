//! Helpers for validation tests: small in-memory spec sets whose line
//! numbers are easy to read off.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use aggforge_codegen::model::SpecSet;
use aggforge_codegen::{SpecError, SpecErrors, Templates};

/// The runtime's state template directory (the real declarations).
pub fn templates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src/templates")
}

/// The real template files as (`templates/NAME.rs`, source) pairs, in
/// name order.
pub fn template_sources() -> &'static [(String, String)] {
    static SOURCES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    SOURCES.get_or_init(|| {
        let mut files: Vec<(String, String)> = std::fs::read_dir(templates_dir())
            .expect("templates directory")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (
                    format!("templates/{name}"),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    })
}

/// The real declarations, read from [`template_sources`] (so errors read
/// `templates/NAME.rs:LINE`).
pub fn templates() -> Templates {
    Templates::from_sources(template_sources())
}

/// The real declarations with `from` replaced by `to` (once, which must
/// occur) in `templates/NAME.rs`.
pub fn templates_with(name: &str, from: &str, to: &str) -> Templates {
    let files: Vec<(String, String)> = template_sources()
        .iter()
        .map(|(path, text)| {
            if *path == format!("templates/{name}.rs") {
                assert!(text.contains(from), "{path} has no `{from}`");
                (path.clone(), text.replacen(from, to, 1))
            } else {
                (path.clone(), text.clone())
            }
        })
        .collect();
    Templates::from_sources(&files)
}

/// The real declarations without `templates/NAME.rs`.
pub fn templates_without(name: &str) -> Templates {
    let files: Vec<&(String, String)> = template_sources()
        .iter()
        .filter(|(path, _)| *path != format!("templates/{name}.rs"))
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    Templates::from_sources(&files)
}

/// The 1-based line of the first line of the real `templates/NAME.rs`
/// containing `needle`.
pub fn line_of(name: &str, needle: &str) -> usize {
    let (_, text) = template_sources()
        .iter()
        .find(|(path, _)| *path == format!("templates/{name}.rs"))
        .unwrap_or_else(|| panic!("no template {name}"));
    text.lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("templates/{name}.rs has no `{needle}`"))
        + 1
}

/// The `[[family]]` tables of the workspace's types.toml (without the
/// families added since, so test expectations stay fixed).
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

/// `files` with [`FAMILIES`] appended to a types.toml that declares no
/// family (after its rows, so row line numbers stay as written).
pub fn with_families(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(name, text)| {
            let text = if name.ends_with("types.toml") && !text.contains("[[family]]") {
                format!("{text}{FAMILIES}")
            } else {
                text.to_string()
            };
            (name.to_string(), text)
        })
        .collect()
}

/// Loads in-memory spec files against the real declarations.
pub fn load(files: &[(&str, &str)]) -> Result<SpecSet, SpecErrors> {
    aggforge_codegen::load_str(&with_families(files), &templates())
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

/// MIN/MAX over INT and DOUBLE; a field per line (functions on line 2,
/// input 3, distinct 4, phases 5, types 6).
pub const EXTREME: &str = r#"[[entry]]
functions = ["MIN", "MAX"]
input = "insert_only"
distinct = false
phases = ["single", "local", "global"]
types = ["INT", "DOUBLE"]
"#;

/// SUM over INT and BIGINT (types on line 6).
pub const SUM: &str = r#"[[entry]]
functions = ["SUM"]
input = "insert_only"
distinct = false
phases = ["single", "local", "global"]
types = ["INT", "BIGINT"]
"#;

/// AVG over every numeric class (types on line 6).
pub const AVG: &str = r#"[[entry]]
functions = ["AVG"]
input = "insert_only"
distinct = false
phases = ["single", "local", "global"]
types = ["INT", "DOUBLE", "DECIMAL_18", "DECIMAL_38"]
"#;

/// COUNT(*) (types on line 6).
pub const COUNT_STAR: &str = r#"[[entry]]
functions = ["COUNT_STAR"]
input = "insert_only"
distinct = false
phases = ["single", "local", "global"]
types = []
"#;

/// `text` with its 1-based line `line` replaced by `replacement` (which
/// may be empty to drop the line's content but keep numbering).
pub fn with_line(text: &str, line: usize, replacement: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    assert!(line >= 1 && line <= lines.len(), "line {line} out of range");
    lines[line - 1] = replacement;
    lines.join("\n") + "\n"
}

/// Errors of loading `files` (against the real declarations); panics if
/// they load.
pub fn errors(files: &[(&str, &str)]) -> Vec<SpecError> {
    errors_with(files, &templates())
}

/// Errors of loading `files` against `templates`; panics if they load.
pub fn errors_with(files: &[(&str, &str)], templates: &Templates) -> Vec<SpecError> {
    match aggforge_codegen::load_str(&with_families(files), templates) {
        Ok(_) => panic!("expected spec errors, but the specs loaded"),
        Err(errors) => errors.0,
    }
}

/// Asserts that loading `files` gives exactly one error, at `file:line`,
/// containing every phrase.
pub fn assert_only_error(files: &[(&str, &str)], file: &str, line: usize, phrases: &[&str]) {
    assert_only_error_with(files, &templates(), file, line, phrases);
}

/// [`assert_only_error`] against `templates`.
pub fn assert_only_error_with(
    files: &[(&str, &str)],
    templates: &Templates,
    file: &str,
    line: usize,
    phrases: &[&str],
) {
    let errors = errors_with(files, templates);
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

/// How many type rows of `specs` each function family takes: `ordered`
/// (rows with a MIN/MAX order: MIN, MAX, COUNT, FIRST/LAST_VALUE,
/// SINGLE_VALUE), `arrays` (rows without one: ARRAY, a COUNT and
/// FIRST/LAST_VALUE argument only), `numeric` (SUM, SUM0, AVG) and
/// `strings` (UTF-8 rows: LISTAGG).
pub struct RowCounts {
    pub ordered: usize,
    pub arrays: usize,
    pub numeric: usize,
    pub strings: usize,
}

impl RowCounts {
    /// The counts of `specs`' type rows.
    pub fn of(specs: &SpecSet) -> RowCounts {
        use aggforge_codegen::model::{Access, Numeric, Order};
        let count = |keep: &dyn Fn(&aggforge_codegen::model::TypeRow) -> bool| {
            specs.types.iter().filter(|t| keep(t)).count()
        };
        let arrays = count(&|t| t.order == Order::None);
        RowCounts {
            ordered: specs.types.len() - arrays,
            arrays,
            numeric: count(&|t| t.numeric != Numeric::None),
            strings: count(&|t| t.access == Access::Utf8),
        }
    }
}
