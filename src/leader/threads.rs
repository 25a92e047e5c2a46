//! Inside one client: which of its consumers (stream threads) runs which task, and what each
//! consumer is sent. Kafka Streams 4.4.0's `StreamsPartitionAssignor.assignTasksToThreads`,
//! `populateActiveTaskAndPartitionsLists`, `buildStandbyTaskMap` and the follow-up rebalance
//! choice of `addClientAssignments`.
//!
//! # The thread split
//!
//! [`assign_tasks_to_threads`] makes Kafka's three calls over the client's consumers, sorted by
//! member id, with one running task count per consumer shared by the calls: (a) the stateful
//! active tasks, sticky; (b) the standby tasks (warm-ups included), sticky; (c) the stateless
//! active tasks, not sticky. One call, with `min` = ⌊(tasks of this call + tasks given by
//! earlier calls) / consumers⌋:
//!
//! 1. *Sticky calls*: each consumer in turn walks the stateful tasks it reported (the keys of its
//!    subscription's task offset sums that have a lag), by lag then task id, and keeps those
//!    still unassigned until its running count reaches `min`; a task it could not keep is
//!    remembered with it as the task's previous owner (the later consumer wins when two
//!    reported it).
//! 2. Consumers still below `min` queue up in order; the smallest unassigned task goes to the
//!    head of the queue, which goes to the back while still below `min`.
//! 3. Tasks left go one each to consumers at exactly `min`: first each remembered task to its
//!    previous owner (tasks ascending), then the rest, in the order of the task queue's array
//!    (Java iterates its `PriorityQueue`), to the other consumers at `min` in order.
//!
//! After each call the running counts differ by at most one.
//!
//! The array order in step 3 depends on the order the tasks entered the queue: the standbys
//! enter ascending (a `TreeSet`), the active tasks in `HashSet<TaskId>` order. Both are replayed,
//! except that a `HashSet` bucket holding 9 or more of the call's tasks in a table of 64 or more
//! buckets is a red-black tree in Java, whose order is not replayed (it takes 25 to 48 active
//! tasks of one kind on one client with 9 of them on a diagonal `s_p`, `s+2_p+2`, …, or larger
//! tables with rarer collisions).
//!
//! # What each consumer gets
//!
//! [`build_member_assignments`] turns a consumer's tasks into what its `AssignmentInfo` and
//! partition list carry: active partitions sorted by (topic, partition), with the active task
//! list repeating a task once per partition in that order (the member pairs them up by index);
//! the standby tasks with their input partitions. With the cooperative protocol an active task
//! one of whose partitions is new to the consumer but still owned by some member is held back
//! until a follow-up rebalance (`nextRebalanceMs` = 0); if the client had it as a standby and
//! it is stateful, the consumer keeps it as a standby meanwhile. Otherwise the client's
//! follow-up deadline goes to its first consumer only.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::java_order::{TaskQueue, hash_set_order, task_hash};
use super::tasks::Tasks;
use crate::jdk::cmp::cmp_task_ids;
use crate::wire::{NextRebalance, TaskId, TopicPartition};

/// One client's tasks and history, as the leader holds them once the task assignor has run.
///
/// JSON (camelCase):
///
/// ```
/// use kstreams_assignor::leader::ClientTasks;
///
/// let client: ClientTasks = serde_json::from_str(r#"{
///     "consumers": ["c-1", "c-2"],
///     "active": ["0_0", "0_1", "1_0"],
///     "standby": ["0_2"],
///     "lags": {"0_0": 0, "0_1": 10, "0_2": 5},
///     "previousTasks": {"c-2": ["0_0"]}
/// }"#).unwrap();
/// assert_eq!(client.consumers.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct ClientTasks {
    /// The member ids of the client's consumers (its stream threads in this rebalance).
    pub consumers: Vec<String>,
    /// Its active tasks.
    pub active: BTreeSet<TaskId>,
    /// Its standby tasks, warm-ups included.
    pub standby: BTreeSet<TaskId>,
    /// Its lag on every stateful task of the topology (Kafka's `taskLagTotals`; see
    /// [`TaskLag`](crate::engine::TaskLag)). A task is stateful exactly when it has a lag here.
    #[serde(default)]
    pub lags: BTreeMap<TaskId, i64>,
    /// Per consumer, the tasks it reported state for (the keys of its subscription's task offset
    /// sums).
    #[serde(default)]
    pub previous_tasks: BTreeMap<String, BTreeSet<TaskId>>,
}

