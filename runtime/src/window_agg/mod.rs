//! Window aggregates over Flink's window table functions (TUMBLE, HOP,
//! CUMULATE), event time, in Flink's slicing model
//! (`docs/window-aggregates.md`): Flink's WindowAggOperator with its
//! slicing processors (single and global phase) and
//! LocalSlicingWindowAggOperator (local phase).
//!
//! A window is a group key plus a slice, as in Flink (key and namespace):
//! the group table interns the group keys, [`slots::SliceSlots`] maps
//! `(group, slice end)` to an accumulator slot, and [`slots::Timers`]
//! stands in for Flink's event-time timers. Rows fold into their slice as
//! they arrive; [`WindowAggOperator::advance`] moves the watermark and
//! [`WindowAggOperator::flush`] fires every window it passed, in end order
//! (`fire`), emitting `+I` rows: group keys, one value per call, then the
//! plan's window columns. The local phase instead emits, at every flush,
//! one partial row per group and slice: keys, partials in Flink's
//! accumulator layout, `$slice_end`.
//!
//! Every public method either succeeds or leaves the state as it was.

mod checkpoint;
mod fire;
mod plan;
mod session;
mod slots;

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMillisecondType};
use arrow_array::{Array, BooleanArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use arrow_select::filter::filter_record_batch;

use crate::accumulator::GroupAccumulator;
use crate::error::{AggError, Result};
use crate::group_table::GroupTable;
use crate::memory::MemoryBudget;
use crate::operator::input::{self, Input};
use crate::operator::views::{self, ViewLayout};
use crate::operator::{call_admissions, check_input_widths, count_star, create_accumulators};
use crate::plan::{admit, arrow_type, AggCall, AggPlan};
use crate::snapshot::SnapshotMeta;
use crate::time_zone::shift_all;
use crate::types::{Phase, ROW_KIND_COLUMN};
use crate::window::WindowSpec;

pub use plan::{WindowKind, WindowPlan, WindowProperty};
use session::Sessions;
use slots::{GroupRefs, SliceSlots, Timers};

/// Name of the local phase's slice column (Flink's `$slice_end`).
pub const SLICE_END_COLUMN: &str = "$slice_end";

/// Flink's message for a NULL time attribute.
const NULL_ROWTIME: &str =
    "RowTime field should not be null, please convert it to a non-null long value.";

/// The Arrow type of the window columns: TIMESTAMP(3).
fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Millisecond, None)
}

/// One window-aggregate operator instance (one Flink subtask).
#[derive(Debug)]
pub struct WindowAggOperator {
    plan: AggPlan,
    window: WindowPlan,
    /// The slicing of TUMBLE, HOP and CUMULATE windows; `None` for
    /// SESSION windows, which live in `sessions`.
    spec: Option<WindowSpec>,
    /// SESSION windows: each group's sessions.
    sessions: Sessions,
    /// The plan's calls, then the record-counting COUNT(*) Flink inserts
    /// when it counts records and the query has none.
    calls: Vec<AggCall>,
    /// Calls whose results are output (the plan's).
    visible: usize,
    /// The call whose count decides whether a window is emitted.
    counter: Option<usize>,
    specializations: Vec<String>,
    table: GroupTable,
    slots: SliceSlots,
    timers: Timers,
    /// By group: its slices with state plus its pending windows.
    refs: GroupRefs,
    /// Indexed by slot.
    accs: Vec<Box<dyn GroupAccumulator>>,
    /// The progress: the last advancing watermark (event time) or the
    /// processing time of the last timer (processing time).
    watermark: i64,
    /// Processing-time windows: the processing time of the rows the next
    /// `process` takes (`set_time`).
    now: i64,
    /// Rows (partial rows in the global phase) dropped as late.
    late_dropped: u64,
    /// Local phase: the earliest slice end the partials hold.
    min_slice: Option<i64>,
    /// Local phase: the last watermark the flush gate took, and the next
    /// one that opens it (`local_gate`).
    local_watermark: i64,
    next_trigger: i64,
    budget: MemoryBudget,
    key_arrow: Vec<DataType>,
    input_arrow: Vec<Vec<DataType>>,
    /// The layouts of the plan's DISTINCT views (two-phase partials).
    views: Vec<ViewLayout>,
    /// By call: whether its DISTINCT view travels in a view column.
    in_view: Vec<bool>,
    schema: SchemaRef,
    state_schema: SchemaRef,
    snapshot_meta: SnapshotMeta,
}

