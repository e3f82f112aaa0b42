package dev.aggforge.flink.nativelib;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads the {@code aggforge_jni} native library once per class loader.
 *
 * <p>Order: the system property {@value #PATH_PROPERTY} (a path to the library file, for
 * development), else the library packaged in the jar at {@code /native/<platform>/<file>} (for
 * example {@code /native/linux-x86_64/libaggforge_jni.so}), extracted to a temporary file that is
 * deleted when the JVM exits.
 */
public final class NativeLibrary {

    /** System property naming the library file to load instead of the packaged one. */
    public static final String PATH_PROPERTY = "aggforge.native.path";

    /** The library's base name ({@code System.mapLibraryName} gives the file name). */
    public static final String NAME = "aggforge_jni";

    private static volatile String loadedFrom;

    private NativeLibrary() {}

    /**
     * Loads the library if this class loader has not yet.
     *
     * @throws UnsatisfiedLinkError if it cannot be found or loaded, naming where it looked
     */
    public static void load() {
        if (loadedFrom != null) {
            return;
        }
        synchronized (NativeLibrary.class) {
            if (loadedFrom != null) {
                return;
            }
            String override = System.getProperty(PATH_PROPERTY);
            if (override != null && !override.isBlank()) {
                Path path = Paths.get(override).toAbsolutePath();
                if (!Files.isRegularFile(path)) {
                    throw new UnsatisfiedLinkError(
                            PATH_PROPERTY + "=" + override + " is not a file");
                }
                System.load(path.toString());
                loadedFrom = path.toString();
                return;
            }
            String resource = resourcePath();
            try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new UnsatisfiedLinkError(
                            "the aggforge native library is not packaged for this platform (no "
                                    + resource
                                    + " in the jar); build it with `cargo build --release -p "
                                    + "aggforge-jni` and set -D"
                                    + PATH_PROPERTY
                                    + "=<path to the library>");
                }
                String file = System.mapLibraryName(NAME);
                int dot = file.lastIndexOf('.');
                Path temp = Files.createTempFile(file.substring(0, dot) + "-", file.substring(dot));
                temp.toFile().deleteOnExit();
                Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
                System.load(temp.toString());
                loadedFrom = resource + " (extracted to " + temp + ")";
            } catch (IOException e) {
                UnsatisfiedLinkError error =
                        new UnsatisfiedLinkError("could not extract " + resource + ": " + e);
                error.initCause(e);
                throw error;
            }
        }
    }

    /** Where the library was loaded from, or null before {@link #load()}. */
    public static String loadedFrom() {
        return loadedFrom;
    }

    /** The jar resource holding the library for this JVM's platform. */
    public static String resourcePath() {
        return "/native/" + platform() + "/" + System.mapLibraryName(NAME);
    }

    /** {@code <os>-<arch>}, e.g. {@code linux-x86_64}, {@code linux-aarch64}, {@code osx-aarch64}. */
    public static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osName =
                os.contains("linux")
                        ? "linux"
                        : os.contains("mac") || os.contains("darwin")
                                ? "osx"
                                : os.contains("windows") ? "windows" : os.replace(' ', '_');
        String archName =
                arch.equals("amd64") || arch.equals("x86_64")
                        ? "x86_64"
                        : arch.equals("arm64") || arch.equals("aarch64") ? "aarch64" : arch;
        return osName + "-" + archName;
    }
}
