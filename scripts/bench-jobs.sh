#!/usr/bin/env bash
# Complete-job benchmark matrix: the same Flink SQL job on stock Flink (A) and
# with aggforge's native aggregates (B: planner hook installed and enabled),
# alternating A B A B in one JVM (Flink 2.2.1 MiniCluster, parallelism 1,
# 2 GiB heap), deterministic in-process generated rows, blackhole sink,
# 2 warm-up + 5 measured rounds per workload; each round also times the
# scan-only job (same source and sink, no aggregate). Before timing, every
# workload's native plan must contain the Aggforge operators (no silent
# fallback). Prints each run, then a markdown table:
#   workload | stock median ms [range] | native median ms [range] | scan ms | ratio stock/native
# (ratio = stock median / native median; > 1 means native is faster). The
# table is also written to jni-bridge/java/target/bench-jobs.md.
#
# Workloads (jni-bridge/java/src/test/java/dev/aggforge/flink/bench/JobBenchmarkTest.java):
#   minmax-{date,time,boolean,bigint}-{single,two}   MIN/MAX, 2M rows, 64 keys, 1/8 NULL
#   firstlast-{time,boolean,bigint}-{single,minibatch} FIRST_VALUE/LAST_VALUE (never split)
#   countsumavg-{bigint,decimal}-{single,two}        COUNT/SUM/AVG, BIGINT or DECIMAL(20,3)
#   keys1m-bigint-{single,two}                       MIN/MAX/COUNT/SUM, 1M rows, ~1 row per key
#   {count,avg}distinct-bigint-single, countdistinct-string-single, countdistinct-bigint-two,
#   sumdistinct-double-{single,two}                  (two: the global folds in Java HashMap order)
#                                                    COUNT/AVG(DISTINCT), 4096 values per key (BIGINT)
#   nexmark-q{15,16,17}-{single,two,split}           Nexmark q15-q17 over the Nexmark bid generator
#                                                    (split: two with split-distinct, Nexmark's config)
#   keys10m-{uniform,zipf}-{single,minibatch}       the keys1m query, 20M rows over 10M keys, uniform
#                                                    or Zipf (s = 1); only when named in bench.only;
#                                                    meant for -Dbench.stateBackend=rocksdb -Dbench.memoryBudget=80mb
#   singlevalue-keys1m-{single,minibatch,two}, listagg-string-{single,two}
#   nested-minmax-{single,two}                       SUM per key (65,536) feeding MIN/MAX/COUNT(*)
#                                                    per MOD(k, 64): MIN/MAX over retracting input
#   nested-listagg-{single,two}                      the same SUM feeding LISTAGG/COUNT(*)
#                                                    per MOD(k, 4096): LISTAGG over retracting input
# "single" = ONE_PHASE, mini-batch off (immediate); "two" = TWO_PHASE, mini-batch
# size 1024, allow-latency 1 s. The full matrix (35 workloads) takes several times the
# 12 minutes its first 14 took on 2 cores (plus the build): pick with -Dbench.only.
#
# Needs: cargo (Rust), Java 17+, Maven. Maven builds the native library
# (cargo build --release -p aggforge-jni; CARGO_TARGET_DIR is honoured).
# Usage: scripts/bench-jobs.sh [extra Maven args], e.g.
#   scripts/bench-jobs.sh -Dbench.only=minmax-date-single,keys1m-bigint-two
#   scripts/bench-jobs.sh -Dbench.warmups=1 -Dbench.runs=3 -Dbench.rows=500000
#   scripts/bench-jobs.sh -Dnative.skip            # library already built
#   scripts/bench-jobs.sh -Dbench.objectReuse=true # pipeline.object-reuse for both engines (Flink default: off)
#   scripts/bench-jobs.sh -Dbench.memoryBudget=2gb  # native state budget (default: the option's, 1 GiB)
#   scripts/bench-jobs.sh -Dbench.stateBackend=rocksdb -Dbench.checkpointMs=10000  # both engines
#   scripts/bench-jobs.sh -Dbench.uids=true         # table.exec.uid.generation=ALWAYS (both engines;
#                                                   # the columnar exchange needs operator uids)
#   scripts/bench-jobs.sh -Dbench.only=minmax-date-single \
#       "-Dbench.jvmArgs=-XX:StartFlightRecording=filename=/tmp/job.jfr,settings=profile"
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in cargo java mvn; do
    command -v "$tool" >/dev/null || { echo "bench-jobs.sh: $tool not found on PATH" >&2; exit 2; }
done

table=jni-bridge/java/target/bench-jobs.md
rm -f "$table"
echo "load before: $(uptime)"
echo "Building the native library and the Flink module (first run: several minutes)..."
mvn -B --no-transfer-progress -q -f jni-bridge/java/pom.xml -Pbench test "$@"
echo "load after: $(uptime)"
if [[ -f "$table" ]]; then
    echo
    echo "=== table (also in $table) ==="
    cat "$table"
fi
