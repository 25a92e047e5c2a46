#!/usr/bin/env bash
# Rust members in a KIP-1071 streams group beside Java Kafka Streams members on a real Kafka 4.4.0
# broker (KRaft, loopback): `kstreams-assignor join --protocol streams` joins, leaves, is killed,
# is fenced after a pause past the session timeout, rejoins with its group.instance.id, and rides
# out a broker pause and a restart; describe agrees with what each member printed, the Java output stays exact.
# The checks are in streams_member.py.
#
#   compat/e2e/streams-member.sh
#
# KSTREAMS_ASSIGNOR_BIN names a built binary (default: cargo build --release). Starts its own
# broker on KAFKA_PORT (default 19592) with short streams-group session timeouts.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export E2E_WORK="${E2E_WORK:-$here/target/streams-member}"
export KAFKA_PORT="${KAFKA_PORT:-19592}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19593}"
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
group.streams.heartbeat.interval.ms=2000"
"$root/compat/kafka/broker.sh" start
export KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT" KAFKA_BROKER_SCRIPT="$root/compat/kafka/broker.sh"
python3 "$here/streams_member.py"
echo "streams-member.sh: done in $((SECONDS - started)) s"
