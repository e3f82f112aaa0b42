package dev.aggforge.flink.parity;

import static org.apache.flink.table.api.DataTypes.BIGINT;
import static org.apache.flink.table.api.DataTypes.DECIMAL;
import static org.apache.flink.table.api.DataTypes.FIELD;
import static org.apache.flink.table.api.DataTypes.INT;
import static org.apache.flink.table.api.DataTypes.STRING;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.flink.types.Row;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.exchange.ExchangeMetrics;
import dev.aggforge.flink.exchange.MessageForwarder;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * The columnar exchange (rows transposed and routed by key group in the sending task) against
 * stock Flink's row exchange: skewed keys at parallelism 1, 2 and 4, every mode, composite and
 * string keys, the keyless singleton exchange, and what EXPLAIN says. {@link NativeParity}
 * checks on every parity test of the suite that the columnar path ran where EXPLAIN says so.
 */
class ColumnarExchangeParityTest {

    private static final RunOptions ONE = RunOptions.defaults();

    /** 6,000 rows, 70% of them on key 0, the rest over 60 keys; NULL keys and values too. */
    private static final InputTable SKEWED = skewed();

    private static final String SQL =
            "SELECT k, s, MIN(v), MAX(v), COUNT(v), SUM(d), AVG(v), COUNT(*) FROM t GROUP BY k, s";

    /** One key column, so that per-key changelogs compare at parallelism above 1. */
    private static final String SQL_ONE_KEY =
            "SELECT k, MIN(v), MAX(v), COUNT(v), SUM(d), AVG(v), COUNT(*) FROM t GROUP BY k";

    private static InputTable skewed() {
        Random random = new Random(7);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 6_000; i++) {
            Integer k = random.nextInt(10) < 7 ? Integer.valueOf(0) : random.nextInt(61) == 0 ? null : random.nextInt(60) + 1;
            String s = random.nextInt(9) == 0 ? null : "s" + random.nextInt(3);
            Long v = random.nextInt(8) == 0 ? null : random.nextLong() % 1_000_000;
            BigDecimal d = random.nextInt(8) == 0 ? null : BigDecimal.valueOf(random.nextInt(100_000), 3);
            rows.add(Row.of(k, s, v, d));
        }
        return InputTable.of(
                "t",
                List.of(FIELD("k", INT()), FIELD("s", STRING()), FIELD("v", BIGINT()), FIELD("d", DECIMAL(20, 3))),
                rows.toArray(new Row[0]));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void immediateSkewedKeys(int parallelism) throws Exception {
        NativeParity.assertParity(
                ONE.withParallelism(parallelism),
                parallelism == 1 ? Compare.LINES : Compare.PER_KEY,
                1,
                SQL_ONE_KEY,
                SKEWED);
        NativeParity.assertParity(
                ONE.withParallelism(parallelism),
                parallelism == 1 ? Compare.LINES : Compare.FINAL_TABLE,
                1,
                SQL,
                SKEWED);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void miniBatchSkewedKeys(int parallelism) throws Exception {
        NativeParity.assertParity(
                ONE.withParallelism(parallelism).withMiniBatch(37).withAggPhase("ONE_PHASE"),
                parallelism == 1 ? Compare.LINES : Compare.FINAL_TABLE,
                1,
                SQL,
                SKEWED);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void twoPhaseSkewedKeys(int parallelism) throws Exception {
        long forwarded = MessageForwarder.FORWARDED.get();
        NativeParity.assertParity(
                ONE.withParallelism(parallelism).withMiniBatch(37).withAggPhase("TWO_PHASE"),
                parallelism == 1 ? Compare.LINES : Compare.FINAL_TABLE,
                2,
                SQL,
                SKEWED);
        // The native local phase routed its partials itself (no sender transposed them).
        long routed = MessageForwarder.FORWARDED.get() - forwarded;
        assertTrue(
                NativeParity.COLUMNAR_EXCHANGE ? routed > 0 : routed == 0,
                routed + " messages routed by the local phase");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void nestedRetractingAggregates(int parallelism) throws Exception {
        NativeParity.assertParity(
                ONE.withParallelism(parallelism),
                Compare.FINAL_TABLE,
                2,
                "SELECT c, MIN(m), MAX(m), COUNT(*) FROM (SELECT k, COUNT(*) AS c, MAX(v) AS m"
                        + " FROM t GROUP BY k) GROUP BY c",
                SKEWED);
    }

    @Test
    void keylessAggregateAtParallelismTwo() throws Exception {
        NativeParity.assertParity(
                ONE.withParallelism(2), Compare.LINES, 1, "SELECT MIN(v), MAX(v), COUNT(*) FROM t", SKEWED);
    }

    @Test
    void explainNamesTheExchange() {
        RunOptions on =
                NativeParity.withAggforge(ONE.withParallelism(2))
                        .withConfig(AggforgeOptions.COLUMNAR_EXCHANGE.key(), "true")
                        .withConfig(NativeParity.UID_GENERATION, "ALWAYS");
        String columnar = SqlHarness.explain(on, SQL, SKEWED);
        assertTrue(columnar.contains("exchange=[columnar]"), columnar);
        RunOptions off = on.withConfig(AggforgeOptions.COLUMNAR_EXCHANGE.key(), "false");
        String rows = SqlHarness.explain(off, SQL, SKEWED);
        assertTrue(
                rows.contains("exchange=[rows (table.exec.aggforge.columnar-exchange=false)]"), rows);
        // Without operator uids the exchange stays Flink's, so operator ids stay stock Flink's.
        String noUids = SqlHarness.explain(on.withConfig(NativeParity.UID_GENERATION, "PLAN_ONLY"), SQL, SKEWED);
        assertTrue(
                noUids.contains(
                        "exchange=[rows (the columnar exchange needs operator uids:"
                                + " table.exec.uid.generation=ALWAYS)]"),
                noUids);
    }

    @Test
    void senderSendsWholeBatches() throws Exception {
        long before = ExchangeMetrics.sentSoFar();
        NativeParity.assertParity(ONE, Compare.LINES, 1, SQL, SKEWED);
        long messages = ExchangeMetrics.sentSoFar() - before;
        // 6,000 rows in batches of table.exec.aggforge.batch-size (1,024) rows, one channel;
        // the max-delay timer may cut a few more.
        assertTrue(
                NativeParity.COLUMNAR_EXCHANGE ? messages >= 6 && messages < 100 : messages == 0,
                messages + " messages");
    }
}
