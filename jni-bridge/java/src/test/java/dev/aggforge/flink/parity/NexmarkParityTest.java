package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.aggforge.flink.harness.Changelog;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.NexmarkQueries;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * Nexmark q15, q16 and q17 (nexmark-flink/src/main/resources/queries) over 30,000 bids of the
 * Nexmark generator ({@link InputTable#nexmarkBids}), against stock Flink's complete changelog.
 * The SQL is Nexmark's SELECT, reading the generated table {@code bid} instead of the view over
 * the nexmark connector. The bids span midnight (two days, minutes 23:59 and 00:00).
 *
 * <p>q15 and q16 hold DISTINCT calls with FILTERs, so they run natively in single-phase plans
 * only (immediate and one-phase mini-batch); q17 has none and runs in two-phase plans too.
 * Under Nexmark's own configuration (mini-batch, AUTO phases, split-distinct aggregation) the
 * partial, incremental and final aggregates of q15 and q16 all run natively.
 */
class NexmarkParityTest {

    private static final RunOptions ONE = RunOptions.defaults();

    private static final RunOptions MINI_BATCH_ONE_PHASE =
            ONE.withMiniBatch(64).withAggPhase("ONE_PHASE");

    private static final RunOptions MINI_BATCH_TWO_PHASE =
            ONE.withMiniBatch(64).withAggPhase("TWO_PHASE");

    /**
     * Nexmark's flink-conf (mini-batch on, split-distinct aggregation on, AUTO phases: two-phase
     * plans), with the harness's bundle size instead of Nexmark's 50,000.
     */
    private static final RunOptions NEXMARK_CONFIG =
            ONE.withMiniBatch(64).withConfig("table.optimizer.distinct-agg.split.enabled", "true");

    private static final InputTable BID = InputTable.nexmarkBids("bid", 30_000);

    @Test
    void q15Immediate() throws Exception {
        Changelog log = NativeParity.assertParity(ONE, Compare.LINES, 1, NexmarkQueries.Q15, BID);
        List<String> days = log.finalTable(0);
        assertEquals(2, days.size(), days.toString());
        assertTrue(days.get(0).startsWith("+I[2024-01-01, "), days.toString());
        assertTrue(days.get(1).startsWith("+I[2024-01-02, "), days.toString());
    }

    @Test
    void q15MiniBatchOnePhase() throws Exception {
        NativeParity.assertParity(MINI_BATCH_ONE_PHASE, Compare.LINES, 1, NexmarkQueries.Q15, BID);
    }

    @Test
    void q16Immediate() throws Exception {
        Changelog log = NativeParity.assertParity(ONE, Compare.LINES, 1, NexmarkQueries.Q16, BID);
        // 4 hot channels and thousands of others, each on both days.
        assertTrue(log.finalTable(0, 1).size() > 5_000, "few channel-days");
        assertTrue(log.lines().stream().anyMatch(l -> l.contains("Google, 2024-01-01, 23:59,")));
        assertTrue(log.lines().stream().anyMatch(l -> l.contains("Google, 2024-01-02, 00:00,")));
    }

    @Test
    void q16MiniBatchOnePhase() throws Exception {
        NativeParity.assertParity(MINI_BATCH_ONE_PHASE, Compare.LINES, 1, NexmarkQueries.Q16, BID);
    }

    @Test
    void q17Immediate() throws Exception {
        Changelog log = NativeParity.assertParity(ONE, Compare.LINES, 1, NexmarkQueries.Q17, BID);
        assertTrue(log.lines().stream().anyMatch(l -> l.startsWith("-U")), "no update");
    }

    @Test
    void q17MiniBatchOnePhase() throws Exception {
        NativeParity.assertParity(MINI_BATCH_ONE_PHASE, Compare.LINES, 1, NexmarkQueries.Q17, BID);
    }

    /** Local and global aggregate both native. */
    @Test
    void q17TwoPhase() throws Exception {
        NativeParity.assertParity(MINI_BATCH_TWO_PHASE, Compare.LINES, 2, NexmarkQueries.Q17, BID);
    }

    /** Two-phase DISTINCT: the local views travel as Flink's MapView partials. */
    @Test
    void q15TwoPhase() throws Exception {
        NativeParity.assertParity(MINI_BATCH_TWO_PHASE, Compare.LINES, 2, NexmarkQueries.Q15, BID);
    }

    @Test
    void q16TwoPhase() throws Exception {
        NativeParity.assertParity(MINI_BATCH_TWO_PHASE, Compare.LINES, 2, NexmarkQueries.Q16, BID);
    }

    /**
     * Nexmark's configuration splits q15's DISTINCT calls: the local aggregate of the partial
     * level (its DISTINCT views as Flink's MapView partials), the incremental aggregate (the
     * partial level's global phase fused with the final level's local phase) and the final SUM0
     * aggregate all run natively.
     */
    @Test
    void q15NexmarkConfig() throws Exception {
        NativeParity.assertParity(NEXMARK_CONFIG, Compare.LINES, 3, NexmarkQueries.Q15, BID);
    }

    /** As q15, with the final MAX over VARCHAR of q16's minute native too. */
    @Test
    void q16NexmarkConfig() throws Exception {
        NativeParity.assertParity(NEXMARK_CONFIG, Compare.LINES, 3, NexmarkQueries.Q16, BID);
    }

    /** No DISTINCT: the split changes nothing, local and global aggregate native. */
    @Test
    void q17NexmarkConfig() throws Exception {
        NativeParity.assertParity(NEXMARK_CONFIG, Compare.LINES, 2, NexmarkQueries.Q17, BID);
    }
}
