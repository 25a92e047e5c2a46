"""The availability benchmark's figures (docs/availability.md defines them), from one cell's files,
and the report over the saved runs: a markdown table and one SVG chart per scenario."""

import json
from pathlib import Path

BIN_MS = 2000        # the latency series' bins, by event time


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def latencies(path):
    """(received ms, event ms, partition, sequence) of every output record."""
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4:
                rows.append((int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3])))
    return rows


def intervals(events, lifecycle, kind, end):
    """{task: [(start, stop, instance)]} of `kind` ("process", "restore", "standby") from the
    hooks' events; a killed or restarted instance's open intervals end at that moment."""
    opening = {"process": ("process-start",), "restore": ("restore-start",), "standby": ("standby-start",)}[kind]
    closing = {"process": ("process-stop",), "restore": ("restore-end", "restore-suspend"),
               "standby": ("standby-stop",)}[kind]
    points = sorted([(r["t"], 1, r) for r in events] + [(t, 0, {"i": n, "ev": w}) for t, n, w in lifecycle],
                    key=lambda p: (p[0], p[1]))
    open_, done = {}, {}
    for t, _, r in points:
        if r["ev"] in ("kill", "start"):
            for key in [k for k in open_ if k[0] == r["i"]]:
                done.setdefault(key[1], []).append((open_.pop(key), t, key[0]))
        elif r["ev"] in opening:
            open_.setdefault((r["i"], r["task"]), t)
        elif r["ev"] in closing and (r["i"], r["task"]) in open_:
            done.setdefault(r["task"], []).append((open_.pop((r["i"], r["task"])), t, r["i"]))
    for (inst, task), t in open_.items():
        done.setdefault(task, []).append((t, max(end, t), inst))
    return done


def covered(spans, lo, hi):
    """Milliseconds of [lo, hi] inside the union of `spans`."""
    total, cursor = 0, lo
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b, *_ in spans):
        if b <= cursor:
            continue
        total += b - max(a, cursor)
        cursor = b
    return total


