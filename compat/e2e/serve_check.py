#!/usr/bin/env python3
"""`serve` against a real Prometheus and a real browser, on a real broker (run by serve.sh).

    python3 compat/e2e/serve_check.py --serve URL --token T --ca CA --prometheus URL --bin BIN \
        --bootstrap B --group NAME:KIND ... --new-group NAME --new-group-cmd CMD \
        --alert-group NAME --alert-stop CMD --alert-start CMD --gone-group NAME --gone-stop CMD \
        --gone-delete CMD --pause CMD --cont CMD --chromium BIN --screenshot PNG

In order: Prometheus scrapes `serve` over HTTPS with the bearer token without error (`up` 1,
`lastError` empty); per group, the members and every process's active and standby (+ warm-up)
tasks read back through Prometheus' HTTP API equal `describe --json` at a settled moment; a
scrape passes `promtool check metrics`, and OpenMetrics is served when asked; the home page in
headless Chromium lists the groups, shows a group created while it is open without a reload, and
links to the group's `ui` page; the `KafkaStreamsTasksWithoutActive` alert fires when every
instance of a group stops and resolves when they return; a group deleted while followed leaves
the home and the metrics; while the broker is paused (SIGSTOP) every scrape still answers, the
failed looks are counted, and all recovers after it continues. Prints the figures; exit 1 on any
failure.
"""

import argparse
import json
import os
import ssl
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser  # noqa: E402
from ui_check import find, streams_tasks  # noqa: E402


def say(text):
    print(text, flush=True)


class Serve:
    def __init__(self, args):
        self.url, self.token = args.serve.rstrip("/"), args.token
        self.ctx = ssl.create_default_context(cafile=args.ca)

    def get(self, path, accept=None, timeout=10):
        headers = {"Authorization": f"Bearer {self.token}"}
        if accept:
            headers["Accept"] = accept
        req = urllib.request.Request(self.url + path, headers=headers)
        with urllib.request.urlopen(req, timeout=timeout, context=self.ctx) as r:
            return r.headers.get("Content-Type"), r.read().decode()


class Prometheus:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def api(self, path, **params):
        q = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{q}", timeout=10) as r:
            body = json.load(r)
        if body.get("status") != "success":
            raise RuntimeError(f"{path}: {body}")
        return body["data"]

    def query(self, expr):
        return [(s["metric"], float(s["value"][1])) for s in self.api("query", query=expr)["result"]]


def until(what, timeout, poll, check):
    """Calls `check` until it returns a true value (returned); raises after `timeout` s."""
    start = time.monotonic()
    last = None
    while time.monotonic() - start < timeout:
        try:
            last = check()
            if last:
                return last
        except (OSError, RuntimeError, ValueError, KeyError) as e:
            last = e
        time.sleep(poll)
    raise AssertionError(f"{what}: not after {timeout} s (last: {last})")


def describe(args, group):
    r = subprocess.run([args.bin, "describe", "--bootstrap", args.bootstrap, "--group", group, "--json"],
                       capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout) if r.returncode == 0 else None


def expected(g, kind):
    """(settled, members, {process: (active, standby + warm-up)}) from describe --json."""
    per = {}
    if kind == "streams":
        settled = g["groupState"] == "Stable" and all(m["memberEpoch"] == g["assignmentEpoch"] for m in g["members"])
        for m in g["members"]:
            t = m["targetAssignment"]
            a, c = per.get(m["processId"], (0, 0))
            per[m["processId"]] = (a + len(streams_tasks(t["activeTasks"])),
                                   c + len(streams_tasks(t["standbyTasks"]) | streams_tasks(t["warmupTasks"])))
    else:
        settled = g["groupState"] == "Stable" and all(m.get("memberAssignment") for m in g["members"])
        for m in g["members"]:
            a = m.get("memberAssignment") or {}
            p = find(m.get("memberMetadata"), "processId")
            x, y = per.get(p, (0, 0))
            per[p] = (x + len(find(a, "activeTasks") or []), y + len((find(a, "standbyTasks") or {}).keys()))
    return settled, len(g["members"]), per


def from_prometheus(prom, group):
    members = prom.query(f'kstreams_group_members{{group="{group}"}}')
    per = {}
    for labels, v in prom.query(f'kstreams_group_tasks{{group="{group}"}}'):
        a, c = per.get(labels["process"], (0, 0))
        if labels["kind"] == "active":
            a += int(v)
        else:
            c += int(v)
        per[labels["process"]] = (a, c)
    return (int(members[0][1]) if members else None), per


