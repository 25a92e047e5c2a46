//! Kafka Streams' pre-KIP-441 assignor: `LegacyStickyTaskAssignor` (`StickyTaskAssignor` before
//! Kafka 3.8). Also the engine of [`FallbackPriorTaskAssignor`](crate::engine::FallbackPriorTaskAssignor).

use std::collections::HashMap;

use super::leader_collections::LeaderCollections;
use crate::engine::assignor::{AssignError, TaskAssignor};
use crate::engine::costs::{LEGACY_STICKY_NON_OVERLAP_COST, LEGACY_STICKY_TRAFFIC_COST};
use crate::engine::input::AssignmentInput;
use crate::engine::model::{Client, Model, Placement, Task};
use crate::engine::output::Assignment;
use crate::engine::rack_aware::optimizer::RackAwareOptimizer;
use crate::engine::rack_aware;
use crate::jdk::cmp::cmp_task_ids;
use crate::jdk::hash_map::{JavaHashMap, JavaHashSet};
use crate::wire::{LATEST_OFFSET, ProcessId, TaskId};

/// The legacy sticky assignor: previous owners keep their tasks up to a per-thread quota, the rest
/// go to the least loaded clients, preferring clients where a task forms a new pair with the
/// tasks already there. Lags are ignored and it never asks for a probing rebalance.
///
/// # Arguments
/// An [`AssignmentInput`]. Previous tasks come from the clients' owned partitions
/// ([`owned_active_tasks`](crate::engine::ClientInput::owned_active_tasks)) and offset sums (`-2`:
/// previous active, anything else: previous standby), as in Kafka's `ClientState`.
///
/// # Returns
/// An [`Assignment`] equal to Kafka 4.4.0's, with `quota = capacity × ⌊all tasks / total
/// capacity⌋` per client:
/// 1. each task's previous active owner keeps it while under quota (`HashMap` order);
/// 2. a remaining task goes to its first previous standby owner under quota (`HashSet` order);
/// 3. the rest, in `TaskId` order, to the previous owner unless it is full while others have room,
///    else the least loaded previous standby owner, else the least loaded client;
/// 4. standbys of the stateful tasks the same way among clients without a copy.
///
/// "Least loaded" walks a client set in Java's iteration order: an empty client wins at once,
/// otherwise a client replaces the best so far only with a strictly lower `assignedTaskLoad` (or
/// equal load and more threads), and in a first pass only if the task would form a pair not yet
/// co-located in this run. Iteration orders are replayed exactly (see `leader_collections.rs` and
/// `jdk/hash_map.rs`).
///
/// # Complexity
/// O(T · (N + T/N · N)) = O(T² + T · N) time for T tasks and N clients (each least-loaded scan
/// may look at every candidate's tasks for new pairs, and stops at the first), as in Kafka, but
/// memory linear in the tasks: Kafka's set of task pairs (O(T² / N)) is replaced by the clients
/// holding each task, which answers the same questions (see `TaskPairs`).
///
/// # Example
/// ```
/// use kstreams_assignor::engine::{AssignmentInput, ClientInput, LegacyStickyTaskAssignor, TaskAssignor};
/// use kstreams_assignor::wire::{ProcessId, TaskId};
///
/// let (a, b): (ProcessId, ProcessId) = ("00000000-0000-0000-0000-00000000000a".parse().unwrap(), "00000000-0000-0000-0000-00000000000b".parse().unwrap());
/// let input = AssignmentInput::new()
///     .with_client(ClientInput::new(a, 1))
///     .with_client(ClientInput::new(b, 1).with_owned_active_tasks([TaskId::new(0, 0), TaskId::new(0, 1)]))
///     .with_stateless_tasks([TaskId::new(0, 0), TaskId::new(0, 1)]);
/// let out = LegacyStickyTaskAssignor.assign(&input).unwrap();
/// // One task per thread: `b` keeps one of its two tasks, `a` gets the other.
/// assert_eq!(out.client(&b).unwrap().active_tasks.len(), 1);
/// assert_eq!(out.client(&a).unwrap().active_tasks.len(), 1);
/// assert!(!out.followup.probing_rebalance_needed);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct LegacyStickyTaskAssignor;

impl LegacyStickyTaskAssignor {
    /// Kafka's class name.
    pub const NAME: &'static str = "LegacyStickyTaskAssignor";
}

