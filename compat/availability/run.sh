#!/usr/bin/env bash
# The availability benchmark (docs/availability.md): processing stalls and end-to-end latency of a
# Kafka Streams 4.4.0 application with a large RocksDB state, during scale-out, scale-in, a crash,
# rolling bounces and a cold start, under each assignor on both protocols, on a real Kafka 4.4.0
# broker (KRaft, 127.0.0.1:19792, controller 19793) that has the plugin jar on its classpath.
#
#   compat/availability/run.sh --quick      CI: classic scale-out, default vs optimized, small state
#   compat/availability/run.sh [--scenarios scale-out,cold-start,...] [--assignors default,optimized,
#       streams-sticky,streams-optimized,streams-optimized-probe] [--repeats N]
#   compat/availability/run.sh report       the table and charts (docs/availability/) from the saved runs
#
# Each run's JSON goes to docs/availability/runs/ (AVAIL_RESULTS), its work files to
# target/availability/<app id> (AVAIL_WORK), deleted after the run with its topics.
# E2E_PLUGIN_JAR / KSTREAMS_ASSIGNOR_BIN name a built plugin jar and binary (default: built here).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ "${1:-}" == report ]]; then exec python3 "$here/availability.py" report; fi
export AVAIL_WORK="${AVAIL_WORK:-$root/target/availability}"
export KAFKA_PORT="${KAFKA_PORT:-19792}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19793}"
export KAFKA_WORK="$AVAIL_WORK/broker"
export AVAIL_PLUGIN_JAR="${E2E_PLUGIN_JAR:-$root/plugin/target/kstreams-assignor-plugin-0.1.0.jar}"
py_pid=""
cleanup() {
  local rc=$?
  if [[ -n "$py_pid" ]] && kill -0 "$py_pid" 2>/dev/null; then kill -TERM "$py_pid" 2>/dev/null || true; wait "$py_pid" || true; fi
  "$root/compat/kafka/broker.sh" stop || true
  rm -rf "$KAFKA_WORK"
  exit "$rc"
}
trap cleanup EXIT INT TERM

started=$SECONDS
if [[ -z "${E2E_PLUGIN_JAR:-}" ]]; then mvn -q -B -f "$root/plugin/pom.xml" -DskipTests package; fi
if [[ -z "${KSTREAMS_ASSIGNOR_BIN:-}" ]]; then
  (cd "$root" && cargo build --release --quiet --bin kstreams-assignor)
  export KSTREAMS_ASSIGNOR_BIN="$root/target/release/kstreams-assignor"
fi
(cd "$here/java" && mvn -q -B package)
echo "built in $((SECONDS - started)) s"

mkdir -p "$AVAIL_WORK"
export KAFKA_EXTRA_CLASSPATH="$AVAIL_PLUGIN_JAR"
# Kafka's default initial rebalance delay (broker.sh sets 0 for its tests), so that instances
# started together join the first generation together.
export KAFKA_EXTRA_PROPERTIES="group.streams.assignors=sticky,io.kstreamsassignor.plugin.OptimizedStreamsTaskAssignor
group.initial.rebalance.delay.ms=3000"
"$root/compat/kafka/broker.sh" start
python3 "$here/availability.py" run "$@" &
py_pid=$!
wait "$py_pid"
py_pid=""
if [[ " $* " != *" --quick "* ]]; then python3 "$here/availability.py" report > /dev/null; fi
echo "availability: done in $((SECONDS - started)) s"
