#!/usr/bin/env bash
# Differential test of the KIP-924 plugin (plugin/) on Kafka Streams' own classes.
#
#   compat/plugin/differential.sh [--cases N] [--seed S] [--kafka VERSION|all] [--out DIR] [--show K]
#       Builds the native library, the CLI and the plugin jar when they are missing or stale,
#       generates N random ApplicationStates (default 200, seed 1) with the classes of
#       kafka-streams VERSION (default 4.4.0; `all`: 3.8.1 3.9.1 4.0.1 4.4.0 in turn), runs each
#       through OptimizedTaskAssignor with a dump folder and each dump through
#       `kstreams-assignor assign --assignor optimized --compact --input`, and compares the two
#       per client: active tasks, standby tasks (warm-ups and spares included), and the follow-up
#       deadline against the CLI's probing rebalance; checks the memory rule of docs/plugin.md on
#       the cases built for it. Prints the first K differences in full (default 3) and exits 1 on
#       any difference, invalid assignment, fallback or memory-rule breach; with `all`, also when
#       the dumps of one seed differ between releases.
#   compat/plugin/differential.sh --boundary [--warmups N] [--kafka VERSION]
#       The boundary cost: one state of 1,000 clients (4 threads each) and 10,000 tasks with
#       1 standby; times RequestWriter + native call + ResponseReader against the engine time
#       the response reports, median of 9 runs after the warm-ups (one application rebalancing
#       a minute apart, so the engine recalls the previous rebalance as in production).
#
# KSTREAMS_ASSIGNOR_CLI and KSTREAMS_ASSIGNOR_JNI name a prebuilt CLI and native library
# instead of the ones built here (the library then is loaded by path, not from the jar).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
runner=org.apache.kafka.streams.processor.internals.PluginDifferential

cases=200
seed=1
kafka=4.4.0
out="$repo/target/plugin-differential"
show=3
warmups=3
boundary=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cases) cases="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --kafka) kafka="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --show) show="$2"; shift 2 ;;
        --boundary) boundary=1; shift ;;
        --warmups) warmups="$2"; shift 2 ;;
        *) sed -n '2,21p' "$0" >&2; exit 2 ;;
    esac
done
if [[ "$kafka" == all ]]; then
    versions=(3.8.1 3.9.1 4.0.1 4.4.0)
else
    versions=("$kafka")
fi

# True when $1 is missing or older than any of the other paths.
stale() {
    local built="$1"; shift
    [[ ! -f "$built" ]] || [[ -n "$(find "$@" -newer "$built" -print -quit 2>/dev/null)" ]]
}

cli="${KSTREAMS_ASSIGNOR_CLI:-}"
library="${KSTREAMS_ASSIGNOR_JNI:-}"
(
    cd "$repo"
    if [[ -z "$library" ]]; then
        echo "building the native library (cargo build --release -p kstreams-assignor-jni)" >&2
        cargo build -q --release -p kstreams-assignor-jni >&2
    fi
    if [[ -z "$cli" ]]; then
        echo "building the CLI (cargo build --release --bin kstreams-assignor)" >&2
        cargo build -q --release --bin kstreams-assignor >&2
    fi
)
cli="${cli:-$target/release/kstreams-assignor}"
native="${library:-$target/release/libkstreams_assignor_jni.so}"

plugin_jar="$repo/plugin/target/kstreams-assignor-plugin-0.1.0.jar"
if stale "$plugin_jar" "$repo/plugin/pom.xml" "$repo/plugin/src" "$native"; then
    echo "building $plugin_jar" >&2
    mvn -q -B -Dstyle.color=never -f "$repo/plugin/pom.xml" package -DskipTests \
        -Dnative.skip=true -Dnative.file="$native" >&2
fi

status=0
for v in "${versions[@]}"; do
    build="$here/target/kafka-$v"
    jar="$build/kstreams-plugin-differential-0.1.0.jar"
    if stale "$jar" "$here/pom.xml" "$here/src" "$plugin_jar"; then
        echo "building $jar (kafka-streams $v)" >&2
        mvn -q -B -Dstyle.color=never -f "$here/pom.xml" package -Dkafka.version="$v" >&2
    fi
    classpath="$jar:$(cat "$build/classpath.txt"):$plugin_jar"
    # Kafka's own warnings (offsets past the end, rack awareness off) are expected here.
    java_opts=(-Xmx4g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.org.apache.kafka=error
        -Dorg.slf4j.simpleLogger.showThreadName=false)
    lib_opt=()
    [[ -n "$library" ]] && lib_opt=(--library "$library")
    echo "== kafka-streams $v ==" >&2
    if [[ "$boundary" == 1 ]]; then
        java "${java_opts[@]}" -cp "$classpath" "$runner" boundary --warmups "$warmups" "${lib_opt[@]}" || status=1
    else
        rm -rf "$out/kafka-$v"
        mkdir -p "$out/kafka-$v"
        java "${java_opts[@]}" -cp "$classpath" "$runner" run --cases "$cases" --seed "$seed" --cli "$cli" \
            --out "$out/kafka-$v" --show "$show" "${lib_opt[@]}" || status=1
    fi
done
# The same seed gives the same states whatever the release, so the plugin's dumps must match too.
if [[ "$boundary" == 0 && ${#versions[@]} -gt 1 ]]; then
    first="${versions[0]}"
    for v in "${versions[@]:1}"; do
        if diff -rq "$out/kafka-$first" "$out/kafka-$v" --exclude='*.cli-stderr.txt' >/dev/null; then
            echo "the dumps of kafka-streams $v are byte for byte those of $first"
        else
            echo "the dumps of kafka-streams $v differ from those of $first:"
            diff -rq "$out/kafka-$first" "$out/kafka-$v" --exclude='*.cli-stderr.txt' | head -5
            status=1
        fi
    done
fi
exit "$status"
