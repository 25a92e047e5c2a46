#!/usr/bin/env bash
# End to end in a real Kafka cluster with the KIP-924 plugin (see plugin.py for the scenario): only
# Java Kafka Streams instances, once with task.assignor.class = our plugin, once with Kafka's
# default assignor, then a short run whose plugin jar carries a native library that cannot load.
# Builds our binary, the Java application and the plugin jar, starts a fresh KRaft broker for each
# run (port 19292, controller 19293), prints the figures of both runs and stops all it started.
#
#   compat/e2e/plugin.sh          (work files under compat/e2e/target/plugin)
#   E2E_STANDIN=1 compat/e2e/plugin.sh   Kafka's StickyTaskAssignor in place of the plugin, no fault run
#   E2E_PLUGIN_JAR=JAR compat/e2e/plugin.sh   a plugin jar built elsewhere (no Maven build of plugin/)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${E2E_WORK:-$here/target/plugin}"
export E2E_WORK="$work" KAFKA_PORT="${KAFKA_PORT:-19292}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19293}"
build_plugin=1; [[ -n "${E2E_PLUGIN_JAR:-}" ]] && build_plugin=0
plugin_jar="${E2E_PLUGIN_JAR:-$root/plugin/target/kstreams-assignor-plugin-0.1.0.jar}"
export E2E_PLUGIN_JAR="$plugin_jar"
native_entry="native/linux-x86_64/libkstreams_assignor_jni.so"
py_pid=""

cleanup() {
  local rc=$?
  if [[ -n "$py_pid" ]] && kill -0 "$py_pid" 2>/dev/null; then
    kill -INT "$py_pid" 2>/dev/null || true
    wait "$py_pid" 2>/dev/null || true
  fi
  [[ -n "${KAFKA_WORK:-}" ]] && "$root/compat/kafka/broker.sh" stop || true
  exit "$rc"
}
trap cleanup EXIT INT TERM

started=$SECONDS
(cd "$root" && cargo build --release --quiet --bin kstreams-assignor)
(cd "$here/java" && mvn -q -B package)
runs=(plugin default)
if [[ "${E2E_STANDIN:-}" != 1 ]]; then
  if [[ "$build_plugin" == 1 ]]; then
    mvn -q -B -f "$root/plugin/pom.xml" -DskipTests package   # its unit tests are not this scenario
  fi
  [[ -f "$plugin_jar" ]] || { echo "the plugin build made no $plugin_jar" >&2; exit 1; }
  runs+=(fault)
fi
if [[ -n "${E2E_RUNS:-}" ]]; then read -ra runs <<<"$E2E_RUNS"; fi   # e.g. E2E_RUNS="plugin fault"
"$root/compat/kafka/broker.sh" classpath >/dev/null
echo "built in $((SECONDS - started)) s"

rm -rf "$work"; mkdir -p "$work"
if [[ " ${runs[*]} " == *" fault "* ]]; then
  # The same jar with garbage in place of its native library.
  unzip -l "$plugin_jar" "$native_entry" >/dev/null || { echo "$plugin_jar has no $native_entry" >&2; exit 1; }
  mkdir -p "$work/fault-jar/tree/$(dirname "$native_entry")"
  cp "$plugin_jar" "$work/fault-jar/kstreams-assignor-plugin-broken.jar"
  head -c 65536 /dev/urandom >"$work/fault-jar/tree/$native_entry"
  (cd "$work/fault-jar/tree" && zip -q "$work/fault-jar/kstreams-assignor-plugin-broken.jar" "$native_entry")
  export E2E_FAULT_JAR="$work/fault-jar/kstreams-assignor-plugin-broken.jar"
fi

for run in "${runs[@]}"; do
  export KAFKA_WORK="$work/broker-$run"
  "$root/compat/kafka/broker.sh" start
  python3 "$here/plugin.py" run "$run" &
  py_pid=$!
  wait "$py_pid"
  py_pid=""
  "$root/compat/kafka/broker.sh" stop
done

echo
python3 "$here/plugin.py" table | tee "$work/table.txt"
echo "total $((SECONDS - started)) s"
echo "E2E PLUGIN PASSED"
