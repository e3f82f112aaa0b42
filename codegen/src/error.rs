//! Spec errors: each one a location and a sentence that says what to change.

use std::fmt;

use crate::model::Location;

/// One problem found in a spec file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {message}")]
pub struct SpecError {
    /// Where the offending value is written.
    pub location: Location,
    /// What is wrong and what to change.
    pub message: String,
}

impl SpecError {
    /// An error at `location`.
    pub fn new(location: Location, message: impl Into<String>) -> SpecError {
        SpecError {
            location,
            message: message.into(),
        }
    }
}

/// Every problem found in a spec directory: types.toml first, then the
/// family files in name order, each by line.
#[derive(Debug, Clone, PartialEq, Eq, Default, thiserror::Error)]
pub struct SpecErrors(pub Vec<SpecError>);

impl SpecErrors {
    /// Number of errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no errors.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The errors, in report order.
    pub fn iter(&self) -> std::slice::Iter<'_, SpecError> {
        self.0.iter()
    }
}

impl fmt::Display for SpecErrors {
    /// One `file:line: message` per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl<'a> IntoIterator for &'a SpecErrors {
    type Item = &'a SpecError;
    type IntoIter = std::slice::Iter<'a, SpecError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
