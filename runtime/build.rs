//! Rebuilds the runtime when anything under `specs/` or `src/templates/`
//! (the state template declarations) changes, new files included
//! (`include_specs!` also `include_bytes!`s each file), and when
//! `AGGFORGE_SPECS_DIR` (the spec directory override of `include_specs!`,
//! see `aggforge_macros`) or the directory it names changes: cargo does not
//! track a proc macro's environment reads.
fn main() {
    println!("cargo:rerun-if-changed=../specs");
    println!("cargo:rerun-if-changed=src/templates");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=AGGFORGE_SPECS_DIR");
    if let Some(dir) = std::env::var_os("AGGFORGE_SPECS_DIR").filter(|d| !d.is_empty()) {
        println!(
            "cargo:rerun-if-changed={}",
            std::path::Path::new(&dir).display()
        );
    }
}
