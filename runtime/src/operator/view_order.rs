//! Two-phase DISTINCT views whose results depend on the order Flink's
//! global phase folds their values: FLOAT/DOUBLE SUM, SUM0, AVG (rounding),
//! MIN and MAX (which of 0.0 and -0.0, or of NaN and a number, is kept),
//! DECIMAL(19..38) SUM, SUM0 and AVG (a sum overflows to NULL in order),
//! and LISTAGG over CHAR/VARCHAR (the concatenation's order).
//!
//! Flink folds a value when it enters the global's state view, in the
//! iteration order of Java HashMaps (insert-only input):
//! - the local phase's view is a fresh `HashMap` per bundle and key,
//!   filled as values first pass a call; its iteration order is the
//!   serialized order;
//! - the global input deserializes it into a new `HashMap` (MapMapConverter,
//!   default capacity) and `addInput` merges each partial of a bundle, in
//!   that map's order, into a fresh union map (a value enters when it first
//!   sets a call's bit);
//! - `finishBundle` merges the union into the state view in the union's
//!   iteration order, folding each value that enters a call's set.
//!
//! The view column therefore carries the serialized order: at the local
//! output the local map's iteration order, NULL included (it counts towards
//! the map's size), which the Java side writes as the RAW field's bytes in
//! column order; at the global input the order of the bytes received,
//! which the global reorders as the map Flink deserializes from them would
//! iterate. This module keeps, per
//! bundle group, the values in the order they entered (the local view or
//! the global union) and orders them as a Java `HashMap` filled in that
//! order iterates them ([`crate::flink_key::java_hash_map_order`], from the
//! keys' `hashCode()`s).
//!
//! Over retracting input the local map also removes values; that is not
//! modelled, so those plans stay single-phase (the registry lists no such
//! two-phase entry, and [`OrderedViews::new`] refuses them).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float32Type, Float64Type};
use arrow_array::{
    Array, ArrayRef, Decimal128Array, Float32Array, Float64Array, ListArray, StringArray,
};
use arrow_schema::DataType;
use hashbrown::hash_map::Entry;
use hashbrown::HashMap;

use super::input::{call_rows, Input};
use super::views::ViewLayout;
use crate::error::{AggError, Result};
use crate::flink_key::{java_hash_map_order, JavaHashMapOrder};
use crate::kernel::multiset::counted_list;
use crate::plan::{order_sensitive, AggPlan};
use crate::types::{InputMode, Phase};

/// A DISTINCT value as a Java map key: FLOAT/DOUBLE bits with NaN made
/// canonical (as `Float.equals`/`Double.equals` compare them; 0.0 and -0.0
/// stay apart), a DECIMAL's unscaled value, or a string's UTF-8 bytes
/// (`BinaryStringData.equals`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum JavaKey {
    Null,
    Bits(u128),
    Bytes(Box<[u8]>),
}

impl JavaKey {
    fn bits(&self) -> Option<u128> {
        match self {
            JavaKey::Bits(bits) => Some(*bits),
            _ => None,
        }
    }

    fn bytes(&self) -> Option<&[u8]> {
        match self {
            JavaKey::Bytes(bytes) => Some(bytes),
            _ => None,
        }
    }

    /// Heap bytes beyond the inline size.
    fn heap(&self) -> usize {
        self.bytes().map_or(0, <[u8]>::len)
    }
}

/// How a view's values are read, hashed as Java hashes them and written.
#[derive(Debug, Clone, Copy)]
enum KeyKind {
    Float,
    Double,
    Decimal {
        precision: u8,
        scale: i8,
    },
    /// CHAR/VARCHAR, keys of type `BinaryStringData`.
    String,
}

impl KeyKind {
    fn of(data_type: &DataType) -> Option<Self> {
        match data_type {
            DataType::Float32 => Some(KeyKind::Float),
            DataType::Float64 => Some(KeyKind::Double),
            DataType::Decimal128(precision, scale) => Some(KeyKind::Decimal {
                precision: *precision,
                scale: *scale,
            }),
            DataType::Utf8 => Some(KeyKind::String),
            _ => None,
        }
    }

