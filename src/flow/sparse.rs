//! The assignment of [`assign`](super::assign) where most costs are alike: each client is in a
//! class, each task has one cost per class and a few candidate clients with costs of their own,
//! and every other client costs the task its class cost. A task's row of *N* costs is then a few
//! numbers, and the problem is solved without ever writing the *T* × *N* matrix.
//!
//! As a network: source → task (capacity 1); task → candidate client (its cost); task → hub of
//! class *r* (the task's class cost), hub → every client of the class (cost 0); client → sink (its
//! capacity). Routing a task to a candidate through the hub is allowed too, at the class cost;
//! because a candidate is never dearer than its class ([`FlowError::CandidateAboveClassCost`]),
//! that changes no optimum, and a shortest path never takes the dearer way.
//!
//! The solver is [`assign`](super::assign)'s successive shortest paths on the clients (Ahuja,
//! Magnanti & Orlin, *Network Flows*, 1993, §9.7), with the hubs as extra nodes: a heap per
//! (client, candidate client) pair that some task on the client lists, and a heap per (client,
//! class), keyed by what moving the task costs. Each placement is a Dijkstra search from the task
//! that stops at the sink; potentials are updated on the settled nodes only. A client with room has
//! the sink's potential and a hub whose class has room reaches the sink at no reduced cost, so a
//! search settles only the task's candidates, the hubs and the few full clients whose tasks a
//! cheaper chain moves.
//!
//! A client's heaps are filled only when a search first reads them, as it expands the client
//! while full: until then its tasks wait in a list. Most placements end on a client with room,
//! so the heaps of a client are filled in one go, from memory at hand, rather than a few
//! entries at a time between other clients' (at 10,000 clients and a million tasks, a third
//! less time for the same placements).

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use rustc_hash::FxHashMap;

use super::matching::{NO_MOVE, pack, unpack};
use super::{FlowError, MAX_TASKS, Matching};

/// A task not placed yet, or a heap with no task.
const NONE: u32 = u32::MAX;
const UNREACHED: i64 = i64::MAX;

/// Costs of tasks on clients, stored per task as one cost per client class plus a few candidate
/// clients: the cost of `task` on `client` is the candidate's cost where `client` is listed, else
/// the task's cost for the client's class.
///
/// ```
/// use kstreams_assignor::flow::{FlowError, SparseCosts};
///
/// // Clients 0 and 1 in class 0, client 2 in class 1.
/// let mut costs = SparseCosts::new(vec![0, 0, 1])?;
/// costs.push_task(&[10, 12], &[(1, 3)])?; // 3 on client 1, 10 on client 0, 12 on client 2
/// assert_eq!((costs.cost(0, 0), costs.cost(0, 1), costs.cost(0, 2)), (10, 3, 12));
/// assert_eq!(
///     costs.push_task(&[10, 12], &[(2, 13)]).unwrap_err(),
///     FlowError::CandidateAboveClassCost { task: 1, client: 2, cost: 13, class_cost: 12 }
/// );
/// # Ok::<(), FlowError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparseCosts {
    class_of: Vec<u32>,
    classes: usize,
    /// `class_costs[task * classes + class]`.
    class_costs: Vec<i32>,
    /// Task `t`'s candidates are `candidates[starts[t]..starts[t + 1]]`, by increasing client.
    starts: Vec<usize>,
    candidates: Vec<(u32, i32)>,
}

impl SparseCosts {
    /// No tasks yet, and `class_of[client]` the class of each client; there are
    /// `max(class_of) + 1` classes.
    ///
    /// Fails with [`FlowError::ClassOutOfRange`] if a class or the client count does not fit in
    /// 32 bits.
    pub fn new(class_of: Vec<usize>) -> Result<Self, FlowError> {
        let classes = class_of.iter().max().map_or(0, |&c| c + 1);
        let too_many = u32::try_from(class_of.len()).is_err();
        if let Some((client, &class)) = class_of.iter().enumerate().find(|&(_, &c)| too_many || u32::try_from(c).is_err()) {
            return Err(FlowError::ClassOutOfRange { client, class, classes });
        }
        let class_of = class_of.into_iter().map(|c| c as u32).collect();
        Ok(Self { class_of, classes, class_costs: Vec::new(), starts: vec![0], candidates: Vec::new() })
    }

