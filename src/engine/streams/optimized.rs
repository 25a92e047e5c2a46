//! This crate's `optimized` assignor on a streams group: the group as the engine's
//! [`AssignmentInput`] (a client per process), the engine's decision, and each process's tasks
//! dealt over its members.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use uuid::Uuid;

use super::extra::{ExtraCopies, bound_extra_copies};
use super::input::{StreamsAssignError, StreamsGroupSpec, StreamsMemberSpec, StreamsTopology, Tasks};
use super::members::{Task, deal, holders};
use super::output::{StreamsGroupAssignment, StreamsMemberAssignment};
use super::state::{planned_tasks, shape};
use crate::engine::snapshot::Snapshot;
use crate::engine::{
    AssignmentConfigs, AssignmentInput, ClientInput, Followup, OptimizedTaskAssignor, PreviousRebalance, TaskAssignor,
};
use crate::wire::{LATEST_OFFSET, ProcessId, TaskId, UNKNOWN_END_OFFSET_SUM};

/// The assignor's name, as `group.streams.assignors` and `streams.assignor.name` know it.
pub const OPTIMIZED_ASSIGNOR_NAME: &str = "optimized";

/// What one group's assignor remembers between two assignments: the offsets it saw and when
/// (from which the next assignment estimates restore rates), and what the last one is waiting
/// for.
///
/// Keep one per group: a memory fed with another group's offsets estimates nothing useful (the
/// engine skips a task whose offsets went down, and a process not seen before has no rate).
#[derive(Debug, Clone, Default)]
pub struct StreamsMemory {
    snapshot: Option<Snapshot>,
    followup: Option<Followup>,
    extra: ExtraCopies,
}

impl StreamsMemory {
    /// An empty memory: the next assignment knows no restore rate.
    pub fn new() -> Self {
        Self::default()
    }

    /// What the last assignment asked to follow: whether warm-ups are restoring, which, and after
    /// how long a new assignment should look at them (`probing.rebalance.interval.ms`). The
    /// streams protocol has no probing rebalance of its own: the host decides when to assign
    /// again (the next group epoch, or a timer of its own). `None` before the first assignment.
    pub fn followup(&self) -> Option<&Followup> {
        self.followup.as_ref()
    }

    /// The copies of stateful tasks the last assignment handed out beyond the standbys asked
    /// for, by kind, and how many the bound (`group.streams.num.warmup.replicas`) left out.
    /// All zero before the first assignment.
    pub fn extra_copies(&self) -> ExtraCopies {
        self.extra
    }

    /// The last assignment's snapshot, taken out of the memory, as the engine reads it if it may
    /// serve `input` at `now_ms` ([`Snapshot::elapsed_if_usable`]); one that may not is dropped.
    fn recall(&mut self, now_ms: i64, input: &AssignmentInput) -> Option<PreviousRebalance> {
        let snap = self.snapshot.take()?;
        let elapsed_ms = snap.elapsed_if_usable(now_ms, input).ok()?;
        Some(snap.into_previous(elapsed_ms))
    }
}

