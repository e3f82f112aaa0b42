package dev.aggforge.flink.parity;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.CharType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.SmallIntType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.TinyIntType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * Stock Flink against aggforge: MIN, MAX, COUNT (and SUM, AVG for numeric types) of each SQL
 * type, per function and all together, single phase immediate, single phase mini-batch and two
 * phase. Inputs are seeded (2,000 rows, 23 keys, 1 in 6 values NULL).
 */
class TypeParityTest {

    /** One type of each type row of specs/types.toml. */
    static final LogicalType[] TYPES = {
        new TinyIntType(),
        new SmallIntType(),
        new IntType(),
        new BigIntType(),
        new FloatType(),
        new DoubleType(),
        new DecimalType(10, 2),
        new DecimalType(38, 4),
        new DateType(),
        new TimeType(3),
        new TimestampType(3),
        new TimestampType(9),
        new LocalZonedTimestampType(3),
        new LocalZonedTimestampType(9),
        new BooleanType(),
        new CharType(5),
        new VarCharType(VarCharType.MAX_LENGTH),
    };

    private static boolean numeric(LogicalType type) {
        return !(type instanceof DateType
                || type instanceof TimeType
                || type instanceof TimestampType
                || type instanceof LocalZonedTimestampType
                || type instanceof BooleanType
                || type instanceof CharType
                || type instanceof VarCharType);
    }

    private static InputTable table(LogicalType type) {
        return InputTable.generated("t", 2_000, 23, 1.0 / 6, 11, type);
    }

    private static List<String> functions(LogicalType type) {
        List<String> functions = new ArrayList<>(List.of("MIN", "MAX", "COUNT"));
        if (numeric(type)) {
            functions.add("SUM");
            functions.add("AVG");
        }
        return functions;
    }

    static Stream<Arguments> typeAndFunction() {
        List<Arguments> cases = new ArrayList<>();
        for (LogicalType type : TYPES) {
            for (String function : functions(type)) {
                cases.add(Arguments.of(type.asSummaryString(), function));
            }
        }
        return cases.stream();
    }

    static Stream<Arguments> types() {
        return Stream.of(TYPES).map(t -> Arguments.of(t.asSummaryString()));
    }

    private static LogicalType type(String summary) {
        for (LogicalType type : TYPES) {
            if (type.asSummaryString().equals(summary)) {
                return type;
            }
        }
        throw new IllegalArgumentException(summary);
    }

    private static String allFunctions(LogicalType type) {
        StringBuilder sql = new StringBuilder("SELECT k");
        for (String function : functions(type)) {
            sql.append(", ").append(function).append("(v0)");
        }
        return sql.append(", COUNT(*) FROM t GROUP BY k").toString();
    }

    @ParameterizedTest(name = "{1}({0}) immediate")
    @MethodSource("typeAndFunction")
    void immediate(String type, String function) throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults(),
                Compare.LINES,
                1,
                "SELECT k, " + function + "(v0) FROM t GROUP BY k",
                table(type(type)));
    }

    @ParameterizedTest(name = "{1}({0}) mini-batch")
    @MethodSource("typeAndFunction")
    void miniBatch(String type, String function) throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(97).withAggPhase("ONE_PHASE"),
                Compare.LINES,
                1,
                "SELECT k, " + function + "(v0) FROM t GROUP BY k",
                table(type(type)));
    }

    @ParameterizedTest(name = "all functions of {0} immediate, upsert (no -U)")
    @MethodSource("types")
    void allFunctionsUpsert(String type) throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withUpdateBefore(false),
                Compare.LINES,
                1,
                allFunctions(type(type)),
                table(type(type)));
    }

    @ParameterizedTest(name = "all functions of {0} two-phase")
    @MethodSource("types")
    void twoPhase(String type) throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                2,
                allFunctions(type(type)),
                table(type(type)));
    }
}
