#!/usr/bin/env python3
"""End to end in a real Kafka cluster: the KIP-924 plugin inside Java Kafka Streams, no Rust member.

Run by compat/e2e/plugin.sh, which builds the pieces and starts a fresh broker before each run:

    plugin.py run plugin    task.assignor.class = io.kstreamsassignor.plugin.OptimizedTaskAssignor
    plugin.py run default   Kafka's default assignor (no task.assignor.class)
    plugin.py run fault     the plugin from a jar whose native library does not load (2 instances)
    plugin.py table         the figures of the runs done, and the checks across them

Every instance is a Java Kafka Streams 4.4.0 application (compat/e2e/java, two stream threads, its
own state directory, one standby replica, a small acceptable recovery lag so that warm-ups happen,
Kafka's shortest probing interval) with the plugin jar on its classpath. Scenario of `plugin` and
`default` (same workload, same steps):

1. Produce a known batch; start a and b; every task RUNNING exactly once; the output is exact.
2. Scale out while records flow: start c (then d, whose join is also the rebalance that lets a
   caught-up c take over); wait until c runs stateful active tasks.
3. kill -9 the instance that leads (the one whose log has the newest leader line: the plugin's INFO
   summary, or Kafka's "Assigned ... total tasks"); another instance must lead next and the group
   keeps processing; the killed one is started again.
4. Rolling bounce: SIGTERM and restart each instance in turn, waiting until all RUNNING between.
5. The output is exact.

The figures come from the instances' JSON state lines: a stable assignment is a moment when every
live instance is RUNNING and every task is active exactly once; an active move is a task whose
owner differs between successive stable assignments; a warm-up is a standby replica beyond
num.standby.replicas of a stateful task in a stable assignment (counted once per instance and
task, when it appears). Rebalances are the distinct generations the instances joined.

Under the plugin: every stateful active move goes to an instance that held the task as a standby
in the previous stable assignment, or (an instance that was away, back from a restart) that ran
it in its own last stable assignment, its state on disk (a standby it ran between two stable
assignments counts); every dump replays with `kstreams-assignor assign --assignor optimized
--input`, and every stateful task the replayed decision gives a new owner goes to a client whose lag
in that dump is within acceptable.recovery.lag, unless no client was; after the leader kill, the
next dumps are written by another instance.

With E2E_STANDIN=1 the `plugin` run uses Kafka's StickyTaskAssignor (also a KIP-924 class) in place
of ours and skips the checks that only the plugin can pass (dumps, warm moves, its log lines).

Each run writes <work>/<run>/result.json; on any failure: the broker and instance logs, exit 1.
"""

import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from common import fmt, held, json_lines, run, tail

ROOT = Path(__file__).resolve().parents[2]
BASE = Path(os.environ.get("E2E_WORK", ROOT / "compat/e2e/target/plugin"))
BOOTSTRAP = "127.0.0.1:" + os.environ.get("KAFKA_PORT", "19292")
APP = "e2e-plugin"
BIN = Path(os.environ.get("KSTREAMS_ASSIGNOR_BIN", ROOT / "target/release/kstreams-assignor"))
JAR = ROOT / "compat/e2e/java/target/kstreams-e2e.jar"
PLUGIN_JAR = Path(os.environ.get("E2E_PLUGIN_JAR", ROOT / "plugin/target/kstreams-assignor-plugin-0.1.0.jar"))
FAULT_JAR = Path(os.environ.get("E2E_FAULT_JAR", BASE / "fault-jar/kstreams-assignor-plugin-broken.jar"))
BROKER_LOG = Path(os.environ.get("KAFKA_WORK", BASE / "broker")) / "broker.log"
PLUGIN_CLASS = "io.kstreamsassignor.plugin.OptimizedTaskAssignor"
STANDIN_CLASS = "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor"
STANDIN = os.environ.get("E2E_STANDIN") == "1"
INSTANCES = os.environ.get("E2E_INSTANCES", "abcd")
PARTITIONS = 6
ALL_TASKS = {f"{s}_{p}" for s in (0, 1) for p in range(PARTITIONS)}
STATEFUL = {t for t in ALL_TASKS if t.startswith("1_")}
STANDBYS = 1
ASSIGNOR_CONFIGS = [
    "acceptable.recovery.lag=100",
    "probing.rebalance.interval.ms=60000",
    "max.warmup.replicas=2",
    f"num.standby.replicas={STANDBYS}",
    # A killed member is noticed after 6 s (the broker's smallest session timeout).
    "consumer.session.timeout.ms=6000",
    "consumer.heartbeat.interval.ms=1000",
]
# The leader's log line: the plugin's INFO summary, and Kafka's own (both paths log it).
PLUGIN_LEADER_LINE = re.compile(r"Assigned the tasks of \S+ with the native engine")
KAFKA_LEADER_LINE = re.compile(r"Assigned \d+ total tasks including \d+ stateful tasks")
GENERATION = re.compile(r"Successfully joined group with generation Generation\{generationId=(\d+)")
WARMUPS = re.compile(r"\((\d+) warm-ups, (\d+) spares\)")
STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) ")

