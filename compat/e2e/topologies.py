"""A differential test over real topologies (compat/e2e/topologies.sh): for each application of
the Java harness (compat/e2e/java, Apps.java: joins with re-keying, a stream-stream windowed join,
a foreign-key join, windowed and session aggregations, suppress, a table groupBy, a global table,
named processors, independent sub-topologies), on one Kafka 4.4.0 broker:

1. streams protocol (group <prefix>-<app>-s): one Java instance (group.protocol=streams) runs and
   holds every task; `join --protocol streams` with the topology missing its last non-global
   sub-topology must exit non-zero with a sentence on standard error, and the Java instance keeps
   its tasks; `join --protocol streams --topology <the describe() text>` must be accepted
   (memberEpoch > 0, listed by `describe --json`), take tasks once the group settles, and exit 0
   on SIGTERM; the Java instance's output must then be exact.
2. classic protocol (group <prefix>-<app>-c): `lead --topology <the describe() text>` joins first
   and leads a Java instance: every task assigned and the instance RUNNING with all of them, the
   output exact. For an application that fixes a repartition topic's partition count (`multi`),
   which neither the text nor the members' subscriptions show, `lead` gets the topology JSON with
   the count instead (docs/topology.md), as topo-prepare writes it.
3. classic protocol, wrong topology (group <prefix>-<app>-w): `lead` with the topology missing
   that sub-topology must exit non-zero with an `error:` sentence once the Java instance joins,
   without handing out an assignment.

The input of every application is produced once, with explicit event times, before any instance
starts; each group writes its own output topic, checked against the expected result that the
harness computes from the input without Kafka Streams (Apps.expected).

Prints a summary table and writes it to $E2E_WORK/topologies.json; exit 1 when any check failed.

Environment: KAFKA_BOOTSTRAP, E2E_JAR, KSTREAMS_ASSIGNOR_BIN, E2E_WORK, E2E_SESSION_MS (the
broker's group.streams.session.timeout.ms), E2E_APPS (comma-separated; default all),
E2E_PARALLEL (applications run at once; default 2).
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import json_lines, run, tail

BOOTSTRAP = os.environ["KAFKA_BOOTSTRAP"]
JAR = os.environ["E2E_JAR"]
BIN = os.environ["KSTREAMS_ASSIGNOR_BIN"]
WORK = Path(os.environ["E2E_WORK"])
SESSION_MS = int(os.environ.get("E2E_SESSION_MS", "10000"))
PARALLEL = int(os.environ.get("E2E_PARALLEL", "2"))
JVM = ["java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
PREFIX = f"topo{int(time.time()) % 100000}"
# Event times start 10 minutes ago, on a whole minute: windows are aligned, and no record is
# older than the topics' retention.
BASE = (int(time.time()) // 60 - 10) * 60_000
WRONG_WAIT = 30  # seconds for a wrong topology to be refused
started = time.monotonic()
print_lock = threading.Lock()
live = set()  # every process started and not yet reaped, for the cleanup


def say(app, text):
    with print_lock:
        print(f"[{time.monotonic() - started:6.1f} s] {app}: {text}", flush=True)


def java(*args):
    return [*JVM, "-cp", JAR, "io.kstreamsassignor.e2e.Main", *args]


class Proc:
    """A process of ours with its standard output and error in files."""

    def __init__(self, name, argv):
        self.name = name
        self.out = WORK / f"{name}.out"
        self.err = WORK / f"{name}.err"
        self.proc = subprocess.Popen(argv, stdout=open(self.out, "w"), stderr=open(self.err, "w"),
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        live.add(self.proc)

    def alive(self):
        return self.proc.poll() is None

    def lines(self):
        return json_lines(self.out)

    def stderr(self):
        return self.err.read_text(errors="replace")

    def wait(self, timeout):
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        live.discard(self.proc)
        return code

    def stop(self, timeout=40):
        """SIGTERM, then SIGKILL of its process group after `timeout` s; its exit code."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        code = self.wait(timeout)
        if code is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            code = self.proc.wait()
            live.discard(self.proc)
        return code


