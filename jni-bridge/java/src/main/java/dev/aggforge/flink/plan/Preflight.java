package dev.aggforge.flink.plan;

import java.time.Duration;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.nativelib.ArrowAggregate;
import dev.aggforge.flink.nativelib.NativeLibrary;

/**
 * Checks made when a statement is planned with aggforge on, so that bad configuration stops the
 * job at submission with a sentence saying what to change, never later on a TaskManager and
 * never as a stack trace from inside the planner.
 */
public final class Preflight {

    private Preflight() {}

    /**
     * Every {@code table.exec.aggforge.*} option parses and is in range, and the native library
     * loads on this platform.
     *
     * @throws ValidationException naming the option or the library, and what to do
     */
    public static void check(ReadableConfig config) {
        for (ConfigOption<?> option : AggforgeOptions.all()) {
            checkRange(option, read(config, option));
        }
        try {
            NativeLibrary.load();
        } catch (UnsatisfiedLinkError e) {
            throw new ValidationException(
                    "aggforge: its native library cannot be loaded on this machine ("
                            + e.getMessage()
                            + "). Use the aggforge jar built for "
                            + NativeLibrary.platform()
                            + ", or set "
                            + AggforgeOptions.ENABLED.key()
                            + ": false.",
                    e);
        }
    }

    /**
     * Whether aggforge is on ({@link AggforgeOptions#ENABLED}).
     *
     * @throws ValidationException when the value is not a boolean
     */
    public static boolean enabled(ReadableConfig config) {
        return read(config, AggforgeOptions.ENABLED);
    }

    /** The option's value, or a sentence naming the option and the values it takes. */
    private static <T> T read(ReadableConfig config, ConfigOption<T> option) {
        try {
            return config.get(option);
        } catch (IllegalArgumentException e) {
            throw new ValidationException(
                    "aggforge: cannot read option '"
                            + option.key()
                            + "' ("
                            + rootMessage(e)
                            + "). Give "
                            + expected(option)
                            + (option == AggforgeOptions.ENABLED
                                    ? "."
                                    : ", or set " + AggforgeOptions.ENABLED.key() + ": false."),
                    e);
        }
    }

    /**
     * The memory budget holds at least one batch of {@code batchSize} rows of the plan (state for
     * as many new groups), so the first batch cannot fail for want of memory.
     *
     * @throws ValidationException naming both options
     */
    public static void checkBudget(String planJson, int batchSize, ReadableConfig config) {
        long minimum = ArrowAggregate.minimumBudget(planJson, batchSize);
        MemorySize budget = config.get(AggforgeOptions.MEMORY_BUDGET);
        if (budget.getBytes() < minimum) {
            throw new ValidationException(
                    "aggforge: "
                            + AggforgeOptions.MEMORY_BUDGET.key()
                            + " = "
                            + bytes(budget.getBytes())
                            + " is smaller than one batch of "
                            + batchSize
                            + " rows needs for this aggregate ("
                            + bytes(minimum)
                            + "). Raise "
                            + AggforgeOptions.MEMORY_BUDGET.key()
                            + " or lower "
                            + AggforgeOptions.BATCH_SIZE.key()
                            + ".");
        }
    }

    private static void checkRange(ConfigOption<?> option, Object value) {
        String problem = null;
        if (option == AggforgeOptions.BATCH_SIZE && ((Integer) value) < 1) {
            problem = "must be at least 1";
        } else if (option == AggforgeOptions.MEMORY_BUDGET && ((MemorySize) value).getBytes() <= 0) {
            problem = "must be more than 0 bytes";
        } else if (option == AggforgeOptions.MAX_DELAY && ((Duration) value).isNegative()) {
            problem = "must not be negative";
        }
        if (problem != null) {
            throw new ValidationException(
                    "aggforge: option '" + option.key() + "' = " + value + " " + problem + ".");
        }
    }

    private static String expected(ConfigOption<?> option) {
        if (option == AggforgeOptions.MEMORY_BUDGET) {
            return "a memory size such as 512mb or 2gb";
        }
        if (option == AggforgeOptions.MAX_DELAY) {
            return "a duration such as 100ms or 1s";
        }
        if (option == AggforgeOptions.BATCH_SIZE) {
            return "a whole number of rows such as 1024";
        }
        if (option == AggforgeOptions.JIT) {
            return "auto, on or off";
        }
        return "true or false";
    }

    /** {@code bytes} for a sentence: {@code 900 bytes}, {@code 30.0 KiB}, {@code 1.5 GiB}. */
    static String bytes(long bytes) {
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        if (bytes < 1024) {
            return bytes + " bytes";
        }
        double value = bytes;
        int unit = -1;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(java.util.Locale.ROOT, "%.1f %s", value, units[unit]);
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage();
    }
}