/// Assigns a streams group's tasks with this crate's `optimized` assignor (see
/// [`OptimizedTaskAssignor`]): a client per process, with the process's members as its capacity,
/// its members' reported offsets merged, and its current active tasks as running; the engine's
/// active, standby and warm-up tasks per process are then dealt over the process's members,
/// sticky within a balanced quota.
///
/// # Arguments
///
/// * `spec`: the members with their current tasks and reported offsets, and the configuration:
///   `num.standby.replicas`, `rack.aware.assignment.tags`, and the coordinator's
///   `group.streams.acceptable.recovery.lag` as `acceptable.recovery.lag` and
///   `group.streams.num.warmup.replicas` as `max.warmup.replicas` (at least 1) for the warm-ups
///   the final target may keep.
///
/// The streams protocol has no probing rebalance (the coordinator asks again only when the group
/// changes), so the target the engine plans is applied in this one assignment: the engine plans
/// with unbounded warm-ups, then assigns as if they had caught up (see `apply_at_once`). The
/// processes it chose restore the moved tasks, as under Kafka's sticky assignor, but they are
/// chosen by lag and restore rate. Balance is a hard rule: where the engine's caught-up rule
/// still leaves a process above its share, the balance step (`balance.rs`) moves the cheapest
/// tasks to the processes below theirs, to the engine's own quotas, so no member is above
/// ceil(tasks / members), as under `sticky`. Moves that balance does not need are then undone
/// (`moves.rs`): a moved task goes back to its previous owner where every member stays within
/// one task of every other (stateful tasks within the target's stateful spread), and a process
/// that would gain a task and lose one of its own of the same sub-topology keeps its own.
/// * `topology`: the subtopologies with their task counts and stateful flags.
/// * `memory`: this group's memory; read for restore rates and updated with this assignment.
/// * `now_ms`: the host's clock, for the restore rates (the engine has none).
///
/// A task's lag on a process is its end-offset sum (the highest of what members reported as end
/// offsets or offsets) less the process's highest reported offset; a task a member of the
/// process runs as active counts as running (caught up). Members never report a running active
/// task, so a task that runs somewhere and that no member restores (no end offset reported) is of
/// unknown size: other processes' offsets for it (state left on disk) count as not caught up. Process ids that are UUIDs keep their
/// order; others are mapped to one stable id each.
///
/// # Returns
///
/// Every member's active, standby and warm-up tasks. A warm-up is a standby that restores a task
/// the target will move there; hosts whose assignment has no warm-up field hand it out as a
/// standby. [`StreamsMemory::followup`] tells whether warm-ups are waiting.
///
/// # Errors
///
/// [`StreamsAssignError`] for the inputs [`assign_sticky`](super::assign_sticky) refuses, and
/// [`StreamsAssignError::Engine`] for a configuration the engine refuses.
///
/// # Example
///
/// ```
/// use kstreams_assignor::engine::streams::{
///     assign_optimized, StreamsAssignmentConfigs, StreamsGroupSpec, StreamsMemberSpec, StreamsMemory,
///     StreamsSubtopology, StreamsTopology,
/// };
///
/// let topology = StreamsTopology::new([StreamsSubtopology::new("0", 4, true)]);
/// // Process p1 runs all four tasks, caught up at offset 100; p2 has just joined.
/// let mut a = StreamsMemberSpec::new("a", "p1");
/// for p in 0..4 {
///     a = a.with_active_task("0", p, 1).with_task_end_offset("0", p, 100);
/// }
/// let spec = StreamsGroupSpec::new([a, StreamsMemberSpec::new("b", "p2")]);
/// let configs = StreamsAssignmentConfigs::default().with_num_standby_replicas(1).with_acceptable_recovery_lag(10);
/// let spec = spec.with_configs(configs);
/// let mut memory = StreamsMemory::new();
/// let target = assign_optimized(&spec, &topology, &mut memory, 1_700_000_000_000).unwrap();
/// // No probing rebalance follows on this protocol: b's process takes its share now.
/// assert_eq!(target.members["a"].task_counts().0, 2);
/// assert_eq!(target.members["b"].task_counts().0, 2);
/// assert!(!memory.followup().unwrap().probing_rebalance_needed);
/// ```
pub fn assign_optimized(
    spec: &StreamsGroupSpec,
    topology: &StreamsTopology,
    memory: &mut StreamsMemory,
    now_ms: i64,
) -> Result<StreamsGroupAssignment, StreamsAssignError> {
    memory.extra = ExtraCopies::default();
    let probers: Vec<&StreamsMemberSpec> = spec.members.iter().filter(|m| is_prober(m)).collect();
    if probers.is_empty() {
        return assign_members(spec, topology, memory, now_ms, Moves::AtOnce);
    }
    let mut workers = spec.clone();
    workers.members.retain(|m| !is_prober(m));
    let mut assignment = if workers.members.is_empty() {
        // Only probers: nobody runs tasks, and nobody is asked to.
        shape(topology)?;
        memory.followup = None;
        StreamsGroupAssignment::default()
    } else {
        assign_members(&workers, topology, memory, now_ms, Moves::AfterWarmup)?
    };
    for prober in probers {
        if assignment.members.insert(prober.member_id.clone(), StreamsMemberAssignment::default()).is_some() {
            return Err(StreamsAssignError::DuplicateMember(prober.member_id.clone()));
        }
    }
    Ok(assignment)
}