    /// Value `i` of `array` (of this kind's Arrow type).
    fn read(self, array: &dyn Array, i: usize) -> JavaKey {
        if array.is_null(i) {
            return JavaKey::Null;
        }
        JavaKey::Bits(match self {
            KeyKind::Float => {
                let v = array.as_primitive::<Float32Type>().value(i);
                (if v.is_nan() { f32::NAN } else { v }).to_bits() as u128
            }
            KeyKind::Double => {
                let v = array.as_primitive::<Float64Type>().value(i);
                (if v.is_nan() { f64::NAN } else { v }).to_bits() as u128
            }
            KeyKind::Decimal { .. } => array.as_primitive::<Decimal128Type>().value(i) as u128,
            KeyKind::String => {
                let value = array.as_string::<i32>().value(i);
                return JavaKey::Bytes(value.as_bytes().into());
            }
        })
    }

    /// The key's `hashCode()` (`Float`, `Double`, `DecimalData`, which is
    /// `BigDecimal`'s, `BinaryStringData`); NULL hashes to 0 in a `HashMap`.
    fn java_hash(self, key: &JavaKey) -> i32 {
        let bits = match key {
            JavaKey::Null => return 0,
            JavaKey::Bytes(bytes) => return crate::flink_key::hash_bytes(bytes),
            JavaKey::Bits(bits) => *bits,
        };
        match self {
            KeyKind::Float => bits as u32 as i32,
            KeyKind::Double => {
                let bits = bits as u64;
                (bits ^ (bits >> 32)) as u32 as i32
            }
            KeyKind::Decimal { scale, .. } => big_decimal_hash(bits as i128, scale),
            KeyKind::String => 0,
        }
    }

    /// An Arrow array of `keys`.
    fn build(self, keys: &[JavaKey]) -> Result<ArrayRef> {
        Ok(match self {
            KeyKind::Float => Arc::new(Float32Array::from_iter(
                keys.iter()
                    .map(|k| k.bits().map(|b| f32::from_bits(b as u32))),
            )),
            KeyKind::Double => Arc::new(Float64Array::from_iter(
                keys.iter()
                    .map(|k| k.bits().map(|b| f64::from_bits(b as u64))),
            )),
            KeyKind::Decimal { precision, scale } => Arc::new(
                Decimal128Array::from_iter(keys.iter().map(|k| k.bits().map(|b| b as i128)))
                    .with_precision_and_scale(precision, scale)?,
            ),
            KeyKind::String => Arc::new(StringArray::from(
                keys.iter()
                    .map(|k| k.bytes().map(crate::kernel::concat::utf8).transpose())
                    .collect::<Result<Vec<Option<&str>>>>()?,
            )),
        })
    }
}

/// `java.math.BigDecimal.hashCode()` of `unscaled * 10^-scale`:
/// `31 * unscaledValue().hashCode() + scale`, where `BigInteger.hashCode()`
/// folds the magnitude's big-endian 32-bit words (`h = 31 * h + word`,
/// leading zero words add nothing) and takes the sign.
fn big_decimal_hash(unscaled: i128, scale: i8) -> i32 {
    let magnitude = unscaled.unsigned_abs();
    let mut h: i32 = 0;
    for shift in [96u32, 64, 32, 0] {
        let word = (magnitude >> shift) as u32;
        h = h.wrapping_mul(31).wrapping_add(word as i32);
    }
    let signed = if unscaled < 0 { h.wrapping_neg() } else { h };
    signed.wrapping_mul(31).wrapping_add(scale as i32)
}

/// One ordered view: per bundle group, its values in the order they
/// entered, with the bits of the calls they passed.
#[derive(Debug)]
struct OrderedView {
    /// The view's index in the plan.
    view: usize,
    kind: KeyKind,
    /// Bit words per value (the layout's: one up to 64 calls).
    words: usize,
    /// By bundle group (local: group id, global: bundle slot), its values.
    entries: Vec<Vec<u32>>,
    keys: Vec<JavaKey>,
    bits: Vec<u64>,
    /// (bundle group, value) to its index in `keys`.
    index: HashMap<(u32, JavaKey), u32>,
    /// Heap bytes of the string keys in `keys` and `index`.
    heap: usize,
}

