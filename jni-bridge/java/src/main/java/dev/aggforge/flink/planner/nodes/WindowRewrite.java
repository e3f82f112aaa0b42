package dev.aggforge.flink.planner.nodes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.flink.table.planner.calcite.FlinkTypeFactory;
import org.apache.flink.table.planner.plan.logical.CumulativeWindowSpec;
import org.apache.flink.table.planner.plan.logical.HoppingWindowSpec;
import org.apache.flink.table.planner.plan.logical.SessionWindowSpec;
import org.apache.flink.table.planner.plan.logical.SliceAttachedWindowingStrategy;
import org.apache.flink.table.planner.plan.logical.TimeAttributeWindowingStrategy;
import org.apache.flink.table.planner.plan.logical.TumblingWindowSpec;
import org.apache.flink.table.planner.plan.logical.WindowAttachedWindowingStrategy;
import org.apache.flink.table.planner.plan.logical.WindowSpec;
import org.apache.flink.table.planner.plan.logical.WindowingStrategy;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeConfig;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGlobalWindowAggregate;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalLocalWindowAggregate;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalWindowAggregate;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalWindowAggregateBase;
import org.apache.flink.table.planner.plan.utils.AggregateInfoList;
import org.apache.flink.table.planner.plan.utils.AggregateUtil;
import org.apache.flink.table.planner.utils.JavaScalaConversionUtil;
import org.apache.flink.table.planner.utils.TableConfigUtils;
import org.apache.flink.table.runtime.groupwindow.NamedWindowProperty;
import org.apache.flink.table.runtime.groupwindow.ProctimeAttribute;
import org.apache.flink.table.runtime.groupwindow.RowtimeAttribute;
import org.apache.flink.table.runtime.groupwindow.WindowEnd;
import org.apache.flink.table.runtime.groupwindow.WindowStart;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.arrow.ArrowTypes;
import dev.aggforge.flink.arrow.RowDataToArrow;
import dev.aggforge.flink.nativelib.ArrowAggregate;
import dev.aggforge.flink.operator.NativeOperatorSpec;
import dev.aggforge.flink.plan.AggregateDescriptor;
import dev.aggforge.flink.plan.AggregateDescriptor.Phase;
import dev.aggforge.flink.plan.Preflight;
import dev.aggforge.flink.plan.WindowTimeZone;
import dev.aggforge.flink.planner.describe.AggregateDescriber;
import dev.aggforge.flink.planner.describe.StockAggregate;

/**
 * Decides what runs a Flink window aggregate over a window table function (single phase {@code
 * WindowAggregate}, or the {@code LocalWindowAggregate} / {@code GlobalWindowAggregate} pair) and
 * builds the node that takes its place: the same aggregate with the decision attached, whose exec
 * node runs the native window operator ({@link NativeOperatorSpec.Mode#WINDOW}, {@link
 * NativeOperatorSpec.Mode#LOCAL_WINDOW}, {@link NativeOperatorSpec.Mode#PROCTIME_WINDOW}) when
 * native. Admitted so far: TUMBLE, HOP, CUMULATE and SESSION (one phase, as Flink plans it) over a
 * TIMESTAMP(3) or TIMESTAMP_LTZ(3) rowtime attribute (the latter aligned to the session time zone)
 * or over processing time (one phase), insert-only or changelog input, and TUMBLE, HOP and
 * CUMULATE windows attached to their rows (a window aggregate over another's windows);
 * everything else stays on Flink with its reason in EXPLAIN.
 */
public final class WindowRewrite {

    private static final Logger LOG = LoggerFactory.getLogger(WindowRewrite.class);

    /** Rows a local window phase folds before it flushes, besides watermarks and barriers. */
    static final long LOCAL_FLUSH_ROWS = 1L << 20;

    private WindowRewrite() {}

    /** Whether {@code node} is one of the window-aggregate nodes {@link #replace} handles. */
    public static boolean replaceable(RelNode node) {
        return node instanceof StreamPhysicalWindowAggregate
                || node instanceof StreamPhysicalLocalWindowAggregate
                || node instanceof StreamPhysicalGlobalWindowAggregate;
    }

