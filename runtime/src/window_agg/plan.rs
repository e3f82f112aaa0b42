//! What a window aggregate's plan says about its windows: the window table
//! function, the column that places each row in time, and the window
//! columns the output carries.

use serde::{Deserialize, Serialize};

use crate::error::{AggError, Result};
use crate::plan::AggPlan;
use crate::time_zone::ZoneRules;
use crate::types::{InputMode, Phase};
use crate::window::{window_start_with_offset, WindowSpec};

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
    /// `window_time` of a processing-time window: NULL here, as in Flink's
    /// window operator (a later projection materializes the processing
    /// time).
    #[serde(rename = "proctime")]
    ProcessingTime,
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
    /// `SESSION`: per group key, rows closer than `gap_ms` merge into one
    /// window (single phase only; Flink never splits it in two).
    Session,
}

/// The windows of a window aggregate (`AggPlan::window`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowPlan {
    /// The window table function.
    pub kind: WindowKind,
    /// TUMBLE and HOP: the window size; CUMULATE: the maximum size (ms);
    /// ignored for SESSION.
    #[serde(default)]
    pub size_ms: i64,
    /// HOP: the slide; CUMULATE: the step (ms); ignored for TUMBLE.
    #[serde(default)]
    pub step_ms: i64,
    /// The window offset (ms).
    #[serde(default)]
    pub offset_ms: i64,
    /// SESSION: the gap that closes a session (ms); ignored otherwise.
    #[serde(default)]
    pub gap_ms: i64,
    /// Single and local phase: the input column of the rowtime attribute
    /// (TIMESTAMP(3), epoch ms); global phase: the BIGINT `$slice_end`
    /// column of the local phase's partials.
    pub time_column: usize,
    /// The window columns of the output, after the calls' results (single
    /// and global phase; the local phase emits `$slice_end` instead).
    #[serde(default)]
    pub properties: Vec<WindowProperty>,
    /// The session time zone windows are aligned to (a TIMESTAMP_LTZ or
    /// processing-time attribute outside UTC); absent: no shift. Times in
    /// the input are instants, slices and window bounds local times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<ZoneRules>,
    /// Processing-time windows: a row's time is the processing time it
    /// arrives at (the operator's clock, `set_time`), not a column; rows
    /// are never late; windows fire as the clock passes them. Single phase
    /// only, as Flink plans them.
    #[serde(default)]
    pub processing_time: bool,
    /// The rows carry their window already (a window aggregate over the
    /// windows of another, Flink's window-attached windowing): the time
    /// column of the single and local phase is the rows' `window_end`
    /// (local time, never shifted), and each window is one slice
    /// ([`WindowSpec::Windowed`]). Event time only; not SESSION.
    #[serde(default)]
    pub attached: bool,
}

impl WindowPlan {
    /// The slice and window arithmetic of these windows; `None` for
    /// SESSION windows, which are not sliced.
    pub fn spec(&self) -> Result<Option<WindowSpec>> {
        let spec = self.unattached_spec()?;
        Ok(if self.attached {
            spec.map(WindowSpec::windowed)
        } else {
            spec
        })
    }

    fn unattached_spec(&self) -> Result<Option<WindowSpec>> {
        Ok(Some(match self.kind {
            WindowKind::Tumble => WindowSpec::tumble(self.size_ms, self.offset_ms)?,
            WindowKind::Hop => WindowSpec::hop(self.size_ms, self.step_ms, self.offset_ms)?,
            WindowKind::Cumulate => {
                WindowSpec::cumulate(self.size_ms, self.step_ms, self.offset_ms)?
            }
            WindowKind::Session => {
                if self.gap_ms <= 0 {
                    return Err(AggError::Plan(format!(
                        "SESSION gap must be positive, got {} ms",
                        self.gap_ms
                    )));
                }
                return Ok(None);
            }
        }))
    }

