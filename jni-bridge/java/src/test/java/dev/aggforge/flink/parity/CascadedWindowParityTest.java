package dev.aggforge.flink.parity;

import static dev.aggforge.flink.parity.WindowParityTest.EVENTS;
import static dev.aggforge.flink.parity.WindowParityTest.assertWindowParity;
import static dev.aggforge.flink.parity.WindowParityTest.options;

import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;


/**
 * Cascaded window aggregates: a window aggregate grouping by the {@code window_start} and {@code
 * window_end} of another's output (Flink's window-attached windowing: each row carries its
 * window, which the outer aggregate neither re-slices nor merges). Both aggregates run natively,
 * one phase and two, at parallelism 1 and 2, and emit stock Flink's windows. (A roll-up of
 * SESSION windows is a group aggregate in Flink's plan: sessions are not aligned.)
 */
class CascadedWindowParityTest {

    static Stream<Arguments> cases() {
        return WindowParityTest.crossed(
                "TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
                "HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)",
                "CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)");
    }

    /** Per-key windows rolled up per {@code MOD(k, 3)} (NULL keys make a NULL group). */
    @ParameterizedTest(name = "{0} {1} p={2}")
    @MethodSource("cases")
    void rollUp(String window, String phase, int parallelism) throws Exception {
        String sql =
                "SELECT k3, window_start, window_end, window_time, SUM(c) AS c, MAX(mx) AS mx,"
                        + " MIN(mn) AS mn, COUNT(*) AS keys, AVG(s) AS a FROM ("
                        + " SELECT MOD(k, 3) AS k3, window_start, window_end, window_time,"
                        + " COUNT(*) AS c, MAX(v) AS mx, MIN(v) AS mn, SUM(v) AS s FROM TABLE("
                        + window
                        + ") GROUP BY k, window_start, window_end, window_time)"
                        + " GROUP BY k3, window_start, window_end, window_time";
        assertWindowParity(options(phase, parallelism), phase, sql, EVENTS, 2);
    }

    /** The outer aggregate without keys: one row per window. */
    @Test
    void rollUpWithoutKeys() throws Exception {
        String sql =
                "SELECT window_start, window_end, SUM(c), MAX(mx), COUNT(*) FROM ("
                        + " SELECT k, window_start, window_end, COUNT(*) AS c, MAX(d) AS mx"
                        + " FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND,"
                        + " INTERVAL '15' SECOND)) GROUP BY k, window_start, window_end)"
                        + " GROUP BY window_start, window_end";
        assertWindowParity(options("ONE_PHASE", 2), "ONE_PHASE", sql, EVENTS, 2);
    }
}
