//! aggforge-macros: includes the code generated from `specs/` into the runtime.
use std::path::{Path, PathBuf};

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;

/// The environment variable that, when set, names the spec directory
/// [`include_specs!`] reads instead of its argument.
const SPECS_DIR_VAR: &str = "AGGFORGE_SPECS_DIR";

/// Expands to the accumulators and registry generated from a spec
/// directory: `include_specs!("../specs")`.
///
/// The path is resolved relative to `CARGO_MANIFEST_DIR` of the crate that
/// calls the macro (the runtime calls it with `"../specs"`, the workspace's
/// `specs/`). The specs are loaded and validated with
/// `aggforge_codegen::load_dir`; any spec error becomes a `compile_error!`
/// carrying `file:line: message` (one per error), so a bad spec fails the
/// build. Each spec file is also `include_bytes!`d so editing it rebuilds
/// the caller (a `build.rs` with `rerun-if-changed` on the directory
/// catches new files).
///
/// # Overriding the spec directory
///
/// When the environment variable `AGGFORGE_SPECS_DIR` is set and not
/// empty while the caller compiles, the macro reads the spec directory it
/// names (an absolute path; a relative one is resolved against
/// `CARGO_MANIFEST_DIR` like the literal) instead of the literal's. This is
/// how a test builds the runtime from an edited copy of `specs/` without
/// touching the workspace's (`runtime/tests/spec_copy.rs`). Cargo does not
/// track a proc macro's environment reads, so the caller's `build.rs` must
/// print `cargo:rerun-if-env-changed=AGGFORGE_SPECS_DIR` (and
/// `rerun-if-changed` on the directory it names); the runtime's does. Build
/// with the override into a separate `CARGO_TARGET_DIR`, or the next normal
/// build recompiles the runtime from `specs/` again.
#[proc_macro]
pub fn include_specs(input: TokenStream) -> TokenStream {
    match expand(input.into()) {
        Ok(tokens) => tokens.into(),
        Err(messages) => {
            let errors = messages.iter().map(|m| quote!(::core::compile_error!(#m);));
            quote!(#(#errors)*).into()
        }
    }
}

fn expand(input: TokenStream2) -> Result<TokenStream2, Vec<String>> {
    let literal: syn::LitStr = syn::parse2(input).map_err(|e| {
        vec![format!(
            "include_specs! takes one string literal, the spec directory relative to CARGO_MANIFEST_DIR: {e}"
        )]
    })?;
    let manifest = std::env::var("CARGO_MANIFEST_DIR")
        .map_err(|_| vec!["include_specs!: CARGO_MANIFEST_DIR is not set".to_string()])?;
    let dir = match std::env::var_os(SPECS_DIR_VAR) {
        Some(over) if !over.is_empty() => Path::new(&manifest).join(over),
        _ => Path::new(&manifest).join(literal.value()),
    };
    let dir = dir.canonicalize().map_err(|e| {
        vec![format!(
            "include_specs!: spec directory {} not found: {e}",
            dir.display()
        )]
    })?;
    let specs = aggforge_codegen::load_dir(&dir)
        .map_err(|errors| errors.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    let code = aggforge_codegen::emit_rust::emit(&specs)
        .map_err(|errors| errors.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    let tracked = spec_files(&dir).map_err(|e| vec![e])?;
    let includes = tracked.iter().map(|path| {
        let path = syn::LitStr::new(&path.to_string_lossy(), Span::call_site());
        quote!(
            const _: &[u8] = include_bytes!(#path);
        )
    });
    Ok(quote! {
        #(#includes)*
        #code
    })
}

/// Every `*.toml` file of the spec directory, sorted.
fn spec_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("include_specs!: cannot list {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    Ok(files)
}
