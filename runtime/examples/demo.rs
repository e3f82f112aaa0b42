//! The main demo job: generated data through the single-phase operator
//! (immediate and mini-batch) and the two-phase plan (local + global),
//! printing each changelog's summary, the final table, whether all plans
//! agree with a reference computed the obvious way, and the throughput.
//!
//! Run: `cargo run --release -p aggforge-runtime --example demo [ROWS]`

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use aggforge_runtime::error::Result;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggCall, AggPlan, Emission};
use aggforge_runtime::types::{InputMode, Phase, SqlType, ROW_KIND_COLUMN};
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, Date32Array, Int32Array, Int64Array, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, Schema};

const KEYS: i32 = 64;
const BATCH: usize = 4096;
const BUNDLE: usize = 1024;

/// Deterministic input: key INT, v DATE (1/8 NULL), x BIGINT (1/8 NULL).
fn generate(rows: usize) -> Vec<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int32, false),
        Field::new("v", DataType::Date32, true),
        Field::new("x", DataType::Int64, true),
    ]));
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut batches = Vec::new();
    let mut start = 0;
    while start < rows {
        let n = BATCH.min(rows - start);
        let mut k = Vec::with_capacity(n);
        let mut v = Vec::with_capacity(n);
        let mut x = Vec::with_capacity(n);
        for _ in 0..n {
            let r = next();
            k.push((r % KEYS as u64) as i32);
            v.push(((r >> 8) % 8 != 0).then_some(18_000 + ((r >> 16) % 3650) as i32));
            x.push(((r >> 11) % 8 != 0).then_some(((r >> 24) % 2_000_001) as i64 - 1_000_000));
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(k)),
            Arc::new(Date32Array::from(v)),
            Arc::new(Int64Array::from(x)),
        ];
        batches.push(RecordBatch::try_new(schema.clone(), columns).expect("valid batch"));
        start += n;
    }
    batches
}

/// The calls; `global` reads the partial columns (min, max, count1, sum,
/// avg sum, avg count) instead of the raw `v` and `x` columns.
fn calls(global: bool) -> Vec<AggCall> {
    let call = |function: &str, args: Vec<usize>, ty: Option<SqlType>| AggCall {
        function: function.to_string(),
        args,
        arg_types: ty.into_iter().collect(),
        distinct: false,
        filter: None,
        result_type: None,
        retracts: true,
    };
    let (min, max, count, sum, avg) = if global {
        (vec![1], vec![2], vec![3], vec![4], vec![5, 6])
    } else {
        (vec![1], vec![1], vec![], vec![2], vec![2])
    };
    vec![
        call("MIN", min, Some(SqlType::of("DATE"))),
        call("MAX", max, Some(SqlType::of("DATE"))),
        call("COUNT_STAR", count, None),
        call("SUM", sum, Some(SqlType::of("BIGINT"))),
        call("AVG", avg, Some(SqlType::of("BIGINT"))),
    ]
}

fn plan(phase: Phase, emission: Emission, calls: Vec<AggCall>) -> AggPlan {
    AggPlan {
        key_columns: vec![0],
        key_types: vec![SqlType::of("INT")],
        calls,
        phase,
        input: InputMode::InsertOnly,
        emission,
        generate_update_before: true,
        state_ttl_ms: 0,
        memory_budget_bytes: 256 << 20,
        max_parallelism: 128,
        count_star_column: None,
        views: Vec::new(),
        final_key: None,
        window: None,
        jit: Default::default(),
    }
}

/// One way of running the job, returning its whole changelog.
type RunFn<'a> = dyn Fn() -> Result<Vec<RecordBatch>> + 'a;

/// Row-kind counts and the last emitted row per key of a changelog.
#[derive(Default)]
struct Summary {
    kinds: [usize; 4],
    last: BTreeMap<i32, Vec<String>>,
}

impl Summary {
    fn add(&mut self, out: &RecordBatch) {
        let kinds = out
            .column_by_name(ROW_KIND_COLUMN)
            .expect("row kind column")
            .as_primitive::<Int8Type>();
        let keys = out.column(0).as_primitive::<Int32Type>();
        let options = FormatOptions::default().with_null("NULL");
        let formatters: Vec<ArrayFormatter> = (1..out.num_columns() - 1)
            .map(|c| ArrayFormatter::try_new(out.column(c).as_ref(), &options).expect("format"))
            .collect();
        for row in 0..out.num_rows() {
            let kind = kinds.value(row);
            self.kinds[kind as usize] += 1;
            if kind == 0 || kind == 2 {
                let values = formatters
                    .iter()
                    .map(|f| f.value(row).to_string())
                    .collect();
                self.last.insert(keys.value(row), values);
            }
        }
    }
}

fn run_single(batches: &[RecordBatch], emission: Emission) -> Result<Vec<RecordBatch>> {
    let mut op = GroupAggOperator::new(plan(Phase::Single, emission, calls(false)))?;
    let mut changelog = Vec::new();
    for batch in batches {
        if emission == Emission::MiniBatch {
            for start in (0..batch.num_rows()).step_by(BUNDLE) {
                let len = BUNDLE.min(batch.num_rows() - start);
                if let Some(out) = op.process(&batch.slice(start, len))? {
                    changelog.push(out);
                }
                if let Some(out) = op.flush()? {
                    changelog.push(out);
                }
            }
        } else if let Some(out) = op.process(batch)? {
            changelog.push(out);
        }
    }
    if let Some(out) = op.flush()? {
        changelog.push(out);
    }
    Ok(changelog)
}

