#!/usr/bin/env bash
# Bad configuration in a real Flink distribution: each case puts an aggforge
# jar into lib/ of a copy of an unmodified distribution, sets options in
# conf/config.yaml and runs EXPLAIN through bin/sql-client.sh -f (embedded
# gateway; no cluster needed). Each must fail with aggforge's sentence:
#   1. a jar built for another Flink line           -> "built for Flink X but this is Flink Y"
#   2. a jar without the native library             -> "native library cannot be loaded"
#   3. an option value that does not parse          -> "cannot read option ..."
#   4. a memory budget below one batch              -> "is smaller than one batch"
#   5. the jar renamed to sort after Flink's planner loader in lib/ (then
#      Flink's planner factory wins and aggforge cannot act) -> an error in
#      the client log: "aggforge is inactive"
# and, as the control, the right jar with good options plans natively.
#
# Usage: scripts/cluster/bad-config.sh FLINK_HOME JAR [FOREIGN_JAR]
#   FLINK_HOME   a distribution (scripts/cluster-test.sh caches one per version
#                under ~/.cache/aggforge/flink/flink-<version>)
#   JAR          the aggforge jar for that distribution's Flink line
#   FOREIGN_JAR  an aggforge jar for another Flink line (case 1; skipped with a
#                note when absent)
set -euo pipefail

if (($# < 2 || $# > 3)); then
    echo "usage: $0 FLINK_HOME JAR [FOREIGN_JAR]" >&2
    exit 2
fi
dist=$(cd "$1" && pwd)
jar=$2
foreign=${3:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/aggforge-bad-config.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0

cat >"$work/explain.sql" <<'SQL'
CREATE TABLE src (id BIGINT, k AS id % 64, v AS CAST(id * 7 % 1000 AS INT)) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000');
EXPLAIN SELECT k, MIN(v), MAX(v), COUNT(*) FROM src GROUP BY k;
SQL

# case NAME JAR EXPECTED [config lines...]: EXPLAIN's output must contain EXPECTED.
case_() {
    local name=$1 case_jar=$2 expected=$3
    shift 3
    local home=$work/$name
    mkdir -p "$home"
    cp -R "$dist/bin" "$dist/conf" "$dist/opt" "$home/"
    mkdir -p "$home/lib" "$home/log"
    ln -s "$dist"/lib/*.jar "$home/lib/"
    cp "$case_jar" "$home/lib/$(basename "$case_jar")"
    printf '\ntable.exec.aggforge.enabled: true\n' >>"$home/conf/config.yaml"
    local line
    for line in "$@"; do printf '%s\n' "$line" >>"$home/conf/config.yaml"; done
    local out=$home/explain.out
    FLINK_CONF_DIR=$home/conf FLINK_LOG_DIR=$home/log timeout 300 \
        "$home/bin/sql-client.sh" -f "$work/explain.sql" </dev/null >"$out" 2>&1 || true
    if grep -qF -- "$expected" "$out" "$home"/log/*sql-client*.log 2>/dev/null; then
        echo "[bad-config] $name: ok ($(grep -ohF -m1 -- "$expected" "$out" "$home"/log/*.log | head -1))"
        grep -oh "aggforge: [^\"]*" "$out" | head -1 | sed 's/^/    /' || true
    else
        echo "[bad-config] $name: FAILED, expected '$expected'; sql-client printed:" >&2
        tail -40 "$out" >&2
        failures=$((failures + 1))
    fi
}

case_ control "$jar" "AggforgeGroupAggregate(groupBy=[k]"

if [[ -n $foreign ]]; then
    case_ wrong-flink-version "$foreign" "jar in lib/ instead, or set table.exec.aggforge.enabled: false"
else
    echo "[bad-config] wrong-flink-version: skipped (no jar for another Flink line given)"
fi

python3 - "$jar" "$work/aggforge-flink-no-native.jar" <<'PY'
import sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    for item in zin.infolist():
        if not item.filename.startswith("native/"):
            zout.writestr(item, zin.read(item.filename))
PY
case_ no-native-library "$work/aggforge-flink-no-native.jar" "its native library cannot be loaded on this machine"

case_ unparseable-option "$jar" "cannot read option 'table.exec.aggforge.memory-budget'" \
    "table.exec.aggforge.memory-budget: lots"

case_ budget-below-one-batch "$jar" "is smaller than one batch of 1024 rows needs" \
    "table.exec.aggforge.memory-budget: 1kb"

cp "$jar" "$work/zz-renamed.jar"
case_ jar-after-planner-loader "$work/zz-renamed.jar" "aggforge is inactive"

if ((failures > 0)); then
    echo "[bad-config] $failures case(s) failed" >&2
    exit 1
fi
echo "[bad-config] all cases gave their sentence"
