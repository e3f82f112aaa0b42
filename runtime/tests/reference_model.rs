//! Every specialization in the registry against a tiny reference model
//! written the obvious way (a list of values per group folded with Flink's
//! rules), over generated batches: single phase, local/global split,
//! snapshot/restore, and traced per-row results with changed flags.
//!
//! The model is `common/reference/model.rs`; the inputs are proptest
//! strategies (`common/reference/strategies.rs`: batches, rows, group keys,
//! values with NULLs and each type's edge values, FILTER bits, row kinds,
//! local/global split points). One [`TestRunner`] per specialization runs
//! [`CASES`] cases, so a failure shrinks to a few rows of the specialization
//! that fails, and every specialization is reported. Failing cases are
//! saved as seeds in `reference_model.proptest-regressions`; every run
//! replays them first, for every specialization.

#[path = "common/reference/columns.rs"]
mod columns;
#[path = "common/reference/model.rs"]
mod model;
#[path = "common/reference/strategies.rs"]
mod strategies;

use std::fmt::Display;

use aggforge_runtime::accumulator::BatchUpdate;
use aggforge_runtime::registry::{self, Admission};
use aggforge_runtime::types::{Phase, SqlType};
use arrow_array::{ArrayRef, BooleanArray};
use arrow_schema::DataType;
use proptest::prelude::*;
use proptest::test_runner::{
    contextualize_config, Config, FileFailurePersistence, RngAlgorithm, TestError, TestRunner,
};

use columns::{arrow_type, from_array, to_array};
use model::{identical, java_equal, model_of, Model, Ref, V};
use strategies::{Batch, Case};

/// Cases per specialization (`PROPTEST_CASES` overrides it).
const CASES: u32 = 48;

/// Folds row `i` of `batch` into `state`, retracting -U/-D rows.
fn fold_row(model: &Model, state: &mut Ref, batch: &Batch, i: usize) {
    if !batch.counts(i) {
        return;
    }
    model.apply(state, &batch.values[i], batch.retracts(i));
}

fn args_of(batch: &Batch, ty: Option<&SqlType>, arg_type: Option<&DataType>) -> Vec<ArrayRef> {
    match (ty, arg_type) {
        (Some(_), Some(dt)) => vec![to_array(&batch.values, dt)],
        _ => vec![],
    }
}

/// An accumulator error as the case's failure (the runner names the
/// specialization).
fn ok<T>(what: &str, result: Result<T, impl Display>) -> Result<T, TestCaseError> {
    result.map_err(|e| TestCaseError::fail(format!("{what}: {e}")))
}

fn filter_array(batch: &Batch) -> Option<BooleanArray> {
    batch.filter.as_ref().map(|f| BooleanArray::from(f.clone()))
}

fn update<'a>(
    batch: &'a Batch,
    args: &'a [ArrayRef],
    filter: Option<&'a BooleanArray>,
) -> BatchUpdate<'a> {
    BatchUpdate {
        args,
        group_ids: &batch.groups,
        filter,
        row_kinds: batch.kinds.as_deref(),
        distinct: None,
    }
}

/// Compares results with the reference's, one per group (or per row of a
/// traced update: `per` names which).
fn check_results(
    what: &str,
    per: &str,
    got: &ArrayRef,
    want: &[Option<V>],
) -> Result<(), TestCaseError> {
    let got = from_array(got);
    prop_assert_eq!(got.len(), want.len(), "{}: length", what);
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        prop_assert!(
            identical(a, b),
            "{what}: {per} {i} got {a:?}, reference {b:?}"
        );
    }
    Ok(())
}

