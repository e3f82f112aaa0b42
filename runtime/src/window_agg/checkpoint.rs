//! Snapshot and restore of a window aggregate, one payload per Flink key
//! group of the group keys: per group and slice its accumulators, and per
//! group the windows still to fire (Flink's timers). A row is a group and
//! a namespace (slice or window end) with flags saying which of the two it
//! carries. The watermark is the Java operator's (Flink keeps it in union
//! operator state and restores the minimum).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, Int8Type};
use arrow_array::{new_null_array, ArrayRef, Int64Array, Int8Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use arrow_select::concat::concat;
use arrow_select::take::take;
use hashbrown::HashMap;

use super::{WindowAggOperator, WindowKind, WindowPlan};
use crate::accumulator::GroupAccumulator;
use crate::error::{AggError, Result};
use crate::flink_key::key_group_for_hash;
use crate::plan::{AggCall, AggPlan};
use crate::snapshot::{decode_key_group, encode_key_group, ColumnRole, SnapshotMeta};
use crate::types::Phase;

/// Flag: the row carries the slice's accumulators.
const HAS_STATE: i8 = 1;
/// Flag: the window ending at the namespace is pending for the group.
const HAS_TIMER: i8 = 2;

/// The snapshot schema (keys, namespace, flags, each accumulator's state
/// columns) and the metadata a restore checks: key types, windows and each
/// call's specialization identify the layout.
pub(super) fn state_layout(
    plan: &AggPlan,
    window: &WindowPlan,
    calls: &[AggCall],
    accs: &[Box<dyn GroupAccumulator>],
    specializations: &[String],
    key_fields: &[Field],
) -> (SchemaRef, SnapshotMeta) {
    let mut fields = key_fields.to_vec();
    let mut roles = vec![ColumnRole::Key; key_fields.len()];
    fields.push(Field::new("$namespace", DataType::Int64, false));
    fields.push(Field::new("$flags", DataType::Int8, false));
    roles.extend([ColumnRole::Operator, ColumnRole::Operator]);
    if window.kind == WindowKind::Session {
        // A session's start (its end is the namespace).
        fields.push(Field::new("$window_start", DataType::Int64, false));
        roles.push(ColumnRole::Operator);
    }
    for (c, acc) in accs.iter().enumerate() {
        for (j, t) in acc.state_types().into_iter().enumerate() {
            fields.push(Field::new(format!("state{c}_{j}"), t, true));
            roles.push(ColumnRole::State { call: c as u16 });
        }
    }
    let keys: Vec<String> = plan.key_types.iter().map(|t| t.to_string()).collect();
    let mut names = specializations.to_vec();
    names.extend(
        accs[specializations.len()..]
            .iter()
            .map(|a| a.name().to_string()),
    );
    let calls: Vec<String> = calls
        .iter()
        .zip(&names)
        .map(|(c, s)| {
            let args: Vec<String> = c.arg_types.iter().map(|t| t.to_string()).collect();
            format!("{s}({})", args.join(", "))
        })
        .collect();
    let meta = SnapshotMeta {
        plan_fingerprint: format!(
            "window[{:?} {} {} {} {}] keys[{}] calls[{}]",
            window.kind,
            window.size_ms,
            window.step_ms,
            window.offset_ms,
            window.gap_ms,
            keys.join(", "),
            calls.join("; ")
        ),
        max_parallelism: plan.max_parallelism,
        roles,
    };
    (Arc::new(Schema::new(fields)), meta)
}

impl WindowAggOperator {
    /// The state, one payload per key group (ascending). The local phase
    /// keeps none: flush it before a checkpoint, as Flink does.
    pub fn snapshot(&self) -> Result<Vec<(u16, Vec<u8>)>> {
        if self.plan.phase == Phase::Local {
            if self.slots.len() > 0 {
                return Err(AggError::Snapshot(
                    "the local window phase holds partials; flush before taking a snapshot".into(),
                ));
            }
            return Ok(Vec::new());
        }
        // (group, namespace) -> (slot, flags, session start)
        let mut rows: HashMap<(u32, i64), (Option<u32>, i8, i64)> = HashMap::new();
        for (g, s, slot) in self.slots.iter() {
            rows.insert((g, s), (Some(slot), HAS_STATE, 0));
        }
        for (g, end) in self.timers.iter() {
            rows.entry((g, end)).or_insert((None, 0, 0)).1 |= HAS_TIMER;
        }
        if self.spec.is_none() {
            // Sessions: one row each, named by its end (timers are rebuilt).
            rows.clear();
            for (g, session) in self.sessions.iter() {
                rows.insert(
                    (g, session.end),
                    (Some(session.slot), HAS_STATE | HAS_TIMER, session.start),
                );
            }
        }
        let hashes = self.table.key_hashes();
        let mut ordered: Vec<(u16, u32, i64, Option<u32>, i8, i64)> = rows
            .into_iter()
            .map(|((g, ns), (slot, flags, start))| {
                let kg = key_group_for_hash(hashes[g as usize], self.plan.max_parallelism);
                (kg, g, ns, slot, flags, start)
            })
            .collect();
        ordered.sort_unstable_by_key(|r| (r.0, r.1, r.2));
        let mut out = Vec::new();
        for chunk in ordered.chunk_by(|a, b| a.0 == b.0) {
            let groups: Vec<u32> = chunk.iter().map(|r| r.1).collect();
            let mut columns = self.table.keys(&groups)?;
            columns.push(Arc::new(Int64Array::from_iter_values(
                chunk.iter().map(|r| r.2),
            )));
            columns.push(Arc::new(Int8Array::from_iter_values(
                chunk.iter().map(|r| r.4),
            )));
            if self.spec.is_none() {
                columns.push(Arc::new(Int64Array::from_iter_values(
                    chunk.iter().map(|r| r.5),
                )));
            }
            // State rows first, then timer-only rows (NULL state), back in
            // chunk order.
            let with_state: Vec<u32> = chunk.iter().filter_map(|r| r.3).collect();
            let mut position = Vec::with_capacity(chunk.len());
            let (mut s, mut t) = (0u32, with_state.len() as u32);
            for r in chunk {
                if r.3.is_some() {
                    position.push(s);
                    s += 1;
                } else {
                    position.push(t);
                    t += 1;
                }
            }
            let order = arrow_array::UInt32Array::from(position);
            let timer_only = chunk.len() - with_state.len();
            for acc in &self.accs {
                for (state, t) in acc
                    .snapshot(&with_state)?
                    .into_iter()
                    .zip(acc.state_types())
                {
                    let nulls = new_null_array(&t, timer_only);
                    let all = concat(&[state.as_ref(), nulls.as_ref()])?;
                    columns.push(take(all.as_ref(), &order, None)?);
                }
            }
            let batch = RecordBatch::try_new(self.state_schema.clone(), columns)?;
            out.push((
                chunk[0].0,
                encode_key_group(&self.snapshot_meta, chunk[0].0, &batch)?,
            ));
        }
        Ok(out)
    }

    /// Restores the given key groups' payloads into this operator (the
    /// caller passes its subtask's key groups, so another parallelism
    /// works). Every payload is checked before anything is restored; a
    /// slice may not be restored twice.
    pub fn restore(&mut self, payloads: &[(u16, Vec<u8>)]) -> Result<()> {
        if self.plan.phase == Phase::Local {
            return if payloads.is_empty() {
                Ok(())
            } else {
                Err(AggError::Snapshot(
                    "the local window phase keeps no state".into(),
                ))
            };
        }
        let mut batches = Vec::with_capacity(payloads.len());
        for (kg, bytes) in payloads {
            let decoded = decode_key_group(bytes)?;
            decoded.check_matches(&self.snapshot_meta)?;
            if decoded.key_group != *kg {
                return Err(AggError::Snapshot(format!(
                    "payload labelled key group {kg} holds key group {}",
                    decoded.key_group
                )));
            }
            let batch = decoded.batch;
            let same = batch.num_columns() == self.state_schema.fields().len()
                && batch
                    .schema()
                    .fields()
                    .iter()
                    .zip(self.state_schema.fields())
                    .all(|(a, e)| a.data_type().equals_datatype(e.data_type()));
            if !same {
                return Err(AggError::Snapshot(format!(
                    "key group {kg}: the state columns do not match this plan's"
                )));
            }
            batches.push((*kg, batch));
        }
        let nkeys = self.plan.key_types.len();
        for (kg, batch) in &batches {
            let mut ids = Vec::new();
            self.table
                .intern(&batch.columns()[..nkeys], batch.num_rows(), &mut ids)
                .map_err(|e| AggError::Snapshot(format!("key group {kg}: {e}")))?;
            let hashes = self.table.key_hashes();
            if let Some(&g) = ids.iter().find(|&&g| {
                key_group_for_hash(hashes[g as usize], self.plan.max_parallelism) != *kg
            }) {
                return Err(AggError::Snapshot(format!(
                    "key group {kg}: group {g} belongs to another key group at max parallelism {}",
                    self.plan.max_parallelism
                )));
            }
            let namespaces = batch.column(nkeys).as_primitive::<Int64Type>();
            let flags = batch.column(nkeys + 1).as_primitive::<Int8Type>();
            let sessions = self.spec.is_none();
            let mut rows = Vec::new();
            let mut slots = Vec::new();
            for (i, &g) in ids.iter().enumerate() {
                let ns = namespaces.value(i);
                if sessions {
                    let starts = batch.column(nkeys + 2).as_primitive::<Int64Type>();
                    slots.push(self.restore_session(g, starts.value(i), ns)?);
                    rows.push(i as u32);
                    continue;
                }
                if flags.value(i) & HAS_TIMER != 0 && self.timers.register(g, ns) {
                    self.refs.add(g);
                }
                if flags.value(i) & HAS_STATE != 0 {
                    let (slot, fresh) = self.slots.get_or_insert(g, ns);
                    self.refs.add(g);
                    if !fresh {
                        return Err(AggError::Snapshot(format!(
                            "key group {kg}: slice {ns} of a group is restored twice"
                        )));
                    }
                    rows.push(i as u32);
                    slots.push(slot);
                }
            }
            let capacity = self.slots.capacity();
            let rows = arrow_array::UInt32Array::from(rows);
            let mut col = nkeys + 2 + usize::from(sessions);
            for acc in &mut self.accs {
                acc.resize(capacity);
                let width = acc.state_types().len();
                let state: Vec<ArrayRef> = batch.columns()[col..col + width]
                    .iter()
                    .map(|c| take(c.as_ref(), &rows, None))
                    .collect::<std::result::Result<_, _>>()?;
                acc.restore(&state, &slots)?;
                col += width;
            }
        }
        self.budget.set_used(self.memory_bytes());
        Ok(())
    }
}