impl TaskAssignor for LegacyStickyTaskAssignor {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn assign(&self, input: &AssignmentInput) -> Result<Assignment, AssignError> {
        let model = Model::new(input)?;
        let placement = run(&model, false, Some(rack_aware::for_model(&model)));
        Ok(Assignment::from_placement(Self::NAME, &model, &placement, false, Vec::new()))
    }
}

/// Runs Kafka's `LegacyStickyTaskAssignor.assign`; `preserve` is its
/// `mustPreserveActiveTaskAssignment` (the fallback assignor's mode), `rack` its optional
/// rack-aware optimiser.
pub(crate) fn run(model: &Model<'_>, preserve: bool, rack: Option<Box<dyn RackAwareOptimizer>>) -> Placement {
    let leader = LeaderCollections::new(model);
    let mut state = Sticky::new(model, &leader, preserve);
    state.assign_active();
    let mut rack = rack;
    let configs = &model.input.configs;
    let traffic = configs.rack_aware_assignment_traffic_cost.unwrap_or(LEGACY_STICKY_TRAFFIC_COST);
    let non_overlap = configs.rack_aware_assignment_non_overlap_cost.unwrap_or(LEGACY_STICKY_NON_OVERLAP_COST);
    let enabled = |rack: &mut Option<Box<dyn RackAwareOptimizer>>| rack.as_mut().is_some_and(|r| r.can_enable());
    if enabled(&mut rack) {
        let rack = rack.as_mut().expect("enabled");
        rack.optimize_active_tasks(model, &model.stateful_tasks, &mut state.placement, traffic, non_overlap);
        rack.optimize_active_tasks(model, &model.stateless_tasks, &mut state.placement, 1, 0);
    }
    state.assign_standby(configs.num_standby_replicas);
    if configs.num_standby_replicas > 0 && enabled(&mut rack) {
        let rack = rack.as_mut().expect("enabled");
        rack.optimize_standby_tasks(model, &mut state.placement, traffic, non_overlap, &|_, _, _, _| true);
    }
    state.placement
}

/// Prior owners of a task, by process id.
type Owners = JavaHashSet<ProcessId>;

/// The assignor's working state (the fields of Kafka's `LegacyStickyTaskAssignor`).
struct Sticky<'a, 'm> {
    model: &'a Model<'m>,
    leader: &'a LeaderCollections,
    preserve: bool,
    placement: Placement,
    client_of: HashMap<ProcessId, Client>,
    /// `previousActiveTaskAssignment`: task → last client (in client-map order) that had it.
    previous_active: JavaHashMap<TaskId, ProcessId>,
    /// `previousStandbyTaskAssignment`: task → clients that had it as a standby.
    previous_standby: HashMap<TaskId, Owners>,
    pairs: TaskPairs,
}

/// A client set in Java iteration order.
struct Candidates {
    order: Vec<Client>,
    member: Vec<bool>,
}

impl<'a, 'm> Sticky<'a, 'm> {
    fn new(model: &'a Model<'m>, leader: &'a LeaderCollections, preserve: bool) -> Self {
        let mut previous_active = JavaHashMap::new();
        let mut previous_standby: HashMap<TaskId, Owners> = HashMap::new();
        for &c in &leader.clients {
            let client = &model.clients[c];
            let (actives, standbys) = previous_tasks(client.input);
            for task in actives {
                previous_active.insert(task, client.process_id);
            }
            for task in standbys {
                previous_standby.entry(task).or_insert_with(JavaHashSet::new).add(client.process_id);
            }
        }
        Self {
            model,
            leader,
            preserve,
            placement: Placement::new(model),
            client_of: model.clients.iter().enumerate().map(|(c, m)| (m.process_id, c)).collect(),
            previous_active,
            previous_standby,
            pairs: TaskPairs::new(model.tasks.len()),
        }
    }

    fn has_unfulfilled_quota(&self, c: Client, tasks_per_thread: i64) -> bool {
        (self.placement.active[c].len() as i64) < i64::from(self.placement.capacity(c)) * tasks_per_thread
    }

