//! Flink's window arithmetic for TUMBLE, HOP and CUMULATE window
//! aggregates: which slice a row falls into, which windows a slice belongs
//! to, which slices a window merges, when a window fires and which slices
//! its firing frees (`docs/window-aggregates.md`).
//!
//! A window is named by its end, a slice too; times are epoch milliseconds
//! (already shifted to the session time zone where Flink shifts them).
//! Arithmetic wraps as Java's `long` does, so extreme timestamps give Flink's
//! answers instead of a panic.

use crate::error::{AggError, Result};

/// The windows of a window table function, cut into slices: every row
/// folds into exactly one slice, and a window merges the slices it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSpec {
    /// `TUMBLE(size, offset)`: a window is one slice.
    Tumble { size: i64, offset: i64 },
    /// `HOP(slide, size, offset)`: a window covers `size / slide` slices.
    Hop { size: i64, slide: i64, offset: i64 },
    /// `CUMULATE(step, max_size, offset)`: the windows of a period all start
    /// at the period's start and end at each of its steps.
    Cumulate {
        max_size: i64,
        step: i64,
        offset: i64,
    },
    /// Rows that carry their window already (Flink's `WindowedSliceAssigner`:
    /// a window aggregate over the windows of another): a row's slice is
    /// its `window_end`, and each window is that one slice. `size` and
    /// `offset` are the attached windows' (TUMBLE/HOP size, CUMULATE
    /// maximum size), `step` their slice size; `cumulative` says whether a
    /// window starts at its CUMULATE period's start.
    Windowed {
        size: i64,
        step: i64,
        offset: i64,
        cumulative: bool,
    },
}

impl WindowSpec {
    /// TUMBLE windows of `size` ms; Flink requires `|offset| < size`.
    pub fn tumble(size: i64, offset: i64) -> Result<Self> {
        positive("TUMBLE size", size)?;
        if offset.checked_abs().is_none_or(|o| o >= size) {
            return Err(AggError::Plan(format!(
                "TUMBLE offset {offset} ms must be smaller than its size {size} ms"
            )));
        }
        Ok(WindowSpec::Tumble { size, offset })
    }

    /// HOP windows of `size` ms every `slide` ms; the size must be a
    /// multiple of the slide.
    pub fn hop(size: i64, slide: i64, offset: i64) -> Result<Self> {
        positive("HOP size", size)?;
        positive("HOP slide", slide)?;
        if size % slide != 0 {
            return Err(AggError::Plan(format!(
                "HOP size {size} ms must be an integral multiple of its slide {slide} ms"
            )));
        }
        Ok(WindowSpec::Hop {
            size,
            slide,
            offset,
        })
    }

    /// CUMULATE windows growing by `step` ms up to `max_size` ms; the
    /// maximum size must be a multiple of the step.
    pub fn cumulate(max_size: i64, step: i64, offset: i64) -> Result<Self> {
        positive("CUMULATE max size", max_size)?;
        positive("CUMULATE step", step)?;
        if max_size % step != 0 {
            return Err(AggError::Plan(format!(
                "CUMULATE max size {max_size} ms must be an integral multiple of its step {step} ms"
            )));
        }
        Ok(WindowSpec::Cumulate {
            max_size,
            step,
            offset,
        })
    }

    /// These windows as the input of a window aggregate over them
    /// ([`WindowSpec::Windowed`]).
    pub fn windowed(self) -> Self {
        let (size, cumulative) = match self {
            WindowSpec::Tumble { size, .. } | WindowSpec::Hop { size, .. } => (size, false),
            WindowSpec::Cumulate { max_size, .. } => (max_size, true),
            WindowSpec::Windowed { .. } => return self,
        };
        WindowSpec::Windowed {
            size,
            step: self.slice_size(),
            offset: self.offset(),
            cumulative,
        }
    }

    /// The length of a slice: the size, the slide or the step.
    pub fn slice_size(&self) -> i64 {
        match *self {
            WindowSpec::Tumble { size, .. } => size,
            WindowSpec::Hop { slide, .. } => slide,
            WindowSpec::Cumulate { step, .. } | WindowSpec::Windowed { step, .. } => step,
        }
    }

