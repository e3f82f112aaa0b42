//! Machinery of the table-driven golden operator snapshots
//! (`golden_snapshot.rs`): a [`Case`] names a plan and its input as text,
//! this module turns the text into batches, runs operators, renders their
//! changelog, reads and writes the golden files and checks restores.
//!
//! # Input text
//!
//! A case's input is a list of bundles, a bundle a list of batches, a batch
//! one string of rows separated by `;`, a row cells separated by `,`
//! (cells are trimmed). A row may start with its row kind (`+I`, `-U`, `+U`,
//! `-D`); a batch whose rows do, gets a `$row_kind` column. Cells:
//!
//! - `NULL` is NULL; `''` is the empty string; any other text of a string
//!   column is the string itself;
//! - integers and floats as Rust parses them (`NaN`, `inf`, `-0.0`);
//! - DECIMAL as `-12.345` (at most the column's scale in digits);
//! - DATE as `2024-02-29`; TIMESTAMP as `2024-02-29 12:34:56.123456789`
//!   (up to 9 fraction digits, at most 3 for TIMESTAMP(0..3));
//! - BOOLEAN as `true` / `false`.
//!
//! Output rows are rendered as Flink prints them, `+U[key, v1, v2]`, with
//! values spelled as the input cells are (strings unquoted).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use aggforge_runtime::flink_key::{
    hash_bytes_by_words, key_group_for_hash, key_group_range_for_operator, key_hashes,
    KeyRowEncoder,
};
use aggforge_runtime::kernel::timestamp::timestamp_fields;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{arrow_type, AggPlan, Emission};
use aggforge_runtime::snapshot::SNAPSHOT_VERSION;
use aggforge_runtime::types::{InputMode, Phase, RowKind, SqlType};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMillisecondType,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, Int8Array, RecordBatch, StringArray, StructArray,
    TimestampMillisecondArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, TimeUnit};
use arrow_select::filter::filter_record_batch;

use crate::common::{batch, batch_with_kinds, call, two_phase_plans};

/// The snapshot format version the golden files of the case table hold.
pub const GOLDEN_VERSION: u16 = 1;

/// Which operator a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// Single phase, one changelog row per input row.
    Immediate,
    /// Single phase, mini-batch: changelog at each flush.
    MiniBatch,
    /// Global phase of a two-phase plan: input rows are partials.
    Global,
}

/// One golden case: a plan, the input before the snapshot, the input
/// after the restore.
pub struct Case {
    /// File stem after `v1_`: `v1_<name>.bin`, `v1_<name>.expected.txt`.
    pub name: &'static str,
    /// The operator.
    pub mode: Mode,
    /// Insert-only or retracting input.
    pub input: InputMode,
    /// The plan's max parallelism (number of key groups).
    pub max_parallelism: u32,
    /// SQL types of the key columns (input columns `0..keys.len()`).
    pub keys: &'static [&'static str],
    /// SQL types of the argument columns; in single-phase input they
    /// follow the keys. The global phase reads partials instead (see
    /// [`Case::input_types`]) but the calls keep these argument types.
    pub args: &'static [&'static str],
    /// The calls, comma-separated: `COUNT_STAR`, or a function and the
    /// index into `args` of its argument, `SUM(1)`.
    pub calls: &'static str,
    /// Bundles fed before the snapshot (each flushed).
    pub before: &'static [&'static [&'static str]],
    /// Bundles fed after the restore (each flushed).
    pub after: &'static [&'static [&'static str]],
}

/// An operator snapshot: one payload per key group.
pub type Payloads = Vec<(u16, Vec<u8>)>;

/// One rendered changelog row and its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The key fields, as rendered in the row.
    pub key: String,
    /// The whole row, `+I[k, v]`.
    pub line: String,
}

fn sql(text: &str) -> SqlType {
    text.parse()
        .unwrap_or_else(|e| panic!("bad SQL type {text}: {e}"))
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden/operators")
}

/// Every `.bin` file name in the operators golden folder.
pub fn golden_bin_files() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(golden_dir())
        .expect("tests/data/golden/operators exists")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bin"))
        .collect();
    names.sort();
    names
}

