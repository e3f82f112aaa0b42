//! The golden operator cases of `golden_snapshot.rs` (see its module
//! docs for how to add one), kept apart from the checks that run them.

use aggforge_runtime::types::InputMode;

use super::golden::{Case, Mode};

use InputMode::{InsertOnly, Retracting};
use Mode::{Global, Immediate, MiniBatch};

/// The golden cases. Each pins one operator mode over a set of calls; the
/// comments say which state templates and carriers it exercises.
pub const CASES: &[Case] = &[
    // running_extreme, immediate: i128 (DECIMAL(38, 4)), TIMESTAMP(9),
    // bytes (string(), UTF-8 byte order), f64 (NaN never replaces and is
    // never replaced; -0.0 and 0.0 tie, the first is kept).
    Case {
        name: "single_immediate_extremes",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["DECIMAL(38, 4)", "TIMESTAMP(9)", "STRING", "DOUBLE"],
        calls: "MIN(0), MAX(0), MIN(1), MAX(1), MIN(2), MAX(2), MIN(3), MAX(3)",
        before: &[
            &["a, 1234567890123456789012345678901234.5678, 2024-02-29 12:34:56.123456789, pear, 1.5;
               b, -9999999999999999999999999999999999.9999, 1969-12-31 23:59:59.999999999, '', -0.0;
               NULL, 0.0001, 1970-01-01 00:00:00.000000001, NULL, NaN;
               a-key-longer-than-seven-bytes, NULL, NULL, NULL, NULL"],
            &[
                "a, -1.0000, 2024-02-29 12:34:56.123456788, apple, NaN;
                 b, 0.0000, 1969-12-31 23:59:59.999999998, Äpfel, 0.0",
                "a, 7, 2024-02-29 12:34:56.12345679, zebra, 2.5",
            ],
        ],
        after: &[
            &[
                "b, 5, 1900-01-01 00:00:00, zz, -1.0e300;
                 NULL, -0.0001, 1970-01-01 00:00:00, '', 1.0;
                 a-key-longer-than-seven-bytes, 42.4242, 2262-04-11 23:47:16.854775807, long, inf;
                 a, 1234567890123456789012345678901234.5679, 2024-02-29 12:34:56.123456789, pear, -inf;
                 new, NULL, 2000-01-01 00:00:00.5, x, NaN",
                "a-key-longer-than-seven-bytes, -42, NULL, NULL, -inf",
            ],
        ],
    },
    // running_extreme, mini-batch: f32, bool, DATE (i32), i64
    // (DECIMAL(18, 2)); key INT.
    Case {
        name: "single_minibatch_extremes",
        mode: MiniBatch,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["FLOAT", "BOOLEAN", "DATE", "DECIMAL(18, 2)"],
        calls: "MIN(0), MAX(0), MIN(1), MAX(1), MIN(2), MAX(2), MIN(3), MAX(3)",
        before: &[
            &[
                "1, 1.5, true, 2024-02-29, 9999999999999999.99;
                 2, NaN, false, 1970-01-01, -0.01;
                 NULL, -0.0, NULL, 1969-12-31, NULL",
                "1, -2.5, false, 2000-01-01, -9999999999999999.99;
                 2, 3.0, true, 0001-01-01, 0.00",
            ],
            &["3, NULL, NULL, NULL, NULL;
               1, 0.0, true, 2024-03-01, 5.55;
               NULL, 0.0, true, 1969-12-30, 1.00"],
        ],
        after: &[
            &[
                "2, -1.0, true, 2100-12-31, 1.23; 3, 4.25, false, 2024-01-01, 0.50",
                "3, -4.25, true, 2023-12-31, -0.50; 4, 1.0, NULL, NULL, 3.33",
            ],
            &["1, 1.5, true, 2024-02-29, 9999999999999999.99; NULL, 1.0, false, 1969-12-31, 1.00"],
        ],
    },
    // running_extreme, global: i32, i128 (DECIMAL(38, 0)), bytes, f64;
    // key TIMESTAMP(9). Partial row: key, MIN(INT), MAX(INT),
    // MAX(DECIMAL), MIN(string()), MAX(DOUBLE).
    Case {
        name: "global_extremes",
        mode: Global,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["TIMESTAMP(9)"],
        args: &["INT", "DECIMAL(38, 0)", "STRING", "DOUBLE"],
        calls: "MIN(0), MAX(0), MAX(1), MIN(2), MAX(3)",
        before: &[
            &["2024-02-29 12:34:56.123456789, 5, 5, 99999999999999999999999999999999999999, b, 1.0;
               NULL, NULL, NULL, NULL, NULL, NULL;
               1969-12-31 23:59:59.999999999, -7, 3, -1, a-long-string-value, -0.0"],
            &[
                "2024-02-29 12:34:56.123456789, -3, 2, 0, aa, NaN",
                "1970-01-01 00:00:00.000000001, 1, 1, 1, one, 1.0;
                 1969-12-31 23:59:59.999999999, -8, 9, 5, a, 0.0",
            ],
        ],
        after: &[
            &[
                "NULL, 4, 4, 4, d, 4.0;
                 2024-02-29 12:34:56.123456789, -4, 6, -99999999999999999999999999999999999999, '', inf",
                "1969-12-31 23:59:59.999999999, NULL, NULL, NULL, NULL, NULL;
                 2024-02-29 12:34:56.123456788, 0, 0, 0, new, -0.0",
            ],
            &["1970-01-01 00:00:00.000000001, 2, 0, 2, zero, NaN"],
        ],
    },
    // count_star, count (string()), sum (i32 wrapping, i128 overflowing to
    // NULL, f64 with NaN and -0.0), sum0 (i32, f64), avg (i128, i64),
    // immediate; key BIGINT.
    Case {
        name: "single_immediate_sums",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["BIGINT"],
        args: &["STRING", "INT", "DECIMAL(38, 2)", "DOUBLE", "BIGINT"],
        calls: "COUNT_STAR, COUNT(0), SUM(1), SUM0(1), SUM(2), AVG(2), SUM(3), SUM0(3), AVG(4)",
        before: &[
            &["1, x, 2147483647, 999999999999999999999999999999999999.99, 1.5, 9223372036854775807;
               1, NULL, 1, 999999999999999999999999999999999999.99, -0.0, 1;
               -1, y, NULL, NULL, NULL, NULL;
               NULL, z, -5, 0.01, NaN, -3"],
            &["9223372036854775807, long-string-value, 7, -0.50, -0.0, 4;
               1, w, 3, 1.00, 2.5, -10;
               -1, NULL, NULL, NULL, -0.0, NULL"],
        ],
        after: &[
            &[
                "1, v, 1, 5.00, 1.0, 1; -1, u, 1, 1.11, 0.0, 1",
                "NULL, NULL, NULL, NULL, 1.0, NULL;
                 2, t, -2147483648, -999999999999999999999999999999999999.99, -0.0, -9223372036854775808",
                "2, s, -1, -0.01, -0.0, -1",
            ],
        ],
    },
    // count_star, count (TIMESTAMP(9)), sum (f32 up to inf, i16), sum0
    // (f32, i64 as DECIMAL(18, 3)), avg (DECIMAL(18, 3), f64, i32),
    // mini-batch; composite key (INT, string()).
    Case {
        name: "single_minibatch_sums",
        mode: MiniBatch,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["INT", "STRING"],
        args: &["TIMESTAMP(9)", "FLOAT", "DECIMAL(18, 3)", "DOUBLE", "INT", "SMALLINT"],
        calls: "COUNT_STAR, COUNT(0), SUM(1), SUM0(1), SUM0(2), AVG(2), AVG(3), AVG(4), SUM(5)",
        before: &[
            &[
                "1, a, 2024-02-29 12:34:56.123456789, 0.1, 999999999999999.999, 1.0, 2147483647, 32767;
                 1, a, NULL, 0.2, 0.001, NaN, 1, 1;
                 1, NULL, 1969-12-31 23:59:59.999999999, -0.0, NULL, -0.0, -7, -32768",
                "NULL, a-key-longer-than-seven-bytes, 1970-01-01 00:00:00, NULL, -1.005, NULL, NULL, NULL;
                 2, b, NULL, 3.4028235e38, 1.000, 2.0, 3, 100",
            ],
            &["2, b, 2000-01-01 00:00:00.000000001, 3.4028235e38, 2.000, 3.0, 4, 200;
               1, NULL, NULL, -0.0, 0.000, 0.0, -8, -1"],
        ],
        after: &[
            &[
                "1, a, 2024-02-29 12:34:56.123456789, 0.3, 0.001, -1.0, 2, 2",
                "2, b, NULL, NULL, NULL, NULL, NULL, NULL;
                 3, c, 2024-01-01 00:00:00.5, 1.5, 1.500, 1.5, 1, 1",
            ],
            &["NULL, a-key-longer-than-seven-bytes, NULL, 1.0, 1.005, 1.0, 1, 1;
               1, NULL, 1970-01-01 00:00:00, -0.0, -0.000, -0.0, 0, 0"],
        ],
    },
    // count_star, count (DATE), sum (i64, f64), sum0 (i128), avg
    // (DECIMAL(18, 2), f32), global; key string(). Partial row: key,
    // COUNT(*), COUNT, SUM(BIGINT), SUM0(DECIMAL(38, 2)), AVG sum
    // DECIMAL(38, 2) and count, AVG sum DOUBLE and count, SUM(DOUBLE).
    Case {
        name: "global_sums",
        mode: Global,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["DATE", "BIGINT", "DECIMAL(38, 2)", "DECIMAL(18, 2)", "FLOAT", "DOUBLE"],
        calls: "COUNT_STAR, COUNT(0), SUM(1), SUM0(2), AVG(3), AVG(4), SUM(5)",
        before: &[
            &["a, 2, 1, 9223372036854775807, 999999999999999999999999999999999999.99, 10.25, 2, 3.0, 2, NaN;
               NULL, 1, 0, NULL, 0.00, 0.00, 0, 0.0, 0, NULL;
               a-key-longer-than-seven-bytes, 3, 3, -5, -0.01, -1.11, 3, -0.0, 1, -0.0"],
            &[
                "a, 1, 1, 1, 0.01, 0.01, 1, 1.0, 1, 1.0",
                "b, 1, 1, 7, 7.00, 7.77, 1, 7.5, 1, 7.5",
            ],
        ],
        after: &[
            &[
                "a, 1, 0, NULL, NULL, NULL, 0, 0.0, 0, NULL;
                 NULL, 2, 2, 3, 3.00, 3.33, 2, 1.0, 2, 1.0",
                "c, 1, 1, 1, 1.00, 1.00, 1, 1.0, 1, 1.0",
            ],
            &["a-key-longer-than-seven-bytes, 1, 1, 5, 0.01, 1.11, 1, 0.0, 1, 0.0;
               b, 0, 0, NULL, 0.00, 0.00, 0, 0.0, 0, NULL"],
        ],
    },
    // Retracting, immediate, COUNT(*) counting records: sum_retract (i32,
    // i128 overflowing to NULL), counted_extreme (i32, f64, bytes,
    // TIMESTAMP(9); retractions of unseen values keep negative counts),
    // sum0 (f64), avg (i64), count (string()); key string().
    Case {
        name: "single_immediate_retract",
        mode: Immediate,
        input: Retracting,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["INT", "DECIMAL(38, 2)", "DOUBLE", "BIGINT", "STRING", "TIMESTAMP(9)"],
        calls: "COUNT_STAR, SUM(0), MIN(0), MAX(0), SUM(1), SUM0(2), MAX(2), AVG(3), COUNT(4), MIN(4), MAX(5)",
        before: &[
            &["+I a, 5, 1.50, 1.0, 10, pear, 2024-02-29 12:34:56.123456789;
               +I a, 7, 2.50, NaN, 20, apple, 2024-02-29 12:34:56.123456788;
               +I b, NULL, NULL, -0.0, NULL, NULL, NULL;
               -D zz, 1, 1.00, 1.0, 1, z, 2000-01-01 00:00:00;
               +I a-key-longer-than-seven-bytes, 1, 99999999999999999999999999999999999.99, 0.0, 1, x, 1969-12-31 23:59:59.999999999;
               +I NULL, 3, 0.01, -1.5, -1, Äpfel, 1970-01-01 00:00:00"],
            &[
                "-U a, 42, 9.99, 3.0, 5, kiwi, 2000-01-01 00:00:00;
                 +U a, 6, 1.00, -0.0, 6, fig, 2024-02-29 12:34:56.12345679;
                 +I b, 2, 2.00, 0.0, 2, b, 2000-01-01 00:00:00;
                 -D b, 2, 2.00, 0.0, 2, b, 2000-01-01 00:00:00",
                "+I a-key-longer-than-seven-bytes, 2, 99999999999999999999999999999999999.99, 1.0, 2, y, 1969-12-31 23:59:59.999999998;
                 +I a-key-longer-than-seven-bytes, 3, 999999999999999999999999999999999999.99, 2.0, 3, w, 1969-12-31 23:59:59.999999997",
            ],
        ],
        after: &[
            &[
                "-D a, 5, 1.50, 1.0, 10, pear, 2024-02-29 12:34:56.123456789;
                 +I a, 42, 9.99, 3.0, 5, kiwi, 2000-01-01 00:00:00;
                 -D b, NULL, NULL, -0.0, NULL, NULL, NULL;
                 +I new, 1, 1.00, NaN, 1, n, 2024-01-01 00:00:00",
                "-U a-key-longer-than-seven-bytes, 3, 999999999999999999999999999999999999.99, 2.0, 3, w, 1969-12-31 23:59:59.999999997;
                 +U NULL, 4, 0.02, NaN, -2, ä, 1970-01-01 00:00:00.000000001;
                 -D NULL, 3, 0.01, -1.5, -1, Äpfel, 1970-01-01 00:00:00;
                 -D a, 42, 9.99, 3.0, 5, kiwi, 2000-01-01 00:00:00",
            ],
        ],
    },
    // Retracting, mini-batch, the record counter inserted: sum_retract
    // (f64, i64 as DECIMAL(18, 2)), avg (f64, i128), sum0 (i32), count
    // (DECIMAL(38, 3)), counted_extreme (i128, bool, bytes, DATE); key DATE.
    Case {
        name: "single_minibatch_retract",
        mode: MiniBatch,
        input: Retracting,
        max_parallelism: 128,
        keys: &["DATE"],
        args: &[
            "DOUBLE",
            "DECIMAL(18, 2)",
            "INT",
            "DECIMAL(38, 3)",
            "BOOLEAN",
            "STRING",
            "DATE",
        ],
        calls: "SUM(0), AVG(0), SUM(1), SUM0(2), AVG(3), COUNT(3), MIN(3), MAX(4), MIN(5), MAX(6)",
        before: &[
            &[
                "+I 2024-02-29, 1.5, 1.25, 2147483647, 12345678901234567890123456789012345.678, true, pear, 2024-02-29;
                 +I 2024-02-29, -0.0, -0.25, 1, -0.001, false, apple, 1970-01-01;
                 +I NULL, NaN, NULL, NULL, NULL, NULL, NULL, NULL;
                 +I 1969-12-31, 2.0, 9999999999999999.99, -1, 1.000, true, a-long-string-value, 0001-01-01",
                "-U 2024-02-29, 1.5, 1.25, 2147483647, 12345678901234567890123456789012345.678, true, pear, 2024-02-29;
                 +U 2024-02-29, 3.5, 0.75, 5, 0.500, true, banana, 2000-01-01",
            ],
            &["+I 1969-12-31, -2.0, -9999999999999999.99, 1, 2.000, false, b, 1999-12-31;
               -U 1969-12-31, 7.0, 1.00, 1, 9.999, false, never-seen, 2100-01-01;
               +U 1969-12-31, 7.0, 1.00, 1, 9.999, false, seen, 2100-01-01;
               +I NULL, 1.0, 1.00, 1, 1.000, false, n, 1970-01-02"],
        ],
        after: &[
            &[
                "-D NULL, NaN, NULL, NULL, NULL, NULL, NULL, NULL;
                 -D NULL, 1.0, 1.00, 1, 1.000, false, n, 1970-01-02",
                "-U 1969-12-31, 2.0, 9999999999999999.99, -1, 1.000, true, a-long-string-value, 0001-01-01;
                 +I 2030-01-01, 0.5, 0.50, 0, 0.000, true, z, 2030-01-01",
            ],
            &["+I 1969-12-31, 7.0, 1.00, 1, 9.999, false, never-seen, 2100-01-01;
               -D 2024-02-29, -0.0, -0.25, 1, -0.001, false, apple, 1970-01-01",
                "-D 1969-12-31, -2.0, -9999999999999999.99, 1, 2.000, false, b, 1999-12-31"],
        ],
    },
    // Retracting, global, the record counter's partial last: sum_retract
    // (i64, i128), sum0 (f32), avg (f64), count (string()), count_star;
    // key INT; max parallelism 32768. Partial row: key, SUM(BIGINT) sum
    // and count, SUM(DECIMAL(38, 2)) sum and count, SUM0(FLOAT), AVG sum
    // and count, COUNT, COUNT(*).
    Case {
        name: "global_retract",
        mode: Global,
        input: Retracting,
        max_parallelism: 32768,
        keys: &["INT"],
        args: &["BIGINT", "DECIMAL(38, 2)", "FLOAT", "DOUBLE", "STRING"],
        calls: "SUM(0), SUM(1), SUM0(2), AVG(3), COUNT(4)",
        before: &[
            &["1, 9223372036854775807, 1, 1.50, 1, 1.5, 2.0, 1, 1, 1;
               2, NULL, 0, NULL, 0, -0.0, -0.0, 1, 0, 1;
               NULL, -5, 2, -0.01, 1, NaN, 3.0, 2, 2, 2"],
            &[
                "1, 1, 1, 0.50, 1, 0.5, 1.0, 1, 1, 1",
                "3, 7, 1, 7.00, 1, 7.0, 7.0, 1, 1, 1; 2, 4, 1, 4.00, 1, 4.0, 4.0, 1, 1, 1",
            ],
        ],
        after: &[
            &["1, -1, -1, -0.50, -1, -0.5, -1.0, -1, -1, -1;
               3, -7, -1, -7.00, -1, -7.0, -7.0, -1, -1, -1"],
            &[
                "2, -4, -1, -4.00, -1, -4.0, -4.0, -1, -1, -1; 4, 1, 1, 1.00, 1, 1.0, 1.0, 1, 0, 1",
                "NULL, 5, -2, 0.01, -1, 0.0, -3.0, -2, -2, -1",
            ],
        ],
    },
    // Retracting, global, COUNT(*) counting records: sum0 (i128 to
    // overflow), avg (i32), sum_retract (i8 wrapping); key string() with an
    // empty key; max parallelism 7. Partial row: key, COUNT(*), SUM0, AVG
    // sum and count, SUM sum and count.
    Case {
        name: "global_retract_count_star",
        mode: Global,
        input: Retracting,
        max_parallelism: 7,
        keys: &["STRING"],
        args: &["DECIMAL(38, 0)", "INT", "TINYINT"],
        calls: "COUNT_STAR, SUM0(0), AVG(1), SUM(2)",
        before: &[
            &["a, 2, 99999999999999999999999999999999999999, 10, 2, 127, 1;
               a-key-longer-than-seven-bytes, 1, -1, -3, 1, -128, 1;
               '', 1, 0, 0, 0, NULL, 0"],
            &["a, 1, 0, 1, 1, 1, 1"],
        ],
        after: &[
            &[
                "a, -1, 1, -1, -1, -1, -1; '', -1, 0, 0, 0, NULL, 0",
                "b, 1, 5, 5, 1, 5, 1",
            ],
            &["a-key-longer-than-seven-bytes, 1, 1, 3, 1, 127, 1"],
        ],
    },
    // counted_extreme, global: Flink's Min/MaxWithRetractAccumulator
    // partials (cells `extreme|mapSize|key=count&...`) merged as its
    // `merge` does: i64 MIN, bytes MAX, f64 MAX (NaN above all, -0.0 below
    // 0.0); key INT. A partial's negative counts cancel the global ones, a
    // key that only retracts keeps them (+I of NULLs), two partials of one
    // key in a bundle merge in order. Partial row: key, MIN, MAX, MAX,
    // the inserted COUNT(*).
    Case {
        name: "global_counted_extreme",
        mode: Global,
        input: Retracting,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["BIGINT", "STRING", "DOUBLE"],
        calls: "MIN(0), MAX(1), MAX(2)",
        before: &[
            &["1, 5|2|5=1&9=1, b|2|a=1&b=1, 2.0|1|2.0=2, 3;
               2, 3|1|3=1, x|1|x=1, NaN|1|NaN=1, 1"],
            &[
                "1, 7|1|9=-1&7=1, c|1|b=-1&c=1, -0.0|1|2.0=-1&-0.0=1, 0;
                 2, NULL|0|3=-1, NULL|0|x=-1, NULL|0|NaN=-1, -1",
                "3, NULL|0|4=-1, NULL|0|, NULL|0|, -1",
            ],
        ],
        after: &[&[
            "1, 2|1|2=1&5=-1, c|1|c=1, 1.5|1|1.5=1, 1",
            "1, NULL|0|, NULL|0|c=-1, NULL|0|, -1; 3, 4|1|4=1, q|1|q=1, 0.0|1|0.0=1, 1",
        ]],
    },
    // listagg_retract, global: Flink's ListAgg(Ws)WithRetractAccumulator
    // partials (cells `list|retractList` and `list|retractList|delimiter`)
    // merged as its `merge` does: the lists concatenated (state first),
    // then every retracted value of both removes the first equal value or
    // stays retracted (in state, for later partials); a partial with both
    // lists empty is skipped (separator kept); a NULL separator gives NULL;
    // key INT. Partial row: key, LISTAGG(0), LISTAGG(0 1), the inserted
    // COUNT(*).
    Case {
        name: "global_listagg_retract",
        mode: Global,
        input: Retracting,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["STRING", "STRING"],
        calls: "LISTAGG(0), LISTAGG(0 1)",
        before: &[
            &["1, a&b&a|, a&b&a||-, 3; 2, x|, x||NULL, 1"],
            &[
                "1, c|a, c|a|+, 0; 3, |q, |q|~, -1",
                "2, |, ||#, 0; 1, |zz, |zz|*, 0",
            ],
        ],
        after: &[&[
            "3, q&r|, q||:, 1; 1, |b, |b|/, -1",
            "2, x&y|x, y|x|=, 1",
        ]],
    },
    // single_value, global over retracting input: Flink's merge of
    // (value, count) partials (a count-0 partial holding the value of a
    // retract-then-accumulate bundle replaces the value; NULL is a value);
    // i64 and bytes; key INT. Partial row: key, SINGLE_VALUE value and
    // count twice, the inserted COUNT(*).
    Case {
        name: "global_single_value",
        mode: Global,
        input: Retracting,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["BIGINT", "STRING"],
        calls: "SINGLE_VALUE(0), SINGLE_VALUE(1)",
        before: &[
            &["1, 10, 1, a, 1, 1; 2, NULL, 1, NULL, 1, 1"],
            &["1, 11, 0, b, 0, 0; 3, NULL, -1, NULL, -1, -1"],
        ],
        after: &[&[
            "2, 21, 0, c, 0, 0",
            "1, NULL, -1, NULL, -1, -1; 3, 30, 1, d, 1, 1",
        ]],
    },
    // No GROUP BY: the one group of the empty key; count_star, sum (i64),
    // running_extreme (bytes, TIMESTAMP(9), bool), immediate.
    Case {
        name: "single_immediate_no_key",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &[],
        args: &["BIGINT", "STRING", "TIMESTAMP(9)", "BOOLEAN"],
        calls: "COUNT_STAR, SUM(0), MAX(1), MIN(2), MAX(3)",
        before: &[&[
            "1, a, 2024-02-29 12:34:56.123456789, false; NULL, NULL, NULL, NULL",
            "5, zz, 1969-12-31 23:59:59.999999999, true",
        ]],
        after: &[
            &["-6, zzz, 1970-01-01 00:00:00, false"],
            &["0, a, 1969-12-31 23:59:59.999999998, true"],
        ],
    },
    // first_last, immediate: bytes (string()), f64 (NaN and -0.0 are
    // values like any other), bool, TIMESTAMP(9); NULLs never taken; key
    // STRING.
    Case {
        name: "single_immediate_first_last",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["STRING", "DOUBLE", "BOOLEAN", "TIMESTAMP(9)"],
        calls: "FIRST_VALUE(0), LAST_VALUE(0), FIRST_VALUE(1), LAST_VALUE(1), \
                FIRST_VALUE(2), LAST_VALUE(2), FIRST_VALUE(3), LAST_VALUE(3)",
        before: &[
            &["a, pear, NaN, true, 2024-02-29 12:34:56.123456789;
               b, NULL, NULL, NULL, NULL;
               NULL, '', -0.0, false, 1969-12-31 23:59:59.999999999;
               a, apple, 1.5, false, NULL"],
            &["b, x, 0.0, true, 1970-01-01 00:00:00.000000001;
               a, NULL, NULL, NULL, 2000-01-01 00:00:00"],
        ],
        after: &[&[
            "a, zebra, -0.0, true, NULL; b, NULL, NaN, NULL, NULL",
            "NULL, y, 2.5, true, 2262-04-11 23:47:16.854775807; new, n, NULL, false, NULL",
        ]],
    },
    // first_last, mini-batch: i128 (DECIMAL(38, 4)), DATE (i32), f32,
    // i64; the bundle folds rows in arrival order; key INT.
    Case {
        name: "single_minibatch_first_last",
        mode: MiniBatch,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["DECIMAL(38, 4)", "DATE", "FLOAT", "BIGINT"],
        calls: "FIRST_VALUE(0), LAST_VALUE(0), FIRST_VALUE(1), LAST_VALUE(1), \
                FIRST_VALUE(2), LAST_VALUE(2), FIRST_VALUE(3), LAST_VALUE(3)",
        before: &[
            &[
                "1, 1.0001, 2024-02-29, 1.5, 9223372036854775807;
                 2, NULL, NULL, NULL, NULL;
                 1, -2.0000, 1970-01-01, NaN, -1",
                "2, 3.0000, 0001-01-01, -0.0, 0; NULL, 5.5000, 1969-12-31, 2.5, 7",
            ],
            &["1, NULL, NULL, NULL, NULL; 3, 9.9999, 2100-12-31, 0.0, -9223372036854775808"],
        ],
        after: &[
            &[
                "1, 4.0000, 2024-03-01, 4.25, 4; 2, NULL, 2000-01-01, NULL, NULL",
                "2, -3.0000, NULL, 1.0, 2; 4, NULL, NULL, NULL, NULL",
            ],
            &["3, 9.9999, 2100-12-31, 0.0, -9223372036854775808"],
        ],
    },
    // first_last_retract, immediate, COUNT(*) counting records: bytes
    // (string()), f64 (-0.0 and 0.0 are two values, NaN one), TIMESTAMP(9);
    // a retraction removes the earliest live arrival of an equal value, one
    // never seen changes nothing; key INT.
    Case {
        name: "single_immediate_first_last_retract",
        mode: Immediate,
        input: Retracting,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["STRING", "DOUBLE", "TIMESTAMP(9)"],
        calls: "COUNT_STAR, FIRST_VALUE(0), LAST_VALUE(0), FIRST_VALUE(1), LAST_VALUE(1), \
                FIRST_VALUE(2), LAST_VALUE(2)",
        before: &[
            &["+I 1, pear, 0.0, 2024-02-29 12:34:56.123456789;
               +I 1, apple, -0.0, NULL;
               +I 1, pear, NaN, 1969-12-31 23:59:59.999999999;
               -D 9, ghost, 1.0, 2000-01-01 00:00:00;
               +I 2, NULL, NULL, NULL;
               +I NULL, x, 1.5, 1970-01-01 00:00:00"],
            &[
                "-U 1, pear, 0.0, 2024-02-29 12:34:56.123456789;
                 +U 1, fig, NaN, 2000-01-01 00:00:00",
                "+I 2, kiwi, 2.5, 2000-01-01 00:00:00; -D 1, plum, 7.0, NULL",
            ],
        ],
        after: &[&[
            "-U 1, apple, -0.0, NULL; +U 1, pear, 0.0, 2024-02-29 12:34:56.123456789",
            "-D 1, pear, NaN, 1969-12-31 23:59:59.999999999; -D 2, NULL, NULL, NULL; \
             +I 3, z, NULL, NULL",
        ]],
    },
    // first_last_retract, mini-batch, the record counter inserted: i128
    // (DECIMAL(38, 4)), bool, DATE; key STRING.
    Case {
        name: "single_minibatch_first_last_retract",
        mode: MiniBatch,
        input: Retracting,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["DECIMAL(38, 4)", "BOOLEAN", "DATE"],
        calls: "FIRST_VALUE(0), LAST_VALUE(0), FIRST_VALUE(1), LAST_VALUE(1), \
                FIRST_VALUE(2), LAST_VALUE(2)",
        before: &[
            &[
                "+I a, 1.0000, true, 2024-02-29; +I a, 2.0000, false, 1970-01-01;
                 +I b, NULL, NULL, NULL",
                "+I a, 1.0000, false, 2000-01-01; -D a, 1.0000, true, 2024-02-29",
            ],
            &["+I c, -9.9999, true, 0001-01-01; +I a, 3.0000, true, 2100-12-31"],
        ],
        after: &[
            &[
                "-D a, 3.0000, true, 2100-12-31; -D b, NULL, NULL, NULL",
                "+I c, 5.5000, false, 1999-12-31; -D c, -9.9999, true, 0001-01-01",
            ],
            &["-D a, 2.0000, false, 1970-01-01; +I d, 0.0001, NULL, 2024-01-01"],
        ],
    },
    // listagg, immediate: bytes (string(), CHAR(5)), the default
    // separator and a separator column (NULL makes the concatenation NULL,
    // '' joins nothing between); a NULL value still sets the separator;
    // key INT. `F(i j)`: value column i, separator column j.
    Case {
        name: "single_immediate_listagg",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["STRING", "CHAR(5)", "STRING"],
        calls: "LISTAGG(0), LISTAGG(0 2), LISTAGG(1), LISTAGG(1 2)",
        before: &[
            &["1, pear, abc, -; 2, NULL, NULL, -; 1, apple, NULL, |; NULL, '', xy, ''"],
            &[
                "1, NULL, de, ::; 2, x, y, NULL; 2, z, w, |",
                "NULL, é, ß, ''; 3, NULL, NULL, NULL",
            ],
        ],
        after: &[&[
            "1, fig, f, -; 3, a, b, +; 2, q, r, ''",
            "NULL, end, e, /; 4, NULL, NULL, -",
        ]],
    },
    // listagg, mini-batch: the bundle folds rows in arrival order; key
    // STRING.
    Case {
        name: "single_minibatch_listagg",
        mode: MiniBatch,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["CHAR(5)", "STRING", "STRING"],
        calls: "LISTAGG(0 2), LISTAGG(1), LISTAGG(1 2)",
        before: &[
            &[
                "a, one, uno, ^; b, NULL, NULL, ^; a, two, dos, ^",
                "a, NULL, tres, NULL; NULL, x, '', -",
            ],
            &["b, y, NULL, ''; c, '', '', ''"],
        ],
        after: &[
            &["a, four, cuatro, ^; b, z, zeta, -", "c, NULL, NULL, ''; NULL, w, v, -"],
            &["a-key-longer-than-seven-bytes, l, long, ~"],
        ],
    },
    // listagg, global: partial rows (accDelimiter, concatAcc) per call
    // merged in arrival order, the partial's separator between; a NULL
    // concatenation changes only the separator; key INT.
    Case {
        name: "global_listagg",
        mode: Global,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["STRING", "STRING"],
        calls: "LISTAGG(0), LISTAGG(0 1)",
        before: &[
            &["1, {comma}, a{comma}b, |, a|b; 2, {comma}, NULL, -, NULL; NULL, {comma}, '', '', ''"],
            &["1, {comma}, c, |, c; 2, {comma}, x, NULL, x"],
        ],
        after: &[
            &["1, {comma}, d{comma}e, |, d|e; 2, {comma}, y, -, y"],
            &["3, {comma}, NULL, ::, NULL; NULL, {comma}, z, '', z"],
        ],
    },
    // listagg_retract, immediate, COUNT(*) counting records: a retraction
    // removes the first equal live value (from the middle too); one never
    // seen changes nothing; the separator is the latest non-NULL row's;
    // key INT.
    Case {
        name: "single_immediate_listagg_retract",
        mode: Immediate,
        input: Retracting,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["STRING", "CHAR(5)", "STRING"],
        calls: "COUNT_STAR, LISTAGG(0), LISTAGG(0 2), LISTAGG(1 2)",
        before: &[
            &["+I 1, a, x, -; +I 1, b, y, -; +I 1, a, z, -; +I 1, c, x, -;
               -D 9, ghost, g, -; +I 2, NULL, NULL, NULL"],
            &[
                "-U 1, a, x, -; +U 1, d, y, |",
                "-D 1, nope, nope, |; +I NULL, '', '', ''; -D 2, NULL, NULL, NULL",
            ],
        ],
        after: &[&[
            "-U 1, b, y, |; +U 1, b, y, /; -D 1, a, z, /",
            "+I 3, q, r, ''; -D 1, c, x, -; -D 1, d, y, -",
        ]],
    },
    // listagg_retract, mini-batch, the record counter inserted; key
    // STRING.
    Case {
        name: "single_minibatch_listagg_retract",
        mode: MiniBatch,
        input: Retracting,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["CHAR(5)", "STRING", "STRING"],
        calls: "LISTAGG(0), LISTAGG(1 2)",
        before: &[
            &[
                "+I a, one, uno, ^; +I a, two, dos, ^; +I b, NULL, NULL, NULL",
                "+I a, one, tres, +; -D a, one, uno, ^",
            ],
            &["+I c, x, y, ''; +I a, two, dos, ^"],
        ],
        after: &[
            &[
                "-D a, two, dos, ^; -D b, NULL, NULL, NULL",
                "+I c, z, w, -; -D c, x, y, ''",
            ],
            &["-D a, one, tres, +; +I d, e, f, ~"],
        ],
    },
    // single_value, immediate: one row per key (a second one fails, see
    // runtime/tests/single_value.rs); NULL is a value; i64 and bytes; key
    // INT.
    Case {
        name: "single_immediate_single_value",
        mode: Immediate,
        input: InsertOnly,
        max_parallelism: 128,
        keys: &["INT"],
        args: &["BIGINT", "STRING"],
        calls: "SINGLE_VALUE(0), SINGLE_VALUE(1)",
        before: &[
            &["1, 5, a; 2, NULL, b; NULL, 7, NULL"],
            &["3, -1, ''"],
        ],
        after: &[&["4, 9, z; 5, NULL, NULL", "6, 0, q"]],
    },
    // single_value, mini-batch over retracting input: a retraction empties
    // the value (count 1 -> 0), the next row sets it; i128 (DECIMAL(38,
    // 4)) and bool; key STRING.
    Case {
        name: "single_minibatch_single_value",
        mode: MiniBatch,
        input: Retracting,
        max_parallelism: 128,
        keys: &["STRING"],
        args: &["DECIMAL(38, 4)", "BOOLEAN"],
        calls: "COUNT_STAR, SINGLE_VALUE(0), SINGLE_VALUE(1)",
        before: &[
            &["+I a, 1.0000, true; +I b, NULL, false"],
            &["-U a, 1.0000, true; +U a, 2.0000, NULL; +I c, 3.0000, true"],
        ],
        after: &[
            &["-D b, NULL, false; -U a, 2.0000, NULL; +U a, 4.0000, false"],
            &["+I b, -5.5000, true; -D c, 3.0000, true"],
        ],
    },
];
