//! The fast path for the assignment graphs of rack-aware task assignment: every task goes to one
//! client, each client takes at most its capacity, any task may go to any client at a given cost.
//!
//! As a network this is source → task (capacity 1), task → client (capacity 1, the cost), client
//! → sink (the client's capacity), and [`Graph`](super::Graph) solves it; but with *T* tasks and
//! *N* clients that graph has *T*·*N* edges, and for *T* ≫ *N* the work can be done on the clients
//! alone. Every augmenting path enters a client from the new task and then moves already placed
//! tasks from client to client, so the solver keeps, for each ordered client pair (*a*, *b*), a
//! heap of the tasks on *a* keyed by `cost(t, b) − cost(t, a)`; the heap tops are the arcs of an
//! *N*-node graph (successive shortest paths under client potentials; Ahuja, Magnanti & Orlin,
//! *Network Flows*, 1993, §9.7).
//!
//! Instead of a search per task, a dense Dijkstra towards the sink over that client graph sets the
//! potentials so that every client has a zero-cost chain of moves to a client with room, and
//! records the chains. Reduced costs stay ≥ 0, so a task's cheapest client followed by its chain is
//! a shortest augmenting path; the chains stay valid across many placements (moves of equal cost
//! are common), and the search is repeated only when the chain a task needs has changed. A task is
//! then placed in O(*N*) plus the chain's length.

use std::collections::BinaryHeap;

use super::FlowError;

/// Most tasks a [`CostMatrix`] may have: 2³¹ − 1, so that a task index fits in 31 bits.
pub const MAX_TASKS: usize = (1 << 31) - 1;

const NONE: usize = usize::MAX;
/// `Solver::next` of a client whose chain ends here: it has room.
const SINK: usize = usize::MAX - 1;
const UNREACHED: i64 = i64::MAX;
/// `best_delta` of a client pair with no task to move: large enough never to win, small enough
/// that adding labels and potentials to it cannot overflow.
pub(super) const NO_MOVE: i64 = 1 << 62;

/// The cost of putting each task on each client: a dense row-major table, one row per task.
///
/// Costs are `i32`, as Kafka's are (`int` traffic and non-overlap costs), which keeps the table
/// small and lets the solver pack a move's cost and task into one machine word.
///
/// ```
/// use kstreams_assignor::flow::{CostMatrix, FlowError};
///
/// let costs = CostMatrix::from_fn(3, 2, |task, client| (task + client) as i32)?;
/// assert_eq!((costs.tasks(), costs.clients(), costs.cost(2, 1)), (3, 2, 3));
/// assert_eq!(
///     CostMatrix::new(3, 2, vec![0; 5]).unwrap_err(),
///     FlowError::MatrixShape { len: 5, tasks: 3, clients: 2 }
/// );
/// # Ok::<(), FlowError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostMatrix {
    tasks: usize,
    clients: usize,
    costs: Vec<i32>,
}

impl CostMatrix {
    /// A matrix from its rows laid end to end: `costs[task * clients + client]`.
    ///
    /// Fails with [`FlowError::MatrixShape`] if `costs.len()` is not `tasks * clients`, or if
    /// there are more than [`MAX_TASKS`] tasks.
    pub fn new(tasks: usize, clients: usize, costs: Vec<i32>) -> Result<Self, FlowError> {
        if tasks.checked_mul(clients) != Some(costs.len()) || tasks > MAX_TASKS {
            return Err(FlowError::MatrixShape { len: costs.len(), tasks, clients });
        }
        Ok(Self { tasks, clients, costs })
    }

    /// A matrix whose entry for (`task`, `client`) is `cost(task, client)`, called row by row.
    ///
    /// Fails as [`new`](Self::new) does.
    pub fn from_fn(tasks: usize, clients: usize, mut cost: impl FnMut(usize, usize) -> i32) -> Result<Self, FlowError> {
        let len = tasks.checked_mul(clients).filter(|_| tasks <= MAX_TASKS);
        let len = len.ok_or(FlowError::MatrixShape { len: usize::MAX, tasks, clients })?;
        let mut costs = Vec::with_capacity(len);
        for task in 0..tasks {
            costs.extend((0..clients).map(|client| cost(task, client)));
        }
        Self::new(tasks, clients, costs)
    }

    /// Number of tasks (rows).
    pub fn tasks(&self) -> usize {
        self.tasks
    }

    /// Number of clients (columns).
    pub fn clients(&self) -> usize {
        self.clients
    }

    /// The cost of `task` on `client`.
    ///
    /// # Panics
    ///
    /// If `task` or `client` is out of range.
    pub fn cost(&self, task: usize, client: usize) -> i32 {
        assert!(client < self.clients, "client {client} out of range");
        self.costs[task * self.clients + client]
    }