    /// Adds the next task: its cost on an unlisted client of each class, and its candidates as
    /// (client, cost) in increasing client order.
    ///
    /// Fails with [`FlowError::ClassCostCount`], [`FlowError::CandidateOrder`] or
    /// [`FlowError::CandidateAboveClassCost`], leaving the costs as they were; or with
    /// [`FlowError::MatrixShape`] beyond [`MAX_TASKS`] tasks.
    pub fn push_task(&mut self, class_costs: &[i32], candidates: &[(usize, i32)]) -> Result<(), FlowError> {
        let task = self.tasks();
        if task >= MAX_TASKS {
            return Err(FlowError::MatrixShape { len: usize::MAX, tasks: task + 1, clients: self.clients() });
        }
        if class_costs.len() != self.classes {
            return Err(FlowError::ClassCostCount { task, len: class_costs.len(), classes: self.classes });
        }
        let clients = self.clients();
        let mut previous = None;
        for &(client, cost) in candidates {
            if client >= clients || previous.is_some_and(|p| p >= client) {
                return Err(FlowError::CandidateOrder { task, client, clients });
            }
            let class_cost = class_costs[self.class_of[client] as usize];
            if cost > class_cost {
                return Err(FlowError::CandidateAboveClassCost { task, client, cost, class_cost });
            }
            previous = Some(client);
        }
        self.class_costs.extend_from_slice(class_costs);
        self.candidates.extend(candidates.iter().map(|&(c, cost)| (c as u32, cost)));
        self.starts.push(self.candidates.len());
        Ok(())
    }

    /// Reserves room for `tasks` more tasks with `candidates` more candidates in all, so that
    /// pushing them reallocates nothing (a large instance then grows in place, without the
    /// copies and freed blocks of repeated doubling).
    pub fn reserve(&mut self, tasks: usize, candidates: usize) {
        self.class_costs.reserve(tasks.saturating_mul(self.classes));
        self.starts.reserve(tasks);
        self.candidates.reserve(candidates);
    }

    /// Number of tasks pushed.
    pub fn tasks(&self) -> usize {
        self.starts.len() - 1
    }

    /// Number of clients.
    pub fn clients(&self) -> usize {
        self.class_of.len()
    }

    /// The cost of `task` on `client`.
    ///
    /// # Panics
    ///
    /// If `task` or `client` is out of range.
    pub fn cost(&self, task: usize, client: usize) -> i32 {
        let listed = self.candidates_of(task);
        match listed.binary_search_by_key(&(client as u32), |&(c, _)| c) {
            Ok(i) => listed[i].1,
            Err(_) => self.class_cost(task, self.class_of[client] as usize),
        }
    }

    fn candidates_of(&self, task: usize) -> &[(u32, i32)] {
        &self.candidates[self.starts[task]..self.starts[task + 1]]
    }

    fn class_cost(&self, task: usize, class: usize) -> i32 {
        self.class_costs[task * self.classes + class]
    }
}

