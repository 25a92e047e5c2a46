//! The flow solvers against an independent oracle, AtCoder Library's `MinCostFlowGraph`
//! (crate `ac-library-rs`), on thousands of random graphs: bipartite assignment graphs with
//! capacities and costs 0..=20, and general graphs with negative costs (with and without negative
//! cycles). Every case compares the optimal total cost and the amount of flow, and checks that the
//! flow returned is feasible (capacities, conservation, kept counts) and costs what is claimed.
//!
//! The oracle needs non-negative costs, so negative-cost edges are reduced the textbook way:
//! saturate the edge, add its reverse at the opposite cost, and let a super source and sink
//! supply the imbalances that the saturation created.
//!
//! `PROPTEST_CASES` sets the number of cases per property (default 2,000). The ignored test
//! `export_cases_for_ortools` writes cases and this crate's answers as JSON lines for
//! `compat/oracle/ortools_check.py`.

use std::io::Write;

use ac_library::{MfGraph, MinCostFlowGraph};
use kstreams_assignor::flow::{self, CostMatrix, EdgeId, FlowError, Graph};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

/// A network as plain data: `edges[i] = (from, to, capacity, cost)`.
#[derive(Debug, Clone)]
struct Net {
    n: usize,
    edges: Vec<(usize, usize, i64, i64)>,
    source: usize,
    sink: usize,
}

impl Net {
    fn graph(&self) -> (Graph, Vec<EdgeId>) {
        let mut g = Graph::new(self.n);
        let ids = self.edges.iter().map(|&(u, v, cap, cost)| g.add_edge(u, v, cap, cost).unwrap()).collect();
        (g, ids)
    }
}

/// A bipartite assignment instance: `costs[t][c]` (`None`: no edge), client capacities, and a
/// current assignment that respects them where one exists.
#[derive(Debug, Clone)]
struct Bipartite {
    costs: Vec<Vec<Option<i64>>>,
    capacities: Vec<i64>,
}

impl Bipartite {
    fn tasks(&self) -> usize {
        self.costs.len()
    }
    fn clients(&self) -> usize {
        self.capacities.len()
    }
    /// Nodes: source 0, tasks 1..=T, clients T+1..=T+N, sink T+N+1.
    fn net(&self, capacities: &[i64]) -> Net {
        let (t, n) = (self.tasks(), self.clients());
        let mut edges = Vec::new();
        for task in 0..t {
            edges.push((0, 1 + task, 1, 0));
            for (c, cost) in self.costs[task].iter().enumerate() {
                if let Some(cost) = cost {
                    edges.push((1 + task, 1 + t + c, 1, *cost));
                }
            }
        }
        for (c, &cap) in capacities.iter().enumerate() {
            edges.push((1 + t + c, 1 + t + n, cap, 0));
        }
        Net { n: t + n + 2, edges, source: 0, sink: t + n + 1 }
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2000)
}

fn bipartite(max_tasks: usize, max_clients: usize, density: f64) -> impl Strategy<Value = Bipartite> {
    (1..=max_tasks, 1..=max_clients).prop_flat_map(move |(t, n)| {
        (
            proptest::collection::vec(proptest::collection::vec(proptest::option::weighted(density, 0..=20i64), n), t),
            proptest::collection::vec(0..=4i64, n),
        )
            .prop_map(|(costs, capacities)| Bipartite { costs, capacities })
    })
}

/// A complete bipartite instance with a current assignment (`current[t]` = client).
fn complete_with_current(max_tasks: usize, max_clients: usize) -> impl Strategy<Value = (Vec<Vec<i64>>, Vec<usize>)> {
    (1..=max_tasks, 1..=max_clients).prop_flat_map(|(t, n)| {
        (proptest::collection::vec(proptest::collection::vec(0..=20i64, n), t), proptest::collection::vec(0..n, t))
    })
}