impl WindowAggOperator {
    /// An operator for an admitted window plan, with an empty state and
    /// no watermark yet.
    pub fn new(plan: AggPlan) -> Result<Self> {
        plan.validate()?;
        let window = plan.window.clone().ok_or_else(|| {
            AggError::Plan("a window aggregate's plan needs its windows (window)".into())
        })?;
        let spec = window.spec()?;
        let admitted = admit(&plan).map_err(|e| AggError::Plan(e.reason))?;
        let visible = plan.calls.len();
        let mut calls = plan.calls.clone();
        let counter = if window.counts_records(&plan) {
            Some(plan.record_counter().unwrap_or_else(|| {
                let args = match plan.phase {
                    Phase::Global => plan.count_star_column.into_iter().collect(),
                    _ => Vec::new(),
                };
                calls.push(count_star(args));
                calls.len() - 1
            }))
        } else {
            None
        };
        if plan.phase == Phase::Global && calls[visible..].iter().any(|c| c.args.is_empty()) {
            return Err(AggError::Plan(
                "a global window phase that counts records needs count_star_column, the \
                 COUNT(*) partial Flink inserts"
                    .into(),
            ));
        }
        let admissions = call_admissions(&plan, &admitted, &calls)?;
        let accs = create_accumulators(&plan, &admissions, &calls)?;
        let key_arrow: Vec<DataType> = plan.key_types.iter().map(arrow_type).collect();
        let (views, in_view) = views::layouts(&plan, calls.len())?;
        let input_arrow: Vec<Vec<DataType>> = match plan.phase {
            Phase::Global => accs
                .iter()
                .zip(&in_view)
                .map(|(a, &viewed)| views::own_partials(a.partial_types(), viewed))
                .collect(),
            _ => calls
                .iter()
                .map(|c| c.arg_types.iter().map(arrow_type).collect())
                .collect(),
        };
        check_input_widths(&calls, &input_arrow)?;
        let key_fields: Vec<Field> = key_arrow
            .iter()
            .enumerate()
            .map(|(i, t)| Field::new(format!("key{i}"), t.clone(), true))
            .collect();
        let (state_schema, snapshot_meta) = checkpoint::state_layout(
            &plan,
            &window,
            &calls,
            &accs,
            &admitted.specializations,
            &key_fields,
        );
        let mut fields = key_fields;
        for (c, acc) in accs.iter().enumerate() {
            if plan.phase == Phase::Local {
                let own = views::own_partials(acc.partial_types(), in_view[c]);
                for (j, t) in own.into_iter().enumerate() {
                    fields.push(Field::new(format!("agg{c}_{j}"), t, true));
                }
            } else if c < visible {
                fields.push(Field::new(format!("agg{c}"), acc.result_type(), true));
            }
        }
        if plan.phase == Phase::Local {
            for (v, layout) in views.iter().enumerate() {
                fields.push(Field::new(format!("view{v}"), layout.data_type(), true));
            }
            fields.push(Field::new(SLICE_END_COLUMN, DataType::Int64, false));
        }
        for p in &window.properties {
            let (name, nullable) = match p {
                WindowProperty::WindowStart => ("window_start", false),
                WindowProperty::WindowEnd => ("window_end", false),
                WindowProperty::WindowTime => ("window_time", false),
                WindowProperty::ProcessingTime => ("window_time", true),
            };
            fields.push(Field::new(name, timestamp_type(), nullable));
        }
        fields.push(Field::new(ROW_KIND_COLUMN, DataType::Int8, false));
        Ok(WindowAggOperator {
            table: GroupTable::new(&plan.key_types)?,
            slots: SliceSlots::default(),
            sessions: Sessions::default(),
            timers: Timers::default(),
            refs: GroupRefs::default(),
            budget: MemoryBudget::new(plan.memory_budget_bytes),
            specializations: admitted.specializations,
            accs,
            watermark: i64::MIN,
            now: i64::MIN,
            late_dropped: 0,
            min_slice: None,
            local_watermark: i64::MIN,
            next_trigger: i64::MIN,
            key_arrow,
            input_arrow,
            views,
            in_view,
            schema: Arc::new(Schema::new(fields)),
            state_schema,
            snapshot_meta,
            spec,
            window,
            plan,
            calls,
            visible,
            counter,
        })
    }