    /** The node that takes {@code node}'s place, carrying {@code decision}. */
    public static RelNode replace(StreamPhysicalWindowAggregateBase node, AggforgeDecision decision) {
        RelNode input = node.getInput();
        if (node instanceof StreamPhysicalWindowAggregate single) {
            return new StreamPhysicalAggforgeWindowAggregate(
                    single, node.getTraitSet(), input, decision);
        }
        if (node instanceof StreamPhysicalLocalWindowAggregate local) {
            return new StreamPhysicalAggforgeLocalWindowAggregate(
                    local, node.getTraitSet(), input, decision);
        }
        if (node instanceof StreamPhysicalGlobalWindowAggregate global) {
            return new StreamPhysicalAggforgeGlobalWindowAggregate(
                    global, node.getTraitSet(), input, decision);
        }
        throw new IllegalArgumentException("unknown window node " + node.getClass().getName());
    }

    /** Describes the window aggregate {@code node}, decides whether it runs natively, logs it. */
    public static NativeRewrite.Outcome decide(
            StreamPhysicalWindowAggregateBase node, ExecNodeConfig config) {
        FlinkTypeFactory typeFactory = (FlinkTypeFactory) node.getCluster().getTypeFactory();
        RowType input = FlinkTypeFactory.toLogicalRowType(node.getInput().getRowType());
        RowType output = FlinkTypeFactory.toLogicalRowType(node.getRowType());
        Phase phase;
        WindowingStrategy windowing;
        RowType localInput = null;
        List<NamedWindowProperty> properties = List.of();
        if (node instanceof StreamPhysicalLocalWindowAggregate local) {
            phase = Phase.LOCAL;
            windowing = local.windowing();
        } else if (node instanceof StreamPhysicalGlobalWindowAggregate global) {
            phase = Phase.GLOBAL;
            windowing = global.windowing();
            localInput = FlinkTypeFactory.toLogicalRowType(global.inputRowTypeOfLocalAgg());
            properties = JavaScalaConversionUtil.toJava(global.namedWindowProperties());
        } else {
            phase = Phase.SINGLE;
            windowing = ((StreamPhysicalWindowAggregate) node).windowing();
            properties = JavaScalaConversionUtil.toJava(node.namedWindowProperties());
        }
        boolean needRetraction = AggregateUtil.needRetraction(node);
        List<AggregateCall> calls = JavaScalaConversionUtil.toJava(node.aggCalls());
        boolean[] retractions = new boolean[calls.size()];
        java.util.Arrays.fill(retractions, needRetraction);
        StockAggregate stock =
                new StockAggregate(
                        phase,
                        node.getRelDetailedDescription(),
                        node.grouping(),
                        null,
                        calls,
                        retractions,
                        needRetraction,
                        false,
                        localInput,
                        null,
                        null,
                        output);
        AggregateInfoList infos =
                AggregateUtil.deriveStreamWindowAggregateInfoList(
                        typeFactory,
                        phase == Phase.GLOBAL ? localInput : input,
                        node.aggCalls(),
                        needRetraction,
                        windowing.getWindow(),
                        phase != Phase.LOCAL);
        AggregateDescriptor descriptor =
                AggregateDescriber.describeWindow(stock, infos, input, config);
        AggforgeDecision decision =
                decide(descriptor, phase, windowing, properties, needRetraction, input, output, config);
        LOG.info(
                "aggforge: window aggregate {} ({}):\n{}",
                decision.isNative() ? "runs natively" : "stays on Flink",
                decision.explain(),
                descriptor.toText());
        return new NativeRewrite.Outcome(descriptor, decision);
    }

