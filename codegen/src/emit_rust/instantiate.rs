//! One specialization as generated code: the instantiated generic type
//! (`pub type MinInt = Accumulator<Slots<RunningExtreme<...>>>`) and its
//! constructor, which fixes the spec (name, input mode, Arrow types of the
//! argument, result and partials) from the argument's SQL type. The
//! semantics live in the runtime's `templates` module, one file per state
//! template; this file only picks the markers a type row and an entry's
//! parameters select.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::types::{expr_column, row_column, scale_of, ColumnType};
use super::EmitError;
use crate::model::{
    Carrier, Division, Equality, Function, InputMode, Location, Order, Overflow, Shape, SpecSet,
    Specialization, StateTemplate, TypeExpr, TypeRow,
};

/// Everything emitted for one specialization.
pub(crate) fn specialization(
    specs: &SpecSet,
    spec: &Specialization<'_>,
) -> Result<TokenStream, EmitError> {
    let ident = format_ident!("{}", spec.ident());
    let constructor = constructor_ident(spec);
    let name = spec.display_name();
    let doc = doc_text(spec);
    let doc = doc.lines().map(|line| quote!(#[doc = #line]));
    let Parts {
        state,
        arg_type,
        result_type,
        partial_types,
        scales,
    } = parts(specs, spec)?;
    let (state, partial_types) = if spec.template.under_view(spec.entry.distinct) {
        let row = spec.ty.ok_or_else(|| {
            EmitError::new(&spec.entry.location, "DISTINCT needs an argument type")
        })?;
        let column = row_column(row)?;
        let key = column.binding;
        let key_type = column.data_type;
        (
            quote!(crate::templates::distinct::Distinct<#state, #key>),
            // The view's partial follows the inner template's.
            quote!({
                let mut types = #partial_types;
                types.push(crate::kernel::multiset::counted_list_type(&#key_type));
                types
            }),
        )
    } else {
        (state, partial_types)
    };
    let row_check = match spec.ty {
        Some(row) => {
            let row_name = &row.name;
            quote! {
                let arg = crate::kernel::require_arg(arg, #name)?;
                crate::kernel::check_type_row(arg, #row_name, crate::registry::type_row_of(arg), #name)?;
            }
        }
        None => quote! { let _ = arg; },
    };
    let sql_arg = match spec.ty {
        Some(_) => quote!(Some(*arg)),
        None => quote!(None),
    };
    let arg_type = match arg_type {
        Some(data_type) => quote!(Some(#data_type)),
        None => quote!(None),
    };
    let retracting = spec.entry.input == InputMode::Retracting;
    let constructor_doc = format!(" Creates `{name}` for an argument of SQL type `arg`.");
    Ok(quote! {
        #(#doc)*
        pub type #ident = crate::templates::Accumulator<#state, #retracting>;

        #[doc = #constructor_doc]
        pub fn #constructor(arg: Option<&SqlType>) -> Result<#ident> {
            #row_check
            Ok(#ident::new(crate::templates::AccSpec {
                name: #name,
                sql_arg: #sql_arg,
                arg_type: #arg_type,
                result_type: #result_type,
                partial_types: #partial_types,
                scales: #scales,
            }))
        }
    })
}

/// `new_min_int` for `MinInt`: the registry's constructor.
pub(crate) fn constructor_ident(spec: &Specialization<'_>) -> proc_macro2::Ident {
    let mut snake = String::from("new");
    for c in spec.ident().chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    format_ident!("{}", snake)
}

fn doc_text(spec: &Specialization<'_>) -> String {
    let entry = spec.entry;
    let phases: Vec<&str> = entry.phases.iter().map(|p| p.as_str()).collect();
    let over = match spec.ty {
        Some(row) => format!(
            " over {} (Arrow {}, carrier {:?}, order {:?}, equality {:?})",
            row.name, row.arrow, row.carrier, row.order, row.equality
        ),
        None => String::new(),
    };
    format!(
        " `{}`: {}{}.\n\n Generated from {}; state template `{}` \
         (runtime/src/templates/{}.rs); phases {}.",
        spec.display_name(),
        spec.function.as_str(),
        over,
        super::short_location(&entry.location),
        entry.state.as_str(),
        entry.state.as_str(),
        phases.join(", ")
    )
}

/// The per-specialization pieces: the template state type and the
/// expressions (which may read `arg: &SqlType`) of the spec's fields.
struct Parts {
    state: TokenStream,
    arg_type: Option<TokenStream>,
    result_type: TokenStream,
    partial_types: TokenStream,
    scales: TokenStream,
}

fn parts(specs: &SpecSet, spec: &Specialization<'_>) -> Result<Parts, EmitError> {
    let entry = spec.entry;
    let at = &entry.location;
    let no_scales = quote!(crate::kernel::avg::Scales::default());
    let shape = spec.shape().ok_or_else(|| {
        EmitError::new(
            at,
            format!(
                "state template `{}` ({}) declares no partial layout and result for {}",
                entry.state.as_str(),
                spec.template.location,
                spec.ty.map_or("COUNT(*)".to_string(), |row| format!(
                    "type {} (numeric class {:?})",
                    row.name, row.numeric
                ))
            ),
        )
    })?;
    // The declared partial layout's Arrow types, in Flink's order.
    // (`accumulator` is the state kernel's struct, given by its arm below.)
    let mut declared = Vec::new();
    for field in &shape.partial {
        if field.ty != TypeExpr::Accumulator {
            declared.push(expr_column(specs, spec.ty, &field.ty, at)?.data_type);
        }
    }
    let declared_partial = quote!(vec![#(#declared),*]);
    if matches!(entry.state, StateTemplate::Count | StateTemplate::CountStar) {
        let arg_type = match (entry.state, spec.ty) {
            (StateTemplate::CountStar, None) => None,
            (StateTemplate::Count, Some(row)) => Some(row_column(row)?.data_type),
            _ => {
                return Err(EmitError::new(
                    at,
                    "count_star takes no type rows; count needs at least one",
                ))
            }
        };
        let result = expr_column(specs, spec.ty, &shape.result, at)?;
        if result.carrier != Carrier::I64 || declared.len() != 1 {
            return Err(EmitError::new(
                at,
                "the count templates keep one BIGINT count and return it",
            ));
        }
        return Ok(Parts {
            state: quote!(crate::kernel::Counts),
            arg_type,
            result_type: result.data_type,
            partial_types: declared_partial,
            scales: no_scales,
        });
    }
    let row = spec.ty.ok_or_else(|| {
        EmitError::new(
            at,
            format!("{} needs an argument type", entry.state.as_str()),
        )
    })?;
    let input = row_column(row)?;
    let out = expr_column(specs, Some(row), &shape.result, at)?;
    let arg_type = input.data_type.clone();
    let result_type = out.data_type.clone();
    match entry.state {
        StateTemplate::RunningExtreme
        | StateTemplate::Sum
        | StateTemplate::Sum0
        | StateTemplate::FirstLast => {
            match shape.partial.as_slice() {
                [field] if field.ty == shape.result => {}
                _ => {
                    return Err(EmitError::new(
                        at,
                        format!(
                            "template {} keeps one partial field of the result type",
                            entry.state.as_str()
                        ),
                    ))
                }
            }
            let rule = slot_rule(spec, shape, row, &input, &out)?;
            Ok(Parts {
                state: quote!(crate::kernel::Slots<#rule>),
                arg_type: Some(arg_type),
                partial_types: declared_partial,
                result_type,
                scales: no_scales,
            })
        }
        StateTemplate::Avg | StateTemplate::SumRetract => {
            let (sum_expr, sum) = match shape.partial.as_slice() {
                [sum, count] if count.ty == TypeExpr::Named("BIGINT".into()) => {
                    (&sum.ty, expr_column(specs, Some(row), &sum.ty, at)?)
                }
                _ => {
                    return Err(EmitError::new(
                        at,
                        "avg keeps the partial layout [sum, count: BIGINT]",
                    ))
                }
            };
            let rule = sum_count_rule(spec, shape, &input, &sum, &out)?;
            let sum_scale = scale_of(sum_expr);
            let result_scale = scale_of(&shape.result);
            Ok(Parts {
                state: quote!(crate::kernel::AvgState<#rule>),
                arg_type: Some(arg_type),
                result_type,
                partial_types: declared_partial,
                scales: quote!(crate::kernel::avg::Scales {
                    sum: #sum_scale,
                    result: #result_scale,
                }),
            })
        }
        StateTemplate::CountedExtreme => {
            let direction = direction(spec.function, "counted_extreme", at)?;
            let binding = &input.binding;
            let equality = equality(&input);
            let rule = quote! {
                crate::templates::counted_extreme::CountedExtreme<#binding, #direction, #equality>
            };
            if shape.result != TypeExpr::Arg {
                return Err(EmitError::new(
                    at,
                    "counted_extreme returns the argument's type (result = \"arg\")",
                ));
            }
            if !matches!(shape.partial.as_slice(), [field] if field.ty == TypeExpr::Accumulator) {
                return Err(EmitError::new(
                    at,
                    "counted_extreme's partial is Flink's accumulator as one field of type \
                     `accumulator`",
                ));
            }
            // Flink's accumulator is one structured partial column.
            Ok(Parts {
                state: quote!(crate::kernel::CountedExtremes<#rule>),
                partial_types: quote! {
                    crate::kernel::CountedExtremes::<#rule>::partial_types(&#arg_type)
                },
                arg_type: Some(arg_type.clone()),
                result_type: arg_type,
                scales: no_scales,
            })
        }
        StateTemplate::ListAgg | StateTemplate::ListAggRetract => {
            if input.carrier != Carrier::Bytes || out.carrier != Carrier::Bytes {
                return Err(EmitError::new(
                    at,
                    format!(
                        "{} concatenates character strings: its type rows and result are \
                         CHAR/VARCHAR",
                        entry.state.as_str()
                    ),
                ));
            }
            let (state, partial_types) = if entry.state == StateTemplate::ListAgg {
                if shape.partial.len() != 2 {
                    return Err(EmitError::new(
                        at,
                        "listagg keeps the partial layout [accDelimiter, concatAcc]",
                    ));
                }
                (quote!(crate::kernel::Concat), declared_partial)
            } else {
                if !matches!(shape.partial.as_slice(), [field] if field.ty == TypeExpr::Accumulator)
                {
                    return Err(EmitError::new(
                        at,
                        "listagg_retract's partial is Flink's accumulator as one field of type \
                         `accumulator`",
                    ));
                }
                // Flink's accumulator is one structured partial column; a
                // call with a separator adds its field when it is created.
                (
                    quote!(crate::kernel::StringLists),
                    quote!(crate::kernel::StringLists::partial_types(false)),
                )
            };
            Ok(Parts {
                state,
                partial_types,
                arg_type: Some(arg_type),
                result_type,
                scales: no_scales,
            })
        }
        StateTemplate::SingleValue => {
            if shape.result != TypeExpr::Arg {
                return Err(EmitError::new(
                    at,
                    "single_value returns the argument's type (result = \"arg\")",
                ));
            }
            let binding = &input.binding;
            let equality = equality(&input);
            let rule = quote!(crate::templates::single_value::SingleValue<#binding, #equality>);
            match shape.partial.as_slice() {
                [value, count]
                    if value.ty == TypeExpr::Arg && count.ty == TypeExpr::Named("INT".into()) => {}
                _ => {
                    return Err(EmitError::new(
                        at,
                        "single_value keeps Flink's partial layout [value: arg, count: INT]",
                    ))
                }
            }
            Ok(Parts {
                state: quote!(crate::kernel::SingleValues<#rule>),
                partial_types: declared_partial,
                arg_type: Some(arg_type.clone()),
                result_type: arg_type,
                scales: no_scales,
            })
        }
        StateTemplate::FirstLastRetract => {
            let position = position(spec.function, "first_last_retract", at)?;
            let binding = &input.binding;
            let equality = equality(&input);
            let rule = quote! {
                crate::templates::first_last_retract::FirstLastRetract<#binding, #position, #equality>
            };
            if shape.result != TypeExpr::Arg {
                return Err(EmitError::new(
                    at,
                    "first_last_retract returns the argument's type (result = \"arg\")",
                ));
            }
            // Single phase only: the "partials" are the state's snapshot columns.
            Ok(Parts {
                state: quote!(crate::kernel::ArrivalLists<#rule>),
                partial_types: quote! {
                    crate::kernel::ArrivalLists::<#rule>::state_types(&#arg_type)
                },
                arg_type: Some(arg_type.clone()),
                result_type: arg_type,
                scales: no_scales,
            })
        }
        StateTemplate::Count | StateTemplate::CountStar => unreachable!("handled above"),
    }
}

/// `Min` or `Max`.
fn direction(function: Function, template: &str, at: &Location) -> Result<TokenStream, EmitError> {
    match function {
        Function::Min => Ok(quote!(crate::templates::rules::Min)),
        Function::Max => Ok(quote!(crate::templates::rules::Max)),
        other => Err(EmitError::new(
            at,
            format!("{template} serves MIN and MAX, not {}", other.as_str()),
        )),
    }
}

/// `First` or `Last`.
fn position(function: Function, template: &str, at: &Location) -> Result<TokenStream, EmitError> {
    match function {
        Function::FirstValue => Ok(quote!(crate::templates::first_last::First)),
        Function::LastValue => Ok(quote!(crate::templates::first_last::Last)),
        other => Err(EmitError::new(
            at,
            format!(
                "{template} serves FIRST_VALUE and LAST_VALUE, not {}",
                other.as_str()
            ),
        )),
    }
}

/// The equality marker of a column's type row rule.
fn equality(column: &ColumnType) -> TokenStream {
    let float = matches!(column.carrier, Carrier::F32 | Carrier::F64);
    match (column.equality, float) {
        // Value equality of floats: the same bits.
        (Equality::Exact, true) => quote!(crate::templates::rules::BitEq),
        // Java `==` (IEEE `==` for floats), value equality otherwise.
        _ => quote!(crate::templates::rules::JavaEq),
    }
}

fn is_integer(c: Carrier) -> bool {
    matches!(
        c,
        Carrier::I8 | Carrier::I16 | Carrier::I32 | Carrier::I64 | Carrier::I128
    )
}

fn is_float(c: Carrier) -> bool {
    matches!(c, Carrier::F32 | Carrier::F64)
}

/// The rule of a one-slot state: a running extreme, SUM or SUM0.
fn slot_rule(
    spec: &Specialization<'_>,
    shape: &Shape,
    row: &TypeRow,
    input: &ColumnType,
    out: &ColumnType,
) -> Result<TokenStream, EmitError> {
    let entry = spec.entry;
    let at = &entry.location;
    let equality = equality(out);
    if entry.state == StateTemplate::RunningExtreme {
        if input.carrier != out.carrier {
            return Err(EmitError::new(
                at,
                "MIN/MAX results must have the argument's type (result = \"arg\")",
            ));
        }
        let direction = direction(spec.function, "running_extreme", &row.location)?;
        let order = extreme_order(row, input)?;
        return Ok(quote! {
            crate::templates::running_extreme::RunningExtreme<#order, #direction, #equality>
        });
    }
    if entry.state == StateTemplate::FirstLast {
        if input.carrier != out.carrier {
            return Err(EmitError::new(
                at,
                "FIRST_VALUE/LAST_VALUE results must have the argument's type (result = \"arg\")",
            ));
        }
        let position = position(spec.function, "first_last", &row.location)?;
        let binding = &input.binding;
        return Ok(quote! {
            crate::templates::first_last::FirstLast<#binding, #position, #equality>
        });
    }
    let overflow = shape.params.overflow.ok_or_else(|| {
        EmitError::new(
            &spec.template.location,
            "sum templates need params.overflow (wrap, ieee or null) in their declaration",
        )
    })?;
    let arith = sum_arith(overflow, input, out, at)?;
    Ok(if entry.state == StateTemplate::Sum0 {
        quote!(crate::templates::sum0::Sum0<#arith, #equality>)
    } else {
        quote!(crate::templates::sum::Sum<#arith, #equality>)
    })
}

/// The MIN/MAX order marker of a type row's `order`.
fn extreme_order(row: &TypeRow, column: &ColumnType) -> Result<TokenStream, EmitError> {
    let binding = &column.binding;
    match (row.order, column.carrier) {
        (Order::Signed, c) if is_integer(c) => {
            Ok(quote!(crate::templates::rules::TotalOrder<#binding>))
        }
        (Order::Timestamp, Carrier::Timestamp) => {
            Ok(quote!(crate::templates::rules::TotalOrder<#binding>))
        }
        (Order::Boolean, Carrier::Bool) => Ok(quote!(crate::templates::rules::BoolOrder)),
        (Order::Primitive, c) if is_float(c) => {
            Ok(quote!(crate::templates::rules::JavaFloat<#binding>))
        }
        (Order::Bytes, Carrier::Bytes) => Ok(quote!(crate::templates::rules::BytesOrder)),
        (order, carrier) => Err(EmitError::new(
            &row.location,
            format!(
                "order {:?} does not fit carrier {:?} of {}",
                order, carrier, row.name
            ),
        )),
    }
}

/// The sum arithmetic marker of `params.overflow` over these carriers.
fn sum_arith(
    overflow: Overflow,
    input: &ColumnType,
    sum: &ColumnType,
    at: &Location,
) -> Result<TokenStream, EmitError> {
    let (in_binding, sum_binding) = (&input.binding, &sum.binding);
    match overflow {
        Overflow::Wrap if is_integer(input.carrier) && is_integer(sum.carrier) => {
            Ok(quote!(crate::templates::rules::Wrapping<#in_binding, #sum_binding>))
        }
        Overflow::Ieee if is_float(input.carrier) && is_float(sum.carrier) => {
            Ok(quote!(crate::templates::rules::Ieee<#in_binding, #sum_binding>))
        }
        Overflow::Null if sum.carrier == Carrier::I128 && is_integer(input.carrier) => {
            Ok(quote!(crate::templates::rules::Decimal38<#in_binding>))
        }
        _ => Err(EmitError::new(
            at,
            format!(
                "overflow = {:?} does not fit argument {} with sum type {}",
                overflow, input.text, sum.text
            ),
        )),
    }
}

/// The rule of a sum-and-count state: AVG, or SUM over retractions.
fn sum_count_rule(
    spec: &Specialization<'_>,
    shape: &Shape,
    input: &ColumnType,
    sum: &ColumnType,
    out: &ColumnType,
) -> Result<TokenStream, EmitError> {
    let entry = spec.entry;
    let at = &entry.location;
    let equality = equality(out);
    if entry.state == StateTemplate::SumRetract {
        let overflow = shape.params.overflow.ok_or_else(|| {
            EmitError::new(
                &spec.template.location,
                "sum_retract needs params.overflow (wrap, ieee or null) in its declaration",
            )
        })?;
        if sum.carrier != out.carrier {
            return Err(EmitError::new(
                at,
                "sum_retract keeps its sum in the result type (partial sum = result)",
            ));
        }
        let arith = sum_arith(overflow, input, sum, at)?;
        return Ok(quote!(crate::templates::sum_retract::SumRetract<#arith, #equality>));
    }
    let division = shape.params.division.ok_or_else(|| {
        EmitError::new(
            &spec.template.location,
            "avg needs params.division (truncate, float or half_up) in its declaration",
        )
    })?;
    let (in_binding, sum_binding, out_binding) = (&input.binding, &sum.binding, &out.binding);
    let small_int = |c: Carrier| is_integer(c) && c != Carrier::I128;
    let (arith, divide) = match division {
        Division::Truncate
            if small_int(input.carrier)
                && sum.carrier == Carrier::I64
                && small_int(out.carrier) =>
        {
            (
                quote!(crate::templates::rules::Wrapping<#in_binding, #sum_binding>),
                quote!(crate::templates::avg::Truncate<#out_binding>),
            )
        }
        Division::Float
            if is_float(input.carrier) && sum.carrier == Carrier::F64 && is_float(out.carrier) =>
        {
            (
                quote!(crate::templates::rules::Ieee<#in_binding, #sum_binding>),
                quote!(crate::templates::avg::FloatDivide<#out_binding>),
            )
        }
        Division::HalfUp
            if matches!(input.carrier, Carrier::I64 | Carrier::I128)
                && sum.carrier == Carrier::I128
                && out.carrier == Carrier::I128 =>
        {
            (
                quote!(crate::templates::rules::Decimal38<#in_binding>),
                quote!(crate::templates::avg::HalfUp),
            )
        }
        _ => {
            return Err(EmitError::new(
                at,
                format!(
                    "division = {:?} does not fit argument {} with sum {} and result {}",
                    division, input.text, sum.text, out.text
                ),
            ))
        }
    };
    Ok(quote!(crate::templates::avg::Avg<#arith, #divide, #equality>))
}