    fn row(&self, task: usize) -> &[i32] {
        &self.costs[task * self.clients..(task + 1) * self.clients]
    }
}

/// Where each task went, and what it costs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Matching {
    /// `clients[task]` is the client index the task is assigned to.
    pub clients: Vec<usize>,
    /// Σ over tasks of `cost(task, clients[task])`.
    pub cost: i64,
}

/// Assigns every task to a client, client `c` taking at most `capacities[c]` tasks, at the least
/// total cost.
///
/// # Arguments
///
/// * `costs`: *T* tasks × *N* clients; costs may be negative.
/// * `capacities`: one per client.
///
/// # Returns
///
/// An optimal [`Matching`], or [`FlowError::CapacityCount`] if `capacities` has the wrong
/// length, or [`FlowError::Infeasible`] if the capacities add up to fewer than *T*.
///
/// # Complexity
///
/// Each placement costs O(*N*) to find the task's cheapest client, plus O(*N* log *T*) heap work
/// per task moved or placed, plus an O(*N*²) client-level Dijkstra when the recorded chain is
/// stale (at most once per placement; on rack-aware instances once per ten or so). In all
/// O(*T*·*N*² + *M*·*N*·log *T*) for *M* moves, typically far less. Memory O((*T* + *M*)·*N*).
///
/// # Tie-breaking
///
/// Deterministic: tasks are placed in increasing index order, each on the lowest-index client
/// of least reduced cost; the chain search settles clients by (distance, client index) and
/// prefers a client's own room to an equally cheap chain of moves; among tasks that are equally
/// good to move, the lowest task index moves.
///
/// # Example
///
/// ```
/// use kstreams_assignor::flow::{CostMatrix, assign};
///
/// // Both tasks prefer client 0, which has room for one.
/// let costs = CostMatrix::new(2, 2, vec![0, 3, 0, 1])?;
/// let best = assign(&costs, &[1, 1])?;
/// assert_eq!((best.clients, best.cost), (vec![0, 1], 1));
///
/// assert!(assign(&costs, &[1, 0]).is_err());
/// # Ok::<(), kstreams_assignor::flow::FlowError>(())
/// ```
pub fn assign(costs: &CostMatrix, capacities: &[usize]) -> Result<Matching, FlowError> {
    if capacities.len() != costs.clients {
        return Err(FlowError::CapacityCount { len: capacities.len(), clients: costs.clients });
    }
    let room = capacities.iter().fold(0usize, |a, &c| a.saturating_add(c));
    if room < costs.tasks {
        let as_i64 = |x: usize| i64::try_from(x).unwrap_or(i64::MAX);
        return Err(FlowError::Infeasible { required: as_i64(costs.tasks), max_flow: as_i64(room) });
    }
    let mut solver = Solver::new(costs, capacities.to_vec(), vec![NONE; costs.tasks]);
    solver.run()
}

/// Moves tasks between clients to reach the least total cost while every client keeps its number
/// of tasks: the min-cost circulation of the assignment graph started from the current
/// assignment, which is what rack-aware assignment computes.
///
/// # Arguments
///
/// * `costs`: *T* tasks × *N* clients.
/// * `current`: `current[task]` is the task's client now; a client's count in it is its quota.
///
/// # Returns
///
/// An optimal [`Matching`] with the same per-client counts as `current`, or
/// [`FlowError::AssignmentLength`] / [`FlowError::ClientOutOfRange`] for a malformed `current`.
///
/// # Complexity
///
/// As for [`assign`], counting only the tasks that are not already on one of their cheapest
/// clients: the others keep their place to start with (and move only if an optimal chain needs
/// them to).
///
/// # Tie-breaking
///
/// As for [`assign`], for the tasks that start unplaced (in increasing index order). Tasks
/// already on a cheapest client stay unless a chain moves them; give moves a cost (Kafka's
/// `non_overlap_cost`) to make staying strictly preferred.
///
/// # Example
///
/// ```
/// use kstreams_assignor::flow::{CostMatrix, reassign};
///
/// // Tasks 0 and 1 are each on the other's cheap client.
/// let costs = CostMatrix::new(3, 2, vec![5, 0, 0, 5, 1, 1])?;
/// let better = reassign(&costs, &[0, 1, 0])?;
/// assert_eq!((better.clients, better.cost), (vec![1, 0, 0], 1));
/// # Ok::<(), kstreams_assignor::flow::FlowError>(())
/// ```
pub fn reassign(costs: &CostMatrix, current: &[usize]) -> Result<Matching, FlowError> {
    if current.len() != costs.tasks {
        return Err(FlowError::AssignmentLength { len: current.len(), tasks: costs.tasks });
    }
    let mut quota = vec![0usize; costs.clients];
    for (task, &client) in current.iter().enumerate() {
        if client >= costs.clients {
            return Err(FlowError::ClientOutOfRange { task, client, clients: costs.clients });
        }
        quota[client] += 1;
    }
    // With all potentials zero, a task already on a cheapest client satisfies the optimality
    // conditions and can stay; the others are placed afresh.
    let kept = current
        .iter()
        .enumerate()
        .map(|(task, &client)| {
            let row = costs.row(task);
            if row.iter().all(|&c| c >= row[client]) { client } else { NONE }
        })
        .collect();
    let mut solver = Solver::new(costs, quota, kept);
    solver.run()
}

