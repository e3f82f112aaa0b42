//! Rebuilds the runtime when anything under `specs/` or `src/templates/`
//! (the state template declarations) changes, new files included;
//! `include_specs!` also `include_bytes!`s each file.
fn main() {
    println!("cargo:rerun-if-changed=../specs");
    println!("cargo:rerun-if-changed=src/templates");
    println!("cargo:rerun-if-changed=build.rs");
}
