#!/usr/bin/env bash
# Incremental checkpoints of a large, slowly changing state, stock Flink then
# aggforge (Flink 2.2.1 MiniCluster, parallelism 1, RocksDB with incremental
# checkpoints): 1M keys loaded, then ~1 % of them changed per 10 s checkpoint
# interval, 10 checkpoints measured after the load's. Per checkpoint Flink's own
# statistics (uploaded = checkpointed size, full state size, end-to-end
# duration); prints each, then a markdown table, also written to
# jni-bridge/java/target/bench-checkpoints.md. Takes about 2 x (load + 11
# intervals): ~5 minutes with the defaults, plus the build.
#
# Test: jni-bridge/java/src/test/java/dev/aggforge/flink/failover/CheckpointSizeBenchmarkTest.java
# Usage: scripts/bench-checkpoints.sh [extra Maven args], e.g.
#   scripts/bench-checkpoints.sh -Dnative.skip                 # library already built
#   scripts/bench-checkpoints.sh -Dbench.memoryBudget=32mb     # aggforge's cache smaller than the state
#   scripts/bench-checkpoints.sh -Dbench.keys=200000 -Dbench.checkpointMs=2000 -Dbench.checkpoints=5
#   scripts/bench-checkpoints.sh "-Dbench.sql=SELECT MOD(k, 1000), COUNT(DISTINCT v) FROM src GROUP BY MOD(k, 1000)"
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in cargo java mvn; do
    command -v "$tool" >/dev/null || { echo "bench-checkpoints.sh: $tool not found on PATH" >&2; exit 2; }
done
table=jni-bridge/java/target/bench-checkpoints.md
rm -f "$table"
mvn -B --no-transfer-progress -q -f jni-bridge/java/pom.xml -Pbench -Dflink.version=2.2.1 \
    -Dsurefire.groups=checkpointbench -Dtest=CheckpointSizeBenchmarkTest "$@" test
if [[ -f "$table" ]]; then
    echo
    echo "=== table (also in $table) ==="
    cat "$table"
fi
