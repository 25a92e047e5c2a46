//! A directed network with integer capacities and costs, and its min-cost flow solver.
//!
//! The solver is the primal–dual form of successive shortest paths (Ahuja, Magnanti & Orlin,
//! *Network Flows*, 1993, §9.7–9.8): node potentials keep every residual arc's reduced cost
//! non-negative, one Dijkstra search (binary heap) raises them until some path from a node with
//! surplus to a node with deficit costs nothing, and a blocking flow (Dinic) then pushes along
//! every such zero-cost path at once. Negative costs need no Bellman–Ford pass: the solver first
//! saturates each negative-cost residual arc, which makes all reduced costs non-negative and leaves
//! surpluses and deficits that the same loop then repairs. This handles negative cycles too, and it
//! is what lets [`Graph::min_cost_circulation`] start from any flow the caller supplies.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{FlowError, MAX_COST};

/// Bound kept on distances and potentials, so that sums of two of them and a cost never overflow.
const LIMIT: i64 = 1 << 61;
/// Distance of a node no search has reached.
const UNREACHED: i64 = i64::MAX;
/// Level of a node the blocking-flow search has not reached, or has found to be a dead end.
const NO_LEVEL: u32 = u32::MAX;

/// Names an edge of a [`Graph`]: the value [`Graph::add_edge`] returned. Edges are numbered from 0
/// in the order they were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EdgeId(usize);

impl EdgeId {
    /// The edge's position in insertion order (0 for the first edge added).
    pub fn index(self) -> usize {
        self.0
    }
}

/// One edge of a [`Graph`] and the flow it currently carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Edge {
    /// Tail node.
    pub from: usize,
    /// Head node.
    pub to: usize,
    /// Most flow the edge can carry (≥ 0).
    pub capacity: i64,
    /// Cost per unit of flow (may be negative).
    pub cost: i64,
    /// Flow on the edge, `0..=capacity`.
    pub flow: i64,
}

/// What a solve achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Solution {
    /// Units sent from source to sink.
    pub flow: i64,
    /// Total cost of the graph's flow afterwards: Σ flow × cost over all edges.
    pub cost: i64,
}

/// A directed network of `node_count` nodes (numbered `0..node_count`) and edges with a capacity,
/// a cost per unit and a current flow.
///
/// Parallel edges, self-loops and negative costs (even negative cycles) are allowed. Edge flows
/// start at zero; the solvers overwrite them with an optimal flow, which [`flow`](Self::flow)
/// reads back.
///
/// # Tie-breaking
///
/// Solving is deterministic: the same graph, built in the same order, always gets the same flow.
/// Among equally cheap flows the one chosen follows from these rules: the shortest-path search
/// settles nodes in order of (distance, node id) and scans a node's edges in insertion order;
/// pushes along zero-cost paths start from surplus nodes in increasing id order and follow edges
/// in insertion order, lowest edge id first.
///
/// # Example
///
/// Three tasks that all prefer client 0, which has room for two; task 0 loses least by going to
/// client 1:
///
/// ```
/// use kstreams_assignor::flow::Graph;
///
/// let (source, sink) = (0, 6);
/// let task = |t: usize| 1 + t;
/// let client = |c: usize| 4 + c;
/// let costs = [[1, 2], [1, 3], [0, 5]];
/// let mut graph = Graph::new(7);
/// let mut choice = Vec::new();
/// for (t, row) in costs.iter().enumerate() {
///     graph.add_edge(source, task(t), 1, 0)?;
///     choice.push([
///         graph.add_edge(task(t), client(0), 1, row[0])?,
///         graph.add_edge(task(t), client(1), 1, row[1])?,
///     ]);
/// }
/// graph.add_edge(client(0), sink, 2, 0)?;
/// graph.add_edge(client(1), sink, 2, 0)?;
///
/// let solution = graph.min_cost_flow(source, sink, 3)?;
/// assert_eq!((solution.flow, solution.cost), (3, 3));
/// let on_client_1: Vec<bool> = choice.iter().map(|e| graph.flow(e[1]) == 1).collect();
/// assert_eq!(on_client_1, [true, false, false]);
/// # Ok::<(), kstreams_assignor::flow::FlowError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Graph {
    node_count: usize,
    edges: Vec<Edge>,
}