fn run_two_phase(batches: &[RecordBatch]) -> Result<Vec<RecordBatch>> {
    let mut local = GroupAggOperator::new(plan(Phase::Local, Emission::MiniBatch, calls(false)))?;
    let mut global = GroupAggOperator::new(plan(Phase::Global, Emission::MiniBatch, calls(true)))?;
    let mut changelog = Vec::new();
    for batch in batches {
        for start in (0..batch.num_rows()).step_by(BUNDLE) {
            let len = BUNDLE.min(batch.num_rows() - start);
            local.process(&batch.slice(start, len))?;
            if let Some(partials) = local.flush()? {
                global.process(&partials)?;
            }
            if let Some(out) = global.flush()? {
                changelog.push(out);
            }
        }
    }
    Ok(changelog)
}

/// The final table computed the obvious way, formatted like the operators'.
fn reference(batches: &[RecordBatch]) -> BTreeMap<i32, Vec<String>> {
    #[derive(Default)]
    struct Acc {
        min: Option<i32>,
        max: Option<i32>,
        count: i64,
        sum: Option<i64>,
        avg_sum: i64,
        avg_count: i64,
    }
    let mut groups: HashMap<i32, Acc> = HashMap::new();
    for batch in batches {
        let k = batch.column(0).as_primitive::<Int32Type>();
        let v = batch.column(1).as_primitive::<Date32Type>();
        let x = batch.column(2).as_primitive::<Int64Type>();
        for row in 0..batch.num_rows() {
            let acc = groups.entry(k.value(row)).or_default();
            acc.count += 1;
            if v.is_valid(row) {
                let d = v.value(row);
                acc.min = Some(acc.min.map_or(d, |m| m.min(d)));
                acc.max = Some(acc.max.map_or(d, |m| m.max(d)));
            }
            if x.is_valid(row) {
                let value = x.value(row);
                acc.sum = Some(acc.sum.unwrap_or(0).wrapping_add(value));
                acc.avg_sum = acc.avg_sum.wrapping_add(value);
                acc.avg_count += 1;
            }
        }
    }
    let date = |d: Option<i32>| {
        let array = Date32Array::from(vec![d]);
        let options = FormatOptions::default().with_null("NULL");
        let formatter = ArrayFormatter::try_new(&array, &options).expect("format");
        let text = formatter.value(0).to_string();
        text
    };
    groups
        .into_iter()
        .map(|(k, a)| {
            let avg = if a.avg_count == 0 {
                "NULL".to_string()
            } else {
                (a.avg_sum / a.avg_count).to_string()
            };
            let sum = a.sum.map_or("NULL".to_string(), |s| s.to_string());
            (
                k,
                vec![date(a.min), date(a.max), a.count.to_string(), sum, avg],
            )
        })
        .collect()
}

fn main() -> Result<()> {
    let rows: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    println!("aggforge demo: {rows} rows, {KEYS} keys, 1/8 NULL values");
    println!("SELECT k, MIN(v), MAX(v), COUNT(*), SUM(x), AVG(x) FROM t GROUP BY k");
    println!("  v DATE, x BIGINT; batches of {BATCH} rows, bundles of {BUNDLE} rows\n");
    let batches = generate(rows);
    let expected = reference(&batches);

    let mut all_agree = true;
    let runs: [(&str, &RunFn); 3] = [
        ("single phase, immediate", &|| {
            run_single(&batches, Emission::Immediate)
        }),
        ("single phase, mini-batch", &|| {
            run_single(&batches, Emission::MiniBatch)
        }),
        ("two phase (local + global)", &|| run_two_phase(&batches)),
    ];
    let mut last_table = BTreeMap::new();
    for (name, run) in runs {
        let start = Instant::now();
        let changelog = run()?;
        let secs = start.elapsed().as_secs_f64();
        let mut summary = Summary::default();
        for out in &changelog {
            summary.add(out);
        }
        let agrees = summary.last == expected;
        all_agree &= agrees;
        println!(
            "{name:<28} {:>8.1} ms  {:>7.1} M rows/s  changelog +I {} -U {} +U {} -D {}  final table {}",
            secs * 1e3,
            rows as f64 / secs / 1e6,
            summary.kinds[0],
            summary.kinds[1],
            summary.kinds[2],
            summary.kinds[3],
            if agrees { "matches reference" } else { "DIFFERS from reference" },
        );
        last_table = summary.last;
    }
    println!("\nfinal table (first 5 keys):");
    println!("  k    MIN(v)      MAX(v)      COUNT(*)  SUM(x)        AVG(x)");
    for (k, values) in last_table.iter().take(5) {
        println!(
            "  {k:<4} {:<11} {:<11} {:<9} {:<13} {}",
            values[0], values[1], values[2], values[3], values[4]
        );
    }
    if all_agree {
        println!("\nall plans agree with the reference");
        Ok(())
    } else {
        eprintln!("\nplans disagree with the reference");
        std::process::exit(1);
    }
}
