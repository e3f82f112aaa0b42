//! Column bindings: how one carrier is read from an Arrow column (bound once
//! per batch to a typed slice), held in state, and written back to Arrow.

use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::Arc;

use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{
    Array, ArrayRef, BooleanArray, Decimal128Array, Int32Array, Int64Array, PrimitiveArray,
    StringArray, StructArray,
};
use arrow_buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use arrow_schema::DataType;

use super::timestamp::{timestamp_fields, Timestamp};
use crate::error::{AggError, Result};

/// One carrier's Arrow binding.
pub trait Binding: 'static {
    /// A value as held in state.
    type Owned: Clone + Debug + Default + Send + 'static;
    /// A value as read from a bound column.
    type Ref<'a>: Copy;
    /// A column bound for one batch (typed slices, no dyn dispatch per row).
    type Reader<'a>: Copy;

    /// The column [`Binding::bind`] takes, from a column of this binding's
    /// Arrow layout: the column itself, except where the binding reads an
    /// encoding of it ([`super::ListBytes`]). Every bind site of a generic
    /// binding prepares first.
    fn prepare(column: &ArrayRef) -> Result<ArrayRef> {
        Ok(column.clone())
    }
    /// Downcasts `column`; [`AggError::Input`] when it is not this binding's
    /// physical type.
    fn bind<'a>(column: &'a ArrayRef, name: &str) -> Result<Self::Reader<'a>>;
    /// The value of row `i` (NULLs are filtered out before, via [`super::Rows`]).
    fn get<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a>;
    /// Number of rows a bound column holds (every `i < rows(reader)` is
    /// readable).
    fn rows(reader: &Self::Reader<'_>) -> usize;
    /// [`Binding::get`] without the bounds check.
    ///
    /// # Safety
    /// The caller guarantees `i < Self::rows(reader)`. An implementation
    /// may rely on exactly that and nothing more, so one that overrides this
    /// method must make [`Binding::rows`] never exceed the rows readable
    /// without a check. The default forwards to the checked
    /// [`Binding::get`] (a panic, not UB, for an `i` out of range).
    #[inline(always)]
    unsafe fn get_unchecked<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        Self::get(reader, i)
    }
    /// Borrows a state value as a read value.
    fn view(owned: &Self::Owned) -> Self::Ref<'_>;
    /// Stores a read value into a state slot (reusing its allocation).
    fn store(slot: &mut Self::Owned, value: Self::Ref<'_>);
    /// Heap bytes a state value holds beyond its inline size.
    fn heap_bytes(_owned: &Self::Owned) -> usize {
        0
    }
    /// Builds an Arrow column of `data_type` from values and validity.
    fn build(values: Vec<Self::Owned>, valid: Vec<bool>, data_type: &DataType) -> Result<ArrayRef>;
}

fn wrong(column: &ArrayRef, want: &str, name: &str) -> AggError {
    AggError::Input(format!(
        "{name}: expected a {want} column, got {}",
        column.data_type()
    ))
}

fn nulls_of(valid: Vec<bool>) -> Option<NullBuffer> {
    if valid.iter().all(|&v| v) {
        None
    } else {
        Some(NullBuffer::from(valid))
    }
}

/// Primitive Arrow column (`Int8`..`Int64`, `Float32/64`, `Date32`,
/// `Time32(Millisecond)`, `Timestamp(Millisecond)`), carrier `T::Native`.
#[derive(Debug)]
pub struct Prim<T>(PhantomData<T>);

impl<T: ArrowPrimitiveType> Binding for Prim<T>
where
    T::Native: Default,
{
    type Owned = T::Native;
    type Ref<'a> = T::Native;
    type Reader<'a> = &'a [T::Native];

    fn bind<'a>(column: &'a ArrayRef, name: &str) -> Result<&'a [T::Native]> {
        column
            .as_any()
            .downcast_ref::<PrimitiveArray<T>>()
            .map(|a| a.values().as_ref())
            .ok_or_else(|| wrong(column, &T::DATA_TYPE.to_string(), name))
    }
    #[inline(always)]
    fn get<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        reader[i]
    }
    #[inline(always)]
    fn rows(reader: &Self::Reader<'_>) -> usize {
        reader.len()
    }
    /// # Safety
    /// `i < reader.len()`, the slice's length, which [`Binding::rows`] reports.
    #[inline(always)]
    unsafe fn get_unchecked<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        // SAFETY: the caller guarantees `i < Self::rows(reader)`, which is
        // `reader.len()`, so `i` is in bounds of the values slice.
        unsafe { *reader.get_unchecked(i) }
    }
    #[inline(always)]
    fn view(owned: &T::Native) -> T::Native {
        *owned
    }
    #[inline(always)]
    fn store(slot: &mut T::Native, value: T::Native) {
        *slot = value;
    }
    fn build(values: Vec<T::Native>, valid: Vec<bool>, data_type: &DataType) -> Result<ArrayRef> {
        let array = PrimitiveArray::<T>::try_new(ScalarBuffer::from(values), nulls_of(valid))?
            .with_data_type(data_type.clone());
        Ok(Arc::new(array))
    }
}

