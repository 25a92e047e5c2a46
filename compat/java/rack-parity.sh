#!/usr/bin/env bash
# Differential test of the rack-aware active task optimisation (KIP-925) against Kafka Streams'
# RackAwareTaskAssignor (org.apache.kafka:kafka-streams:4.4.0).
#
#   compat/java/rack-parity.sh [--instances N] [--seed S] [--out DIR]
#       Generates N random instances (default 500, seed 1; clients on 3 racks, tasks with 1-2
#       input partitions, a current active placement, min_traffic and balance_subtopology, several
#       traffic/non-overlap costs), optimises each with Kafka's optimizeActiveTasks and with the
#       engine's, and compares the optimal total cost. Assignments may differ where several are
#       equally cheap, so only the cost is compared (and how often the traffic/non-overlap split
#       agrees is reported). Exits 1 on any difference. DIR defaults to target/rack-parity.
#       Every third instance with 2+ clients instead places one standby per task and runs
#       optimizeStandbyTasks: its pairwise swaps are a heuristic whose path depends on how each
#       pair's ties are broken, so final costs are only counted (equal / lower / higher), not
#       required to match.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
runner=org.apache.kafka.streams.processor.internals.assignment.RackParityRunner

instances=500
seed=1
out="$repo/target/rack-parity"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --instances) instances="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) sed -n '2,16p' "$0" >&2; exit 2 ;;
    esac
done

ensure_jar

cd "$repo"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
RACK_PARITY_DIR="$out" RACK_PARITY_INSTANCES="$instances" RACK_PARITY_SEED="$seed" \
    cargo test -q --release --lib engine::rack_aware -- --ignored --exact engine::rack_aware::tests::java_parity_generate >/dev/null
java -cp "$jar" "$runner" "$out/instances.jsonl" "$out/java.jsonl"
RACK_PARITY_DIR="$out" cargo test -q --release --lib engine::rack_aware -- --ignored --exact \
    engine::rack_aware::tests::java_parity_compare --nocapture | grep -E 'rack parity|instance'
