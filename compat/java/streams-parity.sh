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
#       Rewrites fixtures/streams-sticky/cases-NN.jsonl: 300 small groups of seed 21 with Java's
#       answers, 50 a file (replayed without Java by tests/streams_sticky.rs).
#   compat/java/streams-parity.sh --check
#       Records the same into DIR/record/ and fails unless it equals the committed files byte for
#       byte.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
module="$here/streams-sticky"
jar="$module/target/kstreams-streams-sticky-compat.jar"
runner=io.kstreamsassignor.compat.streams.StickyParityRunner
fixtures="$repo/fixtures/streams-sticky"

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
rm -rf "$dir/split" && mkdir -p "$dir/split"
split -l 50 -d -a 2 --additional-suffix=.jsonl "$dir/cases.jsonl" "$dir/split/cases-"
if [[ "$mode" == record ]]; then
    mkdir -p "$fixtures"
    rm -f "$fixtures"/cases-*.jsonl
    cp "$dir"/split/cases-*.jsonl "$fixtures/"
    echo "wrote $(cat "$fixtures"/cases-*.jsonl | wc -l) cases to $fixtures"
elif diff -rq -x README.md "$dir/split" "$fixtures" > /dev/null; then
    echo "fixtures/streams-sticky regenerates byte-identical ($(cat "$fixtures"/cases-*.jsonl | wc -l) cases)"
else
    echo "fixtures/streams-sticky differs from a fresh recording ($dir/split):" >&2
    diff -rq -x README.md "$dir/split" "$fixtures" >&2 || true
    exit 1
fi
