//! What an assignor is given: the clients of the group, the tasks, the changelog end offsets and
//! the configuration. This is the information Kafka Streams' leader holds after aggregating the
//! subscriptions (`ClientState`s) and fetching the changelog end offsets.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::config::AssignmentConfigs;
use crate::wire::{ProcessId, TaskId};

/// One client (a Kafka Streams instance, all its stream threads together) as the leader sees it.
///
/// ```
/// use kstreams_assignor::engine::ClientInput;
/// use kstreams_assignor::wire::{ProcessId, TaskId, LATEST_OFFSET};
///
/// let client = ClientInput::new(ProcessId::NIL, 2)
///     .with_task_offset_sums([(TaskId::new(0, 0), LATEST_OFFSET), (TaskId::new(0, 1), 950)])
///     .with_client_tags([("zone", "eu-1a")]);
/// assert_eq!(client.capacity, 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct ClientInput {
    /// The instance's process id.
    pub process_id: ProcessId,
    /// Its capacity: the number of its consumers (stream threads) in this rebalance. At least 1.
    pub capacity: u32,
    /// The changelog offset sums it reported per task (`taskOffsetSums` of its subscriptions,
    /// merged over its consumers); [`LATEST_OFFSET`](crate::wire::LATEST_OFFSET) for tasks it
    /// runs as active and [`UNKNOWN_OFFSET_SUM`](crate::wire::UNKNOWN_OFFSET_SUM) where unknown.
    #[serde(default)]
    pub task_offset_sums: BTreeMap<TaskId, i64>,
    /// Tasks whose input partitions its consumers listed as owned (the consumer protocol's
    /// `ownedPartitions`). With the `-2` offset sums they make Kafka's "previous active tasks";
    /// the other reported tasks are its "previous standby tasks". Only the legacy sticky and
    /// fallback assignors look at previous tasks.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub owned_active_tasks: BTreeSet<TaskId>,
    /// The rack of its consumers (`client.rack`, KIP-881), if they set one.
    #[serde(default)]
    pub rack_id: Option<String>,
    /// Its client tags (`client.tag.*`, KIP-708).
    #[serde(default)]
    pub client_tags: BTreeMap<String, String>,
}

impl ClientInput {
    /// A client with no reported state, no rack and no tags.
    pub fn new(process_id: ProcessId, capacity: u32) -> Self {
        Self {
            process_id,
            capacity,
            task_offset_sums: BTreeMap::new(),
            owned_active_tasks: BTreeSet::new(),
            rack_id: None,
            client_tags: BTreeMap::new(),
        }
    }

    /// Sets the reported offset sums.
    pub fn with_task_offset_sums(mut self, sums: impl IntoIterator<Item = (TaskId, i64)>) -> Self {
        self.task_offset_sums = sums.into_iter().collect();
        self
    }

    /// Sets the tasks whose partitions the client owned.
    pub fn with_owned_active_tasks(mut self, tasks: impl IntoIterator<Item = TaskId>) -> Self {
        self.owned_active_tasks = tasks.into_iter().collect();
        self
    }

    /// Sets the rack.
    pub fn with_rack_id(mut self, rack: impl Into<String>) -> Self {
        self.rack_id = Some(rack.into());
        self
    }

    /// Sets the client tags.
    pub fn with_client_tags<K: Into<String>, V: Into<String>>(mut self, tags: impl IntoIterator<Item = (K, V)>) -> Self {
        self.client_tags = tags.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        self
    }
}

/// Everything an assignor needs. Serialised with camelCase keys; `configs` uses Kafka's dotted
/// keys (see [`AssignmentConfigs`]).
///
/// `changelogEndOffsetSums` must be present: an object mapping every stateful task to the sum of
/// its changelog end offsets (see [`end_offset_sum`](crate::wire::end_offset_sum)), or `null`
/// when the leader could not fetch them, in which case Kafka falls back to the
/// `FallbackPriorTaskAssignor` (see [`assign`](super::assign)).
///
/// ```
/// use kstreams_assignor::engine::AssignmentInput;
///
/// let input: AssignmentInput = serde_json::from_str(r#"{
///     "configs": {"num.standby.replicas": 1},
///     "clients": [
///         {"processId": "00000000-0000-0000-0000-000000000001", "capacity": 1, "taskOffsetSums": {"0_0": -2}},
///         {"processId": "00000000-0000-0000-0000-000000000002", "capacity": 1}
///     ],
///     "statefulTasks": ["0_0", "0_1"],
///     "statelessTasks": ["1_0"],
///     "changelogEndOffsetSums": {"0_0": 100, "0_1": 0}
/// }"#).unwrap();
/// assert_eq!(input.clients.len(), 2);
/// assert!(serde_json::from_str::<AssignmentInput>(r#"{"clients": []}"#).is_err(), "end offsets are required");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct AssignmentInput {
    /// The configuration.
    #[serde(default)]
    pub configs: AssignmentConfigs,
    /// The clients, in any order (assignors sort them as Kafka does).
    pub clients: Vec<ClientInput>,
    /// Tasks with at least one changelog topic (in JSON a list, each task once).
    #[serde(default, deserialize_with = "unique_tasks")]
    pub stateful_tasks: BTreeSet<TaskId>,
    /// Tasks without a changelog (in JSON a list, each task once).
    #[serde(default, deserialize_with = "unique_tasks")]
    pub stateless_tasks: BTreeSet<TaskId>,
    /// The changelog end-offset sum of every stateful task, or `None` when fetching the end
    /// offsets failed.
    #[serde(deserialize_with = "Option::deserialize")]
    pub changelog_end_offset_sums: Option<BTreeMap<TaskId, i64>>,
    /// Optional, for rack-aware assignment (KIP-925): per task, the racks of the replicas of each
    /// of its input and changelog partitions (see [`TaskPartitions`]). Absent or incomplete, the
    /// rack-aware optimisation stays off, as Kafka's does without partition racks.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub task_partitions: BTreeMap<TaskId, TaskPartitions>,
    /// Optional: what the leader saw at the previous rebalance of the group, from which the
    /// `OptimizedTaskAssignor` estimates each client's restore rate (successive offset sums over
    /// the elapsed time). Kafka's assignors ignore it; absent, restore rates are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_rebalance: Option<PreviousRebalance>,
}