/// The client tag (`client.tag.kstreams-assignor.probe`) of a group's prober: a member that runs
/// no task and changes this tag's value when the group should be assigned again
/// (`kstreams-assignor probe`). `optimized` gives it nothing and, while one is in the group,
/// moves stateful tasks only to copies that have caught up, as on the classic protocol: warm-ups
/// first, and the prober's next value makes the coordinator assign again.
pub const PROBE_TAG: &str = "kstreams-assignor.probe";

/// Whether `member` is a prober ([`PROBE_TAG`]).
pub fn is_prober(member: &StreamsMemberSpec) -> bool {
    member.client_tags.contains_key(PROBE_TAG)
}

/// Whether the coordinator, assigning `spec` now, would move an active task to another process
/// than the one `target_process_of` names for it in the current target: the question a prober
/// asks before it makes the coordinator assign again. `memory` is read, not changed.
///
/// # Example
///
/// ```
/// use kstreams_assignor::engine::streams::{
///     assign_optimized, moves_waiting, StreamsAssignmentConfigs, StreamsGroupSpec, StreamsMemberSpec, StreamsMemory,
///     StreamsSubtopology, StreamsTopology, PROBE_TAG,
/// };
///
/// let topology = StreamsTopology::new([StreamsSubtopology::new("0", 2, true)]);
/// // One warm-up (`group.streams.num.warmup.replicas`; 0 would allow none).
/// let configs = StreamsAssignmentConfigs::default().with_num_warmup_replicas(1).with_acceptable_recovery_lag(10);
/// // p1 runs both tasks at offset 1,000; p2 has just joined with no state; a prober is there.
/// let a = StreamsMemberSpec::new("a", "p1").with_active_task("0", 0, 1).with_active_task("0", 1, 1)
///     .with_task_end_offset("0", 0, 1_000).with_task_end_offset("0", 1, 1_000);
/// let probe = StreamsMemberSpec::new("probe", "prober").with_client_tag(PROBE_TAG, "0");
/// let spec = StreamsGroupSpec::new([a.clone(), StreamsMemberSpec::new("b", "p2"), probe.clone()]).with_configs(configs.clone());
/// let mut memory = StreamsMemory::new();
/// let target = assign_optimized(&spec, &topology, &mut memory, 0).unwrap();
/// // The active tasks stay on p1 while p2 warms one up.
/// assert_eq!(target.members["a"].task_counts().0, 2);
/// assert_eq!(target.members["b"].task_counts(), (0, 0, 1));
/// let process_of = |_: &str, _: i32| Some("p1".to_owned());
/// assert!(!moves_waiting(&spec, &topology, &memory, 0, process_of).unwrap());
/// // Once b reports the copy caught up, an assignment would move it.
/// let b = StreamsMemberSpec::new("b", "p2").with_warmup_task("0", 0).with_task_offset("0", 0, 995);
/// let spec = StreamsGroupSpec::new([a, b, probe]).with_configs(configs);
/// assert!(moves_waiting(&spec, &topology, &memory, 60_000, process_of).unwrap());
/// ```
///
/// # Errors
///
/// As [`assign_optimized`].
pub fn moves_waiting(
    spec: &StreamsGroupSpec,
    topology: &StreamsTopology,
    memory: &StreamsMemory,
    now_ms: i64,
    target_process_of: impl Fn(&str, i32) -> Option<String>,
) -> Result<bool, StreamsAssignError> {
    let mut scratch = memory.clone();
    let next = assign_optimized(spec, topology, &mut scratch, now_ms)?;
    let process: HashMap<&str, &str> = spec.members.iter().map(|m| (m.member_id.as_str(), m.process_id.as_str())).collect();
    Ok(next.members.iter().any(|(member, a)| {
        let here = process.get(member.as_str()).copied();
        a.active_tasks.iter().any(|(sub, parts)| parts.iter().any(|&p| target_process_of(sub, p).as_deref() != here))
    }))
}

/// When the target's stateful moves happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moves {
    /// In this assignment, balanced (no prober: nothing would assign again).
    AtOnce,
    /// Once the destination's copy has caught up (a prober makes the coordinator assign again).
    AfterWarmup,
}

