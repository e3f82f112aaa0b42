//! Logical SQL types, phases, input modes and row kinds shared by the
//! registry, the operators and the plan descriptor.

use std::fmt;
use std::str::FromStr;

use crate::error::AggError;

/// A Flink SQL logical type, with the parameters that change its carrier
/// or its result type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// TINYINT, 8-bit signed.
    TinyInt,
    /// SMALLINT, 16-bit signed.
    SmallInt,
    /// INT, 32-bit signed.
    Int,
    /// BIGINT, 64-bit signed.
    BigInt,
    /// FLOAT, IEEE single.
    Float,
    /// DOUBLE, IEEE double.
    Double,
    /// DECIMAL(precision, scale), precision 1..=38.
    Decimal {
        /// Total digits.
        precision: u8,
        /// Digits after the point.
        scale: i8,
    },
    /// DATE, days since the epoch.
    Date,
    /// TIME(p), p <= 3, milliseconds of the day.
    Time {
        /// Fractional-second digits.
        precision: u8,
    },
    /// TIMESTAMP(p) without time zone, p <= 9.
    Timestamp {
        /// Fractional-second digits.
        precision: u8,
    },
    /// BOOLEAN.
    Boolean,
    /// CHAR(n).
    Char {
        /// Declared length.
        length: u32,
    },
    /// VARCHAR(n); STRING is VARCHAR(2147483647).
    Varchar {
        /// Declared maximum length.
        length: u32,
    },
}

impl SqlType {
    /// The SQL family name, as spec type rows name it in `sql = ...`.
    pub fn family(&self) -> &'static str {
        match self {
            SqlType::TinyInt => "TINYINT",
            SqlType::SmallInt => "SMALLINT",
            SqlType::Int => "INT",
            SqlType::BigInt => "BIGINT",
            SqlType::Float => "FLOAT",
            SqlType::Double => "DOUBLE",
            SqlType::Decimal { .. } => "DECIMAL",
            SqlType::Date => "DATE",
            SqlType::Time { .. } => "TIME",
            SqlType::Timestamp { .. } => "TIMESTAMP",
            SqlType::Boolean => "BOOLEAN",
            SqlType::Char { .. } => "CHAR",
            SqlType::Varchar { .. } => "VARCHAR",
        }
    }

    /// The precision parameter that spec type rows may range over.
    pub fn precision(&self) -> Option<u8> {
        match self {
            SqlType::Decimal { precision, .. }
            | SqlType::Time { precision }
            | SqlType::Timestamp { precision } => Some(*precision),
            _ => None,
        }
    }

    /// The decimal scale, for DECIMAL.
    pub fn scale(&self) -> Option<i8> {
        match self {
            SqlType::Decimal { scale, .. } => Some(*scale),
            _ => None,
        }
    }
}

impl fmt::Display for SqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlType::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            SqlType::Time { precision } => write!(f, "TIME({precision})"),
            SqlType::Timestamp { precision } => write!(f, "TIMESTAMP({precision})"),
            SqlType::Char { length } => write!(f, "CHAR({length})"),
            SqlType::Varchar { length } if *length == u32::MAX >> 1 => write!(f, "STRING"),
            SqlType::Varchar { length } => write!(f, "VARCHAR({length})"),
            other => f.write_str(other.family()),
        }
    }
}

impl FromStr for SqlType {
    type Err = AggError;

