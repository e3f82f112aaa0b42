package dev.aggforge.flink.failover;

import org.junit.jupiter.api.Test;

/**
 * The failover test of {@link NativeFailoverTest} with the failing job on the RocksDB state
 * backend ({@code state.backend.type: rocksdb}, flink-statebackend-rocksdb in test scope): the
 * native DISTINCT views and FILTER columns, ARRAY keys and the global LISTAGG lists and
 * retractLists, and a two-phase window aggregate's slices and pending windows, are checkpointed,
 * restored after the injected failure and the result equals stock Flink's unfailed one, single
 * phase and two-phase.
 *
 * <p>On the Flink 2.x lines only: Maven Central serves no flink-statebackend-rocksdb 1.20.3, the
 * 1.20 release the build tests (its 1.20.4 has no flink-table-planner-loader).
 */
class RocksDbFailoverTest {

    @Test
    void distinctFailoverOnRocksDb() throws Exception {
        NativeFailoverTest.failover(
                NativeFailoverTest.IMMEDIATE, NativeFailoverTest.DISTINCT_SQL, 1, "rocksdb");
    }

    @Test
    void twoPhaseDistinctFailoverOnRocksDb() throws Exception {
        NativeFailoverTest.failover(
                NativeFailoverTest.TWO_PHASE, NativeFailoverTest.DISTINCT_SQL, 2, "rocksdb");
    }

    @Test
    void arrayKeyAndTwoPhaseRetractingListAggFailoverOnRocksDb() throws Exception {
        NativeFailoverTest.failover(
                NativeFailoverTest.TWO_PHASE, NativeFailoverTest.ARRAY_KEY_SQL, 2, "rocksdb");
        NativeFailoverTest.failover(
                NativeFailoverTest.TWO_PHASE,
                NativeFailoverTest.RETRACTING_LISTAGG_SQL,
                4,
                "rocksdb");
    }

    @Test
    void twoPhaseCumulateWindowFailoverOnRocksDb() throws Exception {
        // Slices, pending windows and the watermark of a local/global window pair.
        WindowFailoverTest.failover(
                WindowFailoverTest.TWO_PHASE, WindowFailoverTest.CUMULATE_SQL, 2, "rocksdb");
    }
}
