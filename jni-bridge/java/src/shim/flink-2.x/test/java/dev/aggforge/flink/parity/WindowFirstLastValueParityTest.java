package dev.aggforge.flink.parity;

import static dev.aggforge.flink.parity.WindowParityTest.assertWindowParity;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * FIRST_VALUE and LAST_VALUE in window aggregates: TUMBLE in one phase only, as stock Flink 2.x
 * cannot merge them (HOP, CUMULATE and two phases fail in its own planner: no merge method).
 * Flink 2.x only: 1.20.3's planner rejects them in any window aggregate
 * (StreamPhysicalWindowAggregateRule fails), so there is no stock result to compare with.
 */
class WindowFirstLastValueParityTest {

    @ParameterizedTest(name = "p={0}")
    @ValueSource(ints = {1, 2})
    void firstAndLastValue(int parallelism) throws Exception {
        String sql =
                "SELECT k, window_start, window_end, FIRST_VALUE(v) AS fv, LAST_VALUE(s) AS lv,"
                        + " FIRST_VALUE(m) AS fm, LAST_VALUE(x) AS lx, LAST_VALUE(t) AS lt FROM TABLE("
                        + "TUMBLE(TABLE typed, DESCRIPTOR(ts), INTERVAL '10' SECOND)"
                        + ") GROUP BY k, window_start, window_end";
        assertWindowParity(
                WindowParityTest.options("ONE_PHASE", parallelism),
                "ONE_PHASE",
                sql,
                WindowFunctionsParityTest.TYPED);
    }
}
