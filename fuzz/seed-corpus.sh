#!/usr/bin/env bash
# Seeds each fuzz target's corpus from the Java golden fixtures.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
seed() { # target, fixture directory under fixtures/wire (empty: all)
    mkdir -p "corpus/$1"
    (cd ../fixtures/wire && find ./$2 -name '*.bin') | while read -r f; do
        cp "../fixtures/wire/$f" "corpus/$1/$(echo "${f#./}" | tr / _)"
    done
}
seed subscription_info subscription
seed assignment_info assignment
seed subscription_envelope subscription-envelope
seed assignment_envelope assignment-envelope
seed inspect ""
mkdir -p corpus/java_string
printf 'a\xc0\x80\xed\xa0\xbd\xed\xb8\x80' > corpus/java_string/modified-utf8
printf 'plain ascii' > corpus/java_string/ascii
mkdir -p corpus/topology
for f in ../fixtures/leader/*.describe.txt ../fixtures/leader/example.topology.json; do
    { printf '\x03'; cat "$f"; } > "corpus/topology/$(basename "$f")"
done