    fn assign_active(&mut self) {
        let total_capacity: i64 = self.model.clients.iter().map(|c| i64::from(c.capacity)).sum();
        let tasks_per_thread = self.model.tasks.len() as i64 / total_capacity;

        // Pass 1: previous active owners, in HashMap order.
        let model = self.model;
        let task_id = |t: Task| model.tasks[t as usize];
        let mut assigned: JavaHashSet<&TaskId> = JavaHashSet::new();
        let previous: Vec<(Task, Client)> = self
            .previous_active
            .iter()
            .filter_map(|(task, pid)| model.task(task).map(|t| (t, self.client_of[pid])))
            .collect();
        for (t, c) in previous {
            if !self.preserve && !self.has_unfulfilled_quota(c, tasks_per_thread) {
                continue;
            }
            self.assign_task_to_client(t, c);
            assigned.add(task_id(t));
        }

        // Pass 2: previous standby owners, walking `new HashSet<>(allTaskIds)` minus the assigned.
        let mut unassigned = JavaHashSet::from_collection(self.leader.all_tasks.iter().map(|&t| task_id(t)));
        unassigned.remove_all(assigned.keys().copied(), assigned.len(), |task| assigned.contains_key(*task));
        let walk: Vec<Task> = unassigned.keys().map(|task| model.task_of(task)).collect();
        for t in walk {
            let Some(owners) = self.previous_standby.get(task_id(t)) else { continue };
            let owners: Vec<Client> = owners.keys().map(|pid| self.client_of[pid]).collect();
            if let Some(c) = owners.into_iter().find(|&c| self.has_unfulfilled_quota(c, tasks_per_thread)) {
                self.assign_task_to_client(t, c);
                unassigned.remove_by_iterator(&task_id(t));
            }
        }

        // Pass 3: the rest in TaskId order.
        let mut rest: Vec<Task> = unassigned.keys().map(|task| model.task_of(task)).collect();
        rest.sort_unstable();
        let everyone = self.all_clients();
        for t in rest {
            self.allocate(t, &everyone, true);
        }
    }

    fn assign_standby(&mut self, standbys: i32) {
        for &t in &self.leader.stateful_tasks {
            for _ in 0..standbys.max(0) {
                let without = self.clients_without_assigned_task(t);
                if without.order.is_empty() {
                    break;
                }
                self.allocate(t, &without, false);
            }
        }
    }

    fn assign_task_to_client(&mut self, t: Task, c: Client) {
        self.pairs.add_pairs(t, &self.placement, c);
        self.placement.assign_active(c, t);
    }

    fn allocate(&mut self, t: Task, within: &Candidates, active: bool) {
        let c = self.find_client(t, within);
        self.pairs.add_pairs(t, &self.placement, c);
        if active {
            self.placement.assign_active(c, t);
        } else {
            self.placement.assign_standby(c, t);
        }
    }

    fn all_clients(&self) -> Candidates {
        Candidates { order: self.leader.clients.clone(), member: vec![true; self.model.num_clients()] }
    }

    /// Kafka's `findClientsWithoutAssignedTask`: a new `HashSet` filled in client-map order.
    fn clients_without_assigned_task(&self, t: Task) -> Candidates {
        let mut set: JavaHashSet<ProcessId> = JavaHashSet::new();
        for &c in &self.leader.clients {
            if !self.placement.has_assigned_task(c, t) {
                set.add(self.model.clients[c].process_id);
            }
        }
        self.candidates(set.keys())
    }