/// `Decimal128(p <= 18, s)` narrowed to an `i64` unscaled carrier.
#[derive(Debug)]
pub struct Dec64;

impl Binding for Dec64 {
    type Owned = i64;
    type Ref<'a> = i64;
    type Reader<'a> = &'a [i128];

    fn bind<'a>(column: &'a ArrayRef, name: &str) -> Result<&'a [i128]> {
        column
            .as_any()
            .downcast_ref::<Decimal128Array>()
            .map(|a| a.values().as_ref())
            .ok_or_else(|| wrong(column, "Decimal128", name))
    }
    #[inline(always)]
    fn get<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        reader[i] as i64
    }
    #[inline(always)]
    fn rows(reader: &Self::Reader<'_>) -> usize {
        reader.len()
    }
    /// # Safety
    /// `i < reader.len()`, the slice's length, which [`Binding::rows`] reports.
    #[inline(always)]
    unsafe fn get_unchecked<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        // SAFETY: the caller guarantees `i < Self::rows(reader)`, which is
        // `reader.len()`, so `i` is in bounds of the i128 values slice.
        unsafe { *reader.get_unchecked(i) as i64 }
    }
    #[inline(always)]
    fn view(owned: &i64) -> i64 {
        *owned
    }
    #[inline(always)]
    fn store(slot: &mut i64, value: i64) {
        *slot = value;
    }
    fn build(values: Vec<i64>, valid: Vec<bool>, data_type: &DataType) -> Result<ArrayRef> {
        let wide: Vec<i128> = values.into_iter().map(i128::from).collect();
        Dec128::build(wide, valid, data_type)
    }
}

/// `Decimal128(p, s)` with an `i128` unscaled carrier.
#[derive(Debug)]
pub struct Dec128;

impl Binding for Dec128 {
    type Owned = i128;
    type Ref<'a> = i128;
    type Reader<'a> = &'a [i128];

    fn bind<'a>(column: &'a ArrayRef, name: &str) -> Result<&'a [i128]> {
        Dec64::bind(column, name)
    }
    #[inline(always)]
    fn get<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        reader[i]
    }
    #[inline(always)]
    fn rows(reader: &Self::Reader<'_>) -> usize {
        reader.len()
    }
    /// # Safety
    /// `i < reader.len()`, the slice's length, which [`Binding::rows`] reports.
    #[inline(always)]
    unsafe fn get_unchecked<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        // SAFETY: the caller guarantees `i < Self::rows(reader)`, which is
        // `reader.len()`, so `i` is in bounds of the i128 values slice.
        unsafe { *reader.get_unchecked(i) }
    }
    #[inline(always)]
    fn view(owned: &i128) -> i128 {
        *owned
    }
    #[inline(always)]
    fn store(slot: &mut i128, value: i128) {
        *slot = value;
    }
    fn build(values: Vec<i128>, valid: Vec<bool>, data_type: &DataType) -> Result<ArrayRef> {
        let array = Decimal128Array::try_new(ScalarBuffer::from(values), nulls_of(valid))?
            .with_data_type(data_type.clone());
        Ok(Arc::new(array))
    }
}

/// `Boolean` column, carrier `bool`.
#[derive(Debug)]
pub struct Bool;

impl Binding for Bool {
    type Owned = bool;
    type Ref<'a> = bool;
    type Reader<'a> = &'a BooleanBuffer;

    fn bind<'a>(column: &'a ArrayRef, name: &str) -> Result<&'a BooleanBuffer> {
        column
            .as_any()
            .downcast_ref::<BooleanArray>()
            .map(|a| a.values())
            .ok_or_else(|| wrong(column, "Boolean", name))
    }
    #[inline(always)]
    fn get<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        reader.value(i)
    }
    #[inline(always)]
    fn rows(reader: &Self::Reader<'_>) -> usize {
        reader.len()
    }
    /// # Safety
    /// `i < reader.len()`, the buffer's length in bits, which
    /// [`Binding::rows`] reports.
    #[inline(always)]
    unsafe fn get_unchecked<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        // SAFETY: `value_unchecked` needs `i < reader.len()` (in bits, the
        // buffer's offset applied inside); the caller guarantees
        // `i < Self::rows(reader)`, which is `reader.len()`.
        unsafe { reader.value_unchecked(i) }
    }
    #[inline(always)]
    fn view(owned: &bool) -> bool {
        *owned
    }
    #[inline(always)]
    fn store(slot: &mut bool, value: bool) {
        *slot = value;
    }
    fn build(values: Vec<bool>, valid: Vec<bool>, _data_type: &DataType) -> Result<ArrayRef> {
        Ok(Arc::new(BooleanArray::new(
            BooleanBuffer::from(values),
            nulls_of(valid),
        )))
    }
}