fn assign_members(
    spec: &StreamsGroupSpec,
    topology: &StreamsTopology,
    memory: &mut StreamsMemory,
    now_ms: i64,
    moves: Moves,
) -> Result<StreamsGroupAssignment, StreamsAssignError> {
    crate::interrupt::checkpoint();
    let (subtopologies, shape) = shape(topology)?;
    let (active, _) = planned_tasks(&shape, spec.configs.num_standby_replicas)?;
    let mut seen = BTreeSet::new();
    for member in &spec.members {
        if !seen.insert(member.member_id.as_str()) {
            return Err(StreamsAssignError::DuplicateMember(member.member_id.clone()));
        }
    }
    let index: HashMap<&str, u32> = subtopologies.iter().enumerate().map(|(i, s)| (s.as_str(), i as u32)).collect();
    if spec.members.is_empty() {
        if active == 0 {
            return Ok(StreamsGroupAssignment::default());
        }
        return Err(StreamsAssignError::NoMembers(format!("{}_0", subtopologies[0])));
    }
    if active == 0 {
        let members = spec.members.iter().map(|m| (m.member_id.clone(), StreamsMemberAssignment::default())).collect();
        return Ok(StreamsGroupAssignment { members });
    }

    crate::interrupt::checkpoint();
    let group = Group::new(spec, &index, &shape);
    crate::interrupt::checkpoint();
    let mut input = group.engine_input(spec, &index, &shape)?;
    crate::interrupt::checkpoint();
    input.previous_rebalance = memory.recall(now_ms, &input);
    let mut assignment = match moves {
        Moves::AtOnce => {
            let mut assignment = apply_at_once(&mut input)?;
            crate::interrupt::checkpoint();
            super::balance::balance_processes(&mut assignment, &input);
            crate::interrupt::checkpoint();
            super::moves::keep_previous(&mut assignment, &input, false);
            crate::interrupt::checkpoint();
            super::moves::cancel_swaps(&mut assignment, &input, false);
            assignment
        }
        Moves::AfterWarmup => {
            let mut assignment = OptimizedTaskAssignor.assign(&input)?;
            crate::interrupt::checkpoint();
            super::moves::keep_previous(&mut assignment, &input, true);
            crate::interrupt::checkpoint();
            super::moves::cancel_swaps(&mut assignment, &input, true);
            crate::interrupt::checkpoint();
            super::moves::hand_over(&mut assignment, &input);
            assignment
        }
    };
    crate::interrupt::checkpoint();
    let bound = usize::try_from(spec.configs.num_warmup_replicas).unwrap_or(usize::MAX);
    memory.extra = bound_extra_copies(&mut assignment, &input, &group.held(), bound);
    memory.followup = Some(assignment.followup.clone());
    memory.snapshot = Snapshot::take(&mut input, now_ms);

    let named = |list: &[Task]| -> Tasks {
        let mut out = Tasks::new();
        for &(s, p) in list {
            out.entry(subtopologies[s as usize].clone()).or_default().insert(p);
        }
        out
    };
    let task = |t: &TaskId| (t.subtopology as u32, t.partition);
    let mut members = BTreeMap::new();
    for client in &assignment.clients {
        crate::interrupt::tick();
        let Some(&p) = group.by_process_id.get(&client.process_id) else { continue };
        let process = &group.processes[p];
        let warmups: BTreeSet<Task> = client.warmup_tasks.iter().map(task).collect();
        let actives: Vec<Task> = client.active_tasks.iter().map(task).collect();
        let standbys: Vec<Task> = client.standby_tasks.iter().map(task).collect();
        let own = |held: fn(&MemberTasks) -> &Vec<Task>| holders(process.members.len(), |m| held(&process.tasks[m]));
        let mut load = vec![0; process.members.len()];
        let (held_active, held_standby) = (own(|t| &t.active), own(|t| &t.standby));
        let active = deal(&actives, &mut load, |t| held_active.get(&t).copied());
        let standby = deal(&standbys, &mut load, |t| held_standby.get(&t).copied());
        for (m, &member) in process.members.iter().enumerate() {
            let (warm, plain): (Vec<Task>, Vec<Task>) = standby[m].iter().partition(|t| warmups.contains(t));
            let assignment =
                StreamsMemberAssignment { active_tasks: named(&active[m]), standby_tasks: named(&plain), warmup_tasks: named(&warm) };
            members.insert(spec.members[member].member_id.clone(), assignment);
        }
    }
    Ok(StreamsGroupAssignment { members })
}

