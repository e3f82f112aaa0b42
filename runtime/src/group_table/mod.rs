//! Group tables: map the key columns of a batch to dense `u32` group ids
//! (new keys get the next id) and give back the key columns of any list
//! of groups. NULL keys are ordinary keys.
//!
//! Three paths, picked from the plan's key types:
//! - one fixed-width key (integers, FLOAT/DOUBLE by bits, DECIMAL, DATE,
//!   TIME, TIMESTAMP(p <= 3)): an open-addressing table over the key bits;
//!   BOOLEAN: a three-slot table;
//! - one STRING/CHAR key: borrowed bytes, copied once into an arena;
//! - anything else (several keys, TIMESTAMP(p > 3), ARRAY): arrow-row
//!   rows in an arena.
//!
//! Every group also keeps its Flink key hash (BinaryRowData.hashCode of
//! the key row), computed once when the group is created; it picks the
//! group's key group and its place in Flink's HashMap iteration order.

mod bytes;
mod fixed;
mod key_hash;
mod typed;

use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, Time32MillisecondType, TimestampMillisecondType,
};
use arrow_array::ArrayRef;
use arrow_select::take::take;

use crate::error::{AggError, Result};
use crate::plan::arrow_type;
use crate::types::{Layout, SqlType};

pub use key_hash::flink_key_hashes;

/// The per-path table behind [`GroupTable`].
trait KeyTable: Send + std::fmt::Debug {
    /// Writes the group id of every row to `ids` (cleared first) and, for
    /// each new group in id order, the row it was first seen at to
    /// `new_rows`.
    fn intern(
        &mut self,
        keys: &[ArrayRef],
        ids: &mut Vec<u32>,
        new_rows: &mut Vec<u32>,
    ) -> Result<()>;
    fn len(&self) -> usize;
    fn keys(&self, groups: &[u32]) -> Result<Vec<ArrayRef>>;
    fn truncate(&mut self, len: usize);
    fn clear(&mut self);
    fn memory_bytes(&self) -> usize;
}

/// A table for a plan without grouping keys: every row is group 0.
#[derive(Debug, Default)]
struct NoKeyTable {
    exists: bool,
}

impl KeyTable for NoKeyTable {
    fn intern(&mut self, _: &[ArrayRef], _: &mut Vec<u32>, _: &mut Vec<u32>) -> Result<()> {
        // Row count is unknown without columns; GroupTable handles this
        // table before calling it.
        Err(AggError::Input("no key columns".into()))
    }
    fn len(&self) -> usize {
        self.exists as usize
    }
    fn keys(&self, _: &[u32]) -> Result<Vec<ArrayRef>> {
        Ok(Vec::new())
    }
    fn truncate(&mut self, len: usize) {
        if len == 0 {
            self.exists = false;
        }
    }
    fn clear(&mut self) {
        self.exists = false;
    }
    fn memory_bytes(&self) -> usize {
        0
    }
}

/// Which table implementation a [`GroupTable`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TablePath {
    /// No grouping keys: one group.
    NoKey,
    /// One fixed-width key.
    Fixed,
    /// One STRING/CHAR key.
    String,
    /// arrow-row rows.
    Row,
}

/// Dense group ids for the key columns of a plan.
#[derive(Debug)]
pub struct GroupTable {
    table: Box<dyn KeyTable>,
    path: TablePath,
    key_types: Vec<SqlType>,
    /// Flink key hash by group id.
    hashes: Vec<i32>,
    new_rows: Vec<u32>,
}

impl GroupTable {
    /// A table for keys of the given SQL types, picking the fastest path.
    pub fn new(key_types: &[SqlType]) -> Result<Self> {
        let (table, path): (Box<dyn KeyTable>, TablePath) = match key_types {
            [] => (Box::<NoKeyTable>::default(), TablePath::NoKey),
            [one] => match one.layout() {
                Some(Layout::Int8) => fixed::<Int8Type>(one),
                Some(Layout::Int16) => fixed::<Int16Type>(one),
                Some(Layout::Int32) => fixed::<Int32Type>(one),
                Some(Layout::Int64) => fixed::<Int64Type>(one),
                Some(Layout::Float32) => fixed::<Float32Type>(one),
                Some(Layout::Float64) => fixed::<Float64Type>(one),
                Some(Layout::Decimal128) => fixed::<Decimal128Type>(one),
                Some(Layout::Date32) => fixed::<Date32Type>(one),
                Some(Layout::Time32Millisecond) => fixed::<Time32MillisecondType>(one),
                Some(Layout::TimestampMillisecond) => fixed::<TimestampMillisecondType>(one),
                Some(Layout::Boolean) => (
                    Box::<typed::BooleanKeyTable>::default() as Box<dyn KeyTable>,
                    TablePath::Fixed,
                ),
                Some(Layout::Utf8) => (
                    Box::new(bytes::StringKeyTable::new()) as _,
                    TablePath::String,
                ),
                Some(Layout::StructTimestamp | Layout::List) | None => row_table(key_types)?,
            },
            _ => row_table(key_types)?,
        };
        Ok(GroupTable {
            table,
            path,
            key_types: key_types.to_vec(),
            hashes: Vec::new(),
            new_rows: Vec::new(),
        })
    }

