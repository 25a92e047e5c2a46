//! From a topology and the cluster's metadata to tasks, as Kafka Streams' leader computes them
//! (`RepartitionTopics`, `CopartitionedTopicsEnforcer`, `PartitionGrouper`, `ChangelogTopics`,
//! kafka-streams 4.4.0).
//!
//! [`Tasks::build`] runs these steps in Kafka's order:
//!
//! 1. **Missing source topics.** An external source topic absent from the metadata fails the
//!    whole (unnamed) topology: [`TaskError::MissingSourceTopics`], which Kafka's leader answers
//!    with `INCOMPLETE_SOURCE_TOPIC_METADATA` (1).
//! 2. **Repartition topic partition counts**, by fixpoint: a repartition topic without a fixed
//!    count gets the largest partition count among the source topics of the sub-topologies that
//!    write it, counting only those already known (a source may itself be a repartition topic
//!    whose count a later pass finds). A pass that finds nothing while counts are missing fails:
//!    [`TaskError::RepartitionPartitionsUnknown`], `ASSIGNMENT_ERROR` (3).
//! 3. **Copartitioning**, only when the topology reads at least one repartition topic (Kafka
//!    skips the check otherwise). Copartition groups are first merged as Kafka's
//!    `copartitionGroups()` merges them (a group that shares a topic with an earlier one joins
//!    it). Per group: the external topics must have equal counts and the repartition topics
//!    take that count; in a group of repartition topics only, the fixed counts must agree and
//!    are used, else the largest count is. A repartition topic whose fixed count differs fails.
//!    These failures are Kafka's `TopologyException`s, which escape `assign()`: no error code.
//!    The counts set here do not flow on to downstream repartition topics (Kafka does not
//!    iterate again).
//! 4. **Tasks** (`PartitionGrouper`): sub-topology `s` with `n` = the largest partition count of
//!    its source topics has tasks `s_0 … s_{n-1}`; task `s_p` reads partition `p` of each source
//!    topic that has more than `p` partitions.
//! 5. **Changelogs** (`ChangelogTopics`): every task of a sub-topology with at least one
//!    changelog is stateful and owns partition `p` of each changelog; a changelog topic that is
//!    not one of the sub-topology's source topics needs `n` partitions.
//!
//! # Walk order
//!
//! The fixpoint's result can depend on the order it visits the repartition topics: when a
//! sub-topology writes a repartition topic while reading another repartition topic whose count
//! is still unknown *and* some topic whose count is known, Kafka takes the known counts only.
//! Kafka visits sub-topologies in the iteration order of a `HashSet<TopicsInfo>`, and each one's
//! repartition topics in that of a `HashMap<String, _>`; both orders are replayed here (JDK 17
//! hashing). Two inputs of those orders are not in the model, so in such order-sensitive
//! topologies the result can still differ from Kafka's when
//!
//! * a changelog topic's configuration does not hash like a key-value store's changelog without
//!   topic configs (windowed and versioned stores, `Materialized.withLoggingEnabled(configs)`
//!   with configs): `TopicsInfo`'s hash includes the changelog configs; or
//! * two repartition topics read by one sub-topology fall into the same `HashMap` bucket: Kafka
//!   then visits them in an order that depends on its processor node names, this model in the
//!   order of `sourceTopics`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::jdk::hash::{objects_hash, string_hash};
use crate::jdk::hash_set::{hash_set_order, hash_set_order_by};
use super::topology::{Topology, TopologyError};
use crate::wire::{AssignorError, TaskId, TopicPartition};

/// What the leader knows about the cluster's topics: partition counts, and optionally the racks
/// of each partition's replicas.
///
/// Entries for repartition topics are ignored: the leader computes their counts (and creates or
/// validates the topics elsewhere).
///
/// ```
/// use kstreams_assignor::leader::ClusterMetadata;
///
/// let metadata: ClusterMetadata = serde_json::from_str(r#"{
///     "partitions": {"lines": 2},
///     "racks": {"lines": [["r1", "r2"], ["r2", "r3"]]}
/// }"#).unwrap();
/// assert_eq!(metadata, ClusterMetadata::new().with_topic("lines", 2).with_racks("lines", [["r1", "r2"], ["r2", "r3"]]));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct ClusterMetadata {
    /// Partition count per topic.
    pub partitions: BTreeMap<String, i32>,
    /// Per topic, per partition (by index), the racks of its replicas.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub racks: BTreeMap<String, Vec<Vec<String>>>,
}