impl OrderedView {
    /// Sets `bits` (one word per `words`) on value `key` of bundle group
    /// `g`, adding the value (last) when it is new and any bit is set.
    fn set(&mut self, g: u32, key: JavaKey, bits: &[u64]) {
        if bits.iter().all(|&b| b == 0) {
            return;
        }
        let next = self.keys.len() as u32;
        // The key is copied only when it is new to the group's view.
        let entry = match self.index.entry((g, key)) {
            Entry::Occupied(known) => *known.get(),
            Entry::Vacant(new) => {
                let key = new.key().1.clone();
                new.insert(next);
                self.heap += 2 * key.heap();
                self.keys.push(key);
                next
            }
        };
        if entry == next {
            self.bits.extend(std::iter::repeat_n(0, self.words));
            if self.entries.len() <= g as usize {
                self.entries.resize_with(g as usize + 1, Vec::new);
            }
            self.entries[g as usize].push(entry);
        }
        let at = entry as usize * self.words;
        for (have, &new) in self.bits[at..at + self.words].iter_mut().zip(bits) {
            *have |= new;
        }
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.heap = 0;
        self.keys.clear();
        self.bits.clear();
        self.index.clear();
    }

    fn memory_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Vec<u32>>()
            + self.entries.iter().map(|e| e.capacity() * 4).sum::<usize>()
            + self.keys.capacity() * std::mem::size_of::<JavaKey>()
            + self.bits.capacity() * 8
            + self.index.capacity() * (std::mem::size_of::<(u32, JavaKey)>() + 5)
            + self.heap
    }

    /// Bundle group `g`'s values in the iteration order of a fresh Java
    /// `HashMap` filled in their order of entry.
    fn java_order(&self, g: u32) -> Vec<u32> {
        let Some(entries) = self.entries.get(g as usize) else {
            return Vec::new();
        };
        let hashes: Vec<i32> = entries
            .iter()
            .map(|&e| self.kind.java_hash(&self.keys[e as usize]))
            .collect();
        java_hash_map_order(&hashes)
            .into_iter()
            .map(|i| entries[i as usize])
            .collect()
    }
}

/// The plan's ordered views (two-phase plans over insert-only input).
#[derive(Debug, Default)]
pub(crate) struct OrderedViews {
    views: Vec<OrderedView>,
}

impl OrderedViews {
    /// The ordered views of `plan`'s views (`layouts`, in the plan's order);
    /// refuses an order-sensitive view over retracting input.
    pub fn new(plan: &AggPlan, layouts: &[ViewLayout]) -> Result<Self> {
        let mut views = Vec::new();
        for (v, (view, layout)) in plan.views.iter().zip(layouts).enumerate() {
            let sensitive = view.calls.iter().any(|&c| order_sensitive(&plan.calls[c]));
            let Some(kind) = KeyKind::of(&layout.key_type).filter(|_| sensitive) else {
                continue;
            };
            if plan.input == InputMode::Retracting {
                return Err(AggError::Plan(format!(
                    "DISTINCT view {v}: its calls fold in Flink's Java HashMap order, which \
                     is not modelled over retracting input in two phases"
                )));
            }
            views.push(OrderedView {
                view: v,
                kind,
                words: layout.words(),
                entries: Vec::new(),
                keys: Vec::new(),
                bits: Vec::new(),
                index: HashMap::new(),
                heap: 0,
            });
        }
        Ok(OrderedViews { views })
    }