def compare(args, prom, group, kind):
    def check():
        g = describe(args, group)
        if g is None:
            return None
        settled, members, want = expected(g, kind)
        got = from_prometheus(prom, group)
        again = describe(args, group)
        # A settled moment: describe the same before and after reading Prometheus.
        return settled and again is not None and expected(again, kind) == (settled, members, want) and got == (members, want) and (members, want)
    members, per = until(f"Prometheus' values of {group} equal describe --json", 120, 1, check)
    say(f"ok: {group} ({kind}): Prometheus has describe's {members} member(s) and per process (active, standby+warm-up) "
        f"{sorted(per.values())}")


def scrape_checks(args, serve):
    start = time.monotonic()
    content_type, text = serve.get("/metrics")
    took = (time.monotonic() - start) * 1000
    assert content_type.startswith("text/plain; version=0.0.4"), content_type
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
        raise AssertionError(f"promtool check metrics: {r.returncode} {r.stdout} {r.stderr}")
    content_type, om = serve.get("/metrics", accept="application/openmetrics-text;version=1.0.0,text/plain;q=0.5")
    assert content_type.startswith("application/openmetrics-text") and om.endswith("# EOF\n"), content_type
    say(f"ok: a scrape ({len(text)} bytes, {text.count(chr(10))} lines) in {took:.1f} ms over HTTPS passes promtool check metrics; "
        "OpenMetrics served when asked")


def home_checks(args, serve, browser, groups):
    page = browser.open("about:blank")
    page.call("Security.setIgnoreCertificateErrors", ignore=True)
    page.navigate(f"{args.serve.rstrip('/')}/?token={args.token}")
    rows_js = "Array.from(document.querySelectorAll('#groups tbody tr')).map(r => r.dataset.group)"
    page.wait_for(f"document.body.dataset.groups === '{len(groups)}' && "
                  f"document.querySelectorAll('#groups tbody tr[data-state=\"Stable\"]').length === {len(groups)}", 60)
    listed = sorted(page.eval(rows_js))
    assert listed == sorted(groups), f"the home lists {listed}, the broker has {sorted(groups)}"
    say(f"ok: the home lists the broker's Kafka Streams groups: {listed}")
    page.eval("window.__loadedOnce = 1")
    start = time.monotonic()
    subprocess.run(args.new_group_cmd, shell=True, check=True)
    page.wait_for(f"document.querySelector('#groups tbody tr[data-group=\"{args.new_group}\"][data-state=\"Stable\"]') !== null", 180)
    assert page.eval("window.__loadedOnce") == 1, "the home was reloaded"
    say(f"ok: group {args.new_group}, created while the home is open, appears there settled without a reload after "
        f"{time.monotonic() - start:.1f} s")
    page.screenshot(args.screenshot)
    # The link to a group's page: its ui page with the grid.
    group = args.alert_group
    members = page.eval(f"Number(document.querySelector('#groups tbody tr[data-group=\"{group}\"]').dataset.members)")
    page.eval(f"document.querySelector('#groups tbody tr[data-group=\"{group}\"] a').click()")
    page.wait_for(f"location.pathname === '/groups/{urllib.parse.quote(group, safe='')}/' && "
                  f"document.querySelectorAll('#grid tr.member').length === {members}", 30)
    say(f"ok: the home's link opens {group}'s ui page with its {members} member(s) in the grid")
    if page.errors:
        raise AssertionError(f"the pages logged errors: {page.errors}")
    return listed + [args.new_group]


def alert_checks(args, prom):
    alert = f'ALERTS{{alertname="KafkaStreamsTasksWithoutActive",group="{args.alert_group}",alertstate="firing"}}'
    assert not prom.query(alert), "the alert fires before the instances stop"
    start = time.monotonic()
    subprocess.run(args.alert_stop, shell=True, check=True)
    until("the alert fires with every instance stopped", 180, 1, lambda: prom.query(alert))
    missing = prom.query(f'kstreams_group_tasks_without_active{{group="{args.alert_group}"}}')[0][1]
    fired = time.monotonic() - start
    subprocess.run(args.alert_start, shell=True, check=True)
    start = time.monotonic()
    until("the alert resolves with the instances back", 240, 1, lambda: not prom.query(alert))
    say(f"ok: KafkaStreamsTasksWithoutActive fired {fired:.1f} s after every instance of {args.alert_group} stopped "
        f"({missing:.0f} tasks without an active copy) and resolved {time.monotonic() - start:.1f} s after they started again")


def gone_checks(args, serve):
    def rows():
        return {g["group"] for g in json.loads(serve.get("/groups.json")[1])["groups"]}
    until(f"{args.gone_group} followed", 60, 0.5, lambda: args.gone_group in rows())
    subprocess.run(args.gone_stop, shell=True, check=True)
    subprocess.run(args.gone_delete, shell=True, check=True)
    start = time.monotonic()
    until(f"{args.gone_group} dropped once deleted", 60, 0.5,
          lambda: args.gone_group not in rows() and f'group="{args.gone_group}"' not in serve.get("/metrics")[1])
    say(f"ok: group {args.gone_group}, deleted while followed, left the home and the metrics {time.monotonic() - start:.1f} s later")


