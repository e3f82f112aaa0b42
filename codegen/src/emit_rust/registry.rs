//! The generated registry: the table of every specialization and the
//! SQL type -> type row matcher, both straight from the specs.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{InputMode, Phase, SpecSet};

/// `pub static ADMISSIONS` and `pub fn type_row_of`.
pub(crate) fn registry(specs: &SpecSet) -> TokenStream {
    let rows = specs.specializations().into_iter().map(|spec| {
        let constructor = super::instantiate::constructor_ident(&spec);
        let name = spec.display_name();
        let function = spec.function.as_str();
        let type_row = match spec.ty {
            Some(row) => {
                let row = &row.name;
                quote!(Some(#row))
            }
            None => quote!(None),
        };
        let input = match spec.entry.input {
            InputMode::InsertOnly => quote!(crate::types::InputMode::InsertOnly),
            InputMode::Retracting => quote!(crate::types::InputMode::Retracting),
        };
        let distinct = spec.entry.distinct;
        let phases = spec.entry.phases.iter().map(|phase| match phase {
            Phase::Single => quote!(crate::types::Phase::Single),
            Phase::Local => quote!(crate::types::Phase::Local),
            Phase::Global => quote!(crate::types::Phase::Global),
        });
        let location = super::short_location(&spec.entry.location);
        quote! {
            crate::registry::Admission {
                name: #name,
                function: #function,
                type_row: #type_row,
                input: #input,
                distinct: #distinct,
                phases: &[#(#phases),*],
                spec: #location,
                constructor: |arg| Ok(Box::new(#constructor(arg)?) as Box<dyn GroupAccumulator>),
            }
        }
    });
    let matchers = specs.types.iter().map(|row| {
        let name = &row.name;
        let family = &row.sql;
        match row.precision {
            Some((low, high)) => quote! {
                if family == #family && matches!(precision, Some(p) if (#low..=#high).contains(&p)) {
                    return Some(#name);
                }
            },
            None => quote! {
                if family == #family {
                    return Some(#name);
                }
            },
        }
    });
    let names = specs.types.iter().map(|row| row.name.as_str());
    quote! {
        /// Every specialization the specs declare, in spec order.
        pub static ADMISSIONS: &[crate::registry::Admission] = &[#(#rows),*];

        /// Every type row of `types.toml`, in file order.
        pub static TYPE_ROWS: &[&str] = &[#(#names),*];

        /// The `types.toml` row a SQL type falls in: the first row whose
        /// family matches and whose precision range (if any) holds it.
        pub fn type_row_of(ty: &SqlType) -> Option<&'static str> {
            let family = ty.family();
            let precision = ty.precision();
            let _ = precision;
            #(#matchers)*
            None
        }
    }
}
