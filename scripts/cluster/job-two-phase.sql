-- Job "two-phase": q2 with mini-batch and the local/global split.
SET 'pipeline.name' = '@JOB_PREFIX@-two-phase';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '500 ms';
SET 'table.exec.mini-batch.size' = '1000';
SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';

INSERT INTO q2_sink
SELECT k, flag, COUNT(*), SUM(b), MIN(i), MAX(i),
       AVG(d), SUM(m), MIN(s), MAX(s),
       MIN(dt), MAX(ts)
FROM src
GROUP BY k, flag;
