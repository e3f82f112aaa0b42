//! The `name` of a `[[family]]` or `[[type]]` table: an upper-case
//! identifier, declared once per table kind.

use std::collections::HashMap;

use crate::error::SpecError;
use crate::load::Located;
use crate::model::Location;

use super::type_expr::is_row_name;

/// The names of one table kind seen so far, with where each was first
/// declared.
#[derive(Debug, Default)]
pub(crate) struct Names {
    first: HashMap<String, Location>,
    /// Every declared name, in file order.
    pub in_order: Vec<String>,
}

impl Names {
    /// Checks `name` (of a table described as `what`, e.g. `type row`) and
    /// records it; `why` and `example` complete the error for a malformed
    /// name.
    pub fn declare(
        &mut self,
        name: &Located<String>,
        what: &str,
        why: &str,
        example: &str,
        errors: &mut Vec<SpecError>,
    ) {
        if !is_row_name(&name.value) {
            errors.push(SpecError::new(
                name.at.clone(),
                format!(
                    "{what} name `{}` must be upper-case letters, digits and underscores starting with a \
                     letter{why}, e.g. `{example}`",
                    name.value
                ),
            ));
        }
        if let Some(first) = self.first.get(&name.value) {
            errors.push(SpecError::new(
                name.at.clone(),
                format!(
                    "{what} `{}` is already declared at {first}; rename or remove one of the two",
                    name.value
                ),
            ));
        } else {
            self.first.insert(name.value.clone(), name.at.clone());
            self.in_order.push(name.value.clone());
        }
    }
}