def wait_for(predicate, timeout, interval=0.5):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def describe(group):
    code, out, _ = run([BIN, "describe", "--bootstrap", BOOTSTRAP, "--group", group, "--json"], 30)
    try:
        return json.loads(out) if code == 0 else None
    except json.JSONDecodeError:
        return None


def names(task_ids):
    return sorted(f"{t['subtopologyId']}_{p}" for t in task_ids for p in t["partitions"])


def settled(group, members):
    """The group's describe once it has `members` members, each at the target assignment."""
    g = describe(group)
    if g and g["groupState"] == "Stable" and len(g["members"]) == members and all(
            m["memberEpoch"] == g["assignmentEpoch"] and m["assignment"] == m["targetAssignment"]
            for m in g["members"]):
        return g
    return None


def without_last_subtopology(text):
    """The describe() text without its last non-global `Sub-topology: N` section, N, and the
    topics that section reads."""
    lines = text.splitlines(keepends=True)
    heads = [(i, m.group(1)) for i, l in enumerate(lines)
             if (m := re.match(r"\s*Sub-topology: (\S+)(.*)$", l)) and "global" not in m.group(2)]
    if len(heads) < 2:
        raise ValueError(f"the topology has {len(heads)} non-global sub-topology: none would remain")
    start, sid = heads[-1]
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"\s*Sub-topology: ", lines[i])), len(lines))
    topics = sorted({t.strip() for l in lines[start:end] if (m := re.search(r"Source: .*\(topics: \[(.*)\]\)", l))
                     for t in m.group(1).split(",")})
    return "".join(lines[:start] + lines[end:]).rstrip() + "\n", sid, topics


def names_what(text, sid, topics):
    """Whether an error sentence says what does not match: it names the missing sub-topology or
    one of the topics only it reads."""
    low = text.lower()
    return bool(re.search(rf"sub-?topology {re.escape(sid)}\b", low)) or any(t.lower() in low for t in topics)


def java_states(p):
    return [r for r in p.lines() if "state" in r and "active" in r]


def verify(app, group, timeout=90):
    code, out, err = run(java("topo-verify", "--bootstrap", BOOTSTRAP, "--prefix", PREFIX, "--app", app,
                              "--group", group, "--base", str(BASE), "--timeout-ms", str(timeout * 1000)),
                         timeout + 60)
    line = out.strip().splitlines()[-1] if out.strip() else err.strip()[-1500:]
    return code == 0, line


def java_instance(app, group, protocol, name):
    return Proc(name, java(
        "topo-app", "--bootstrap", BOOTSTRAP, "--prefix", PREFIX, "--app", app, "--group", group,
        "--instance", name, "--threads", "1", "--state-dir", str(WORK / "state" / name),
        "--endpoint", f"{name}.e2e.invalid:8080", "--config", f"group.protocol={protocol}"))


def join(app, group, topology, name):
    return Proc(name, [BIN, "join", "--protocol", "streams", "--bootstrap", BOOTSTRAP,
                       "--group", f"{PREFIX}-{app}-{group}", "--topology", str(topology),
                       "--config", f"session.timeout.ms={SESSION_MS}", "--config", f"client.id={name}",
                       "--config", f"application.server={name}.e2e.invalid:9000"])


def lead(app, group, topology, name):
    return Proc(name, [BIN, "lead", "--bootstrap", BOOTSTRAP, "--group", f"{PREFIX}-{app}-{group}",
                       "--topology", str(topology)])


def last_lines(text, n=3):
    return " | ".join(l.strip() for l in text.strip().splitlines()[-n:]) or "(nothing on standard error)"


class Row:
    def __init__(self, app, info):
        self.app = app
        self.data = {
            "topology": app, "subtopologies": info["subtopologies"], "globalStores": info["globalStores"],
            "tasks": None, "streamsTasks": None, "removedSubtopology": None, "removedReads": None,
            "streams": {"accepted": None, "tasksTaken": None, "refusedWrong": None, "javaUndisturbed": None,
                        "outputExact": None, "taken": None, "refusal": None},
            "classic": {"led": None, "outputExact": None, "refusedWrong": None, "refusal": None},
            "failures": [],
        }

    def fail(self, phase, text):
        self.data["failures"].append(f"{phase}: {text}")
        say(self.app, f"FAILED {phase}: {text}")


