//! The sticky assignor's working state (Kafka's `StickyTaskAssignor.initialize` and its
//! `LocalState`): the processes, each task's previous owners, and the two quotas.
//!
//! Members are indexed in the iteration order of the coordinator's `HashMap` of member ids;
//! processes in that of the assignor's `HashMap` of process ids (sized for the member count).
//! Every later loop over members or processes runs in these orders.
//!
//! The quotas are `ceil(tasks / members)`: for active tasks, and for all tasks (active plus
//! stateful times `num.standby.replicas`). A member that reaches a quota leaves its pool: the
//! quota is recomputed over the tasks and members left. Kafka does this in `int`s; so does this.

use std::collections::HashMap;

use super::input::{StreamsAssignError, StreamsGroupSpec, StreamsTopology, TaskValues};
use super::process::{Members, Process, Task};
use crate::jdk::hash_map::JavaHashMap;

/// A subtopology's task count and whether it is stateful.
pub(super) type Shape = (i32, bool);

#[derive(Debug)]
pub(super) struct State {
    /// The subtopology ids in Java's `String` order; a [`Task`] names one by its index here.
    pub(super) subtopologies: Vec<String>,
    /// Each subtopology's task count and whether it is stateful, by index.
    pub(super) shape: Vec<Shape>,
    /// The member ids, by member index.
    pub(super) member_ids: Vec<String>,
    pub(super) members: Members,
    /// The processes, by process index.
    pub(super) processes: Vec<Process>,
    /// The member that last owned each task as active (the last one in member order).
    pub(super) prev_active: HashMap<Task, usize>,
    /// Each task's previous standby owners, then the members that reported an offset for it,
    /// most caught-up first.
    pub(super) prev_standby: HashMap<Task, Vec<usize>>,
    pub(super) num_standby_replicas: i32,
    active_left: i32,
    total_left: i32,
    members_with_active_capacity: i32,
    members_with_capacity: i32,
    /// `activeTasksPerMember`.
    pub(super) active_quota: i32,
    /// `totalTasksPerMember`.
    pub(super) total_quota: i32,
}

/// `computeTasksPerMember`: `tasks / members` rounded up, 0 without members.
fn per_member(tasks: i32, members: i32) -> i32 {
    if members == 0 {
        return 0;
    }
    let q = tasks.wrapping_div(members);
    if tasks.wrapping_rem(members) > 0 { q.wrapping_add(1) } else { q }
}

