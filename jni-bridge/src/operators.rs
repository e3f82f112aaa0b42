//! The native operators a handle can name: a GROUP BY aggregate or a
//! window aggregate, chosen by the plan (`window` set or not), behind the
//! one set of calls the Java operator makes.

use aggforge_runtime::error::{AggError, Result};
use aggforge_runtime::operator::{GroupAggOperator, OperatorStats};
use aggforge_runtime::plan::AggPlan;
use aggforge_runtime::window_agg::WindowAggOperator;
use arrow_array::RecordBatch;

/// One open native operator.
#[derive(Debug)]
pub enum NativeOperator {
    /// A GROUP BY aggregate (single, local or global phase). Both kinds
    /// are boxed: the registry moves handles, not kilobytes.
    Group(Box<GroupAggOperator>),
    /// A window aggregate (single, local or global phase).
    Window(Box<WindowAggOperator>),
}

impl NativeOperator {
    /// The operator the plan describes.
    pub fn new(plan: AggPlan) -> Result<Self> {
        Ok(match plan.window {
            Some(_) => NativeOperator::Window(Box::new(WindowAggOperator::new(plan)?)),
            None => NativeOperator::Group(Box::new(GroupAggOperator::new(plan)?)),
        })
    }

    /// The least budget that holds one batch of `rows` rows.
    pub fn min_budget_bytes(&self, rows: usize) -> usize {
        match self {
            NativeOperator::Group(op) => op.min_budget_bytes(rows),
            NativeOperator::Window(op) => op.min_budget_bytes(rows),
        }
    }

    /// Takes a batch; returns what immediate mode emits now.
    pub fn process(&mut self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        match self {
            NativeOperator::Group(op) => op.process(batch),
            NativeOperator::Window(op) => op.process(batch).map(|_| None),
        }
    }

    /// Finishes the bundle, or fires the windows the watermark passed.
    pub fn flush(&mut self) -> Result<Option<RecordBatch>> {
        match self {
            NativeOperator::Group(op) => op.flush(),
            NativeOperator::Window(op) => op.flush(),
        }
    }

    /// Moves a window aggregate's event time; returns whether a flush has
    /// windows to fire or partials to emit. A GROUP BY aggregate has no
    /// event time (false).
    pub fn advance(&mut self, watermark: i64) -> bool {
        match self {
            NativeOperator::Window(op) => op.advance(watermark),
            NativeOperator::Group(_) => false,
        }
    }

    /// A window aggregate's local phase moves its event time if its flush
    /// gate stays shut whatever rows are pending (see
    /// `WindowAggOperator::advance_if_gate_shut`); false for every other
    /// operator, and nothing changes then.
    pub fn advance_if_gate_shut(&mut self, watermark: i64) -> bool {
        match self {
            NativeOperator::Window(op) => op.advance_if_gate_shut(watermark),
            NativeOperator::Group(_) => false,
        }
    }

    /// The state, one payload per key group.
    pub fn snapshot(&self) -> Result<Vec<(u16, Vec<u8>)>> {
        match self {
            NativeOperator::Group(op) => op.snapshot(),
            NativeOperator::Window(op) => op.snapshot(),
        }
    }

    /// Restores key-group payloads.
    pub fn restore(&mut self, payloads: &[(u16, Vec<u8>)]) -> Result<()> {
        match self {
            NativeOperator::Group(op) => op.restore(payloads),
            NativeOperator::Window(op) => op.restore(payloads),
        }
    }

    /// Sets the processing time: what state TTL is judged by (GROUP BY),
    /// the time of the next rows (processing-time windows).
    pub fn set_time(&mut self, now_ms: i64) -> Result<()> {
        match self {
            NativeOperator::Group(op) => op.set_time(now_ms),
            NativeOperator::Window(op) => {
                op.set_time(now_ms);
                Ok(())
            }
        }
    }

    /// When a window aggregate's earliest pending window fires (`i64::MAX`:
    /// none, or a GROUP BY aggregate).
    pub fn next_fire_time(&self) -> i64 {
        match self {
            NativeOperator::Window(op) => op.next_fire_time().unwrap_or(i64::MAX),
            NativeOperator::Group(_) => i64::MAX,
        }
    }

    /// Whether the fixed-width calls run in one JIT-compiled loop:
    /// `fused N of M calls (...)`, or `static: <reason>`.
    pub fn jit_status(&self) -> String {
        match self {
            NativeOperator::Group(op) => op.jit_status().to_string(),
            NativeOperator::Window(_) => "static: window aggregates fold per window".into(),
        }
    }

    /// Flink's message when a function failed the query.
    pub fn failure(&self) -> Option<&'static str> {
        match self {
            NativeOperator::Group(op) => op.failure(),
            NativeOperator::Window(_) => None,
        }
    }

    /// Bytes held, measured.
    pub fn memory_used(&self) -> usize {
        match self {
            NativeOperator::Group(op) => op.memory_used(),
            NativeOperator::Window(op) => op.memory_bytes(),
        }
    }

    /// Groups (windows: slices with state), bytes held and the budget.
    pub fn stats(&self) -> OperatorStats {
        match self {
            NativeOperator::Group(op) => op.stats(),
            NativeOperator::Window(op) => OperatorStats {
                memory_used: op.memory_bytes(),
                memory_budget: op.budget().limit(),
                groups: op.sizes().1,
            },
        }
    }

    /// The GROUP BY aggregate, for calls window aggregates do not take
    /// (state in Flink's layout, see `aggforge_runtime::operator`).
    pub fn group(&mut self, what: &str) -> Result<&mut GroupAggOperator> {
        match self {
            NativeOperator::Group(op) => Ok(op),
            NativeOperator::Window(_) => Err(AggError::Unsupported(format!(
                "{what}: window aggregates keep their state in aggforge's snapshot format"
            ))),
        }
    }

    /// Rows a window aggregate dropped as late (0 for GROUP BY).
    pub fn late_dropped(&self) -> u64 {
        match self {
            NativeOperator::Group(_) => 0,
            NativeOperator::Window(op) => op.late_dropped(),
        }
    }
}