    private static AggforgeDecision decide(
            AggregateDescriptor descriptor,
            Phase phase,
            WindowingStrategy windowing,
            List<NamedWindowProperty> properties,
            boolean needRetraction,
            RowType input,
            RowType output,
            ExecNodeConfig config) {
        if (!descriptor.supportedByJavaSide()) {
            return AggforgeDecision.stock(descriptor.unsupported());
        }
        if (!config.get(AggforgeOptions.BUNDLED_ENABLED)) {
            return AggforgeDecision.stock(
                    "window aggregates fire in bundles, which are off ("
                            + AggforgeOptions.BUNDLED_ENABLED.key()
                            + "=false)");
        }
        String unsupported = unsupported(phase, windowing, properties, needRetraction);
        if (unsupported != null) {
            return AggforgeDecision.stock(unsupported);
        }
        // The column that places a row: its rowtime, its window's end (attached windows), or
        // the local phase's $slice_end.
        int timeColumn =
                windowing instanceof WindowAttachedWindowingStrategy attached
                        ? attached.getWindowEnd()
                        : phase == Phase.GLOBAL
                                ? ((SliceAttachedWindowingStrategy) windowing).getSliceEnd()
                                : ((TimeAttributeWindowingStrategy) windowing)
                                        .getTimeAttributeIndex();
        TreeSet<Integer> used = new TreeSet<>();
        for (int column : NativeRewrite.usedColumns(descriptor)) {
            used.add(column);
        }
        used.add(timeColumn);
        int[] columns = used.stream().mapToInt(Integer::intValue).toArray();
        // Over a changelog the rows' kinds travel with them; partials carry none.
        boolean withRowKind = needRetraction && phase != Phase.GLOBAL;
        try {
            RowDataToArrow.schemaFor(input, columns, withRowKind);
            for (int i = 0; i < output.getFieldCount(); i++) {
                ArrowTypes.fieldFor(output.getFieldNames().get(i), output.getTypeAt(i));
            }
        } catch (IllegalArgumentException e) {
            return AggforgeDecision.stock("no Arrow layout: " + e.getMessage());
        }
        AggregateDescriptor remapped = NativeRewrite.remap(descriptor, columns);
        String planJson =
                remapped.toPlanJson(
                        config.get(AggforgeOptions.MEMORY_BUDGET).getBytes(),
                        NativeRewrite.PLANNED_MAX_PARALLELISM,
                        config.get(AggforgeOptions.JIT));
        StringBuilder extra = new StringBuilder();
        if (phase == Phase.GLOBAL
                && remapped.countStarColumn() >= 0
                && !planJson.contains("\"count_star_column\"")) {
            extra.append(",\"count_star_column\":").append(remapped.countStarColumn());
        }
        // Flink's shift zone: the session time zone for TIMESTAMP_LTZ, none for TIMESTAMP.
        String zone =
                WindowTimeZone.json(
                        windowing.getTimeAttributeType() instanceof LocalZonedTimestampType
                                ? TableConfigUtils.getLocalTimeZone(config)
                                : WindowTimeZone.utc());
        extra.append(",\"window\":")
                .append(
                        windowJson(
                                windowing.getWindow(),
                                NativeRewrite.position(columns, timeColumn),
                                properties,
                                zone,
                                !windowing.isRowtime(),
                                windowing instanceof WindowAttachedWindowingStrategy));
        planJson = planJson.substring(0, planJson.length() - 1) + extra + "}";
        String admission = ArrowAggregate.admit(planJson);
        if (!ArrowAggregate.isAdmitted(admission)) {
            return AggforgeDecision.stock("not admitted by the runtime: " + admission);
        }
        int batchSize = config.get(AggforgeOptions.BATCH_SIZE);
        Preflight.checkBudget(planJson, batchSize, config);
        boolean local = phase == Phase.LOCAL;
        return AggforgeDecision.nativeOperator(
                new NativeOperatorSpec(
                        planJson,
                        input,
                        output,
                        columns,
                        withRowKind,
                        local
                                ? NativeOperatorSpec.Mode.LOCAL_WINDOW
                                : windowing.isRowtime()
                                        ? NativeOperatorSpec.Mode.WINDOW
                                        : NativeOperatorSpec.Mode.PROCTIME_WINDOW,
                        local ? LOCAL_FLUSH_ROWS : Long.MAX_VALUE,
                        batchSize,
                        // A columnar exchange feeding a window sends a partly filled batch
                        // after the max delay: for processing time no watermark moves rows on,
                        // and for event time a watermark may wait in the batch (in-band).
                        config.get(AggforgeOptions.MAX_DELAY).toMillis(),
                        admission.substring("admitted: ".length())));
    }