impl ClientTasks {
    /// A client with these consumers and no tasks.
    pub fn new<S: Into<String>>(consumers: impl IntoIterator<Item = S>) -> Self {
        Self { consumers: consumers.into_iter().map(Into::into).collect(), ..Self::default() }
    }

    /// Sets the active tasks.
    pub fn with_active(mut self, tasks: impl IntoIterator<Item = TaskId>) -> Self {
        self.active = tasks.into_iter().collect();
        self
    }

    /// Sets the standby tasks.
    pub fn with_standby(mut self, tasks: impl IntoIterator<Item = TaskId>) -> Self {
        self.standby = tasks.into_iter().collect();
        self
    }

    /// Sets the lags (and so which tasks are stateful).
    pub fn with_lags(mut self, lags: impl IntoIterator<Item = (TaskId, i64)>) -> Self {
        self.lags = lags.into_iter().collect();
        self
    }

    /// Sets the tasks a consumer reported.
    pub fn with_previous_tasks(mut self, consumer: impl Into<String>, tasks: impl IntoIterator<Item = TaskId>) -> Self {
        self.previous_tasks.insert(consumer.into(), tasks.into_iter().collect());
        self
    }
}

/// The tasks of one consumer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct ThreadTasks {
    /// Active tasks: those of the stateful call, then those of the stateless call, each in the
    /// order they were given.
    pub active: Vec<TaskId>,
    /// Standby tasks, in the order they were given.
    pub standby: Vec<TaskId>,
}

/// The split of one client's tasks over its consumers: consumer member id → its tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ThreadAssignment(pub BTreeMap<String, ThreadTasks>);

/// Input the thread split or the member step refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ThreadError {
    /// The client has no consumer.
    #[error("the client has no consumer")]
    NoConsumers,
    /// A task is both active and standby on the client.
    #[error("task {0} is both active and standby")]
    ActiveAndStandby(TaskId),
    /// A task the member step was given is not one of the topology's tasks.
    #[error("task {0} is not a task of the topology")]
    UnknownTask(TaskId),
}

