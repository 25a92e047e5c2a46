//! Kafka Streams' default assignor: `HighAvailabilityTaskAssignor` (KIP-441).

use super::balance::{TaskKind, balance_tasks_over_threads};
use super::priority_set::PrioritySet;
use super::standby;
use super::task_movement::{self, Warmups};
use crate::engine::assignor::{AssignError, TaskAssignor};
use crate::engine::costs::{HIGH_AVAILABILITY_NON_OVERLAP_COST, HIGH_AVAILABILITY_TRAFFIC_COST, STATELESS_COSTS};
use crate::engine::input::AssignmentInput;
use crate::engine::lags::LagIndex;
use crate::engine::model::{Model, Placement};
use crate::engine::output::Assignment;
use crate::engine::rack_aware;

/// The high-availability assignor: a balanced target computed without history, reached through
/// caught-up clients and warm-up replicas.
///
/// # Arguments
/// An [`AssignmentInput`]: clients with capacities and offset sums, stateful and stateless tasks,
/// changelog end-offset sums and [`AssignmentConfigs`](crate::engine::AssignmentConfigs).
///
/// # Returns
/// An [`Assignment`] equal to Kafka 4.4.0's. In Kafka's order:
/// 1. stateful actives round-robin over the clients (`ProcessId` order), then balanced by
///    `assignedTaskLoad`;
/// 2. standbys (`num.standby.replicas` > 0) from the default or client-tag aware standby
///    assignor, then balanced with that assignor's movement predicate;
/// 3. lags from the offset sums: a client is caught up on a task at lag `-2`, with an unbounded
///    `acceptable.recovery.lag`, or at `0 ≤ lag ≤ acceptable.recovery.lag`;
/// 4. active, then standby, movements back to caught-up clients, with at most
///    `max.warmup.replicas` warm-ups in all;
/// 5. stateless tasks one by one to the client with the fewest actives per thread.
///
/// A probing rebalance is wanted iff any movement was scheduled; the watch list holds the
/// warm-ups. History enters only through the lags.
///
/// # Complexity
/// For T tasks, N clients, S standbys per task, R reported offset sums and M movements:
/// O(T log T + R log R + B · N² + T · S · log N + M · N log N), where B is the number of balancing
/// sweeps (usually 2 or 3). Kafka's own tables cost O(T · N log N) more.
///
/// # Example
/// ```
/// use kstreams_assignor::engine::{AssignmentConfigs, AssignmentInput, ClientInput, HighAvailabilityTaskAssignor, TaskAssignor};
/// use kstreams_assignor::wire::{ProcessId, TaskId, LATEST_OFFSET};
///
/// let (a, b): (ProcessId, ProcessId) = ("00000000-0000-0000-0000-00000000000a".parse().unwrap(), "00000000-0000-0000-0000-00000000000b".parse().unwrap());
/// let task = TaskId::new(0, 0);
/// let input = AssignmentInput::new()
///     .with_configs(AssignmentConfigs::default().with_num_standby_replicas(1))
///     // `b` runs 0_0 now; round robin targets `a` (first in ProcessId order) for it.
///     .with_client(ClientInput::new(a, 1))
///     .with_client(ClientInput::new(b, 1).with_task_offset_sums([(task.clone(), LATEST_OFFSET)]))
///     .with_stateful_tasks([(task.clone(), 50_000), (TaskId::new(0, 1), 0)]);
/// let out = HighAvailabilityTaskAssignor.assign(&input).unwrap();
/// // `a` is 50,000 records behind: `b` keeps the active and `a` holds a standby meanwhile.
/// assert!(out.client(&b).unwrap().active_tasks.contains(&task));
/// assert!(out.client(&a).unwrap().standby_tasks.contains(&task));
/// assert!(out.followup.probing_rebalance_needed);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct HighAvailabilityTaskAssignor;

impl HighAvailabilityTaskAssignor {
    /// Kafka's class name.
    pub const NAME: &'static str = "HighAvailabilityTaskAssignor";
}

impl TaskAssignor for HighAvailabilityTaskAssignor {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn assign(&self, input: &AssignmentInput) -> Result<Assignment, AssignError> {
        let model = Model::new(input)?;
        let configs = &input.configs;
        let mut rack = rack_aware::for_model(&model);
        let mut placement = Placement::new(&model);
        let n = model.num_clients();

        // Stateful actives: round robin, then balance.
        for (k, &task) in model.stateful_tasks.iter().enumerate() {
            placement.assign_active(k % n, task);
        }
        balance_tasks_over_threads(&mut placement, TaskKind::Active, |_, _, _| true);
        let traffic = configs.rack_aware_assignment_traffic_cost.unwrap_or(HIGH_AVAILABILITY_TRAFFIC_COST);
        let non_overlap = configs.rack_aware_assignment_non_overlap_cost.unwrap_or(HIGH_AVAILABILITY_NON_OVERLAP_COST);
        if rack.can_enable() {
            rack.optimize_active_tasks(&model, &model.stateful_tasks, &mut placement, traffic, non_overlap);
        }

        // Standbys.
        if configs.num_standby_replicas != 0 {
            let standbys = standby::for_configs(configs);
            standbys.assign(&model, &mut placement);
            balance_tasks_over_threads(&mut placement, TaskKind::Standby, |_, s, d| {
                standbys.is_allowed_task_movement(&model, s, d)
            });
            if rack.can_enable() {
                let allowed = |p: &Placement, s, d, t| standbys.is_allowed_standby_swap(&model, p, s, d, t);
                rack.optimize_standby_tasks(&model, &mut placement, traffic, non_overlap, &allowed);
            }
        }

        // Movements towards caught-up clients.
        let lags = LagIndex::new(&model);
        let mut warmups = Warmups::new(configs.max_warmup_replicas);
        let active_movements = task_movement::assign_active_task_movements(&model, &lags, &mut placement, &mut warmups)
            .map_err(AssignError::Internal)?;
        let standby_movements =
            task_movement::assign_standby_task_movements(&model, &lags, &mut placement, &mut warmups);

        // Stateless actives by active load.
        let mut by_active_load = PrioritySet::new(n);
        for c in 0..n {
            by_active_load.offer(c, placement.active_load(c));
        }
        for &task in &model.stateless_tasks {
            let c = by_active_load.poll(|_| true).expect("every client is queued");
            placement.assign_active(c, task);
            by_active_load.offer(c, placement.active_load(c));
        }
        if rack.can_enable() {
            let (traffic, non_overlap) = STATELESS_COSTS;
            rack.optimize_active_tasks(&model, &model.stateless_tasks, &mut placement, traffic, non_overlap);
        }

        let mut all_warmups = warmups.from_active_movements;
        all_warmups.extend(warmups.from_standby_movements);
        Ok(Assignment::from_placement(Self::NAME, &model, &placement, active_movements + standby_movements > 0, all_warmups))
    }
}
