#!/usr/bin/env bash
# Kafka Streams 4.4.0's rack-aware optimisation results, checked in as fixtures/rack/ for
# tests/rack_parity.rs (format: fixtures/rack/README.md).
#
#   compat/java/rack-fixtures.sh            regenerate fixtures/rack/instances.jsonl (Rust
#                                           generator, tests/rack_parity.rs) and kafka.jsonl
#                                           (RackStepRunner replay, Kafka's RackAwareTaskAssignor)
#   compat/java/rack-fixtures.sh --check    regenerate both into a temporary directory; exit 1
#                                           naming every file that differs from the committed one
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
runner=org.apache.kafka.streams.processor.internals.assignment.RackStepRunner

check=false
case "${1:-}" in
    "") ;;
    --check) check=true ;;
    *) sed -n '2,10p' "$0" >&2; exit 2 ;;
esac

ensure_jar

fixtures="$repo/fixtures/rack"
if $check; then
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
else
    out="$fixtures"
fi
cd "$repo"
RACK_FIXTURES_OUT="$out/instances.jsonl" \
    cargo test -q --test rack_parity -- --ignored --exact generate_instances >/dev/null
java -cp "$jar" "$runner" replay "$out/instances.jsonl" "$out/kafka.jsonl"

if $check; then
    status=0
    for f in instances.jsonl kafka.jsonl; do
        if ! cmp -s "$out/$f" "$fixtures/$f"; then
            echo "differs from the regenerated file: fixtures/rack/$f" >&2
            status=1
        fi
    done
    [[ $status == 0 ]] && echo "fixtures/rack: instances.jsonl and kafka.jsonl regenerate byte-identical"
    exit $status
fi
