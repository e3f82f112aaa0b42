//! The native aggregate's operations by handle, free of JNI so they can be
//! tested in Rust; `lib.rs` maps each Java native method onto one of them.

use aggforge_runtime::operator::{FlinkField, OperatorStats};
use aggforge_runtime::plan::{admit as admit_plan, AggPlan};
use arrow_array::RecordBatch;

use aggforge_runtime::exchange;

use crate::error::{BridgeError, BridgeResult};
use crate::exchange as routers;
use crate::ffi::{export_batch, import_batch};
use crate::operators::NativeOperator;
use crate::registry::Registry;

/// Every open operator of the process.
static OPERATORS: Registry<NativeOperator> = Registry::new();

/// Prefix of [`admit`]'s answer for an admitted plan.
pub const ADMITTED: &str = "admitted: ";

/// `"admitted: <specialization>, ..."` when the runtime runs the plan,
/// else the reason it does not (including why the JSON is unreadable).
pub fn admit(plan_json: &str) -> String {
    let plan = match AggPlan::from_json(plan_json) {
        Ok(plan) => plan,
        Err(e) => return e.to_string(),
    };
    match admit_plan(&plan) {
        Ok(admitted) => format!("{ADMITTED}{}", admitted.specializations.join(", ")),
        Err(refused) => refused.reason,
    }
}

/// The least memory budget that holds one batch of `batch_rows` rows of
/// the plan (see [`NativeOperator::min_budget_bytes`]).
pub fn minimum_budget(plan_json: &str, batch_rows: usize) -> BridgeResult<usize> {
    let plan = AggPlan::from_json(plan_json)?;
    Ok(NativeOperator::new(plan)?.min_budget_bytes(batch_rows))
}

/// Creates an operator for the plan; returns its handle.
pub fn create(plan_json: &str) -> BridgeResult<u64> {
    let plan = AggPlan::from_json(plan_json)?;
    let operator = NativeOperator::new(plan)?;
    Ok(OPERATORS.insert(operator))
}

/// Moves a window aggregate's event time to `watermark` (its next flush
/// fires the windows it passed); returns whether that flush has anything
/// to do. GROUP BY aggregates ignore it (false).
pub fn advance(handle: u64, watermark: i64) -> BridgeResult<bool> {
    OPERATORS.with(handle, |op| Ok(op.advance(watermark)))
}

/// [`advance`] if a local window phase's flush gate stays shut at
/// `watermark` whatever rows are pending; returns whether it did.
pub fn advance_if_gate_shut(handle: u64, watermark: i64) -> BridgeResult<bool> {
    OPERATORS.with(handle, |op| Ok(op.advance_if_gate_shut(watermark)))
}

/// When a window aggregate's earliest pending window fires (`i64::MAX`:
/// none).
pub fn next_fire_time(handle: u64) -> BridgeResult<i64> {
    OPERATORS.with(handle, |op| Ok(op.next_fire_time()))
}

/// Rows a window aggregate dropped as late so far.
pub fn late_dropped(handle: u64) -> BridgeResult<u64> {
    OPERATORS.with(handle, |op| Ok(op.late_dropped()))
}