/// General graphs. With `cycles == false` costs are `base + p(u) − p(v)` for random potentials
/// `p`, so edges may be negative but every cycle costs ≥ 0; otherwise costs are arbitrary in
/// −20..=20 and negative cycles are common.
fn general(cycles: bool) -> impl Strategy<Value = Net> {
    (2..=8usize).prop_flat_map(move |n| {
        (
            proptest::collection::vec((0..n, 0..n, 0..=10i64, 0..=20i64, -20..=20i64), 0..=24),
            proptest::collection::vec(-10..=10i64, n),
            0..n,
            1..n,
        )
            .prop_map(move |(raw, p, source, offset)| {
                let edges = raw
                    .into_iter()
                    .map(|(u, v, cap, base, any)| (u, v, cap, if cycles { any } else { base + p[u] - p[v] }))
                    .collect();
                Net { n, edges, source, sink: (source + offset) % n }
            })
    })
}

/// Edge flows drawn anywhere in `0..=capacity`: an arbitrary feasible flow for the node balances
/// it happens to have.
fn with_flows(net: impl Strategy<Value = Net>) -> impl Strategy<Value = (Net, Vec<i64>)> {
    net.prop_flat_map(|net| {
        let flows: Vec<_> = net.edges.iter().map(|e| 0..=e.2).collect();
        (Just(net), flows)
    })
}

// ---------------------------------------------------------------------------------------------
// The oracle.

/// ACL's min-cost flow directly (all costs ≥ 0): `(flow, cost)` of the cheapest flow of value
/// min(limit, max flow).
fn acl_direct(net: &Net, limit: i64) -> (i64, i64) {
    let mut g = MinCostFlowGraph::<i64>::new(net.n);
    for &(u, v, cap, cost) in &net.edges {
        assert!(cost >= 0);
        if u != v {
            g.add_edge(u, v, cap, cost);
        }
    }
    g.flow(net.source, net.sink, limit)
}

/// Maximum flow value from ACL's Dinic.
fn acl_max_flow(net: &Net) -> i64 {
    let mut g = MfGraph::<i64>::new(net.n);
    for &(u, v, cap, _) in &net.edges {
        g.add_edge(u, v, cap);
    }
    g.flow(net.source, net.sink)
}

/// Least cost of a flow with net outflow `supply[v]` at every node (Σ supply = 0), or `None` if
/// none exists. Negative edges are saturated and reversed; a super source and sink carry the
/// imbalances; all of their edges must be saturated.
fn acl_with_supplies(n: usize, edges: &[(usize, usize, i64, i64)], supply: &[i64]) -> Option<i64> {
    let (s, t) = (n, n + 1);
    let mut g = MinCostFlowGraph::<i64>::new(n + 2);
    let mut offset = 0;
    let mut balance = supply.to_vec();
    for &(u, v, cap, cost) in edges {
        if cost >= 0 {
            if u != v {
                g.add_edge(u, v, cap, cost);
            }
        } else {
            offset += cap * cost;
            if u != v {
                g.add_edge(v, u, cap, -cost);
                balance[u] -= cap;
                balance[v] += cap;
            }
        }
    }
    let mut need = 0;
    for (v, &b) in balance.iter().enumerate() {
        if b > 0 {
            g.add_edge(s, v, b, 0);
            need += b;
        } else if b < 0 {
            g.add_edge(v, t, -b, 0);
        }
    }
    let (sent, cost) = g.flow(s, t, need);
    (sent == need).then_some(cost + offset)
}

fn st_supply(net: &Net, amount: i64) -> Vec<i64> {
    let mut supply = vec![0; net.n];
    supply[net.source] += amount;
    supply[net.sink] -= amount;
    supply
}

// ---------------------------------------------------------------------------------------------
// Checks on what the solver left in the graph.

/// Net outflow of every node under `flows`.
fn balances(n: usize, edges: &[(usize, usize, i64, i64)], flows: &[i64]) -> Vec<i64> {
    let mut b = vec![0; n];
    for (&(u, v, _, _), &f) in edges.iter().zip(flows) {
        b[u] += f;
        b[v] -= f;
    }
    b
}

