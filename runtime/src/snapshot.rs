//! The versioned snapshot format of aggforge's keyed state: one payload
//! per Flink key group, so Flink can redistribute key groups when it
//! rescales and each subtask restores only its own.
//!
//! A payload (all integers little-endian):
//!
//! ```text
//! magic            4 bytes  "AGKG"
//! format version   u16      SNAPSHOT_VERSION when written
//! flags            u16      0 (reserved)
//! key group        u16
//! max parallelism  u32      the job's max parallelism key groups refer to
//! fingerprint      u32 length + UTF-8 bytes: the plan's fingerprint
//! column roles     u32 count + per column: u8 tag (0 key, 1 state, 2 operator)
//!                  + u16 aggregate call index (0 unless state)
//! Arrow IPC        u64 length + an Arrow IPC stream of one RecordBatch
//!                  whose columns are those the roles describe, in order
//! checksum         u32 CRC-32 (IEEE) of every byte before it
//! ```
//!
//! Every released version stays decodable: [`decode_key_group`] dispatches
//! on the version, and golden payloads in `runtime/tests/data/golden/` are
//! decoded by the tests of every later build.

use std::io::Cursor;

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;

use crate::error::{AggError, Result};

/// The snapshot format version this build writes.
pub const SNAPSHOT_VERSION: u16 = 1;

/// The magic bytes every key-group payload starts with.
pub const SNAPSHOT_MAGIC: [u8; 4] = *b"AGKG";

/// What a snapshot column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnRole {
    /// A grouping-key column.
    Key,
    /// A state column of aggregate call number `call` (plan order).
    State {
        /// Index of the aggregate call in the plan.
        call: u16,
    },
    /// Per-group state the operator itself keeps (e.g. a record counter).
    Operator,
}

impl ColumnRole {
    fn tag(self) -> (u8, u16) {
        match self {
            ColumnRole::Key => (0, 0),
            ColumnRole::State { call } => (1, call),
            ColumnRole::Operator => (2, 0),
        }
    }

    fn from_tag(tag: u8, call: u16) -> Result<Self> {
        match (tag, call) {
            (0, 0) => Ok(ColumnRole::Key),
            (1, call) => Ok(ColumnRole::State { call }),
            (2, 0) => Ok(ColumnRole::Operator),
            _ => Err(snapshot_error(format!(
                "unknown column role tag {tag} (call {call})"
            ))),
        }
    }
}

/// What a payload says about the state it holds, besides the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotMeta {
    /// Identifies the plan (grouping, calls, types, specializations); a
    /// snapshot only restores into a plan with the same fingerprint.
    pub plan_fingerprint: String,
    /// Max parallelism the key groups were assigned with.
    pub max_parallelism: u32,
    /// The role of each batch column, in column order.
    pub roles: Vec<ColumnRole>,
}

/// A decoded key-group payload.
#[derive(Debug, Clone)]
pub struct DecodedKeyGroup {
    /// Format version the payload was written in.
    pub version: u16,
    /// Header fields.
    pub meta: SnapshotMeta,
    /// The key group the rows belong to.
    pub key_group: u16,
    /// Key columns and state columns of the group's keys.
    pub batch: RecordBatch,
}

impl DecodedKeyGroup {
    /// Checks that this payload belongs to a plan described by `expected`:
    /// same fingerprint, max parallelism and column roles.
    pub fn check_matches(&self, expected: &SnapshotMeta) -> Result<()> {
        if self.meta.plan_fingerprint != expected.plan_fingerprint {
            return Err(snapshot_error(format!(
                "key group {} was written by plan '{}', which is not this plan '{}'; \
                 state of a different query cannot be restored",
                self.key_group, self.meta.plan_fingerprint, expected.plan_fingerprint
            )));
        }
        if self.meta.max_parallelism != expected.max_parallelism {
            return Err(snapshot_error(format!(
                "key group {} was written with max parallelism {}, but the job now has {}; \
                 Flink cannot change max parallelism of keyed state",
                self.key_group, self.meta.max_parallelism, expected.max_parallelism
            )));
        }
        if self.meta.roles != expected.roles {
            return Err(snapshot_error(format!(
                "key group {} has column roles {:?}, expected {:?}",
                self.key_group, self.meta.roles, expected.roles
            )));
        }
        Ok(())
    }
}

fn snapshot_error(message: impl Into<String>) -> AggError {
    AggError::Snapshot(message.into())
}