/// Writes `output` (when it has rows) into the output structs; returns
/// whether it did.
///
/// # Safety
/// When `output` has rows, `out_array`/`out_schema` must meet
/// [`export_batch`]'s contract; otherwise they are not used.
unsafe fn emit(output: Option<RecordBatch>, out_array: i64, out_schema: i64) -> BridgeResult<bool> {
    match output {
        Some(batch) if batch.num_rows() > 0 => {
            // SAFETY: this is the case with rows, in which our caller
            // guarantees `export_batch`'s contract for the two addresses.
            unsafe { export_batch(batch, out_array, out_schema) }?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Processes the batch exported at `in_array`/`in_schema`; writes the rows
/// to emit (immediate mode) to `out_array`/`out_schema` and returns true,
/// or returns false when there is nothing to emit. The input export is
/// consumed even when the call fails.
///
/// # Safety
/// `in_array`/`in_schema` must meet [`import_batch`]'s contract and
/// `out_array`/`out_schema` [`export_batch`]'s.
pub unsafe fn process(
    handle: u64,
    in_array: i64,
    in_schema: i64,
    out_array: i64,
    out_schema: i64,
) -> BridgeResult<bool> {
    // SAFETY: our caller guarantees `import_batch`'s contract for the input
    // addresses.
    let batch = unsafe { import_batch(in_array, in_schema) }?;
    let output = OPERATORS.with(handle, |op| Ok(op.process(&batch)?))?;
    drop(batch);
    // SAFETY: our caller guarantees `export_batch`'s contract, hence
    // `emit`'s, for the output addresses.
    unsafe { emit(output, out_array, out_schema) }
}

/// Processes rows `from..to` of the batch a columnar-exchange message
/// carries ([`aggforge_runtime::exchange`]); writes what immediate mode
/// emits like [`process`].
///
/// # Safety
/// `out_array`/`out_schema` must meet [`export_batch`]'s contract whenever
/// the rows cause output (otherwise they are not touched).
pub unsafe fn process_message(
    handle: u64,
    message: &[u8],
    from: usize,
    to: usize,
    out_array: i64,
    out_schema: i64,
) -> BridgeResult<bool> {
    let rows = message_rows(message, from, to)?;
    let output = OPERATORS.with(handle, |op| Ok(op.process(&rows)?))?;
    // SAFETY: our caller guarantees `export_batch`'s contract, hence
    // `emit`'s, for the output addresses.
    unsafe { emit(output, out_array, out_schema) }
}

/// Rows `from..to` of the batch a columnar-exchange message carries.
fn message_rows(message: &[u8], from: usize, to: usize) -> BridgeResult<RecordBatch> {
    let batch = exchange::decode(message)?;
    if from > to || to > batch.num_rows() {
        return Err(BridgeError::Ffi(format!(
            "rows {from}..{to} are outside a message of {} rows",
            batch.num_rows()
        )));
    }
    Ok(batch.slice(from, to - from))
}

/// Finishes the open bundle; writes its changelog (or partials) like
/// [`process`].
///
/// # Safety
/// `out_array`/`out_schema` must meet [`export_batch`]'s contract whenever
/// the bundle has rows to emit (an empty flush does not touch them).
pub unsafe fn flush(handle: u64, out_array: i64, out_schema: i64) -> BridgeResult<bool> {
    let output = OPERATORS.with(handle, |op| Ok(op.flush()?))?;
    // SAFETY: our caller guarantees `export_batch`'s contract for the output
    // addresses, which is `emit`'s when there are rows.
    unsafe { emit(output, out_array, out_schema) }
}

/// Finishes the open bundle (a local phase's) and holds its partials in the
/// exchange router `router` for that router's next `route_held`, with no
/// batch crossing to Java; returns the rows flushed.
pub fn flush_into(handle: u64, router: u64) -> BridgeResult<usize> {
    match OPERATORS.with(handle, |op| Ok(op.flush()?))? {
        None => Ok(0),
        Some(batch) => {
            let rows = batch.num_rows();
            routers::hold_output(router, batch)?;
            Ok(rows)
        }
    }
}

/// The operator's state, one payload per key group in the runtime's
/// snapshot format ([`aggforge_runtime::snapshot`]), whose header names
/// the key group ([`payload_key_group`]).
pub fn snapshot(handle: u64) -> BridgeResult<Vec<Vec<u8>>> {
    let parts = OPERATORS.with(handle, |op| Ok(op.snapshot()?))?;
    Ok(parts.into_iter().map(|(_, bytes)| bytes).collect())
}

/// The key group a snapshot payload belongs to, read from its header.
pub fn payload_key_group(payload: &[u8]) -> BridgeResult<u16> {
    Ok(aggforge_runtime::snapshot::peek_key_group(payload)?)
}

/// Restores payloads written by [`snapshot`] (any subset of key groups).
pub fn restore(handle: u64, payloads: Vec<Vec<u8>>) -> BridgeResult<()> {
    let parts = payloads
        .into_iter()
        .map(|bytes| Ok((payload_key_group(&bytes)?, bytes)))
        .collect::<BridgeResult<Vec<_>>>()?;
    OPERATORS.with(handle, |op| Ok(op.restore(&parts)?))
}

/// In the accumulator types of [`bind_flink_state`], a DISTINCT view
/// (Flink's DistinctInfo, kept as a map state) in place of a type.
pub const DISTINCT_VIEW: &str = "DISTINCT_VIEW";

/// In the accumulator types of [`bind_flink_state`], a structured
/// accumulator whose data views Flink keeps as map states (MIN/MAX over
/// retractions).
pub const STATE_VIEWS: &str = "STATE_VIEWS";

/// Binds a GROUP BY aggregate's state to Flink's accumulator layout
/// `acc_types` (a JSON array of Flink type texts, [`STATE_VIEWS`] for a
/// structured accumulator with data views, the trailing DISTINCT views as
/// [`DISTINCT_VIEW`]); `None` when it is bound, else why the operator
/// keeps aggforge's snapshot format.
pub fn bind_flink_state(handle: u64, acc_types_json: &str) -> BridgeResult<Option<String>> {
    let texts: Vec<String> = serde_json::from_str(acc_types_json).map_err(|e| {
        BridgeError::Ffi(format!(
            "accumulator types are not a JSON string array: {e}"
        ))
    })?;
    let views = texts
        .iter()
        .rev()
        .take_while(|t| *t == DISTINCT_VIEW)
        .count();
    let types = match texts[..texts.len() - views]
        .iter()
        .map(|t| match t.as_str() {
            STATE_VIEWS => Ok(FlinkField::StateViews),
            _ => t.parse().map(FlinkField::Type),
        })
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(types) => types,
        Err(e) => return Ok(Some(format!("Flink's state layout: {e}"))),
    };
    OPERATORS.with(handle, |op| {
        Ok(op
            .group("state layout")?
            .bind_flink_state_with_views(&types, views)
            .err()
            .map(|e| e.to_string()))
    })
}

/// Writes the groups whose state changed since the last write-back to the
/// output structs as one change batch
/// (`aggforge_runtime::operator::GroupAggOperator::state_changes`);
/// returns false when none changed.
///
/// # Safety
/// `out_array`/`out_schema` must meet [`export_batch`]'s contract whenever
/// there are changes.
pub unsafe fn state_changes(handle: u64, out_array: i64, out_schema: i64) -> BridgeResult<bool> {
    let changes = OPERATORS.with(handle, |op| Ok(op.group("write-back")?.state_changes()?))?;
    match changes {
        // SAFETY: there are changes, for which our caller guarantees
        // `export_batch`'s contract.
        Some(batch) => unsafe { export_batch(batch, out_array, out_schema) }.map(|_| true),
        None => Ok(false),
    }
}

/// The changes [`state_changes`] returned are written to the backend.
pub fn state_changes_written(handle: u64) -> BridgeResult<()> {
    OPERATORS.with(handle, |op| {
        op.group("write-back")?.state_changes_written();
        Ok(())
    })
}

/// The state backend holds restored groups: every uncached group a batch
/// needs is read.
pub fn backend_restored(handle: u64) -> BridgeResult<()> {
    OPERATORS.with(handle, |op| {
        op.group("restore")?.backend_restored();
        Ok(())
    })
}

/// Takes the accumulator rows exported at `in_array`/`in_schema` (read from
/// Flink's state backend) as state. The export is consumed even when the
/// call fails.
///
/// # Safety
/// `in_array`/`in_schema` must meet [`import_batch`]'s contract.
pub unsafe fn load_state(handle: u64, in_array: i64, in_schema: i64) -> BridgeResult<()> {
    // SAFETY: our caller guarantees `import_batch`'s contract.
    let batch = unsafe { import_batch(in_array, in_schema) }?;
    OPERATORS.with(handle, |op| {
        Ok(op.group("state load")?.load_state(&batch)?)
    })
}

/// Keeps the batch exported at `in_array`/`in_schema` for
/// [`process_pending`] and writes the keys of the groups it touches that
/// the operator does not hold to the output structs
/// (`GroupAggOperator::probe`); returns false when it holds them all.
///
/// # Safety
/// `in_array`/`in_schema` must meet [`import_batch`]'s contract, and
/// `out_array`/`out_schema` [`export_batch`]'s whenever keys are missing.
pub unsafe fn probe(
    handle: u64,
    in_array: i64,
    in_schema: i64,
    out_array: i64,
    out_schema: i64,
) -> BridgeResult<bool> {
    // SAFETY: our caller guarantees `import_batch`'s contract.
    let batch = unsafe { import_batch(in_array, in_schema) }?;
    let missing = OPERATORS.with(handle, |op| Ok(op.group("cache probe")?.probe(batch)?))?;
    // SAFETY: our caller guarantees `export_batch`'s contract, hence
    // `emit`'s, for the output addresses.
    unsafe { emit(missing, out_array, out_schema) }
}

/// [`probe`] for rows `from..to` of a columnar-exchange message.
///
/// # Safety
/// `out_array`/`out_schema` must meet [`export_batch`]'s contract whenever
/// keys are missing.
pub unsafe fn probe_message(
    handle: u64,
    message: &[u8],
    from: usize,
    to: usize,
    out_array: i64,
    out_schema: i64,
) -> BridgeResult<bool> {
    let rows = message_rows(message, from, to)?;
    let missing = OPERATORS.with(handle, |op| Ok(op.group("cache probe")?.probe(rows)?))?;
    // SAFETY: our caller guarantees `export_batch`'s contract, hence
    // `emit`'s, for the output addresses.
    unsafe { emit(missing, out_array, out_schema) }
}

/// Folds the batch [`probe`] kept; writes what immediate mode emits like
/// [`process`].
///
/// # Safety
/// As [`process`]'s output addresses.
pub unsafe fn process_pending(handle: u64, out_array: i64, out_schema: i64) -> BridgeResult<bool> {
    let output = OPERATORS.with(handle, |op| {
        Ok(op.group("cache probe")?.process_pending()?)
    })?;
    // SAFETY: our caller guarantees `export_batch`'s contract, hence
    // `emit`'s, for the output addresses.
    unsafe { emit(output, out_array, out_schema) }
}

/// Whether the operator should be emptied into the state backend
/// (`GroupAggOperator::should_evict`).
pub fn should_evict(handle: u64, batch_rows: usize) -> BridgeResult<bool> {
    OPERATORS.with(handle, |op| Ok(op.group("cache")?.should_evict(batch_rows)))
}

/// Empties the operator; writes every changed group's change row to the
/// output structs (`GroupAggOperator::evict_all`); returns false when none
/// changed.
///
/// # Safety
/// `out_array`/`out_schema` must meet [`export_batch`]'s contract whenever
/// there are changes.
pub unsafe fn evict_all(handle: u64, out_array: i64, out_schema: i64) -> BridgeResult<bool> {
    let changes = OPERATORS.with(handle, |op| Ok(op.group("cache")?.evict_all()?))?;
    // SAFETY: our caller guarantees `export_batch`'s contract, hence
    // `emit`'s, for the output addresses.
    unsafe { emit(changes, out_array, out_schema) }
}

/// Sets the processing time (ms) state TTL is judged by.
pub fn set_time(handle: u64, now_ms: i64) -> BridgeResult<()> {
    OPERATORS.with(handle, |op| Ok(op.set_time(now_ms)?))
}

/// Flink's message when a function failed the query in the latest
/// `process` or `flush` (whose rows are those Flink emits before failing).
pub fn failure(handle: u64) -> BridgeResult<Option<&'static str>> {
    OPERATORS.with(handle, |op| Ok(op.failure()))
}

/// Whether the operator's calls run in one JIT-compiled loop, and why not.
pub fn jit_status(handle: u64) -> BridgeResult<String> {
    OPERATORS.with(handle, |op| Ok(op.jit_status()))
}

/// Bytes of state and bundle the operator holds.
pub fn memory_used(handle: u64) -> BridgeResult<usize> {
    OPERATORS.with(handle, |op| Ok(op.memory_used()))
}

/// The operator's live groups, bytes held and budget (for metrics).
pub fn stats(handle: u64) -> BridgeResult<OperatorStats> {
    OPERATORS.with(handle, |op| Ok(op.stats()))
}

/// [`stats`] in the layout of `NativeAggregate.stats`'s array: bytes held,
/// budget, groups, rows dropped as late (each saturating at `i64::MAX`).
pub fn stats_array(handle: u64) -> BridgeResult<[i64; STATS_LEN]> {
    let stats = stats(handle)?;
    let late = late_dropped(handle)?;
    let long = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    Ok([
        long(stats.memory_used),
        long(stats.memory_budget),
        long(stats.groups),
        i64::try_from(late).unwrap_or(i64::MAX),
    ])
}

/// Length of the array [`stats_array`] fills.
pub const STATS_LEN: usize = 4;

/// Closes the operator; its handle is invalid from now on.
pub fn close(handle: u64) -> BridgeResult<()> {
    OPERATORS.remove(handle)
}

/// Number of open operators (for leak checks).
pub fn open_count() -> usize {
    OPERATORS.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Int64Type, Int8Type};
    use arrow_array::{Int32Array, Int64Array};
    use arrow_data::ffi::FFI_ArrowArray;
    use arrow_schema::ffi::FFI_ArrowSchema;
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    fn plan(emission: &str) -> String {
        format!(
            r#"{{"version":1,"key_columns":[0],"key_types":["INT"],"calls":[{{"function":"SUM","args":[1],"arg_types":["BIGINT"],"distinct":false,"filter":null}}],"phase":"single","input":"insert_only","emission":"{emission}","generate_update_before":true,"state_ttl_ms":0,"memory_budget_bytes":1048576,"max_parallelism":128}}"#
        )
    }

    fn batch(keys: Vec<i32>, values: Vec<i64>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int32, false),
            Field::new("v", DataType::Int64, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(keys)),
                Arc::new(Int64Array::from(values)),
            ],
        )
        .unwrap()
    }

    struct Structs {
        array: Box<FFI_ArrowArray>,
        schema: Box<FFI_ArrowSchema>,
    }

    impl Structs {
        fn new() -> Self {
            Structs {
                array: Box::new(FFI_ArrowArray::empty()),
                schema: Box::new(FFI_ArrowSchema::empty()),
            }
        }
        fn addrs(&mut self) -> (i64, i64) {
            (
                self.array.as_mut() as *mut FFI_ArrowArray as usize as i64,
                self.schema.as_mut() as *mut FFI_ArrowSchema as usize as i64,
            )
        }
        fn exported(batch: RecordBatch) -> Self {
            let mut s = Structs::new();
            let (a, b) = s.addrs();
            // SAFETY: `a` and `b` address the two distinct boxes of `s`, live
            // and released (`empty`).
            unsafe { crate::ffi::export_batch(batch, a, b).unwrap() };
            s
        }
        /// Imports what the structs hold; callers only take structs that
        /// an export (by `exported`, `process` or `flush`) just filled.
        fn take(&mut self) -> RecordBatch {
            let (a, b) = self.addrs();
            // SAFETY: `a` and `b` address this value's two distinct live
            // boxes, which hold a matching array and schema export (see the
            // doc comment above).
            unsafe { import_batch(a, b).unwrap() }
        }
    }

    fn run(handle: u64, input: RecordBatch) -> BridgeResult<Option<RecordBatch>> {
        let mut inp = Structs::exported(input);
        let mut out = Structs::new();
        let (ia, is) = inp.addrs();
        let (oa, os) = out.addrs();
        // SAFETY: the input boxes hold `Structs::exported`'s matching
        // export; the output boxes are live, distinct and released.
        let emitted = unsafe { process(handle, ia, is, oa, os)? };
        Ok(emitted.then(|| out.take()))
    }

    fn rows(batch: &RecordBatch) -> Vec<(i8, i32, i64)> {
        let k = batch.column(0).as_primitive::<Int32Type>();
        let v = batch.column(1).as_primitive::<Int64Type>();
        let kind = batch.column(2).as_primitive::<Int8Type>();
        (0..batch.num_rows())
            .map(|i| (kind.value(i), k.value(i), v.value(i)))
            .collect()
    }

    #[test]
    fn less_than_the_minimum_budget_cannot_hold_one_batch_of_distinct_keys() {
        let rows = 1024;
        let minimum = minimum_budget(&plan("immediate"), rows).unwrap();
        assert!(
            minimum >= rows * 8,
            "{minimum} bytes cannot hold {rows} BIGINT sums"
        );
        let keys: Vec<i32> = (0..rows as i32).collect();
        let values: Vec<i64> = (0..rows as i64).collect();
        let with_budget = |budget: usize| {
            plan("immediate").replace(
                "\"memory_budget_bytes\":1048576",
                &format!("\"memory_budget_bytes\":{budget}"),
            )
        };
        // A lower bound: below it the batch fails; the operator reserves up
        // to about 4x (vectors grow by doubling, the table keeps half its
        // slots free).
        let enough = create(&with_budget(5 * minimum)).unwrap();
        assert!(run(enough, batch(keys.clone(), values.clone())).is_ok());
        close(enough).unwrap();
        let short = create(&with_budget(minimum - 1)).unwrap();
        let refused = run(short, batch(keys, values)).unwrap_err();
        assert!(refused.to_string().contains("memory budget"), "{refused}");
        close(short).unwrap();
    }

    #[test]
    fn admit_answers_with_specializations_or_a_reason() {
        let answer = admit(&plan("immediate"));
        assert!(answer.starts_with(ADMITTED), "{answer}");
        assert!(answer.contains("SUM"), "{answer}");
        let refused = admit(&plan("immediate").replace("\"SUM\"", "\"LISTAGG\""));
        assert!(
            !refused.starts_with(ADMITTED) && refused.contains("LISTAGG"),
            "{refused}"
        );
        let broken = admit("{not json");
        assert!(broken.contains("not valid JSON"), "{broken}");
    }

    #[test]
    fn immediate_round_trip_through_ffi() {
        let handle = create(&plan("immediate")).unwrap();
        let out = run(handle, batch(vec![1, 2, 1], vec![10, 5, 7]))
            .unwrap()
            .unwrap();
        assert_eq!(
            rows(&out),
            vec![(0, 1, 10), (0, 2, 5), (1, 1, 10), (2, 1, 17)]
        );
        assert!(memory_used(handle).unwrap() > 0);
        let [bytes, budget, groups, late] = stats_array(handle).unwrap();
        assert_eq!(late, 0);
        assert_eq!((budget, groups), (1_048_576, 2), "keys 1 and 2");
        assert_eq!(bytes as usize, memory_used(handle).unwrap());
        assert!(bytes > 0 && bytes <= budget, "{bytes} bytes of {budget}");
        assert!(
            // SAFETY: immediate emission has no bundle, so the null output
            // addresses are never used (`emit` has no rows).
            !unsafe { flush(handle, 0, 0) }.unwrap(),
            "immediate has no bundle"
        );

        let payloads = snapshot(handle).unwrap();
        // Flink's key groups of INT keys 1 and 2 at max parallelism 128
        // (docs/flink-semantics.md: INT 1 -> 94), ascending.
        let groups: Vec<u16> = payloads
            .iter()
            .map(|p| payload_key_group(p).unwrap())
            .collect();
        assert_eq!(groups.len(), 2);
        assert!(groups.contains(&94), "{groups:?}");
        assert!(groups[0] < groups[1], "{groups:?}");
        let restored = create(&plan("immediate")).unwrap();
        restore(restored, payloads).unwrap();
        let out = run(restored, batch(vec![2], vec![1])).unwrap().unwrap();
        assert_eq!(rows(&out), vec![(1, 2, 5), (2, 2, 6)]);
        close(handle).unwrap();
        close(restored).unwrap();
    }

    #[test]
    fn mini_batch_emits_at_flush() {
        let handle = create(&plan("mini_batch")).unwrap();
        assert!(run(handle, batch(vec![1, 1], vec![1, 2]))
            .unwrap()
            .is_none());
        let mut out = Structs::new();
        let (oa, os) = out.addrs();
        // SAFETY: `oa`/`os` address the live, distinct, released boxes of `out`.
        assert!(unsafe { flush(handle, oa, os) }.unwrap());
        assert_eq!(rows(&out.take()), vec![(0, 1, 3)]);
        assert!(
            // SAFETY: the same boxes, released again by `take`.
            !unsafe { flush(handle, oa, os) }.unwrap(),
            "bundle is empty now"
        );
        close(handle).unwrap();
    }

    #[test]
    fn errors_name_the_problem() {
        let err = create(&plan("immediate").replace("\"SUM\"", "\"LISTAGG\"")).unwrap_err();
        assert!(err.to_string().contains("LISTAGG"), "{err}");
        let handle = create(&plan("immediate")).unwrap();
        // Wrong column type: the runtime's input check.
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int32, false),
            Field::new("v", DataType::Int32, true),
        ]));
        let bad = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(Int32Array::from(vec![1])),
            ],
        )
        .unwrap();
        let err = run(handle, bad).unwrap_err().to_string();
        assert!(err.starts_with("bad input:"), "{err}");
        // The operator still works after the refused batch.
        assert!(run(handle, batch(vec![3], vec![4])).unwrap().is_some());
        let err = restore(handle, vec![vec![1]]).unwrap_err().to_string();
        assert!(err.contains("truncated payload"), "{err}");
        let err = restore(handle, vec![vec![0; 16]]).unwrap_err().to_string();
        assert!(err.contains("magic"), "{err}");
        close(handle).unwrap();
        let err = run(handle, batch(vec![3], vec![4])).unwrap_err();
        assert!(matches!(err, BridgeError::Handle(h) if h == handle));
        assert!(snapshot(handle).is_err());
        assert!(matches!(stats(handle), Err(BridgeError::Handle(h)) if h == handle));
        assert!(close(handle).is_err());
    }
}