/// The engine's target, reached in this one assignment.
///
/// The streams protocol has no probing rebalance: 4.4.0's coordinator asks its assignor again only
/// when the group's membership, metadata, topology or assignment configs change, and its warm-up
/// refinement hands the target back unchanged, so a warm-up placed now would wait for the next
/// such change while the group stays unbalanced. The engine therefore plans first with as many
/// warm-ups as it likes (`max.warmup.replicas` unbounded: each warm-up or standby it places marks
/// a copy it would let catch up before it moves a task there), and then, if it asked for a probing
/// rebalance, assigns again as if every such copy had caught up, so the moves it planned, to the
/// processes it chose for them by lag and restore rate, happen now;
/// the processes restore those tasks as they would under Kafka's sticky assignor. The offsets
/// left in `input` are the reported ones.
fn apply_at_once(input: &mut AssignmentInput) -> Result<crate::engine::Assignment, StreamsAssignError> {
    let configured = input.configs.max_warmup_replicas;
    input.configs.max_warmup_replicas = i32::MAX;
    let plan = OptimizedTaskAssignor.assign(input);
    input.configs.max_warmup_replicas = configured;
    let plan = plan?;
    if !plan.followup.probing_rebalance_needed {
        return Ok(plan);
    }
    let Some(ends) = input.changelog_end_offset_sums.take() else { return Ok(plan) };
    // The copies the plan places on processes below their share of active tasks (warm-ups, and
    // standbys the engine would let catch up before it moves active tasks there) count as
    // caught up; elsewhere a copy stays as far behind as it is, so nothing else moves. The
    // reported sums they replace are put back afterwards.
    let at: HashMap<ProcessId, usize> = input.clients.iter().enumerate().map(|(i, c)| (c.process_id, i)).collect();
    let actives: usize = plan.clients.iter().map(|c| c.active_tasks.len()).sum();
    let capacity: u64 = input.clients.iter().map(|c| u64::from(c.capacity)).sum::<u64>().max(1);
    let mut replaced: Vec<(usize, TaskId, Option<i64>)> = Vec::new();
    for client in &plan.clients {
        let Some(&c) = at.get(&client.process_id) else { continue };
        // Below its share when its actives over its capacity fall short of the group's ratio
        // (compared without dividing: a share of 2 tasks over 3 one-thread processes is 2/3, not 0).
        if client.active_tasks.len() as u64 * capacity >= actives as u64 * u64::from(input.clients[c].capacity) {
            continue;
        }
        let sums = &mut input.clients[c].task_offset_sums;
        for task in &client.standby_tasks {
            if let Some(&end) = ends.get(task) {
                if sums.get(task) != Some(&LATEST_OFFSET) {
                    replaced.push((c, task.clone(), sums.insert(task.clone(), end)));
                }
            }
        }
    }
    input.changelog_end_offset_sums = Some(ends);
    let assigned = OptimizedTaskAssignor.assign(input);
    for (c, task, reported) in replaced {
        let sums = &mut input.clients[c].task_offset_sums;
        match reported {
            Some(sum) => sums.insert(task, sum),
            None => sums.remove(&task),
        };
    }
    Ok(assigned?)
}

/// A member's current tasks, numbered.
#[derive(Debug, Default)]
struct MemberTasks {
    active: Vec<Task>,
    /// Standby and warm-up tasks.
    standby: Vec<Task>,
}

/// One process: its members (indices into the spec, by member id) and their current tasks.
#[derive(Debug)]
struct Process {
    process_id: ProcessId,
    members: Vec<usize>,
    tasks: Vec<MemberTasks>,
}

/// The group by process.
#[derive(Debug)]
struct Group {
    processes: Vec<Process>,
    by_process_id: HashMap<ProcessId, usize>,
}

