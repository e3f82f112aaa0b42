//! The native half of the columnar exchange: the sending task routes a
//! batch's rows to the channels (subtasks) of the aggregate that owns their
//! keys, exactly as Flink's `KeyGroupStreamPartitioner` routes rows, and
//! encodes one message per channel; the receiving aggregate decodes a
//! message back into the batch it would have transposed itself.
//!
//! A message is a header, the channel (`i32`, big-endian, which Java's
//! partitioner reads), the row count and the number of in-band watermarks
//! (`i32`s), each watermark as its row position (`i32`) and value (`i64`),
//! all big-endian, followed by the rows as an Arrow IPC stream (schema, one
//! record batch, end marker). An in-band watermark ([`Mark`]) is one the
//! sender saw between rows and left in the message instead of sending the
//! rows before it on their own; the receiver applies it between the same
//! rows (Java's `ColumnarGroupAggOperator`).

use std::io::Cursor;

use arrow_array::{RecordBatch, UInt32Array};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_select::concat::concat_batches;
use arrow_select::take::take_record_batch;

use crate::error::{AggError, Result};
use crate::flink_key::{key_group_for_hash, operator_index_for_key_group};
use crate::group_table::flink_key_hashes;
use crate::plan::AggPlan;
use crate::types::SqlType;

/// Bytes of a message's fixed header (channel, row count, watermarks).
pub const HEADER_BYTES: usize = 12;

/// Bytes of one in-band watermark in a message's header.
pub const MARK_BYTES: usize = 12;

/// A watermark carried inside a message: it came after the first
/// `position` rows of the message (of the batch, when routing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// Rows of the message before the watermark.
    pub position: u32,
    /// The watermark (milliseconds).
    pub watermark: i64,
}

/// A routed part: the channel, its rows, its in-band watermarks.
pub type RoutedPart = (u32, RecordBatch, Vec<Mark>);

/// Routes the rows of batches to the channels of a hash exchange on the
/// plan's group keys.
#[derive(Debug)]
pub struct ExchangeRouter {
    key_columns: Vec<usize>,
    key_types: Vec<SqlType>,
    max_parallelism: u32,
    channels: u32,
    /// Scratch: each row's key hash, then its channel.
    hashes: Vec<i32>,
    targets: Vec<u32>,
    /// Batches held for the next [`route_held`](Self::route_held), in order.
    held: Vec<RecordBatch>,
}

impl ExchangeRouter {
    /// A router for the batches `plan`'s operator reads (its group keys
    /// decide the channel), over `channels` channels and `max_parallelism`
    /// key groups. A plan without keys needs exactly one channel (Flink's
    /// singleton exchange).
    pub fn new(plan: &AggPlan, channels: u32, max_parallelism: u32) -> Result<Self> {
        if channels == 0 || max_parallelism == 0 || channels > max_parallelism {
            return Err(AggError::Plan(format!(
                "an exchange over {channels} channels and {max_parallelism} key groups is not possible"
            )));
        }
        if plan.key_columns.is_empty() && channels != 1 {
            return Err(AggError::Plan(format!(
                "an aggregate without group keys runs on one subtask, not {channels}"
            )));
        }
        Ok(Self {
            key_columns: plan.key_columns.clone(),
            key_types: plan.key_types.clone(),
            max_parallelism,
            channels,
            hashes: Vec::new(),
            targets: Vec::new(),
            held: Vec::new(),
        })
    }

    /// The number of channels rows are routed to.
    pub fn channels(&self) -> u32 {
        self.channels
    }