RUN = None
WORK = None
T0 = time.time()
procs = {}
expected_alive = set()
PRODUCERS = {"producer", "producer2"}
lifecycle = []  # (epoch ms, instance, "start" | "stop" | "kill")
events = []


def log(text):
    stamp = time.time() - T0
    events.append((stamp, text))
    print(f"[{RUN} {stamp:6.1f}s] {text}", flush=True)


def fail(message):
    print(f"\nE2E PLUGIN FAILED ({RUN}): {message}\n", file=sys.stderr, flush=True)
    if WORK is not None:
        for name in sorted(procs):
            for suffix, n in ((".out", 30), (".err", 60)):
                path = WORK / f"{name}{suffix}"
                if path.exists():
                    print(f"----- {path} (last {n} lines) -----", file=sys.stderr)
                    print(tail(path, n), file=sys.stderr)
    print(f"----- {BROKER_LOG} (last 40 lines) -----", file=sys.stderr)
    print(tail(BROKER_LOG, 40), file=sys.stderr)
    stop_all()
    sys.exit(1)


def now_ms():
    return int(time.time() * 1000)


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
    lifecycle.append((now_ms(), name, "stop"))
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    log(f"stopped {name} (exit {proc.returncode})")


def kill9(name):
    proc = procs[name]
    lifecycle.append((now_ms(), name, "kill"))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    log(f"killed {name} with SIGKILL")


def stop_all():
    for name in list(procs):
        proc = procs[name]
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def classpath():
    jars = [JAR]
    if RUN == "fault":
        jars.append(FAULT_JAR)
    elif PLUGIN_JAR.exists():
        jars.append(PLUGIN_JAR)
    elif not STANDIN:
        fail(f"the plugin jar {PLUGIN_JAR} is missing")
    return ":".join(str(j) for j in jars)


def java(*args):
    return ["java", "-Xms64m", "-Xmx320m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
            "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd HH:mm:ss.SSS",
            "-cp", classpath(), "io.kstreamsassignor.e2e.Main", *args]


