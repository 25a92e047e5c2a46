#!/usr/bin/env bash
# Differential test of the crate's whole leader step (src/leader/assign.rs) against Kafka Streams'
# own StreamsPartitionAssignor.assign (org.apache.kafka:kafka-streams:4.4.0), run with stand-ins
# for the admin client, main consumer, clock and task manager (AssignParity).
#
#   compat/java/assign-parity.sh [--cases N] [--seed S] [--out DIR] [--record K]
#       Generates N random groups (default 200, seed 1) over the word-count topology: 1-4
#       processes of 1-3 threads, subscription versions 2-12 mixed, 0-40 partitions, owned
#       partitions, offset sums, 0-2 standbys, end offsets present or not, now and then two
#       processes on one endpoint. Runs them through both leaders and compares every member's
#       assignment envelope byte for byte (Java's hash orders included); exits 1 on any byte
#       difference. --record K rewrites fixtures/leader/assign-parity.jsonl with up to K of the
#       cases and Java's answers, one of each kind, which `cargo test` replays without Java.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
runner=org.apache.kafka.streams.processor.internals.AssignParity

cases=200
seed=1
out="$repo/target/assign-parity"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cases) cases="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --record) export ASSIGN_PARITY_RECORD="$2"; shift 2 ;;
        *) sed -n '2,13p' "$0" >&2; exit 2 ;;
    esac
done

ensure_jar

cd "$repo"
mkdir -p "$out"
export ASSIGN_PARITY_DIR="$out" ASSIGN_PARITY_SEED="$seed" ASSIGN_PARITY_CASES="$cases"
cargo test -q --test leader_assign -- --ignored --exact java_parity::generate_assign_cases --nocapture >&2
java -cp "$jar" "$runner" "$out/assign-cases.jsonl" "$out/assign-java.jsonl"
cargo test -q --test leader_assign -- --ignored --exact java_parity::compare_assign --nocapture