/// [`assign`](super::assign) on [`SparseCosts`]: every task to a client, client `c` taking at
/// most `capacities[c]` tasks, at the least total cost.
///
/// # Arguments
///
/// * `costs`: *T* tasks, *N* clients in *K* classes, *C* candidates per task on average.
/// * `capacities`: one per client.
///
/// # Returns
///
/// An optimal [`Matching`] (the same total cost as [`assign`](super::assign) on the full
/// matrix), or [`FlowError::CapacityCount`] if `capacities` has the wrong length, or
/// [`FlowError::Infeasible`] if the capacities add up to fewer than *T*.
///
/// # Complexity
///
/// Each placement pushes the task into *C* + *K* heaps, O((*C* + *K*) log *T*), and searches the
/// task's candidates, the hubs and the full clients a cheaper chain passes through (each with
/// its candidate pairs and *K* hubs); a hub whose class has no room left relaxes its class's
/// clients. Typically O(*T*·(*C* + *K*)·log *T*) in all. Memory O(*T*·(*C* + *K*) + *N*·*K*) plus
/// one heap entry per move.
///
/// # Tie-breaking
///
/// Deterministic: tasks are placed in increasing index order; the search settles nodes by
/// (reduced distance, node), the sink first, clients before hubs; a task placed or moved
/// through a class's hub goes to the first client of the class with room at or after its own
/// index mod *N*, cyclically; among tasks that are equally good to move, the lowest task index
/// moves. Ties may thus be broken otherwise than by [`assign`](super::assign).
///
/// # Example
///
/// ```
/// use kstreams_assignor::flow::{SparseCosts, assign_sparse};
///
/// // One class of three clients. Both tasks are cheap on client 0, which has room for one;
/// // task 1 is next cheapest on client 2.
/// let mut costs = SparseCosts::new(vec![0, 0, 0])?;
/// costs.push_task(&[5], &[(0, 0)])?;
/// costs.push_task(&[5], &[(0, 0), (2, 1)])?;
/// let best = assign_sparse(&costs, &[1, 1, 1])?;
/// assert_eq!((best.clients, best.cost), (vec![0, 2], 1));
///
/// assert!(assign_sparse(&costs, &[1, 0, 0]).is_err());
/// # Ok::<(), kstreams_assignor::flow::FlowError>(())
/// ```
pub fn assign_sparse(costs: &SparseCosts, capacities: &[usize]) -> Result<Matching, FlowError> {
    let clients = costs.clients();
    if capacities.len() != clients {
        return Err(FlowError::CapacityCount { len: capacities.len(), clients });
    }
    let room = capacities.iter().fold(0usize, |a, &c| a.saturating_add(c));
    if room < costs.tasks() {
        let as_i64 = |x: usize| i64::try_from(x).unwrap_or(i64::MAX);
        return Err(FlowError::Infeasible { required: as_i64(costs.tasks()), max_flow: as_i64(room) });
    }
    solve(costs, capacities, false)
}

/// [`assign_sparse`] once the capacities are checked; `eager` indexes every task as it enters
/// its client (the tests' reference for the deferred indexing).
fn solve(costs: &SparseCosts, capacities: &[usize], eager: bool) -> Result<Matching, FlowError> {
    let mut solver = Solver::new(costs, capacities);
    solver.indexed.fill(eager);
    for task in 0..costs.tasks() {
        crate::interrupt::checkpoint();
        solver.place(task);
    }
    let total: i128 = solver.client_of.iter().enumerate().map(|(t, &c)| i128::from(costs.cost(t, c as usize))).sum();
    let cost = i64::try_from(total).map_err(|_| FlowError::Overflow)?;
    Ok(Matching { clients: solver.client_of.iter().map(|&c| c as usize).collect(), cost })
}

/// How the search reached a node.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// From the task being placed.
    Place,
    /// The cheapest task of heap `heap` moves off client `from`.
    Move { heap: u32, from: u32 },
    /// From the hub of class `class`, at no cost.
    FromHub { class: u32 },
    /// The sink, from client `client` (which has room).
    Room { client: u32 },
    /// The sink, from the hub of class `class` through `client` (which has room).
    HubRoom { class: u32, client: u32 },
}

