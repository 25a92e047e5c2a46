//! The residual network the [`Graph`](super::Graph) solvers work on: potentials, the Dijkstra
//! search that raises them and the blocking flow that pushes along zero-cost paths.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::edge::Edge;
use super::FlowError;

/// Bound kept on distances and potentials, so that sums of two of them and a cost never overflow.
const LIMIT: i64 = 1 << 61;
/// Distance of a node no search has reached.
const UNREACHED: i64 = i64::MAX;
/// Level of a node the blocking-flow search has not reached, or has found to be a dead end.
const NO_LEVEL: u32 = u32::MAX;

/// How a residual arc is stored: its head, the position of its mate (the arc in the opposite
/// direction), its residual capacity and its cost. Three forms, [`Arc`], [`NarrowArc`] and
/// [`ClassArc`]; the searches run the same on each.
///
/// A form may read its costs from a table beside the arcs: [`ClassArc`] keeps a class, a position
/// in the sorted distinct costs of the network's arcs (both signs); the others keep the cost.
pub(crate) trait ArcForm: Copy + Default {
    /// What the arcs' costs are read from beside the arcs (`()`: nothing).
    type Table: Default;
    /// Whether an edge of this capacity and cost can be stored in this form (its two arcs'
    /// residuals stay within `0..=capacity`), the table aside.
    fn fits(capacity: i64, cost: i64) -> bool;
    /// The arc, or `None` where its residual capacity or cost does not fit this form (or its
    /// cost is not in the table).
    fn new(head: u32, mate: u32, residual: i64, cost: i64, table: &Self::Table) -> Option<Self>;
    fn head(self) -> u32;
    fn mate(self) -> u32;
    fn residual(self) -> i64;
    fn cost(self, table: &Self::Table) -> i64;
    /// Adds `amount` (which may be negative) to the residual capacity.
    fn add_residual(&mut self, amount: i64);
}

/// One residual arc: 24 bytes, what a search reads of an arc in one place. Any edge fits.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Arc {
    head: u32,
    /// Position of the arc in the opposite direction.
    mate: u32,
    residual: i64,
    cost: i64,
}

impl ArcForm for Arc {
    type Table = ();
    fn fits(_: i64, _: i64) -> bool {
        true
    }
    fn new(head: u32, mate: u32, residual: i64, cost: i64, _: &()) -> Option<Self> {
        Some(Self { head, mate, residual, cost })
    }
    fn head(self) -> u32 {
        self.head
    }
    fn mate(self) -> u32 {
        self.mate
    }
    fn residual(self) -> i64 {
        self.residual
    }
    fn cost(self, _: &()) -> i64 {
        self.cost
    }
    fn add_residual(&mut self, amount: i64) {
        self.residual += amount;
    }
}

/// A residual arc in 16 bytes, for edges whose capacity and cost fit in an `i32` (a third less
/// memory for large networks of small capacities, such as the optimized assignor's standbys).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NarrowArc {
    head: u32,
    mate: u32,
    residual: i32,
    cost: i32,
}

impl ArcForm for NarrowArc {
    type Table = ();
    fn fits(capacity: i64, cost: i64) -> bool {
        i32::try_from(capacity).is_ok() && i32::try_from(cost).is_ok() && cost != i64::from(i32::MIN)
    }
    fn new(head: u32, mate: u32, residual: i64, cost: i64, _: &()) -> Option<Self> {
        Some(Self { head, mate, residual: i32::try_from(residual).ok()?, cost: i32::try_from(cost).ok()? })
    }
    fn head(self) -> u32 {
        self.head
    }
    fn mate(self) -> u32 {
        self.mate
    }
    fn residual(self) -> i64 {
        i64::from(self.residual)
    }
    fn cost(self, _: &()) -> i64 {
        i64::from(self.cost)
    }
    fn add_residual(&mut self, amount: i64) {
        // A residual stays within `0..=capacity`, which fits.
        self.residual = (i64::from(self.residual) + amount) as i32;
    }
}

/// A residual arc in 12 bytes, for networks of few distinct costs ([`MAX_CLASSES`], both signs
/// counted) and capacities below 2²⁴, such as the optimized assignor's standbys (costs 0, 1, 2
/// and 1,000,000; a million tasks): the residual capacity and the cost's class share one word.
/// A quarter less memory than [`NarrowArc`] for the price of a table look-up per cost read.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClassArc {
    head: u32,
    mate: u32,
    /// The residual capacity in the low [`CLASS_SHIFT`] bits, the cost's class above them.
    packed: u32,
}

