//! What an assignor decides: tasks per client and whether a follow-up probing rebalance is wanted.

use serde::{Deserialize, Serialize};

use super::model::{Client, Model, Placement, Task};
use crate::wire::{ProcessId, TaskId};

/// The tasks one client gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct ClientAssignment {
    /// The client.
    pub process_id: ProcessId,
    /// Its active tasks, in Java `TaskId` order.
    pub active_tasks: Vec<TaskId>,
    /// Its standby tasks (warm-ups included), in Java `TaskId` order.
    pub standby_tasks: Vec<TaskId>,
    /// The standby tasks that are warm-up replicas: copies beyond `num.standby.replicas` placed so
    /// that the client can catch up before a later rebalance moves an active (or standby) task to
    /// it. On the wire a warm-up is an ordinary standby.
    pub warmup_tasks: Vec<TaskId>,
    /// The standby tasks that are spare replicas (only the optimized assignor places them):
    /// copies beyond `num.standby.replicas`, kept so that a crash of the active task's client
    /// restores little: a copy a moved standby leaves behind while its replacement restores,
    /// and copies within the `max.warmup.replicas` that no warm-up needs (plus
    /// `max.spare.replicas`). On the wire a spare is an ordinary standby.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spare_tasks: Vec<TaskId>,
}

/// A warm-up replica the follow-up rebalance is waiting for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Warmup {
    /// The task being restored.
    pub task_id: TaskId,
    /// The client restoring it.
    pub process_id: ProcessId,
}

/// The follow-up an assignment asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Followup {
    /// Whether the leader should schedule a probing rebalance (Kafka: the assignor returned
    /// `true`; the leader then sets a deadline on its own client).
    pub probing_rebalance_needed: bool,
    /// How long after this rebalance the probing rebalance should happen
    /// (`probing.rebalance.interval.ms`); meaningful only when one is needed.
    pub probing_rebalance_interval_ms: i64,
    /// The warm-ups to watch, in (task, client) order: once these have caught up, the probing
    /// rebalance can move the tasks.
    pub watch_list: Vec<Warmup>,
}

/// An assignment for every client of the group.
///
/// ```
/// use kstreams_assignor::engine::{assign, AssignmentInput, AssignorKind, ClientInput};
/// use kstreams_assignor::wire::{ProcessId, TaskId};
///
/// let input = AssignmentInput::new()
///     .with_client(ClientInput::new(ProcessId::NIL, 1))
///     .with_stateless_tasks([TaskId::new(0, 0)]);
/// let assignment = assign(AssignorKind::HighAvailability, &input).unwrap();
/// assert_eq!(assignment.clients[0].active_tasks, [TaskId::new(0, 0)]);
/// assert!(!assignment.followup.probing_rebalance_needed);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Assignment {
    /// Kafka's class name of the assignor that decided (see [`AssignorKind`](super::AssignorKind)).
    pub assignor: String,
    /// One entry per client, in Java `ProcessId` order.
    pub clients: Vec<ClientAssignment>,
    /// The follow-up signal.
    pub followup: Followup,
}

impl Assignment {
    /// The entry of one client.
    pub fn client(&self, process_id: &ProcessId) -> Option<&ClientAssignment> {
        self.clients.iter().find(|c| c.process_id == *process_id)
    }