impl Group {
    fn new(spec: &StreamsGroupSpec, index: &HashMap<&str, u32>, shape: &[(i32, bool)]) -> Self {
        let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, member) in spec.members.iter().enumerate() {
            by_name.entry(member.process_id.as_str()).or_default().push(i);
        }
        let ids = process_ids(by_name.keys().copied());
        let numbered = |tasks: &mut Vec<Task>, sub: &str, partitions: &mut dyn Iterator<Item = i32>| {
            let Some(&s) = index.get(sub) else { return };
            let count = shape[s as usize].0;
            tasks.extend(partitions.filter(|&p| (0..count).contains(&p)).map(|p| (s, p)));
        };
        let mut processes = Vec::with_capacity(by_name.len());
        for ((_, mut members), process_id) in by_name.into_iter().zip(ids) {
            crate::interrupt::checkpoint();
            members.sort_by(|&a, &b| spec.members[a].member_id.cmp(&spec.members[b].member_id));
            let tasks = members
                .iter()
                .map(|&m| {
                    let member = &spec.members[m];
                    let mut tasks = MemberTasks::default();
                    for (sub, parts) in &member.active_tasks {
                        numbered(&mut tasks.active, sub, &mut parts.keys().copied());
                    }
                    for (sub, parts) in member.standby_tasks.iter().chain(&member.warmup_tasks) {
                        numbered(&mut tasks.standby, sub, &mut parts.iter().copied());
                    }
                    tasks
                })
                .collect();
            processes.push(Process { process_id, members, tasks });
        }
        let by_process_id = processes.iter().enumerate().map(|(i, p)| (p.process_id, i)).collect();
        Self { processes, by_process_id }
    }

    /// The (process, task) pairs of the current assignment: active, standby and warm-up tasks.
    fn held(&self) -> HashSet<(ProcessId, TaskId)> {
        let mut held = HashSet::new();
        for process in &self.processes {
            for tasks in &process.tasks {
                for &(s, p) in tasks.active.iter().chain(&tasks.standby) {
                    held.insert((process.process_id, TaskId::new(s as i32, p)));
                }
            }
        }
        held
    }

    /// The engine's input: a client per process, tasks numbered by subtopology index.
    fn engine_input(&self, spec: &StreamsGroupSpec, index: &HashMap<&str, u32>, shape: &[(i32, bool)]) -> Result<AssignmentInput, StreamsAssignError> {
        let configs = &spec.configs;
        let engine_configs = AssignmentConfigs::default()
            .with_num_standby_replicas(i32::try_from(configs.num_standby_replicas).unwrap_or(i32::MAX))
            .with_acceptable_recovery_lag(configs.acceptable_recovery_lag.max(0))
            .with_max_warmup_replicas(i32::try_from(configs.num_warmup_replicas.max(1)).unwrap_or(i32::MAX))
            .with_rack_aware_assignment_tags(configs.rack_aware_assignment_tags.iter().cloned());
        engine_configs.validate().map_err(|e| StreamsAssignError::Engine(crate::engine::AssignError::Input(e.into())))?;
        let stateful = |s: u32| shape.get(s as usize).is_some_and(|&(_, stateful)| stateful);
        let mut end_offsets: BTreeMap<TaskId, i64> = BTreeMap::new();
        // The tasks some member reported an end offset for (it restores them, so it knows).
        let mut ends_reported: BTreeSet<TaskId> = BTreeSet::new();
        let mut running: BTreeSet<TaskId> = BTreeSet::new();
        let mut clients = Vec::with_capacity(self.processes.len());
        for process in &self.processes {
            crate::interrupt::checkpoint();
            let first: &StreamsMemberSpec = &spec.members[process.members[0]];
            let mut sums: BTreeMap<TaskId, i64> = BTreeMap::new();
            let mut owned = BTreeSet::new();
            for &m in &process.members {
                crate::interrupt::checkpoint();
                let member = &spec.members[m];
                for (sub, parts) in &member.task_offsets {
                    for (&p, &offset) in parts {
                        if let Some(t) = stateful_task(index, shape, sub, p) {
                            merge_offset(&mut sums, t.clone(), offset);
                            // An overflowed sum (Long.MAX_VALUE) says nothing of the end.
                            if (0..UNKNOWN_END_OFFSET_SUM).contains(&offset) {
                                raise(&mut end_offsets, t, offset);
                            }
                        }
                    }
                }
                for (sub, parts) in &member.task_end_offsets {
                    for (&p, &offset) in parts {
                        // An end offset the member does not know yet (Long.MAX_VALUE) is no end.
                        if let (Some(t), true) = (stateful_task(index, shape, sub, p), offset != UNKNOWN_END_OFFSET_SUM) {
                            ends_reported.insert(t.clone());
                            raise(&mut end_offsets, t, offset.max(0));
                        }
                    }
                }
            }
            for tasks in &process.tasks {
                for &(s, p) in &tasks.active {
                    let t = TaskId::new(s as i32, p);
                    if stateful(s) {
                        sums.insert(t.clone(), LATEST_OFFSET);
                        running.insert(t.clone());
                    }
                    owned.insert(t);
                }
            }
            let capacity = u32::try_from(process.members.len()).unwrap_or(u32::MAX);
            let mut client = ClientInput::new(process.process_id, capacity).with_task_offset_sums(sums).with_owned_active_tasks(owned);
            if let Some(rack) = &first.rack_id {
                client = client.with_rack_id(rack.clone());
            }
            clients.push(client.with_client_tags(first.client_tags.iter().map(|(k, v)| (k.clone(), v.clone()))));
        }
        let mut input = AssignmentInput::new().with_configs(engine_configs);
        for client in clients {
            crate::interrupt::tick();
            input = input.with_client(client);
        }
        let mut stateful_tasks = Vec::new();
        let mut stateless_tasks = Vec::new();
        for (s, &(partitions, is_stateful)) in shape.iter().enumerate() {
            for p in 0..partitions {
                crate::interrupt::tick();
                let t = TaskId::new(s as i32, p);
                if is_stateful {
                    // A running active task is never reported (its members leave it out of their
                    // task offsets), so while no member restores it (standby, warm-up or restoring
                    // active, which report its end offset) its state is of unknown size: the
                    // offsets others report (state left on disk) may lag it by any amount, so no
                    // process without it counts as caught up; they rank by what they have. With
                    // no owner, nobody is ahead of the highest report.
                    let highest = end_offsets.get(&t).copied().unwrap_or(0);
                    let end = if running.contains(&t) && !ends_reported.contains(&t) {
                        highest.saturating_add(configs.acceptable_recovery_lag.max(0)).saturating_add(1)
                    } else {
                        highest
                    };
                    stateful_tasks.push((t, end));
                } else {
                    stateless_tasks.push(t);
                }
            }
        }
        crate::interrupt::checkpoint();
        let input = input.with_stateful_tasks(stateful_tasks);
        crate::interrupt::checkpoint();
        Ok(input.with_stateless_tasks(stateless_tasks))
    }
}