impl Case {
    /// Path of the snapshot file.
    pub fn bin_path(&self) -> PathBuf {
        golden_dir().join(format!("v{GOLDEN_VERSION}_{}.bin", self.name))
    }

    /// Path of the expected changelog after the restore.
    pub fn expected_path(&self) -> PathBuf {
        golden_dir().join(format!("v{GOLDEN_VERSION}_{}.expected.txt", self.name))
    }

    /// The single-phase plan of the case (keys, then argument columns).
    pub fn single_plan(&self) -> AggPlan {
        let nkeys = self.keys.len();
        let calls = self
            .calls
            .split(',')
            .map(|c| {
                let c = c.trim();
                // `F(i)`, or `F(i j)` for a call with two arguments.
                let (function, args) = match c.strip_suffix(')').and_then(|c| c.split_once('(')) {
                    Some((function, indexes)) => (
                        function,
                        indexes
                            .split_whitespace()
                            .map(|i| i.parse::<usize>().unwrap())
                            .collect(),
                    ),
                    None => (c, Vec::new()),
                };
                let mut call = call(function, None);
                call.args = args.iter().map(|a| nkeys + a).collect();
                call.arg_types = args.iter().map(|&a| sql(self.args[a])).collect();
                call
            })
            .collect();
        AggPlan {
            key_columns: (0..nkeys).collect(),
            key_types: self.keys.iter().map(|k| sql(k)).collect(),
            calls,
            phase: Phase::Single,
            input: self.input,
            emission: match self.mode {
                Mode::Immediate => Emission::Immediate,
                _ => Emission::MiniBatch,
            },
            generate_update_before: true,
            state_ttl_ms: 0,
            memory_budget_bytes: 64 << 20,
            max_parallelism: self.max_parallelism,
            count_star_column: None,
            views: Vec::new(),
            final_key: None,
            window: None,
            jit: Default::default(),
        }
    }

    /// The plan of the operator the case snapshots.
    pub fn plan(&self) -> AggPlan {
        match self.mode {
            Mode::Global => two_phase_plans(&self.single_plan()).1,
            _ => self.single_plan(),
        }
    }

    /// A fresh operator of the case's plan.
    pub fn operator(&self) -> GroupAggOperator {
        GroupAggOperator::new(self.plan())
            .unwrap_or_else(|e| panic!("{}: plan not admitted: {e}", self.name))
    }

    /// Arrow types of the input columns: keys and arguments, or for the
    /// global phase keys and the partial columns the local phase emits
    /// (each call's, then over retracting input without COUNT(*) the
    /// record-counting COUNT(*) partial).
    pub fn input_types(&self) -> Vec<DataType> {
        match self.mode {
            Mode::Global => {
                let local = GroupAggOperator::new(two_phase_plans(&self.single_plan()).0)
                    .unwrap_or_else(|e| panic!("{}: local plan not admitted: {e}", self.name));
                let schema = local.output_schema();
                let n = schema.fields().len() - 1;
                (0..n)
                    .map(|i| schema.field(i).data_type().clone())
                    .collect()
            }
            _ => self
                .keys
                .iter()
                .chain(self.args)
                .map(|t| arrow_type(&sql(t)))
                .collect(),
        }
    }

    /// The batch a text of rows stands for.
    pub fn batch(&self, text: &str) -> RecordBatch {
        let types = self.input_types();
        let mut kinds = Vec::new();
        let mut cells: Vec<Vec<&str>> = vec![Vec::new(); types.len()];
        for row in text.split(';').map(str::trim).filter(|r| !r.is_empty()) {
            let (kind, rest) = match row.split_at_checked(2) {
                Some((k, rest)) if ["+I", "-U", "+U", "-D"].contains(&k) => (Some(k), rest),
                _ => (None, row),
            };
            kinds.push(kind);
            let values: Vec<&str> = rest.split(',').map(str::trim).collect();
            assert_eq!(
                values.len(),
                types.len(),
                "{}: row '{row}' has {} cells, the input has {} columns",
                self.name,
                values.len(),
                types.len()
            );
            for (column, value) in cells.iter_mut().zip(values) {
                column.push(value);
            }
        }
        let columns: Vec<ArrayRef> = types
            .iter()
            .zip(&cells)
            .map(|(t, c)| parse_column(t, c))
            .collect();
        if kinds.iter().all(Option::is_none) {
            return batch(columns);
        }
        let codes = kinds
            .iter()
            .map(
                |k| match k.expect("every row of a batch with row kinds has one") {
                    "+I" => RowKind::Insert as i8,
                    "-U" => RowKind::UpdateBefore as i8,
                    "+U" => RowKind::UpdateAfter as i8,
                    _ => RowKind::Delete as i8,
                },
            )
            .collect();
        batch_with_kinds(columns, codes)
    }

