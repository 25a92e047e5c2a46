#!/usr/bin/env bash
# `ui` in a real browser on a real broker: a Kafka 4.4 broker of its own (compat/kafka/broker.sh,
# KAFKA_PORT default 19492), the word count of compat/e2e/java (CountApp) as a classic group (two
# instances of two threads, one standby) and as a streams group (group.protocol=streams, two
# instances). For each, `ui` serves the page and headless Chromium (compat/e2e/ui_check.py over the
# DevTools protocol) checks the grid against `describe --json`, starts a third instance, checks the
# page shows the new epoch without a reload, and writes target/ui-classic.png and
# target/ui-streams.png; for the streams group the broker is then stopped (SIGSTOP) until the page
# shows it gone and continued until the page recovers (target/ui-streams-outage.png). Any console
# error fails. Before that, the bad inputs: a non-loopback --listen without a token (exit 2), a
# group that does not exist, a broker down at start, a port in use (exit 1 each, a sentence).
#
#   compat/e2e/ui.sh        exit 0 when every check holds
#
# KSTREAMS_ASSIGNOR_BIN names a built binary (default: `cargo build`, target/debug); CHROMIUM the
# browser (default /usr/bin/chromium). Needs Java 17 and Maven (the broker's and the app's jars).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export KAFKA_PORT="${KAFKA_PORT:-19492}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19493}"
export KAFKA_WORK="${KAFKA_WORK:-$root/target/ui-broker}"
bootstrap="127.0.0.1:$KAFKA_PORT"
chromium="${CHROMIUM:-/usr/bin/chromium}"
work="$(mktemp -d)"
jar="$here/java/target/kstreams-e2e.jar"
ui_port="${UI_PORT:-18488}"
started=$SECONDS
cleanup() {
    for f in "$work"/*.pid; do [[ -f "$f" ]] && kill "$(cat "$f")" 2>/dev/null || true; done
    kill -CONT "$(cat "$KAFKA_WORK/broker.pid" 2>/dev/null)" 2>/dev/null || true
    "$root/compat/kafka/broker.sh" stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

[[ -x "$chromium" ]] || { echo "no browser at $chromium (apt-get install chromium)" >&2; exit 1; }
if [[ ! -f "$jar" ]]; then (cd "$here/java" && mvn -q -B package); fi
bin="${KSTREAMS_ASSIGNOR_BIN:-}"
if [[ -z "$bin" ]]; then
    (cd "$root" && cargo build -q --bin kstreams-assignor)
    bin="${CARGO_TARGET_DIR:-$root/target}/debug/kstreams-assignor"
fi
mkdir -p "$root/target"
java_main() { java -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$jar" io.kstreamsassignor.e2e.Main "$@"; }

# A script that starts one instance in the background, its pid in $work/APP-NAME.pid: app, name,
# endpoint port, stream threads, then extra `--config` pairs.
cat >"$work/instance.sh" <<EOF
#!/usr/bin/env bash
app="\$1" name="\$2" port="\$3" threads="\$4"; shift 4
configs=(); for c in "\$@"; do configs+=(--config "\$c"); done
nohup java -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$jar" io.kstreamsassignor.e2e.Main \\
    app --bootstrap "$bootstrap" --app-id "\$app" --instance "\$name" --threads "\$threads" --state-dir "$work/state-\$app-\$name" \\
    --endpoint "\$name.e2e.invalid:\$port" "\${configs[@]}" >"$work/\$app-\$name.out" 2>"$work/\$app-\$name.err" &
echo \$! >"$work/\$app-\$name.pid"
EOF
chmod +x "$work/instance.sh"

# Runs `ui` with $@, expects exit code $1 and the words $2 on standard error.
refuses() {
    local code="$1" words="$2"; shift 2
    set +e
    timeout 60 "$bin" ui "$@" >"$work/refused.out" 2>"$work/refused.err"
    local got=$?
    set -e
    [[ $got == "$code" ]] && grep -q -- "$words" "$work/refused.err" || {
        echo "ui $* exited $got (expected $code with \"$words\"):" >&2; cat "$work/refused.err" >&2; exit 1; }
    echo "ok: exit $got: $(grep -m1 "^error" "$work/refused.err")"
}

"$root/compat/kafka/broker.sh" start
refuses 2 "needs --token" --bootstrap "$bootstrap" --group g --listen 0.0.0.0:$ui_port
refuses 2 "at least 16 characters" --bootstrap "$bootstrap" --group g --listen 0.0.0.0:$ui_port --token short
refuses 1 "does not exist" --bootstrap "$bootstrap" --group "ui-missing-$(date +%s)" --listen 127.0.0.1:$ui_port
refuses 1 "cannot connect" --bootstrap 127.0.0.1:1 --group g --listen 127.0.0.1:$ui_port --timeout 3s
python3 -c "import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', $ui_port)); s.listen(); time.sleep(60)" &
echo $! >"$work/holder.pid"
sleep 0.5
refuses 1 "another program has the port" --bootstrap "$bootstrap" --group g --listen 127.0.0.1:$ui_port
kill "$(cat "$work/holder.pid")"; rm "$work/holder.pid"; sleep 0.3

java_main produce --bootstrap "$bootstrap" --partitions 4 --from 0 --count 4000 >/dev/null 2>"$work/produce.err"
java_main topology >"$work/topology.txt"

# Until `describe --json` of $1 shows $2 members settled (either protocol); fails after 180 s.
settle() {
    local deadline=$((SECONDS + 180))
    while ((SECONDS < deadline)); do
        if "$bin" describe --bootstrap "$bootstrap" --group "$1" --json >"$work/describe.json" 2>/dev/null &&
            python3 - "$work/describe.json" "$2" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
m = g["members"]
ok = g["groupState"] == "Stable" and len(m) == int(sys.argv[2]) and all(
    x["memberEpoch"] == g["assignmentEpoch"] if g.get("groupType") == "streams" else bool(x.get("memberAssignment")) for x in m)
sys.exit(0 if ok else 1)
PY
        then return 0; fi
        sleep 1
    done
    echo "group $1 did not settle with $2 member(s)" >&2; cat "$work/describe.json" >&2; tail -5 "$work"/*.err >&2; return 1
}

# One group through the page: kind, app id, members before and after a third instance, stream
# threads per instance, the instance configs, `ui`'s own options, then ui_check's outage arguments.
page() {
    local kind="$1" app="$2" before="$3" after="$4" threads="$5" configs="$6" options="$7"; shift 7
    "$work/instance.sh" "$app" a 8080 "$threads" $configs
    "$work/instance.sh" "$app" b 8081 "$threads" $configs
    settle "$app" "$before"
    "$bin" ui --bootstrap "$bootstrap" --group "$app" --listen "127.0.0.1:$ui_port" --interval 1 --timeout 2s \
        --config acceptable.recovery.lag=100 $options >"$work/ui-$kind.out" 2>"$work/ui-$kind.err" &
    echo $! >"$work/ui-$kind.pid"
    python3 "$here/ui_check.py" --url "http://127.0.0.1:$ui_port/" --bin "$bin" --bootstrap "$bootstrap" --group "$app" \
        --kind "$kind" --members "$before" --members-after "$after" --chromium "$chromium" \
        --rebalance "'$work/instance.sh' '$app' c 8082 $threads $configs" --screenshot "$root/target/ui-$kind.png" "$@" || {
        echo "the $kind page failed; ui's standard error:" >&2; cat "$work/ui-$kind.err" >&2; exit 1; }
    kill -INT "$(cat "$work/ui-$kind.pid")"
    wait "$(cat "$work/ui-$kind.pid")" || { echo "ui exited $? when stopped" >&2; cat "$work/ui-$kind.err" >&2; exit 1; }
    rm "$work/ui-$kind.pid"
    for i in a b c; do kill "$(cat "$work/$app-$i.pid")" 2>/dev/null || true; rm -f "$work/$app-$i.pid"; done
}

# With a token: nothing without it, a cookie for it once in the query, then the cookie or a header.
token="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
app_probe="ui-probe-$(date +%s)"
"$work/instance.sh" "$app_probe" a 8079 1
settle "$app_probe" 1
"$bin" ui --bootstrap "$bootstrap" --group "$app_probe" --listen "127.0.0.1:$ui_port" --token "$token" >/dev/null 2>"$work/ui-token.err" &
echo $! >"$work/ui-token.pid"
url="http://127.0.0.1:$ui_port"
for _ in $(seq 50); do curl -s -o /dev/null "$url/" && break; sleep 0.2; done
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[[ "$(status "$url/state.json")" == 401 && "$(status -H "Cookie: kstreams_ui_token=wrong-$token" "$url/")" == 401 ]] ||
    { echo "a request without the token was not refused" >&2; exit 1; }
curl -s -D "$work/token.head" -o /dev/null "$url/?token=$token"
grep -q "^HTTP/1.1 303" "$work/token.head" && grep -qi "^Set-Cookie: kstreams_ui_token=$token; Path=/; HttpOnly; SameSite=Strict" "$work/token.head" ||
    { cat "$work/token.head" >&2; exit 1; }
[[ "$(status -H "Cookie: kstreams_ui_token=$token" "$url/")" == 200 && "$(status -H "Authorization: Bearer $token" "$url/state.json")" == 200 ]] ||
    { echo "the token was not taken" >&2; exit 1; }
[[ "$(status -X POST -H "Authorization: Bearer $token" "$url/")" == 405 && "$(status -H "Authorization: Bearer $token" "$url/x")" == 404 ]] ||
    { echo "a POST or an unknown path was not refused" >&2; exit 1; }
echo "ok: with --token: 401 without it or with a wrong one, 303 with an HttpOnly SameSite=Strict cookie for ?token=, 200 with the cookie or a Bearer header; POST 405, unknown path 404"
kill -INT "$(cat "$work/ui-token.pid")"; wait "$(cat "$work/ui-token.pid")"; rm "$work/ui-token.pid"
kill "$(cat "$work/$app_probe-a.pid")"; rm "$work/$app_probe-a.pid"

stamp="$(date +%s)"
# Classic: two threads each, so four members, then six; the topology gives the changelogs' end
# offsets, so the warm-ups' lags.
page classic "ui-classic-$stamp" 4 6 2 "num.standby.replicas=1 acceptable.recovery.lag=100" "--topology $work/topology.txt"
broker_pid="$(cat "$KAFKA_WORK/broker.pid")"
# Streams, its page behind the token: the browser gives it once in the query.
page streams "ui-streams-$stamp" 2 3 1 "group.protocol=streams" "--token $token" --token "$token" \
    --outage-stop "kill -STOP $broker_pid" --outage-cont "kill -CONT $broker_pid"
echo "ui: all checks hold in $((SECONDS - started)) s; screenshots target/ui-classic.png, target/ui-streams.png, target/ui-streams-outage.png"
