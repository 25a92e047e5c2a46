//! What the coordinator makes of an assignment: each member's target active, standby and warm-up
//! tasks (Kafka's `TasksTuple`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::input::Tasks;

/// One member's target assignment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamsMemberAssignment {
    /// Its active tasks.
    pub active_tasks: Tasks,
    /// Its standby tasks.
    pub standby_tasks: Tasks,
    /// Its warm-up tasks.
    pub warmup_tasks: Tasks,
}

impl StreamsMemberAssignment {
    /// Its number of active, standby and warm-up tasks.
    pub fn task_counts(&self) -> (usize, usize, usize) {
        let count = |tasks: &Tasks| tasks.values().map(|p| p.len()).sum();
        (count(&self.active_tasks), count(&self.standby_tasks), count(&self.warmup_tasks))
    }
}

/// The group's target assignment: every member of the group, by member id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamsGroupAssignment {
    /// The members' assignments.
    pub members: BTreeMap<String, StreamsMemberAssignment>,
}
