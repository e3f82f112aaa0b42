//! The few calls into the `state` branch's modules (memory budget, Java
//! HashMap order, key groups, snapshot encoding), kept in one place.
//!
//! TEMPORARY stand-ins until the `state` branch is merged.

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;

use crate::error::{AggError, Result};

/// An operator's memory budget and the bytes accounted against it.
#[derive(Debug, Clone, Copy)]
pub struct MemoryBudget {
    limit: usize,
    used: usize,
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        MemoryBudget { limit, used: 0 }
    }
    /// Accounts `bytes` more or fails changing nothing.
    pub fn try_reserve(&mut self, bytes: usize) -> Result<()> {
        match self.used.checked_add(bytes) {
            Some(t) if t <= self.limit => {
                self.used = t;
                Ok(())
            }
            _ => Err(AggError::MemoryBudget {
                used: self.used,
                requested: bytes,
                budget: self.limit,
            }),
        }
    }
    /// Returns bytes to the budget.
    pub fn release(&mut self, bytes: usize) {
        self.used = self.used.saturating_sub(bytes);
    }
    /// Replaces the accounted total.
    pub fn set_used(&mut self, bytes: usize) {
        self.used = bytes;
    }
    /// Bytes accounted.
    pub fn used(&self) -> usize {
        self.used
    }
}

/// A java.util.HashMap filled and cleared once per bundle.
#[derive(Debug, Clone, Default)]
pub struct JavaHashMapOrder {
    capacity: usize,
}

impl JavaHashMapOrder {
    /// Iteration order of a map filled with keys of these hash codes.
    pub fn iteration_order(&mut self, hashes: &[i32], out: &mut Vec<u32>) {
        let mut cap = self.capacity.max(16);
        while hashes.len() > cap * 3 / 4 {
            cap *= 2;
        }
        self.capacity = cap;
        out.clear();
        out.extend(0..hashes.len() as u32);
        let bucket = |h: i32| ((h ^ ((h as u32) >> 16) as i32) as u32 as usize) & (cap - 1);
        out.sort_by_key(|&i| bucket(hashes[i as usize]));
    }
}

/// Flink's key group of a key hash.
pub fn key_group_for_hash(hash: i32, max_parallelism: u32) -> u16 {
    (hash as u32 % max_parallelism) as u16
}

/// Encodes one key group's state batch.
pub fn encode_key_group(key_group: u16, batch: &RecordBatch) -> Result<Vec<u8>> {
    let mut out = key_group.to_le_bytes().to_vec();
    let mut writer = StreamWriter::try_new(&mut out, &batch.schema())?;
    writer.write(batch)?;
    writer.finish()?;
    drop(writer);
    Ok(out)
}

/// Decodes a payload written by [`encode_key_group`].
pub fn decode_key_group(bytes: &[u8]) -> Result<(u16, RecordBatch)> {
    if bytes.len() < 2 {
        return Err(AggError::Snapshot("payload too short".into()));
    }
    let kg = u16::from_le_bytes([bytes[0], bytes[1]]);
    let reader = StreamReader::try_new(Cursor::new(&bytes[2..]), None)?;
    let schema = reader.schema();
    let batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
    let batch = arrow_select::concat::concat_batches(&Arc::clone(&schema), &batches)?;
    Ok((kg, batch))
}
