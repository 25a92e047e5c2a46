//! Rack-aware optimisation (KIP-925, Kafka's `RackAwareTaskAssignor`): the seam and its implementation.
//!
//! Kafka's assignors call a rack-aware optimiser at fixed points: the high-availability assignor
//! after balancing the stateful actives, after placing and balancing the standbys, and after
//! placing the stateless tasks; the legacy sticky assignor after its active and standby passes.
//! Each call first asks [`RackAwareOptimizer::can_enable`]. Kafka enables the optimiser only when
//! `rack.aware.assignment.strategy` is not `none`, every client has a rack, and the rack of every
//! replica of every input (and, with standbys, changelog) partition is known.
//!
//! The partitions' racks come from [`AssignmentInput::task_partitions`](crate::engine::AssignmentInput);
//! without them (or with any rack unknown) Kafka's check fails and [`NoPartitionRacks`] stands in.
//! [`PartitionRacks`] is the optimiser proper. The cost of a task on a client is
//! `traffic_cost × (partitions with no replica on the client's rack) + non_overlap_cost` if the
//! task is not on that client now; input partitions count for actives, changelog partitions for
//! standbys (Java `int` arithmetic, wrapping).
//!
//! * `min_traffic` actives: the least total cost keeping every client's number of the tasks,
//!   [`flow::reassign`](crate::flow::reassign).
//! * `balance_subtopology` actives: Kafka's two-stage network (task → (sub-topology, client) with
//!   capacity `ceil(count / tasks × tasks of the sub-topology)` → client with capacity `count` →
//!   sink) solved by [`Graph::min_cost_max_flow`], with the task → client edges of tasks that
//!   cost the same wherever they move shared through one node per class (same least cost, a
//!   fraction of the edges).
//! * standbys (both strategies): up to four rounds over the client pairs on different racks, each
//!   pair's movable standbys re-placed at least cost keeping both clients' counts.
//!
//! Kafka cancels negative cycles from the current assignment; the optimum found here has the same
//! total cost, but among equally cheap assignments the two may pick different ones. The standby
//! rounds are a local search: a different choice among a pair's ties changes what later pairs see,
//! so their end cost can differ from Kafka's (either way; `compat/java/rack-parity.sh` counts it).
//!
//! Where Kafka would throw (a task without input partitions, or without changelog partitions when
//! standbys are configured), the optimiser is simply not enabled; where Kafka's
//! `balance_subtopology` network cannot carry every task (Kafka throws), the placement is kept.

pub(crate) mod optimizer;
mod partition_racks;
mod standby_swaps;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use self::optimizer::{NoPartitionRacks, RackAwareOptimizer};
use self::partition_racks::PartitionRacks;
use super::config::RackAwareStrategy;
use super::costs::{HIGH_AVAILABILITY_NON_OVERLAP_COST, HIGH_AVAILABILITY_TRAFFIC_COST};
use super::input::{AssignmentInput, InputError};
use super::model::{Client, Model, Placement, Task};
use crate::wire::{ProcessId, TaskId};

/// Where each task runs: the placement [`optimize_rack_aware`] starts from and returns.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TaskPlacement {
    /// Each task's active client.
    pub active: BTreeMap<TaskId, ProcessId>,
    /// Each task's standby clients.
    #[serde(default)]
    pub standby: BTreeMap<TaskId, BTreeSet<ProcessId>>,
}

/// What [`optimize_rack_aware`] returns: the optimised placement and Kafka's costs for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RackAwareOutcome {
    /// The placement afterwards.
    pub placement: TaskPlacement,
    /// The actives' total cost afterwards (what Kafka's `optimizeActiveTasks` returns), the sum
    /// of the two below.
    pub active_cost: i64,
    /// `traffic_cost` × the active tasks' input partitions with no replica on their client's rack.
    pub active_traffic_cost: i64,
    /// `non_overlap_cost` × the active tasks that changed client.
    pub active_non_overlap_cost: i64,
    /// The standbys' cost afterwards (what Kafka's `optimizeStandbyTasks` returns):
    /// `traffic_cost` × their changelog partitions with no replica on their client's rack.
    pub standby_cost: i64,
}