/// Java's `String.compareTo` (UTF-16 code units): the order of Kafka's `SortedSet<String>` of
/// consumers.
pub(crate) fn cmp_member_ids(a: &str, b: &str) -> Ordering {
    // ASCII strings' UTF-16 code units are their bytes.
    if a.is_ascii() && b.is_ascii() {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Splits a client's tasks over its consumers as Kafka's leader does (see the
/// [module docs](self)).
///
/// Returns every consumer, with empty lists for those that get nothing. Fails on a client
/// without consumers or with a task both active and standby.
///
/// Complexity: O(T·(T + C) + C·P·log P) for T tasks, C consumers and P previous tasks per
/// consumer (Java's queue `contains`/`remove` are linear).
///
/// ```
/// use kstreams_assignor::leader::{assign_tasks_to_threads, ClientTasks};
/// use kstreams_assignor::wire::TaskId;
///
/// let t = |s, p| TaskId::new(s, p);
/// let client = ClientTasks::new(["c-1", "c-2"])
///     .with_active([t(0, 0), t(0, 1), t(1, 0), t(1, 1)])
///     .with_standby([t(0, 2)])
///     .with_lags([(t(0, 0), 0), (t(0, 1), 0), (t(0, 2), 7)])
///     .with_previous_tasks("c-2", [t(0, 0)]);
/// let threads = assign_tasks_to_threads(&client).unwrap();
/// // c-2 keeps the stateful task it ran; stateless tasks are spread over both.
/// assert_eq!(threads.0["c-2"].active, [t(0, 0), t(1, 0)]);
/// assert_eq!(threads.0["c-1"].active, [t(0, 1), t(1, 1)]);
/// assert_eq!(threads.0["c-1"].standby, [t(0, 2)]);
///
/// assert!(assign_tasks_to_threads(&ClientTasks::new(Vec::<String>::new())).is_err());
/// ```
pub fn assign_tasks_to_threads(client: &ClientTasks) -> Result<ThreadAssignment, ThreadError> {
    let mut consumers: Vec<&str> = client.consumers.iter().map(String::as_str).collect();
    consumers.sort_by(|a, b| cmp_member_ids(a, b));
    consumers.dedup();
    if consumers.is_empty() {
        return Err(ThreadError::NoConsumers);
    }
    if let Some(task) = client.active.intersection(&client.standby).next() {
        return Err(ThreadError::ActiveAndStandby(task.clone()));
    }

    let stateful = |t: &&TaskId| client.lags.contains_key(*t);
    let stateful_active = hash_set_order(client.active.iter().filter(stateful).cloned(), task_hash);
    let stateless_active = hash_set_order(client.active.iter().filter(|t| !stateful(t)).cloned(), task_hash);
    let standby: Vec<TaskId> = client.standby.iter().cloned().collect();

    // Each consumer's previous stateful tasks by (lag, task): Kafka's `prevTasksByLag`.
    let by_lag: Vec<Vec<TaskId>> = consumers
        .iter()
        .map(|c| {
            let mut tasks: Vec<(i64, &TaskId)> =
                client.previous_tasks.get(*c).into_iter().flatten().filter_map(|t| Some((*client.lags.get(t)?, t))).collect();
            tasks.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| cmp_task_ids(a.1, b.1)));
            tasks.into_iter().map(|(_, t)| t.clone()).collect()
        })
        .collect();

    let mut load = vec![0usize; consumers.len()];
    let active = split(stateful_active, Some(&by_lag), &mut load);
    let standby = split(standby, Some(&by_lag), &mut load);
    let stateless = split(stateless_active, None, &mut load);

    let threads = consumers
        .iter()
        .zip(active.into_iter().zip(standby).zip(stateless))
        .map(|(c, ((mut active, standby), stateless))| {
            active.extend(stateless);
            (c.to_string(), ThreadTasks { active, standby })
        })
        .collect();
    Ok(ThreadAssignment(threads))
}

/// One `assignTasksToThreads` call. `tasks` is in the order the tasks enter Java's queue;
/// `previous` (sticky calls only) holds each consumer's previous tasks by lag; `load` is the
/// running count per consumer, updated.
fn split(tasks: Vec<TaskId>, previous: Option<&[Vec<TaskId>]>, load: &mut [usize]) -> Vec<Vec<TaskId>> {
    let n = load.len();
    let mut assignment: Vec<Vec<TaskId>> = vec![Vec::new(); n];
    let min = (tasks.len() + load.iter().sum::<usize>()) / n;
    let mut unassigned = TaskQueue::from_collection(tasks);
    let mut to_fill: VecDeque<usize> = VecDeque::new();
    // Kafka's `unassignedTaskToPreviousOwner`, a TreeMap by task.
    let mut previous_owner: Vec<(TaskId, usize)> = Vec::new();

    if !unassigned.is_empty() {
        for c in 0..n {
            let target = min.saturating_sub(load[c]);
            if let Some(previous) = previous {
                for task in &previous[c] {
                    if unassigned.contains(task) {
                        if assignment[c].len() < target {
                            assignment[c].push(task.clone());
                            unassigned.remove(task);
                        } else {
                            match previous_owner.iter_mut().find(|(t, _)| t == task) {
                                Some(entry) => entry.1 = c,
                                None => previous_owner.push((task.clone(), c)),
                            }
                        }
                    }
                }
            }
            if assignment[c].len() < target {
                to_fill.push_back(c);
            }
        }

        while let Some(c) = to_fill.pop_front() {
            // Kafka throws "Ran out of unassigned stateful tasks" if this is empty; with the
            // running counts of earlier calls of the same client within one of each other
            // there are always enough tasks.
            let Some(task) = unassigned.poll() else { break };
            assignment[c].push(task);
            if assignment[c].len() + load[c] < min {
                to_fill.push_back(c);
            }
        }

        if !unassigned.is_empty() {
            to_fill.extend((0..n).filter(|&c| assignment[c].len() + load[c] == min));
            previous_owner.sort_by(|a, b| cmp_task_ids(&a.0, &b.0));
            for (task, c) in previous_owner {
                if let Some(at) = to_fill.iter().position(|&x| x == c) {
                    if unassigned.remove(&task) {
                        assignment[c].push(task);
                        to_fill.remove(at);
                    }
                }
            }
            // Java walks the queue's array without removing from it. There is always a consumer
            // at `min` left (Kafka would throw otherwise).
            for task in unassigned.iter() {
                let Some(c) = to_fill.pop_front() else { break };
                assignment[c].push(task.clone());
            }
        }
    }
    for (c, tasks) in assignment.iter().enumerate() {
        load[c] += tasks.len();
    }
    assignment
}

/// What the member step needs to know about the client's past, besides the thread split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientHistory {
    /// The partitions the client's consumers owned before the rebalance, each with the consumer
    /// that owned it (their subscriptions' `ownedPartitions`).
    pub owned_partitions: BTreeMap<TopicPartition, String>,
    /// The tasks the client had as standby before (Kafka's `prevStandbyTasks`).
    pub previous_standby_tasks: BTreeSet<TaskId>,
    /// The follow-up rebalance deadline the task assignor set for the client (epoch ms).
    pub followup_deadline: Option<i64>,
}