    /// Builds the output from a placement; `warmups` lists (client, task) pairs.
    pub(crate) fn from_placement(
        assignor: &str,
        model: &Model<'_>,
        placement: &Placement,
        probing_rebalance_needed: bool,
        mut warmups: Vec<(Client, Task)>,
    ) -> Self {
        warmups.sort_unstable_by_key(|&(c, t)| (t, c));
        warmups.dedup();
        let task = |t: &Task| model.tasks[*t as usize].clone();
        let mut clients: Vec<ClientAssignment> = model
            .clients
            .iter()
            .enumerate()
            .map(|(c, client)| ClientAssignment {
                process_id: client.process_id,
                active_tasks: placement.active[c].iter().map(task).collect(),
                standby_tasks: placement.standby[c].iter().map(task).collect(),
                warmup_tasks: Vec::new(),
                spare_tasks: Vec::new(),
            })
            .collect();
        let mut by_client: Vec<&(Client, Task)> = warmups.iter().collect();
        by_client.sort_unstable();
        for &&(c, t) in &by_client {
            clients[c].warmup_tasks.push(task(&t));
        }
        let watch_list =
            warmups.iter().map(|&(c, t)| Warmup { task_id: task(&t), process_id: model.clients[c].process_id }).collect();
        Self {
            assignor: assignor.to_owned(),
            clients,
            followup: Followup {
                probing_rebalance_needed,
                probing_rebalance_interval_ms: model.input.configs.probing_rebalance_interval_ms,
                watch_list,
            },
        }
    }

    /// Marks standbys placed as spare replicas (each `(client, task)` must be a standby there).
    pub(crate) fn mark_spares(&mut self, model: &Model<'_>, spares: &[(Client, Task)]) {
        for &(c, t) in spares {
            self.clients[c].spare_tasks.push(model.tasks[t as usize].clone());
        }
        for client in &mut self.clients {
            client.spare_tasks.sort_unstable();
        }
    }
}

/// An [`Assignment`] as an operator reads it, and as `kstreams-assignor assign` prints it: the
/// clients keyed by process id, each with its active, standby and warm-up tasks (and spares when
/// there are any), the probing rebalance and the warm-ups it waits for. Task ids print as
/// `<subtopology>_<partition>`. Made by [`Assignment::summary`]; only serialised.
///
/// ```
/// use kstreams_assignor::engine::{assign, AssignmentInput, AssignorKind, ClientInput};
/// use kstreams_assignor::wire::{ProcessId, TaskId};
///
/// let input = AssignmentInput::new()
///     .with_client(ClientInput::new(ProcessId::NIL, 1))
///     .with_stateless_tasks([TaskId::new(0, 0)]);
/// let assignment = assign(AssignorKind::HighAvailability, &input).unwrap();
/// let json = serde_json::to_value(assignment.summary()).unwrap();
/// assert_eq!(json["clients"]["00000000-0000-0000-0000-000000000000"]["active"], serde_json::json!(["0_0"]));
/// assert_eq!(json["probingRebalance"]["needed"], false);
/// ```
// Fields are declared in the order of their JSON names, so the output reads sorted.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssignmentSummary<'a> {
    assignor: &'a str,
    clients: std::collections::BTreeMap<String, ClientSummary<'a>>,
    probing_rebalance: ProbingSummary,
    watch_list: Vec<WarmupSummary<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WarmupSummary<'a> {
    process_id: &'a ProcessId,
    task_id: &'a TaskId,
}

#[derive(Debug, Serialize)]
struct ClientSummary<'a> {
    active: &'a [TaskId],
    #[serde(skip_serializing_if = "<[TaskId]>::is_empty")]
    spare: &'a [TaskId],
    standby: &'a [TaskId],
    warmup: &'a [TaskId],
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProbingSummary {
    after_ms: i64,
    needed: bool,
}

impl Assignment {
    /// This assignment as an operator reads it (see [`AssignmentSummary`]).
    pub fn summary(&self) -> AssignmentSummary<'_> {
        let clients = self
            .clients
            .iter()
            .map(|c| {
                let client = ClientSummary {
                    active: &c.active_tasks,
                    spare: &c.spare_tasks,
                    standby: &c.standby_tasks,
                    warmup: &c.warmup_tasks,
                };
                (c.process_id.to_string(), client)
            })
            .collect();
        AssignmentSummary {
            assignor: &self.assignor,
            clients,
            probing_rebalance: ProbingSummary {
                after_ms: self.followup.probing_rebalance_interval_ms,
                needed: self.followup.probing_rebalance_needed,
            },
            watch_list: self
                .followup
                .watch_list
                .iter()
                .map(|w| WarmupSummary { process_id: &w.process_id, task_id: &w.task_id })
                .collect(),
        }
    }
}