/// Bits of [`ClassArc::packed`] that hold the residual capacity.
const CLASS_SHIFT: u32 = 24;
/// The residual capacity's bits of [`ClassArc::packed`].
const RESIDUAL_MASK: u32 = (1 << CLASS_SHIFT) - 1;
/// The most distinct costs (both signs counted) a network of [`ClassArc`]s can have.
pub(crate) const MAX_CLASSES: usize = 1 << (32 - CLASS_SHIFT);

impl ArcForm for ClassArc {
    type Table = Vec<i64>;
    fn fits(capacity: i64, _: i64) -> bool {
        (0..=i64::from(RESIDUAL_MASK)).contains(&capacity)
    }
    fn new(head: u32, mate: u32, residual: i64, cost: i64, classes: &Vec<i64>) -> Option<Self> {
        let class = u32::try_from(classes.binary_search(&cost).ok()?).ok().filter(|&c| (c as usize) < MAX_CLASSES)?;
        let residual = u32::try_from(residual).ok().filter(|&r| r <= RESIDUAL_MASK)?;
        Some(Self { head, mate, packed: residual | class << CLASS_SHIFT })
    }
    fn head(self) -> u32 {
        self.head
    }
    fn mate(self) -> u32 {
        self.mate
    }
    fn residual(self) -> i64 {
        i64::from(self.packed & RESIDUAL_MASK)
    }
    fn cost(self, classes: &Vec<i64>) -> i64 {
        classes[(self.packed >> CLASS_SHIFT) as usize]
    }
    fn add_residual(&mut self, amount: i64) {
        // A residual stays within `0..=capacity`, which fits below the class bits.
        let residual = (i64::from(self.packed & RESIDUAL_MASK) + amount) as u32;
        self.packed = (self.packed & !RESIDUAL_MASK) | residual;
    }
}

/// The residual network in compressed adjacency form, with potentials, imbalances and scratch
/// space for the searches.
///
/// Edge `e` becomes a forward arc (`residual = capacity − flow`, `cost`) in its tail's list and a
/// backward arc (`residual = flow`, `−cost`) in its head's list; each list is in edge order.
/// Nodes and arc positions are `u32`s: a network of 2³² arcs or more is refused
/// ([`FlowError::Overflow`]).
pub(crate) struct Residual<A: ArcForm = Arc> {
    /// Arcs of node `v` are `first[v]..first[v + 1]`.
    first: Vec<u32>,
    arcs: Vec<A>,
    /// The table the arcs' costs are read from.
    table: A::Table,
    /// Edge id → position of its forward arc (empty where the network was built without it,
    /// [`from_fn`](Self::from_fn) with `by_edge` false).
    forward: Vec<u32>,
    /// Bit `p` set where arc `p` is a forward arc (empty where `forward` is kept): the edges
    /// leaving a node are read from its own arcs ([`for_each_edge_from`](Self::for_each_edge_from)).
    forward_bits: Vec<u64>,
    /// The arcs with a residual capacity (> 0), which are all the searches follow: a node's
    /// arcs are read by this bit set, and a long list of arcs at zero (such as the backward arcs
    /// of a node many edges enter, while those carry no flow) is passed over 64 arcs a word.
    open: Bits,
    potential: Vec<i64>,
    /// Inflow − outflow beyond the caller's flow: > 0 surplus, < 0 deficit.
    excess: Vec<i64>,
    // Dijkstra scratch.
    dist: Vec<i64>,
    settled: Bits,
    reached: Vec<u32>,
    done: Vec<u32>,
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    /// Nodes reached at the distance being settled (through arcs of reduced cost 0): settled
    /// next, in any order, without going through the heap.
    now: Vec<u32>,
    // Blocking-flow scratch.
    level: Vec<u32>,
    next_arc: Vec<u32>,
    leveled: Vec<u32>,
    queue: VecDeque<u32>,
    path: Vec<u32>,
}

impl<A: ArcForm> Residual<A> {
    pub(crate) fn new(n: usize, edges: &[Edge]) -> Result<Self, FlowError> {
        Self::from_fn(n, |emit| edges.iter().for_each(|&e| emit(e)), true)
    }

