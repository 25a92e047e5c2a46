#!/usr/bin/env bash
# The broker's streams assignors on a real Kafka 4.4.0 broker: `sticky` and the jar's
# `optimized` (OptimizedStreamsTaskAssignor, loaded through group.streams.assignors, chosen per
# group by streams.assignor.name), each with a CountApp group (group.protocol=streams) scaling out
# from one instance to three; exact output, task moves and warm-ups compared in a table
# (compat/e2e/streams_assignor.py).
#
#   compat/e2e/streams-assignor.sh
#
# Starts its own broker (KAFKA_PORT, default 19392) with the plugin jar on its classpath, unless
# KAFKA_BOOTSTRAP names one started with those settings (then KAFKA_BROKER_LOG names its log):
#   KAFKA_EXTRA_CLASSPATH=plugin/target/kstreams-assignor-plugin-0.1.0.jar \
#   KAFKA_EXTRA_PROPERTIES=$'group.streams.assignors=sticky,io.kstreamsassignor.plugin.OptimizedStreamsTaskAssignor\ngroup.streams.acceptable.recovery.lag=100' \
#   compat/kafka/broker.sh start
# E2E_PLUGIN_JAR names a built jar (default: built here, tests skipped); KSTREAMS_ASSIGNOR_BIN
# a built binary (default: cargo build --release).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export E2E_WORK="${E2E_WORK:-$here/target/streams-assignor}"
jar="${E2E_PLUGIN_JAR:-$root/plugin/target/kstreams-assignor-plugin-0.1.0.jar}"
own_broker=0
cleanup() {
  local rc=$?
  if [[ "$own_broker" == 1 ]]; then "$root/compat/kafka/broker.sh" stop || true; fi
  exit "$rc"
}
trap cleanup EXIT INT TERM

started=$SECONDS
if [[ -z "${E2E_PLUGIN_JAR:-}" ]]; then mvn -q -B -f "$root/plugin/pom.xml" -DskipTests package; fi
[[ -f "$jar" ]] || { echo "no plugin jar at $jar" >&2; exit 1; }
(cd "$here/java" && mvn -q -B package)
if [[ -z "${KSTREAMS_ASSIGNOR_BIN:-}" ]]; then
  (cd "$root" && cargo build --release --quiet --bin kstreams-assignor)
  export KSTREAMS_ASSIGNOR_BIN="$root/target/release/kstreams-assignor"
fi
KAFKA_CLASSPATH="$("$root/compat/kafka/broker.sh" classpath)"
export KAFKA_CLASSPATH E2E_JAR="$here/java/target/kstreams-e2e.jar"
echo "built in $((SECONDS - started)) s"

rm -rf "$E2E_WORK"; mkdir -p "$E2E_WORK"
if [[ -z "${KAFKA_BOOTSTRAP:-}" ]]; then
  export KAFKA_PORT="${KAFKA_PORT:-19392}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19393}"
  export KAFKA_WORK="$E2E_WORK/broker"
  export KAFKA_EXTRA_CLASSPATH="$jar"
  # A copy is caught up within 100 records (10,000 by default, more than these groups' whole
  # state), so that optimized has warm-ups to wait for.
  export KAFKA_EXTRA_PROPERTIES="group.streams.assignors=sticky,io.kstreamsassignor.plugin.OptimizedStreamsTaskAssignor
group.streams.acceptable.recovery.lag=100"
  own_broker=1
  "$root/compat/kafka/broker.sh" start
  export KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT" KAFKA_BROKER_LOG="$KAFKA_WORK/broker.log"
fi
: "${KAFKA_BROKER_LOG:?KAFKA_BROKER_LOG must name the log of the broker at $KAFKA_BOOTSTRAP}"
export KAFKA_BROKER_LOG
python3 "$here/streams_assignor.py"
echo "streams-assignor.sh: done in $((SECONDS - started)) s"
