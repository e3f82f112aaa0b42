-- Tables shared by every job of scripts/cluster-test.sh. The script replaces
-- @ROWS@, @ROWS_PER_SECOND@ and @OUT@ before handing the file to
-- bin/sql-client.sh.

SET 'execution.runtime-mode' = 'streaming';
-- The client waits for each INSERT's job to finish (and fails if it fails).
SET 'table.dml-sync' = 'true';

-- Deterministic input: a throttled sequence 1..@ROWS@. Every other column is
-- a pure function of id, so every run (stock, native, failed over) sees the
-- same rows. DOUBLE values are multiples of 0.25, so their sums are exact in
-- any order (the source runs at parallelism 2).
CREATE TEMPORARY TABLE gen (
    id BIGINT
) WITH (
    'connector' = 'datagen',
    'fields.id.kind' = 'sequence',
    'fields.id.start' = '1',
    'fields.id.end' = '@ROWS@',
    'rows-per-second' = '@ROWS_PER_SECOND@'
);

CREATE TEMPORARY VIEW src AS
SELECT
    id,
    CAST(MOD(id, 64) AS INT) AS k,
    CASE WHEN MOD(id, 11) = 0 THEN CAST(NULL AS INT)
         ELSE CAST(MOD(id * 7919, 10007) AS INT) - 5000 END AS i,
    id * 1000003 - 7000000000 AS b,
    CASE WHEN MOD(id, 13) = 0 THEN CAST(NULL AS DOUBLE)
         ELSE CAST(MOD(id * 31, 1000) AS DOUBLE) / 4 - 100 END AS d,
    CAST(MOD(id * 17, 100000) * 0.01 AS DECIMAL(10, 2)) AS m,
    CAST(TIMESTAMPADD(DAY, CAST(MOD(id * 13, 3650) AS INT), DATE '2020-01-01') AS DATE) AS dt,
    CAST(TIMESTAMPADD(SECOND, CAST(MOD(id * 101, 2592000) AS INT),
                      TIMESTAMP '2024-01-01 00:00:00') AS TIMESTAMP(3)) AS ts,
    CASE WHEN MOD(id, 17) = 0 THEN CAST(NULL AS STRING)
         ELSE CONCAT('v', LPAD(CAST(MOD(id * 7, 331) AS STRING), 3, '0')) END AS s,
    MOD(id, 3) = 0 AS flag
FROM gen;

-- GROUP BY results are updating streams: the filesystem sink writes them as
-- Debezium JSON changelogs. Each subtask rolls a new part file every 5 s; a
-- rolled file becomes visible (committed) when the next checkpoint completes.

-- q1: single phase, insert-only input.
CREATE TEMPORARY TABLE q1_sink (
    k INT, cnt BIGINT, cnt_i BIGINT,
    min_i INT, max_i INT, sum_i INT, avg_i INT,
    sum_b BIGINT, min_b BIGINT, max_b BIGINT,
    sum_d DOUBLE, avg_d DOUBLE, min_d DOUBLE, max_d DOUBLE,
    sum_m DECIMAL(38, 2), avg_m DECIMAL(38, 6), min_m DECIMAL(10, 2), max_m DECIMAL(10, 2),
    min_dt DATE, max_dt DATE, min_ts TIMESTAMP(3), max_ts TIMESTAMP(3),
    min_s STRING, max_s STRING, max_flag BOOLEAN
) WITH (
    'connector' = 'filesystem', 'path' = 'file://@OUT@/q1', 'format' = 'debezium-json',
    'sink.rolling-policy.rollover-interval' = '5 s', 'sink.rolling-policy.check-interval' = '1 s'
);

-- q2: two-phase (local + global), mini-batch, composite key.
CREATE TEMPORARY TABLE q2_sink (
    k INT, flag BOOLEAN, cnt BIGINT, sum_b BIGINT, min_i INT, max_i INT,
    avg_d DOUBLE, sum_m DECIMAL(38, 2), min_s STRING, max_s STRING,
    min_dt DATE, max_ts TIMESTAMP(3)
) WITH (
    'connector' = 'filesystem', 'path' = 'file://@OUT@/q2', 'format' = 'debezium-json',
    'sink.rolling-policy.rollover-interval' = '5 s', 'sink.rolling-policy.check-interval' = '1 s'
);

-- q3: GROUP BY over a GROUP BY: the outer aggregate's input retracts.
CREATE TEMPORARY TABLE q3_sink (
    g BIGINT, n BIGINT, sum_si INT, min_si INT, max_si INT, avg_c BIGINT,
    min_ms STRING, max_ms STRING, sum_sm DECIMAL(38, 2)
) WITH (
    'connector' = 'filesystem', 'path' = 'file://@OUT@/q3', 'format' = 'debezium-json',
    'sink.rolling-policy.rollover-interval' = '5 s', 'sink.rolling-policy.check-interval' = '1 s'
);
