//! aggforge's side of the benches: the generated accumulators picked by
//! the registry, and the local-phase bundle update (group table, then
//! every call's accumulator) composed from the runtime's parts.

use aggforge_runtime::accumulator::{BatchUpdate, GroupAccumulator};
use aggforge_runtime::error::{AggError, Result};
use aggforge_runtime::group_table::GroupTable;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggCall, AggPlan, Emission};
use aggforge_runtime::registry;
use aggforge_runtime::types::{InputMode, Phase, SqlType};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use std::sync::Arc;

use crate::data::arrow_type;

/// The registry's insert-only, non-DISTINCT accumulator for `function`
/// over `arg` in `phase`.
pub fn accumulator(
    function: &str,
    arg: Option<&SqlType>,
    phase: Phase,
) -> Result<Box<dyn GroupAccumulator>> {
    accumulator_over(function, arg, phase, InputMode::InsertOnly)
}

/// The registry's non-DISTINCT accumulator for `function` over `arg` in
/// `phase` over `input`.
pub fn accumulator_over(
    function: &str,
    arg: Option<&SqlType>,
    phase: Phase,
    input: InputMode,
) -> Result<Box<dyn GroupAccumulator>> {
    let admission = registry::lookup(function, arg, phase, input, false)
        .map_err(|reason| AggError::Plan(format!("{function}: not admitted: {reason}")))?;
    admission.create(arg)
}

/// Folds one batch into `accumulator`, growing it to `num_groups` first.
pub fn update(
    accumulator: &mut dyn GroupAccumulator,
    args: &[ArrayRef],
    group_ids: &[u32],
    num_groups: usize,
) -> Result<()> {
    if accumulator.num_groups() < num_groups {
        accumulator.resize(num_groups);
    }
    accumulator.update(&BatchUpdate {
        args,
        group_ids,
        filter: None,
        row_kinds: None,
        distinct: None,
    })
}

/// A local-phase (stateless per bundle) aggregation: one key column, calls
/// that each read one argument column.
#[derive(Debug)]
pub struct LocalPhase {
    table: GroupTable,
    calls: Vec<(Box<dyn GroupAccumulator>, usize)>,
    ids: Vec<u32>,
}

