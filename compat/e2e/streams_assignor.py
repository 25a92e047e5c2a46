"""The broker's streams assignors side by side on one real broker (compat/e2e/streams-assignor.sh):
for `sticky`, then `optimized` (the jar's OptimizedStreamsTaskAssignor, selected per group with
streams.assignor.name), a CountApp group with group.protocol=streams starts with one instance,
processes, scales out to three while more input arrives, and must end with the exact counts. Each
group reads the same records from topics of its own, so both restore the same history.
`kstreams-assignor watch --json` records every epoch's moves; CountApp counts the changelog
records its instances restore; the broker log has the optimized assignor's warm-ups. Prints a
table of both and fails when a check does not hold: optimized must move no more active tasks than
sticky, fewer of the stateful sub-topology's, and restore no more records. A third group runs
`optimized` with a prober beside it (`kstreams-assignor probe`): a task moves only to a copy that
has caught up, so it must restore fewer records than sticky and no more than optimized alone,
with the same exact output.

Environment: KAFKA_BOOTSTRAP, KAFKA_BROKER_LOG, KAFKA_CLASSPATH (the broker's jars, for
SetGroupConfig.java), E2E_JAR (compat/e2e/java's jar), KSTREAMS_ASSIGNOR_BIN, E2E_WORK."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from common import json_lines, run, tail

BOOTSTRAP = os.environ["KAFKA_BOOTSTRAP"]
BROKER_LOG = Path(os.environ["KAFKA_BROKER_LOG"])
CLASSPATH = os.environ["KAFKA_CLASSPATH"]
JAR = os.environ["E2E_JAR"]
BIN = os.environ["KSTREAMS_ASSIGNOR_BIN"]
WORK = Path(os.environ["E2E_WORK"])
JVM = ["java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
BATCH = 3000
STANDBYS = int(os.environ.get("E2E_STANDBYS", "1"))  # the group's streams.num.standby.replicas


def java(*args):
    return [*JVM, "-cp", JAR, "io.kstreamsassignor.e2e.Main", *args]


def must(argv, timeout, what):
    code, out, err = run(argv, timeout)
    if code != 0:
        sys.exit(f"{what} failed ({code}):\n{out}\n{err}")
    return out


PROBE_TAG = "kstreams-assignor.probe"


def is_prober(m):
    return any(t["key"] == PROBE_TAG for t in m.get("clientTags") or [])


def actives(m):
    return sum(len(t["partitions"]) for t in m["assignment"]["activeTasks"])


def settle(app, members, timeout=90, probers=0):
    """Waits until the group has `members` members (and `probers` probers), all at the target
    assignment epoch; with a prober, also until the active tasks are balanced (a task moves only
    once its new owner's copy has caught up, so the group is settled before it is balanced)."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        code, out, err = run([BIN, "describe", "--bootstrap", BOOTSTRAP, "--group", app, "--json"], 30)
        if code == 0:
            g = json.loads(out)
            ms = g["members"]
            workers = [actives(m) for m in ms if not is_prober(m)]
            balanced = probers == 0 or (workers and max(workers) - min(workers) <= 1)
            if (g["groupType"] == "streams" and g["groupState"] == "Stable" and len(ms) == members + probers
                    and sum(map(is_prober, ms)) == probers and balanced
                    and all(m["memberEpoch"] == g["assignmentEpoch"] and m["assignment"] == m["targetAssignment"] for m in ms)):
                return g
            last = out
        else:
            last = err
        time.sleep(1)
    sys.exit(f"{app} did not settle with {members} member(s); last describe:\n{last}\n"
             + "".join(tail(p, 15) for p in sorted(WORK.glob(f"{app}-*.err"))))


def topics(app):
    """Each phase's own input and output topics, so that both groups restore the same history."""
    return ["--input", f"{app}-input", "--output", f"{app}-counts"]


def instance(app, name):
    out = open(WORK / f"{app}-{name}.out", "w")
    err = open(WORK / f"{app}-{name}.err", "w")
    return subprocess.Popen(java("app", "--bootstrap", BOOTSTRAP, "--app-id", app, "--instance", name, "--threads", "1",
                                 "--state-dir", str(WORK / f"state-{app}-{name}"), "--endpoint", f"{name}.e2e.invalid:8080",
                                 "--config", "group.protocol=streams", *topics(app)), stdout=out, stderr=err)


STATEFUL = "1_"  # CountApp's sub-topology 1 counts into a logged store; sub-topology 0 is stateless


def counts(records):
    """Moves of active tasks between processes (all, and those of the stateful sub-topology), and
    every move of any copy, over the epochs watch recorded after its first."""
    active = [m for r in records for m in r["moves"]
              if (m["to"] or {}).get("role") == "active" and m["from"] is not None
              and m["from"]["processId"] != m["to"]["processId"]]
    stateful = sum(1 for m in active if m["task"].startswith(STATEFUL))
    every = sum(len(r["moves"]) for r in records)
    return len(active), stateful, every


def restored(app):
    """Changelog records the group's instances restored into active tasks (each instance's last
    count: CountApp's counts only grow)."""
    total = 0
    for path in WORK.glob(f"{app}-*.out"):
        total += max((r.get("restored", 0) for r in json_lines(path)), default=0)
    return total


def warmups_logged(since):
    """The optimized assignor's log lines written since byte `since` of the broker log."""
    text = BROKER_LOG.read_bytes()[since:].decode(errors="replace")
    lines = [l for l in text.splitlines() if "OptimizedStreamsTaskAssignor:" in l]
    warm = [int(m.group(1)) for l in lines for m in [re.search(r"standbys and (\d+) warm-ups", l)] if m]
    micros = [int(m.group(1)) for l in lines for m in [re.search(r"\((\d+) us, engine", l)] if m]
    return lines, warm, micros


def phase(name, app, probe=False):
    must(java("produce", "--bootstrap", BOOTSTRAP, "--partitions", "4", "--from", "0", "--count", str(BATCH), *topics(app)), 60,
         "produce")
    produced = BATCH
    # With a prober, members report their tasks' offsets every 15 s (60 s by default; 15 s is the
    # least a 4.4.0 broker takes), so that a caught-up copy is seen soon.
    offsets = ["streams.task.offset.interval.ms", "15000"] if probe else []
    must(["java", "-cp", CLASSPATH, str(Path(__file__).with_name("SetGroupConfig.java")), BOOTSTRAP, app,
          "streams.assignor.name", name, "streams.num.standby.replicas", str(STANDBYS), *offsets], 60, "setting the group's configs")
    log_from = BROKER_LOG.stat().st_size
    started = time.monotonic()
    procs = [instance(app, "a")]
    watch = prober = None
    probers = 1 if probe else 0
    wait = 180 if probe else 90
    try:
        settle(app, 1)
        if probe:
            prober = subprocess.Popen([BIN, "probe", "--bootstrap", BOOTSTRAP, "--group", app, "--interval", "2s"],
                                      stdout=open(WORK / f"{app}-probe.jsonl", "w"), stderr=open(WORK / f"{app}-probe.err", "w"))
            settle(app, 1, probers=1)
        must(java("verify", "--bootstrap", BOOTSTRAP, "--at-least", "1", "--timeout-ms", "60000", *topics(app)), 90, "first counts")
        jsonl = WORK / f"{app}-watch.jsonl"
        watch = subprocess.Popen([BIN, "watch", "--bootstrap", BOOTSTRAP, "--group", app, "--interval", "1", "--json", str(jsonl)],
                                 stdout=open(WORK / f"{app}-watch.out", "w"), stderr=open(WORK / f"{app}-watch.err", "w"))
        time.sleep(2)
        # One instance joins at a time, so that both assignors see the same two epochs.
        procs.append(instance(app, "b"))
        must(java("produce", "--bootstrap", BOOTSTRAP, "--from", str(produced), "--count", str(BATCH), *topics(app)), 60, "produce")
        produced += BATCH
        settle(app, 2, wait, probers)
        procs.append(instance(app, "c"))
        must(java("produce", "--bootstrap", BOOTSTRAP, "--from", str(produced), "--count", str(BATCH), *topics(app)), 60, "produce")
        produced += BATCH
        group = settle(app, 3, wait, probers)
        out = must(java("verify", "--bootstrap", BOOTSTRAP, "--total", str(produced), "--timeout-ms", "60000", *topics(app)), 90, "verify")
        exact = json.loads(out.strip().splitlines()[-1]).get("exact") is True
        time.sleep(2)
        watch.send_signal(signal.SIGINT)
        watch.wait(30)
        probes = None
        if prober:
            prober.send_signal(signal.SIGINT)
            if prober.wait(30) != 0:
                sys.exit(f"the prober exited {prober.returncode}:\n" + "".join(tail(WORK / f"{app}-probe.err", 20)))
            probes = sum(1 for r in json_lines(WORK / f"{app}-probe.jsonl") if "probe" in r)
        records = [r for r in json_lines(jsonl) if "moves" in r]
        active_moves, stateful_moves, every = counts(records)
        lines, warm, micros = warmups_logged(log_from)
        per_process = {}
        for m in group["members"]:
            if not is_prober(m):
                per_process[m["processId"]] = per_process.get(m["processId"], 0) + actives(m)
        return {
            "assignor": name + ("+probe" if probe else ""), "probes": probes, "exact": exact, "activeMoves": active_moves, "statefulMoves": stateful_moves,
            "restored": restored(app), "moves": every, "epochs": len(records),
            "warmups": sum(warm), "calls": len(lines), "assignUs": max(micros) if micros else None,
            "activePerProcess": sorted(per_process.values()), "seconds": round(time.monotonic() - started),
        }
    finally:
        for p in (watch, prober):
            if p and p.poll() is None:
                p.kill()
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()


def main():
    WORK.mkdir(parents=True, exist_ok=True)
    stamp = int(time.time())
    rows = []
    for name, probe in (("sticky", False), ("optimized", False), ("optimized", True)):
        row = phase(name, f"streams-assignor-{name}{'-probe' if probe else ''}-{stamp}", probe)
        print(json.dumps(row), flush=True)
        rows.append(row)
    print(f"{'assignor':<16} {'exact':<6} {'active moves':>12} {'stateful':>8} {'restored':>8} {'all moves':>9} {'epochs':>6} "
          f"{'warm-ups':>8} {'actives per process':<20}")
    for r in rows:
        print(f"{r['assignor']:<16} {str(r['exact']):<6} {r['activeMoves']:>12} {r['statefulMoves']:>8} {r['restored']:>8} {r['moves']:>9} "
              f"{r['epochs']:>6} {r['warmups']:>8} {','.join(map(str, r['activePerProcess'])):<20}")
    sticky, optimized, probed = rows
    problems = []
    if not (sticky["exact"] and optimized["exact"]):
        problems.append("the output counts are not exact")
    if sticky["calls"] != 0:
        problems.append(f"the optimized assignor ran for the sticky group ({sticky['calls']} calls)")
    if optimized["calls"] == 0:
        problems.append("the optimized assignor never ran: the broker did not select it")
    if optimized["activeMoves"] > sticky["activeMoves"]:
        problems.append(f"optimized moved {optimized['activeMoves']} active tasks, sticky {sticky['activeMoves']}")
    if optimized["restored"] > sticky["restored"]:
        problems.append(f"optimized restored {optimized['restored']} records, sticky {sticky['restored']}")
    if optimized["statefulMoves"] >= sticky["statefulMoves"]:
        problems.append(f"optimized moved {optimized['statefulMoves']} stateful active tasks, sticky {sticky['statefulMoves']}")
    if not probed["exact"]:
        problems.append("the output counts are not exact under optimized with a prober")
    if not probed["probes"]:
        problems.append("the prober never asked for an assignment")
    if probed["restored"] >= sticky["restored"] or probed["restored"] > optimized["restored"]:
        problems.append(f"optimized with a prober restored {probed['restored']} records, without {optimized['restored']}, "
                        f"sticky {sticky['restored']}")
    if problems:
        print("".join(l + "\n" for l in BROKER_LOG.read_text(errors="replace").splitlines() if "TaskAssignor" in l)[-4000:])
        sys.exit("streams-assignor: " + "; ".join(problems))
    print(f"streams-assignor: exact output under both; active-task moves sticky {sticky['activeMoves']}, "
          f"optimized {optimized['activeMoves']}; of stateful tasks sticky {sticky['statefulMoves']}, optimized "
          f"{optimized['statefulMoves']}; records restored sticky {sticky['restored']}, optimized {optimized['restored']} "
          f"({optimized['warmups']} warm-ups, {optimized['calls']} calls, "
          f"slowest {optimized['assignUs']} us); with a prober: {probed['restored']} records restored, "
          f"{probed['activeMoves']} active-task moves, {probed['probes']} probes, {probed['seconds']} s")


if __name__ == "__main__":
    main()
