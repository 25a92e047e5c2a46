//! Which of a client's standby tasks are warm-ups and spares: the leader sends all three as
//! standbys, the task assignor's output tells them apart.

use std::collections::BTreeSet;

use super::output::AssignmentReport;
use crate::wire::{ProcessId, TaskId};

/// A client's warm-up and spare replicas, as the task assignor gave them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplicaKinds {
    /// Warm-up tasks (sent as standbys).
    pub warmup: BTreeSet<TaskId>,
    /// Spare replicas of the optimized assignor (sent as standbys).
    pub spare: BTreeSet<TaskId>,
}

impl AssignmentReport {
    /// The warm-up and spare replicas of the client `process_id`; empty when the task assignor
    /// did not run or the client is not in its assignment.
    pub fn replica_kinds(&self, process_id: &ProcessId) -> ReplicaKinds {
        let Some(client) = self.assignment.as_ref().and_then(|a| a.client(process_id)) else { return ReplicaKinds::default() };
        ReplicaKinds { warmup: client.warmup_tasks.iter().cloned().collect(), spare: client.spare_tasks.iter().cloned().collect() }
    }
}
