#!/usr/bin/env bash
# `describe` of a KIP-1071 streams group on a real broker: the word count of compat/e2e/java
# (CountApp) with group.protocol=streams, two instances, then a third added while it processes.
# Each step waits for the group to settle (every member at the target assignment epoch) and
# checks what `describe` prints: the group's type, members, process ids, endpoints, current and
# target assignments, the topology's topics, 100 columns; and that a group that does not exist
# fails with exit code 1. `watch` follows the group from two instances on: it must record the scale-out
# (the epoch at which the third instance joined, tasks moved to it, each move's cause named) and
# print its summary when stopped with Ctrl-C.
#
#   KAFKA_BOOTSTRAP=127.0.0.1:19092 compat/e2e/streams-describe.sh
#
# KSTREAMS_ASSIGNOR_BIN names a built binary (default: `cargo build`, target/debug).
# Needs a running Kafka 4.4 broker (compat/kafka/broker.sh start: streams groups are on by
# default) and Java 17. Prints the describe text of each step; exit 0 when every check holds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:19092}"
app="streams-describe-$(date +%s)"
work="$(mktemp -d)"
jar="$here/java/target/kstreams-e2e.jar"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

if [[ ! -f "$jar" ]]; then (cd "$here/java" && mvn -q -B package); fi
bin="${KSTREAMS_ASSIGNOR_BIN:-}"
if [[ -z "$bin" ]]; then
    (cd "$root" && cargo build -q --bin kstreams-assignor)
    bin="$root/target/debug/kstreams-assignor"
fi
java_main() { java -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$jar" io.kstreamsassignor.e2e.Main "$@"; }

instance() { # name, endpoint port
    # In a subshell that becomes the JVM, so that the cleanup's kill reaches the JVM itself.
    (exec java -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$jar" io.kstreamsassignor.e2e.Main \
        app --bootstrap "$bootstrap" --app-id "$app" --instance "$1" --threads 1 \
        --state-dir "$work/state-$1" --endpoint "$1.e2e.invalid:$2" \
        --config group.protocol=streams >"$work/$1.out" 2>"$work/$1.err") &
    pids+=($!)
}

# Waits until `describe --json` shows a streams group of $1 members, each at the target
# assignment epoch with its target assignment; fails after 120 s.
settle() {
    local deadline=$((SECONDS + 120))
    while ((SECONDS < deadline)); do
        if "$bin" describe --bootstrap "$bootstrap" --group "$app" --json >"$work/describe.json" 2>"$work/describe.err" &&
            python3 - "$work/describe.json" "$1" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
members = g["members"]
ok = (g["groupType"] == "streams" and g["groupState"] == "Stable" and len(members) == int(sys.argv[2])
      and all(m["memberEpoch"] == g["assignmentEpoch"] and m["assignment"] == m["targetAssignment"] for m in members))
sys.exit(0 if ok else 1)
PY
        then
            return 0
        fi
        sleep 1
    done
    echo "the group did not settle with $1 member(s); last describe:" >&2
    cat "$work/describe.json" "$work/describe.err" >&2 || true
    tail -20 "$work"/*.err >&2 || true
    return 1
}

check_text() { # members
    "$bin" describe --bootstrap "$bootstrap" --group "$app" >"$work/describe.txt"
    cat "$work/describe.txt"
    python3 - "$work/describe.txt" "$work/describe.json" "$1" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
g = json.load(open(sys.argv[2]))
n = int(sys.argv[3])
lines = text.splitlines()
assert all(len(l) <= 100 for l in lines), [l for l in lines if len(l) > 100]
assert lines[0].startswith(f"streams group {g['groupId']}: state Stable"), lines[0]
assert lines[0].endswith(f", {n} member(s)"), lines[0]
for m in g["members"]:
    assert f"member {m['memberId']}" in text
    assert m["processId"] in text
    ep = m["userEndpoint"]
    assert ep and f"{ep['host']}:{ep['port']}" in text, ep
active = sorted((t["subtopologyId"], p) for m in g["members"] for t in m["assignment"]["activeTasks"] for p in t["partitions"])
assert len(active) == len(set(active)) and len(active) >= 8, active   # 2 subtopologies x 4 partitions, each once
subs = g["topology"]["subtopologies"]
assert any(t["name"].endswith("-counts-changelog") for s in subs for t in s["stateChangelogTopics"]), subs
assert "changelog topics" in text and "-counts-changelog" in text
# An unknown end offset (Long.MAX_VALUE while a member does not know it) is never a lag: no lag
# shown is above the records produced so far (4,000 in all; each makes one changelog update).
lags = [(m["memberId"], t, l) for m in g["members"] for t, l in m.get("taskLags", {}).items()]
assert all(l is None or 0 <= l <= 4000 for _, _, l in lags), lags
assert all(t in m.get("taskLagsUnknown", {}) for m in g["members"] for t, l in m.get("taskLags", {}).items() if l is None), g["members"]
assert "922337203685477" not in text and "922337203685477" not in open(sys.argv[2]).read(), "a sentinel printed as a number"
print(f"ok: {n} members, {len(active)} active tasks, each once; {len(lags)} lags reported, {sum(l is None for _, _, l in lags)} unknown")
PY
}

java_main produce --bootstrap "$bootstrap" --partitions 4 --from 0 --count 2000 >/dev/null 2>"$work/produce.err"
started=$SECONDS
instance a 8080
instance b 8081
settle 2
check_text 2
# From here `watch` follows the group (a group that does not exist yet it refuses, as describe).
"$bin" watch --bootstrap "$bootstrap" --group "$app" --interval 1 --json "$work/watch.jsonl" \
    >"$work/watch.out" 2>"$work/watch.err" &
watch_pid=$!
pids+=($watch_pid)
sleep 2
instance c 8082
java_main produce --bootstrap "$bootstrap" --from 2000 --count 2000 >/dev/null 2>>"$work/produce.err"
settle 3
check_text 3
kill -INT "$watch_pid"
wait "$watch_pid" || { echo "watch exited $?" >&2; cat "$work/watch.err" >&2; exit 1; }
cat "$work/watch.out"
python3 "$here/watch_check.py" --streams "$work/watch.jsonl" "$work/describe.json" "$work/watch.out"
# The raw StreamsGroupDescribe answer decodes and re-encodes byte for byte (STREAMS_GROUP_CAPTURE=DIR
# keeps it, as fixtures/streams-group/broker/ was made).
(cd "$root" && KAFKA_BOOTSTRAP="$bootstrap" STREAMS_GROUP_ID="$app" STREAMS_GROUP_MEMBERS=3 \
    cargo test -q --test streams_group_capture -- --ignored >"$work/capture.out" 2>&1) || { cat "$work/capture.out" >&2; exit 1; }
echo "ok: the raw StreamsGroupDescribe answer of 3 members re-encodes byte for byte"

set +e
"$bin" describe --bootstrap "$bootstrap" --group "$app-missing" 2>"$work/missing.err"
code=$?
set -e
[[ $code == 1 ]] || { echo "describe of a missing group exited $code" >&2; exit 1; }
grep -q "does not exist" "$work/missing.err" || { cat "$work/missing.err" >&2; exit 1; }
echo "ok: a missing group: $(cat "$work/missing.err") (exit 1)"
echo "streams-describe: all checks hold in $((SECONDS - started)) s"
