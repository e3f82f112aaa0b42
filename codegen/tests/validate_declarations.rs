//! State template declarations (the ```toml blocks of
//! runtime/src/templates/NAME.rs): what the real ones say, and one test per
//! declaration rule, each changing one real declaration and checking the
//! file, line and a key phrase of the error.

mod common;

use aggforge_codegen::model::{
    Division, Function, InputMode, Numeric, Overflow, Phase, StateTemplate, TypeExpr,
};
use aggforge_codegen::validate::type_expr_text;
use aggforge_codegen::{load_dir, load_str, Templates};
use common::*;

const F: &str = "specs/family.toml";

/// Asserts that the (changed) `templates` give exactly one error, at
/// `templates/NAME.rs:line`, when loaded with [`TYPES`] and no entries.
fn assert_decl_error(templates: &Templates, name: &str, line: usize, phrases: &[&str]) {
    assert_only_error_with(
        &[("specs/types.toml", TYPES)],
        templates,
        &format!("templates/{name}.rs"),
        line,
        phrases,
    );
}

#[test]
fn the_real_declarations() {
    let specs = load(&[("specs/types.toml", TYPES)]).unwrap();
    let names: Vec<&str> = specs
        .templates
        .iter()
        .map(|d| d.template.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "avg",
            "count",
            "count_star",
            "counted_extreme",
            "first_last",
            "first_last_retract",
            "listagg",
            "listagg_retract",
            "running_extreme",
            "single_value",
            "sum",
            "sum0",
            "sum_retract"
        ]
    );
    let decl = |t: StateTemplate| specs.template(t).unwrap();
    let layout = |t: StateTemplate, class: Option<Numeric>| {
        let shape = decl(t).shape(class).unwrap();
        let fields: Vec<String> = shape
            .partial
            .iter()
            .map(|f| format!("{}: {}", f.name, type_expr_text(&f.ty)))
            .collect();
        format!(
            "[{}] -> {}",
            fields.join(", "),
            type_expr_text(&shape.result)
        )
    };
    use Numeric::*;
    assert_eq!(
        layout(StateTemplate::Sum, Some(Decimal)),
        "[sum: DECIMAL(38, s)] -> DECIMAL(38, s)"
    );
    assert_eq!(
        layout(StateTemplate::Sum, Some(Integer)),
        "[sum: arg] -> arg"
    );
    assert_eq!(
        layout(StateTemplate::SumRetract, Some(Float)),
        "[sum: arg, count: BIGINT] -> arg"
    );
    assert_eq!(
        layout(StateTemplate::Avg, Some(Integer)),
        "[sum: BIGINT, count: BIGINT] -> arg"
    );
    assert_eq!(
        layout(StateTemplate::Avg, Some(Decimal)),
        "[sum: DECIMAL(38, s), count: BIGINT] -> DECIMAL(38, max(6, s))"
    );
    assert_eq!(
        layout(StateTemplate::CountStar, Option::None),
        "[count1: BIGINT] -> BIGINT"
    );
    assert_eq!(
        layout(StateTemplate::RunningExtreme, Some(None)),
        "[value: arg] -> arg"
    );
    assert_eq!(
        layout(StateTemplate::CountedExtreme, Some(Float)),
        "[acc: accumulator] -> arg"
    );
    let overflow = |class| {
        decl(StateTemplate::Sum0)
            .shape(Some(class))
            .unwrap()
            .params
            .overflow
    };
    assert_eq!(
        [overflow(Integer), overflow(Float), overflow(Decimal)],
        [
            Some(Overflow::Wrap),
            Some(Overflow::Ieee),
            Some(Overflow::Null)
        ]
    );
    let division = |class| {
        decl(StateTemplate::Avg)
            .shape(Some(class))
            .unwrap()
            .params
            .division
    };
    assert_eq!(
        [division(Integer), division(Float), division(Decimal)],
        [
            Some(Division::Truncate),
            Some(Division::Float),
            Some(Division::HalfUp)
        ]
    );
    let counted = decl(StateTemplate::CountedExtreme);
    assert_eq!(counted.functions, [Function::Min, Function::Max]);
    assert_eq!(counted.inputs, [InputMode::Retracting]);
    assert_eq!(counted.phases, [Phase::Single, Phase::Local, Phase::Global]);
    assert!(counted.phases_reason.is_none());
    assert_eq!(decl(StateTemplate::Sum).numeric, [Integer, Float, Decimal]);
    assert_eq!(decl(StateTemplate::Count).numeric.len(), 4);
    assert_eq!(
        counted.location.to_string(),
        format!(
            "templates/counted_extreme.rs:{}",
            line_of("counted_extreme", "# aggforge-declaration")
        )
    );
}

#[test]
fn declaration_syntax_error() {
    let templates = templates_with("sum", "integer = \"wrap\"", "integer = \"wrap");
    assert_decl_error(
        &templates,
        "sum",
        line_of("sum", "integer = \"wrap\""),
        &["TOML syntax error in the template declaration"],
    );
}

