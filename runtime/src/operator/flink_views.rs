//! DISTINCT views in Flink's layout: Flink keeps each DistinctInfo (the
//! DISTINCT calls over one argument) as a `MapState` beside `accState`
//! (`distinctAcc_<i>`), an entry per value with a bit (insert-only input)
//! or a count (retracting input) per call, and a placeholder field at the
//! end of the accumulator row. A change batch of an operator bound to
//! Flink's layout carries, after the calls' own accumulator columns, one
//! view column per DistinctInfo, in Flink's order: a group's whole map as a
//! list of `{key, value}` entries (`views::ViewLayout`), which the Java
//! operator writes into the `MapState` and reads back from it.
//!
//! The calls' own accumulator columns come from
//! `GroupAccumulator::state_partials`: a call whose accumulator holds data
//! views of its own (MIN/MAX over retractions, Flink's `agg<i>$map`) logs
//! their changed entries too, and a write-back carries only those.

use arrow_array::ArrayRef;
use arrow_schema::DataType;

use super::views::{own_partials, ViewLayout};
use super::GroupAggOperator;
use crate::error::{AggError, Result};
use crate::kernel::multiset::counted_list;
use crate::plan::arrow_type;
use crate::types::{InputMode, Phase};

/// One DistinctInfo: its calls and the layout of its view column.
#[derive(Debug, Clone)]
pub(super) struct FlinkView {
    /// The calls sharing the view, call `calls[i]` on bit or count `i`.
    calls: Vec<usize>,
    /// The view column's layout.
    layout: ViewLayout,
}

/// The DISTINCT views of an operator's state in Flink's layout.
#[derive(Debug, Clone, Default)]
pub(super) struct FlinkViews {
    /// In Flink's order (its `distinctAcc_<i>` states).
    views: Vec<FlinkView>,
    /// By call: whether the call is in a view (its last partial column is
    /// its list, which travels in the view column).
    in_view: Vec<bool>,
}

impl FlinkViews {
    /// The views of `op`'s DISTINCT calls as Flink's planner forms them:
    /// in the global phase the plan's views; else the DISTINCT calls over
    /// one argument column, in the order of their first call. Calls over
    /// several arguments are refused (their key is a row).
    pub(super) fn of(op: &GroupAggOperator) -> std::result::Result<Self, String> {
        let calls = &op.calls;
        let mut in_view = vec![false; op.accs.len()];
        let retracting = op.plan.input == InputMode::Retracting;
        let groups: Vec<Vec<usize>> = if op.plan.phase == Phase::Global {
            op.plan.views.iter().map(|v| v.calls.clone()).collect()
        } else {
            if let Some(call) = calls.iter().find(|c| c.distinct && c.args.len() != 1) {
                return Err(format!(
                    "{}(DISTINCT) over {} arguments keeps a row per value",
                    call.function,
                    call.args.len()
                ));
            }
            super::shared_views::by_argument(calls)
        };
        let mut views = Vec::with_capacity(groups.len());
        for group in groups {
            let Some(key) = group
                .first()
                .and_then(|&c| calls.get(c))
                .and_then(|c| c.arg_types.first())
            else {
                return Err("a DISTINCT view without calls or arguments".into());
            };
            for &c in &group {
                if c >= in_view.len() {
                    return Err(format!("DISTINCT view names call {c}"));
                }
                in_view[c] = true;
            }
            views.push(FlinkView {
                layout: ViewLayout {
                    key_type: arrow_type(key),
                    calls: group.len(),
                    retracting,
                },
                calls: group,
            });
        }
        if let Some(c) = (0..calls.len()).find(|&c| calls[c].distinct && !in_view[c]) {
            return Err(format!(
                "{}(DISTINCT) is in none of the plan's views",
                calls[c].function
            ));
        }
        Ok(FlinkViews { views, in_view })
    }

    /// Number of views (Flink's DistinctInfos).
    pub(super) fn len(&self) -> usize {
        self.views.len()
    }

    /// The Arrow types of the accumulator columns in Flink's layout: each
    /// call's own partial columns, then the view columns.
    pub(super) fn column_types(&self, op: &GroupAggOperator, stored: usize) -> Vec<DataType> {
        let mut types: Vec<DataType> = op.accs[..stored]
            .iter()
            .enumerate()
            .flat_map(|(c, a)| own_partials(a.partial_types(), self.viewed(c)))
            .collect();
        types.extend(self.views.iter().map(|v| v.layout.data_type()));
        types
    }

    /// By column of [`column_types`](Self::column_types) but the views:
    /// the call it belongs to.
    pub(super) fn column_owners(&self, op: &GroupAggOperator, stored: usize) -> Vec<usize> {
        op.accs[..stored]
            .iter()
            .enumerate()
            .flat_map(|(c, a)| vec![c; own_partials(a.partial_types(), self.viewed(c)).len()])
            .collect()
    }

