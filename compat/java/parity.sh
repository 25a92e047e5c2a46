#!/usr/bin/env bash
# Live differential test of the Rust task assignors against Kafka Streams' Java assignors
# (org.apache.kafka:kafka-streams:4.4.0), and the side-by-side benchmark.
#
#   compat/java/parity.sh [--scenarios N] [--seed S] [--out DIR] [--fixtures N]
#       Generates N random scenarios (default 2000, seed 1), runs each through the Rust engine
#       and through Kafka's assignors, prints equal/different counts per assignor and exits 1 on
#       any difference; differing scenarios go to DIR/diffs/ (DIR defaults to target/parity).
#       First checks the engine's replay of java.util.HashSet iteration order against the JDK.
#       --fixtures N also rewrites fixtures/parity/ with N agreeing scenarios per assignor (and 20
#       HashSet operation sequences with Java's iteration orders).
#   compat/java/parity.sh --bench
#       Times Kafka's HighAvailabilityTaskAssignor on the inputs of benches/engine.rs (ms per
#       assign; the 1,000-client case takes minutes in Java), then runs that criterion benchmark.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
runner=org.apache.kafka.streams.processor.internals.assignment.ParityRunner

scenarios=2000
seed=1
out="$repo/target/parity"
fixtures=""
bench=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --scenarios) scenarios="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --fixtures) fixtures="$2"; shift 2 ;;
        --bench) bench=1; shift ;;
        *) sed -n '2,15p' "$0" >&2; exit 2 ;;
    esac
done

ensure_jar

cd "$repo"
mkdir -p "$out"

if [[ "$bench" == 1 ]]; then
    PARITY_DIR="$out" cargo test -q --release --test engine_differential -- --ignored --exact bench_inputs --nocapture >&2
    echo "== Java: HighAvailabilityTaskAssignor (kafka-streams 4.4.0) =="
    java -Xms1g -Xmx4g -cp "$jar" "$runner" bench "$out/bench.jsonl" --warmup 3 --iterations 10
    echo "== Rust: criterion (benches/engine.rs) =="
    cargo bench --bench engine -- --noplot 2>&1 | grep -E '^(engine|ha)|time:' || true
    exit 0
fi

HASHMAP_DIR="$out" cargo test -q --release --lib jdk::hash_map -- --ignored --exact \
    jdk::hash_map::tests::java_differential_generate >/dev/null
java -cp "$jar" "$runner" hashmap "$out/hashmap-ops.jsonl" "$out/hashmap-java.jsonl"
HASHMAP_DIR="$out" HASHMAP_FIXTURES="${fixtures:+20}" cargo test -q --release --lib jdk::hash_map -- --ignored \
    --exact jdk::hash_map::tests::java_differential_compare --nocapture | grep -E 'HashSet|JavaHashSet.jsonl'

PARITY_DIR="$out" PARITY_SEED="$seed" PARITY_SCENARIOS="$scenarios" \
    cargo test -q --release --test engine_differential -- --ignored --exact generate --nocapture >&2
start=$(date +%s)
java -Xmx2g -cp "$jar" "$runner" run "$out/scenarios.jsonl" "$out/java.jsonl"
echo "java: $(( $(date +%s) - start ))s" >&2
PARITY_DIR="$out" PARITY_FIXTURES="$fixtures" \
    cargo test -q --release --test engine_differential -- --ignored --exact compare --nocapture
