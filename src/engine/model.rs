//! The validated, indexed form of an [`AssignmentInput`] that the assignors work on, and the
//! mutable placement they build (Kafka's `ClientState` assigned sets).
//!
//! Clients are numbered `0..n` in Java's `ProcessId` order and tasks `0..t` in Java's `TaskId`
//! order, so "sorted" iteration in Java is index order here and `(load, client index)` sorts as
//! Java's `(load, ProcessId)`.

use std::collections::{BTreeSet, HashSet};

use super::input::{AssignmentInput, InputError};
use super::model_index::{ClientReports, Reports, TaskIndex};
use super::task_lag::TaskLag;
use crate::jdk::cmp::{cmp_process_ids, cmp_task_ids};
use crate::wire::{ProcessId, TaskId, UNKNOWN_OFFSET_SUM};

/// A client index: the position of the client in Java `ProcessId` order.
pub(crate) type Client = usize;
/// A task index: the position of the task in Java `TaskId` order.
pub(crate) type Task = u32;

/// One client of the [`Model`].
#[derive(Debug)]
pub(crate) struct ClientModel<'a> {
    pub(crate) process_id: ProcessId,
    pub(crate) capacity: u32,
    pub(crate) input: &'a super::input::ClientInput,
}

/// A validated input with clients and tasks numbered in Java order.
#[derive(Debug)]
pub(crate) struct Model<'a> {
    pub(crate) input: &'a AssignmentInput,
    pub(crate) clients: Vec<ClientModel<'a>>,
    /// All tasks in Java order: the input's own ids (no copies).
    pub(crate) tasks: Vec<&'a TaskId>,
    /// Task id → task index ([`Model::task`]).
    task_index: TaskIndex<'a>,
    /// Each client's reported offset sums of known tasks ([`Model::reported`]).
    reports: Reports,
    pub(crate) stateful: Vec<bool>,
    /// Stateful tasks, sorted.
    pub(crate) stateful_tasks: Vec<Task>,
    /// Stateless tasks, sorted.
    pub(crate) stateless_tasks: Vec<Task>,
    /// Changelog end-offset sum per task (`-3` for every stateful task when the fetch failed,
    /// unused for stateless tasks).
    pub(crate) end_offset_sums: Vec<i64>,
}

