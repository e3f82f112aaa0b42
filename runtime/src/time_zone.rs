//! The session time zone that TIMESTAMP_LTZ and processing-time windows
//! are aligned to (Flink's `shiftTimeZone` and `TimeWindowUtil`).
//!
//! Windows over an instant are cut in local wall-clock time: a row's epoch
//! milliseconds become "local milliseconds" (the local date-time read as if
//! it were UTC), slices and windows are computed on those, and a window
//! fires when the progress reaches the instant of its local `end - 1`. The
//! zone's rules come from the JVM that planned the job (`java.time`'s
//! `ZoneRules`, as a list of offset transitions), so the conversions are
//! Java's, including its choices in DST gaps and overlaps.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::error::{AggError, Result};

const MS_PER_HOUR: i64 = 3_600_000;

/// Offsets further from UTC than this are not real zones (`ZoneOffset`'s
/// own limit).
const MAX_OFFSET_S: i32 = 18 * 3600;

/// One change of a zone's UTC offset, as `[at_ms, before_s, after_s]`:
/// from the instant `at_ms` (epoch ms) on the offset is `after_s` seconds,
/// before it `before_s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition(pub i64, pub i32, pub i32);

impl Transition {
    fn at(self) -> i64 {
        self.0
    }
    fn before_ms(self) -> i64 {
        i64::from(self.1) * 1000
    }
    fn after_ms(self) -> i64 {
        i64::from(self.2) * 1000
    }
    /// The local times this transition skips (gap) or repeats (overlap):
    /// `[start, end)`.
    fn local_range(self) -> (i64, i64) {
        let (b, a) = (self.before_ms(), self.after_ms());
        (
            self.at().saturating_add(b.min(a)),
            self.at().saturating_add(b.max(a)),
        )
    }
}

/// A time zone's rules: its offset before the first transition, then each
/// transition (the JVM's historical ones and its rules' up to a horizon;
/// after the last one the offset stays).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZoneRules {
    /// The zone's id, e.g. `America/Los_Angeles` (for messages).
    pub id: String,
    /// `java.util.TimeZone.useDaylightTime()`: Flink's timers treat DST
    /// gaps and overlaps specially only in such zones.
    pub daylight: bool,
    /// The offset before the first transition (seconds).
    pub initial_offset_s: i32,
    /// The transitions, in time order.
    #[serde(default)]
    pub transitions: Vec<Transition>,
}

impl ZoneRules {
    /// A zone with one fixed offset.
    pub fn fixed(id: &str, offset_s: i32) -> Self {
        ZoneRules {
            id: id.to_string(),
            daylight: false,
            initial_offset_s: offset_s,
            transitions: Vec::new(),
        }
    }

    /// Checks that the rules are a zone's: offsets within ±18 h, each
    /// transition continuing the offset before it, in time order.
    pub fn validate(&self) -> Result<()> {
        let bad = |why: String| Err(AggError::Plan(format!("time zone {}: {why}", self.id)));
        let mut offset = self.initial_offset_s;
        let mut at = i64::MIN;
        for (i, t) in self.transitions.iter().enumerate() {
            if t.1.abs() > MAX_OFFSET_S || t.2.abs() > MAX_OFFSET_S {
                return bad(format!("transition {i} has an offset beyond 18 hours"));
            }
            if t.1 != offset {
                return bad(format!(
                    "transition {i} starts from offset {} s, but the offset before it is {offset} s",
                    t.1
                ));
            }
            if i > 0 && t.0 <= at {
                return bad(format!("transition {i} is not after the one before it"));
            }
            offset = t.2;
            at = t.0;
        }
        if self.initial_offset_s.abs() > MAX_OFFSET_S {
            return bad("its offset is beyond 18 hours".into());
        }
        Ok(())
    }

