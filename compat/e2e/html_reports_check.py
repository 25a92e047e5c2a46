#!/usr/bin/env python3
"""The HTML reports of `simulate --html` and `assign --html` in headless Chromium, from disk.

    python3 compat/e2e/html_reports_check.py --dir target/html-reports --screenshots target

Opens each page of DIR as file:// (written by compat/e2e/html-reports.sh, each beside the JSON
of the same run) and checks its DOM against that JSON:
  simulate.html       a row per rebalance, the footer's totals the report's, the chart there;
  compare*.html       a row per scenario whose A and B figures are the JSON's, the sum row the
                      sum of the JSON's rows, a target per line;
  protocols.html      a row per scenario, five runs each, the total row the JSON's sums;
  assign*.html        a row per client of the output, each cell's role the output's, the moved
                      cells those the input's previous owners give, the summary's counts.
Fails on any console error, uncaught exception or error log of a page, and on any request but
for the file itself. Prints each page's load time and element counts; writes the screenshots
html-simulate.png, html-compare.png, html-protocols.png, html-assign.png and
html-assign-join.png. Exit 1 on any failure.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser  # noqa: E402


def load(browser, path):
    """The page of `path`, opened from disk, with the requests it made; and its load time."""
    page = browser.open("about:blank")
    page.wait_for("document.readyState === 'complete'", 10)
    requests = []
    base = page._event

    def event(msg):
        if msg.get("method") == "Network.requestWillBeSent":
            requests.append(msg["params"]["request"]["url"])
        elif msg.get("method") == "Network.loadingFailed":
            page.errors.append(f"request failed: {msg['params'].get('errorText')}")
        base(msg)

    page._event = event
    page.call("Network.enable")
    url = "file://" + os.path.abspath(path)
    start = time.monotonic()
    page.navigate(url)
    page.wait_for("document.readyState === 'complete' && document.querySelector('footer') !== null", 30, poll=0.01)
    took = time.monotonic() - start
    clock = page.eval("performance.getEntriesByType('navigation')[0].loadEventEnd")
    page.eval("1")  # drains the events sent while loading
    return page, requests, url, took, clock


def finish(page, requests, url, name, took, clock, shot, counts):
    page.eval("1")
    assert not page.errors, f"{name}: the page reported errors: {page.errors}"
    others = [r for r in requests if r != url]
    assert requests and not others, f"{name}: requests other than the file itself: {others or requests}"
    elements = page.eval("document.getElementsByTagName('*').length")
    size = os.path.getsize(url[len("file://"):])
    if shot:
        # The whole page in one viewport: no scroll bar in the picture, nothing cut at its right.
        w, h = page.eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        page.call("Emulation.setDeviceMetricsOverride", width=w, height=h, deviceScaleFactor=1, mobile=False)
        page.screenshot(shot)
    print(f"ok: {name}: {size:,} bytes, loaded in {took * 1000:.0f} ms (page clock: load event {clock:.0f} ms), "
          f"{elements} elements, 1 request (the file), no console error; {counts}" + (f"; {os.path.basename(shot)}" if shot else ""))


def values(page, selector, key):
    return page.eval(f"Array.from(document.querySelectorAll({json.dumps(selector)} + ' [data-key=\"{key}\"]'))"
                     ".map(e => Number(e.dataset.value))")


def check_simulate(browser, d, shot):
    report = json.load(open(os.path.join(d, "simulate.json")))
    page, req, url, took, clock = load(browser, os.path.join(d, "simulate.html"))
    rows = page.eval("document.querySelectorAll('#rounds tbody tr.round').length")
    assert rows == len(report["rounds"]), (rows, len(report["rounds"]))
    assert values(page, "#rounds tbody", "moved") == [r["tasksMoved"] for r in report["rounds"]]
    assert values(page, "#rounds tbody", "restoringLag") == [r["restoringLag"] for r in report["rounds"]]
    assert values(page, "#rounds tfoot", "moved") == [report["totalTasksMoved"]]
    assert values(page, "#rounds tfoot", "warmups") == [report["totalWarmups"]]
    assert values(page, "#rounds tfoot", "restoringLag") == [report["totalRestoringLag"]]
    figure = page.eval("document.querySelector('[data-key=totalTasksMoved]').textContent")
    assert figure == str(report["totalTasksMoved"]), figure
    lines = page.eval("document.querySelectorAll('#chart svg polyline').length")
    assert lines == 3, f"{lines} lines: a run, three panels"
    finish(page, req, url, "simulate.html", took, clock, shot,
           f"{rows} rebalance rows, totals moved {report['totalTasksMoved']} / warm-ups {report['totalWarmups']} / "
           f"restoring lag {report['totalRestoringLag']} as in --json, {lines} chart lines")


SUMS = {"moved": "tasksMoved", "warmups": "warmups", "probing": "probingRebalances",
        "converge": "timeToConvergeMs", "restoringLag": "restoringLag", "downtime": "taskDowntimeMs"}


def check_compare(browser, d, name, shot):
    cmp = json.load(open(os.path.join(d, name + ".json")))
    page, req, url, took, clock = load(browser, os.path.join(d, name + ".html"))
    rows = page.eval("Array.from(document.querySelectorAll('#compare tbody tr.scenario')).map(r => r.dataset.scenario)")
    assert rows == [r["scenario"] for r in cmp["rows"]], rows
    sums = {}
    for key, field in SUMS.items():
        for side, who in (("A", "baseline"), ("B", "candidate")):
            want = [r[who][field] for r in cmp["rows"]]
            assert values(page, "#compare tbody", key + side) == want, (key + side)
            total = values(page, "#compare tfoot tr.sum", key + side)
            assert total == [sum(want)], (key + side, total, sum(want))
            sums[key + side] = sum(want)
    label = page.eval("document.querySelector('#compare tfoot th').textContent")
    assert label == f"total ({len(cmp['rows'])} scenarios)", label
    better = page.eval("document.querySelectorAll('#compare td.better').length")
    worse = page.eval("document.querySelectorAll('#compare td.worse').length")
    targets = page.eval("document.querySelectorAll('#targets li').length")
    assert targets >= 7, targets
    head = page.eval("document.querySelector('#scenarios .legend').textContent")
    assert cmp["baseline"] in head and cmp["candidate"] in head, head
    finish(page, req, url, name + ".html", took, clock, shot,
           f"{len(rows)} scenario rows and the sum row as in --json (moved A {sums['movedA']} / B {sums['movedB']}, "
           f"warm-ups {sums['warmupsA']} / {sums['warmupsB']}, restoring lag {sums['restoringLagA']} / {sums['restoringLagB']}), "
           f"{better} cells B better, {worse} B worse, {targets} targets")


def check_protocols(browser, d, shot):
    cmp = json.load(open(os.path.join(d, "protocols.json")))
    page, req, url, took, clock = load(browser, os.path.join(d, "protocols.html"))
    rows = page.eval("document.querySelectorAll('#protocols tbody tr.scenario').length")
    assert rows == len(cmp["rows"]), rows
    runs = len(cmp["rows"][0]["runs"])
    for key, field in (("moved", "tasksMoved"), ("restored", "restoringLag"), ("converge", "timeToConvergeMs"),
                       ("restoreTime", "restoredMs"), ("downtime", "taskDowntimeMs")):
        for i in range(runs):
            want = [r["runs"][i][field] for r in cmp["rows"]]
            assert values(page, "#protocols tbody", f"{key}.{i}") == want, (key, i)
            assert values(page, "#protocols tfoot", f"{key}.{i}") == [sum(want)], (key, i)
    moved = [sum(r["runs"][i]["tasksMoved"] for r in cmp["rows"]) for i in range(runs)]
    finish(page, req, url, "protocols.html", took, clock, shot,
           f"{rows} scenario rows x {runs} runs and the total row as in --json (moved {moved})")


def previous_active(inp):
    """task -> clients that ran it as active: offset sum -2 (LATEST_OFFSET) or owned partitions."""
    out = {}
    for c in inp["clients"]:
        for t, s in c.get("taskOffsetSums", {}).items():
            if s == -2:
                out.setdefault(t, set()).add(c["processId"])
        for t in c.get("ownedActiveTasks", []):
            out.setdefault(t, set()).add(c["processId"])
    return out


def check_assign(browser, d, name, shot):
    inp = json.load(open(os.path.join(d, name + "-input.json")))
    out = json.load(open(os.path.join(d, name + ".json")))
    page, req, url, took, clock = load(browser, os.path.join(d, name + ".html"))
    grid = page.eval("""Array.from(document.querySelectorAll('#grid tbody tr.member')).map(r => ({
      process: r.dataset.processId,
      cells: Array.from(r.querySelectorAll('td[data-role]')).map(td => [td.dataset.task, td.dataset.role]),
      moved: Array.from(r.querySelectorAll('.cell.moved')).map(c => c.parentElement.dataset.task)}))""")
    clients = out["clients"]
    assert len(grid) == len(clients), (len(grid), len(clients))
    prev = previous_active(inp)
    want_moved = 0
    for row in grid:
        c = clients[row["process"]]
        roles = {}
        for t, r in row["cells"]:
            roles.setdefault(r, set()).add(t)
        assert roles.get("active", set()) == set(c["active"]), row["process"]
        assert roles.get("warmup", set()) == set(c["warmup"]), row["process"]
        assert roles.get("spare", set()) == set(c.get("spare", [])), row["process"]
        copies = roles.get("standby", set()) | roles.get("warmup", set()) | roles.get("spare", set())
        assert copies == set(c["standby"]), row["process"]
        moved = {t for t in c["active"] if prev.get(t) and row["process"] not in prev[t]}
        assert set(row["moved"]) == moved, (row["process"], row["moved"], moved)
        want_moved += len(moved)
    shown = int(page.eval("document.querySelector('[data-key=moved]').textContent"))
    assert shown == want_moved, (shown, want_moved)
    columns = page.eval("document.querySelectorAll('#grid thead tr:nth-child(2) th[title^=task]').length")
    tasks = len(inp.get("statefulTasks", [])) + len(inp.get("statelessTasks", []))
    assert columns == tasks, (columns, tasks)
    subtopologies = page.eval("document.querySelectorAll('#grid thead tr:first-child th[colspan]').length") - 1
    left = page.eval("document.querySelectorAll('#grid tbody .cell.left, #grid tbody .cell.was-active').length")
    assert left >= want_moved, (left, want_moved)
    actives = sum(len(c["active"]) for c in clients.values())
    finish(page, req, url, name + ".html", took, clock, shot,
           f"{len(grid)} client rows x {columns} task columns in {subtopologies} sub-topologies as the output JSON "
           f"({actives} active cells), {want_moved} moved cells as the input's previous owners give, {left} previous actives given up")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--screenshots", required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    shot = lambda n: os.path.join(args.screenshots, f"html-{n}.png")  # noqa: E731
    with Browser(args.chromium, width=1400, height=900) as browser:
        check_simulate(browser, args.dir, shot("simulate"))
        check_compare(browser, args.dir, "compare", shot("compare"))
        check_compare(browser, args.dir, "compare-suite", None)
        check_protocols(browser, args.dir, shot("protocols"))
        check_assign(browser, args.dir, "assign", shot("assign"))
        check_assign(browser, args.dir, "assign-join", shot("assign-join"))


if __name__ == "__main__":
    main()
