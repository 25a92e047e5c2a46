//! Helpers shared by the engine's integration tests.

use kstreams_assignor::engine::{Assignment, AssignmentInput};
use kstreams_assignor::wire::LATEST_OFFSET;

/// The input of the next rebalance after `out` ran long enough for everything to catch up:
/// actives report `-2`, standbys their end offset, owned partitions are the actives.
pub(crate) fn after_catching_up(input: &AssignmentInput, out: &Assignment) -> AssignmentInput {
    let mut next = input.clone();
    let ends = input.changelog_end_offset_sums.clone().unwrap();
    for client in &mut next.clients {
        let assigned = out.client(&client.process_id).unwrap();
        client.task_offset_sums = assigned
            .active_tasks
            .iter()
            .filter(|t| ends.contains_key(*t))
            .map(|t| (t.clone(), LATEST_OFFSET))
            .chain(assigned.standby_tasks.iter().map(|t| (t.clone(), ends[t])))
            .collect();
        client.owned_active_tasks = assigned.active_tasks.iter().cloned().collect();
    }
    next
}
