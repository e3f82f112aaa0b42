//! The generated registry: the table of every specialization and the
//! type table (families and type rows), straight from the specs.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Family, InputMode, ParamKind, Phase, SpecSet};

/// `pub static ADMISSIONS`, `FAMILIES` and `TYPE_ROWS`.
pub(crate) fn registry(specs: &SpecSet) -> TokenStream {
    let rows = specs.specializations().into_iter().map(|spec| {
        let constructor = super::instantiate::constructor_ident(&spec);
        let name = spec.display_name();
        let function = spec.function.as_str();
        let max_args = spec.function.max_args();
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
                max_args: #max_args,
                type_row: #type_row,
                input: #input,
                distinct: #distinct,
                phases: &[#(#phases),*],
                spec: #location,
                constructor: |arg| Ok(Box::new(#constructor(arg)?) as Box<dyn GroupAccumulator>),
            }
        }
    });
    let families = specs.families.iter().map(family_info);
    let type_rows = specs.types.iter().map(|row| {
        let name = &row.name;
        let family = &row.sql;
        let precision = match row.precision {
            Some((low, high)) => quote!(Some((#low, #high))),
            None => quote!(None),
        };
        let layout = layout_ident(&row.arrow);
        quote! {
            crate::types::TypeRowInfo {
                name: #name,
                family: #family,
                precision: #precision,
                layout: crate::types::Layout::#layout,
            }
        }
    });
    quote! {
        /// Every specialization the specs declare, in spec order.
        pub static ADMISSIONS: &[crate::registry::Admission] = &[#(#rows),*];

        /// Every `[[family]]` of `types.toml`, in file order.
        pub static FAMILIES: &[crate::types::Family] = &[#(#families),*];

        /// Every `[[type]]` row of `types.toml`, in file order.
        pub static TYPE_ROWS: &[crate::types::TypeRowInfo] = &[#(#type_rows),*];
    }
}

/// The runtime's `Layout` variant of an Arrow spelling: the spelling
/// without its parentheses (`Time32(Millisecond)` -> `Time32Millisecond`).
fn layout_ident(arrow: &str) -> proc_macro2::Ident {
    let name: String = arrow
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    proc_macro2::Ident::new(&name, proc_macro2::Span::call_site())
}

/// One `crate::types::Family` literal.
fn family_info(family: &Family) -> TokenStream {
    let name = &family.name;
    let spellings = &family.spellings;
    let default = family.default.unwrap_or(0);
    let max = family.max.unwrap_or(0);
    let params = match family.params {
        ParamKind::None => quote!(crate::types::ParamKind::None),
        ParamKind::Ignored => quote!(crate::types::ParamKind::Ignored),
        ParamKind::Element => quote!(crate::types::ParamKind::Element),
        ParamKind::Precision => {
            let (default, max) = (default as u8, max as u8);
            quote!(crate::types::ParamKind::Precision { default: #default, max: #max })
        }
        ParamKind::Decimal => {
            let (default, max) = (default as u8, max as u8);
            quote!(crate::types::ParamKind::Decimal { default: #default, max: #max })
        }
        ParamKind::Length => {
            quote!(crate::types::ParamKind::Length { default: #default, max: #max })
        }
    };
    let aliases = family
        .aliases
        .iter()
        .map(|(alias, length)| quote!((#alias, #length)));
    quote! {
        crate::types::Family {
            name: #name,
            spellings: &[#(#spellings),*],
            params: #params,
            aliases: &[#(#aliases),*],
        }
    }
}
