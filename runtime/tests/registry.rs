//! The registry admits exactly what the specs declare: every
//! specialization the spec files list (loaded here with the codegen
//! loader) is admitted by `lookup`, and undeclared combinations are not,
//! with a reason. So adding a type to a spec entry and rebuilding is all it
//! takes to get a new specialization.

use std::path::Path;

use aggforge_codegen::model::{InputMode as SpecInput, Phase as SpecPhase};
use aggforge_runtime::registry::{self, lookup};
use aggforge_runtime::types::{InputMode, Phase, SqlType};

/// A SQL type that falls in each type row of types.toml.
fn sql_for(row: &str) -> SqlType {
    aggforge_runtime::sql_type::type_rows()
        .iter()
        .find(|r| r.name == row)
        .unwrap_or_else(|| panic!("no type row {row} in the runtime's table"))
        .example()
}

fn phase(p: SpecPhase) -> Phase {
    match p {
        SpecPhase::Single => Phase::Single,
        SpecPhase::Local => Phase::Local,
        SpecPhase::Global => Phase::Global,
    }
}

#[test]
fn every_declared_specialization_is_admitted() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs");
    let templates = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/templates");
    let specs = aggforge_codegen::load_dir(&dir, &templates).expect("specs load");
    let declared = specs.specializations();
    assert_eq!(
        declared.len(),
        registry::all().len(),
        "one registry row per specialization"
    );
    for spec in &declared {
        let arg = spec.ty.map(|row| sql_for(&row.name));
        let input = match spec.entry.input {
            SpecInput::InsertOnly => InputMode::InsertOnly,
            SpecInput::Retracting => InputMode::Retracting,
        };
        for &p in &spec.entry.phases {
            let admitted = lookup(
                spec.function.as_str(),
                arg.as_ref(),
                phase(p),
                input,
                spec.entry.distinct,
            )
            .unwrap_or_else(|e| panic!("{} not admitted: {e}", spec.display_name()));
            assert_eq!(admitted.name, spec.display_name());
            let acc = admitted.create(arg.as_ref()).expect("create");
            assert_eq!(acc.name(), spec.display_name());
            assert_eq!(acc.num_groups(), 0);
        }
        // Every type of the row's precision range maps to the row.
        if let (Some(row), Some((low, high))) = (spec.ty, spec.ty.and_then(|r| r.precision)) {
            for p in [low, high] {
                let text = match row.sql.as_str() {
                    "DECIMAL" => format!("DECIMAL({}, 0)", p.max(1)),
                    family => format!("{family}({p})"),
                };
                let ty: SqlType = text.parse().unwrap();
                assert_eq!(
                    registry::type_row_of(&ty),
                    Some(row.name.as_str()),
                    "{text}"
                );
            }
        }
    }
}

#[test]
fn undeclared_combinations_are_not_admitted_with_a_reason() {
    type Case = (
        &'static str,
        Option<&'static str>,
        Phase,
        InputMode,
        bool,
        &'static str,
    );
    let cases: [Case; 7] = [
        (
            "SUM",
            Some("DATE"),
            Phase::Single,
            InputMode::InsertOnly,
            false,
            "no spec entry for SUM over DATE",
        ),
        (
            "LAST_VALUE",
            Some("INT"),
            Phase::Local,
            InputMode::Retracting,
            false,
            "phase local not listed for LAST_VALUE<INT>/retracting",
        ),
        (
            "SUM",
            Some("DOUBLE"),
            Phase::Global,
            InputMode::Retracting,
            true,
            "phase global not listed for SUM DISTINCT<DOUBLE>/retracting",
        ),
        (
            "COUNT",
            None,
            Phase::Single,
            InputMode::InsertOnly,
            true,
            "COUNT_STAR<*>/insert_only has no DISTINCT specialization",
        ),
        (
            "MEDIAN",
            Some("INT"),
            Phase::Single,
            InputMode::InsertOnly,
            false,
            "no spec entry for function MEDIAN",
        ),
        (
            "MAX",
            Some("TIME(6)"),
            Phase::Single,
            InputMode::InsertOnly,
            false,
            "no type row in types.toml matches TIME(6)",
        ),
        (
            "AVG",
            Some("BOOLEAN"),
            Phase::Global,
            InputMode::InsertOnly,
            false,
            "no spec entry for AVG over BOOLEAN",
        ),
    ];
    for (function, ty, phase, input, distinct, reason) in cases {
        let arg: Option<SqlType> = ty.map(|t| t.parse().unwrap());
        let err = lookup(function, arg.as_ref(), phase, input, distinct).unwrap_err();
        assert!(
            err.reason.contains(reason),
            "{function}: got '{err}', want '{reason}'"
        );
    }
}

#[test]
fn created_accumulators_take_types_from_the_sql_type() {
    use arrow_schema::DataType;
    let arg: SqlType = "DECIMAL(12, 3)".parse().unwrap();
    let sum = lookup(
        "SUM",
        Some(&arg),
        Phase::Local,
        InputMode::InsertOnly,
        false,
    )
    .unwrap();
    let acc = sum.create(Some(&arg)).unwrap();
    assert_eq!(acc.result_type(), DataType::Decimal128(38, 3));
    let min = lookup(
        "MIN",
        Some(&arg),
        Phase::Single,
        InputMode::InsertOnly,
        false,
    )
    .unwrap();
    assert_eq!(
        min.create(Some(&arg)).unwrap().result_type(),
        DataType::Decimal128(12, 3)
    );
    // A constructor refuses a SQL type of another row.
    let other: SqlType = "DECIMAL(30, 3)".parse().unwrap();
    assert!(min.create(Some(&other)).is_err());
    let star = lookup("COUNT", None, Phase::Global, InputMode::InsertOnly, false).unwrap();
    assert_eq!(star.name, "COUNT_STAR<*>/insert_only");
}
