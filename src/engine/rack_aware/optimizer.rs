//! The seam between the assignors and the rack-aware optimisation.

use crate::engine::model::{Client, Model, Placement, Task};

/// A rack-aware optimiser the assignors call at Kafka's points.
pub(crate) trait RackAwareOptimizer {
    /// Kafka's `canEnableRackAwareAssignor` (cached after the first call in Kafka).
    fn can_enable(&mut self) -> bool;

    /// Kafka's `optimizeActiveTasks`: re-places the active `tasks` to lower the cost while keeping
    /// every client's number of them.
    fn optimize_active_tasks(
        &mut self,
        model: &Model<'_>,
        tasks: &[Task],
        placement: &mut Placement,
        traffic_cost: i32,
        non_overlap_cost: i32,
    );

    /// Kafka's `optimizeStandbyTasks`: swaps standbys between clients on different racks where
    /// `allowed(placement, source, destination, task)` holds.
    fn optimize_standby_tasks(
        &mut self,
        model: &Model<'_>,
        placement: &mut Placement,
        traffic_cost: i32,
        non_overlap_cost: i32,
        allowed: &dyn Fn(&Placement, Client, Client, Task) -> bool,
    );
}

/// The optimiser for inputs without partition rack information: never enabled.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NoPartitionRacks;

impl RackAwareOptimizer for NoPartitionRacks {
    fn can_enable(&mut self) -> bool {
        false
    }

    fn optimize_active_tasks(&mut self, _: &Model<'_>, _: &[Task], _: &mut Placement, _: i32, _: i32) {}

    fn optimize_standby_tasks(
        &mut self,
        _: &Model<'_>,
        _: &mut Placement,
        _: i32,
        _: i32,
        _: &dyn Fn(&Placement, Client, Client, Task) -> bool,
    ) {
    }
}
