//! aggforge-common: the vocabulary the spec compiler (`aggforge-codegen`)
//! and the runtime (`aggforge-runtime`) share, defined once: which half of
//! Flink's aggregation plan an operator is, and whether its input may hold
//! retractions. Both spell them as spec files and plans do.

/// Which half of Flink's aggregation plan an operator is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// One stateful operator that reads raw rows and emits the changelog.
    Single,
    /// Stateless per bundle: reads raw rows, emits partial accumulators.
    Local,
    /// Stateful: merges partials and emits the changelog.
    Global,
}

impl Phase {
    /// Every phase, in spec order.
    pub const ALL: [Phase; 3] = [Phase::Single, Phase::Local, Phase::Global];

    /// The spec spelling: `single`, `local`, `global`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Phase::Single => "single",
            Phase::Local => "local",
            Phase::Global => "global",
        }
    }

    /// Parses the spec spelling (case-insensitive).
    pub fn parse(text: &str) -> Option<Phase> {
        Phase::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(text))
    }
}

/// Whether an aggregate's input may contain retractions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InputMode {
    /// Only +I rows reach the aggregate.
    InsertOnly,
    /// -U and -D rows may reach the aggregate.
    Retracting,
}

impl InputMode {
    /// Every input mode, in spec order.
    pub const ALL: [InputMode; 2] = [InputMode::InsertOnly, InputMode::Retracting];

    /// The spec spelling: `insert_only` or `retracting`.
    pub fn as_str(&self) -> &'static str {
        match self {
            InputMode::InsertOnly => "insert_only",
            InputMode::Retracting => "retracting",
        }
    }

    /// Parses the spec spelling (case-insensitive).
    pub fn parse(text: &str) -> Option<InputMode> {
        InputMode::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for phase in Phase::ALL {
            assert_eq!(Phase::parse(phase.as_str()), Some(phase));
        }
        for mode in InputMode::ALL {
            assert_eq!(InputMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(Phase::parse("GLOBAL"), Some(Phase::Global));
        assert_eq!(InputMode::parse("upsert"), None);
    }
}
