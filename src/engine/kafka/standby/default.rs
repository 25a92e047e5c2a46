//! Least-loaded standby placement: Kafka's `DefaultStandbyTaskAssignor`.

use super::StandbyTaskAssignor;
use crate::engine::kafka::priority_set::PrioritySet;
use crate::engine::model::{Model, Placement};

/// Gives each standby to the least loaded client that holds no copy of the task.
///
/// # Arguments
/// * `model` - clients, stateful tasks and `num.standby.replicas` (S).
/// * `placement` - the actives placed so far; standbys are added to it.
///
/// # Returns
/// Every stateful task gets `min(S, N − 1)` standbys on distinct clients without its active.
/// Tasks are visited in `TaskId` order; each standby goes to the client with the lowest
/// `(assignedTaskLoad, ProcessId)`, so standbys count towards load as they are placed.
///
/// # Complexity
/// O(T · S · log N) for T stateful tasks and N clients: a poll skips at most the S + 1 clients
/// holding a copy.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DefaultStandbyTaskAssignor;

impl StandbyTaskAssignor for DefaultStandbyTaskAssignor {
    fn assign(&self, model: &Model<'_>, placement: &mut Placement) {
        let standbys = model.input.configs.num_standby_replicas;
        let mut clients = PrioritySet::new(model.num_clients());
        for c in 0..model.num_clients() {
            clients.offer(c, placement.assigned_load(c));
        }
        for &task in &model.stateful_tasks {
            let mut remaining = standbys;
            while remaining > 0 {
                let Some(c) = clients.poll(|c| !placement.has_assigned_task(c, task)) else { break };
                placement.assign_standby(c, task);
                clients.offer(c, placement.assigned_load(c));
                remaining -= 1;
            }
        }
    }
}