    /// The plan the operator runs.
    pub fn plan(&self) -> &AggPlan {
        &self.plan
    }

    /// The specialization chosen for each call.
    pub fn specializations(&self) -> &[String] {
        &self.specializations
    }

    /// Schema of the batches [`flush`](Self::flush) returns.
    pub fn output_schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The event-time progress: the last watermark [`advance`](Self::advance)
    /// took (`i64::MIN` before the first).
    pub fn watermark(&self) -> i64 {
        self.watermark
    }

    /// Processing-time windows: the processing time (epoch ms) the rows of
    /// the next [`process`](Self::process) arrived at. Event-time windows
    /// ignore it.
    pub fn set_time(&mut self, now_ms: i64) {
        self.now = now_ms;
    }

    /// The instant the earliest pending window fires at (its local end - 1),
    /// if any window is pending: when a processing-time operator next needs
    /// to [`advance`](Self::advance). It can be early (a session that grew
    /// since), never late.
    pub fn next_fire_time(&self) -> Option<i64> {
        let earliest = match (self.plan.phase, self.spec) {
            (Phase::Local, _) => return None,
            (_, None) => self.sessions.first_timer(),
            _ => self.timers.first_end(),
        };
        earliest
            .filter(|&end| end != i64::MAX)
            .map(|end| self.window.trigger_time(end))
    }

    /// Rows dropped as late so far (Flink's `numLateRecordsDropped`).
    pub fn late_dropped(&self) -> u64 {
        self.late_dropped
    }

    /// Groups interned, slices (sessions) with state and windows pending.
    pub fn sizes(&self) -> (usize, usize, usize) {
        match self.spec {
            Some(_) => (self.table.len(), self.slots.len(), self.timers.len()),
            None => (self.table.len(), self.sessions.len(), self.sessions.len()),
        }
    }

    /// Bytes of state held, measured.
    pub fn memory_bytes(&self) -> usize {
        self.table.memory_bytes()
            + self.slots.memory_bytes()
            + self.timers.memory_bytes()
            + self.sessions.memory_bytes()
            + self.accs.iter().map(|a| a.memory_bytes()).sum::<usize>()
    }

    /// The memory budget's account.
    pub fn budget(&self) -> &MemoryBudget {
        &self.budget
    }

    /// Moves the event-time progress to `watermark` (a watermark that does
    /// not advance changes nothing). Windows it passed fire at the next
    /// [`flush`](Self::flush); rows processed after it are late against it.
    /// Returns whether a flush has anything to do now: a window is due
    /// (single and global phase), or a slice the partials hold could fire
    /// downstream (local phase, Flink's buffer flush rule).
    pub fn advance(&mut self, watermark: i64) -> bool {
        if watermark > self.watermark {
            self.watermark = watermark;
        }
        let earliest = match (self.plan.phase, self.spec) {
            // A local phase always slices: SESSION plans are single-phase
            // (WindowPlan::validate).
            (Phase::Local, Some(spec)) => return self.local_gate(spec, watermark),
            (_, None) => self.sessions.first_timer(),
            _ => self.timers.first_end(),
        };
        earliest.is_some_and(|end| self.window.is_fired(end, self.watermark))
    }

    /// [`advance`](Self::advance) when the local phase's flush gate stays
    /// shut at `watermark` whatever rows are pending (Flink's gate is
    /// aligned and `watermark` is below the next trigger watermark): then
    /// the progress moves and true is returned, and rows received before
    /// the watermark may be processed after it (the local phase judges no
    /// row late). Otherwise nothing changes (false): the pending rows go
    /// first, then `advance`.
    pub fn advance_if_gate_shut(&mut self, watermark: i64) -> bool {
        let shut = match (self.plan.phase, self.spec) {
            (Phase::Local, Some(spec)) => self.gate_shut(spec, watermark),
            _ => false,
        };
        if shut {
            let due = self.advance(watermark);
            debug_assert!(!due, "a shut gate flushes nothing");
        }
        shut
    }

