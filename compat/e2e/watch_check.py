#!/usr/bin/env python3
"""`watch`'s causes against what our leader logged, generation by generation.

Our leader (`kstreams-assignor lead`) prints each generation it assigns as one JSON line: every
member's process, active, standby and warm-up tasks (warm-ups named: the leader knows them), and
the probing rebalance it scheduled. `watch --json` writes one record per generation it saw, from
DescribeGroups alone: its moves, each with a cause, where the warm-ups are named only when the
replay agreed. For each generation watch saw after its first, this derives the moves from the
leader's two logged generations (the one before, as watch saw it, and this one) with the rules of
src/views/watch/diff.rs and cause.rs, but on the leader's own records (its warm-up names, its
probing deadline), and counts the moves watch named the same way: same task, same processes and
roles, same cause. The scenario's topology never changes, so no move is expected to be a
topology change. A generation watch did not see (two rebalances between two looks) is folded
into the next: both sides compare the same two generations.

    python3 compat/e2e/watch_check.py LEADER_OUT WATCH_JSONL     prints the count, exit 0

With --streams WATCH_JSONL DESCRIBE_JSON WATCH_OUT it checks a streams group's scale-out instead
(compat/e2e/streams-describe.sh): the epoch at which the instance whose endpoint is `c.…` joined
is recorded, tasks moved to it, every move has a cause, and the summary was printed; exit 1 if not.
"""

import json
import sys

from common import json_lines

PROBING_SLACK_MS = 5000


def placement(gen):
    """task -> (active process, {process: role}) from a leader record."""
    out = {}
    for m in gen["members"]:
        p = m["processId"]
        warm = set(m.get("warmupTasks", []))
        for t in m["activeTasks"]:
            out.setdefault(t, [None, {}])[0] = p
        for t in m["standbyTasks"] + m.get("spareTasks", []):
            out.setdefault(t, [None, {}])[1].setdefault(p, "standby")
        for t in warm:
            out.setdefault(t, [None, {}])[1][p] = "warmup"
    return out


def processes(gen):
    return {m["processId"] for m in gen["members"]}


def moves(prev, cur):
    before, after = placement(prev), placement(cur)
    out = []
    for task in sorted(set(before) | set(after)):
        was, was_copies = before.get(task, [None, {}])
        now, now_copies = after.get(task, [None, {}])
        if was != now:
            out.append((task, was and (was, "active"), now and (now, "active")))
        gone = [(p, r) for p, r in sorted(was_copies.items()) if p not in now_copies]
        new = [(p, r) for p, r in sorted(now_copies.items()) if p not in was_copies]
        for i in range(max(len(gone), len(new))):
            out.append((task, gone[i] if i < len(gone) else None, new[i] if i < len(new) else None))
    return out


def cause(move, prev, cur):
    task, src, dst = move
    before, after = placement(prev), placement(cur)
    if (src and src[1] != "active") or (dst and dst[1] != "active"):
        was, now = before.get(task, [None])[0], after.get(task, [None])[0]
        if was != now:
            return cause((task, was and (was, "active"), now and (now, "active")), prev, cur)
    pb, pa = processes(prev), processes(cur)
    # The leader's log has no topology, and the scenario's never changes: no topology change (a
    # task unassigned in one generation, as before any instance joined, is not a new task).
    if src and src[0] not in pa:
        return "memberLeft"
    probing = prev.get("probingRebalanceAtMs")
    due = probing is not None and probing <= cur["assignedAtMs"] + PROBING_SLACK_MS
    if dst and dst[1] == "active":
        held = before.get(task, [None, {}])[1].get(dst[0])
        if held == "warmup" or (held == "standby" and due):
            return "warmupPromoted"
    if (dst and dst[0] not in pb) or (pa - pb):
        return "memberJoined"
    if pb - pa:
        return "memberLeft"
    if due:
        return "probingRebalance"
    return "loadBalance"


def side(r):
    return r and (r["processId"], r["role"])


def tasks_by_process(gen):
    """process -> (active, copies) from a leader record, warm-ups and spares among the copies."""
    out = {}
    for m in gen["members"]:
        a, c = out.setdefault(m["processId"], (set(), set()))
        a |= set(m["activeTasks"])
        c |= set(m["standbyTasks"]) | set(m.get("warmupTasks", [])) | set(m.get("spareTasks", []))
    return {p: (frozenset(a), frozenset(c)) for p, (a, c) in out.items()}