    fn candidates<'p>(&self, pids: impl Iterator<Item = &'p ProcessId>) -> Candidates {
        let mut member = vec![false; self.model.num_clients()];
        let order = pids
            .map(|pid| {
                let c = self.client_of[pid];
                member[c] = true;
                c
            })
            .collect();
        Candidates { order, member }
    }

    fn find_client(&self, t: Task, within: &Candidates) -> Client {
        if within.order.len() == 1 {
            return within.order[0];
        }
        let previous = self.previous_active_owner(t).filter(|&c| within.member[c]);
        let Some(previous) = previous.or_else(|| self.least_loaded_previous_standby(t, within)) else {
            return self.least_loaded(t, &within.order);
        };
        if !self.should_balance_load(previous) {
            return previous;
        }
        match self.least_loaded_previous_standby(t, within) {
            Some(standby) if !self.should_balance_load(standby) => standby,
            _ => self.least_loaded(t, &within.order),
        }
    }

    fn previous_active_owner(&self, t: Task) -> Option<Client> {
        self.previous_active.get(self.model.tasks[t as usize]).map(|pid| self.client_of[pid])
    }

    /// Kafka's `findLeastLoadedClientWithPreviousStandByTask`: `new HashSet<>(owners)` keeping
    /// those in `within`.
    fn least_loaded_previous_standby(&self, t: Task, within: &Candidates) -> Option<Client> {
        let owners = self.previous_standby.get(self.model.tasks[t as usize])?;
        let mut constrained = JavaHashSet::from_collection(owners.keys().copied().collect::<Vec<_>>().into_iter());
        constrained.retain(|pid, _| within.member[self.client_of[pid]]);
        let order: Vec<Client> = constrained.keys().map(|pid| self.client_of[pid]).collect();
        self.find_least_loaded(t, &order, true).or_else(|| self.find_least_loaded(t, &order, false))
    }

    /// Kafka's `leastLoaded` on a non-empty set.
    fn least_loaded(&self, t: Task, order: &[Client]) -> Client {
        self.find_least_loaded(t, order, true)
            .or_else(|| self.find_least_loaded(t, order, false))
            .expect("a non-empty client set has a least loaded client")
    }

    fn find_least_loaded(&self, t: Task, order: &[Client], check_task_pairs: bool) -> Option<Client> {
        let mut least: Option<Client> = None;
        for &c in order {
            if self.placement.assigned_count(c) == 0 {
                return Some(c);
            }
            if least.is_some_and(|l| !self.has_more_available_capacity(c, l)) {
                continue;
            }
            if !check_task_pairs || self.pairs.has_new_pair(t, &self.placement, c) {
                least = Some(c);
            }
        }
        least
    }

    /// Kafka's `hasMoreAvailableCapacityThan`: lower `assignedTaskLoad`, or equal and more threads.
    fn has_more_available_capacity(&self, this: Client, other: Client) -> bool {
        let other_load = self.placement.assigned_load(other);
        let this_load = self.placement.assigned_load(this);
        if this_load < other_load {
            return true;
        }
        if this_load > other_load {
            return false;
        }
        self.placement.capacity(this) > self.placement.capacity(other)
    }

    /// Kafka's `shouldBalanceLoad`: the client is at capacity and some client has more room.
    fn should_balance_load(&self, c: Client) -> bool {
        self.placement.assigned_count(c) >= self.placement.capacity(c) as usize
            && (0..self.model.num_clients()).any(|x| self.has_more_available_capacity(x, c))
    }
}

/// Kafka's previous active and standby tasks of a client (`ClientState.initializePrevTasks`):
/// the owned tasks plus those reported at `-2` are active, the other reported tasks standby.
/// Both sorted in `TaskId` order.
pub(crate) fn previous_tasks(client: &crate::engine::input::ClientInput) -> (Vec<TaskId>, Vec<TaskId>) {
    let mut actives: Vec<TaskId> = client.owned_active_tasks.iter().cloned().collect();
    for (task, &sum) in &client.task_offset_sums {
        if sum == LATEST_OFFSET && !client.owned_active_tasks.contains(task) {
            actives.push(task.clone());
        }
    }
    let standbys = client
        .task_offset_sums
        .iter()
        .filter(|(task, sum)| **sum != LATEST_OFFSET && !client.owned_active_tasks.contains(*task))
        .map(|(task, _)| task.clone());
    let mut standbys: Vec<TaskId> = standbys.collect();
    actives.sort_by(cmp_task_ids);
    standbys.sort_by(cmp_task_ids);
    (actives, standbys)
}

/// Kafka's `TaskPairs`: the pairs of tasks placed on one client during this run.
///
/// Kafka keeps every pair in a set, O(T² / N) memory (14 GB at 100,000 tasks over 10 clients).
/// Tasks are never taken off a client during a run, so a pair has been placed exactly when some
/// client holds both tasks now: this keeps, per task, the clients holding it (one per copy), and
/// the number of distinct pairs for Kafka's "every pair seen" check. Same answers, memory linear
/// in the placements.
#[derive(Debug)]
struct TaskPairs {
    /// Per task, the clients it has been placed on.
    holders: Vec<Vec<Client>>,
    /// The number of distinct pairs placed (the size of Kafka's set).
    count: i64,
    /// `n · (n − 1) / 2` in Java `int` arithmetic.
    max_pairs: i64,
}

impl TaskPairs {
    fn new(num_tasks: usize) -> Self {
        let n = num_tasks as i32;
        Self { holders: vec![Vec::new(); num_tasks], count: 0, max_pairs: i64::from(n.wrapping_mul(n.wrapping_sub(1)) / 2) }
    }

    /// Whether some client holds both tasks.
    fn placed_together(&self, a: Task, b: Task) -> bool {
        let (a, b) = (&self.holders[a as usize], &self.holders[b as usize]);
        a.iter().any(|c| b.contains(c))
    }