impl ClusterMetadata {
    /// No topics.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a topic with `partitions` partitions.
    pub fn with_topic(mut self, topic: impl Into<String>, partitions: i32) -> Self {
        self.partitions.insert(topic.into(), partitions);
        self
    }

    /// Sets the replica racks of a topic's partitions, partition 0 first.
    pub fn with_racks<R, S>(mut self, topic: impl Into<String>, racks: impl IntoIterator<Item = R>) -> Self
    where
        R: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let racks = racks.into_iter().map(|r| r.into_iter().map(Into::into).collect()).collect();
        self.racks.insert(topic.into(), racks);
        self
    }

    /// A topic's partition count.
    pub fn partition_count(&self, topic: &str) -> Option<i32> {
        self.partitions.get(topic).copied()
    }
}

/// Topic names for an error message: `a`, `b`.
fn names<'a>(topics: impl Iterator<Item = &'a String>) -> String {
    topics.map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
}

/// Topics and partition counts for an error message: `a` (3 partitions), `b` (4 partitions).
fn counts(topics: &BTreeMap<String, i32>) -> String {
    topics.iter().map(|(t, n)| format!("`{t}` ({n} partitions)")).collect::<Vec<_>>().join(", ")
}

/// Why the leader cannot make tasks.
///
/// [`assignor_error`](Self::assignor_error) gives the code Kafka's leader sends every member;
/// `None` means Kafka's `assign()` throws instead and the rebalance fails without an assignment.
///
/// ```
/// use kstreams_assignor::leader::{ClusterMetadata, Subtopology, TaskError, Tasks, Topology};
/// use kstreams_assignor::wire::AssignorError;
///
/// let topology = Topology::new("app").with_subtopology(Subtopology::new(0).with_source_topics(["input"]));
/// let err = Tasks::build(&topology, &ClusterMetadata::new()).unwrap_err();
/// assert!(matches!(err, TaskError::MissingSourceTopics { .. }));
/// assert_eq!(err.assignor_error(), Some(AssignorError::INCOMPLETE_SOURCE_TOPIC_METADATA));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The topology is not valid.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// A metadata entry has a partition count below 1.
    #[error("topic `{topic}` has {partitions} partitions in the metadata")]
    BadPartitionCount {
        /// The topic.
        topic: String,
        /// Its count.
        partitions: i32,
    },
    /// External source topics are missing (Kafka: `MissingSourceTopicException`).
    #[error("missing source topics {}", names(topics.iter()))]
    MissingSourceTopics {
        /// The missing topics.
        topics: BTreeSet<String>,
    },
    /// A fixpoint pass found no count while some were missing (Kafka: "Failed to compute number
    /// of partitions for all repartition topics").
    #[error("cannot derive the partition count of repartition topics {}", names(topics.iter()))]
    RepartitionPartitionsUnknown {
        /// The repartition topics still without a count.
        topics: BTreeSet<String>,
    },
    /// External topics of a copartition group differ in partition count (Kafka: "Topics not
    /// co-partitioned").
    #[error("topics not co-partitioned: {}", counts(topics))]
    NotCopartitioned {
        /// The group's external topics and their counts.
        topics: BTreeMap<String, i32>,
    },
    /// Repartition topics of a copartition group with fixed counts disagree (Kafka: "Following
    /// topics do not have the same number of partitions").
    #[error("repartition topics do not have the same number of partitions: {}", counts(topics))]
    FixedPartitionsDiffer {
        /// The group's repartition topics and their counts.
        topics: BTreeMap<String, i32>,
    },
    /// A repartition topic's fixed count differs from its copartition group's (Kafka: "Number of
    /// partitions [..] of repartition topic [..] doesn't match number of partitions [..] of the
    /// source topic").
    #[error("repartition topic `{topic}` has {partitions} partitions, its copartition group needs {expected}")]
    RepartitionPartitionsMismatch {
        /// The repartition topic.
        topic: String,
        /// Its fixed count.
        partitions: i32,
        /// The group's count.
        expected: i32,
    },
}

