//! How a type row or type expression becomes Rust: its kernel binding, its
//! carrier, its Arrow `DataType` expression and its equality rule.

use proc_macro2::TokenStream;
use quote::quote;

use super::EmitError;
use crate::model::{Access, Carrier, Equality, ScaleExpr, SpecSet, TypeExpr, TypeRow};

/// A resolved column type: what the generated code needs to read, hold,
/// build and compare one column.
#[derive(Debug, Clone)]
pub(crate) struct ColumnType {
    /// The kernel binding, e.g. `crate::kernel::Prim<arrow_array::types::Int32Type>`.
    pub binding: TokenStream,
    /// The value type as held in state, e.g. `i32` or `Vec<u8>`.
    pub owned: TokenStream,
    /// The value type as read, e.g. `i32` or `&[u8]`.
    pub by_ref: TokenStream,
    /// The carrier.
    pub carrier: Carrier,
    /// An expression of type `DataType`; may use `arg: &SqlType`.
    pub data_type: TokenStream,
    /// Result equality.
    pub equality: Equality,
    /// Human spelling for docs.
    pub text: String,
}

/// The Rust spelling of a carrier's value type.
pub(crate) fn carrier_tokens(carrier: Carrier) -> (TokenStream, TokenStream) {
    match carrier {
        Carrier::I8 => (quote!(i8), quote!(i8)),
        Carrier::I16 => (quote!(i16), quote!(i16)),
        Carrier::I32 => (quote!(i32), quote!(i32)),
        Carrier::I64 => (quote!(i64), quote!(i64)),
        Carrier::I128 => (quote!(i128), quote!(i128)),
        Carrier::F32 => (quote!(f32), quote!(f32)),
        Carrier::F64 => (quote!(f64), quote!(f64)),
        Carrier::Bool => (quote!(bool), quote!(bool)),
        Carrier::Timestamp => (
            quote!(crate::kernel::Timestamp),
            quote!(crate::kernel::Timestamp),
        ),
        Carrier::Bytes => (quote!(Vec<u8>), quote!(&[u8])),
    }
}