    /// Feeds `bundles` (each batch processed, each bundle flushed) and
    /// returns the changelog. `route` keeps only the rows it accepts.
    pub fn run(
        &self,
        op: &mut GroupAggOperator,
        bundles: &[&[&str]],
        route: Option<&dyn Fn(&RecordBatch) -> RecordBatch>,
    ) -> Vec<Row> {
        let mut out = Vec::new();
        for bundle in bundles {
            for text in *bundle {
                let mut input = self.batch(text);
                if let Some(route) = route {
                    input = route(&input);
                }
                let emitted = op
                    .process(&input)
                    .unwrap_or_else(|e| panic!("{}: process failed: {e}", self.name));
                out.extend(emitted.map(|b| self.render(&b)).unwrap_or_default());
            }
            let flushed = op
                .flush()
                .unwrap_or_else(|e| panic!("{}: flush failed: {e}", self.name));
            out.extend(flushed.map(|b| self.render(&b)).unwrap_or_default());
        }
        out
    }

    /// Output rows as `+I[k, v1, v2]`.
    pub fn render(&self, output: &RecordBatch) -> Vec<Row> {
        let n = output.num_columns() - 1;
        let kinds = output.column(n).as_primitive::<Int8Type>();
        (0..output.num_rows())
            .map(|r| {
                let kind = RowKind::from_i8(kinds.value(r)).unwrap().short_string();
                let fields: Vec<String> =
                    (0..n).map(|c| render_value(output.column(c), r)).collect();
                Row {
                    key: fields[..self.keys.len()].join(", "),
                    line: format!("{kind}[{}]", fields.join(", ")),
                }
            })
            .collect()
    }

    /// Runs an uninterrupted operator over the whole input: the snapshot
    /// it takes between `before` and `after`, and the changelog `after`
    /// causes.
    pub fn uninterrupted(&self) -> (Payloads, Vec<Row>) {
        let mut op = self.operator();
        self.run(&mut op, self.before, None);
        let payloads = op.snapshot().unwrap();
        (payloads, self.run(&mut op, self.after, None))
    }

    /// Restores `payloads` into a fresh operator of the case's plan and
    /// returns it with its own snapshot taken right after the restore.
    fn restored(
        &self,
        payloads: &[(u16, Vec<u8>)],
    ) -> Result<(GroupAggOperator, Payloads), String> {
        let mut op = self.operator();
        op.restore(payloads)
            .map_err(|e| format!("{}: restore failed: {e}", self.name))?;
        let again = op.snapshot().unwrap();
        Ok((op, again))
    }

