#!/usr/bin/env python3
"""End to end in a real Kafka cluster: our leader for Java Kafka Streams members.

Run by compat/e2e/run.sh, which builds the pieces and starts the broker first. Scenario:

1. Produce a known batch; start our leader-only member (it joins first, so it leads), then two Java
   instances (two stream threads each). They must accept our assignment, run every task exactly
   once, and the output counts must be exact.
2. Scale out while records keep flowing: a third instance joins. Our leader must give it warm-ups
   (standbys, as num.standby.replicas is 0), schedule a probing rebalance, and move stateful active
   tasks to it only after it held them as warm-ups. `describe` shows the group. `watch` follows
   the group through steps 1 and 2; the causes it names are checked against our leader's log
   (watch_check.py: moves explained / total).
3. Leader failover: stop our leader; a Java instance leads and the group keeps processing (a new
   batch is counted exactly). Start our member again and let it rejoin under the Java leader.
4. Every output count is exact (exactly-once), nothing lost and nothing counted twice.

With E2E_ASSIGNOR=optimized our leader runs the optimized assignor (its warm-ups, spare replicas
and probing deadline travel as ordinary standbys and `nextRebalanceMs`); the Java members keep
Kafka's, and the same checks apply.

Prints a per-rebalance report, and on any failure the broker, leader and instance logs.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from common import fmt, held, json_lines, run, tail
import watch_check

ROOT = Path(__file__).resolve().parents[2]
WORK = Path(os.environ.get("E2E_WORK", ROOT / "compat/e2e/target/run"))
BOOTSTRAP = "127.0.0.1:" + os.environ.get("KAFKA_PORT", "19092")
APP = "e2e-wordcount"
BIN = Path(os.environ.get("KSTREAMS_ASSIGNOR_BIN", ROOT / "target/release/kstreams-assignor"))
JAR = ROOT / "compat/e2e/java/target/kstreams-e2e.jar"
BROKER_LOG = Path(os.environ.get("KAFKA_WORK", ROOT / "compat/kafka/target/run")) / "broker.log"
PARTITIONS = 6
ALL_TASKS = {f"{s}_{p}" for s in (0, 1) for p in range(PARTITIONS)}
STATEFUL = {t for t in ALL_TASKS if t.startswith("1_")}
# The leader's (and the Java members') assignor settings: a small acceptable lag so that a new
# instance is not caught up, and Kafka's shortest probing interval.
ASSIGNOR_CONFIGS = [
    "acceptable.recovery.lag=100",
    "probing.rebalance.interval.ms=60000",
    "max.warmup.replicas=2",
    "num.standby.replicas=0",
]

# Our leader's assignor: Kafka's default, or `optimized` (E2E_ASSIGNOR); the Java instances
# always run Kafka's.
LEADER_CONFIGS = ASSIGNOR_CONFIGS + (
    [f"internal.task.assignor.class={os.environ['E2E_ASSIGNOR']}"] if os.environ.get("E2E_ASSIGNOR") else [])

T0 = time.time()
procs = {}
events = []  # (time, text) for the report


def log(text):
    stamp = time.time() - T0
    events.append((stamp, text))
    print(f"[{stamp:7.1f}s] {text}", flush=True)


def fail(message):
    print(f"\nE2E FAILED: {message}\n", file=sys.stderr, flush=True)
    for name in sorted(procs):
        for suffix, n in ((".out", 40), (".err", 80)):
            path = WORK / f"{name}{suffix}"
            if path.exists():
                print(f"----- {path} (last {n} lines) -----", file=sys.stderr)
                print(tail(path, n), file=sys.stderr)
    print(f"----- {BROKER_LOG} (last 80 lines) -----", file=sys.stderr)
    print(tail(BROKER_LOG, 80), file=sys.stderr)
    stop_all()
    sys.exit(1)


def start(name, argv):
    out = open(WORK / f"{name}.out", "a")
    err = open(WORK / f"{name}.err", "a")
    procs[name] = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    log(f"started {name} (pid {procs[name].pid})")


def stop(name, timeout=40):
    proc = procs.get(name)
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    log(f"stopped {name} (exit {proc.returncode})")


def stop_all():
    for name in list(procs):
        proc = procs[name]
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def java(*args):
    return ["java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
            "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-cp", str(JAR), "io.kstreamsassignor.e2e.Main", *args]


def wait_for(description, predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for name, proc in procs.items():
            if proc.poll() is not None and name in expected_alive:
                fail(f"{name} exited with {proc.returncode} while waiting for: {description}")
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    fail(f"timed out after {timeout}s waiting for: {description}")


expected_alive = set()


def instance_states(names):
    """The latest reported line of each Java instance."""
    states = {}
    for name in names:
        rows = [r for r in json_lines(WORK / f"{name}.out") if "active" in r]
        if rows:
            states[name] = rows[-1]
    return states


def running_all_tasks(names):
    states = instance_states(names)
    if len(states) != len(names) or any(s["state"] != "RUNNING" for s in states.values()):
        return None
    held = [t for s in states.values() for t in s["active"]]
    if sorted(held) != sorted(ALL_TASKS):
        return None
    return states


def verify(extra, timeout=120):
    code, out, err = run(java("verify", "--bootstrap", BOOTSTRAP, *extra,
                              "--timeout-ms", str(timeout * 1000)), timeout + 60)
    line = out.strip().splitlines()[-1] if out.strip() else err[-2000:]
    if code != 0:
        fail(f"output check {extra} failed: {line}")
    log(f"output check {' '.join(extra)}: {line}")


def produce(start_at, count, rate=0, background=None):
    argv = java("produce", "--bootstrap", BOOTSTRAP, "--from", str(start_at), "--count", str(count),
                "--rate", str(rate), "--partitions", str(PARTITIONS))
    if background:
        start(background, argv)
        return
    code, out, err = run(argv, 300)
    if code != 0:
        fail(f"producer failed: {err[-2000:]}")
    log(f"produced records {start_at}..{start_at + count - 1}")


def start_instance(name):
    start(name, java("app", "--bootstrap", BOOTSTRAP, "--app-id", APP, "--instance", name,
                     "--threads", "2", "--state-dir", str(WORK / f"state-{name}"),
                     "--endpoint", f"{name}.e2e.invalid:{8080 + ord(name[0]) - ord('a')}",
                     *[a for kv in ASSIGNOR_CONFIGS for a in ("--config", kv)]))
    expected_alive.add(name)


def leader_generations():
    return [r for r in json_lines(WORK / "leader.out") if "members" in r]


def start_leader(name="leader"):
    start(name, [str(BIN), "lead", "--bootstrap", BOOTSTRAP, "--group", APP,
                 "--topology", str(WORK / "topology.txt"),
                 *[a for kv in LEADER_CONFIGS for a in ("--config", kv)]])


def start_watch():
    start("watch", [str(BIN), "watch", "--bootstrap", BOOTSTRAP, "--group", APP, "--interval", "1",
                    "--topology", str(WORK / "topology.txt"), "--json", str(WORK / "watch.jsonl"),
                    *(["--assignor", os.environ["E2E_ASSIGNOR"]] if os.environ.get("E2E_ASSIGNOR") else []),
                    *[a for kv in ASSIGNOR_CONFIGS for a in ("--config", kv)]])
    expected_alive.add("watch")


def check_watch():
    """Stops `watch` (Ctrl-C) and counts the moves it explained as our leader logged them."""
    expected_alive.discard("watch")
    proc = procs["watch"]
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        fail("watch did not stop within 20 s of Ctrl-C")
    out = (WORK / "watch.out").read_text(errors="replace").splitlines()
    if proc.returncode != 0 or not out or not out[-1].startswith("watched "):
        fail(f"watch exited {proc.returncode} without its summary")
    records = json_lines(WORK / "watch.jsonl")
    explained, total, compared, lines = watch_check.compare(leader_generations(), records)
    if compared == 0:
        fail("watch saw no two generations our leader assigned")
    log(f"watch: {explained}/{total} moves explained as our leader logged them, over {compared} generation(s); "
        f"{out[-1]}\n" + "\n".join(lines))
    (WORK / "watch-check.txt").write_text("\n".join(lines) + f"\n{explained}/{total}\n")


def main():
    WORK.mkdir(parents=True, exist_ok=True)
    code, out, err = run(java("topology"), 60)
    if code != 0:
        fail(f"could not describe the topology: {err}")
    (WORK / "topology.txt").write_text(out)

    # 1. A known batch, our leader first, then two Java instances.
    produce(0, 20000)
    start_leader()
    expected_alive.add("leader")
    wait_for("our member to form the group and lead it", lambda: leader_generations(), 60)
    start_watch()
    start_instance("a")
    start_instance("b")
    states = wait_for("a and b RUNNING with every task active exactly once",
                      lambda: running_all_tasks(["a", "b"]), 120)
    log("step 1: " + ", ".join(f"{n} active {sorted(s['active'])}" for n, s in sorted(states.items())))
    verify(["--total", "20000"])

    # 2. Scale out while records keep flowing.
    produce(20000, 30000, rate=300, background="producer")
    start_instance("c")

    def c_took_stateful():
        s = instance_states(["a", "b", "c"])
        return s if held(s, "c", "active") & STATEFUL and running_all_tasks(["a", "b", "c"]) else None

    states = wait_for("c to take over stateful tasks after warming up", c_took_stateful, 300)
    c_rows = [r for r in json_lines(WORK / "c.out") if "active" in r]
    warmed = set()
    for row in c_rows:
        for task in set(row["active"]) & STATEFUL:
            if task not in warmed:
                fail(f"c became active for {task} without holding it as a warm-up first")
        warmed |= set(row["standby"])
    log(f"step 2: c warmed up {sorted(warmed & STATEFUL)} before taking "
        f"{sorted(held(states, 'c', 'active') & STATEFUL)}")
    gens = leader_generations()
    probing = [g for g in gens if g.get("probingRebalanceAtMs")]
    if not any(m.get("warmupTasks") for g in gens for m in g["members"]) or not probing:
        fail("our leader never reported warm-ups with a probing rebalance deadline")
    if os.environ.get("E2E_ASSIGNOR") == "optimized":
        # Only the optimized assignor keeps spare replicas (ordinary standbys on the wire) once
        # the warm-up budget is idle; the Java members must have run them.
        spares = [(g["generationId"], t) for g in gens for m in g["members"] for t in m.get("spareTasks", [])]
        if not spares:
            fail("our leader runs the optimized assignor but never kept a spare replica")
        ran = set().union(*(set(r["standby"]) for n in "abc" for r in json_lines(WORK / f"{n}.out") if "standby" in r))
        if not {t for _, t in spares} & ran:
            fail(f"no Java instance ever ran a spare replica as a standby: {spares}")
        log(f"step 2: the optimized assignor kept spare replicas {sorted({t for _, t in spares})} "
            f"(generations {sorted({g for g, _ in spares})}), run by the Java instances as standbys")
    code, out, err = run([str(BIN), "describe", "--bootstrap", BOOTSTRAP, "--group", APP,
                          "--topology", str(WORK / "topology.txt")], 60)
    if code != 0:
        fail(f"describe failed: {err}")
    (WORK / "describe.txt").write_text(out)
    code, out_json, err = run([str(BIN), "describe", "--bootstrap", BOOTSTRAP, "--group", APP,
                               "--json"], 60)
    if code != 0:
        fail(f"describe --json failed: {err}")
    (WORK / "describe.json").write_text(out_json)
    log("describe:\n" + out)
    procs["producer"].wait(240)
    expected_alive.discard("producer")
    verify(["--total", "50000"])

    check_watch()

    # 3. Leader failover.
    expected_alive.discard("leader")
    stop("leader")
    java_logs = lambda: sum("a followup rebalance" in tail(WORK / f"{n}.err", 100000) or
                            "stable assignment of tasks" in tail(WORK / f"{n}.err", 100000)
                            for n in "abc")
    wait_for("a Java instance to lead and assign", java_logs, 90)
    states = wait_for("a, b, c RUNNING with every task active exactly once under the Java leader",
                      lambda: running_all_tasks(["a", "b", "c"]), 120)
    log("step 3 (Java leads): " + ", ".join(f"{n} active {sorted(s['active'])}"
                                           for n, s in sorted(states.items())))
    produce(50000, 5000)
    verify(["--total", "55000"])
    start_leader("rejoin")
    received = wait_for("our member to rejoin the group and get the Java leader's assignment",
                        lambda: [r for r in json_lines(WORK / "rejoin.out") if "received" in r], 90)
    got = received[-1]["received"]
    log(f"step 3: our member rejoined under the Java leader (generation {received[-1]['generationId']}), "
        f"which gave it active {got['activeTasks']} standby {got['standbyTasks']}")
    if got["activeTasks"] or got["standbyTasks"]:
        # A leader-only member does not run tasks: it must leave so that they go back to Java.
        try:
            procs["rejoin"].wait(60)
        except subprocess.TimeoutExpired:
            fail("our member kept tasks given by the Java leader instead of leaving")
        if "leads the group and gave this leader-only member tasks" not in tail(WORK / "rejoin.err", 20):
            fail("our member exited without saying why")
        log("step 3: our member left again, as a leader-only member does under another leader")
    produce(55000, 5000)

    # 4. Everything exact.
    states = wait_for("every task active exactly once",
                      lambda: running_all_tasks(["a", "b", "c"]), 120)
    verify(["--total", "60000"])
    for name in "abc":
        text = (WORK / f"{name}.err").read_text(errors="replace")
        for bad in ("TaskAssignmentException", "Unable to decode", "Corrupted user data"):
            if bad in text:
                fail(f"{name} logged {bad}")
    report()
    stop_all()
    print("\nE2E PASSED", flush=True)


def process_names():
    """Process id -> instance name, from the endpoints `describe --json` showed."""
    names = {}
    try:
        group = json.loads((WORK / "describe.json").read_text())
    except (OSError, json.JSONDecodeError):
        return names
    for member in group.get("members", []):
        info = (member.get("memberMetadata") or {}).get("userData") or {}
        endpoint = info.get("userEndPoint") or ""
        if info.get("processId"):
            names[info["processId"]] = endpoint.split(".")[0] if endpoint else "ours"
    return names


def report():
    names = process_names()
    print("\n===== per-rebalance report =====")
    print("Generations our leader assigned (per instance: active / standby / warm-up; tasks are "
          "<sub-topology>_<partition>, 0_x stateless, 1_x counting):")
    for g in leader_generations():
        by_process = {}
        for m in g["members"]:
            name = names.get(m["processId"], m["processId"][:8])
            entry = by_process.setdefault(name, [set(), set(), set()])
            entry[0] |= set(m["activeTasks"])
            entry[1] |= set(m["standbyTasks"])
            entry[2] |= set(m["warmupTasks"])
        cells = [f"{name}: {fmt(a)} / {fmt(s - w)} / {fmt(w)}"
                 for name, (a, s, w) in sorted(by_process.items()) if name != "ours"]
        at = g["assignedAtMs"] / 1000 - T0
        probing = (f"  probing rebalance at {g['probingRebalanceAtMs'] / 1000 - T0:.1f}s"
                   if g.get("probingRebalanceAtMs") else "")
        print(f"  {at:7.1f}s gen {g['generationId']:>2}  " + "   ".join(cells) + probing)
    print("What the Java instances ran (each change of state or tasks):")
    rows = []
    for name in "abc":
        for r in json_lines(WORK / f"{name}.out"):
            if "active" in r:
                rows.append(r)
    for r in sorted(rows, key=lambda r: r["t"]):
        print(f"  {(r['t'] / 1000 - T0):7.1f}s {r['instance']} {r['state']:<11} "
              f"active {fmt(r['active'])}  standby {fmt(r['standby'])}")
    print("Events:")
    for stamp, text in events:
        print(f"  {stamp:7.1f}s {text.splitlines()[0]}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        stop_all()
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - report any failure with the logs
        fail(f"{type(e).__name__}: {e}")
