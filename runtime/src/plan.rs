//! The plan descriptor the Java side sends for one group-aggregate
//! operator, its wire format, and admission.
//!
//! # Wire format (version 1)
//!
//! One UTF-8 JSON object:
//!
//! ```json
//! {
//!   "version": 1,
//!   "key_columns": [0], "key_types": ["INT"],
//!   "calls": [{"function": "MAX", "args": [1], "arg_types": ["DOUBLE"],
//!              "distinct": false, "filter": null, "result_type": "DOUBLE"}],
//!   "phase": "single", "input": "insert_only", "emission": "mini_batch",
//!   "generate_update_before": true, "state_ttl_ms": 0,
//!   "memory_budget_bytes": 67108864, "max_parallelism": 128
//! }
//! ```
//!
//! Types use Flink's spelling (`DECIMAL(20, 3)`, `TIMESTAMP(3)`, `STRING`);
//! `phase` is `single`, `local` or `global`; `input` is `insert_only` or
//! `retracting`; `emission` is `immediate` or `mini_batch`. Every field is
//! required but a call's `result_type` (Flink's result type of the call,
//! checked against the specialization's at admission) and
//! `count_star_column` and `views`; unknown fields are rejected. A reader accepts exactly the
//! versions it knows ([`PLAN_FORMAT_VERSION`]).
//!
//! Column indexes refer to the operator's input batch. For the global
//! phase a call's `args` are the indexes of its partial columns (Flink's
//! accumulator layout) while `arg_types` stay the types of the original
//! argument, which pick the specialization.
//!
//! Two-phase plans with DISTINCT calls list `views`, Flink's DistinctInfos:
//! `{"calls": [0, 2], "column": 5}`, the calls sharing one distinct MapView
//! in Flink's order and, for the global phase, the input column holding it.
//! The local phase writes each view after every call's partial columns, in
//! the order listed; a DISTINCT call's own `args` there and in the global
//! phase name the inner aggregate's partial columns only.

use std::fmt;

use arrow_schema::DataType;
use serde::{Deserialize, Serialize};

use crate::error::{AggError, Result};
use crate::group_table::{GroupTable, TablePath};
pub use crate::registry::NotAdmitted;
use crate::types::{InputMode, JitMode, Phase, SqlType};
pub use crate::window_agg::WindowPlan;

/// The plan wire-format version this runtime writes and reads.
pub const PLAN_FORMAT_VERSION: u32 = 1;

/// Flink's largest supported max parallelism (number of key groups).
pub const MAX_KEY_GROUPS: u32 = 32768;

/// When a stateful operator emits its changelog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Emission {
    /// Per input row (Flink's GroupAggFunction).
    Immediate,
    /// Once per touched group at the end of each bundle (Flink's
    /// MapBundle-based mini-batch functions).
    MiniBatch,
}

impl Emission {
    /// The wire spelling: `immediate` or `mini_batch`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Emission::Immediate => "immediate",
            Emission::MiniBatch => "mini_batch",
        }
    }

    fn parse(text: &str) -> Result<Self> {
        match text {
            "immediate" => Ok(Emission::Immediate),
            "mini_batch" => Ok(Emission::MiniBatch),
            _ => Err(AggError::Plan(format!(
                "unknown emission '{text}' (expected immediate or mini_batch)"
            ))),
        }
    }
}

/// One aggregate call of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggCall {
    /// Function name: MIN, MAX, COUNT_STAR, COUNT, SUM, SUM0, AVG.
    pub function: String,
    /// Input column indexes of the arguments (of the partial columns for
    /// the global phase).
    pub args: Vec<usize>,
    /// SQL types of the original arguments.
    pub arg_types: Vec<SqlType>,
    /// `AGG(DISTINCT x)`.
    pub distinct: bool,
    /// Input column index of the BOOLEAN `FILTER (WHERE ...)` column.
    pub filter: Option<usize>,
    /// The call's result type as Flink plans it; admission refuses a
    /// specialization whose result has another Arrow type. `None` (plans
    /// written before the field existed) skips the check.
    pub result_type: Option<SqlType>,
    /// Whether Flink planned the call with retraction (its
    /// `aggCallNeedRetractions`). Over retracting input a call without it
    /// runs its insert-only function, which skips -U/-D rows.
    pub retracts: bool,
}