/// Successive shortest paths over clients and class hubs. Nodes: clients `0..n`, hubs
/// `n..n + k`, the sink `n + k`. The reduced cost of an arc `u → v` of cost `c` is
/// `c + potential[u] − potential[v]`, kept ≥ 0.
struct Solver<'a> {
    costs: &'a SparseCosts,
    n: usize,
    k: usize,
    client_of: Vec<u32>,
    count: Vec<usize>,
    capacity: &'a [usize],
    /// Per class: its clients with room.
    room: Vec<BTreeSet<u32>>,
    /// Per class: its clients.
    members: Vec<Vec<u32>>,
    potential: Vec<i64>,
    /// Heaps of tasks on a client keyed by (`cost there − cost here`, task), packed by [`pack`]
    /// in min-heaps (`!key`): `a * k + r` for client `a` to class `r`'s hub, then one per
    /// (client, candidate client) pair in `pairs`. Entries of tasks that left are dropped lazily.
    heaps: Vec<BinaryHeap<u64>>,
    /// Cached valid top of each heap: the cheapest move, or (`NO_MOVE`, `NONE`).
    best: Vec<(i64, u32)>,
    pairs: FxHashMap<u64, u32>,
    /// Per client: its (candidate client, heap) pairs.
    out: Vec<Vec<(u32, u32)>>,
    /// Per client: whether its tasks are in its heaps ([`index`](Self::index)). A client's
    /// heaps are read only once a search expands it while full (a client with room leads
    /// straight to the sink); until then the tasks that enter it wait in a list, and are
    /// indexed together when it is first so expanded ([`materialize`](Self::materialize)).
    indexed: Vec<bool>,
    /// Per client not indexed yet: the first and last task of its list of the tasks it holds,
    /// in the order they entered (`NONE` when empty); `next_waiting[task]` follows `task`.
    waiting: Vec<(u32, u32)>,
    next_waiting: Vec<u32>,
    dist: Vec<i64>,
    step: Vec<Step>,
    settled: Vec<bool>,
    touched: Vec<usize>,
    queue: BinaryHeap<Reverse<(i64, usize)>>,
}

impl<'a> Solver<'a> {
    fn new(costs: &'a SparseCosts, capacity: &'a [usize]) -> Self {
        let (n, k) = (costs.clients(), costs.classes);
        let mut room = vec![BTreeSet::new(); k];
        let mut members = vec![Vec::new(); k];
        for (c, &class) in costs.class_of.iter().enumerate() {
            members[class as usize].push(c as u32);
            if capacity[c] > 0 {
                room[class as usize].insert(c as u32);
            }
        }
        let nodes = n + k + 1;
        Self {
            costs,
            n,
            k,
            client_of: vec![NONE; costs.tasks()],
            count: vec![0; n],
            capacity,
            room,
            members,
            potential: vec![0; nodes],
            heaps: vec![BinaryHeap::new(); n * k],
            best: vec![(NO_MOVE, NONE); n * k],
            pairs: FxHashMap::default(),
            out: vec![Vec::new(); n],
            indexed: vec![false; n],
            waiting: vec![(NONE, NONE); n],
            next_waiting: vec![NONE; costs.tasks()],
            dist: vec![UNREACHED; nodes],
            step: vec![Step::Place; nodes],
            settled: vec![false; nodes],
            touched: Vec::new(),
            queue: BinaryHeap::new(),
        }
    }

    /// One shortest augmenting path from `task` to the sink, applied.
    fn place(&mut self, task: usize) {
        let (n, k, sink) = (self.n, self.k, self.n + self.k);
        for &(c, cost) in self.costs.candidates_of(task) {
            self.relax(c as usize, i64::from(cost) - self.potential[c as usize], Step::Place);
        }
        for r in 0..k {
            self.relax(n + r, i64::from(self.costs.class_cost(task, r)) - self.potential[n + r], Step::Place);
        }
        while let Some(Reverse((d, rank))) = self.queue.pop() {
            let node = if rank == 0 { sink } else { rank - 1 };
            if self.settled[node] || d > self.dist[node] {
                continue;
            }
            self.settled[node] = true;
            if node == sink {
                break;
            }
            if node < n {
                self.expand_client(node, d);
            } else {
                self.expand_hub(node - n, d, task);
            }
        }
        let far = self.dist[sink];
        debug_assert!(far != UNREACHED, "the sink is unreachable");
        // Potentials: `+= min(dist, far)` on every node, kept relative to the unsettled ones.
        for &v in &self.touched {
            if self.settled[v] {
                self.potential[v] += self.dist[v] - far;
            }
        }
        let (moves, first) = self.path(sink);
        for &(moved, from, to) in &moves {
            self.leave(moved, from);
            self.enter(moved as usize, to);
        }
        self.enter(task, first);
        for &v in &self.touched {
            (self.dist[v], self.settled[v]) = (UNREACHED, false);
        }
        self.touched.clear();
        self.queue.clear();
    }

