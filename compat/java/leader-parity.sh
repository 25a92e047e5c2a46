#!/usr/bin/env bash
# Differential test of the crate's leader internals (src/leader/) against Kafka Streams'
# StreamsPartitionAssignor helpers (org.apache.kafka:kafka-streams:4.4.0).
#
#   compat/java/leader-parity.sh [--cases N] [--seed S] [--out DIR] [--fixtures N]
#       Generates N random cases of each kind (default 500, seed 1): topologies with cluster
#       metadata (tasks), clients to split over their threads (threads), and thread splits to
#       turn into member assignments (members). Runs them through the Rust code and through
#       Kafka's classes (LeaderParity tasks / threads / members), prints the counts and exits 1
#       on any difference. --fixtures N also rewrites fixtures/leader/{tasks,threads,members}-parity.jsonl
#       with N agreeing cases each.
#   compat/java/leader-parity.sh --describe
#       Rewrites fixtures/leader/*.describe.txt and *.kafka.json from the real StreamsBuilder.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
runner=org.apache.kafka.streams.processor.internals.LeaderParity

cases=500
seed=1
out="$repo/target/leader-parity"
fixtures=""
describe=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cases) cases="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --fixtures) fixtures="$2"; shift 2 ;;
        --describe) describe=1; shift ;;
        *) sed -n '2,16p' "$0" >&2; exit 2 ;;
    esac
done

ensure_jar

if [[ "$describe" == 1 ]]; then
    java -cp "$jar" "$runner" describe "$repo/fixtures/leader"
    echo "wrote fixtures/leader/*.describe.txt and *.kafka.json" >&2
    exit 0
fi

cd "$repo"
mkdir -p "$out"
export LEADER_PARITY_DIR="$out" LEADER_PARITY_SEED="$seed" LEADER_PARITY_CASES="$cases"
# kind, test target, generator, comparison
runs=("tasks leader_tasks generate compare" "threads leader_threads generate compare"
      "members leader_threads generate_members compare_members")
for run in "${runs[@]}"; do
    read -r kind target gen _ <<< "$run"
    cargo test -q --test "$target" -- --ignored --exact "$gen" --nocapture >&2
    java -cp "$jar" "$runner" "$kind" "$out/$kind-cases.jsonl" "$out/$kind-java.jsonl"
done
status=0
for run in "${runs[@]}"; do
    read -r _ target _ cmp <<< "$run"
    LEADER_PARITY_FIXTURES="$fixtures" cargo test -q --test "$target" -- --ignored --exact "$cmp" --nocapture || status=1
done
exit $status