impl<'a> Model<'a> {
    /// Validates and indexes an input.
    ///
    /// Complexity: O(T log T + R log G + N log N) for T tasks, G sub-topologies, N clients and R
    /// reported offset sums.
    pub(crate) fn new(input: &'a AssignmentInput) -> Result<Self, InputError> {
        input.configs.validate()?;
        if input.clients.is_empty() {
            return Err(InputError::NoClients);
        }
        check_topology_names(input)?;

        if let Some(t) = input.stateful_tasks.intersection(&input.stateless_tasks).next() {
            return Err(InputError::TaskBothStatefulAndStateless(t.clone()));
        }
        // Every task once (the two sets are disjoint), with whether it is stateful.
        let stateful_ids = input.stateful_tasks.iter().map(|t| (t, true));
        let mut sorted: Vec<(&'a TaskId, bool)> = stateful_ids.chain(input.stateless_tasks.iter().map(|t| (t, false))).collect();
        crate::interrupt::checkpoint();
        sorted.sort_by(|a, b| cmp_task_ids(a.0, b.0));
        crate::interrupt::checkpoint();
        let tasks: Vec<&'a TaskId> = sorted.iter().map(|&(t, _)| t).collect();
        let task_index = TaskIndex::new(&tasks);
        crate::interrupt::checkpoint();
        let index_of = |id: &TaskId| task_index.get(&tasks, id);
        let stateful: Vec<bool> = sorted.iter().map(|&(_, s)| s).collect();
        drop(sorted);
        let stateful_tasks: Vec<Task> = (0..tasks.len() as Task).filter(|&t| stateful[t as usize]).collect();
        let stateless_tasks: Vec<Task> = (0..tasks.len() as Task).filter(|&t| !stateful[t as usize]).collect();

        let mut end_offset_sums = vec![0; tasks.len()];
        match &input.changelog_end_offset_sums {
            None => {
                for &t in &stateful_tasks {
                    end_offset_sums[t as usize] = UNKNOWN_OFFSET_SUM;
                }
            }
            Some(sums) => {
                for (task, &sum) in sums {
                    match index_of(task) {
                        Some(t) if stateful[t as usize] => end_offset_sums[t as usize] = sum,
                        _ => return Err(InputError::UnexpectedEndOffsetSum(task.clone())),
                    }
                }
                if let Some(missing) = input.stateful_tasks.iter().find(|t| !sums.contains_key(*t)) {
                    return Err(InputError::MissingEndOffsetSum(missing.clone()));
                }
            }
        }

        if let Some(task) = input.task_partitions.keys().find(|t| index_of(t).is_none()) {
            return Err(InputError::UnknownPartitionTask(task.clone()));
        }

        let mut seen = HashSet::new();
        let mut clients = Vec::with_capacity(input.clients.len());
        for c in &input.clients {
            crate::interrupt::tick();
            if !seen.insert(c.process_id) {
                return Err(InputError::DuplicateProcessId(c.process_id));
            }
            if c.capacity == 0 || c.capacity > i32::MAX as u32 {
                return Err(InputError::InvalidCapacity { process_id: c.process_id, capacity: c.capacity });
            }
            if let Some(task) = c.owned_active_tasks.iter().find(|t| index_of(t).is_none()) {
                return Err(InputError::UnknownOwnedTask { process_id: c.process_id, task: task.clone() });
            }
            clients.push(ClientModel { process_id: c.process_id, capacity: c.capacity, input: c });
        }
        clients.sort_by(|a, b| cmp_process_ids(&a.process_id, &b.process_id));
        // Reports of tasks the input does not list are left out.
        let bound = clients.iter().map(|c| c.input.task_offset_sums.len()).sum();
        let reports = Reports::new(clients.len(), bound, |c, push| {
            for (task, &sum) in &clients[c].input.task_offset_sums {
                if let Some(t) = index_of(task) {
                    push(t, sum);
                }
            }
        });

        Ok(Self {
            input,
            clients,
            tasks,
            task_index,
            reports,
            stateful,
            stateful_tasks,
            stateless_tasks,
            end_offset_sums,
        })
    }

    /// Number of clients.
    pub(crate) fn num_clients(&self) -> usize {
        self.clients.len()
    }

    /// The index of task `id`, if the input lists it.
    ///
    /// Complexity: O(log G) for G sub-topologies (O(log P) more in one whose P partitions are
    /// not `0..P` or the like, none missing).
    pub(crate) fn task(&self, id: &TaskId) -> Option<Task> {
        self.task_index.get(&self.tasks, id)
    }

    /// The index of task `id`, which the input lists (as validated: an owned, reported or
    /// partition-mapped task, or a task of the input's own lists).
    ///
    /// # Panics
    /// If the input does not list `id`.
    pub(crate) fn task_of(&self, id: &TaskId) -> Task {
        self.task(id).unwrap_or_else(|| panic!("task {id} is not one of the input's"))
    }

    /// Per task: the client that owned its active before this rebalance
    /// (`owned_active_tasks`), if any; of several, the first in client order.
    ///
    /// Complexity: O(O·log G) for O owned tasks over all clients and G sub-topologies.
    pub(crate) fn first_owners(&self) -> Vec<Option<Client>> {
        let mut owners = vec![None; self.tasks.len()];
        for (c, client) in self.clients.iter().enumerate() {
            for task in &client.input.owned_active_tasks {
                owners[self.task_of(task) as usize].get_or_insert(c);
            }
        }
        owners
    }

    /// Client `c`'s reported offset sums of the input's tasks, sorted by task.
    pub(crate) fn reported(&self, c: Client) -> ClientReports<'_> {
        self.reports.client(c)
    }

    /// Kafka's `ClientState.lagFor`: the lag of client `c` on stateful task `t`.
    pub(crate) fn lag(&self, c: Client, t: Task) -> i64 {
        TaskLag::compute(self.reported(c).get(t), self.end_offset_sums[t as usize]).0
    }

    /// The lag of every client that did not report task `t`.
    pub(crate) fn unreported_lag(&self, t: Task) -> i64 {
        TaskLag::compute(None, self.end_offset_sums[t as usize]).0
    }
}

/// Java throws when it compares a task of a named topology with an unnamed one; refuse such
/// inputs up front (all task ids, including reported ones, must agree).
fn check_topology_names(input: &AssignmentInput) -> Result<(), InputError> {
    let reported = input.clients.iter().flat_map(|c| c.task_offset_sums.keys().chain(&c.owned_active_tasks));
    let mut all = input.stateful_tasks.iter().chain(&input.stateless_tasks).chain(reported);
    if let Some(first) = all.next() {
        if let Some(other) = all.find(|t| t.topology.is_some() != first.topology.is_some()) {
            return Err(InputError::MixedNamedTopologies(first.clone(), other.clone()));
        }
    }
    Ok(())
}

/// The tasks assigned to each client so far: Kafka's `ClientState` assigned active and standby
/// sets (both `TreeSet`s in Kafka, so iteration is sorted).
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    pub(crate) active: Vec<BTreeSet<Task>>,
    pub(crate) standby: Vec<BTreeSet<Task>>,
    capacity: Vec<u32>,
}

impl Placement {
    /// An empty placement for the model's clients.
    pub(crate) fn new(model: &Model<'_>) -> Self {
        let n = model.num_clients();
        Self {
            active: vec![BTreeSet::new(); n],
            standby: vec![BTreeSet::new(); n],
            capacity: model.clients.iter().map(|c| c.capacity).collect(),
        }
    }

    pub(crate) fn capacity(&self, c: Client) -> u32 {
        self.capacity[c]
    }