#[test]
fn unknown_declaration_key() {
    let templates = templates_with(
        "count",
        "result = \"BIGINT\"",
        "result = \"BIGINT\"\n//! reslt = 1",
    );
    assert_decl_error(
        &templates,
        "count",
        line_of("count", "result = \"BIGINT\"") + 1,
        &["unknown declaration key `reslt`", "the keys are functions"],
    );
}

#[test]
fn unknown_parameter() {
    let templates = templates_with("sum", "[params.overflow]", "[params.saturate]");
    assert_decl_error(
        &templates,
        "sum",
        line_of("sum", "[params.overflow]"),
        &["unknown parameter `saturate`"],
    );
}

#[test]
fn unknown_parameter_value() {
    let templates = templates_with("sum", "float = \"ieee\"", "float = \"saturate\"");
    assert_decl_error(
        &templates,
        "sum",
        line_of("sum", "float = \"ieee\""),
        &["unknown overflow `saturate`", "wrap, ieee, null"],
    );
}

#[test]
fn a_class_without_a_value() {
    let templates = templates_with("avg", "//! decimal = \"half_up\"\n", "");
    assert_decl_error(
        &templates,
        "avg",
        line_of("avg", "integer = \"truncate\""),
        &[
            "`params.division` gives no value for numeric class decimal",
            "add `decimal = ...`",
        ],
    );
}

#[test]
fn a_value_for_a_class_the_template_does_not_take() {
    let templates = templates_with(
        "sum0",
        "//! decimal = \"null\"\n",
        "//! decimal = \"null\"\n//! none = \"wrap\"\n",
    );
    assert_decl_error(
        &templates,
        "sum0",
        line_of("sum0", "decimal = \"null\"") + 1,
        &["`params.overflow` gives a value for class none, which this template does not accept"],
    );
}

#[test]
fn unknown_numeric_class() {
    let templates = templates_with(
        "sum",
        "numeric = [\"integer\", \"float\", \"decimal\"]",
        "numeric = [\"integer\", \"flot\", \"decimal\"]",
    );
    let errors = errors_with(&[("specs/types.toml", TYPES)], &templates);
    assert_error(
        &errors,
        "templates/sum.rs",
        line_of("sum", "numeric = "),
        &["unknown numeric class `flot`", "did you mean `float`?"],
    );
}

#[test]
fn unknown_function_in_a_declaration() {
    let templates = templates_with("count", "functions = [\"COUNT\"]", "functions = [\"CONT\"]");
    assert_decl_error(
        &templates,
        "count",
        line_of("count", "functions = "),
        &["unknown function `CONT`", "did you mean `COUNT`?"],
    );
}

#[test]
fn two_templates_serving_the_same_call() {
    let templates = templates_with(
        "sum0",
        "functions = [\"SUM0\"]",
        "functions = [\"SUM0\", \"SUM\"]",
    );
    assert_decl_error(
        &templates,
        "sum0",
        line_of("sum0", "functions = "),
        &[
            "SUM over insert_only input is already served by state template `sum` (templates/sum.rs:",
            "remove it from one of the two",
        ],
    );
}

#[test]
fn a_template_the_emitter_does_not_know() {
    let (_, count) = template_sources()
        .iter()
        .find(|(p, _)| p == "templates/count.rs")
        .unwrap();
    let mut files: Vec<(String, String)> = template_sources().to_vec();
    files.push((
        "templates/median.rs".into(),
        count.replace("[\"COUNT\"]", "[\"AVG\"]"),
    ));
    let templates = Templates::from_sources(&files);
    let errors = errors_with(&[("specs/types.toml", TYPES)], &templates);
    assert_error(
        &errors,
        "templates/median.rs",
        line_of("count", "# aggforge-declaration"),
        &[
            "unknown state template `median`",
            "the file name names the template",
        ],
    );
}

#[test]
fn distributed_phase_without_partial() {
    let templates = templates_with(
        "first_last_retract",
        "phases = [\"single\"]",
        "phases = [\"single\", \"local\"]",
    );
    assert_decl_error(
        &templates,
        "first_last_retract",
        line_of("first_last_retract", "phases = "),
        &["phase local exchanges the partial layout, but the declaration gives no `partial`"],
    );
}

#[test]
fn an_accumulator_field_is_the_only_partial_field_and_no_result() {
    let partial = "partial = [{ name = \"acc\", type = \"accumulator\" }]";
    let templates = templates_with(
        "counted_extreme",
        partial,
        "partial = [{ name = \"acc\", type = \"accumulator\" }, { name = \"n\", type = \"BIGINT\" }]",
    );
    assert_decl_error(
        &templates,
        "counted_extreme",
        line_of("counted_extreme", "phases = "),
        &["`accumulator` partial field is Flink's whole accumulator"],
    );
    let templates = templates_with(
        "counted_extreme",
        "result = \"arg\"",
        "result = \"accumulator\"",
    );
    assert_decl_error(
        &templates,
        "counted_extreme",
        line_of("counted_extreme", "result = "),
        &["`accumulator` is only a partial field type"],
    );
}

