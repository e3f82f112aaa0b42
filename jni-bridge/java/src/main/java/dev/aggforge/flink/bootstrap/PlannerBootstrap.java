package dev.aggforge.flink.bootstrap;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.WeakHashMap;

import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.table.api.TableConfig;
import org.apache.flink.table.api.ValidationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.aggforge.flink.AggforgeOptions;

/**
 * Installs aggforge's optimizer step into a TableEnvironment's planner. Called for every planner
 * Flink creates (by aggforge's {@code DelegatePlannerFactory}, which stands in for the one in
 * {@code flink-table-planner-loader}), and by {@link Aggforge#install} for setups without the
 * loader.
 *
 * <p>Safe in {@code lib/}: with {@link AggforgeOptions#ENABLED} off, any failure here is logged
 * and the planner runs as stock Flink; with it on, a failure stops the job at submission with a
 * sentence saying what to change.
 */
public final class PlannerBootstrap {

    private static final Logger LOG = LoggerFactory.getLogger(PlannerBootstrap.class);

    private static final String PLANNER_ENTRY = PlannerExtensionLoader.PLANNER_PACKAGE + "AggforgePlanner";
    private static final String BUILD_INFO = "/dev/aggforge/flink/bootstrap/build.properties";

    /** Extension loaders by planner loader (one per planner component). */
    private static final Map<ClassLoader, ClassLoader> EXTENSIONS = new WeakHashMap<>();

    private PlannerBootstrap() {}

    /**
     * Installs the hook on a planner Flink has just created for {@code config} behind the planner
     * loader; never fails when aggforge is off.
     */
    public static void plannerCreated(TableConfig config) {
        try {
            install(config, plannerComponentLoader());
        } catch (RuntimeException | LinkageError e) {
            if (enabled(config)) {
                throw e instanceof ValidationException
                        ? (ValidationException) e
                        : new ValidationException(failureSentence(e), e);
            }
            LOG.warn("aggforge is off and could not be installed: {}", failureSentence(e), e);
        }
    }

    /** Installs the hook on {@code config} (idempotent) and returns it. */
    public static synchronized PlannerHook install(TableConfig config, ClassLoader plannerLoader) {
        checkFlinkVersion();
        return (PlannerHook) invoke(entry(plannerLoader, "install"), config);
    }

    /** The hook installed on {@code config}, if any. */
    public static synchronized Optional<PlannerHook> installed(
            TableConfig config, ClassLoader plannerLoader) {
        return Optional.ofNullable((PlannerHook) invoke(entry(plannerLoader, "installedHook"), config));
    }

    /**
     * Logs an error when the planner loader's {@code DelegatePlannerFactory} on the class path is
     * Flink's rather than aggforge's (aggforge's jar comes after the loader's on the class path),
     * since then no planner gets the hook. Called once per class loader, on the first factory
     * discovery (see {@link AggforgeModuleFactory}).
     */
    static void checkSeam() {
        ClassLoader own = PlannerBootstrap.class.getClassLoader();
        try {
            Class<?> seam =
                    Class.forName(
                            "org.apache.flink.table.planner.loader.DelegatePlannerFactory", false, own);
            java.security.CodeSource ours = PlannerBootstrap.class.getProtectionDomain().getCodeSource();
            java.security.CodeSource theirs = seam.getProtectionDomain().getCodeSource();
            if (ours != null
                    && theirs != null
                    && !ours.getLocation().equals(theirs.getLocation())
                    && !plannerSeenBy(own)) {
                LOG.error(
                        "aggforge is inactive: {} comes before {} on the class path, so Flink's"
                                + " planner factory is used instead of aggforge's. Keep the jar's"
                                + " name starting with 'aggforge-' in lib/ (lib/ is read in name"
                                + " order).",
                        theirs.getLocation(),
                        ours.getLocation());
            }
        } catch (ClassNotFoundException | LinkageError | SecurityException e) {
            LOG.debug("aggforge: no planner loader on the class path", e);
        }
    }