impl TaskError {
    /// The `AssignorError` Kafka's leader sends for this failure, or `None` where its `assign()`
    /// throws (topology errors).
    pub fn assignor_error(&self) -> Option<AssignorError> {
        match self {
            Self::MissingSourceTopics { .. } => Some(AssignorError::INCOMPLETE_SOURCE_TOPIC_METADATA),
            Self::RepartitionPartitionsUnknown { .. } => Some(AssignorError::ASSIGNMENT_ERROR),
            _ => None,
        }
    }
}

/// The tasks of a topology on a cluster, with the internal topics' partition counts. All topic
/// names are Kafka's (internal topics prefixed with the application id).
///
/// ```
/// use kstreams_assignor::leader::{ClusterMetadata, StateStore, Subtopology, Tasks, Topology};
/// use kstreams_assignor::wire::{TaskId, TopicPartition};
///
/// let topology = Topology::new("wc")
///     .with_subtopology(Subtopology::new(0).with_source_topics(["lines"]).with_sink_topics(["words-repartition"]))
///     .with_subtopology(Subtopology::new(1).with_source_topics(["words-repartition"]).with_store(StateStore::new("counts")))
///     .with_repartition_topic("words-repartition", None);
/// let tasks = Tasks::build(&topology, &ClusterMetadata::new().with_topic("lines", 3)).unwrap();
///
/// assert_eq!(tasks.repartition_topic_partitions["wc-words-repartition"], 3);
/// assert_eq!(tasks.changelog_topic_partitions["wc-counts-changelog"], 3);
/// assert_eq!(tasks.partitions_for_task.len(), 6);
/// assert_eq!(tasks.partitions_for_task[&TaskId::new(1, 2)], [TopicPartition::new("wc-words-repartition", 2)]);
/// assert!(tasks.is_stateful(&TaskId::new(1, 0)) && !tasks.is_stateful(&TaskId::new(0, 0)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Tasks {
    /// The partition count of every repartition topic a sub-topology reads.
    pub repartition_topic_partitions: BTreeMap<String, i32>,
    /// The partition count of every changelog topic the application must have (those that are
    /// not also a source topic).
    pub changelog_topic_partitions: BTreeMap<String, i32>,
    /// Every task with its input partitions, sorted (Kafka's `partitionsForTask`).
    pub partitions_for_task: BTreeMap<TaskId, Vec<TopicPartition>>,
    /// Every stateful task with its changelog partitions, sorted (Kafka's
    /// `changelogPartitionsForStatefulTask`).
    pub changelog_partitions_for_task: BTreeMap<TaskId, Vec<TopicPartition>>,
}

/// A sub-topology with Kafka's topic names.
struct Resolved {
    id: i32,
    sources: BTreeSet<String>,
    sinks: BTreeSet<String>,
    /// Repartition topics among `sources`, in the topology's order.
    repartition_sources: Vec<String>,
    changelogs: BTreeSet<String>,
}

impl Tasks {
    /// Computes the tasks as Kafka's leader does; see the [module docs](self) for the steps and
    /// for the one place the result can differ from Kafka's.
    ///
    /// Complexity: O(R·S·T) for the fixpoint (R repartition topics, S sub-topologies, T source
    /// topics per sub-topology) plus the size of the output.
    pub fn build(topology: &Topology, metadata: &ClusterMetadata) -> Result<Self, TaskError> {
        topology.validate()?;
        if let Some((topic, &partitions)) = metadata.partitions.iter().find(|(_, n)| **n < 1) {
            return Err(TaskError::BadPartitionCount { topic: topic.clone(), partitions });
        }
        let subs = resolve(topology);

        // 1. Missing external source topics.
        let missing: BTreeSet<String> = subs
            .iter()
            .flat_map(|s| s.sources.iter().filter(|t| !s.repartition_sources.contains(t)))
            .filter(|t| metadata.partition_count(t).is_none())
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(TaskError::MissingSourceTopics { topics: missing });
        }

