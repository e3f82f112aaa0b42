//! How a type row or type expression becomes Rust: its kernel binding, its
//! carrier, its Arrow `DataType` expression and its equality rule (the
//! marker is picked in `instantiate`).

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
    /// The carrier.
    pub carrier: Carrier,
    /// An expression of type `DataType`; may use `arg: &SqlType`.
    pub data_type: TokenStream,
    /// Result equality.
    pub equality: Equality,
    /// Human spelling for docs.
    pub text: String,
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
        Access::List => (
            quote!(crate::kernel::ListBytes),
            quote!(crate::kernel::list_type(arg)?),
        ),
    };
    Ok(ColumnType {
        binding,
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
        TypeExpr::Accumulator => Err(EmitError::new(
            at,
            "`accumulator` is a struct partial column whose type the template's state gives; \
             it is no scalar column type",
        )),
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
            Ok(ColumnType {
                binding,
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
        TypeExpr::Named(_) | TypeExpr::Accumulator => quote!(0),
    }
}
