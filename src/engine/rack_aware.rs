//! The seam for rack-aware optimisation (KIP-925, Kafka's `RackAwareTaskAssignor`).
//!
//! Kafka's assignors call a rack-aware optimiser at fixed points: the high-availability assignor
//! after balancing the stateful actives, after placing and balancing the standbys, and after
//! placing the stateless tasks; the legacy sticky assignor after its active and standby passes.
//! Each call first asks [`RackAwareOptimizer::can_enable`]. Kafka enables the optimiser only when
//! `rack.aware.assignment.strategy` is not `none`, every client has a rack, and the rack of every
//! replica of every input (and, with standbys, changelog) partition is known.
//!
//! An [`AssignmentInput`](super::AssignmentInput) carries no partition metadata, so Kafka's check
//! fails and the optimiser stays off, whatever the strategy: [`NoPartitionRacks`] is that
//! optimiser. A later implementation (min-cost flow over the partitions' racks) plugs in here.

use super::model::{Client, Model, Placement, Task};

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

/// The optimiser Kafka's leader would build for this input.
pub(crate) fn for_model(_model: &Model<'_>) -> Box<dyn RackAwareOptimizer> {
    Box::new(NoPartitionRacks)
}