    /// Local phase: each row's value enters its group's view (`ids`) when
    /// it passes one of the view's calls (its FILTER), as Flink's local
    /// accumulate puts it.
    pub fn record_local(&mut self, plan: &AggPlan, input: &Input<'_>, ids: &[u32]) {
        for ordered in &mut self.views {
            let calls = &plan.views[ordered.view].calls;
            let values = &input.args[calls[0]][0];
            let passes: Vec<Option<arrow_array::BooleanArray>> = calls
                .iter()
                .map(|&c| call_rows(input.filters[c].as_ref(), None))
                .collect();
            let mut bits = vec![0u64; ordered.words];
            for (row, &g) in ids.iter().enumerate() {
                bits.fill(0);
                for (slot, pass) in passes.iter().enumerate() {
                    if pass.as_ref().is_none_or(|p| p.value(row)) {
                        bits[slot / 64] |= 1 << (slot % 64);
                    }
                }
                let key = ordered.kind.read(values.as_ref(), row);
                ordered.set(g, key, &bits);
            }
        }
    }

    /// Global phase: merges each row's view (`input.views`, in the plan's
    /// view order) into its bundle slot's union, value by value in list
    /// order (Flink's `addInput`).
    pub fn record_global(
        &mut self,
        layouts: &[ViewLayout],
        input: &Input<'_>,
        slots: &[u32],
    ) -> Result<()> {
        for ordered in &mut self.views {
            let column = &input.views[ordered.view];
            let layout = &layouts[ordered.view];
            let list = column
                .as_any()
                .downcast_ref::<ListArray>()
                .ok_or_else(|| AggError::Input("DISTINCT view column: not a list".into()))?;
            // `split_input` checked the column's type (a list of
            // `{key, value}` structs) before this runs.
            let entries = list.values().as_struct();
            let keys = entries.column(0);
            let words = layout.words_of(entries.column(1))?;
            let offsets = list.value_offsets();
            let (mut entry_keys, mut hashes, mut order) = (Vec::new(), Vec::new(), Vec::new());
            for (row, &slot) in slots.iter().enumerate() {
                // A fresh map per received view, as Flink deserializes one.
                let mut map = JavaHashMapOrder::new();
                if list.is_null(row) {
                    continue;
                }
                // The list is in serialized order; Flink merges the map it
                // deserializes (a fresh HashMap filled in that order) in
                // that map's iteration order.
                let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                entry_keys.clear();
                entry_keys.extend((start..end).map(|e| ordered.kind.read(keys.as_ref(), e)));
                hashes.clear();
                hashes.extend(entry_keys.iter().map(|k| ordered.kind.java_hash(k)));
                map.iteration_order(&hashes, &mut order);
                for &i in &order {
                    let e = start + i as usize;
                    ordered.set(slot, entry_keys[i as usize].clone(), &words.all(e)?);
                }
            }
        }
        Ok(())
    }

    /// Global flush: replaces, in `partials` (by call, each ending in the
    /// call's `{key, count}` list, rows in flush order), the lists of the
    /// ordered views' calls by the bundle union's values of each call in
    /// the union's Java iteration order; `slots[pos]` is the bundle slot
    /// flushed at `pos`. The unions are cleared.
    pub fn order_global(
        &mut self,
        plan: &AggPlan,
        layouts: &[ViewLayout],
        partials: &mut [Vec<ArrayRef>],
        slots: &[u32],
    ) -> Result<()> {
        debug_assert_eq!(plan.phase, Phase::Global);
        for ordered in &mut self.views {
            let layout = &layouts[ordered.view];
            let orders: Vec<Vec<u32>> = slots.iter().map(|&s| ordered.java_order(s)).collect();
            for (position, &c) in plan.views[ordered.view].calls.iter().enumerate() {
                let (word, bit) = (position / 64, 1u64 << (position % 64));
                let mut keys = Vec::new();
                let mut lengths = Vec::with_capacity(slots.len());
                for order in &orders {
                    let before = keys.len();
                    for &e in order {
                        let key = &ordered.keys[e as usize];
                        let bits = ordered.bits[e as usize * ordered.words + word];
                        if *key != JavaKey::Null && bits & bit != 0 {
                            keys.push(key.clone());
                        }
                    }
                    lengths.push(keys.len() - before);
                }
                let counts = vec![1i64; keys.len()];
                let list = counted_list(
                    &layout.key_type,
                    ordered.kind.build(&keys)?,
                    counts,
                    lengths,
                )?;
                let last = partials[c]
                    .last_mut()
                    .ok_or_else(|| AggError::Plan(format!("call {c} has no DISTINCT view list")))?;
                *last = list;
            }
            ordered.clear();
        }
        Ok(())
    }

