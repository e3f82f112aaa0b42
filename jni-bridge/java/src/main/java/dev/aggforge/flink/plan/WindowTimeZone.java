package dev.aggforge.flink.plan;

import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.TimeZone;

/**
 * The time zone a window aggregate's windows are aligned to, as the runtime plan's {@code
 * window.zone}: Flink shifts windows over a TIMESTAMP_LTZ (or processing-time) attribute to the
 * session time zone ({@code table.local-time-zone}) and leaves TIMESTAMP windows in UTC. The
 * zone's rules are this JVM's {@code java.time} rules, written out as offset transitions, so the
 * runtime converts exactly as Flink's {@code TimeWindowUtil} does.
 */
public final class WindowTimeZone {

    /** Flink's {@code TimeWindowUtil} UTC zone: windows in it are not shifted. */
    private static final ZoneId UTC = TimeZone.getTimeZone("UTC").toZoneId();

    /** Transitions are written out up to the start of this year (the offset then stays). */
    private static final int HORIZON_YEAR = 2200;

    private WindowTimeZone() {}

    /** The zone of windows that are not shifted (Flink's {@code TimeWindowUtil} UTC). */
    public static ZoneId utc() {
        return UTC;
    }

    /** The plan's {@code zone} JSON for {@code zone}, or null when windows are not shifted. */
    public static String json(ZoneId zone) {
        if (UTC.equals(zone)) {
            return null;
        }
        ZoneRules rules = zone.getRules();
        Instant horizon = Instant.parse(HORIZON_YEAR + "-01-01T00:00:00Z");
        List<String> transitions = new ArrayList<>();
        ZoneOffsetTransition first = rules.nextTransition(Instant.MIN);
        int initial =
                first == null
                        ? rules.getOffset(Instant.EPOCH).getTotalSeconds()
                        : first.getOffsetBefore().getTotalSeconds();
        for (ZoneOffsetTransition t = first;
                t != null && t.getInstant().isBefore(horizon);
                t = rules.nextTransition(t.getInstant())) {
            transitions.add(
                    "["
                            + t.getInstant().toEpochMilli()
                            + ","
                            + t.getOffsetBefore().getTotalSeconds()
                            + ","
                            + t.getOffsetAfter().getTotalSeconds()
                            + "]");
        }
        return "{\"id\":\""
                + zone.getId().replace("\\", "\\\\").replace("\"", "\\\"")
                + "\",\"daylight\":"
                + TimeZone.getTimeZone(zone).useDaylightTime()
                + ",\"initial_offset_s\":"
                + initial
                + ",\"transitions\":["
                + String.join(",", transitions)
                + "]}";
    }
}
