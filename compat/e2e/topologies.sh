#!/usr/bin/env bash
# A differential test over real topologies on a real Kafka 4.4.0 broker (KRaft, loopback): ten
# Kafka Streams applications of the Java harness (joins with re-keying, a windowed stream-stream
# join, a foreign-key join, windowed and session aggregations, suppress, a table groupBy, a global
# table, named processors, independent sub-topologies). For each: `join --protocol streams` beside
# a Java instance of the application is accepted and takes tasks, `lead` leads its Java instance
# on the classic protocol, and the describe() text without one sub-topology is refused by both;
# the Java output is exact. The checks are in topologies.py; it prints a summary table and writes
# it to $E2E_WORK/topologies.json.
#
#   compat/e2e/topologies.sh
#
# KSTREAMS_ASSIGNOR_BIN names a built binary (default: cargo build --release). Starts its own
# broker on KAFKA_PORT (default 19692) with short streams-group session timeouts. E2E_APPS
# (comma-separated) runs some applications only; E2E_PARALLEL (default 2) how many at once.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export E2E_WORK="${E2E_WORK:-$here/target/topologies}"
export KAFKA_PORT="${KAFKA_PORT:-19692}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19693}"
export KAFKA_WORK="$E2E_WORK/broker" E2E_SESSION_MS="${E2E_SESSION_MS:-10000}"
cleanup() {
  local rc=$?
  "$root/compat/kafka/broker.sh" stop || true
  exit "$rc"
}
trap cleanup EXIT INT TERM

started=$SECONDS
(cd "$here/java" && mvn -q -B package)
if [[ -z "${KSTREAMS_ASSIGNOR_BIN:-}" ]]; then
  (cd "$root" && cargo build --release --quiet --bin kstreams-assignor)
  export KSTREAMS_ASSIGNOR_BIN="$root/target/release/kstreams-assignor"
fi
export E2E_JAR="$here/java/target/kstreams-e2e.jar"
rm -rf "$E2E_WORK"; mkdir -p "$E2E_WORK"
export KAFKA_EXTRA_PROPERTIES="group.streams.min.session.timeout.ms=6000
group.streams.session.timeout.ms=$E2E_SESSION_MS
group.streams.min.heartbeat.interval.ms=1000
group.streams.heartbeat.interval.ms=1000"
"$root/compat/kafka/broker.sh" start
export KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
rc=0
python3 "$here/topologies.py" || rc=$?
echo "topologies.sh: done in $((SECONDS - started)) s"
exit "$rc"
