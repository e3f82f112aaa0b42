//! Code generated from `specs/` and the state template declarations in
//! `src/templates/` at build time by
//! `aggforge_macros::include_specs!`: per specialization the instantiated
//! generic accumulator (e.g. `pub type MinInt =
//! Accumulator<Slots<RunningExtreme<...>>>`, see `crate::templates`) and its
//! constructor (`new_min_int`), then the registry table [`ADMISSIONS`] and
//! the type table [`FAMILIES`] and [`TYPE_ROWS`].
//! Run `aggforge expand FUNCTION TYPE PHASE` to read one of them.

aggforge_macros::include_specs!("../specs", "src/templates");