fn flows_of(g: &Graph, ids: &[EdgeId]) -> Vec<i64> {
    ids.iter().map(|&e| g.flow(e)).collect()
}

fn check_feasible(net: &Net, flows: &[i64], expected_balance: &[i64]) -> Result<(), TestCaseError> {
    for (&(_, _, cap, _), &f) in net.edges.iter().zip(flows) {
        prop_assert!((0..=cap).contains(&f), "flow {f} outside 0..={cap}");
    }
    prop_assert_eq!(balances(net.n, &net.edges, flows), expected_balance);
    Ok(())
}

/// Sets the flow of a [`Bipartite::net`] to the assignment `current` (task → client), with each
/// client's count `counts[client]` on its sink edge: Kafka's starting flow.
fn set_current(g: &mut Graph, ids: &[EdgeId], net: &Net, current: &[usize], counts: &[i64]) {
    let t = current.len();
    for (&id, &(u, v, _, _)) in ids.iter().zip(&net.edges) {
        let on = if u == net.source {
            1
        } else if v == net.sink {
            counts[u - 1 - t]
        } else {
            i64::from(current[u - 1] == v - 1 - t)
        };
        g.set_flow(id, on).unwrap();
    }
}

fn cost_of(net: &Net, flows: &[i64]) -> i64 {
    net.edges.iter().zip(flows).map(|(e, f)| e.3 * f).sum()
}

// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Min-cost max-flow and min-cost flow of a given value on bipartite assignment graphs.
    #[test]
    fn bipartite_graph_matches_acl(b in bipartite(12, 5, 0.8), k in 0..=14i64) {
        let net = b.net(&b.capacities);
        let (mut g, ids) = net.graph();

        let (acl_flow, acl_cost) = acl_direct(&net, i64::MAX);
        let solution = g.min_cost_max_flow(net.source, net.sink).unwrap();
        prop_assert_eq!((solution.flow, solution.cost), (acl_flow, acl_cost));
        let flows = flows_of(&g, &ids);
        check_feasible(&net, &flows, &st_supply(&net, acl_flow))?;
        prop_assert_eq!(cost_of(&net, &flows), acl_cost);

        let (acl_flow, acl_cost) = acl_direct(&net, k);
        match g.min_cost_flow(net.source, net.sink, k) {
            Ok(solution) => prop_assert_eq!((solution.flow, solution.cost), (k, acl_cost)),
            Err(FlowError::Infeasible { required, max_flow }) => {
                prop_assert!(acl_flow < k);
                prop_assert_eq!((required, max_flow), (k, acl_flow));
            }
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
        let flows = flows_of(&g, &ids);
        check_feasible(&net, &flows, &st_supply(&net, acl_flow))?;
        prop_assert_eq!(cost_of(&net, &flows), acl_cost);
    }

    /// `assign` (every task placed, capacities respected) against ACL on the complete graph.
    #[test]
    fn assign_matches_acl(
        (costs, _) in complete_with_current(14, 6),
        caps in proptest::collection::vec(0..=4i64, 6),
        extra in proptest::collection::vec(0..=3i64, 6),
    ) {
        let (t, n) = (costs.len(), costs[0].len());
        let b = Bipartite { costs: costs.iter().map(|r| r.iter().map(|&c| Some(c)).collect()).collect(), capacities: caps[..n].to_vec() };
        // Top capacities up so that every task fits.
        let mut caps = b.capacities.clone();
        let mut c = 0;
        while caps.iter().sum::<i64>() < t as i64 {
            caps[c % n] += 1 + extra[c % extra.len()];
            c += 1;
        }
        let costs = CostMatrix::from_fn(t, n, |task, client| costs[task][client] as i32).unwrap();
        let caps_usize: Vec<usize> = caps.iter().map(|&c| c as usize).collect();
        let got = flow::assign(&costs, &caps_usize).unwrap();

        let (acl_flow, acl_cost) = acl_direct(&b.net(&caps), t as i64);
        prop_assert_eq!(acl_flow, t as i64);
        prop_assert_eq!(got.cost, acl_cost);
        let mut count = vec![0; n];
        for (task, &client) in got.clients.iter().enumerate() {
            count[client] += 1;
            prop_assert!(count[client] <= caps[client], "task {task} overfills client {client}");
        }
        let recomputed: i64 = got.clients.iter().enumerate().map(|(task, &c)| i64::from(costs.cost(task, c))).sum();
        prop_assert_eq!(recomputed, got.cost);

        // Too little room is refused.
        let short: Vec<usize> = (0..n).map(|c| if c == 0 { t - 1 } else { 0 }).collect();
        prop_assert_eq!(
            flow::assign(&costs, &short),
            Err(FlowError::Infeasible { required: t as i64, max_flow: t as i64 - 1 })
        );
    }

    /// Kafka's use: start from the current assignment, keep every client's count. `reassign` and
    /// `Graph::min_cost_circulation` on the same start must both reach ACL's optimum.
    #[test]
    fn reassign_and_circulation_match_acl((costs, current) in complete_with_current(14, 6)) {
        let (t, n) = (costs.len(), costs[0].len());
        let mut counts = vec![0i64; n];
        for &c in &current {
            counts[c] += 1;
        }
        let b = Bipartite { costs: costs.iter().map(|r| r.iter().map(|&c| Some(c)).collect()).collect(), capacities: counts.clone() };
        let (acl_flow, acl_cost) = acl_direct(&b.net(&counts), t as i64);
        prop_assert_eq!(acl_flow, t as i64);

        let matrix = CostMatrix::from_fn(t, n, |task, client| costs[task][client] as i32).unwrap();
        let got = flow::reassign(&matrix, &current).unwrap();
        prop_assert_eq!(got.cost, acl_cost);
        let mut got_counts = vec![0i64; n];
        for &c in &got.clients {
            got_counts[c] += 1;
        }
        prop_assert_eq!(&got_counts, &counts);
        let start: i64 = current.iter().enumerate().map(|(task, &c)| costs[task][c]).sum();
        prop_assert!(got.cost <= start);

        // The same start as a flow in the general graph.
        let net = b.net(&counts);
        let (mut g, ids) = net.graph();
        set_current(&mut g, &ids, &net, &current, &counts);
        prop_assert_eq!(g.total_cost().unwrap(), start);
        prop_assert_eq!(g.min_cost_circulation().unwrap(), acl_cost);
        let flows = flows_of(&g, &ids);
        check_feasible(&net, &flows, &st_supply(&net, t as i64))?;
        prop_assert_eq!(cost_of(&net, &flows), acl_cost);
    }

    /// Kafka's `balance_subtopology` graph (assignor spec §7.2): task → (subtopology, client) →
    /// client → sink, with per-subtopology ceilings `ceil(count_c / T × tasks_in_g)`; Kafka takes
    /// a maximum flow and cancels negative cycles, i.e. the min-cost maximum flow.
    #[test]
    fn balance_subtopology_graph_matches_acl(
        (costs, current) in complete_with_current(14, 5),
        groups in proptest::collection::vec(0..3usize, 14),
    ) {
        let (t, n) = (costs.len(), costs[0].len());
        let g = 3;
        let mut count = vec![0i64; n];
        current.iter().for_each(|&c| count[c] += 1);
        let mut in_group = [0i64; 3];
        groups[..t].iter().for_each(|&x| in_group[x] += 1);
        // source 0, tasks 1..=t, (group, client) nodes, client nodes, sink
        let gc = |x: usize, c: usize| 1 + t + x * n + c;
        let client = |c: usize| 1 + t + g * n + c;
        let sink = 1 + t + g * n + n;
        let mut edges = Vec::new();
        for (task, row) in costs.iter().enumerate() {
            edges.push((0, 1 + task, 1, 0));
            for (c, &cost) in row.iter().enumerate() {
                edges.push((1 + task, gc(groups[task], c), 1, cost));
            }
        }
        for (x, &tasks_in_g) in in_group.iter().enumerate() {
            for (c, &count_c) in count.iter().enumerate() {
                let ceiling = (count_c as f64 / t as f64 * tasks_in_g as f64).ceil() as i64;
                edges.push((gc(x, c), client(c), ceiling, 0));
            }
        }
        for (c, &count_c) in count.iter().enumerate() {
            edges.push((client(c), sink, count_c, 0));
        }
        let net = Net { n: sink + 1, edges, source: 0, sink };
        let (acl_flow, acl_cost) = acl_direct(&net, i64::MAX);
        prop_assert_eq!(acl_flow, t as i64);
        let (mut graph, ids) = net.graph();
        let solution = graph.min_cost_max_flow(net.source, net.sink).unwrap();
        prop_assert_eq!((solution.flow, solution.cost), (acl_flow, acl_cost));
        let flows = flows_of(&graph, &ids);
        check_feasible(&net, &flows, &st_supply(&net, acl_flow))?;
    }

    /// General graphs with negative edges but no negative cycle: max flow and its least cost, and
    /// a flow of a given value.
    #[test]
    fn general_graph_matches_acl(net in general(false), k in 0..=12i64) {
        check_general(&net, k)?;
    }

    /// General graphs with negative cycles: the optimum also saturates profitable cycles.
    #[test]
    fn negative_cycles_match_acl(net in general(true), k in 0..=12i64) {
        check_general(&net, k)?;
    }

    /// Optimising an arbitrary feasible flow keeps every node's net flow and reaches the least
    /// cost for those balances.
    #[test]
    fn circulation_matches_acl((net, start) in with_flows(general(true))) {
        let (mut g, ids) = net.graph();
        for (&e, &f) in ids.iter().zip(&start) {
            g.set_flow(e, f).unwrap();
        }
        let supply = balances(net.n, &net.edges, &start);
        let best = acl_with_supplies(net.n, &net.edges, &supply).expect("the start is feasible");
        let start_cost = cost_of(&net, &start);
        let cost = g.min_cost_circulation().unwrap();
        prop_assert_eq!(cost, best);
        prop_assert!(cost <= start_cost);
        let flows = flows_of(&g, &ids);
        check_feasible(&net, &flows, &supply)?;
        prop_assert_eq!(cost_of(&net, &flows), best);
    }

    /// Same input, same flow.
    #[test]
    fn solving_is_deterministic(net in general(true), (costs, current) in complete_with_current(10, 4)) {
        let (mut a, ids) = net.graph();
        let (mut b, _) = net.graph();
        let ra = a.min_cost_max_flow(net.source, net.sink).unwrap();
        let rb = b.min_cost_max_flow(net.source, net.sink).unwrap();
        prop_assert_eq!(ra, rb);
        prop_assert_eq!(flows_of(&a, &ids), flows_of(&b, &ids));
        // Solving again from the optimum changes nothing.
        prop_assert_eq!(a.min_cost_circulation().unwrap(), ra.cost);

        let m = CostMatrix::from_fn(costs.len(), costs[0].len(), |t, c| costs[t][c] as i32).unwrap();
        let first = flow::reassign(&m, &current).unwrap();
        prop_assert_eq!(&flow::reassign(&m, &current).unwrap(), &first);
        // An optimal assignment is its own optimum.
        prop_assert_eq!(flow::reassign(&m, &first.clients).unwrap().cost, first.cost);
    }
}