/// The column type of a type row.
pub(crate) fn row_column(row: &TypeRow) -> Result<ColumnType, EmitError> {
    let bad = || {
        EmitError::new(
            &row.location,
            format!(
                "type row {} has an Arrow type / access / carrier combination the emitter does not know ({} / {:?} / {:?})",
                row.name, row.arrow, row.access, row.carrier
            ),
        )
    };
    let (binding, data_type) = match row.access {
        Access::Primitive => {
            let (arrow_type, data_type) = match row.arrow.as_str() {
                "Int8" => (quote!(Int8Type), quote!(DataType::Int8)),
                "Int16" => (quote!(Int16Type), quote!(DataType::Int16)),
                "Int32" => (quote!(Int32Type), quote!(DataType::Int32)),
                "Int64" => (quote!(Int64Type), quote!(DataType::Int64)),
                "Float32" => (quote!(Float32Type), quote!(DataType::Float32)),
                "Float64" => (quote!(Float64Type), quote!(DataType::Float64)),
                "Date32" => (quote!(Date32Type), quote!(DataType::Date32)),
                "Time32(Millisecond)" => (
                    quote!(Time32MillisecondType),
                    quote!(DataType::Time32(TimeUnit::Millisecond)),
                ),
                "Timestamp(Millisecond)" => (
                    quote!(TimestampMillisecondType),
                    quote!(DataType::Timestamp(TimeUnit::Millisecond, None)),
                ),
                _ => return Err(bad()),
            };
            (
                quote!(crate::kernel::Prim<arrow_array::types::#arrow_type>),
                data_type,
            )
        }
        Access::Decimal => {
            let binding = match row.carrier {
                Carrier::I64 => quote!(crate::kernel::Dec64),
                Carrier::I128 => quote!(crate::kernel::Dec128),
                _ => return Err(bad()),
            };
            (binding, quote!(crate::kernel::decimal_type(arg)?))
        }
        Access::Boolean => (quote!(crate::kernel::Bool), quote!(DataType::Boolean)),
        Access::Timestamp => (
            quote!(crate::kernel::Ts),
            quote!(crate::kernel::timestamp_struct_type()),
        ),
        Access::Utf8 => (quote!(crate::kernel::Utf8), quote!(DataType::Utf8)),
    };
    let (owned, by_ref) = carrier_tokens(row.carrier);
    Ok(ColumnType {
        binding,
        owned,
        by_ref,
        carrier: row.carrier,
        data_type,
        equality: row.equality,
        text: row.name.clone(),
    })
}

/// The column type of a partial field or result type expression.
pub(crate) fn expr_column(
    specs: &SpecSet,
    arg: Option<&TypeRow>,
    expr: &TypeExpr,
    at: &crate::model::Location,
) -> Result<ColumnType, EmitError> {
    match expr {
        TypeExpr::Arg => {
            let row = arg.ok_or_else(|| {
                EmitError::new(
                    at,
                    "type expression `arg` used by a function without argument",
                )
            })?;
            row_column(row)
        }
        TypeExpr::Named(name) => {
            let row = specs.type_row(name).ok_or_else(|| {
                EmitError::new(at, format!("unknown type row {name} in a type expression"))
            })?;
            if row.precision.is_some() || row.access == Access::Decimal {
                return Err(EmitError::new(
                    at,
                    format!(
                        "type row {name} is parametric; name a fixed type or use DECIMAL(p, s)"
                    ),
                ));
            }
            row_column(row)
        }
        TypeExpr::Decimal { precision, scale } => {
            let precision = *precision;
            let scale_expr = match scale {
                ScaleExpr::Arg => quote!(crate::kernel::arg_scale(arg)),
                ScaleExpr::Fixed(s) => {
                    let s = *s as i8;
                    quote!(#s)
                }
                ScaleExpr::AtLeast(n) => {
                    let n = *n as i8;
                    quote!(crate::kernel::arg_scale(arg).max(#n))
                }
            };
            let text = match scale {
                ScaleExpr::Arg => format!("DECIMAL({precision}, s)"),
                ScaleExpr::Fixed(s) => format!("DECIMAL({precision}, {s})"),
                ScaleExpr::AtLeast(n) => format!("DECIMAL({precision}, max({n}, s))"),
            };
            let carrier = if precision <= 18 {
                Carrier::I64
            } else {
                Carrier::I128
            };
            let binding = if precision <= 18 {
                quote!(crate::kernel::Dec64)
            } else {
                quote!(crate::kernel::Dec128)
            };
            let (owned, by_ref) = carrier_tokens(carrier);
            Ok(ColumnType {
                binding,
                owned,
                by_ref,
                carrier,
                data_type: quote!(DataType::Decimal128(#precision, #scale_expr)),
                equality: Equality::Exact,
                text,
            })
        }
    }
}

/// The scale expression of a decimal type expression (0 otherwise).
pub(crate) fn scale_of(expr: &TypeExpr) -> TokenStream {
    match expr {
        TypeExpr::Decimal { scale, .. } => match scale {
            ScaleExpr::Arg => quote!(crate::kernel::arg_scale(arg)),
            ScaleExpr::Fixed(s) => {
                let s = *s as i8;
                quote!(#s)
            }
            ScaleExpr::AtLeast(n) => {
                let n = *n as i8;
                quote!(crate::kernel::arg_scale(arg).max(#n))
            }
        },
        TypeExpr::Arg => quote!(crate::kernel::arg_scale(arg)),
        TypeExpr::Named(_) => quote!(0),
    }
}

/// The body of `fn same(a, b) -> bool` under a column's equality rule.
pub(crate) fn equality_body(column: &ColumnType) -> TokenStream {
    let float = matches!(column.carrier, Carrier::F32 | Carrier::F64);
    match (column.equality, float) {
        // Java `==`: NaN != NaN, -0.0 == 0.0 (what IEEE `==` does).
        (Equality::Primitive, _) => quote!(a == b),
        // Value equality of floats: the same bits.
        (Equality::Exact, true) => quote!(a.to_bits() == b.to_bits()),
        (Equality::Exact, false) => quote!(a == b),
    }
}
