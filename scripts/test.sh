#!/usr/bin/env bash
# Runs every check CI runs: formatting, clippy with warnings denied, all Rust
# tests, the Flink module's Maven tests against every supported Flink line
# (each also packages that line's drop-in jar), and the real-cluster test
# (scripts/cluster-test.sh: an unmodified Flink distribution from PyPI with the
# jar in lib/ and the one option set).
#
# Usage: scripts/test.sh
# Environment: AGGFORGE_FLINK_VERSIONS  Flink versions for the Maven suite
#                                      (default "2.3.0 2.2.1 1.20.3")
#              AGGFORGE_CLUSTER_VERSIONS Flink versions for the cluster test
#                                      (default "2.2.1"; "" skips it)
#              AGGFORGE_COLUMNAR_OFF_VERSION Flink version whose parity suite also
#                                      runs over Flink's row exchange, with the
#                                      JIT forced on (table.exec.aggforge.jit=on)
#                                      (default "2.2.1"; "" skips it)
set -euo pipefail
cd "$(dirname "$0")/.."

flink_versions=${AGGFORGE_FLINK_VERSIONS-"2.3.0 2.2.1 1.20.3"}
cluster_versions=${AGGFORGE_CLUSTER_VERSIONS-"2.2.1"}
# The parity suite runs once more on this version with the columnar exchange off
# and the JIT forced on (the default runs use jit=auto, which fuses lists of two
# or more fixed-width calls; forced on, single calls fuse too). The window
# aggregates' parity tests are left out of that run: window operators use
# neither the columnar exchange nor the JIT, so they would run the same again.
columnar_off_version=${AGGFORGE_COLUMNAR_OFF_VERSION-"2.2.1"}
jars=target/flink-jars
# Each stage's header also gives the time and the disk's free space, so that a run that
# fills the disk shows which stage took it.
stage() { echo "== $* ($(date +%T), free: $(df -h --output=avail . | tail -1 | tr -d ' '))"; }

stage "rustfmt"
cargo fmt --all -- --check
stage "clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
stage "spec check"
cargo run --quiet --locked -p aggforge-codegen --bin aggforge -- check
stage "tests"
cargo test --workspace --locked

rm -rf "$jars" && mkdir -p "$jars"
native=()
for version in $flink_versions; do
    stage "Flink module tests (Maven), Flink $version"
    # The first run builds the native library; later ones package the same one.
    mvn -B --no-transfer-progress -f jni-bridge/java/pom.xml "-Dflink.version=$version" \
        "${native[@]}" clean package
    native=(-Dnative.skip)
    cp jni-bridge/java/target/aggforge-flink-"${version%.*}"-*.jar "$jars/"
    if [[ $version == "$columnar_off_version" ]]; then
        stage "parity suite over Flink's row exchange (columnar exchange off), JIT on, Flink $version"
        mvn -B --no-transfer-progress -f jni-bridge/java/pom.xml "-Dflink.version=$version" \
            -Dnative.skip -Daggforge.test.columnarExchange=false -Daggforge.test.jit=on \
            '-Dtest=*ParityTest,!*Window*ParityTest' test
    fi
done
ls -l "$jars"

for version in $cluster_versions; do
    stage "real cluster, Flink $version"
    jar=$(ls "$jars"/aggforge-flink-"${version%.*}"-*.jar)
    FLINK_VERSION=$version CLUSTER_CHECK_METRICS=1 scripts/cluster-test.sh "$jar"
    stage "bad configuration in a real distribution, Flink $version"
    foreign=$(ls "$jars"/aggforge-flink-*.jar | grep -v "aggforge-flink-${version%.*}-" | head -1 || true)
    scripts/cluster/bad-config.sh "${AGGFORGE_CACHE:-$HOME/.cache/aggforge}/flink/flink-$version" \
        "$jar" ${foreign:+"$foreign"}
done