    /// Parses Flink's spelling: `INT`, `DECIMAL(20, 3)`, `TIMESTAMP(9)`,
    /// `STRING`, `VARCHAR(10)`, with defaults as Flink applies them.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || AggError::Plan(format!("unknown SQL type '{text}'"));
        let compact: String = text.split_whitespace().collect::<Vec<_>>().join("");
        let upper = compact.to_ascii_uppercase();
        let (name, params) = match upper.find('(') {
            Some(open) if upper.ends_with(')') => {
                let inner = &upper[open + 1..upper.len() - 1];
                let params = inner
                    .split(',')
                    .map(|p| p.parse::<i64>().map_err(|_| bad()))
                    .collect::<Result<Vec<_>, _>>()?;
                (&upper[..open], params)
            }
            Some(_) => return Err(bad()),
            None => (upper.as_str(), Vec::new()),
        };
        let one = |default: i64, max: i64| -> Result<i64, AggError> {
            match params.as_slice() {
                [] => Ok(default),
                [p] if (0..=max).contains(p) => Ok(*p),
                _ => Err(bad()),
            }
        };
        Ok(match name {
            "TINYINT" if params.is_empty() => SqlType::TinyInt,
            "SMALLINT" if params.is_empty() => SqlType::SmallInt,
            "INT" | "INTEGER" if params.is_empty() => SqlType::Int,
            "BIGINT" if params.is_empty() => SqlType::BigInt,
            "FLOAT" | "REAL" if params.is_empty() => SqlType::Float,
            "DOUBLE" if params.is_empty() => SqlType::Double,
            "DECIMAL" | "NUMERIC" | "DEC" => {
                let (precision, scale) = match params.as_slice() {
                    [] => (10, 0),
                    [p] => (*p, 0),
                    [p, s] => (*p, *s),
                    _ => return Err(bad()),
                };
                if !(1..=38).contains(&precision) || !(0..=precision).contains(&scale) {
                    return Err(bad());
                }
                SqlType::Decimal {
                    precision: precision as u8,
                    scale: scale as i8,
                }
            }
            "DATE" if params.is_empty() => SqlType::Date,
            "TIME" => SqlType::Time {
                precision: one(0, 9)? as u8,
            },
            "TIMESTAMP" => SqlType::Timestamp {
                precision: one(6, 9)? as u8,
            },
            "BOOLEAN" if params.is_empty() => SqlType::Boolean,
            "CHAR" => SqlType::Char {
                length: one(1, i32::MAX as i64)? as u32,
            },
            "VARCHAR" => SqlType::Varchar {
                length: one(1, i32::MAX as i64)? as u32,
            },
            "STRING" if params.is_empty() => SqlType::Varchar {
                length: u32::MAX >> 1,
            },
            _ => return Err(bad()),
        })
    }
}

/// Which half of Flink's aggregation plan an operator is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// One stateful operator that reads raw rows and emits the changelog.
    Single,
    /// Stateless per bundle: reads raw rows, emits partial accumulators.
    Local,
    /// Stateful: merges partials and emits the changelog.
    Global,
}

impl Phase {
    /// Every phase, in spec order.
    pub const ALL: [Phase; 3] = [Phase::Single, Phase::Local, Phase::Global];

    /// The spec spelling: `single`, `local`, `global`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Phase::Single => "single",
            Phase::Local => "local",
            Phase::Global => "global",
        }
    }
}

impl FromStr for Phase {
    type Err = AggError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "single" => Ok(Phase::Single),
            "local" => Ok(Phase::Local),
            "global" => Ok(Phase::Global),
            _ => Err(AggError::Plan(format!(
                "unknown phase '{text}' (expected single, local or global)"
            ))),
        }
    }
}

/// Whether an aggregate's input may contain retractions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputMode {
    /// Only +I rows reach the aggregate.
    InsertOnly,
    /// -U and -D rows may reach the aggregate.
    Retracting,
}

impl InputMode {
    /// The spec spelling: `insert_only` or `retracting`.
    pub fn as_str(&self) -> &'static str {
        match self {
            InputMode::InsertOnly => "insert_only",
            InputMode::Retracting => "retracting",
        }
    }
}

impl FromStr for InputMode {
    type Err = AggError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "insert_only" => Ok(InputMode::InsertOnly),
            "retracting" => Ok(InputMode::Retracting),
            _ => Err(AggError::Plan(format!(
                "unknown input mode '{text}' (expected insert_only or retracting)"
            ))),
        }
    }
}

/// Flink's RowKind, as encoded in the Int8 `$row_kind` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i8)]
pub enum RowKind {
    /// +I
    Insert = 0,
    /// -U
    UpdateBefore = 1,
    /// +U
    UpdateAfter = 2,
    /// -D
    Delete = 3,
}

impl RowKind {
    /// Decodes the Int8 encoding.
    pub fn from_i8(code: i8) -> Option<RowKind> {
        match code {
            0 => Some(RowKind::Insert),
            1 => Some(RowKind::UpdateBefore),
            2 => Some(RowKind::UpdateAfter),
            3 => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// True for +I and +U, which Flink accumulates.
    pub fn is_accumulate(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }

    /// Flink's short form: `+I`, `-U`, `+U`, `-D`.
    pub fn short_string(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }
}

/// The name of the optional row-kind column in input and output batches.
pub const ROW_KIND_COLUMN: &str = "$row_kind";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flink_spellings() {
        assert_eq!("int".parse::<SqlType>().unwrap(), SqlType::Int);
        assert_eq!(
            "DECIMAL(20, 3)".parse::<SqlType>().unwrap(),
            SqlType::Decimal {
                precision: 20,
                scale: 3
            }
        );
        assert_eq!(
            "TIMESTAMP".parse::<SqlType>().unwrap(),
            SqlType::Timestamp { precision: 6 }
        );
        assert_eq!("STRING".parse::<SqlType>().unwrap().to_string(), "STRING");
        assert!("DECIMAL(40,2)".parse::<SqlType>().is_err());
        assert!("INTT".parse::<SqlType>().is_err());
    }
}
