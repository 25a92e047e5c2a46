#!/usr/bin/env bash
# The whole leader step on one large group, ours and Kafka's in one run: `leader::assign`
# (criterion, benches/leader.rs) and Kafka Streams 4.4.0's `StreamsPartitionAssignor.assign`
# (compat/java AssignParity --time), on 1,000 members as 250 processes x 4 threads, 10,000
# partitions (5,000 of text-lines and 5,000 of its repartition topic: 10,000 tasks), 1 standby,
# a tenth of the processes new (leader::testdata::large_group). First checks that both leaders
# give every member the same bytes.
#
#   compat/bench-leader.sh [--runs N]     (Java: N timed runs after the first, default 9)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/java/common.sh"
runs=9
if [[ "${1:-}" == "--runs" ]]; then runs="$2"; fi
ensure_jar
cd "$repo"
out="$repo/target/bench-leader"
mkdir -p "$out"
export ASSIGN_PARITY_DIR="$out"
cargo test -q --release --test leader_assign -- --ignored --exact java_parity::generate_large_case >&2
java -Xms2g -Xmx6g -cp "$jar" org.apache.kafka.streams.processor.internals.AssignParity \
    "$out/large-case.jsonl" "$out/large-java.jsonl" --time "$runs" > "$out/java-timing.json"
cargo test -q --release --test leader_assign -- --ignored --exact java_parity::compare_large_case --nocapture 2>&1 | grep "large case" >&2
cargo bench --bench leader >&2
python3 - "$out/java-timing.json" <<'PY'
import json, pathlib, sys
java = json.loads(pathlib.Path(sys.argv[1]).read_text().splitlines()[0])
est = json.loads(pathlib.Path("target/criterion/leader/assign_250x4_10000-partitions_1-standby/new/estimates.json").read_text())
rust_ms = est["median"]["point_estimate"] / 1e6
print(f"leader assign, 250 processes x 4 threads, 10,000 partitions, 1 standby")
print(f"  Kafka StreamsPartitionAssignor.assign  median {java['medianMs']:8.1f} ms  (runs {java['runsMs']})")
print(f"  leader::assign                          median {rust_ms:8.1f} ms")
print(f"  speed-up {java['medianMs'] / rust_ms:.1f}x")
PY
