//! One generated accumulator per specialization: the struct, its rule impl
//! (the per-type fold written out), `GroupAccumulator`, and DataFusion's
//! `GroupsAccumulator`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::types::{equality_body, expr_column, row_column, scale_of, ColumnType};
use super::EmitError;
use crate::model::{
    Carrier, Division, Function, InputMode, Order, Overflow, SpecSet, Specialization,
    StateTemplate, TypeExpr,
};

/// Everything emitted for one specialization.
pub(crate) fn specialization(
    specs: &SpecSet,
    spec: &Specialization<'_>,
) -> Result<TokenStream, EmitError> {
    let ident = format_ident!("{}", spec.ident());
    let name = spec.display_name();
    let entry = spec.entry;
    let at = &entry.location;
    let doc = doc_text(spec);
    let doc = doc.lines().map(|line| quote!(#[doc = #line]));
    let body = match entry.state {
        StateTemplate::RunningExtreme | StateTemplate::Sum | StateTemplate::Sum0 => {
            slot_template(specs, spec, &ident)?
        }
        StateTemplate::CountStar | StateTemplate::Count => count_template(spec, &ident)?,
        StateTemplate::Avg | StateTemplate::SumRetract => avg_template(specs, spec, &ident)?,
        StateTemplate::CountedExtreme => counted_template(spec, &ident)?,
    };
    let row_check = match spec.ty {
        Some(row) => {
            let row_name = &row.name;
            quote! {
                let arg = crate::kernel::require_arg(arg, Self::NAME)?;
                crate::kernel::check_type_row(arg, #row_name, type_row_of(arg), Self::NAME)?;
            }
        }
        None => quote! { let _ = arg; },
    };
    let Body {
        fields,
        init,
        rule,
        methods,
    } = body;
    let datafusion = datafusion_impl(&ident);
    let _ = at;
    Ok(quote! {
        #(#doc)*
        #[derive(Debug)]
        pub struct #ident {
            /// The argument's SQL type, as the plan gave it.
            sql_arg: Option<SqlType>,
            #fields
        }

        impl #ident {
            /// Specialization name, as EXPLAIN shows it.
            pub const NAME: &'static str = #name;

            /// Creates the accumulator for an argument of SQL type `arg`
            /// (`None` for COUNT(*)), with no groups.
            pub fn new(arg: Option<&SqlType>) -> Result<Self> {
                let sql_arg = arg.copied();
                #row_check
                Ok(#ident { sql_arg, #init })
            }

            /// [`Self::new`], boxed: the registry's constructor.
            pub fn boxed(arg: Option<&SqlType>) -> Result<Box<dyn GroupAccumulator>> {
                Ok(Box::new(Self::new(arg)?))
            }
        }

        #rule

        impl GroupAccumulator for #ident {
            fn name(&self) -> &'static str {
                Self::NAME
            }

            #methods

            fn num_groups(&self) -> usize {
                self.state.len()
            }

            fn resize(&mut self, total_groups: usize) {
                self.state.resize(total_groups);
            }

            fn clear(&mut self, groups: &[u32]) {
                self.state.clear(groups);
            }

            fn reset(&mut self) {
                self.state.reset();
            }

            fn memory_bytes(&self) -> usize {
                self.state.memory_bytes()
            }
        }

        #datafusion
    })
}

/// The template-specific parts of a specialization.
struct Body {
    fields: TokenStream,
    init: TokenStream,
    rule: TokenStream,
    methods: TokenStream,
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
        " `{}`: {}{}.\n\n Generated from {}; state template `{}`; phases {}.",
        spec.display_name(),
        spec.function.as_str(),
        over,
        super::short_location(&entry.location),
        entry.state.as_str(),
        phases.join(", ")
    )
}

/// Prelude shared by `update` and `update_traced`: row kinds, group ids,
/// the argument column bound once, and the selected rows.
fn bind_argument(spec: &Specialization<'_>, binding: &TokenStream) -> TokenStream {
    let kinds = row_kinds(spec);
    quote! {
        #kinds
        let groups = crate::kernel::check_groups(batch.group_ids, self.state.len(), Self::NAME)?;
        let column = crate::kernel::argument(batch, 0, &self.arg_type, Self::NAME)?;
        let rows = crate::kernel::Rows::new(batch.len(), column.nulls(), batch.filter, Self::NAME)?;
        let values = <#binding as Binding>::bind(column, Self::NAME)?;
    }
}

/// Binds `kinds`: `Some(row kinds)` when a retracting specialization's
/// batch retracts, always `None` for insert-only ones (which reject -U/-D).
fn row_kinds(spec: &Specialization<'_>) -> TokenStream {
    if spec.entry.input == InputMode::Retracting {
        quote! { let kinds = crate::kernel::retract_kinds(batch, Self::NAME)?; }
    } else {
        quote! {
            crate::kernel::check_insert_only(batch, Self::NAME)?;
            let kinds: Option<&[i8]> = None;
        }
    }
}

/// Shared `merge`/`restore`/type accessors prelude checks.
fn check_partials(columns: &TokenStream, len: &TokenStream) -> TokenStream {
    quote! {
        let #columns = crate::kernel::check_columns(#columns, &self.partial_types(), #len, Self::NAME)?;
    }
}

