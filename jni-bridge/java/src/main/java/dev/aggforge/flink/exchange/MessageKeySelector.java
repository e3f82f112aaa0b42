package dev.aggforge.flink.exchange;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.table.data.RowData;

/**
 * The state key selector of a native aggregate behind the columnar exchange. It only declares the
 * key type (the same {@code RowData} key the row exchange's aggregate has, so its keyed state
 * backend, and its state, are the same): the operator keys rows natively and never asks Flink
 * for a record's key, and a message holds many keys.
 */
public final class MessageKeySelector implements KeySelector<byte[], RowData>, ResultTypeQueryable<RowData> {

    private static final long serialVersionUID = 1L;

    private final TypeInformation<RowData> keyType;

    /** A selector declaring {@code keyType}. */
    public MessageKeySelector(TypeInformation<RowData> keyType) {
        this.keyType = keyType;
    }

    @Override
    public RowData getKey(byte[] message) {
        throw new UnsupportedOperationException(
                "a columnar exchange message holds many keys; the native aggregate keys its rows itself");
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return keyType;
    }
}