    /// The residual network of the edges `edges` passes to its argument, in that order (with
    /// their flows), without holding them in a list: `edges` runs twice, once to count each
    /// node's arcs and once to fill them in, and must pass the same edges both times. The
    /// edges are taken as valid (nodes below `n`, `0 ≤ flow ≤ capacity`): the caller checks.
    ///
    /// With `by_edge`, each edge's forward arc is listed by edge id (4 bytes an edge), for
    /// [`into_edges`](Self::into_edges); without, only a bit per arc marks the forward ones, and
    /// the edges are read per tail node ([`for_each_edge_from`](Self::for_each_edge_from)).
    pub(crate) fn from_fn(n: usize, edges: impl Fn(&mut dyn FnMut(Edge)), by_edge: bool) -> Result<Self, FlowError> {
        Self::with_table(n, edges, by_edge, A::Table::default())
    }

    /// [`from_fn`](Self::from_fn) for a form that reads its costs from `table` ([`ClassArc`]: the
    /// sorted distinct costs of the edges and their negatives).
    pub(crate) fn with_table(n: usize, edges: impl Fn(&mut dyn FnMut(Edge)), by_edge: bool, table: A::Table) -> Result<Self, FlowError> {
        if u32::try_from(n).is_err() {
            return Err(FlowError::Overflow);
        }
        // Counts of 2³² arcs or more wrap, but are then refused.
        let mut first = vec![0u32; n + 1];
        let mut m = 0usize;
        edges(&mut |e| {
            first[e.from + 1] = first[e.from + 1].wrapping_add(1);
            first[e.to + 1] = first[e.to + 1].wrapping_add(1);
            m += 1;
        });
        if u32::try_from(2 * m).is_err() {
            return Err(FlowError::Overflow);
        }
        for v in 0..n {
            first[v + 1] += first[v];
        }
        let mut fill = first.clone();
        let mut arcs = vec![A::default(); 2 * m];
        let mut forward = Vec::with_capacity(if by_edge { m } else { 0 });
        let mut forward_bits = if by_edge { Vec::new() } else { vec![0u64; (2 * m).div_ceil(64)] };
        let mut open = Bits::new(2 * m);
        let mut filled = 0usize;
        // Whether an edge did not fit the arc form (refused below rather than stored wrong).
        let mut unfit = false;
        edges(&mut |e| {
            let p = fill[e.from] as usize;
            fill[e.from] += 1;
            let q = fill[e.to] as usize;
            fill[e.to] += 1;
            // The capacity is checked too: the two residuals move within `0..=capacity`.
            let arcs_of_edge = (A::new(e.to as u32, q as u32, e.capacity - e.flow, e.cost, &table), A::new(e.from as u32, p as u32, e.flow, -e.cost, &table));
            let (true, Some(forward_arc), Some(backward_arc)) = (A::fits(e.capacity, e.cost), arcs_of_edge.0, arcs_of_edge.1) else {
                unfit = true;
                return;
            };
            arcs[p] = forward_arc;
            arcs[q] = backward_arc;
            open.set(p, e.capacity > e.flow);
            open.set(q, e.flow > 0);
            if by_edge {
                forward.push(p as u32);
            } else {
                forward_bits[p / 64] |= 1 << (p % 64);
            }
            filled += 1;
        });
        if unfit {
            return Err(FlowError::Overflow);
        }
        // A second pass that passed other edges than the first would leave this unequal.
        assert_eq!(filled, m, "Residual::from_fn: the two passes gave different edges");
        drop(fill);
        Ok(Self {
            first,
            arcs,
            table,
            forward,
            forward_bits,
            open,
            potential: vec![0; n],
            excess: vec![0; n],
            dist: vec![UNREACHED; n],
            settled: Bits::new(n),
            reached: Vec::new(),
            done: Vec::new(),
            heap: BinaryHeap::new(),
            now: Vec::new(),
            level: vec![NO_LEVEL; n],
            next_arc: vec![0; n],
            leveled: Vec::new(),
            queue: VecDeque::new(),
            path: Vec::new(),
        })
    }

    /// The edges the network was built from (in their order), with its flows: every edge's
    /// ends, capacity and cost are in its two arcs. The searches' scratch space is freed first.
    pub(crate) fn into_edges(mut self) -> Vec<Edge> {
        let (arcs, forward, table) = (std::mem::take(&mut self.arcs), std::mem::take(&mut self.forward), std::mem::take(&mut self.table));
        drop(self);
        forward.iter().map(|&p| edge_of(&arcs, &table, p)).collect()
    }

