#!/usr/bin/env python3
"""The `ui` page of one group in headless Chromium, against `describe --json` of the same moment.

    python3 compat/e2e/ui_check.py --url URL --bin BIN --bootstrap B --group G --kind streams|classic \
        --members N --rebalance CMD --members-after M --screenshot PNG [--outage-stop CMD --outage-cont CMD]

Loads the page and waits for its grid (the page load time: navigation to a grid of N members);
checks each member row against `describe --json` (streams: the target assignment; classic: the
decoded assignment, a warm-up counted as the standby it travels as); runs CMD, which makes the
group rebalance, and waits for the page to show a later epoch with M members without a reload
(the update latency: from the first `describe` that shows the new settled group to the page
showing it); checks the grid again, clicks the first generation of the timeline (the grid as it
was) and back to live; with --outage-*, stops the broker until the page shows it gone and
continues it until the page shows it back. Any console error, uncaught exception or failed request
of the page fails the check. Writes the screenshot and prints the figures; exit 1 on any failure.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser  # noqa: E402

GRID_JS = """Array.from(document.querySelectorAll('#grid tr.member')).map(r => ({
  member: r.dataset.memberId, process: r.dataset.processId,
  cells: Array.from(r.querySelectorAll('td[data-role]')).map(td => [td.dataset.task, td.dataset.role])}))"""


def find(obj, key):
    """The first value of `key` anywhere in `obj` (decoded envelopes nest their user data)."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            r = find(v, key)
            if r is not None:
                return r
    return None