    fn relax(&mut self, node: usize, d: i64, step: Step) {
        if d < self.dist[node] && !self.settled[node] {
            if self.dist[node] == UNREACHED {
                self.touched.push(node);
            }
            (self.dist[node], self.step[node]) = (d, step);
            let rank = if node == self.n + self.k { 0 } else { node + 1 };
            self.queue.push(Reverse((d, rank)));
        }
    }

    fn expand_client(&mut self, a: usize, d: i64) {
        let (n, k, sink) = (self.n, self.k, self.n + self.k);
        let pa = self.potential[a];
        if self.count[a] < self.capacity[a] {
            let reduced = pa - self.potential[sink];
            self.relax(sink, d + reduced, Step::Room { client: a as u32 });
            if reduced == 0 {
                // The sink is now the least entry of the queue (distance `d`, and it settles
                // first among ties), so the search ends next, and nodes that are relaxed but
                // never settled change nothing: the moves off `a` are not needed.
                return;
            }
        }
        self.materialize(a);
        for i in 0..self.out[a].len() {
            let (b, heap) = self.out[a][i];
            let delta = self.best[heap as usize].0;
            if delta != NO_MOVE {
                let reduced = delta + pa - self.potential[b as usize];
                debug_assert!(reduced >= 0, "negative reduced cost {reduced}");
                self.relax(b as usize, d + reduced, Step::Move { heap, from: a as u32 });
            }
        }
        for r in 0..k {
            let heap = a * k + r;
            let delta = self.best[heap].0;
            if delta != NO_MOVE {
                let reduced = delta + pa - self.potential[n + r];
                debug_assert!(reduced >= 0, "negative reduced cost {reduced}");
                self.relax(n + r, d + reduced, Step::Move { heap: heap as u32, from: a as u32 });
            }
        }
    }

    /// From a hub: straight to the sink through a client of the class with room (every such
    /// client has the sink's potential, and no chain through a full one is cheaper), or, when
    /// the class is full, to each of its clients.
    fn expand_hub(&mut self, r: usize, d: i64, task: usize) {
        let (n, sink) = (self.n, self.n + self.k);
        let ph = self.potential[n + r];
        let going = match self.step[n + r] {
            Step::Move { heap, .. } => self.best[heap as usize].1 as usize,
            _ => task,
        };
        let hint = (going % n) as u32;
        let room = &self.room[r];
        if let Some(&client) = room.range(hint..).next().or_else(|| room.first()) {
            self.relax(sink, d + ph - self.potential[sink], Step::HubRoom { class: r as u32, client });
            return;
        }
        for i in 0..self.members[r].len() {
            let b = self.members[r][i] as usize;
            self.relax(b, d + ph - self.potential[b], Step::FromHub { class: r as u32 });
        }
    }

    /// The client the path into the sink ends on.
    fn end_of(&self, sink: usize) -> usize {
        match self.step[sink] {
            Step::Room { client } | Step::HubRoom { client, .. } => client as usize,
            _ => unreachable!("the sink is reached from a client"),
        }
    }

    /// The moves of the path into the sink, as (task, from, to) from the sink backwards, and the
    /// client the new task goes to.
    fn path(&self, sink: usize) -> (Vec<(u32, usize, usize)>, usize) {
        let n = self.n;
        let mut to = self.end_of(sink);
        let mut node = match self.step[sink] {
            Step::HubRoom { class, .. } => n + class as usize,
            _ => to,
        };
        let mut moves = Vec::new();
        loop {
            match self.step[node] {
                Step::Place => return (moves, to),
                Step::Move { heap, from } => {
                    moves.push((self.best[heap as usize].1, from as usize, to));
                    (to, node) = (from as usize, from as usize);
                }
                Step::FromHub { class } => node = n + class as usize,
                Step::Room { .. } | Step::HubRoom { .. } => unreachable!("only the sink is reached from a room"),
            }
        }
    }