    /// Calls `f` with each edge leaving node `v` (in the order the edges were passed), with its
    /// flow. Only for a network built without `by_edge` ([`from_fn`](Self::from_fn)).
    pub(crate) fn for_each_edge_from(&self, v: usize, mut f: impl FnMut(Edge)) {
        debug_assert!(self.forward.is_empty(), "built by edge: no forward bits");
        for p in self.arcs_of(v) {
            if self.forward_bits[p / 64] >> (p % 64) & 1 == 1 {
                f(edge_of(&self.arcs, &self.table, p as u32));
            }
        }
    }

    /// Frees the searches' scratch space (and the potentials and imbalances), keeping what
    /// [`for_each_edge_from`](Self::for_each_edge_from) reads.
    pub(crate) fn shrink_to_edges(&mut self) {
        self.potential = Vec::new();
        self.excess = Vec::new();
        self.dist = Vec::new();
        self.open = Bits::default();
        self.settled = Bits::default();
        self.reached = Vec::new();
        self.done = Vec::new();
        self.heap = BinaryHeap::new();
        self.now = Vec::new();
        self.level = Vec::new();
        self.next_arc = Vec::new();
        self.leveled = Vec::new();
        self.queue = VecDeque::new();
        self.path = Vec::new();
    }

    /// Sends exactly `required` units from `source` to `sink` at least cost, from the flow the
    /// network was built with (as [`Graph::min_cost_flow`](super::Graph::min_cost_flow) does
    /// from zero flow); returns the units sent, `required` or the most the network carries.
    pub(crate) fn min_cost_flow(&mut self, source: usize, sink: usize, required: i64) -> Result<i64, FlowError> {
        self.repair()?;
        self.send(source, sink, required)
    }

    /// Positions of node `v`'s arcs.
    fn arcs_of(&self, v: usize) -> std::ops::Range<usize> {
        self.first[v] as usize..self.first[v + 1] as usize
    }

    fn head(&self, arc: usize) -> usize {
        self.arcs[arc].head() as usize
    }

    fn reduced_cost(&self, tail: usize, arc: usize) -> i64 {
        self.arcs[arc].cost(&self.table) + self.potential[tail] - self.potential[self.head(arc)]
    }