fn check_general(net: &Net, k: i64) -> Result<(), TestCaseError> {
    let (mut g, ids) = net.graph();
    let max = acl_max_flow(net);
    let best = acl_with_supplies(net.n, &net.edges, &st_supply(net, max)).expect("max flow is feasible");
    let solution = g.min_cost_max_flow(net.source, net.sink).unwrap();
    prop_assert_eq!((solution.flow, solution.cost), (max, best));
    let flows = flows_of(&g, &ids);
    check_feasible(net, &flows, &st_supply(net, max))?;
    prop_assert_eq!(cost_of(net, &flows), best);

    match (g.min_cost_flow(net.source, net.sink, k), acl_with_supplies(net.n, &net.edges, &st_supply(net, k))) {
        (Ok(solution), Some(best)) => {
            prop_assert_eq!((solution.flow, solution.cost), (k, best));
            let flows = flows_of(&g, &ids);
            check_feasible(net, &flows, &st_supply(net, k))?;
            prop_assert_eq!(cost_of(net, &flows), best);
        }
        (Err(FlowError::Infeasible { required, max_flow }), None) => {
            prop_assert_eq!((required, max_flow), (k, max));
            // Left at a min-cost maximum flow.
            prop_assert_eq!(g.total_cost().unwrap(), best_at_max(net, max));
        }
        (got, oracle) => prop_assert!(false, "solver {got:?}, oracle {oracle:?}"),
    }
    Ok(())
}

