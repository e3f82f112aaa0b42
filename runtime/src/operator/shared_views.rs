//! Shared DISTINCT views: the DISTINCT calls over the same argument
//! column share one view, as the calls of one Flink DistinctInfo share one
//! MapView, so each row is probed once for all of them (each call keeps its
//! own FILTER as its column of the view's cells).

use crate::accumulator::{BatchUpdate, DistinctRows, GroupAccumulator};
use crate::error::Result;
use crate::plan::{AggCall, AggPlan};
use crate::types::Phase;

/// Links the DISTINCT calls that share a view to one view each; returns
/// the groups of calls sharing a view (two or more calls, in view order).
/// Over raw rows (single and local phases) the calls that read the same
/// single argument column share; in the global phase (and the incremental
/// aggregate) the calls of each of the plan's views, whose partials arrive
/// in one view column, share, call `i` of the view on the view's column
/// `i`. Calls whose accumulators cannot share stay on views of their own.
pub(super) fn share(
    plan: &AggPlan,
    calls: &[AggCall],
    accs: &mut [Box<dyn GroupAccumulator>],
) -> Vec<Vec<usize>> {
    let groups: Vec<Vec<usize>> = if plan.phase == Phase::Global {
        plan.views.iter().map(|view| view.calls.clone()).collect()
    } else {
        by_argument(calls)
    };
    let mut shared = Vec::new();
    for group in groups {
        if group.len() < 2 {
            continue;
        }
        let Some(view) = accs[group[0]].new_distinct_view(group.len()) else {
            continue;
        };
        let joined = group
            .iter()
            .enumerate()
            .all(|(position, &c)| accs[c].join_distinct_view(&view, position));
        if joined {
            shared.push(group);
        } else {
            // Back to one view per call.
            for &c in &group {
                if let Some(own) = accs[c].new_distinct_view(1) {
                    accs[c].join_distinct_view(&own, 0);
                }
            }
        }
    }
    shared
}

/// Runs every shared view over its calls' updates: per call, the rows the
/// view pass gave it (`None` for a call without a shared view).
pub(super) fn passes(
    accs: &mut [Box<dyn GroupAccumulator>],
    shared: &[Vec<usize>],
    updates: &[BatchUpdate<'_>],
) -> Result<Vec<Option<DistinctRows>>> {
    let mut rows: Vec<Option<DistinctRows>> = (0..updates.len()).map(|_| None).collect();
    for group in shared {
        let batches: Vec<BatchUpdate<'_>> = group.iter().map(|&c| updates[c]).collect();
        let pass = accs[group[0]].distinct_pass(&batches)?;
        for (&c, call_rows) in group.iter().zip(pass) {
            rows[c] = Some(call_rows);
        }
    }
    Ok(rows)
}

/// Folds one update per call into `accs` (`fold(call, acc, update)`),
/// the shared views' passes first.
pub(super) fn fold_calls(
    accs: &mut [Box<dyn GroupAccumulator>],
    shared: &[Vec<usize>],
    updates: &[BatchUpdate<'_>],
    mut fold: impl FnMut(usize, &mut dyn GroupAccumulator, &BatchUpdate<'_>) -> Result<()>,
) -> Result<()> {
    let rows = passes(accs, shared, updates)?;
    for (c, (acc, update)) in accs.iter_mut().zip(updates).enumerate() {
        let update = BatchUpdate {
            distinct: rows[c].as_ref(),
            ..*update
        };
        fold(c, acc.as_mut(), &update)?;
    }
    Ok(())
}

/// The DISTINCT calls over one single argument column, grouped by that
/// column in the order of their first call (Flink's DistinctInfos over
/// raw rows). Calls over several arguments are left out.
pub(super) fn by_argument(calls: &[AggCall]) -> Vec<Vec<usize>> {
    let mut by_column: Vec<(usize, Vec<usize>)> = Vec::new();
    for (c, call) in calls.iter().enumerate() {
        let [column] = call.args[..] else { continue };
        if !call.distinct {
            continue;
        }
        match by_column.iter_mut().find(|(col, _)| *col == column) {
            Some((_, group)) => group.push(c),
            None => by_column.push((column, vec![c])),
        }
    }
    by_column.into_iter().map(|(_, group)| group).collect()
}