    pub(crate) fn assign_active(&mut self, c: Client, t: Task) {
        debug_assert!(!self.has_assigned_task(c, t), "task {t} already on client {c}");
        self.active[c].insert(t);
    }

    pub(crate) fn unassign_active(&mut self, c: Client, t: Task) {
        let removed = self.active[c].remove(&t);
        debug_assert!(removed, "task {t} not active on client {c}");
    }

    pub(crate) fn assign_standby(&mut self, c: Client, t: Task) {
        debug_assert!(!self.has_assigned_task(c, t), "task {t} already on client {c}");
        self.standby[c].insert(t);
    }

    pub(crate) fn unassign_standby(&mut self, c: Client, t: Task) {
        let removed = self.standby[c].remove(&t);
        debug_assert!(removed, "task {t} not standby on client {c}");
    }

    /// Per task (model index, `tasks` of them): the client holding its active, if any.
    pub(crate) fn active_clients(&self, tasks: usize) -> Vec<Option<Client>> {
        let mut owners = vec![None; tasks];
        for (c, active) in self.active.iter().enumerate() {
            active.iter().for_each(|&t| owners[t as usize] = Some(c));
        }
        owners
    }

    pub(crate) fn has_active(&self, c: Client, t: Task) -> bool {
        self.active[c].contains(&t)
    }

    pub(crate) fn has_standby(&self, c: Client, t: Task) -> bool {
        self.standby[c].contains(&t)
    }

    /// Kafka's `hasAssignedTask`.
    pub(crate) fn has_assigned_task(&self, c: Client, t: Task) -> bool {
        self.has_active(c, t) || self.has_standby(c, t)
    }

    /// Kafka's `assignedTaskCount`.
    pub(crate) fn assigned_count(&self, c: Client) -> usize {
        self.active[c].len() + self.standby[c].len()
    }

    /// Kafka's `assignedTaskLoad`: `(double) assignedTaskCount / (double) capacity`.
    pub(crate) fn assigned_load(&self, c: Client) -> f64 {
        self.assigned_count(c) as f64 / f64::from(self.capacity[c])
    }

    /// Kafka's `activeTaskLoad`: `(double) activeTaskCount / (double) capacity`.
    pub(crate) fn active_load(&self, c: Client) -> f64 {
        self.active[c].len() as f64 / f64::from(self.capacity[c])
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::engine::input::ClientInput;

    fn pid(n: u128) -> ProcessId {
        ProcessId(uuid::Uuid::from_u128(n))
    }

    #[test]
    fn refuses_inputs_kafka_cannot_assign() {
        let base = || {
            AssignmentInput::new()
                .with_client(ClientInput::new(pid(1), 1))
                .with_stateful_tasks([(TaskId::new(0, 0), 5)])
                .with_stateless_tasks([TaskId::new(1, 0)])
        };
        let err = |input: AssignmentInput| Model::new(&input).unwrap_err();
        assert_eq!(err(AssignmentInput::new()), InputError::NoClients);
        assert_eq!(err(base().with_client(ClientInput::new(pid(1), 2))), InputError::DuplicateProcessId(pid(1)));
        assert!(matches!(err(base().with_client(ClientInput::new(pid(2), 0))), InputError::InvalidCapacity { .. }));
        assert!(matches!(err(base().with_stateless_tasks([TaskId::new(0, 0)])), InputError::TaskBothStatefulAndStateless(_)));
        let mut missing = base();
        missing.changelog_end_offset_sums = Some(BTreeMap::new());
        assert_eq!(err(missing), InputError::MissingEndOffsetSum(TaskId::new(0, 0)));
        let mut extra = base();
        extra.changelog_end_offset_sums.as_mut().unwrap().insert(TaskId::new(1, 0), 3);
        assert_eq!(err(extra), InputError::UnexpectedEndOffsetSum(TaskId::new(1, 0)));
        let owner = ClientInput::new(pid(2), 1).with_owned_active_tasks([TaskId::new(9, 9)]);
        assert!(matches!(err(base().with_client(owner)), InputError::UnknownOwnedTask { .. }));
        assert!(matches!(err(base().with_stateless_tasks([TaskId::named("t", 2, 0)])), InputError::MixedNamedTopologies(..)));
    }

    #[test]
    fn numbers_clients_and_tasks_in_java_order() {
        let input = AssignmentInput::new()
            .with_client(ClientInput::new(pid(1), 1))
            .with_client(ClientInput::new(pid(u128::MAX), 1))
            .with_stateless_tasks([TaskId::new(0, 10), TaskId::new(0, 9)])
            .with_stateful_tasks([(TaskId::new(1, 0), 7)]);
        let model = Model::new(&input).unwrap();
        assert_eq!(model.clients[0].process_id, pid(u128::MAX), "ffff…ff is -1 as a Java long");
        let tasks: Vec<String> = model.tasks.iter().map(ToString::to_string).collect();
        assert_eq!(tasks, ["0_9", "0_10", "1_0"]);
        assert_eq!((model.lag(0, 2), model.unreported_lag(2)), (7, 7));
    }
}