def streams_phase(row, app, right, wrong):
    s = row.data["streams"]
    group = f"{PREFIX}-{app}-s"
    procs = []
    try:
        j = java_instance(app, "s", "streams", f"{app}-s-java")
        procs.append(j)
        g = wait_for(lambda: (not j.alive() and "exit") or (
            (st := java_states(j)) and st[-1]["state"] == "RUNNING" and st[-1]["active"] and settled(group, 1)), 120)
        if not g or g == "exit":
            row.fail("streams", f"the Java instance did not run alone with every task in 120 s; {last_lines(j.stderr())}")
            return
        alone = java_states(j)[-1]["active"]
        all_tasks = names(g["members"][0]["assignment"]["activeTasks"])
        if sorted(alone) != all_tasks:
            row.fail("streams", f"the Java instance runs {alone}, describe says it holds {all_tasks}")
        row.data["tasks"], row.data["streamsTasks"] = len(all_tasks), all_tasks
        say(app, f"streams: the Java instance runs all {len(all_tasks)} tasks alone: {' '.join(all_tasks)}")

        # The wrong topology: refused before anything else, the Java instance undisturbed.
        before = len(java_states(j))
        w = join(app, "s", wrong, f"{app}-s-join-wrong")
        procs.append(w)
        code = w.wait(WRONG_WAIT)
        err = w.stderr()
        if code is None:
            held = w.lines()
            row.fail("streams", f"`join` with the topology missing sub-topology {row.data['removedSubtopology']} was not refused "
                     f"within {WRONG_WAIT} s; its last line: {json.dumps(held[-1]) if held else '(none)'}; "
                     f"standard error: {last_lines(err)}")
            s["refusedWrong"] = False
            code = w.stop(20)
            say(app, f"streams: stopped the wrong `join` (exit {code})")
        elif code == 0 or not err.strip():
            row.fail("streams", f"`join` with the wrong topology exited {code}; standard error: {last_lines(err)}")
            s["refusedWrong"] = False
        else:
            s["refusal"] = err.strip().splitlines()[-1]
            joined = [l for l in w.lines() if l.get("memberEpoch", 0) > 0]
            s["refusedWrong"] = not joined and names_what(s["refusal"], row.data["removedSubtopology"], row.data["removedReads"])
            if joined:
                row.fail("streams", f"`join` with the wrong topology exited {code} but had joined first: {json.dumps(joined[0])}")
            elif not s["refusedWrong"]:
                row.fail("streams", f"`join` with the wrong topology exited {code}, but its sentence does not say what does "
                         f"not match (it names neither sub-topology {row.data['removedSubtopology']} nor a topic of "
                         f"{row.data['removedReads']}): {last_lines(err)}")
            say(app, f"streams: the wrong topology: exit {code}: {s['refusal']}")
        changed = [r for r in java_states(j)[before:] if r["state"] != "RUNNING" or r["active"] != alone]
        s["javaUndisturbed"] = j.alive() and not changed
        if not s["javaUndisturbed"]:
            row.fail("streams", f"the Java instance was disturbed by the wrong `join`: alive {j.alive()}, "
                     f"changes {[(r['state'], r['active']) for r in changed][:4]}")
            if not wait_for(lambda: settled(group, 1), 60):
                row.fail("streams", "the group did not settle back to the Java instance alone in 60 s")
                return

        # The right topology: accepted, listed, takes tasks, leaves on SIGTERM.
        r = join(app, "s", right, f"{app}-s-join")
        procs.append(r)
        first = wait_for(lambda: (not r.alive() and "exit") or next((l for l in r.lines() if l.get("memberEpoch", 0) > 0), None), 60)
        if not first or first == "exit":
            code = r.stop(20)
            row.fail("streams", f"`join --topology` was not accepted (exit {code}); its lines {r.lines()[-2:]}; "
                     f"standard error: {last_lines(r.stderr())}")
            s["accepted"] = False
            return
        member_id = first["memberId"]

        def agreed():
            if not r.alive():
                return "exit"
            g = settled(group, 2)
            if not g:
                return None
            m = next((m for m in g["members"] if m["memberId"] == member_id), None)
            last = r.lines()[-1]
            if m is None or last["memberEpoch"] != m["memberEpoch"]:
                return None
            a = m["assignment"]
            if (last["activeTasks"], last["standbyTasks"], last["warmupTasks"]) != (
                    names(a["activeTasks"]), names(a["standbyTasks"]), names(a["warmupTasks"])):
                return None
            return last

        last = wait_for(agreed, 90)
        listed = describe(group)
        s["accepted"] = bool(listed and any(m["memberId"] == member_id for m in listed["members"]))
        if not s["accepted"]:
            row.fail("streams", f"`join` printed memberEpoch {first['memberEpoch']} but describe does not list "
                     f"member {member_id}")
        if not last or last == "exit":
            row.fail("streams", f"the group did not settle with the Rust member in 90 s (alive {r.alive()}); "
                     f"its last line: {r.lines()[-1] if r.lines() else None}; standard error: {last_lines(r.stderr())}")
            s["tasksTaken"] = False
        else:
            taken = last["activeTasks"] + last["standbyTasks"] + last["warmupTasks"]
            s["tasksTaken"] = bool(taken)
            s["taken"] = {"active": last["activeTasks"], "standby": last["standbyTasks"], "warmup": last["warmupTasks"]}
            if not taken:
                row.fail("streams", f"the Rust member settled without a task: {json.dumps(last)}")
            say(app, f"streams: `join` accepted (epoch {last['memberEpoch']}), holds active {last['activeTasks']} "
                f"standby {last['standbyTasks']} warm-up {last['warmupTasks']}")
        code = r.stop(20)
        if code != 0:
            row.fail("streams", f"`join` exited {code} on SIGTERM; standard error: {last_lines(r.stderr())}")
        if not wait_for(lambda: settled(group, 1), 60):
            row.fail("streams", "the group did not settle back to the Java instance alone in 60 s")
        exact, line = verify(app, "s")
        s["outputExact"] = exact
        if not exact:
            row.fail("streams", f"the Java instance's output is not exact: {line}")
        say(app, f"streams: output {line}")
        if not j.alive():
            row.fail("streams", f"the Java instance exited; {last_lines(j.stderr())}")
    finally:
        for p in procs:
            p.stop()