    /// Local flush: replaces the ordered views' columns in `columns` (the
    /// view columns, in the plan's order) by their values in the local
    /// map's Java iteration order, NULL included, for the groups in
    /// `groups` (flush order). The views are cleared.
    pub fn local_columns(
        &mut self,
        layouts: &[ViewLayout],
        columns: &mut [ArrayRef],
        groups: &[u32],
    ) -> Result<()> {
        for ordered in &mut self.views {
            let layout = &layouts[ordered.view];
            let mut keys = Vec::new();
            let mut values = Vec::new();
            let mut lengths = Vec::with_capacity(groups.len());
            for &g in groups {
                let entries = ordered.java_order(g);
                for &e in &entries {
                    keys.push(ordered.keys[e as usize].clone());
                    let at = e as usize * ordered.words;
                    values.extend_from_slice(&ordered.bits[at..at + ordered.words]);
                }
                lengths.push(entries.len());
            }
            let values = values.into_iter().map(|b| b as i64).collect();
            columns[ordered.view] = layout.column(ordered.kind.build(&keys)?, values, lengths)?;
            ordered.clear();
        }
        Ok(())
    }

    /// Bytes held (counted against the operator's budget).
    pub fn memory_bytes(&self) -> usize {
        self.views.iter().map(OrderedView::memory_bytes).sum()
    }

    /// Bytes one input row can add at most.
    pub fn bytes_per_row(&self) -> usize {
        self.views
            .iter()
            .map(|v| {
                4 + std::mem::size_of::<JavaKey>()
                    + v.words * 8
                    + 2 * (std::mem::size_of::<(u32, JavaKey)>() + 5)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hashes_match_the_jdk() {
        // Double.hashCode(1.0) = 1072693248, of -0.0 = -2147483648,
        // Double.hashCode(NaN) = 2146959360; Float.hashCode(1.5f) = 1069547520.
        let d = |v: f64| KeyKind::Double.java_hash(&JavaKey::Bits(v.to_bits() as u128));
        assert_eq!(d(1.0), 1072693248);
        assert_eq!(d(-0.0), i32::MIN);
        let nan = KeyKind::Double.read(
            &Float64Array::from(vec![f64::from_bits(0x7ff0_0000_0000_0001)]),
            0,
        );
        assert_eq!(KeyKind::Double.java_hash(&nan), 2146959360);
        let f = KeyKind::Float.java_hash(&JavaKey::Bits(1.5f32.to_bits() as u128));
        assert_eq!(f, 1069547520);
        assert_eq!(KeyKind::Double.java_hash(&JavaKey::Null), 0);
        // new BigDecimal("1.50").hashCode() = 31 * 150 + 2 = 4652;
        // new BigDecimal("-1.50").hashCode() = -4648;
        // new BigDecimal(new BigInteger("18446744073709551616"), 3).hashCode()
        // (2^64: words 1, 0, 0) = 31 * (31 * 31) + 3 = 29794.
        assert_eq!(big_decimal_hash(150, 2), 4652);
        assert_eq!(big_decimal_hash(-150, 2), -4648);
        assert_eq!(big_decimal_hash(1i128 << 64, 3), 29794);
    }

    #[test]
    fn values_enter_once_with_their_bits() {
        let mut view = OrderedView {
            view: 0,
            kind: KeyKind::Double,
            words: 1,
            entries: Vec::new(),
            keys: Vec::new(),
            bits: Vec::new(),
            index: HashMap::new(),
            heap: 0,
        };
        view.set(1, JavaKey::Bits(7), &[0b01]);
        view.set(1, JavaKey::Null, &[0b10]);
        view.set(1, JavaKey::Bits(7), &[0b10]);
        view.set(0, JavaKey::Bits(7), &[0]);
        assert_eq!(view.entries, vec![vec![], vec![0, 1]]);
        assert_eq!(view.bits, vec![0b11, 0b10]);
    }
}
