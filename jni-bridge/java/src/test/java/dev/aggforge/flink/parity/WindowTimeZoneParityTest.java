package dev.aggforge.flink.parity;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import org.apache.flink.table.api.DataTypes;
import org.apache.flink.types.Row;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;

/**
 * Windows over a TIMESTAMP_LTZ(3) rowtime are cut in the session time zone's wall-clock time
 * ({@code table.local-time-zone}): stock and native emit the same windows across
 * America/Los_Angeles' spring-forward gap (2024-03-10, local 02:00-03:00 does not exist) and its
 * fall-back overlap (2024-11-03, local 01:00-02:00 happens twice), and in Asia/Kolkata (+05:30),
 * whose offset an hour's window does not divide. Rows run forward with jitter; some are late.
 */
class WindowTimeZoneParityTest {

    private static final String LOS_ANGELES = "America/Los_Angeles";

    /** About six hours of event time around the spring-forward gap (10:00 UTC). */
    static final InputTable SPRING = events("events", Instant.parse("2024-03-10T07:00:00Z"), 89);

    /** About six hours of event time around the fall-back overlap (09:00 UTC). */
    static final InputTable FALL = events("events", Instant.parse("2024-11-03T06:00:00Z"), 97);

    /** (k INT, v BIGINT, ts TIMESTAMP_LTZ(3)), 3,000 rows about 7 s apart; watermark 1 s behind. */
    static InputTable events(String name, Instant start, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long time = start.toEpochMilli();
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            time += random.nextInt(14_400);
            // One row in 15 up to 20 minutes behind: late once its windows fired.
            long ts = random.nextInt(15) == 0 ? time - random.nextInt(1_200_000) : time;
            Integer k = random.nextInt(30) == 0 ? null : random.nextInt(5);
            Long v = random.nextInt(10) == 0 ? null : random.nextLong(-1_000, 1_000);
            rows.add(Row.of(k, v, Instant.ofEpochMilli(ts)));
        }
        return InputTable.of(
                        name,
                        DataTypes.ROW(
                                DataTypes.FIELD("k", DataTypes.INT()),
                                DataTypes.FIELD("v", DataTypes.BIGINT()),
                                DataTypes.FIELD("ts", DataTypes.TIMESTAMP_LTZ(3))),
                        rows)
                .withWatermark("ts", 1);
    }

    private static final String CALLS = "COUNT(*) AS c, MIN(v) AS mn, MAX(v) AS mx, SUM(v) AS s";

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        String[] windows = {
            "TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' HOUR)",
            "HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '30' MINUTE, INTERVAL '2' HOUR)",
            "CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '30' MINUTE, INTERVAL '2' HOUR)",
        };
        for (String season : new String[] {"spring", "fall"}) {
            for (String window : windows) {
                for (String phase : new String[] {"ONE_PHASE", "TWO_PHASE"}) {
                    cases.add(Arguments.of(season, window, phase));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void windowsFollowTheSessionTimeZone(String season, String window, String phase)
            throws Exception {
        String sql = WindowParityTest.keyedQuery(CALLS, window, true);
        WindowParityTest.assertWindowParity(
                options(LOS_ANGELES, phase), phase, sql, season.equals("spring") ? SPRING : FALL);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"spring", "fall"})
    void sessionsFollowTheSessionTimeZone(String season) throws Exception {
        String sql =
                "SELECT k, window_start, window_end, window_time, "
                        + CALLS
                        + " FROM TABLE(SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts),"
                        + " INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end, window_time";
        WindowParityTest.assertWindowParity(
                options(LOS_ANGELES, "ONE_PHASE"),
                "ONE_PHASE",
                sql,
                season.equals("spring") ? SPRING : FALL);
    }

    /**
     * Asia/Kolkata (+05:30): hour windows start at :30 UTC. Every window fires at end of input:
     * with watermarks inside the data Flink 2.2.1 flushes its buffer as if windows were aligned to
     * UTC hours and can lose rows (FLINK-38075, docs/window-aggregates.md).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ONE_PHASE", "TWO_PHASE"})
    void halfHourOffsetZone(String phase) throws Exception {
        String sql =
                "SELECT k, window_start, window_end, window_time, "
                        + CALLS
                        + " FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' HOUR))"
                        + " GROUP BY k, window_start, window_end, window_time";
        WindowParityTest.assertWindowParity(
                options("Asia/Kolkata", phase), phase, sql, SPRING.withWatermark("ts", 86_400));
    }

    private static RunOptions options(String zone, String phase) {
        return RunOptions.defaults()
                .withAggPhase(phase)
                .withParallelism(2)
                .withConfig("table.local-time-zone", zone);
    }
}