    /// Flink's `isWindowFired`: whether the window ending at `end` (local
    /// time) has fired at `progress` (an instant: watermark or processing
    /// time). A window ending at `i64::MAX` never fires.
    pub fn is_fired(&self, end: i64, progress: i64) -> bool {
        end != i64::MAX && progress >= self.trigger_time(end)
    }

    /// Whether a row whose slice (session) ends at `end` arrives after it
    /// fired at watermark `watermark`; processing-time rows never do.
    pub fn is_late(&self, end: i64, watermark: i64) -> bool {
        !self.processing_time && self.is_fired(end, watermark)
    }

    /// The instant the window ending at `end` fires: its local `end - 1`.
    pub fn trigger_time(&self, end: i64) -> i64 {
        let last = end.wrapping_sub(1);
        match &self.zone {
            None => last,
            Some(zone) => zone.timer_epoch(last),
        }
    }

    /// Flink's `getNextTriggerWatermark`: the first watermark after
    /// `watermark` at which the local phase looks at its buffer again, the
    /// end - 1 of the next `interval`-long span aligned to the epoch without
    /// the windows' offset (in a zone with daylight saving, to local time).
    pub fn next_trigger_watermark(&self, watermark: i64, interval: i64) -> i64 {
        if watermark == i64::MAX {
            return watermark;
        }
        let trigger = match self.zone.as_ref().filter(|z| z.daylight) {
            Some(zone) => {
                let start = window_start_with_offset(zone.to_local(watermark), 0, interval);
                zone.timer_epoch(start.wrapping_add(interval).wrapping_sub(1))
            }
            None => window_start_with_offset(watermark, 0, interval)
                .wrapping_add(interval)
                .wrapping_sub(1),
        };
        if trigger > watermark {
            trigger
        } else {
            trigger.wrapping_add(interval)
        }
    }

    /// Whether the local phase's flush gate (`next_trigger_watermark`)
    /// opens exactly at slice ends of `interval`: no offset, and a zone
    /// with daylight saving (aligned in local time) or whose offsets are
    /// all multiples of the interval. Otherwise Flink's gate opens late and
    /// loses rows (FLINK-36664, FLINK-38075), which is not reproduced.
    pub fn flush_gate_is_aligned(&self, interval: i64) -> bool {
        let divides = |offset_s: i32| (i64::from(offset_s) * 1000) % interval == 0;
        self.offset_ms == 0
            && self.zone.as_ref().is_none_or(|z| {
                z.daylight
                    || (divides(z.initial_offset_s) && z.transitions.iter().all(|t| divides(t.2)))
            })
    }