/// Everything one group-aggregate operator needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggPlan {
    /// Input column indexes of the grouping keys, in key order.
    pub key_columns: Vec<usize>,
    /// SQL types of the grouping keys.
    pub key_types: Vec<SqlType>,
    /// The aggregate calls, in output order.
    pub calls: Vec<AggCall>,
    /// Which half of the aggregation this operator is.
    pub phase: Phase,
    /// Whether the input may hold retractions.
    pub input: InputMode,
    /// Per-row or per-bundle emission (single phase; local and global
    /// are always bundled).
    pub emission: Emission,
    /// Emit -U before +U.
    pub generate_update_before: bool,
    /// Idle state retention; above zero unchanged results are re-emitted
    /// as Flink does.
    pub state_ttl_ms: u64,
    /// Bytes of state the operator may hold.
    pub memory_budget_bytes: usize,
    /// Flink's max parallelism: the number of key groups.
    pub max_parallelism: u32,
    /// Global phase over retracting input without a COUNT(*) call: the
    /// input column of the COUNT(*) partial Flink's planner inserts to
    /// count records (after every call's partials). `None` otherwise.
    pub count_star_column: Option<usize>,
    /// Two-phase plans: the DISTINCT views (Flink's DistinctInfos), each
    /// shared by the DISTINCT calls over one argument. Empty otherwise.
    pub views: Vec<DistinctView>,
    /// Split-distinct plans in mini-batch mode: a global phase fused with
    /// the next level's local phase (Flink's IncrementalGroupAggregate).
    /// The keys are the partial level's; these are the positions, in
    /// `key_columns`, of the final level's keys. The operator keeps only
    /// the DISTINCT views as state and emits, per final key and bundle,
    /// the partials of what entered the views (and of the other calls'
    /// partials) in this bundle. `None` for every other plan.
    pub final_key: Option<Vec<usize>>,
    /// A window aggregate's windows (`crate::window_agg`); `None` for a
    /// GROUP BY aggregate.
    pub window: Option<WindowPlan>,
    /// Whether fixed-width calls run in one JIT-compiled loop.
    pub jit: JitMode,
}

/// DISTINCT calls sharing one distinct MapView in a two-phase plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistinctView {
    /// The calls (plan indexes), in Flink's order within the view: call
    /// `calls[i]` owns bit or count `i` of each entry's value.
    pub calls: Vec<usize>,
    /// Global phase: the input column holding the view's partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireCall {
    function: String,
    args: Vec<usize>,
    arg_types: Vec<String>,
    distinct: bool,
    filter: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result_type: Option<String>,
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    retracts: bool,
}

fn yes() -> bool {
    true
}

