#!/usr/bin/env bash
# Live differential test of the engine's streams sticky assignor (engine::streams::assign_sticky)
# against the broker's: the target-assignment path of org.apache.kafka:kafka-group-coordinator
# 4.4.0 (TargetAssignmentBuilder with StickyTaskAssignor, then AssignmentRefiner when warm-ups are
# enabled), all groups in one JVM.
#
#   compat/java/streams-parity.sh [--groups N] [--seed S] [--out DIR]
#       N random groups (default 2000, seed 1) through both; prints the counts and exits 1 on any
#       difference (the differing groups go to DIR/diffs/, DIR defaults to target/streams-parity).
#   compat/java/streams-parity.sh --record
#       Rewrites fixtures/streams-sticky/cases.jsonl: 300 small groups of seed 21 with Java's
#       answers (replayed without Java by tests/streams_sticky.rs).
#   compat/java/streams-parity.sh --check
#       Records the same into DIR/record/ and fails unless it equals the committed file byte for
#       byte.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
module="$here/streams-sticky"
jar="$module/target/kstreams-streams-sticky-compat.jar"
runner=io.kstreamsassignor.compat.streams.StickyParityRunner
fixture="$repo/fixtures/streams-sticky/cases.jsonl"

groups=2000
seed=1
out="$repo/target/streams-parity"
mode=run
while [[ $# -gt 0 ]]; do
    case "$1" in
        --groups) groups="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --record) mode=record; shift ;;
        --check) mode=check; shift ;;
        *) sed -n '2,17p' "$0" >&2; exit 2 ;;
    esac
done

if [[ ! -f "$jar" ]] || [[ -n "$(find "$module/pom.xml" "$module/src" -newer "$jar" -print -quit)" ]]; then
    echo "building $jar" >&2
    mvn -q -B -Dstyle.color=never -f "$module/pom.xml" package -DskipTests >&2
fi
classpath="$jar:$(cat "$module/target/classpath.txt")"

cd "$repo"
run=(cargo test -q --release --test streams_sticky_differential -- --ignored --exact)
if [[ "$mode" == run ]]; then
    mkdir -p "$out"
    STREAMS_DIR="$out" STREAMS_SEED="$seed" STREAMS_GROUPS="$groups" "${run[@]}" generate >&2
    java -Xmx1g -cp "$classpath" "$runner" run "$out/groups.jsonl" "$out/java.jsonl"
    STREAMS_DIR="$out" "${run[@]}" compare --nocapture | grep -E '^StickyTaskAssignor'
    exit "${PIPESTATUS[0]}"
fi

dir="$out/record"
mkdir -p "$dir"
STREAMS_DIR="$dir" STREAMS_SEED=21 STREAMS_GROUPS=300 STREAMS_SMALL=1 "${run[@]}" generate >&2
java -Xmx1g -cp "$classpath" "$runner" run "$dir/groups.jsonl" "$dir/java.jsonl"
STREAMS_DIR="$dir" STREAMS_RECORD="$dir/cases.jsonl" "${run[@]}" compare --nocapture | grep -E '^StickyTaskAssignor'
if [[ "$mode" == record ]]; then
    mkdir -p "$(dirname "$fixture")"
    cp "$dir/cases.jsonl" "$fixture"
    echo "wrote $fixture ($(wc -l < "$fixture") cases)"
elif cmp -s "$dir/cases.jsonl" "$fixture"; then
    echo "fixtures/streams-sticky/cases.jsonl regenerates byte-identical ($(wc -l < "$fixture") cases)"
else
    echo "fixtures/streams-sticky/cases.jsonl differs from a fresh recording ($dir/cases.jsonl)" >&2
    exit 1
fi
