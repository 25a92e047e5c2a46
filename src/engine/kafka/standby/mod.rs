//! Standby placement: where the `num.standby.replicas` copies of each stateful task go.
//!
//! Kafka's `StandbyTaskAssignorFactory` picks the [client-tag aware](client_tag_aware) assignor
//! (KIP-708) when `rack.aware.assignment.tags` is non-empty and the [default](default) one
//! otherwise. Both only look at the current placement and the loads; stickiness comes back through
//! the high-availability assignor's standby movements.

pub(crate) mod client_tag_aware;
pub(crate) mod default;

use crate::engine::config::AssignmentConfigs;
use crate::engine::model::{Client, Model, Placement, Task};

/// A standby placement algorithm (Kafka's `StandbyTaskAssignor`).
pub(crate) trait StandbyTaskAssignor {
    /// Gives every stateful task its standbys; the tasks' actives are already placed.
    fn assign(&self, model: &Model<'_>, placement: &mut Placement);

    /// Whether the balancing pass may move a standby from `source` to `destination`.
    fn is_allowed_task_movement(&self, _model: &Model<'_>, _source: Client, _destination: Client) -> bool {
        true
    }

    /// Whether a rack-aware optimisation may move standby `task` from `source` to `destination`
    /// (Kafka's four-argument `isAllowedTaskMovement`).
    fn is_allowed_standby_swap(
        &self,
        _model: &Model<'_>,
        _placement: &Placement,
        _source: Client,
        _destination: Client,
        _task: Task,
    ) -> bool {
        true
    }
}

/// Kafka's `StandbyTaskAssignorFactory.create(configs, null)`, as the high-availability assignor
/// calls it (no rack information, so a client's rack never becomes a tag).
pub(crate) fn for_configs(configs: &AssignmentConfigs) -> Box<dyn StandbyTaskAssignor> {
    if configs.rack_aware_assignment_tags.is_empty() {
        Box::new(default::DefaultStandbyTaskAssignor)
    } else {
        Box::new(client_tag_aware::ClientTagAwareStandbyTaskAssignor)
    }
}
