//! The call lists of the JIT benches, all over one BIGINT `price` column
//! keyed by one BIGINT column: 1, 2, 4 and 8 calls, and Nexmark q17's list
//! (COUNT(*), three COUNT(*)s filtered by price band, MIN, MAX, AVG and
//! SUM of price). Batch columns: key, price (1/8 NULL), then the three
//! band FILTER columns computed from price.

use std::sync::Arc;

use aggforge_runtime::plan::{AggCall, AggPlan, Emission};
use aggforge_runtime::types::{InputMode, JitMode, Phase, SqlType, ROW_KIND_COLUMN};
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, Int8Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};

use crate::data::{argument_column, grouping_stream, Grouping, BATCH_ROWS};

/// The input column of `price`.
pub const PRICE: usize = 1;
/// The input columns of the three price-band FILTERs (q17's `price <
/// 10000`, `price >= 10000 AND price < 1000000`, `price >= 1000000`).
pub const BANDS: [usize; 3] = [2, 3, 4];
/// q17's band limits, scaled to the bench's prices (within +-10^12).
const BAND_LIMITS: [i64; 2] = [-100_000_000_000, 400_000_000_000];

/// One call of a list: the function and its FILTER column, if any
/// (every call but COUNT(*) reads `price`).
#[derive(Debug, Clone, Copy)]
pub struct ListCall {
    /// MIN, MAX, SUM, SUM0, COUNT, COUNT_STAR or AVG.
    pub function: &'static str,
    /// Input column of the FILTER.
    pub filter: Option<usize>,
}

const fn call(function: &'static str) -> ListCall {
    ListCall {
        function,
        filter: None,
    }
}

const fn filtered(function: &'static str, band: usize) -> ListCall {
    ListCall {
        function,
        filter: Some(BANDS[band]),
    }
}

/// The bench's call lists by name.
pub fn lists() -> Vec<(&'static str, Vec<ListCall>)> {
    vec![
        ("1call", vec![call("MIN")]),
        ("2calls", vec![call("MIN"), call("MAX")]),
        (
            "4calls",
            vec![call("MIN"), call("MAX"), call("SUM"), call("COUNT")],
        ),
        (
            "8calls",
            vec![
                call("MIN"),
                call("MAX"),
                call("SUM"),
                call("SUM0"),
                call("COUNT"),
                call("COUNT_STAR"),
                call("AVG"),
                filtered("COUNT", 0),
            ],
        ),
        (
            "q17",
            vec![
                call("COUNT_STAR"),
                filtered("COUNT_STAR", 0),
                filtered("COUNT_STAR", 1),
                filtered("COUNT_STAR", 2),
                call("MIN"),
                call("MAX"),
                call("AVG"),
                call("SUM"),
            ],
        ),
    ]
}

fn bigint() -> SqlType {
    SqlType::of("BIGINT")
}

/// The plan's calls for `list`.
pub fn agg_calls(list: &[ListCall]) -> Vec<AggCall> {
    list.iter()
        .map(|c| {
            let star = c.function == "COUNT_STAR";
            AggCall {
                function: c.function.to_string(),
                args: if star { vec![] } else { vec![PRICE] },
                arg_types: if star { vec![] } else { vec![bigint()] },
                distinct: false,
                filter: c.filter,
                result_type: None,
                retracts: true,
            }
        })
        .collect()
}

/// A plan for `list` keyed on column 0 in `phase` over insert-only input,
/// with the JIT `jit`.
pub fn plan(list: &[ListCall], phase: Phase, jit: JitMode) -> AggPlan {
    AggPlan {
        key_columns: vec![0],
        key_types: vec![bigint()],
        calls: agg_calls(list),
        phase,
        input: InputMode::InsertOnly,
        emission: Emission::MiniBatch,
        generate_update_before: true,
        state_ttl_ms: 0,
        memory_budget_bytes: 1 << 32,
        max_parallelism: 128,
        count_star_column: None,
        views: Vec::new(),
        final_key: None,
        window: None,
        jit,
    }
}

/// One bundle: its grouping and its input batch.
#[derive(Debug, Clone)]
pub struct ListBundle {
    /// Keys and group ids.
    pub grouping: Grouping,
    /// key, price, the three band FILTERs.
    pub batch: RecordBatch,
}

impl ListBundle {
    /// Column `index` of the batch.
    pub fn column(&self, index: usize) -> &ArrayRef {
        self.batch.column(index)
    }
}

/// `count` seeded bundles of [`BATCH_ROWS`] rows over `num_keys` keys.
pub fn bundles(num_keys: usize, count: usize, seed: u64) -> Vec<ListBundle> {
    grouping_stream(num_keys, count, BATCH_ROWS, seed)
        .into_iter()
        .enumerate()
        .map(|(b, grouping)| {
            let price = argument_column(&bigint(), BATCH_ROWS, seed ^ ((b as u64 + 1) << 24));
            let prices = price
                .as_any()
                .downcast_ref::<Int64Array>()
                .expect("BIGINT is Int64");
            let band = |test: fn(i64) -> bool| -> ArrayRef {
                Arc::new(BooleanArray::from_iter(prices.iter().map(|p| p.map(test))))
            };
            let columns = vec![
                grouping.keys.clone(),
                price.clone(),
                band(|p| p < BAND_LIMITS[0]),
                band(|p| (BAND_LIMITS[0]..BAND_LIMITS[1]).contains(&p)),
                band(|p| p >= BAND_LIMITS[1]),
            ];
            let fields: Vec<Field> = ["key", "price", "band0", "band1", "band2"]
                .iter()
                .zip(&columns)
                .map(|(name, c)| Field::new(*name, c.data_type().clone(), *name != "key"))
                .collect();
            let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
                .expect("bundle columns match their fields");
            ListBundle { grouping, batch }
        })
        .collect()
}

/// The lists of the retracting-input bench: the calls that fold
/// retractions in the fused loop (COUNT(*), COUNT, SUM, AVG), and q17's
/// list, whose MIN and MAX keep their static multisets.
pub fn retracting_lists() -> Vec<(&'static str, Vec<ListCall>)> {
    let mut lists = vec![(
        "4sums",
        vec![call("COUNT_STAR"), call("COUNT"), call("SUM"), call("AVG")],
    )];
    lists.extend(self::lists().into_iter().filter(|(name, _)| *name == "q17"));
    lists
}

/// Row kinds of a retracting bundle: every fourth row -U, the others +I.
pub fn row_kinds(rows: usize) -> Vec<i8> {
    (0..rows).map(|i| if i % 4 == 3 { 1 } else { 0 }).collect()
}

/// `batch` with a `$row_kind` column of `kinds` appended.
pub fn with_row_kinds(batch: &RecordBatch, kinds: &[i8]) -> RecordBatch {
    let mut fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| (**f).clone())
        .collect();
    fields.push(Field::new(ROW_KIND_COLUMN, DataType::Int8, false));
    let mut columns = batch.columns().to_vec();
    columns.push(Arc::new(Int8Array::from(kinds.to_vec())));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("row kinds cover the batch")
}

/// The Arrow type of every argument (BIGINT price).
pub fn arg_type() -> DataType {
    DataType::Int64
}