/// The numbered id of a reported task of a stateful subtopology, if the topology has it.
fn stateful_task(index: &HashMap<&str, u32>, shape: &[(i32, bool)], sub: &str, partition: i32) -> Option<TaskId> {
    let s = *index.get(sub)? as usize;
    let (partitions, stateful) = shape[s];
    (stateful && (0..partitions).contains(&partition)).then(|| TaskId::new(s as i32, partition))
}

/// Merges a member's offset sum into its process's: running (`-2`) wins, then the highest.
fn merge_offset(sums: &mut BTreeMap<TaskId, i64>, task: TaskId, offset: i64) {
    let entry = sums.entry(task).or_insert(offset);
    if *entry != LATEST_OFFSET && (offset == LATEST_OFFSET || offset > *entry) {
        *entry = offset;
    }
}

fn raise(ends: &mut BTreeMap<TaskId, i64>, task: TaskId, offset: i64) {
    let entry = ends.entry(task).or_insert(offset);
    *entry = (*entry).max(offset);
}

/// A process id per process name: the UUID it spells when every name is a distinct UUID (Kafka
/// Streams' own process ids), otherwise one derived from the name (FNV-1a, 128 bits), stable
/// across calls and hosts.
fn process_ids<'a>(names: impl Iterator<Item = &'a str> + Clone) -> Vec<ProcessId> {
    let parsed: Option<Vec<Uuid>> = names.clone().map(|n| Uuid::parse_str(n).ok()).collect();
    if let Some(ids) = parsed {
        let distinct: BTreeSet<_> = ids.iter().collect();
        if distinct.len() == ids.len() {
            return ids.into_iter().map(ProcessId).collect();
        }
    }
    names.map(|n| ProcessId(Uuid::from_u128(fnv1a_128(n.as_bytes())))).collect()
}

fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(OFFSET, |h, &b| (h ^ u128::from(b)).wrapping_mul(PRIME))
}