    /**
     * The class loader of Flink's planner component, the one flink-table-planner-loader's {@code
     * PlannerModule} keeps in its {@code submoduleClassLoader} field. Read reflectively: Flink 2.x
     * has a public getter, 1.20 keeps the class package-private, and the field is the same in all.
     */
    public static ClassLoader plannerComponentLoader() {
        try {
            Class<?> module =
                    Class.forName(
                            "org.apache.flink.table.planner.loader.PlannerModule",
                            true,
                            PlannerBootstrap.class.getClassLoader());
            Method getInstance = module.getDeclaredMethod("getInstance");
            getInstance.setAccessible(true);
            Field loader = module.getDeclaredField("submoduleClassLoader");
            loader.setAccessible(true);
            return (ClassLoader) loader.get(getInstance.invoke(null));
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot reach Flink's planner class loader", e);
        }
    }

    /** The Flink version (major.minor) this jar was built for, e.g. {@code 2.2}. */
    public static String builtForFlink() {
        return minor(buildInfo().getProperty("flink.version", "unknown"));
    }

    /**
     * Fails unless the running Flink has the major.minor version this jar was built for: the
     * planner internals aggforge plugs into differ between minor versions.
     */
    static void checkFlinkVersion() {
        checkFlinkVersion(EnvironmentInformation.getVersion(), builtForFlink());
    }

    /** {@link #checkFlinkVersion()} for a given running and built-for version. */
    static void checkFlinkVersion(String running, String built) {
        if (running == null || running.startsWith("<unknown")) {
            return; // not a packaged Flink (an IDE class path): nothing to compare
        }
        if (!minor(running).equals(built)) {
            throw new ValidationException(
                    "aggforge: this aggforge jar is built for Flink "
                            + built
                            + " but this is Flink "
                            + running
                            + ". Put the aggforge-flink-"
                            + minor(running)
                            + " jar in lib/ instead, or set "
                            + AggforgeOptions.ENABLED.key()
                            + ": false.");
        }
    }

    static String minor(String version) {
        String[] parts = version.split("[.-]");
        return parts.length >= 2 ? parts[0] + "." + parts[1] : version;
    }

    private static Properties buildInfo() {
        Properties properties = new Properties();
        try (InputStream in = PlannerBootstrap.class.getResourceAsStream(BUILD_INFO)) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            LOG.warn("aggforge: cannot read {}", BUILD_INFO, e);
        }
        return properties;
    }

    private static boolean enabled(TableConfig config) {
        try {
            return config.get(AggforgeOptions.ENABLED);
        } catch (RuntimeException unparseable) {
            return true; // a value that is not a boolean is a request to fail clearly
        }
    }

    private static String failureSentence(Throwable e) {
        return "aggforge could not be installed into Flink's planner ("
                + e
                + "). Check that the aggforge jar matches this Flink version (it is built for Flink "
                + builtForFlink()
                + "), or set "
                + AggforgeOptions.ENABLED.key()
                + ": false.";
    }

    private static Method entry(ClassLoader plannerLoader, String name) {
        try {
            Class<?> planner = Class.forName(PLANNER_ENTRY, true, extensionLoader(plannerLoader));
            return planner.getMethod(name, TableConfig.class);
        } catch (ClassNotFoundException | NoSuchMethodException e) {
            throw new IllegalStateException("the aggforge jar lacks " + PLANNER_ENTRY + "." + name, e);
        }
    }

    private static Object invoke(Method method, TableConfig config) {
        try {
            return method.invoke(null, config);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new IllegalStateException(cause);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The loader for the planner-side classes: aggforge's own when the planner is on its class
     * path (flink-table-planner_2.12 setups), else a {@link PlannerExtensionLoader} over the
     * planner's component loader.
     */
    private static ClassLoader extensionLoader(ClassLoader plannerLoader) {
        ClassLoader own = PlannerBootstrap.class.getClassLoader();
        if (plannerLoader == own || plannerSeenBy(own)) {
            return own;
        }
        return EXTENSIONS.computeIfAbsent(
                plannerLoader, planner -> new PlannerExtensionLoader(planner, own));
    }

    static boolean plannerSeenBy(ClassLoader loader) {
        try {
            Class.forName("org.apache.flink.table.planner.delegation.PlannerBase", false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