impl Graph {
    /// A graph with nodes `0..node_count` and no edges.
    pub fn new(node_count: usize) -> Self {
        Self { node_count, edges: Vec::new() }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.node_count
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// Adds an edge `from → to` that carries up to `capacity` units at `cost` each, with no flow.
    ///
    /// # Arguments
    ///
    /// * `from`, `to`: node ids below [`node_count`](Self::node_count); equal ids make a self-loop.
    /// * `capacity`: ≥ 0.
    /// * `cost`: within `-MAX_COST..=MAX_COST` ([`MAX_COST`]); may be negative.
    ///
    /// # Returns
    ///
    /// The new edge's id, or an error (and no edge added) for an out-of-range node, a negative
    /// capacity or an out-of-range cost.
    ///
    /// # Example
    ///
    /// ```
    /// use kstreams_assignor::flow::{FlowError, Graph};
    ///
    /// let mut graph = Graph::new(2);
    /// assert_eq!(graph.add_edge(0, 1, 5, -3)?.index(), 0);
    /// assert_eq!(graph.add_edge(1, 0, -1, 0), Err(FlowError::NegativeCapacity { capacity: -1 }));
    /// assert_eq!(graph.edge_count(), 1);
    /// # Ok::<(), FlowError>(())
    /// ```
    pub fn add_edge(&mut self, from: usize, to: usize, capacity: i64, cost: i64) -> Result<EdgeId, FlowError> {
        self.check_node(from)?;
        self.check_node(to)?;
        if capacity < 0 {
            return Err(FlowError::NegativeCapacity { capacity });
        }
        if !(-MAX_COST..=MAX_COST).contains(&cost) {
            return Err(FlowError::CostOutOfRange { cost, limit: MAX_COST });
        }
        self.edges.push(Edge { from, to, capacity, cost, flow: 0 });
        Ok(EdgeId(self.edges.len() - 1))
    }

    /// The edge `edge` with its current flow.
    ///
    /// # Panics
    ///
    /// If `edge` was not returned by this graph's [`add_edge`](Self::add_edge).
    pub fn edge(&self, edge: EdgeId) -> Edge {
        self.edges[edge.0]
    }

    /// All edges in insertion order, with their current flows.
    pub fn edges(&self) -> impl ExactSizeIterator<Item = Edge> + '_ {
        self.edges.iter().copied()
    }

    /// The flow on `edge`: 0 after [`add_edge`](Self::add_edge), an optimal flow after a solve.
    ///
    /// # Panics
    ///
    /// If `edge` was not returned by this graph's [`add_edge`](Self::add_edge).
    pub fn flow(&self, edge: EdgeId) -> i64 {
        self.edges[edge.0].flow
    }

    /// Sets the flow on `edge`, to describe a starting flow for
    /// [`min_cost_circulation`](Self::min_cost_circulation).
    ///
    /// Returns an error, and changes nothing, if `edge` is not an edge of this graph or `flow` is
    /// outside `0..=capacity`.
    pub fn set_flow(&mut self, edge: EdgeId, flow: i64) -> Result<(), FlowError> {
        let edge_count = self.edges.len();
        let e = self.edges.get_mut(edge.0).ok_or(FlowError::EdgeOutOfRange { edge: edge.0, edge_count })?;
        if !(0..=e.capacity).contains(&flow) {
            return Err(FlowError::FlowOutOfRange { edge: edge.0, flow, capacity: e.capacity });
        }
        e.flow = flow;
        Ok(())
    }

    /// Sets every edge's flow to zero.
    pub fn clear_flow(&mut self) {
        self.edges.iter_mut().for_each(|e| e.flow = 0);
    }

    /// Σ flow × cost over all edges, or [`FlowError::Overflow`] if that does not fit in an `i64`.
    pub fn total_cost(&self) -> Result<i64, FlowError> {
        let total: i128 = self.edges.iter().map(|e| i128::from(e.flow) * i128::from(e.cost)).sum();
        i64::try_from(total).map_err(|_| FlowError::Overflow)
    }