/// The offset sums of the previous rebalance, and how long ago it was, for restore-rate
/// estimates. The engine has no clock: the caller measures `elapsedMs`.
///
/// ```
/// use kstreams_assignor::engine::PreviousRebalance;
///
/// let previous: PreviousRebalance = serde_json::from_str(r#"{
///     "elapsedMs": 60000,
///     "changelogEndOffsetSums": {"0_0": 1000000},
///     "taskOffsetSums": {"00000000-0000-0000-0000-000000000001": {"0_0": 0}}
/// }"#).unwrap();
/// assert_eq!(previous.elapsed_ms, 60_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct PreviousRebalance {
    /// Milliseconds between the previous rebalance and this one (not positive: ignored).
    pub elapsed_ms: i64,
    /// The changelog end-offset sums then (to tell restoring from producing).
    #[serde(default)]
    pub changelog_end_offset_sums: BTreeMap<TaskId, i64>,
    /// The offset sums each client reported then.
    #[serde(default)]
    pub task_offset_sums: BTreeMap<ProcessId, BTreeMap<TaskId, i64>>,
}

impl PreviousRebalance {
    /// A record of the previous rebalance, `elapsed_ms` ago.
    pub fn new(elapsed_ms: i64) -> Self {
        Self { elapsed_ms, ..Self::default() }
    }
}

/// The partitions of one task with the racks of their replicas, as the leader learns them from
/// the cluster metadata (KIP-925). Each partition is the list of the racks its replicas are on;
/// an empty list stands for a partition with a replica whose rack is unknown.
///
/// ```
/// use kstreams_assignor::engine::TaskPartitions;
///
/// let parts: TaskPartitions = serde_json::from_str(r#"{"input": [["r1", "r2"]], "changelog": [["r3"]]}"#).unwrap();
/// assert_eq!(parts.input.len(), 1);
/// assert!(parts.changelog[0].contains("r3"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct TaskPartitions {
    /// Racks of the replicas of each input (source) partition of the task.
    #[serde(default)]
    pub input: Vec<BTreeSet<String>>,
    /// Racks of the replicas of each changelog partition of the task (stateful tasks).
    #[serde(default)]
    pub changelog: Vec<BTreeSet<String>>,
}

impl TaskPartitions {
    /// A task whose input partitions have replicas on the given racks, without changelogs.
    pub fn new<S: Into<String>, R: IntoIterator<Item = S>>(input: impl IntoIterator<Item = R>) -> Self {
        Self { input: racks(input), changelog: Vec::new() }
    }

    /// Sets the racks of the replicas of the changelog partitions.
    pub fn with_changelog<S: Into<String>, R: IntoIterator<Item = S>>(mut self, changelog: impl IntoIterator<Item = R>) -> Self {
        self.changelog = racks(changelog);
        self
    }
}

fn racks<S: Into<String>, R: IntoIterator<Item = S>>(parts: impl IntoIterator<Item = R>) -> Vec<BTreeSet<String>> {
    parts.into_iter().map(|p| p.into_iter().map(Into::into).collect()).collect()
}

impl AssignmentInput {
    /// An input with default configs, no clients, no tasks and (empty) end offsets.
    pub fn new() -> Self {
        Self {
            configs: AssignmentConfigs::default(),
            clients: Vec::new(),
            stateful_tasks: BTreeSet::new(),
            stateless_tasks: BTreeSet::new(),
            changelog_end_offset_sums: Some(BTreeMap::new()),
            task_partitions: BTreeMap::new(),
            previous_rebalance: None,
        }
    }

    /// Sets what the previous rebalance saw (for restore-rate estimates).
    pub fn with_previous_rebalance(mut self, previous: PreviousRebalance) -> Self {
        self.previous_rebalance = Some(previous);
        self
    }