    /// The `window_time` of the window ending at `end`: the instant of its
    /// local `end - 1`.
    pub fn window_time(&self, end: i64) -> i64 {
        let last = end.wrapping_sub(1);
        match &self.zone {
            None => last,
            Some(zone) => zone.to_epoch(last),
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
        if let Some(zone) = &self.zone {
            zone.validate()?;
        }
        if plan.phase != Phase::Single {
            // The views travel in Flink's layout; merging them in Flink's
            // order (its HashMap's) is wired into the group aggregate only.
            if let Some(c) = plan
                .calls
                .iter()
                .position(|c| c.distinct && order_sensitive(&c.function))
            {
                return Err(AggError::Plan(format!(
                    "call {c} ({} DISTINCT): an order-sensitive DISTINCT call in a two-phase \
                     window aggregate is not supported yet",
                    plan.calls[c].function
                )));
            }
        }
        if self.attached && (self.processing_time || self.kind == WindowKind::Session) {
            return Err(AggError::Plan(
                "attached windows are event-time TUMBLE, HOP or CUMULATE windows".into(),
            ));
        }
        if plan.phase != Phase::Single && self.kind == WindowKind::Cumulate {
            // Flink's global buffer merges a late partial into its period's
            // first slice in the order of its hash map, which an
            // order-sensitive function would expose.
            if let Some(c) = plan.calls.iter().position(|c| order_sensitive(&c.function)) {
                return Err(AggError::Plan(format!(
                    "call {c} ({}): two-phase CUMULATE merges late partials in Flink's hash-map \
                     order, which this order-sensitive function would expose",
                    plan.calls[c].function
                )));
            }
        }
        if self.processing_time && plan.phase != Phase::Single {
            return Err(AggError::Plan(
                "processing-time windows run in one phase only (as Flink plans them)".into(),
            ));
        }
        if plan.final_key.is_some() {
            return Err(AggError::Plan(
                "a window aggregate cannot be an incremental aggregate (final_key)".into(),
            ));
        }
        if self.kind == WindowKind::Session {
            if plan.phase != Phase::Single {
                return Err(AggError::Plan(
                    "SESSION windows run in one phase only (Flink never splits them)".into(),
                ));
            }
            // Merging sessions merges accumulators in an order Flink leaves
            // to a hash set's iteration; only order-free functions match it.
            if let Some(c) = plan.calls.iter().position(|c| order_sensitive(&c.function)) {
                return Err(AggError::Plan(format!(
                    "call {c} ({}): SESSION windows merge accumulators in Flink's hash-set \
                     order, which this order-sensitive function would expose",
                    plan.calls[c].function
                )));
            }
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

/// Functions whose merged result depends on the order accumulators merge.
fn order_sensitive(function: &str) -> bool {
    ["LISTAGG", "FIRST_VALUE", "LAST_VALUE"]
        .iter()
        .any(|f| function.eq_ignore_ascii_case(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tumble(zone: Option<ZoneRules>) -> WindowPlan {
        WindowPlan {
            kind: WindowKind::Tumble,
            size_ms: 5000,
            step_ms: 0,
            offset_ms: 0,
            gap_ms: 0,
            time_column: 0,
            properties: vec![WindowProperty::WindowTime],
            zone,
            processing_time: false,
            attached: false,
        }
    }

    #[test]
    fn windows_fire_at_the_instant_of_their_local_last_millisecond() {
        let utc = tumble(None);
        assert!(utc.is_fired(5000, 4999));
        assert!(!utc.is_fired(5000, 4998));
        assert!(!utc.is_fired(i64::MAX, i64::MAX));
        assert_eq!(utc.window_time(5000), 4999);
        // UTC+2: the window ending at local 02:00:05 fires at 00:00:04.999Z.
        let plus_two = tumble(Some(ZoneRules::fixed("+02:00", 7200)));
        let end = 7_200_000 + 5000;
        assert_eq!(plus_two.trigger_time(end), 4999);
        assert!(plus_two.is_fired(end, 4999));
        assert!(!plus_two.is_fired(end, 4998));
        assert_eq!(plus_two.window_time(end), 4999);
    }

    #[test]
    fn the_local_flush_gate_opens_at_each_epoch_aligned_boundary() {
        let utc = tumble(None);
        assert_eq!(utc.next_trigger_watermark(12_345, 10_000), 19_999);
        assert_eq!(utc.next_trigger_watermark(19_999, 10_000), 29_999);
        assert_eq!(utc.next_trigger_watermark(-1, 10_000), 9_999);
        assert_eq!(utc.next_trigger_watermark(i64::MAX, 10_000), i64::MAX);
        // A zone without daylight saving: epoch-aligned, as Flink (no shift).
        let plus_two = tumble(Some(ZoneRules::fixed("+02:00", 7200)));
        assert_eq!(plus_two.next_trigger_watermark(12_345, 10_000), 19_999);
        assert!(plus_two.flush_gate_is_aligned(10_000));
        // +05:30 and hour slices: Flink's gate opens half an hour late.
        let kolkata = tumble(Some(ZoneRules::fixed("+05:30", 19_800)));
        assert!(!kolkata.flush_gate_is_aligned(3_600_000));
        assert!(kolkata.flush_gate_is_aligned(1_800_000));
        let offset = WindowPlan {
            offset_ms: 1000,
            ..tumble(None)
        };
        assert!(!offset.flush_gate_is_aligned(10_000));
    }
}