    /// Sends exactly `required` units from `source` to `sink` at the least total cost.
    ///
    /// Existing edge flows are discarded: the solve starts from zero flow. The optimum may also
    /// route flow around negative-cost cycles, since that lowers the cost.
    ///
    /// # Arguments
    ///
    /// * `source`, `sink`: distinct node ids.
    /// * `required`: units to send, ≥ 0.
    ///
    /// # Returns
    ///
    /// The amount sent (`required`) and the total cost; the edges hold the optimal flow. If the
    /// network cannot carry `required` units, [`FlowError::Infeasible`] with the maximum, and the
    /// edges hold a min-cost maximum flow (as [`min_cost_max_flow`](Self::min_cost_max_flow)
    /// would leave them). Errors about the arguments leave the graph unchanged;
    /// [`FlowError::Overflow`] may leave it partly solved.
    ///
    /// # Complexity
    ///
    /// Successive shortest paths: with *F* the units routed (`required` plus the capacity of the
    /// negative-cost edges saturated at the start), at most *F* rounds of a Dijkstra search,
    /// O((*V* + *E*) log *V*), and a blocking flow, O(*V* · *E*). Each round routes every path
    /// of the current shortest length, so the number of rounds is at most the number of distinct
    /// shortest-path lengths met, which is small when costs are small integers.
    ///
    /// # Example
    ///
    /// ```
    /// use kstreams_assignor::flow::{FlowError, Graph};
    ///
    /// let mut graph = Graph::new(3);
    /// let cheap = graph.add_edge(0, 1, 2, 1)?;
    /// graph.add_edge(1, 2, 5, 1)?;
    /// let direct = graph.add_edge(0, 2, 5, 5)?;
    /// let solution = graph.min_cost_flow(0, 2, 4)?;
    /// assert_eq!((solution.flow, solution.cost), (4, 2 * 2 + 2 * 5));
    /// assert_eq!((graph.flow(cheap), graph.flow(direct)), (2, 2));
    ///
    /// assert_eq!(graph.min_cost_flow(0, 2, 8), Err(FlowError::Infeasible { required: 8, max_flow: 7 }));
    /// # Ok::<(), FlowError>(())
    /// ```
    pub fn min_cost_flow(&mut self, source: usize, sink: usize, required: i64) -> Result<Solution, FlowError> {
        self.check_terminals(source, sink)?;
        if required < 0 {
            return Err(FlowError::NegativeRequirement { required });
        }
        self.clear_flow();
        let mut residual = Residual::new(self);
        residual.repair()?;
        let sent = residual.send(source, sink, required)?;
        residual.write_back(self);
        if sent < required {
            return Err(FlowError::Infeasible { required, max_flow: sent });
        }
        Ok(Solution { flow: sent, cost: self.total_cost()? })
    }

    /// Sends as much flow as possible from `source` to `sink`, and of all maximum flows finds one
    /// of least total cost.
    ///
    /// Like [`min_cost_flow`](Self::min_cost_flow) (same complexity), with `required` the maximum
    /// flow. Existing edge flows are discarded.
    ///
    /// # Example
    ///
    /// ```
    /// use kstreams_assignor::flow::Graph;
    ///
    /// let mut graph = Graph::new(4);
    /// graph.add_edge(0, 1, 3, 2)?;
    /// graph.add_edge(0, 2, 3, 0)?;
    /// graph.add_edge(1, 3, 2, 0)?;
    /// graph.add_edge(2, 3, 2, 1)?;
    /// let solution = graph.min_cost_max_flow(0, 3)?;
    /// assert_eq!((solution.flow, solution.cost), (4, 2 * 2 + 2 * 1));
    /// # Ok::<(), kstreams_assignor::flow::FlowError>(())
    /// ```
    pub fn min_cost_max_flow(&mut self, source: usize, sink: usize) -> Result<Solution, FlowError> {
        self.check_terminals(source, sink)?;
        let out: i64 = self.edges.iter().filter(|e| e.from == source).fold(0, |a, e| a.saturating_add(e.capacity));
        self.clear_flow();
        let mut residual = Residual::new(self);
        residual.repair()?;
        let sent = residual.send(source, sink, out)?;
        residual.write_back(self);
        Ok(Solution { flow: sent, cost: self.total_cost()? })
    }