    /// Saturates every negative-cost residual arc (potentials are all zero here, so afterwards
    /// every reduced cost is ≥ 0), then routes the surpluses this creates back to the deficits.
    /// Afterwards every node's net flow is what it was before, and no negative cycle remains.
    pub(crate) fn repair(&mut self) -> Result<(), FlowError> {
        for v in 0..self.first.len() - 1 {
            for p in self.arcs_of(v) {
                let (r, cost) = (self.arcs[p].residual(), self.arcs[p].cost(&self.table));
                if r > 0 && cost < 0 {
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
    pub(crate) fn send(&mut self, source: usize, sink: usize, amount: i64) -> Result<i64, FlowError> {
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

    /// Adds `amount` (which may be negative) to arc `p`'s residual capacity.
    fn add_residual(&mut self, p: usize, amount: i64) {
        self.arcs[p].add_residual(amount);
        self.open.set(p, self.arcs[p].residual() > 0);
    }

    fn push(&mut self, tail: usize, arc: usize, amount: i64) -> Result<(), FlowError> {
        let mate = self.arcs[arc].mate() as usize;
        self.add_residual(arc, -amount);
        self.add_residual(mate, amount);
        let head = self.head(arc);
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
            self.dist[v as usize] = UNREACHED;
            self.settled.set(v as usize, false);
        }
        self.reached.clear();
        self.done.clear();
        self.heap.clear();
        self.now.clear();
        for v in 0..self.excess.len() {
            if self.excess[v] > 0 {
                self.dist[v] = 0;
                self.reached.push(v as u32);
                self.now.push(v as u32);
            }
        }
        // Nodes at the least distance `d` left are settled in any order: those reached at `d`
        // itself (most arcs have reduced cost 0 once potentials are raised) wait in `now`, the
        // others in the heap. The settled nodes beyond those nearer than the first deficit are
        // at its distance, and their potentials do not change, so the order does not matter.
        let mut target = None;
        let mut d = 0;
        loop {
            let u = if let Some(u) = self.now.pop() {
                u as usize
            } else if let Some(Reverse((at, u))) = self.heap.pop() {
                d = at;
                u
            } else {
                break;
            };
            if self.settled.get(u) {
                continue;
            }
            self.settled.set(u, true);
            self.done.push(u as u32);
            if self.excess[u] < 0 {
                target = Some(d);
                break;
            }
            let end = self.first[u + 1] as usize;
            let mut next = self.open.next_in(self.first[u] as usize, end);
            while next < end {
                let p = next;
                next = self.open.next_in(p + 1, end);
                let v = self.head(p);
                if self.settled.get(v) {
                    continue;
                }
                let nd = d + self.reduced_cost(u, p);
                if nd > LIMIT {
                    return Err(FlowError::Overflow);
                }
                if nd < self.dist[v] {
                    if self.dist[v] == UNREACHED {
                        self.reached.push(v as u32);
                    }
                    self.dist[v] = nd;
                    if nd == d {
                        self.now.push(v as u32);
                    } else {
                        self.heap.push(Reverse((nd, v)));
                    }
                }
            }
        }
        let Some(target) = target else { return Ok(false) };
        for &v in &self.done {
            let v = v as usize;
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
            self.level[v as usize] = NO_LEVEL;
        }
        self.leveled.clear();
        self.queue.clear();
        for v in 0..self.excess.len() {
            if self.excess[v] > 0 {
                self.level[v] = 0;
                self.next_arc[v] = self.first[v];
                self.leveled.push(v as u32);
                self.queue.push_back(v as u32);
            }
        }
        let mut deficit_level = NO_LEVEL;
        while let Some(u) = self.queue.pop_front() {
            let u = u as usize;
            if self.level[u] >= deficit_level {
                break;
            }
            let end = self.first[u + 1] as usize;
            let mut next = self.open.next_in(self.first[u] as usize, end);
            while next < end {
                let p = next;
                next = self.open.next_in(p + 1, end);
                let v = self.head(p);
                if self.level[v] == NO_LEVEL && self.reduced_cost(u, p) == 0 {
                    self.level[v] = self.level[u] + 1;
                    self.next_arc[v] = self.first[v];
                    self.leveled.push(v as u32);
                    if self.excess[v] < 0 {
                        deficit_level = deficit_level.min(self.level[v]);
                    }
                    self.queue.push_back(v as u32);
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
            let end = self.first[u + 1] as usize;
            let mut p = self.open.next_in(self.next_arc[u] as usize, end);
            while p < end {
                let v = self.head(p);
                if self.level[v] != NO_LEVEL && self.level[v] == self.level[u] + 1 && self.reduced_cost(u, p) == 0 {
                    break;
                }
                p = self.open.next_in(p + 1, end);
            }
            self.next_arc[u] = p as u32;
            if p < end {
                self.path.push(p as u32);
                u = self.head(p);
            } else {
                self.level[u] = NO_LEVEL;
                let Some(back) = self.path.pop() else { return false };
                u = self.head(self.arcs[back as usize].mate() as usize);
                self.next_arc[u] += 1;
            }
        }
        let mut amount = self.excess[a].min(-self.excess[u]);
        for &p in &self.path {
            amount = amount.min(self.arcs[p as usize].residual());
        }
        for i in 0..self.path.len() {
            let p = self.path[i] as usize;
            let mate = self.arcs[p].mate() as usize;
            self.add_residual(p, -amount);
            self.add_residual(mate, amount);
        }
        self.excess[a] -= amount;
        self.excess[u] += amount;
        true
    }
}

/// The edge whose forward arc is `arcs[p]`, with its flow: its ends, capacity and cost are in
/// its two arcs.
fn edge_of<A: ArcForm>(arcs: &[A], table: &A::Table, p: u32) -> Edge {
    let arc = arcs[p as usize];
    let back = arcs[arc.mate() as usize];
    Edge { from: back.head() as usize, to: arc.head() as usize, capacity: arc.residual() + back.residual(), cost: arc.cost(table), flow: back.residual() }
}

/// A set of positions below a fixed length, a bit each.
#[derive(Default)]
struct Bits(Vec<u64>);

impl Bits {
    /// The empty set of positions below `len`.
    fn new(len: usize) -> Self {
        Self(vec![0; len.div_ceil(64)])
    }

    fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }

    fn set(&mut self, i: usize, on: bool) {
        let bit = 1u64 << (i % 64);
        if on {
            self.0[i / 64] |= bit;
        } else {
            self.0[i / 64] &= !bit;
        }
    }

    /// The first position of the set in `from..end` (`end` at most the length), else `end`.
    fn next_in(&self, from: usize, end: usize) -> usize {
        if from >= end {
            return end;
        }
        let mut w = from / 64;
        let mut word = self.0[w] & (!0u64 << (from % 64));
        while word == 0 {
            w += 1;
            if w * 64 >= end {
                return end;
            }
            word = self.0[w];
        }
        (w * 64 + word.trailing_zeros() as usize).min(end)
    }
}
