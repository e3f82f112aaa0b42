package dev.aggforge.flink.structure;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The main sources' packages import each other without a cycle, so each package can be read (and
 * changed) knowing only the packages below it. Reads the {@code import dev.aggforge...} lines of
 * every main source file.
 */
class PackageCycleTest {

    private static final Pattern PACKAGE = Pattern.compile("^package (dev\\.aggforge\\.[\\w.]+);", Pattern.MULTILINE);

    /** An import's package: the dotted prefix before the first capitalised segment. */
    private static final Pattern IMPORT =
            Pattern.compile("^import (?:static )?(dev\\.aggforge(?:\\.[a-z]\\w*)*)\\.[A-Z]", Pattern.MULTILINE);

    @Test
    void mainPackagesHaveNoImportCycle() throws IOException {
        Map<String, Set<String>> imports = new TreeMap<>();
        List<Path> sources;
        try (Stream<Path> walk = Files.walk(Path.of("src/main/java"))) {
            sources = walk.filter(p -> p.toString().endsWith(".java")).toList();
        }
        assertTrue(sources.size() > 20, "found only " + sources.size() + " sources");
        for (Path source : sources) {
            String text = Files.readString(source);
            Matcher pkg = PACKAGE.matcher(text);
            if (!pkg.find()) {
                continue;
            }
            Set<String> targets = imports.computeIfAbsent(pkg.group(1), k -> new TreeSet<>());
            Matcher imported = IMPORT.matcher(text);
            while (imported.find()) {
                if (!imported.group(1).equals(pkg.group(1))) {
                    targets.add(imported.group(1));
                }
            }
        }
        for (String start : imports.keySet()) {
            List<String> cycle = cycleFrom(start, start, imports, new ArrayList<>(), new TreeSet<>());
            assertTrue(cycle == null, "package import cycle: " + cycle);
        }
    }

    /** A path start -> ... -> start through the import graph, or null. */
    private static List<String> cycleFrom(
            String start, String at, Map<String, Set<String>> imports, List<String> path, Set<String> seen) {
        path.add(at);
        for (String next : imports.getOrDefault(at, Set.of())) {
            if (next.equals(start)) {
                List<String> cycle = new ArrayList<>(path);
                cycle.add(start);
                return cycle;
            }
            if (seen.add(next)) {
                List<String> found = cycleFrom(start, next, imports, path, seen);
                if (found != null) {
                    return found;
                }
            }
        }
        path.remove(path.size() - 1);
        return null;
    }
}