def generations(p):
    return [l for l in p.lines() if "members" in l]


def assigned(gen):
    return sorted(t for m in gen["members"] for t in m.get("activeTasks", []))


def classic_phase(row, app, right):
    c = row.data["classic"]
    group = f"{PREFIX}-{app}-c"
    procs = []
    try:
        leader = lead(app, "c", right, f"{app}-c-lead")
        procs.append(leader)
        if not wait_for(lambda: (not leader.alive() and "exit") or generations(leader), 60) or not leader.alive():
            row.fail("classic", f"`lead` did not form the group (alive {leader.alive()}); {last_lines(leader.stderr())}")
            c["led"] = False
            return
        j = java_instance(app, "c", "classic", f"{app}-c-java")
        procs.append(j)

        def running_assigned():
            """The Java instance RUNNING with what our leader's last generation gave it."""
            if not j.alive() or not leader.alive():
                return "exit"
            st = java_states(j)
            gens = generations(leader)
            if not st or st[-1]["state"] != "RUNNING" or not gens or len(gens[-1]["members"]) < 2:
                return None
            if sorted(st[-1]["active"]) != assigned(gens[-1]):
                return None
            return st[-1], gens[-1]

        got = wait_for(running_assigned, 120)
        if not got or got == "exit":
            row.fail("classic", f"the Java instance did not run what our leader assigned in 120 s (leader alive "
                     f"{leader.alive()}, Java alive {j.alive()}); last generation "
                     f"{json.dumps(generations(leader)[-1:])[:600]}; Java {java_states(j)[-1:]}; leader: {last_lines(leader.stderr())}")
            c["led"] = False
            return
        st, gen = got
        tasks = assigned(gen)
        c["led"] = len(set(tasks)) == len(tasks) and (row.data["tasks"] is None or len(tasks) == row.data["tasks"])
        if len(set(tasks)) != len(tasks):
            row.fail("classic", f"our leader assigned a task twice: {tasks}")
        elif not c["led"]:
            row.fail("classic", f"our leader assigned {len(tasks)} tasks ({' '.join(tasks)}), the application has "
                     f"{row.data['tasks']} (the Java instance alone on the streams protocol ran "
                     f"{' '.join(row.data['streamsTasks'])})")
        if row.data["tasks"] is None:
            row.data["tasks"] = len(tasks)
        say(app, f"classic: our leader assigned {len(tasks)} tasks (generation {gen['generationId']}), the Java instance "
            f"RUNNING with them")
        exact, line = verify(app, "c")
        c["outputExact"] = exact
        if not exact:
            row.fail("classic", f"the Java instance's output is not exact: {line}")
        say(app, f"classic: output {line}")
        code = leader.stop(20)
        if code != 0:
            row.fail("classic", f"`lead` exited {code} on SIGTERM; {last_lines(leader.stderr())}")
    finally:
        for p in reversed(procs):
            p.stop()


