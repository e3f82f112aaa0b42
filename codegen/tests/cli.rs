//! Runs the built `aggforge` binary.

use std::path::PathBuf;
use std::process::{Command, Output};

fn aggforge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aggforge"))
        .args(args)
        .output()
        .expect("aggforge runs")
}

fn specs_dir() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../specs")
        .to_string_lossy()
        .into_owned()
}

fn bad_dir() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bad_specs")
        .to_string_lossy()
        .into_owned()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn check_ok() {
    let out = aggforge(&["check", "--specs", &specs_dir()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let templates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../runtime/src/templates");
    let specs = aggforge_codegen::load_dir(std::path::Path::new(&specs_dir()), &templates).unwrap();
    assert_eq!(
        text(&out.stdout).trim(),
        format!(
            "ok: {} type rows, {} state templates, {} entries, {} specializations",
            specs.types.len(),
            specs.templates.len(),
            specs.entries.len(),
            specs.specializations().len()
        )
    );
}

#[test]
fn check_finds_the_workspace_specs_by_default() {
    let out = Command::new(env!("CARGO_BIN_EXE_aggforge"))
        .arg("check")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("ok: "));
}

#[test]
fn check_fails_on_bad_specs() {
    let out = aggforge(&["--specs", &bad_dir(), "check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(
        lines[0].ends_with("bad_specs/extreme.toml:8: unknown type row `DUBLE`; did you mean `DOUBLE`? (known: INT, DOUBLE)"),
        "{stderr}"
    );
    assert!(
        lines[1].contains("bad_specs/extreme.toml:16: entries no longer write `params`")
            && lines[1].contains("(here `sum`, declared at ")
            && lines[1].ends_with("remove `params` from the entry"),
        "{stderr}"
    );
    assert_eq!(lines[2], "2 errors in the specs");
}

#[test]
fn list_with_filters() {
    let out = aggforge(&[
        "list",
        "--specs",
        &specs_dir(),
        "--function",
        "MIN",
        "--type",
        "INT",
        "--phase",
        "local",
        "--input",
        "insert_only",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["FUNCTION", "TYPE", "PHASE", "INPUT", "DISTINCT", "STATUS", "ENTRY"]
    );
    assert!(
        lines[1].starts_with("MIN       INT   local  insert_only  no        specialized  "),
        "{stdout}"
    );
    assert!(lines[1].ends_with("extreme.toml:24"), "{stdout}");
    // The DISTINCT variant runs under the view, in the local phase too.
    assert!(lines[2].contains("yes       specialized  "), "{stdout}");
    assert!(lines[2].ends_with("distinct.toml:35"), "{stdout}");
    assert_eq!(lines[3], "2 of 2 combinations specialized");
    // An order-sensitive DISTINCT sum over retracting input stays
    // single-phase.
    let out = aggforge(&[
        "list",
        "--specs",
        &specs_dir(),
        "--function",
        "SUM",
        "--type",
        "DOUBLE",
        "--phase",
        "global",
        "--input",
        "retracting",
    ]);
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[2].contains("yes       not specialized  phase not listed in "),
        "{stdout}"
    );
    // Columns line up: STATUS starts at the same offset in every row.
    let column = lines[0].find("STATUS").unwrap();
    assert_eq!(&lines[1][column..column + 11], "specialized");
    assert_eq!(&lines[2][column..column + 15], "not specialized");
}

#[test]
fn list_count_star_and_whole_matrix() {
    let out = aggforge(&[
        "list",
        "--specs",
        &specs_dir(),
        "--type",
        "*",
        "--input",
        "insert_only",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(
        stdout
            .lines()
            .skip(1)
            .all(|l| l.starts_with("COUNT_STAR") || l.contains("combinations")),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("3 of 6 combinations specialized\n"),
        "{stdout}"
    );

    let out = aggforge(&["list", "--specs", &specs_dir()]);
    let stdout = text(&out.stdout);
    // Every function with an argument x every type row, + COUNT_STAR, x 3
    // phases x 2 inputs x 2 DISTINCT; the specialized ones are
    // coverage.rs's count.
    let templates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../runtime/src/templates");
    let specs = aggforge_codegen::load_dir(std::path::Path::new(&specs_dir()), &templates).unwrap();
    let unary = aggforge_codegen::model::Function::ALL
        .iter()
        .filter(|f| f.arity() == 1)
        .count();
    let combinations = (unary * specs.types.len() + 1) * 12;
    let specialized = aggforge_codegen::coverage::coverage(&specs)
        .iter()
        .filter(|r| r.status.is_specialized())
        .count();
    assert!(
        stdout.ends_with(&format!(
            "{specialized} of {combinations} combinations specialized\n"
        )),
        "{stdout}"
    );
}

#[test]
fn unknown_filter_names_are_usage_errors() {
    for (flag, value, phrase) in [
        (
            "--function",
            "MEDIAN",
            "unknown function `MEDIAN` (known: MIN, MAX, COUNT_STAR, COUNT, SUM, SUM0, AVG, \
             FIRST_VALUE, LAST_VALUE, LISTAGG, SINGLE_VALUE)",
        ),
        ("--type", "INTEGER", "unknown type `INTEGER`"),
        (
            "--phase",
            "globl",
            "unknown phase `globl`; did you mean `global`? (known: single, local, global)",
        ),
        (
            "--input",
            "upsert",
            "unknown input mode `upsert` (known: insert_only, retracting)",
        ),
    ] {
        let out = aggforge(&["list", "--specs", &specs_dir(), flag, value]);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        assert!(text(&out.stderr).contains(phrase), "{}", text(&out.stderr));
        assert!(out.stdout.is_empty());
    }
    let out = aggforge(&["list", "--specs", &specs_dir(), "--type", "INTEGER"]);
    assert!(
        text(&out.stderr).contains("VARCHAR"),
        "lists the known type rows"
    );
}

#[test]
fn list_on_bad_specs_reports_spec_errors() {
    let out = aggforge(&["list", "--specs", &bad_dir()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("extreme.toml:8:"));
}

#[test]
fn usage_errors_exit_2_and_help_works() {
    assert_eq!(aggforge(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        aggforge(&["list", "--colour", "red"]).status.code(),
        Some(2)
    );
    for args in [&["--help"][..], &["check", "--help"], &["list", "--help"]] {
        let out = aggforge(args);
        assert_eq!(out.status.code(), Some(0));
        assert!(text(&out.stdout).contains("Usage: aggforge"), "{args:?}");
    }
    assert!(text(&aggforge(&["list", "--help"]).stdout).contains("--function <F>"));
}

#[test]
fn expand_prints_generated_code() {
    let out = aggforge(&["--specs", &specs_dir(), "expand", "MIN", "INT", "single"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let code = text(&out.stdout);
    assert!(code.contains("pub type MinInt"), "{code}");
    assert!(code.contains("SlotRule for RunningExtreme"), "{code}");
    assert!(code.contains("specs/extreme.toml:"), "{code}");

    // COUNT(*) has no argument type: `*` stands for it, as in `list`.
    let out = aggforge(&[
        "--specs",
        &specs_dir(),
        "expand",
        "COUNT_STAR",
        "*",
        "local",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("pub type CountStar"));

    let out = aggforge(&["--specs", &specs_dir(), "expand", "MIN", "INTT", "single"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown type row 'INTT'"));
}

#[test]
fn templates_directory_is_an_option() {
    let templates = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../runtime/src/templates")
        .to_string_lossy()
        .into_owned();
    let out = aggforge(&["check", "--specs", &specs_dir(), "--templates", &templates]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let out = aggforge(&["check", "--templates", "/nonexistent/templates"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("/nonexistent/templates:1: cannot read the templates directory"),
        "{stderr}"
    );
}
