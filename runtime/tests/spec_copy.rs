//! "A new type specialization is a spec edit, not Rust", measured: copies
//! the workspace's `specs/`, adds to the copy a SQL family
//! (`INTERVAL_YEAR_MONTH`) and a type row on an existing Arrow layout
//! (`INTERVAL_YM`, Int32) and lists the row in the insert-only MIN/MAX and
//! COUNT entries, then builds the runtime from the copy
//! (`include_specs!` reads `AGGFORGE_SPECS_DIR` instead of `specs/`) in a
//! nested `cargo test` of `spec_copy_inner.rs`, which checks the new
//! specialization is admitted and computes the right answers.
//!
//! The copy and the nested build's target directory live under this
//! build's target directory (`CARGO_TARGET_TMPDIR/spec-copy/`), at fixed
//! paths, and the copy's files are only rewritten when their text changes:
//! a second run finds everything fresh and takes seconds.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use aggforge_runtime::registry;
use aggforge_runtime::sql_type::{families, type_rows};
use aggforge_runtime::types::SqlType;

const SPECS_DIR_VAR: &str = "AGGFORGE_SPECS_DIR";
const INNER_TEST: &str = "spec_copy_inner";
const INNER_NAME: &str = "interval_year_month_from_copied_specs";

const FAMILY: &str = r#"
# Added by runtime/tests/spec_copy.rs.
[[family]]
name = "INTERVAL_YEAR_MONTH"
internal = "int"
spellings = ["INTERVAL YEAR TO MONTH", "INTERVAL YEAR", "INTERVAL MONTH"]
params = "ignored"
"#;

const ROW: &str = r#"
# Added by runtime/tests/spec_copy.rs: months, as Flink's int.
[[type]]
name = "INTERVAL_YM"
sql = "INTERVAL_YEAR_MONTH"
arrow = "Int32"
carrier = "i32"
access = "primitive"
order = "signed"
equality = "exact"
numeric = "none"
"#;

/// The normal build has no such specialization: what the nested build
/// admits comes from the spec edit alone.
#[test]
fn normal_build_has_no_interval_year_month() {
    assert!(registry::all()
        .iter()
        .all(|a| a.type_row != Some("INTERVAL_YM")));
    assert!(type_rows().iter().all(|row| row.name != "INTERVAL_YM"));
    assert!(families().iter().all(|f| f.name != "INTERVAL_YEAR_MONTH"));
    assert!("INTERVAL YEAR(2) TO MONTH".parse::<SqlType>().is_err());
}

#[test]
fn new_type_row_is_a_spec_edit() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("spec-copy");
    let specs = root.join("specs");
    copy_with_edits(&workspace.join("specs"), &specs);
    // The copy must load and validate before it is worth a build.
    if let Err(errors) =
        aggforge_codegen::load_dir(&specs, &workspace.join("runtime/src/templates"))
    {
        let errors: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        panic!("the edited spec copy does not load:\n{}", errors.join("\n"));
    }

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let started = Instant::now();
    let output = Command::new(cargo)
        .current_dir(&workspace)
        .args(["test", "--locked", "--no-default-features", "-p"])
        .arg("aggforge-runtime")
        .args([
            "--test",
            INNER_TEST,
            "--",
            "--ignored",
            "--exact",
            INNER_NAME,
        ])
        .env(SPECS_DIR_VAR, &specs)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .output()
        .expect("cannot run cargo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the nested build against the edited specs in {} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        specs.display(),
        output.status
    );
    // The inner test ran (not filtered out, not ignored).
    assert!(
        stdout.contains(&format!("test {INNER_NAME} ... ok")) && stdout.contains("1 passed"),
        "the nested run did not run {INNER_NAME}:\n{stdout}"
    );
    eprintln!(
        "spec_copy: nested build and test took {:.1?}",
        started.elapsed()
    );
}

/// Writes `source`'s spec files into `copy` with the family, the row and
/// its two entries added; files whose text is already right are left
/// alone (so the nested build stays fresh), stale ones removed.
fn copy_with_edits(source: &Path, copy: &Path) {
    std::fs::create_dir_all(copy).unwrap();
    let mut wanted = Vec::new();
    for entry in std::fs::read_dir(source).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "toml") {
            continue;
        }
        let name = path.file_name().unwrap().to_owned();
        let mut text = std::fs::read_to_string(&path).unwrap();
        match name.to_str() {
            Some("types.toml") => text = add_family_and_row(&text),
            Some("extreme.toml") => text = add_to_entry(&text, r#"["MIN", "MAX"]"#),
            Some("count.toml") => text = add_to_entry(&text, r#"["COUNT"]"#),
            _ => {}
        }
        write_if_changed(&copy.join(&name), &text);
        wanted.push(name);
    }
    for name in ["types.toml", "extreme.toml", "count.toml"] {
        assert!(wanted.iter().any(|w| w == name), "specs/ has no {name}");
    }
    for entry in std::fs::read_dir(copy).unwrap() {
        let path = entry.unwrap().path();
        if !wanted
            .iter()
            .any(|w| Some(w.as_os_str()) == path.file_name())
        {
            std::fs::remove_file(&path).unwrap();
        }
    }
}

/// The family after the last `[[family]]` table (families before rows, as
/// the header lays them out) and the row at the end.
fn add_family_and_row(types: &str) -> String {
    let first_row = types
        .find("\n[[type]]")
        .expect("types.toml has no [[type]]");
    let mut text = String::new();
    text.push_str(&types[..first_row]);
    text.push_str(FAMILY);
    text.push_str(&types[first_row..]);
    text.push_str(ROW);
    text
}

/// Adds `INTERVAL_YM` to the `types` list of the insert-only,
/// non-DISTINCT entry for `functions`.
fn add_to_entry(text: &str, functions: &str) -> String {
    let mut parts: Vec<String> = text.split("[[entry]]").map(str::to_string).collect();
    let mut edited = 0;
    for part in parts.iter_mut().skip(1) {
        let fields = |key: &str| {
            part.lines()
                .find(|l| l.trim_start().starts_with(&format!("{key} =")))
                .map(|l| l.split_once('=').unwrap().1.trim().to_string())
        };
        if fields("functions").as_deref() == Some(functions)
            && fields("input").as_deref() == Some("\"insert_only\"")
            && fields("distinct").as_deref() == Some("false")
        {
            let at =
                part.find("types = [").expect("entry without a types list") + "types = [".len();
            part.insert_str(at, "\"INTERVAL_YM\", ");
            edited += 1;
        }
    }
    assert_eq!(edited, 1, "one insert-only {functions} entry expected");
    parts.join("[[entry]]")
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}