fn best_at_max(net: &Net, max: i64) -> i64 {
    acl_with_supplies(net.n, &net.edges, &st_supply(net, max)).unwrap()
}

/// A rack-aware instance shaped like `benches/flow.rs`: 3 racks, 1–4 input partitions per task
/// with replicas on 1–2 racks, traffic cost 10, non-overlap cost 1, round-robin start. Returns
/// `cost[task][client]` and the current assignment.
fn rack_aware(t: usize, n: usize, seed: u64) -> (Vec<Vec<i64>>, Vec<usize>) {
    let mut state = seed;
    let mut below = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) % n) as usize
    };
    let current: Vec<usize> = (0..t).map(|task| task % n).collect();
    let cost = (0..t)
        .map(|task| {
            let mut missing = [0; 3];
            for _ in 0..1 + below(4) {
                let (first, one) = (below(3), below(2) == 0);
                let second = (first + 1 + below(2)) % 3;
                (0..3).filter(|&r| r != first && (one || r != second)).for_each(|r| missing[r] += 1);
            }
            (0..n).map(|c| 10 * missing[c % 3] + i64::from(current[task] != c)).collect()
        })
        .collect();
    (cost, current)
}

/// Rack-aware instances small enough for the oracle in a debug build: `reassign`,
/// `min_cost_circulation` and ACL agree.
#[test]
fn rack_aware_instances_match_acl() {
    for (t, n) in [(400, 15), (90, 30), (31, 3)] {
        let (costs, current) = rack_aware(t, n, 0x5eed);
        let cost = |task: usize, c: usize| costs[task][c];
        let matrix = CostMatrix::from_fn(t, n, |task, c| cost(task, c) as i32).unwrap();
        let fast = flow::reassign(&matrix, &current).unwrap();

        let mut counts = vec![0i64; n];
        current.iter().for_each(|&c| counts[c] += 1);
        let b = Bipartite {
            costs: (0..t).map(|task| (0..n).map(|c| Some(cost(task, c))).collect()).collect(),
            capacities: counts.clone(),
        };
        let net = b.net(&counts);
        let (acl_flow, acl_cost) = acl_direct(&net, t as i64);
        assert_eq!((acl_flow, fast.cost), (t as i64, acl_cost), "{t}×{n}");

        let (mut g, ids) = net.graph();
        set_current(&mut g, &ids, &net, &current, &counts);
        assert_eq!(g.min_cost_circulation().unwrap(), acl_cost, "{t}×{n}");
        let mut after = vec![0i64; n];
        fast.clients.iter().for_each(|&c| after[c] += 1);
        assert_eq!(after, counts);
    }
}

// ---------------------------------------------------------------------------------------------
// Refusals.

