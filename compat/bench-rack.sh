#!/usr/bin/env bash
# Rack-aware optimisation (KIP-925) on 1,000 tasks × 30 clients and 10,000 tasks × 100 clients,
# 3 racks: our optimize_rack_aware (criterion, benches/rack.rs `rack_step`) and Kafka 4.4.0's
# RackAwareTaskAssignor (compat/java RackStepRunner) on the same instance files in one run, with
# the costs both reach and the ratio.
#
#   compat/bench-rack.sh [--java-seconds S] [--java-timeout T] [--quick]
#       S: Java's time budget per step and case (default 60; warm-up and median as documented in
#       RackStepRunner). T: a Java run still going after T seconds (default 600) is stopped and
#       reported as "> T s" (Kafka's cycle cancelling takes hours on the large case).
#       --quick: shorter criterion runs.
#
# The bench writes the instances (target/rack-bench/<tasks>x<clients>-<strategy>.json), reads
# them back and measures on what it read; Java reads the same files. Steps: `active` is
# optimizeActiveTasks on the actives alone (round-robin start), `standby` optimizeStandbyTasks on
# those actives plus one standby per task on a seeded-random other client; the standby step does
# not depend on the strategy and is timed on the min_traffic file.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
java_seconds=60
java_timeout=600
crit=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --java-seconds) java_seconds="$2"; shift 2 ;;
        --java-timeout) java_timeout="$2"; shift 2 ;;
        --quick) crit=(--warm-up-time 1 --measurement-time 3); shift ;;
        *) sed -n '2,19p' "$0" >&2; exit 2 ;;
    esac
done

jar="$repo/compat/java/target/kstreams-compat.jar"
if [[ ! -f "$jar" ]] || [[ -n "$(find compat/java/pom.xml compat/java/src -newer "$jar" -print -quit)" ]]; then
    (cd compat/java && mvn -q -B -Dstyle.color=never package) >&2
fi
dir="$repo/target/rack-bench"
rm -rf "$dir"
RACK_BENCH_DIR="$dir" cargo bench --bench rack -- rack_step "${crit[@]}" >&2

runner=org.apache.kafka.streams.processor.internals.assignment.RackStepRunner
java_out="$dir/java.jsonl"
: > "$java_out"
for case in 1000x30 10000x100; do
    for run in "active min_traffic" "active balance_subtopology" "standby min_traffic"; do
        set -- $run
        file="$dir/$case-$2.json"
        echo "java: $1 step on $(basename "$file")" >&2
        if ! timeout "$java_timeout" java ${JAVA_OPTS:-} -cp "$jar" "$runner" bench "$java_seconds" "$1" "$file" >> "$java_out"; then
            printf '{"file":"%s","step":"%s","timeout":%s}\n' "$(basename "$file")" "$1" "$java_timeout" >> "$java_out"
        fi
    done
done

python3 - "$dir" "${CARGO_TARGET_DIR:-$repo/target}" <<'PY'
import json, pathlib, sys
d = pathlib.Path(sys.argv[1])
java = {(j["file"], j["step"]): j for j in map(json.loads, filter(None, (d / "java.jsonl").read_text().splitlines()))}
crit = pathlib.Path(sys.argv[2]) / "criterion"
print(f"{'case':10} {'step':28} {'rust ms':>9} {'java ms':>12} {'java runs':>9} {'ratio':>9}  costs (rust / java)")
for case in ["1000x30", "10000x100"]:
    for step, strategy in [("active", "min_traffic"), ("active", "balance_subtopology"), ("standby", "min_traffic")]:
        name = f"active_{strategy}" if step == "active" else "standby"
        est = json.loads((crit / f"rack_step_{case}" / name / "new" / "estimates.json").read_text())
        rust_ms = est["median"]["point_estimate"] / 1e6
        rust_cost = json.loads((d / f"{case}-{strategy}.rust.json").read_text())[step]
        j = java[(f"{case}-{strategy}.json", step)]
        label = f"{step} {strategy}" if step == "active" else "standby"
        if "timeout" in j:
            print(f"{case:10} {label:28} {rust_ms:9.1f} {'> ' + str(j['timeout'] * 1000):>12} {'stopped':>9} {'> ' + format(j['timeout'] * 1000 / rust_ms, '.0f'):>8}x  {rust_cost} / -")
        else:
            same = "equal" if rust_cost == j["cost"] else "DIFFERENT"
            print(f"{case:10} {label:28} {rust_ms:9.1f} {j['medianMs']:12.1f} {j['iterations']:9d} {j['medianMs'] / rust_ms:8.0f}x  {rust_cost} / {j['cost']} {same}")
PY