    /// Makes the current edge flows as cheap as possible without changing how much flow enters
    /// or leaves any node: cancels every negative-cost cycle of the residual network.
    ///
    /// This is how a known feasible flow is optimised, e.g. a current task assignment given with
    /// [`set_flow`](Self::set_flow) (source → task, task → client, client → sink with the client's
    /// task count as capacity): the result keeps every node's net flow, so each client keeps its
    /// count, and has the least cost among all such flows. The flows given need not satisfy
    /// conservation anywhere; whatever each node's net flow is, it is kept.
    ///
    /// # Returns
    ///
    /// The new total cost (Σ flow × cost); the edges hold the optimised flow.
    ///
    /// # Complexity
    ///
    /// As for [`min_cost_flow`](Self::min_cost_flow), with *F* the flow on the residual
    /// negative-cost arcs saturated at the start (the units that can possibly move).
    ///
    /// # Example
    ///
    /// Two tasks on the wrong clients swap:
    ///
    /// ```
    /// use kstreams_assignor::flow::Graph;
    ///
    /// // 0 = source, 1-2 = tasks, 3-4 = clients, 5 = sink
    /// let mut graph = Graph::new(6);
    /// let mut on = Vec::new();
    /// for (task, costs) in [(1, [5, 0]), (2, [0, 5])] {
    ///     let e = graph.add_edge(0, task, 1, 0)?;
    ///     graph.set_flow(e, 1)?;
    ///     on.push([graph.add_edge(task, 3, 1, costs[0])?, graph.add_edge(task, 4, 1, costs[1])?]);
    /// }
    /// graph.set_flow(on[0][0], 1)?; // task 1 on client 3 (cost 5)
    /// graph.set_flow(on[1][1], 1)?; // task 2 on client 4 (cost 5)
    /// for client in [3, 4] {
    ///     let e = graph.add_edge(client, 5, 1, 0)?;
    ///     graph.set_flow(e, 1)?;
    /// }
    /// assert_eq!(graph.total_cost()?, 10);
    /// assert_eq!(graph.min_cost_circulation()?, 0);
    /// assert_eq!((graph.flow(on[0][1]), graph.flow(on[1][0])), (1, 1));
    /// # Ok::<(), kstreams_assignor::flow::FlowError>(())
    /// ```
    pub fn min_cost_circulation(&mut self) -> Result<i64, FlowError> {
        let mut residual = Residual::new(self);
        residual.repair()?;
        residual.write_back(self);
        self.total_cost()
    }

    fn check_node(&self, node: usize) -> Result<(), FlowError> {
        if node < self.node_count {
            Ok(())
        } else {
            Err(FlowError::NodeOutOfRange { node, node_count: self.node_count })
        }
    }

    fn check_terminals(&self, source: usize, sink: usize) -> Result<(), FlowError> {
        self.check_node(source)?;
        self.check_node(sink)?;
        if source == sink {
            return Err(FlowError::SourceIsSink { node: source });
        }
        Ok(())
    }
}

/// The residual network in compressed adjacency form, with potentials, imbalances and scratch
/// space for the searches.
///
/// Edge `e` becomes a forward arc (`residual = capacity − flow`, `cost`) in its tail's list and a
/// backward arc (`residual = flow`, `−cost`) in its head's list; each list is in edge order.
struct Residual {
    /// Arcs of node `v` are `first[v]..first[v + 1]`.
    first: Vec<usize>,
    head: Vec<usize>,
    cost: Vec<i64>,
    mate: Vec<usize>,
    residual: Vec<i64>,
    /// Edge id → position of its forward arc.
    forward: Vec<usize>,
    potential: Vec<i64>,
    /// Inflow − outflow beyond the caller's flow: > 0 surplus, < 0 deficit.
    excess: Vec<i64>,
    // Dijkstra scratch.
    dist: Vec<i64>,
    settled: Vec<bool>,
    reached: Vec<usize>,
    done: Vec<usize>,
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    // Blocking-flow scratch.
    level: Vec<u32>,
    next_arc: Vec<usize>,
    leveled: Vec<usize>,
    queue: VecDeque<usize>,
    path: Vec<usize>,
}