    /// The local phase's flush rule, Flink's LocalSlicingWindowAggOperator:
    /// the buffer is looked at only when a rising watermark reaches the
    /// next trigger watermark, and flushed then if its earliest slice has
    /// fired. So late rows wait for the next slice boundary, as in Flink,
    /// where the split of a slice's partials is observable (LISTAGG's
    /// separator, the order of a DOUBLE sum). Where Flink's gate is not
    /// aligned to the slices (`flush_gate_is_aligned`), and before the
    /// first watermark (Flink starts at 0 and so drops pre-1970 partials),
    /// the rule is eager instead: flush once the earliest slice fires.
    fn local_gate(&mut self, spec: WindowSpec, watermark: i64) -> bool {
        if self.gate_shut(spec, watermark) {
            self.local_watermark = self.local_watermark.max(watermark);
            return false;
        }
        if self.window.flush_gate_is_aligned(spec.slice_size()) {
            self.local_watermark = watermark;
            self.next_trigger = self
                .window
                .next_trigger_watermark(watermark, spec.slice_size());
        }
        self.min_slice
            .is_some_and(|end| self.window.is_fired(end, watermark))
    }

    /// Whether Flink's local flush gate stays shut at `watermark` whatever
    /// the buffer holds: the gate is aligned to the slices, and the
    /// watermark does not rise or stays below the next trigger watermark.
    fn gate_shut(&self, spec: WindowSpec, watermark: i64) -> bool {
        self.window.flush_gate_is_aligned(spec.slice_size())
            && (watermark <= self.local_watermark || watermark < self.next_trigger)
    }

    /// Folds one input batch into its slices. Single and global phase: a
    /// row (partial row) whose slice has fired is late; it is dropped when
    /// its slice's last window has fired too, and otherwise folds into the
    /// slice its unfired windows read (HOP: its own; CUMULATE: the period's
    /// first). Nothing is emitted until [`flush`](Self::flush).
    pub fn process(&mut self, batch: &RecordBatch) -> Result<()> {
        let Some(spec) = self.spec else {
            return self.process_sessions(batch);
        };
        let slices = self.slices_of(spec, batch)?;
        let (batch, slices) = self.drop_late(spec, batch, slices)?;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let input = self.read(&batch)?;
        let groups_before = self.table.len();
        let mut ids = Vec::with_capacity(batch.num_rows());
        self.table.intern(&input.keys, input.num_rows, &mut ids)?;
        let mut row_slots = Vec::with_capacity(ids.len());
        let mut fresh = Vec::new();
        let mut timers = Vec::new();
        for (&g, &(slice, late)) in ids.iter().zip(&slices) {
            let target = fold_target(spec, slice, late);
            let (slot, created) = self.slots.get_or_insert(g, target);
            if created {
                self.refs.add(g);
                fresh.push(slot);
            }
            row_slots.push(slot);
            if self.plan.phase == Phase::Local {
                self.min_slice = Some(self.min_slice.map_or(target, |m| m.min(target)));
            } else if created || late {
                // An unfired slice's window is pending from its slot's first
                // row on, so only a new slot or a late row needs a timer
                // (one hash probe per slot, not per row).
                timers.push((g, self.first_unfired(spec, slice)));
            }
        }
        if let Err(e) = self.reserve(fresh.len(), &input) {
            for &slot in fresh.iter().rev() {
                if let Some(g) = self.slots.release(slot) {
                    self.refs.drop(g);
                }
            }
            self.table.truncate(groups_before);
            return Err(e);
        }
        for (g, end) in timers {
            if self.timers.register(g, end) {
                self.refs.add(g);
            }
        }
        let capacity = self.slots.capacity();
        for acc in &mut self.accs {
            acc.resize(capacity);
        }
        self.fold(&input, &row_slots)
    }