/// Successive shortest paths over the clients. Potentials are kept relative to the sink's, which
/// stays 0: a client's reduced cost to the sink is its potential.
struct Solver<'a> {
    costs: &'a CostMatrix,
    n: usize,
    client_of: Vec<usize>,
    count: Vec<usize>,
    capacity: Vec<usize>,
    potential: Vec<i64>,
    /// `moves[a * n + b]`: tasks on client `a` keyed by (`cost(t, b) − cost(t, a)`, `t`), packed
    /// by [`pack`], in min-heaps (`!key` in std's max-heap); entries of tasks no longer on `a`
    /// are dropped lazily when they reach the top.
    moves: Vec<BinaryHeap<u64>>,
    /// Cached valid top of each heap: the cheapest move, or `NO_MOVE` / `NONE`.
    best_delta: Vec<i64>,
    best_task: Vec<usize>,
    /// Scratch of [`reprice`](Self::reprice): each client's distance to the sink.
    dist: Vec<i64>,
    /// First step of each client's zero-cost chain to the sink, as of the last reprice: another
    /// client, `SINK`, or `NONE` (no chain).
    next: Vec<usize>,
    settled: Vec<bool>,
    path: Vec<(usize, usize, usize)>,
}

impl<'a> Solver<'a> {
    fn new(costs: &'a CostMatrix, capacity: Vec<usize>, client_of: Vec<usize>) -> Self {
        let n = costs.clients;
        let mut count = vec![0; n];
        let mut entries: Vec<Vec<u64>> = vec![Vec::new(); n * n];
        for (task, &a) in client_of.iter().enumerate() {
            if a == NONE {
                continue;
            }
            count[a] += 1;
            let row = costs.row(task);
            for (b, &cost) in row.iter().enumerate() {
                if b != a {
                    entries[a * n + b].push(!pack(cost, row[a], task));
                }
            }
        }
        let moves: Vec<_> = entries.into_iter().map(BinaryHeap::from).collect();
        let mut best_delta = vec![NO_MOVE; n * n];
        let mut best_task = vec![NONE; n * n];
        for (i, heap) in moves.iter().enumerate() {
            if let Some(&key) = heap.peek() {
                (best_delta[i], best_task[i]) = unpack(!key);
            }
        }
        Self {
            costs,
            n,
            client_of,
            count,
            capacity,
            potential: vec![0; n],
            moves,
            best_delta,
            best_task,
            dist: vec![0; n],
            next: vec![NONE; n],
            settled: vec![false; n],
            path: Vec::new(),
        }
    }

    fn run(&mut self) -> Result<Matching, FlowError> {
        for task in 0..self.costs.tasks {
            if self.client_of[task] == NONE {
                self.place(task);
            }
        }
        let total: i128 = self.client_of.iter().enumerate().map(|(task, &c)| i128::from(self.costs.row(task)[c])).sum();
        let cost = i64::try_from(total).map_err(|_| FlowError::Overflow)?;
        Ok(Matching { clients: std::mem::take(&mut self.client_of), cost })
    }

    /// One successive-shortest-path step: a cheapest chain that puts `task` on some client and
    /// moves tasks along until a client with room takes one more.
    ///
    /// All residual arcs have reduced cost ≥ 0, so no chain is cheaper than `task`'s cheapest
    /// first arc; if the client it reaches still has the zero-cost chain to the sink that the
    /// last [`reprice`](Self::reprice) recorded, that chain is a shortest path. Otherwise
    /// reprice, which gives every client that can reach the sink such a chain.
    fn place(&mut self, task: usize) {
        let row = self.costs.row(task);
        let mut first = self.cheapest(row, false);
        if !self.tight_chain(first) {
            self.reprice();
            first = self.cheapest(row, true);
            let found = self.tight_chain(first);
            // Capacity exceeds the task count, so some client has room and every client with a
            // task can reach it.
            debug_assert!(found, "no chain after repricing");
        }
        for i in 0..self.path.len() {
            let (moved, from, to) = self.path[i];
            self.leave(moved, from);
            self.enter(moved, to);
        }
        self.enter(task, first);
    }