#[test]
fn partial_field_names_are_identifiers() {
    let templates = templates_with("running_extreme", "name = \"value\"", "name = \"Value!\"");
    assert_decl_error(
        &templates,
        "running_extreme",
        line_of("running_extreme", "name = \"value\""),
        &[
            "partial field name `Value!`",
            "identifier starting lower-case",
        ],
    );
}

#[test]
fn type_expression_syntax() {
    let templates = templates_with(
        "avg",
        "\"DECIMAL(38, max(6, s))\"",
        "\"DECIMAL(38 max(6, s))\"",
    );
    assert_decl_error(
        &templates,
        "avg",
        line_of("avg", "decimal = \"DECIMAL(38, max(6, s))\""),
        &[
            "cannot read type expression `DECIMAL(38 max(6, s))`",
            "DECIMAL(p, max(n, s))",
        ],
    );
}

#[test]
fn decimal_precision_out_of_range() {
    let templates = templates_with("avg", "\"DECIMAL(38, max(6, s))\"", "\"DECIMAL(40, s)\"");
    assert_decl_error(
        &templates,
        "avg",
        line_of("avg", "decimal = \"DECIMAL(38, max(6, s))\""),
        &["precision 40", "1 to 38"],
    );
}

#[test]
fn decimal_expression_for_another_class() {
    let templates = templates_with("sum", "float = \"arg\"", "float = \"DECIMAL(38, s)\"");
    assert_decl_error(
        &templates,
        "sum",
        line_of("sum", "float = \"arg\""),
        &[
            "`DECIMAL(38, s)` is only for DECIMAL arguments, but here it applies to numeric class float",
            "under `decimal`",
        ],
    );
}

#[test]
fn arg_without_argument() {
    let templates = templates_with("count_star", "result = \"BIGINT\"", "result = \"arg\"");
    assert_decl_error(
        &templates,
        "count_star",
        line_of("count_star", "result = \"BIGINT\""),
        &["COUNT_STAR has no argument, so `arg` means nothing here"],
    );
}

#[test]
fn missing_result() {
    let templates = templates_with("count", "//! result = \"BIGINT\"\n", "");
    assert_decl_error(
        &templates,
        "count",
        line_of("count", "# aggforge-declaration"),
        &["the template declaration is missing `result`"],
    );
}

#[test]
fn declaration_errors_do_not_cascade_into_entries() {
    // The broken sum declaration is reported; the SUM entry that would
    // have used it adds nothing.
    let templates = templates_with("sum", "functions = [\"SUM\"]", "functions = [\"SUMM\"]");
    assert_only_error_with(
        &[("specs/types.toml", TYPES), (F, SUM)],
        &templates,
        "templates/sum.rs",
        line_of("sum", "functions = "),
        &["unknown function `SUMM`"],
    );
}

#[test]
fn a_missing_parameter_is_an_emit_error_at_the_declaration() {
    let sum = template_sources()
        .iter()
        .find(|(p, _)| p == "templates/sum.rs")
        .map(|(_, t)| t.clone())
        .unwrap();
    let start = sum.find("//! [params.overflow]").unwrap();
    let end = sum[start..].find("//! ```").unwrap() + start;
    let templates = templates_with("sum", &sum[start..end], "");
    let specs = load_str(
        &with_families(&[("specs/types.toml", TYPES), (F, SUM)]),
        &templates,
    )
    .unwrap();
    let errors = aggforge_codegen::emit_rust::emit(&specs).unwrap_err();
    assert!(
        errors
            .iter()
            .all(|e| e.location.starts_with("templates/sum.rs:")
                && e.message.contains("params.overflow")),
        "{errors:?}"
    );
}

#[test]
fn the_templates_directory_is_its_own_input() {
    // Only specs/ copied elsewhere: the real templates still serve it.
    let dir = std::env::temp_dir().join(format!("aggforge-specs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let specs_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs");
    for entry in std::fs::read_dir(&specs_dir).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    let specs = load_dir(&dir, &templates_dir());
    std::fs::remove_dir_all(&dir).unwrap();
    let original = load_dir(&specs_dir, &templates_dir()).unwrap();
    assert_eq!(
        specs.unwrap().specializations().len(),
        original.specializations().len()
    );

    let errors = load_dir(&specs_dir, std::path::Path::new("/nonexistent/templates")).unwrap_err();
    assert_error(
        &errors.0,
        "/nonexistent/templates",
        1,
        &["cannot read the templates directory"],
    );
}

#[test]
fn decimal_is_only_used_where_the_class_is_decimal() {
    let specs = load(&[("specs/types.toml", TYPES)]).unwrap();
    for decl in &specs.templates {
        for (class, shape) in &decl.shapes {
            let decimal = shape
                .partial
                .iter()
                .map(|f| &f.ty)
                .chain([&shape.result])
                .any(|t| matches!(t, TypeExpr::Decimal { .. }));
            assert!(!decimal || *class == Some(Numeric::Decimal), "{decl:?}");
        }
    }
}