impl Residual {
    fn new(graph: &Graph) -> Self {
        let n = graph.node_count;
        let m = graph.edges.len();
        let mut first = vec![0usize; n + 1];
        for e in &graph.edges {
            first[e.from + 1] += 1;
            first[e.to + 1] += 1;
        }
        for v in 0..n {
            first[v + 1] += first[v];
        }
        let mut fill = first.clone();
        let (mut head, mut cost, mut mate, mut residual) =
            (vec![0; 2 * m], vec![0; 2 * m], vec![0; 2 * m], vec![0; 2 * m]);
        let mut forward = Vec::with_capacity(m);
        for e in &graph.edges {
            let p = fill[e.from];
            fill[e.from] += 1;
            let q = fill[e.to];
            fill[e.to] += 1;
            (head[p], cost[p], mate[p], residual[p]) = (e.to, e.cost, q, e.capacity - e.flow);
            (head[q], cost[q], mate[q], residual[q]) = (e.from, -e.cost, p, e.flow);
            forward.push(p);
        }
        Self {
            first,
            head,
            cost,
            mate,
            residual,
            forward,
            potential: vec![0; n],
            excess: vec![0; n],
            dist: vec![UNREACHED; n],
            settled: vec![false; n],
            reached: Vec::new(),
            done: Vec::new(),
            heap: BinaryHeap::new(),
            level: vec![NO_LEVEL; n],
            next_arc: vec![0; n],
            leveled: Vec::new(),
            queue: VecDeque::new(),
            path: Vec::new(),
        }
    }

    fn write_back(&self, graph: &mut Graph) {
        for (e, &p) in graph.edges.iter_mut().zip(&self.forward) {
            e.flow = e.capacity - self.residual[p];
        }
    }

    fn reduced_cost(&self, tail: usize, arc: usize) -> i64 {
        self.cost[arc] + self.potential[tail] - self.potential[self.head[arc]]
    }

    /// Saturates every negative-cost residual arc (potentials are all zero here, so afterwards
    /// every reduced cost is ≥ 0), then routes the surpluses this creates back to the deficits.
    /// Afterwards every node's net flow is what it was before, and no negative cycle remains.
    fn repair(&mut self) -> Result<(), FlowError> {
        for v in 0..self.first.len() - 1 {
            for p in self.first[v]..self.first[v + 1] {
                let r = self.residual[p];
                if r > 0 && self.cost[p] < 0 {
                    self.push(v, p, r)?;
                }
            }
        }
        let balanced = self.route()?;
        // The caller's flow is a way back, so some deficit is always reachable from a surplus.
        debug_assert!(balanced, "surplus left after repair");
        Ok(())
    }

    /// Routes up to `amount` more units from `source` to `sink` along cheapest paths; returns
    /// how many went.
    fn send(&mut self, source: usize, sink: usize, amount: i64) -> Result<i64, FlowError> {
        if amount == 0 {
            return Ok(0);
        }
        self.excess[source] = amount;
        self.excess[sink] = -amount;
        self.route()?;
        let sent = amount - self.excess[source];
        self.excess[source] = 0;
        self.excess[sink] = 0;
        Ok(sent)
    }

    fn push(&mut self, tail: usize, arc: usize, amount: i64) -> Result<(), FlowError> {
        self.residual[arc] -= amount;
        self.residual[self.mate[arc]] += amount;
        let head = self.head[arc];
        self.excess[tail] = self.excess[tail].checked_sub(amount).ok_or(FlowError::Overflow)?;
        self.excess[head] = self.excess[head].checked_add(amount).ok_or(FlowError::Overflow)?;
        Ok(())
    }

    /// Primal–dual rounds until no surplus is left (`true`) or no deficit can be reached from
    /// any surplus (`false`).
    fn route(&mut self) -> Result<bool, FlowError> {
        loop {
            if self.excess.iter().all(|&x| x <= 0) {
                return Ok(true);
            }
            if !self.raise_potentials()? {
                return Ok(false);
            }
            self.blocking_flows();
        }
    }

