package dev.aggforge.flink.planner.describe;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.flink.table.planner.calcite.FlinkTypeFactory;
import org.apache.flink.table.planner.plan.utils.AggregateInfo;
import org.apache.flink.table.planner.plan.utils.AggregateInfoList;
import org.apache.flink.table.planner.plan.utils.AggregateUtil;
import org.apache.flink.table.planner.plan.utils.DistinctInfo;
import org.apache.flink.table.planner.utils.JavaScalaConversionUtil;
import org.apache.flink.table.runtime.dataview.DataViewSpec;
import org.apache.flink.table.runtime.dataview.ListViewSpec;
import org.apache.flink.table.runtime.dataview.MapViewSpec;
import org.apache.flink.table.runtime.types.LogicalTypeDataTypeConverter;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;

import dev.aggforge.flink.plan.AggregateDescriptor.Phase;

/**
 * The accumulator row Flink's own operator keeps in its {@code accState} ({@code
 * ValueState<RowData>} of {@code InternalTypeInfo.ofFields(accTypes)}): the types its exec node
 * computes, with the same planner call ({@code AggregateUtil.transformToStreamAggregateInfoList},
 * state-backed data views), so the native operator can write and read that very state.
 */
public final class FlinkAccumulators {

    private FlinkAccumulators() {}

    /**
     * Flink's accumulator row ({@code accType}, see {@link #of}) and the data views its structured
     * accumulators keep in state ({@code viewTypes}, null when none): each a field named by its
     * state ({@code agg<i>$<attribute>}, DataViewUtils') of type {@code MAP<key, value>} for a
     * MapView or {@code ARRAY<element>} for a ListView, in field and attribute order.
     */
    public record Layout(RowType accType, RowType viewTypes) {}

    /**
     * The row of {@code stock}'s group keys (its keyed state's key), fields {@code key0}, ...
     *
     * @param input the node's input row (the global phase's: the local phase's output)
     */
    public static RowType keyRow(StockAggregate stock, RowType input) {
        int[] grouping = stock.grouping();
        LogicalType[] types = new LogicalType[grouping.length];
        String[] names = new String[grouping.length];
        for (int i = 0; i < grouping.length; i++) {
            types[i] = input.getTypeAt(grouping[i]);
            names[i] = "key" + i;
        }
        return RowType.of(types, names);
    }

    /**
     * Flink's accumulator row of {@code stock} (single and global phases; the others keep no
     * {@code accState}), its fields named {@code acc0}, {@code acc1}, ..., but for the DISTINCT
     * views at the end: Flink keeps each as a map state and a placeholder field, given here as a
     * {@code MAP<value, BIGINT or ARRAY<BIGINT>>} field named by its state ({@code
     * distinctAcc_<i>}).
     *
     * @param input the single phase's input row (the global phase's comes from {@code stock})
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static Optional<Layout> of(
            StockAggregate stock, RowType input, FlinkTypeFactory typeFactory) {
        AggregateInfoList infos;
        if (stock.phase() == Phase.SINGLE) {
            infos =
                    AggregateUtil.transformToStreamAggregateInfoList(
                            typeFactory,
                            input,
                            JavaScalaConversionUtil.toScala(stock.calls()),
                            stock.retractions(),
                            stock.needRetraction(),
                            true,
                            true);
        } else if (stock.phase() == Phase.GLOBAL) {
            infos =
                    AggregateUtil.transformToStreamAggregateInfoList(
                            typeFactory,
                            stock.localAggInputRowType(),
                            JavaScalaConversionUtil.toScala(stock.calls()),
                            stock.retractions(),
                            stock.needRetraction(),
                            (scala.Option)
                                    JavaScalaConversionUtil.toScala(
                                            Optional.ofNullable(stock.indexOfCountStar())),
                            true,
                            true);
        } else {
            return Optional.empty();
        }
        List<LogicalType> types = new ArrayList<>();
        for (DataType type : infos.getAccTypes()) {
            types.add(LogicalTypeDataTypeConverter.fromDataTypeToLogicalType(type));
        }
        List<String> names = new ArrayList<>(types.size());
        for (int i = 0; i < types.size(); i++) {
            names.add("acc" + i);
        }
        // The DISTINCT views' placeholders (the last fields) as MAP<value, bits or counts> named
        // by their map state (distinctAcc_<i>), which the operator keeps beside accState.
        List<DistinctInfo> views = new ArrayList<>();
        for (DistinctInfo info : infos.distinctInfos()) {
            if (!info.excludeAcc()) {
                views.add(info);
            }
        }
        int first = types.size() - views.size();
        for (int v = 0; v < views.size(); v++) {
            DistinctInfo info = views.get(v);
            if (info.dataViewSpec().isDefined()) {
                MapViewSpec spec = info.dataViewSpec().get();
                types.set(
                        first + v,
                        new MapType(
                                info.keyType().getLogicalType(),
                                spec.getValueDataType().getLogicalType()));
                names.set(first + v, spec.getStateId());
            }
        }
        return Optional.of(
                new Layout(
                        RowType.of(types.toArray(new LogicalType[0]), names.toArray(new String[0])),
                        viewTypes(infos)));
    }

    /** The data views of {@code infos}' accumulators (see {@link Layout}), or null. */
    private static RowType viewTypes(AggregateInfoList infos) {
        List<LogicalType> types = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (AggregateInfo info : infos.aggInfos()) {
            for (DataViewSpec spec : info.viewSpecs()) {
                names.add(spec.getStateId());
                if (spec instanceof MapViewSpec map) {
                    types.add(
                            new MapType(
                                    map.getKeyDataType().getLogicalType(),
                                    map.getValueDataType().getLogicalType()));
                } else {
                    types.add(new ArrayType(((ListViewSpec) spec).getElementDataType().getLogicalType()));
                }
            }
        }
        return types.isEmpty()
                ? null
                : RowType.of(types.toArray(new LogicalType[0]), names.toArray(new String[0]));
    }
}
