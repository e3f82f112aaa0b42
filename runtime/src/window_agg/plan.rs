//! What a window aggregate's plan says about its windows: the window table
//! function, the column that places each row in time, and the window
//! columns the output carries.

use serde::{Deserialize, Serialize};

use crate::error::{AggError, Result};
use crate::plan::AggPlan;
use crate::types::{InputMode, Phase};
use crate::window::WindowSpec;

/// A window column of the output (Flink's named window properties), in the
/// order the plan lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowProperty {
    /// `window_start`, TIMESTAMP(3).
    WindowStart,
    /// `window_end`, TIMESTAMP(3).
    WindowEnd,
    /// `window_time` of an event-time window: `window_end - 1`.
    WindowTime,
}

/// The window table function of a window aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowKind {
    /// `TUMBLE`: `size_ms` (and `offset_ms`).
    Tumble,
    /// `HOP`: `size_ms` every `step_ms`.
    Hop,
    /// `CUMULATE`: growing by `step_ms` up to `size_ms`.
    Cumulate,
}

/// The windows of a window aggregate (`AggPlan::window`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowPlan {
    /// The window table function.
    pub kind: WindowKind,
    /// TUMBLE and HOP: the window size; CUMULATE: the maximum size (ms).
    pub size_ms: i64,
    /// HOP: the slide; CUMULATE: the step (ms); ignored for TUMBLE.
    #[serde(default)]
    pub step_ms: i64,
    /// The window offset (ms).
    #[serde(default)]
    pub offset_ms: i64,
    /// Single and local phase: the input column of the rowtime attribute
    /// (TIMESTAMP(3), epoch ms); global phase: the BIGINT `$slice_end`
    /// column of the local phase's partials.
    pub time_column: usize,
    /// The window columns of the output, after the calls' results (single
    /// and global phase; the local phase emits `$slice_end` instead).
    #[serde(default)]
    pub properties: Vec<WindowProperty>,
}

impl WindowPlan {
    /// The slice and window arithmetic of these windows.
    pub fn spec(&self) -> Result<WindowSpec> {
        match self.kind {
            WindowKind::Tumble => WindowSpec::tumble(self.size_ms, self.offset_ms),
            WindowKind::Hop => WindowSpec::hop(self.size_ms, self.step_ms, self.offset_ms),
            WindowKind::Cumulate => {
                WindowSpec::cumulate(self.size_ms, self.step_ms, self.offset_ms)
            }
        }
    }

    /// Whether Flink counts each window's rows with a COUNT(*) (found or
    /// inserted) and suppresses a window whose count is 0: always for HOP,
    /// and for any window over retracting input.
    pub fn counts_records(&self, plan: &AggPlan) -> bool {
        self.kind == WindowKind::Hop || plan.input == InputMode::Retracting
    }

    /// Checks the windows against the rest of the plan.
    pub(crate) fn validate(&self, plan: &AggPlan) -> Result<()> {
        self.spec()?;
        if plan.final_key.is_some() {
            return Err(AggError::Plan(
                "a window aggregate cannot be an incremental aggregate (final_key)".into(),
            ));
        }
        if let Some(c) = plan.calls.iter().position(|c| c.distinct) {
            return Err(AggError::Plan(format!(
                "call {c} ({} DISTINCT): DISTINCT in window aggregates is not supported yet",
                plan.calls[c].function
            )));
        }
        if plan.phase == Phase::Local && !self.properties.is_empty() {
            return Err(AggError::Plan(
                "the local phase of a window aggregate emits $slice_end, not window columns".into(),
            ));
        }
        let mut seen = Vec::new();
        for p in &self.properties {
            if seen.contains(p) {
                return Err(AggError::Plan(format!(
                    "window property {p:?} is listed twice"
                )));
            }
            seen.push(*p);
        }
        Ok(())
    }
}
