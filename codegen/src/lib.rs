//! aggforge-codegen: the spec model, its validation, and the emitters that
//! turn specs into Rust.
pub mod coverage;
pub mod emit_rust;
pub mod error;
pub mod load;
pub mod model;
pub mod templates;
pub mod validate;

pub use error::{SpecError, SpecErrors};
pub use load::{load_dir, load_str};
pub use templates::Templates;
