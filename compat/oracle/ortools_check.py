#!/usr/bin/env python3
"""Cross-checks kstreams-assignor's min-cost flow answers with Google OR-tools.

Reads JSON lines written by the ignored Rust test `export_cases_for_ortools`
(tests/flow_oracle.rs), one network per line:

    {"kind": ..., "nodes": n, "edges": [[from, to, capacity, cost], ...],
     "source": s, "sink": t, "supply": [net outflow per node],
     "cost": this crate's optimal cost, "max_flow": this crate's max flow or null}

and solves each with OR-tools' SimpleMinCostFlow (the same supplies; costs may be
negative) and, where "max_flow" is given, SimpleMaxFlow. Prints per-kind counts and
exits non-zero on any disagreement.

Usage: ortools_check.py CASES.jsonl
"""

import collections
import json
import sys

from ortools.graph.python import max_flow, min_cost_flow


def check(case):
    """Returns None if OR-tools agrees, else a description of the difference."""
    mcf = min_cost_flow.SimpleMinCostFlow()
    for u, v, cap, cost in case["edges"]:
        mcf.add_arc_with_capacity_and_unit_cost(u, v, cap, cost)
    for node, supply in enumerate(case["supply"]):
        mcf.set_node_supply(node, supply)
    status = mcf.solve()
    if status != mcf.OPTIMAL:
        return f"OR-tools status {status}, expected an optimum of cost {case['cost']}"
    if mcf.optimal_cost() != case["cost"]:
        return f"OR-tools cost {mcf.optimal_cost()}, ours {case['cost']}"
    if case.get("max_flow") is not None:
        mf = max_flow.SimpleMaxFlow()
        for u, v, cap, _ in case["edges"]:
            mf.add_arc_with_capacity(u, v, cap)
        if case["nodes"] > 0 and mf.solve(case["source"], case["sink"]) != mf.OPTIMAL:
            return "OR-tools max flow did not solve"
        if mf.optimal_flow() != case["max_flow"]:
            return f"OR-tools max flow {mf.optimal_flow()}, ours {case['max_flow']}"
    return None


def main(path):
    counts = collections.Counter()
    failures = collections.Counter()
    with open(path) as lines:
        for number, line in enumerate(lines, 1):
            case = json.loads(line)
            counts[case["kind"]] += 1
            problem = check(case)
            if problem:
                failures[case["kind"]] += 1
                if sum(failures.values()) <= 10:
                    print(f"line {number} ({case['kind']}): {problem}", file=sys.stderr)
    for kind in sorted(counts):
        print(f"{kind}: {counts[kind]} cases, {counts[kind] - failures[kind]} agree")
    total, bad = sum(counts.values()), sum(failures.values())
    print(f"{total - bad} passed, {bad} failed")
    return 1 if bad or not total else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
