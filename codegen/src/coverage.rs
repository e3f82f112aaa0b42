//! Coverage matrix (todo).