def describe(args):
    r = subprocess.run([args.bin, "describe", "--bootstrap", args.bootstrap, "--group", args.group, "--json"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)


def streams_tasks(tasks):
    return {f"{t['subtopologyId']}_{p}" for t in tasks for p in t["partitions"]}


def expected(args, g):
    """member id -> (process id, active, copies) from describe, and whether the group is settled."""
    out = {}
    if args.kind == "streams":
        settled = g["groupState"] == "Stable" and all(m["memberEpoch"] == g["assignmentEpoch"] for m in g["members"])
        for m in g["members"]:
            t = m["targetAssignment"]
            out[m["memberId"]] = (m["processId"], streams_tasks(t["activeTasks"]),
                                  streams_tasks(t["standbyTasks"]) | streams_tasks(t["warmupTasks"]))
        return out, settled, g.get("groupEpoch")
    settled = g["groupState"] == "Stable" and all(m.get("memberAssignment") for m in g["members"])
    for m in g["members"]:
        a = m.get("memberAssignment") or {}
        out[m["memberId"]] = (find(m.get("memberMetadata"), "processId"), set(find(a, "activeTasks") or []),
                              set((find(a, "standbyTasks") or {}).keys()))
    return out, settled, None


def page_grid(page):
    rows = page.eval(GRID_JS) or []
    out = {}
    for r in rows:
        active = {t for t, role in r["cells"] if role == "active"}
        copies = {t for t, role in r["cells"] if role in ("standby", "warmup")}
        out[r["member"]] = (r["process"], active, copies)
    return out


def compare(args, page, members):
    """Retries for up to 30 s until the page's grid is describe's; returns the describe JSON."""
    last = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        g = describe(args)
        if g is not None:
            want, settled, _ = expected(args, g)
            got = page_grid(page)
            if settled and len(want) == members and got == want:
                return g
            last = (want, got, settled)
        time.sleep(1)
    raise AssertionError(f"the page's grid is not describe's: {last}")


def state_json(args):
    """/state.json, with the token as a script sends it."""
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    return urllib.request.urlopen(urllib.request.Request(args.url + "state.json", headers=headers), timeout=10).read()


def main():
    ap = argparse.ArgumentParser()
    for a in ("url", "bin", "bootstrap", "group", "kind", "rebalance", "screenshot", "outage-stop", "outage-cont", "token"):
        ap.add_argument("--" + a)
    ap.add_argument("--members", type=int, required=True)
    ap.add_argument("--members-after", type=int, required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    epoch_js = "Number(document.body.dataset.epoch)"
    rows_js = "document.querySelectorAll('#grid tr.member').length"
    # The page load time counts from navigation to the grid, once `ui` has made its first look.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if json.loads(state_json(args))["generations"]:
                break
        except OSError:
            pass
        time.sleep(0.2)
    with Browser(args.chromium) as browser:
        start = time.monotonic()
        # With a token the browser gives it once in the query and goes on with the cookie it gets.
        page = browser.open(args.url + (f"?token={args.token}" if args.token else ""))
        page.wait_for(f"document.body.dataset.epoch !== undefined && document.body.dataset.epoch !== '' && {rows_js} === {args.members}", 60,
                      poll=0.02)
        load = time.monotonic() - start
        # The page's own clock: from its navigation's start to the grid drawn, and to DOMContentLoaded.
        drawn = page.eval("performance.now()")
        dom = page.eval("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
        page.eval("window.__loadedOnce = 1")
        g = compare(args, page, args.members)
        before = page.eval(epoch_js)
        tasks = sum(len(a) for _, a, _ in expected(args, g)[0].values())
        print(f"ok: {args.kind} group {args.group}: the page showed {args.members} members at epoch {before} "
              f"{load * 1000:.0f} ms after the tab was opened (page clock: DOMContentLoaded {dom:.0f} ms, grid drawn by {drawn:.0f} ms); "
              f"its grid is describe's ({tasks} active tasks)")

        subprocess.run(["bash", "-c", args.rebalance], check=True)
        triggered = time.monotonic()
        seen_describe = seen_page = None
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and (seen_page is None or seen_describe is None):
            if seen_page is None and page.eval(f"{epoch_js} > {before} && {rows_js} === {args.members_after}"):
                seen_page = time.monotonic()
            if seen_describe is None:
                d = describe(args)
                want, settled, _ = expected(args, d) if d is not None else ({}, False, None)
                # A streams group's new assignment is there once its target is of the group epoch (the
                # members reconcile to it after): what the page shows.
                if args.kind == "streams" and d is not None:
                    settled = d["assignmentEpoch"] == d["groupEpoch"]
                if settled and len(want) == args.members_after:
                    seen_describe = time.monotonic()
            time.sleep(0.05)
        assert seen_page is not None, f"the page did not show a later epoch with {args.members_after} members"
        assert seen_describe is not None, "describe did not show the group settled again"
        assert page.eval("window.__loadedOnce === 1"), "the page was reloaded"
        after = page.eval(epoch_js)
        latency = seen_page - seen_describe
        compare(args, page, args.members_after)
        print(f"ok: epoch {before} -> {after} shown without a reload {seen_page - triggered:.1f} s after the new instance "
              f"was started, {latency * 1000:+.0f} ms from describe's first sight of the new assignment of {args.members_after} "
              f"(describe polled about every 0.3 s, the page looks every interval); its grid is describe's")

        # The timeline: its oldest generation shows the grid as it was.
        page.eval("document.querySelector('#timeline li:last-of-type').click()")
        old = page.eval(epoch_js)
        assert old <= before and not page.eval("document.getElementById('live').hidden"), (old, before)
        page.eval("document.getElementById('live').click()")
        assert page.eval(epoch_js) >= after, "back to live"
        n = page.eval("document.querySelectorAll('#timeline li[data-index]').length")
        print(f"ok: the timeline has {n} generation(s); its oldest shows epoch {old}, then back to live")
        page.screenshot(args.screenshot)
        assert page.eval("location.search") == "", "the token stays in the address bar"
        state = state_json(args)
        with open(args.screenshot.replace(".png", "-state.json"), "wb") as f:
            f.write(state)
        print(f"ok: screenshot {args.screenshot}, state {len(state):,} bytes")

        if args.outage_stop:
            stopped = time.monotonic()
            subprocess.run(["bash", "-c", args.outage_stop], check=True)
            t = page.wait_for("document.body.dataset.connection === 'lost' && !document.getElementById('banner').hidden", 60)
            banner = page.eval("document.getElementById('banner').textContent")
            page.screenshot(args.screenshot.replace(".png", "-outage.png"))
            subprocess.run(["bash", "-c", args.outage_cont], check=True)
            paused = time.monotonic() - stopped
            back = page.wait_for("['connected', 'rebalancing'].includes(document.body.dataset.connection)", 120)
            # The outage runs from the last successful look, so it is at least as long as the pause.
            after = page.eval("document.getElementById('banner').textContent")
            m = re.match(r"Back after (\d+) s", after)
            assert m and int(m.group(1)) >= int(paused) - 1, f"the broker was paused {paused:.1f} s, the page says {after!r}"
            print(f"ok: the broker stopped: shown after {t:.1f} s ({banner!r}); continued after {paused:.1f} s: the page "
                  f"recovered by itself after {back:.1f} s and says {after!r}")
        # The console and the network are read as the page runs: one more call drains them.
        page.eval("1")
        assert not page.errors, f"the page reported errors: {page.errors}"
        print("ok: no console error, exception or failed request")


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, TimeoutError, RuntimeError, IOError, subprocess.CalledProcessError) as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
