#!/usr/bin/env bash
# `serve` at scale, run by hand: N groups (default 200) on one Kafka 4.4 broker of its own
# (compat/kafka/broker.sh, KAFKA_PORT default 19892): half classic groups, each led by a `lead`
# process (a Kafka Streams subscription, no task taken), half streams groups, each with one
# `join --protocol streams` member; every application is one stateless sub-topology reading a topic
# of 2 partitions. Then measures, with `serve --threads 4`:
#   - one round of looks over every group: a fresh `serve` from its start to N looks done;
#   - a scrape of /metrics (20 scrapes of the N groups' series: median and slowest);
#   - serve's resident memory once it follows every group.
#
#   compat/serve/scale.sh [N]     prints the figures (docs/serve.md has one run's); exit 1 above the
#                                 targets: a round under 10 s, a scrape under 100 ms, under 200 MiB
#
# KSTREAMS_ASSIGNOR_BIN names a built binary (default: `cargo build --release`).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
n="${1:-200}"
export KAFKA_PORT="${KAFKA_PORT:-19892}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19893}"
export KAFKA_WORK="${KAFKA_WORK:-$root/target/serve-scale-broker}"
bootstrap="127.0.0.1:$KAFKA_PORT"
port="${SERVE_PORT:-18888}" port2="${SERVE_PORT2:-18889}"
work="$(mktemp -d)"
jar="$root/compat/e2e/java/target/kstreams-e2e.jar"
cleanup() {
    for f in "$work"/*.pid; do [[ -f "$f" ]] && kill "$(cat "$f")" 2>/dev/null || true; done
    "$root/compat/kafka/broker.sh" stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
bin="${KSTREAMS_ASSIGNOR_BIN:-}"
if [[ -z "$bin" ]]; then
    (cd "$root" && cargo build -q --release --bin kstreams-assignor)
    bin="${CARGO_TARGET_DIR:-$root/target}/release/kstreams-assignor"
fi
if [[ ! -f "$jar" ]]; then (cd "$root/compat/e2e/java" && mvn -q -B package); fi

"$root/compat/kafka/broker.sh" start
java -cp "$jar" io.kstreamsassignor.e2e.Main produce --bootstrap "$bootstrap" --partitions 2 --from 0 --count 10 >/dev/null 2>"$work/produce.err"
started=$SECONDS
# A member per group: the classic ones first, which wait for the coordinator (the broker makes
# __consumer_offsets on the first FindCoordinator); a streams member does not wait, so the streams
# ones start once the first classic group is described.
start_members() {
    local protocol="$1" first="$2" i group
    for i in $(seq "$first" 2 "$n"); do
        group="scale-$protocol-$i"
        printf '{"applicationId": "%s", "subtopologies": [{"id": 0, "sourceTopics": ["e2e-input"]}]}\n' "$group" >"$work/$group.json"
        "$bin" lead --protocol "$protocol" --bootstrap "$bootstrap" --group "$group" --topology "$work/$group.json" \
            >/dev/null 2>"$work/$group.err" &
        echo $! >"$work/$group.pid"
    done
}
start_members classic 1
for _ in $(seq 120); do "$bin" describe --bootstrap "$bootstrap" --group scale-classic-1 >/dev/null 2>&1 && break; sleep 1; done
start_members streams 2
echo "started $n members (one per group) in $((SECONDS - started)) s"

# A serve that follows them all, looking at each every second.
"$bin" serve --bootstrap "$bootstrap" --listen "127.0.0.1:$port" --interval 1 --discovery-interval 5 --threads 4 \
    >/dev/null 2>"$work/serve.err" &
echo $! >"$work/serve.pid"
python3 - "$port" "$n" "$(cat "$work/serve.pid")" "$bin" "$bootstrap" "$port2" <<'PY'
import re, statistics, subprocess, sys, time, urllib.request
port, n, pid, binary, bootstrap, port2 = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]

def scrape(p=port):
    t = time.monotonic()
    text = urllib.request.urlopen(f"http://127.0.0.1:{p}/metrics", timeout=10).read().decode()
    return text, time.monotonic() - t

def value(text, series):
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None

start = time.monotonic()
while True:
    try:
        text, _ = scrape()
        stable = len(re.findall(r'^kstreams_group_state\{[^}]*state="Stable"\} 1', text, re.M))
        if value(text, "kstreams_groups") == n and stable == n:
            break
    except OSError:
        pass
    if time.monotonic() - start > 600:
        sys.exit(f"not every group followed and Stable after 600 s: {value(text, 'kstreams_groups')} groups, {stable} Stable")
    time.sleep(1)
print(f"serve follows {n} groups, every one Stable, {time.monotonic() - start:.1f} s after it started")
times, size = [], 0
for _ in range(20):
    text, took = scrape()
    times.append(took * 1000)
    size = len(text)
    time.sleep(0.2)
rss = int(re.search(r"VmRSS:\s+(\d+) kB", open(f"/proc/{pid}/status").read()).group(1)) / 1024
looks = value(text, 'kstreams_looks_total{result="ok"}')
dsum, dcount = value(text, "kstreams_look_duration_seconds_sum"), value(text, "kstreams_look_duration_seconds_count")
print(f"a scrape of {n} groups ({size} bytes, {text.count(chr(10))} lines): median {statistics.median(times):.1f} ms, slowest {max(times):.1f} ms")
print(f"serve's resident memory: {rss:.1f} MiB after {looks:.0f} looks (mean look {dsum / dcount * 1000:.1f} ms)")
failed = value(text, 'kstreams_looks_total{result="failed"}')
print(f"failed looks: {failed:.0f}")
if statistics.median(times) >= 100 or rss >= 200:
    sys.exit(f"over the targets: a scrape under 100 ms, resident memory under 200 MiB")

# One round: a fresh serve that looks once at every group (its interval longer than the run).
fresh = subprocess.Popen([binary, "serve", "--bootstrap", bootstrap, "--listen", f"127.0.0.1:{port2}", "--interval", "3600",
                          "--threads", "4", "--exit-after", "120"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t0 = time.monotonic()
first_discovered = None
try:
    while True:
        try:
            text, _ = scrape(port2)
            if first_discovered is None and value(text, "kstreams_groups") == n:
                first_discovered = time.monotonic() - t0
            if (value(text, 'kstreams_looks_total{result="ok"}') or 0) + (value(text, 'kstreams_looks_total{result="failed"}') or 0) >= n:
                break
        except OSError:
            pass
        if time.monotonic() - t0 > 120:
            sys.exit("the fresh serve did not look at every group in 120 s")
        time.sleep(0.05)
    took = time.monotonic() - t0
    failed = value(text, 'kstreams_looks_total{result="failed"}')
    print(f"one round of looks over {n} groups (a fresh serve, 4 threads): {took:.2f} s from its start "
          f"(discovery done at {first_discovered:.2f} s), {failed:.0f} failed")
    if took >= 10:
        sys.exit("over the target: one round of looks under 10 s")
finally:
    fresh.terminate()
    fresh.wait(10)
PY
