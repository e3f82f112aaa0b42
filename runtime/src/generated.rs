//! Code generated from `specs/` at build time by
//! `aggforge_macros::include_specs!`: one accumulator struct per
//! specialization (e.g. `MinInt`, `SumDecimal18`, `CountStar`) with its
//! per-type rule, `GroupAccumulator` and DataFusion `GroupsAccumulator`
//! impls, then the registry table [`ADMISSIONS`] and [`type_row_of`].
//! Run `aggforge expand FUNCTION TYPE PHASE` to read one of them.

aggforge_macros::include_specs!("../specs");