        // 2. Repartition topic counts.
        let fixed: BTreeMap<String, i32> =
            topology.repartition_partitions().into_iter().filter_map(|(raw, n)| Some((topology.topic_name(raw), n?))).collect();
        let mut counts: BTreeMap<String, Option<i32>> =
            subs.iter().flat_map(|s| s.repartition_sources.iter()).map(|t| (t.clone(), fixed.get(t).copied())).collect();
        derive_repartition_counts(&subs, metadata, &mut counts)?;
        let mut counts: BTreeMap<String, i32> = counts.into_iter().map(|(t, n)| (t, n.unwrap_or(0))).collect();

        // 3. Copartitioning.
        if !counts.is_empty() {
            for group in merged_copartition_groups(topology) {
                enforce_copartitioning(&group, &fixed, metadata, &mut counts)?;
            }
        }

        // 4. and 5. Tasks and changelogs.
        let count = |topic: &str| counts.get(topic).copied().or_else(|| metadata.partition_count(topic)).unwrap_or(0);
        let mut tasks = Tasks {
            repartition_topic_partitions: counts.clone(),
            changelog_topic_partitions: BTreeMap::new(),
            partitions_for_task: BTreeMap::new(),
            changelog_partitions_for_task: BTreeMap::new(),
        };
        for sub in &subs {
            // One name per topic, shared by all its partitions: one allocation instead of one
            // per partition, and partitions of one topic compare without reading the name.
            let sources: Vec<(Arc<str>, i32)> = sub.sources.iter().map(|t| (Arc::from(t.as_str()), count(t))).collect();
            let changelogs: Vec<Arc<str>> = sub.changelogs.iter().map(|t| Arc::from(t.as_str())).collect();
            let n = sources.iter().map(|(_, count)| *count).max().unwrap_or(0);
            for p in 0..n {
                let task = TaskId::new(sub.id, p);
                let mut partitions: Vec<TopicPartition> =
                    sources.iter().filter(|(_, count)| *count > p).map(|(t, _)| TopicPartition::new(Arc::clone(t), p)).collect();
                partitions.sort();
                tasks.partitions_for_task.insert(task.clone(), partitions);
                if !changelogs.is_empty() {
                    let changelog = changelogs.iter().map(|t| TopicPartition::new(Arc::clone(t), p)).collect();
                    tasks.changelog_partitions_for_task.insert(task, changelog);
                }
            }
            for changelog in sub.changelogs.difference(&sub.sources) {
                tasks.changelog_topic_partitions.insert(changelog.clone(), n);
            }
        }
        Ok(tasks)
    }

    /// Whether a task is stateful (has changelog partitions).
    pub fn is_stateful(&self, task: &TaskId) -> bool {
        self.changelog_partitions_for_task.contains_key(task)
    }

    /// The stateful tasks, ascending.
    pub fn stateful_tasks(&self) -> impl Iterator<Item = &TaskId> {
        self.changelog_partitions_for_task.keys()
    }

    /// The stateless tasks, ascending.
    pub fn stateless_tasks(&self) -> impl Iterator<Item = &TaskId> {
        self.partitions_for_task.keys().filter(|t| !self.is_stateful(t))
    }

    /// The task that reads each input partition (Kafka's `taskForPartition`).
    pub fn task_for_partition(&self) -> BTreeMap<&TopicPartition, &TaskId> {
        self.partitions_for_task.iter().flat_map(|(task, partitions)| partitions.iter().map(move |p| (p, task))).collect()
    }

    /// The replica racks of each input and changelog partition of `task` that `metadata` has
    /// racks for (the inputs of rack-aware assignment, KIP-925).
    ///
    /// ```
    /// use kstreams_assignor::leader::{ClusterMetadata, Subtopology, Tasks, Topology};
    /// use kstreams_assignor::wire::{TaskId, TopicPartition};
    ///
    /// let topology = Topology::new("app").with_subtopology(Subtopology::new(0).with_source_topics(["in"]));
    /// let metadata = ClusterMetadata::new().with_topic("in", 2).with_racks("in", vec![vec!["a", "b"], vec!["c"]]);
    /// let tasks = Tasks::build(&topology, &metadata).unwrap();
    /// let racks = tasks.racks_for_task(&TaskId::new(0, 1), &metadata);
    /// assert_eq!(racks[&TopicPartition::new("in", 1)].iter().collect::<Vec<_>>(), ["c"]);
    /// ```
    pub fn racks_for_task(&self, task: &TaskId, metadata: &ClusterMetadata) -> BTreeMap<TopicPartition, BTreeSet<String>> {
        let inputs = self.partitions_for_task.get(task).into_iter().flatten();
        let changelogs = self.changelog_partitions_for_task.get(task).into_iter().flatten();
        inputs
            .chain(changelogs)
            .filter_map(|tp| {
                let racks = metadata.racks.get(&*tp.topic)?.get(usize::try_from(tp.partition).ok()?)?;
                Some((tp.clone(), racks.iter().cloned().collect()))
            })
            .collect()
    }
}