fn run_one(admission: &'static Admission, model: &Model, case: &Case) -> Result<(), TestCaseError> {
    let ty = model.ty;
    let arg_type = ty.as_ref().map(arrow_type);
    let groups = case.groups;
    let batches = &case.batches;
    let all: Vec<u32> = (0..groups).collect();
    let create = || ok("create", admission.create(ty.as_ref()));
    // Each batch's argument and FILTER columns, for both runs.
    let columns: Vec<(Vec<ArrayRef>, Option<BooleanArray>)> = batches
        .iter()
        .map(|b| (args_of(b, ty.as_ref(), arg_type.as_ref()), filter_array(b)))
        .collect();

    // Reference, single phase, with per-row results and changed flags.
    let mut reference: Vec<Ref> = (0..groups).map(|_| model.empty()).collect();
    let mut traced_reference = Vec::new();
    for batch in batches {
        let mut rows = Vec::new();
        for (i, &g) in batch.groups.iter().enumerate() {
            let state = &mut reference[g as usize];
            let before = model.result(state);
            let failed_before = state.failed();
            fold_row(model, state, batch, i);
            let after = model.result(state);
            let fails = !failed_before && state.failed();
            rows.push((after.clone(), !java_equal(&before, &after), fails));
        }
        traced_reference.push(rows);
    }
    let want: Vec<Option<V>> = reference.iter().map(|s| model.result(s)).collect();

    // (a) single phase, plus traced updates on a second accumulator.
    if admission.phases.contains(&Phase::Single) {
        let mut acc = create()?;
        let mut traced = create()?;
        acc.resize(groups as usize);
        traced.resize(groups as usize);
        let traced_batches = batches.iter().zip(&traced_reference).zip(&columns);
        for (b, ((batch, rows), (args, filter))) in traced_batches.enumerate() {
            let update = update(batch, args, filter.as_ref());
            ok("update", acc.update(&update))?;
            let mut changed = vec![false; batch.groups.len()];
            let out = ok("traced update", traced.update_traced(&update, &mut changed))?;
            // SINGLE_VALUE: the first row that fails its group is refused.
            let refused = rows.iter().position(|r| r.2);
            prop_assert_eq!(
                acc.refused_row().map(|r| r.0),
                refused,
                "batch {} refused",
                b
            );
            prop_assert_eq!(
                traced.refused_row().map(|r| r.0),
                refused,
                "batch {} traced refused",
                b
            );
            let per_row: Vec<Option<V>> = rows.iter().map(|r| r.0.clone()).collect();
            check_results(&format!("batch {b} traced"), "row", &out, &per_row)?;
            let flags: Vec<bool> = rows.iter().map(|r| r.1).collect();
            prop_assert_eq!(changed, flags, "batch {} changed flags", b);
        }
        let evaluated = ok("evaluate", acc.evaluate(&all))?;
        check_results("single phase", "group", &evaluated, &want)?;
        let evaluated = ok("traced evaluate", traced.evaluate(&all))?;
        check_results("traced final", "group", &evaluated, &want)?;

        // (c) snapshot -> restore into a fresh accumulator.
        let snapshot = ok("snapshot", acc.snapshot(&all))?;
        let mut fresh = create()?;
        fresh.resize(groups as usize);
        ok("restore", fresh.restore(&snapshot, &all))?;
        let evaluated = ok("restored evaluate", fresh.evaluate(&all))?;
        check_results("restored", "group", &evaluated, &want)?;
        // and it keeps folding identically
        prop_assert_eq!(fresh.state_types(), acc.state_types());
    }

    // (b) local bundles merged by a global accumulator. The order-sensitive
    // DISTINCT folds are left out here: across the exchange they fold in
    // Java HashMap order, which the operator applies (operator/view_order.rs;
    // tested in two_phase_distinct.rs and the Flink DistinctParityTest), not
    // the accumulator this test drives.
    if admission.phases.contains(&Phase::Local)
        && admission.phases.contains(&Phase::Global)
        && !order_sensitive_distinct(admission)
    {
        let create_in = |phase| ok("create", admission.create_call(ty.as_slice(), phase));
        let mut local = create_in(Phase::Local)?;
        let mut global = create_in(Phase::Global)?;
        global.resize(groups as usize);
        let mut reference: Vec<Ref> = (0..groups).map(|_| model.empty()).collect();
        // the batch sequence splits into bundles where a batch says `flush`
        let mut bundle: Vec<Ref> = (0..groups).map(|_| model.empty()).collect();
        local.resize(groups as usize);
        for (batch, (args, filter)) in batches.iter().zip(&columns) {
            ok(
                "local update",
                local.update(&update(batch, args, filter.as_ref())),
            )?;
            for (i, &g) in batch.groups.iter().enumerate() {
                fold_row(model, &mut bundle[g as usize], batch, i);
            }
            if batch.flush {
                let partials = ok("partials", local.partials(&all))?;
                prop_assert_eq!(
                    partials
                        .iter()
                        .map(|p| p.data_type().clone())
                        .collect::<Vec<_>>(),
                    local.partial_types(),
                    "partial types"
                );
                ok("global merge", global.merge(&partials, &all))?;
                for (g, partial) in bundle.iter().enumerate() {
                    model.merge(&mut reference[g], partial);
                }
                local.reset();
                local.resize(groups as usize);
                bundle = (0..groups).map(|_| model.empty()).collect();
            }
        }
        // SINGLE_VALUE: a group a local bundle or the merge failed is left
        // out (the operators stop there; operator-level tests cover it).
        let kept: Vec<u32> = all
            .iter()
            .copied()
            .filter(|&g| !reference[g as usize].failed())
            .collect();
        let want: Vec<Option<V>> = kept
            .iter()
            .map(|&g| model.result(&reference[g as usize]))
            .collect();
        let evaluated = ok("global evaluate", global.evaluate(&kept))?;
        check_results("local/global", "group", &evaluated, &want)?;
    }
    Ok(())
}

/// DISTINCT specializations whose two-phase result depends on the order
/// values are folded in: FLOAT/DOUBLE SUM, SUM0, AVG, MIN, MAX,
/// DECIMAL(19..38) SUM, SUM0, AVG and LISTAGG (not MIN/MAX over retracting
/// input: their counted multiset orders values by Java's compareTo).
fn order_sensitive_distinct(admission: &Admission) -> bool {
    let name = admission.name;
    if name.ends_with("/retracting") && (name.starts_with("MIN") || name.starts_with("MAX")) {
        return false;
    }
    let floating = name.contains("DISTINCT<FLOAT>") || name.contains("DISTINCT<DOUBLE>");
    let wide = name.contains("DISTINCT<DECIMAL_38>")
        && !name.starts_with("MIN")
        && !name.starts_with("MAX");
    name.starts_with("LISTAGG") || (!name.starts_with("COUNT") && (floating || wide))
}

#[test]
fn every_specialization_matches_the_reference() {
    let config = contextualize_config(Config {
        cases: CASES,
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        // ChaCha, the default, is several times slower in a debug build;
        // a saved seed names its algorithm (`xs` / `cc`), so both replay.
        rng_algorithm: RngAlgorithm::XorShift,
        ..Config::default()
    });
    let mut failures = Vec::new();
    for admission in registry::all() {
        let model = model_of(admission);
        let strategy = strategies::case(model.ty, model.retracting);
        let mut runner = TestRunner::new(config.clone());
        match runner.run(&strategy, |case| run_one(admission, &model, &case)) {
            Ok(()) => {}
            Err(TestError::Fail(reason, case)) => failures.push(format!(
                "{}: {reason}\nminimal failing input: {case:?}",
                admission.name
            )),
            Err(TestError::Abort(reason)) => {
                failures.push(format!("{}: aborted: {reason}", admission.name))
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} specialization(s) differ from the reference:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_registry_is_not_empty() {
    assert!(registry::all().len() > 50);
}