/// Why [`optimize_rack_aware`] could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RackAwareError {
    /// The input is invalid.
    #[error("invalid assignment input: {0}")]
    Input(#[from] InputError),
    /// Kafka's `canEnableRackAwareAssignor` is false: the strategy is `none`, a client has no
    /// rack, or a task lacks partitions or partition racks.
    #[error("rack-aware assignment is not enabled for this input")]
    NotEnabled,
    /// The placement names a task the input does not have.
    #[error("the placement names unknown task {0}")]
    UnknownTask(TaskId),
    /// The placement names a client the input does not have.
    #[error("the placement names unknown client {0}")]
    UnknownClient(ProcessId),
    /// The placement puts a task on a client twice (active and standby).
    #[error("task {0} is placed on client {1} twice")]
    Duplicate(TaskId, ProcessId),
    /// [`RackAwareStep::ActiveTasks`] with standbys placed: Kafka optimises the actives first.
    #[error("the active tasks are optimised before any standby is placed")]
    StandbysBeforeActives,
}

/// Which of Kafka's two rack-aware optimisations [`optimize_rack_aware`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RackAwareStep {
    /// `optimizeActiveTasks` over every placed active task. Kafka runs it before any standby is
    /// placed, so the placement must have none.
    ActiveTasks,
    /// `optimizeStandbyTasks`: standby swaps between clients on different racks, the actives
    /// staying where they are.
    StandbyTasks,
}