fn widen(value: TokenStream, from: Carrier, to: &ColumnType) -> TokenStream {
    if from == to.carrier {
        value
    } else {
        let to = &to.owned;
        quote!(#to::from(#value))
    }
}

fn slot_template(
    specs: &SpecSet,
    spec: &Specialization<'_>,
    ident: &proc_macro2::Ident,
) -> Result<Body, EmitError> {
    let entry = spec.entry;
    let at = &entry.location;
    let row = spec.ty.ok_or_else(|| {
        EmitError::new(
            at,
            format!("{} needs an argument type", entry.state.as_str()),
        )
    })?;
    let input = row_column(row)?;
    let acc = expr_column(specs, Some(row), &entry.result, at)?;
    match entry.partial.as_slice() {
        [field] if field.ty == entry.result => {}
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
    let in_binding = &input.binding;
    let in_ref = &input.by_ref;
    let acc_binding = &acc.binding;
    let acc_owned = &acc.owned;
    let acc_ref = &acc.by_ref;
    let (initial_valid, poisons, initial, fold, unfold, merge, identity) = match entry.state {
        StateTemplate::RunningExtreme => {
            if input.carrier != acc.carrier {
                return Err(EmitError::new(
                    at,
                    "MIN/MAX results must have the argument's type (result = \"arg\")",
                ));
            }
            let (initial, fold, identity) = extreme_rule(spec.function, row.order, &input, row)?;
            (
                false,
                false,
                initial,
                fold,
                None,
                quote!(Self::fold(acc, valid, value)),
                identity,
            )
        }
        StateTemplate::Sum | StateTemplate::Sum0 => {
            let sum0 = entry.state == StateTemplate::Sum0;
            let overflow = entry.params.overflow.ok_or_else(|| {
                EmitError::new(
                    at,
                    "sum templates need params.overflow (wrap, ieee or null)",
                )
            })?;
            let (initial, fold, unfold, merge, identity) =
                sum_rule(sum0, overflow, &input, &acc, at)?;
            (sum0, sum0, initial, fold, Some(unfold), merge, identity)
        }
        _ => unreachable_template(at)?,
    };
    let same = equality_body(&acc);
    let identity = identity_fn(in_binding, identity);
    let unfold = unfold.map(|body| {
        quote! {
            #[inline(always)]
            fn unfold(acc: &mut #acc_owned, valid: &mut bool, value: #in_ref) {
                let _ = &valid;
                #body
            }
        }
    });
    let bind = bind_argument(spec, in_binding);
    let partials = quote!(partials);
    let state = quote!(state);
    let check_merge = check_partials(&partials, &quote!(group_ids.len()));
    let check_restore = check_partials(&state, &quote!(groups.len()));
    let arg_type = &input.data_type;
    let result_type = &acc.data_type;
    Ok(Body {
        fields: quote! {
            state: crate::kernel::Slots<#ident>,
            arg_type: DataType,
            result_type: DataType,
        },
        init: quote! {
            state: Default::default(),
            arg_type: #arg_type,
            result_type: #result_type,
        },
        rule: quote! {
            impl crate::kernel::SlotRule for #ident {
                type In = #in_binding;
                type Acc = #acc_binding;
                const INITIAL_VALID: bool = #initial_valid;
                const MERGE_NULL_POISONS: bool = #poisons;

                #[inline(always)]
                fn initial() -> #acc_owned {
                    #initial
                }

                #identity

                #[inline(always)]
                fn fold(acc: &mut #acc_owned, valid: &mut bool, value: #in_ref) {
                    #fold
                }

                #unfold

                #[inline(always)]
                fn merge(acc: &mut #acc_owned, valid: &mut bool, value: #acc_ref) {
                    #merge
                }

                #[inline(always)]
                fn same(a: #acc_ref, b: #acc_ref) -> bool {
                    #same
                }
            }
        },
        methods: quote! {
            fn result_type(&self) -> DataType {
                self.result_type.clone()
            }

            fn partial_types(&self) -> Vec<DataType> {
                vec![self.result_type.clone()]
            }

            fn state_types(&self) -> Vec<DataType> {
                self.partial_types()
            }

            fn bytes_per_group(&self) -> usize {
                crate::kernel::Slots::<Self>::bytes_per_group()
            }

            fn update(&mut self, batch: &BatchUpdate<'_>) -> Result<()> {
                #bind
                match kinds {
                    Some(kinds) => self.state.update_signed(values, &rows, groups.ids(), kinds),
                    None => self.state.update(values, &rows, &groups),
                }
                Ok(())
            }

            fn update_traced(&mut self, batch: &BatchUpdate<'_>, changed: &mut [bool]) -> Result<ArrayRef> {
                #bind
                self.state.update_traced(values, &rows, groups.ids(), kinds, changed, &self.result_type, Self::NAME)
            }

            fn merge(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()> {
                crate::kernel::check_groups(group_ids, self.state.len(), Self::NAME)?;
                #check_merge
                self.state.merge(&partials[0], group_ids, Self::NAME)
            }

            fn evaluate(&self, groups: &[u32]) -> Result<ArrayRef> {
                self.state.evaluate(groups, &self.result_type, Self::NAME)
            }

            fn partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
                Ok(vec![self.state.evaluate(groups, &self.result_type, Self::NAME)?])
            }

            fn snapshot(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
                self.partials(groups)
            }

            fn restore(&mut self, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
                #check_restore
                self.state.restore(&state[0], groups, Self::NAME)
            }

            fn mark_changed(&self, before: &ArrayRef, after: &ArrayRef, changed: &mut [bool]) -> Result<()> {
                crate::kernel::Slots::<Self>::mark_changed(before, after, changed, Self::NAME)
            }
        },
    })
}