/// Encodes the state of one key group: header, then `batch` as an Arrow
/// IPC stream, then a checksum. `batch` must have one column per role.
pub fn encode_key_group(
    meta: &SnapshotMeta,
    key_group: u16,
    batch: &RecordBatch,
) -> Result<Vec<u8>> {
    if batch.num_columns() != meta.roles.len() {
        return Err(snapshot_error(format!(
            "batch has {} columns but {} column roles",
            batch.num_columns(),
            meta.roles.len()
        )));
    }
    if meta.max_parallelism == 0 || key_group as u32 >= meta.max_parallelism {
        return Err(snapshot_error(format!(
            "key group {key_group} is not below max parallelism {}",
            meta.max_parallelism
        )));
    }
    let mut ipc = Vec::new();
    {
        let mut writer = StreamWriter::try_new(&mut ipc, batch.schema_ref())?;
        writer.write(batch)?;
        writer.finish()?;
    }
    let fingerprint = meta.plan_fingerprint.as_bytes();
    let mut out = Vec::with_capacity(32 + fingerprint.len() + 3 * meta.roles.len() + ipc.len());
    out.extend_from_slice(&SNAPSHOT_MAGIC);
    out.extend_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&key_group.to_le_bytes());
    out.extend_from_slice(&meta.max_parallelism.to_le_bytes());
    out.extend_from_slice(&(fingerprint.len() as u32).to_le_bytes());
    out.extend_from_slice(fingerprint);
    out.extend_from_slice(&(meta.roles.len() as u32).to_le_bytes());
    for role in &meta.roles {
        let (tag, call) = role.tag();
        out.push(tag);
        out.extend_from_slice(&call.to_le_bytes());
    }
    out.extend_from_slice(&(ipc.len() as u64).to_le_bytes());
    out.extend_from_slice(&ipc);
    let checksum = crc32(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    Ok(out)
}

/// Bounds-checked reading of a payload.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(snapshot_error(format!(
                "truncated payload: {what} needs {n} bytes at offset {}, only {} left",
                self.pos,
                self.bytes.len() - self.pos
            ))),
        }
    }

    fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// The key group a payload belongs to, read from its header without
/// decoding (or checksumming) the rest: what Flink's raw keyed state needs
/// to file each payload under its key group.
pub fn peek_key_group(bytes: &[u8]) -> Result<u16> {
    read_key_group(bytes).map_err(|e| match e {
        AggError::Snapshot(why) => {
            snapshot_error(format!("cannot read the key group of a payload: {why}"))
        }
        other => other,
    })
}

fn read_key_group(bytes: &[u8]) -> Result<u16> {
    let mut r = Reader { bytes, pos: 0 };
    let magic = r.take(4, "magic")?;
    if magic != SNAPSHOT_MAGIC {
        return Err(snapshot_error(
            "the payload does not start with the snapshot magic",
        ));
    }
    match r.u16("format version")? {
        1 => {
            r.u16("flags")?;
            r.u16("key group")
        }
        v => Err(snapshot_error(format!(
            "snapshot format version {v} is unknown to this build (it reads 1 to {SNAPSHOT_VERSION})"
        ))),
    }
}

/// Decodes a key-group payload of any released format version. Wrong
/// magic, unknown versions, truncated or corrupt input are
/// [`AggError::Snapshot`] errors.
pub fn decode_key_group(bytes: &[u8]) -> Result<DecodedKeyGroup> {
    let mut r = Reader { bytes, pos: 0 };
    let magic = r.take(4, "magic")?;
    if magic != SNAPSHOT_MAGIC {
        return Err(snapshot_error(format!(
            "not an aggforge key-group snapshot (magic {magic:02x?}, expected {SNAPSHOT_MAGIC:02x?})"
        )));
    }
    let version = r.u16("format version")?;
    match version {
        1 => decode_v1(bytes, r),
        v if v > SNAPSHOT_VERSION => Err(snapshot_error(format!(
            "snapshot format version {v} was written by a newer aggforge; \
             this build reads versions 1 to {SNAPSHOT_VERSION}"
        ))),
        v => Err(snapshot_error(format!(
            "unknown snapshot format version {v}"
        ))),
    }
}

