#!/usr/bin/env bash
# The main job: one accelerated Flink SQL job on an embedded local cluster
# (Flink 2.2.1 MiniCluster, generated data), run on stock Flink and with
# aggforge's native aggregates. Prints the SQL, EXPLAIN's native operator,
# the final result, whether the complete changelogs are identical, and
# alternating stock/native timings (1 warm-up + 3 measured runs, medians).
# Exits non-zero if a native changelog differs from stock Flink's.
#
# Needs: cargo (Rust), Java 17+, Maven. Maven builds the native library
# (cargo build --release -p aggforge-jni; CARGO_TARGET_DIR is honoured).
# Usage: scripts/demo.sh [extra Maven args, e.g. -Ddemo.rows=500000 -Ddemo.twoPhase=false]
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in cargo java mvn; do
    command -v "$tool" >/dev/null || { echo "demo.sh: $tool not found on PATH" >&2; exit 2; }
done

echo "Building the native library and the Flink module (first run: several minutes)..."
exec mvn -B --no-transfer-progress -q -f jni-bridge/java/pom.xml -Pdemo test "$@"