/// TIMESTAMP(4..9): `Struct{millisecond: Int64, nano_of_millisecond: Int32}`.
#[derive(Debug)]
pub struct Ts;

impl Binding for Ts {
    type Owned = Timestamp;
    type Ref<'a> = Timestamp;
    type Reader<'a> = (&'a [i64], &'a [i32]);

    fn bind<'a>(column: &'a ArrayRef, name: &str) -> Result<(&'a [i64], &'a [i32])> {
        let bad = || {
            wrong(
                column,
                "Struct{millisecond: Int64, nano_of_millisecond: Int32}",
                name,
            )
        };
        let array = column
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(bad)?;
        if array.num_columns() != 2 {
            return Err(bad());
        }
        let millis = array
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(bad)?;
        let nanos = array
            .column(1)
            .as_any()
            .downcast_ref::<Int32Array>()
            .ok_or_else(bad)?;
        Ok((millis.values().as_ref(), nanos.values().as_ref()))
    }
    #[inline(always)]
    fn get<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        Timestamp::new(reader.0[i], reader.1[i])
    }
    #[inline(always)]
    fn rows(reader: &Self::Reader<'_>) -> usize {
        reader.0.len().min(reader.1.len())
    }
    /// # Safety
    /// `i` below both children's lengths, whose minimum [`Binding::rows`]
    /// reports.
    #[inline(always)]
    unsafe fn get_unchecked<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        // SAFETY: the caller guarantees `i < Self::rows(reader)`, the minimum
        // of the two child slices' lengths, so `i` is in bounds of both.
        unsafe { Timestamp::new(*reader.0.get_unchecked(i), *reader.1.get_unchecked(i)) }
    }
    #[inline(always)]
    fn view(owned: &Timestamp) -> Timestamp {
        *owned
    }
    #[inline(always)]
    fn store(slot: &mut Timestamp, value: Timestamp) {
        *slot = value;
    }
    fn build(values: Vec<Timestamp>, valid: Vec<bool>, _data_type: &DataType) -> Result<ArrayRef> {
        let millis: Vec<i64> = values.iter().map(|t| t.millisecond).collect();
        let nanos: Vec<i32> = values.iter().map(|t| t.nano_of_millisecond).collect();
        let array = StructArray::try_new(
            timestamp_fields(),
            vec![
                Arc::new(Int64Array::from(millis)) as ArrayRef,
                Arc::new(Int32Array::from(nanos)) as ArrayRef,
            ],
            nulls_of(valid),
        )?;
        Ok(Arc::new(array))
    }
}

/// The state half of a binding whose values are bytes (`Owned = Vec<u8>`,
/// `Ref = &[u8]`): view, store reusing the allocation, heap size.
macro_rules! owned_bytes_state {
    () => {
        #[inline(always)]
        fn view(owned: &Vec<u8>) -> &[u8] {
            owned
        }
        #[inline(always)]
        fn store(slot: &mut Vec<u8>, value: &[u8]) {
            slot.clear();
            slot.extend_from_slice(value);
        }
        fn heap_bytes(owned: &Vec<u8>) -> usize {
            owned.capacity()
        }
    };
}
pub(super) use owned_bytes_state;

/// `Utf8` column, values borrowed as bytes; state holds owned bytes.
#[derive(Debug)]
pub struct Utf8;

impl Binding for Utf8 {
    type Owned = Vec<u8>;
    type Ref<'a> = &'a [u8];
    type Reader<'a> = &'a StringArray;

    fn bind<'a>(column: &'a ArrayRef, name: &str) -> Result<&'a StringArray> {
        column
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| wrong(column, "Utf8", name))
    }
    #[inline(always)]
    fn get<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        reader.value(i).as_bytes()
    }
    #[inline(always)]
    fn rows(reader: &Self::Reader<'_>) -> usize {
        reader.len()
    }
    owned_bytes_state!();
    fn build(values: Vec<Vec<u8>>, valid: Vec<bool>, _data_type: &DataType) -> Result<ArrayRef> {
        let strings = values
            .iter()
            .zip(&valid)
            .map(|(bytes, &ok)| {
                if ok {
                    std::str::from_utf8(bytes)
                        .map(Some)
                        .map_err(|e| AggError::Input(format!("string state is not UTF-8: {e}")))
                } else {
                    Ok(None)
                }
            })
            .collect::<Result<Vec<Option<&str>>>>()?;
        Ok(Arc::new(StringArray::from(strings)))
    }
}