def measure(cell, cold_at, processing_at, event_at, window_end, sent, lifecycle):
    rows = latencies(cell.dir / "latency.txt")
    seqs = [r[3] for r in rows]
    distinct = set(seqs)
    in_window = [r[0] - r[1] for r in rows if event_at <= r[1] <= window_end]
    base_ms = cell.cfg["baseline"] * 1000  # the p99 before the event that "back to normal" compares with
    base_lo, base_hi = (window_end - base_ms, window_end) if cell.scenario == "cold-start" else (event_at - base_ms, event_at)
    baseline = percentile([r[0] - r[1] for r in rows if base_lo <= r[1] < base_hi], 0.99)

    bins = {}
    for recv, ts, _, _ in rows:
        if event_at - base_ms <= ts <= window_end:
            bins.setdefault((ts - event_at) // BIN_MS, []).append(recv - ts)
    series = [[k * BIN_MS / 1000, percentile(v, 0.99)] for k, v in sorted(bins.items())]
    late = [t for t, p99 in series if t >= 0 and baseline and p99 > 2 * baseline]
    recovery = (max(late) + BIN_MS / 1000) if late else 0.0

    stall = 0
    for p in {r[2] for r in rows}:
        recvs = sorted(r[0] for r in rows if r[2] == p and event_at <= r[0] <= window_end)
        points = [event_at, *recvs, window_end]
        stall = max(stall, max(b - a for a, b in zip(points, points[1:])))

    events = cell.events()
    process = intervals(events, lifecycle, "process", window_end)
    tasks = sorted(process)
    span = window_end - event_at
    not_processing = sum(span - covered(process.get(t, []), event_at, window_end) for t in [f"0_{p}" for p in range(6)])

    def in_win(r):
        return event_at <= r["t"] <= window_end

    restored = sum(r.get("records", 0) for r in events if r["ev"] in ("restore-end", "restore-suspend") and in_win(r))
    loaded = sum(r.get("records", 0) for r in events if r["ev"] == "standby-stop" and in_win(r))
    rebalance_starts = sorted(r["t"] for r in events if r["ev"] == "state" and r["to"] == "REBALANCING" and in_win(r))
    rebalances = sum(1 for i, t in enumerate(rebalance_starts) if i == 0 or t - rebalance_starts[i - 1] > 3000)
    moves, owner = 0, {}
    for r in events:
        if r["ev"] == "process-start":
            if in_win(r) and owner.get(r["task"]) not in (None, r["i"]):
                moves += 1
            owner[r["task"]] = r["i"]

    # The cold start: until every task processes, and the most actives (restoring or processing)
    # one instance held at once meanwhile.
    first = {}
    for r in events:
        if r["ev"] == "process-start" and r["t"] >= cold_at:
            first.setdefault(r["task"], r["t"])
    held, most = {}, 0
    for r in events:
        if r["t"] > max(first.values(), default=cold_at):
            break
        if r["ev"] in ("restore-start", "process-start"):
            held.setdefault(r["i"], set()).add(r["task"])
        elif r["ev"] in ("process-stop", "restore-suspend"):
            held.get(r["i"], set()).discard(r["task"])
        most = max(most, max((len(s) for s in held.values()), default=0))
    cold_restored = sum(r.get("records", 0) for r in events if r["ev"] in ("restore-end", "restore-suspend")
                        and cold_at <= r["t"] <= max(first.values(), default=cold_at))
    restores = intervals(events, lifecycle, "restore", window_end)
    restore_seconds = [(b - a) / 1000 for spans in restores.values() for a, b, _ in spans if b > a]
    return {
        "sent": sent, "records": len(rows), "missing": len(set(range(sent or 0)) - distinct),
        "duplicates": len(seqs) - len(distinct),
        "window_records": len(in_window),
        "p50_ms": percentile(in_window, 0.5), "p99_ms": percentile(in_window, 0.99), "max_ms": max(in_window, default=None),
        "baseline_p99_ms": baseline, "p99_back_within_2x_s": recovery,
        "longest_stall_s": stall / 1000, "task_seconds_not_processing": round(not_processing / 1000, 1),
        "records_restored": restored, "standby_records_loaded": loaded,
        "rebalances": rebalances, "active_moves": moves,
        "cold_start_s": round((max(first.values()) - cold_at) / 1000, 1) if len(first) == 6 else None,
        "cold_start_most_actives_on_one_instance": most, "cold_start_records_restored": cold_restored,
        "longest_restore_s": max(restore_seconds, default=0),
        "tasks_with_intervals": tasks, "window_s_measured": span / 1000, "series": series,
    }


METRICS = [("p50_ms", "p50 ms"), ("p99_ms", "p99 ms"), ("max_ms", "max ms"), ("longest_stall_s", "longest stall s"),
           ("task_seconds_not_processing", "task-s not processing"), ("p99_back_within_2x_s", "p99 back ≤2× s"),
           ("records_restored", "records restored"), ("rebalances", "rebalances"), ("active_moves", "active moves")]
COLD = [("cold_start_s", "until every task processes s"), ("cold_start_most_actives_on_one_instance", "most actives on one instance"),
        ("cold_start_records_restored", "records restored")]
ORDER = ["default", "optimized", "streams-sticky", "streams-optimized", "streams-optimized-probe"]
COLORS = {"default": "#d62728", "optimized": "#1f77b4", "streams-sticky": "#ff7f0e", "streams-optimized": "#2ca02c",
          "streams-optimized-probe": "#9467bd"}


def cell(values, statistics):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    fmt = (lambda v: f"{v:.1f}") if any(isinstance(v, float) for v in values) else \
        (lambda v: str(int(v)) if float(v).is_integer() else f"{v:.1f}")
    med = statistics.median(values)
    if len(values) == 1:
        return fmt(values[0])
    return f"{fmt(med)} ({fmt(min(values))}–{fmt(max(values))})"


def report(results, statistics):
    runs = [json.loads(p.read_text()) for p in sorted((results / "runs").glob("*.json")) if not p.name.startswith("quick-")]
    lines = ["<!-- written by compat/availability/availability.py report; median (range) over the repeats -->", ""]
    # Every run's first phase is also a cold start, of instances started together: those of 3.
    colds = [dict(r, scenario="cold-start-together") for r in runs if r["scenario"] in ("scale-out", "bounce", "bounce-static")]
    by = {}
    for r in runs + colds:
        by.setdefault((r["scenario"], r["assignor"]), []).append(r)
    for scenario in ["scale-out", "scale-in", "crash", "bounce", "bounce-static", "cold-start", "cold-start-together"]:
        keys = sorted((a for s, a in by if s == scenario), key=lambda a: ORDER.index(a) if a in ORDER else 99)
        if not keys:
            continue
        metrics = {"cold-start": COLD + METRICS[:4], "cold-start-together": COLD}.get(scenario, METRICS)
        lines += [f"### {scenario}", "", "| assignor | runs | " + " | ".join(m[1] for m in metrics) + " |",
                  "|---|---|" + "---|" * len(metrics)]
        for a in keys:
            rs = by[(scenario, a)]
            lines.append(f"| {a} | {len(rs)} | " + " | ".join(cell([r[m] for r in rs], statistics) for m, _ in metrics) + " |")
        lines.append("")
        if scenario != "cold-start-together":
            chart(results / f"{scenario}.svg", scenario, {a: by[(scenario, a)][0]["series"] for a in keys})
            lines += [f"![{scenario}: p99 latency over time](availability/{scenario}.svg)", ""]
    (results / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines))