    fn offset(&self) -> i64 {
        match *self {
            WindowSpec::Tumble { offset, .. }
            | WindowSpec::Hop { offset, .. }
            | WindowSpec::Cumulate { offset, .. }
            | WindowSpec::Windowed { offset, .. } => offset,
        }
    }

    /// The end of the slice a row at `timestamp` folds into (a windowed
    /// row's `timestamp` is its window's end: its slice).
    pub fn slice_end(&self, timestamp: i64) -> i64 {
        if let WindowSpec::Windowed { .. } = self {
            return timestamp;
        }
        let slice = self.slice_size();
        window_start_with_offset(timestamp, self.offset(), slice).wrapping_add(slice)
    }

    /// The start of the window ending at `window_end`.
    pub fn window_start(&self, window_end: i64) -> i64 {
        match *self {
            WindowSpec::Tumble { size, .. }
            | WindowSpec::Hop { size, .. }
            | WindowSpec::Windowed {
                size,
                cumulative: false,
                ..
            } => window_end.wrapping_sub(size),
            WindowSpec::Cumulate {
                max_size: size,
                offset,
                ..
            }
            | WindowSpec::Windowed {
                size,
                offset,
                cumulative: true,
                ..
            } => window_start_with_offset(window_end.wrapping_sub(1), offset, size),
        }
    }

    /// The end of the last window the slice ending at `slice_end` belongs
    /// to: once it has fired, a row of that slice is dropped as late.
    pub fn last_window_end(&self, slice_end: i64) -> i64 {
        match *self {
            WindowSpec::Tumble { .. } | WindowSpec::Windowed { .. } => slice_end,
            WindowSpec::Hop { size, slide, .. } => slice_end.wrapping_sub(slide).wrapping_add(size),
            WindowSpec::Cumulate { max_size, .. } => {
                self.window_start(slice_end).wrapping_add(max_size)
            }
        }
    }

    /// The windows the slice ending at `slice_end` belongs to, in end order.
    /// On insert-only input Flink emits exactly the windows of the slices
    /// that received rows.
    pub fn windows_of(&self, slice_end: i64) -> Vec<i64> {
        let step = self.slice_size();
        let last = self.last_window_end(slice_end);
        let count = last.wrapping_sub(slice_end) / step + 1;
        (0..count)
            .map(|i| slice_end.wrapping_add(i.wrapping_mul(step)))
            .collect()
    }

    /// The slices the window ending at `window_end` merges, in Flink's merge
    /// order: HOP newest first into a fresh accumulator, CUMULATE from the
    /// period's first slice (its running accumulator) on.
    pub fn slices_of(&self, window_end: i64) -> Vec<i64> {
        match *self {
            WindowSpec::Tumble { .. } | WindowSpec::Windowed { .. } => vec![window_end],
            WindowSpec::Hop { size, slide, .. } => (0..size / slide)
                .map(|i| window_end.wrapping_sub(i.wrapping_mul(slide)))
                .collect(),
            WindowSpec::Cumulate { step, .. } => {
                let first = self.first_slice_end(window_end);
                let count = window_end.wrapping_sub(first) / step + 1;
                (0..count)
                    .map(|i| first.wrapping_add(i.wrapping_mul(step)))
                    .collect()
            }
        }
    }

    /// The slices whose state is cleared when the window ending at
    /// `window_end` fires (each slice once its last window has fired; a
    /// CUMULATE step's slice once folded into the period's first slice).
    pub fn expired_slices(&self, window_end: i64) -> Vec<i64> {
        match *self {
            WindowSpec::Tumble { .. } | WindowSpec::Windowed { .. } => vec![window_end],
            WindowSpec::Hop { size, slide, .. } => {
                vec![window_end.wrapping_sub(size).wrapping_add(slide)]
            }
            WindowSpec::Cumulate { max_size, .. } => {
                let first = self.first_slice_end(window_end);
                let period_end = self.window_start(window_end).wrapping_add(max_size);
                // The period's end first: when the step is the whole size the
                // first slice is also the last (Flink checks the first slice
                // first there and never clears it; nothing else differs).
                if window_end == period_end && window_end == first {
                    vec![window_end]
                } else if window_end == period_end {
                    vec![window_end, first]
                } else if window_end == first {
                    Vec::new()
                } else {
                    vec![window_end]
                }
            }
        }
    }

