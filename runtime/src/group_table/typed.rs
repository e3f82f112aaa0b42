//! Arrow-facing wrappers over [`FixedTable`]: one primitive key column or
//! one BOOLEAN key column.

use std::sync::Arc;

use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{Array, ArrayRef, BooleanArray, PrimitiveArray};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::DataType;

use super::fixed::{FixedTable, KeyBits};
use super::KeyTable;
use crate::error::{AggError, Result};

/// A native value that maps one-to-one onto key bits.
pub(crate) trait KeyNative: Copy + Default + Send + Sync + 'static {
    /// The bit carrier.
    type Bits: KeyBits;
    /// The value's bits (floats by their raw bits).
    fn to_bits(self) -> Self::Bits;
    /// Inverse of [`KeyNative::to_bits`].
    fn from_bits(bits: Self::Bits) -> Self;
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl KeyNative for $t {
            type Bits = u64;
            #[inline(always)]
            fn to_bits(self) -> u64 { self as i64 as u64 }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self { bits as i64 as $t }
        }
    )*};
}
int_key!(i8, i16, i32, i64);

impl KeyNative for f32 {
    type Bits = u64;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

impl KeyNative for f64 {
    type Bits = u64;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

impl KeyNative for i128 {
    type Bits = u128;
    #[inline(always)]
    fn to_bits(self) -> u128 {
        self as u128
    }
    #[inline(always)]
    fn from_bits(bits: u128) -> Self {
        bits as i128
    }
}

/// One primitive key column of Arrow type `data_type`.
pub(crate) struct PrimitiveKeyTable<T: ArrowPrimitiveType>
where
    T::Native: KeyNative,
{
    table: FixedTable<<T::Native as KeyNative>::Bits>,
    data_type: DataType,
}

impl<T: ArrowPrimitiveType> std::fmt::Debug for PrimitiveKeyTable<T>
where
    T::Native: KeyNative,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrimitiveKeyTable")
            .field("data_type", &self.data_type)
            .field("groups", &self.table.len())
            .finish()
    }
}

impl<T: ArrowPrimitiveType> PrimitiveKeyTable<T>
where
    T::Native: KeyNative,
{
    pub(crate) fn new(data_type: DataType) -> Self {
        PrimitiveKeyTable {
            table: FixedTable::new(),
            data_type,
        }
    }
}

fn column<'a, A: 'static>(keys: &'a [ArrayRef], expected: &DataType) -> Result<&'a A> {
    let [column] = keys else {
        return Err(AggError::Input(format!(
            "expected one key column, got {}",
            keys.len()
        )));
    };
    if column.data_type() != expected {
        return Err(AggError::Input(format!(
            "key column has type {}, the plan promised {expected}",
            column.data_type()
        )));
    }
    column
        .as_any()
        .downcast_ref::<A>()
        .ok_or_else(|| AggError::Input(format!("key column is not a {expected} array")))
}

impl<T: ArrowPrimitiveType> KeyTable for PrimitiveKeyTable<T>
where
    T::Native: KeyNative,
{
    fn intern(
        &mut self,
        keys: &[ArrayRef],
        ids: &mut Vec<u32>,
        new_rows: &mut Vec<u32>,
    ) -> Result<()> {
        let array: &PrimitiveArray<T> = column(keys, &self.data_type)?;
        let values: &[T::Native] = array.values();
        ids.clear();
        ids.resize(values.len(), 0);
        let table = &mut self.table;
        match array.nulls().filter(|n| n.null_count() > 0) {
            None => {
                for (row, (id, v)) in ids.iter_mut().zip(values).enumerate() {
                    *id = table.id(v.to_bits(), row as u32, new_rows);
                }
            }
            Some(nulls) => {
                for (row, (id, v)) in ids.iter_mut().zip(values).enumerate() {
                    *id = if nulls.is_valid(row) {
                        table.id(v.to_bits(), row as u32, new_rows)
                    } else {
                        table.null_id(row as u32, new_rows)
                    };
                }
            }
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.table.len()
    }

    fn keys(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        let mut values = Vec::with_capacity(groups.len());
        let mut valid = Vec::with_capacity(groups.len());
        for &g in groups {
            if g as usize >= self.table.len() {
                return Err(AggError::Input(format!("no group {g}")));
            }
            match self.table.key(g) {
                Some(bits) => {
                    values.push(T::Native::from_bits(bits));
                    valid.push(true);
                }
                None => {
                    values.push(T::Native::default());
                    valid.push(false);
                }
            }
        }
        let nulls = NullBuffer::from(valid);
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        let array = PrimitiveArray::<T>::new(ScalarBuffer::from(values), nulls)
            .with_data_type(self.data_type.clone());
        Ok(vec![Arc::new(array)])
    }

    fn truncate(&mut self, len: usize) {
        self.table.truncate(len);
    }

    fn clear(&mut self) {
        self.table.clear();
    }

    fn memory_bytes(&self) -> usize {
        self.table.memory_bytes()
    }
}

/// One BOOLEAN key column: at most three groups (false, true, NULL).
#[derive(Debug, Default)]
pub(crate) struct BooleanKeyTable {
    /// Group of false, true and NULL.
    slots: [Option<u32>; 3],
    /// Slot index (0 false, 1 true, 2 NULL) by group id.
    keys: Vec<u8>,
}

impl KeyTable for BooleanKeyTable {
    fn intern(
        &mut self,
        keys: &[ArrayRef],
        ids: &mut Vec<u32>,
        new_rows: &mut Vec<u32>,
    ) -> Result<()> {
        let array: &BooleanArray = column(keys, &DataType::Boolean)?;
        ids.clear();
        for row in 0..array.len() {
            let slot = if array.is_null(row) {
                2
            } else {
                array.value(row) as usize
            };
            let id = match self.slots[slot] {
                Some(id) => id,
                None => {
                    let id = self.keys.len() as u32;
                    self.keys.push(slot as u8);
                    self.slots[slot] = Some(id);
                    new_rows.push(row as u32);
                    id
                }
            };
            ids.push(id);
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.keys.len()
    }

    fn keys(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        let values = groups
            .iter()
            .map(|&g| match self.keys.get(g as usize) {
                Some(0) => Ok(Some(false)),
                Some(1) => Ok(Some(true)),
                Some(_) => Ok(None),
                None => Err(AggError::Input(format!("no group {g}"))),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(vec![Arc::new(BooleanArray::from(values))])
    }

    fn truncate(&mut self, len: usize) {
        self.keys.truncate(len);
        for slot in self.slots.iter_mut() {
            if slot.is_some_and(|id| id as usize >= len) {
                *slot = None;
            }
        }
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.slots = [None; 3];
    }

    fn memory_bytes(&self) -> usize {
        self.keys.capacity()
    }
}