    /// Checks the case's golden files: the snapshot restores into a fresh
    /// operator, which continues with exactly the expected changelog, which
    /// is also what an uninterrupted run produces.
    pub fn check(&self) -> Result<(), String> {
        let name = self.name;
        let bytes = std::fs::read(self.bin_path()).map_err(|e| {
            format!(
                "{name}: cannot read {}: {e}; run the ignored writer test",
                self.bin_path().display()
            )
        })?;
        let expected = std::fs::read_to_string(self.expected_path()).map_err(|e| {
            format!(
                "{name}: cannot read {}: {e}; run the ignored writer test",
                self.expected_path().display()
            )
        })?;
        let payloads = decode_container(&bytes)?;
        if payloads.is_empty() {
            return Err(format!("{name}: the golden snapshot holds no key group"));
        }
        let (mut op, again) = self.restored(&payloads)?;
        let got = changelog_text(&self.run(&mut op, self.after, None));
        if got != expected {
            return Err(format!(
                "{name}: the changelog after restoring the golden snapshot differs at {}\n\
                 --- expected ({})\n{expected}--- got\n{got}",
                first_difference(&expected, &got),
                self.expected_path().display()
            ));
        }
        let (written, whole) = self.uninterrupted();
        let whole = changelog_text(&whole);
        if whole != expected {
            return Err(format!(
                "{name}: an uninterrupted run no longer ends with the expected changelog \
                 (differs at {})\n--- expected\n{expected}--- uninterrupted\n{whole}",
                first_difference(&expected, &whole)
            ));
        }
        // While this build writes the golden files' format, the state
        // round-trips byte for byte and today's run writes the same bytes.
        if SNAPSHOT_VERSION == GOLDEN_VERSION {
            if again != payloads {
                return Err(format!(
                    "{name}: the restored operator snapshots to other bytes than it restored"
                ));
            }
            if written != payloads {
                return Err(format!(
                    "{name}: the uninterrupted run's snapshot differs from the golden file"
                ));
            }
        }
        // Flink cannot change the max parallelism of keyed state.
        let mut other = self.plan();
        other.max_parallelism = if other.max_parallelism == 128 {
            256
        } else {
            128
        };
        let mut op = GroupAggOperator::new(other).unwrap();
        if op.restore(&payloads).is_ok() || op.num_groups() != 0 {
            return Err(format!(
                "{name}: restored at another max parallelism, which must be refused"
            ));
        }
        Ok(())
    }

    /// Checks a rescaled restore: `parallelism` subtasks each restore the
    /// key groups of their range and get the after-input rows of their
    /// keys; together they hold every group, and each key's changelog is
    /// the expected one (rows of different keys interleave differently).
    /// Returns how many subtasks restored some state.
    pub fn check_rescaled(&self, parallelism: u32) -> Result<usize, String> {
        let name = self.name;
        let bytes = std::fs::read(self.bin_path()).map_err(|e| format!("{name}: {e}"))?;
        let payloads = decode_container(&bytes)?;
        let (_, whole) = self.uninterrupted();
        let (mut total, mut holding) = (0, 0);
        let mut got: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let max = self.max_parallelism;
        for index in 0..parallelism {
            let range = key_group_range_for_operator(max, parallelism, index).unwrap();
            let mine: Payloads = payloads
                .iter()
                .filter(|(kg, _)| range.contains(*kg))
                .cloned()
                .collect();
            let (mut op, again) = self.restored(&mine)?;
            if again != mine {
                return Err(format!(
                    "{name}: subtask {index}/{parallelism} snapshots to other bytes than it restored"
                ));
            }
            total += op.num_groups();
            holding += usize::from(op.num_groups() > 0);
            let key_types = self.plan().key_types;
            let route = |b: &RecordBatch| {
                let keep: Vec<bool> = key_groups_of(b, &key_types, max)
                    .into_iter()
                    .map(|kg| range.contains(kg))
                    .collect();
                filter_record_batch(b, &BooleanArray::from(keep)).unwrap()
            };
            for row in self.run(&mut op, self.after, Some(&route)) {
                got.entry(row.key).or_default().push(row.line);
            }
        }
        let (op, _) = self.restored(&payloads)?;
        if total != op.num_groups() {
            return Err(format!(
                "{name}: {parallelism} subtasks restored {total} groups, one restores {}",
                op.num_groups()
            ));
        }
        let mut want: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for row in whole {
            want.entry(row.key).or_default().push(row.line);
        }
        if got != want {
            return Err(format!(
                "{name}: at parallelism {parallelism} the per-key changelogs differ\n\
                 expected {want:#?}\ngot {got:#?}"
            ));
        }
        Ok(holding)
    }
}

/// The key group of each row of an input batch (keys are its first
/// columns).
fn key_groups_of(input: &RecordBatch, key_types: &[SqlType], max_parallelism: u32) -> Vec<u16> {
    let keys = &input.columns()[..key_types.len()];
    let mut hashes = Vec::new();
    if keys.is_empty() {
        // The hash of the empty key row: every row is the one group.
        let mut row = Vec::new();
        KeyRowEncoder::new(&[], &[]).unwrap().write_row(0, &mut row);
        hashes = vec![hash_bytes_by_words(&row); input.num_rows()];
    } else {
        key_hashes(keys, key_types, &mut hashes).unwrap();
    }
    hashes
        .into_iter()
        .map(|h| key_group_for_hash(h, max_parallelism))
        .collect()
}