def wait_for(description, predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for name, proc in procs.items():
            if proc.poll() is not None and name in expected_alive:
                if name in PRODUCERS and proc.returncode == 0:
                    continue  # a background producer that is done
                fail(f"{name} exited with {proc.returncode} while waiting for: {description}")
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    fail(f"timed out after {timeout}s waiting for: {description}")


def started_at(name):
    """The time of the latest start of `name` (lines before it belong to an earlier process)."""
    starts = [t for t, n, what in lifecycle if n == name and what == "start"]
    return starts[-1] if starts else 0


def instance_states(names):
    """The latest state line of each instance's current process."""
    states = {}
    for name in names:
        since = started_at(name)
        rows = [r for r in json_lines(WORK / f"{name}.out") if "active" in r and r["t"] >= since]
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


def alive():
    return sorted(n for n in expected_alive if n in INSTANCES)


def wait_stable(description, timeout=120):
    names = alive()
    states = wait_for(f"{description}: {','.join(names)} RUNNING with every task active exactly once",
                      lambda: running_all_tasks(names), timeout)
    log(f"{description}: " + "  ".join(
        f"{n} active {fmt(s['active'])} standby {fmt(s['standby'])}" for n, s in sorted(states.items())))
    return states


def verify(total, timeout=90):
    code, out, err = run(java("verify", "--bootstrap", BOOTSTRAP, "--total", str(total),
                              "--timeout-ms", str(timeout * 1000)), timeout + 60)
    line = out.strip().splitlines()[-1] if out.strip() else err[-2000:]
    if code != 0:
        fail(f"output check --total {total} failed: {line}")
    log(f"output exact after {total} records: {line}")


def produce(start_at, count, rate=0, background=None):
    argv = java("produce", "--bootstrap", BOOTSTRAP, "--from", str(start_at), "--count", str(count),
                "--rate", str(rate), "--partitions", str(PARTITIONS))
    if background:
        start(background, argv)
        expected_alive.add(background)
        return
    code, out, err = run(argv, 300)
    if code != 0:
        fail(f"producer failed: {err[-2000:]}")
    log(f"produced records {start_at}..{start_at + count - 1}")


def wait_producer(name):
    try:
        procs[name].wait(240)
    except subprocess.TimeoutExpired:
        fail(f"{name} did not finish")
    expected_alive.discard(name)
    if procs[name].returncode != 0:
        fail(f"{name} exited with {procs[name].returncode}")


def assignor_configs():
    if RUN == "default":
        return []
    if RUN == "plugin" and STANDIN:
        return [f"task.assignor.class={STANDIN_CLASS}"]
    return [f"task.assignor.class={PLUGIN_CLASS}"]


def dump_dir(name):
    return WORK / "dumps" / name


def start_instance(name):
    configs = ASSIGNOR_CONFIGS + assignor_configs()
    if RUN == "plugin" and not STANDIN:
        configs.append(f"kstreams.assignor.dump.dir={dump_dir(name)}")
    lifecycle.append((now_ms(), name, "start"))
    start(name, java("app", "--bootstrap", BOOTSTRAP, "--app-id", APP, "--instance", name,
                     "--threads", "2", "--state-dir", str(WORK / f"state-{name}"),
                     "--endpoint", f"{name}.e2e.invalid:{8080 + ord(name[0]) - ord('a')}",
                     *[a for kv in configs for a in ("--config", kv)]))
    expected_alive.add(name)


def stamped_lines(name, pattern):
    """(epoch ms, line) of every line of `name`'s log that matches."""
    found = []
    try:
        text = (WORK / f"{name}.err").read_text(errors="replace")
    except OSError:
        return found
    for line in text.splitlines():
        if pattern.search(line):
            m = STAMP.match(line)
            if m:
                at = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
                found.append((int(at * 1000), line))
    return found


def leader_pattern():
    return PLUGIN_LEADER_LINE if RUN in ("plugin", "fault") and not STANDIN else KAFKA_LEADER_LINE


def leader_lines(since=0):
    """(epoch ms, instance, line) of every leader line since `since`, oldest first."""
    rows = []
    for name in INSTANCES:
        rows += [(t, name, line) for t, line in stamped_lines(name, leader_pattern()) if t >= since]
    return sorted(rows)


def scenario():
    names = list(INSTANCES)
    # 1. A known batch; a and b.
    produce(0, 20000)
    start_instance("a")
    start_instance("b")
    wait_stable("step 1")
    verify(20000)
    total = 20000

    # 2. Scale out while records flow.
    produce(total, 20000, rate=400, background="producer")
    total += 20000
    start_instance("c")
    if len(names) > 3:
        wait_for("c to run warm-ups",
                 lambda: (instance_states(["c"]).get("c", {}).get("standby") and
                          instance_states(["c"])["c"]["state"] == "RUNNING"), 90)
        time.sleep(3)  # let the warm-ups catch up, so that d's join is the rebalance that moves
        for name in names[3:]:
            start_instance(name)

    def c_took_stateful():
        s = running_all_tasks(alive())
        return s if s and held(s, "c", "active") & STATEFUL else None

    states = wait_for("c to take stateful active tasks", c_took_stateful, 150)
    log("step 2: c runs stateful active " + fmt(held(states, "c", "active") & STATEFUL) + "; " +
        "  ".join(f"{n} active {fmt(s['active'])} standby {fmt(s['standby'])}" for n, s in sorted(states.items())))

    # 3. kill -9 the leader; another instance leads; the killed one comes back.
    lines = leader_lines()
    if not lines:
        fail("no instance logged a leader line")
    leader = lines[-1][1]
    log(f"step 3: {leader} leads (its log: {lines[-1][2][-160:]})")
    killed_at = now_ms()
    expected_alive.discard(leader)
    kill9(leader)
    after = wait_for("another instance to lead after the kill",
                     lambda: [r for r in leader_lines(killed_at) if r[1] != leader], 60)
    new_leader = after[0][1]
    log(f"step 3: {new_leader} leads now")
    wait_stable("step 3, without the killed leader")
    start_instance(leader)
    wait_stable(f"step 3, {leader} back")
    wait_producer("producer")
    produce(total, 5000)
    total += 5000
    verify(total)

    # 4. Rolling bounce while records flow.
    produce(total, 8000, rate=200, background="producer2")
    total += 8000
    for name in names:
        expected_alive.discard(name)
        stop(name)
        start_instance(name)
        wait_stable(f"step 4, {name} bounced")
    wait_producer("producer2")

    # 5. Exact output.
    wait_stable("step 5")
    verify(total)
    for name in names:
        text = (WORK / f"{name}.err").read_text(errors="replace")
        for bad in ("TaskAssignmentException", "Unable to decode", "Corrupted user data"):
            if bad in text:
                fail(f"{name} logged {bad}")
    return {"total": total, "leader_killed": leader, "killed_at": killed_at, "new_leader": new_leader}


def timeline(names):
    """Successive distinct stable assignments: (epoch ms, {task: owner}, {instance: standbys})."""
    points = []
    for name in names:
        for r in json_lines(WORK / f"{name}.out"):
            if "state" in r:
                points.append((r["t"], 1, name, r))
    for t, name, what in lifecycle:
        points.append((t, 0, name, what))
    points.sort(key=lambda p: (p[0], p[1]))
    view = {}       # instance -> latest line of its current process, None before its first
    stable = []
    for t, kind, name, what in points:
        if kind == 0:
            if what == "start":
                view[name] = None
            else:
                view.pop(name, None)
            continue
        if name not in view:
            continue  # a line of a process already stopped or killed
        view[name] = what if "active" in what else {"state": what["state"], "active": [], "standby": []}
        if not view or any(v is None or v["state"] != "RUNNING" for v in view.values()):
            continue
        owners = {}
        dup = False
        for n, v in view.items():
            for task in v["active"]:
                dup |= task in owners
                owners[task] = n
        if dup or set(owners) != ALL_TASKS:
            continue
        standbys = {n: set(v["standby"]) for n, v in view.items()}
        if stable and stable[-1][1] == owners and stable[-1][2] == standbys:
            continue
        stable.append((t, owners, standbys))
    return stable


def figures(names):
    (WORK / "lifecycle.json").write_text(json.dumps(lifecycle))
    stable = timeline(names)
    moves = {"stateful": 0, "stateless": 0}
    warm, back, cold = [], [], []
    warmups = 0
    last_seen = {}  # instance -> its (active ∪ standby) in its latest stable assignment
    lines = {n: [r for r in json_lines(WORK / f"{n}.out") if "active" in r] for n in names}
    for i, (t, owners, standbys) in enumerate(stable):
        # The standbys each instance ran (RUNNING) since the previous stable assignment: warm-ups
        # that lived between two stable assignments.
        since = stable[i - 1][0] if i else 0
        standby_between = {n: {task for r in rows if since <= r["t"] < t and r["state"] == "RUNNING"
                               for task in r["standby"]} for n, rows in lines.items()}
        if i:
            _, prev_owners, prev_standbys = stable[i - 1]
            for task, owner in sorted(owners.items()):
                if prev_owners[task] == owner:
                    continue
                moves["stateful" if task in STATEFUL else "stateless"] += 1
                if task not in STATEFUL:
                    continue
                move = f"{task} {prev_owners[task]}->{owner} at {(t / 1000 - T0):.1f}s"
                between = standby_between.get(owner, set())
                if task in prev_standbys.get(owner, set()) or task in between:
                    warm.append(move)
                elif owner not in prev_owners.values() and owner not in prev_standbys and \
                        task in last_seen.get(owner, set()):
                    back.append(move)
                else:
                    cold.append(move)
            for task in STATEFUL:
                holders = [n for n, s in standbys.items() if task in s]
                if len(holders) > STANDBYS:
                    new = [n for n in holders if task not in prev_standbys.get(n, set())]
                    warmups += min(len(new), len(holders) - STANDBYS)
        for n in standbys:
            last_seen[n] = {task for task, o in owners.items() if o == n} | standbys[n]
    generations = set()
    for name in names:
        for _, line in stamped_lines(name, GENERATION):
            generations.add(int(GENERATION.search(line).group(1)))
    return {
        "stable_assignments": len(stable),
        "rebalances": len(generations),
        "generations": sorted(generations),
        "moves": moves,
        "warm_moves": warm,
        "back_moves": back,
        "cold_moves": cold,
        "warmups": warmups,
    }


def replay_dumps(scenario_result):
    dumps = sorted((int(p.stem.rsplit("-", 1)[1]), p.parent.name, p)
                   for p in (WORK / "dumps").glob("*/*.json"))
    if not dumps:
        fail("the plugin wrote no dump")
    bad = []
    for _, _, path in dumps:
        code, out, err = run([str(BIN), "assign", "--assignor", "optimized", "--compact",
                              "--input", str(path)], 60)
        if code != 0:
            bad.append(f"{path}: {err.strip()[-300:]}")
        else:
            path.with_suffix(".out").write_text(out)
    if bad:
        fail(f"{len(bad)} of {len(dumps)} dumps do not replay:\n" + "\n".join(bad))
    log(f"all {len(dumps)} dumps replay with `kstreams-assignor assign --assignor optimized`")
    decisions = check_decisions([p for _, _, p in dumps])
    killed, at = scenario_result["leader_killed"], scenario_result["killed_at"]
    before = [w for t, w, _ in dumps if t < at]
    after = [w for t, w, _ in dumps if t >= at]
    if not before or killed not in before:
        fail(f"the killed leader {killed} wrote no dump before the kill (writers: {sorted(set(before))})")
    if not after or after[0] == killed:
        fail(f"the first dump after the kill of {killed} is not another instance's: {after[:3]}")
    log(f"dumps before the kill: {len(before)} ({','.join(sorted(set(before)))}); after it: {len(after)} "
        f"(first by {after[0]}; writers {','.join(sorted(set(after)))})")
    return {"dumps": len(dumps), "dumps_before_kill": len(before), "dumps_after_kill": len(after),
            "dump_writers_after_kill": sorted(set(after)), **decisions}


def process_names():
    """Process id -> instance name, from the process ids Kafka Streams keeps in the state dirs."""
    names = {}
    for path in WORK.glob("state-*/*/kafka-streams-process-metadata"):
        try:
            names[json.loads(path.read_text())["processId"]] = path.parent.parent.name[len("state-"):]
        except (OSError, ValueError, KeyError):
            pass
    return names


def check_decisions(paths):
    """Every stateful task a replayed decision gives a new owner goes to a caught-up client
    (lag <= acceptable.recovery.lag in that rebalance's input), unless no client was caught up."""
    names = process_names()
    caught_moves, forced, lagging = 0, [], []
    for path in paths:
        given = json.loads(path.read_text())
        decided = json.loads(path.with_suffix(".out").read_text())
        acceptable = given["configs"]["acceptable.recovery.lag"]
        ends = given["changelogEndOffsetSums"]

        def lag(client, task):
            offset = client["taskOffsetSums"].get(task)
            if offset == -2:
                return 0
            if offset is None or offset < 0:
                return ends.get(task, 0)
            return max(ends.get(task, 0) - offset, 0)

        clients = {c["processId"]: c for c in given["clients"]}
        for pid, assigned in decided["clients"].items():
            for task in assigned["active"]:
                if task not in ends or task in clients[pid].get("ownedActiveTasks", []):
                    continue
                at = f"{task} to {names.get(pid, pid[:8])} (lag {lag(clients[pid], task)}) in {path.parent.name}/{path.name}"
                if lag(clients[pid], task) <= acceptable:
                    caught_moves += 1
                elif any(lag(c, task) <= acceptable for c in clients.values()):
                    lagging.append(at)
                else:
                    forced.append(at)
    log(f"replayed decisions: {caught_moves} stateful tasks given to a caught-up new owner, "
        f"{len(forced)} to a lagging one when none was caught up {forced}, "
        f"{len(lagging)} to a lagging one although another was caught up {lagging}")
    if lagging:
        fail(f"the plugin gave stateful tasks to lagging clients although caught-up ones existed: {lagging}")
    return {"decided_caught_up": caught_moves, "decided_forced": len(forced), "decided_lagging": len(lagging)}


def check_plugin_logs(names):
    """The plugin's summary only on leaders, no fallback in a healthy run."""
    for name in names:
        text = (WORK / f"{name}.err").read_text(errors="replace")
        if "this rebalance uses Kafka's StickyTaskAssignor" in text:
            line = next(l for l in text.splitlines() if "StickyTaskAssignor" in l)
            fail(f"{name} fell back to Kafka's assignor: {line}")
    lines = leader_lines()
    if not lines:
        fail("the plugin logged no summary line")
    log(f"{len(lines)} plugin summary lines, by {','.join(sorted({n for _, n, _ in lines}))}; "
        f"last: {lines[-1][2][lines[-1][2].find('Assigned'):][:300]}")
    counts = [WARMUPS.search(line) for _, _, line in lines]
    counts = [(int(m.group(1)), int(m.group(2))) for m in counts if m]
    return {"summary_lines": len(lines),
            "summaries_with_warmups": sum(1 for w, _ in counts if w),
            "summaries_with_spares": sum(1 for _, s in counts if s),
            "max_warmups": max((w for w, _ in counts), default=0)}


def run_main():
    names = list(INSTANCES)
    result = {"run": RUN}
    result.update(scenario())
    result.update(figures(names))
    f = result
    log(f"{f['rebalances']} rebalances (generations {f['generations'][0]}..{f['generations'][-1]}), "
        f"{f['stable_assignments']} stable assignments, active moves {f['moves']}, warm-ups {f['warmups']}")
    log(f"stateful moves to a standby of the previous stable assignment: {len(f['warm_moves'])} {f['warm_moves']}")
    log(f"stateful moves back to a returning instance that ran the task before: {len(f['back_moves'])} {f['back_moves']}")
    log(f"other stateful moves (neither): {len(f['cold_moves'])} {f['cold_moves']}")
    if RUN == "default" and any(PLUGIN_LEADER_LINE.search((WORK / f"{n}.err").read_text(errors="replace"))
                                for n in names):
        fail("the plugin assigned although no task.assignor.class was set")
    if RUN == "plugin" and not STANDIN:
        # A move seen in the instances' states that no standby explains is a failover after a
        # kill when no copy was caught up, or a failure: the replayed dumps tell which, from the
        # lags of that rebalance (check_decisions fails on a lagging owner chosen over a
        # caught-up one).
        result.update(replay_dumps(result))
        if f["cold_moves"]:
            log(f"moves to instances without a standby ({f['cold_moves']}): the dumps above show no caught-up "
                f"client was passed over ({result['decided_forced']} decision(s) when none was caught up)")
        result.update(check_plugin_logs(names))
    result["output_exact"] = True
    (WORK / "result.json").write_text(json.dumps(result, indent=1))
    stop_all()


def fault_main():
    names = ["a", "b"]
    produce(0, 10000)
    start_instance("a")
    start_instance("b")
    wait_stable("fault run")
    verify(10000)
    errors = []
    for name in names:
        errors += [(name, l) for l in (WORK / f"{name}.err").read_text(errors="replace").splitlines()
                   if " ERROR " in l and "OptimizedTaskAssignor" in l]
    if not errors:
        fail("the plugin logged no ERROR although its native library cannot load")
    if leader_lines():
        fail("the plugin logged a summary of the native engine although its library cannot load")
    name, line = errors[0]
    if "StickyTaskAssignor" not in line or not re.search(r"ELF|load|UnsatisfiedLink", line, re.I):
        fail(f"the plugin's ERROR does not name the cause and the fallback: {line}")
    by = ",".join(sorted({n for n, _ in errors}))
    log(f"{len(errors)} plugin ERROR line(s) (by {by}), e.g. {name}: {line[line.find('ERROR'):]}")
    result = {"run": RUN, "total": 10000, "output_exact": True, "errors": len(errors),
              "error_line": line[line.find("ERROR"):]}
    result.update(figures(names))
    (WORK / "result.json").write_text(json.dumps(result, indent=1))
    stop_all()


def table():
    rows = []
    for run_name in ("plugin", "default", "fault"):
        path = BASE / run_name / "result.json"
        if path.exists():
            rows.append(json.loads(path.read_text()))
    if not rows:
        print("no run results", file=sys.stderr)
        sys.exit(1)
    label = {"plugin": "plugin (optimized)" if not STANDIN else "plugin (stand-in: StickyTaskAssignor)",
             "default": "Kafka default", "fault": "plugin, no native library"}
    head = ["run", "rebalances", "active moves (stateful / stateless)", "warm-ups", "output exact"]
    body = [[label[r["run"]], str(r["rebalances"]),
             f"{r['moves']['stateful']} / {r['moves']['stateless']}", str(r["warmups"]),
             f"yes ({r['total']} records)" if r["output_exact"] else "NO"] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"
    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for cells in body:
        print(line(cells))
    print("rebalances: distinct generations joined; active moves: tasks whose owner differs between "
          "successive stable assignments (all live instances RUNNING, every task active once); "
          f"warm-ups: standbys of a stateful task beyond num.standby.replicas={STANDBYS} as they appear "
          "(under the plugin these include its spare replicas; its own summaries count them apart)")
    for r in rows:
        if r["run"] == "fault":
            print(f"fault: {r['errors']} ERROR line(s) in {r['rebalances']} rebalances; the first: {r['error_line']}")
        else:
            extra = (f"; dumps {r['dumps']} all replayed, {r['dumps_after_kill']} after the kill of "
                     f"{r['leader_killed']} by {','.join(r['dump_writers_after_kill'])}; the replayed decisions "
                     f"give {r['decided_caught_up']} stateful tasks to caught-up new owners, "
                     f"{r['decided_forced']} to lagging ones when none was caught up, "
                     f"{r['decided_lagging']} to lagging ones otherwise" if "dumps" in r else "")
            if "summary_lines" in r:
                print(f"{r['run']}: {r['summary_lines']} plugin summary lines in {r['rebalances']} rebalances, "
                      f"{r['summaries_with_warmups']} with warm-ups (at most {r['max_warmups']}), "
                      f"{r['summaries_with_spares']} with spares")
            print(f"{r['run']}: stateful moves to a standby {len(r['warm_moves'])}, back to a returning "
                  f"previous runner {len(r['back_moves'])}, other {len(r['cold_moves'])}; "
                  f"{r['stable_assignments']} stable assignments; leader {r['leader_killed']} killed, "
                  f"{r['new_leader']} led next{extra}")


def main():
    global RUN, WORK
    if sys.argv[1:2] == ["table"]:
        table()
        return
    if len(sys.argv) != 3 or sys.argv[1] != "run" or sys.argv[2] not in ("plugin", "default", "fault"):
        print("usage: plugin.py run plugin|default|fault | plugin.py table", file=sys.stderr)
        sys.exit(2)
    RUN = sys.argv[2]
    WORK = BASE / RUN
    WORK.mkdir(parents=True, exist_ok=True)
    if RUN == "fault":
        fault_main()
    else:
        run_main()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        stop_all()
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - report any failure with the logs
        import traceback
        traceback.print_exc()
        fail(f"{type(e).__name__}: {e}")
