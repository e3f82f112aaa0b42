//! The TIMESTAMP(4..9) carrier and its Arrow layout.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields};

/// Flink's `TimestampData`: epoch milliseconds plus nano-of-millisecond
/// (0..=999_999). Orders by milliseconds, then nanoseconds, as Flink does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Milliseconds since 1970-01-01T00:00:00.
    pub millisecond: i64,
    /// Nanoseconds within the millisecond.
    pub nano_of_millisecond: i32,
}

impl Timestamp {
    /// Builds a timestamp from its two parts.
    pub const fn new(millisecond: i64, nano_of_millisecond: i32) -> Timestamp {
        Timestamp {
            millisecond,
            nano_of_millisecond,
        }
    }
}

/// Name of the milliseconds child of the TIMESTAMP(4..9) struct.
pub const MILLISECOND_FIELD: &str = "millisecond";
/// Name of the nano-of-millisecond child of the TIMESTAMP(4..9) struct.
pub const NANO_FIELD: &str = "nano_of_millisecond";

/// The children of the TIMESTAMP(4..9) struct (both non-nullable).
pub fn timestamp_fields() -> Fields {
    Fields::from(vec![
        Arc::new(Field::new(MILLISECOND_FIELD, DataType::Int64, false)),
        Arc::new(Field::new(NANO_FIELD, DataType::Int32, false)),
    ])
}

/// `Struct{millisecond: Int64, nano_of_millisecond: Int32}`.
pub fn timestamp_struct_type() -> DataType {
    DataType::Struct(timestamp_fields())
}