impl ClientHistory {
    /// No owned partitions, no previous standbys, no follow-up.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `consumer` owned `partitions`.
    pub fn with_owned_partitions(mut self, consumer: &str, partitions: impl IntoIterator<Item = TopicPartition>) -> Self {
        self.owned_partitions.extend(partitions.into_iter().map(|p| (p, consumer.to_owned())));
        self
    }

    /// Sets the previous standby tasks.
    pub fn with_previous_standby_tasks(mut self, tasks: impl IntoIterator<Item = TaskId>) -> Self {
        self.previous_standby_tasks = tasks.into_iter().collect();
        self
    }

    /// Sets the follow-up deadline.
    pub fn with_followup_deadline(mut self, epoch_ms: i64) -> Self {
        self.followup_deadline = Some(epoch_ms);
        self
    }
}

/// What one consumer is sent: its partition list and the content of its `AssignmentInfo`
/// (without the host maps and versions, which are group-wide).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct MemberAssignment {
    /// The consumer's member id.
    pub consumer: String,
    /// Its active partitions, sorted by (topic, partition).
    pub active_partitions: Vec<TopicPartition>,
    /// The task of each active partition, index for index.
    pub active_tasks: Vec<TaskId>,
    /// Its standby tasks with their input partitions.
    pub standby_tasks: BTreeMap<TaskId, Vec<TopicPartition>>,
    /// Active tasks held back until another member has given up their partitions.
    pub pending_revocation: BTreeSet<TaskId>,
    /// When it should rejoin.
    pub next_rebalance: NextRebalance,
}