/// The sub-topologies by id, with Kafka's topic names.
fn resolve(topology: &Topology) -> Vec<Resolved> {
    let mut subs: Vec<Resolved> = topology
        .subtopologies
        .iter()
        .map(|s| Resolved {
            id: s.id,
            sources: s.source_topics.iter().map(|t| topology.topic_name(t)).collect(),
            sinks: s.sink_topics.iter().map(|t| topology.topic_name(t)).collect(),
            repartition_sources: s.source_topics.iter().filter(|t| topology.is_repartition_topic(t)).fold(Vec::new(), |mut topics, t| {
                let name = topology.topic_name(t);
                if !topics.contains(&name) {
                    topics.push(name);
                }
                topics
            }),
            changelogs: s.stores.iter().filter_map(|store| topology.changelog_topic(store)).collect(),
        })
        .collect();
    subs.sort_by_key(|s| s.id);
    subs
}

/// `Boolean.hashCode(false)`.
const FALSE_HASH: i32 = 1237;

/// `TopicsInfo.hashCode()` of a sub-topology: its source topic set's hash in the high word, its
/// changelog map's in the low word (sign-extended), reduced modulo 2³² − 1. Each changelog's
/// config hashes as an `UnwindowedUnversionedChangelogTopicConfig` without topic configs:
/// `Objects.hash(name, {}, false)`.
fn topics_info_hash(sub: &Resolved) -> i32 {
    let sources = sub.sources.iter().fold(0i32, |h, t| h.wrapping_add(string_hash(t)));
    let changelogs = sub.changelogs.iter().fold(0i32, |h, t| {
        let name = string_hash(t);
        h.wrapping_add(name ^ objects_hash(&[name, 0, FALSE_HASH]))
    });
    let n = (i64::from(sources) << 32) | i64::from(changelogs);
    (n % 0xFFFF_FFFF) as i32
}

/// The order Kafka's fixpoint walks in: sub-topologies in `HashSet<TopicsInfo>` order (filled
/// by id), each one's repartition source topics in `HashMap<String, _>` order (filled in the
/// topology's order).
fn walk_order(subs: &[Resolved]) -> Vec<&String> {
    hash_set_order(subs.iter(), |s| topics_info_hash(s))
        .into_iter()
        .flat_map(|s| hash_set_order(s.repartition_sources.iter(), |t| string_hash(t)))
        .collect()
}

/// The order Java iterates a `HashSet<String>` of these names in (added in this order): the
/// order in which Kafka Streams lists a co-partition group's topics, which the streams protocol
/// member declares as indexes in that order.
pub(crate) fn java_set_order<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<&'a String> {
    hash_set_order_by(names, |t| string_hash(t), |a, b| a.cmp(b))
}

