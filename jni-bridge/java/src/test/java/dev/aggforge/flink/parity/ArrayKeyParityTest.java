package dev.aggforge.flink.parity;

import java.time.Duration;
import java.util.stream.Stream;

import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * Stock Flink against aggforge with ARRAY group keys: an ARRAY of every type row's type as the
 * key (31 distinct arrays of 0 to 2 elements, NULL elements, NULL arrays 1 in 6), alone and next
 * to an INT key, immediate, mini-batch (whose bundles iterate in the HashMap order of the
 * BinaryRowData keys, so the array bytes must hash as Flink's), two-phase, at parallelism 2, upsert
 * with state TTL, and a nested GROUP BY whose outer key is an ARRAY.
 */
class ArrayKeyParityTest {

    private static InputTable table(LogicalType element) {
        return InputTable.generated(
                "t", 1_500, 5, 1.0 / 6, 29, new ArrayType(element), new BigIntType(), new DoubleType());
    }

    static Stream<Arguments> elementTypes() {
        return Stream.of(TypeParityTest.TYPES).map(t -> Arguments.of(t.asSummaryString()));
    }

    static LogicalType element(String summary) {
        for (LogicalType type : TypeParityTest.TYPES) {
            if (type.asSummaryString().equals(summary)) {
                return type;
            }
        }
        throw new IllegalArgumentException(summary);
    }

    private static final String BY_ARRAY =
            "SELECT v0, COUNT(*), SUM(v1), MAX(v2), COUNT(v2) FROM t GROUP BY v0";

    private static final String BY_INT_AND_ARRAY =
            "SELECT k, v0, COUNT(*), MIN(v1) FROM t GROUP BY k, v0";

    @ParameterizedTest(name = "ARRAY<{0}> key mini-batch")
    @MethodSource("elementTypes")
    void miniBatch(String element) throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(97).withAggPhase("ONE_PHASE"),
                Compare.LINES,
                1,
                BY_ARRAY,
                table(element(element)));
    }

    @ParameterizedTest(name = "INT and ARRAY<{0}> keys two-phase")
    @MethodSource("elementTypes")
    void twoPhase(String element) throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                2,
                BY_INT_AND_ARRAY,
                table(element(element)));
    }

    @Test
    void immediate() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults(), Compare.LINES, 1, BY_ARRAY, table(new BigIntType()));
    }

    @Test
    void upsertWithoutUpdateBeforeAndStateTtl() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withUpdateBefore(false).withStateTtl(Duration.ofHours(1)),
                Compare.LINES,
                1,
                BY_INT_AND_ARRAY,
                table(new VarCharType(VarCharType.MAX_LENGTH)));
    }

    @Test
    void nestedGroupByOverArrayKeys() throws Exception {
        // The outer aggregate groups by an ARRAY over the inner one's -U/+U changes.
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                4,
                "SELECT a, COUNT(*), SUM(s), MAX(s) FROM (SELECT v0 AS a, k, SUM(v1) AS s FROM t"
                        + " GROUP BY v0, k) GROUP BY a",
                table(new BigIntType()));
    }

    @Test
    void parallelismTwoTwoPhase() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withParallelism(2).withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.PER_KEY,
                2,
                BY_ARRAY,
                table(new DoubleType()));
    }

    @Test
    void arrayBuiltInTheQuery() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(50).withAggPhase("ONE_PHASE"),
                Compare.LINES,
                1,
                "SELECT a, COUNT(*), SUM(v1) FROM (SELECT ARRAY[MOD(k, 2), CAST(NULL AS INT), k]"
                        + " AS a, v1 FROM t) GROUP BY a",
                table(new BigIntType()));
    }
}