    /// Dijkstra from all surplus nodes at once, stopped when the first deficit node is settled at
    /// distance `d*`; then `potential[v] += dist[v] − d*` for every settled node, which keeps all
    /// reduced costs ≥ 0 and makes every shortest surplus → deficit path cost zero.
    fn raise_potentials(&mut self) -> Result<bool, FlowError> {
        for &v in &self.reached {
            self.dist[v] = UNREACHED;
            self.settled[v] = false;
        }
        self.reached.clear();
        self.done.clear();
        self.heap.clear();
        for v in 0..self.excess.len() {
            if self.excess[v] > 0 {
                self.dist[v] = 0;
                self.reached.push(v);
                self.heap.push(Reverse((0, v)));
            }
        }
        let mut target = None;
        while let Some(Reverse((d, u))) = self.heap.pop() {
            if self.settled[u] {
                continue;
            }
            self.settled[u] = true;
            self.done.push(u);
            if self.excess[u] < 0 {
                target = Some(d);
                break;
            }
            for p in self.first[u]..self.first[u + 1] {
                let v = self.head[p];
                if self.residual[p] == 0 || self.settled[v] {
                    continue;
                }
                let nd = d + self.reduced_cost(u, p);
                if nd > LIMIT {
                    return Err(FlowError::Overflow);
                }
                if nd < self.dist[v] {
                    if self.dist[v] == UNREACHED {
                        self.reached.push(v);
                    }
                    self.dist[v] = nd;
                    self.heap.push(Reverse((nd, v)));
                }
            }
        }
        let Some(target) = target else { return Ok(false) };
        for &v in &self.done {
            let raised = self.potential[v] + self.dist[v] - target;
            if raised < -LIMIT {
                return Err(FlowError::Overflow);
            }
            self.potential[v] = raised;
        }
        Ok(true)
    }

    /// Dinic on the admissible arcs (residual > 0, reduced cost 0) from all surplus nodes to any
    /// deficit node, until no admissible path is left.
    fn blocking_flows(&mut self) {
        while self.level_graph() {
            for a in 0..self.excess.len() {
                while self.excess[a] > 0 && self.level[a] == 0 {
                    if !self.augment_from(a) {
                        break;
                    }
                }
            }
        }
    }

    /// BFS levels over admissible arcs from all surplus nodes; `true` if a deficit was reached.
    /// Nodes at or beyond the level of the nearest deficit are not expanded.
    fn level_graph(&mut self) -> bool {
        for &v in &self.leveled {
            self.level[v] = NO_LEVEL;
        }
        self.leveled.clear();
        self.queue.clear();
        for v in 0..self.excess.len() {
            if self.excess[v] > 0 {
                self.level[v] = 0;
                self.next_arc[v] = self.first[v];
                self.leveled.push(v);
                self.queue.push_back(v);
            }
        }
        let mut deficit_level = NO_LEVEL;
        while let Some(u) = self.queue.pop_front() {
            if self.level[u] >= deficit_level {
                break;
            }
            for p in self.first[u]..self.first[u + 1] {
                let v = self.head[p];
                if self.residual[p] > 0 && self.level[v] == NO_LEVEL && self.reduced_cost(u, p) == 0 {
                    self.level[v] = self.level[u] + 1;
                    self.next_arc[v] = self.first[v];
                    self.leveled.push(v);
                    if self.excess[v] < 0 {
                        deficit_level = deficit_level.min(self.level[v]);
                    }
                    self.queue.push_back(v);
                }
            }
        }
        deficit_level != NO_LEVEL
    }

    /// Finds one level-increasing admissible path from surplus node `a` to a deficit node and
    /// pushes as much as it, `a`'s surplus and the deficit allow. Dead ends are marked so later
    /// searches skip them. Returns `false` if `a` has no such path left.
    fn augment_from(&mut self, a: usize) -> bool {
        self.path.clear();
        let mut u = a;
        loop {
            if u != a && self.excess[u] < 0 {
                break;
            }
            let end = self.first[u + 1];
            let mut p = self.next_arc[u];
            while p < end {
                let v = self.head[p];
                if self.residual[p] > 0
                    && self.level[v] != NO_LEVEL
                    && self.level[v] == self.level[u] + 1
                    && self.reduced_cost(u, p) == 0
                {
                    break;
                }
                p += 1;
            }
            self.next_arc[u] = p;
            if p < end {
                self.path.push(p);
                u = self.head[p];
            } else {
                self.level[u] = NO_LEVEL;
                let Some(back) = self.path.pop() else { return false };
                u = self.head[self.mate[back]];
                self.next_arc[u] += 1;
            }
        }
        let mut amount = self.excess[a].min(-self.excess[u]);
        for &p in &self.path {
            amount = amount.min(self.residual[p]);
        }
        for i in 0..self.path.len() {
            let p = self.path[i];
            self.residual[p] -= amount;
            self.residual[self.mate[p]] += amount;
        }
        self.excess[a] -= amount;
        self.excess[u] += amount;
        true
    }
}
