-- Job "immediate": q1 and q3 in one job (one source scan), single-phase
-- aggregates without mini-batch.
SET 'pipeline.name' = '@JOB_PREFIX@-immediate';

EXECUTE STATEMENT SET
BEGIN

INSERT INTO q1_sink
SELECT k, COUNT(*), COUNT(i),
       MIN(i), MAX(i), SUM(i), AVG(i),
       SUM(b), MIN(b), MAX(b),
       SUM(d), AVG(d), MIN(d), MAX(d),
       SUM(m), AVG(m), MIN(m), MAX(m),
       MIN(dt), MAX(dt), MIN(ts), MAX(ts),
       MIN(s), MAX(s), MAX(flag)
FROM src
GROUP BY k;

INSERT INTO q3_sink
SELECT MOD(c + k, 10), COUNT(*), SUM(si), MIN(si), MAX(si), AVG(c),
       MIN(ms), MAX(ms), SUM(sm)
FROM (
    SELECT k, COUNT(*) AS c, SUM(i) AS si, MAX(s) AS ms, SUM(m) AS sm
    FROM src
    GROUP BY k
)
GROUP BY MOD(c + k, 10);

END;
