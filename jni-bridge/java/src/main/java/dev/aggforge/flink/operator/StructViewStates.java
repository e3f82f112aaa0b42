package dev.aggforge.flink.operator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.state.KeyedStateStore;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.table.api.dataview.ListView;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RawValueData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.dataview.ListViewSpec;
import org.apache.flink.table.runtime.dataview.MapViewSpec;
import org.apache.flink.table.runtime.dataview.StateListView;
import org.apache.flink.table.runtime.dataview.StateMapView;
import org.apache.flink.table.runtime.typeutils.ExternalSerializer;

/**
 * The data views of a group aggregate's structured accumulators in Flink's layout (MIN/MAX over
 * retractions: a map state {@code agg<i>$map} of value to count; LISTAGG over retractions: list
 * states {@code agg<i>$list} and {@code agg<i>$retractList}), opened with the descriptors Flink's
 * operator uses (PerKeyStateDataViewStore's, the view specs' ExternalSerializers, the operator's
 * TTL), for the current key of the keyed backend.
 *
 * <p>A change row's map carries only the entries changed since the last write-back (the runtime
 * logs them; a count of 0: the entry left the map), which are put or removed; a list is written
 * whole (Flink's own retraction rewrites the list too).
 */
final class StructViewStates {

    private final AccumulatorFields fields;
    /** By {@link AccumulatorFields#structViews}: a {@link StateMapView} or a {@link StateListView}. */
    private final List<Object> states = new ArrayList<>();

    @SuppressWarnings({"unchecked", "rawtypes"})
    StructViewStates(AccumulatorFields fields, KeyedStateStore store, StateTtlConfig ttlConfig) {
        this.fields = fields;
        for (AccumulatorFields.StructView view : fields.structViews()) {
            if (view.list()) {
                ListViewSpec spec =
                        new ListViewSpec(view.stateId(), view.attribute(), view.dataType().getChildren().get(0));
                TypeSerializer elements =
                        spec.getElementSerializer().orElseGet(() -> ExternalSerializer.of(spec.getElementDataType()));
                ListStateDescriptor<Object> list = new ListStateDescriptor<>(spec.getStateId(), elements);
                if (ttlConfig.isEnabled()) {
                    list.enableTimeToLive(ttlConfig);
                }
                states.add(new StateListView.KeyedStateListView<>(store.getListState(list)));
                continue;
            }
            MapViewSpec spec =
                    new MapViewSpec(view.stateId(), view.attribute(), view.dataType().getChildren().get(0), false);
            TypeSerializer keys = spec.getKeySerializer().orElseGet(() -> ExternalSerializer.of(spec.getKeyDataType()));
            TypeSerializer values =
                    spec.getValueSerializer().orElseGet(() -> ExternalSerializer.of(spec.getValueDataType()));
            MapStateDescriptor<Object, Object> map = new MapStateDescriptor<>(spec.getStateId(), keys, values);
            if (ttlConfig.isEnabled()) {
                map.enableTimeToLive(ttlConfig);
            }
            states.add(new StateMapView.KeyedStateMapViewWithKeysNotNull<>(store.getMapState(map)));
        }
    }

    /** Whether there are none. */
    boolean isEmpty() {
        return states.isEmpty();
    }

    /** Clears every view of the current key (its group is gone). */
    @SuppressWarnings("unchecked")
    void clear() {
        for (Object state : states) {
            if (state instanceof StateListView<?, ?> list) {
                list.clear();
            } else {
                ((StateMapView<VoidNamespace, Object, Object>) state).clear();
            }
        }
    }

    /**
     * Writes the views of change row {@code row} (its accumulator fields after {@code keys} key
     * fields) into the current key's states.
     */
    @SuppressWarnings("unchecked")
    void write(RowData row, int keys) throws Exception {
        List<AccumulatorFields.StructView> views = fields.structViews();
        for (int v = 0; v < views.size(); v++) {
            AccumulatorFields.StructView view = views.get(v);
            int field = keys + view.field();
            if (row.isNullAt(field)) {
                continue;
            }
            RowData struct = row.getRow(field, fields.nativeType().getTypeAt(view.field()).getChildren().size());
            if (struct.isNullAt(view.attribute())) {
                continue;
            }
            RawValueData<Object> raw = struct.getRawValue(view.attribute());
            Object heap = raw.toObject((TypeSerializer<Object>) view.heapSerializer());
            if (view.list()) {
                ((StateListView<VoidNamespace, Object>) states.get(v)).setList(((ListView<Object>) heap).getList());
                continue;
            }
            StateMapView<VoidNamespace, Object, Object> state = (StateMapView<VoidNamespace, Object, Object>) states.get(v);
            for (Map.Entry<Object, Object> entry : ((MapView<Object, Object>) heap).getMap().entrySet()) {
                if (entry.getValue() instanceof Long count && count == 0) {
                    state.remove(entry.getKey());
                } else {
                    state.put(entry.getKey(), entry.getValue());
                }
            }
        }
    }

    /**
     * Reads the current key's views into {@code acc}, the runtime's accumulator row of Flink's
     * (its structured fields generic rows with the views left NULL, {@link AccumulatorFields#toNative}).
     */
    @SuppressWarnings("unchecked")
    void read(GenericRowData acc) throws Exception {
        List<AccumulatorFields.StructView> views = fields.structViews();
        for (int v = 0; v < views.size(); v++) {
            AccumulatorFields.StructView view = views.get(v);
            if (acc.isNullAt(view.field())) {
                continue;
            }
            Object heap;
            if (view.list()) {
                ListView<Object> list = new ListView<>();
                list.setList(((StateListView<VoidNamespace, Object>) states.get(v)).getList());
                heap = list;
            } else {
                MapView<Object, Object> map = new MapView<>();
                for (Map.Entry<Object, Object> entry :
                        ((StateMapView<VoidNamespace, Object, Object>) states.get(v)).entries()) {
                    map.put(entry.getKey(), entry.getValue());
                }
                heap = map;
            }
            ((GenericRowData) acc.getField(view.field())).setField(view.attribute(), RawValueData.fromObject(heap));
        }
    }
}
