#!/usr/bin/env python3
"""The availability benchmark's driver (compat/availability/run.sh starts the broker and calls it).

    availability.py run [--quick] [--scenarios S,..] [--assignors A,..] [--repeats N]
    availability.py report        the summary table and one chart per scenario from the saved runs

A run ("cell") is one scenario under one assignor, on its own application id: the Java side
(compat/availability/java) seeds the store's changelog with --records-per-task records per task,
a steady producer sends events with their wall-clock time as timestamp, instances of the
application start with empty state directories (a cold start: the state is only in the
changelog), and once the group is quiet the scenario's event happens. A reader measures every
output record's end-to-end latency; each instance writes its hooks' events (when each task starts
and stops processing, restoring, updating as a standby; its KafkaStreams state) as JSON lines.
At the end the producer stops, the reader catches up, the output must be exact (every sequence
number once: exactly-once v2), the figures are written to <results>/<scenario>-<assignor>-<n>.json,
and the run's topics and state directories are deleted. The figures are defined in
docs/availability.md.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from common import json_lines, run as run_cmd, tail  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WORK = Path(os.environ.get("AVAIL_WORK", ROOT / "target/availability"))
RESULTS = Path(os.environ.get("AVAIL_RESULTS", ROOT / "docs/availability"))
BOOTSTRAP = "127.0.0.1:" + os.environ.get("KAFKA_PORT", "19792")
JAR = ROOT / "compat/availability/java/target/kstreams-availability.jar"
PLUGIN_JAR = Path(os.environ.get("AVAIL_PLUGIN_JAR", ROOT / "plugin/target/kstreams-assignor-plugin-0.1.0.jar"))
BIN = os.environ.get("KSTREAMS_ASSIGNOR_BIN", str(ROOT / "target/release/kstreams-assignor"))
SET_GROUP_CONFIG = ROOT / "compat/e2e/SetGroupConfig.java"
PARTITIONS = 6
TASKS = [f"0_{p}" for p in range(PARTITIONS)]

# The assignors: name -> (instance configs, the streams group's assignor, a prober beside it).
CLASSIC = ["probing.rebalance.interval.ms=60000"]  # Kafka's least; the default is 10 minutes
ASSIGNORS = {
    "default": (CLASSIC, None, False),
    "optimized": (CLASSIC + ["task.assignor.class=io.kstreamsassignor.plugin.OptimizedTaskAssignor"], None, False),
    "streams-sticky": (["group.protocol=streams"], "sticky", False),
    "streams-optimized": (["group.protocol=streams"], "optimized", False),
    "streams-optimized-probe": (["group.protocol=streams"], "optimized", True),
}

# The scenarios: name -> (instances started cold, the event's window in seconds after it).
SCENARIOS = {
    "scale-out": ("abc", 150),
    "scale-in": ("abcd", 90),
    "crash": ("abcd", 120),
    "bounce": ("abc", 60),           # the window runs from the first stop to 60 s after the last is back
    "bounce-static": ("abc", 60),    # the same with group.instance.id
    "cold-start": ("abc", 30),       # started 10 s apart; the window runs from the first start to 30 s after every task processes
}

FULL = {"records_per_task": 5_500_000, "value_bytes": 100, "rate": 600, "quiet": 20, "spares": 70, "baseline": 30,
        "stagger": 10, "settle_cap": 420}
QUICK = {"records_per_task": 50_000, "value_bytes": 100, "rate": 300, "quiet": 8, "spares": 15, "baseline": 10,
         "stagger": 5, "settle_cap": 120, "windows": {"scale-out": 30}}

procs = {}
lifecycle = []  # (ms, instance, "start" | "stop" | "kill")
T0 = time.time()


def log(text):
    print(f"[{time.time() - T0:7.1f}s] {text}", flush=True)


def now_ms():
    return int(time.time() * 1000)


def java(*args, heap="512m"):
    return ["java", "-Xms64m", f"-Xmx{heap}", "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp", f"{JAR}:{PLUGIN_JAR}", "io.kstreamsassignor.availability.Main", *args]


def spawn(name, argv, cell):
    procs[name] = subprocess.Popen(argv, stdout=open(cell / f"{name}.out", "a"), stderr=open(cell / f"{name}.err", "a"),
                                   stdin=subprocess.DEVNULL, start_new_session=True)


def signal_proc(name, sig):
    proc = procs.get(name)
    if proc and proc.poll() is None:
        os.killpg(proc.pid, sig)


def wait_exit(name, timeout):
    proc = procs.get(name)
    if not proc:
        return
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        signal_proc(name, signal.SIGKILL)
        proc.wait()


def stop_all():
    for name in list(procs):
        signal_proc(name, signal.SIGKILL)
        procs[name].wait()
    procs.clear()


class Cell:
    """One scenario under one assignor: its processes, its events and its figures."""

    def __init__(self, scenario, assignor, rep, cfg):
        self.scenario, self.assignor, self.rep, self.cfg = scenario, assignor, rep, cfg
        self.app = f"avail-{scenario}-{assignor}-{rep}-{int(time.time())}"
        self.dir = WORK / self.app
        self.dir.mkdir(parents=True, exist_ok=True)
        self.names = SCENARIOS[scenario][0]
        self.window = cfg.get("windows", {}).get(scenario, SCENARIOS[scenario][1])

    def args(self):
        return ["--bootstrap", BOOTSTRAP, "--app-id", self.app]

    def start_instance(self, name):
        # A graceful scale-in leaves the group on close (CloseOptions LEAVE_GROUP); otherwise an
        # instance closes as Kafka Streams does by default.
        leave = self.scenario == "scale-in" and name == "d"
        configs, _, _ = ASSIGNORS[self.assignor]
        configs = list(configs)
        if self.scenario == "bounce-static":
            configs.append(f"group.instance.id={self.app}-{name}")
        lifecycle.append((now_ms(), name, "start"))
        spawn(name, java("app", *self.args(), "--instance", name, "--state-dir", str(self.dir / f"state-{name}"),
                         "--leave-on-close", str(leave).lower(), *[a for kv in configs for a in ("--config", kv)]), self.dir)

    def stop_instance(self, name, kill=False):
        lifecycle.append((now_ms(), name, "kill" if kill else "stop"))
        signal_proc(name, signal.SIGKILL if kill else signal.SIGTERM)
        wait_exit(name, 90)

    def events(self):
        rows = []
        for name in "abcd":
            rows += json_lines(self.dir / f"{name}.out")
        return sorted(rows, key=lambda r: r["t"])

    def view(self, until=None):
        """Per task, the instances processing it; the open restores and standbys; the last event's
        time; from the hooks' events and the lifecycle (a killed instance's intervals end there)."""
        points = [(r["t"], 1, r) for r in self.events()] + [(t, 0, {"i": n, "ev": w}) for t, n, w in lifecycle]
        processing, restoring, standby, last = {}, set(), set(), 0
        for t, _, r in sorted(points, key=lambda p: (p[0], p[1])):
            if until is not None and t > until:
                break
            ev, inst = r["ev"], r["i"]
            key = (inst, r.get("task"))
            if ev in ("kill", "start"):
                for task in processing:
                    processing[task].discard(inst)
                restoring = {k for k in restoring if k[0] != inst}
                standby = {k for k in standby if k[0] != inst}
                continue
            if ev == "stop":
                continue
            last = max(last, t)
            if ev == "process-start":
                processing.setdefault(key[1], set()).add(inst)
            elif ev == "process-stop":
                processing.get(key[1], set()).discard(inst)
            elif ev == "restore-start":
                restoring.add(key)
            elif ev in ("restore-end", "restore-suspend"):
                restoring.discard(key)
            elif ev == "standby-start":
                standby.add(key)
            elif ev == "standby-stop":
                standby.discard(key)
        return processing, restoring, standby, last

    def all_processing(self):
        processing, _, _, _ = self.view()
        return all(len(processing.get(t, ())) == 1 for t in TASKS)

    def quiet(self):
        """Every task processed by one instance, nothing restoring, no hook event for cfg['quiet']
        seconds; with a standby (num.standby.replicas is 0: a warm-up, or one of the optimized
        assignor's spares, which stay), none for cfg['spares'] seconds, past a probing rebalance."""
        processing, restoring, standby, last = self.view()
        calm = self.cfg["spares"] if standby else self.cfg["quiet"]
        return all(len(processing.get(t, ())) == 1 for t in TASKS) and not restoring and now_ms() - last >= calm * 1000

    def check_alive(self):
        for name, proc in procs.items():
            if proc.poll() is not None and name in self.expected:
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail(self.dir / f'{name}.err', 30)}")

    def wait(self, what, predicate, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.check_alive()
            self.tick()
            if predicate():
                return True
            time.sleep(0.5)
        if what:
            log(f"{self.app}: not reached in {timeout} s: {what}")
        return False

    def tick(self):
        """Keeps the prober beside a streams group (it exits when no member has joined yet)."""
        if ASSIGNORS[self.assignor][2] and (procs.get("probe") is None or procs["probe"].poll() is not None):
            spawn("probe", [BIN, "probe", "--bootstrap", BOOTSTRAP, "--group", self.app, "--interval", "2s"], self.dir)

    def sleep(self, seconds):
        self.wait(None, lambda: False, seconds)

    def run(self):
        cfg = self.cfg
        _, group_assignor, probe = ASSIGNORS[self.assignor]
        self.expected = set()
        out = run_cmd(java("seed", *self.args(), "--partitions", str(PARTITIONS), "--records-per-task",
                           str(cfg["records_per_task"]), "--value-bytes", str(cfg["value_bytes"]), heap="768m"), 900)
        if out[0] != 0:
            raise RuntimeError(f"seed failed: {out[2][-2000:]}")
        log(f"{self.app}: seeded {out[1].strip()}")
        if group_assignor:
            extra = ["streams.task.offset.interval.ms", "15000"] if probe else []
            out = run_cmd(["java", "-cp", str(JAR), str(SET_GROUP_CONFIG), BOOTSTRAP, self.app,
                           "streams.assignor.name", group_assignor, *extra], 120)
            if out[0] != 0:
                raise RuntimeError(f"group config failed: {out[2][-2000:]}")
        stop_load, stop_read = self.dir / "stop-load", self.dir / "stop-read"
        spawn("reader", java("read", *self.args(), "--out", str(self.dir / "latency.txt"), "--stop-file", str(stop_read),
                             heap="256m"), self.dir)
        spawn("load", java("load", *self.args(), "--rate", str(cfg["rate"]), "--stop-file", str(stop_load), heap="256m"),
              self.dir)
        self.expected |= {"reader", "load"}
        time.sleep(2)
        cold_at = now_ms()
        for name in self.names:
            if self.scenario == "cold-start" and name != self.names[0]:
                self.sleep(cfg["stagger"])  # a deployment bringing its instances up one by one
            self.start_instance(name)
            self.expected.add(name)
        self.wait("every task processing after the cold start", self.all_processing, cfg["settle_cap"])
        processing_at = now_ms()
        settled = self.wait("the group quiet after the cold start", self.quiet, cfg["settle_cap"])
        log(f"{self.app}: every task processing {(processing_at - cold_at) / 1000:.1f} s after the cold start; "
            f"quiet: {settled}")
        if self.scenario != "cold-start":
            self.sleep(cfg["baseline"])  # the baseline: steady processing before the event
        event_at, window_end = self.event(cold_at, processing_at)
        (self.dir / "stop-load").touch()
        wait_exit("load", 60)
        self.expected.discard("load")
        sent = next((r["sent"] for r in json_lines(self.dir / "load.out") if r.get("done")), None)
        self.wait("the reader to read every record", lambda: self.read_count() >= (sent or 0), 120)
        stop_read.touch()
        wait_exit("reader", 30)
        self.expected.clear()
        for name in [n for n in procs if n in "abcd"]:
            self.stop_instance(name)
        stop_all()
        figures = self.figures(cold_at, processing_at, event_at, window_end, sent)
        figures["settled_before_event"] = settled
        return figures

    def read_count(self):
        rows = [r for r in json_lines(self.dir / "reader.out") if "read" in r]
        return rows[-1]["read"] if rows else 0

    def event(self, cold_at, processing_at):
        """Makes the scenario's event happen; returns its time and the end of its window (ms)."""
        if self.scenario == "cold-start":
            end = processing_at + self.window * 1000
            self.sleep(max(0, (end - now_ms()) / 1000))
            return cold_at, end
        at = now_ms()
        if self.scenario == "scale-out":
            self.start_instance("d")
            self.expected.add("d")
        elif self.scenario == "scale-in":
            self.expected.discard("d")
            self.stop_instance("d")
        elif self.scenario == "crash":
            self.expected.discard("d")
            self.stop_instance("d", kill=True)
        else:  # a rolling bounce, each instance back RUNNING before the next
            for name in self.names:
                self.expected.discard(name)
                self.stop_instance(name)
                self.start_instance(name)
                self.expected.add(name)
                self.wait(f"{name} RUNNING again", lambda n=name: self.state_of(n) == "RUNNING" and self.all_processing(),
                          300)
            end = now_ms() + self.window * 1000
            self.sleep(self.window)
            return at, end
        self.sleep(self.window)
        return at, at + self.window * 1000

    def state_of(self, name):
        since = max((t for t, n, w in lifecycle if n == name and w == "start"), default=0)
        states = [r["to"] for r in json_lines(self.dir / f"{name}.out") if r.get("ev") == "state" and r["t"] >= since]
        return states[-1] if states else None

    def figures(self, cold_at, processing_at, event_at, window_end, sent):
        from figures import measure  # the arithmetic, apart from the process control
        return measure(self, cold_at, processing_at, event_at, window_end, sent, lifecycle)


def run_cells(args):
    global RESULTS
    cfg = QUICK if args.quick else FULL
    if args.quick and "AVAIL_RESULTS" not in os.environ:
        RESULTS = WORK / "quick-results"  # a check, not figures for the docs
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "runs").mkdir(exist_ok=True)
    failures = []
    for rep in range(args.repeats):
        for scenario in args.scenarios.split(","):
            for assignor in args.assignors.split(","):
                cell = Cell(scenario, assignor, rep, cfg)
                log(f"cell {scenario} x {assignor} #{rep + 1}: {cell.app}")
                lifecycle.clear()
                started = time.time()
                try:
                    result = cell.run()
                except Exception as e:  # noqa: BLE001 - report, clean up and go on with the next cell
                    stop_all()
                    failures.append(f"{scenario} x {assignor} #{rep + 1}: {e}")
                    log(f"FAILED {failures[-1]}")
                    continue
                finally:
                    run_cmd(java("drop", *cell.args(), heap="128m"), 120)
                    if not args.keep:
                        subprocess.run(["rm", "-rf", str(cell.dir)], check=False)
                result.update({"scenario": scenario, "assignor": assignor, "rep": rep + 1, "quick": args.quick,
                               "config": {k: v for k, v in cfg.items() if k != "windows"}, "window_s": cell.window,
                               "cell_seconds": round(time.time() - started)})
                name = f"{'quick-' if args.quick else ''}{scenario}-{assignor}-{rep + 1}.json"
                (RESULTS / "runs" / name).write_text(json.dumps(result, indent=1) + "\n")
                log(f"{scenario} x {assignor}: " + json.dumps({k: v for k, v in result.items() if k != "series"}))
                problems = check(result)
                if problems:
                    failures.append(f"{scenario} x {assignor} #{rep + 1}: " + "; ".join(problems))
                    log(f"FAILED {failures[-1]}")
    if failures:
        sys.exit("availability: " + " | ".join(failures))


def check(result):
    """What must hold in every run: every record's latency measured, the output exact, every
    task's processing intervals recorded."""
    problems = []
    if result["missing"] or result["duplicates"]:
        problems.append(f"{result['missing']} sequence numbers missing, {result['duplicates']} duplicated")
    if result["records"] != result["sent"]:
        problems.append(f"{result['records']} latencies for {result['sent']} records sent")
    if sorted(result["tasks_with_intervals"]) != TASKS:
        problems.append(f"processing intervals only for {result['tasks_with_intervals']}")
    return problems


def main():
    # run.sh starts this in the background, where SIGINT is ignored: it stops it with SIGTERM.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["run", "report"])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--scenarios", default="scale-out")
    parser.add_argument("--assignors", default="default,optimized")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the cells' work directories")
    args = parser.parse_args()
    if args.command == "run":
        run_cells(args)
    else:
        from figures import report
        report(RESULTS, statistics)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        stop_all()
        sys.exit(130)
