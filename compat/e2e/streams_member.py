"""Rust members in a KIP-1071 streams group beside Java Kafka Streams members, on a real broker
(compat/e2e/streams-member.sh). Two CountApp instances (group.protocol=streams) process the word
count; `kstreams-assignor join --protocol streams` members join, leave, are killed, stopped past
the session timeout (fenced) and rejoin with their group.instance.id, while the broker pauses once
and restarts once, down for longer than the session timeout: the Rust members drop their tasks,
and the reloaded coordinator holds r1's group.instance.id until that membership expires.
Each step waits for the group to settle and checks that `describe --json` agrees with the tasks
each Rust member printed last; the Java instances' output must be exact at the end of each phase.

Environment: KAFKA_BOOTSTRAP, KAFKA_BROKER_SCRIPT (compat/kafka/broker.sh, for a restart), KAFKA_WORK
(its work directory: broker.pid, paused with SIGSTOP once),
E2E_JAR (compat/e2e/java's jar), KSTREAMS_ASSIGNOR_BIN, E2E_WORK, E2E_SESSION_MS (the broker's
group.streams.session.timeout.ms)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from common import json_lines, run, tail

BOOTSTRAP = os.environ["KAFKA_BOOTSTRAP"]
BROKER_SCRIPT = os.environ["KAFKA_BROKER_SCRIPT"]
JAR = os.environ["E2E_JAR"]
BIN = os.environ["KSTREAMS_ASSIGNOR_BIN"]
WORK = Path(os.environ["E2E_WORK"])
SESSION_MS = int(os.environ.get("E2E_SESSION_MS", "10000"))
JVM = ["java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
APP = f"streams-member-{int(time.time())}"
TOPICS = ["--input", f"{APP}-input", "--output", f"{APP}-output"]
BATCH = 2000
started = time.monotonic()


def say(text):
    print(f"[{time.monotonic() - started:6.1f} s] {text}", flush=True)


def java(*args):
    return [*JVM, "-cp", JAR, "io.kstreamsassignor.e2e.Main", *args]


def must(argv, timeout, what):
    code, out, err = run(argv, timeout)
    if code != 0:
        sys.exit(f"{what} failed ({code}):\n{out}\n{err}")
    return out


def describe():
    code, out, err = run([BIN, "describe", "--bootstrap", BOOTSTRAP, "--group", APP, "--json"], 30)
    return json.loads(out) if code == 0 else None


def settle(members, timeout=90):
    """The group once it has `members` members, all at the target assignment epoch."""
    deadline = time.monotonic() + timeout
    g = None
    while time.monotonic() < deadline:
        g = describe()
        if g and (g["groupState"] == "Stable" and len(g["members"]) == members
                  and all(m["memberEpoch"] == g["assignmentEpoch"] and m["assignment"] == m["targetAssignment"] for m in g["members"])):
            return g
        time.sleep(0.5)
    sys.exit(f"the group did not settle with {members} members in {timeout} s; last describe:\n{json.dumps(g, indent=1)}\n"
             + "".join(tail(p, 15) for p in sorted(WORK.glob("*.err"))))


def names(task_ids):
    return sorted(f"{t['subtopologyId']}_{p}" for t in task_ids for p in t["partitions"])


class Rust:
    """One `join --protocol streams` member: its JSON lines and its standard error."""

    def __init__(self, name, instance_id=None):
        self.name, self.instance_id, self.runs = name, instance_id, 0
        self.proc = None

    def start(self):
        self.runs += 1
        self.out = WORK / f"{self.name}-{self.runs}.jsonl"
        self.err = WORK / f"{self.name}-{self.runs}.err"
        argv = [BIN, "join", "--protocol", "streams", "--bootstrap", BOOTSTRAP, "--group", APP,
                "--config", f"session.timeout.ms={SESSION_MS}", "--config", "client.id=" + self.name,
                "--config", f"application.server={self.name}.e2e.invalid:9000"]
        if self.instance_id:
            argv += ["--config", f"group.instance.id={self.instance_id}"]
        self.proc = subprocess.Popen(argv, stdout=open(self.out, "w"), stderr=open(self.err, "w"))
        return self

    def lines(self):
        return json_lines(self.out)

    def last(self):
        rows = self.lines()
        return rows[-1] if rows else None

    def member(self, g):
        """This member's entry in a describe, by the member id it printed."""
        last = self.last()
        ms = [m for m in g["members"] if last and m["memberId"] == last["memberId"]]
        return ms[0] if ms else None

    def agrees(self, g):
        """The tasks this member printed last are what describe says it holds."""
        m, last = self.member(g), self.last()
        if not m or last["memberEpoch"] != m["memberEpoch"]:
            return False
        a = m["assignment"]
        return (last["activeTasks"], last["standbyTasks"], last["warmupTasks"]) == (
            names(a["activeTasks"]), names(a["standbyTasks"]), names(a["warmupTasks"]))

    def stop(self, sig=signal.SIGTERM, wait=True):
        self.proc.send_signal(sig)
        if wait:
            code = self.proc.wait(timeout=20)
            say(f"{self.name}: exit {code} after {signal.Signals(sig).name}; {tail(self.err, 1).strip()}")
            return code
        return None


