//! Tables whose keys are byte strings: one STRING/CHAR key (the UTF-8
//! bytes) and composite or other keys (arrow-row rows). Keys are looked
//! up borrowed from the batch and copied once, into one contiguous arena,
//! when they are new.

use std::sync::Arc;

use ahash::RandomState;
use arrow_array::{make_array, Array, ArrayRef, StringArray};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType;
use hashbrown::hash_table::Entry;
use hashbrown::HashTable;

use super::KeyTable;
use crate::error::{AggError, Result};

/// Byte keys in an arena, with dense ids.
#[derive(Debug)]
struct ByteKeys {
    table: HashTable<u32>,
    state: RandomState,
    arena: Vec<u8>,
    /// `offsets[id]..offsets[id + 1]` is the key of group `id`.
    offsets: Vec<usize>,
    hashes: Vec<u64>,
}

impl ByteKeys {
    fn new() -> Self {
        ByteKeys {
            table: HashTable::new(),
            // Fixed seeds: lookups need no per-process randomness here and
            // fixed seeds keep runs reproducible.
            state: RandomState::with_seeds(
                0x243F_6A88_85A3_08D3,
                0x1319_8A2E_0370_7344,
                0xA409_3822_299F_31D0,
                0x082E_FA98_EC4E_6C89,
            ),
            arena: Vec::new(),
            offsets: vec![0],
            hashes: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.hashes.len()
    }

    fn get(&self, id: u32) -> &[u8] {
        let id = id as usize;
        &self.arena[self.offsets[id]..self.offsets[id + 1]]
    }

    #[inline]
    fn id(&mut self, bytes: &[u8], row: u32, new_rows: &mut Vec<u32>) -> u32 {
        let hash = self.state.hash_one(bytes);
        let ByteKeys {
            table,
            arena,
            offsets,
            hashes,
            ..
        } = self;
        let entry = table.entry(
            hash,
            |&id| &arena[offsets[id as usize]..offsets[id as usize + 1]] == bytes,
            |&id| hashes[id as usize],
        );
        match entry {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(v) => {
                let id = hashes.len() as u32;
                v.insert(id);
                arena.extend_from_slice(bytes);
                offsets.push(arena.len());
                hashes.push(hash);
                new_rows.push(row);
                id
            }
        }
    }

    fn truncate(&mut self, len: usize) {
        while self.hashes.len() > len {
            let id = (self.hashes.len() - 1) as u32;
            let hash = self.hashes[id as usize];
            if let Ok(entry) = self.table.find_entry(hash, |&x| x == id) {
                entry.remove();
            }
            self.hashes.pop();
            self.offsets.pop();
        }
        self.arena.truncate(self.offsets[len]);
        // Give back what the dropped keys made the table grow by.
        self.arena.shrink_to_fit();
        self.offsets.shrink_to_fit();
        self.hashes.shrink_to_fit();
        let hashes = &self.hashes;
        self.table.shrink_to(len, |&id| hashes[id as usize]);
    }

    fn clear(&mut self) {
        self.table.clear();
        self.arena.clear();
        self.offsets.truncate(1);
        self.hashes.clear();
    }

    fn memory_bytes(&self) -> usize {
        self.table.allocation_size()
            + self.arena.capacity()
            + self.offsets.capacity() * std::mem::size_of::<usize>()
            + self.hashes.capacity() * 8
    }
}

/// One STRING/CHAR key column (Arrow Utf8). NULL is its own group.
#[derive(Debug)]
pub(crate) struct StringKeyTable {
    keys: ByteKeys,
    null_group: Option<u32>,
    /// Whether each group is the NULL group is `null_group == Some(id)`;
    /// its arena entry is empty.
    len: usize,
}

impl StringKeyTable {
    pub(crate) fn new() -> Self {
        StringKeyTable {
            keys: ByteKeys::new(),
            null_group: None,
            len: 0,
        }
    }
}

impl KeyTable for StringKeyTable {
    fn intern(
        &mut self,
        keys: &[ArrayRef],
        ids: &mut Vec<u32>,
        new_rows: &mut Vec<u32>,
    ) -> Result<()> {
        let [column] = keys else {
            return Err(AggError::Input(format!(
                "expected one key column, got {}",
                keys.len()
            )));
        };
        let array = column
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| {
                AggError::Input(format!(
                    "key column has type {}, the plan promised Utf8",
                    column.data_type()
                ))
            })?;
        ids.clear();
        ids.reserve(array.len());
        let offsets = array.value_offsets();
        let values = array.values().as_slice();
        for row in 0..array.len() {
            let id = if array.is_null(row) {
                match self.null_group {
                    Some(id) => id,
                    None => {
                        // The NULL group holds an empty arena entry so ids
                        // stay dense; it is never found by a lookup.
                        let id = self.keys.len() as u32;
                        self.keys.hashes.push(0);
                        self.keys.offsets.push(self.keys.arena.len());
                        self.null_group = Some(id);
                        new_rows.push(row as u32);
                        id
                    }
                }
            } else {
                let bytes = &values[offsets[row] as usize..offsets[row + 1] as usize];
                self.keys.id(bytes, row as u32, new_rows)
            };
            ids.push(id);
        }
        self.len = self.keys.len();
        Ok(())
    }

