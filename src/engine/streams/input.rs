//! What the broker's assignor is given: the group's members as the coordinator's `GroupSpec`
//! describes them, and the topology as its `TopologyDescriber` does.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Tasks by subtopology id: the partitions of each subtopology (the shape of Kafka's
/// `Map<String, Set<Integer>>`).
pub type Tasks = BTreeMap<String, std::collections::BTreeSet<i32>>;

/// A value per task, by subtopology id then partition (Kafka's `Map<String, Map<Integer, Long>>`
/// of task offsets, or of active tasks with their assignment epochs).
pub type TaskValues<T> = BTreeMap<String, BTreeMap<i32, T>>;

/// The most tasks the assignor plans in one call: active tasks plus stateful tasks times
/// `num.standby.replicas`. Kafka counts them in an `int`; a topology above this is refused
/// before anything is allocated.
pub const MAX_STREAMS_TASKS: u64 = 4_000_000;

/// One member of a streams group (a stream thread), with what the coordinator knows of it:
/// Kafka's `MemberAssignmentMetadata` and `MemberAssignmentState` together.
///
/// ```
/// use kstreams_assignor::engine::streams::StreamsMemberSpec;
///
/// let member = StreamsMemberSpec::new("m-1", "process-a")
///     .with_rack_id("eu-1a")
///     .with_active_task("0", 3, 7)
///     .with_standby_task("1", 0)
///     .with_task_offset("1", 0, 950);
/// assert_eq!(member.active_tasks["0"][&3], 7);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamsMemberSpec {
    /// The member id (`MemberId` of its heartbeats).
    pub member_id: String,
    /// The process (Kafka Streams instance) it belongs to (`ProcessId`).
    pub process_id: String,
    /// Its static membership id (`InstanceId`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// Its rack (`RackId`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack_id: Option<String>,
    /// Its client tags (`ClientTags`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub client_tags: BTreeMap<String, String>,
    /// The active tasks currently assigned to it, each with the epoch it was assigned in.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub active_tasks: TaskValues<i32>,
    /// The standby tasks currently assigned to it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub standby_tasks: Tasks,
    /// The warm-up tasks currently assigned to it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub warmup_tasks: Tasks,
    /// The changelog offset sums it last reported per task (`TaskOffsets` of its heartbeat).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub task_offsets: TaskValues<i64>,
    /// The changelog end-offset sums it last reported per task (`TaskEndOffsets`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub task_end_offsets: TaskValues<i64>,
}

impl StreamsMemberSpec {
    /// A member of `process_id` with no tasks, no rack, no tags and no reported offsets.
    pub fn new(member_id: impl Into<String>, process_id: impl Into<String>) -> Self {
        Self {
            member_id: member_id.into(),
            process_id: process_id.into(),
            instance_id: None,
            rack_id: None,
            client_tags: BTreeMap::new(),
            active_tasks: BTreeMap::new(),
            standby_tasks: BTreeMap::new(),
            warmup_tasks: BTreeMap::new(),
            task_offsets: BTreeMap::new(),
            task_end_offsets: BTreeMap::new(),
        }
    }

    /// Sets the static membership id.
    pub fn with_instance_id(mut self, instance_id: impl Into<String>) -> Self {
        self.instance_id = Some(instance_id.into());
        self
    }

    /// Sets the rack.
    pub fn with_rack_id(mut self, rack: impl Into<String>) -> Self {
        self.rack_id = Some(rack.into());
        self
    }

    /// Adds a client tag.
    pub fn with_client_tag(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.client_tags.insert(key.into(), value.into());
        self
    }

    /// Adds a current active task, assigned in `epoch`.
    pub fn with_active_task(mut self, subtopology: impl Into<String>, partition: i32, epoch: i32) -> Self {
        self.active_tasks.entry(subtopology.into()).or_default().insert(partition, epoch);
        self
    }

    /// Adds a current standby task.
    pub fn with_standby_task(mut self, subtopology: impl Into<String>, partition: i32) -> Self {
        self.standby_tasks.entry(subtopology.into()).or_default().insert(partition);
        self
    }

    /// Adds a current warm-up task.
    pub fn with_warmup_task(mut self, subtopology: impl Into<String>, partition: i32) -> Self {
        self.warmup_tasks.entry(subtopology.into()).or_default().insert(partition);
        self
    }

    /// Adds a reported changelog offset sum.
    pub fn with_task_offset(mut self, subtopology: impl Into<String>, partition: i32, offset: i64) -> Self {
        self.task_offsets.entry(subtopology.into()).or_default().insert(partition, offset);
        self
    }

    /// Adds a reported changelog end-offset sum.
    pub fn with_task_end_offset(mut self, subtopology: impl Into<String>, partition: i32, offset: i64) -> Self {
        self.task_end_offsets.entry(subtopology.into()).or_default().insert(partition, offset);
        self
    }
}

