//! The `aggforge` command line tool.
fn main() {}
