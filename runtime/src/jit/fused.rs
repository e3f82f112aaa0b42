//! A plan's fused loop as the operators run it: which calls it covers,
//! binding a batch's columns and the calls' state to the compiled code,
//! and the compiled variants (one per pattern of columns with NULLs and
//! of row kinds).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Array, ArrayRef, BooleanArray};
use arrow_buffer::BooleanBuffer;
use arrow_schema::DataType;

use super::emit::{compile, CallShape, ColumnShape, Compiled, Shape};
use super::Type;
use crate::accumulator::GroupAccumulator;
use crate::error::{AggError, Result};
use crate::plan::AggCall;
use crate::types::JitMode;

/// The fewest fused calls for which `auto` runs the loop: with one call the
/// static kernel is the same loop (benches/RESULTS.md, "The JIT").
pub const AUTO_MIN_CALLS: usize = 2;

/// Bytes of fused state beyond which `auto` folds a batch with the static
/// kernels. Measured (benches/RESULTS.md, "The JIT"): the fused loop wins at
/// 1,024 keys (q17's list: 76 KiB of state) and loses at 16,384 keys (MIN
/// and MAX: 288 KiB) and at 1M keys, where each row's updates miss in
/// several state columns at once.
pub const AUTO_MAX_STATE_BYTES: usize = 128 << 10;

/// A plan's fused calls and their compiled loops.
#[derive(Debug)]
pub struct Fused {
    /// Operator call index of each fused call, in loop order.
    calls: Vec<usize>,
    /// By operator call: whether the loop covers it.
    covered: Vec<bool>,
    /// Per distinct argument column: an operator call reading it as its
    /// only argument.
    columns: Vec<usize>,
    /// Per distinct FILTER column: an operator call filtered by it.
    filters: Vec<usize>,
    /// The loop's shape with no column NULL; variants set `nullable`.
    shape: Shape,
    /// Compiled loops by pattern (which columns and filters have NULLs,
    /// whether the rows carry row kinds).
    variants: HashMap<Vec<bool>, Arc<Compiled>>,
    /// Time spent compiling the variants this operator compiled.
    compile_time: Duration,
    /// `auto`: batches over more than [`AUTO_MAX_STATE_BYTES`] of state
    /// run the static kernels.
    auto: bool,
    /// Bytes of fused state per group.
    state_bytes_per_group: usize,
    /// Whether the input retracts: batches with row kinds take the loop
    /// variant that reads them.
    retracting: bool,
}

/// What became of a plan's JIT: the fused loop, or why the static kernels
/// run, for EXPLAIN-like reports and the operator's log.
#[derive(Debug)]
pub struct Planned {
    /// The fused loop, when one runs.
    pub fused: Option<Fused>,
    /// `fused N of M calls (...)`, or `static: <reason>`.
    pub status: String,
}

fn static_kernels(reason: impl Into<String>) -> Planned {
    Planned {
        fused: None,
        status: format!("static: {}", reason.into()),
    }
}

impl Fused {
    /// Chooses the calls to fuse and compiles the loop for batches without
    /// NULLs. `arg_types` are the calls' argument Arrow types; over
    /// `retracting` input only calls with a retraction fuse.
    pub fn plan(
        mode: JitMode,
        calls: &[AggCall],
        accs: &[Box<dyn GroupAccumulator>],
        arg_types: &[Vec<DataType>],
        retracting: bool,
    ) -> Planned {
        if mode == JitMode::Off {
            return static_kernels("table.exec.aggforge.jit is off");
        }
        let mut fused = Fused {
            calls: Vec::new(),
            covered: vec![false; calls.len()],
            columns: Vec::new(),
            filters: Vec::new(),
            shape: Shape::default(),
            variants: HashMap::new(),
            compile_time: Duration::ZERO,
            auto: mode == JitMode::Auto,
            state_bytes_per_group: 0,
            retracting,
        };
        let mut column_of: HashMap<usize, usize> = HashMap::new();
        let mut filter_of: HashMap<usize, usize> = HashMap::new();
        for (c, (call, acc)) in calls.iter().zip(accs).enumerate() {
            let Some(lowering) = acc.jit_lowering() else {
                continue;
            };
            if call.distinct || call.args.len() > 1 || retracting && lowering.retract.is_none() {
                continue;
            }
            let arg = match (call.args.first(), arg_types.get(c).and_then(|t| t.first())) {
                (None, _) => None,
                (Some(&column), Some(arrow)) => {
                    let width = lowering.arg.map(|t| t.bytes() as usize);
                    if width.is_some_and(|w| arrow.primitive_width() != Some(w)) {
                        continue;
                    }
                    let slot = *column_of.entry(column).or_insert_with(|| {
                        fused.columns.push(c);
                        fused.shape.columns.push(ColumnShape {
                            ty: None,
                            nullable: false,
                        });
                        fused.columns.len() - 1
                    });
                    let shape = &mut fused.shape.columns[slot];
                    match (shape.ty, lowering.arg) {
                        (Some(a), Some(b)) if a != b => continue,
                        (None, read) => shape.ty = read,
                        _ => {}
                    }
                    Some(slot)
                }
                (Some(_), None) => continue,
            };
            if lowering.arg.is_some() && arg.is_none() {
                continue;
            }
            let filter = call.filter.map(|column| {
                *filter_of.entry(column).or_insert_with(|| {
                    fused.filters.push(c);
                    fused.shape.filters.push(false);
                    fused.filters.len() - 1
                })
            });
            fused.shape.calls.push(CallShape {
                name: acc.name(),
                lowering,
                arg,
                filter,
            });
            fused.calls.push(c);
            fused.covered[c] = true;
        }
        let n = fused.calls.len();
        if n == 0 {
            return static_kernels(if retracting {
                "no call has a fixed-width lowering with a retraction"
            } else {
                "no call has a fixed-width lowering"
            });
        }
        if mode == JitMode::Auto && n < AUTO_MIN_CALLS {
            return static_kernels(format!(
                "auto: {n} call to fuse, the static kernel is as fast below {AUTO_MIN_CALLS}"
            ));
        }
        fused.state_bytes_per_group = fused
            .shape
            .calls
            .iter()
            .flat_map(|c| c.lowering.state.iter())
            .map(|t| t.bytes() as usize)
            .sum();
        let plain = vec![false; fused.columns.len() + fused.filters.len() + 1];
        if let Err(e) = fused.variant(&plain) {
            return static_kernels(e.to_string());
        }
        let status = format!(
            "fused {n} of {} calls ({} bytes of code, compiled in {:.2} ms)",
            calls.len(),
            fused.code_bytes(),
            fused.compile_time.as_secs_f64() * 1e3
        );
        Planned {
            fused: Some(fused),
            status,
        }
    }