    /// Splits `batch` by channel, rows in their order within each channel;
    /// channels without rows are left out, and the batch itself is returned
    /// when all its rows go to one channel.
    pub fn route(&mut self, batch: &RecordBatch) -> Result<Vec<(u32, RecordBatch)>> {
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(Vec::new());
        }
        if self.channels == 1 {
            return Ok(vec![(0, batch.clone())]);
        }
        let mut keys = Vec::with_capacity(self.key_columns.len());
        for &column in &self.key_columns {
            if column >= batch.num_columns() {
                return Err(AggError::Input(format!(
                    "key column {column} is missing from a batch of {} columns",
                    batch.num_columns()
                )));
            }
            keys.push(batch.column(column).clone());
        }
        self.hashes.clear();
        flink_key_hashes(&keys, &self.key_types, rows, &mut self.hashes)?;
        let (max, channels) = (self.max_parallelism, self.channels);
        self.targets.clear();
        self.targets.extend(self.hashes.iter().map(|&hash| {
            operator_index_for_key_group(max, channels, key_group_for_hash(hash, max))
        }));
        let first = self.targets[0];
        if self.targets.iter().all(|&t| t == first) {
            return Ok(vec![(first, batch.clone())]);
        }
        let mut rows_of: Vec<Vec<u32>> = vec![Vec::new(); channels as usize];
        for (row, &target) in self.targets.iter().enumerate() {
            rows_of[target as usize].push(row as u32);
        }
        let mut out = Vec::new();
        for (channel, indexes) in rows_of.into_iter().enumerate() {
            if !indexes.is_empty() {
                let indexes = UInt32Array::from(indexes);
                out.push((channel as u32, take_record_batch(batch, &indexes)?));
            }
        }
        Ok(out)
    }
}

impl ExchangeRouter {
    /// [`route`](Self::route) with in-band watermarks: `marks` are
    /// positions in `batch` (non-decreasing, at most its rows), and each
    /// part gets every mark at its own position (the part's rows before
    /// the mark's batch position).
    pub fn route_marked(&mut self, batch: &RecordBatch, marks: &[Mark]) -> Result<Vec<RoutedPart>> {
        let rows = batch.num_rows();
        let mut last = 0;
        for mark in marks {
            if (mark.position as usize) > rows || mark.position < last {
                return Err(AggError::Input(format!(
                    "in-band watermark positions must rise within the batch's {rows} rows; got {} after {last}",
                    mark.position
                )));
            }
            last = mark.position;
        }
        let parts = self.route(batch)?;
        if marks.is_empty() || parts.len() <= 1 {
            return Ok(parts
                .into_iter()
                .map(|(channel, part)| (channel, part, marks.to_vec()))
                .collect());
        }
        // Several parts: `targets` holds this batch's channels.
        let mut seen = vec![0u32; self.channels as usize];
        let mut per_channel = vec![Vec::with_capacity(marks.len()); self.channels as usize];
        let mut next = marks.iter().peekable();
        for row in 0..=rows {
            while let Some(mark) = next.next_if(|m| m.position as usize == row) {
                for (channel, out) in per_channel.iter_mut().enumerate() {
                    out.push(Mark {
                        position: seen[channel],
                        watermark: mark.watermark,
                    });
                }
            }
            if let Some(&target) = self.targets.get(row) {
                seen[target as usize] += 1;
            }
        }
        Ok(parts
            .into_iter()
            .map(|(channel, part)| {
                let marks = std::mem::take(&mut per_channel[channel as usize]);
                (channel, part, marks)
            })
            .collect())
    }

    /// Holds `batch` (of the schema of the batches held before it) for the
    /// next [`route_held`](Self::route_held), so that small batches leave as
    /// one; returns the rows held now. A batch of another schema is refused
    /// and nothing changes.
    pub fn hold(&mut self, batch: RecordBatch) -> Result<usize> {
        if let Some(first) = self.held.first() {
            if first.schema() != batch.schema() {
                return Err(AggError::Input(format!(
                    "a batch of schema {} cannot join held batches of schema {}",
                    batch.schema(),
                    first.schema()
                )));
            }
        }
        self.held.push(batch);
        Ok(self.held_rows())
    }

    /// The rows held for the next [`route_held`](Self::route_held).
    pub fn held_rows(&self) -> usize {
        self.held.iter().map(RecordBatch::num_rows).sum()
    }

    /// Routes the held batches as one batch, rows in the order they were
    /// held (as [`route`](Self::route)), and holds nothing afterwards, also
    /// when routing fails.
    pub fn route_held(&mut self) -> Result<Vec<(u32, RecordBatch)>> {
        let held = std::mem::take(&mut self.held);
        match held.as_slice() {
            [] => Ok(Vec::new()),
            [one] => self.route(one),
            [first, ..] => {
                let batch = concat_batches(&first.schema(), &held)?;
                self.route(&batch)
            }
        }
    }
}