def classic_wrong_phase(row, app, wrong):
    c = row.data["classic"]
    procs = []
    try:
        leader = lead(app, "w", wrong, f"{app}-w-lead")
        procs.append(leader)
        if not wait_for(lambda: (not leader.alive() and "exit") or generations(leader), 60) or not leader.alive():
            code = leader.stop(5)
            c["refusedWrong"] = False
            row.fail("classic", f"`lead` with the wrong topology exited {code} before any Java member joined: "
                     f"{last_lines(leader.stderr())}")
            return
        j = java_instance(app, "w", "classic", f"{app}-w-java")
        procs.append(j)
        # Refused: it exits. Not refused: it assigns a generation with the Java member in it (then
        # it has 3 s more to exit), or it is still there after WRONG_WAIT + 30 s.
        with_java = wait_for(lambda: not leader.alive() or any(len(g["members"]) > 1 for g in generations(leader)),
                             WRONG_WAIT + 30)
        code = leader.wait(3 if with_java else 1)
        err = leader.stderr()
        handed = [(g["generationId"], assigned(g)) for g in generations(leader) if assigned(g)]
        if code is None:
            c["refusedWrong"] = False
            gens = [g for g in generations(leader) if len(g["members"]) > 1]
            what = (f"it assigned generation {gens[-1]['generationId']} to {len(gens[-1]['members'])} members, "
                    f"{len(assigned(gens[-1]))} tasks of {row.data['tasks']}" if gens else
                    f"it was still running {WRONG_WAIT + 30} s after the Java member's start")
            row.fail("classic", f"`lead` with the topology missing sub-topology {row.data['removedSubtopology']} "
                     f"was not refused: {what}; standard error: {last_lines(err)}")
        elif code == 0 or "error:" not in err:
            c["refusedWrong"] = False
            row.fail("classic", f"`lead` with the wrong topology exited {code} without an `error:` sentence: {last_lines(err)}")
        else:
            line = next(l for l in reversed(err.strip().splitlines()) if "error:" in l)
            c["refusal"] = line.strip()
            says = "subscri" in line.lower() or names_what(line, row.data["removedSubtopology"], row.data["removedReads"])
            c["refusedWrong"] = not handed and says
            if handed:
                row.fail("classic", f"`lead` refused (exit {code}) but first handed out {handed}")
            if not says:
                row.fail("classic", f"`lead` with the wrong topology exited {code}, but its sentence does not say that the "
                         f"members subscribe to topics the file does not read ({row.data['removedReads']}): {c['refusal']}")
            say(app, f"classic: the wrong topology: exit {code}: {c['refusal']}")
    finally:
        for p in reversed(procs):
            p.stop()


