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
# Broker responses: message index (see `fuzzing::response`), version, then the frame body.
mkdir -p corpus/response
printf '\x04\x04\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x1b\x00' > corpus/response/heartbeat-v4
printf '\x06\x01\x00\x00\x00\x07\x00\x00\x00\x01\x00\x00\x00\x01\x00\x01h\x00\x00\x23\x84\xff\xff\x00\x00\x00\x01\x00\x00\x00\x00' > corpus/response/metadata-v1
printf '\x09\x05\x00\x00\x00\x07\x00\x00\x00\x00\x00\x02\x00\x00\x02g\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00' > corpus/response/describe-groups-v5
# StreamsGroupDescribe bodies: the selector byte (see `fuzzing::streams_group_describe`: 0/2
# response v0/v1, 1/3 request v0/v1), then a golden body of fixtures/streams-group.
mkdir -p corpus/streams_group_describe
for f in ../fixtures/streams-group/{request,response,broker}/v*/*.bin; do
    kind="${f#../fixtures/streams-group/}"; v="${kind#*/v}"; v="${v%%/*}"
    case "$kind" in request/*) sel=$((v * 2 + 1)) ;; *) sel=$((v * 2)) ;; esac
    { printf "\\x0$sel"; cat "$f"; } > "corpus/streams_group_describe/$(echo "$kind" | tr / _)"
done
# StreamsGroupHeartbeat bodies, behind the same selector byte, from fixtures/streams-heartbeat.
mkdir -p corpus/streams_group_heartbeat
for f in ../fixtures/streams-heartbeat/{request,response}/v*/*.bin; do
    kind="${f#../fixtures/streams-heartbeat/}"; v="${kind#*/v}"; v="${v%%/*}"
    case "$kind" in request/*) sel=$((v * 2 + 1)) ;; *) sel=$((v * 2)) ;; esac
    { printf "\\x0$sel"; cat "$f"; } > "corpus/streams_group_heartbeat/$(echo "$kind" | tr / _)"
done
# Plugin requests: version 1, application id "a", nowMs, dump flag, 1 config, 2 tasks (one stateful
# with a source partition on rack "r"), 1 client with a rack, a tag, previous tasks and lags.
mkdir -p corpus/plugin_request
printf '\x00\x00\x00\x01\x00\x00\x00\x01a\x00\x00\x00\x00\x00\x00\x03\xe8\x01''\x00\x00\x00\x01\x00\x00\x00\x14num.standby.replicas\x00\x00\x00\x011''\x00\x00\x00\x02''\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x01\x00\x00\x00\x01\x00\x00\x00\x01r''\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00''\x00\x00\x00\x01''\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00\x01r''\x00\x00\x00\x01\x00\x00\x00\x01z\x00\x00\x00\x011''\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00''\x00\x00\x00\x00''\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xfe' > corpus/plugin_request/one-client