    /// The offset (ms) in force at instant `epoch_ms`.
    fn offset_ms_at(&self, epoch_ms: i64) -> i64 {
        let next = self.transitions.partition_point(|t| t.at() <= epoch_ms);
        match next {
            0 => i64::from(self.initial_offset_s) * 1000,
            _ => self.transitions[next - 1].after_ms(),
        }
    }

    /// `TimeWindowUtil.toUtcTimestampMills`: the local date-time of instant
    /// `epoch_ms`, as milliseconds read in UTC. `i64::MAX` (the end of
    /// time) stays.
    pub fn to_local(&self, epoch_ms: i64) -> i64 {
        if epoch_ms == i64::MAX {
            return epoch_ms;
        }
        epoch_ms.saturating_add(self.offset_ms_at(epoch_ms))
    }

    /// `TimeWindowUtil.toEpochMills` (`LocalDateTime.atZone`): the instant
    /// of local time `local_ms`; a local time a gap skips is moved forward
    /// by the gap, one an overlap repeats takes the earlier instant.
    pub fn to_epoch(&self, local_ms: i64) -> i64 {
        if local_ms == i64::MAX {
            return local_ms;
        }
        let next = self
            .transitions
            .partition_point(|t| t.local_range().0 <= local_ms);
        let offset = match next {
            0 => i64::from(self.initial_offset_s) * 1000,
            _ => {
                let t = self.transitions[next - 1];
                if local_ms < t.local_range().1 {
                    // In the gap (moved forward by it: the same instant as
                    // the offset before) or the overlap (the earlier one).
                    t.before_ms()
                } else {
                    t.after_ms()
                }
            }
        };
        local_ms.saturating_sub(offset)
    }

    /// `TimeWindowUtil.toEpochMillsForTimer`: the instant a timer for local
    /// time `local_ms` is set to. In a zone with daylight saving, a time a
    /// gap skips fires at the first instant after the gap and a time an
    /// overlap repeats at its later instant, so both hours' rows are in.
    pub fn timer_epoch(&self, local_ms: i64) -> i64 {
        if local_ms == i64::MAX || !self.daylight {
            return self.to_epoch(local_ms);
        }
        let t1 = self.to_epoch(local_ms);
        let t2 = self.to_epoch(local_ms.saturating_add(MS_PER_HOUR));
        if t1 == t2 {
            // Java's `%`: the remainder has the dividend's sign, as Rust's.
            t1 - t1 % MS_PER_HOUR
        } else if t2 - t1 > MS_PER_HOUR {
            t1 + MS_PER_HOUR
        } else {
            t1
        }
    }
}