    /// The lowest-index client minimising `row[c] − potential[c]`, among those with a recorded
    /// chain if `chained`.
    fn cheapest(&self, row: &[i32], chained: bool) -> usize {
        let mut best = (UNREACHED, NONE);
        for (c, (&cost, &p)) in row.iter().zip(&self.potential).enumerate() {
            let reduced = i64::from(cost) - p;
            if reduced < best.0 && !(chained && self.next[c] == NONE) {
                best = (reduced, c);
            }
        }
        best.1
    }

    /// Follows the recorded chain from `client` into `path` (as (task, from, to) moves) and
    /// checks that every step still costs zero: each move is still the cheapest of its client
    /// pair and tight, and the last client still has room and potential 0.
    fn tight_chain(&mut self, client: usize) -> bool {
        self.path.clear();
        let n = self.n;
        let mut a = client;
        while a != NONE && self.path.len() <= n {
            let b = self.next[a];
            if b == SINK {
                return self.count[a] < self.capacity[a] && self.potential[a] == 0;
            }
            if b == NONE {
                return false;
            }
            let i = a * n + b;
            if self.best_delta[i] == NO_MOVE || self.best_delta[i] + self.potential[a] != self.potential[b] {
                return false;
            }
            self.path.push((self.best_task[i], a, b));
            a = b;
        }
        false
    }

    /// Dijkstra towards the sink over the reversed client graph (dense, O(*N*²)): `dist[c]` is
    /// the reduced cost of the cheapest chain from `c` to the sink, `next[c]` its first step.
    /// Then `potential[c] −= min(dist[c], max finite dist)`, which keeps every reduced cost ≥ 0
    /// and makes each of those chains cost zero.
    fn reprice(&mut self) {
        let n = self.n;
        for c in 0..n {
            self.settled[c] = false;
            if self.count[c] < self.capacity[c] {
                // The arc to the sink costs its potential (≥ 0 for a client with room).
                (self.dist[c], self.next[c]) = (self.potential[c], SINK);
            } else {
                (self.dist[c], self.next[c]) = (UNREACHED, NONE);
            }
        }
        let mut b = (0..n).min_by_key(|&c| (self.dist[c], c)).unwrap_or(NONE);
        let mut farthest = 0;
        while b != NONE && self.dist[b] != UNREACHED {
            self.settled[b] = true;
            let db = self.dist[b];
            farthest = db;
            let base = db - self.potential[b];
            let (mut following, mut following_dist) = (NONE, UNREACHED);
            for a in 0..n {
                if self.settled[a] {
                    continue;
                }
                let delta = self.best_delta[a * n + b];
                if delta != NO_MOVE {
                    let nd = base + delta + self.potential[a];
                    if nd < self.dist[a] {
                        (self.dist[a], self.next[a]) = (nd, b);
                    }
                }
                if self.dist[a] < following_dist {
                    (following, following_dist) = (a, self.dist[a]);
                }
            }
            b = following;
        }
        for c in 0..n {
            self.potential[c] -= self.dist[c].min(farthest);
        }
    }

    fn leave(&mut self, task: usize, client: usize) {
        self.client_of[task] = NONE;
        self.count[client] -= 1;
        let n = self.n;
        for b in 0..n {
            let i = client * n + b;
            if self.best_task[i] != task {
                continue;
            }
            let heap = &mut self.moves[i];
            (self.best_delta[i], self.best_task[i]) = (NO_MOVE, NONE);
            while let Some(&key) = heap.peek() {
                let (delta, t) = unpack(!key);
                if self.client_of[t] == client {
                    (self.best_delta[i], self.best_task[i]) = (delta, t);
                    break;
                }
                heap.pop();
            }
        }
    }

    fn enter(&mut self, task: usize, client: usize) {
        self.client_of[task] = client;
        self.count[client] += 1;
        let n = self.n;
        let row = self.costs.row(task);
        for b in 0..n {
            if b == client {
                continue;
            }
            let i = client * n + b;
            let key = pack(row[b], row[client], task);
            self.moves[i].push(!key);
            let (delta, _) = unpack(key);
            if (delta, task) < (self.best_delta[i], self.best_task[i]) {
                (self.best_delta[i], self.best_task[i]) = (delta, task);
            }
        }
    }
}

/// Packs a move of `task` from a client where it costs `from` to one where it costs `to` into
/// one word that orders as (`to − from`, `task`): the difference offset by 2³² in the top 33 bits,
/// the task (< 2³¹, see [`MAX_TASKS`]) in the low 31.
pub(super) fn pack(to: i32, from: i32, task: usize) -> u64 {
    let delta = i64::from(to) - i64::from(from) + (1 << 32);
    ((delta as u64) << 31) | task as u64
}

/// The (`to − from`, `task`) of a [`pack`]ed move.
pub(super) fn unpack(key: u64) -> (i64, usize) {
    ((key >> 31) as i64 - (1 << 32), (key & ((1 << 31) - 1)) as usize)
}