    /// Each row's time: single and local phase its rowtime in local time
    /// (shifted to the plan's zone, if any) or, for attached windows, its
    /// window's end; global phase its `$slice_end`. A NULL rowtime is
    /// Flink's error.
    fn times<'a>(&self, batch: &'a RecordBatch) -> Result<Cow<'a, [i64]>> {
        if self.window.processing_time {
            let now = self
                .window
                .zone
                .as_ref()
                .map_or(self.now, |z| z.to_local(self.now));
            return Ok(Cow::Owned(vec![now; batch.num_rows()]));
        }
        let index = self.window.time_column;
        if index >= batch.num_columns() {
            return Err(AggError::Input(format!(
                "the window's time column is {index} but the batch has only {} columns",
                batch.num_columns()
            )));
        }
        let column = batch.column(index);
        if column.null_count() > 0 {
            return Err(AggError::Input(NULL_ROWTIME.into()));
        }
        match (self.plan.phase, column.data_type()) {
            (Phase::Global, DataType::Int64) => {
                Ok(Cow::Borrowed(column.as_primitive::<Int64Type>().values()))
            }
            (Phase::Single | Phase::Local, DataType::Timestamp(TimeUnit::Millisecond, _)) => {
                let times = column.as_primitive::<TimestampMillisecondType>().values();
                // An attached window's end is a local time already.
                let zone = self.window.zone.as_ref().filter(|_| !self.window.attached);
                Ok(shift_all(zone, times))
            }
            (_, other) => Err(AggError::Input(format!(
                "the window's time column {index} has type {other}, expected {}",
                if self.plan.phase == Phase::Global {
                    "Int64 ($slice_end)".to_string()
                } else {
                    timestamp_type().to_string()
                }
            ))),
        }
    }

    /// Each row's slice end, and whether it arrived after its slice fired.
    fn slices_of(&self, spec: WindowSpec, batch: &RecordBatch) -> Result<Vec<(i64, bool)>> {
        let local = self.plan.phase == Phase::Local;
        let late = |slice: i64| !local && self.window.is_late(slice, self.watermark);
        let times = self.times(batch)?;
        Ok(match self.plan.phase {
            Phase::Global => times.iter().map(|&s| (s, late(s))).collect(),
            _ => times
                .iter()
                .map(|&ts| {
                    let s = spec.slice_end(ts);
                    (s, late(s))
                })
                .collect(),
        })
    }

    /// Drops the late rows whose every window has fired (counted).
    fn drop_late(
        &mut self,
        spec: WindowSpec,
        batch: &RecordBatch,
        slices: Vec<(i64, bool)>,
    ) -> Result<(RecordBatch, Vec<(i64, bool)>)> {
        let watermark = self.watermark;
        let keep: Vec<bool> = slices
            .iter()
            .map(|&(s, late)| !late || !self.window.is_fired(spec.last_window_end(s), watermark))
            .collect();
        let dropped = keep.iter().filter(|&&k| !k).count();
        if dropped == 0 {
            return Ok((batch.clone(), slices));
        }
        // The input is checked before anything is counted.
        let kept = filter_record_batch(batch, &BooleanArray::from(keep.clone()))?;
        self.read(&kept)?;
        self.late_dropped += dropped as u64;
        let slices = slices
            .into_iter()
            .zip(keep)
            .filter_map(|(s, k)| k.then_some(s))
            .collect();
        Ok((kept, slices))
    }

    /// The first window of slice `slice` that has not fired: the window a
    /// row of the slice needs a timer for. A processing-time row's slice is
    /// its first window even when the clock reached it (Flink registers
    /// its timer, which fires at once).
    fn first_unfired(&self, spec: WindowSpec, slice: i64) -> i64 {
        if self.window.processing_time {
            return slice;
        }
        let step = spec.slice_size();
        let mut end = slice;
        while self.window.is_fired(end, self.watermark) {
            end = end.wrapping_add(step);
        }
        end
    }

    fn read<'a>(&self, batch: &'a RecordBatch) -> Result<Input<'a>> {
        let args: Vec<Vec<usize>> = self.calls.iter().map(|c| c.args.clone()).collect();
        let filters: Vec<Option<usize>> = self.calls.iter().map(|c| c.filter).collect();
        let mut input = input::read(
            batch,
            &self.plan.key_columns,
            &self.key_arrow,
            (&args, &filters),
            &self.input_arrow,
            self.plan.input,
        )?;
        if self.plan.phase == Phase::Global {
            // Each DISTINCT call's list, from its view's column.
            views::split_input(&self.plan, &self.views, batch, &mut input)?;
        }
        Ok(input)
    }

    /// Reserves the bytes `new_slots` slots and the batch's values take.
    fn reserve(&mut self, new_slots: usize, input: &Input<'_>) -> Result<()> {
        let per_slot: usize = self.accs.iter().map(|a| a.bytes_per_group()).sum::<usize>() + 40;
        let per_row: usize = self.accs.iter().map(|a| a.bytes_per_input_row()).sum();
        let var: usize = input
            .args
            .iter()
            .flatten()
            .filter(|c| matches!(c.data_type(), DataType::Utf8 | DataType::Binary))
            .map(|c| c.get_buffer_memory_size())
            .sum();
        let bytes = new_slots * per_slot + input.num_rows * per_row + var;
        if self.budget.try_reserve(bytes).is_ok() {
            return Ok(());
        }
        self.budget.set_used(self.memory_bytes());
        self.budget.try_reserve(bytes)
    }

    /// Folds the rows (single and local phase) or merges the partial rows
    /// (global phase) into their slots.
    fn fold(&mut self, input: &Input<'_>, slots: &[u32]) -> Result<()> {
        if self.plan.phase == Phase::Global {
            for (acc, partials) in self.accs.iter_mut().zip(&input.args) {
                acc.merge(partials, slots)?;
            }
            return Ok(());
        }
        let rows: Vec<Option<BooleanArray>> = input
            .filters
            .iter()
            .map(|f| input::call_rows(f.as_ref(), None))
            .collect();
        for (acc, update) in self
            .accs
            .iter_mut()
            .zip(input::updates(input, &rows, slots))
        {
            acc.update(&update)?;
        }
        Ok(())
    }

    /// Single and global phase: fires every window the watermark passed,
    /// in end order, and returns their rows. Local phase: emits every
    /// slice's partials and starts empty.
    pub fn flush(&mut self) -> Result<Option<RecordBatch>> {
        match self.plan.phase {
            Phase::Local => self.flush_local(),
            _ => self.fire_due(),
        }
    }
}