    /// Sets the partitions (with their replicas' racks) of a task.
    pub fn with_task_partitions(mut self, task: TaskId, partitions: TaskPartitions) -> Self {
        self.task_partitions.insert(task, partitions);
        self
    }

    /// Sets the configuration.
    pub fn with_configs(mut self, configs: AssignmentConfigs) -> Self {
        self.configs = configs;
        self
    }

    /// Adds a client.
    pub fn with_client(mut self, client: ClientInput) -> Self {
        self.clients.push(client);
        self
    }

    /// Adds stateful tasks with their changelog end-offset sums.
    pub fn with_stateful_tasks(mut self, tasks: impl IntoIterator<Item = (TaskId, i64)>) -> Self {
        for (task, end) in tasks {
            self.stateful_tasks.insert(task.clone());
            self.changelog_end_offset_sums.get_or_insert_with(BTreeMap::new).insert(task, end);
        }
        self
    }

    /// Adds stateless tasks.
    pub fn with_stateless_tasks(mut self, tasks: impl IntoIterator<Item = TaskId>) -> Self {
        self.stateless_tasks.extend(tasks);
        self
    }

    /// Marks the end offsets as not fetched.
    pub fn with_end_offsets_unavailable(mut self) -> Self {
        self.changelog_end_offset_sums = None;
        self
    }
}

impl Default for AssignmentInput {
    fn default() -> Self {
        Self::new()
    }
}

/// A list of tasks in which each task appears once: a repeated task is an
/// [`InputError::DuplicateTask`] at the repeat (so that the error's path names it), not merged.
fn unique_tasks<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<BTreeSet<TaskId>, D::Error> {
    use serde::de::{DeserializeSeed, Error, SeqAccess, Visitor};

    /// One task, refused if `seen` has it.
    struct New<'s>(&'s mut BTreeSet<TaskId>);

    impl<'de> DeserializeSeed<'de> for New<'_> {
        type Value = ();

        fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            let task = TaskId::deserialize(deserializer)?;
            if self.0.contains(&task) {
                return Err(D::Error::custom(InputError::DuplicateTask(task)));
            }
            self.0.insert(task);
            Ok(())
        }
    }

    struct Tasks;

    impl<'de> Visitor<'de> for Tasks {
        type Value = BTreeSet<TaskId>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of task ids")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut seen = BTreeSet::new();
            while seq.next_element_seed(New(&mut seen))?.is_some() {}
            Ok(seen)
        }
    }

    deserializer.deserialize_seq(Tasks)
}

/// An input no assignor can work on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] super::config::ConfigError),
    /// There are no clients (Kafka's leader is always one; its assignors fail without clients).
    #[error("no clients")]
    NoClients,
    /// A task is listed twice (in the JSON form, where a set would silently merge the two).
    #[error("task {0} is listed twice")]
    DuplicateTask(TaskId),
    /// Two clients have the same process id.
    #[error("process id {0} appears twice")]
    DuplicateProcessId(ProcessId),
    /// A client's capacity is 0 or does not fit a Java int.
    #[error("client {process_id} has capacity {capacity}; it must be between 1 and 2147483647")]
    InvalidCapacity {
        /// The client.
        process_id: ProcessId,
        /// Its capacity.
        capacity: u32,
    },
    /// A task is both stateful and stateless.
    #[error("task {0} is both stateful and stateless")]
    TaskBothStatefulAndStateless(TaskId),
    /// Some tasks have a named topology and others do not (Java's `TaskId.compareTo` throws).
    #[error("tasks {0} and {1} mix a named topology with the unnamed one")]
    MixedNamedTopologies(TaskId, TaskId),
    /// A stateful task has no changelog end-offset sum.
    #[error("stateful task {0} has no changelog end-offset sum")]
    MissingEndOffsetSum(TaskId),
    /// An end-offset sum is given for a task that is not stateful.
    #[error("changelog end-offset sum given for {0}, which is not a stateful task")]
    UnexpectedEndOffsetSum(TaskId),
    /// Partitions are given for a task that does not exist.
    #[error("partitions given for unknown task {0}")]
    UnknownPartitionTask(TaskId),
    /// A client owned the partitions of a task that does not exist.
    #[error("client {process_id} owned partitions of unknown task {task}")]
    UnknownOwnedTask {
        /// The client.
        process_id: ProcessId,
        /// The task.
        task: TaskId,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_task_listed_twice() {
        let json = r#"{"clients": [], "changelogEndOffsetSums": {}, "statelessTasks": ["0_0", "0_1", "0_0"]}"#;
        let de = &mut serde_json::Deserializer::from_str(json);
        let err = serde_path_to_error::deserialize::<_, AssignmentInput>(de).unwrap_err();
        assert_eq!(err.path().to_string(), "statelessTasks[2]");
        assert!(err.to_string().contains("task 0_0 is listed twice"), "{err}");
        let ok: AssignmentInput =
            serde_json::from_str(r#"{"clients": [], "changelogEndOffsetSums": {}, "statefulTasks": ["0_0", "0_1"]}"#).unwrap();
        assert_eq!(ok.stateful_tasks.len(), 2);
    }
}