    /// By operator call: whether the fused loop folds it.
    pub fn covered(&self) -> &[bool] {
        &self.covered
    }

    /// Bytes of machine code of the compiled variants.
    pub fn code_bytes(&self) -> usize {
        self.variants.values().map(|v| v.code_bytes).sum()
    }

    /// Time this operator spent compiling.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// The loop's shape (no column NULL).
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The compiled loop for a pattern: which columns, then filters, have
    /// NULLs, then whether the rows carry row kinds.
    fn variant(&mut self, pattern: &[bool]) -> Result<Arc<Compiled>> {
        if let Some(found) = self.variants.get(pattern) {
            return Ok(found.clone());
        }
        let mut shape = self.shape.clone();
        let (columns, rest) = pattern.split_at(shape.columns.len());
        let (filters, kinds) = rest.split_at(shape.filters.len());
        for (c, &nullable) in shape.columns.iter_mut().zip(columns) {
            c.nullable = nullable;
        }
        shape.filters.copy_from_slice(filters);
        shape.kinds = kinds.first().copied().unwrap_or(false);
        let (compiled, fresh) = compile(&shape)?;
        if fresh {
            self.compile_time += compiled.compile_time;
        }
        self.variants.insert(pattern.to_vec(), compiled.clone());
        Ok(compiled)
    }

    /// Whether the loop folds a batch over state of `groups` groups (`on`:
    /// always; `auto`: while the fused state fits [`AUTO_MAX_STATE_BYTES`]).
    pub fn takes(&self, groups: usize) -> bool {
        !self.auto || groups.saturating_mul(self.state_bytes_per_group) <= AUTO_MAX_STATE_BYTES
    }