/// Builds each consumer's assignment from the thread split (see the [module docs](self)), in
/// member id order.
///
/// `all_owned_partitions` are the partitions any member of the group owned before the
/// rebalance (cooperative protocol); with the eager protocol members own nothing and nothing is
/// held back. Fails on a task that is not in `tasks`.
///
/// ```
/// use std::collections::BTreeSet;
/// use kstreams_assignor::leader::{build_member_assignments, ClientHistory, ThreadAssignment, ThreadTasks};
/// use kstreams_assignor::leader::{ClusterMetadata, Subtopology, Tasks, Topology};
/// use kstreams_assignor::wire::{NextRebalance, TaskId, TopicPartition};
///
/// let topology = Topology::new("app").with_subtopology(Subtopology::new(0).with_source_topics(["b", "a"]));
/// let tasks = Tasks::build(&topology, &ClusterMetadata::new().with_topic("a", 2).with_topic("b", 2)).unwrap();
/// let mut threads = ThreadAssignment::default();
/// threads.0.insert("c-1".into(), ThreadTasks::default());
/// threads.0.get_mut("c-1").unwrap().active = vec![TaskId::new(0, 1), TaskId::new(0, 0)];
///
/// // Another member still owns b-1: task 0_1 waits for a follow-up rebalance.
/// let owned = BTreeSet::from([TopicPartition::new("b", 1)]);
/// let members = build_member_assignments(&threads, &tasks, &ClientHistory::new(), &owned).unwrap();
/// let m = &members[0];
/// assert_eq!(m.active_partitions, [TopicPartition::new("a", 0), TopicPartition::new("b", 0)]);
/// assert_eq!(m.active_tasks, [TaskId::new(0, 0), TaskId::new(0, 0)]);
/// assert_eq!(m.pending_revocation, BTreeSet::from([TaskId::new(0, 1)]));
/// assert_eq!(m.next_rebalance, NextRebalance::IMMEDIATELY);
/// ```
pub fn build_member_assignments(
    threads: &ThreadAssignment,
    tasks: &Tasks,
    history: &ClientHistory,
    all_owned_partitions: &BTreeSet<TopicPartition>,
) -> Result<Vec<MemberAssignment>, ThreadError> {
    let partitions_of = |task: &TaskId| tasks.partitions_for_task.get(task).ok_or_else(|| ThreadError::UnknownTask(task.clone()));
    let mut consumers: Vec<(&String, &ThreadTasks)> = threads.0.iter().collect();
    consumers.sort_by(|a, b| cmp_member_ids(a.0, b.0));

    let mut deadline = history.followup_deadline;
    let mut members = Vec::with_capacity(consumers.len());
    for (consumer, assigned) in consumers {
        let mut active: Vec<(&TopicPartition, &TaskId)> = Vec::new();
        let mut pending_revocation = BTreeSet::new();
        for task in &assigned.active {
            let partitions = partitions_of(task)?;
            let blocked = partitions.iter().any(|p| history.owned_partitions.get(p) != Some(consumer) && all_owned_partitions.contains(p));
            if blocked {
                pending_revocation.insert(task.clone());
            } else {
                active.extend(partitions.iter().map(|p| (p, task)));
            }
        }
        active.sort_by(|a, b| cmp_partitions(a.0, b.0));

        let mut standby_tasks = BTreeMap::new();
        for task in &assigned.standby {
            standby_tasks.insert(task.clone(), partitions_of(task)?.clone());
        }
        for task in &pending_revocation {
            if history.previous_standby_tasks.contains(task) && tasks.is_stateful(task) {
                standby_tasks.insert(task.clone(), partitions_of(task)?.clone());
            }
        }

        let next_rebalance = if !pending_revocation.is_empty() {
            deadline = None;
            NextRebalance::IMMEDIATELY
        } else {
            deadline.take().map_or(NextRebalance::NONE, NextRebalance::at)
        };
        members.push(MemberAssignment {
            consumer: consumer.clone(),
            active_partitions: active.iter().map(|(p, _)| (*p).clone()).collect(),
            active_tasks: active.iter().map(|(_, t)| (*t).clone()).collect(),
            standby_tasks,
            pending_revocation,
            next_rebalance,
        });
    }
    Ok(members)
}

/// Kafka's partition order for the active list: topic (Java string order), then partition.
fn cmp_partitions(a: &TopicPartition, b: &TopicPartition) -> Ordering {
    // Partitions of one task's topic mostly share its name.
    let topic = if Arc::ptr_eq(&a.topic, &b.topic) { Ordering::Equal } else { cmp_member_ids(&a.topic, &b.topic) };
    topic.then(a.partition.cmp(&b.partition))
}
