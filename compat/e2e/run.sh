#!/usr/bin/env bash
# End to end in a real Kafka cluster (see run.py for the scenario): builds our binary, the Java
# Streams application and the broker classpath, starts a fresh single-node KRaft broker, captures
# the broker port with tshark when it is installed, runs the scenario, decodes the JoinGroup member
# metadata captured on the wire with `kstreams-assignor decode`, and stops every process it started.
#
#   compat/e2e/run.sh            (work files under compat/e2e/target/run)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${E2E_WORK:-$here/target/run}"
export E2E_WORK="$work" KAFKA_WORK="$work/broker" KAFKA_PORT="${KAFKA_PORT:-19092}"
tshark_pid=""

cleanup() {
  local rc=$?
  [[ -n "$tshark_pid" ]] && kill "$tshark_pid" 2>/dev/null && wait "$tshark_pid" 2>/dev/null
  "$root/compat/kafka/broker.sh" stop || true
  exit "$rc"
}
trap cleanup EXIT INT TERM

(cd "$root" && cargo build --release --quiet)
(cd "$here/java" && mvn -q -B package)
rm -rf "$work"; mkdir -p "$work"
"$root/compat/kafka/broker.sh" start

if command -v tshark >/dev/null 2>&1; then
  tshark -q -i lo -f "tcp port $KAFKA_PORT" -w "$work/capture.pcapng" >"$work/tshark.log" 2>&1 &
  tshark_pid=$!
  sleep 2
fi

[[ -n "$tshark_pid" ]] || echo "tshark is not installed: the wire capture is skipped"
python3 "$here/run.py"

if [[ -n "$tshark_pid" ]]; then
  sleep 1; kill "$tshark_pid"; wait "$tshark_pid" 2>/dev/null || true; tshark_pid=""
  # JoinGroup requests (api key 11) carry each member's subscription as protocol metadata;
  # SyncGroup (14) requests from the leader and responses carry the members' assignments.
  for what in "11 protocol_metadata" "14 member_assignment"; do
    set -- $what
    tshark -r "$work/capture.pcapng" -d "tcp.port==$KAFKA_PORT,kafka" -Y "kafka.api_key == $1" \
      -T fields -e "kafka.$2" 2>>"$work/tshark-read.log" | tr ',' '\n' | grep -E '^[0-9a-f]+$' \
      | sort -u >"$work/captured-$2.txt" || true
    n="$(grep -c . "$work/captured-$2.txt" || true)"
    if [[ "$n" -eq 0 ]]; then
      echo "no kafka.$2 found in the capture; see $work/tshark-read.log" >&2
      exit 1
    fi
    bad=0
    while read -r hex; do
      "$root/target/release/kstreams-assignor" decode --compact --hex "$hex" >>"$work/decoded-$2.jsonl" || bad=$((bad + 1))
    done <"$work/captured-$2.txt"
    echo "tshark: $n distinct kafka.$2 values captured, $((n - bad)) decoded, $bad failed"
    [[ "$bad" -eq 0 ]] || exit 1
    echo "first one: $(head -1 "$work/decoded-$2.jsonl" | cut -c1-400)"
  done
fi