def settled_with(members, rust, timeout=90):
    """Settles with `members`, then waits until every live Rust member printed what describe says."""
    deadline = time.monotonic() + timeout
    while True:
        g = settle(members, timeout=max(1, deadline - time.monotonic()))
        if all(r.agrees(g) for r in rust):
            return g
        if time.monotonic() > deadline:
            sys.exit(f"a Rust member's last line differs from describe:\n{json.dumps(g, indent=1)}\n"
                     + "\n".join(f"{r.name}: {r.last()}" for r in rust))
        time.sleep(0.5)


def row(g, rust):
    """Tasks per member of one epoch: `a: 0_1 1_2 | r1: …`."""
    who = {r.member(g)["memberId"]: r.name for r in rust if r.member(g)}
    parts = []
    for m in sorted(g["members"], key=lambda m: who.get(m["memberId"], m["clientId"])):
        name = who.get(m["memberId"], m["clientId"].split("-StreamThread")[0][-8:])
        parts.append(f"{name}: {' '.join(names(m['assignment']['activeTasks'])) or '-'}")
    return f"epoch {g['groupEpoch']}: " + " | ".join(parts)


def produced_and_exact(total):
    must(java("produce", "--bootstrap", BOOTSTRAP, "--partitions", "4", "--from", str(total - BATCH), "--count", str(BATCH), *TOPICS),
         60, "produce")
    return total


def verify(total, what):
    out = must(java("verify", "--bootstrap", BOOTSTRAP, "--total", str(total), "--timeout-ms", "90000", *TOPICS), 120, f"verify ({what})")
    say(f"output exact after {what}: {out.strip()}")


def java_instance(name, port):
    out = open(WORK / f"{name}.out", "w")
    err = open(WORK / f"{name}.err", "w")
    return subprocess.Popen(java("app", "--bootstrap", BOOTSTRAP, "--app-id", APP, "--instance", name, "--threads", "1",
                                 "--state-dir", str(WORK / f"state-{name}"), "--endpoint", f"{name}.e2e.invalid:{port}",
                                 "--config", "group.protocol=streams", *TOPICS), stdout=out, stderr=err)