/// The message carrying `batch` to `channel`, with its in-band
/// watermarks (positions within `batch`).
pub fn encode(channel: u32, batch: &RecordBatch, marks: &[Mark]) -> Result<Vec<u8>> {
    let count = |what: &str, n: usize| {
        i32::try_from(n).map_err(|_| AggError::Input(format!("{n} {what} do not fit a message")))
    };
    let rows = count("rows", batch.num_rows())?;
    let header = HEADER_BYTES + MARK_BYTES * marks.len();
    let mut bytes = Vec::with_capacity(header + batch.get_array_memory_size() + 512);
    bytes.extend_from_slice(&(channel as i32).to_be_bytes());
    bytes.extend_from_slice(&rows.to_be_bytes());
    bytes.extend_from_slice(&count("watermarks", marks.len())?.to_be_bytes());
    for mark in marks {
        bytes.extend_from_slice(&count("rows", mark.position as usize)?.to_be_bytes());
        bytes.extend_from_slice(&mark.watermark.to_be_bytes());
    }
    let mut writer = StreamWriter::try_new(&mut bytes, &batch.schema())?;
    writer.write(batch)?;
    writer.finish()?;
    drop(writer);
    Ok(bytes)
}

/// The big-endian `i32` at `at` (the caller checked the length).
fn word(message: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([
        message[at],
        message[at + 1],
        message[at + 2],
        message[at + 3],
    ])
}

/// The channel and row count in a message's header.
pub fn header(message: &[u8]) -> Result<(u32, usize)> {
    if message.len() < HEADER_BYTES {
        return Err(AggError::Input(format!(
            "an exchange message of {} bytes has no header",
            message.len()
        )));
    }
    let (channel, rows) = (word(message, 0), word(message, 4));
    if channel < 0 || rows < 0 {
        return Err(AggError::Input(format!(
            "an exchange message names channel {channel} and {rows} rows"
        )));
    }
    Ok((channel as u32, rows as usize))
}

/// The number of in-band watermarks a message announces, checked against
/// its length.
fn mark_count(message: &[u8]) -> Result<usize> {
    header(message)?;
    let count = word(message, 8);
    usize::try_from(count)
        .ok()
        .filter(|&n| n <= (message.len() - HEADER_BYTES) / MARK_BYTES)
        .ok_or_else(|| {
            AggError::Input(format!(
                "an exchange message of {} bytes announces {count} watermarks",
                message.len()
            ))
        })
}

/// The in-band watermarks of a message, checked against its rows.
pub fn marks(message: &[u8]) -> Result<Vec<Mark>> {
    let (_, rows) = header(message)?;
    let count = mark_count(message)?;
    let mut marks = Vec::with_capacity(count);
    let mut last = 0;
    for m in 0..count {
        let at = HEADER_BYTES + m * MARK_BYTES;
        let position = word(message, at);
        let mut watermark = [0u8; 8];
        watermark.copy_from_slice(&message[at + 4..at + 12]);
        if position < last || position as usize > rows {
            return Err(AggError::Input(format!(
                "an exchange message of {rows} rows puts watermark {m} at row {position}"
            )));
        }
        last = position;
        marks.push(Mark {
            position: position as u32,
            watermark: i64::from_be_bytes(watermark),
        });
    }
    Ok(marks)
}