/// Kafka's `setRepartitionSourceTopicPartitionCount`: passes over the sub-topologies until every
/// count is known, failing on a pass without progress.
fn derive_repartition_counts(
    subs: &[Resolved],
    metadata: &ClusterMetadata,
    counts: &mut BTreeMap<String, Option<i32>>,
) -> Result<(), TaskError> {
    let walk = walk_order(subs);
    loop {
        let mut needed = false;
        let mut progress = false;
        for &topic in &walk {
            if counts.get(topic).copied().flatten().is_some() {
                continue;
            }
            // The writers' source topics with a known count.
            let candidate = subs
                .iter()
                .filter(|w| w.sinks.contains(topic))
                .flat_map(|w| w.sources.iter())
                .filter_map(|t| match counts.get(t) {
                    Some(known) => *known,
                    None => metadata.partition_count(t),
                })
                .max();
            match candidate {
                Some(n) => {
                    counts.insert(topic.clone(), Some(n));
                    progress = true;
                }
                None => needed = true,
            }
        }
        if !needed {
            return Ok(());
        }
        if !progress {
            let topics = counts.iter().filter(|(_, n)| n.is_none()).map(|(t, _)| t.clone()).collect();
            return Err(TaskError::RepartitionPartitionsUnknown { topics });
        }
    }
}

/// Kafka's `copartitionGroups()`: in order, a group that shares a topic with an earlier group is
/// added to that group (the first shared topic in name order decides which); the others stay
/// apart. Kafka topic names.
fn merged_copartition_groups(topology: &Topology) -> Vec<BTreeSet<String>> {
    let mut groups: Vec<BTreeSet<String>> = Vec::new();
    let mut group_of: BTreeMap<String, usize> = BTreeMap::new();
    for raw in &topology.copartition_groups {
        let topics: BTreeSet<String> = raw.iter().map(|t| topology.topic_name(t)).collect();
        let index = match topics.iter().find_map(|t| group_of.get(t).copied()) {
            Some(i) => i,
            None => {
                groups.push(BTreeSet::new());
                groups.len() - 1
            }
        };
        groups[index].extend(topics.iter().cloned());
        for topic in topics {
            group_of.insert(topic, index);
        }
    }
    // Groups no topic points to any more are dropped, as Kafka keeps only the map's values.
    let live: BTreeSet<usize> = group_of.values().copied().collect();
    groups.into_iter().enumerate().filter(|(i, _)| live.contains(i)).map(|(_, g)| g).collect()
}

/// Kafka's `CopartitionedTopicsEnforcer.enforce` for one group.
fn enforce_copartitioning(
    group: &BTreeSet<String>,
    fixed: &BTreeMap<String, i32>,
    metadata: &ClusterMetadata,
    counts: &mut BTreeMap<String, i32>,
) -> Result<(), TaskError> {
    if group.is_empty() {
        return Ok(());
    }
    let repartition: Vec<&String> = group.iter().filter(|t| counts.contains_key(*t)).collect();
    let external: BTreeMap<String, i32> =
        group.iter().filter(|t| !counts.contains_key(*t)).map(|t| (t.clone(), metadata.partition_count(t).unwrap_or(0))).collect();
    let target = if external.is_empty() {
        let fixed_counts: BTreeSet<i32> = repartition.iter().filter_map(|t| fixed.get(*t).copied()).collect();
        match fixed_counts.len() {
            0 => repartition.iter().map(|t| counts[*t]).max().unwrap_or(0),
            1 => fixed_counts.into_iter().next().unwrap_or(0),
            _ => {
                let topics = repartition.iter().map(|t| ((*t).clone(), counts[*t])).collect();
                return Err(TaskError::FixedPartitionsDiffer { topics });
            }
        }
    } else {
        let counts: BTreeSet<i32> = external.values().copied().collect();
        if counts.len() > 1 {
            return Err(TaskError::NotCopartitioned { topics: external });
        }
        counts.into_iter().next().unwrap_or(0)
    };
    for topic in repartition {
        match fixed.get(topic) {
            Some(&n) if n != target => {
                return Err(TaskError::RepartitionPartitionsMismatch { topic: topic.clone(), partitions: n, expected: target });
            }
            Some(_) => {}
            None => {
                counts.insert(topic.clone(), target);
            }
        }
    }
    Ok(())
}