impl State {
    pub(super) fn new(spec: &StreamsGroupSpec, topology: &StreamsTopology) -> Result<Self, StreamsAssignError> {
        let (subtopologies, shape) = shape(topology)?;
        let replicas = spec.configs.num_standby_replicas;
        let (active, standby) = planned_tasks(&shape, replicas)?;
        // Within the bound, every count below fits an `int` as it does in Java.
        let replicas = replicas as i32;
        let (active, total) = (active as i32, (active + standby) as i32);

        // The coordinator's member map: a `new HashMap<>()` filled in its members' order.
        let mut by_id = JavaHashMap::new();
        for (i, member) in spec.members.iter().enumerate() {
            if by_id.insert(member.member_id.as_str(), i).is_some() {
                return Err(StreamsAssignError::DuplicateMember(member.member_id.clone()));
            }
        }
        let order: Vec<usize> = by_id.iter().map(|(_, &i)| i).collect();
        let n = order.len() as i32;

        // `processIdToState`: `new HashMap<>(members)`, a process added by `computeIfAbsent` at its
        // first member; each process's own map of member ids is a `new HashMap<>()`.
        let mut process_index = JavaHashMap::with_capacity(order.len());
        let mut process_members: Vec<JavaHashMap<&str, usize>> = Vec::new();
        let mut member_process = Vec::with_capacity(order.len());
        for (m, &i) in order.iter().enumerate() {
            let member = &spec.members[i];
            let next = process_members.len();
            if process_index.compute_if_absent(member.process_id.as_str(), || next) {
                process_members.push(JavaHashMap::new());
            }
            let Some(&p) = process_index.get(member.process_id.as_str()) else { continue };
            process_members[p].insert(member.member_id.as_str(), m);
            member_process.push(p);
        }
        // Processes re-indexed in the iteration order of `processIdToState`.
        let visit: Vec<usize> = process_index.iter().map(|(_, &p)| p).collect();
        let mut renumber = vec![0; visit.len()];
        for (new, &old) in visit.iter().enumerate() {
            renumber[old] = new;
        }
        let processes = visit.iter().map(|&old| Process::new(process_members[old].iter().map(|(_, &m)| m).collect())).collect();
        let members = Members::new(member_process.iter().map(|&p| renumber[p]).collect());

        let index = |sub: &str| subtopologies.binary_search_by(|s| crate::jdk::cmp::cmp_java_strings(s, sub)).ok();
        let mut prev_active = HashMap::new();
        // Per task: (member, was a standby, offset sum), in member order.
        let mut candidates: HashMap<Task, Vec<(usize, bool, i64)>> = HashMap::new();
        for (m, &i) in order.iter().enumerate() {
            let member = &spec.members[i];
            for (sub, partitions) in &member.active_tasks {
                if let Some(s) = index(sub) {
                    for &p in partitions.keys() {
                        prev_active.insert((s as u32, p), m);
                    }
                }
            }
            for (sub, partitions) in &member.standby_tasks {
                if let Some(s) = index(sub) {
                    for &p in partitions {
                        let offset = offset(&member.task_offsets, sub, p).unwrap_or(0);
                        candidates.entry((s as u32, p)).or_default().push((m, true, offset));
                    }
                }
            }
            for (sub, offsets) in &member.task_offsets {
                if let Some(s) = index(sub) {
                    let standby = member.standby_tasks.get(sub);
                    for (&p, &offset) in offsets {
                        if !standby.is_some_and(|set| set.contains(&p)) {
                            candidates.entry((s as u32, p)).or_default().push((m, false, offset));
                        }
                    }
                }
            }
        }
        // Previous standbys first, then the highest offset sum; ties keep member order.
        let prev_standby = candidates
            .into_iter()
            .map(|(task, mut list)| {
                list.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)));
                (task, list.into_iter().map(|c| c.0).collect())
            })
            .collect();

        Ok(Self {
            subtopologies,
            shape,
            member_ids: order.iter().map(|&i| spec.members[i].member_id.clone()).collect(),
            members,
            processes,
            prev_active,
            prev_standby,
            num_standby_replicas: replicas,
            active_left: active,
            total_left: total,
            members_with_active_capacity: n,
            members_with_capacity: n,
            active_quota: per_member(active, n),
            total_quota: per_member(total, n),
        })
    }

    /// `maybeUpdateActiveTasksPerMember`: a member whose count reached the active quota leaves.
    pub(super) fn reached_active(&mut self, count: i32) {
        if count == self.active_quota {
            self.members_with_active_capacity -= 1;
            self.active_left = self.active_left.wrapping_sub(count);
            self.active_quota = per_member(self.active_left, self.members_with_active_capacity);
        }
    }

    /// `maybeUpdateTotalTasksPerMember`: a member whose count reached the total quota leaves.
    pub(super) fn reached_total(&mut self, count: i32) {
        if count == self.total_quota {
            self.members_with_capacity -= 1;
            self.total_left = self.total_left.wrapping_sub(count);
            self.total_quota = per_member(self.total_left, self.members_with_capacity);
        }
    }

    /// `findPrevMemberWithLeastLoad`: the first of `candidates` (skipping processes that hold
    /// `skip_holders_of`), replaced only by one whose process load and own count are both lower.
    pub(super) fn least_loaded_previous(&self, candidates: Option<&Vec<usize>>, skip_holders_of: Option<Task>) -> Option<usize> {
        let mut best: Option<(usize, f64, i32)> = None;
        for &m in candidates? {
            let process = &self.processes[self.members.process[m]];
            if skip_holders_of.is_some_and(|t| process.has_task(t)) {
                continue;
            }
            let (load, count) = (process.load(), self.members.count[m]);
            match best {
                Some((_, best_load, best_count)) if !(load < best_load && count < best_count) => {}
                _ => best = Some((m, load, count)),
            }
        }
        best.map(|b| b.0)
    }

    /// The task's subtopology id.
    pub(super) fn task_name(&self, task: Task) -> String {
        format!("{}_{}", self.subtopologies[task.0 as usize], task.1)
    }
}

fn offset(offsets: &TaskValues<i64>, sub: &str, partition: i32) -> Option<i64> {
    offsets.get(sub)?.get(&partition).copied()
}

/// The active and standby tasks to place, refused above
/// [`MAX_STREAMS_TASKS`](super::input::MAX_STREAMS_TASKS).
pub(super) fn planned_tasks(shape: &[Shape], replicas: u32) -> Result<(u64, u64), StreamsAssignError> {
    let active: u64 = shape.iter().map(|&(n, _)| n as u64).sum();
    let standby: u64 = shape.iter().filter(|s| s.1).map(|&(n, _)| n as u64 * u64::from(replicas)).sum();
    if active + standby > super::input::MAX_STREAMS_TASKS {
        return Err(StreamsAssignError::TooManyTasks { tasks: active + standby, max: super::input::MAX_STREAMS_TASKS });
    }
    Ok((active, standby))
}

/// The subtopology ids in Java's `String` order, with their task counts and stateful flags.
pub(super) fn shape(topology: &StreamsTopology) -> Result<(Vec<String>, Vec<Shape>), StreamsAssignError> {
    let mut subs: Vec<_> = topology.subtopologies.iter().collect();
    subs.sort_by(|a, b| crate::jdk::cmp::cmp_java_strings(&a.id, &b.id));
    for pair in subs.windows(2) {
        if pair[0].id == pair[1].id {
            return Err(StreamsAssignError::DuplicateSubtopology(pair[0].id.clone()));
        }
    }
    let mut shape = Vec::with_capacity(subs.len());
    for sub in &subs {
        if sub.partitions == 0 {
            return Err(StreamsAssignError::NoPartitions(sub.id.clone()));
        }
        let Ok(partitions) = i32::try_from(sub.partitions) else {
            return Err(StreamsAssignError::TooManyPartitions { subtopology: sub.id.clone(), partitions: sub.partitions });
        };
        shape.push((partitions, sub.stateful));
    }
    Ok((subs.into_iter().map(|s| s.id.clone()).collect(), shape))
}