    fn heap_of_pair(&mut self, a: usize, b: u32) -> usize {
        let key = (a as u64) << 32 | u64::from(b);
        let next = self.heaps.len() as u32;
        let heap = *self.pairs.entry(key).or_insert(next);
        if heap == next {
            self.heaps.push(BinaryHeap::new());
            self.best.push((NO_MOVE, NONE));
            self.out[a].push((b, heap));
        }
        heap as usize
    }

    fn enter(&mut self, task: usize, client: usize) {
        self.client_of[task] = client as u32;
        self.count[client] += 1;
        let class = self.costs.class_of[client] as usize;
        if self.count[client] == self.capacity[client] {
            self.room[class].remove(&(client as u32));
        }
        if self.indexed[client] {
            self.index(task, client);
        } else {
            // (A task that waited on another client before keeps its link from there.)
            self.next_waiting[task] = NONE;
            let (first, last) = &mut self.waiting[client];
            if *last == NONE {
                *first = task as u32;
            } else {
                self.next_waiting[*last as usize] = task as u32;
            }
            *last = task as u32;
        }
    }

    /// Indexes client `a`'s waiting tasks in its heaps, in the order they entered, and every
    /// task that enters it from now on as it enters. Each heap's cached top is then what it
    /// would be had every task been indexed as it entered: the least key of the tasks on `a`.
    fn materialize(&mut self, a: usize) {
        if !std::mem::replace(&mut self.indexed[a], true) {
            let mut task = std::mem::replace(&mut self.waiting[a], (NONE, NONE)).0;
            while task != NONE {
                self.index(task as usize, a);
                task = self.next_waiting[task as usize];
            }
        }
    }

    /// Pushes `task`, which is on `client`, into the client's heaps: one per other candidate
    /// client of the task and one per class.
    fn index(&mut self, task: usize, client: usize) {
        let here = self.costs.cost(task, client);
        let costs = self.costs;
        for &(b, cost) in costs.candidates_of(task) {
            if b as usize != client {
                let heap = self.heap_of_pair(client, b);
                self.push(heap, pack(cost, here, task));
            }
        }
        for r in 0..self.k {
            self.push(client * self.k + r, pack(costs.class_cost(task, r), here, task));
        }
    }

    fn push(&mut self, heap: usize, key: u64) {
        self.heaps[heap].push(!key);
        let (delta, task) = unpack(key);
        if (delta, task as u32) < self.best[heap] {
            self.best[heap] = (delta, task as u32);
        }
    }

    fn leave(&mut self, task: u32, client: usize) {
        // A task moves only off a client whose moves a search read: indexed.
        debug_assert!(self.indexed[client], "a task left a client not indexed");
        self.client_of[task as usize] = NONE;
        if self.count[client] == self.capacity[client] {
            self.room[self.costs.class_of[client] as usize].insert(client as u32);
        }
        self.count[client] -= 1;
        let costs = self.costs;
        for &(b, _) in costs.candidates_of(task as usize) {
            if b as usize != client {
                let key = (client as u64) << 32 | u64::from(b);
                let heap = self.pairs[&key] as usize;
                self.refresh(heap, task, client);
            }
        }
        for r in 0..self.k {
            self.refresh(client * self.k + r, task, client);
        }
    }

    /// After `task` left `client`: a new cached top for `heap` if it was `task`.
    fn refresh(&mut self, heap: usize, task: u32, client: usize) {
        if self.best[heap].1 != task {
            return;
        }
        self.best[heap] = (NO_MOVE, NONE);
        while let Some(&key) = self.heaps[heap].peek() {
            let (delta, t) = unpack(!key);
            if self.client_of[t] == client as u32 {
                self.best[heap] = (delta, t as u32);
                break;
            }
            self.heaps[heap].pop();
        }
    }
}

#[cfg(test)]
mod tests;