impl WindowAggOperator {
    /// Rebuilds the group table without the groups that have no state and
    /// no pending window, once they are most of it: groups come and go with
    /// their windows, and the table would otherwise only grow.
    fn compact_if_sparse(&mut self) -> Result<()> {
        let total = self.table.len();
        if total < 1024 || self.refs.live() * 2 > total {
            return Ok(());
        }
        let live: Vec<u32> = (0..total as u32).filter(|&g| self.refs.has(g)).collect();
        let keys = self.table.keys(&live)?;
        let mut table = GroupTable::new(&self.plan.key_types)?;
        let mut ids = Vec::with_capacity(live.len());
        table.intern(&keys, live.len(), &mut ids)?;
        let mut renamed = vec![u32::MAX; total];
        for (&old, &new) in live.iter().zip(&ids) {
            renamed[old as usize] = new;
        }
        self.slots.rename_groups(&renamed);
        self.sessions.rename_groups(&renamed);
        self.timers.rename_groups(&renamed);
        self.refs = self.refs.renamed(&live, &ids);
        self.table = table;
        Ok(())
    }

    /// A lower bound of the budget one batch of `rows` rows needs when
    /// every row starts a new slice: each slot's accumulators and index
    /// entry (the operator reserves about this much per new slice).
    pub fn min_budget_bytes(&self, rows: usize) -> usize {
        let per_slot: usize = self.accs.iter().map(|a| a.bytes_per_group()).sum::<usize>() + 40;
        rows * per_slot
    }
}

/// The slice a row of slice `slice` folds into: its own, or for a late
/// CUMULATE row the period's first (its running accumulator).
fn fold_target(spec: WindowSpec, slice: i64, late: bool) -> i64 {
    match spec {
        WindowSpec::Cumulate { .. } if late => spec.slices_of(slice)[0],
        _ => slice,
    }
}
