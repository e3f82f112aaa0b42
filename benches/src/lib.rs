//! Shared data generators for the aggforge benches.