def chart(path, title, series):
    """p99 latency per 2-s bin of event time, log scale, one line per assignor."""
    import math
    w, h, left, right, top, bottom = 760, 340, 60, 170, 30, 40
    xs = [x for s in series.values() for x, _ in s]
    ys = [y for s in series.values() for _, y in s if y]
    if not xs or not ys:
        return
    x0, x1 = min(xs), max(xs) or 1
    y0, y1 = max(1, min(ys)), max(ys)
    ly0, ly1 = math.log10(y0), math.log10(max(y1, y0 * 10))
    px = lambda x: left + (x - x0) / ((x1 - x0) or 1) * (w - left - right)
    py = lambda y: top + (1 - (math.log10(max(y, y0)) - ly0) / (ly1 - ly0)) * (h - top - bottom)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="13">{title}: p99 end-to-end latency per {BIN_MS // 1000} s of event time (log scale); 0 = the event</text>']
    for e in range(int(math.floor(ly0)), int(math.ceil(ly1)) + 1):
        y = 10 ** e
        if y0 <= y <= 10 ** ly1:
            out.append(f'<line x1="{left}" x2="{w - right}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#ddd"/>'
                       f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y if y < 1000 else f"{y // 1000}s"}{"ms" if y < 1000 else ""}</text>')
    step = 30 if x1 - x0 > 120 else 10
    for x in range(int(x0 // step * step), int(x1) + 1, step):
        if x >= x0:
            out.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{top}" y2="{h - bottom}" stroke="#eee"/>'
                       f'<text x="{px(x):.1f}" y="{h - bottom + 14}" text-anchor="middle">{x}s</text>')
    out.append(f'<line x1="{px(0):.1f}" x2="{px(0):.1f}" y1="{top}" y2="{h - bottom}" stroke="#888" stroke-dasharray="4 3"/>')
    for i, (name, s) in enumerate(series.items()):
        color = COLORS.get(name, "#333")
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s if y)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{pts}"/>')
        out.append(f'<line x1="{w - right + 10}" x2="{w - right + 30}" y1="{top + 14 + 16 * i}" y2="{top + 14 + 16 * i}" '
                   f'stroke="{color}" stroke-width="2"/><text x="{w - right + 35}" y="{top + 18 + 16 * i}">{name}</text>')
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")