    fn len(&self) -> usize {
        self.len
    }

    fn keys(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        let mut offsets = Vec::with_capacity(groups.len() + 1);
        offsets.push(0i32);
        let mut values = Vec::new();
        let mut valid = Vec::with_capacity(groups.len());
        for &g in groups {
            if g as usize >= self.len {
                return Err(AggError::Input(format!("no group {g}")));
            }
            values.extend_from_slice(self.keys.get(g));
            let end = i32::try_from(values.len())
                .map_err(|_| AggError::Input("key column exceeds 2 GiB".into()))?;
            offsets.push(end);
            valid.push(self.null_group != Some(g));
        }
        let nulls = NullBuffer::from(valid);
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        let array = StringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(values),
            nulls,
        )?;
        Ok(vec![Arc::new(array)])
    }

    fn truncate(&mut self, len: usize) {
        if self.null_group.is_some_and(|id| id as usize >= len) {
            // The NULL group's placeholder is not in the hash table; drop
            // it from the tail like any other group.
            self.null_group = None;
        }
        self.keys.truncate(len);
        self.len = self.keys.len();
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.null_group = None;
        self.len = 0;
    }

    fn memory_bytes(&self) -> usize {
        self.keys.memory_bytes()
    }
}

/// Composite or other keys, encoded by arrow-row into comparable bytes
/// (NULLs included in the encoding).
#[derive(Debug)]
pub(crate) struct RowKeyTable {
    converter: RowConverter,
    keys: ByteKeys,
    types: Vec<DataType>,
}

impl RowKeyTable {
    pub(crate) fn new(types: Vec<DataType>) -> Result<Self> {
        let fields = types.iter().cloned().map(SortField::new).collect();
        Ok(RowKeyTable {
            converter: RowConverter::new(fields)?,
            keys: ByteKeys::new(),
            types,
        })
    }
}

impl KeyTable for RowKeyTable {
    fn intern(
        &mut self,
        keys: &[ArrayRef],
        ids: &mut Vec<u32>,
        new_rows: &mut Vec<u32>,
    ) -> Result<()> {
        if keys.len() != self.types.len() {
            return Err(AggError::Input(format!(
                "expected {} key columns, got {}",
                self.types.len(),
                keys.len()
            )));
        }
        let mut renamed: Vec<ArrayRef> = Vec::new();
        for (i, (column, expected)) in keys.iter().zip(&self.types).enumerate() {
            if column.data_type() == expected {
                continue;
            }
            // A list's item field is named as each Arrow library names it
            // ("item" here, "$data$" in Java): the same layout, relabelled.
            if !column.data_type().equals_datatype(expected) {
                return Err(AggError::Input(format!(
                    "key column {i} has type {}, the plan promised {expected}",
                    column.data_type()
                )));
            }
            if renamed.is_empty() {
                renamed = keys.to_vec();
            }
            let relabelled = column
                .to_data()
                .into_builder()
                .data_type(expected.clone())
                .build()?;
            renamed[i] = make_array(relabelled);
        }
        let keys = if renamed.is_empty() { keys } else { &renamed };
        let rows = self.converter.convert_columns(keys)?;
        ids.clear();
        ids.reserve(rows.num_rows());
        for (row, encoded) in rows.iter().enumerate() {
            ids.push(self.keys.id(encoded.as_ref(), row as u32, new_rows));
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.keys.len()
    }

    fn keys(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        if let Some(g) = groups.iter().find(|&&g| g as usize >= self.keys.len()) {
            return Err(AggError::Input(format!("no group {g}")));
        }
        let parser = self.converter.parser();
        let rows = groups.iter().map(|&g| parser.parse(self.keys.get(g)));
        Ok(self.converter.convert_rows(rows)?)
    }

    fn truncate(&mut self, len: usize) {
        self.keys.truncate(len);
    }

    fn clear(&mut self) {
        self.keys.clear();
    }

    fn memory_bytes(&self) -> usize {
        self.keys.memory_bytes() + self.converter.size()
    }
}
