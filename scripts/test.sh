#!/usr/bin/env bash
# Runs every check CI runs: formatting, clippy with warnings denied, and all
# tests of the workspace and the Flink module. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== rustfmt"
cargo fmt --all -- --check
echo "== clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== spec check"
cargo run --quiet --locked -p aggforge-codegen --bin aggforge -- check
echo "== tests"
cargo test --workspace --locked
echo "== Flink module tests (Maven)"
mvn -B --no-transfer-progress -f jni-bridge/java/pom.xml test