fn is_yes(value: &bool) -> bool {
    *value
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WirePlan {
    version: u32,
    key_columns: Vec<usize>,
    key_types: Vec<String>,
    calls: Vec<WireCall>,
    phase: String,
    input: String,
    emission: String,
    generate_update_before: bool,
    state_ttl_ms: u64,
    memory_budget_bytes: usize,
    max_parallelism: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    count_star_column: Option<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    views: Vec<DistinctView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_key: Option<Vec<usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window: Option<WindowPlan>,
    #[serde(default, skip_serializing_if = "JitMode::is_auto")]
    jit: JitMode,
}

fn parse_types(types: &[String]) -> Result<Vec<SqlType>> {
    types.iter().map(|t| t.parse()).collect()
}

impl AggPlan {
    /// Serializes the plan in wire format version [`PLAN_FORMAT_VERSION`].
    pub fn to_json(&self) -> String {
        let wire = WirePlan {
            version: PLAN_FORMAT_VERSION,
            key_columns: self.key_columns.clone(),
            key_types: self.key_types.iter().map(|t| t.to_string()).collect(),
            calls: self
                .calls
                .iter()
                .map(|c| WireCall {
                    function: c.function.clone(),
                    args: c.args.clone(),
                    arg_types: c.arg_types.iter().map(|t| t.to_string()).collect(),
                    distinct: c.distinct,
                    filter: c.filter,
                    result_type: c.result_type.map(|t| t.to_string()),
                    retracts: c.retracts,
                })
                .collect(),
            phase: self.phase.as_str().to_string(),
            input: self.input.as_str().to_string(),
            emission: self.emission.as_str().to_string(),
            generate_update_before: self.generate_update_before,
            state_ttl_ms: self.state_ttl_ms,
            memory_budget_bytes: self.memory_budget_bytes,
            max_parallelism: self.max_parallelism,
            count_star_column: self.count_star_column,
            views: self.views.clone(),
            final_key: self.final_key.clone(),
            window: self.window.clone(),
            jit: self.jit,
        };
        // Serializing plain strings, numbers and vectors cannot fail.
        serde_json::to_string(&wire).unwrap_or_default()
    }

    /// Parses and validates a plan in wire format.
    pub fn from_json(text: &str) -> Result<Self> {
        let wire: WirePlan = serde_json::from_str(text)
            .map_err(|e| AggError::Plan(format!("plan is not valid JSON: {e}")))?;
        if wire.version != PLAN_FORMAT_VERSION {
            return Err(AggError::Plan(format!(
                "plan format version {} is not supported (this runtime reads version {})",
                wire.version, PLAN_FORMAT_VERSION
            )));
        }
        let calls = wire
            .calls
            .into_iter()
            .map(|c| {
                Ok(AggCall {
                    function: c.function,
                    args: c.args,
                    arg_types: parse_types(&c.arg_types)?,
                    distinct: c.distinct,
                    filter: c.filter,
                    result_type: c.result_type.as_deref().map(str::parse).transpose()?,
                    retracts: c.retracts,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let plan = AggPlan {
            key_columns: wire.key_columns,
            key_types: parse_types(&wire.key_types)?,
            calls,
            phase: Phase::parse(&wire.phase).ok_or_else(|| {
                AggError::Plan(format!(
                    "unknown phase '{}' (expected single, local or global)",
                    wire.phase
                ))
            })?,
            input: InputMode::parse(&wire.input).ok_or_else(|| {
                AggError::Plan(format!(
                    "unknown input mode '{}' (expected insert_only or retracting)",
                    wire.input
                ))
            })?,
            emission: Emission::parse(&wire.emission)?,
            generate_update_before: wire.generate_update_before,
            state_ttl_ms: wire.state_ttl_ms,
            memory_budget_bytes: wire.memory_budget_bytes,
            max_parallelism: wire.max_parallelism,
            count_star_column: wire.count_star_column,
            views: wire.views,
            final_key: wire.final_key,
            window: wire.window,
            jit: wire.jit,
        };
        plan.validate()?;
        Ok(plan)
    }

    /// The input mode `call` runs in: the plan's, but insert-only for a
    /// call Flink planned without retraction (it skips -U/-D rows).
    pub fn call_input(&self, call: &AggCall) -> InputMode {
        if call.retracts {
            self.input
        } else {
            InputMode::InsertOnly
        }
    }

    /// The registry row for `call` in this plan's phase and input mode.
    pub fn lookup(
        &self,
        call: &AggCall,
    ) -> Result<&'static crate::registry::Admission, NotAdmitted> {
        let admission = crate::registry::lookup(
            &call.function,
            call.arg_types.first(),
            self.phase,
            self.call_input(call),
            call.distinct,
        )?;
        if call.arg_types.len() > admission.max_args {
            return Err(refuse(format!(
                "{} has {} arguments; {} takes at most {}",
                call.function,
                call.arg_types.len(),
                admission.name,
                admission.max_args
            )));
        }
        // Arguments after the typed one are character strings (LISTAGG's
        // separator), read as Utf8.
        if let Some(other) = call
            .arg_types
            .iter()
            .skip(1)
            .find(|t| arrow_type(t) != DataType::Utf8)
        {
            return Err(refuse(format!(
                "{}: an argument after the first has type {other}; a character string is needed",
                call.function
            )));
        }
        Ok(admission)
    }

    /// Checks the plan's internal consistency (not whether it is admitted).
    pub fn validate(&self) -> Result<()> {
        if self.key_columns.len() != self.key_types.len() {
            return Err(AggError::Plan(format!(
                "{} key columns but {} key types",
                self.key_columns.len(),
                self.key_types.len()
            )));
        }
        if self.max_parallelism == 0 || self.max_parallelism > MAX_KEY_GROUPS {
            return Err(AggError::Plan(format!(
                "max_parallelism {} is outside 1..={MAX_KEY_GROUPS}",
                self.max_parallelism
            )));
        }
        if self.calls.is_empty() && self.phase != Phase::Single {
            return Err(AggError::Plan(format!(
                "a GROUP BY without aggregate calls runs natively in the single phase, not {}",
                self.phase.as_str()
            )));
        }
        let uncovered = self
            .key_types
            .iter()
            .chain(self.calls.iter().flat_map(|c| &c.arg_types))
            .find(|t| t.layout().is_none());
        if let Some(ty) = uncovered {
            return Err(AggError::Plan(format!(
                "no type row in specs/types.toml covers SQL type {ty}"
            )));
        }
        for (i, call) in self.calls.iter().enumerate() {
            if call.function.is_empty() {
                return Err(AggError::Plan(format!("call {i} has no function name")));
            }
            if self.phase != Phase::Global && call.args.len() != call.arg_types.len() {
                return Err(AggError::Plan(format!(
                    "call {i} ({}) has {} argument columns but {} argument types",
                    call.function,
                    call.args.len(),
                    call.arg_types.len()
                )));
            }
        }
        self.validate_views()?;
        self.validate_final_key()?;
        match &self.window {
            Some(window) => window.validate(self),
            None => Ok(()),
        }
    }

    /// An incremental plan (`final_key`) is a mini-batch global phase whose
    /// final keys are distinct positions among its keys.
    fn validate_final_key(&self) -> Result<()> {
        let Some(final_key) = &self.final_key else {
            return Ok(());
        };
        if self.phase != Phase::Global {
            return Err(AggError::Plan(format!(
                "final_key (an incremental aggregate) needs the global phase, not {}",
                self.phase.as_str()
            )));
        }
        let mut seen = vec![false; self.key_columns.len()];
        for &k in final_key {
            if k >= seen.len() || std::mem::replace(&mut seen[k], true) {
                return Err(AggError::Plan(format!(
                    "final_key {final_key:?}: position {k} is out of the {} keys or repeated",
                    seen.len()
                )));
            }
        }
        Ok(())
    }

    /// Whether this plan is Flink's IncrementalGroupAggregate (`final_key`).
    pub fn is_incremental(&self) -> bool {
        self.final_key.is_some()
    }

    /// Every DISTINCT call of a two-phase plan is in exactly one view; the
    /// global phase names each view's column.
    fn validate_views(&self) -> Result<()> {
        if self.phase == Phase::Single {
            if !self.views.is_empty() {
                return Err(AggError::Plan(
                    "a single-phase plan lists DISTINCT views (only two-phase plans have them)"
                        .into(),
                ));
            }
            return Ok(());
        }
        let mut owner = vec![None; self.calls.len()];
        for (v, view) in self.views.iter().enumerate() {
            if view.calls.is_empty() {
                return Err(AggError::Plan(format!("DISTINCT view {v} lists no calls")));
            }
            for &c in &view.calls {
                let call = self.calls.get(c).ok_or_else(|| {
                    AggError::Plan(format!(
                        "DISTINCT view {v} lists call {c}, which is not in the plan"
                    ))
                })?;
                if !call.distinct {
                    return Err(AggError::Plan(format!(
                        "DISTINCT view {v} lists call {c} ({}), which is not DISTINCT",
                        call.function
                    )));
                }
                if let Some(other) = owner[c].replace(v) {
                    return Err(AggError::Plan(format!(
                        "call {c} is in DISTINCT views {other} and {v}"
                    )));
                }
            }
            if (self.phase == Phase::Global) != view.column.is_some() {
                return Err(AggError::Plan(format!(
                    "DISTINCT view {v}: the global phase names the view's input column, \
                     the local phase does not"
                )));
            }
        }
        if let Some(c) =
            (0..self.calls.len()).find(|&c| self.calls[c].distinct && owner[c].is_none())
        {
            return Err(AggError::Plan(format!(
                "call {c} ({} DISTINCT) of a two-phase plan is in no DISTINCT view",
                self.calls[c].function
            )));
        }
        Ok(())
    }
}

impl AggPlan {
    /// The call whose COUNT(*) counts records (Flink's RecordCounter over
    /// retracting input reuses the first COUNT(*)), if any.
    pub fn record_counter(&self) -> Option<usize> {
        self.calls
            .iter()
            .position(|c| c.function.eq_ignore_ascii_case("COUNT_STAR") && c.filter.is_none())
    }
}

impl fmt::Display for AggPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// Whether `call`, a DISTINCT call, folds its view's values in an
/// order-dependent way (float rounding, which of NaN and a number MIN/MAX
/// keeps, where a wide DECIMAL sum overflows, LISTAGG's concatenation
/// order): Flink's result then depends on its Java HashMap's iteration
/// order.
pub fn order_sensitive(call: &AggCall) -> bool {
    let f = call.function.as_str();
    match call.arg_types.first().map(arrow_type) {
        Some(DataType::Float32 | DataType::Float64) => {
            matches!(f, "SUM" | "SUM0" | "AVG" | "MIN" | "MAX")
        }
        Some(DataType::Decimal128(precision, _)) => {
            precision > 18 && matches!(f, "SUM" | "SUM0" | "AVG")
        }
        // The concatenation's order is the order values are folded in.
        Some(DataType::Utf8) => f == "LISTAGG",
        _ => false,
    }
}

/// What an admitted plan runs with.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The specialization of each call, e.g. `MIN<INT>/insert_only`.
    pub specializations: Vec<String>,
    /// The registry row of each call, which creates its accumulators.
    pub admissions: Vec<&'static crate::registry::Admission>,
    /// The group-table path for the keys.
    pub table: TablePath,
}

fn refuse(reason: impl Into<String>) -> NotAdmitted {
    NotAdmitted {
        reason: reason.into(),
    }
}

/// Decides whether the runtime runs `plan`: every call must have a
/// specialization, else the whole plan stays on Flink with the reason.
pub fn admit(plan: &AggPlan) -> Result<Admitted, NotAdmitted> {
    plan.validate().map_err(|e| refuse(e.to_string()))?;
    if plan.input == InputMode::Retracting
        && plan.phase == Phase::Global
        && plan.record_counter().is_none()
        && plan.count_star_column.is_none()
    {
        return Err(refuse(
            "a global phase over retracting input needs the COUNT(*) partial that counts \
             records (count_star_column)",
        ));
    }
    if plan.phase != Phase::Single && plan.emission != Emission::MiniBatch {
        return Err(refuse(format!(
            "the {} phase exists only in mini-batch mode",
            plan.phase.as_str()
        )));
    }
    if plan.is_incremental() {
        if let Some((i, call)) = plan
            .calls
            .iter()
            .enumerate()
            .find(|(_, c)| c.distinct && order_sensitive(c))
        {
            return Err(refuse(format!(
                "call {i} ({} DISTINCT over {}): an incremental aggregate folds it across \
                 partial keys in Flink's HashMap order, which is not modelled",
                call.function,
                call.arg_types
                    .first()
                    .map(|t| t.to_string())
                    .unwrap_or_default()
            )));
        }
    }
    if plan.input == InputMode::Retracting {
        if let Some((i, call)) = plan
            .calls
            .iter()
            .enumerate()
            .find(|(_, c)| !c.retracts && c.distinct)
        {
            return Err(refuse(format!(
                "call {i} ({} DISTINCT) is planned without retraction over a retracting input, \
                 which is not modelled for DISTINCT views",
                call.function
            )));
        }
    }
    let mut specializations = Vec::with_capacity(plan.calls.len());
    let mut admissions = Vec::with_capacity(plan.calls.len());
    for (i, call) in plan.calls.iter().enumerate() {
        let admission = plan
            .lookup(call)
            .map_err(|e| refuse(format!("call {i} ({}): {}", call.function, e.reason)))?;
        if let Some(expected) = &call.result_type {
            check_result_type(i, call, admission, expected)?;
        }
        specializations.push(admission.name.to_string());
        admissions.push(admission);
    }
    let table = GroupTable::new(&plan.key_types)
        .map_err(|e| refuse(format!("grouping keys: {e}")))?
        .path();
    Ok(Admitted {
        specializations,
        admissions,
        table,
    })
}

/// Refuses a specialization whose result is not the Arrow type of the
/// result type Flink planned for the call (a fallback with the reason,
/// not a failure on the first output batch).
fn check_result_type(
    i: usize,
    call: &AggCall,
    admission: &crate::registry::Admission,
    expected: &SqlType,
) -> Result<(), NotAdmitted> {
    let accumulator = admission
        .create(call.arg_types.first())
        .map_err(|e| refuse(format!("call {i} ({}): {e}", call.function)))?;
    let produced = accumulator.result_type();
    let wanted = arrow_type(expected);
    if produced == wanted {
        Ok(())
    } else {
        Err(refuse(format!(
            "call {i} ({}): Flink plans result type {expected} (Arrow {wanted}), \
             but {} produces Arrow {produced}",
            call.function, admission.name
        )))
    }
}

/// The Arrow type of a column holding values of `sql`: its type row's
/// layout (types.toml's `arrow` field). `DataType::Null` for a type no row
/// covers; [`AggPlan::validate`] refuses plans with such key or argument
/// types.
pub fn arrow_type(sql: &SqlType) -> DataType {
    sql.data_type().unwrap_or(DataType::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> AggPlan {
        AggPlan {
            key_columns: vec![0],
            key_types: vec![SqlType::of("STRING")],
            calls: vec![AggCall {
                function: "SUM".into(),
                args: vec![1],
                arg_types: vec![SqlType::of("DECIMAL(20, 3)")],
                distinct: false,
                filter: None,
                result_type: None,
                retracts: true,
            }],
            phase: Phase::Single,
            input: InputMode::InsertOnly,
            emission: Emission::MiniBatch,
            generate_update_before: true,
            state_ttl_ms: 0,
            memory_budget_bytes: 1 << 20,
            max_parallelism: 128,
            count_star_column: None,
            views: Vec::new(),
            final_key: None,
            window: None,
            jit: Default::default(),
        }
    }

    #[test]
    fn a_result_type_other_than_the_specializations_is_refused() {
        let mut plan = sample();
        plan.calls[0].result_type = Some("DECIMAL(38, 3)".parse().unwrap());
        assert!(admit(&plan).is_ok());
        let json = plan.to_json();
        assert!(
            json.contains("\"result_type\":\"DECIMAL(38, 3)\""),
            "{json}"
        );
        assert_eq!(AggPlan::from_json(&json).unwrap(), plan);

        plan.calls[0].result_type = Some(SqlType::of("BIGINT"));
        let reason = admit(&plan).unwrap_err().reason;
        assert!(
            reason.contains("call 0 (SUM): Flink plans result type BIGINT (Arrow Int64), but SUM<DECIMAL_38>/insert_only produces Arrow Decimal128(38, 3)"),
            "{reason}"
        );
        // Plans without the field (written before it existed) still parse.
        let old = json.replace(",\"result_type\":\"DECIMAL(38, 3)\"", "");
        assert_eq!(AggPlan::from_json(&old).unwrap().calls[0].result_type, None);
    }

    #[test]
    fn admits_or_says_why() {
        let plan = sample();
        let admitted = admit(&plan).unwrap();
        assert_eq!(admitted.specializations.len(), 1);
        assert!(
            admitted.specializations[0].starts_with("SUM"),
            "{admitted:?}"
        );
        assert_eq!(admitted.table, TablePath::String);

        let mut distinct = sample();
        distinct.calls[0].distinct = true;
        let admitted = admit(&distinct).unwrap();
        assert!(
            admitted.specializations[0].starts_with("SUM DISTINCT<"),
            "{admitted:?}"
        );
        let arg = distinct.calls[0].arg_types[0];
        let local = crate::registry::lookup("SUM", Some(&arg), Phase::Local, distinct.input, true);
        assert!(local.is_ok(), "insert-only DISTINCT sums run in two phases");
        let local =
            crate::registry::lookup("SUM", Some(&arg), Phase::Local, InputMode::Retracting, true);
        assert!(
            local.unwrap_err().reason.contains("phase local not listed"),
            "over retracting input the order-sensitive DISTINCT sum runs in the single phase only"
        );
        let mut filtered = sample();
        filtered.calls[0].filter = Some(2);
        assert!(
            admit(&filtered).is_ok(),
            "FILTER is a boolean column of the input"
        );
        let mut retracting = sample();
        retracting.input = InputMode::Retracting;
        let admitted = admit(&retracting).unwrap();
        assert!(
            admitted.specializations[0].ends_with("/retracting"),
            "{admitted:?}"
        );
        retracting.calls[0].function = "MAX".into();
        assert!(admit(&retracting).is_ok());
        // MAX over retractions runs in every phase; FIRST_VALUE over
        // retractions in the single phase only (Flink never splits it).
        retracting.phase = Phase::Local;
        assert!(admit(&retracting).is_ok());
        retracting.calls[0].function = "FIRST_VALUE".into();
        let reason = admit(&retracting).unwrap_err().reason;
        assert!(reason.contains("local"), "{reason}");
        let mut global = sample();
        global.input = InputMode::Retracting;
        global.phase = Phase::Global;
        let reason = admit(&global).unwrap_err().reason;
        assert!(reason.contains("count_star_column"), "{reason}");
        global.count_star_column = Some(3);
        assert!(admit(&global).is_ok());
        let mut unknown = sample();
        unknown.calls[0].function = "LISTAGG".into();
        let reason = admit(&unknown).unwrap_err().reason;
        assert!(reason.contains("LISTAGG"), "{reason}");
        let mut sum_date = sample();
        sum_date.calls[0].arg_types = vec![SqlType::of("DATE")];
        assert!(admit(&sum_date).is_err());
    }

    #[test]
    fn json_round_trip() {
        let plan = sample();
        let text = plan.to_json();
        assert!(text.contains("\"version\":1"), "{text}");
        assert!(text.contains("DECIMAL(20, 3)"), "{text}");
        assert_eq!(AggPlan::from_json(&text).unwrap(), plan);
    }

    #[test]
    fn rejects_other_versions_and_bad_fields() {
        let text = sample().to_json().replace("\"version\":1", "\"version\":2");
        let err = AggPlan::from_json(&text).unwrap_err().to_string();
        assert!(err.contains("version 2"), "{err}");
        let text = sample().to_json().replace("\"single\"", "\"middle\"");
        assert!(AggPlan::from_json(&text).is_err());
        let text = sample()
            .to_json()
            .replace("\"max_parallelism\":128", "\"max_parallelism\":0");
        assert!(AggPlan::from_json(&text).is_err());
    }
}
