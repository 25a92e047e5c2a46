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

use super::edge::{Edge, EdgeId};
use super::{FlowError, MAX_COST};
use super::residual::{Arc, ArcForm, ClassArc, MAX_CLASSES, NarrowArc, Residual};


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
        self.check_edge(from, to, capacity, cost)?;
        self.edges.push(Edge { from, to, capacity, cost, flow: 0 });
        Ok(EdgeId::new(self.edges.len() - 1))
    }

    /// The edge `edge` with its current flow.
    ///
    /// # Panics
    ///
    /// If `edge` was not returned by this graph's [`add_edge`](Self::add_edge).
    pub fn edge(&self, edge: EdgeId) -> Edge {
        self.edges[edge.index()]
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
        self.edges[edge.index()].flow
    }

    /// Sets the flow on `edge`, to describe a starting flow for
    /// [`min_cost_circulation`](Self::min_cost_circulation).
    ///
    /// Returns an error, and changes nothing, if `edge` is not an edge of this graph or `flow` is
    /// outside `0..=capacity`.
    pub fn set_flow(&mut self, edge: EdgeId, flow: i64) -> Result<(), FlowError> {
        let edge_count = self.edges.len();
        let e = self.edges.get_mut(edge.index()).ok_or(FlowError::EdgeOutOfRange { edge: edge.index(), edge_count })?;
        if !(0..=e.capacity).contains(&flow) {
            return Err(FlowError::FlowOutOfRange { edge: edge.index(), flow, capacity: e.capacity });
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
        let sent = self.solve(|residual| residual.repair().and_then(|()| residual.send(source, sink, required)))?;
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
        let sent = self.solve(|residual| residual.repair().and_then(|()| residual.send(source, sink, out)))?;
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
        self.solve(Residual::repair)?;
        self.total_cost()
    }

    /// Runs `search` on the residual network of the edges and their flows, then takes the edges
    /// back from it, with its flows (whatever `search` returned, so that an error leaves them
    /// partly solved rather than lost). The edge list is handed to the residual network rather
    /// than kept beside it, so the two are not both held while the search runs.
    fn solve<T>(&mut self, search: impl FnOnce(&mut Residual) -> Result<T, FlowError>) -> Result<T, FlowError> {
        let edges = std::mem::take(&mut self.edges);
        let mut residual = match Residual::new(self.node_count, &edges) {
            Ok(residual) => residual,
            Err(e) => {
                self.edges = edges;
                return Err(e);
            }
        };
        drop(edges);
        let result = search(&mut residual);
        self.edges = residual.into_edges();
        result
    }

    /// Whether [`add_edge`](Self::add_edge) accepts the edge.
    fn check_edge(&self, from: usize, to: usize, capacity: i64, cost: i64) -> Result<(), FlowError> {
        self.check_node(from)?;
        self.check_node(to)?;
        if capacity < 0 {
            return Err(FlowError::NegativeCapacity { capacity });
        }
        if !(-MAX_COST..=MAX_COST).contains(&cost) {
            return Err(FlowError::CostOutOfRange { cost, limit: MAX_COST });
        }
        Ok(())
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

/// A network built straight into the solver's residual form, for networks too large to hold
/// twice: [`Graph`] keeps an edge list (40 bytes per edge) and builds the residual network from
/// it for each solve; this holds only the residual network, two arcs per edge, of 12 bytes each
/// where every capacity is below 2²⁴ and the edges have few distinct costs ([`ClassArc`]), else
/// 16 where every capacity and cost fits in an `i32` (24 otherwise).
///
/// Solving is [`Graph::min_cost_flow`] on the same edges added in the same order: the same
/// flow, tie for tie.
pub(crate) struct Network {
    node_count: usize,
    residual: Arcs,
}

/// The residual network of a [`Network`], in the narrowest arc form that fits.
enum Arcs {
    Class(Residual<ClassArc>),
    Narrow(Residual<NarrowArc>),
    Wide(Residual<Arc>),
}

impl Network {
    /// The network of `node_count` nodes and the edges `edges` passes to its argument as
    /// `(from, to, capacity, cost)`, in that order, with no flow. `edges` runs three times (to
    /// check the edges, to count each node's arcs, then to fill them in) and must pass the same
    /// edges each time.
    ///
    /// Returns an error for an edge [`Graph::add_edge`] would refuse, or
    /// [`FlowError::Overflow`] for 2³¹ edges or more.
    pub(crate) fn build(node_count: usize, edges: impl Fn(&mut dyn FnMut(usize, usize, i64, i64))) -> Result<Self, FlowError> {
        let checked = Graph::new(node_count);
        let mut refused = None;
        let mut narrow = true;
        // The distinct costs and their negatives, sorted, while there are few enough to be
        // classes (`None` once there are more, or a capacity does not fit).
        let mut classes = Some(Vec::new());
        edges(&mut |from, to, capacity, cost| {
            if refused.is_none() {
                refused = checked.check_edge(from, to, capacity, cost).err();
            }
            narrow &= NarrowArc::fits(capacity, cost);
            if !ClassArc::fits(capacity, cost) {
                classes = None;
            }
            if let Some(list) = classes.as_mut() {
                for c in [cost, -cost] {
                    if let Err(at) = list.binary_search(&c) {
                        list.insert(at, c);
                    }
                }
                if list.len() > MAX_CLASSES {
                    classes = None;
                }
            }
        });
        if let Some(e) = refused {
            return Err(e);
        }
        let pass = |emit: &mut dyn FnMut(Edge)| edges(&mut |from, to, capacity, cost| emit(Edge { from, to, capacity, cost, flow: 0 }));
        let residual = match classes {
            // (`check_edge` keeps every cost within `MAX_COST`, so a cost's negative is a cost.)
            Some(classes) => Arcs::Class(Residual::with_table(node_count, pass, false, classes)?),
            None if narrow => Arcs::Narrow(Residual::from_fn(node_count, pass, false)?),
            None => Arcs::Wide(Residual::from_fn(node_count, pass, false)?),
        };
        Ok(Self { node_count, residual })
    }

    /// Sends exactly `required` units from `source` to `sink` at the least total cost, as
    /// [`Graph::min_cost_flow`] does (same complexity); returns [`FlowError::Infeasible`] if the
    /// network cannot carry them. Afterwards the searches' scratch space is freed: only
    /// [`for_each_edge_from`](Self::for_each_edge_from) is left to read.
    pub(crate) fn min_cost_flow(&mut self, source: usize, sink: usize, required: i64) -> Result<(), FlowError> {
        Graph::new(self.node_count).check_terminals(source, sink)?;
        if required < 0 {
            return Err(FlowError::NegativeRequirement { required });
        }
        let sent = match &mut self.residual {
            Arcs::Class(r) => r.min_cost_flow(source, sink, required).inspect(|_| r.shrink_to_edges())?,
            Arcs::Narrow(r) => r.min_cost_flow(source, sink, required).inspect(|_| r.shrink_to_edges())?,
            Arcs::Wide(r) => r.min_cost_flow(source, sink, required).inspect(|_| r.shrink_to_edges())?,
        };
        if sent < required {
            return Err(FlowError::Infeasible { required, max_flow: sent });
        }
        Ok(())
    }

    /// Calls `f` with each edge leaving node `v`, in the order they were passed, with its flow.
    /// (The edges are read per node: the network keeps no list of them by edge, which would
    /// take 4 bytes an edge.)
    pub(crate) fn for_each_edge_from(&self, v: usize, f: impl FnMut(Edge)) {
        match &self.residual {
            Arcs::Class(r) => r.for_each_edge_from(v, f),
            Arcs::Narrow(r) => r.for_each_edge_from(v, f),
            Arcs::Wide(r) => r.for_each_edge_from(v, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// A random transport network: source 0 → 8 tasks → 5 clients → sink 1 (two edges each),
    /// with the clients' capacities and the costs drawn from `capacities` and `costs` (many ties
    /// where those are few), and an edge of each capacity and each cost besides.
    fn random_edges(rng: &mut Rng, capacities: &[i64], costs: &[i64]) -> Vec<(usize, usize, i64, i64)> {
        let mut pick = |from: &[i64]| from[(rng.next_u64() % from.len() as u64) as usize];
        let mut edges = Vec::new();
        for task in 2..10 {
            edges.push((0, task, 2, 0));
            for client in 10..15 {
                if pick(&[0, 1, 1]) == 1 {
                    edges.push((task, client, 1, pick(costs)));
                }
            }
        }
        for client in 10..15 {
            edges.push((client, 1, pick(capacities), 0));
            edges.push((client, 1, pick(capacities), pick(costs)));
        }
        // Every capacity and cost drawn from at least once, so that the form is known.
        edges.extend(capacities.iter().map(|&cap| (10, 11, cap, 1)));
        edges.extend(costs.iter().map(|&cost| (0, 2, 0, cost)));
        edges
    }

    fn form_of(arcs: &Arcs) -> &'static str {
        match arcs {
            Arcs::Class(_) => "class",
            Arcs::Narrow(_) => "narrow",
            Arcs::Wide(_) => "wide",
        }
    }

    /// An edge whose capacity or cost the arc form cannot hold is refused, not stored wrong.
    #[test]
    fn refuses_an_edge_that_does_not_fit_the_arc_form() {
        let edge = |capacity, cost| Edge { from: 0, to: 1, capacity, cost, flow: 0 };
        let class = |e: Edge| Residual::<ClassArc>::with_table(2, |emit| emit(e), false, vec![-1, 1]).err();
        assert_eq!(class(edge(1 << 24, 1)), Some(FlowError::Overflow));
        assert_eq!(class(edge(5, 3)), Some(FlowError::Overflow));
        assert_eq!(class(edge((1 << 24) - 1, -1)), None);
        let narrow = |e: Edge| Residual::<NarrowArc>::from_fn(2, |emit| emit(e), false).err();
        assert_eq!(narrow(edge(1 << 40, 1)), Some(FlowError::Overflow));
        assert_eq!(narrow(edge(5, 1 << 40)), Some(FlowError::Overflow));
        assert_eq!(narrow(edge(5, -5)), None);
    }

    /// A `Network` solves as a `Graph` on the same edges does, edge for edge, in each arc form.
    #[test]
    fn a_network_flows_as_the_graph_does_in_every_arc_form() {
        let mut rng = Rng::new(7);
        let many: Vec<i64> = (0..300).map(|c| c * 7 - 900).collect();
        let forms: [(&[i64], &[i64], &str); 3] =
            [(&[4, 16], &[0, 1, 2, 1_000_000], "class"), (&[4, 16], &many, "narrow"), (&[4, 1 << 24], &[0, 1, 2, -5], "narrow")];
        for (capacities, costs, form) in forms {
            for _ in 0..50 {
                let edges = random_edges(&mut rng, capacities, costs);
                let mut graph = Graph::new(15);
                let ids: Vec<EdgeId> = edges.iter().map(|&(f, t, cap, cost)| graph.add_edge(f, t, cap, cost).unwrap()).collect();
                let mut network = Network::build(15, |add| edges.iter().for_each(|&(f, t, cap, cost)| add(f, t, cap, cost))).unwrap();
                assert_eq!(form_of(&network.residual), form);
                // Each task sends what its edges to clients carry, at most 2 (every client takes
                // 8 units or more, so this much always goes).
                let required: i64 = (2..10).map(|t| edges.iter().filter(|e| e.0 == t && e.1 >= 10).count().min(2) as i64).sum();
                graph.min_cost_flow(0, 1, required).unwrap();
                network.min_cost_flow(0, 1, required).unwrap();
                for v in 0..15 {
                    let want: Vec<i64> = edges.iter().zip(&ids).filter(|(e, _)| e.0 == v).map(|(_, &id)| graph.flow(id)).collect();
                    let mut got = Vec::new();
                    network.for_each_edge_from(v, |e| got.push(e.flow));
                    assert_eq!(got, want, "node {v}");
                }
            }
        }
    }
}