    /// Whether `t` forms a pair not yet seen with some task on client `c`.
    fn has_new_pair(&self, t: Task, placement: &Placement, c: Client) -> bool {
        if self.count == self.max_pairs {
            return false;
        }
        let mut on_c = placement.active[c].iter().chain(&placement.standby[c]);
        if self.holders[t as usize].is_empty() {
            return on_c.next().is_some();
        }
        on_c.any(|&x| !self.placed_together(t, x))
    }

    /// Records `t` going to client `c` (before it is placed there).
    fn add_pairs(&mut self, t: Task, placement: &Placement, c: Client) {
        let new = if self.holders[t as usize].is_empty() {
            placement.assigned_count(c)
        } else {
            placement.active[c].iter().chain(&placement.standby[c]).filter(|&&x| !self.placed_together(t, x)).count()
        };
        self.count += new as i64;
        self.holders[t as usize].push(c);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::engine::input::ClientInput;
    use crate::rng::Rng;

    /// Kafka's representation: the set of pairs itself.
    #[derive(Default)]
    struct PairSet(HashSet<(Task, Task)>);

    impl PairSet {
        fn add_pairs(&mut self, t: Task, placement: &Placement, c: Client) {
            for &x in placement.active[c].iter().chain(&placement.standby[c]) {
                self.0.insert(if x < t { (x, t) } else { (t, x) });
            }
        }

        fn has_new_pair(&self, t: Task, placement: &Placement, c: Client, max_pairs: i64) -> bool {
            self.0.len() as i64 != max_pairs
                && placement.active[c].iter().chain(&placement.standby[c]).any(|&x| !self.0.contains(&if x < t { (x, t) } else { (t, x) }))
        }
    }

    #[test]
    fn task_pairs_answer_as_the_set_of_pairs_does() {
        let mut rng = Rng::new(17);
        for _ in 0..300 {
            let (clients, tasks) = (rng.range(1, 6) as usize, rng.range(1, 12) as usize);
            let mut input = AssignmentInput::new();
            for i in 0..clients {
                input = input.with_client(ClientInput::new(ProcessId(uuid::Uuid::from_u128(i as u128 + 1)), 1));
            }
            let input = input.with_stateless_tasks((0..tasks as i32).map(|p| TaskId::new(0, p)));
            let model = Model::new(&input).unwrap();
            let mut placement = Placement::new(&model);
            let (mut pairs, mut reference) = (TaskPairs::new(tasks), PairSet::default());
            // Every task once as active, then copies on clients that do not hold it yet.
            let mut moves: Vec<(Task, bool)> = (0..tasks as Task).map(|t| (t, true)).collect();
            moves.extend((0..rng.range(0, 3 * tasks as i64)).map(|_| (rng.range(0, tasks as i64 - 1) as Task, false)));
            for (t, active) in moves {
                let free: Vec<Client> = (0..clients).filter(|&c| !placement.has_assigned_task(c, t)).collect();
                if free.is_empty() || (active && (0..clients).any(|c| placement.has_active(c, t))) {
                    continue;
                }
                // Kafka asks only about clients that do not hold the task.
                for &c in &free {
                    assert_eq!(pairs.has_new_pair(t, &placement, c), reference.has_new_pair(t, &placement, c, pairs.max_pairs));
                }
                let c = *rng.pick(&free);
                pairs.add_pairs(t, &placement, c);
                reference.add_pairs(t, &placement, c);
                assert_eq!(pairs.count, reference.0.len() as i64);
                if active { placement.assign_active(c, t) } else { placement.assign_standby(c, t) }
            }
        }
    }

    #[test]
    fn a_hundred_thousand_stateless_tasks_over_ten_clients_fit_in_memory() {
        // Kafka's set of pairs holds 500 million pairs here (14 GB).
        let mut input = AssignmentInput::new();
        for i in 0..10 {
            input = input.with_client(ClientInput::new(ProcessId(uuid::Uuid::from_u128(i + 1)), 4));
        }
        let input = input.with_stateless_tasks((0..10).flat_map(|s| (0..10_000).map(move |p| TaskId::new(s, p))));
        let out = LegacyStickyTaskAssignor.assign(&input).unwrap();
        assert!(out.clients.iter().all(|c| c.active_tasks.len() == 10_000), "balanced");
    }
}