def run_app(app, info):
    row = Row(app, info)
    right = WORK / "topologies" / f"{app}-s.txt"
    wrong = WORK / "topologies" / f"{app}-wrong.txt"
    text, sid, reads = without_last_subtopology(right.read_text())
    wrong.write_text(text)
    row.data["removedSubtopology"], row.data["removedReads"] = sid, reads
    t0 = time.monotonic()
    # A classic leader cannot see a fixed repartition count (Repartitioned.withNumberOfPartitions)
    # in the members' subscriptions, nor in the describe() text: for an application that fixes one,
    # topo-prepare also writes the topology JSON with the count, and `lead` is given that.
    classic = WORK / "topologies" / f"{app}-c.json"
    if not classic.exists():
        classic = WORK / "topologies" / f"{app}-c.txt"
    for name, phase, args in (("streams", streams_phase, (right, wrong)),
                              ("classic", classic_phase, (classic,)),
                              ("classic wrong", classic_wrong_phase, (wrong,))):
        try:
            phase(row, app, *args)
        except Exception as e:  # noqa: BLE001 - one application's failure is reported, the others run
            row.fail(name, f"{type(e).__name__}: {e}")
    row.data["seconds"] = round(time.monotonic() - t0, 1)
    say(app, f"done in {row.data['seconds']} s, {len(row.data['failures'])} failure(s)")
    return row.data


def mark(v):
    return {True: "yes", False: "NO", None: "-"}[v]


def table(rows):
    head = ["topology", "sub-topologies", "tasks", "streams: accepted", "tasks taken", "refused wrong",
            "output exact", "classic: led", "output exact", "refused wrong", "seconds"]
    body = []
    for r in rows:
        s, c = r["streams"], r["classic"]
        subs = str(r["subtopologies"]) + (f" + {r['globalStores']} global" if r["globalStores"] else "")
        body.append([r["topology"], subs, "-" if r["tasks"] is None else str(r["tasks"]),
                     mark(s["accepted"]), mark(s["tasksTaken"]),
                     mark(s["refusedWrong"] and s["javaUndisturbed"] if s["refusedWrong"] is not None else None),
                     mark(s["outputExact"]), mark(c["led"]), mark(c["outputExact"]), mark(c["refusedWrong"]),
                     str(r.get("seconds", "-"))])
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    fmt = lambda cells: "  ".join(cell.ljust(w) for cell, w in zip(cells, widths)).rstrip()
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(b) for b in body])


def main():
    (WORK / "topologies").mkdir(parents=True, exist_ok=True)
    code, out, _ = run(java("topo-list"), 60)
    apps = os.environ.get("E2E_APPS", "").split(",") if os.environ.get("E2E_APPS") else out.split()
    code, out, err = run(java("topo-prepare", "--bootstrap", BOOTSTRAP, "--prefix", PREFIX, "--base", str(BASE),
                              "--apps", ",".join(apps), "--groups", "s,c,w", "--dir", str(WORK / "topologies")), 180)
    if code != 0:
        sys.exit(f"topo-prepare failed ({code}):\n{err[-3000:]}")
    info = {r["app"]: r for r in (json.loads(l) for l in out.splitlines() if l.startswith("{"))}
    say("all", f"{len(apps)} applications, input produced (prefix {PREFIX}, event times from {BASE}): "
        + ", ".join(f"{a} {info[a]['records']} records" for a in apps))
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        rows = list(pool.map(lambda a: run_app(a, info[a]), apps))
    elapsed = time.monotonic() - started
    summary = {"prefix": PREFIX, "base": BASE, "elapsedSeconds": round(elapsed, 1), "binary": BIN, "rows": rows}
    (WORK / "topologies.json").write_text(json.dumps(summary, indent=1) + "\n")
    print("\n===== topologies: Rust members and leaders for real Kafka Streams 4.4 applications =====")
    print("(streams: join --protocol streams beside a Java instance; classic: lead for a Java instance; "
          "refused wrong: the describe() text without its last non-global sub-topology, refused, the Java "
          "instance undisturbed)")
    print(table(rows))
    failures = [(r["topology"], f) for r in rows for f in r["failures"]]
    if failures:
        print(f"\n{len(failures)} failure(s):")
        for app, f in failures:
            print(f"  {app}: {f}")
    print(f"\nsummary written to {WORK / 'topologies.json'}; elapsed {elapsed:.0f} s")
    sys.exit(1 if failures else 0)


def cleanup(*_):
    for p in list(live):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    sys.exit("stopped by a signal")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, cleanup)
    signal.signal(signal.SIGINT, cleanup)
    try:
        main()
    finally:
        for p in list(live):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