    /** Why the native window operator cannot run this aggregate yet, or null. */
    private static String unsupported(
            Phase phase,
            WindowingStrategy windowing,
            List<NamedWindowProperty> properties,
            boolean needRetraction) {
        boolean attached = windowing instanceof WindowAttachedWindowingStrategy;
        boolean expected =
                attached
                        || (phase == Phase.GLOBAL
                                ? windowing instanceof SliceAttachedWindowingStrategy
                                : windowing instanceof TimeAttributeWindowingStrategy);
        if (!expected) {
            return "windowing strategy "
                    + windowing.getClass().getSimpleName()
                    + " in the "
                    + phase
                    + " phase is not supported";
        }
        WindowSpec window = windowing.getWindow();
        if (attached && (window instanceof SessionWindowSpec || !windowing.isRowtime())) {
            return "SESSION or processing-time windows attached to their input rows"
                    + " (a window aggregate over another's windows) are not supported yet";
        }
        if (!(window instanceof TumblingWindowSpec
                || window instanceof HoppingWindowSpec
                || window instanceof CumulativeWindowSpec
                || window instanceof SessionWindowSpec)) {
            return window.getClass().getSimpleName() + " windows are not supported yet";
        }
        if (!windowing.isRowtime() && phase != Phase.SINGLE) {
            return "processing-time windows in two phases (Flink plans them in one)";
        }
        LogicalType time = windowing.getTimeAttributeType();
        if (!(time instanceof TimestampType || time instanceof LocalZonedTimestampType)
                || ArrowTypes.precision(time) > 3) {
            return "time attribute of type "
                    + time.asSummaryString()
                    + " (only TIMESTAMP(3) and TIMESTAMP_LTZ(3) are supported)";
        }
        for (NamedWindowProperty p : properties) {
            if (!(p.getProperty() instanceof WindowStart
                    || p.getProperty() instanceof WindowEnd
                    || p.getProperty() instanceof RowtimeAttribute
                    || p.getProperty() instanceof ProctimeAttribute)) {
                return "window property "
                        + p.getName()
                        + " ("
                        + p.getProperty().getClass().getSimpleName()
                        + ") is not supported yet";
            }
        }
        return null;
    }

    /** The runtime's {@code window} plan field. */
    private static String windowJson(
            WindowSpec window,
            int timeColumn,
            List<NamedWindowProperty> properties,
            String zone,
            boolean processingTime,
            boolean attached) {
        String kind;
        Duration size;
        Duration step = Duration.ZERO;
        Duration offset;
        Duration gap = Duration.ZERO;
        if (window instanceof SessionWindowSpec session) {
            // PARTITION BY equals the GROUP BY keys (Flink plans a window aggregate only then):
            // the runtime's groups are the sessions' partitions.
            kind = "session";
            size = Duration.ZERO;
            offset = null;
            gap = session.getGap();
        } else if (window instanceof TumblingWindowSpec tumble) {
            kind = "tumble";
            size = tumble.getSize();
            offset = tumble.getOffset();
        } else if (window instanceof HoppingWindowSpec hop) {
            kind = "hop";
            size = hop.getSize();
            step = hop.getSlide();
            offset = hop.getOffset();
        } else {
            CumulativeWindowSpec cumulate = (CumulativeWindowSpec) window;
            kind = "cumulate";
            size = cumulate.getMaxSize();
            step = cumulate.getStep();
            offset = cumulate.getOffset();
        }
        List<String> names = new ArrayList<>();
        for (NamedWindowProperty p : properties) {
            if (p.getProperty() instanceof WindowStart) {
                names.add("\"window_start\"");
            } else if (p.getProperty() instanceof WindowEnd) {
                names.add("\"window_end\"");
            } else if (p.getProperty() instanceof ProctimeAttribute) {
                // Flink's window operator leaves it NULL; a projection materializes it later.
                names.add("\"proctime\"");
            } else {
                names.add("\"window_time\"");
            }
        }
        return "{\"kind\":\""
                + kind
                + "\",\"size_ms\":"
                + size.toMillis()
                + ",\"step_ms\":"
                + step.toMillis()
                + ",\"offset_ms\":"
                + (offset == null ? 0 : offset.toMillis())
                + ",\"gap_ms\":"
                + gap.toMillis()
                + ",\"time_column\":"
                + timeColumn
                + ",\"properties\":["
                + String.join(",", names)
                + "]"
                + (zone == null ? "" : ",\"zone\":" + zone)
                + (processingTime ? ",\"processing_time\":true" : "")
                + (attached ? ",\"attached\":true" : "")
                + "}";
    }
}