    /// The implementation chosen for the key types.
    pub fn path(&self) -> TablePath {
        self.path
    }

    /// The key SQL types.
    pub fn key_types(&self) -> &[SqlType] {
        &self.key_types
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when the table holds no group.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Writes the group id of each of the `num_rows` rows to `ids`; groups
    /// with ids at or above the previous [`GroupTable::len`] are new. On
    /// error the table is unchanged.
    pub fn intern(&mut self, keys: &[ArrayRef], num_rows: usize, ids: &mut Vec<u32>) -> Result<()> {
        let before = self.len();
        if self.path == TablePath::NoKey {
            if !keys.is_empty() {
                return Err(AggError::Input(format!(
                    "the plan has no keys but {} key columns were given",
                    keys.len()
                )));
            }
            ids.clear();
            ids.resize(num_rows, 0);
            if before == 0 && num_rows > 0 {
                let mut hash = Vec::new();
                flink_key_hashes(&[], &[], 1, &mut hash)?;
                self.hashes.extend(hash);
                self.table = Box::new(NoKeyTable { exists: true });
            }
            return Ok(());
        }
        if let Some(column) = keys.iter().find(|c| c.len() != num_rows) {
            return Err(AggError::Input(format!(
                "key column has {} rows, the batch {num_rows}",
                column.len()
            )));
        }
        self.new_rows.clear();
        self.table.intern(keys, ids, &mut self.new_rows)?;
        if self.new_rows.is_empty() {
            return Ok(());
        }
        let indices = arrow_array::UInt32Array::from(self.new_rows.clone());
        let hashed = keys
            .iter()
            .map(|c| take(c.as_ref(), &indices, None).map_err(AggError::from))
            .collect::<Result<Vec<_>>>()
            .and_then(|new_keys| {
                flink_key_hashes(&new_keys, &self.key_types, indices.len(), &mut self.hashes)
            });
        if let Err(e) = hashed {
            self.hashes.truncate(self.table.len());
            self.truncate(before);
            return Err(e);
        }
        debug_assert_eq!(self.hashes.len(), self.table.len());
        Ok(())
    }

    /// The key columns of the listed groups, in list order.
    pub fn keys(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.table.keys(groups)
    }

    /// The Flink key hash (BinaryRowData.hashCode) of every group, by id.
    pub fn key_hashes(&self) -> &[i32] {
        &self.hashes
    }

    /// Drops every group with id `len` or above (undoes an intern) and
    /// gives back the memory the dropped groups made the table grow by.
    pub fn truncate(&mut self, len: usize) {
        if len < self.hashes.len() {
            self.table.truncate(len);
            self.hashes.truncate(len);
            self.hashes.shrink_to_fit();
            self.new_rows = Vec::new();
        }
    }

    /// Drops every group and keeps the allocations.
    pub fn clear(&mut self) {
        self.table.clear();
        self.hashes.clear();
    }

    /// Bytes held: slots, stored keys, arena and hashes.
    pub fn memory_bytes(&self) -> usize {
        self.table.memory_bytes() + self.hashes.capacity() * 4 + self.new_rows.capacity() * 4
    }
}

fn fixed<T>(sql: &SqlType) -> (Box<dyn KeyTable>, TablePath)
where
    T: arrow_array::types::ArrowPrimitiveType,
    T::Native: typed::KeyNative,
{
    (
        Box::new(typed::PrimitiveKeyTable::<T>::new(arrow_type(sql))),
        TablePath::Fixed,
    )
}

fn row_table(key_types: &[SqlType]) -> Result<(Box<dyn KeyTable>, TablePath)> {
    let types = key_types.iter().map(arrow_type).collect();
    Ok((Box::new(bytes::RowKeyTable::new(types)?), TablePath::Row))
}