/// The rule's `identity` override (an argument value whose fold changes no
/// state value), or nothing to keep the trait's `None`.
fn identity_fn(binding: &TokenStream, identity: Option<TokenStream>) -> TokenStream {
    match identity {
        Some(value) => quote! {
            #[inline(always)]
            fn identity<'a>() -> Option<<#binding as Binding>::Ref<'a>> {
                Some(#value)
            }
        },
        None => quote!(),
    }
}

fn unreachable_template<T>(at: &crate::model::Location) -> Result<T, EmitError> {
    Err(EmitError::new(
        at,
        "internal: template routed to the wrong emitter",
    ))
}

/// MIN/MAX per order rule: (initial value, fold body, identity). The
/// identity is the initial value where folding it changes no state value
/// (the branch-free total orders), `None` for first-value-taken rules.
fn extreme_rule(
    function: Function,
    order: Order,
    column: &ColumnType,
    row: &crate::model::TypeRow,
) -> Result<(TokenStream, TokenStream, Option<TokenStream>), EmitError> {
    let min = match function {
        Function::Min => true,
        Function::Max => false,
        other => {
            return Err(EmitError::new(
                &row.location,
                format!("running_extreme serves MIN and MAX, not {}", other.as_str()),
            ))
        }
    };
    let owned = &column.owned;
    let binding = &column.binding;
    let integer = matches!(
        column.carrier,
        Carrier::I8 | Carrier::I16 | Carrier::I32 | Carrier::I64 | Carrier::I128
    );
    let mismatch = || {
        EmitError::new(
            &row.location,
            format!(
                "order {:?} does not fit carrier {:?} of {}",
                order, column.carrier, row.name
            ),
        )
    };
    let (initial, fold, identity_safe) = match order {
        // Identity-initialized, branch-free: a fresh slot holds MAX (MIN).
        Order::Signed if integer => {
            if min {
                (
                    quote!(#owned::MAX),
                    quote! { *acc = (*acc).min(value); *valid = true; },
                    true,
                )
            } else {
                (
                    quote!(#owned::MIN),
                    quote! { *acc = (*acc).max(value); *valid = true; },
                    true,
                )
            }
        }
        Order::Timestamp if column.carrier == Carrier::Timestamp => {
            if min {
                (
                    quote!(crate::kernel::Timestamp::new(i64::MAX, i32::MAX)),
                    quote! { *acc = (*acc).min(value); *valid = true; },
                    true,
                )
            } else {
                (
                    quote!(crate::kernel::Timestamp::new(i64::MIN, i32::MIN)),
                    quote! { *acc = (*acc).max(value); *valid = true; },
                    true,
                )
            }
        }
        // false < true: MIN is AND from true, MAX is OR from false.
        Order::Boolean if column.carrier == Carrier::Bool => {
            if min {
                (quote!(true), quote! { *acc &= value; *valid = true; }, true)
            } else {
                (
                    quote!(false),
                    quote! { *acc |= value; *valid = true; },
                    true,
                )
            }
        }
        // Flink's declarative MIN/MAX with Java's `<`/`>`: the first value
        // is taken, later ones only when strictly less (greater). A NaN
        // first stays; a NaN later never replaces; -0.0 and 0.0 keep the first.
        Order::Primitive if !matches!(column.carrier, Carrier::Bytes | Carrier::Timestamp) => {
            let cmp = if min { quote!(<) } else { quote!(>) };
            let zero = match column.carrier {
                Carrier::F32 | Carrier::F64 => quote!(0.0),
                Carrier::Bool => quote!(false),
                _ => quote!(0),
            };
            (
                zero,
                quote! {
                    if !*valid || value #cmp *acc {
                        *acc = value;
                        *valid = true;
                    }
                },
                false,
            )
        }
        // Unsigned lexicographic bytes (BinaryStringData.compareTo).
        Order::Bytes if column.carrier == Carrier::Bytes => {
            let cmp = if min { quote!(<) } else { quote!(>) };
            (
                quote!(Vec::new()),
                quote! {
                    if !*valid || value #cmp acc.as_slice() {
                        <#binding as Binding>::store(acc, value);
                        *valid = true;
                    }
                },
                false,
            )
        }
        _ => return Err(mismatch()),
    };
    let identity = identity_safe.then(|| initial.clone());
    Ok((initial, fold, identity))
}

/// SUM/SUM0 per overflow rule: (initial value, fold body, unfold
/// (retract) body, merge body, identity). Wrapping integer sums add 0 as a no-op, IEEE sums add -0.0
/// (`x + -0.0` is `x` for every `x`, -0.0 and NaN included); the DECIMAL
/// rule (NULL on overflow, first value restarts) has none.
fn sum_rule(
    sum0: bool,
    overflow: Overflow,
    input: &ColumnType,
    acc: &ColumnType,
    at: &crate::model::Location,
) -> Result<
    (
        TokenStream,
        TokenStream,
        TokenStream,
        TokenStream,
        Option<TokenStream>,
    ),
    EmitError,
> {
    let value = widen(quote!(value), input.carrier, acc);
    let integer = |c: Carrier| {
        matches!(
            c,
            Carrier::I8 | Carrier::I16 | Carrier::I32 | Carrier::I64 | Carrier::I128
        )
    };
    let float = |c: Carrier| matches!(c, Carrier::F32 | Carrier::F64);
    Ok(match overflow {
        Overflow::Wrap if integer(input.carrier) && integer(acc.carrier) => {
            // Java arithmetic wraps; a fresh slot holds 0, so SUM needs no branch.
            let set_valid = if sum0 {
                quote!()
            } else {
                quote!(*valid = true;)
            };
            (
                quote!(0),
                quote! { *acc = acc.wrapping_add(#value); #set_valid },
                quote! { *acc = acc.wrapping_sub(#value); #set_valid },
                quote! { *acc = acc.wrapping_add(value); #set_valid },
                Some(quote!(0)),
            )
        }
        Overflow::Ieee if float(input.carrier) && float(acc.carrier) => {
            // SUM starts at -0.0, the identity of IEEE addition (so a first
            // -0.0 stays -0.0, as Flink takes the first value); SUM0 starts
            // at Flink's literal 0.0.
            if sum0 {
                (
                    quote!(0.0),
                    quote! { *acc += #value; },
                    quote! { *acc -= #value; },
                    quote! { *acc += value; },
                    Some(quote!(-0.0)),
                )
            } else {
                (
                    quote!(-0.0),
                    quote! { *acc += #value; *valid = true; },
                    quote! { *acc -= #value; *valid = true; },
                    quote! { *acc += value; *valid = true; },
                    Some(quote!(-0.0)),
                )
            }
        }
        Overflow::Null if acc.carrier == Carrier::I128 && integer(input.carrier) => {
            let wide = if input.carrier == Carrier::I128 {
                quote!(value)
            } else {
                quote!(i128::from(value))
            };
            let body = |value: TokenStream| {
                if sum0 {
                    // plus(NULL, x) is NULL: once overflowed, SUM0 stays NULL.
                    quote! {
                        if *valid {
                            match crate::kernel::decimal::add_38(*acc, #value) {
                                Some(sum) => *acc = sum,
                                None => {
                                    *acc = 0;
                                    *valid = false;
                                }
                            }
                        }
                    }
                } else {
                    // IF(isNull(sum), value, sum + value): past 38 digits the
                    // sum is NULL, and the next value starts it again.
                    quote! {
                        if *valid {
                            match crate::kernel::decimal::add_38(*acc, #value) {
                                Some(sum) => *acc = sum,
                                None => {
                                    *acc = 0;
                                    *valid = false;
                                }
                            }
                        } else {
                            *acc = #value;
                            *valid = true;
                        }
                    }
                }
            };
            // Retraction (SUM0 only: SUM over retracting input is
            // `sum_retract`): `minus(NULL, x)` is NULL too.
            let unfold = quote! {
                if *valid {
                    match crate::kernel::decimal::sub_38(*acc, #wide) {
                        Some(diff) => *acc = diff,
                        None => {
                            *acc = 0;
                            *valid = false;
                        }
                    }
                }
            };
            (quote!(0), body(wide), unfold, body(quote!(value)), None)
        }
        _ => {
            return Err(EmitError::new(
                at,
                format!(
                    "overflow = {:?} does not fit argument {} with sum type {}",
                    overflow, input.text, acc.text
                ),
            ))
        }
    })
}

fn count_template(
    spec: &Specialization<'_>,
    ident: &proc_macro2::Ident,
) -> Result<Body, EmitError> {
    let at = &spec.entry.location;
    let (arg_field, arg_init, rows) = match (spec.entry.state, spec.ty) {
        (StateTemplate::CountStar, None) => (
            quote!(),
            quote!(),
            quote! {
                if batch.args.len() > 1 {
                    return Err(crate::error::AggError::Input(format!(
                        "{}: COUNT(*) takes no argument column, got {}",
                        Self::NAME,
                        batch.args.len()
                    )));
                }
                let rows = crate::kernel::Rows::new(batch.len(), None, batch.filter, Self::NAME)?;
            },
        ),
        (StateTemplate::Count, Some(row)) => {
            let arg_type = row_column(row)?.data_type;
            (
                quote!(arg_type: DataType,),
                quote!(arg_type: #arg_type,),
                // COUNT(x) reads only the argument's validity.
                quote! {
                    let column = crate::kernel::argument(batch, 0, &self.arg_type, Self::NAME)?;
                    let rows = crate::kernel::Rows::new(batch.len(), column.nulls(), batch.filter, Self::NAME)?;
                },
            )
        }
        _ => {
            return Err(EmitError::new(
                at,
                "count_star takes no type rows; count needs at least one",
            ))
        }
    };
    let _ = ident;
    let kinds = row_kinds(spec);
    let partials = quote!(partials);
    let state = quote!(state);
    let check_merge = check_partials(&partials, &quote!(group_ids.len()));
    let check_restore = check_partials(&state, &quote!(groups.len()));
    Ok(Body {
        fields: quote! {
            state: crate::kernel::Counts,
            #arg_field
        },
        init: quote! {
            state: Default::default(),
            #arg_init
        },
        rule: quote!(),
        methods: quote! {
            fn result_type(&self) -> DataType {
                DataType::Int64
            }

            fn partial_types(&self) -> Vec<DataType> {
                vec![DataType::Int64]
            }

            fn state_types(&self) -> Vec<DataType> {
                vec![DataType::Int64]
            }

            fn bytes_per_group(&self) -> usize {
                crate::kernel::Counts::bytes_per_group()
            }

            fn update(&mut self, batch: &BatchUpdate<'_>) -> Result<()> {
                #kinds
                let groups = crate::kernel::check_groups(batch.group_ids, self.state.len(), Self::NAME)?;
                #rows
                match kinds {
                    Some(kinds) => self.state.update_signed(&rows, groups.ids(), kinds),
                    None => self.state.update(&rows, &groups),
                }
                Ok(())
            }

            fn update_traced(&mut self, batch: &BatchUpdate<'_>, changed: &mut [bool]) -> Result<ArrayRef> {
                #kinds
                let groups = crate::kernel::check_groups(batch.group_ids, self.state.len(), Self::NAME)?;
                #rows
                self.state.update_traced(&rows, groups.ids(), kinds, changed)
            }

            fn merge(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()> {
                crate::kernel::check_groups(group_ids, self.state.len(), Self::NAME)?;
                #check_merge
                self.state.merge(&partials[0], group_ids, Self::NAME)
            }

            fn evaluate(&self, groups: &[u32]) -> Result<ArrayRef> {
                self.state.evaluate(groups, Self::NAME)
            }

            fn partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
                Ok(vec![self.state.evaluate(groups, Self::NAME)?])
            }

            fn snapshot(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
                self.partials(groups)
            }

            fn restore(&mut self, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
                #check_restore
                self.state.restore(&state[0], groups, Self::NAME)
            }

            fn mark_changed(&self, before: &ArrayRef, after: &ArrayRef, changed: &mut [bool]) -> Result<()> {
                crate::kernel::Counts::mark_changed(before, after, changed, Self::NAME)
            }
        },
    })
}

fn avg_template(
    specs: &SpecSet,
    spec: &Specialization<'_>,
    ident: &proc_macro2::Ident,
) -> Result<Body, EmitError> {
    let entry = spec.entry;
    let at = &entry.location;
    let row = spec
        .ty
        .ok_or_else(|| EmitError::new(at, "avg needs an argument type"))?;
    let input = row_column(row)?;
    let out = expr_column(specs, Some(row), &entry.result, at)?;
    let (sum_expr, sum) = match entry.partial.as_slice() {
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
    let rule = if entry.state == StateTemplate::SumRetract {
        let overflow = entry.params.overflow.ok_or_else(|| {
            EmitError::new(at, "sum_retract needs params.overflow (wrap, ieee or null)")
        })?;
        sum_retract_rule(overflow, &input, &sum, &out, at)?
    } else {
        let division = entry.params.division.ok_or_else(|| {
            EmitError::new(at, "avg needs params.division (truncate, float or half_up)")
        })?;
        avg_rule(division, &input, &sum, &out, at)?
    };
    let SumCountRule {
        zero,
        add,
        sub,
        merge,
        finish,
        identity,
        initial_valid,
        merge_null_poisons,
    } = rule;
    let in_binding = &input.binding;
    let in_ref = &input.by_ref;
    let sum_binding = &sum.binding;
    let sum_owned = &sum.owned;
    let sum_ref = &sum.by_ref;
    let out_binding = &out.binding;
    let out_owned = &out.owned;
    let out_ref = &out.by_ref;
    let same = equality_body(&out);
    let identity = identity_fn(in_binding, identity);
    let bind = bind_argument(spec, in_binding);
    let arg_type = &input.data_type;
    let result_type = &out.data_type;
    let sum_type = &sum.data_type;
    let sum_scale = scale_of(sum_expr);
    let result_scale = scale_of(&entry.result);
    let partials = quote!(partials);
    let state = quote!(state);
    let check_merge = check_partials(&partials, &quote!(group_ids.len()));
    let check_restore = check_partials(&state, &quote!(groups.len()));
    Ok(Body {
        fields: quote! {
            state: crate::kernel::AvgState<#ident>,
            arg_type: DataType,
            result_type: DataType,
            sum_type: DataType,
            scales: crate::kernel::avg::Scales,
        },
        init: quote! {
            state: Default::default(),
            arg_type: #arg_type,
            result_type: #result_type,
            sum_type: #sum_type,
            scales: crate::kernel::avg::Scales {
                sum: #sum_scale,
                result: #result_scale,
            },
        },
        rule: quote! {
            impl crate::kernel::AvgRule for #ident {
                type In = #in_binding;
                type Sum = #sum_binding;
                type Out = #out_binding;

                #[inline(always)]
                fn zero() -> #sum_owned {
                    #zero
                }

                #identity

                const INITIAL_VALID: bool = #initial_valid;
                const MERGE_NULL_POISONS: bool = #merge_null_poisons;

                #[inline(always)]
                fn add(sum: &mut #sum_owned, valid: &mut bool, value: #in_ref) {
                    let _ = &valid;
                    #add
                }

                #[inline(always)]
                fn sub(sum: &mut #sum_owned, valid: &mut bool, value: #in_ref) {
                    let _ = &valid;
                    #sub
                }

                #[inline(always)]
                fn merge(sum: &mut #sum_owned, valid: &mut bool, value: #sum_ref) {
                    let _ = &valid;
                    #merge
                }

                #[inline(always)]
                fn finish(sum: #sum_ref, count: i64, scales: crate::kernel::avg::Scales) -> Option<#out_owned> {
                    #finish
                }

                #[inline(always)]
                fn same(a: #out_ref, b: #out_ref) -> bool {
                    #same
                }
            }
        },
        methods: quote! {
            fn result_type(&self) -> DataType {
                self.result_type.clone()
            }

            fn partial_types(&self) -> Vec<DataType> {
                vec![self.sum_type.clone(), DataType::Int64]
            }

            fn state_types(&self) -> Vec<DataType> {
                self.partial_types()
            }

            fn bytes_per_group(&self) -> usize {
                crate::kernel::AvgState::<Self>::bytes_per_group()
            }

            fn update(&mut self, batch: &BatchUpdate<'_>) -> Result<()> {
                #bind
                match kinds {
                    Some(kinds) => self.state.update_signed(values, &rows, groups.ids(), kinds),
                    None => self.state.update(values, &rows, &groups),
                }
                Ok(())
            }

            fn update_traced(&mut self, batch: &BatchUpdate<'_>, changed: &mut [bool]) -> Result<ArrayRef> {
                #bind
                self.state.update_traced(values, &rows, groups.ids(), kinds, changed, self.scales, &self.result_type, Self::NAME)
            }

            fn merge(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()> {
                crate::kernel::check_groups(group_ids, self.state.len(), Self::NAME)?;
                #check_merge
                self.state.merge(partials, group_ids, Self::NAME)
            }

            fn evaluate(&self, groups: &[u32]) -> Result<ArrayRef> {
                self.state.evaluate(groups, self.scales, &self.result_type, Self::NAME)
            }

            fn partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
                self.state.partials(groups, &self.sum_type, Self::NAME)
            }

            fn snapshot(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
                self.partials(groups)
            }

            fn restore(&mut self, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
                #check_restore
                self.state.restore(state, groups, Self::NAME)
            }

            fn mark_changed(&self, before: &ArrayRef, after: &ArrayRef, changed: &mut [bool]) -> Result<()> {
                crate::kernel::AvgState::<Self>::mark_changed(before, after, changed, Self::NAME)
            }
        },
    })
}

/// MIN/MAX over retracting input: a counted multiset per group
/// (`crate::kernel::CountedExtremes`), single phase only.
fn counted_template(
    spec: &Specialization<'_>,
    ident: &proc_macro2::Ident,
) -> Result<Body, EmitError> {
    let at = &spec.entry.location;
    let row = spec
        .ty
        .ok_or_else(|| EmitError::new(at, "counted_extreme needs an argument type"))?;
    let column = row_column(row)?;
    let min = match spec.function {
        Function::Min => true,
        Function::Max => false,
        other => {
            return Err(EmitError::new(
                at,
                format!("counted_extreme serves MIN and MAX, not {}", other.as_str()),
            ))
        }
    };
    let binding = &column.binding;
    let by_ref = &column.by_ref;
    let arg_type = &column.data_type;
    let same = equality_body(&column);
    let bind = bind_argument(spec, binding);
    let state = quote!(state);
    let check_restore = quote! {
        let #state = crate::kernel::check_columns(#state, &self.state_types(), groups.len(), Self::NAME)?;
    };
    Ok(Body {
        fields: quote! {
            state: crate::kernel::CountedExtremes<#ident>,
            arg_type: DataType,
        },
        init: quote! {
            state: Default::default(),
            arg_type: #arg_type,
        },
        rule: quote! {
            impl crate::kernel::MultisetRule for #ident {
                type Val = #binding;
                const MIN: bool = #min;

                #[inline(always)]
                fn same(a: #by_ref, b: #by_ref) -> bool {
                    #same
                }
            }
        },
        methods: quote! {
            fn result_type(&self) -> DataType {
                self.arg_type.clone()
            }

            fn partial_types(&self) -> Vec<DataType> {
                self.state_types()
            }

            fn state_types(&self) -> Vec<DataType> {
                crate::kernel::CountedExtremes::<Self>::state_types(&self.arg_type)
            }

            fn bytes_per_group(&self) -> usize {
                crate::kernel::CountedExtremes::<Self>::bytes_per_group()
            }

            fn bytes_per_input_row(&self) -> usize {
                crate::kernel::CountedExtremes::<Self>::bytes_per_row()
            }

            fn update(&mut self, batch: &BatchUpdate<'_>) -> Result<()> {
                #bind
                let _ = &groups;
                self.state.update(values, &rows, batch.group_ids, kinds);
                Ok(())
            }

            fn update_traced(&mut self, batch: &BatchUpdate<'_>, changed: &mut [bool]) -> Result<ArrayRef> {
                #bind
                self.state.update_traced(values, &rows, groups.ids(), kinds, changed, &self.arg_type, Self::NAME)
            }

            fn merge(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()> {
                let _ = (partials, group_ids);
                Err(crate::error::AggError::Plan(format!(
                    "{} runs in the single phase only; it has no partials to merge",
                    Self::NAME
                )))
            }

            fn evaluate(&self, groups: &[u32]) -> Result<ArrayRef> {
                self.state.evaluate(groups, &self.arg_type, Self::NAME)
            }

            fn partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
                self.snapshot(groups)
            }

            fn snapshot(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
                self.state.snapshot(groups, &self.arg_type, Self::NAME)
            }

            fn restore(&mut self, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
                #check_restore
                self.state.restore(state, groups, Self::NAME)
            }

            fn mark_changed(&self, before: &ArrayRef, after: &ArrayRef, changed: &mut [bool]) -> Result<()> {
                crate::kernel::CountedExtremes::<Self>::mark_changed(before, after, changed, Self::NAME)
            }
        },
    })
}

/// The arithmetic of a sum-and-count state ([`crate::kernel`]'s `AvgRule`):
/// AVG, and SUM over retracting input.
struct SumCountRule {
    zero: TokenStream,
    add: TokenStream,
    sub: TokenStream,
    merge: TokenStream,
    finish: TokenStream,
    identity: Option<TokenStream>,
    initial_valid: bool,
    merge_null_poisons: bool,
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

/// `op` (`add_38` or `sub_38`) on a DECIMAL(38) sum that stays NULL once
/// it overflowed (`plus(NULL, x)` is NULL): AVG and SUM0.
fn decimal_sticky(op: TokenStream, value: TokenStream) -> TokenStream {
    quote! {
        if *valid {
            match crate::kernel::decimal::#op(*sum, #value) {
                Some(total) => *sum = total,
                None => {
                    *sum = 0;
                    *valid = false;
                }
            }
        }
    }
}

/// AVG per division rule (AvgAggFunction: accumulate adds, retract
/// subtracts, value = sum / count).
fn avg_rule(
    division: Division,
    input: &ColumnType,
    sum: &ColumnType,
    out: &ColumnType,
    at: &crate::model::Location,
) -> Result<SumCountRule, EmitError> {
    let value = widen(quote!(value), input.carrier, sum);
    let out_owned = &out.owned;
    let small_int = |c: Carrier| is_integer(c) && c != Carrier::I128;
    Ok(match division {
        Division::Truncate
            if small_int(input.carrier)
                && sum.carrier == Carrier::I64
                && small_int(out.carrier) =>
        {
            let quotient = if out.carrier == Carrier::I64 {
                quote!(sum.wrapping_div(count))
            } else {
                // Java's narrowing cast of the long quotient.
                quote!(sum.wrapping_div(count) as #out_owned)
            };
            SumCountRule {
                zero: quote!(0),
                add: quote! { *sum = sum.wrapping_add(#value); },
                sub: quote! { *sum = sum.wrapping_sub(#value); },
                merge: quote! { *sum = sum.wrapping_add(value); },
                finish: quote! { let _ = scales; Some(#quotient) },
                // Adding 0 to a wrapping sum changes nothing.
                identity: Some(quote!(0)),
                initial_valid: true,
                merge_null_poisons: true,
            }
        }
        Division::Float
            if is_float(input.carrier) && sum.carrier == Carrier::F64 && is_float(out.carrier) =>
        {
            let quotient = if out.carrier == Carrier::F64 {
                quote!(sum / count as f64)
            } else {
                quote!((sum / count as f64) as #out_owned)
            };
            SumCountRule {
                zero: quote!(0.0),
                add: quote! { *sum += #value; },
                sub: quote! { *sum -= #value; },
                merge: quote! { *sum += value; },
                finish: quote! { let _ = scales; Some(#quotient) },
                // `x + -0.0` is `x` for every `x`.
                identity: Some(quote!(-0.0)),
                initial_valid: true,
                merge_null_poisons: true,
            }
        }
        Division::HalfUp
            if matches!(input.carrier, Carrier::I64 | Carrier::I128)
                && sum.carrier == Carrier::I128
                && out.carrier == Carrier::I128 =>
        {
            let wide = if input.carrier == Carrier::I128 {
                quote!(value)
            } else {
                quote!(i128::from(value))
            };
            SumCountRule {
                zero: quote!(0),
                add: decimal_sticky(quote!(add_38), wide.clone()),
                sub: decimal_sticky(quote!(sub_38), wide),
                merge: decimal_sticky(quote!(add_38), quote!(value)),
                finish: quote! { crate::kernel::decimal::avg_38(sum, count, scales.sum, scales.result) },
                identity: None,
                initial_valid: true,
                merge_null_poisons: true,
            }
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
    })
}

/// SUM over retracting input per overflow rule (SumWithRetractAggFunction:
/// the sum starts NULL and a value restarts a NULL sum, a retraction of
/// `x` from a NULL sum gives `0 - x`; the value is NULL while the count of
/// values is zero).
fn sum_retract_rule(
    overflow: Overflow,
    input: &ColumnType,
    sum: &ColumnType,
    out: &ColumnType,
    at: &crate::model::Location,
) -> Result<SumCountRule, EmitError> {
    let value = widen(quote!(value), input.carrier, sum);
    let finish = quote! { let _ = (count, scales); Some(sum) };
    let fits = sum.carrier == out.carrier;
    Ok(match overflow {
        Overflow::Wrap if fits && is_integer(input.carrier) && is_integer(sum.carrier) => {
            SumCountRule {
                zero: quote!(0),
                add: quote! { *sum = sum.wrapping_add(#value); },
                sub: quote! { *sum = sum.wrapping_sub(#value); },
                merge: quote! { *sum = sum.wrapping_add(value); },
                finish,
                // Integers: a NULL sum behaves as 0 (`0 + x` is `x`, `0 - x`
                // is `-x`), so the sum starts at a valid 0.
                identity: Some(quote!(0)),
                initial_valid: true,
                merge_null_poisons: false,
            }
        }
        // Floats: a NULL sum takes the first value as it is (-0.0 stays
        // -0.0) and a first retraction gives `0.0 - x`.
        Overflow::Ieee if fits && is_float(input.carrier) && is_float(sum.carrier) => {
            let restart = |op: TokenStream, value: TokenStream, fresh: TokenStream| {
                quote! {
                    if *valid {
                        *sum #op #value;
                    } else {
                        *sum = #fresh;
                        *valid = true;
                    }
                }
            };
            SumCountRule {
                zero: quote!(0.0),
                add: restart(quote!(+=), value.clone(), value.clone()),
                sub: restart(quote!(-=), value.clone(), quote!(0.0 - #value)),
                merge: restart(quote!(+=), quote!(value), quote!(value)),
                finish,
                identity: None,
                initial_valid: false,
                merge_null_poisons: false,
            }
        }
        Overflow::Null if fits && sum.carrier == Carrier::I128 && is_integer(input.carrier) => {
            let wide = if input.carrier == Carrier::I128 {
                quote!(value)
            } else {
                quote!(i128::from(value))
            };
            // Past 38 digits the sum is NULL; the next value restarts it.
            let restart = |op: TokenStream, value: TokenStream, fresh: TokenStream| {
                quote! {
                    if *valid {
                        match crate::kernel::decimal::#op(*sum, #value) {
                            Some(total) => *sum = total,
                            None => {
                                *sum = 0;
                                *valid = false;
                            }
                        }
                    } else {
                        *sum = #fresh;
                        *valid = true;
                    }
                }
            };
            SumCountRule {
                zero: quote!(0),
                add: restart(quote!(add_38), wide.clone(), wide.clone()),
                sub: restart(quote!(sub_38), wide.clone(), quote!(-#wide)),
                merge: restart(quote!(add_38), quote!(value), quote!(value)),
                finish,
                identity: None,
                initial_valid: false,
                merge_null_poisons: false,
            }
        }
        _ => {
            return Err(EmitError::new(
                at,
                format!(
                    "overflow = {:?} does not fit argument {} with sum type {}",
                    overflow, input.text, sum.text
                ),
            ))
        }
    })
}

/// DataFusion's `GroupsAccumulator`, delegating to the generic adapter in
/// `crate::datafusion`.
fn datafusion_impl(ident: &proc_macro2::Ident) -> TokenStream {
    quote! {
        #[cfg(feature = "datafusion")]
        impl datafusion_expr_common::groups_accumulator::GroupsAccumulator for #ident {
            fn update_batch(
                &mut self,
                values: &[ArrayRef],
                group_indices: &[usize],
                opt_filter: Option<&arrow_array::BooleanArray>,
                total_num_groups: usize,
            ) -> datafusion_common::Result<()> {
                crate::datafusion::update_batch(self, values, group_indices, opt_filter, total_num_groups)
            }

            fn merge_batch(
                &mut self,
                values: &[ArrayRef],
                group_indices: &[usize],
                total_num_groups: usize,
            ) -> datafusion_common::Result<()> {
                crate::datafusion::merge_batch(self, values, group_indices, total_num_groups)
            }

            fn convert_to_state(
                &self,
                values: &[ArrayRef],
                opt_filter: Option<&arrow_array::BooleanArray>,
            ) -> datafusion_common::Result<Vec<ArrayRef>> {
                let mut fresh = Self::new(self.sql_arg.as_ref()).map_err(crate::datafusion::to_datafusion)?;
                crate::datafusion::convert_to_state(&mut fresh, values, opt_filter)
            }

            fn evaluate(
                &mut self,
                emit_to: datafusion_expr_common::groups_accumulator::EmitTo,
            ) -> datafusion_common::Result<ArrayRef> {
                crate::datafusion::evaluate(self, emit_to)
            }

            fn state(
                &mut self,
                emit_to: datafusion_expr_common::groups_accumulator::EmitTo,
            ) -> datafusion_common::Result<Vec<ArrayRef>> {
                crate::datafusion::state(self, emit_to)
            }

            fn size(&self) -> usize {
                GroupAccumulator::memory_bytes(self)
            }
        }
    }
}