/// Converts times to local time when windows are shifted (`zone` is
/// `Some`), borrowing them as they are otherwise.
pub fn shift_all<'a>(zone: Option<&ZoneRules>, times: &'a [i64]) -> Cow<'a, [i64]> {
    match zone {
        None => Cow::Borrowed(times),
        Some(z) if z.transitions.is_empty() => {
            let offset = i64::from(z.initial_offset_s) * 1000;
            times
                .iter()
                .map(|&t| {
                    if t == i64::MAX {
                        t
                    } else {
                        t.saturating_add(offset)
                    }
                })
                .collect()
        }
        Some(z) => times.iter().map(|&t| z.to_local(t)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Los Angeles around 2021's DST changes (the examples of Flink's
    /// `TimeWindowUtil`): PST -8 h, PDT -7 h; spring forward at
    /// 2021-03-14 10:00 UTC, fall back at 2021-11-07 09:00 UTC.
    fn los_angeles() -> ZoneRules {
        ZoneRules {
            id: "America/Los_Angeles".into(),
            daylight: true,
            initial_offset_s: -8 * 3600,
            transitions: vec![
                Transition(1_615_716_000_000, -8 * 3600, -7 * 3600),
                Transition(1_636_275_600_000, -7 * 3600, -8 * 3600),
            ],
        }
    }

    /// Local milliseconds of a wall-clock time on a day of 2021.
    fn local(month_day_ms: i64, hour: i64) -> i64 {
        month_day_ms + hour * MS_PER_HOUR
    }

    const MARCH_14: i64 = 1_615_680_000_000; // 2021-03-14T00:00 as UTC ms
    const NOV_7: i64 = 1_636_243_200_000; // 2021-11-07T00:00 as UTC ms

    #[test]
    fn local_and_epoch_outside_changes() {
        let z = los_angeles();
        // 2021-03-14 00:00 PST is epoch 1615708800000.
        assert_eq!(z.to_epoch(local(MARCH_14, 0)), 1_615_708_800_000);
        assert_eq!(z.to_local(1_615_708_800_000), local(MARCH_14, 0));
        assert_eq!(z.to_epoch(local(MARCH_14, 4)), 1_615_719_600_000);
        assert_eq!(z.to_local(1_615_719_600_000), local(MARCH_14, 4));
    }

    #[test]
    fn gap_and_overlap_follow_java() {
        let z = los_angeles();
        // 02:00-03:00 on March 14 does not exist: atZone moves it forward
        // an hour (03:00 PDT, epoch3).
        let epoch3 = 1_615_716_000_000;
        assert_eq!(z.to_epoch(local(MARCH_14, 2)), epoch3);
        assert_eq!(z.to_epoch(local(MARCH_14, 3)), epoch3);
        // 01:00-02:00 on November 7 happens twice: atZone takes the earlier.
        let epoch1 = 1_636_272_000_000;
        assert_eq!(z.to_epoch(local(NOV_7, 1)), epoch1);
        assert_eq!(z.to_local(epoch1), local(NOV_7, 1));
        assert_eq!(z.to_local(epoch1 + MS_PER_HOUR), local(NOV_7, 1));
    }

    #[test]
    fn timers_follow_flink_in_daylight_zones() {
        let z = los_angeles();
        // Flink's examples: 02:00 and 02:59:59 in the gap register epoch3.
        let epoch3 = 1_615_716_000_000;
        assert_eq!(z.timer_epoch(local(MARCH_14, 2)), epoch3);
        assert_eq!(z.timer_epoch(local(MARCH_14, 2) + 3_599_000), epoch3);
        // 01:00 in the overlap registers the later instant (epoch2).
        assert_eq!(z.timer_epoch(local(NOV_7, 1)), 1_636_275_600_000);
        // Elsewhere the timer is the plain instant.
        assert_eq!(z.timer_epoch(local(MARCH_14, 4)), 1_615_719_600_000);
        // Without daylight saving the rules are not consulted for it.
        let mut plain = los_angeles();
        plain.daylight = false;
        assert_eq!(plain.timer_epoch(local(NOV_7, 1)), 1_636_272_000_000);
    }

    #[test]
    fn fixed_offsets_and_the_end_of_time() {
        let z = ZoneRules::fixed("Asia/Kolkata", 19_800);
        assert_eq!(z.to_local(0), 19_800_000);
        assert_eq!(z.to_epoch(19_800_000), 0);
        assert_eq!(z.timer_epoch(19_800_000), 0);
        assert_eq!(
            shift_all(Some(&z), &[0, i64::MAX]),
            vec![19_800_000, i64::MAX]
        );
        assert_eq!(z.to_local(i64::MAX), i64::MAX);
        assert_eq!(z.to_epoch(i64::MAX), i64::MAX);
        assert_eq!(shift_all(None, &[5]), Cow::Borrowed(&[5][..]));
    }

    #[test]
    fn rules_are_checked() {
        let mut z = los_angeles();
        assert!(z.validate().is_ok());
        z.transitions[1].1 = 0;
        assert!(z
            .validate()
            .unwrap_err()
            .to_string()
            .contains("transition 1"));
        let mut z = los_angeles();
        z.transitions.swap(0, 1);
        assert!(z.validate().is_err());
        assert!(ZoneRules::fixed("x", 19 * 3600).validate().is_err());
    }
}
