//! aggforge-codegen: the spec model, its validation, and the emitters that
//! turn specs into Rust.
pub mod model;