def seen_by_process(record):
    return {p: (frozenset(t["active"]), frozenset(t["standby"]) | frozenset(t["warmup"]))
            for p, t in record.get("assignment", {}).items()}


def generation_of(record, leader_gens):
    """The leader's generation a watch record shows: its generationId, or, when watch could not
    tell it (no member owned partitions yet), the latest generation with the same tasks per process."""
    gen = record.get("generationId")
    if gen is not None:
        return gen
    seen = seen_by_process(record)
    same = [g["generationId"] for g in leader_gens if tasks_by_process(g) == seen]
    return same[-1] if same else None


def compare(leader_gens, records):
    """(explained, total, generations compared, lines)."""
    by_gen = {g["generationId"]: g for g in leader_gens}
    explained = total = compared = 0
    lines = []
    prev_id = None
    for r in records:
        gen = generation_of(r, leader_gens)
        if gen is None or gen not in by_gen:
            lines.append(f"  watch generation {gen}: not in the leader's log (another leader assigned it)")
            prev_id = None
            continue
        if prev_id is None or r.get("first"):
            prev_id = gen
            continue
        prev, cur = by_gen[prev_id], by_gen[gen]
        expected = {(t, s, d): cause((t, s, d), prev, cur) for t, s, d in moves(prev, cur)}
        seen = {(m["task"], side(m["from"]), side(m["to"])): m["cause"] for m in r["moves"]}
        keys = set(expected) | set(seen)
        same = sum(1 for k in keys if k in expected and seen.get(k) == expected[k])
        explained += same
        total += len(keys)
        compared += 1
        wrong = [f"{k[0]} {k[1]}->{k[2]}: watch {seen.get(k, 'missed')}, leader's log {expected.get(k, 'no move')}"
                 for k in sorted(keys, key=str) if not (k in expected and seen.get(k) == expected[k])]
        lines.append(f"  generation {prev_id} -> {gen}: {same}/{len(keys)} moves explained as the leader's log has them"
                     + ("" if not wrong else "; " + "; ".join(wrong)))
        prev_id = gen
    return explained, total, compared, lines


CAUSES = {"memberJoined", "memberLeft", "warmupPromoted", "probingRebalance", "loadBalance", "topologyChange"}


def check_streams(records_path, describe_path, out_path):
    records = json_lines(records_path)
    group = json.load(open(describe_path))
    out = open(out_path, errors="replace").read().splitlines()
    joiner = [m["processId"] for m in group["members"] if (m.get("userEndpoint") or {}).get("host", "").startswith("c.")]
    assert joiner, group["members"]
    c = joiner[0]
    assert records and all(r["protocol"] == "streams" and "groupEpoch" in r for r in records), records[:1]
    joined = [r for r in records if any(j["processId"] == c for j in r["joined"])]
    assert joined, f"no record has the third instance {c} joining: {[r['joined'] for r in records]}"
    later = [r for r in records if r["groupEpoch"] >= joined[0]["groupEpoch"]]
    to_c = [m for r in later for m in r["moves"] if (m["to"] or {}).get("processId") == c]
    assert to_c, f"no task moved to {c}: {[r['moves'] for r in later]}"
    every = [m for r in records for m in r["moves"]]
    assert all(m["cause"] in CAUSES for m in every), every
    assert out and out[-1].startswith("watched "), out[-1:]
    causes = {}
    for m in every:
        causes[m["cause"]] = causes.get(m["cause"], 0) + 1
    print(f"ok: watch recorded the scale-out at epoch {joined[0]['groupEpoch']} ({len(records)} epoch(s) seen); "
          f"{len(to_c)} move(s) to the new instance; causes {causes}; {out[-1]}")


def main():
    if sys.argv[1] == "--streams":
        check_streams(*sys.argv[2:5])
        return
    leader = [r for r in json_lines(sys.argv[1]) if "members" in r and "assignedAtMs" in r]
    records = json_lines(sys.argv[2])
    explained, total, compared, lines = compare(leader, records)
    print("\n".join(lines))
    print(f"watch: {explained}/{total} moves explained as the leader logged them, over {compared} generation(s)")


if __name__ == "__main__":
    main()