    fn viewed(&self, call: usize) -> bool {
        self.in_view.get(call).copied().unwrap_or(false)
    }

    /// Starts logging the entries of every view that change (bind): the
    /// DISTINCT views and the calls' own data views.
    pub(super) fn start_logs(&self, op: &mut GroupAggOperator) {
        for (c, acc) in op.accs.iter_mut().enumerate() {
            if self.viewed(c) || acc.keeps_state_views() {
                acc.start_view_log();
            }
        }
    }

    /// Forgets the logged entries: they were written back.
    pub(super) fn clear_logs(&self, op: &mut GroupAggOperator) {
        for (c, acc) in op.accs.iter_mut().enumerate() {
            if self.viewed(c) || acc.keeps_state_views() {
                acc.clear_view_log();
            }
        }
    }

    /// The accumulator columns of `groups` in Flink's layout (see
    /// [`column_types`](Self::column_types)): with `whole` each view
    /// column holds the groups' whole maps, else only the entries changed
    /// since the logs were cleared, an entry whose value is all 0 one
    /// that left the map (what a write-back writes).
    pub(super) fn columns(
        &self,
        op: &GroupAggOperator,
        stored: usize,
        groups: &[u32],
        whole: bool,
    ) -> Result<Vec<ArrayRef>> {
        let mut columns = Vec::new();
        let mut lists: Vec<Option<ArrayRef>> = vec![None; stored];
        for (c, acc) in op.accs[..stored].iter().enumerate() {
            if !self.viewed(c) {
                columns.extend(acc.state_partials(groups, whole)?);
                continue;
            }
            let mut partials = acc.partials(groups)?;
            lists[c] = partials.pop();
            columns.extend(partials);
        }
        for view in &self.views {
            if !whole {
                columns.push(changed_column(view, op, groups)?);
                continue;
            }
            let members = view
                .calls
                .iter()
                .map(|&c| {
                    lists.get_mut(c).and_then(Option::take).ok_or_else(|| {
                        AggError::Plan(format!("call {c} has no DISTINCT view list"))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            columns.push(view.layout.join(&members)?);
        }
        Ok(columns)
    }

    /// Each stored accumulator's partial columns (its list split from its
    /// view column last) of accumulator columns in Flink's layout.
    pub(super) fn partials_by_call(
        &self,
        op: &GroupAggOperator,
        stored: usize,
        columns: &[ArrayRef],
    ) -> Result<Vec<Vec<ArrayRef>>> {
        let mut by_call = Vec::with_capacity(stored);
        let mut at = 0;
        for (c, acc) in op.accs[..stored].iter().enumerate() {
            let width = own_partials(acc.partial_types(), self.viewed(c)).len();
            let own = columns.get(at..at + width).ok_or_else(|| {
                AggError::Snapshot(format!(
                    "state rows hold {} accumulator columns, fewer than Flink's layout needs",
                    columns.len()
                ))
            })?;
            by_call.push(own.to_vec());
            at += width;
        }
        let views = columns.get(at..).unwrap_or_default();
        if views.len() != self.views.len() {
            return Err(AggError::Snapshot(format!(
                "state rows hold {} DISTINCT view columns, Flink's layout {}",
                views.len(),
                self.views.len()
            )));
        }
        for (view, column) in self.views.iter().zip(views) {
            for (slot, &c) in view.calls.iter().enumerate() {
                by_call[c].push(view.layout.split(column, slot)?);
            }
        }
        Ok(by_call)
    }
}

/// `view`'s column of the entries changed since its logs were cleared.
fn changed_column(view: &FlinkView, op: &GroupAggOperator, groups: &[u32]) -> Result<ArrayRef> {
    let missing = || AggError::Plan("a DISTINCT view in Flink's layout keeps no log".into());
    let layout = &view.layout;
    let first = op.accs[view.calls[0]]
        .view_changes(groups)?
        .ok_or_else(missing)?;
    if first.calls == view.calls.len() {
        // One view shared by the calls: every call's count per entry.
        let words = layout.words();
        let mut values = vec![0i64; first.lengths.iter().sum::<usize>() * words];
        for (e, counts) in first.counts.chunks(first.calls.max(1)).enumerate() {
            let word = &mut values[e * words..(e + 1) * words];
            for (call, &count) in counts.iter().enumerate() {
                if layout.retracting {
                    word[call] = count;
                } else if count > 0 {
                    word[call / 64] |= 1i64 << (call % 64);
                }
            }
        }
        return layout.column(first.values, values, first.lengths);
    }
    // A view of its own per call: each call's list, joined.
    let mut lists = Vec::with_capacity(view.calls.len());
    for &c in &view.calls {
        let changes = op.accs[c].view_changes(groups)?.ok_or_else(missing)?;
        lists.push(counted_list(
            &layout.key_type,
            changes.values,
            changes.counts,
            changes.lengths,
        )?);
    }
    layout.join(&lists)
}