    /// CUMULATE: the end of the first slice of `window_end`'s period.
    fn first_slice_end(&self, window_end: i64) -> i64 {
        self.window_start(window_end)
            .wrapping_add(self.slice_size())
    }
}

/// Flink's `TimeWindow.getWindowStartWithOffset`: the start of the window of
/// `size` ms (shifted by `offset`) holding `timestamp`, for negative
/// timestamps too.
pub fn window_start_with_offset(timestamp: i64, offset: i64, size: i64) -> i64 {
    let remainder = timestamp.wrapping_sub(offset) % size;
    if remainder < 0 {
        timestamp.wrapping_sub(remainder.wrapping_add(size))
    } else {
        timestamp.wrapping_sub(remainder)
    }
}

fn positive(what: &str, ms: i64) -> Result<()> {
    if ms <= 0 {
        return Err(AggError::Plan(format!(
            "{what} must be positive, not {ms} ms"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const S: i64 = 1_000;

    #[test]
    fn slices_start_below_negative_timestamps() {
        let tumble = WindowSpec::tumble(5 * S, 0).unwrap();
        assert_eq!(window_start_with_offset(-1, 0, 5 * S), -5 * S);
        assert_eq!(tumble.slice_end(-1), 0);
        assert_eq!(tumble.slice_end(0), 5 * S);
        assert_eq!(tumble.slice_end(5 * S - 1), 5 * S);
        let shifted = WindowSpec::tumble(5 * S, S).unwrap();
        assert_eq!(shifted.slice_end(0), S);
        assert_eq!(shifted.slice_end(S), 6 * S);
        assert_eq!(shifted.window_start(6 * S), S);
    }

    #[test]
    fn hop_windows_merge_their_slices_newest_first() {
        let hop = WindowSpec::hop(10 * S, 5 * S, 0).unwrap();
        assert_eq!(hop.slice_end(7 * S), 10 * S);
        assert_eq!(hop.windows_of(10 * S), vec![10 * S, 15 * S]);
        assert_eq!(hop.last_window_end(10 * S), 15 * S);
        assert_eq!(hop.slices_of(15 * S), vec![15 * S, 10 * S]);
        assert_eq!(hop.window_start(15 * S), 5 * S);
        assert_eq!(hop.expired_slices(15 * S), vec![10 * S]);
    }

    #[test]
    fn cumulate_steps_grow_from_the_period_start() {
        let cumulate = WindowSpec::cumulate(15 * S, 5 * S, 0).unwrap();
        assert_eq!(cumulate.slice_end(7 * S), 10 * S);
        assert_eq!(cumulate.windows_of(10 * S), vec![10 * S, 15 * S]);
        assert_eq!(cumulate.windows_of(15 * S), vec![15 * S]);
        assert_eq!(cumulate.windows_of(20 * S), vec![20 * S, 25 * S, 30 * S]);
        assert_eq!(cumulate.slices_of(15 * S), vec![5 * S, 10 * S, 15 * S]);
        assert_eq!(cumulate.window_start(15 * S), 0);
        assert_eq!(cumulate.expired_slices(5 * S), Vec::<i64>::new());
        assert_eq!(cumulate.expired_slices(10 * S), vec![10 * S]);
        assert_eq!(cumulate.expired_slices(15 * S), vec![15 * S, 5 * S]);
    }

    #[test]
    fn bad_windows_are_refused_with_flinks_rule() {
        assert!(WindowSpec::tumble(0, 0).is_err());
        assert!(WindowSpec::tumble(5, 5)
            .unwrap_err()
            .to_string()
            .contains("offset"));
        assert!(WindowSpec::tumble(5, i64::MIN).is_err());
        assert!(WindowSpec::hop(10, 3, 0)
            .unwrap_err()
            .to_string()
            .contains("multiple"));
        assert!(WindowSpec::cumulate(10, 4, 0).is_err());
        assert!(WindowSpec::hop(10, -5, 0).is_err());
    }

    /// Windows of every kind, sizes up to 10 s, offsets either way.
    fn specs() -> impl Strategy<Value = WindowSpec> {
        let offset = -20_000i64..20_000;
        prop_oneof![
            (1i64..10_000, offset.clone())
                .prop_map(|(size, offset)| { WindowSpec::tumble(size, offset % size).unwrap() }),
            (1i64..2_000, 1i64..6, offset.clone()).prop_map(|(slide, n, offset)| {
                WindowSpec::hop(slide * n, slide, offset).unwrap()
            }),
            (1i64..2_000, 1i64..6, offset).prop_map(|(step, n, offset)| {
                WindowSpec::cumulate(step * n, step, offset).unwrap()
            }),
        ]
    }

    /// Every window `[start, end)` holding `ts`, from each kind's definition:
    /// the candidate ends are the times congruent to the offset modulo the
    /// slice size, walked one by one.
    fn windows_holding(spec: &WindowSpec, ts: i64) -> Vec<i64> {
        let (step, offset) = (spec.slice_size(), spec.offset());
        let holds = |end: i64| match *spec {
            WindowSpec::Tumble { size, .. } | WindowSpec::Hop { size, .. } => {
                end - size <= ts && ts < end
            }
            WindowSpec::Cumulate { max_size, .. } => {
                let period_start = ts - (ts - offset).rem_euclid(max_size);
                ts < end && end <= period_start + max_size
            }
            WindowSpec::Windowed { .. } => unreachable!("specs() makes no windowed spec"),
        };
        let low = ts - 30_000;
        let mut end = low + (offset - low).rem_euclid(step);
        let mut ends = Vec::new();
        while end <= ts + 30_000 {
            if holds(end) {
                ends.push(end);
            }
            end += step;
        }
        ends
    }

    #[test]
    fn windowed_windows_are_their_own_slice_and_start_as_their_kind() {
        let hop = WindowSpec::hop(3000, 1000, 0).unwrap().windowed();
        assert_eq!(hop.slice_end(4000), 4000);
        assert_eq!(hop.window_start(4000), 1000);
        assert_eq!(hop.slices_of(4000), [4000]);
        assert_eq!(hop.windows_of(4000), [4000]);
        assert_eq!(hop.expired_slices(4000), [4000]);
        assert_eq!(hop.last_window_end(4000), 4000);
        let cumulate = WindowSpec::cumulate(3000, 1000, 0).unwrap();
        assert_eq!(
            cumulate.windowed().window_start(5000),
            cumulate.window_start(5000)
        );
        assert_eq!(cumulate.windowed().window_start(5000), 3000);
    }

    proptest! {
        #[test]
        fn a_rows_windows_are_its_slices_windows(spec in specs(), ts in -1_000_000i64..1_000_000) {
            let slice = spec.slice_end(ts);
            prop_assert!(slice - spec.slice_size() <= ts && ts < slice);
            prop_assert_eq!(spec.windows_of(slice), windows_holding(&spec, ts));
            for window in spec.windows_of(slice) {
                prop_assert!(spec.slices_of(window).contains(&slice));
            }
            prop_assert_eq!(*spec.windows_of(slice).last().unwrap(), spec.last_window_end(slice));
        }

        #[test]
        fn every_slice_expires_exactly_once(spec in specs(), ts in -1_000_000i64..1_000_000) {
            // Fire the windows of a run of consecutive slices: each slice of the
            // run whose windows all fired is cleared once (CUMULATE's first slice
            // of a period at the period's end).
            let first = spec.slice_end(ts);
            let step = spec.slice_size();
            let slices: Vec<i64> = (0..12).map(|i| first + i * step).collect();
            let mut fired: Vec<i64> = slices.iter().flat_map(|&s| spec.windows_of(s)).collect();
            fired.sort_unstable();
            fired.dedup();
            let mut cleared: Vec<i64> = fired.iter().flat_map(|&w| spec.expired_slices(w)).collect();
            cleared.sort_unstable();
            let before = cleared.len();
            cleared.dedup();
            prop_assert_eq!(before, cleared.len(), "a slice cleared twice");
            for slice in &slices {
                prop_assert!(cleared.contains(slice), "slice {} never cleared", slice);
            }
        }
    }
}