impl LocalPhase {
    /// A local phase grouping by one key of `key_type`; each call is a
    /// function, its argument type and the index of its argument column.
    pub fn new(key_type: SqlType, calls: &[(&str, SqlType, usize)]) -> Result<LocalPhase> {
        let table = GroupTable::new(&[key_type])?;
        let calls = calls
            .iter()
            .map(|(function, arg, column)| {
                accumulator(function, Some(arg), Phase::Local).map(|acc| (acc, *column))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(LocalPhase {
            table,
            calls,
            ids: Vec::new(),
        })
    }

    /// One bundle: drops the previous bundle's groups, maps the keys to
    /// group ids and folds every call. Returns the number of groups.
    pub fn bundle(&mut self, keys: &ArrayRef, args: &[ArrayRef]) -> Result<usize> {
        self.table.clear();
        let rows = keys.len();
        self.table
            .intern(std::slice::from_ref(keys), rows, &mut self.ids)?;
        let groups = self.table.len();
        for (accumulator, column) in &mut self.calls {
            let arg = args
                .get(*column)
                .ok_or_else(|| AggError::Input(format!("no argument column {column}")))?;
            accumulator.reset();
            accumulator.resize(groups);
            accumulator.update(&BatchUpdate {
                args: std::slice::from_ref(arg),
                group_ids: &self.ids,
                filter: None,
                row_kinds: None,
                distinct: None,
            })?;
        }
        Ok(groups)
    }

    /// The partial columns of every group of the last bundle, call by call
    /// (what the local phase emits).
    pub fn partials(&self) -> Result<Vec<ArrayRef>> {
        let groups: Vec<u32> = (0..self.table.len() as u32).collect();
        let mut out = self.table.keys(&groups)?;
        for (accumulator, _) in &self.calls {
            out.extend(accumulator.partials(&groups)?);
        }
        Ok(out)
    }
}

/// The runtime's own local-phase operator (Flink's
/// MiniBatchLocalGroupAggFunction): one BIGINT key in column 0, calls over
/// the following columns; one bundle is `process` then `flush` (which
/// emits keys, partials and row kinds).
#[derive(Debug)]
pub struct LocalOperator {
    operator: GroupAggOperator,
    schema: SchemaRef,
}

impl LocalOperator {
    /// An operator grouping by a `key_type` column 0; each call is a
    /// function and its argument type, reading column `1 + call index`.
    pub fn new(key_type: SqlType, calls: &[(&str, SqlType)]) -> Result<LocalOperator> {
        let mut fields = vec![Field::new("k", arrow_type(&key_type), false)];
        let calls = calls
            .iter()
            .enumerate()
            .map(|(i, (function, arg))| {
                fields.push(Field::new(format!("a{i}"), arrow_type(arg), true));
                AggCall {
                    function: function.to_string(),
                    args: vec![i + 1],
                    arg_types: vec![*arg],
                    distinct: false,
                    filter: None,
                    result_type: None,
                    retracts: true,
                }
            })
            .collect();
        let operator = GroupAggOperator::new(AggPlan {
            key_columns: vec![0],
            key_types: vec![key_type],
            calls,
            phase: Phase::Local,
            input: InputMode::InsertOnly,
            emission: Emission::MiniBatch,
            generate_update_before: true,
            state_ttl_ms: 0,
            memory_budget_bytes: 1 << 30,
            max_parallelism: 128,
            count_star_column: None,
            views: Vec::new(),
            final_key: None,
            window: None,
            jit: Default::default(),
        })?;
        Ok(LocalOperator {
            operator,
            schema: Arc::new(Schema::new(fields)),
        })
    }

    /// The input batch of one bundle: the key column, then one argument
    /// column per call.
    pub fn batch(&self, keys: &ArrayRef, args: &[ArrayRef]) -> Result<RecordBatch> {
        let mut columns = vec![keys.clone()];
        columns.extend(args.iter().cloned());
        RecordBatch::try_new(self.schema.clone(), columns).map_err(AggError::from)
    }

    /// One bundle: process the batch, then flush; returns the emitted rows.
    pub fn bundle(&mut self, batch: &RecordBatch) -> Result<usize> {
        self.operator.process(batch)?;
        Ok(self.operator.flush()?.map_or(0, |out| out.num_rows()))
    }
}

/// The group table alone, as the local phase drives it per bundle.
#[derive(Debug)]
pub struct TableOnly {
    table: GroupTable,
    ids: Vec<u32>,
}

impl TableOnly {
    /// A table for one key of `key_type`.
    pub fn new(key_type: SqlType) -> Result<TableOnly> {
        Ok(TableOnly {
            table: GroupTable::new(&[key_type])?,
            ids: Vec::new(),
        })
    }

    /// Clears the table and interns one bundle's keys; returns the groups.
    pub fn bundle(&mut self, keys: &ArrayRef) -> Result<usize> {
        self.table.clear();
        self.table
            .intern(std::slice::from_ref(keys), keys.len(), &mut self.ids)?;
        Ok(self.table.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Stream, FEW_KEYS};
    use crate::general::{Call, Function, GeneralAggregator, Scalar};
    use arrow_array::Array;

    #[test]
    fn local_phase_partials_match_the_general_path() {
        for ty in [
            SqlType::of("INT"),
            SqlType::of("DATE"),
            SqlType::of("TIME(3)"),
            SqlType::of("BOOLEAN"),
        ] {
            let stream = Stream::new(&[ty], FEW_KEYS, 2, 21);
            let mut local =
                LocalPhase::new(SqlType::of("BIGINT"), &[("MIN", ty, 0), ("MAX", ty, 0)]).unwrap();
            for (g, cols) in stream.groupings.iter().zip(&stream.columns) {
                assert_eq!(local.bundle(&g.keys, cols).unwrap(), FEW_KEYS);
                let out = local.partials().unwrap();
                assert_eq!(out.len(), 3, "key, MIN, MAX");
                let mut general = GeneralAggregator::new(vec![
                    Call {
                        function: Function::Min,
                        arg: 0,
                    },
                    Call {
                        function: Function::Max,
                        arg: 0,
                    },
                ]);
                general.update(&g.keys, cols).unwrap();
                for row in 0..out[0].len() {
                    let key = Scalar::from_array(&out[0], row).unwrap();
                    let expected = general.results(&key).unwrap().expect("key seen");
                    let got = vec![
                        Scalar::from_array(&out[1], row).unwrap(),
                        Scalar::from_array(&out[2], row).unwrap(),
                    ];
                    assert_eq!(got, expected, "{ty} key {key:?}");
                }
            }
        }
    }

    #[test]
    fn local_operator_emits_one_row_per_key() {
        let ty = SqlType::of("DATE");
        let stream = Stream::new(&[ty], FEW_KEYS, 2, 4);
        let mut op =
            LocalOperator::new(SqlType::of("BIGINT"), &[("MIN", ty), ("MAX", ty)]).unwrap();
        for (g, cols) in stream.groupings.iter().zip(&stream.columns) {
            let batch = op
                .batch(&g.keys, &[cols[0].clone(), cols[0].clone()])
                .unwrap();
            assert_eq!(op.bundle(&batch).unwrap(), FEW_KEYS);
        }
    }

    #[test]
    fn table_only_counts_the_bundle_keys() {
        let stream = Stream::new(&[], FEW_KEYS, 1, 3);
        let mut table = TableOnly::new(SqlType::of("BIGINT")).unwrap();
        assert_eq!(table.bundle(&stream.groupings[0].keys).unwrap(), FEW_KEYS);
        assert_eq!(table.bundle(&stream.groupings[0].keys).unwrap(), FEW_KEYS);
    }

    #[test]
    fn every_admission_builds_for_its_bench_type() {
        let mut built = 0;
        for admission in registry::all() {
            let arg = admission.type_row.map(|row| {
                crate::data::type_for_row(row).unwrap_or_else(|| panic!("no type for {row}"))
            });
            let acc = admission.create(arg.as_ref());
            assert!(acc.is_ok(), "{}: {:?}", admission.name, acc.err());
            built += 1;
        }
        assert!(built > 20, "registry has {built} specializations");
    }
}
