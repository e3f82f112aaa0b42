package dev.aggforge.flink.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.aggforge.flink.plan.AggregateDescriptor.Call;
import dev.aggforge.flink.plan.AggregateDescriptor.Emission;
import dev.aggforge.flink.plan.AggregateDescriptor.InputMode;
import dev.aggforge.flink.plan.AggregateDescriptor.Phase;

/** The descriptor's text and JSON forms. */
class AggregateDescriptorTest {

    private static AggregateDescriptor sample(Phase phase) {
        return new AggregateDescriptor(
                "GroupAggregate(groupBy=[k], select=[k, SUM(v) AS s])",
                phase,
                InputMode.RETRACTING,
                Emission.MINI_BATCH,
                500,
                true,
                3_600_000,
                List.of(0, 2),
                List.of("VARCHAR(2147483647)", "DECIMAL(20, 3)"),
                List.of("VARCHAR(2147483647)", "DOUBLE", "DECIMAL(20, 3)", "BOOLEAN"),
                List.of("VARCHAR(2147483647)", "DECIMAL(20, 3)", "DECIMAL(38, 3)", "BIGINT"),
                phase.mergesPartials() ? 5 : -1,
                List.of(
                        new Call("SUM", List.of(2), List.of("DECIMAL(20, 3)"), false, 3, "DECIMAL(38, 3)", true),
                        new Call("COUNT_STAR", List.of(), List.of(), false, -1, "BIGINT", false),
                        new Call("AVG", List.of(3, 4), List.of("DOUBLE"), true, -1, "DOUBLE", true)),
                phase == Phase.SINGLE
                        ? List.of()
                        : List.of(
                                new AggregateDescriptor.View(
                                        List.of(2), phase.mergesPartials() ? 6 : -1)),
                phase == Phase.INCREMENTAL ? List.of(0) : List.of(),
                "");
    }

    @Test
    void textRoundTrips() {
        for (Phase phase : Phase.values()) {
            AggregateDescriptor descriptor = sample(phase);
            String text = descriptor.toText();
            assertTrue(text.contains("\nkey_types=VARCHAR(2147483647);DECIMAL(20, 3)\n"), text);
            assertTrue(text.contains("\ncall.1.function=COUNT_STAR\ncall.1.args=\n"), text);
            assertEquals(descriptor, AggregateDescriptor.parseText(text));
        }
    }

    @Test
    void textRejectsMissingAndMalformedFields() {
        String text = sample(Phase.SINGLE).toText();
        assertThrows(
                IllegalArgumentException.class,
                () -> AggregateDescriptor.parseText(text.replace("state_ttl_ms=", "ttl=")));
        assertThrows(
                IllegalArgumentException.class,
                () -> AggregateDescriptor.parseText(text.replace("phase=single", "phase=middle")));
        assertThrows(
                IllegalArgumentException.class,
                () -> AggregateDescriptor.parseText(text.replace("call.0.args=2", "call.0.args=x")));
        assertThrows(
                IllegalArgumentException.class,
                () -> AggregateDescriptor.parseText(text.replace("distinct=false", "distinct=no")));
    }

    @Test
    void planJsonIsTheRuntimeWireFormat() {
        assertEquals(
                "{\"version\":1,\"key_columns\":[0,2],"
                        + "\"key_types\":[\"VARCHAR(2147483647)\",\"DECIMAL(20, 3)\"],"
                        + "\"calls\":["
                        + "{\"function\":\"SUM\",\"args\":[2],\"arg_types\":[\"DECIMAL(20, 3)\"],"
                        + "\"distinct\":false,\"filter\":3,\"result_type\":\"DECIMAL(38, 3)\"},"
                        + "{\"function\":\"COUNT_STAR\",\"args\":[],\"arg_types\":[],"
                        + "\"distinct\":false,\"filter\":null,\"result_type\":\"BIGINT\","
                        // Planned without retraction over retracting input: insert-only rows.
                        + "\"retracts\":false},"
                        + "{\"function\":\"AVG\",\"args\":[3,4],\"arg_types\":[\"DOUBLE\"],"
                        + "\"distinct\":true,\"filter\":null,\"result_type\":\"DOUBLE\"}],"
                        + "\"phase\":\"single\",\"input\":\"retracting\",\"emission\":\"mini_batch\","
                        + "\"generate_update_before\":true,\"state_ttl_ms\":3600000,"
                        + "\"memory_budget_bytes\":67108864,\"max_parallelism\":128}",
                sample(Phase.SINGLE).toPlanJson(64L << 20, 128));
        // The global phase never sends a FILTER: the local phase applied it.
        assertTrue(sample(Phase.GLOBAL).toPlanJson(1, 1).contains("\"filter\":null,\"result_type\":\"DECIMAL(38, 3)\"},{\"function\":\"COUNT_STAR\""));
        // Two-phase DISTINCT views: the global phase names each view's column.
        assertTrue(sample(Phase.GLOBAL).toPlanJson(1, 1).endsWith(",\"views\":[{\"calls\":[2],\"column\":6}]}"));
        assertTrue(sample(Phase.LOCAL).toPlanJson(1, 1).endsWith(",\"views\":[{\"calls\":[2]}]}"));
        // The incremental phase is a global phase with the final level's keys.
        String incremental = sample(Phase.INCREMENTAL).toPlanJson(1, 1);
        assertTrue(incremental.contains("\"phase\":\"global\""), incremental);
        assertTrue(
                incremental.endsWith(
                        ",\"views\":[{\"calls\":[2],\"column\":6}],\"final_key\":[0]}"),
                incremental);
        assertFalse(sample(Phase.SINGLE).toPlanJson(1, 1).contains("views"));
    }

    @Test
    void mismatchedKeysAreRejected() {
        assertThrows(
                IllegalArgumentException.class,
                () ->
                        new AggregateDescriptor(
                                "n", Phase.SINGLE, InputMode.INSERT_ONLY, Emission.IMMEDIATE, 0, true, 0,
                                List.of(0), List.of(), List.of(), List.of(), -1, List.of(), List.of(), List.of(),
                                ""));
    }
}
