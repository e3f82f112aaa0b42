package dev.aggforge.flink.bootstrap;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Enumeration;

/**
 * Loads aggforge's planner-side classes (package {@value #PLANNER_PACKAGE}) so that they see
 * Flink's planner, which {@code flink-table-planner-loader} keeps in its own component class
 * loader where code in {@code lib/} cannot name it.
 *
 * <p>Delegation, by class name:
 *
 * <ul>
 *   <li>{@value #PLANNER_PACKAGE}*: defined here, from the bytes in aggforge's jar, so their
 *       references to Calcite, Scala and the planner resolve through the planner's loader;
 *   <li>any other {@code dev.aggforge.*} class (operator, transposes, native library, shaded
 *       Arrow, bootstrap): aggforge's own loader, so that there is one copy of each (one loaded
 *       native library, one operator class that tasks deserialize);
 *   <li>everything else: the planner's loader (which itself serves {@code org.apache.flink.*}
 *       from the planner first and from Flink's class path after).
 * </ul>
 */
final class PlannerExtensionLoader extends ClassLoader {

    /** The package whose classes need the planner. Nothing outside it may reference them. */
    static final String PLANNER_PACKAGE = "dev.aggforge.flink.planner.";

    private static final String OWN_PREFIX = "dev.aggforge.";
    private static final String OWN_RESOURCES = OWN_PREFIX.replace('.', '/');

    static {
        ClassLoader.registerAsParallelCapable();
    }

    private final ClassLoader owner;

    /**
     * @param planner the loader that holds Flink's planner (the parent)
     * @param owner the loader that holds aggforge's jar
     */
    PlannerExtensionLoader(ClassLoader planner, ClassLoader owner) {
        super("aggforge-planner-extension", planner);
        this.owner = owner;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        synchronized (getClassLoadingLock(name)) {
            Class<?> loaded = findLoadedClass(name);
            if (loaded == null) {
                if (name.startsWith(PLANNER_PACKAGE)) {
                    loaded = defineFromOwner(name);
                } else if (name.startsWith(OWN_PREFIX)) {
                    loaded = owner.loadClass(name);
                } else {
                    loaded = getParent().loadClass(name);
                }
            }
            if (resolve) {
                resolveClass(loaded);
            }
            return loaded;
        }
    }

    private Class<?> defineFromOwner(String name) throws ClassNotFoundException {
        String resource = name.replace('.', '/') + ".class";
        try (InputStream in = owner.getResourceAsStream(resource)) {
            if (in == null) {
                throw new ClassNotFoundException(name + " (not in the aggforge jar)");
            }
            byte[] bytes = in.readAllBytes();
            return defineClass(
                    name, bytes, 0, bytes.length, PlannerExtensionLoader.class.getProtectionDomain());
        } catch (IOException e) {
            throw new ClassNotFoundException(name, e);
        }
    }

    @Override
    public URL getResource(String name) {
        return name.startsWith(OWN_RESOURCES)
                ? owner.getResource(name)
                : getParent().getResource(name);
    }

    @Override
    public Enumeration<URL> getResources(String name) throws IOException {
        return name.startsWith(OWN_RESOURCES)
                ? owner.getResources(name)
                : getParent().getResources(name);
    }
}