#[test]
fn refuses_bad_input_without_changing_the_graph() {
    let mut g = Graph::new(3);
    let e = g.add_edge(0, 1, 4, 2).unwrap();
    assert_eq!(g.add_edge(3, 0, 1, 0), Err(FlowError::NodeOutOfRange { node: 3, node_count: 3 }));
    assert_eq!(g.add_edge(0, 1, -1, 0), Err(FlowError::NegativeCapacity { capacity: -1 }));
    let too_big = flow::MAX_COST + 1;
    assert_eq!(g.add_edge(0, 1, 1, -too_big), Err(FlowError::CostOutOfRange { cost: -too_big, limit: flow::MAX_COST }));
    assert_eq!(g.set_flow(e, 5), Err(FlowError::FlowOutOfRange { edge: 0, flow: 5, capacity: 4 }));
    assert_eq!(g.min_cost_flow(1, 1, 1), Err(FlowError::SourceIsSink { node: 1 }));
    assert_eq!(g.min_cost_flow(0, 5, 1), Err(FlowError::NodeOutOfRange { node: 5, node_count: 3 }));
    assert_eq!(g.min_cost_flow(0, 1, -2), Err(FlowError::NegativeRequirement { required: -2 }));
    let mut other = Graph::new(1);
    assert_eq!(other.set_flow(e, 0), Err(FlowError::EdgeOutOfRange { edge: 0, edge_count: 0 }));
    assert_eq!(g.edge_count(), 1);
    assert_eq!(g.flow(e), 0);
}

#[test]
fn refuses_malformed_assignments() {
    let m = CostMatrix::new(2, 2, vec![0, 1, 2, 3]).unwrap();
    assert_eq!(flow::assign(&m, &[5]), Err(FlowError::CapacityCount { len: 1, clients: 2 }));
    assert_eq!(flow::reassign(&m, &[0]), Err(FlowError::AssignmentLength { len: 1, tasks: 2 }));
    assert_eq!(flow::reassign(&m, &[0, 2]), Err(FlowError::ClientOutOfRange { task: 1, client: 2, clients: 2 }));
    assert_eq!(
        CostMatrix::new(flow::MAX_TASKS + 1, 0, vec![]),
        Err(FlowError::MatrixShape { len: 0, tasks: flow::MAX_TASKS + 1, clients: 0 })
    );
    let none = CostMatrix::new(0, 0, vec![]).unwrap();
    assert_eq!(flow::assign(&none, &[]).unwrap().cost, 0);
    let no_clients = CostMatrix::new(1, 0, vec![]).unwrap();
    assert_eq!(flow::assign(&no_clients, &[]), Err(FlowError::Infeasible { required: 1, max_flow: 0 }));
}

#[test]
fn accepts_extreme_costs_and_capacities() {
    // Largest costs and capacities: totals overflow i64 and are reported, not wrapped.
    let mut g = Graph::new(2);
    g.add_edge(0, 1, i64::MAX, flow::MAX_COST).unwrap();
    assert_eq!(g.min_cost_flow(0, 1, 1 << 20).unwrap().cost, flow::MAX_COST << 20);
    assert_eq!(g.min_cost_flow(0, 1, 1 << 40), Err(FlowError::Overflow));
    let mut g = Graph::new(3);
    g.add_edge(0, 1, i64::MAX, -flow::MAX_COST).unwrap();
    g.add_edge(1, 0, i64::MAX, -flow::MAX_COST).unwrap();
    assert_eq!(g.min_cost_circulation(), Err(FlowError::Overflow));
}

// ---------------------------------------------------------------------------------------------
// Export for the OR-tools cross-check.

