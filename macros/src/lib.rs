//! aggforge-macros: includes the code generated from `specs/` into the runtime.
use std::path::{Path, PathBuf};

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;

/// The environment variable that, when set, names the spec directory
/// [`include_specs!`] reads instead of its argument.
const SPECS_DIR_VAR: &str = "AGGFORGE_SPECS_DIR";

/// Expands to the accumulators and registry generated from a spec
/// directory and the state template declarations:
/// `include_specs!("../specs", "src/templates")`.
///
/// Both paths are resolved relative to `CARGO_MANIFEST_DIR` of the crate
/// that calls the macro (the runtime calls it with `"../specs"`, the
/// workspace's `specs/`, and `"src/templates"`, its own template files;
/// the second path defaults to `"src/templates"`). The specs are loaded
/// and validated with `aggforge_codegen::load_dir`; any spec or
/// declaration error becomes a `compile_error!` carrying
/// `file:line: message` (one per error), so a bad spec fails the build.
/// Each spec file and each template file is also `include_bytes!`d so
/// editing it rebuilds the caller (a `build.rs` with `rerun-if-changed` on
/// both directories catches new files).
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
    let usage = |e: syn::Error| {
        vec![format!(
            "include_specs! takes the spec directory and optionally the state template directory, \
             string literals relative to CARGO_MANIFEST_DIR: {e}"
        )]
    };
    let literals = syn::parse::Parser::parse2(
        syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated,
        input,
    )
    .map_err(usage)?;
    let literals: Vec<String> = literals.iter().map(|l| l.value()).collect();
    let (specs_arg, templates_arg) = match literals.as_slice() {
        [specs] => (specs.clone(), "src/templates".to_string()),
        [specs, templates] => (specs.clone(), templates.clone()),
        _ => {
            return Err(usage(syn::Error::new(
                Span::call_site(),
                "expected one or two string literals",
            )))
        }
    };
    let manifest = std::env::var("CARGO_MANIFEST_DIR")
        .map_err(|_| vec!["include_specs!: CARGO_MANIFEST_DIR is not set".to_string()])?;
    let resolve = |relative: &str, what: &str| {
        let dir = Path::new(&manifest).join(relative);
        dir.canonicalize().map_err(|e| {
            vec![format!(
                "include_specs!: {what} directory {} not found: {e}",
                dir.display()
            )]
        })
    };
    let specs_arg = match std::env::var(SPECS_DIR_VAR) {
        Ok(over) if !over.is_empty() => over,
        _ => specs_arg,
    };
    let dir = resolve(&specs_arg, "spec")?;
    let templates = resolve(&templates_arg, "state template")?;
    let specs = aggforge_codegen::load_dir(&dir, &templates)
        .map_err(|errors| errors.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    let code = aggforge_codegen::emit_rust::emit(&specs)
        .map_err(|errors| errors.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    let mut tracked = files_with(&dir, "toml").map_err(|e| vec![e])?;
    tracked.extend(files_with(&templates, "rs").map_err(|e| vec![e])?);
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

/// Every `*.EXT` file of a directory, sorted.
fn files_with(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("include_specs!: cannot list {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    Ok(files)
}
