//! Rebuilds the runtime when anything under `specs/` changes (new spec
//! files included; `include_specs!` also `include_bytes!`s each file).
fn main() {
    println!("cargo:rerun-if-changed=../specs");
    println!("cargo:rerun-if-changed=build.rs");
}