/// The group's assignment configuration, by Kafka's config names: the group's own
/// (`num.standby.replicas` and `rack.aware.assignment.tags`, Kafka's `AssignmentConfigs`) and the
/// coordinator's warm-up settings (`group.streams.num.warmup.replicas`,
/// `group.streams.acceptable.recovery.lag`).
///
/// ```
/// use kstreams_assignor::engine::streams::StreamsAssignmentConfigs;
///
/// let configs = StreamsAssignmentConfigs::default().with_num_standby_replicas(1);
/// assert_eq!((configs.num_standby_replicas, configs.num_warmup_replicas), (1, 0));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamsAssignmentConfigs {
    /// `num.standby.replicas`: standby replicas per stateful task.
    #[serde(rename = "num.standby.replicas", default)]
    pub num_standby_replicas: u32,
    /// `rack.aware.assignment.tags`: the client tags standbys should spread over.
    #[serde(rename = "rack.aware.assignment.tags", default)]
    pub rack_aware_assignment_tags: Vec<String>,
    /// `group.streams.num.warmup.replicas`: warm-up replicas the coordinator may add.
    #[serde(rename = "group.streams.num.warmup.replicas", default)]
    pub num_warmup_replicas: u32,
    /// `group.streams.acceptable.recovery.lag`: the lag under which a member counts as caught up.
    #[serde(rename = "group.streams.acceptable.recovery.lag", default)]
    pub acceptable_recovery_lag: i64,
}

impl StreamsAssignmentConfigs {
    /// Sets `num.standby.replicas`.
    pub fn with_num_standby_replicas(mut self, replicas: u32) -> Self {
        self.num_standby_replicas = replicas;
        self
    }

    /// Sets `rack.aware.assignment.tags`.
    pub fn with_rack_aware_assignment_tags(mut self, tags: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.rack_aware_assignment_tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `group.streams.num.warmup.replicas`.
    pub fn with_num_warmup_replicas(mut self, replicas: u32) -> Self {
        self.num_warmup_replicas = replicas;
        self
    }

    /// Sets `group.streams.acceptable.recovery.lag`.
    pub fn with_acceptable_recovery_lag(mut self, lag: i64) -> Self {
        self.acceptable_recovery_lag = lag;
        self
    }
}

/// The group as the coordinator hands it to its assignor (Kafka's `GroupSpec`): the members, in
/// the order the coordinator put them into its member map, and the configuration.
///
/// The order matters only where Java's `HashMap` of member ids holds two ids in one bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamsGroupSpec {
    /// The members.
    pub members: Vec<StreamsMemberSpec>,
    /// The configuration.
    #[serde(default)]
    pub configs: StreamsAssignmentConfigs,
}

impl StreamsGroupSpec {
    /// A group of `members` with the default configuration.
    pub fn new(members: impl IntoIterator<Item = StreamsMemberSpec>) -> Self {
        Self { members: members.into_iter().collect(), configs: StreamsAssignmentConfigs::default() }
    }

    /// Sets the configuration.
    pub fn with_configs(mut self, configs: StreamsAssignmentConfigs) -> Self {
        self.configs = configs;
        self
    }
}

/// One subtopology as Kafka's `TopologyDescriber` answers for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamsSubtopology {
    /// Its id.
    pub id: String,
    /// Its number of tasks (`maxNumInputPartitions`), at least 1.
    pub partitions: u32,
    /// Whether it has state changelogs (`isStateful`), and so standby replicas.
    pub stateful: bool,
}

impl StreamsSubtopology {
    /// A subtopology `id` of `partitions` tasks.
    pub fn new(id: impl Into<String>, partitions: u32, stateful: bool) -> Self {
        Self { id: id.into(), partitions, stateful }
    }
}

/// The topology: its subtopologies, in any order (the coordinator lists them sorted by id).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamsTopology {
    /// The subtopologies.
    pub subtopologies: Vec<StreamsSubtopology>,
}

impl StreamsTopology {
    /// A topology of `subtopologies`.
    pub fn new(subtopologies: impl IntoIterator<Item = StreamsSubtopology>) -> Self {
        Self { subtopologies: subtopologies.into_iter().collect() }
    }
}

/// Why an input cannot be assigned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamsAssignError {
    /// Two members have the same id.
    #[error("member id {0:?} appears twice")]
    DuplicateMember(String),
    /// Two subtopologies have the same id.
    #[error("subtopology {0:?} appears twice")]
    DuplicateSubtopology(String),
    /// A subtopology has no tasks (the coordinator never configures one).
    #[error("subtopology {0:?} has 0 partitions; it needs at least 1")]
    NoPartitions(String),
    /// A subtopology has more partitions than Java's `int` holds.
    #[error("subtopology {subtopology:?} has {partitions} partitions; at most 2147483647 are possible")]
    TooManyPartitions {
        /// The subtopology.
        subtopology: String,
        /// Its partition count.
        partitions: u32,
    },
    /// The topology has more tasks to place than [`MAX_STREAMS_TASKS`].
    #[error("the topology has {tasks} tasks to place (active and standby); at most {max} are planned in one assignment")]
    TooManyTasks {
        /// Active tasks plus stateful tasks times the standby replicas.
        tasks: u64,
        /// [`MAX_STREAMS_TASKS`].
        max: u64,
    },
    /// There are tasks but no members (Kafka's `TaskAssignorException`).
    #[error("no process available to assign active task {0}")]
    NoMembers(String),
    /// The engine refused the group (only [`assign_optimized`](super::assign_optimized), which
    /// runs the engine's `optimized` assignor): a configuration out of its range.
    #[error(transparent)]
    Engine(#[from] crate::engine::AssignError),
}