/// Where two changelog texts first differ, for failure messages.
fn first_difference(expected: &str, got: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    let show = |l: Option<&&str>| l.map_or("<end>".to_string(), |l| l.to_string());
    match (0..e.len().max(g.len())).find(|&i| e.get(i) != g.get(i)) {
        Some(i) => format!(
            "line {}: expected {} got {}",
            i + 1,
            show(e.get(i)),
            show(g.get(i))
        ),
        None => "no line".into(),
    }
}

/// The expected-file text of a changelog: one row per line.
pub fn changelog_text(rows: &[Row]) -> String {
    rows.iter().map(|r| format!("{}\n", r.line)).collect()
}

/// The golden container: per key group `u16 key group LE, u32 payload
/// length LE, payload`.
pub fn encode_container(payloads: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (kg, bytes) in payloads {
        out.extend_from_slice(&kg.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

/// Reads the golden container; a truncated one is an error.
pub fn decode_container(mut bytes: &[u8]) -> Result<Payloads, String> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < 6 {
            return Err(format!("truncated container: {} header bytes", bytes.len()));
        }
        let kg = u16::from_le_bytes([bytes[0], bytes[1]]);
        let len = u32::from_le_bytes([bytes[2], bytes[3], bytes[4], bytes[5]]) as usize;
        let payload = bytes
            .get(6..6 + len)
            .ok_or_else(|| format!("truncated container: key group {kg} needs {len} bytes"))?;
        out.push((kg, payload.to_vec()));
        bytes = &bytes[6 + len..];
    }
    Ok(out)
}

fn cell<T>(text: &str, parse: impl FnOnce(&str) -> Option<T>) -> Option<T> {
    if text == "NULL" {
        return None;
    }
    Some(parse(text).unwrap_or_else(|| panic!("cannot parse cell '{text}'")))
}

fn column<T>(cells: &[&str], parse: impl Fn(&str) -> Option<T>) -> Vec<Option<T>> {
    cells.iter().map(|c| cell(c, &parse)).collect()
}

pub(crate) fn parse_column(data_type: &DataType, cells: &[&str]) -> ArrayRef {
    fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
        s.parse().ok()
    }
    match data_type {
        DataType::Int8 => Arc::new(Int8Array::from(column(cells, num::<i8>))),
        DataType::Int16 => Arc::new(Int16Array::from(column(cells, num::<i16>))),
        DataType::Int32 => Arc::new(Int32Array::from(column(cells, num::<i32>))),
        DataType::Int64 => Arc::new(Int64Array::from(column(cells, num::<i64>))),
        DataType::Float32 => Arc::new(Float32Array::from(column(cells, num::<f32>))),
        DataType::Float64 => Arc::new(Float64Array::from(column(cells, num::<f64>))),
        DataType::Boolean => Arc::new(BooleanArray::from(column(cells, num::<bool>))),
        DataType::Utf8 => Arc::new(StringArray::from(column(cells, |s| {
            // '' is the empty string; `{comma}` stands for a comma, which
            // separates cells.
            Some(if s == "''" {
                String::new()
            } else {
                s.replace("{comma}", ",")
            })
        }))),
        DataType::Decimal128(p, s) => {
            let values = column(cells, |c| {
                arrow_cast::parse::parse_decimal::<Decimal128Type>(c, *p, *s).ok()
            });
            Arc::new(
                Decimal128Array::from(values)
                    .with_precision_and_scale(*p, *s)
                    .unwrap(),
            )
        }
        DataType::Date32 => Arc::new(Date32Array::from(column(cells, |c| {
            parse_date(c).map(|d| d as i32)
        }))),
        DataType::Timestamp(TimeUnit::Millisecond, None) => {
            Arc::new(TimestampMillisecondArray::from(column(cells, |c| {
                parse_timestamp(c).filter(|t| t.1 == 0).map(|t| t.0)
            })))
        }
        DataType::Struct(fields) if fields.len() == 3 && fields[1].name() == "mapSize" => {
            super::golden_accumulators::counted_accumulator(fields, cells)
        }
        DataType::Struct(fields) if fields[0].name() == "list" => {
            super::golden_accumulators::list_accumulator(fields, cells)
        }
        DataType::Struct(_) => {
            let values = column(cells, parse_timestamp);
            let millis: Vec<i64> = values.iter().map(|v| v.map_or(0, |t| t.0)).collect();
            let nanos: Vec<i32> = values.iter().map(|v| v.map_or(0, |t| t.1)).collect();
            let valid = NullBuffer::from(values.iter().map(Option::is_some).collect::<Vec<_>>());
            Arc::new(
                StructArray::try_new(
                    timestamp_fields(),
                    vec![
                        Arc::new(Int64Array::from(millis)),
                        Arc::new(Int32Array::from(nanos)),
                    ],
                    Some(valid),
                )
                .unwrap(),
            )
        }
        other => panic!("no cell syntax for {other}"),
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// (year, month, day) of days since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then(|| days_from_civil(y, m, d))
}

/// `YYYY-MM-DD HH:MM:SS[.fraction]` as (epoch millis, nano of milli).
fn parse_timestamp(text: &str) -> Option<(i64, i32)> {
    let (date, time) = text.split_once(' ')?;
    let (hms, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut parts = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos: i64 = format!("{fraction:0<9}").parse().ok()?;
    let millis =
        parse_date(date)? * 86_400_000 + (h * 3600 + m * 60 + s) * 1000 + nanos / 1_000_000;
    Some((millis, (nanos % 1_000_000) as i32))
}

fn render_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

fn render_timestamp(millis: i64, nano_of_milli: i32, digits: usize) -> String {
    let day = millis.div_euclid(86_400_000);
    let ms = millis.rem_euclid(86_400_000);
    let secs = ms / 1000;
    let nanos = (ms % 1000) * 1_000_000 + i64::from(nano_of_milli);
    let fraction = format!("{nanos:09}");
    format!(
        "{} {:02}:{:02}:{:02}.{}",
        render_date(day),
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        &fraction[..digits]
    )
}

/// One value of an output column, spelled as input cells are.
pub fn render_value(column: &ArrayRef, row: usize) -> String {
    if column.is_null(row) {
        return "NULL".into();
    }
    match column.data_type() {
        DataType::Int8 => column.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => column.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => column.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => column.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Float32 => format!("{:?}", column.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => format!("{:?}", column.as_primitive::<Float64Type>().value(row)),
        DataType::Decimal128(_, _) => column.as_primitive::<Decimal128Type>().value_as_string(row),
        DataType::Date32 => render_date(i64::from(column.as_primitive::<Date32Type>().value(row))),
        DataType::Timestamp(TimeUnit::Millisecond, None) => {
            let millis = column.as_primitive::<TimestampMillisecondType>().value(row);
            render_timestamp(millis, 0, 3)
        }
        DataType::Struct(_) => {
            let s = column.as_struct();
            let millis = s.column(0).as_primitive::<Int64Type>().value(row);
            let nanos = s.column(1).as_primitive::<Int32Type>().value(row);
            render_timestamp(millis, nanos, 9)
        }
        DataType::Utf8 => column.as_string::<i32>().value(row).to_string(),
        DataType::Boolean => column.as_boolean().value(row).to_string(),
        other => panic!("no rendering for {other}"),
    }
}

#[test]
fn cell_syntax_round_trips() {
    for text in [
        "1970-01-01 00:00:00.000000000",
        "1969-12-31 23:59:59.999999999",
        "2024-02-29 12:34:56.123456789",
        "9999-12-31 23:59:59.999999999",
        "0001-01-01 00:00:00.000000001",
    ] {
        let (millis, nanos) = parse_timestamp(text).unwrap();
        assert_eq!(render_timestamp(millis, nanos, 9), text);
    }
    assert_eq!(
        parse_timestamp("1969-12-31 23:59:59.999999999"),
        Some((-1, 999_999))
    );
    assert_eq!(parse_date("2000-03-01"), Some(11017));
    assert_eq!(render_date(-719162), "0001-01-01");
}