fn decode_v1<'a>(bytes: &'a [u8], mut r: Reader<'a>) -> Result<DecodedKeyGroup> {
    if bytes.len() < 4 {
        return Err(snapshot_error("truncated payload: no checksum"));
    }
    let (body, tail) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let actual = crc32(body);
    if stored != actual {
        return Err(snapshot_error(format!(
            "corrupt or truncated payload: checksum {actual:08x} does not match stored {stored:08x}"
        )));
    }
    r.bytes = body;
    let flags = r.u16("flags")?;
    if flags != 0 {
        return Err(snapshot_error(format!("unknown flags {flags:#06x}")));
    }
    let key_group = r.u16("key group")?;
    let max_parallelism = r.u32("max parallelism")?;
    if max_parallelism == 0 || key_group as u32 >= max_parallelism {
        return Err(snapshot_error(format!(
            "key group {key_group} is not below max parallelism {max_parallelism}"
        )));
    }
    let fp_len = r.u32("fingerprint length")? as usize;
    let fp = r.take(fp_len, "fingerprint")?;
    let plan_fingerprint = std::str::from_utf8(fp)
        .map_err(|_| snapshot_error("plan fingerprint is not UTF-8"))?
        .to_string();
    let role_count = r.u32("column role count")? as usize;
    if role_count > body.len() {
        return Err(snapshot_error(format!(
            "column role count {role_count} exceeds the payload"
        )));
    }
    let mut roles = Vec::with_capacity(role_count);
    for _ in 0..role_count {
        let tag = r.u8("column role")?;
        let call = r.u16("column role call")?;
        roles.push(ColumnRole::from_tag(tag, call)?);
    }
    let ipc_len = r.u64("Arrow IPC length")?;
    let ipc_len = usize::try_from(ipc_len)
        .map_err(|_| snapshot_error(format!("Arrow IPC length {ipc_len} is too large")))?;
    let ipc = r.take(ipc_len, "Arrow IPC stream")?;
    if r.pos != body.len() {
        return Err(snapshot_error(format!(
            "{} unexpected bytes after the Arrow IPC stream",
            body.len() - r.pos
        )));
    }
    let batch = read_single_batch(ipc)?;
    if batch.num_columns() != roles.len() {
        return Err(snapshot_error(format!(
            "batch has {} columns but the header lists {} column roles",
            batch.num_columns(),
            roles.len()
        )));
    }
    Ok(DecodedKeyGroup {
        version: 1,
        meta: SnapshotMeta {
            plan_fingerprint,
            max_parallelism,
            roles,
        },
        key_group,
        batch,
    })
}

fn read_single_batch(ipc: &[u8]) -> Result<RecordBatch> {
    let bad = |e: arrow_schema::ArrowError| snapshot_error(format!("bad Arrow IPC stream: {e}"));
    // The checksum already rejects accidental corruption; the unwind guard
    // keeps a crafted stream that trips a panic inside arrow-ipc an error.
    let decoded = std::panic::catch_unwind(|| -> Result<Option<RecordBatch>> {
        let mut reader = StreamReader::try_new(Cursor::new(ipc), None).map_err(bad)?;
        let first = reader.next().transpose().map_err(bad)?;
        if first.is_some() && reader.next().is_some() {
            return Err(snapshot_error("Arrow IPC stream holds more than one batch"));
        }
        Ok(first)
    })
    .map_err(|_| snapshot_error("malformed Arrow IPC stream"))??;
    decoded.ok_or_else(|| snapshot_error("Arrow IPC stream holds no batch"))
}

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    let mut crc = !0u32;
    for &b in bytes {
        crc = TABLE[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use std::sync::Arc;

    fn sample() -> (SnapshotMeta, RecordBatch) {
        let batch = RecordBatch::try_from_iter(vec![
            (
                "k",
                Arc::new(StringArray::from(vec![Some("a"), None])) as ArrayRef,
            ),
            ("sum", Arc::new(Int64Array::from(vec![5, -7])) as ArrayRef),
        ])
        .unwrap();
        let meta = SnapshotMeta {
            plan_fingerprint: "plan-1".into(),
            max_parallelism: 128,
            roles: vec![ColumnRole::Key, ColumnRole::State { call: 0 }],
        };
        (meta, batch)
    }

    #[test]
    fn crc32_matches_zlib() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn round_trip() {
        let (meta, batch) = sample();
        let bytes = encode_key_group(&meta, 17, &batch).unwrap();
        let decoded = decode_key_group(&bytes).unwrap();
        assert_eq!(decoded.version, SNAPSHOT_VERSION);
        assert_eq!(decoded.key_group, 17);
        assert_eq!(decoded.meta, meta);
        assert_eq!(decoded.batch, batch);
        decoded.check_matches(&meta).unwrap();
    }

    #[test]
    fn rejects_wrong_roles_and_key_group_on_encode() {
        let (mut meta, batch) = sample();
        assert!(encode_key_group(&meta, 128, &batch).is_err());
        meta.roles.pop();
        assert!(encode_key_group(&meta, 0, &batch).is_err());
    }

    #[test]
    fn rejects_other_plan_with_clear_message() {
        let (meta, batch) = sample();
        let decoded = decode_key_group(&encode_key_group(&meta, 3, &batch).unwrap()).unwrap();
        let other = SnapshotMeta {
            plan_fingerprint: "plan-2".into(),
            ..meta.clone()
        };
        let err = decoded.check_matches(&other).unwrap_err().to_string();
        assert!(err.contains("plan-1") && err.contains("plan-2"), "{err}");
        let other = SnapshotMeta {
            max_parallelism: 256,
            ..meta
        };
        assert!(decoded.check_matches(&other).is_err());
    }
}