def pause_checks(args, serve, prom, groups):
    def failed():
        text = serve.get("/metrics")[1]
        return next(float(l.split()[-1]) for l in text.splitlines() if l.startswith('kstreams_looks_total{result="failed"}'))
    before = failed()
    subprocess.run(args.pause, shell=True, check=True)
    try:
        worst = 0.0
        start = time.monotonic()
        while time.monotonic() - start < 12:
            t = time.monotonic()
            serve.get("/metrics", timeout=5)
            serve.get("/groups.json", timeout=5)
            worst = max(worst, time.monotonic() - t)
            time.sleep(0.5)
        until("failed looks counted while the broker is paused", 60, 0.5, lambda: failed() > before)
        reachable = until("the cluster counted unreachable", 60, 0.5,
                          lambda: "kstreams_cluster_reachable 0" in serve.get("/metrics")[1] and True)
        assert reachable
    finally:
        subprocess.run(args.cont, shell=True, check=True)
    say(f"ok: broker paused: every scrape answered (slowest /metrics + /groups.json pair {worst * 1000:.0f} ms), "
        f"{failed() - before:.0f} failed look(s) counted, kstreams_cluster_reachable 0")
    start = time.monotonic()
    until("every group looked at again after the broker continued", 120, 1,
          lambda: len(prom.query("kstreams_group_look_success == 1")) == len(groups)
          and prom.query("kstreams_cluster_reachable == 1"))
    say(f"ok: the broker continued: every group's look succeeds again after {time.monotonic() - start:.1f} s")


def prober_checks(args, prom, groups):
    """With --probe: the prober in the optimized group (a member without a task), none elsewhere."""
    joined = f'kstreams_group_prober_joined{{group="{args.probed_group}"}} == 1'
    until("the prober joins the optimized group", 120, 1, lambda: prom.query(joined))

    def probed_member():
        g = describe(args, args.probed_group)
        idle = [m for m in (g or {}).get("members", []) if not any(
            m["targetAssignment"][k] for k in ("activeTasks", "standbyTasks", "warmupTasks"))]
        return len(idle) == 1 and len(g["members"]) == 2 and g
    until("describe shows the prober, without a task, beside the instance", 60, 1, probed_member)
    others = [g for g, kind in groups.items() if kind == "streams" and g != args.probed_group]
    for g in others:
        assert not prom.query(f'kstreams_group_prober_joined{{group="{g}"}} == 1'), f"a prober joined {g}, assigned by sticky"
    say(f"ok: --probe: a prober joined {args.probed_group} (assigned by optimized) as a member without a task; "
        f"none joined {', '.join(others)} (sticky)")


def main():
    ap = argparse.ArgumentParser()
    for a in ("serve", "token", "ca", "prometheus", "bin", "bootstrap", "new-group", "new-group-cmd", "alert-group", "alert-stop",
              "alert-start", "gone-group", "gone-stop", "gone-delete", "pause", "cont", "screenshot"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--group", action="append", required=True, help="NAME:KIND")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--probed-group")
    args = ap.parse_args()
    serve, prom = Serve(args), Prometheus(args.prometheus)
    groups = dict(g.rsplit(":", 1) for g in args.group)

    def target_up():
        t = [t for t in prom.api("targets")["activeTargets"] if t["labels"]["job"] == "kstreams"]
        return t and t[0]["health"] == "up" and t[0]["lastError"] == "" and t[0]
    t = until("Prometheus scrapes serve", 60, 0.5, target_up)
    until("up == 1", 30, 0.5, lambda: prom.query('up{job="kstreams"} == 1'))
    say(f"ok: Prometheus scrapes {t['scrapeUrl']} (health {t['health']}, lastError empty, last scrape "
        f"{t['lastScrapeDuration'] * 1000:.1f} ms), up == 1")
    if args.probed_group:
        prober_checks(args, prom, groups)
    for group, kind in groups.items():
        compare(args, prom, group, kind)
    scrape_checks(args, serve)
    with Browser(args.chromium) as browser:
        followed = home_checks(args, serve, browser, list(groups) + [args.gone_group])
    alert_checks(args, prom)
    gone_checks(args, serve)
    followed.remove(args.gone_group)
    pause_checks(args, serve, prom, followed)
    t = until("Prometheus still scrapes serve", 30, 0.5, target_up)
    say(f"serve_check: all checks hold (last scrape {t['lastScrapeDuration'] * 1000:.1f} ms)")


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, RuntimeError, TimeoutError) as e:
        print(f"serve_check: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