/// Writes random cases, with this crate's answers, as JSON lines for
/// `compat/oracle/ortools_check.py`. Run with
/// `FLOW_ORACLE_OUT=path cargo test --test flow_oracle -- --ignored export_cases_for_ortools`.
#[test]
#[ignore = "writes a file for the OR-tools cross-check; run by compat/oracle/run.sh"]
fn export_cases_for_ortools() {
    let path = std::env::var("FLOW_ORACLE_OUT").unwrap_or_else(|_| "target/flow-oracle/cases.jsonl".into());
    let per_kind: usize = std::env::var("FLOW_ORACLE_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    if let Some(dir) = std::path::Path::new(&path).parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut runner = TestRunner::deterministic();
    let mut line = |kind: &str, net: &Net, supply: Vec<i64>, cost: Option<i64>, max_flow: Option<i64>| {
        let json = serde_json::json!({
            "kind": kind,
            "nodes": net.n,
            "edges": net.edges.iter().map(|e| [e.0 as i64, e.1 as i64, e.2, e.3]).collect::<Vec<_>>(),
            "source": net.source,
            "sink": net.sink,
            "supply": supply,
            "cost": cost,
            "max_flow": max_flow,
        });
        writeln!(out, "{json}").unwrap();
    };
    let mut written = 0;
    for kind in ["bipartite", "general", "negative_cycles", "circulation"] {
        for _ in 0..per_kind {
            let net = match kind {
                "bipartite" => {
                    let b = bipartite(12, 5, 0.8).new_tree(&mut runner).unwrap().current();
                    b.net(&b.capacities)
                }
                "general" => general(false).new_tree(&mut runner).unwrap().current(),
                _ => general(true).new_tree(&mut runner).unwrap().current(),
            };
            let (mut g, ids) = net.graph();
            if kind == "circulation" {
                let start: Vec<i64> =
                    ids.iter().map(|&e| (0..=g.edge(e).capacity).new_tree(&mut runner).unwrap().current()).collect();
                for (&e, &f) in ids.iter().zip(&start) {
                    g.set_flow(e, f).unwrap();
                }
                let cost = g.min_cost_circulation().unwrap();
                line(kind, &net, balances(net.n, &net.edges, &start), Some(cost), None);
            } else {
                let s = g.min_cost_max_flow(net.source, net.sink).unwrap();
                line(kind, &net, st_supply(&net, s.flow), Some(s.cost), Some(s.flow));
            }
            written += 1;
        }
    }
    // Assignments through the fast path, as their flow networks.
    for _ in 0..per_kind {
        let (costs, current) = complete_with_current(14, 6).new_tree(&mut runner).unwrap().current();
        let (t, n) = (costs.len(), costs[0].len());
        let m = CostMatrix::from_fn(t, n, |task, c| costs[task][c] as i32).unwrap();
        let got = flow::reassign(&m, &current).unwrap();
        let mut counts = vec![0i64; n];
        current.iter().for_each(|&c| counts[c] += 1);
        let b = Bipartite {
            costs: costs.iter().map(|r| r.iter().map(|&c| Some(c)).collect()).collect(),
            capacities: counts.clone(),
        };
        let net = b.net(&counts);
        line("reassign", &net, st_supply(&net, t as i64), Some(got.cost), None);
        written += 1;
    }
    // Rack-aware instances at bench scale, through the fast path.
    for (t, n) in [(1_000, 30), (10_000, 100)] {
        let (costs, current) = rack_aware(t, n, 0x5eed);
        let m = CostMatrix::from_fn(t, n, |task, c| costs[task][c] as i32).unwrap();
        let got = flow::reassign(&m, &current).unwrap();
        let mut counts = vec![0i64; n];
        current.iter().for_each(|&c| counts[c] += 1);
        let b = Bipartite {
            costs: costs.iter().map(|r| r.iter().map(|&c| Some(c)).collect()).collect(),
            capacities: counts.clone(),
        };
        let net = b.net(&counts);
        line("rack_aware", &net, st_supply(&net, t as i64), Some(got.cost), None);
        written += 1;
    }
    out.flush().unwrap();
    eprintln!("wrote {written} cases to {path}");
}
