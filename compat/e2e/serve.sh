#!/usr/bin/env bash
# `serve` on a real broker, scraped by a real Prometheus and seen in a real browser: a Kafka 4.4
# broker of its own (compat/kafka/broker.sh, KAFKA_PORT default 19792), the word count of
# compat/e2e/java (CountApp) as a classic group (two instances, one standby) and as a streams
# group (group.protocol=streams, two instances), and a one-instance classic group to delete.
# `serve` runs over HTTPS (a CA and a certificate made here with openssl) with a bearer token;
# Prometheus (Debian's `prometheus`) scrapes it every second with the alert rules of
# deploy/prometheus/kstreams-alerts.yml, their `for:` cut to 5 s. compat/e2e/serve_check.py then
# checks Prometheus against `describe --json`, `promtool check metrics`, the home page in headless
# Chromium (a group created while it is open appears without a reload), the tasks-without-an-
# active alert firing and resolving, a group deleted while followed, and the broker paused.
# Before that, the bad inputs: a non-loopback --listen without a token, a bad --groups, a
# certificate that cannot be read, and a broker that cannot be reached (serve keeps answering).
#
#   compat/e2e/serve.sh        exit 0 when every check holds
#
# With E2E_PLUGIN_JAR (the Java plugin's jar, plugin/target/kstreams-assignor-plugin-0.1.0.jar) the
# broker loads the `optimized` streams assignor, a third streams group selects it, and `serve
# --probe` must put its prober in that group only.
#
# KSTREAMS_ASSIGNOR_BIN names a built binary (default: `cargo build`, target/debug); CHROMIUM the
# browser (default /usr/bin/chromium). Needs Java 17, Maven, prometheus and promtool.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export KAFKA_PORT="${KAFKA_PORT:-19792}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19793}"
export KAFKA_WORK="${KAFKA_WORK:-$root/target/serve-broker}"
bootstrap="127.0.0.1:$KAFKA_PORT"
chromium="${CHROMIUM:-/usr/bin/chromium}"
work="$(mktemp -d)"
jar="$here/java/target/kstreams-e2e.jar"
serve_port="${SERVE_PORT:-18788}"
prom_port="${PROMETHEUS_PORT:-18790}"
started=$SECONDS
cleanup() {
    for f in "$work"/*.pid; do [[ -f "$f" ]] && kill "$(cat "$f")" 2>/dev/null || true; done
    kill -CONT "$(cat "$KAFKA_WORK/broker.pid" 2>/dev/null)" 2>/dev/null || true
    "$root/compat/kafka/broker.sh" stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

for tool in prometheus promtool openssl; do
    command -v "$tool" >/dev/null || { echo "no $tool (apt-get install prometheus openssl)" >&2; exit 1; }
done
[[ -x "$chromium" ]] || { echo "no browser at $chromium (apt-get install chromium)" >&2; exit 1; }
if [[ ! -f "$jar" ]]; then (cd "$here/java" && mvn -q -B package); fi
bin="${KSTREAMS_ASSIGNOR_BIN:-}"
if [[ -z "$bin" ]]; then
    (cd "$root" && cargo build -q --bin kstreams-assignor)
    bin="${CARGO_TARGET_DIR:-$root/target}/debug/kstreams-assignor"
fi
mkdir -p "$root/target"
java_main() { java -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$jar" io.kstreamsassignor.e2e.Main "$@"; }

# One instance in the background, its pid in $work/APP-NAME.pid: app, name, then `--config` pairs.
cat >"$work/instance.sh" <<EOS
#!/usr/bin/env bash
app="\$1" name="\$2"; shift 2
configs=(); for c in "\$@"; do configs+=(--config "\$c"); done
nohup java -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$jar" io.kstreamsassignor.e2e.Main \\
    app --bootstrap "$bootstrap" --app-id "\$app" --instance "\$name" --threads 1 --state-dir "$work/state-\$app-\$name" \\
    --endpoint "\$name.e2e.invalid:8080" "\${configs[@]}" >"$work/\$app-\$name.out" 2>"$work/\$app-\$name.err" &
echo \$! >"$work/\$app-\$name.pid"
EOS
cat >"$work/stop.sh" <<EOS
#!/usr/bin/env bash
# Stops the instances \$2... of app \$1 and waits for them to end.
app="\$1"; shift
for i in "\$@"; do pid="\$(cat "$work/\$app-\$i.pid")"; kill "\$pid"; while kill -0 "\$pid" 2>/dev/null; do sleep 0.2; done; rm "$work/\$app-\$i.pid"; done
EOS
chmod +x "$work/instance.sh" "$work/stop.sh"

# Runs `serve` with $@, expects exit code $1 and the words $2 on standard error.
refuses() {
    local code="$1" words="$2"; shift 2
    set +e
    timeout 60 "$bin" serve "$@" >"$work/refused.out" 2>"$work/refused.err"
    local got=$?
    set -e
    [[ $got == "$code" ]] && grep -q -- "$words" "$work/refused.err" || {
        echo "serve $* exited $got (expected $code with \"$words\"):" >&2; cat "$work/refused.err" >&2; exit 1; }
    echo "ok: exit $got: $(grep -m1 "^error" "$work/refused.err")"
}

plugin_jar="${E2E_PLUGIN_JAR:-}"
if [[ -n "$plugin_jar" ]]; then
    [[ -f "$plugin_jar" ]] || { echo "E2E_PLUGIN_JAR: no file $plugin_jar" >&2; exit 1; }
    export KAFKA_EXTRA_CLASSPATH="$plugin_jar"
    export KAFKA_EXTRA_PROPERTIES="group.streams.assignors=sticky,io.kstreamsassignor.plugin.OptimizedStreamsTaskAssignor"
fi
"$root/compat/kafka/broker.sh" start
refuses 2 "needs --token" --bootstrap "$bootstrap" --listen "0.0.0.0:$serve_port"
refuses 2 "not a regular expression" --bootstrap "$bootstrap" --listen "127.0.0.1:$serve_port" --groups "app("
refuses 1 "cannot read $work/none.pem" --bootstrap "$bootstrap" --listen "127.0.0.1:$serve_port" --tls-cert "$work/none.pem" --tls-key "$work/none.pem"

# An unreachable cluster is no error: the endpoint answers and counts it.
"$bin" serve --bootstrap 127.0.0.1:1 --listen "127.0.0.1:$serve_port" --timeout 2s --discovery-interval 1 --exit-after 6 \
    >/dev/null 2>"$work/unreachable.err" &
echo $! >"$work/unreachable.pid"
python3 - "$serve_port" <<'PY'
import sys, time, urllib.request
deadline = time.monotonic() + 5
while True:
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=3).read().decode()
        if "kstreams_cluster_reachable 0" in text and 'kstreams_discoveries_total{result="failed"} 0' not in text:
            break
    except OSError:
        pass
    if time.monotonic() > deadline:
        sys.exit("serve with an unreachable broker: no answer with the failure counted")
    time.sleep(0.2)
PY
wait "$(cat "$work/unreachable.pid")" || { echo "serve with an unreachable broker exited $?" >&2; cat "$work/unreachable.err" >&2; exit 1; }
rm "$work/unreachable.pid"
grep -q "cannot list the cluster's groups: cannot connect to 127.0.0.1:1" "$work/unreachable.err" || { cat "$work/unreachable.err" >&2; exit 1; }
echo "ok: an unreachable broker: /metrics answers with kstreams_cluster_reachable 0 and the failed discoveries counted; exit 0 at --exit-after"

# A CA and the server's certificate for 127.0.0.1, signed by it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/ca-key.pem" -out "$work/ca.pem" -days 2 \
    -subj "/CN=serve e2e CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" -out "$work/server.csr" -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$work/ext.cnf"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca-key.pem" -CAcreateserial -days 2 \
    -extfile "$work/ext.cnf" -out "$work/cert.pem" 2>/dev/null
token="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"

java_main produce --bootstrap "$bootstrap" --partitions 4 --from 0 --count 4000 >/dev/null 2>"$work/produce.err"

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

stamp="$(date +%s)"
classic="serve-classic-$stamp" streams="serve-streams-$stamp" gone="serve-gone-$stamp" new="serve-new-$stamp"
for i in a b; do
    "$work/instance.sh" "$classic" "$i" num.standby.replicas=1
    "$work/instance.sh" "$streams" "$i" group.protocol=streams
done
# Kafka Streams does not leave a classic group on close: its member expires after the session.
"$work/instance.sh" "$gone" a session.timeout.ms=6000
probe_args=() probe_check=()
if [[ -n "$plugin_jar" ]]; then
    probed="serve-probed-$stamp"
    java -cp "$jar" "$here/SetGroupConfig.java" "$bootstrap" "$probed" streams.assignor.name optimized >"$work/set-config.out" 2>&1 ||
        { cat "$work/set-config.out" >&2; exit 1; }
    "$work/instance.sh" "$probed" a group.protocol=streams
    probe_args=(--probe --probe-interval 2)
    probe_check=(--group "$probed:streams" --probed-group "$probed")
fi
settle "$classic" 2
settle "$streams" 2
settle "$gone" 1
[[ -z "$plugin_jar" ]] || settle "$probed" 1

"$bin" serve --bootstrap "$bootstrap" --listen "127.0.0.1:$serve_port" --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" \
    --token "$token" --interval 1 --discovery-interval 2 --timeout 3s --config acceptable.recovery.lag=100 "${probe_args[@]}" \
    >"$work/serve.out" 2>"$work/serve.err" &
echo $! >"$work/serve.pid"

# Prometheus: a scrape every second over HTTPS with the token, the alert rules with short `for:`.
sed -E 's/^( *for: ).*/\15s/' "$root/deploy/prometheus/kstreams-alerts.yml" >"$work/rules.yml"
cat >"$work/prometheus.yml" <<EOS
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ["$work/rules.yml"]
scrape_configs:
  - job_name: kstreams
    scheme: https
    tls_config:
      ca_file: "$work/ca.pem"
    authorization:
      credentials: "$token"
    static_configs:
      - targets: ["127.0.0.1:$serve_port"]
EOS
promtool check config "$work/prometheus.yml" >/dev/null
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" --web.listen-address="127.0.0.1:$prom_port" \
    >"$work/prometheus.log" 2>&1 &
echo $! >"$work/prometheus.pid"

broker_pid="$(cat "$KAFKA_WORK/broker.pid")"
python3 "$here/serve_check.py" --serve "https://127.0.0.1:$serve_port" --token "$token" --ca "$work/ca.pem" \
    --prometheus "http://127.0.0.1:$prom_port" --bin "$bin" --bootstrap "$bootstrap" --chromium "$chromium" \
    --group "$classic:classic" --group "$streams:streams" "${probe_check[@]}" \
    --new-group "$new" --new-group-cmd "'$work/instance.sh' '$new' a group.protocol=streams" \
    --alert-group "$streams" --alert-stop "'$work/stop.sh' '$streams' a b" \
    --alert-start "'$work/instance.sh' '$streams' a group.protocol=streams; '$work/instance.sh' '$streams' b group.protocol=streams" \
    --gone-group "$gone" --gone-stop "'$work/stop.sh' '$gone' a" \
    --gone-delete "for _ in \$(seq 30); do java -cp '$jar' '$here/DeleteGroups.java' '$bootstrap' '$gone' >'$work/delete.out' 2>&1 && exit 0; sleep 2; done; cat '$work/delete.out'; exit 1" \
    --pause "kill -STOP $broker_pid" --cont "kill -CONT $broker_pid" --screenshot "$root/target/serve-home.png" || {
    echo "serve_check failed; serve's standard error:" >&2; tail -30 "$work/serve.err" >&2
    echo "prometheus' log:" >&2; tail -15 "$work/prometheus.log" >&2; exit 1; }
kill -INT "$(cat "$work/serve.pid")"
wait "$(cat "$work/serve.pid")" || { echo "serve exited $? when stopped" >&2; cat "$work/serve.err" >&2; exit 1; }
rm "$work/serve.pid"
echo "serve: all checks hold in $((SECONDS - started)) s; screenshot target/serve-home.png"