/// The batch a message carries.
pub fn decode(message: &[u8]) -> Result<RecordBatch> {
    let (_, rows) = header(message)?;
    // The watermarks are checked too: a message is used whole or not at all.
    let start = HEADER_BYTES + MARK_BYTES * marks(message)?.len();
    let mut reader = StreamReader::try_new(Cursor::new(&message[start..]), None)?;
    let batch = reader
        .next()
        .ok_or_else(|| AggError::Input("an exchange message holds no batch".into()))??;
    if batch.num_rows() != rows {
        return Err(AggError::Input(format!(
            "an exchange message announces {rows} rows but holds {}",
            batch.num_rows()
        )));
    }
    Ok(batch)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, Int32Array, Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::flink_key::key_hashes;
    use crate::plan::Emission;
    use crate::types::{InputMode, Phase};

    fn plan(key_types: Vec<SqlType>) -> AggPlan {
        AggPlan {
            key_columns: (0..key_types.len()).collect(),
            key_types,
            calls: Vec::new(),
            phase: Phase::Single,
            input: InputMode::InsertOnly,
            emission: Emission::Immediate,
            generate_update_before: true,
            state_ttl_ms: 0,
            memory_budget_bytes: 1 << 20,
            max_parallelism: 128,
            count_star_column: None,
            views: Vec::new(),
            final_key: None,
            window: None,
            jit: Default::default(),
        }
    }

    fn batch(n: i64) -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        let keys: Int64Array = (0..n)
            .map(|i| if i % 7 == 3 { None } else { Some(i * 31) })
            .collect();
        let strings: StringArray = (0..n).map(|i| Some(format!("v{i}"))).collect();
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(keys), Arc::new(strings)]).unwrap()
    }

    #[test]
    fn routes_each_row_to_the_subtask_owning_its_key_group() {
        let input = batch(500);
        let mut router = ExchangeRouter::new(&plan(vec![SqlType::of("BIGINT")]), 3, 128).unwrap();
        let routed = router.route(&input).unwrap();
        let mut hashes = Vec::new();
        key_hashes(
            &[input.column(0).clone()],
            &[SqlType::of("BIGINT")],
            &mut hashes,
        )
        .unwrap();
        let mut expected: Vec<Vec<i64>> = vec![Vec::new(); 3];
        for (row, hash) in hashes.iter().enumerate() {
            let channel = operator_index_for_key_group(128, 3, key_group_for_hash(*hash, 128));
            expected[channel as usize].push(row as i64);
        }
        let mut seen = 0;
        for (channel, part) in &routed {
            let strings = part
                .column(1)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            let rows: Vec<i64> = (0..part.num_rows())
                .map(|i| strings.value(i)[1..].parse().unwrap())
                .collect();
            assert_eq!(rows, expected[*channel as usize], "channel {channel}");
            seen += part.num_rows();
        }
        assert_eq!(seen, 500);
        assert_eq!(routed.len(), 3);
    }

    #[test]
    fn in_band_watermarks_keep_their_place_among_each_channels_rows() {
        let input = batch(200);
        let mut router = ExchangeRouter::new(&plan(vec![SqlType::of("BIGINT")]), 3, 128).unwrap();
        let at = [0u32, 0, 1, 57, 57, 130, 200];
        let marks: Vec<Mark> = at
            .iter()
            .enumerate()
            .map(|(i, &position)| Mark {
                position,
                watermark: 10 * i as i64,
            })
            .collect();
        let routed = router.route_marked(&input, &marks).unwrap();
        assert_eq!(routed.len(), 3);
        let strings = |part: &RecordBatch| -> Vec<u32> {
            let column = part
                .column(1)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            (0..part.num_rows())
                .map(|i| column.value(i)[1..].parse().unwrap())
                .collect()
        };
        for (channel, part, part_marks) in &routed {
            let rows = strings(part);
            assert_eq!(part_marks.len(), marks.len(), "channel {channel}");
            for (mark, own) in marks.iter().zip(part_marks) {
                assert_eq!(own.watermark, mark.watermark);
                // The rows of this channel before the mark are exactly those
                // the batch had before it.
                let before = rows.iter().filter(|&&r| r < mark.position).count();
                assert_eq!(own.position as usize, before, "channel {channel}, {mark:?}");
            }
        }
        let mut single = ExchangeRouter::new(&plan(vec![SqlType::of("BIGINT")]), 1, 128).unwrap();
        assert_eq!(
            single.route_marked(&input, &marks).unwrap(),
            vec![(0, input.clone(), marks.clone())]
        );
        let backwards = [marks[3], marks[2]];
        assert!(router.route_marked(&input, &backwards).is_err());
        let beyond = [Mark {
            position: 201,
            watermark: 0,
        }];
        assert!(router.route_marked(&input, &beyond).is_err());
    }

    #[test]
    fn one_channel_or_one_target_keeps_the_batch_whole() {
        let input = batch(10);
        let mut single = ExchangeRouter::new(&plan(vec![SqlType::of("BIGINT")]), 1, 128).unwrap();
        assert_eq!(single.route(&input).unwrap(), vec![(0, input.clone())]);
        let same_key = input.slice(1, 1);
        let mut many = ExchangeRouter::new(&plan(vec![SqlType::of("BIGINT")]), 4, 128).unwrap();
        let routed = many.route(&same_key).unwrap();
        assert_eq!(routed.len(), 1);
        assert_eq!(routed[0].1, same_key);
        assert!(many.route(&input.slice(0, 0)).unwrap().is_empty());
    }

    #[test]
    fn held_batches_leave_as_one_in_their_order() {
        let input = batch(300);
        let mut router = ExchangeRouter::new(&plan(vec![SqlType::of("BIGINT")]), 3, 128).unwrap();
        let whole = router.route(&input).unwrap();
        assert_eq!(router.hold(input.slice(0, 100)).unwrap(), 100);
        assert_eq!(router.hold(input.slice(100, 1)).unwrap(), 101);
        assert_eq!(router.hold(input.slice(101, 199)).unwrap(), 300);
        assert_eq!(router.route_held().unwrap(), whole);
        assert_eq!(router.held_rows(), 0);
        assert!(router.route_held().unwrap().is_empty());
        router.hold(input.slice(0, 5)).unwrap();
        let other = RecordBatch::try_from_iter([(
            "k",
            Arc::new(Int64Array::from(vec![1, 2])) as Arc<dyn Array>,
        )])
        .unwrap();
        assert!(router
            .hold(other)
            .unwrap_err()
            .to_string()
            .contains("cannot join"));
        assert_eq!(router.held_rows(), 5);
    }

    #[test]
    fn messages_round_trip_with_their_header() {
        let input = batch(100).slice(10, 50);
        let message = encode(5, &input, &[]).unwrap();
        assert_eq!(header(&message).unwrap(), (5, 50));
        assert_eq!(decode(&message).unwrap(), input);
        assert!(marks(&message).unwrap().is_empty());
        let marked = [(0, -7), (20, i64::MIN), (50, i64::MAX)].map(|(position, watermark)| Mark {
            position,
            watermark,
        });
        let message = encode(5, &input, &marked).unwrap();
        assert_eq!(header(&message).unwrap(), (5, 50));
        assert_eq!(marks(&message).unwrap(), marked);
        assert_eq!(decode(&message).unwrap(), input);
        let empty = encode(0, &input.slice(0, 0), &[]).unwrap();
        assert_eq!(decode(&empty).unwrap().num_rows(), 0);
    }

    #[test]
    fn bad_messages_and_exchanges_are_errors() {
        assert!(decode(&[0, 0, 0]).is_err());
        let mark = |position| Mark {
            position,
            watermark: 1,
        };
        let mut message = encode(0, &batch(4), &[mark(1), mark(3)]).unwrap();
        message[HEADER_BYTES + 3] = 5;
        assert!(decode(&message)
            .unwrap_err()
            .to_string()
            .contains("watermark 0 at row 5"));
        message[HEADER_BYTES + 3] = 1;
        message[11] = 99;
        assert!(decode(&message)
            .unwrap_err()
            .to_string()
            .contains("announces 99 watermarks"));
        let mut message = encode(0, &batch(4), &[]).unwrap();
        message[7] = 9;
        assert!(decode(&message)
            .unwrap_err()
            .to_string()
            .contains("announces 9 rows"));
        message.truncate(40);
        assert!(decode(&message).is_err());
        assert!(ExchangeRouter::new(&plan(Vec::new()), 2, 128).is_err());
        assert!(ExchangeRouter::new(&plan(vec![SqlType::of("INT")]), 0, 128).is_err());
        let ints = RecordBatch::try_from_iter([(
            "k",
            Arc::new(Int32Array::from(vec![1, 2])) as Arc<dyn Array>,
        )])
        .unwrap();
        let mut router =
            ExchangeRouter::new(&plan(vec![SqlType::of("INT"), SqlType::of("INT")]), 2, 128)
                .unwrap();
        assert!(router
            .route(&ints)
            .unwrap_err()
            .to_string()
            .contains("key column 1"));
    }
}