def main():
    procs = []
    rust = []
    try:
        total = produced_and_exact(BATCH)
        procs += [java_instance("a", 8080), java_instance("b", 8081)]
        g = settle(2)
        say(row(g, []))
        verify(total, "two Java instances")

        # A Rust member joins: the broker gives it tasks; the Java output stays exact.
        r1 = Rust("r1", instance_id="rust-1").start()
        rust.append(r1)
        g = settled_with(3, [r1])
        held = r1.last()
        assert held["activeTasks"], f"the broker gave r1 no active task: {held}"
        say(f"r1 joined: {row(g, rust)}")
        total = produced_and_exact(total + BATCH)

        # It leaves (SIGTERM): its tasks go back to the Java instances, which count everything.
        assert r1.stop() == 0, tail(r1.err, 20)
        g = settle(2)
        say(f"r1 left: {row(g, [])}")
        verify(total, "r1 joined and left")

        # Two Rust members: r1 again with its group.instance.id, and r2.
        r2 = Rust("r2").start()
        r1.start()
        rust = [r1, r2]
        g = settled_with(4, rust)
        say(f"r1 and r2: {row(g, rust)}")
        total = produced_and_exact(total + BATCH)

        # The broker pauses for 3 s (SIGSTOP): the members wait, retry and carry on.
        broker_pid = int((Path(os.environ["KAFKA_WORK"]) / "broker.pid").read_text())
        os.kill(broker_pid, signal.SIGSTOP)
        time.sleep(3)
        os.kill(broker_pid, signal.SIGCONT)
        g = settled_with(4, rust)
        assert r1.proc.poll() is None and r2.proc.poll() is None, "a Rust member exited on the broker's pause"
        say(f"after the broker's 3 s pause: {row(g, rust)}")

        # The broker restarts on its storage, down for longer than the session timeout: the Rust
        # members drop their tasks and join again; the coordinator loads the group with r1's
        # static membership and refuses r1's join until that membership's session expires.
        down = time.monotonic()
        must(["bash", BROKER_SCRIPT, "restart", str(SESSION_MS // 1000 + 1)], 180, "restarting the broker")
        say(f"broker restarted after {time.monotonic() - down:.1f} s down")
        deadline = time.monotonic() + 60
        while not all("reconnected to" in r.err.read_text() for r in rust):
            if time.monotonic() > deadline:
                sys.exit("a Rust member did not reconnect after the broker's restart:\n" + "".join(tail(r.err, 10) for r in rust))
            time.sleep(0.5)
        g = settled_with(4, rust, timeout=SESSION_MS / 1000 + 90)
        assert r1.proc.poll() is None and r2.proc.poll() is None, "a Rust member exited on the broker's restart"
        say(f"after the broker's restart, {time.monotonic() - down:.1f} s after it went down: {row(g, rust)}")
        for r in rust:
            say(f"  {r.name}: " + "; ".join(l.strip() for l in r.err.read_text().splitlines()
                                             if "retrying" in l or "reconnected" in l or "lost" in l or "joined" in l)[-600:])

        # r2 is killed (SIGKILL): its tasks come back after the session timeout.
        killed_at = time.monotonic()
        r2.stop(signal.SIGKILL)
        rust = [r1]
        g = settled_with(3, rust, timeout=SESSION_MS / 1000 + 60)
        say(f"r2 killed, removed after {time.monotonic() - killed_at:.1f} s: {row(g, rust)}")

        # r1 is stopped (SIGSTOP) past the session timeout: the coordinator fences it out; when it
        # runs again it drops its tasks before anything else and joins again.
        before = r1.last()
        r1.stop(signal.SIGSTOP, wait=False)
        g = settle(2, timeout=SESSION_MS / 1000 + 60)
        say(f"r1 paused past the session timeout, fenced: {row(g, [])}")
        r1.proc.send_signal(signal.SIGCONT)
        g = settled_with(3, rust)
        err = r1.err.read_text()
        assert "lost" in err and "joining again" in err, f"r1 did not report its fencing:\n{err}"
        fenced = [l for l in r1.lines() if l["memberEpoch"] == 0 and l["status"] and l["status"][0].startswith("fenced:")]
        assert fenced and not fenced[0]["activeTasks"], f"r1 printed no line without its lost tasks: {r1.lines()}"
        after = r1.last()
        say(f"r1 resumed and rejoined (epoch {before['memberEpoch']} -> {after['memberEpoch']}): {row(g, rust)}")

        # A static member's restart within the session keeps its tasks: SIGTERM leaves with -2.
        before = r1.last()
        assert r1.stop() == 0, tail(r1.err, 20)
        r1.start()
        g = settled_with(3, rust)
        after = r1.last()
        say(f"r1 restarted with group.instance.id rust-1: {before['activeTasks']} -> {after['activeTasks']}")
        assert after["activeTasks"] == before["activeTasks"], (before, after)
        assert r1.stop() == 0, tail(r1.err, 20)
        g = settle(2, timeout=SESSION_MS / 1000 + 60)
        verify(total, "every Rust step")
        say(f"streams-member: all checks hold in {time.monotonic() - started:.0f} s")
    finally:
        for r in rust:
            if r.proc and r.proc.poll() is None:
                r.proc.send_signal(signal.SIGCONT)
                r.proc.kill()
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=40)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM"))
    main()