/// One of Kafka's rack-aware optimisations on its own, as the high-availability assignor calls it:
/// `optimizeActiveTasks` over every placed active task (in task order), or `optimizeStandbyTasks`
/// with the configured standby assignor's swap rule.
///
/// The costs are the input's `rack.aware.assignment.traffic_cost` and `non_overlap_cost`, or the
/// high-availability assignor's defaults (10 and 1). A task's cost on a client is
/// `traffic_cost` for each of its partitions (input partitions for actives, changelog partitions
/// for standbys) with no replica on the client's rack, plus `non_overlap_cost` if the given
/// placement does not have the task there.
///
/// ```
/// use kstreams_assignor::engine::{
///     AssignmentConfigs, AssignmentInput, ClientInput, RackAwareStep, RackAwareStrategy, TaskPartitions,
///     TaskPlacement, optimize_rack_aware,
/// };
/// use kstreams_assignor::wire::{ProcessId, TaskId};
///
/// let (a, b) = (ProcessId(uuid::Uuid::from_u128(1)), ProcessId(uuid::Uuid::from_u128(2)));
/// let configs = AssignmentConfigs::default().with_rack_aware_assignment_strategy(RackAwareStrategy::MinTraffic);
/// let (t0, t1) = (TaskId::new(0, 0), TaskId::new(0, 1));
/// let input = AssignmentInput::new()
///     .with_configs(configs)
///     .with_client(ClientInput::new(a, 1).with_rack_id("east"))
///     .with_client(ClientInput::new(b, 1).with_rack_id("west"))
///     .with_stateful_tasks([(t0.clone(), 0), (t1.clone(), 0)])
///     .with_task_partitions(t0.clone(), TaskPartitions::new([["west"]]))
///     .with_task_partitions(t1.clone(), TaskPartitions::new([["east"]]));
/// // Each task starts on the client whose rack lacks its partition: swapping saves traffic.
/// let start = TaskPlacement { active: [(t0.clone(), a), (t1.clone(), b)].into(), ..Default::default() };
/// let out = optimize_rack_aware(&input, &start, RackAwareStep::ActiveTasks)?;
/// assert_eq!(out.placement.active, [(t0, b), (t1, a)].into());
/// assert_eq!((out.active_traffic_cost, out.active_non_overlap_cost), (0, 2));
/// # Ok::<(), kstreams_assignor::engine::RackAwareError>(())
/// ```
pub fn optimize_rack_aware(
    input: &AssignmentInput,
    placement: &TaskPlacement,
    step: RackAwareStep,
) -> Result<RackAwareOutcome, RackAwareError> {
    if step == RackAwareStep::ActiveTasks && placement.standby.values().any(|s| !s.is_empty()) {
        return Err(RackAwareError::StandbysBeforeActives);
    }
    let model = Model::new(input)?;
    if input.configs.rack_aware_assignment_strategy == RackAwareStrategy::None {
        return Err(RackAwareError::NotEnabled);
    }
    let mut racks = PartitionRacks::new(&model);
    if !racks.can_enable() {
        return Err(RackAwareError::NotEnabled);
    }
    let client_index: HashMap<ProcessId, Client> =
        model.clients.iter().enumerate().map(|(i, c)| (c.process_id, i)).collect();
    let client = |p: &ProcessId| client_index.get(p).copied().ok_or(RackAwareError::UnknownClient(*p));
    let task = |t: &TaskId| model.task(t).ok_or_else(|| RackAwareError::UnknownTask(t.clone()));
    let mut p = Placement::new(&model);
    let mut was = vec![usize::MAX; model.tasks.len()];
    for (id, pid) in &placement.active {
        let (t, c) = (task(id)?, client(pid)?);
        p.assign_active(c, t);
        was[t as usize] = c;
    }
    for (id, pids) in &placement.standby {
        let t = task(id)?;
        for pid in pids {
            let c = client(pid)?;
            if p.has_assigned_task(c, t) {
                return Err(RackAwareError::Duplicate(id.clone(), *pid));
            }
            p.assign_standby(c, t);
        }
        if racks.changelog_miss[t as usize].is_none() {
            // Kafka's `canEnable` would have checked the changelogs had standbys been configured.
            return Err(RackAwareError::NotEnabled);
        }
    }
    let configs = &input.configs;
    let traffic = configs.rack_aware_assignment_traffic_cost.unwrap_or(HIGH_AVAILABILITY_TRAFFIC_COST);
    let non_overlap =
        configs.rack_aware_assignment_non_overlap_cost.unwrap_or(HIGH_AVAILABILITY_NON_OVERLAP_COST);
    let mut active: Vec<Task> = (0..model.tasks.len() as Task).filter(|&t| was[t as usize] != usize::MAX).collect();
    active.sort_unstable();
    if step == RackAwareStep::ActiveTasks {
        racks.optimize_active_tasks(&model, &active, &mut p, traffic, non_overlap);
    } else {
        let standbys = super::kafka::standby::for_configs(configs);
        let allowed = |p: &Placement, s, d, t| standbys.is_allowed_standby_swap(&model, p, s, d, t);
        racks.optimize_standby_tasks(&model, &mut p, traffic, non_overlap, &allowed);
    }
    let mut out = RackAwareOutcome {
        placement: TaskPlacement::default(),
        active_cost: 0,
        active_traffic_cost: 0,
        active_non_overlap_cost: 0,
        standby_cost: 0,
    };
    for (c, client) in model.clients.iter().enumerate() {
        for &t in &p.active[c] {
            out.active_traffic_cost += i64::from(racks.cost(t, c, true, traffic, non_overlap, false));
            if was[t as usize] != c {
                out.active_non_overlap_cost += i64::from(non_overlap);
            }
            out.placement.active.insert(model.tasks[t as usize].clone(), client.process_id);
        }
        for &t in &p.standby[c] {
            out.standby_cost += i64::from(racks.cost(t, c, true, traffic, non_overlap, true));
            out.placement.standby.entry(model.tasks[t as usize].clone()).or_default().insert(client.process_id);
        }
    }
    out.active_cost = out.active_traffic_cost + out.active_non_overlap_cost;
    Ok(out)
}

/// The optimiser Kafka's leader would build for this input.
pub(crate) fn for_model(model: &Model<'_>) -> Box<dyn RackAwareOptimizer> {
    let input = model.input;
    if input.configs.rack_aware_assignment_strategy == RackAwareStrategy::None || input.task_partitions.is_empty() {
        return Box::new(NoPartitionRacks);
    }
    Box::new(PartitionRacks::new(model))
}

#[cfg(test)]
mod tests;