    /// Folds the batch's rows into every fused call's state: `args` and
    /// `filters` by operator call (as the operator read them), `kinds` the
    /// rows' row kinds (read over retracting input), `ids` the rows' group
    /// ids. An error leaves every state as it was; the caller then folds
    /// the batch with the static kernels.
    pub fn update(
        &mut self,
        accs: &mut [Box<dyn GroupAccumulator>],
        (args, filters): (&[Vec<ArrayRef>], &[Option<BooleanArray>]),
        kinds: Option<&[i8]>,
        ids: &[u32],
    ) -> Result<()> {
        let rows = ids.len();
        if rows == 0 {
            return Ok(());
        }
        let mut words: Vec<u64> = Vec::with_capacity(self.shape.param_words());
        let mut copies = Copies::new();
        let mut pattern = Vec::with_capacity(self.columns.len() + self.filters.len() + 1);
        for (&c, shape) in self.columns.iter().zip(&self.shape.columns) {
            let array = args
                .get(c)
                .and_then(|a| a.first())
                .ok_or_else(|| missing(c))?;
            pattern.push(column_words(
                array,
                shape.ty,
                rows,
                &mut words,
                &mut copies,
            )?);
        }
        for &c in &self.filters {
            let filter = filters
                .get(c)
                .and_then(Option::as_ref)
                .ok_or_else(|| missing(c))?;
            pattern.push(filter_words(filter, rows, &mut words, &mut copies)?);
        }
        let kinds = kinds.filter(|_| self.retracting);
        if let Some(kinds) = kinds {
            if kinds.len() < rows {
                return Err(AggError::Input(format!(
                    "the row kinds cover {} rows, the batch {rows}",
                    kinds.len()
                )));
            }
            words.push(kinds.as_ptr() as u64);
        }
        pattern.push(kinds.is_some());
        let needed = ids.iter().copied().max().map_or(0, |m| m as usize + 1);
        for &c in &self.calls {
            let state = accs[c]
                .jit_state()
                .filter(|s| s.groups >= needed)
                .ok_or_else(|| AggError::Unsupported(format!("call {c}: state not sized")))?;
            words.extend(state.columns.iter().map(|&p| p as u64));
        }
        let compiled = self.variant(&pattern)?;
        if words.len() != compiled.param_words {
            return Err(AggError::Unsupported(format!(
                "the fused loop reads {} parameter words, {} were bound",
                compiled.param_words,
                words.len()
            )));
        }
        // SAFETY: the words follow the layout `emit` reads for this
        // variant's shape (built above in its order, `param_words` long):
        // every column's values hold at least `rows` values from the given
        // address (`column_words`); every bitmap is readable as whole words
        // from bit 0 through row `rows - 1` (`bitmap`: the Arrow buffer, or
        // a copy in `copies`, alive until after the call); every state column holds
        // `groups >= max(ids) + 1` values of its lowering's type (the
        // accumulator's own vectors, not resized until the call returns, as
        // `accs` stays borrowed); the row kinds, when passed, hold at least
        // `rows` bytes (checked above); `ids` holds `rows` ids.
        unsafe { (compiled.entry())(rows as u64, ids.as_ptr(), words.as_ptr()) };
        Ok(())
    }
}

fn missing(call: usize) -> AggError {
    AggError::Input(format!("the fused loop's input of call {call} is missing"))
}

/// Bitmaps copied for one call of the loop (ones that did not start at
/// bit 0 or could not be read as whole words), kept alive until it returns.
type Copies = Vec<Vec<u64>>;

/// The address of `bits` as the loop reads bitmaps: from bit 0, as whole
/// 64-bit words covering `rows` rows; the bitmap itself where it is so, a
/// copy in `copies` otherwise.
fn bitmap(bits: &BooleanBuffer, rows: usize, copies: &mut Copies) -> u64 {
    let words = rows.div_ceil(64);
    let buffer = bits.inner();
    if bits.offset() == 0 && buffer.len() >= words * 8 {
        return buffer.as_ptr() as u64;
    }
    let mut copy = vec![0u64; words];
    for (i, chunk) in bits.slice(0, rows).bit_chunks().iter_padded().enumerate() {
        if let Some(word) = copy.get_mut(i) {
            *word = chunk;
        }
    }
    let address = copy.as_ptr() as u64;
    copies.push(copy);
    address
}

/// Appends a column's values pointer (0 when `ty` is `None`: only its
/// validity is read) and validity bitmap; returns whether it has NULLs.
fn column_words(
    array: &ArrayRef,
    ty: Option<Type>,
    rows: usize,
    words: &mut Vec<u64>,
    copies: &mut Copies,
) -> Result<bool> {
    let data = array.to_data();
    if data.len() < rows {
        return Err(AggError::Input(format!(
            "an argument column has {} rows, the batch {rows}",
            data.len()
        )));
    }
    let values = match ty {
        None => 0,
        Some(ty) => {
            let width = ty.bytes() as usize;
            let buffer = data.buffers().first().filter(|b| {
                data.data_type().primitive_width() == Some(width)
                    && b.len() >= (data.offset() + rows) * width
            });
            let buffer = buffer.ok_or_else(|| {
                AggError::Input(format!(
                    "an argument column of type {} is not {width}-byte values",
                    data.data_type()
                ))
            })?;
            buffer.as_ptr() as u64 + (data.offset() * width) as u64
        }
    };
    words.push(values);
    Ok(push_nulls(data.nulls(), rows, words, copies))
}

/// Appends a FILTER column's values bitmap, then its validity (as
/// [`column_words`]); returns whether it has NULLs.
fn filter_words(
    filter: &BooleanArray,
    rows: usize,
    words: &mut Vec<u64>,
    copies: &mut Copies,
) -> Result<bool> {
    if filter.len() < rows {
        return Err(AggError::Input(format!(
            "a FILTER column has {} rows, the batch {rows}",
            filter.len()
        )));
    }
    words.push(bitmap(filter.values(), rows, copies));
    Ok(push_nulls(filter.nulls(), rows, words, copies))
}

fn push_nulls(
    nulls: Option<&arrow_buffer::NullBuffer>,
    rows: usize,
    words: &mut Vec<u64>,
    copies: &mut Copies,
) -> bool {
    match nulls.filter(|n| n.null_count() > 0) {
        Some(n) => {
            words.push(bitmap(n.inner(), rows, copies));
            true
        }
        None => {
            words.push(0);
            false
        }
    }
}
